"""Provenance walks: from a memory item down to the raw turns it came from, or up to what was built on it."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

COLUMNS = ["depth", "id", "kind", "text", "via"]


def walk(start: str, neighbours: Callable[[str], list[str]], describe: Callable[[str], tuple[str, str]],
         max_depth: int = 6, max_nodes: int = 300) -> pd.DataFrame:
    """Breadth-first walk from `start` (depth 0) along `neighbours`, one row per node reached.

    `describe(id) -> (kind, text)`; each node appears once, at its shallowest depth, with the
    node it was reached from in `via`.
    """
    kind, text = describe(start)
    rows = [{"depth": 0, "id": start, "kind": kind, "text": text, "via": ""}]
    seen = {start}
    frontier = [start]
    for depth in range(1, max_depth + 1):
        nxt = []
        for nid in frontier:
            for other in neighbours(nid):
                if other in seen or len(seen) >= max_nodes:
                    continue
                seen.add(other)
                kind, text = describe(other)
                rows.append({"depth": depth, "id": other, "kind": kind, "text": text, "via": nid})
                nxt.append(other)
        frontier = nxt
        if not frontier:
            break
    return pd.DataFrame(rows, columns=COLUMNS)


def indent(df: pd.DataFrame) -> pd.DataFrame:
    """The walk with ids indented by depth, for a tree-like table."""
    out = df.copy()
    out["id"] = [("    " * d) + ("└ " if d else "") + i for d, i in zip(out["depth"], out["id"], strict=True)]
    return out
