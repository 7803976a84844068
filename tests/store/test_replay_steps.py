"""Replay's per-step counts cached in the store (memcore.store.replay_steps): keyed by the memory's version, never
another memory's or provider's, a stale row ignored and replaced."""

from __future__ import annotations

from memcore.store.lance import LanceStore
from memcore.store.replay_steps import load_replay_steps, save_replay_steps, steps_version
from memcore.store.view import MemoryView


def test_the_version_changes_with_every_commit_and_only_a_finished_memory_has_one(tmp_path):
    store = LanceStore(str(tmp_path / "db"), dim=8)
    mem = MemoryView(store, "sys", "c1", "sys-1")
    assert steps_version(mem.checkpoint(), 10) is None  # nothing committed
    store.save_checkpoint("sys-1", "sys", "c1", 4, {}, {}, False)
    assert steps_version(mem.checkpoint(), 10) is None  # being built: a partial batch may be rolled back
    store.save_checkpoint("sys-1", "sys", "c1", 9, {}, {}, True)
    done = steps_version(mem.checkpoint(), 10)
    assert done is not None
    assert steps_version(mem.checkpoint(), 11) != done  # the conversation grew
    store.save_checkpoint("sys-1", "sys", "c1", 9, {}, {}, True)  # rebuilt to the same step: another commit
    assert steps_version(mem.checkpoint(), 10) not in (None, done)


def test_rows_are_per_memory_and_provider_and_a_stale_one_is_ignored_then_replaced(tmp_path):
    store = LanceStore(str(tmp_path / "db"), dim=8)
    assert load_replay_steps(store, "a", "c1", "offline", "v1") is None  # no table yet: nothing, no error
    save_replay_steps(store, "a", "c1", "offline", "v1", {"n": 1})
    assert load_replay_steps(store, "a", "c1", "offline", "v1") == {"n": 1}
    assert load_replay_steps(store, "a", "c1", "offline", "v2") is None  # another version of the memory
    assert load_replay_steps(store, "b", "c1", "offline", "v1") is None  # another memory space
    assert load_replay_steps(store, "a", "c2", "offline", "v1") is None  # another conversation
    assert load_replay_steps(store, "a", "c1", "openai", "v1") is None  # another provider's calls
    save_replay_steps(store, "a", "c1", "offline", "v2", {"n": 2})
    assert load_replay_steps(store, "a", "c1", "offline", "v1") is None  # replaced
    assert load_replay_steps(store, "a", "c1", "offline", "v2") == {"n": 2}
    assert store.tables.table("replay_steps").count_rows() == 1
    mem = MemoryView(store, "sys", "c1", "a")
    mem.save_replay_steps("offline", "v3", {"n": 3})
    assert mem.replay_steps("offline", "v3") == {"n": 3} and mem.replay_steps("offline", "v2") is None


def test_counts_of_another_format_are_stale(tmp_path, monkeypatch):
    """A row written by code whose counts meant something else (an older FORMAT) is never read back."""
    from memcore.store import replay_steps

    store = LanceStore(str(tmp_path / "db"), dim=8)
    store.save_checkpoint("sys-1", "sys", "c1", 9, {}, {}, True)
    mem = MemoryView(store, "sys", "c1", "sys-1")
    monkeypatch.setattr(replay_steps, "FORMAT", replay_steps.FORMAT - 1)
    old = steps_version(mem.checkpoint(), 10)
    mem.save_replay_steps("offline", old, {"n": 1})
    monkeypatch.undo()
    now = steps_version(mem.checkpoint(), 10)
    assert now != old and mem.replay_steps("offline", now) is None
