"""Where a Replay step's time and bytes go, per element: for each step back from the last turn (the default view,
or Growth), the websocket messages the step sent (decoded Streamlit ForwardMsgs: KB per element type, a chart sent
again or as a reference to the one the browser holds), the DOM mutations per element (a redrawn chart makes
thousands), ms from the click to the turn shown and to the last DOM change (as bench/app_latency.py measures), and
the "client tail": the last DOM change after the last message arrived (drawing in the browser, less bound to the
server's load than the step's total).

    .venv/bin/python bench/replay_step_elements.py --store /path/to/store [--view Growth] [--steps 8]

Needs /usr/bin/chromium. The store is only read (copy a shared one first: the app may write its caches). State the
machine load (`uptime`) with the numbers.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser_util import app_server, launch  # noqa: E402

READY = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  if (!main || document.querySelector("[data-testid='stStatusWidgetRunningIcon'], [data-testid='stSkeleton']")) return false;
  return main.querySelectorAll("[data-testid='stElementContainer']").length > 2;
}"""

# arrival time of every websocket message, in the page's clock
WS_TIMES = """(() => { const W = window.WebSocket; window.__ws = [];
  window.WebSocket = function (...a) { const s = new W(...a);
    s.addEventListener('message', () => window.__ws.push(performance.now())); return s; };
  window.WebSocket.prototype = W.prototype; Object.assign(window.WebSocket, W); })()"""

# click, then record per element container (its st-key class and first test id) the DOM mutations, until still
STEP = """async ([sel, text, quiet]) => {
  const name = (n) => { let e = n.nodeType === 1 ? n : n.parentElement;
    while (e && !(e.getAttribute && e.getAttribute('data-testid') === 'stElementContainer')) e = e.parentElement;
    if (!e) return '(outside the elements)';
    const k = [...e.classList].find((c) => c.startsWith('st-key-'));
    const inner = e.querySelector('[data-testid]');
    return (k ? k.slice(7) + ' ' : '') + (inner ? inner.getAttribute('data-testid') : '?'); };
  const t0 = performance.now(); window.__ws = [];
  let shown = null, last = t0; const per = {};
  return await new Promise((resolve) => {
    const finish = () => {
      if (performance.now() - last < quiet) { setTimeout(finish, quiet / 4); return; }
      obs.disconnect();
      resolve([shown - t0, last - t0, per, window.__ws.length ? window.__ws[window.__ws.length - 1] - t0 : 0]);
    };
    const obs = new MutationObserver((muts) => {
      last = performance.now();
      for (const m of muts) { const k = name(m.target); per[k] = (per[k] || 0) + 1; }
      if (shown === null && document.body.textContent.includes(text)) {
        requestAnimationFrame(() => { shown = performance.now(); last = Math.max(last, shown); setTimeout(finish, quiet); });
      }
    });
    obs.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
    document.querySelector(sel).click();
  });
}"""


def element_bytes(frames: list[bytes]) -> dict[str, int]:
    """Bytes per element type in a step's messages (`ref` + type: a message sent as a reference to a cached one)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    out: collections.Counter = collections.Counter()
    for raw in frames:
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "delta":
            delta = msg.delta
            kind = (delta.new_element.WhichOneof("type") if delta.WhichOneof("type") == "new_element"
                    else delta.WhichOneof("type"))
        out[kind] += len(raw)
    return dict(out)


def main() -> None:
    """Print, per step, the bytes per element type, the most mutated elements and the timings; then medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--view", default="default", choices=["default", "Growth"])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    os.environ["MEMCORE_EMBEDDER"] = args.embedder
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=str(args.store), embedder=args.embedder, llm_provider="offline"))
    n = int(wb.store.conversations()["n_turns"].max())
    frames: list[bytes] = []
    rows = []
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s); {n} turns; view {args.view}")
    with launch() as browser, app_server(args.store.resolve(), timeout=600) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.add_init_script(WS_TIMES)
        page.on("websocket", lambda ws: ws.on("framereceived",
                                              lambda p: frames.append(p) if isinstance(p, bytes) else None))
        page.goto(f"{base}/replay?step={n}", wait_until="commit")
        page.get_by_text(f"Turn {n} of {n}").first.wait_for(timeout=300_000)
        page.wait_for_function(READY, timeout=300_000, polling=50)
        if args.view == "Growth":
            page.get_by_role("radio", name="Growth", exact=True).first.click()
            page.wait_for_timeout(800)
            page.wait_for_function(READY, timeout=300_000, polling=50)
        page.wait_for_timeout(1500)
        for k in range(1, args.steps + 1):
            frames.clear()
            shown, drawn, per, last_msg = page.evaluate(STEP, [".st-key-rp_prev button", f"Turn {n - k} of {n}", 400])
            sizes = element_bytes(frames)
            rows.append((shown, drawn, drawn - last_msg, sum(sizes.values()) / 1024))
            big = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
            busy = sorted(per.items(), key=lambda kv: -kv[1])[:4]
            print(f"step {n - k}: shown {shown:.0f} ms, drawn {drawn:.0f} ms, client tail {drawn - last_msg:.0f} ms; "
                  f"{sum(sizes.values()) / 1024:.0f} KB: {', '.join(f'{t} {b / 1024:.1f}' for t, b in big)}; "
                  f"DOM mutations: {', '.join(f'{e} {c}' for e, c in busy)}", flush=True)
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print(f"medians: shown {med[0]:.0f} ms, drawn {med[1]:.0f} ms, client tail {med[2]:.0f} ms, {med[3]:.0f} KB per "
          f"step; load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
