"""memcore.viz.html_table: a static table whose cells stay text, marked rows bold, long cells with their whole text."""

from __future__ import annotations

import pandas as pd

from memcore.viz.html_table import HOVER_FROM, TICK, html_table
from tests.app.html_util import parse_html_table


def test_cells_are_escaped_text_and_read_back_whole():
    long = "x" * (HOVER_FROM + 5) + " <b>end</b>"
    df = pd.DataFrame({"changed now": [True, False], "id": ["a", "<img src=x onerror=alert(1)>"], "text": [long, None]})
    out = html_table(df, marked="changed now", wide=["text"])
    assert "<img" not in out and "<b>end" not in out  # data never becomes markup
    back = parse_html_table(out)
    assert back.columns.tolist() == ["changed now", "id", "text"]
    assert back["id"].tolist() == ["a", "<img src=x onerror=alert(1)>"]
    assert back["text"].tolist() == [long, "-"]  # the whole text, a missing cell its mark
    assert back["changed now"].tolist() == [TICK, ""]
    assert out.count("class='mc-mark'") == 1  # the one changed row in bold
    assert out.count(" title=") == 1  # only the long cell, which may be clamped, repeats its text in the hover


def test_an_empty_frame_says_so():
    assert "(no rows)" in html_table(pd.DataFrame(columns=["id", "text"]))
