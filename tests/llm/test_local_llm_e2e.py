"""End to end with a real local LLM: SmolLM2 behind llama.cpp's OpenAI-compatible server.

Ingests the demo's first 12 turns (half of its first session: a 135M model on 2 cores takes seconds a
call, and xMemory alone makes ~5 calls a turn) with every system under the conditions a user gets (the
server's full context, structured mode auto, unusable replies failing, one request at a time): every
ingest completes with no unusable reply and no fallback, every JSON call was sent with its schema as the
grammar form this server honours, and answers come back for one question per system. Malformed-JSON
handling is exercised on real replies. Skips when the local LLM is not installed
(`bash scripts/install-local-llm.sh`, run by `./run.sh test`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from pydantic import BaseModel

from memcore.datasets import load_demo
from memcore.embed import MiniLMEmbedder
from memcore.errors import LLMCallFailed
from memcore.llm import LLMClient, OpenAIProvider
from memcore.llm.local_server import LocalServer, free_port, is_available
from memcore.llm.roles import Role, register
from memcore.settings import Settings
from memcore.systems import load_all
from memcore.workbench import Workbench

AVAILABLE, WHY = is_available()
pytestmark = [pytest.mark.llm, pytest.mark.slow,
              pytest.mark.skipif(not AVAILABLE, reason=f"{WHY} (optional local LLM)")]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    srv = LocalServer(timeout_s=180).start(port=free_port())  # the server's defaults: the model's full context
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def workbench(server, tmp_path_factory) -> Workbench:
    settings = Settings(store_uri=str(tmp_path_factory.mktemp("e2e") / "store"), llm_provider="openai",
                        use_cache=False, llm_unusable="fail", llm_structured="auto", llm_concurrency=1,
                        llm_timeout_s=300, llm_deadline_s=900)  # what `memcore llm serve` tells a user to set
    provider = OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=300,
                              label="local SmolLM2-135M (llama.cpp)", structured=settings.llm_structured)
    return Workbench(settings, embedder=MiniLMEmbedder(), provider=provider)  # its scheduler: these settings


TURNS = 12


def first_turns():
    conv = load_demo()
    turns = conv.turns[:TURNS]
    ids = {t.turn_id for t in turns}
    qs = [q for q in conv.questions if q.evidence and set(q.evidence) <= ids] or conv.questions[:1]
    return replace(conv, id=f"demo-first{TURNS}", turns=turns, questions=qs)


def test_every_system_ingests_the_first_turns_with_no_unusable_reply(workbench):
    wb, conv = workbench, first_turns()
    timings = {}
    for name in load_all():
        t0 = time.perf_counter()
        rep = wb.ingest(name, conv)
        timings[name] = time.perf_counter() - t0
        print(f"{name}: ingest {timings[name]:.1f} s", flush=True)
        assert rep.complete and not rep.error and rep.degraded_calls == 0, (name, rep.message)
        ans = wb.system(name, conv).answer(conv.questions[0])
        assert isinstance(ans.text, str) and ans.text.strip(), name
    recs = [r for r in wb.ledger.records if r.provider == "openai"]
    assert not [r for r in recs if r.outcome in ("unusable", "fallback")]
    json_calls = [r for r in recs if r.role != "structured_probe" and r.request_format.startswith("json")]
    assert json_calls and {r.request_format for r in json_calls} == {"json_object+schema"}  # the grammar form
    probes = [(r.request_format, r.outcome) for r in recs if r.role == "structured_probe"]
    assert probes == [("json_schema", "rejected (500)"), ("json_object+schema", "honoured")]
    built = {r.system for r in recs if r.stage == "construction"}
    # xMemory and MemWeaver call the model from the first turn; RecMem summarises its buffer of units only
    # when it fills (3 episodes from the demo's 90 turns), not within 12 turns
    assert {"xmemory", "memweaver"} <= built


class Profile(BaseModel):
    name: str
    hobbies: list[str]


TRUNCATED = register(Role(name="e2e_truncated_profile", system="Describe a person as JSON.",
                          user="Person: {who}", output=Profile, max_tokens=6,
                          offline=lambda inp: Profile(name=inp["who"], hobbies=[])))
TRUNCATED_FB = register(Role(name="e2e_truncated_profile_fb", system="Describe a person as JSON.",
                             user="Person: {who}", output=Profile, max_tokens=6,
                             offline=lambda inp: Profile(name="offline rule", hobbies=[]),
                             fallback=lambda inp: Profile(name="unknown", hobbies=[])))


def test_truncated_real_reply_is_reported_after_one_repair(server):
    """6 tokens cannot hold the object: both real replies are malformed, the error is reported. With
    llm_unusable=fallback the offline rules are never substituted: a role without a declared fallback fails,
    one with a declared fallback gets it, named in the result's error and the ledger."""
    who = {"who": "Maya, a runner who adopted a dog"}
    strict = LLMClient(OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=600))
    with pytest.raises(LLMCallFailed, match="unusable reply after one repair attempt"):
        strict.run("e2e_truncated_profile", who, stage="construction")
    client = LLMClient(OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=600), unusable="fallback")
    with pytest.raises(LLMCallFailed, match="llm_unusable=fallback has nothing to use"):
        client.run("e2e_truncated_profile", who, stage="construction")
    calls = [r for r in client.ledger.records if r.role == "e2e_truncated_profile"]
    assert len(calls) == 2 and all(c.completion_tokens > 0 for c in calls)
    res = client.run("e2e_truncated_profile_fb", who, stage="construction")
    assert not res.ok and "unusable reply after one repair attempt" in res.error
    assert "the role's fallback" in res.error
    assert res.output == Profile(name="unknown", hobbies=[])  # the declared fallback, never the offline rule
    last = [r for r in client.ledger.records if r.role == "e2e_truncated_profile_fb"][-1]
    assert last.outcome == "fallback" and "llm_unusable=fallback" in last.error


def test_malformed_json_from_a_real_reply_is_repaired_or_reported(server):
    provider = OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=600)
    provider.supports_json_mode = False  # let the small model write free text: it will not be clean JSON
    client = LLMClient(provider, unusable="fallback")
    res = client.run("episode_summary", {"messages": [
        {"speaker": "Maya", "text": "I adopted Pepper from the Happy Paws shelter last year.",
         "date": "8 May, 2023", "turn_id": "D1:7"}], "max_episodes": 1}, stage="construction")
    calls = [r for r in client.ledger.records if r.role == "episode_summary"]
    if len(calls) == 1:  # the first reply already validated: nothing to repair, but it was parsed
        assert res.ok
    else:
        assert len(calls) == 2  # one repair attempt, never more
        assert (res.ok and any("repaired" in n for n in res.notes)) or "unusable reply" in res.error
    assert all(c.prompt_tokens > 0 for c in calls)
