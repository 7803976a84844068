"""The benchmark runner on the demo conversation: results JSON/CSV, stored rows, resume, provider checks."""

from __future__ import annotations

import csv
import json

import pytest

from memcore.datasets import category_counts, load_demo
from memcore.errors import ConfigError
from memcore.eval.cost import construction_usage
from memcore.eval.report import row_trace, strip_timing
from memcore.eval.runner import run_eval, select_questions
from memcore.llm.ledger import CallRecord
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.workbench import Workbench

SYSTEMS = ["naive_rag", "naive_rag_session"]
SYSTEM_KEYS = {"overall", "categories", "construction_tokens", "query_tokens_per_question", "llm_calls",
               "latency_ms_p50", "latency_ms_p95", "cost_usd"}
BLOCK_KEYS = {"n", "f1", "bleu1", "em", "judge", "evidence_recall", "all_evidence_hit", "coverage_blocks",
              "coverage_tokens", "context_tokens", "retrieval_failures", "reasoning_failures"}
ROW_KEYS = {"question_id", "category", "question", "gold", "prediction", "f1", "bleu1", "em", "judge", "evidence",
            "context_turn_ids", "evidence_recall", "all_evidence_hit", "first_evidence_rank", "coverage_blocks",
            "coverage_tokens", "context_tokens", "failure", "usage", "latency_ms", "trace", "provider", "engine"}


def settings(tmp_path, name: str = "store", provider: str = "offline") -> Settings:
    return Settings(store_uri=str(tmp_path / name), llm_provider=provider, embedder="hashing")


def comparable(res: dict) -> dict:
    return {k: v for k, v in strip_timing(res).items() if k != "store"}


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> tuple[dict, Settings, list]:
    tmp = tmp_path_factory.mktemp("full")
    calls: list = []
    res = run_eval(settings(tmp), "demo", systems=SYSTEMS, out=tmp / "res.json",
                   progress=lambda d, t, info: calls.append((d, t, info)))
    return res, settings(tmp), calls


def test_results_json_and_csv(full_run) -> None:
    res, s, calls = full_run
    expected = {str(k): v for k, v in category_counts([load_demo()]).items() if k != 5}
    assert res["complete"] and res["questions_total"] == 2 * sum(expected.values())
    assert res["provider"] == "offline" and res["engine"] == "offline engine (rule-based, no LLM)"
    assert res["judge"]["enabled"] and res["judge"]["kind"] == "lexical" and "not an LLM" in res["judge"]["label"]
    assert res["conversations"] == ["demo"] and res["retriever"] == "dense" and res["memcore_version"]
    assert res["categories"] == ["1", "2", "3", "4"] and res["questions_per_category"] == expected
    for name in SYSTEMS:
        summary = res["systems"][name]
        assert SYSTEM_KEYS <= set(summary)
        assert {k: b["n"] for k, b in summary["categories"].items()} == expected
        for block in [summary["overall"], *summary["categories"].values()]:
            assert BLOCK_KEYS <= set(block)
            assert 0 <= block["f1"] <= 1 and 0 <= block["bleu1"] <= 1 and 0 <= block["judge"] <= 1
            assert 0 <= block["evidence_recall"] <= 1 and block["context_tokens"] > 0
        assert summary["overall"]["n"] == sum(expected.values())
        assert summary["construction_tokens"] >= 0 and summary["cost_usd"] == 0.0
        assert summary["query_tokens_per_question"] > 0 and summary["llm_calls"] >= summary["overall"]["n"]
        assert summary["latency_ms_p95"] >= summary["latency_ms_p50"] >= 0
    with open(s.store_uri.rsplit("/", 1)[0] + "/res.csv") as f:
        got = [(r["system"], r["category"]) for r in csv.DictReader(f)]
    assert got == [(n, c) for n in SYSTEMS for c in [*expected, "overall"]]
    assert json.loads(open(s.store_uri.rsplit("/", 1)[0] + "/res.json").read())["run_id"] == res["run_id"]
    assert calls[-1][0] == calls[-1][1] == res["questions_total"]


def test_rows_persisted_in_store(full_run) -> None:
    res, s, _ = full_run
    rows = LanceStore(s.store_uri, dim=256).results(res["run_id"])
    assert len(rows) == res["questions_total"]
    for r in rows:
        assert ROW_KEYS <= set(r)
        assert r["failure"] in ("correct", "retrieval_failure", "reasoning_failure", "no_evidence")
        assert row_trace(r)["question_id"] == r["question_id"]
        assert r["correct"] == bool(r["judge"])  # the judge ran, so it decides "correct"


def test_rerun_redoes_nothing_and_matches(full_run) -> None:
    res, s, _ = full_run
    calls: list = []
    again = run_eval(s, "demo", systems=SYSTEMS, progress=lambda *a: calls.append(a))
    assert not [c for c in calls if c[2].get("done")]
    assert comparable(again) == comparable(res)


def test_resume_after_stop_equals_uninterrupted(full_run, tmp_path) -> None:
    res, _, _ = full_run
    s = settings(tmp_path)
    done: list = []
    part = run_eval(s, "demo", systems=SYSTEMS, progress=lambda d, t, i: done.append(d),
                    should_stop=lambda: bool(done) and done[-1] >= 5)
    assert not part["complete"] and part["questions_done"] == 5
    assert len(LanceStore(s.store_uri, dim=256).results(part["run_id"])) == 5
    answered: list = []
    final = run_eval(s, "demo", systems=SYSTEMS, progress=lambda d, t, i: answered.append(i.get("done", 0)))
    assert sum(answered) == res["questions_total"] - 5  # finished questions are not redone
    assert final["complete"] and comparable(final) == comparable(res)


def test_shared_work_is_its_own_line_not_the_first_systems(full_run) -> None:
    # issue 28: the model load and the turn embedding were charged to whichever system ingested first
    res, _, calls = full_run
    infos = [info for _, _, info in calls]
    phases = [(i["phase"], i.get("system")) for i in infos]
    shared = [k for k, (p, _) in enumerate(phases) if p == "shared"]
    assert len(shared) == 1 and shared[0] < phases.index(("ingest", SYSTEMS[0]))
    embedding = [i for i in infos if i["phase"] == "embedding turns"]
    assert embedding and all(i["system"] == "" for i in embedding)  # reported as nobody's
    timing = res["timing"]
    assert set(timing["shared_seconds"]) == {"model load", "turn embedding"}
    assert timing["shared_seconds"]["turn embedding"] > 0
    assert list(timing["systems_seconds"]) == SYSTEMS
    assert all(set(t) == {"ingest", "answer"} and min(t.values()) >= 0 for t in timing["systems_seconds"].values())
    assert "timing" not in strip_timing(res)  # ignored where results are compared, like the other timings


def test_a_failed_shared_step_is_left_to_each_systems_ingest(full_run, tmp_path, monkeypatch) -> None:
    res, _, _ = full_run

    def broken(self, conv, stage=None):
        raise RuntimeError("embedding endpoint down")

    monkeypatch.setattr(Workbench, "prepare", broken)
    calls: list = []
    again = run_eval(settings(tmp_path), "demo", systems=SYSTEMS, progress=lambda d, t, i: calls.append(i))
    assert not [i for i in calls if i["phase"] == "shared"] and again["timing"]["shared_seconds"] == {}
    assert comparable(again) == comparable(res)  # the first ingest embeds the turns, as before


def test_resume_after_stop_during_ingest(full_run, tmp_path) -> None:
    res, _, _ = full_run
    s = settings(tmp_path)
    phases: list = []
    part = run_eval(s, "demo", systems=SYSTEMS, progress=lambda d, t, i: phases.append(i),
                    should_stop=lambda: any(p["phase"] == "ingest" and p["system"] == SYSTEMS[1] for p in phases))
    assert not part["complete"] and part["systems"][SYSTEMS[1]]["overall"]["n"] == 0
    final = run_eval(s, "demo", systems=SYSTEMS)
    assert comparable(final) == comparable(res)


def test_provider_mismatch_refused(tmp_path) -> None:
    run_eval(settings(tmp_path), "demo", systems=["naive_rag"], limit=1, run_id="mine")
    with pytest.raises(ConfigError, match="never mix providers"):
        run_eval(settings(tmp_path, provider="fake"), "demo", systems=["naive_rag"], limit=1, run_id="mine")
    other = run_eval(settings(tmp_path, provider="fake"), "demo", systems=["naive_rag"], limit=1)
    # its own run (the unscripted fake answers nothing: its failed answer is that run's, never "mine"'s)
    assert other["run_id"] != "mine" and other["provider"] == "fake"
    with pytest.raises(ConfigError, match="other settings"):
        run_eval(settings(tmp_path), "demo", systems=["naive_rag"], limit=1, run_id="mine", retriever="lexical")


def test_categories_limit_and_bad_input(tmp_path) -> None:
    demo = load_demo()
    assert [q.category for q in select_questions(demo, None, None)].count(5) == 0
    assert {q.category for q in select_questions(demo, ["5"], None)} == {5}
    assert len(select_questions(demo, ["2", "4"], 3)) == 3
    res = run_eval(settings(tmp_path), "demo", systems=["naive_rag"], categories=[5], judge=False)
    block = res["systems"]["naive_rag"]
    assert list(block["categories"]) == ["5"] and "judge" not in block["overall"]
    assert res["judge"]["enabled"] is False
    with pytest.raises(ConfigError, match="nope: unknown memory system 'nope'; available: "):
        run_eval(settings(tmp_path), "demo", systems=["nope"])
    with pytest.raises(ConfigError, match="no conversation"):
        run_eval(settings(tmp_path), "demo", systems=["naive_rag"], conversations=["zzz"])
    with pytest.raises(ConfigError, match="--file"):
        run_eval(settings(tmp_path), "locomo", None, ["naive_rag"])


@pytest.fixture
def broken_systems():
    """Two registered systems that fail: one while ingesting, one while answering (removed afterwards)."""
    from memcore.systems import SYSTEMS, register_system
    from memcore.systems.naive_rag import NaiveRAGSystem

    class BrokenIngest(NaiveRAGSystem):
        name = "test_broken_ingest"

        def on_turn(self, turn):
            raise RuntimeError("boom in ingest")

    class BrokenAnswer(NaiveRAGSystem):
        name = "test_broken_answer"

        def answer(self, question):
            raise RuntimeError("boom in answer")

    register_system(BrokenIngest)
    register_system(BrokenAnswer)
    yield [BrokenIngest.name, BrokenAnswer.name]
    SYSTEMS.pop(BrokenIngest.name, None)
    SYSTEMS.pop(BrokenAnswer.name, None)


def test_broken_systems_do_not_stop_the_others(tmp_path, broken_systems) -> None:
    res = run_eval(settings(tmp_path), "demo", systems=[*broken_systems, "naive_rag"], limit=2)
    assert not res["complete"] and res["systems"]["naive_rag"]["overall"]["n"] == 2
    assert res["systems"]["test_broken_ingest"]["overall"]["n"] == 0
    assert res["systems"]["test_broken_answer"]["overall"]["n"] == 0  # failed questions are not saved
    errs = {(e["system"], e.get("question_id", "")): e["error"] for e in res["errors"]}
    assert "boom in ingest" in errs[("test_broken_ingest", "")]
    assert "boom in answer" in errs[("test_broken_answer", "demo:q0")]


def test_jsonl_dataset_with_two_workers(tmp_path, two_demo_chats) -> None:
    """Two conversations over two worker processes give the rows of one process."""
    path = two_demo_chats
    one = run_eval(settings(tmp_path, "s1"), "jsonl", path, ["naive_rag"], limit=3, workers=1)
    two = run_eval(settings(tmp_path, "s2"), "jsonl", path, ["naive_rag"], limit=3, workers=2)
    why = {k: two.get(k) for k in ("questions_missing", "missing_by_system", "errors", "timing")}
    assert two["complete"] and two["conversations"] == ["demo", "demo2"], why  # a recurrence says why (once, s23)
    assert comparable(one) == comparable(two)
    more = run_eval(settings(tmp_path, "s2"), "jsonl", path, ["naive_rag"], limit=4, workers=2)
    assert more["complete"] and more["questions_done"] == 8  # rows saved by the workers are all seen


def test_construction_usage_counts_resumed_steps_once(tmp_path) -> None:
    store = LanceStore(str(tmp_path / "st"), dim=8)

    def rec(step: int, ts: float, conv: str = "c1", hit: bool = False) -> CallRecord:
        return CallRecord(role="r", stage="construction", system="s", conv_id=conv, provider="openai",
                          model="gpt-4o-mini-2024-07-18", prompt_tokens=10, completion_tokens=1, step=step, ts=ts,
                          cache_hit=hit)
    # checkpoint at step 2; the killed ingest's records of steps 3-4 reached the store; the resume rolls
    # them back with the step's items, then redoes 3-5, finding the calls the killed ingest made in the cache
    killed = [rec(1, 1.0), rec(2, 2.0), rec(3, 3.0), rec(3, 3.5), rec(4, 4.0)]
    resumed = [rec(3, 10.0, hit=True), rec(4, 11.0, hit=True), rec(4, 11.5), rec(5, 12.0)]
    store.add_llm_calls(killed + [rec(1, 5.0, "c2")])
    store.rollback_llm_calls("s-0000", "c1", 2)
    store.add_llm_calls(resumed)
    got = construction_usage(store, "s", ["c1"], "openai", "gpt-4o-mini")
    assert (got["prompt_tokens"], got["completion_tokens"], got["calls"]) == (60, 6, 6)
    assert construction_usage(store, "s", ["c1", "c2"], "openai", "gpt-4o-mini")["calls"] == 7
    assert construction_usage(store, "s", ["c1"], "openai", "gpt-4o")["calls"] == 0  # another model
    assert construction_usage(store, "s", ["c1"], "offline", "offline-engine")["calls"] == 0


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs (no flush, no cleanup)."""


def test_construction_usage_of_an_ingest_killed_after_a_checkpoint(tmp_path) -> None:
    conv = load_demo()
    whole = Workbench(settings(tmp_path, "a"))
    whole.ingest("xmemory", conv)
    whole.ledger.flush()
    killed = Workbench(settings(tmp_path, "b"))
    commit = killed.store.commit

    def commit_then_die(*args, **kwargs) -> None:
        commit(*args, **kwargs)
        raise Killed

    killed.store.commit = commit_then_die
    with pytest.raises(Killed):
        killed.ingest("xmemory", conv)
    resumed = Workbench(settings(tmp_path, "b"))
    assert resumed.ingest("xmemory", conv).resumed_from > 0
    resumed.ledger.flush()

    def usage(wb: Workbench) -> dict:
        got = construction_usage(wb.store, "xmemory", ["demo"], "offline", wb.llm.provider.model)
        return {k: v for k, v in got.items() if k != "latencies_ms"}
    assert usage(whole)["calls"] > 0 and usage(resumed) == usage(whole)


@pytest.fixture(scope="module")
def all_systems_run(tmp_path_factory) -> dict:
    return run_eval(settings(tmp_path_factory.mktemp("all")), "demo", systems="all")


@pytest.mark.parametrize(("phase", "system"), [("ingest", "xmemory"), ("answer", "recmem")])
def test_killed_run_resumes_to_identical_numbers(all_systems_run, tmp_path, phase, system) -> None:
    """Killed mid-ingest (uncommitted turns, unflushed ledger) or mid-answer (unsaved rows), then resumed."""
    def die(done: int, total: int, info: dict) -> None:
        if info["phase"] == phase and info["system"] == system and (phase == "answer" or info.get("turn")):
            raise Killed

    with pytest.raises(Killed):
        run_eval(settings(tmp_path), "demo", systems="all", progress=die)
    part = run_eval(settings(tmp_path), "demo", systems="all", should_stop=lambda: True)
    assert not part["complete"]
    final = run_eval(settings(tmp_path), "demo", systems="all")
    assert final["complete"] and comparable(final) == comparable(all_systems_run)
