"""Structured outputs over the mock server: each JSON role's request carries its strict schema in the form the
endpoint accepts, `auto` probes once per endpoint and model and remembers what was accepted; prompts show an
example instead of the schema; replies that set nothing, or are empty where the role must answer, are not used."""

from __future__ import annotations

import json
import string

import pytest

from memcore.errors import LLMCallFailed
from memcore.eval.judge_role import JUDGE, JudgeOutput
from memcore.ingest import IngestReport
from memcore.llm import FakeLLM, LLMClient, OfflineEngine
from memcore.llm.mock_server import MockOpenAIServer
from memcore.llm.openai_provider import OpenAIProvider, forget_formats
from memcore.llm.roles import get_role, load_all
from memcore.llm.structured import bounded_schema, strict_schema
from memcore.settings import Settings

ROLE = "episode_boundary"
INPUTS = {"history": "A: hi", "new_messages": "B: by the way, my dog", "gap_minutes": 30, "max_messages": 20}
REPLY = json.dumps({"should_end": True, "reason": "new topic"})


@pytest.fixture(autouse=True)
def _fresh_formats():
    forget_formats()  # what `auto` found is remembered per process: each test starts from nothing
    yield
    forget_formats()


def _json_roles():
    import memcore.eval.judge  # noqa: F401 - registers the judge role

    return [r for r in load_all().values() if r.json_output and r.output.__module__.startswith("memcore.")]


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_every_json_role_has_a_strict_schema():
    roles = _json_roles()
    assert roles, "no JSON role registered: the loop below would pass without checking anything"
    for role in roles:
        schema = role.schema()
        assert schema == strict_schema(role.output) and schema["type"] == "object"
        for node in _walk(schema):
            assert "$ref" not in node and "default" not in node
            if node.get("type") == "object":
                assert node["additionalProperties"] is False, role.name
                assert node["required"] == list(node["properties"]), role.name


def _placeholders(role) -> dict[str, str]:
    names = {f for t in (role.system, role.user) for _, f, _, _ in string.Formatter().parse(t) if f}
    return {**{n: "x" for n in names}, "question": "q", "gold": "g", "prediction": "p", "category": 1}


def test_prompts_show_an_example_not_the_schema():
    roles = _json_roles()
    assert roles, "no JSON role registered: the loop below would pass without checking anything"
    for role in roles:
        system = role.messages(_placeholders(role))[0]["content"]
        assert '"properties"' not in system and '"$defs"' not in system, role.name
        assert "Reply with one JSON object only, in this form: {" in system, role.name
        for name in role.schema()["properties"]:
            assert f'"{name}": ' in system, (role.name, name)


@pytest.mark.parametrize("mode, expected", [
    ("json_schema", lambda s: {"type": "json_schema", "json_schema": {"name": ROLE, "schema": s, "strict": True}}),
    ("json_object", lambda s: {"type": "json_object", "schema": bounded_schema(s, get_role(ROLE).max_tokens)}),
    ("off", lambda s: {"type": "json_object"}),
])
def test_the_request_carries_the_roles_schema_in_each_form(mode, expected):
    with MockOpenAIServer() as srv:
        srv.enqueue(REPLY)
        client = LLMClient(OpenAIProvider("m", base_url=srv.base_url, structured=mode))
        res = client.run(ROLE, INPUTS, stage="construction")
        assert res.output.should_end is True
        assert srv.requests[0]["response_format"] == expected(get_role(ROLE).schema())
        assert srv.probes == []  # a named form is sent as asked, without probing
        rec = client.ledger.records[-1]
        assert rec.request_format == {"json_schema": "json_schema", "json_object": "json_object+schema",
                                      "off": "json_object"}[mode]
        assert rec.outcome == "ok"


@pytest.mark.parametrize("status", [400, 500])  # 500: llama-cpp-python's server refuses json_schema that way
def test_auto_remembers_an_endpoint_rejecting_json_schema_and_serves_json_object(status):
    with MockOpenAIServer(formats=("json_object",), reject_status=status) as srv:
        for _ in range(3):
            srv.enqueue(REPLY)
        client = LLMClient(OpenAIProvider("m", base_url=srv.base_url))
        client.run(ROLE, INPUTS, stage="construction")
        # a second provider for the same endpoint and model (another system, another command in this process)
        again = LLMClient(OpenAIProvider("m", base_url=srv.base_url))
        again.run(ROLE, INPUTS, stage="construction")
        again.run(ROLE, {**INPUTS, "history": "A: hello"}, stage="construction")
        forms = [p["response_format"]["type"] for p in srv.probes]
        assert forms == ["json_schema", "json_object"]  # probed once: json_schema refused, json_object honoured
        schema = get_role(ROLE).schema()
        bounded = bounded_schema(schema, get_role(ROLE).max_tokens)
        assert [r["response_format"] for r in srv.requests] == [{"type": "json_object", "schema": bounded}] * 3
        probes = [r for r in client.ledger.records if r.role == "structured_probe"]
        assert [(p.request_format, p.outcome) for p in probes] == [
            ("json_schema", f"rejected ({status})"), ("json_object+schema", "honoured")]
        assert not [r for r in again.ledger.records if r.role == "structured_probe"]


def test_auto_prefers_json_schema_and_skips_a_form_that_is_accepted_but_ignored():
    with MockOpenAIServer() as srv:
        srv.enqueue(REPLY)
        LLMClient(OpenAIProvider("m", base_url=srv.base_url)).run(ROLE, INPUTS, stage="construction")
        assert srv.requests[0]["response_format"]["type"] == "json_schema"
    with MockOpenAIServer(honours_schema=False) as srv:  # accepts both forms, constrains nothing
        srv.enqueue(REPLY)
        client = LLMClient(OpenAIProvider("m", base_url=srv.base_url))
        client.run(ROLE, INPUTS, stage="construction")
        assert len(srv.probes) == 2 and srv.requests[0]["response_format"] == {"type": "json_object"}
        assert client.ledger.records[-1].request_format == "json_object"


def test_a_named_form_the_endpoint_refuses_fails_naming_the_setting():
    with MockOpenAIServer(formats=("json_object",)) as srv:
        client = LLMClient(OpenAIProvider("m", base_url=srv.base_url, structured="json_schema"))
        with pytest.raises(LLMCallFailed, match="MEMCORE_LLM_STRUCTURED=auto"):
            client.run(ROLE, INPUTS, stage="construction")


def test_a_reply_that_sets_no_field_is_not_an_empty_result():
    """The issue's RecMem replies ({"EpisodeSummaryOutput": ...}) validated as an empty summary."""
    junk = {"EpisodeSummaryOutput": {"summary": "x"}}
    client = LLMClient(FakeLLM(by_role={"xmemory_semantic": [junk, junk]}))  # every field has a default
    with pytest.raises(LLMCallFailed) as err:
        client.run("xmemory_semantic", _placeholders(get_role("xmemory_semantic")), stage="construction")
    assert "sets none of the fields" in str(err.value)
    assert err.value.rerun_fixes is False and "Rerun" not in str(err.value)
    assert "MEMCORE_LLM_STRUCTURED" in str(err.value) and "MEMCORE_LLM_MODEL" in str(err.value)
    assert [r.outcome for r in client.ledger.records] == ["malformed", "unusable"]


def test_empty_where_the_role_must_answer_is_repaired_and_counted_where_it_may():
    must = LLMClient(FakeLLM(by_role={"episode_summary": [{"episodes": []}, {"episodes": []}]}))
    with pytest.raises(LLMCallFailed, match="episodes"):
        must.run("episode_summary", _placeholders(get_role("episode_summary")), stage="construction")
    may = LLMClient(FakeLLM(by_role={"semantic_facts": [{"facts": []}]}))
    res = may.run("semantic_facts", _placeholders(get_role("semantic_facts")), stage="construction")
    assert res.output.facts == [] and may.empty == 1 and may.ledger.records[-1].outcome == "empty"


def test_a_repaired_reply_is_marked_in_the_ledger():
    client = LLMClient(FakeLLM(by_role={ROLE: ['{"should_end": tru', REPLY]}))
    client.run(ROLE, INPUTS, stage="construction")
    assert [(r.attempt, r.outcome) for r in client.ledger.records] == [(1, "malformed"), (2, "repaired")]


def test_the_judge_never_reads_an_unreadable_reply_as_wrong():
    with pytest.raises(ValueError):
        JudgeOutput.model_validate({"reason": "no label"})
    client = LLMClient(FakeLLM(by_role={"judge": [{"label": "CORRECT", "reason": "same"}]}))
    res = client.run(JUDGE.name, {"question": "q", "gold": "7 May", "prediction": "7 May", "category": 2},
                     stage="judge")
    assert res.output.correct


def test_llm_unusable_and_the_structured_mode_are_part_of_the_identity():
    base = LLMClient(OfflineEngine())
    assert base.identity == ("offline", base.provider.model)  # unchanged: older spaces and run ids stay valid
    assert LLMClient(OfflineEngine(), unusable="fallback").identity[-1] == "unusable=fallback"
    ids = {OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", structured=m).structured for m in ("auto", "off")}
    clients = [LLMClient(OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", structured=m)) for m in ids]
    assert len({c.identity for c in clients}) == 2


def test_an_unusable_greedy_reply_does_not_say_rerun():
    rep = IngestReport(system="xmemory", space="s", conv_id="c", turns_done=0, turns_total=9, error="boom", rerun_fixes=False)
    assert "Rerun to resume" not in rep.message and "fails the same way" in rep.message
    assert "Rerun to resume" in IngestReport(system="x", space="s", conv_id="c", turns_done=0, turns_total=9,
                                             error="boom").message


def test_the_local_provider_sends_one_request_at_a_time():
    assert Settings(llm_provider="local", llm_concurrency=0).concurrency == 1
    assert Settings(llm_provider="openai", llm_concurrency=0).concurrency == 8


def _worst_chars(node) -> int:
    """Characters of string values in the longest reply a bounded schema allows."""
    if "enum" in node:
        return max(len(str(v)) for v in node["enum"])
    if "anyOf" in node:
        return max(_worst_chars(n) for n in node["anyOf"])
    if node.get("type") == "object":
        return sum(_worst_chars(v) for v in node["properties"].values())
    if node.get("type") == "array":
        return node["maxItems"] * _worst_chars(node["items"])
    return node.get("maxLength", 0)


def test_grammar_schemas_are_bounded_so_a_looping_model_stops_before_max_tokens():
    for role in _json_roles():
        bounded = bounded_schema(role.schema(), role.max_tokens)
        assert all("maxItems" in n for n in _walk(bounded) if n.get("type") == "array"), role.name
        assert all("maxLength" in n for n in _walk(bounded) if n.get("type") == "string" and "enum" not in n)
        assert _worst_chars(bounded) <= 2.5 * role.max_tokens, role.name
    assert "maxLength" not in json.dumps(get_role("mw_relations").schema())  # json_schema form: not bounded


def test_a_raw_control_character_in_a_string_is_read():
    client = LLMClient(FakeLLM(by_role={ROLE: ['{"should_end": true, "reason": "line one\nline two"}']}))
    assert client.run(ROLE, INPUTS, stage="construction").output.reason == "line one\nline two"


def test_the_call_inspector_shows_the_request_format_and_the_outcome():
    from memcore.viz.calls import call_label, calls_table

    client = LLMClient(FakeLLM(by_role={ROLE: ['{"should_end": tru', REPLY]}))
    client.run(ROLE, INPUTS, stage="construction")
    for rec in client.ledger.records:
        rec.request_format = "json_object+schema"  # what an OpenAI-compatible provider reports
    table = calls_table(client.ledger.records)
    assert list(table["format"]) == ["json_object+schema"] * 2
    assert list(table["outcome"]) == ["malformed", "repaired"]
    assert "malformed" in call_label(table.iloc[0].to_dict()) and "repaired" in call_label(table.iloc[1].to_dict())
    old = calls_table([{"role": "answer", "stage": "answer", "ts": 1.0}])  # a row stored before the columns
    assert old.iloc[0]["format"] == "" and old.iloc[0]["outcome"] == ""


def test_the_workbench_finds_the_space_a_system_writes_to_under_every_llm_option(tmp_path):
    from memcore.datasets import load_demo
    from memcore.embed import HashingEmbedder
    from memcore.workbench import Workbench

    conv = load_demo()
    for unusable in ("fail", "fallback"):
        wb = Workbench(Settings(store_uri=str(tmp_path / unusable), embedder="hashing", llm_provider="offline",
                                llm_unusable=unusable), embedder=HashingEmbedder())
        assert wb.space("com", conv) == wb.system("com", conv).space


def test_the_probe_is_in_the_ledger_but_charged_to_no_question():
    from memcore.llm.ledger import by_stage

    with MockOpenAIServer() as srv:
        srv.enqueue(REPLY)
        client = LLMClient(OpenAIProvider("m", base_url=srv.base_url))
        client.run(ROLE, INPUTS, stage="answer")
    assert [r.stage for r in client.ledger.records] == ["probe", "probe", "answer"][-len(client.ledger.records):]
    assert set(by_stage(client.ledger.records)) == {"answer"} and by_stage(client.ledger.records)["answer"].calls == 1
