"""RecMem's ablation presets (Sec. 4.3, Fig. 2) and sweeps (App. C, Fig. 4-5): each parses, validates and really
removes its module, checked on the demo with the offline engine (no item of the removed store in the context,
the other stores' budgets kept; Direct Extraction: the recmem_extract role on the raw turns, never the episode);
the default memory space is the one main computed."""

from __future__ import annotations

import pytest

from memcore.llm.roles import get_role
from memcore.systems import get_system
from memcore.systems.protocol import memory_space
from memcore.systems.recmem.retrieval import SECTIONS
from memcore.systems.variants import get_preset, get_sweep, parse_variant, register_sweep, sweeps
from memcore.testing.contract import contract_workbench
from memcore.types import Trace

# At the paper's thresholds (0.7 / 5) the hashing embedder finds no recurrence on the demo: every exchange stays
# in the subconscious store. At 0.3 / 3 it consolidates 10 times into 11 episodes and 34 facts.
LOW = "theta_sim=0.3,theta_count=3"
STORES = ("subconscious", "episodic", "semantic")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    wb = contract_workbench(tmp_path_factory.mktemp("recmem_presets"))
    conv = wb.load_demo()
    return wb, conv, {}


def build(demo, name: str) -> tuple[object, list]:
    """A variant's memory of the demo and the ledger records of its construction (built on first use)."""
    wb, conv, calls = demo
    settings = parse_variant(name).settings
    if name not in calls:
        start = wb.ledger.mark()
        wb.ingest("recmem", conv, **settings)
        calls[name] = wb.ledger.records[start:]
    return wb.system("recmem", conv, **settings), calls[name]


def answers(demo, name: str) -> list[Trace]:
    """Every demo question's trace under a variant."""
    system, _ = build(demo, name)
    return [system.retrieve(q) for q in demo[1].questions]


@pytest.mark.parametrize(("name", "settings"), [
    ("no-subconscious", {"k_sub": 0}), ("no-episodic", {"k_epi": 0}), ("no-semantic", {"k_sem": 0}),
    ("direct-extraction", {"semantic_source": "direct", "k_epi": 0})])
def test_each_preset_parses_validates_and_names_fig_2(name: str, settings: dict) -> None:
    preset = get_preset("recmem", name)
    assert preset.source.startswith("RecMem Sec. 4.3, Fig. 2") and preset.description
    v = parse_variant(f"recmem:{name}")
    assert v.settings == settings and all(getattr(v.config(), k) == x for k, x in settings.items())
    default_space = memory_space("recmem", get_system("recmem").config_class(), "e", ("l",))
    if name == "direct-extraction":  # facts written differently: a new memory
        assert v.construction() == {"semantic_source": "direct"}
        assert memory_space("recmem", v.config(), "e", ("l",)) != default_space
    else:  # the module's retrieval budget only: the full system's memory
        assert v.construction() == {} and memory_space("recmem", v.config(), "e", ("l",)) == default_space


def test_the_default_memory_space_is_unchanged() -> None:
    # computed once on main (01156f3, before the ablation switches existed) with this embedder and LLM
    assert memory_space("recmem", get_system("recmem").config_class(), "hashing-256",
                        ("offline", "offline-engine")) == "recmem-5362dee4"


@pytest.mark.parametrize(("preset", "store"), [("no-subconscious", "subconscious"), ("no-episodic", "episodic"),
                                               ("no-semantic", "semantic")])
def test_each_w_o_preset_removes_its_store_and_keeps_the_others_budgets(demo, preset: str, store: str) -> None:
    full = answers(demo, f"recmem[{LOW}]")
    assert all(tr.structure["retrieved"][s] > 0 for tr in full for s in STORES)  # every store answers in full
    trs = answers(demo, f"recmem:{preset}[{LOW}]")
    for tr, ref in zip(trs, full, strict=True):
        assert tr.structure["retrieved"][store] == 0 and SECTIONS[store] not in tr.context
        assert not any(it.metadata.get("store") == store for it in tr.items)
        assert not any(c.stage == store for c in tr.candidates)
        assert f"ablation: not retrieved from {store} (budget 0)" in tr.notes
        for other in set(STORES) - {store}:  # the other modules keep their budgets and their items
            assert tr.structure["retrieved"][other] == ref.structure["retrieved"][other]
            assert [i.id for i in tr.items if i.metadata["store"] == other] == [
                i.id for i in ref.items if i.metadata["store"] == other]


def test_direct_extraction_extracts_from_the_raw_turns_without_the_episode(demo) -> None:
    full, full_calls = build(demo, f"recmem[{LOW}]")
    refine = [r for r in full_calls if r.role == "recmem_refine"]
    assert refine and all("Episodic Memory:" in r.prompt for r in refine)
    system, calls = build(demo, f"recmem:direct-extraction[{LOW}]")
    roles = {r.role for r in calls}
    assert "recmem_refine" not in roles and "recmem_episodes" in roles  # episodes are still built ...
    extract = [r for r in calls if r.role == "recmem_extract"]
    assert len(extract) == len(refine)
    wb, conv, _ = demo
    stored = wb.memory("recmem", conv, **parse_variant(f"recmem:direct-extraction[{LOW}]").settings)
    episodes = [e.text for e in stored.items("episode", with_vectors=False)]
    for r in extract:  # ... but never shown to the extractor
        assert "Episodic Memory" not in r.prompt and "Raw Reference:" in r.prompt
        assert not any(text in r.prompt for text in episodes)
    facts = stored.items("semantic", with_vectors=False)  # (retrieval holds no items in working memory)
    assert facts and system.facts["added"] == len(facts)
    assert all(f.sources == f.turn_ids for f in facts)  # from the turns, not derived from an episode
    trs = answers(demo, f"recmem:direct-extraction[{LOW}]")  # answering: subconscious + the facts
    assert all(tr.structure["retrieved"]["episodic"] == 0 and tr.structure["retrieved"]["semantic"] > 0
               and tr.structure["semantic_source"] == "direct" for tr in trs)


def test_no_subconscious_on_an_unconsolidated_memory_says_why_nothing_came_back(demo) -> None:
    """At the paper's thresholds the demo never consolidates: w/o subconscious retrieves nothing, and the
    trace must not claim the stores are empty."""
    system, _ = build(demo, "recmem:no-subconscious")
    tr = system.retrieve(demo[1].questions[0])
    assert tr.items == [] and tr.structure["stores"]["subconscious"] > 0
    assert "nothing retrieved: the stores with a budget returned nothing" in tr.notes
    assert not any("empty" in n for n in tr.notes)


def test_the_extract_prompt_is_the_refine_prompt_without_the_episode() -> None:
    refine, extract = get_role("recmem_refine"), get_role("recmem_extract")
    for text in ("the episodic memory E", "E leaves out", "E, R or S", "{episode}"):
        assert text in refine.system + refine.user and text not in extract.system + extract.user
    for text in ("Raw Reference:\n{raw}", "Old Semantic Memories", "fewer than 10 facts", "TIME_ANCHORED_UPDATE",
                 "{maintenance}"):  # the other parts intact
        assert text in extract.system + extract.user
    assert extract.temperature == refine.temperature


def test_the_sweeps_are_app_c_one_parameter_at_a_time() -> None:
    got = {s.name: s for s in sweeps("recmem")}
    assert set(got) == {"theta-sim", "theta-count", "k-sub", "k-epi"}
    assert got["theta-sim"].source.endswith("Fig. 4(a)") and 0.7 in got["theta-sim"].grid["theta_sim"]
    assert 5 in got["theta-count"].grid["theta_count"] and 10 in got["k-sub"].grid["k_sub"]
    assert all(len(s.grid) == 1 for n, s in got.items() if n != "k-epi")
    points = got["k-epi"].points()
    assert got["k-epi"].paired and all(p["k_sem"] == 2 * p["k_epi"] for p in points)
    assert len(points) == len(got["k-epi"].grid["k_epi"]) and "recmem" in got["k-epi"].variants()  # 5 / 10
    for sweep in got.values():
        for name in sweep.variants():
            parse_variant(name)  # every point is a valid variant


def test_a_paired_sweep_needs_lists_of_one_length() -> None:
    with pytest.raises(ValueError, match="paired"):
        register_sweep("recmem", "test-bad", {"k_epi": [1, 2], "k_sem": [2]}, source="test", description="x",
                       paired=True)
    assert get_sweep("recmem", "k-sub").points() == [{"k_sub": k} for k in (1, 2, 5, 10, 15, 20)]
