"""The baselines' views: full context and naive RAG have no structure of their own (shown as JSON)."""

from __future__ import annotations

from memcore.viz.views import ANNOTATE, ASK, BENCHMARK, COMPARE, SystemView, register_view

# full context sends the whole conversation with every question: never preselected, even when built
register_view(SystemView("full_context", color="#555555", rank=10, picks=frozenset(), pick_when_built=False))
register_view(SystemView("naive_rag", color="#999999", rank=20, picks=frozenset({ASK, COMPARE, ANNOTATE, BENCHMARK})))
register_view(SystemView("naive_rag_session", color="#A6761D", rank=30, picks=frozenset()))
