"""The embedding map on Explore and Ask (AppTest): drawn from the memory, read from the cache the second time, the
question's retrieved items and near-misses marked, and a clicked point opened in Explore."""

from __future__ import annotations

import json

from memcore.viz.embedding_map import NEAR_MISS, QUESTION, RETRIEVED
from tests.app.test_app_pages import build, errors, home_with_demo, open_tab, texts


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def map_chart(at) -> dict:
    return next(c for c in charts(at) if any(isinstance((t.get("customdata") or [None])[0], list) for t in c["data"]))


def test_explore_map_cached_then_a_click_opens_the_item(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    build(at, ["naive_rag_session"], "replay_systems")
    at.switch_page("pages/explore.py").run()
    at.selectbox(key="ex_system").set_value("naive_rag_session").run()
    at.toggle(key="ex_map").set_value(True).run()
    assert not errors(at), errors(at)
    fig = map_chart(at)
    chart = next(c for c in at.get("plotly_chart") if json.loads(c.proto.spec) == fig)
    assert not json.loads(chart.proto.config or "{}").get("scrollZoom")  # a wheel over the map scrolls the page
    ids = [row[0] for t in fig["data"] for row in t.get("customdata", [])]
    counts = sum(int(o.split("(")[1].rstrip(")")) for o in at.selectbox(key="ex_kind").options)
    assert len(ids) == len(set(ids)) == counts
    assert "projected now" in texts(at)
    at.run()
    assert "projection from the store cache" in texts(at)
    target = next(row for t in fig["data"] for row in t.get("customdata", []))  # [id, kind] of a point
    at.session_state["_ex_map_open"] = tuple(target)  # what a click on it records (on_select)
    at.run()
    assert not errors(at), errors(at)
    assert at.selectbox(key="ex_kind").value == target[1]
    assert any(target[0] in h.value.replace("\\", "") for h in at.subheader)


def test_ask_map_marks_retrieved_items_and_near_misses(app_env):
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag_session"], "ask_systems")
    next(b for b in at.button if b.label == "Ask").click().run()
    open_tab(at, "ask_naive_rag_session_tab", "Embedding map")
    at.toggle(key="ask_naive_rag_session_map").set_value(True).run()
    assert not errors(at), errors(at)
    fig = map_chart(at)
    by_name = {t.get("name"): t for t in fig["data"]}
    items = {row[0] for t in fig["data"] if t["name"] not in (RETRIEVED, NEAR_MISS) for row in t.get("customdata", [])}
    retrieved = [row[0] for row in by_name[RETRIEVED]["customdata"]]
    misses = [row[0] for row in by_name[NEAR_MISS]["customdata"]]
    assert QUESTION in by_name and retrieved and set(retrieved) <= items
    assert len(misses) == min(5, len(items) - len(retrieved)) and not set(misses) & set(retrieved)
    ranks = sorted(int(r) for r in by_name[RETRIEVED]["text"])
    assert ranks == list(range(1, len(ranks) + 1))  # positions in the context (all of it is on the map)
    assert "Rings: the" in texts(at)
    # every number on the map is listed beside it, readable where points crowd
    table = next(d.value for d in at.dataframe if list(getattr(d.value, "columns", [])) ==
                 ["mark", "number", "cosine", "kind", "id", "text"])
    numbered = [(kind, int(r), i) for kind in (RETRIEVED, NEAR_MISS)
                for r, i in zip(by_name[kind]["text"], (row[0] for row in by_name[kind]["customdata"]), strict=True)]
    assert list(zip(table["number"], table["id"], strict=True)) == \
        sorted(((r, i) for k, r, i in numbered if k == RETRIEVED)) + sorted(((r, i) for k, r, i in numbered if k != RETRIEVED))
    assert list(table["mark"]) == ["retrieved"] * len(retrieved) + ["near-miss"] * len(misses)
