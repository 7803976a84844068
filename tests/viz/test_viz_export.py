"""memcore.viz benchmark views and exports (JSON, CSV, offline HTML)."""

from __future__ import annotations

import json

import pandas as pd

from memcore.eval.bench_data import metric_look, rows_frame, summary_scores
from memcore.eval.bundles import answer_bundle, benchmark_bundle, comparison_bundle
from memcore.types import Answer, Question, Trace, TraceItem, Usage
from memcore.viz.bench import (
    accuracy_tokens_scatter,
    category_table,
    failure_bars,
    metric_heatmap,
    summary_table,
)
from memcore.viz.bundles import replay_bundle
from memcore.viz.export import CSP, plain, remote_references, standalone_html, to_csv, to_json, write_bundle
from memcore.viz.replay import build_replay

XSS = "<script>alert(1)</script>"


def results_fixture() -> dict:
    """A small results JSON in memcore.eval.report's shape, with per-question rows."""
    def block(f1: float, rf: int, sf: int) -> dict:
        return {"n": 2, "f1": f1, "bleu1": f1, "em": 0.0, "judge": f1, "evidence_recall": 0.5,
                "all_evidence_hit": 0.5, "coverage_blocks": 3.0, "coverage_tokens": 120.0, "context_tokens": 900.0,
                "retrieval_failures": rf, "reasoning_failures": sf}

    systems = {}
    for name, f1, tok in (("naive_rag", 0.4, 950.0), ("com", 0.55, 1200.0)):
        systems[name] = {"overall": block(f1, 1, 1), "categories": {"1": {"name": "multi-hop", **block(f1 - 0.1, 1, 0)},
                                                                    "4": {"name": "single-hop", **block(f1 + 0.1, 0, 1)}},
                         "construction_tokens": 0, "query_tokens_per_question": tok, "llm_calls": 4,
                         "latency_ms_p50": 12.0, "cost_usd": None}
    tr = Trace("com", "What breed?", items=[TraceItem("D1:1", "turn", f"Ana: {XSS}", 0.9, ["D1:1"])])
    rows = [{"system": "com", "conv_id": "demo", "question_id": "demo:q0", "category": 4,
             "category_name": "single-hop", "question": "What breed?", "gold": "retriever", "answer": "poodle",
             "f1": 0.0, "judge": 0, "evidence_recall": 0.0, "failure": "retrieval_failure",
             "evidence": ["D1:3"], "trace": tr.to_dict()}]
    return {"run_id": "run-1", "llm": "offline engine (rule-based, no LLM)", "systems": systems, "rows": rows}


def test_category_and_summary_tables():
    r = results_fixture()
    t = category_table(r, "f1")
    assert list(t.columns) == ["system", "multi-hop", "single-hop", "overall"]
    assert t.set_index("system").loc["com", "single-hop"] == 0.65
    s = summary_table(r, summary_scores())
    assert list(s["system"]) == ["naive_rag", "com"] and s.iloc[1]["query_tokens_per_question"] == 1200.0
    assert len(metric_heatmap(t, "f1", look=metric_look("f1")).data) == 1


def test_scatter_and_failure_bars():
    r = results_fixture()
    fig = accuracy_tokens_scatter(r, look=metric_look("f1"))
    assert [t.name for t in fig.data] == ["naive_rag", "com"] and fig.layout.xaxis.type == "log"
    fb = failure_bars(r, "1")
    assert list(fb.data[0].y) == [1, 1] and list(fb.data[1].y) == [0, 0]


def test_rows_frame_drills_into_a_cell():
    rows = results_fixture()["rows"]
    assert len(rows_frame(rows, "com", "4")) == 1
    assert len(rows_frame(rows, "com", "single-hop")) == 1
    assert rows_frame(rows, "naive_rag").empty


def test_json_and_csv_exports():
    ans = Answer("x", Trace("com", "q"), {"answer": Usage(1, 2, 1)})
    d = json.loads(to_json({"a": ans, "df": pd.DataFrame([{"k": 1}])}))
    assert d["a"]["usage"]["answer"]["completion_tokens"] == 2 and d["df"] == [{"k": 1}]
    assert to_csv([{"a": 1, "b": XSS}]).splitlines()[0] == "a,b"
    assert plain({1, 2}) == [1, 2]


def test_standalone_html_is_offline_and_escaped():
    import plotly.graph_objects as go

    html = standalone_html(f"Report {XSS}", [("fig", go.Figure(go.Bar(x=[1], y=[2]))),
                                             ("fig2", go.Figure(go.Bar(x=[1], y=[3]))),
                                             ("table", pd.DataFrame([{"text": XSS}])), ("text", XSS),
                                             ("json", {"t": XSS}), ("graph", ("html-page", f"<p>{XSS}</p>"))])
    assert "<script>alert" not in html
    assert remote_references(html) == []
    assert CSP in html
    assert html.count("plotly.js v") <= 2  # plotly.js inlined once (its banner), not per figure


def test_bundles_and_write(tmp_path):
    q = Question("demo:q0", "demo", "What breed?", "retriever", ["D1:2"], 4)
    tr = Trace("com", q.text, items=[TraceItem("D1:1", "turn", f"Ana: {XSS}", 0.9, ["D1:1"])],
               structure={"beta": 0.5, "chains": [{"anchor": "D1:1", "members": ["D1:1"], "gates": [0.9],
                                                    "steps": [], "stop_reason": "pool empty", "stop_step": 1}]})
    ans = Answer("poodle", tr, {"answer": Usage(10, 2, 1)}, 5.0)
    obj, table, sections = answer_bundle(q, "com", ans, "offline engine (rule-based, no LLM)")
    heads = [h for h, _ in sections]
    assert "Why was it missed?" in heads and "CoM chains" in heads
    paths = write_bundle(tmp_path / "out", "answer com/q0", obj, table, standalone_html("a", sections))
    assert [p.name for p in paths] == ["answer_com_q0.json", "answer_com_q0.csv", "answer_com_q0.html"]
    assert all(p.stat().st_size > 0 for p in paths)
    assert "<script>alert" not in paths[2].read_text()
    _, t2, _ = comparison_bundle(q, {"com": ans, "naive_rag": ans}, "offline")
    assert len(t2) == 2
    _, t3, s3 = benchmark_bundle(results_fixture())
    assert "multi-hop" in t3.columns and any(h == "Failures" for h, _ in s3)
    _, ev, s4 = replay_bundle({"com": build_replay("com", [], None, None, 3)})
    assert ev.empty and len(s4) == 3


def test_scatter_labels_do_not_overlap_at_the_apps_size():
    """Issue 37 minor 1: nine systems close together in half a 1280 px page had overlapping labels. Each label drawn
    keeps off the others and off every point at the plot size the app draws (a label that cannot is left out, and
    the legend then names every point)."""
    import math

    from memcore.viz.bench import SCATTER_PLOT_PX

    pts = {"full_context": (3618, 0.473), "naive_rag": (883, 0.315), "naive_rag_session": (1935, 0.473),
           "com": (412, 0.217), "recmem": (884, 0.262), "memcot": (3921, 0.420), "xmemory": (2600, 0.255),
           "memweaver": (1375, 0.368), "recent_k": (670, 0.039)}
    res = {"systems": {n: {"overall": {"f1": y, "n": 19}, "query_tokens_per_question": x} for n, (x, y) in pts.items()}}
    fig = accuracy_tokens_scatter(res, look=metric_look("f1"))
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    w, h = SCATTER_PLOT_PX

    def px(x: float, y: float) -> tuple[float, float]:
        return (x - x0) / (x1 - x0) * w, (y - y0) / (y1 - y0) * h

    boxes = []
    for a in fig.layout.annotations:
        cx, cy = px(a.x, a.y)
        if a.showarrow:
            cx, cy = cx + a.ax, cy - a.ay
        else:
            cx, cy = cx + (a.xshift or 0), cy + (a.yshift or 0)
        half = len(a.text) * 8.5 / 2  # a 15 px sans-serif label
        boxes.append((a.text, cx - half, cy - 9, cx + half, cy + 9))
    dots = [px(math.log10(x), y) for x, y in pts.values()]
    for i, (t, left, b, r, top) in enumerate(boxes):
        for t2, left2, b2, r2, top2 in boxes[i + 1:]:
            assert min(r, r2) <= max(left, left2) or min(top, top2) <= max(b, b2), (t, t2)
        for dx, dy in dots:  # nor over a point (markers 18 px wide)
            assert not (left < dx + 9 and dx - 9 < r and b < dy + 9 and dy - 9 < top), (t, dx, dy)
    drawn = {a.text for a in fig.layout.annotations}
    assert fig.layout.showlegend is (drawn != set(pts))  # a point without its label: the legend names it
