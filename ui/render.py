"""Draw a view's blocks (memcore.viz.parts) with Streamlit: the page side of memcore.viz.views."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memcore.viz.html_table import html_table
from memcore.viz.parts import Block, Choice, Html, Part, Row, Text
from memcore.viz.tables import cell_text, empty_columns, fill_empty
from ui import graph_assets

_TEXT = {"caption": st.caption, "info": st.info, "success": st.success, "warning": st.warning,
         "markdown": st.markdown}


def built_once(store: dict, key: tuple, make: Any, limit: int = 64) -> Any:
    """`make()` built once per `key` in a module's `store` of figures or specs (cleared past `limit` entries): a
    chart the same from run to run is handed to Streamlit as the same object, which then sends a reference."""
    if key not in store:
        if len(store) > limit:
            store.clear()
        store[key] = make()
    return store[key]


class Prebuilt(go.Figure):
    """A figure given as the plain plotly dict memcore.viz built (and a cache keeps): st.plotly_chart sends it as it
    is. A dict handed to st.plotly_chart is validated into a Figure on every call (seconds for a hierarchy of
    thousands of nodes or a chart of every Replay step), a Figure deep-copied: either on every Replay step."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__()
        self._spec = spec

    def to_dict(self) -> dict[str, Any]:
        """The dict as given (st.plotly_chart serialises it; nothing else uses this figure)."""
        return self._spec


def render(blocks: Sequence[Block], key: str, static_rows: int = 0) -> None:
    """Draw blocks in order; `key` prefixes the keys of their charts and pickers (unique per view on a page).
    `static_rows`: a table of at most that many rows is drawn static (memcore.viz.html_table), not in a data grid:
    for views redrawn at every Replay step."""
    for i, b in enumerate(blocks):
        if isinstance(b, Row):
            for j, (col, p) in enumerate(zip(st.columns(len(b.parts)), b.parts, strict=True)):
                with col:
                    part(p, f"{key}_{p.key or f'{i}_{j}'}", static_rows)
        elif isinstance(b, Choice):
            options = dict(b.options)
            if options:
                ckey = f"{key}_{b.key or i}"
                pick = st.selectbox(b.label, list(options), key=ckey)
                render(options[pick], f"{ckey}_{pick}", static_rows)
        else:
            part(b, f"{key}_{b.key or i}", static_rows)


def part(p: Part, key: str, static_rows: int = 0) -> None:
    """One part: its label, its content, its caption (a table of at most `static_rows` rows drawn static)."""
    if p.label:
        st.markdown(p.label)
    c = p.content
    if isinstance(c, go.Figure):
        st.plotly_chart(c, key=key)
    elif isinstance(c, pd.DataFrame) and 0 < len(c) <= static_rows:
        st.html(html_table(fill_empty(c)[0], max_height=p.height or 300))
    elif isinstance(c, pd.DataFrame):
        table(c, **({"height": p.height} if p.height else {}))
    elif isinstance(c, Html):
        graph_assets.frame(c.page, height=p.height or 500)  # a graph's vis-network from the app, once
    elif isinstance(c, Text):
        _TEXT[c.style](c.text)
    elif isinstance(c, dict | list):
        st.json(c, expanded=False)
    elif c is not None:
        st.text(str(c))
    if p.caption:
        st.caption(p.caption)


def table(df: pd.DataFrame, **kw: Any) -> Any:
    """st.dataframe of `df` without its index, each missing cell shown as its column's mark ("-", or the one its
    builder named, e.g. "n<2") with the reason in the column's help (memcore.viz.tables: a column with an empty
    cell is shown as text, since the data grid draws a missing number as "None" whatever its display text). `kw` go
    to st.dataframe (a `column_config` given there wins). Returns what st.dataframe returns (the selection, with
    on_select)."""
    shown, helps = fill_empty(df)
    for col in empty_columns(df):  # one type per column: every cell as text
        shown[col] = shown[col].map(lambda v: v if isinstance(v, str) else cell_text(v))
    config = {col: st.column_config.Column(help=why) for col, why in helps.items()}
    config.update(kw.pop("column_config", None) or {})
    return st.dataframe(shown, hide_index=True, column_config=config or None, **kw)
