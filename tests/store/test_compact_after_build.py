"""A finished build compacts the tables it left in many small fragments (Workbench.compact_store): the same rows,
one fragment; a small build compacts nothing; a compaction that fails leaves the build done and raises nothing."""

from __future__ import annotations

import memcore.workbench
from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.store.lance import LanceStore
from memcore.workbench import Workbench


def _wb(path) -> Workbench:
    return Workbench(Settings(store_uri=str(path), llm_provider="offline", embedder="hashing"), embedder=HashingEmbedder())


def _fragments(wb: Workbench, table: str) -> int:
    return wb.store.tables.fresh(table).stats()["fragment_stats"]["num_fragments"]


def _state(wb: Workbench, conv) -> tuple:
    mem = wb.memory("xmemory", conv)
    versions = mem.versions().sort_values(["kind", "id", "valid_from"]).reset_index(drop=True)
    items = sorted((it.id, it.text, it.updated_step) for k in mem.kind_counts() for it in mem.items(k, with_vectors=False))
    return versions, items, [(e.step, e.kind, tuple(e.item_ids)) for e in mem.events()]


def test_a_finished_build_compacts_its_fragmented_tables_and_keeps_every_row(tmp_path, monkeypatch):
    plain = _wb(tmp_path / "plain")
    conv = plain.load_demo()
    assert plain.ingest("xmemory", conv).complete
    assert _fragments(plain, "events") > 2  # a build commits often: small fragments (the default leaves them)

    monkeypatch.setattr(memcore.workbench, "COMPACT_FROM", 2)
    compacted = _wb(tmp_path / "compacted")
    conv2 = compacted.load_demo()
    assert compacted.ingest("xmemory", conv2).complete
    assert _fragments(compacted, "events") == 1 and _fragments(compacted, "mem_semantic") == 1
    a, b = _state(plain, conv), _state(compacted, conv2)
    assert a[0].equals(b[0]) and a[1] == b[1] and a[2] == b[2]  # the same versions, items and events


def test_a_failed_compaction_leaves_the_build_done(tmp_path, monkeypatch):
    monkeypatch.setattr(memcore.workbench, "COMPACT_FROM", 2)
    monkeypatch.setattr(LanceStore, "optimize", lambda self, **kw: (_ for _ in ()).throw(OSError("read-only")))
    wb = _wb(tmp_path / "store")
    conv = wb.load_demo()
    report = wb.ingest("xmemory", conv)
    assert report.complete and wb.is_ingested("xmemory", conv)
    assert wb.compact_store() == {"*": "OSError: read-only"}


def test_a_table_that_cannot_be_compacted_is_named_and_the_others_are_compacted(tmp_path, monkeypatch):
    wb = _wb(tmp_path / "store")
    conv = wb.load_demo()
    assert wb.ingest("xmemory", conv).complete
    real = wb.store.tables.fresh

    def fresh(name: str):
        if name == "events":
            raise RuntimeError("lance error: Retryable commit conflict")
        return real(name)

    monkeypatch.setattr(wb.store.tables, "fresh", fresh)
    out = wb.compact_store(min_fragments=2)
    assert out["events"].startswith("RuntimeError") and out.get("mem_semantic") == ""
    monkeypatch.undo()
    assert _fragments(wb, "mem_semantic") == 1 and _fragments(wb, "events") > 1
