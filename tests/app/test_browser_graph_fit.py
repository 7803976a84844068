"""Graphs drawn in headless Debian chromium (issue 23 item 8): in a crowded graph no two labels overlap (one that
would is left out), the frame holds the legend and the whole drawing, and the sunburst hides labels too small to
read. Screenshots go to the test's tmp dir (and to $MEMCORE_SCREENSHOTS).

Skips when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import html

import plotly.io
import pytest

from memcore.viz.graph import frame_height, graph_html
from tests.app.test_browser_layouts import keep_screenshots
from tests.browser_util import launch, skip_without_chromium
from tests.viz.test_viz_readable_end import end_of_demo

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

LABELS = """() => {
  const all = nodes.get().filter(n => n.label && n.label.trim());
  const boxes = all.map(n => { const s = network.body.nodes[n.id].labelModule.size;  // vis-network's own measure
    return {id: n.id, b: {left: s.left, right: s.left + s.width, top: s.top, bottom: s.top + s.height}}; });
  const meet = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].b, b = boxes[j].b;
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) meet.push([boxes[i].id, boxes[j].id]);
  }
  return {shown: all.length, hidden: window.__memcoreHidden, meet};
}"""


def crowded(n: int = 36) -> dict:
    """A hub and n seeds (every one labelled) with long names, tied in a ring: labels crowd each other."""
    nodes = [{"id": "hub", "label": "Maya", "kind": "entity", "role": "seed"}]
    nodes += [{"id": f"n{i}", "label": f"physiotherapist number {i}", "kind": "entity", "role": "seed"}
              for i in range(n)]
    edges = [{"source": "hub", "target": f"n{i}", "label": "knows"} for i in range(n)]
    edges += [{"source": f"n{i}", "target": f"n{(i + 1) % n}", "label": "near"} for i in range(n)]
    return {"nodes": nodes, "edges": edges}


def test_graph_labels_never_overlap_and_the_frame_holds_everything(tmp_path):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page_html = graph_html(crowded(), height=480)
    try:
        with launch() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for _ in range(3):  # vis-network seeds each layout at random: three layouts, three chances to overlap
                page.set_content(page_html)
                page.wait_for_function("() => window.__memcoreFitted === true && window.__memcoreSettled === true",
                                       timeout=90_000)  # the simulation stopped and labels were decluttered there
                page.wait_for_timeout(1600)  # the timed fits (at 0.4 s and 1.5 s) ran too
                res = page.evaluate(LABELS)
                page.screenshot(path=str(shots / "graph-crowded.png"))
                assert res["hidden"] > 0 and res["shown"] >= 3, res  # crowded: some labels left out, some kept
                assert not res["meet"], res  # no two drawn labels overlap (as vis-network measures them)

            frame = frame_height(480)
            page.set_content(f'<iframe id="f" style="width:860px;height:{frame}px;border:0" '
                             f'srcdoc="{html.escape(page_html)}"></iframe>')
            inner = page.frame_locator("#f")
            inner.locator("#mynetwork canvas").wait_for(timeout=60_000)
            tall = page.evaluate("() => document.getElementById('f').contentDocument.documentElement.scrollHeight")
            assert tall <= frame, (tall, frame)  # nothing below the frame's edge: no clipped bottom label
            page.screenshot(path=str(shots / "graph-framed.png"))

            fig = __import__("memcore.systems.xmemory.view", fromlist=["x"]).hierarchy_sunburst(end_of_demo())
            page.set_content(plotly.io.to_html(fig, include_plotlyjs=True, full_html=True))
            page.locator(".slice").first.wait_for(timeout=60_000)
            page.wait_for_timeout(500)
            drawn = page.evaluate("() => [...document.querySelectorAll('.slice text')].filter(t => "
                                  "t.textContent.trim()).length")
            page.screenshot(path=str(shots / "sunburst-20-themes.png"))
            assert drawn == sum(1 for x in fig.data[0].labels if x) > 20  # every label that fits, nothing else
    finally:
        keep_screenshots(shots)
