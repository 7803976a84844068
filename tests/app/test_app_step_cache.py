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


def test_prebuilt_figures_send_what_plotly_validation_would(built):
    """Replay's cached charts and the hierarchy are handed to st.plotly_chart as prebuilt dicts (ui.render.Prebuilt):
    the JSON sent equals what validating the same dict into a Figure sends."""
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    from memcore.viz.hierarchy import drill_figure, focus_figure, focus_view
    from memcore.viz.replay import layer_counts_figure
    from memcore.viz.views import get_view
    from ui.render import Prebuilt

    wb, conv = built
    mem = wb.memory("xmemory", conv)
    rd = state._replay.__wrapped__(mem, wb.store.uri, "offline", "xmemory", mem.space, conv.id, len(conv.turns) + 1,
                                   -1, True)
    step = len(conv.turns)
    nodes = get_view("xmemory").levels(lambda k, at: state.items_at(mem, k, at), step)
    assert nodes
    specs = [layer_counts_figure({"xmemory": rd}).to_plotly_json(),
             drill_figure(nodes, "xMemory hierarchy", highlight={nodes[-1].id}, as_dict=True),
             drill_figure(nodes, "", as_dict=True),
             focus_figure(focus_view(nodes), "xMemory hierarchy"), focus_figure(focus_view(nodes, (nodes[0].id,)))]
    for spec in specs:
        want = json.loads(pio.to_json(go.Figure(**spec).to_dict(), validate=False))
        assert json.loads(pio.to_json(Prebuilt(spec), validate=False)) == want


def _every_item_compared(mem, a: int, b: int) -> dict[str, tuple[set, set, set, int]]:
    """Per kind: (added, removed, changed ids, unchanged count) from every item at both steps, each pair compared
    (what the step diff computed before it read only the items whose versions began or ended in between)."""
    import json

    def same(x, y) -> bool:
        return all(json.dumps(f(x), sort_keys=True, default=str) == json.dumps(f(y), sort_keys=True, default=str)
                   for f in (lambda i: i.text, lambda i: list(i.sources), lambda i: list(i.turn_ids),
                             lambda i: i.metadata))

    out = {}
    for kind in sorted(set(mem.versions()["kind"])):
        before = {i.id: i for i in mem.items(kind, a, with_vectors=False)}
        after = {i.id: i for i in mem.items(kind, b, with_vectors=False)}
        both = set(before) & set(after)
        changed = {i for i in both if not same(before[i], after[i])}
        out[kind] = (set(after) - set(before), set(before) - set(after), changed, len(both) - len(changed))
    return out


@pytest.mark.parametrize("system", ["xmemory", "memweaver"])
def test_step_diff_from_caches_equals_the_diff_read_from_the_store(built, system):
    """Replay's step diff (ui.memory_diff_view.step_diff: versions, events and items from the per-checkpoint caches,
    only the items changed in between compared; the first diff of a memory reads its changed items by id, the next
    ones take them from the kind caches) is the diff read from the store, and names the same items as
    comparing every item at both steps, at adjacent steps along the whole conversation and over ranges."""
    from memcore.memory_diff import diff_steps
    from ui.memory_diff_view import step_diff

    wb, conv = built
    mem = wb.memory(system, conv)
    end = len(conv.turns) + 1
    ck, done = state.checkpoint(mem)
    assert done
    pairs = [(s - 1, s) for s in range(1, end + 1, 3)] + [(end - 1, end), (0, end), (10, 20), (45, 30)]
    nonempty = 0
    for a, b in pairs:
        fast = step_diff(mem, conv, a, b, ck, done)
        assert fast.to_dict() == diff_steps(mem, conv, a, b).to_dict(), (a, b)
        want = _every_item_compared(mem, min(a, b), max(a, b))
        got = {k: ({c.item_id for c in fast.changes[k] if c.change == "added"},
                   {c.item_id for c in fast.changes[k] if c.change == "removed"},
                   {c.item_id for c in fast.changes[k] if c.change == "changed"}, fast.unchanged[k]) for k in fast.kinds}
        assert got == want, (a, b)
        nonempty += not fast.empty
    assert nonempty > len(pairs) // 3  # the memory changed at many of these steps: the comparison covered changes


@pytest.mark.parametrize("system", ["xmemory", "memweaver"])
def test_same_since_names_a_step_with_the_same_items(built, system):
    """Growth builds the hierarchy once per run of steps with the same items (ui.growth.same_since): at every step,
    the step it names holds the same items of every kind, and so the same hierarchy."""
    from memcore.viz.views import get_view
    from ui.growth import same_since

    wb, conv = built
    mem = wb.memory(system, conv)
    kinds = list(mem.kind_counts())
    levels = get_view(system).levels
    shared = 0
    for step in range(0, len(conv.turns) + 2):
        since = same_since(mem, step)
        assert 0 <= since <= step
        for kind in kinds:
            assert [(i.id, i.updated_step) for i in state.items_at(mem, kind, since)] == \
                   [(i.id, i.updated_step) for i in state.items_at(mem, kind, step)], (kind, step, since)
        if levels is not None:
            assert levels(lambda k, at: state.items_at(mem, k, at), since) == \
                   levels(lambda k, at: state.items_at(mem, k, at), step)
        shared += since < step
        if since < step:  # the step before holds the same items too: no version began or ended at this step
            assert same_since(mem, step - 1) == since
    assert shared  # some steps share their items with an earlier one (what the cache saves)
