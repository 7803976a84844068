"""xMemory's ablation presets (Sec. 5.1, Fig. 3; Sec. 5.3, Fig. 5) and its theme-cap sweep (Table 8): each parses,
validates and really removes its mechanism, checked on the demo with the offline engine (Stage I: no kNN graph and
plain top-k picks; Stage II: no probe call in the ledger; split / merge: no such event, reassignment 0 when both
are off); the default memory space is the one main computed."""

from __future__ import annotations

import pytest

from memcore.llm.ledger import CallRecord
from memcore.systems import get_system
from memcore.systems.protocol import memory_space
from memcore.systems.variants import get_preset, get_sweep, parse_variant
from memcore.systems.xmemory import trace as xtr
from memcore.systems.xmemory.structure import ADMITTED, NOT_PROBED, XMemoryStructure
from memcore.testing.contract import contract_workbench
from memcore.types import Trace

MERGING = "merge_cos=0.2"  # on the demo the paper config never merges; at merge_cos 0.2 it merges 33 times


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    wb = contract_workbench(tmp_path_factory.mktemp("xmemory_presets"))
    conv = wb.load_demo()
    wb.ingest("xmemory", conv)
    return wb, conv


def run(demo, name: str) -> tuple[list[Trace], list[CallRecord], object]:
    """Every demo question's trace under a variant, the ledger records of those retrievals, and the system."""
    wb, conv = demo
    system = wb.system("xmemory", conv, **parse_variant(name).settings)
    # a query-time variant is a view sharing the held memory and its caches: give it a cache of its own, so
    # what its retrieval builds (the kNN graphs of Stage I) is seen
    system.retrieval_cache = xtr.RetrievalCache()
    start = wb.ledger.mark()
    trs = [system.retrieve(q) for q in conv.questions]
    return trs, wb.ledger.records[start:], system


def built(demo, name: str) -> tuple[object, dict[str, int]]:
    """A variant's memory of the demo (built on first use) and its restructuring events by kind."""
    wb, conv = demo
    settings = parse_variant(name).settings
    wb.ingest("xmemory", conv, **settings)
    kinds: dict[str, int] = {}
    for e in wb.memory("xmemory", conv, **settings).events():
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    return wb.system("xmemory", conv, **settings), kinds


@pytest.mark.parametrize(("name", "settings", "figure"), [
    ("memory-only", {"stage_one": False, "stage_two": False}, "Fig. 3"),
    ("plus-repsel", {"stage_two": False}, "Fig. 3"), ("plus-uncsel", {"stage_one": False}, "Fig. 3"),
    ("no-split", {"split": False}, "Fig. 5"), ("no-merge", {"merge_passes": 0}, "Fig. 5"),
    ("no-merge-split", {"split": False, "merge_passes": 0}, "Fig. 5")])
def test_each_preset_parses_validates_and_names_its_figure(name: str, settings: dict, figure: str) -> None:
    preset = get_preset("xmemory", name)
    assert preset.source.startswith("xMemory Sec. 5.") and figure in preset.source and preset.description
    v = parse_variant(f"xmemory:{name}")
    assert v.settings == settings and v.name == f"xmemory:{name}"
    cfg = v.config()
    assert all(getattr(cfg, k) == x for k, x in settings.items())
    default_space = memory_space("xmemory", get_system("xmemory").config_class(), "e", ("l",))
    if figure == "Fig. 3":  # retrieval ablations: the full system's memory
        assert v.construction() == {} and memory_space("xmemory", cfg, "e", ("l",)) == default_space
    else:  # construction ablations: a new memory
        assert v.construction() == settings and memory_space("xmemory", cfg, "e", ("l",)) != default_space


def test_the_default_memory_space_is_unchanged() -> None:
    # computed once on main (01156f3, before the ablation switches existed) with this embedder and LLM
    assert memory_space("xmemory", get_system("xmemory").config_class(), "hashing-256",
                        ("offline", "offline-engine")) == "xmemory-182dcf4b"


def _top(rows: list[dict], budget: int) -> list[str]:
    return [r["id"] for r in sorted(rows, key=lambda r: -r["score"])[:budget]]


def _stage_one_off(trs: list[Trace], system) -> None:
    cfg = system.config
    assert system.retrieval_cache.knn == {}  # no kNN graph was built
    for tr in trs:
        for stage, budget in (("themes", cfg.theme_budget), ("semantics", cfg.semantic_budget)):
            rows = tr.structure[stage]
            picked = [r["id"] for r in sorted((r for r in rows if r["picked"]), key=lambda r: r["pick_order"])]
            assert picked == _top(rows, budget)  # plain similarity: the top-k by score, in score order
            assert all(r["gain"] is None and r["coverage"] is None for r in rows)
        assert tr.structure["knn_graph"] == "not used (Stage I off)"
        assert any("Stage I (representative selection) off" in n for n in tr.notes)


def _stage_two_off(trs: list[Trace], calls: list[CallRecord], max_episodes: int) -> None:
    assert not any(r.role == "xmemory_probe" for r in calls)  # no uncertainty probe
    for tr in trs:
        eps = tr.structure["episodes"]
        assert [e["decision"] for e in eps] == [ADMITTED] * min(max_episodes, len(eps)) + [NOT_PROBED] * max(
            0, len(eps) - max_episodes)
        assert all("H_before" not in e and "gain" not in e for e in eps) and "H0" not in tr.structure
        assert tr.structure["messages"] == [] and XMemoryStructure.from_dict(tr.structure).probes == 0
        assert sum(it.kind == "episode" for it in tr.items) == min(max_episodes, len(eps))
        assert any("Stage II (uncertainty-gated inclusion) off" in n for n in tr.notes)


def test_the_full_system_runs_both_stages(demo) -> None:
    """What the ablations remove is there in the full system: greedy Stage I picks under the budget, probes."""
    trs, calls, system = run(demo, "xmemory")
    assert sum(r.role == "xmemory_probe" for r in calls) >= 2 * len(trs)
    assert system.retrieval_cache.knn  # the kNN graphs Stage I walks
    assert any(_top(tr.structure["semantics"], system.config.semantic_budget)
               != [r["id"] for r in tr.structure["semantics"] if r["picked"]] for tr in trs)
    assert all(XMemoryStructure.from_dict(tr.structure).probes > 0 for tr in trs)


def test_memory_only_has_no_stage_one_or_two_selection(demo) -> None:
    trs, calls, system = run(demo, "xmemory:memory-only")
    _stage_one_off(trs, system)
    _stage_two_off(trs, calls, system.config.max_episodes)
    assert not calls  # no LLM call at all before answering


def test_plus_repsel_keeps_stage_one_only(demo) -> None:
    trs, calls, system = run(demo, "xmemory:plus-repsel")
    full, _, _ = run(demo, "xmemory")
    assert system.retrieval_cache.knn
    assert [tr.structure["semantics"] for tr in trs] == [tr.structure["semantics"] for tr in full]  # Stage I as full
    _stage_two_off(trs, calls, system.config.max_episodes)


def test_plus_uncsel_keeps_stage_two_only(demo) -> None:
    trs, calls, system = run(demo, "xmemory:plus-uncsel")
    _stage_one_off(trs, system)
    assert sum(r.role == "xmemory_probe" for r in calls) >= 2 * len(trs)
    assert all(XMemoryStructure.from_dict(tr.structure).probes > 0 and "H0" in tr.structure for tr in trs)


def test_no_split_never_splits(demo) -> None:
    full, kinds = built(demo, "xmemory")
    assert kinds.get("split", 0) > 0 and full.reassignment_ratio() > 0  # the demo's full memory splits
    system, kinds = built(demo, "xmemory:no-split")
    assert kinds.get("split", 0) == 0 and kinds.get("moved", 0) == 0 and "splits" not in system.stats
    cap = system.config.max_theme
    assert max(len(system.members(t.id)) for t in system.memory.of_kind("theme")) > cap  # themes grow past it
    assert system.reassignment_ratio() == 0.0


def test_no_merge_never_merges(demo) -> None:
    full, kinds = built(demo, f"xmemory[{MERGING}]")
    assert kinds.get("merged", 0) > 0 and kinds.get("split", 0) > 0
    system, kinds = built(demo, f"xmemory:no-merge[{MERGING}]")
    assert kinds.get("merged", 0) == 0 and "merges" not in system.stats and kinds.get("split", 0) > 0
    assert len(system.memory.of_kind("theme")) > len(full.memory.of_kind("theme"))  # merge compacts the themes


@pytest.mark.parametrize("extra", ["", f"[{MERGING}]"])
def test_no_merge_split_freezes_the_hierarchy(demo, extra: str) -> None:
    system, kinds = built(demo, f"xmemory:no-merge-split{extra}")
    assert not {"split", "merged", "moved"} & set(kinds)
    assert system.reassignment_ratio() == 0.0 and system.state()["reassignment_ratio"] == 0.0
    assert all(s.metadata["theme"] == s.metadata["first_theme"] for s in system.memory.of_kind("semantic"))


def test_the_theme_cap_sweep_is_table_8() -> None:
    sweep = get_sweep("xmemory", "theme-cap")
    assert sweep.source == "xMemory App. A.3 Table 8" and not sweep.paired
    assert [p["max_theme"] for p in sweep.points()] == [8, 10, 12, 14]
    assert sweep.variants() == ["xmemory[max_theme=8]", "xmemory[max_theme=10]", "xmemory", "xmemory[max_theme=14]"]
    assert all(parse_variant(n).construction() for n in sweep.variants() if n != "xmemory")  # new memories
