"""Each system's own retrieval structure on the Ask page: the blocks its view declares (memcore.viz.views)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from memcore.types import Answer, Conversation
from memcore.viz.views import get_view
from ui import state
from ui.render import render


def turn_texts(conv: Conversation) -> dict[str, str]:
    """Turn id -> "Speaker: text" for hover labels and tables (built once per conversation object; read only)."""
    return state.per_conversation(conv, "turn_texts", lambda c: {t.turn_id: t.embed_text for t in c.turns})


def structure_view(system: str, ans: Answer, texts: Mapping[str, str], key: str) -> None:
    """Draw a system's retrieval structure (the same blocks its answer export writes), then every candidate."""
    render(get_view(system).structure(ans.trace, texts), key)
    if ans.trace.candidates:
        with st.expander(f"All candidates per stage ({len(ans.trace.candidates)})"):
            st.dataframe(pd.DataFrame([{"stage": c.stage, "rank": c.rank, "id": c.id, "score": round(c.score, 4),
                                        "kept": c.kept, "reason": c.reason, "turns": ", ".join(c.turn_ids[:8])}
                                       for c in ans.trace.candidates]), hide_index=True, height=300)
