"""Read the static tables (memcore.viz.html_table) an AppTest run drew with st.html back into frames."""

from __future__ import annotations

import html
import re

import pandas as pd
from streamlit.testing.v1 import AppTest

_ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
_CELL = re.compile(r"<t[hd][^>]*>(?:<div>)?(.*?)(?:</div>)?</t[hd]>", re.S)


def parse_html_table(body: str) -> pd.DataFrame:
    """The header and rows of one static table, every cell as the text shown (unescaped)."""
    rows = [[html.unescape(c) for c in _CELL.findall(r)] for r in _ROW.findall(body)]
    return pd.DataFrame(rows[1:], columns=rows[0]) if rows else pd.DataFrame()


def html_tables(at: AppTest) -> list[pd.DataFrame]:
    """Every static table of the run, in page order."""
    return [parse_html_table(e.proto.body) for e in at.get("html") if 'class="mc-st"' in e.proto.body]
