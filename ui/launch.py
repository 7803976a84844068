"""Start the app with its slow imports done before the first visit.

`streamlit run app.py` imports nothing until a browser connects, so the first visitor waits for
lancedb, pandas, plotly and memcore (~1 s). `python -m ui.launch [streamlit options]` imports them
first, then starts the same server; `./run.sh` uses it. It also imports every ui module (the pages
import their views when they first run) and draws one chart of each trace type the app uses (plotly
imports its validators and builds its templates on the first figure: 0.3-0.7 s of the first chart page
on a busy machine) and loads the token counter's vocabulary, so the first visitor's pages only run their own code.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"
WARM_MODULES = ("pandas", "plotly.graph_objects", "plotly.io", "plotly.tools", "lancedb", "memcore.workbench",
                "memcore.viz.replay", "memcore.viz.graph", "memcore.viz.views", "memcore.eval")


def warm_ui_modules() -> None:
    """Import every module of the ui package (the view modules the pages import on their first run)."""
    import importlib
    import logging
    import pkgutil

    import ui

    # st.cache_data/cache_resource check their options against the runtime's storage when they decorate and
    # warn "No runtime found" before the server starts; the caches themselves are made at call time, in it
    quiet = [logging.getLogger(f"streamlit.runtime.caching.{m}") for m in ("cache_data_api", "cache_resource_api")]
    levels = [q.level for q in quiet]
    for q in quiet:
        q.setLevel(logging.ERROR)
    try:
        for mod in pkgutil.iter_modules(ui.__path__):
            if mod.name != "launch":
                importlib.import_module(f"ui.{mod.name}")
    finally:
        for q, level in zip(quiet, levels, strict=True):
            q.setLevel(level)


def warm_charts() -> None:
    """Build, style and serialise (as st.plotly_chart does) one figure holding every trace type the app draws,
    from pandas data: plotly's lazily imported validators, templates and pandas adapters load here."""
    import pandas as pd
    import plotly.graph_objects as go
    import plotly.io

    from memcore.viz import theme

    df = pd.DataFrame({"x": ["a", "b"], "y": [1, 2]})
    fig = go.Figure([go.Bar(x=df["x"], y=df["y"]), go.Scatter(x=df["x"], y=df["y"], mode="lines+markers"),
                     go.Heatmap(z=[[1, 2], [3, 4]]), go.Sunburst(labels=["a", "b"], parents=["", "a"])])
    fig.add_annotation(text="warm", x=0, y=0)
    fig.add_shape(type="line", x0=0, x1=1, y0=0, y1=1)
    plotly.io.to_json(theme.style(fig, title="warm"), validate=False)


def warm(log: bool = True) -> float:
    """Import the app's heavy modules, every system and view (then keep them out of GC passes); returns seconds.

    The MiniLM embedding model (the default embedder) is loaded here too, before the server answers: loaded
    in the background after the first page (app.py's fallback under plain `streamlit run`), torch competed
    with the next first visits and made them 2-5x slower on a busy machine (bench/app_latency.py --pages-only).
    """
    t0 = time.perf_counter()
    import importlib

    for name in WARM_MODULES:
        importlib.import_module(name)
    from memcore.systems import load_all
    from memcore.viz.views import load_views

    load_all()
    load_views()  # the built-in views (memcore.viz.baselines, each system package's view module) and the plugins'
    warm_ui_modules()
    warm_charts()
    from memcore.text.tokens import count_tokens

    count_tokens("warm")  # quicktok reads its BPE vocabulary on first use: ~0.4 s of the first Ask, else
    from memcore.settings import Settings

    if Settings().embedder == "minilm":  # torch and the model, before serving: never while a first page draws
        from memcore.embed import start_model_preload

        start_model_preload().join()
    gc.freeze()  # the objects of imported modules never need collecting: keep them out of every GC pass
    secs = time.perf_counter() - t0
    if log:
        print(f"memcore: imports warmed in {secs:.1f} s", file=sys.stderr, flush=True)
    return secs


PROFILE_ENV = "MEMCORE_PROFILE"


class RunTimer:
    """Timing of one script run of the app, for finding where a page's time goes (bench/app_latency.py).

    $MEMCORE_PROFILE unset: does nothing. Set: `done(page)` prints `memcore-run page=<p> s=<seconds> t=<epoch>`
    to stderr (the run from the app script's first line to the page drawn). Set to a directory: `profile()`
    also writes the page's cProfile stats there as `<epoch>-<page>.prof`."""

    def __init__(self) -> None:
        self.setting = os.environ.get(PROFILE_ENV, "")
        self.t0 = time.perf_counter()
        self.stats: object = None

    @contextlib.contextmanager
    def profile(self) -> Iterator[None]:
        """Run the body under cProfile when $MEMCORE_PROFILE names a directory."""
        if not (self.setting and os.path.isdir(self.setting)):
            yield
            return
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
        try:
            yield
        finally:
            prof.disable()
            self.stats = prof

    def done(self, page: str) -> None:
        """Report the run (and write its profile) when $MEMCORE_PROFILE is set."""
        if not self.setting:
            return
        now = time.time()
        if self.stats is not None:
            self.stats.dump_stats(os.path.join(self.setting, f"{now:.3f}-{page}.prof"))  # type: ignore[attr-defined]
        print(f"memcore-run page={page} s={time.perf_counter() - self.t0:.3f} t={now:.3f}", file=sys.stderr,
              flush=True)


PREPARE_DEMO = "--prepare-demo"  # ./run.sh passes it: the demo's memory is built before the app first serves


def _say(line: str) -> None:
    print(f"memcore: {line}", file=sys.stderr, flush=True)


def prepare_demo(say: Callable[[str], None] = _say) -> dict[str, str]:
    """Build every registered system's memory of the built-in demo in the app's default store (the
    environment's settings, as the app opens them) when it is missing; returns {system: what happened}.

    Idempotent: a complete memory is found by its checkpoint and skipped (~0.3 s for all of them); an
    interrupted build resumes at its last commit. Only with the offline engine (the app's default): with
    another provider building would call the model, so nothing is built and the app's Build buttons remain.
    A system that fails is reported and left unbuilt (the app shows it as not built); the others are built.
    """
    from memcore.ingest import EMBEDDING
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    settings = Settings()
    if settings.provider != "offline":
        say(f"the demo's memory is prepared for the offline engine only; with the {settings.provider} provider "
            "build it in the app (Replay, Ask or Compare: Build)")
        return {}
    wb = Workbench(settings)
    conv = wb.load_demo()
    todo = [s for s in wb.systems() if not wb.is_ingested(s, conv)]
    out: dict[str, str] = {}
    if todo:
        say(f"building the demo's memory for {len(todo)} system(s) in {settings.store_uri} "
            "(once; later starts find it built)")

    def stage(what: str, done: int, total: int) -> None:
        if what == EMBEDDING and done == total:
            say(f"  the demo's {total} turns embedded (shared by every system)")

    for i, name in enumerate(todo):
        t0 = time.perf_counter()
        try:  # another process building it (MemoryBusy) is reported like any failure, never waited for
            rep = wb.ingest(name, conv, wait=False, stage=stage)
            out[name] = rep.message or f"built in {rep.seconds:.1f} s"
        except Exception as e:
            out[name] = f"not built ({type(e).__name__}: {e}); build it in the app"
        say(f"  {name} ({i + 1}/{len(todo)}): {out[name]} [{time.perf_counter() - t0:.1f} s]")
    wb.ledger.flush()
    return out


def main(argv: list[str] | None = None) -> int:
    """Warm the imports (and with --prepare-demo build the demo's memory), then run `streamlit run app.py <argv>`."""
    from streamlit.web import cli

    args = list(sys.argv[1:] if argv is None else argv)
    prepare = PREPARE_DEMO in args
    args = [a for a in args if a != PREPARE_DEMO]
    try:
        warm()
    except Exception as e:
        print(f"memcore: warm-up skipped ({type(e).__name__}: {e})", file=sys.stderr, flush=True)
    if prepare:
        try:
            prepare_demo()
        except Exception as e:
            _say(f"the demo's memory was not prepared ({type(e).__name__}: {e}); build it in the app")
    sys.argv = ["streamlit", "run", str(APP), *args]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
