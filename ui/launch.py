"""Start the app with its slow imports done before the first visit.

`streamlit run app.py` imports nothing until a browser connects, so the first visitor waits for
lancedb, pandas, plotly and memcore (~1 s). `python -m ui.launch [streamlit options]` imports them
first, then starts the same server; `./run.sh` uses it.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"
WARM_MODULES = ("pandas", "plotly.graph_objects", "lancedb", "memcore.workbench", "memcore.viz.replay",
                "memcore.viz.graph", "memcore.viz.hierarchy", "memcore.viz.chains", "memcore.eval")


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
    load_views()  # every memcore.viz module: the systems' views register themselves
    from memcore.settings import Settings

    if Settings().embedder == "minilm":  # torch and the model, before serving: never while a first page draws
        from memcore.embed import start_model_preload

        start_model_preload().join()
    gc.freeze()  # the objects of imported modules never need collecting: keep them out of every GC pass
    secs = time.perf_counter() - t0
    if log:
        print(f"memcore: imports warmed in {secs:.1f} s", file=sys.stderr, flush=True)
    return secs


def main(argv: list[str] | None = None) -> int:
    """Warm the imports, then run `streamlit run app.py <argv>`."""
    from streamlit.web import cli

    try:
        warm()
    except Exception as e:  # noqa: BLE001 - warming is an optimisation; the app reports real errors itself
        print(f"memcore: warm-up skipped ({type(e).__name__}: {e})", file=sys.stderr, flush=True)
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
