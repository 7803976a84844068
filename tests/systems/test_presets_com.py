"""CoM's ablation presets (Sec. 4.3, Fig. 3) and sweep (Sec. 4.4, Fig. 4): each parses, validates and really
removes its mechanism, checked on the retrieval of every demo question (offline engine, hashing embedder)."""

from __future__ import annotations

import statistics

import pytest

from memcore.systems import get_system
from memcore.systems.protocol import memory_space
from memcore.systems.variants import get_preset, get_sweep, parse_variant
from memcore.types import Trace
from tests.systems.preset_util import Demo, demo_memory, run_variant


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Demo:
    return demo_memory(tmp_path_factory.mktemp("com_presets"), "com")


def traces(demo: Demo, name: str) -> list[Trace]:
    """The trace of every demo question under a variant."""
    return run_variant(demo, name)[0]


def chains(trs: list[Trace]) -> list[dict]:
    return [c for tr in trs for c in tr.structure["chains"]]


@pytest.mark.parametrize(("name", "field"), [("no-framework", "framework"), ("no-dmce", "dmce"), ("no-apt", "apt")])
def test_each_preset_parses_validates_and_names_its_figure(name: str, field: str) -> None:
    preset = get_preset("com", name)
    assert preset.source.startswith("CoM Sec. 4.3, Fig. 3") and preset.description.startswith("w/o ")
    v = parse_variant(f"com:{name}")
    assert v.name == f"com:{name}" and v.settings == {field: False}
    assert getattr(v.config(), field) is False and v.construction() == {}  # query-time: the same memory


def test_the_default_memory_space_is_unchanged() -> None:
    # computed once on main (9c461f0, before the ablation switches existed) with this embedder and LLM
    assert memory_space("com", get_system("com").config_class(), "hashing-256",
                        ("offline", "offline-engine")) == "com-f017f38c"


def test_no_apt_grows_every_chain_to_its_cap(demo) -> None:
    full = chains(traces(demo, "com"))
    assert any(c["stop_reason"].startswith("best gate") for c in full)  # APT fires on the demo
    trs = traces(demo, "com:no-apt")
    cap = parse_variant("com:no-apt").config().max_len
    ablated = chains(trs)
    assert len(ablated) == len(full)
    assert all(len(c["members"]) == cap and c["stop_reason"] == f"max length {cap} reached" for c in ablated)
    assert all(st["threshold"] is None for c in ablated for st in c["steps"][:-1])
    assert statistics.mean(len(c["members"]) for c in ablated) > statistics.mean(len(c["members"]) for c in full)
    assert all(any("w/o APT" in n for n in tr.notes) for tr in trs)


def test_no_dmce_keeps_the_anchors_alone(demo) -> None:
    full, trs = traces(demo, "com"), traces(demo, "com:no-dmce")
    assert any(len(c["members"]) > 1 for c in chains(full))
    for f, tr in zip(full, trs, strict=True):
        anchors = [c["anchor"] for c in f.structure["chains"]]
        assert [c["members"] for c in tr.structure["chains"]] == [[a] for a in anchors]
        assert all(c["steps"] == [] for c in tr.structure["chains"])  # no gate computed
        assert [i.id for i in tr.items] == anchors and len(anchors) == 3
        assert any("w/o DMCE" in n for n in tr.notes)


def test_no_framework_is_the_plain_top_k_pool(demo) -> None:
    trs = traces(demo, "com:no-framework")
    K = get_system("com").config_class().K
    for tr in trs:
        pool = [c.id for c in tr.candidates if c.stage == "pool" and c.kept]
        assert [i.id for i in tr.items] == pool and len(pool) == K
        assert [i.origin for i in tr.items] == ["pool"] * K
        assert tr.structure["chains"] == [] and tr.stages == ["pool"]
        assert not any(c.stage == "chains" for c in tr.candidates) and not any(c.data["anchor"]
                                                                               for c in tr.candidates)
    full = traces(demo, "com")
    assert sum(len(t.context.split()) for t in trs) > sum(len(t.context.split()) for t in full)


def test_the_k_sweep_is_the_papers_grid_and_every_point_runs(demo) -> None:
    sweep = get_sweep("com", "k")
    assert sweep.source == "CoM Sec. 4.4, Fig. 4" and dict(sweep.grid) == {"K": (1, 5, 10, 20, 50)}
    assert sweep.variants() == ["com[K=1]", "com[K=5]", "com[K=10]", "com", "com[K=50]"]
    for name in sweep.variants():
        parse_variant(name).config()  # validates, K = 1 with the paper's L = 3 included
    one = traces(demo, "com[K=1]")
    assert all(len(tr.structure["chains"]) == 1 and len(tr.items) == 1 for tr in one)
    assert all(any("L=3 > K=1" in n for n in tr.notes) for tr in one)
