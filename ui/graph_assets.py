"""Graph pages in the app load vis-network from the app's own server, once, instead of inlining it in every frame.

memcore.viz.graph.graph_html writes a standalone page (exports, offline files): vis-network's script (469 KB) and
stylesheet (220 KB) inlined, 703 KB for a graph of two nodes. A Replay step of a graph memory's Growth re-sent that in
its frame at every step (about 790 KB a step on the synthetic 10M chat). In the app, `served` swaps those two
inlined blocks for links to the same files under the app's static folder (`static/memcore-vis/`, Streamlit's
`server.enableStaticServing`, on this machine: no CDN), which the browser loads once and keeps. The files are
written from the very blocks graph_html inlines, so the frame draws with the same library; where they cannot be
written (a read-only install) or the blocks differ, the page is left standalone, as before.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from memcore.viz.graph import graph_html

STATIC = Path(__file__).resolve().parents[1] / "static"  # Streamlit serves <app.py's folder>/static at app/static
FOLDER = "memcore-vis"
_BLOCK = re.compile(r"<(script|style)>(.*?)</\1>", re.S)
_MIN_LIBRARY = 100_000  # an inlined block this long is the library, not the page's own code


def library_blocks(page: str) -> dict[str, str]:
    """The inlined library blocks of a graph_html page: {'script': vis-network.js, 'style': its CSS}."""
    return {m.group(1): m.group(2) for m in _BLOCK.finditer(page) if len(m.group(2)) >= _MIN_LIBRARY}


@functools.cache
def assets() -> dict[str, str] | None:
    """The library blocks, written once per process under static/memcore-vis/ (None: they could not be)."""
    blocks = library_blocks(graph_html({"nodes": [{"id": "a"}], "edges": []}))
    if set(blocks) != {"script", "style"}:
        return None
    try:
        folder = STATIC / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        for kind, name in (("script", "vis-network.min.js"), ("style", "vis-network.min.css")):
            path = folder / name
            if not path.exists() or path.read_text(encoding="utf-8") != blocks[kind]:
                tmp = path.with_suffix(path.suffix + ".tmp")
                tmp.write_text(blocks[kind], encoding="utf-8")
                tmp.replace(path)  # another server process may write the same file: whole or not at all
    except OSError:
        return None
    return blocks


def served(page: str, base_url_path: str = "") -> str:
    """`page` (graph_html's) with its inlined vis-network script and stylesheet replaced by links to the app's copy
    of them (under `base_url_path`, Streamlit's server.baseUrlPath); unchanged when those are not available or the
    page inlines another version of them."""
    blocks = assets()
    if blocks is None:
        return page
    root = "/" + "/".join(p for p in (base_url_path.strip("/"), "app/static", FOLDER) if p)
    css, js = f"<style>{blocks['style']}</style>", f"<script>{blocks['script']}</script>"
    if css not in page or js not in page:
        return page
    return page.replace(css, f'<link rel="stylesheet" href="{root}/vis-network.min.css">', 1) \
        .replace(js, f'<script src="{root}/vis-network.min.js"></script>', 1)


def frame(page: str, height: int) -> None:
    """Draw an HTML page (a graph_html page or any other) in an iframe, its vis-network loaded from the app when the
    app serves its static folder (.streamlit/config.toml; a server started without it keeps the page standalone)."""
    import streamlit as st

    if st.get_option("server.enableStaticServing"):
        page = served(page, str(st.get_option("server.baseUrlPath") or ""))
    st.iframe(page, height=height)
