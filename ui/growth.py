"""System-specific growth views on the Replay page (generic memory table for every system)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memcore.systems import get_system
from memcore.types import Conversation
from memcore.viz.replay import ReplayData
from memcore.workbench import Workbench
from ui import state


def _changed(rd: ReplayData, step: int) -> set[str]:
    ev = rd.events_at(step)
    return {i.strip() for s in ev["items"] for i in s.split(",") if i.strip()}


def memory_table(wb: Workbench, conv: Conversation, rd: ReplayData, step: int) -> None:
    """Items of one kind alive at this step; those touched at this step come first."""
    kinds = [k for k in rd.counts.columns if rd.counts[k].max() > 0]
    if not kinds:
        st.caption(f"{rd.system} keeps no memory items of its own (it indexes raw turns).")
        return
    kind = st.selectbox("Kind", kinds, key=f"gr_kind_{rd.system}")
    space = state.space_of(wb, rd.system, conv)
    items = state.items_at(wb, wb.store.uri, space, conv.id, kind, step)
    changed = _changed(rd, step)
    df = pd.DataFrame([{"changed now": it.id in changed, "id": it.id, "text": it.text,
                        "turns": ", ".join(it.turn_ids[:10]), "since step": it.created_step,
                        "version from": it.updated_step} for it in items],
                      columns=["changed now", "id", "text", "turns", "since step", "version from"])
    df = df.sort_values(["changed now", "version from"], ascending=False)
    st.dataframe(df, hide_index=True, height=300)
    st.caption(f"{len(df)} {kind} item(s) in memory at step {step}; ticked rows changed at this step.")


VIEWS: dict[str, object] = {}  # system name -> fn(wb, conv, rd, step) drawing its own growth view


def growth_views(wb: Workbench, conv: Conversation, data: dict[str, ReplayData], step: int) -> None:
    """One tab per system: its dedicated growth view when it has one, then its memory table."""
    tabs = st.tabs([get_system(s).title or s for s in data])
    for tab, (name, rd) in zip(tabs, data.items(), strict=True):
        with tab:
            view = VIEWS.get(name)
            if view is not None:
                view(wb, conv, rd, step)  # type: ignore[operator]
            memory_table(wb, conv, rd, step)
