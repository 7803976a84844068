"""Layouts that fit from 1 to 10 systems at 1280 px (issue 23 item 5), in headless Debian chromium: Compare's cards
wrap onto several rows with every system name on one line and every badge whole; Replay's per-system metrics keep
their labels and its charts show every legend entry without scrolling. The tenth system comes from a test-only
plugin (an entry point in a temporary site directory on the app's PYTHONPATH), as a user's plugin would.

Skips when /usr/bin/chromium is absent. Screenshots go to the test's tmp dir (and to $MEMCORE_SCREENSHOTS).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser_util import (
    ROOT,
    app_server,
    keep_screenshots,
    launch,
    shoot,
    skip_without_chromium,
    wait_text,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

VARIANT = "naive_rag_session_long_variant"  # a long name: the widest a card has to hold
PLUGIN = f'''from memcore.systems.naive_rag import NaiveRAGSessionSystem


class LongVariant(NaiveRAGSessionSystem):
    """naive_rag_session under a long name: a tenth system for layout tests."""

    name = "{VARIANT}"
    title = "Session RAG (a long-named test variant)"
    rank = 5000
'''
# Every drawn box of the cards and metrics: a name or badge that wraps has more than one line box; one that is cut
# is wider inside than its box, or sticks out of its card.
BOXES = """(sel) => {
  const lines = (el) => {  // line boxes of the element's text (an icon beside it is not a line of its own)
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), mids = [];
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      if (!t.textContent.trim() || t.parentElement.closest("[data-testid='stIconMaterial']")) continue;
      const r = document.createRange(); r.selectNodeContents(t);
      mids.push(...[...r.getClientRects()].filter(x => x.width > 0).map(x => (x.top + x.bottom) / 2));
    }
    const size = parseFloat(getComputedStyle(el).fontSize);
    return mids.sort((a, b) => a - b).filter((m, i) => i === 0 || m - mids[i - 1] > 0.6 * size).length;
  };
  const out = [];
  for (const card of document.querySelectorAll(sel)) {
    const box = card.getBoundingClientRect();
    const els = [...card.querySelectorAll("strong, [data-testid='stMetricLabel'] p, a[data-testid='stBaseLinkButton-secondary'] p")];
    els.push(...[...card.querySelectorAll("span")].filter(s => /badge/i.test(s.className) || s.dataset.testid === 'stBadge'));
    for (const el of els) {
      const r = el.getBoundingClientRect();
      out.push({text: el.innerText, lines: lines(el), cut: el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0,
                out: r.right > box.right + 1 || r.left < box.left - 1});
    }
  }
  return out;
}"""
VEGA_LEGEND = """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg.marks")].flatMap(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll(".role-legend")].map(g => {
    const r = g.getBoundingClientRect();
    const labels = [...g.querySelectorAll(".role-legend-label text")];
    return {entries: labels.length, cut: labels.filter(t => t.textContent.endsWith("…")).map(t => t.textContent),
            out: r.bottom > box.bottom + 1 || r.right > box.right + 1 || r.left < box.left - 1};
  });
})"""


def _plugin_site(tmp: Path) -> Path:
    site = tmp / "site"
    (site / "memcore_layout_variant.py").parent.mkdir(parents=True, exist_ok=True)
    (site / "memcore_layout_variant.py").write_text(PLUGIN)
    info = site / "memcore_layout_variant-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: memcore-layout-variant\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[memcore.systems]\nlong_variant = memcore_layout_variant:LongVariant\n")
    return site


def _systems(env: dict) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "memcore.cli", "systems"], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line and not line.startswith(" ")]


@pytest.fixture
def ten(tmp_path, monkeypatch, plugins):
    """Ten registered systems (nine of memcore and its example plugin, one test plugin), all built on the demo."""
    site = _plugin_site(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(site), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    env = {**os.environ, "MEMCORE_LLM_PROVIDER": "offline"}
    names = _systems(env)
    if len(names) < 10:  # without the example plugin (not installed) there are nine
        pytest.skip(f"{len(names)} systems registered: {names}")
    store = tmp_path / "store"
    subprocess.run([sys.executable, "-m", "memcore.cli", "ingest", "demo", "--systems", "all", "--store", str(store)],
                   env=env, cwd=ROOT, check=True, capture_output=True)
    return store, names[:10]


def test_compare_and_replay_fit_1_5_and_10_systems_at_1280px(ten, tmp_path):
    store, names = ten
    assert VARIANT in names
    shots = tmp_path / "screenshots"
    try:
        with app_server(store) as base, launch() as browser:
            page = browser.new_context(viewport={"width": 1280, "height": 2200}).new_page()
            for n in (1, 5, 10):
                picked = names[-n:]  # always the long-named one
                page.goto(f"{base}/compare?conv=demo&q=demo:q0&run=1&systems={','.join(picked)}",
                          wait_until="domcontentloaded")
                cards = "[class*='st-key-cmp_card_']"
                page.locator(cards).nth(n - 1).wait_for(timeout=300_000)
                wait_text(page, "Full trace", 60)
                page.wait_for_timeout(1500)
                shoot(page, shots, f"compare-{n}")
                boxes = page.evaluate(BOXES, cards)
                assert any(b["text"] == VARIANT for b in boxes), boxes
                assert sum(1 for b in boxes if "hit" in b["text"] or "miss" in b["text"]) >= n  # a badge per card
                bad = [b for b in boxes if b["lines"] > 1 or b["cut"] or b["out"]]
                assert not bad, (n, bad)
                rows = page.evaluate(f"""() => new Set([...document.querySelectorAll("{cards}")]
                    .map(c => Math.round(c.getBoundingClientRect().top))).size""")
                assert rows == -(-n // 3)  # three cards a row

                page.goto(f"{base}/replay?conv=demo&step=30&systems={','.join(picked)}", wait_until="domcontentloaded")
                page.locator("[data-testid='stMetric']").nth(n - 1).wait_for(timeout=120_000)
                page.locator("[data-testid='stVegaLiteChart'] svg.marks").first.wait_for(timeout=60_000)
                page.wait_for_timeout(1500)
                shoot(page, shots, f"replay-{n}")
                metrics = page.evaluate(BOXES, "[class*='st-key-rp_stat_']")
                assert sorted(m["text"] for m in metrics if m["text"] in picked) == sorted(picked)  # every label
                bad = [m for m in metrics if m["lines"] > 1 or m["cut"] or m["out"]]
                assert not bad, (n, bad)
                for i, chart in enumerate(page.locator("[data-testid='stVegaLiteChart']").all()):
                    chart.screenshot(path=str(shots / f"replay-{n}-chart{i}.png"))
                legends = page.evaluate(VEGA_LEGEND)
                assert legends and all(g["entries"] and not g["out"] and not g["cut"] for g in legends), (n, legends)
                # every system's colour entry is there, none cut
                assert sum(g["entries"] for g in legends) >= n, (n, legends)
    finally:
        keep_screenshots(shots)
