"""A static HTML table for views redrawn at every Replay step: one short row per record, the cells of its wide
columns (an item's text) clamped to `LINES` lines ending in "…" and shown whole while the pointer is on the row
(the text is sent once, whole), rows named by `marked` in bold with a tick, the table scrolling past `max_height`
px. Every value is escaped (memcore.viz.safe.esc): text from data stays text.

Why not the data grid: a data grid (st.dataframe) is drawn anew on a canvas ~300 ms after the rest of a step
whose rows changed (bench/replay_step_elements.py); a static table is a few hundred DOM nodes replaced at once.
Its columns cannot be sorted or resized: a page that needs that keeps the grid. Pure data -> HTML; no Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from memcore.viz.safe import esc
from memcore.viz.tables import cell_text

LINES = 3  # lines a wide column's cell shows before it is clamped ("…"; whole while the pointer is on its row)
TICK = "✓"

_STYLE = ("<style>.mc-st{{max-height:{h}px;overflow:auto;border:1px solid rgba(49,51,63,.2);border-radius:.5rem}}"
          ".mc-st table{{border-collapse:collapse;width:100%;font-size:.85rem;table-layout:auto}}"
          ".mc-st th{{position:sticky;top:0;background:#F0F2F6;text-align:left;font-weight:600;padding:4px 8px;"
          "white-space:nowrap}}"
          ".mc-st td{{padding:3px 8px;border-top:1px solid rgba(49,51,63,.1);vertical-align:top}}"
          ".mc-st td.mc-w{{min-width:24em;overflow-wrap:anywhere}}"  # only the wide cells break inside a word
          ".mc-st td.mc-w>div{{display:-webkit-box;-webkit-line-clamp:{lines};-webkit-box-orient:vertical;"
          "overflow:hidden}}"
          ".mc-st tr:hover td.mc-w>div{{display:block;overflow:visible}}"
          ".mc-st tr.mc-mark td{{font-weight:600;background:#FFF7E0}}</style>")


def html_table(df: pd.DataFrame, *, marked: str | None = None, max_height: int = 300,
               wide: Sequence[str] = ()) -> str:
    """`df` as a static, escaped HTML table. `marked`: a boolean column drawn as a tick whose true rows are bold;
    `wide`: columns given most of the width (e.g. an item's text), their cells clamped to `LINES` lines and shown
    whole while the pointer is on the row; the other columns wrap, whole."""
    cols = [str(c) for c in df.columns]
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    rows = []
    for rec in df.itertuples(index=False, name=None):
        mark = marked is not None and bool(rec[cols.index(marked)])
        cells = []
        for c, v in zip(cols, rec, strict=True):
            text = (TICK if v else "") if c == marked else cell_text(v)
            cls = " class='mc-w'" if c in wide else ""
            cells.append(f"<td{cls}><div>{esc(text)}</div></td>")
        rows.append(("<tr class='mc-mark'>" if mark else "<tr>") + "".join(cells) + "</tr>")
    body = "".join(rows) or f'<tr><td colspan="{max(len(cols), 1)}">(no rows)</td></tr>'
    return (_STYLE.format(h=int(max_height), lines=LINES)
            + f'<div class="mc-st"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>')
