"""memcore.viz.html_table: a static table whose cells stay text, marked rows bold, wide cells sent whole, once."""

from __future__ import annotations

import pandas as pd

from memcore.viz.html_table import TICK, html_table
from memcore.viz.tables import TURNS_SHOWN, turns_cell
from tests.app.html_util import parse_html_table


def test_cells_are_escaped_text_and_read_back_whole():
    long = "x" * 500 + " <b>end</b>"
    df = pd.DataFrame({"changed now": [True, False], "id": ["a", "<img src=x onerror=alert(1)>"], "text": [long, None]})
    out = html_table(df, marked="changed now", wide=["text"])
    assert "<img" not in out and "<b>end" not in out  # data never becomes markup
    back = parse_html_table(out)
    assert back.columns.tolist() == ["changed now", "id", "text"]
    assert back["id"].tolist() == ["a", "<img src=x onerror=alert(1)>"]
    assert back["text"].tolist() == [long, "-"]  # the whole text, a missing cell its mark
    assert back["changed now"].tolist() == [TICK, ""]
    assert out.count("class='mc-mark'") == 1  # the one changed row in bold
    assert out.count("xxx <b>") == 0 and out.count("x" * 500) == 1  # the whole text, sent once
    assert out.count("class='mc-w'") == 2  # the wide column's cells: clamped, whole while the pointer is on the row


def test_an_empty_frame_says_so():
    assert "(no rows)" in html_table(pd.DataFrame(columns=["id", "text"]))


def test_a_turns_cell_counts_the_turns_it_leaves_out():
    many = [f"D1:{i}" for i in range(TURNS_SHOWN + 3)]
    assert turns_cell(many).endswith(f"D1:{TURNS_SHOWN - 1}, … ({TURNS_SHOWN + 3} turns in all)")
    assert turns_cell(many[:TURNS_SHOWN]) == ", ".join(many[:TURNS_SHOWN]) and turns_cell([]) == ""
