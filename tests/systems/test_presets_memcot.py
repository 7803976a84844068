"""MemCoT's ablation presets (Sec. 5.3, Table 4) and sweeps (Sec. 5.4, Fig. 4): each parses, validates and
really removes its mechanism (no zoom-out call in the ledger), or, for visual grounding, which memcore does not
have, says so instead of pretending; checked on every demo question with the offline engine."""

from __future__ import annotations

import pytest

from memcore.systems import get_system
from memcore.systems.fields import field_specs
from memcore.systems.protocol import memory_space
from memcore.systems.variants import get_preset, get_sweep, parse_variant
from tests.systems.preset_util import Demo, demo_memory, run_variant


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Demo:
    return demo_memory(tmp_path_factory.mktemp("memcot_presets"), "memcot")



@pytest.mark.parametrize(("name", "settings"), [
    ("no-zoom-out", {"zoom_out": False}), ("no-visual", {"visual_grounding": "off"}),
    ("no-zoom-out-visual", {"zoom_out": False, "visual_grounding": "off"})])
def test_each_preset_parses_validates_and_names_its_table(name: str, settings: dict) -> None:
    preset = get_preset("memcot", name)
    assert preset.source.startswith("MemCoT Sec. 5.3, Table 4") and preset.description.startswith("w/o ")
    v = parse_variant(f"memcot:{name}")
    assert v.settings == settings and v.construction() == {}  # query-time: the same memory
    assert all(getattr(v.config(), k) == x for k, x in settings.items())


def test_the_default_memory_space_is_unchanged() -> None:
    # computed once on main (9c461f0, before the ablation switches existed) with this embedder and LLM
    assert memory_space("memcot", get_system("memcot").config_class(), "hashing-256",
                        ("offline", "offline-engine")) == "memcot-f017f38c"


def test_no_zoom_out_makes_no_zoom_out_call(demo) -> None:
    full, full_calls = run_variant(demo, "memcot")
    assert sum(r.role == "memcot_zoom_out" for r in full_calls) >= len(full)  # the full system calls it each step
    trs, calls = run_variant(demo, "memcot:no-zoom-out")
    assert calls and not any(r.role == "memcot_zoom_out" for r in calls)
    assert any(r.role == "memcot_zoom_in" for r in calls) and any(r.role == "memcot_judge" for r in calls)
    for tr in trs:
        assert tr.stages == ["zoom_in", "judge"] and not any(c.stage == "zoom_out" for c in tr.candidates)
        assert all(it["zoom_out_windows"] == [] for it in tr.structure["iterations"])
        # every picked turn came from the zoom-in (or the judge), never from a window around it
        assert all(set(it["picked"]) == set(it["useful"]) for it in tr.structure["iterations"])
        assert any("w/o zoom-out" in n for n in tr.notes)


def test_w_zero_still_calls_zoom_out_unlike_the_preset(demo) -> None:
    """Table 8's point: W = 0 is not the ablation (the zoom-out role still runs on the hits alone)."""
    _, calls = run_variant(demo, "memcot[W=0]")
    assert any(r.role == "memcot_zoom_out" for r in calls)


def test_no_visual_says_memcore_has_no_visual_module(demo) -> None:
    assert "NO visual module" in get_preset("memcot", "no-visual").description
    spec = next(s for s in field_specs(get_system("memcot").config_class) if s.name == "visual_grounding")
    assert spec.default == "absent" and "no visual module" in spec.help and spec.query_time
    full, full_calls = run_variant(demo, "memcot")
    trs, calls = run_variant(demo, "memcot:no-visual")
    assert [t.context for t in trs] == [t.context for t in full]  # nothing to remove: the same retrieval
    assert [r.role for r in calls] == [r.role for r in full_calls]
    assert all(any("no visual module" in n for n in tr.notes) for tr in trs)
    assert not any("visual" in n for tr in full for n in tr.notes)
    both, both_calls = run_variant(demo, "memcot:no-zoom-out-visual")
    assert not any(r.role == "memcot_zoom_out" for r in both_calls)
    assert all(any("no visual module" in n for n in tr.notes) and any("w/o zoom-out" in n for n in tr.notes)
               for tr in both)


def test_the_sweeps_are_the_papers_ranges_and_every_point_validates() -> None:
    w, j = get_sweep("memcot", "W"), get_sweep("memcot", "J")
    assert w.source == "MemCoT Sec. 5.4, Fig. 4(a)" and j.source == "MemCoT Sec. 5.4, Fig. 4(b)"
    assert min(w.grid["W"]) == 1 and max(w.grid["W"]) > 8 and 4 in w.grid["W"]
    assert j.grid["J"] == (2, 3, 4, 5, 6)
    for sweep in (w, j, get_sweep("memcot", "K")):
        for name in sweep.variants():
            parse_variant(name).config()


def test_a_smaller_window_shows_fewer_zoom_out_lines(demo) -> None:
    wide, _ = run_variant(demo, "memcot[W=8]")
    narrow, _ = run_variant(demo, "memcot[W=1]")
    size = lambda trs: sum(len(w) for tr in trs for it in tr.structure["iterations"]  # noqa: E731
                           for w in it["zoom_out_windows"])
    assert size(narrow) < size(wide)
