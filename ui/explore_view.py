"""Explore helpers: item tables, id -> kind lookup, provenance and version history."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memcore.types import Conversation
from memcore.viz.provenance import indent, walk
from memcore.viz.safe import shorten
from memcore.workbench import Workbench
from ui import state


@st.cache_data(show_spinner=False, max_entries=32)
def id_kinds(_wb: Workbench, store_uri: str, space: str, conv_id: str, ck_step: int) -> dict[str, str]:
    """Every item id ever stored in a space, with its kind."""
    df = state.item_versions(_wb, space, conv_id)
    return dict(zip(df["id"], df["kind"], strict=True))


@st.cache_data(show_spinner=False, max_entries=32)
def current_items(_wb: Workbench, store_uri: str, space: str, conv_id: str, kind: str, ck_step: int) -> pd.DataFrame:
    """Current items of one kind as a table."""
    items = _wb.store.items(space, conv_id, kind, with_vectors=False)
    return pd.DataFrame([{"id": it.id, "text": it.text, "turns": ", ".join(it.turn_ids[:10]),
                          "n turns": len(it.turn_ids), "created": it.created_step, "version from": it.updated_step}
                         for it in items], columns=["id", "text", "turns", "n turns", "created", "version from"])


def describer(wb: Workbench, conv: Conversation, space: str, kinds: dict[str, str]):  # noqa: ANN201
    """describe(id) -> (kind, text) for turns and items of this space."""
    turns = {t.turn_id: t for t in conv.turns}

    def describe(nid: str) -> tuple[str, str]:
        if nid in turns:
            t = turns[nid]
            return "turn", f"{t.speaker}: {t.content}"
        kind = kinds.get(nid, "")
        if not kind:
            return "?", ""
        hist = wb.store.item_history(space, conv.id, kind, nid)
        return kind, shorten(hist[-1].text, 300) if hist else ""

    return describe


def provenance(wb: Workbench, conv: Conversation, space: str, item_id: str, kinds: dict[str, str]) -> None:
    """Down to raw turns (sources_of) and up to derived items (derived_from), as indented tables."""
    describe = describer(wb, conv, space, kinds)
    down = walk(item_id, lambda i: wb.store.sources_of(space, conv.id, i), describe)
    up = walk(item_id, lambda i: wb.store.derived_from(space, conv.id, i), describe)
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(f"**Down to raw turns** · {int((down['kind'] == 'turn').sum())} turn(s)")
        st.dataframe(indent(down), hide_index=True, height=min(38 + 35 * len(down), 300))
    with c2:
        st.markdown(f"**Up to what was built on it** · {len(up) - 1} item(s)")
        st.dataframe(indent(up), hide_index=True, height=min(38 + 35 * len(up), 300))
    st.caption("Provenance links are written at ingest: each item keeps its direct sources (turns or items).")


def history(wb: Workbench, conv: Conversation, space: str, kind: str, item_id: str) -> None:
    """Every stored version of the item."""
    hist = wb.store.item_history(space, conv.id, kind, item_id)
    st.markdown(f"**Version history** · {len(hist)} version(s)")
    st.dataframe(pd.DataFrame([{"from step": h.updated_step, "text": h.text, "sources": ", ".join(h.sources[:12]),
                                "metadata": str(h.metadata)[:300]} for h in hist]), hide_index=True)
