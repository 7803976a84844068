"""Ego-graph filter in Explore and Replay's growth tab (issue 15 item 6), with AppTest on the demo."""

from __future__ import annotations

import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _explore_memweaver(tmp_path, monkeypatch) -> tuple[Workbench, object, AppTest]:
    """The demo's MemWeaver memory built in a fresh store, and the app on Explore with memweaver picked."""
    store = tmp_path / "store"
    for k, v in (("MEMCORE_STORE", str(store)), ("MEMCORE_EMBEDDER", "hashing"), ("MEMCORE_LLM_PROVIDER", "offline")):
        monkeypatch.setenv(k, v)
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"), embedder=HashingEmbedder())
    conv = wb.load_demo()
    wb.ingest("memweaver", conv)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/explore.py").run()
    at.selectbox(key="ex_system").set_value("memweaver").run()
    return wb, conv, at


def test_ego_graph_in_explore_and_replay(tmp_path, monkeypatch):
    wb, conv, at = _explore_memweaver(tmp_path, monkeypatch)
    ego = at.selectbox(key="ex_ego")
    assert ego.options[0] == "pick an entity…" and len(ego.options) > 2
    assert not at.get("iframe")  # nothing drawn until an entity is picked
    ego.set_value(ego.options[1]).run()
    assert not at.exception and len(at.get("iframe")) == 1
    assert any("within 1 hop(s)" in c.value for c in at.caption)
    # every relation drawn is listed with its name and time (the graph drops labels that would overlap)
    edges = next(d.value for d in at.dataframe if list(getattr(d.value, "columns", [])) ==
                 ["from", "relation", "to", "time", "step", "id"])
    ent = at.selectbox(key="ex_ego").value
    mem = wb.memory("memweaver", conv)
    rels = [r for r in mem.items("relation", with_vectors=False)
            if ent in (r.metadata.get("src_id"), r.metadata.get("tgt_id"))]
    shown = [r for r in rels if r.id in set(edges["id"])]  # the picked entity's relations drawn (<= 40 neighbours)
    assert shown and len(edges) == int(next(c.value for c in at.caption if "within 1 hop(s)" in c.value)
                                       .split(" relations")[0].split()[-1])
    row = edges.set_index("id").loc[shown[0].id]
    assert row["relation"] == shown[0].metadata.get("rel", "") and row["time"] == str(shown[0].metadata.get("time") or "")
    assert list(edges["step"]) == sorted(edges["step"], reverse=True)
    untimed = int((edges["time"] == "").sum())  # an empty time cell is said to be no time stored
    note = next(c.value for c in at.caption if c.value.startswith("Every relation drawn above"))
    assert ("no time stored" in note or "none of them has a time" in note) == bool(untimed), (untimed, note)
    at.switch_page("pages/replay.py").run()
    at.multiselect(key="replay_systems").set_value(["memweaver"]).run()
    at.slider(key="replay_step").set_value(len(conv.turns) // 2).run()
    at.session_state["rp_view"] = "Growth"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="gr_memweaver_ego").options[0] == "pick an entity…"


def test_community_overview_before_a_pick(tmp_path, monkeypatch):
    """Community focus draws every community collapsed (counts on nodes and edges) before one is expanded."""
    wb, conv, at = _explore_memweaver(tmp_path, monkeypatch)
    at.session_state["ex_focus"] = "Community"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    pick = at.selectbox(key="ex_comm")
    assert pick.value == "" and len(pick.options) > 2
    frames = at.get("iframe")
    assert len(frames) == 1  # the overview, before any pick
    html = frames[0].proto.srcdoc
    n = len(pick.options) - 1
    assert all(f'"community:{i}"' in html for i in range(1, n + 1))  # every listed community is a node
    assert f'"community:{n + 1}"' not in html
    assert any(c.value.startswith(f"{n} communities") or f"{n} communities" in c.value for c in at.caption)
    pick.set_value(pick.options[1]).run()
    assert not at.exception and len(at.get("iframe")) == 1
    assert any("entities of this community" in c.value for c in at.caption)

