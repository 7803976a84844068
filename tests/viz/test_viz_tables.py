"""Empty cells of tables (memcore.viz.tables): an explicit mark with its reason, never "None" (issue 37 minor 6)."""

from __future__ import annotations

import math

import pandas as pd

from memcore.systems.xmemory.view import stage_one_tables
from memcore.viz.annotation import rates_frame
from memcore.viz.tables import explain_empty, fill_empty


def _none_left(df: pd.DataFrame) -> list:
    return [v for col in df.columns for v in df[col] if v is None or (isinstance(v, float) and math.isnan(v))]


def test_missing_cells_show_the_columns_mark_and_values_keep_their_type():
    df = explain_empty(pd.DataFrame([{"n": 1, "sd": None, "x": 0.5, "ids": ["a"]},
                                     {"n": 2, "sd": 0.25, "x": float("nan"), "ids": []}]),
                       {"sd": ("n<2", "needs two annotators")})
    shown, helps = fill_empty(df)
    assert list(shown["sd"]) == ["n<2", 0.25] and list(shown["x"]) == [0.5, "-"]
    assert shown["n"].dtype == df["n"].dtype and list(shown["ids"]) == [["a"], []]  # complete columns unchanged
    assert helps == {"sd": "needs two annotators"} and not _none_left(shown)
    assert pd.isna(df["sd"].iloc[0])  # the data itself is left as it is


def test_xmemory_stage_one_pick_order_of_a_candidate_passed_over():
    s = {"themes": [{"id": "theme-1", "label": "Running", "score": 0.5, "picked": True, "pick_order": 1},
                    {"id": "theme-2", "label": "Food", "score": 0.1, "picked": False}],
         "semantics": [{"id": "semantic-1", "theme": "theme-1", "picked": False, "episodes": []}]}
    for table in stage_one_tables(s):
        shown, helps = fill_empty(table)
        assert "-" in list(shown["pick_order"]) and "not picked" in helps["pick_order"]
        assert not _none_left(shown[["pick_order", "id", "picked"]])


def test_annotation_rates_name_why_a_cell_is_empty():
    rates = [{"system": "s", "category": "all", "helpful": 1, "n": 2, "rate": 0.5, "sd": None, "min": 0.5,
              "max": 0.5, "n_annotators": 1, "per_annotator": {"alice": 0.5}, "ci95": (0.1, 0.9)},
             {"system": "t", "category": "all", "helpful": 2, "n": 3, "rate": 0.75, "sd": 0.35, "min": 0.5,
              "max": 1.0, "n_annotators": 2, "per_annotator": {"alice": 0.5, "bob": 1.0}, "ci95": (0.2, 0.95)}]
    shown, helps = fill_empty(rates_frame(rates))
    assert list(shown["sd"]) == ["n<2", 0.35] and list(shown["rate · bob"]) == ["-", 1.0]
    assert "two or more annotators" in helps["sd"] and "no label" in helps["rate · bob"]
