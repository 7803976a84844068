"""Replay's data from the per-step counts cached in the store (ui.state._replay, memcore.store.replay_steps) equals
the data read from every stored event, version and call; the cache is keyed by the memory's version (a new commit
reads everything again) and a first build from it reads no event but the step's."""

from __future__ import annotations

import pandas as pd
import pytest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.store.replay_steps import steps_version
from memcore.store.view import MemoryView
from memcore.workbench import Workbench
from ui import state

SYSTEMS = ("xmemory", "memweaver", "naive_rag")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    store = tmp_path_factory.mktemp("replaycache") / "store"
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"), embedder=HashingEmbedder())
    conv = wb.load_demo()
    for s in SYSTEMS:
        wb.ingest(s, conv)
    return wb, conv


def _build(wb, conv, system: str, cached: bool):
    mem = wb.memory(system, conv)
    n = len(conv.turns) + 1
    version = steps_version(mem.checkpoint(), n) if cached else None
    return mem, state._replay.__wrapped__(mem, wb.store.uri, "offline", system, mem.space, conv.id, n,
                                          mem.status()[0], True, version)


def _same(a, b) -> None:
    for name in ("counts", "event_counts", "cost"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=name)
    pd.testing.assert_series_equal(a.call_rows, b.call_rows)
    assert (a.n_steps, a.n_events, a.cost_exact, a.notes) == (b.n_steps, b.n_events, b.cost_exact, b.notes)


@pytest.mark.parametrize("system", SYSTEMS)
def test_data_from_the_cached_counts_equals_the_data_read_from_the_store(built, system, monkeypatch):
    wb, conv = built
    mem, plain = _build(wb, conv, system, cached=False)
    assert plain.n_events > 0 and plain.events_loaded
    _build(wb, conv, system, cached=True)  # the first build with a version reads everything and stores the counts
    reads: list[tuple] = []
    real = MemoryView.events_table

    def counted(self, upto=None, after=None):
        reads.append((upto, after))
        return real(self, upto, after)

    monkeypatch.setattr(MemoryView, "events_table", counted)
    monkeypatch.setattr(MemoryView, "versions", lambda self: pytest.fail("read every item version"))
    monkeypatch.setattr(MemoryView, "llm_calls", lambda self, **kw: pytest.fail("read the call ledger"))
    _, cached = _build(wb, conv, system, cached=True)
    assert not cached.events_loaded and reads == []  # built from the stored counts alone
    _same(plain, cached)
    ev = plain.events
    for step in (0, 1, 2, len(conv.turns) // 2, len(conv.turns), len(conv.turns) + 1):
        want = ev[ev["step"] == step].reset_index(drop=True)
        pd.testing.assert_frame_equal(cached.events_at(step).reset_index(drop=True), want)
        assert cached.calls_at(step) == plain.calls_at(step)
    assert reads and all(r != (None, None) for r in reads)  # a step's events, not the whole stream
    pd.testing.assert_frame_equal(cached.events, ev)  # loaded when used (Replay's warm-up), the same frame
    assert cached.events_loaded


def test_calls_at_counts_the_rows_the_calls_expander_lists(built):
    wb, conv = built
    mem, rd = _build(wb, conv, "xmemory", cached=True)
    calls = state.construction_calls(mem, "offline", mem.status()[0])
    assert len(calls) and rd.call_rows.sum() == len(calls)
    for step in range(len(conv.turns) + 2):
        assert rd.calls_at(step) == int((calls["step"] == step).sum())


def test_one_read_for_the_step_of_several_memories_equals_each_memorys_own(built):
    wb, conv = built
    for s in SYSTEMS:  # the counts stored (the first build with a version reads everything)
        _build(wb, conv, s, cached=True)
    data = {s: _build(wb, conv, s, cached=True)[1] for s in SYSTEMS}
    assert not any(rd.events_loaded for rd in data.values())
    busy = [s for s in range(1, len(conv.turns) + 1) if all(rd.event_counts.loc[s].sum() for rd in data.values())]
    assert busy  # a step where every system has events (the one read holds several memories' rows)
    step = busy[0]
    state.step_events_ahead(data, step)
    assert not any(rd.needs_step(step) for rd in data.values())
    for rd in data.values():
        pd.testing.assert_frame_equal(rd.events_at(step), rd.source.at(step))
        assert len(rd.events_at(step)) == int(rd.event_counts.loc[step].sum())


def test_a_new_commit_reads_everything_again_and_replaces_the_stored_counts(built, monkeypatch):
    wb, conv = built
    mem, first = _build(wb, conv, "memweaver", cached=True)
    n = len(conv.turns) + 1
    version = steps_version(mem.checkpoint(), n)
    assert mem.replay_steps("offline", version) is not None
    # a wrong row at this version is what the next build shows: the counts do come from the store...
    payload = mem.replay_steps("offline", version)
    payload["counts"]["data"] = [[v + 100 for v in col] for col in payload["counts"]["data"]]
    mem.save_replay_steps("offline", version, payload)
    _, tampered = _build(wb, conv, "memweaver", cached=True)
    assert int(tampered.counts.iloc[-1].sum()) == int(first.counts.iloc[-1].sum()) + 100 * len(first.counts.columns)
    # ...until the memory has another version: committed again (here its checkpoint, as a rebuild would)
    ck = mem.checkpoint()
    wb.store.save_checkpoint(mem.space, ck["system"], conv.id, ck["step"], ck["state"], ck["config"], ck["done"])
    new = steps_version(mem.checkpoint(), n)
    assert new != version
    _, again = _build(wb, conv, "memweaver", cached=True)
    assert again.events_loaded  # read everything again
    _same(first, again)
    assert mem.replay_steps("offline", version) is None and mem.replay_steps("offline", new) is not None
    # another provider's cost curves are never taken from this provider's row
    assert mem.replay_steps("openai", new) is None


def test_a_memory_being_built_is_never_cached(built):
    wb, conv = built
    mem = wb.memory("xmemory", conv)
    ck = mem.checkpoint()
    assert steps_version({**ck, "done": False}, len(conv.turns) + 1) is None


def test_growth_of_a_view_without_event_history_reads_no_event(built):
    """MemWeaver's growth view is built from its items: a Growth step on data from the cached counts reads the
    whole event stream only when a view uses it (it waited for the warm-up's full read at 10M: 4 s a step)."""
    from ui import growth

    wb, conv = built
    _, rd = _build(wb, conv, "memweaver", cached=True)
    assert not rd.events_loaded
    blocks = growth.growth_blocks(wb, conv, rd, len(conv.turns))
    assert blocks and not rd.events_loaded


def test_a_finished_build_caches_the_counts_so_the_first_replay_visit_reads_none(tmp_path, monkeypatch):
    """Workbench.ingest stores the counts when a build finishes (memcore.viz.replay.cache_replay_steps): the app's
    first Replay build after it reads no event, item version or call, and its data equals the data read from the
    store. A build that stops early caches nothing; a failing write never fails the build."""
    wb = Workbench(Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    conv = wb.load_demo()
    stop_at = {"n": 0}

    def stop() -> bool:
        stop_at["n"] += 1
        return stop_at["n"] > 20

    report = wb.ingest("xmemory", conv, should_stop=stop)
    mem = wb.memory("xmemory", conv)
    assert not report.complete and not wb.cache_replay_steps("xmemory", conv)  # unfinished: never cached
    tables = wb.store.tables
    assert not tables.has("replay_steps") or tables.table("replay_steps").count_rows() == 0
    assert wb.ingest("xmemory", conv).complete
    version = steps_version(mem.checkpoint(), len(conv.turns) + 1)
    assert version and mem.replay_steps("offline", version) is not None
    _, plain = _build(wb, conv, "xmemory", cached=False)
    monkeypatch.setattr(MemoryView, "events_table", lambda *a, **k: pytest.fail("read the events"))
    monkeypatch.setattr(MemoryView, "versions", lambda self: pytest.fail("read every item version"))
    monkeypatch.setattr(MemoryView, "llm_calls", lambda self, **kw: pytest.fail("read the call ledger"))
    _, first = _build(wb, conv, "xmemory", cached=True)
    monkeypatch.undo()
    _same(plain, first)
    monkeypatch.setattr(MemoryView, "save_replay_steps", lambda *a, **k: (_ for _ in ()).throw(OSError("read-only")))
    report = wb.ingest("memweaver", conv)
    assert report.complete and wb.is_ingested("memweaver", conv)  # built; only the cache is missing
    mw = wb.memory("memweaver", conv)
    assert mw.replay_steps("offline", steps_version(mw.checkpoint(), len(conv.turns) + 1)) is None
