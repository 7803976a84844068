"""The retriever registry (memcore.retrievers) and the Workbench read facade (wb.memory / wb.events / wb.llm_calls)."""

from __future__ import annotations

import pytest

from memcore.embed import HashingEmbedder
from memcore.retrievers import (
    Retriever,
    get_retriever,
    register_retriever,
    reranking,
    retriever_names,
    unregister_retriever,
)
from memcore.store import LanceStore
from memcore.systems import make_config
from memcore.types import MemoryItem

EMB = HashingEmbedder()
TEXTS = ["Ana adopted a puppy named Biscuit", "Ben started a pottery class", "The pottery class was rainy"]


@pytest.fixture
def store(tmp_path) -> LanceStore:
    st = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    items = [MemoryItem(id=f"episode-{i}", kind="episode", text=t, system="s", conv_id="c",
                        embedding=EMB.embed([t])[0].tolist(), created_step=1, updated_step=1)
             for i, t in enumerate(TEXTS)]
    st.commit("sp", "s", "c", 1, items, [], [], {})
    return st


@pytest.fixture
def temporary():
    """Names registered by a test are removed after it."""
    names: list[str] = []
    yield names
    for n in names:
        unregister_retriever(n)


def test_the_three_retrievers_are_registered_dense_first() -> None:
    assert retriever_names()[:3] == ("dense", "lexical", "hybrid")
    assert all(get_retriever(n).name == n and get_retriever(n).title for n in retriever_names())
    with pytest.raises(ValueError, match="retriever must be one of .*dense.*not 'telepathy'"):
        get_retriever("telepathy")
    with pytest.raises(ValueError, match="retriever 'dense' is already registered by memcore.retrievers; "
                                         "tests.test_retrievers cannot register another"):
        register_retriever(Retriever("dense", lambda *a: []))


def test_the_store_dispatches_through_the_registry(store, temporary) -> None:
    seen = []

    def spy(scope, query, vector, k):
        seen.append((scope.filter, query, k))
        return get_retriever("lexical").search(scope, query, vector, k)

    temporary.append(register_retriever(Retriever("spy", spy, "lexical, recorded")).name)
    hits = store.search_items("sp", "c", "episode", "pottery class", EMB.embed(["pottery class"])[0], 2, "spy")
    assert [h[0].id for h in hits] == [h[0].id for h in store.search_items(
        "sp", "c", "episode", "pottery class", EMB.embed(["pottery class"])[0], 2, "lexical")]
    assert seen and "space = 'sp'" in seen[0][0] and seen[0][1:] == ("pottery class", 2)
    with pytest.raises(ValueError, match="retriever must be one of"):
        store.search_turns("c", "x", EMB.embed(["x"])[0], 2, "telepathy")


def test_a_reranking_retriever_reorders_its_base_candidates(store, temporary) -> None:
    def shortest_first(query, rows):
        return sorted(rows, key=lambda rs: len(rs[0]["text"]))

    r = reranking("lexical+short", base="lexical", rerank=shortest_first, pool=10)
    temporary.append(register_retriever(r).name)
    assert make_config("naive_rag", retriever="lexical+short").retriever == "lexical+short"  # validate reads the registry
    q = "pottery class"
    base = store.search_items("sp", "c", "episode", q, EMB.embed([q])[0], 10, "lexical")
    got = store.search_items("sp", "c", "episode", q, EMB.embed([q])[0], 1, "lexical+short")
    assert [h[0].id for h in got] == [min(base, key=lambda h: len(h[0].text))[0].id]


def test_workbench_read_facade(workbench, tiny_conv) -> None:
    workbench.ingest("naive_rag_session", tiny_conv)
    space = workbench.space("naive_rag_session", tiny_conv)
    mem = workbench.memory("naive_rag_session", tiny_conv)
    assert (mem.system, mem.conv_id, mem.space) == ("naive_rag_session", tiny_conv.id, space)
    assert mem.status() == (len(tiny_conv.turns) + 1, True) == (mem.checkpoint()["step"], True)
    kind = next(iter(mem.kind_counts()))
    assert [i.id for i in mem.items(kind)] == [i.id for i in workbench.store.items(space, tiny_conv.id, kind)]
    assert len(mem.versions()) == len(workbench.store.item_versions(space, tiny_conv.id))
    assert workbench.events("naive_rag_session", tiny_conv) == workbench.store.events(space, tiny_conv.id) != []
    calls = workbench.llm_calls(system="naive_rag_session", conv_id=tiny_conv.id)
    assert len(mem.llm_calls()) == len(calls)
    other = workbench.memory("naive_rag_session", tiny_conv, retriever="hybrid")  # query-side: same memory
    assert other.space == space
