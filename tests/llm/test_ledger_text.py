"""The ledger keeps each call's prompt and completion text (the call inspector shows them): chat calls,
repairs, cache hits, failures, the offline engine's inputs and outputs, and the store's llm_calls rows."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from memcore.errors import LLMCallFailed
from memcore.llm import FakeLLM, LLMClient, OfflineEngine, UsageLedger
from memcore.llm.cache import CallCache
from memcore.llm.ledger import CallRecord, prompt_text
from memcore.llm.roles import Role, register
from memcore.store import LanceStore


class Echo(BaseModel):
    same: bool = False


ROLE = register(Role(name="test_ledger_text", system="Compare two words.", user="A: {a}\nB: {b}", output=Echo,
                     offline=lambda inp: Echo(same=inp["a"] == inp["b"]), fallback=lambda inp: Echo()))


def test_prompt_text_names_each_message_role():
    text = prompt_text([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "[system]\nS\n\n[user]\nU"


def test_offline_engine_call_keeps_its_inputs_and_output():
    client = LLMClient(OfflineEngine(), UsageLedger())
    client.run(ROLE.name, {"a": "pepper", "b": "maya"}, stage="answer")
    rec = client.ledger.records[-1]
    assert "A: pepper" in rec.prompt and "B: maya" in rec.prompt and rec.prompt.startswith("[system]")
    assert rec.completion == Echo(same=False).model_dump_json()


def test_chat_call_repair_and_cache_hit_keep_prompt_and_completion(tmp_path):
    fake = FakeLLM(by_role={ROLE.name: ['{"same": tr', '{"same": true}']})
    client = LLMClient(fake, UsageLedger(), cache=CallCache(tmp_path))
    client.run(ROLE.name, {"a": "x", "b": "x"}, stage="retrieval")
    first, repair = client.ledger.records
    assert first.completion == '{"same": tr' and "A: x" in first.prompt
    assert repair.attempt == 2 and repair.completion == '{"same": true}'
    assert "[assistant]\n{\"same\": tr" in repair.prompt  # the repair prompt holds the malformed reply
    client.run(ROLE.name, {"a": "x", "b": "x"}, stage="retrieval")
    hit, hit_repair = client.ledger.records[-2:]  # both replies come from the cache, with their texts
    assert hit.cache_hit and hit.completion == '{"same": tr' and hit.prompt == first.prompt
    assert hit_repair.cache_hit and hit_repair.completion == repair.completion and hit_repair.prompt == repair.prompt


def test_failed_call_keeps_its_prompt():
    fake = FakeLLM(by_role={ROLE.name: ["not json", "still not json"]})
    client = LLMClient(fake, UsageLedger())
    with pytest.raises(LLMCallFailed):
        client.run(ROLE.name, {"a": "q", "b": "r"}, stage="answer")
    assert all("A: q" in r.prompt for r in client.ledger.records)
    assert client.ledger.records[-1].completion == "still not json"


def test_store_persists_prompt_and_completion(tmp_path):
    store = LanceStore(str(tmp_path / "db"), dim=8)
    long_prompt = "[user]\n" + "word " * 20000  # a long prompt is stored whole
    store.add_llm_calls([CallRecord(role="answer", stage="answer", prompt=long_prompt, completion="Pepper")])
    row = store.llm_calls(role="answer").iloc[0]
    assert row["prompt"] == long_prompt and row["completion"] == "Pepper"


def test_a_store_without_the_text_columns_is_upgraded(tmp_path):
    import lancedb
    import pyarrow as pa

    from memcore.store.schema import SCHEMAS

    old_schema = pa.schema([f for f in SCHEMAS["llm_calls"]
                           if f.name not in ("prompt", "completion", "request_format", "outcome", "variant")])
    old = {f.name: [0] for f in old_schema} | {"role": ["answer"], "stage": ["answer"], "system": ["com"],
                                                 "conv_id": ["c"], "provider": ["offline"], "model": ["m"],
                                                 "error": [""], "cache_hit": [False], "ok": [True]}
    lancedb.connect(str(tmp_path / "db")).create_table("llm_calls", data=pa.table(old, schema=old_schema))
    store = LanceStore(str(tmp_path / "db"), dim=8)
    store.add_llm_calls([CallRecord(role="judge", stage="judge", prompt="P", completion="C")])
    df = store.llm_calls().sort_values("role")
    assert list(df["prompt"]) == ["", "P"] and list(df["completion"]) == ["", "C"]


def test_workbench_answer_calls_carry_the_question(workbench, tiny_conv):
    q = tiny_conv.questions[0]
    with UsageLedger.collect() as recs:
        ans = workbench.ask("naive_rag", tiny_conv, q)
    answer_calls = [r for r in recs if r.stage == "answer"]
    assert answer_calls and q.text in answer_calls[-1].prompt
    assert ans.text and ans.text in answer_calls[-1].completion


def test_an_offline_call_renders_its_prompt_once_and_its_row_holds_every_field(monkeypatch):
    from dataclasses import asdict

    renders = []
    real = Role.messages
    monkeypatch.setattr(Role, "messages", lambda self, inputs: renders.append(1) or real(self, inputs))
    client = LLMClient(OfflineEngine(), UsageLedger())
    client.run(ROLE.name, {"a": "pepper", "b": "pepper"}, stage="answer")
    assert len(renders) == 1  # the ledger's prompt and the window check share one rendering
    rec = client.ledger.records[-1]
    want = asdict(rec)
    want.pop("depth")
    want["variant"] = rec.variant or rec.system
    assert rec.to_dict() == want and list(rec.to_dict()) == list(want)  # same fields, same order as before
