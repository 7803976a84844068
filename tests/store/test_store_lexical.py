"""Lexical and hybrid search results depend only on the searched scope's live content and the query."""

from __future__ import annotations

import multiprocessing as mp

import lancedb
import numpy as np
import pytest
from lancedb.index import FTS

from memcore.embed import HashingEmbedder
from memcore.store import LanceStore
from memcore.store.schema import match
from memcore.types import MemoryItem, Turn

EMB = HashingEmbedder()
A = ["Ana adopted a puppy named Biscuit", "Ben bought pottery at the market", "Ben started a yoga class",
     "The weather was rainy in Lisbon", "Ana ran to her dance class"]
# B is full of "pottery" (and has no "class"): pooled BM25 statistics would drop the IDF of "pottery" below
# that of "class" and reorder A's results for "pottery class", in rank (so hybrid RRF) as well as in score.
B = ["pottery pottery", "more pottery", "pottery glaze", "pottery kiln", "weekend plans"]
QUERIES = ["pottery class", "Ana puppy", "rainy Lisbon marathon"]


def item(iid: str, text: str, step: int, conv: str = "a") -> MemoryItem:
    return MemoryItem(id=iid, kind="episode", text=text, system="s", conv_id=conv,
                      embedding=EMB.embed([text])[0].tolist(), created_step=step, updated_step=step)


def turns(conv: str, texts: list[str]) -> list[Turn]:
    return [Turn(conv, f"D1:{i + 1}", i, 1, "8 May, 2023", "2023-05-08T10:00:00", "Ana", t)
            for i, t in enumerate(texts)]


def add_conv(store: LanceStore, conv: str, texts: list[str], space: str = "sp") -> None:
    store.commit(space, "s", conv, 1, [item(f"episode-{i}", t, 1, conv) for i, t in enumerate(texts)], [], [], {})
    ts = turns(conv, texts)
    store.save_turns(ts, EMB.embed([t.text for t in ts]))


def results(store: LanceStore, mode: str, conv: str = "a", space: str = "sp") -> list:
    out = []
    for q in QUERIES:
        qv = EMB.embed([q])[0]
        out.append([(it.id, s) for it, s in store.search_items(space, conv, "episode", q, qv, 10, mode)])
        out.append([(r["turn_id"], s) for r, s in store.search_turns(conv, q, qv, 10, mode)])
    return out


@pytest.fixture
def store(tmp_path) -> LanceStore:
    return LanceStore(str(tmp_path / "db"), dim=EMB.dim)


def test_the_other_conversation_would_change_pooled_bm25(tmp_path):
    """Guard: B really changes A's scores when the BM25 statistics are pooled (as one index per table did)."""
    db = lancedb.connect(str(tmp_path / "raw"))
    scores = []
    for texts in (A, A + B):
        t = db.create_table(f"t{len(texts)}", data=[{"text": x, "conv": "a" if x in A else "b"} for x in texts])
        t.create_index("text", config=FTS(with_position=False))
        rows = t.search("pottery class", query_type="fts").where(match(conv="a"), prefilter=True).limit(5).to_list()
        scores.append([round(r["_score"], 6) for r in rows])
    assert scores[0] != scores[1]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_results_do_not_depend_on_other_conversations(tmp_path, mode):
    alone = LanceStore(str(tmp_path / "alone"), dim=EMB.dim)
    add_conv(alone, "a", A)
    shared = LanceStore(str(tmp_path / "shared"), dim=EMB.dim)
    add_conv(shared, "b", B)
    add_conv(shared, "a", A)
    want = results(alone, mode)
    assert all(want) and (mode == "hybrid" or want[0][0][0] == "episode-1")
    assert results(shared, mode) == want
    add_conv(shared, "c", B + A)  # ingested after a first search: still no effect
    assert results(shared, mode) == want
    assert results(LanceStore(str(tmp_path / "shared"), dim=EMB.dim), mode) == want  # a fresh handle agrees


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_rows_added_after_a_search_are_found(store, mode):
    add_conv(store, "a", A)
    kiln = "kiln firing at noon"
    assert [r for r, _ in store.search_turns("a", "kiln", EMB.embed(["kiln"])[0], 9, mode) if r["text"] == kiln] == []
    store.commit("sp", "s", "a", 2, [item("episode-9", kiln, 2)], [], [], {})
    hits = store.search_items("sp", "a", "episode", "kiln", EMB.embed(["kiln"])[0], 5, mode)
    assert hits[0][0].id == "episode-9"
    t = Turn("a", "D2:1", len(A), 2, "9 May, 2023", "2023-05-09T10:00:00", "Ben", kiln)
    store.save_turns([t], EMB.embed([kiln]))
    assert store.search_turns("a", "kiln", EMB.embed(["kiln"])[0], 5, mode)[0][0]["turn_id"] == "D2:1"


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_superseded_versions_neither_appear_nor_score(tmp_path, mode):
    final = LanceStore(str(tmp_path / "final"), dim=EMB.dim)
    final.commit("sp", "s", "a", 1, [item(f"episode-{i}", t, 1) for i, t in enumerate(A)], [], [], {})
    versioned = LanceStore(str(tmp_path / "versioned"), dim=EMB.dim)
    versioned.commit("sp", "s", "a", 1, [item(f"episode-{i}", t, 1) for i, t in enumerate(B)], [], [], {})
    versioned.commit("sp", "s", "a", 2, [item("episode-9", "pottery kiln class", 2)], [], [], {})
    results(versioned, mode)  # searched while the old versions were live
    versioned.commit("sp", "s", "a", 3, [item(f"episode-{i}", t, 3) for i, t in enumerate(A)],
                     [("episode", "episode-9")], [], {})
    got, want = results(versioned, mode)[::2], results(final, mode)[::2]  # items only
    assert got == want
    assert "episode-9" not in {i for hits in got for i, _ in hits}


def test_rollback_and_spaces_are_scoped(tmp_path):
    alone = LanceStore(str(tmp_path / "alone"), dim=EMB.dim)
    add_conv(alone, "a", A)
    store = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    add_conv(store, "a", A)
    store.commit("sp2", "s", "a", 1, [item(f"episode-{i}", t, 1) for i, t in enumerate(B)], [], [], {})
    want = results(alone, "lexical")
    assert results(store, "lexical") == want  # another memory space of the same conversation has no effect
    store.commit("sp", "s", "a", 5, [item("episode-7", "pottery wheel class", 5)], [], [], {})
    assert results(store, "lexical")[0][0][0] == "episode-7"
    store.rollback("sp", "a", 1)
    assert results(store, "lexical") == want


def test_snapshots_are_reused_and_hidden(tmp_path):
    s1 = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    add_conv(s1, "a", A)
    want = results(s1, "lexical")
    assert s1.tables.searcher.builds == 2  # one snapshot for the turns, one for the items
    s2 = LanceStore(str(tmp_path / "db"), dim=EMB.dim)  # another process: same content, same snapshots
    assert results(s2, "lexical") == want and s2.tables.searcher.builds == 0
    s1.commit("sp", "s", "a", 2, [item("episode-0", "pottery class changed", 2)], [], [], {})
    new = results(s1, "lexical")  # rebuilds the item snapshot and drops the old one, which s2 still holds
    assert new != want
    s2_sees_change = "pottery class changed" in [i.text for i in s2.items("sp", "a", "episode")]
    assert results(s2, "lexical") == (new if s2_sees_change else want)  # agrees with its own view, no error
    assert results(LanceStore(str(tmp_path / "db"), dim=EMB.dim), "lexical") == new
    assert not [n for n in s1.table_names() if n.startswith("fts_")]
    assert len([n for n in s1.db.list_tables().tables if n.startswith("fts_")]) == 2


def _search_in_process(uri: str, q: mp.Queue) -> None:
    st = LanceStore(uri, dim=EMB.dim)
    q.put(results(st, "lexical") + results(st, "hybrid"))


def test_processes_building_the_same_snapshot_do_not_clash(tmp_path):
    uri = str(tmp_path / "db")
    add_conv(LanceStore(uri, dim=EMB.dim), "a", A)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_search_in_process, args=(uri, q)) for _ in range(2)]
    [p.start() for p in procs]
    got = [q.get(timeout=120) for _ in procs]
    [p.join(timeout=60) for p in procs]
    st = LanceStore(uri, dim=EMB.dim)
    assert got[0] == got[1] == results(st, "lexical") + results(st, "hybrid")
    assert [p.exitcode for p in procs] == [0, 0]


def test_hybrid_is_rrf_of_the_dense_and_lexical_top_k(store):
    rng = np.random.default_rng(0)  # random vectors: no ties in the dense ranking
    ts = turns("a", A + B)
    store.save_turns(ts, rng.standard_normal((len(ts), EMB.dim)))
    for q in QUERIES:
        qv = rng.standard_normal(EMB.dim)
        fused: dict[str, float] = {}
        for mode in ("dense", "lexical"):
            for rank, (r, _) in enumerate(store.search_turns("a", q, qv, 4, mode), 1):
                fused[r["turn_id"]] = fused.get(r["turn_id"], 0.0) + 1 / (60 + rank)
        got = {r["turn_id"]: s for r, s in store.search_turns("a", q, qv, 4, "hybrid")}
        assert sorted(got.values(), reverse=True) == list(got.values())
        assert got == pytest.approx({i: fused[i] for i in got}, rel=1e-6)
        assert min(got.values()) >= sorted(fused.values(), reverse=True)[len(got) - 1] - 1e-9
