"""LanceStore: round trips, versioning, provenance both ways, rollback, search modes."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.embed import HashingEmbedder
from memcore.errors import StoreError
from memcore.retrievers import retriever_names
from memcore.store import LanceStore
from memcore.store.schema import match
from memcore.types import Event, MemoryItem

EMB = HashingEmbedder()


def item(iid: str, text: str, step: int, sources=(), turn_ids=(), kind="episode") -> MemoryItem:
    return MemoryItem(id=iid, kind=kind, text=text, system="s", conv_id="c", embedding=EMB.embed([text])[0].tolist(),
                      sources=list(sources), turn_ids=list(turn_ids), created_step=step, updated_step=step,
                      metadata={"title": text[:10]})


@pytest.fixture
def store(tmp_path) -> LanceStore:
    return LanceStore(str(tmp_path / "db"), dim=EMB.dim)


def test_round_trip_and_provenance_both_ways(store):
    ep = item("episode-1", "Ana adopted a puppy named Biscuit", 3, sources=["D1:1", "D1:3"], turn_ids=["D1:1", "D1:3"])
    fact = item("semantic-1", "Ana has a dog", 3, sources=["episode-1"], turn_ids=["D1:1", "D1:3"], kind="semantic")
    ev = Event(step=3, kind="created", item_ids=["episode-1"], reason="test", system="s", conv_id="c")
    store.commit("sp", "s", "c", 3, [ep, fact], [], [ev], {"n": 1})
    got = store.items("sp", "c", "episode")
    assert [(g.id, g.text, g.sources, g.turn_ids, g.metadata) for g in got] == [
        ("episode-1", ep.text, ["D1:1", "D1:3"], ["D1:1", "D1:3"], {"title": ep.text[:10]})]
    assert np.allclose(got[0].embedding, ep.embedding, atol=1e-6)
    assert store.sources_of("sp", "c", "semantic-1") == ["episode-1"]
    assert store.derived_from("sp", "c", "episode-1") == ["semantic-1"]
    assert store.derived_from("sp", "c", "D1:3") == ["episode-1"]
    assert store.checkpoint("sp", "c")["state"] == {"n": 1}
    assert [e.reason for e in store.events("sp", "c")] == ["test"]


def test_versions_replay_and_delete(store):
    store.commit("sp", "s", "c", 2, [item("episode-1", "first text", 2)], [], [], {})
    store.commit("sp", "s", "c", 5, [item("episode-1", "merged text", 5)], [], [], {})
    store.commit("sp", "s", "c", 8, [], [("episode", "episode-1")], [], {})
    assert store.items("sp", "c", "episode") == []
    assert [i.text for i in store.items("sp", "c", "episode", at_step=3)] == ["first text"]
    assert [i.text for i in store.items("sp", "c", "episode", at_step=6)] == ["merged text"]
    assert [v.text for v in store.item_history("sp", "c", "episode", "episode-1")] == ["first text", "merged text"]
    assert store.kind_counts("sp", "c", at_step=6) == {"episode": 1}


def test_rollback_undoes_partial_batch(store):
    store.commit("sp", "s", "c", 2, [item("episode-1", "kept", 2)], [], [], {})
    # a batch written after the checkpoint at step 2 whose own checkpoint never landed:
    store.commit("sp", "s", "c", 4, [item("episode-1", "changed", 4), item("episode-2", "new", 4)], [],
                 [Event(4, "created", ["episode-2"], "x", "s", "c")], {})
    store.rollback("sp", "c", 2)
    assert [(i.id, i.text) for i in store.items("sp", "c", "episode")] == [("episode-1", "kept")]
    assert store.events("sp", "c") == []
    assert store.derived_from("sp", "c", "episode-1") == []


def test_spaces_and_conversations_are_isolated(store):
    store.commit("a", "s", "c", 1, [item("episode-1", "alpha", 1)], [], [], {})
    store.commit("b", "s", "c", 1, [item("episode-1", "beta", 1)], [], [], {})
    assert [i.text for i in store.items("a", "c", "episode")] == ["alpha"]
    assert [i.text for i in store.items("b", "c", "episode")] == ["beta"]


@pytest.mark.parametrize("mode", retriever_names())
def test_search_modes_find_the_matching_item(store, mode):
    texts = ["Ana adopted a puppy named Biscuit", "Ben started a pottery class", "The weather was rainy"]
    store.commit("sp", "s", "c", 1, [item(f"episode-{i}", t, 1) for i, t in enumerate(texts)], [], [], {})
    q = "pottery class"
    hits = store.search_items("sp", "c", "episode", q, EMB.embed([q])[0], 2, mode)
    assert hits[0][0].text == texts[1]
    assert hits[0][1] >= hits[-1][1]


def test_lexical_search_survives_query_syntax(store):
    store.commit("sp", "s", "c", 1, [item("episode-1", "pottery class", 1)], [], [], {})
    hits = store.search_items("sp", "c", "episode", 'what "pottery" (class)? AND OR -', EMB.embed(["x"])[0], 3,
                              "lexical")
    assert [h[0].id for h in hits] == ["episode-1"]


def test_dimension_mismatch_names_the_fix(tmp_path):
    LanceStore(str(tmp_path / "db"), dim=8).table("mem_episode")
    with pytest.raises(StoreError, match="another --store path"):
        LanceStore(str(tmp_path / "db"), dim=16).table("mem_episode")


def test_missing_conversation_names_what_exists(store, tiny_conv):
    store.save_conversation(tiny_conv)
    assert store.load_conversation("tiny").turns == tiny_conv.turns
    with pytest.raises(StoreError, match="have: tiny"):
        store.load_conversation("nope")


def test_results_written_by_another_handle_are_seen(tmp_path):
    """The app keeps one store handle open while `memcore eval` writes results from another process."""
    reader = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    writer = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    writer.save_results("run1", [{"system": "naive_rag", "question_id": "q1", "f1": 0.5}])
    assert [r["question_id"] for r in reader.results("run1")] == ["q1"]
    writer.save_results("run1", [{"system": "naive_rag", "question_id": "q2", "f1": 1.0}])
    assert sorted(r["question_id"] for r in reader.results("run1")) == ["q1", "q2"]
    assert reader.result("run1", "naive_rag", "q2")["f1"] == 1.0


def test_a_store_written_before_a_column_existed_is_upgraded_without_loss(tmp_path):
    import lancedb
    import pyarrow as pa

    from memcore.llm.ledger import CallRecord
    from memcore.store.schema import SCHEMAS

    old_schema = pa.schema([f for f in SCHEMAS["llm_calls"] if f.name not in ("attempt", "prompt", "completion",
                                                                          "request_format", "outcome",
                                                                          "variant")])
    old = {f.name: [0] for f in old_schema} | {"role": ["answer"], "stage": ["answer"], "system": ["com"],
                                                 "conv_id": ["c"], "provider": ["offline"], "model": ["m"],
                                                 "error": [""], "cache_hit": [False], "ok": [True]}
    lancedb.connect(str(tmp_path / "db")).create_table("llm_calls", data=pa.table(old, schema=old_schema))
    store = LanceStore(str(tmp_path / "db"), dim=8)
    store.add_llm_calls([CallRecord(role="episode_summary", stage="construction", attempt=2)])
    df = store.llm_calls().sort_values("role")
    assert list(df["role"]) == ["answer", "episode_summary"]
    assert list(df["attempt"]) == [1, 2]  # the old row gets the documented default
    assert "request_format" in df.columns and "outcome" in df.columns  # the columns added since are there too


def test_llm_calls_are_queried_by_typed_filters(store):
    from memcore.llm.ledger import CallRecord

    def rec(system, conv, stage, provider, step):
        return CallRecord(role="r", stage=stage, system=system, conv_id=conv, provider=provider, step=step)

    store.add_llm_calls([rec("com", "c1", "construction", "offline", 1), rec("com", "c2", "construction", "offline", 2),
                         rec("com", "c1", "answer", "offline", 3), rec("xmemory", "c1", "construction", "openai", 4),
                         rec("o'brien", "c1", "construction", "offline", 5)])
    steps = lambda df: sorted(int(s) for s in df["step"])  # noqa: E731
    assert steps(store.llm_calls()) == [1, 2, 3, 4, 5]
    assert steps(store.llm_calls(system="com", stage="construction")) == [1, 2]
    assert steps(store.llm_calls(system="com", conv_id="c1")) == [1, 3]
    assert steps(store.llm_calls(conv_id=["c1", "c2"], provider="offline", stage="construction")) == [1, 2, 5]
    assert steps(store.llm_calls(conv_id=[])) == []
    assert steps(store.llm_calls(after_step=3)) == [4, 5]
    assert steps(store.llm_calls(system="o'brien")) == [5]  # values are quoted by the store


def test_results_typed_queries(store):
    store.save_results("run1", [{"system": "com", "question_id": "q1", "trace": {"items": []}},
                                {"system": "naive_rag", "question_id": "q1", "trace": {"items": []}},
                                {"system": "com", "question_id": "q2", "trace": {"items": []}}])
    store.save_results("run2", [{"system": "com", "question_id": "q9"}])
    assert store.result_keys("run1") == {("com", "q1"), ("naive_rag", "q1"), ("com", "q2")}
    assert sorted(r["question_id"] for r in store.results("run1", ["com"])) == ["q1", "q2"]
    assert all("trace" not in r for r in store.results("run1", traces=False))
    assert all("trace" in r for r in store.results("run1"))
    assert len(store.results("run1", limit=1)) == 1
    assert store.results("run1", []) == [] and store.result_keys("nope") == set()


def test_a_store_without_results_reads_none_and_creates_nothing(tmp_path):
    store = LanceStore(str(tmp_path / "db"), dim=8)
    assert store.results("run") == [] and store.result_keys("run") == set()
    assert "results" not in store.table_names()


def test_rows_of_a_plugin_table_by_column_values(store):
    import pyarrow as pa

    schema = pa.schema([pa.field("task_id", pa.string()), pa.field("n", pa.int32())])
    assert store.rows("labels_x", schema, task_id="t").empty  # created on first read
    store.table("labels_x").add([{"task_id": "t", "n": 1}, {"task_id": "t", "n": 5}, {"task_id": "it's", "n": 2}])
    assert sorted(store.rows("labels_x", task_id="t")["n"]) == [1, 5]
    assert list(store.rows("labels_x", task_id="t", n__gt=2)["n"]) == [5]
    assert list(store.rows("labels_x", task_id="it's")["n"]) == [2]
    assert len(store.rows("labels_x")) == 3
    assert list(store.rows("labels_x", columns=["n"], task_id=["it's"]).columns) == ["n"]


def test_match_writes_typed_conditions():
    assert match(system="a", conv_id=["x", "y"], step__gt=3, ts__le=1.5, done=True, role=None) == (
        "system = 'a' AND conv_id IN ('x','y') AND step > 3 AND ts <= 1.5 AND done = true")
    assert match(key="o'k") == "key = 'o''k'"
    assert match(conv_id=[]) == "false" and match() == ""
    assert match(**{"target.expires_at__lt": 2.5}) == "target.expires_at < 2.5"
    with pytest.raises(ValueError, match="unknown comparison"):
        match(step__after=3)


def test_a_commit_writes_each_table_in_a_bounded_number_of_calls(store, monkeypatch):
    """Versions closed at many steps and deletions at many steps cost one read and one write per kind,
    not one update per step (MemWeaver's commits made ~68 LanceDB calls each, issue 28)."""
    import lancedb.table

    store.commit("sp", "s", "c", 1, [item(f"episode-{i}", f"text {i}", 1) for i in range(12)], [], [], {})
    calls: list[str] = []
    for name in ("add", "update", "delete", "merge_insert", "search", "count_rows", "checkout_latest"):
        real = getattr(lancedb.table.LanceTable, name)
        monkeypatch.setattr(lancedb.table.LanceTable, name,
                            lambda self, *a, _r=real, _n=name, **k: calls.append(_n) or _r(self, *a, **k))
    changed = [item(f"episode-{i}", f"text {i} changed", 2 + i) for i in range(6)]  # closes at 6 steps
    gone = [("episode", f"episode-{i}", 4 + i) for i in range(6, 10)]  # deleted at steps 10-13
    store.commit("sp", "s", "c", 20, changed, gone, [Event(2, "merged", ["episode-0"], "x", "s", "c")], {})
    assert calls.count("update") == 0 and calls.count("merge_insert") <= 2  # the items' merge, the checkpoint
    assert len(calls) <= 12, calls
    assert store.kind_counts("sp", "c") == {"episode": 8}
    assert [i.text for i in store.items("sp", "c", "episode", at_step=12) if i.id == "episode-3"] == ["text 3 changed"]
    assert {i.id for i in store.items("sp", "c", "episode", at_step=11)} == {f"episode-{i}" for i in range(12)} - {
        "episode-6", "episode-7"}
    assert [v.text for v in store.item_history("sp", "c", "episode", "episode-5")] == ["text 5", "text 5 changed"]


def test_under_a_lease_later_batches_append_without_a_count_and_replays_still_merge(store, monkeypatch):
    """Under a lease only the first batch counts stored rows of its steps (and later ones); later batches
    of later steps append without a count. A retried batch, or a batch after a rollback, is counted and
    merged: events and links are never duplicated."""
    import lancedb.table

    counts: list[str] = []  # filtered counts (an unfiltered one is the scope index's size check)
    real = lancedb.table.LanceTable.count_rows
    monkeypatch.setattr(lancedb.table.LanceTable, "count_rows",
                        lambda self, *a, **k: (a or k) and counts.append(self.name) or real(self, *a, **k))

    def batch(step: int) -> tuple[list[MemoryItem], list[Event]]:
        return ([item(f"episode-{step}", f"text {step}", step, sources=[f"D1:{step}"])],
                [Event(step, "created", [f"episode-{step}"], "x", "s", "c")])

    with store.lease("sp", "c"):
        for step in (1, 2, 3):
            store.commit("sp", "s", "c", step, *batch(step)[:1], [], batch(step)[1], {})
        first_three = [n for n in counts if n in ("events", "links")]
        store.commit("sp", "s", "c", 3, *batch(3)[:1], [], batch(3)[1], {})  # a retried commit: merged
        store.rollback("sp", "c", 1)
        for step in (2, 3, 4):
            store.commit("sp", "s", "c", step, *batch(step)[:1], [], batch(step)[1], {})
    assert sorted(first_three) == ["events", "links"]  # one count per table, on the first batch only
    assert [e.step for e in store.events("sp", "c")] == [1, 2, 3, 4]
    assert sorted(store.derived_from("sp", "c", f"D1:{s}")[0] for s in (1, 2, 3, 4)) == [
        f"episode-{s}" for s in (1, 2, 3, 4)]
    assert all(len(store.derived_from("sp", "c", f"D1:{s}")) == 1 for s in (1, 2, 3, 4))
