"""Scope indexes (memcore.store.indexes): built by the store after writes once a table is large, refreshed
as it grows, and invisible in results (dense search stays exact)."""

from __future__ import annotations

from memcore.embed import HashingEmbedder
from memcore.store import LanceStore
from memcore.types import MemoryItem
from tests.conftest import make_conversation

EMB = HashingEmbedder(16)


def commit_conv(st: LanceStore, conv_id: str, n: int = 15) -> None:
    texts = [f"{conv_id} item {j} about pottery and Biscuit the golden retriever number {j % 4}" for j in range(n)]
    vecs = EMB.embed(texts)
    items = [MemoryItem(id=f"e{j}", kind="episode", text=t, system="s", conv_id=conv_id, embedding=v.tolist(),
                        sources=[f"D1:{j}"]) for j, (t, v) in enumerate(zip(texts, vecs, strict=True))]
    st.commit("space", "s", conv_id, 0, items, [], [], {}, done=True)


def indexed(st: LanceStore, name: str) -> list[tuple[list[str], int]]:
    return [(list(ix.columns), ix.num_unindexed_rows) for ix in st.table(name).list_indices()]


def searches(st: LanceStore) -> list:
    q = "pottery golden retriever 2"
    v = EMB.embed([q])[0]
    return [[(r.id, round(s, 6)) for r, s in st.search_items("space", "c1", "episode", q, v, 5, mode)]
            for mode in ("dense", "lexical", "hybrid")]


def test_scope_index_is_built_past_the_threshold_refreshed_as_it_grows_and_changes_no_result(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_INDEX_MIN_ROWS", "40")
    st = LanceStore(str(tmp_path / "store"), dim=16)
    commit_conv(st, "c0")
    commit_conv(st, "c1")
    assert indexed(st, "mem_episode") == []  # 30 rows: below the threshold, a scan is as fast
    unindexed = searches(st)
    commit_conv(st, "c2")  # 45 rows
    assert indexed(st, "mem_episode") == [(["conv_id"], 0)]
    assert indexed(st, "links") == [(["conv_id"], 0)]
    assert searches(st) == unindexed  # the index only finds the scope's rows faster
    commit_conv(st, "c3", n=5)  # 50 rows: < 1.25 x 45, the index is not rebuilt; new rows are scanned
    assert indexed(st, "mem_episode") == [(["conv_id"], 5)]
    assert [r.id for r in st.items("space", "c3", "episode")] == [f"e{j}" for j in range(5)]
    commit_conv(st, "c4", n=10)  # 60 rows >= 1.25 x 45: rebuilt over every row
    assert indexed(st, "mem_episode") == [(["conv_id"], 0)]
    assert ("mem_episode", "conv_id", 60) in st.tables.indexes.built


def test_turns_and_results_tables_get_their_scope_index(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_INDEX_MIN_ROWS", "25")
    st = LanceStore(str(tmp_path / "store"), dim=16)
    for i in range(3):
        conv = make_conversation(f"t{i}")
        st.save_turns(conv.turns, EMB.embed([t.text for t in conv.turns]))
    assert indexed(st, "turns") == [(["conv_id"], 0)]
    st.save_turns(conv.turns, EMB.embed([t.text for t in conv.turns]))  # saved again: merged, not added
    assert st.table("turns").count_rows() == 30 and st.has_turns("t2") == 10
    assert indexed(st, "turns") == [(["conv_id"], 10)]  # the merged rows were rewritten: found by a scan
    st.save_results("run", [{"system": "s", "question_id": f"q{j}", "conv_id": "t0"} for j in range(30)])
    assert indexed(st, "results") == [(["run_id"], 0)]
    assert len(st.results("run")) == 30


def test_index_scopes_indexes_every_scoped_table_now(tmp_path):
    st = LanceStore(str(tmp_path / "store"), dim=16)
    commit_conv(st, "c0", n=3)
    built = {t for t, _, _ in st.index_scopes()}
    assert {"mem_episode", "links"} <= built and "checkpoints" not in built
    assert indexed(st, "mem_episode") == [(["conv_id"], 0)]
