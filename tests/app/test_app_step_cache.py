"""Replay's per-step reads come from caches (issue 35, budgets): what a cached step shows equals what reading the
store at that step shows."""

from __future__ import annotations

import pytest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench
from ui import state


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    store = tmp_path_factory.mktemp("stepcache") / "store"
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"), embedder=HashingEmbedder())
    conv = wb.load_demo()
    for s in ("xmemory", "memweaver"):
        wb.ingest(s, conv)
    return wb, conv


@pytest.mark.parametrize("system", ["xmemory", "memweaver"])
def test_items_at_a_step_equal_the_store_read_at_that_step(built, system):
    wb, conv = built
    mem = wb.memory(system, conv)
    kinds = list(mem.kind_counts())
    assert kinds
    changed = 0
    for kind in kinds:
        before = None
        for step in range(0, len(conv.turns) + 2):
            want = mem.items(kind, at_step=step, with_vectors=False)
            got = state.items_at(mem, kind, step)
            assert [(i.id, i.updated_step, i.text, i.metadata, i.sources, i.turn_ids) for i in got] == \
                   [(i.id, i.updated_step, i.text, i.metadata, i.sources, i.turn_ids) for i in want], (kind, step)
            changed += before is not None and [i.id for i in got] != before
            before = [i.id for i in got]
    assert changed  # the memory changed along the replay: the comparison covered more than one state
