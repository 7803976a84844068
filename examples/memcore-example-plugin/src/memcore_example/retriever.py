"""dense+overlap: dense candidates reranked by how many of the question's word stems a row contains."""

from __future__ import annotations

from memcore.retrievers import Hits, reranking
from memcore.text.terms import stems


def by_overlap(query: str, rows: Hits) -> Hits:
    """Rows with more of the query's stems first (ties keep the dense order); the score is the overlap."""
    want = set(stems(query))
    scored = [(row, float(len(want & set(stems(row.get("text", "")))))) for row, _ in rows]
    return sorted(scored, key=lambda rs: -rs[1])


OVERLAP = reranking("dense+overlap", base="dense", rerank=by_overlap, pool=50,
                    title="dense candidates reranked by shared word stems (example plugin)")
