"""The current-step line over a Replay chart that stays the same from step to step.

A plotly chart whose figure changes is sent again and drawn anew in the browser (Streamlit names a chart by its
figure: a new figure is a new element, drawn from scratch). Replay's charts over every step (layers, construction
cost, events per step, the timeline strip) are therefore built once per memory state without the current step;
`step_line` draws the dashed line at the step over the drawn chart (a small script: a plotly chart's own x axis
places it, so zoom, resize and legends keep it in place; a Vega-Lite chart of memcore.viz.vega is placed by its plot
area's box and its fixed x domain, again whenever Vega redraws). Stepping then sends a few hundred bytes instead of
the chart (tens of KB; hundreds at 1,500 turns for the timeline) and the browser keeps the chart it drew.

If the script cannot place the line (the chart not drawn within 20 s, a plotly without the axis internals it
reads, a Vega chart without its plot frame), nothing is drawn over the chart: every caller also names the step in
the chart's caption.
"""

from __future__ import annotations

import hashlib
import json

import streamlit as st

# Finds the chart in the container keyed `key`, then draws (or moves) one absolutely placed dashed line at `step`
# over its plot area, from plotly's x axis data-to-pixel map or a Vega plot frame's box and the given x domain;
# re-placed after every redraw (zoom, resize).
_SCRIPT = """<script>(() => {
  const key = %(key)s, step = %(step)s, domain = %(domain)s;  // chart %(rev)s
  const steps = window.__memcoreStepLines = window.__memcoreStepLines || {};
  steps[key] = step;
  const lineIn = (host) => {
    let line = host.querySelector(':scope > .memcore-step-line');
    if (!line) {
      line = document.createElement('div');
      line.className = "memcore-step-line";
      line.setAttribute('data-testid', 'memcoreStepLine');
      line.style.cssText = "position:absolute;width:0;border-left:2px dashed #333333;pointer-events:none;z-index:2";
      host.appendChild(line);
    }
    return line;
  };
  const show = (line, s, x, lo, hi, top, bottom) => {
    line.dataset.step = String(s);
    line.style.display = x >= lo - 1 && x <= hi + 1 ? 'block' : 'none';
    line.style.left = (x - 1) + "px";
    line.style.top = top + "px";
    line.style.height = Math.max(0, bottom - top) + "px";
  };
  const placePlotly = (gd) => {  // plotly: the x axis' own data-to-pixel map
    const fl = gd._fullLayout, xa = fl && fl.xaxis;
    const box = gd.querySelector('.svg-container');
    if (!xa || !xa.l2p || !box) return false;
    const ys = Object.keys(fl).filter((k) => /^yaxis\\d*$/.test(k)).map((k) => fl[k]);
    const top = Math.min(...ys.map((a) => a._offset)), bottom = Math.max(...ys.map((a) => a._offset + a._length));
    const s = steps[key], x = xa._offset + xa.l2p(s);
    show(lineIn(box), s, x, xa._offset, xa._offset + xa._length, top, bottom);
    return true;
  };
  const placeVega = (chart) => {  // Vega-Lite: a single view whose x scale is `domain`, unpadded (memcore.viz.vega)
    const plot = chart.querySelector('.role-frame.root > g > path.background');
    const host = chart.parentElement;
    if (!plot || !host || !domain) return false;
    if (getComputedStyle(host).position === 'static') host.style.position = "relative";
    const r = plot.getBoundingClientRect(), h = host.getBoundingClientRect();
    if (!r.width) return false;
    const s = steps[key], left = r.left - h.left;
    const x = left + (s - domain[0]) / Math.max(1e-9, domain[1] - domain[0]) * r.width;
    show(lineIn(host), s, x, left, left + r.width, r.top - h.top, r.bottom - h.top);
    return true;
  };
  const t0 = performance.now();
  const attempt = () => {
    const root = document.querySelector('.st-key-' + key);
    const gd = root && root.querySelector('.js-plotly-plot');
    if (gd && placePlotly(gd)) {
      if (gd.__memcoreStepLine !== key && gd.on) {
        gd.__memcoreStepLine = key;
        gd.on('plotly_afterplot', () => placePlotly(gd));
      }
      return;
    }
    const chart = root && root.querySelector("[data-testid='stVegaLiteChart']");
    if (chart && placeVega(chart)) {
      if (chart.__memcoreStepLine !== key) {  // Vega redraws on a resize: place the line again after it
        chart.__memcoreStepLine = key;
        let queued = false;
        new MutationObserver(() => {
          if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; placeVega(chart); }); }
        }).observe(chart, {subtree: true, childList: true, attributes: true});
      }
      return;
    }
    if (performance.now() - t0 < 20000) setTimeout(attempt, 50);
  };
  attempt();
})();</script>
<style>.st-key-%(hide)s { display: none; }</style>"""


def step_line(chart_key: str, step: int, chart: object = "", domain: tuple[float, float] | None = None) -> None:
    """Draw the dashed current-step line over the chart drawn with `key=chart_key` (in the same fragment run); its
    own container is hidden, so it takes no room on the page. `chart` names the figure drawn (its cache key): a
    new figure at the same step (a filter changed) is a new script run, which finds the newly drawn chart. A Vega-Lite
    chart (memcore.viz.vega) needs its x scale's `domain`; a plotly chart's axis says it."""
    hide = f"{chart_key}_step_line"
    rev = hashlib.sha1(repr(chart).encode()).hexdigest()[:12]
    with st.container(key=hide):
        st.html(_SCRIPT % {"key": json.dumps(chart_key), "step": json.dumps(int(step)), "hide": hide, "rev": rev,
                          "domain": json.dumps(list(domain) if domain else None)},
                unsafe_allow_javascript=True)
