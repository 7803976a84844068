"""Benchmark: the papers' further metrics (memory footprint, retrieval latency p50/p95, evidence density) as
blocks per system (AppTest on a results JSON)."""

from __future__ import annotations

from memcore.eval.report import aggregate, build_row
from tests.app.test_app_pages import benchmark_with
from tests.eval.test_paper_metrics import _answer, _q


def _results() -> dict:
    rows = [build_row(_q(i, "Pepper the beagle", 1 + i % 2), _answer(["Pepper", "beagle Pepper", "nothing"]),
                      {"system": s, "run_id": "r"}) for s in ("a", "b") for i in range(4)]
    systems = aggregate(rows, judge=False, model="m", provider="offline", systems=["a", "b"])
    systems["a"].update(footprint={"space": "a-1", "rows": 3, "bytes": 2048, "shared_turns": {"rows": 9, "bytes": 1024},
                                   "conversations": {"c": {"kinds": {"episode": {"rows": 2, "bytes": 1500},
                                                                     "theme": {"rows": 1, "bytes": 548}},
                                                           "rows": 3, "bytes": 2048,
                                                           "shared_turns": {"rows": 9, "bytes": 1024}}}})
    return {"run_id": "r", "systems": systems, "categories": ["1", "2"], "judge": {"enabled": False}, "rows": rows}


def test_benchmark_shows_footprint_latency_and_density(app_env):
    at = benchmark_with(app_env, _results())
    assert not at.exception and not at.error, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe]
    fp = next(f for f in frames if "memory rows" in f.columns).set_index("system")
    # a column with an empty cell (a system that recorded no memory) is shown as text, the empty cell as "-"
    assert str(fp.loc["a", "memory rows"]) == "3" and float(fp.loc["a", "memory KB"]) == 2.0
    assert fp.loc["a", "rows per kind"] == "episode 2, theme 1" and str(fp.loc["a", "shared turns (rows)"]) == "9"
    assert fp.loc["a", "retrieval p50 ms"] == 1.0 and fp.loc["a", "retrieval p95 ms"] == 1.0
    assert fp.loc["b", "memory rows"] == "-"  # b's footprint not recorded: shown empty ("-"), not zero
    dens = next(f for f in frames if "multi-hit" in f.columns)
    overall = dens[(dens["system"] == "a") & (dens["category"] == "overall")].iloc[0]
    assert (overall["blocks"], round(overall["1-hit"], 3), round(overall["2-hit"], 3)) == (12, 0.333, 0.333)
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Evidence density" in s for s in titles)
    at.selectbox(key="bm_density_cat").set_value("1").run()
    assert not at.exception, [e.value for e in at.exception]


def test_benchmark_names_the_runs_limits(app_env):
    res = _results()
    res["limits"] = {"long_turns": {"window": 256, "rule": "mean-of-chunks", "over": 7, "of": 19},
                     "context_window": {"tokens": 900, "source": "setting"}, "does_not_fit": {"b": 2}}
    at = benchmark_with(app_env, res)
    assert not at.exception and not at.error, [e.value for e in at.exception]
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # as rendered: Markdown escapes dropped
    assert "7 of 19 turns exceed the embedder" in captions and "context window: 900 tokens" in captions
    assert "not sent, not answered): b 2" in captions
