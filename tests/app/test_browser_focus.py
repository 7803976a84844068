"""Issue 35 in headless Debian chromium on the demo (xMemory + MemWeaver built in-process): the Replay timeline jumps
to a split event (button and click on its tick), the hierarchy drills into a theme whose facts' labels are all
drawn, and an entity's neighbourhood draws its relations' labels. Screenshots at 1280 px go to the test's tmp dir
(and to $MEMCORE_SCREENSHOTS).

Skips when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import json

import pytest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.app.test_browser_layouts import keep_screenshots
from tests.browser_util import app_server, launch, pick, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

REGIONS = """(key) => {  // every region of the hierarchy drawn inside the chart: its label, column and centre
  const root = document.querySelector(`.st-key-${key}`);
  if (!root || !root.querySelector('.main-svg')) return [];
  const box = root.querySelector('.main-svg').getBoundingClientRect();
  // the labels: the text trace's points (one per region, drawn over the bars)
  const notes = [...root.querySelectorAll('.scatterlayer .textpoint')].map(a => [a.getBoundingClientRect(), a.textContent]);
  return [...root.querySelectorAll('.barlayer .point')].map(p => {
    const b = p.getBoundingClientRect();  // its label: the text drawn inside it
    const t = notes.find(([n]) => n.left >= b.left - 1 && n.left < b.right && n.top + n.height / 2 > b.top
                                  && n.top + n.height / 2 < b.bottom);
    return {text: t ? t[1] : '', left: Math.round(b.left), x: b.left + Math.min(30, b.width / 2),
            y: b.top + b.height / 2, inside: b.width > 1 && b.height > 1 && b.left >= box.left - 1
              && b.right <= box.right + 1 && b.top >= box.top - 1 && b.bottom <= box.bottom + 1}; })
    .filter(r => r.inside);
}"""

POINT_OF = """([key, row]) => {  // the centre of the first tick of a timeline row, in page pixels
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);  // null until plotly has drawn it
  if (!gd || !gd._fullData) return null;
  const i = gd._fullData.findIndex(t => t.y && t.y[0] === row);
  const trace = i < 0 ? null : gd.querySelectorAll('.scatterlayer .trace')[i];
  const pt = trace ? trace.querySelector('path.point') : null;
  if (!pt) return null;
  const b = pt.getBoundingClientRect();
  return {x: b.left + b.width / 2, y: b.top + b.height / 2, step: Number(gd._fullData[i].x[0])};
}"""


def regions(page, at_least: int, timeout: float = 120_000) -> list[dict]:
    """The hierarchy's regions drawn inside its chart, once there are at least `at_least` (the plot's div is in the
    page before plotly draws into it, and a rerun redraws it: read them only when drawn)."""
    return page.wait_for_function(f"() => {{ const r = ({REGIONS})('gr_xmemory_drill'); "
                                  f"return r.length >= {at_least} ? r : null; }}", timeout=timeout).json_value()


MEETS = """() => {  // drawn labels (nodes' and edges') whose boxes meet, as vis-network measures them
  const box = (m) => { const s = m.labelModule.size; return {left: s.left, right: s.left + s.width, top: s.top,
                                                              bottom: s.top + s.height}; };
  const all = [...nodes.get().filter(n => n.label && n.label.trim()).map(n => box(network.body.nodes[n.id])),
               ...edges.get().filter(e => e.label && e.label.trim()).map(e => box(network.body.edges[e.id]))];
  const drawn = all.filter(a => a.right > a.left);
  let meet = 0;
  for (let i = 0; i < drawn.length; i++) for (let j = i + 1; j < drawn.length; j++) {
    const a = drawn[i], b = drawn[j];
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) meet++;
  }
  return [drawn.length, meet];
}"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("focus")
    store = tmp / "store"
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    conv = wb.load_demo()
    for s in ("xmemory", "memweaver"):
        wb.ingest(s, conv)
    splits = sorted({e.step for e in wb.memory("xmemory", conv).events() if e.kind == "split"})
    return tmp, store, conv, splits


def test_timeline_hierarchy_and_neighbourhood(built):
    tmp, store, conv, splits = built
    n = len(conv.turns)
    shots = tmp / "screenshots"
    assert splits, "the demo's xMemory splits a theme"
    try:
        with app_server(store) as base, launch() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.set_default_timeout(120_000)  # a shared, busy machine
            page.goto(f"{base}/replay?step=1", wait_until="domcontentloaded")
            wait_text(page, f"Turn 1 of {n}", 300)
            page.get_by_role("radio", name="Timeline").click()  # the strip is Replay's Timeline view
            page.locator(".st-key-rp_timeline .js-plotly-plot").first.wait_for(timeout=120_000)
            # only xMemory on the timeline: its next consolidation event is its first split
            page.locator(".st-key-rp_tl_systems").get_by_role("button", name="memweaver").click()
            page.wait_for_timeout(1500)
            page.get_by_role("button", name="Next consolidation event").click()
            wait_text(page, f"Turn {splits[0]} of {n}", 120)
            assert page.get_by_text("split", exact=True).count() >= 1  # the step's event table names the split
            shoot(page, shots, "timeline-next-split")
            # back to the start, then a click on the split row's tick jumps there
            page.locator(".st-key-rp_first button").first.click()
            wait_text(page, f"Before turn 1 of {n}", 60)
            page.wait_for_timeout(1000)
            page.locator(".st-key-rp_timeline .js-plotly-plot").first.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            pt = page.wait_for_function(POINT_OF, arg=["rp_timeline", "xmemory · split"], timeout=60_000).json_value()
            page.mouse.move(pt["x"], pt["y"])
            page.wait_for_timeout(300)
            page.mouse.click(pt["x"], pt["y"])
            wait_text(page, f"Turn {int(pt['step'])} of {n}", 120)
            assert int(pt["step"]) == splits[0]

            # the hierarchy at the last turn: drill into a theme, read its facts' labels
            from playwright.sync_api import (
                TimeoutError as PlaywrightTimeout,  # lazy: no chromium, no playwright
            )

            drill = page.locator(".st-key-gr_xmemory_drill .js-plotly-plot").first
            for attempt in range(3):  # KNOWN FLAKE (session 17): now and then the chart stays undrawn; a person reloads
                page.goto(f"{base}/replay?step={n}", wait_until="domcontentloaded")
                wait_text(page, f"Turn {n} of {n}", 300)
                page.get_by_role("radio", name="Growth").click()
                page.locator(".st-key-gr_system").get_by_role("radio", name="xMemory").click()  # Growth's picker
                try:
                    drill.wait_for(timeout=60_000)
                    page.wait_for_timeout(800)
                    top = regions(page, 3, 45_000)  # plotly draws into the plot's div after Streamlit places it
                    break
                except PlaywrightTimeout:
                    shoot(page, shots, f"hierarchy-undrawn-{attempt}")
                    assert attempt < 2, "the hierarchy was not drawn in three visits"
            assert all(r["text"].strip() for r in top), top  # every region on screen labelled
            themes = [r for r in top if r["left"] == min(t["left"] for t in top)]  # the left column
            assert len(themes) >= 2 and any("more" not in r["text"] for r in themes)
            drill.scroll_into_view_if_needed()
            shoot(page, shots, "hierarchy-themes")
            theme = next(r for r in regions(page, 3) if r["left"] == themes[0]["left"] and "more" not in r["text"])
            name = theme["text"].split(" ·")[0].strip()
            page.mouse.click(theme["x"], theme["y"])  # a person clicks the theme: the server draws its facts
            crumbs = page.locator(".st-key-gr_xmemory_crumbs")
            crumbs.get_by_role("button", name="all themes").wait_for(timeout=120_000)  # the path climbs back
            here = crumbs.locator("strong").last.text_content().rstrip("…")  # the theme, named above the chart
            assert here[:15] in theme["text"] or name.lstrip("…")[:15] in here, (here, name)
            # the breadcrumb is drawn before the chart is replaced: wait for the drilled chart (no theme region left)
            page.wait_for_function(f"() => {{ const r = ({REGIONS})('gr_xmemory_drill'); return r.length >= 1 && "
                                   f"r.every(x => x.text !== {json.dumps(theme['text'])}); }}", timeout=120_000)
            page.wait_for_timeout(800)
            inside = regions(page, 1)
            facts = [r["text"] for r in inside if r["left"] == min(t["left"] for t in inside)]
            assert facts and all(t.strip() for t in facts), inside  # the theme's facts, each labelled
            assert all(r["text"] != theme["text"] for r in inside)  # the theme itself is the path above, not a band
            shoot(page, shots, "hierarchy-theme-facts")
            crumbs.get_by_role("button", name="all themes").click()  # and back up
            page.wait_for_function(f"() => ({REGIONS})('gr_xmemory_drill').some(r => r.text === {json.dumps(theme['text'])})",
                                   timeout=120_000)

            # MemWeaver: an entity's neighbourhood with labelled relations
            page.locator(".st-key-gr_system").get_by_role("radio", name="MemWeaver").click()
            box = page.locator(".st-key-gr_memweaver_ego").first
            box.wait_for(timeout=120_000)
            pick(page, box, 1)
            frame = page.locator("iframe").last
            frame.wait_for(timeout=60_000)
            inner = frame.content_frame
            inner.locator("canvas").first.wait_for(timeout=60_000)
            inner.locator("body").evaluate("() => new Promise(r => { const w = () => window.__memcoreSettled ? r() : "
                                           "setTimeout(w, 100); w(); })")
            shown = inner.locator("body").evaluate(
                "() => edges.get().filter(e => e.label && e.label.trim()).map(e => e.label)")
            assert shown, "at least one relation label drawn"
            assert all(len(lab) <= 40 for lab in shown)
            drawn, meet = inner.locator("body").evaluate(MEETS)
            assert drawn > len(shown) // 2 and meet == 0, (drawn, meet)  # no drawn label overlaps another
            frame.scroll_into_view_if_needed()
            shoot(page, shots, "neighbourhood")
    finally:
        keep_screenshots(shots)
