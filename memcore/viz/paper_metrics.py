"""Benchmark views of the papers' further metrics (memcore.eval.paper_metrics): memory footprint and retrieval
latency per system, and the evidence density of Hu et al. (papers/001, Fig. 4) for every system (results JSON input;
the caller hands in the hit classes' labels: memcore.eval.paper_metrics.HIT_LABELS)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.viz.bench import category_names
from memcore.viz.safe import esc
from memcore.viz.theme import style

__all__ = ["density_chart", "density_table", "footprint_table"]
_HIT_COLORS = {"hit1": "#CFE3F2", "hit2": "#56B4E9", "multi": "#0072B2"}


def footprint_table(results: dict[str, Any]) -> pd.DataFrame:
    """Per system: memory rows and bytes (per kind), the shared raw turns apart, and retrieval latency p50/p95.
    Cells are None where the run did not record them (older runs)."""
    out = []
    for name, s in (results.get("systems") or {}).items():
        fp, o = s.get("footprint") or {}, s.get("overall") or {}
        kinds: dict[str, int] = {}
        for c in (fp.get("conversations") or {}).values():
            for k, v in c.get("kinds", {}).items():
                kinds[k] = kinds.get(k, 0) + v["rows"]
        sh = fp.get("shared_turns") or {}
        out.append({"system": name, "memory rows": fp.get("rows"), "memory KB": _kb(fp.get("bytes")),
                    "rows per kind": ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) if fp else None,
                    "shared turns (rows)": sh.get("rows"), "shared turns KB": _kb(sh.get("bytes")),
                    "retrieval p50 ms": o.get("retrieve_ms_p50"), "retrieval p95 ms": o.get("retrieve_ms_p95")})
    return pd.DataFrame(out, columns=["system", "retrieval p50 ms", "retrieval p95 ms", "memory rows", "memory KB",
                                      "shared turns (rows)", "shared turns KB", "rows per kind"])


def _kb(n: int | None) -> float | None:
    return None if n is None else round(n / 1024, 1)


def density_table(results: dict[str, Any], hit_labels: Mapping[str, str]) -> pd.DataFrame:
    """Per system and category (and overall): questions, retrieved blocks and the 1-hit / 2-hit / multi-hit
    shares of those blocks (`hit_labels`: each hit class's key in the results -> its column, in order)."""
    names = category_names(results)
    out = []
    for name, s in (results.get("systems") or {}).items():
        d = s.get("evidence_density") or {}
        groups = [*((names.get(k, k), v) for k, v in (d.get("categories") or {}).items()), ("overall", d.get("overall"))]
        for label, block in groups:
            if block and block.get("blocks"):
                out.append({"system": name, "category": label, "questions": block["questions"],
                            "blocks": block["blocks"], **{label: round(block[k], 3) for k, label in hit_labels.items()}})
    return pd.DataFrame(out, columns=["system", "category", "questions", "blocks", *hit_labels.values()])


def density_chart(results: dict[str, Any], hit_labels: Mapping[str, str], category: str = "overall") -> go.Figure:
    """Stacked bars per system: the share of its retrieved blocks that are 1-hit, 2-hit and multi-hit, over all
    questions or one category (the paper's Fig. 4 has one panel per category); `hit_labels` as density_table's."""
    table = density_table(results, hit_labels)
    label = category_names(results).get(category, category)
    table = table[table["category"] == label]
    fig = go.Figure([go.Bar(x=[esc(s) for s in table["system"]], y=table[label], name=label,
                            marker_color=_HIT_COLORS.get(k), hovertemplate="%{x}: %{y:.1%}<extra>" + label
                            + "</extra>") for k, label in hit_labels.items()])
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title="share of retrieved blocks", tickformat=".0%")
    return style(fig, f"Evidence density · {esc(label)}", height=340)
