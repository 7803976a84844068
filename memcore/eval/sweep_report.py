"""A sweep's results as a text table, JSON and CSV: one row per point (the CSV: per point x category and overall),
the metrics from the metric registry (headline metrics with their 95% bootstrap intervals), n, tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcore.eval.metric_registry import REPORT, metrics
from memcore.eval.report import _cell, _fmt, csv_fields, csv_rows, write_json_csv

KIND = "memcore-sweep"  # a sweep result's "kind" (the Benchmark page tells it from one run's results)


def is_sweep(results: Any) -> bool:
    """Whether a loaded results JSON is a sweep's (memcore sweep) rather than one run's."""
    return isinstance(results, dict) and results.get("kind") == KIND


def param_columns(results: dict[str, Any]) -> list[str]:
    """The swept fields, in grid order (the retriever last when swept)."""
    cols = list(results.get("grid") or {})
    return cols + (["retriever"] if results.get("retrievers") else [])


def sweep_rows(results: dict[str, Any], overall_only: bool = False) -> list[dict[str, Any]]:
    """The CSV rows of a sweep: point, preset, each swept field, then the eval CSV's columns (`csv_fields`) of
    the point's summary, per category and overall (or the overall row only)."""
    cols = param_columns(results)
    out = []
    for p in results["points"]:
        for row in csv_rows({"systems": {p["name"]: p["summary"]}}) if p.get("summary") else []:
            if overall_only and row["category"] != "overall":
                continue
            head = {"point": p["name"], "preset": p["preset"] or "(full system)",
                    **{c: p["params"].get(c) for c in cols}}
            out.append({**head, **{k: row.get(k) for k in csv_fields()[1:]},
                        "memory_space": p["memory_space"], "run_id": p["run_id"], "complete": p["complete"]})
    return out


def sweep_fields(results: dict[str, Any]) -> list[str]:
    """The CSV's columns."""
    return ["point", "preset", *param_columns(results), *csv_fields()[1:], "memory_space", "run_id", "complete"]


def write_sweep(results: dict[str, Any], path: str | Path) -> tuple[Path, Path]:
    """Write the sweep JSON and, beside it, its CSV (same name, .csv). Returns both paths."""
    return write_json_csv(results, path, sweep_fields(results), sweep_rows(results))


def format_sweep(results: dict[str, Any]) -> str:
    """A plain-text table, one row per point: n, the registry's report metrics (headline ones with their
    interval), construction and query tokens, the memory it answered from; then the mechanism statistics."""
    judge = (results.get("judge") or {}).get("enabled", False)
    runs = (results.get("judge") or {}).get("runs", 1) or 1
    shown = metrics(REPORT, judge=judge)
    head = ["point", "n", *[m.column for m in shown], "constr_tok", "q_tok/q", "memory"]
    spaces = {p["memory_space"]: i + 1 for i, p in
              enumerate({p["memory_space"]: p for p in results["points"]}.values())}
    lines = [head]
    for row in sweep_rows(results, overall_only=True):
        lines.append([_fmt(v) for v in [row["point"], row["n"], *[_cell(row, m, runs) for m in shown],
                                        row["construction_tokens"], row["query_tokens_per_question"],
                                        f"#{spaces[row['memory_space']]}"]])
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(head))]
    table = "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in lines)
    mech = [f"  {p['name']}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in p["summary"]["mechanism"].items())
            for p in results["points"] if (p.get("summary") or {}).get("mechanism")]
    return table + ("\nmechanism statistics:\n" + "\n".join(mech) if mech else "")


def memory_line(results: dict[str, Any]) -> str:
    """How many memories the sweep's points need and how often one was built in this invocation."""
    n_conv = len(results.get("conversations") or [])
    return (f"memory: {results['construction_points']} construction point(s) x {n_conv} conversation(s) for "
            f"{results['points_total']} point(s); built {results['memory_built']} time(s) in this run "
            "(a memory already stored is reused)")
