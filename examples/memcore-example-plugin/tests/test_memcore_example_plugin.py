"""The example plugin, installed next to memcore: its system keeps memcore's contract and shows up in
the system registry, the CLI, the benchmark, the retriever registry and the view registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from memcore.retrievers import get_retriever, retriever_names
from memcore.systems import builtin_systems, get_system, load_all
from memcore.testing import CHECKS, contract_case, run_contract
from memcore.viz.bundles import structure_sections
from memcore.viz.views import get_view, has_view, view_order

NAME = "recent_k"
if NAME not in {ep.name for ep in entry_points(group="memcore.systems")}:  # installed (loads in tests: conftest)
    pytest.fail("the example plugin is not installed: pip install --no-deps -e examples/memcore-example-plugin "
                "(scripts/setup.sh does)", pytrace=False)
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MEMCORE_PLUGINS": "1"}  # plugins on


def memcore_cli(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run `memcore ...` in a fresh process (entry points are read there from the installed packages)."""
    return subprocess.run([sys.executable, "-m", "memcore.cli", *args], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=600)


@pytest.mark.parametrize("check", list(CHECKS))
def test_recent_k_keeps_the_memory_system_contract(check, tmp_path) -> None:
    CHECKS[check](contract_case(NAME, tmp_path))


def test_run_contract_in_one_call() -> None:
    assert run_contract(NAME, ["registered_and_configurable", "answer_has_text_trace_and_usage"]) == [
        "registered_and_configurable", "answer_has_text_trace_and_usage"]


def test_registered_through_entry_points_after_the_built_ins() -> None:
    systems = load_all()
    assert systems[NAME] is get_system(NAME) and NAME not in builtin_systems()
    assert list(systems)[:len(builtin_systems())] == builtin_systems()  # rank 90: after 10..80
    assert get_system(NAME).__module__ == "memcore_example.system"
    assert "dense+overlap" in retriever_names() and retriever_names()[:3] == ("dense", "lexical", "hybrid")
    assert has_view(NAME) and get_view(NAME).color == "#332288"
    assert view_order([NAME, "memweaver", "full_context"]) == ["full_context", "memweaver", NAME]


def test_the_window_keeps_the_last_k_turns(tmp_path) -> None:
    case = contract_case(NAME, tmp_path)
    system, _ = case.built()  # k = 6, the default
    tr = system.retrieve(case.conv.questions[0])
    assert tr.structure["window"] == [t.turn_id for t in case.conv.turns[-6:]]
    focus = tr.structure["focus"]  # the focus turn first, the rest of the window in conversation order
    assert [i.turn_ids[0] for i in tr.items] == [focus] + [t for t in tr.structure["window"] if t != focus]
    events = case.workbench.store.events(system.space, case.conv.id)
    assert sum(e.kind == "deleted" for e in events) == len(case.conv.turns) - 6
    assert next(e for e in events if e.kind == "deleted").reason.startswith("D1:1 fell out of the window")


def test_the_overlap_retriever_prefers_rows_sharing_the_question_words() -> None:
    rows = [({"text": "The weather was rainy"}, 0.9), ({"text": "Ben started a pottery class"}, 0.5)]
    hits = get_retriever("dense+overlap").search(_Scope(rows), "pottery class", None, 2)
    assert [r["text"] for r, _ in hits] == ["Ben started a pottery class", "The weather was rainy"]
    assert [s for _, s in hits] == [2.0, 0.0]


class _Scope:
    """A stand-in for the store's scope: the dense retriever sees a table that returns fixed rows."""

    def __init__(self, rows: list) -> None:
        self.rows, self.filter, self.table = rows, "", self

    def search(self, vector):
        return self

    def distance_type(self, _):
        return self

    def where(self, *_, **__):
        return self

    def limit(self, _):
        return self

    def to_list(self) -> list:
        return [{**r, "_distance": 1.0 - s} for r, s in self.rows]

    def snapshot(self) -> None:
        return None


def test_its_view_draws_the_window(tmp_path) -> None:
    case = contract_case(NAME, tmp_path)
    system, _ = case.built()
    texts = {t.turn_id: f"{t.speaker}: {t.content}" for t in case.conv.turns}
    tr = system.retrieve(case.conv.questions[1])
    sections = dict(structure_sections(NAME, tr, texts))
    assert [t for t in sections if t] == ["Recent window", "Window turns"]  # "": the caption
    last = [t.turn_id for t in case.conv.turns[-6:]]  # in the reader's order: the focus turn first
    assert list(sections["Window turns"]["turn"]) == [tr.structure["focus"]] + [t for t in last
                                                                               if t != tr.structure["focus"]]


def test_the_cli_lists_it_and_the_benchmark_runs_it(tmp_path) -> None:
    res = memcore_cli("systems")
    assert res.returncode == 0, res.stderr
    assert NAME in res.stdout and "Recent k turns (example plugin)" in res.stdout
    assert res.stdout.index("memweaver") < res.stdout.index(NAME)
    out = tmp_path / "results.json"
    res = memcore_cli("eval", "--dataset", "demo", "--systems", f"{NAME},naive_rag", "--limit", "2",
                      "--store", str(tmp_path / "store"), "--embedder", "hashing", "--out", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    results = json.loads(out.read_text())
    assert NAME in results["systems"]
