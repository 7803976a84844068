"""Benchmark figures as plotly.js draws them in headless chromium: what a reader sees, not the figure's fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser_util import launch, skip_without_chromium

skip_without_chromium()
pytestmark = pytest.mark.browser

# Six systems as the demo benchmark placed them: two pairs of points almost on top of each other, the right-most
# system at the edge of the data range (its label used to be cut off) and one with a long name.
RESULTS = {"systems": {s: {"overall": {"f1": f1, "n": 19, "query_tokens_per_question": t},
                           "categories": {"4": {"f1": 0.5, "n": 8}, "2": {"f1": 0.6, "n": 11}}}
                       for s, t, f1 in (("com", 521.0, 0.416), ("naive_rag", 894.0, 0.473),
                                        ("recmem", 1167.0, 0.483), ("memweaver", 1531.0, 0.334),
                                        ("memcot", 4699.0, 0.473), ("xmemory", 4796.0, 0.435),
                                        ("naive_rag_session", 2100.0, 0.47))}}


def _render(tmp_path: Path, fig, name: str):
    html = tmp_path / f"{name}.html"
    fig.write_html(html, include_plotlyjs=True, full_html=True, default_width=620, default_height=380)
    return html


def _boxes(page, selector: str) -> list[dict]:
    return page.eval_on_selector_all(selector, "els => els.map(e => { const r = e.getBoundingClientRect(); "
                                               "return {t: e.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; })")


def test_heatmap_cells_show_their_n_and_scatter_labels_are_apart_and_inside(tmp_path: Path) -> None:
    from memcore.viz.bench import accuracy_tokens_scatter, category_table, count_table, metric_heatmap

    heat = _render(tmp_path, metric_heatmap(category_table(RESULTS), "f1", count_table(RESULTS)), "heat")
    scatter = _render(tmp_path, accuracy_tokens_scatter(RESULTS), "scatter")
    with launch() as browser:
        page = browser.new_page(viewport={"width": 700, "height": 500})
        page.goto(heat.as_uri())
        page.wait_for_selector("g.textpoint text, text.textpoint, .hm text, svg text", timeout=30_000, state="attached")
        cells = " ".join(page.eval_on_selector_all("svg text", "els => els.map(e => e.textContent)"))
        assert "n=8" in cells and "n=11" in cells and "n=-" not in cells

        page.goto(scatter.as_uri())
        page.wait_for_selector("g.annotation text", timeout=30_000, state="attached")
        labels = _boxes(page, "g.annotation text")
        assert sorted(b["t"] for b in labels) == sorted(RESULTS["systems"])
        plot = _boxes(page, "rect.nsewdrag")[0]  # the plot area
        for b in labels:  # every label whole inside the plot area
            assert plot["x0"] - 1 <= b["x0"] and b["x1"] <= plot["x1"] + 1, b
            assert plot["y0"] - 1 <= b["y0"] and b["y1"] <= plot["y1"] + 1, b
        for i, a in enumerate(labels):  # no two labels overlap
            for b in labels[i + 1:]:
                apart = a["x1"] <= b["x0"] or b["x1"] <= a["x0"] or a["y1"] <= b["y0"] or b["y1"] <= a["y0"]
                assert apart, (a, b)


def test_graph_labels_stay_readable_after_the_drawing_is_fitted(tmp_path: Path) -> None:
    """A 100-entity graph is fitted far out (zoom ~0.3): the labelled nodes' text must still be drawn at a size
    one can read (vis-network skips labels under 5 px on screen, and 15 px fonts became ~4 px)."""
    from memcore.viz.graph import graph_html, labelled

    nodes = [{"id": f"e{i}", "label": f"entity {i}", "kind": "entity"} for i in range(100)]
    edges = [{"source": "e0" if i % 2 else "e1", "target": f"e{i}", "label": "knows"} for i in range(2, 100)]
    sub = {"nodes": nodes, "edges": edges}
    page_file = tmp_path / "graph.html"
    page_file.write_text(graph_html(sub, height=480))
    shown = sorted(labelled(sub))
    with launch() as browser:
        page = browser.new_page(viewport={"width": 800, "height": 560})
        page.goto(page_file.as_uri())
        page.wait_for_function("window.network && window.__memcoreFitted === true", timeout=60_000)
        scale = page.evaluate("window.network.getScale()")
        sizes = page.evaluate("ids => ids.map(i => nodes.get(i).font.size * window.network.getScale())", shown)
        assert scale < 0.8  # the layout really was fitted from far out
        assert min(sizes) >= 11, sizes  # every labelled node's text is at least 11 px on screen


def test_com_chain_labels_do_not_overlap(tmp_path: Path) -> None:
    """Three chains grown from the demo's flagship question (near-equal gates: the labels used to pile up)."""
    from memcore.systems.com.view import chain_figure

    members = (["D3:17", "D2:2", "D2:12", "D1:15", "D3:19", "D3:3", "D2:18", "D2:24"],
               ["D1:7", "D1:5", "D2:12", "D3:17", "D2:2", "D3:3", "D2:18", "D3:19"],
               ["D2:12", "D3:17", "D2:2", "D1:15", "D3:19", "D3:3", "D2:18", "D2:24"])
    gates = ([0.523, 0.291, 0.314, 0.304, 0.308, 0.307, 0.311, 0.299],
             [0.521, 0.275, 0.249, 0.256, 0.297, 0.306, 0.282, 0.289],
             [0.516, 0.295, 0.314, 0.304, 0.308, 0.307, 0.311, 0.299])
    fig = chain_figure({"beta": 0.5, "chains": [{"members": m, "gates": g, "steps": []}
                                                for m, g in zip(members, gates, strict=True)]})
    html = _render(tmp_path, fig, "chains")
    with launch() as browser:
        page = browser.new_page(viewport={"width": 760, "height": 420})
        page.goto(html.as_uri())
        page.wait_for_selector("g.annotation text", timeout=30_000, state="attached")
        labels = _boxes(page, "g.annotation text")
        assert {"D3:17", "D1:7", "D2:12"} <= {b["t"] for b in labels}  # the anchors
        assert len(labels) >= 8
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                apart = a["x1"] <= b["x0"] or b["x1"] <= a["x0"] or a["y1"] <= b["y0"] or b["y1"] <= a["y0"]
                assert apart, (a, b)


def test_failure_bars_legend_does_not_cover_the_system_names(tmp_path: Path) -> None:
    from memcore.viz.bench import failure_bars

    res = {"systems": {s: {**v, "overall": {**v["overall"], "retrieval_failures": 2, "reasoning_failures": 8}}
                       for s, v in RESULTS["systems"].items()}}
    html = _render(tmp_path, failure_bars(res), "bars")
    with launch() as browser:
        page = browser.new_page(viewport={"width": 700, "height": 500})
        page.goto(html.as_uri())
        page.wait_for_selector("g.legend text", timeout=30_000, state="attached")
        ticks = _boxes(page, "g.xtick text")
        legend = _boxes(page, "g.legend text")
        assert sorted(t["t"] for t in ticks) == sorted(res["systems"]) and len(legend) == 2
        for t in ticks:
            for g in legend:
                apart = t["x1"] <= g["x0"] or g["x1"] <= t["x0"] or t["y1"] <= g["y0"] or g["y1"] <= t["y0"]
                assert apart, (t, g)
