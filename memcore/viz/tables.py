"""Empty cells of tables built from rows that may hold None: shown as an explicit mark with its reason, never "None".

A table's builder names why a column can be empty (`explain_empty(df, {"sd": ("n<2", "needs two annotators")})`,
kept in `df.attrs`); the page shows every missing cell (None, NaN) of a column as the column's mark ("-" unless the
builder names another, such as "n<2": `fill_empty`, `empty_columns`), a column with an empty cell as text (`cell_text`:
a data grid draws a missing number as "None" whatever its display text), and the reason as the column's help. A
column whose name ends with "*" in the reasons covers every column starting with the rest ("rate · *").
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

EMPTY = "-"  # the mark of a missing cell when the builder names none
ATTR = "empty_reasons"
Reason = str | tuple[str, str]  # the column help, or (the cell's mark, the column help)


def explain_empty(df: pd.DataFrame, reasons: Mapping[str, Reason]) -> pd.DataFrame:
    """`df` with why its columns can be empty (column -> help, or (mark, help)); returns `df` itself."""
    df.attrs[ATTR] = {**df.attrs.get(ATTR, {}), **reasons}
    return df


def reason_of(df: pd.DataFrame, column: str) -> tuple[str, str]:
    """(mark, help) of a column's empty cells: its own reason, else a "prefix*" reason, else ("-", "")."""
    reasons: Mapping[str, Reason] = df.attrs.get(ATTR, {})
    r = reasons.get(column)
    if r is None:
        r = next((v for k, v in reasons.items() if k.endswith("*") and str(column).startswith(k[:-1])), None)
    if r is None:
        return EMPTY, ""
    return (EMPTY, r) if isinstance(r, str) else (r[0], r[1])


def _missing(v: object) -> bool:
    """None, NaN, NaT or pd.NA (a text, list or array is a value)."""
    return not hasattr(v, "__len__") and bool(pd.isna(v))


def cell_text(v: object, mark: str = EMPTY) -> str:
    """A cell as shown: `mark` when missing, an integer as digits, a float to 6 significant digits, else str."""
    if _missing(v):
        return mark
    if isinstance(v, float):
        return format(v, ".6g")
    return str(v)


def empty_columns(df: pd.DataFrame) -> dict[str, str]:
    """The columns of `df` that have a missing cell, each with its mark."""
    return {col: reason_of(df, col)[0] for col in df.columns if df[col].map(_missing).any()}


def fill_empty(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """A copy of `df` where each missing cell (None, NaN) shows its column's mark, and the help of each column
    that has a reason (column -> text, for the page's column configuration). Columns without a missing cell keep
    their values and type."""
    out = df.copy()
    helps: dict[str, str] = {}
    for col in out.columns:
        mark, why = reason_of(df, col)
        if why:
            helps[col] = why
        missing = out[col].map(_missing)
        if missing.any():
            out[col] = out[col].astype(object).where(~missing, mark)
    return out, helps


TURNS_SHOWN = 10  # turn ids in a table's cell; more are counted


def turns_cell(ids: list[str]) -> str:
    """An item's turn ids as a cell: the first TURNS_SHOWN, then how many there are in all when there are more (a
    cell never shows part of a list as if it were all of it)."""
    shown = ", ".join(ids[:TURNS_SHOWN])
    return shown if len(ids) <= TURNS_SHOWN else f"{shown}, … ({len(ids)} turns in all)"


__all__ = ["EMPTY", "TURNS_SHOWN", "cell_text", "empty_columns", "explain_empty", "fill_empty", "reason_of",
           "turns_cell"]
