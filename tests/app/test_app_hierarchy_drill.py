"""Replay's Growth hierarchy drilled on the server (ui.hierarchy_view, issue 35): the chart holds only the part under
the drilled node, a breadcrumb climbs back, and a click on a region (plotly's selection) drills; AppTest on the demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

from streamlit.testing.v1 import AppTest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.viz.hierarchy import HNode, focus_view
from memcore.workbench import Workbench
from tests.app.html_util import html_tables

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _chart(at: AppTest) -> dict:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    charts = [s for s in specs if s["data"] and s["data"][0].get("orientation") == "h" and "customdata" in s["data"][0]]
    assert len(charts) == 1  # the hierarchy's focus view: horizontal bars, each region's drill path its customdata
    return charts[0]


def test_growth_hierarchy_drills_on_the_server_and_climbs_back(tmp_path, monkeypatch):
    store = tmp_path / "store"
    for k, v in (("MEMCORE_STORE", str(store)), ("MEMCORE_EMBEDDER", "hashing"), ("MEMCORE_LLM_PROVIDER", "offline")):
        monkeypatch.setenv(k, v)
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"), embedder=HashingEmbedder())
    conv = wb.load_demo()
    wb.ingest("xmemory", conv)
    n = len(conv.turns)
    mem = wb.memory("xmemory", conv)
    themes = mem.items("theme", n, with_vectors=False)
    facts = [s for s in mem.items("semantic", n, with_vectors=False) if s.metadata.get("theme") in {t.id for t in themes}]
    theme = max(themes, key=lambda t: sum(s.metadata.get("theme") == t.id for s in facts))
    mine = {s.id for s in facts if s.metadata.get("theme") == theme.id}

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/replay.py").run()
    at.multiselect(key="replay_systems").set_value(["xmemory"]).run()
    at.slider(key="replay_step").set_value(n).run()
    at.session_state["rp_view"] = "Growth"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    top = _chart(at)["data"][0]
    assert "title" not in _chart(at)["layout"]  # the counts are written above the chart: a step adding a fact
    assert [m.value for m in at.markdown if m.value.startswith(r"**xMemory hierarchy\: ")]  # nor redraws it
    assert theme.id in [c.split("\t")[-1] for c in top["customdata"]]
    assert max(len(c.split("\t")) for c in top["customdata"]) == 2  # themes and their facts, no episode or turn
    assert [b.label for b in at.button if b.key and b.key.startswith("gr_xmemory_crumb")] == []  # at the top

    at.session_state["gr_xmemory_hpath"] = [theme.id]  # what a click on the theme's region sets
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    inside = _chart(at)["data"][0]
    paths = [c.split("\t") for c in inside["customdata"]]
    assert all(p[0] == theme.id for p in paths)  # only the theme's part of the tree was sent
    assert {p[1] for p in paths if not p[1].startswith("+")} == mine  # its facts, each a region
    assert all(t.strip() for t in _chart(at)["data"][1]["text"])  # every region labelled (the label trace)
    qp = at.query_params  # the view, its system and the drill path are in the URL: a shared link reopens them
    assert (qp["view"], qp["gsystem"], qp["hpath"]) == ("Growth", "xmemory", theme.id)
    link = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    link.query_params.update({k: qp[k] for k in ("conv", "systems", "step", "view", "gsystem", "hpath") if k in qp})
    link.switch_page("pages/replay.py").run()
    assert not link.exception, [e.value for e in link.exception]
    assert _chart(link)["data"][0]["customdata"] == inside["customdata"]
    link.session_state["rp_view"] = "Timeline"  # another view: Growth's system and path leave the URL
    link.run()
    assert link.query_params["view"] == "Timeline" and not {"gsystem", "hpath"} & set(link.query_params)
    crumb = at.button(key="gr_xmemory_crumb0")
    assert crumb.label == "all themes"
    crumb.click().run()  # climb back
    assert at.session_state["gr_xmemory_hpath"] == []
    assert _chart(at)["data"][0]["customdata"] == top["customdata"]
    assert "hpath" not in at.query_params

    import ui.growth

    monkeypatch.setattr(ui.growth, "TABLE_ROWS", 3)  # the memory table sends one page of rows, says which
    at.run()
    note = next(c.value for c in at.caption if " in memory at step " in c.value)
    total = int(note.split()[0])
    pages = -(-total // 3)
    assert total > 3 and f"Rows 1-3 of {total} (page 1 of {pages}" in note
    first = html_tables(at)[-1]
    assert len(first) == 3
    picker = next(x for x in at.number_input if (x.key or "").startswith("gr_page_xmemory_"))
    picker.set_value(pages).run()  # the last page: the rest of the rows
    last = html_tables(at)[-1]
    assert len(last) == total - 3 * (pages - 1) and not set(last["id"]) & set(first["id"])
    assert f"of {total} (page {pages} of {pages}" in next(c.value for c in at.caption if " in memory at step " in c.value)

    at.switch_page("pages/explore.py").run()  # Explore draws the same hierarchy, drilled under its own key
    at.selectbox(key="ex_system").set_value("xmemory").run()
    at.toggle(key="ex_hierarchy").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert max(len(c.split("\t")) for c in _chart(at)["data"][0]["customdata"]) == 2
    at.session_state["ex_hpath"] = [theme.id]
    at.run()
    latest = {s.id for s in mem.items("semantic", with_vectors=False) if s.metadata.get("theme") == theme.id}
    shown = {c.split("\t")[1] for c in _chart(at)["data"][0]["customdata"] if "\t+" not in c}
    assert shown and shown <= latest  # Explore's memory is the last checkpoint's: the theme's facts there
    assert at.query_params["hpath"] == theme.id  # the drill path is in the URL

    link = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)  # a shared link, in a fresh session
    link.query_params.update({"conv": conv.id, "system": "xmemory", "hpath": theme.id})
    link.switch_page("pages/explore.py").run()
    assert not link.exception, [e.value for e in link.exception]
    assert link.toggle(key="ex_hierarchy").value is True  # the link opens the hierarchy, drilled to its node
    assert {c.split("\t")[1] for c in _chart(link)["data"][0]["customdata"] if "\t+" not in c} == shown
    link.button(key="ex_crumb0").click().run()  # climbing back to the top takes the path out of the URL
    assert "hpath" not in link.query_params
    link.toggle(key="ex_hierarchy").set_value(False).run()
    assert "hpath" not in link.query_params


def test_a_click_on_a_region_opens_its_path(monkeypatch):
    import ui.hierarchy_view as hv

    nodes = [HNode("t", "", "theme", "a theme"), HNode("f", "t", "fact", "a fact"), HNode("u", "", "theme", "other")]
    view = focus_view(nodes)
    state: dict = {"c": {"selection": {"points": [{"point_index": 1}]}}}
    monkeypatch.setattr(hv, "st", SimpleNamespace(session_state=state))
    hv._clicked("c", view, "k")
    assert state["k_hpath"] == list(view.regions[1].action) and state["k_hnonce"] == 1
    state["c"] = {"selection": {"points": []}}  # a deselection drills nowhere
    hv._clicked("c", view, "k")
    assert state["k_hnonce"] == 1
