"""Mechanism statistics (memcore.eval.mechanism driving each system class's `mechanism`, declared in
memcore/systems/<name>/stats.py): read from traces per question, summarised per system, in every eval
result (systems.<name>.mechanism) on the demo; a plugin system's own statistics are driven the same way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memcore.eval.mechanism import labels, mechanism_of, question_stats, summarize
from memcore.eval.report import row_trace
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.systems import SYSTEMS, BaseSystem, get_system, load_all, register_system
from memcore.systems.parts import Mechanism, mean

FIVE = ("com", "memcot", "xmemory", "recmem", "memweaver")
KEYS = {"com": {"chain_length_mean", "chain_length_hist"}, "memcot": {"steps_mean", "fallback_rate"},
        "xmemory": {"reassignment_ratio", "stage2_probes_mean"}, "recmem": {"consolidations", "calls_per_unit"},
        "memweaver": {"seeds_mean", "passages_forced_mean", "triples_selected_mean"}}


def rows(system: str, structures: list[dict], convs: list[str] | None = None) -> list[dict]:
    convs = convs or ["c1"] * len(structures)
    return [{"system": system, "conv_id": c, "mechanism": question_stats(system, s)}
            for s, c in zip(structures, convs, strict=True)]


def chain(n: int) -> dict:
    return {"members": [f"D1:{i}" for i in range(n)]}


def test_com_chain_lengths_and_histogram():
    out = summarize("com", rows("com", [{"chains": [chain(1), chain(1), chain(3)]}, {"chains": [chain(2)]}]))
    assert out["chain_length_mean"] == pytest.approx(7 / 4)
    assert out["chain_length_hist"] == {"1": 2, "2": 1, "3": 1} and out["questions"] == 2


def test_memcot_steps_and_fallback_rate():
    st = [{"steps": 1, "answered_from": "short-term memory"}, {"steps": 3, "answered_from": "full conversation"},
          {"steps": 2, "answered_from": "short-term memory"}, {"steps": 2, "answered_from": "short-term memory"}]
    assert summarize("memcot", rows("memcot", st)) == {"steps_mean": 2.0, "fallback_rate": 0.25, "questions": 4}


def test_xmemory_ratio_per_conversation_and_probes():
    ep = [{"decision": "include"}, {"decision": "skip"}, {"decision": "not probed"}]
    st = [{"reassignment_ratio": 0.2, "episodes": ep}, {"reassignment_ratio": 0.2, "episodes": ep[:1]},
          {"reassignment_ratio": 0.4, "episodes": []}]
    out = summarize("xmemory", rows("xmemory", st, ["a", "a", "b"]))
    assert out["reassignment_ratio"] == pytest.approx(0.3)  # mean over conversations, not questions
    assert out["stage2_probes_mean"] == pytest.approx(1.0)  # (2 + 1 + 0) / 3


def test_recmem_consolidations_summed_over_conversations_and_calls_per_unit():
    st = [{"exchanges": {"units": 10, "consolidations": 2}}, {"exchanges": {"units": 10, "consolidations": 2}},
          {"exchanges": {"units": 30, "consolidations": 1}}]
    out = summarize("recmem", rows("recmem", st, ["a", "a", "b"]), {"calls": 8})
    assert (out["consolidations"], out["units"], out["calls_per_unit"]) == (3, 40, 0.2)
    assert summarize("recmem", rows("recmem", st[:1]), {})["calls_per_unit"] is None


def test_memweaver_seeds_forced_passages_and_the_selector_key():
    base = {"budgets": {"used": {"seed_triples": 6}},
            "passages": [{"why": "forced-global"}, {"why": "forced-global"}, {"why": "graph-linked"}]}
    out = summarize("memweaver", rows("memweaver", [base]))
    assert (out["seeds_mean"], out["passages_forced_mean"], out["triples_selected_mean"]) == (6.0, 2.0, None)
    assert "no LLM triple selector" in out["triples_selected_note"]
    picked = {**base, "triple_selector": {"enabled": True, "selected": ["relation-1", "relation-4"],
                                          "backfill": ["relation-9"]}}
    off = {**base, "triple_selector": {"enabled": False, "selected": []}}
    both = summarize("memweaver", rows("memweaver", [picked, picked]))
    assert (both["triples_selected_mean"], both["triples_backfilled_mean"]) == (2.0, 1.0)
    assert "off" in summarize("memweaver", rows("memweaver", [off]))["triples_selected_note"]


def test_unknown_systems_and_odd_traces():
    assert question_stats("naive_rag", {"k": 20}) is None and summarize("naive_rag", []) == {}
    bad = question_stats("memcot", {"no": "steps"})
    assert "unreadable trace structure" in bad["error"]
    out = summarize("memcot", [{"system": "memcot", "mechanism": bad}, {"system": "memcot"}])
    assert out["questions"] == 0 and out["questions_without_stats"] == 2 and out["steps_mean"] is None
    assert all(get_system(n).mechanism is mechanism_of(n) is not None for n in FIVE)
    assert mechanism_of("no_such_system") is None and summarize("no_such_system", [{"mechanism": {}}]) == {}


def test_a_plugin_system_declares_its_own_mechanism_on_its_class():
    """memcore.eval.mechanism knows no system: a new system's class attribute is all it takes."""
    class Probe(BaseSystem):
        name = "probe_mech_plugin"
        mechanism = Mechanism(lambda st: {"hops": len(st["hops"])},
                              lambda stats, con: {"hops_mean": mean([s["hops"] for s in stats]), **con},
                              {"hops_mean": "hops per question"})

    register_system(Probe)
    try:
        rows_ = [{"conv_id": "c", "mechanism": question_stats(Probe.name, {"hops": h})} for h in ([1], [1, 2, 3])]
        assert summarize(Probe.name, rows_, {"calls": 4}) == {"hops_mean": 2.0, "calls": 4, "questions": 2}
        assert labels(Probe.name) == {"hops_mean": "hops per question"}
    finally:
        SYSTEMS.pop(Probe.name)


def test_the_mechanism_driver_names_no_system():
    text = (Path(__file__).resolve().parents[2] / "memcore" / "eval" / "mechanism.py").read_text(encoding="utf-8")
    named = [n for n in load_all() if re.search(rf"\b{n}\b", text, re.I)]
    assert not named, f"memcore/eval/mechanism.py names {named}: statistics belong in the system's package"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> tuple[dict, Settings]:
    tmp = tmp_path_factory.mktemp("mech")
    settings = Settings(store_uri=str(tmp / "store"), llm_provider="offline", embedder="hashing")
    run_eval(settings, "demo", systems="all", limit=3, out=tmp / "res.json")
    return json.loads((tmp / "res.json").read_text(encoding="utf-8")), settings


@pytest.fixture(scope="module")
def demo_results(demo_run) -> dict:
    return demo_run[0]


def test_eval_json_on_the_demo_holds_the_mechanism_block_for_every_system(demo_results):
    assert demo_results["complete"], demo_results["errors"][:3]  # a system that failed has no statistics
    systems = demo_results["systems"]
    assert set(FIVE) <= set(systems)
    for name, summary in systems.items():
        assert "mechanism" in summary, name
        if name in FIVE:
            block = summary["mechanism"]
            assert KEYS[name] <= set(block) and block["questions"] == summary["overall"]["n"], (name, block)
    memcot = systems["memcot"]["mechanism"]
    assert memcot["steps_mean"] >= 1 and 0 <= memcot["fallback_rate"] <= 1
    assert systems["memweaver"]["mechanism"]["seeds_mean"] > 0
    assert systems["recmem"]["mechanism"]["consolidations"] >= 0
    for name in FIVE:  # every number shown has a label saying what it is
        shown = set(systems[name]["mechanism"]) - {"questions", "questions_without_stats", "triples_selected_note"}
        assert shown <= set(labels(name)), (name, shown - set(labels(name)))


def test_mechanism_agrees_with_the_stored_traces(demo_run):
    res, settings = demo_run
    stored = LanceStore(settings.store_uri).results(res["run_id"], ["com", "memcot"])
    structure = {(r["system"], r["question_id"]): row_trace(r)["structure"] for r in stored}
    lengths = [len(ch["members"]) for (s, _), st in structure.items() if s == "com" for ch in st["chains"]]
    com = res["systems"]["com"]["mechanism"]
    assert com["chain_length_hist"] == {str(n): lengths.count(n) for n in sorted(set(lengths))}
    assert com["chain_length_mean"] == pytest.approx(sum(lengths) / len(lengths), abs=1e-4)
    steps = [st["steps"] for (s, _), st in structure.items() if s == "memcot"]
    assert res["systems"]["memcot"]["mechanism"]["steps_mean"] == pytest.approx(sum(steps) / len(steps), abs=1e-4)
