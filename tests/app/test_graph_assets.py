"""Graph frames in the app load vis-network from the app's static folder (ui.graph_assets): the same library
graph_html inlines, written once; pages stay standalone where the files cannot be written."""

from __future__ import annotations

import pytest

from memcore.viz.graph import graph_html
from ui import graph_assets

PAGE = {"nodes": [{"id": "a", "label": "Alpha"}, {"id": "b", "label": "Beta"}],
        "edges": [{"source": "a", "target": "b", "label": "knows"}]}


@pytest.fixture
def static(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_assets, "STATIC", tmp_path / "static")
    graph_assets.assets.cache_clear()
    yield tmp_path / "static" / graph_assets.FOLDER
    graph_assets.assets.cache_clear()


def test_a_graph_page_links_the_apps_copy_of_its_library(static):
    page = graph_html(PAGE)
    blocks = graph_assets.library_blocks(page)
    assert set(blocks) == {"script", "style"}
    out = graph_assets.served(page, "/lab/")
    assert '<script src="/lab/app/static/memcore-vis/vis-network.min.js"></script>' in out
    assert '<link rel="stylesheet" href="/lab/app/static/memcore-vis/vis-network.min.css">' in out
    assert graph_assets.library_blocks(out) == {} and len(out) < len(page) // 20
    assert "Alpha" in out and "knows" in out and "neighbourhoodHighlight" in out  # the page's own data and code
    assert (static / "vis-network.min.js").read_text(encoding="utf-8") == blocks["script"]
    assert (static / "vis-network.min.css").read_text(encoding="utf-8") == blocks["style"]
    assert '"/app/static/memcore-vis/vis-network.min.js"' in graph_assets.served(page)


def test_other_pages_and_other_library_versions_are_left_standalone(static):
    assert graph_assets.served("<html><body>hi</body></html>") == "<html><body>hi</body></html>"
    page = graph_html(PAGE)
    script = graph_assets.library_blocks(page)["script"]
    other = page.replace(script, script + "\n// another build", 1)  # another version of the library inlined
    assert graph_assets.library_blocks(other)["script"] != script
    assert graph_assets.served(other) == other


def test_a_read_only_install_keeps_pages_standalone(tmp_path, monkeypatch):
    blocker = tmp_path / "static"
    blocker.write_text("not a folder")  # mkdir under it fails as on a read-only install
    monkeypatch.setattr(graph_assets, "STATIC", blocker)
    graph_assets.assets.cache_clear()
    try:
        page = graph_html(PAGE)
        assert graph_assets.assets() is None and graph_assets.served(page) == page
    finally:
        graph_assets.assets.cache_clear()


def test_a_server_without_static_serving_draws_the_standalone_page(static, monkeypatch):
    import streamlit as st

    drawn: list[str] = []
    monkeypatch.setattr(st, "iframe", lambda page, height: drawn.append(page))
    page = graph_html(PAGE)
    for enabled in (False, True):
        monkeypatch.setattr(st, "get_option", lambda name, on=enabled: on if name == "server.enableStaticServing" else "")
        graph_assets.frame(page, 400)
    assert drawn[0] == page and drawn[1] == graph_assets.served(page)
