"""Each system's own retrieval structure on the Ask page (CoM chains, xMemory path, RecMem stores, ...)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from memcore.systems import make_config
from memcore.types import Answer, Conversation
from memcore.viz.chains import chain_figure, chain_steps_table, chain_table
from memcore.viz.evidence import context_table
from memcore.viz.graph import graph_html, memweaver_subgraph
from memcore.viz.hierarchy import path_sunburst, stage_one_tables, stage_two_figure, stage_two_table
from memcore.viz.memcot import iterations_figure, iterations_table
from memcore.viz.recmem import stores_figure
from memcore.workbench import Workbench


def turn_texts(conv: Conversation) -> dict[str, str]:
    """Turn id -> "Speaker: text" for hover labels and tables."""
    return {t.turn_id: f"{t.speaker}: {t.content}" for t in conv.turns}


def _com(wb: Workbench, conv: Conversation, ans: Answer, key: str) -> None:
    s = ans.trace.structure
    st.plotly_chart(chain_figure(s, turn_texts(conv)), key=f"{key}_chain")
    st.caption("Each line is one chain grown from an anchor turn: the gate S(m) = relevance x consistency of "
               "each added turn. A red x marks the turn whose gate fell below beta x the previous gate: "
               "the chain was cut there.")
    st.dataframe(chain_table(s), hide_index=True)
    n = len(s.get("chains") or [])
    if n:
        ci = st.selectbox("Gates computed while growing chain", list(range(1, n + 1)), key=f"{key}_ci")
        st.dataframe(chain_steps_table(s, ci), hide_index=True, height=240)


def _xmemory(wb: Workbench, conv: Conversation, ans: Answer, key: str) -> None:
    s = ans.trace.structure
    if not s.get("themes"):
        st.info("xMemory had no themes to search for this question.")
        return
    st.plotly_chart(path_sunburst(s), key=f"{key}_path")
    st.caption("Stage I picks themes, then semantic facts inside them (greedy relevance + coverage on kNN "
               "graphs); Stage II adds episodes only when they lower the reader's uncertainty.")
    stop = s.get("stop") or {}
    st.caption("Stopped: " + "; ".join(f"{k}: {v}" for k, v in stop.items()))
    th, se = stage_one_tables(s)
    c1, c2 = st.columns(2)
    c1.markdown("**Stage I · themes**")
    c1.dataframe(th, hide_index=True, height=220)
    c2.markdown("**Stage I · semantics**")
    c2.dataframe(se, hide_index=True, height=220)
    cfg = make_config("xmemory")
    st.plotly_chart(stage_two_figure(s, getattr(cfg, "include_gain", None), getattr(cfg, "message_gain", None)),
                    key=f"{key}_s2")
    st.dataframe(stage_two_table(s), hide_index=True, height=220)
    if s.get("uncertainty"):
        st.caption(f"Uncertainty measured by: {s['uncertainty']}")


def _recmem(wb: Workbench, conv: Conversation, ans: Answer, key: str) -> None:
    st.plotly_chart(stores_figure(ans.trace.structure), key=f"{key}_stores")
    df = context_table(ans.trace)
    for origin in ("semantic", "episodic", "subconscious"):
        part = df[df["origin"] == origin]
        st.markdown(f"**{origin}** · {len(part)} item(s)")
        if len(part):
            st.dataframe(part[["id", "score", "text", "turns"]], hide_index=True, height=min(40 + 35 * len(part), 240))


def _memweaver(wb: Workbench, conv: Conversation, ans: Answer, key: str) -> None:
    s = ans.trace.structure
    sub = memweaver_subgraph(s)
    if not sub["edges"]:
        st.info("MemWeaver found no triples for this question.")
    else:
        st.iframe(graph_html(sub, height=480), height=500)
        st.caption("The retrieved subgraph: seed triples and entities outlined in orange, 1-hop expansion, "
                   "passages (boxes) linked by `contains`, experiences (diamonds) by `about`. Drag to explore.")
    used = (s.get("budgets") or {}).get("used") or {}
    if used:
        st.caption("Used: " + ", ".join(f"{k} {v}" for k, v in used.items()))
    texts = turn_texts(conv)
    c1, c2 = st.columns(2)
    c1.markdown("**Passages**")
    c1.dataframe(pd.DataFrame([{**p, "text": texts.get(p.get("turn", ""), "")} for p in s.get("passages") or []]),
                 hide_index=True, height=240)
    c2.markdown("**Experiences**")
    items = {it.id: it.text for it in ans.trace.items}
    c2.dataframe(pd.DataFrame([{**x, "about": ", ".join(x.get("about") or []), "text": items.get(x["id"], "")}
                               for x in s.get("experiences") or []]), hide_index=True, height=240)


def _memcot(wb: Workbench, conv: Conversation, ans: Answer, key: str) -> None:
    s = ans.trace.structure
    if not s.get("iterations"):
        st.info("MemCoT ran no loop step for this question.")
        return
    st.plotly_chart(iterations_figure(s), key=f"{key}_loop")
    st.caption("Each step: zoom-in searches every queued query, keeps the useful hits; zoom-out reads the "
               "turns around them; the judge answers or breaks / rewrites the query. The green line is the "
               f"short-term memory. Answered from: {s.get('answered_from', '')}.")
    st.dataframe(iterations_table(s), hide_index=True)


def _generic(wb: Workbench, conv: Conversation, ans: Answer, key: str) -> None:
    if ans.trace.structure:
        st.json(ans.trace.structure, expanded=False)
    else:
        st.caption("This system reports no extra structure.")


VIEWS: dict[str, Callable[[Workbench, Conversation, Answer, str], None]] = {
    "com": _com, "xmemory": _xmemory, "recmem": _recmem, "memweaver": _memweaver, "memcot": _memcot,
}


def structure_view(wb: Workbench, conv: Conversation, system: str, ans: Answer, key: str) -> None:
    """Draw a system's retrieval structure, then every candidate per stage."""
    VIEWS.get(system, _generic)(wb, conv, ans, key)
    if ans.trace.candidates:
        with st.expander(f"All candidates per stage ({len(ans.trace.candidates)})"):
            st.dataframe(pd.DataFrame([{"stage": c.stage, "rank": c.rank, "id": c.id, "score": round(c.score, 4),
                                        "kept": c.kept, "reason": c.reason, "turns": ", ".join(c.turn_ids[:8])}
                                       for c in ans.trace.candidates]), hide_index=True, height=300)
