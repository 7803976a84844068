"""Benchmark views of intervals and content (memcore.viz.bench_ci) over results made by the aggregator."""

from __future__ import annotations

from memcore.eval.bench_data import headline_looks
from memcore.eval.compare import rank_systems
from memcore.eval.report import aggregate
from memcore.viz.bench_ci import (
    ci_cell,
    citation_content_table,
    disagreement_examples,
    interval_chart,
    interval_table,
)


def _row(system: str, i: int, f1: float, content: bool) -> dict:
    return {"system": system, "conv_id": "c1", "question_id": f"c1:q{i}", "category": 1 + i % 2,
            "category_name": ["multi-hop", "temporal"][i % 2], "f1": f1, "bleu1": f1, "em": 0.0,
            "evidence": ["D1:1"], "context_turn_ids": ["D1:1"], "evidence_recall": 1.0, "all_evidence_hit": True,
            "content_present": {"D1:1": content}, "content_recall": float(content), "all_content_hit": content,
            "answer_in_context": content, "answer_token_recall": float(content), "context_tokens": 100,
            "coverable": True, "coverage_blocks": None, "coverage_tokens": None,
            "failure": "correct", "usage": {}, "latency_ms": 1.0}


def results_with_intervals() -> dict:
    """Three systems on 30 questions: 'a' and 'b' one question apart, 'c' far behind; 'b' cites without content."""
    rows = [_row("a", i, 1.0, True) for i in range(30)] + \
        [_row("b", i, 0.0 if i == 0 else 1.0, i % 3 != 0) for i in range(30)] + \
        [_row("c", i, 0.0, True) for i in range(30)]
    return {"run_id": "run-ci", "systems": aggregate(rows, judge=False, model="m", provider="offline"),
            "ranking": rank_systems(rows, "f1"), "rows": rows}


def test_interval_table_marks_ties_and_shows_n() -> None:
    t = interval_table(results_with_intervals(), headline_looks()).set_index("system")
    assert list(t.index) == ["a", "b", "c"]
    assert t.loc["a", "rank by f1"] == "best" and t.loc["b", "rank by f1"] == "tied with a"
    assert t.loc["c", "rank by f1"] == ""
    assert t.loc["a", "F1"] == "1.000 [1.000, 1.000] n=30"
    assert "judge" not in t.columns  # no judge in this run


def test_ci_cell_without_interval() -> None:
    assert ci_cell({"f1": 0.5, "n": 1}, "f1") == "0.500 n=1" and ci_cell({}, "f1") == "-"


def test_interval_chart_draws_error_bars_per_category_and_overall() -> None:
    fig = interval_chart(results_with_intervals(), "f1")
    assert [tr.name for tr in fig.data] == ["a", "b", "c"]
    b = fig.data[1]
    assert list(b.x) == ["multi-hop", "temporal", "overall"]
    assert b.error_y.array is not None and max(b.error_y.arrayminus) > 0  # b lost one question: a real interval
    assert list(b.customdata) == [15, 15, 30]


def test_citation_content_disagreement_and_examples() -> None:
    res = results_with_intervals()
    t = citation_content_table(res).set_index("system")
    assert t.loc["b", "cited, content absent"] == 10 and t.loc["a", "cited, content absent"] == 0
    ex = disagreement_examples(res, "b")
    assert list(ex["question_id"])[:2] == ["c1:q0", "c1:q3"] and len(ex) == 5


def test_variants_of_one_system_get_their_own_colours_and_legend_dots() -> None:
    """Issue 37 minor 1: every variant of one system was drawn in that system's colour (identical legend dots). A
    plain system keeps its colour from every other chart; each further variant gets a shade of it and a marker."""
    from memcore.viz.views import system_color

    rows = [_row(s, i, 1.0, True) for s in ("com[beta=0.3]", "com", "com:no-apt", "recmem") for i in range(4)]
    res = {"systems": aggregate(rows, judge=False, model="m", provider="offline"), "rows": rows}
    fig = interval_chart(res, "f1")
    looks = {tr.name: (tr.marker.color, tr.marker.symbol) for tr in fig.data}
    assert len(looks) == 4 and len(set(looks.values())) == 4
    assert len({c.upper() for c, _ in looks.values()}) == 4  # four colours, not one per system
    assert looks["com"][0] == system_color("com") and looks["recmem"][0] == system_color("recmem")
    assert len({sym for _, sym in looks.values() if sym != "circle"}) == 2  # each variant its own marker
