"""Start the app with its slow imports and the embedding model warmed before the first visit.

`streamlit run app.py` imports nothing until a browser connects, so the first visitor waits for
lancedb, pandas, plotly, memcore and (with the default MiniLM embedder) torch and the model.
`python -m ui.launch [streamlit options]` starts the same server and does that work in a
background thread while the server comes up; `./run.sh` uses it.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"
WARM_MODULES = ("pandas", "plotly.graph_objects", "lancedb", "memcore.workbench", "memcore.viz.replay",
                "memcore.viz.graph", "memcore.viz.hierarchy", "memcore.viz.chains", "memcore.eval")


def warm(log: bool = True) -> float:
    """Import the app's heavy modules and load the configured embedder's model; returns seconds."""
    t0 = time.perf_counter()
    import importlib

    for name in WARM_MODULES:
        importlib.import_module(name)
    from memcore.settings import Settings
    from memcore.systems import load_all

    load_all()

    if Settings().embedder == "minilm":
        from memcore.embed import minilm_model

        minilm_model()
    gc.freeze()  # the ~500K objects of imported modules never need collecting: keep them out of every GC pass
    secs = time.perf_counter() - t0
    if log:
        print(f"memcore: warmed imports and embedder in {secs:.1f} s", file=sys.stderr, flush=True)
    return secs


def _warm_quietly() -> None:
    try:
        warm()
    except Exception as e:  # noqa: BLE001 - warming is an optimisation; the app reports real errors itself
        print(f"memcore: warm-up skipped ({type(e).__name__}: {e})", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run `streamlit run app.py <argv>` with the warm-up thread started first."""
    from streamlit.web import cli

    threading.Thread(target=_warm_quietly, name="memcore-warm", daemon=True).start()
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
