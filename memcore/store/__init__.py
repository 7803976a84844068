"""The store: LanceStore over LanceDB, and everything it is made of.

schema (tables, keys, SQL helpers), items (memory items and their versions), records (events, runs, labels),
commit (one turn's writes, idempotent), search (per-scope full-text snapshots, dense/lexical/hybrid search),
indexes (scope indexes kept after large writes), view (MemoryView: a memory at one step), variants (saved
variant names), leases + lease (one writer per memory and per eval run), lance (LanceStore itself).
"""

from memcore.store.lance import LanceStore

__all__ = ["LanceStore"]
