"""The retriever registry: how the store ranks rows of one scope for a query.

Two words, two things:
- a *retriever* (this module) is a search over the store: given a scope (one conversation's
  turns, or one memory space's live items of one kind), a query text and its vector, it returns
  the top-k rows with scores. `dense` (cosine), `lexical` (BM25) and `hybrid` (RRF of the two)
  are registered here; a system's config names one in its `retriever` field.
- *retrieval* is a memory system's `retrieve(question) -> Trace` stage (and the LLM usage stage
  of that name): it calls the store's search, with the configured retriever, as many times as its
  paper says, and then filters, expands, chains or iterates.

A retriever receives a `SearchScope` (memcore.store.search builds it): `scope.table` is the main
LanceDB table, `scope.filter` the rows the search may return, and `scope.snapshot()` the scope's
FTS-indexed snapshot table (built lazily; None when the scope is empty). Register a new one with
`register_retriever(Retriever(name, search=fn, title=...))`; `SystemConfig.validate`, the CLI option
help, the benchmarks and the contract test read the registry. Installed packages add retrievers
through the `memcore.retrievers` entry-point group (a Retriever, or a module that registers some): they are
loaded the first time the registry is read, after the built-ins. The table lives in the one registry
(memcore.registry: a taken name is refused, naming both owners).

Room for a reranker: a retriever may wrap another and reorder its candidates. `reranking(...)`
builds one (nothing registers one: there is no reranking model in memcore yet):

    def by_length(query, rows):                    # any (query, [(row, score)]) -> [(row, score)]
        return sorted(rows, key=lambda rs: len(rs[0]["text"]))
    register_retriever(reranking("hybrid+short", base="hybrid", rerank=by_length, pool=50))

A cross-encoder would score (query, row["text"]) pairs in `rerank` the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memcore import registry
from memcore.registry import RETRIEVERS_GROUP, is_module

if TYPE_CHECKING:  # numpy and lancedb are imported when a search runs: the CLI starts without them
    import numpy as np

Hits = list[tuple[dict, float]]


class SearchScope(Protocol):
    """What a retriever searches: the rows one filter selects in one table."""

    table: Any  # the main LanceDB table
    filter: str  # the rows of `table` the search may return

    def snapshot(self) -> Any | None:
        """The scope's FTS-indexed snapshot table (same rows and vectors), or None when it is empty."""
        ...


SearchFn = Callable[[SearchScope, str, "np.ndarray | None", int], Hits]


@dataclass(frozen=True)
class Retriever:
    """A named search over the store: `search(scope, query, vector, k) -> [(row, score)]`, best first."""

    name: str
    search: SearchFn
    title: str = ""


KIND = "retriever"


def _accept(obj: object) -> None:
    """Register what a `memcore.retrievers` entry point names: a Retriever, or a module that registered some."""
    if isinstance(obj, Retriever):
        register_retriever(obj)
    elif not is_module(obj):
        raise TypeError(f"a memcore.retrievers entry point must name a Retriever or a module; got {obj!r}")


registry.define(KIND, "retriever", group=RETRIEVERS_GROUP, accept=_accept)


def register_retriever(r: Retriever) -> Retriever:
    """Add a retriever under `r.name` (another one under a taken name: registry.NameTaken, naming both owners)."""
    return registry.register(KIND, r.name, r, skip=(__name__,))


def unregister_retriever(name: str) -> None:
    """Remove a retriever (tests and plugins that register one for a while)."""
    registry.unregister(KIND, name)


def retriever_names() -> tuple[str, ...]:
    """Registered retriever names, in registration order (dense first: the papers' mode; plugins last)."""
    return tuple(registry.names(KIND))


def get_retriever(name: str) -> Retriever:
    """The retriever registered under `name`, or ValueError naming the registered ones."""
    r = registry.get(KIND, name)
    if r is None:
        raise ValueError(f"retriever must be one of {retriever_names()}, not {name!r}")
    return r


def fts_query(q: str) -> str:
    """Plain words only: full-text query syntax characters in user text must not break the search."""
    words = re.findall(r"[A-Za-z0-9]+", q)
    return " ".join(words) or "_"


def _vec(vector: np.ndarray | None) -> list[float]:
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tolist()


def dense_search(scope: SearchScope, query: str, vector: np.ndarray | None, k: int) -> Hits:
    """Cosine similarity on the main table, prefiltered to the scope."""
    q = scope.table.search(_vec(vector)).distance_type("cosine")
    rows = q.where(scope.filter, prefilter=True).limit(k).to_list()
    return [(r, 1.0 - float(r["_distance"])) for r in rows]


def lexical_search(scope: SearchScope, query: str, vector: np.ndarray | None, k: int) -> Hits:
    """BM25 on the scope's snapshot (statistics from the scope's rows only)."""
    snap = scope.snapshot()
    if snap is None:
        return []
    rows = snap.search(fts_query(query), query_type="fts").limit(k).to_list()
    return [(r, float(r.get("_score", 0.0))) for r in rows]


def hybrid_search(scope: SearchScope, query: str, vector: np.ndarray | None, k: int) -> Hits:
    """LanceDB's hybrid query on the snapshot: dense and BM25 legs fused by RRF (dense for an empty query)."""
    if not query.strip():
        return dense_search(scope, query, vector, k)
    from lancedb.rerankers import RRFReranker

    snap = scope.snapshot()
    if snap is None:
        return []
    rows = (snap.search(query_type="hybrid").vector(_vec(vector)).text(fts_query(query))
            .distance_type("cosine").rerank(RRFReranker()).limit(k).to_list())
    return [(r, float(r.get("_relevance_score", 0.0))) for r in rows]


def reranking(name: str, base: str, rerank: Callable[[str, Hits], Hits], pool: int = 50,
              title: str = "") -> Retriever:
    """A retriever that takes max(pool, k) candidates from the `base` retriever and keeps the top k of
    `rerank(query, candidates)` (a list of (row, score), best first, scores of the reranker)."""

    def search(scope: SearchScope, query: str, vector: np.ndarray | None, k: int) -> Hits:
        cands = get_retriever(base).search(scope, query, vector, max(pool, k))
        return rerank(query, cands)[:k]

    return Retriever(name, search, title or f"{base} candidates reranked")


register_retriever(Retriever("dense", dense_search, "cosine similarity of embeddings (the papers' mode)"))
register_retriever(Retriever("lexical", lexical_search, "BM25 full-text search"))
register_retriever(Retriever("hybrid", hybrid_search, "dense + BM25 fused by reciprocal rank (RRF)"))
_BUILTIN = tuple(e.key for e in registry.entries(KIND, load=False))  # registered above, before any plugin


def builtin_retrievers() -> tuple[str, ...]:
    """The names of memcore's own retrievers (the rest came from plugins)."""
    return _BUILTIN
