"""Benchmark views of uncertainty and content: scores with 95% intervals and n, error-bar charts, ties
the intervals do not separate, and where citation and content measures disagree (results JSON input). The caller
hands in the metrics: the registry's headline metrics make the interval table, its interval metrics the chart's
choices (memcore.eval.bench_data.headline_looks, interval_metrics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.viz.bench import MetricLook, category_names, systems_of
from memcore.viz.safe import esc
from memcore.viz.theme import style
from memcore.viz.views import series_looks

__all__ = ["ci_cell", "citation_content_table", "disagreement_examples", "interval_chart",
           "interval_table"]


def ci_cell(block: dict[str, Any], metric: str) -> str:
    """'0.412 [0.380, 0.445] n=150' for a metric of a results block, '-' when it has no score."""
    v = block.get(metric)
    if v is None:
        return "-"
    ci = (block.get("ci") or {}).get(metric) or {}
    text = f"{v:.3f}"
    if ci.get("lo") is not None:
        text += f" [{ci['lo']:.3f}, {ci['hi']:.3f}]"
    n = ci.get("n", block.get("n"))
    return text + (f" n={n}" if n is not None else "")


def _ties(results: dict[str, Any]) -> dict[str, str]:
    ranking = results.get("ranking") or []
    if not ranking:
        return {}
    best = ranking[0]["system"]
    return {r["system"]: ("best" if r["system"] == best else f"tied with {best}" if r["tied_with_best"] else "")
            for r in ranking}


def _fallbacks(s: dict[str, Any]) -> str:
    """'12 of 150' answers from a fallback path (memcore.eval.fallbacks), '' when none or not recorded."""
    n = (s.get("fallbacks") or {}).get("any")
    return f"{n} of {(s.get('overall') or {}).get('n')}" if n else ""


def interval_table(results: dict[str, Any], headline: Sequence[MetricLook]) -> pd.DataFrame:
    """One row per system (ranking order when the results have one): each main score (`headline`: the registry's
    headline metrics, memcore.eval.bench_data.headline_looks) with its 95% interval and n, and whether the paired
    interval of its difference to the best system holds 0 ("tied")."""
    ties = _ties(results)
    metric = (results.get("ranking") or [{}])[0].get("metric", "f1")
    order = [r["system"] for r in results.get("ranking") or []]
    systems = systems_of(results)
    names = [s for s in order if s in systems] + [s for s in systems if s not in order]
    table = list(headline)
    rows = []
    for name in names:
        o = systems[name].get("overall") or {}
        gold = (systems[name].get("category_sources") or {}).get("gold")
        rows.append({"system": name, f"rank by {metric}": ties.get(name, ""),
                     "category labels": f"GOLD ({gold} questions)" if gold else "",
                     "fallback answers": _fallbacks(systems[name]),
                     **{m.label: ci_cell(o, m.name) for m in table if not m.needs_judge or o.get(m.name) is not None}})
    cols = ["system", f"rank by {metric}", "category labels", "fallback answers",
            *[m.label for m in table if any(m.label in r for r in rows)]]
    return pd.DataFrame(rows, columns=cols)


def interval_chart(results: dict[str, Any], metric: str = "f1") -> go.Figure:
    """Per category and overall, each system's score with its 95% interval as an error bar (hover: n), in the
    system's colour as in every chart; a further variant of a system in a shade of it with its own marker
    (views.series_looks), so no two series share a colour or a legend dot."""
    names = {**category_names(results), "overall": "overall"}
    fig = go.Figure()
    systems = systems_of(results)
    looks = series_looks(systems)
    for i, (sysname, s) in enumerate(systems.items()):
        xs, ys, lo, hi, ns = [], [], [], [], []
        for key, label in names.items():
            block = s.get("overall") if key == "overall" else (s.get("categories") or {}).get(key)
            if not block or block.get(metric) is None:
                continue
            ci = (block.get("ci") or {}).get(metric) or {}
            y = float(block[metric])
            xs.append(esc(label))
            ys.append(y)
            lo.append(y - ci["lo"] if ci.get("lo") is not None else 0.0)
            hi.append(ci["hi"] - y if ci.get("hi") is not None else 0.0)
            ns.append(ci.get("n", block.get("n")))
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="markers", name=esc(sysname), customdata=ns, offsetgroup=str(i),
            marker={"size": 9, "color": looks[sysname][0], "symbol": looks[sysname][1]},
            error_y={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo, "thickness": 1.5, "width": 4},
            hovertemplate=f"{esc(sysname)} · %{{x}}: %{{y:.3f}} (n=%{{customdata}})<extra></extra>"))
    fig.update_layout(scattermode="group", legend={"orientation": "h", "y": -0.2})
    fig.update_yaxes(title=f"{metric} (95% bootstrap interval)")
    return style(fig, f"{metric} with 95% intervals over questions", height=420)


def citation_content_table(results: dict[str, Any]) -> pd.DataFrame:
    """Per system: gold turns judged, cited but content absent, content present but not cited, and the
    citation vs content recall (overall)."""
    rows = []
    for name, s in systems_of(results).items():
        cc = s.get("citation_content") or {}
        o = s.get("overall") or {}
        rows.append({"system": name, "citation recall": o.get("evidence_recall"),
                     "content recall": o.get("content_recall"), "gold turns judged": cc.get("turns"),
                     "cited, content absent": cc.get("cited_not_in_content"),
                     "content present, not cited": cc.get("in_content_not_cited")})
    return pd.DataFrame(rows, columns=["system", "citation recall", "content recall", "gold turns judged",
                                       "cited, content absent", "content present, not cited"])


def disagreement_examples(results: dict[str, Any], system: str) -> pd.DataFrame:
    """The example questions of one system where citation and content disagree (kind, conv, question, turn)."""
    ex = ((systems_of(results).get(system) or {}).get("citation_content") or {}).get("examples") or {}
    rows = [{"kind": kind.replace("_", " "), **e} for kind, items in ex.items() for e in items]
    return pd.DataFrame(rows, columns=["kind", "conv_id", "question_id", "turn_id"])
