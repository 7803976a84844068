"""MemWeaver's ablation presets (Sec. 5.4, Table 3) and sweep (Sec. 5.5, Fig. 3): each parses, validates and
really removes its memory from the context (no graph channel, no experiences), the global passage channel kept;
checked on every demo question with the offline engine."""

from __future__ import annotations

import pytest

from memcore.systems import get_system
from memcore.systems.protocol import memory_space
from memcore.systems.variants import get_preset, get_sweep, parse_variant
from memcore.types import Trace
from tests.systems.preset_util import Demo, demo_memory, run_variant


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Demo:
    return demo_memory(tmp_path_factory.mktemp("memweaver_presets"), "memweaver")



def kinds(tr: Trace) -> set[str]:
    return {i.kind for i in tr.items}


@pytest.mark.parametrize(("name", "field"), [("no-graph", "graph_memory"), ("no-experience", "experience_memory")])
def test_each_preset_parses_validates_and_names_its_table(name: str, field: str) -> None:
    preset = get_preset("memweaver", name)
    assert preset.source.startswith("MemWeaver Sec. 5.4, Table 3") and preset.description.startswith("w/o ")
    assert "global passage retrieval channel preserved" in preset.description
    v = parse_variant(f"memweaver:{name}")
    assert v.settings == {field: False} and getattr(v.config(), field) is False
    assert v.construction() == {}  # query-time: the same memory, no rebuild


def test_the_default_memory_space_is_unchanged() -> None:
    # computed once on main (9c461f0, before the ablation switches existed) with this embedder and LLM
    assert memory_space("memweaver", get_system("memweaver").config_class(), "hashing-256",
                        ("offline", "offline-engine")) == "memweaver-ac10432a"


def test_no_graph_leaves_no_graph_channel_in_the_context(demo) -> None:
    full, full_calls = run_variant(demo, "memweaver")
    assert all("relation" in kinds(tr) for tr in full) and any("Knowledge graph" in tr.context for tr in full)
    assert any(r.role == "mw_select" for r in full_calls)
    assert any(p["why"] == "graph-linked" for tr in full for p in tr.structure["passages"])
    trs, calls = run_variant(demo, "memweaver:no-graph")
    assert not any(r.role == "mw_select" for r in calls)  # no triples, so no Eq. 10 selector call
    n = get_system("memweaver").config_class().passages
    for tr in trs:
        assert "relation" not in kinds(tr) and "Knowledge graph" not in tr.context
        assert tr.structure["subgraph"]["edges"] == [] or all(
            e["relation"] in ("contains", "about") for e in tr.structure["subgraph"]["edges"])
        assert not any(c.stage in ("seed_triples", "expanded_triples", "selected_triples") for c in tr.candidates)
        passages = tr.structure["passages"]
        assert len(passages) == n and all(p["why"] in ("forced-global", "backfill") for p in passages)
        assert any("w/o GM" in note for note in tr.notes)
    # the experience memory stays: reached by cosine, since there are no entities to follow
    assert any("experience" in kinds(tr) for tr in trs)


def test_no_experience_drops_experiences_and_keeps_graph_and_passages(demo) -> None:
    full, _ = run_variant(demo, "memweaver")
    assert any("experience" in kinds(tr) for tr in full)
    trs, _ = run_variant(demo, "memweaver:no-experience")
    for f, tr in zip(full, trs, strict=True):
        assert "experience" not in kinds(tr) and "Experiences:" not in tr.context
        assert "experiences" not in tr.stages and tr.structure["experiences"] == []
        assert [i.id for i in tr.items if i.kind != "experience"] == [i.id for i in f.items if i.kind != "experience"]
        assert any("w/o ExpM" in note for note in tr.notes)


def test_the_budget_sweep_is_triples_by_text_items_and_changes_the_context(demo) -> None:
    sweep = get_sweep("memweaver", "budgets")
    assert sweep.source == "MemWeaver Sec. 5.5, Fig. 3" and list(sweep.grid) == ["seed_triples", "passages"]
    assert len(sweep.points()) == 25 and "memweaver" in sweep.variants()  # the paper default is a point
    for name in sweep.variants():
        parse_variant(name).config()
    small, _ = run_variant(demo, "memweaver[passages=2,seed_triples=2]")
    large, _ = run_variant(demo, "memweaver[passages=10,seed_triples=10]")
    assert all(len(tr.structure["passages"]) <= 2 for tr in small)
    assert sum(len(tr.structure["passages"]) for tr in large) > sum(len(tr.structure["passages"]) for tr in small)
    assert (sum(tr.structure["budgets"]["used"]["seed_triples"] for tr in large)
            > sum(tr.structure["budgets"]["used"]["seed_triples"] for tr in small))
