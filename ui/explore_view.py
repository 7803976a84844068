"""Explore helpers: item tables, id -> kind lookup, provenance and version history of one memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from memcore.store.view import MemoryView
from memcore.types import Conversation
from memcore.viz.provenance import indent, walk
from memcore.viz.safe import shorten
from memcore.viz.tables import turns_cell
from ui import state


@st.cache_data(show_spinner=False, max_entries=32)
def _id_kinds(_mem: MemoryView, key: tuple[str, str, str], ck_step: int) -> dict[str, str]:
    df = _mem.versions()
    return dict(zip(df["id"], df["kind"], strict=True))


def id_kinds(mem: MemoryView, ck_step: int) -> dict[str, str]:
    """Every item id ever stored in a memory, with its kind (read once per checkpoint)."""
    return _id_kinds(mem, mem.key, ck_step)


@st.cache_resource(show_spinner=False, max_entries=32)
def _current_items(_mem: MemoryView, key: tuple[str, str, str], kind: str, ck_step: int) -> pd.DataFrame:
    items = state.as_of_checkpoint(_mem, ck_step).items(kind, with_vectors=False)  # the entity graph's read too
    return pd.DataFrame([{"id": it.id, "text": it.text, "turns": turns_cell(it.turn_ids),
                          "n turns": len(it.turn_ids), "created": it.created_step, "version from": it.updated_step}
                         for it in items], columns=["id", "text", "turns", "n turns", "created", "version from"])


TEXT_PREVIEW = 300  # characters of an item's text the item table shows (the selected item is shown whole)


def preview(df: pd.DataFrame, n: int = TEXT_PREVIEW) -> pd.DataFrame:
    """The item table with each text cut to its first `n` characters (memcore.viz.safe.shorten: whitespace
    collapsed, an ellipsis where cut); the same rows in the same order, so a selected row is the same item."""
    return df.assign(text=[shorten(t, n) for t in df["text"]])


ITEM_COLUMNS = {  # the item table at 1280 px (~800 px with the row-selection column): header width, help
    "id": (100, "The item's id (select the row for its provenance and history)."),
    "text": (290, "The item's current text (select the row to read it whole)."),
    "turns": (130, "The turns it came from (the first ten)."),
    "n turns": (60, "How many turns it came from."),
    "created": (60, "The step (turn) that created it."),
    "version from": (90, "The step of its current version."),
}


def item_columns() -> dict[str, Any]:
    """st.dataframe column configuration of `current_items`' table: widths that fit a 1280 px page (every
    column on screen, no horizontal scrolling) and each column's meaning."""
    return {c: st.column_config.Column(width=w, help=h) for c, (w, h) in ITEM_COLUMNS.items()}


def current_items(mem: MemoryView, kind: str, ck_step: int) -> pd.DataFrame:
    """Current items of one kind as a table, built once per memory, kind and checkpoint step and shared by every
    session (a resource: callers only read it, a filter makes a new frame) from the items state.as_of_checkpoint
    reads once (the entity graph reads the same ones): a table kept as cache data was copied out (unpickled) on every
    run, and its items read apart from the graph's."""
    return _current_items(mem, mem.key, kind, ck_step)


def describer(conv: Conversation, mem: MemoryView, kinds: dict[str, str]) -> Callable[[str], tuple[str, str]]:
    """describe(id) -> (kind, text) for turns and items of this memory."""
    turns = {t.turn_id: t for t in conv.turns}

    def describe(nid: str) -> tuple[str, str]:
        if nid in turns:
            return "turn", turns[nid].embed_text
        kind = kinds.get(nid, "")
        if not kind:
            return "?", ""
        hist = mem.history(kind, nid)
        return kind, shorten(hist[-1].text, 300) if hist else ""

    return describe


def provenance(conv: Conversation, mem: MemoryView, item_id: str, kinds: dict[str, str]) -> None:
    """Down to raw turns (sources_of) and up to derived items (derived_from), as indented tables."""
    describe = describer(conv, mem, kinds)
    down = walk(item_id, mem.sources_of, describe)
    up = walk(item_id, mem.derived_from, describe)
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(f"**Down to raw turns** · {int((down['kind'] == 'turn').sum())} turn(s)")
        st.dataframe(indent(down), hide_index=True, height=min(38 + 35 * len(down), 300))
    with c2:
        st.markdown(f"**Up to what was built on it** · {len(up) - 1} item(s)")
        st.dataframe(indent(up), hide_index=True, height=min(38 + 35 * len(up), 300))
    st.caption("Provenance links are written at ingest: each item keeps its direct sources (turns or items).")


def history(mem: MemoryView, kind: str, item_id: str) -> None:
    """Every stored version of the item."""
    hist = mem.history(kind, item_id)
    st.markdown(f"**Version history** · {len(hist)} version(s)")
    st.dataframe(pd.DataFrame([{"from step": h.updated_step, "text": h.text, "sources": ", ".join(h.sources[:12]),
                                "metadata": str(h.metadata)[:300]} for h in hist]), hide_index=True)
