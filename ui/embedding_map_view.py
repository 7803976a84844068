"""The embedding map panel (Explore, and Ask from an answer): a memory's items in 2-D by memcore.eval.embedding_map,
drawn by memcore.viz.embedding_map; a click on a point opens that item in Explore (its deep link)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from memcore.eval.embedding_map import METHOD, METHODS, EmbeddingMap, embedding_map, mark_question
from memcore.llm.redact import redact
from memcore.store.view import MemoryView
from memcore.types import Conversation, Question, Trace
from memcore.viz.embedding_map import COLOR_BY, embedding_map_figure
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui.nav import EXPLORE, page

NEAR = 5  # near-misses marked
METHOD_LABELS = {"pca": "PCA", "tsne": "t-SNE (slower; question placed by a rule)"}
_MAPS: dict[tuple, EmbeddingMap] = {}  # (memory key, method, version) -> map, this process


def explore_link(conv_id: str, system: str, kind: str, item_id: str) -> str:
    """A relative link to Explore that opens one item (the deep link Explore reads: conv, system, kind, item)."""
    params = {"conv": conv_id, "system": system, "kind": kind, "item": item_id}
    return f"{page(EXPLORE).url_path}?{urlencode(params)}"


def memory_map(mem: MemoryView, conv: Conversation, method: str) -> tuple[EmbeddingMap, float]:
    """The memory's map (memcore.eval.embedding_map: the store's cached projection, computed on the first call
    for a memory version), kept in this process by version too; (map, seconds this call took)."""
    t0 = time.perf_counter()
    key = (mem.key, method, mem.version())
    if key in _MAPS:
        return _MAPS[key], time.perf_counter() - t0
    emap = embedding_map(mem, conv, method)
    _MAPS[key] = replace(emap, computed=False)  # the next call computes nothing
    return emap, time.perf_counter() - t0


def _clicked(chart_key: str, target: str) -> None:
    """on_select of the chart: remember the clicked item (id, kind) for `target` (the page acts on the rerun)."""
    sel = st.session_state.get(chart_key)
    points = sel.selection.points if sel is not None and sel.selection else []
    custom = next((p.get("customdata") for p in points if p.get("customdata")), None)
    if custom:
        st.session_state[target] = (str(custom[0]), str(custom[1]))


def map_panel(mem: MemoryView, conv: Conversation, key: str, wb: Workbench | None = None,
              question: Question | None = None, trace: Trace | None = None) -> tuple[str, str] | None:
    """Colour and projection selects, the map (with `question`: placed on it, `trace`'s retrieved items ringed and
    numbered by their position in the context, the NEAR near-misses crossed), and what it shows in words. A click
    on a point returns (item id, kind) once (None otherwise); the caller opens it."""
    c1, c2 = st.columns(2)
    color_by = c1.selectbox("Colour by", COLOR_BY, key=f"{key}_map_color")
    method = c2.selectbox("Projection", METHODS, index=METHODS.index(METHOD), key=f"{key}_map_method",
                          format_func=lambda m: METHOD_LABELS.get(m, m))
    with st.spinner("Projecting this memory (once per memory version)..."):
        emap, took = memory_map(mem, conv, method)
    if not len(emap.points):
        st.info("This memory holds no items with vectors to map.")
        return None
    marks: dict[str, Any] | None = None
    if emap.cache_error:
        st.warning("The projection could not be cached in the store (it is computed again next time): "
                   + md_escape(redact(emap.cache_error)), icon=":material/warning:")
    if question is not None and trace is not None and wb is not None:
        try:
            qvec = wb.embedder.embed([question.text])[0]
        except Exception as e:
            st.warning("The question could not be embedded, so it is not placed on the map: "
                       + md_escape(redact(f"{type(e).__name__}: {e}")), icon=":material/warning:")
        else:
            marks = mark_question(emap, qvec, [it.id for it in trace.items], NEAR)
    points = marks["points"] if marks else emap.points
    q = {"x": marks["x"], "y": marks["y"], "text": question.text} if marks and question else None
    chart_key, target = f"{key}_map_chart", f"_{key}_map_open"
    st.plotly_chart(embedding_map_figure(points, color_by, q), key=chart_key, on_select=lambda: _clicked(
        chart_key, target), selection_mode="points")  # no scrollZoom: a wheel over the map scrolls the page
    kinds = ", ".join(f"{n} {md_escape(k)}" for k, n in emap.points["kind"].value_counts().items())
    st.caption(f"{len(emap.points)} items ({kinds}) by {METHOD_LABELS[method].split(' ')[0]} of their stored "
               f"vectors · {'projected now' if emap.computed else 'projection from the store cache'} · "
               f"{took:.2f} s. Hover a point to read it; click it to open it in Explore.")
    if marks:
        n_ret = int((marks["points"]["mark"] == "retrieved").sum())
        st.caption(f"Star: the question ({md_escape(marks['rule'])}). Rings: the {n_ret} retrieved item(s) on the map, "
                   f"numbered by their position in the context. Crosses: the {NEAR} near-misses, the items most "
                   "similar to the question by cosine on the stored vectors that were not retrieved, numbered by "
                   "that rank. Distances on a 2-D map are approximate.")
        table = marked_table(marks["points"])
        st.dataframe(table, hide_index=True, height=min(38 + 35 * max(len(table), 1), 320), key=f"{key}_map_marked")
        st.caption("The numbered points as a list (numbers can overlap where points crowd): retrieved by position in "
                   "the context, then the near-misses by cosine rank, with each one's cosine to the question.")
        if marks["off_map"]:
            st.caption(f"{len(marks['off_map'])} retrieved id(s) are not items of this memory (raw turns) and are "
                       f"not on the map: {md_escape(', '.join(marks['off_map'][:10]))}"
                       + (" ..." if len(marks["off_map"]) > 10 else ""))
    return st.session_state.pop(target, None)


def marked_table(points: pd.DataFrame) -> pd.DataFrame:
    """The map's marked points as rows (mark, number, cosine to the question, kind, id, text): retrieved ones by
    their position in the context, then the near-misses by cosine rank."""
    cols = ["mark", "number", "cosine", "kind", "id", "text"]
    if "mark" not in points:
        return pd.DataFrame(columns=cols)
    sel = points[points["mark"] != ""].copy()
    sel["number"] = sel["rank"].astype(int)
    sel["cosine"] = sel["similarity"].round(3) if "similarity" in sel else None
    sel["order"] = (sel["mark"] != "retrieved").astype(int)
    return sel.sort_values(["order", "number"], kind="stable")[cols]


def open_in_explore(conv: Conversation, system: str, clicked: tuple[str, str] | None) -> None:
    """Go to Explore showing the clicked item (its deep link's parameters)."""
    if clicked is None:
        return
    item_id, kind = clicked
    st.switch_page(page(EXPLORE).path, query_params={"conv": conv.id, "system": system, "kind": kind,
                                                     "item": item_id})
