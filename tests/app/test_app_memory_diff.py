"""Memory diff in the app (AppTest): Replay's two-step pick, and two configurations' memories on Compare runs."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.test_app_pages import APP, build, errors, home_with_demo
from tests.app.test_app_pages import texts as raw_texts
from ui import jobs
from ui.memory_diff_view import STEP_DIFF_STATIC_ROWS


def texts(at: AppTest) -> str:
    """The page's text as read (Markdown escapes of data removed)."""
    return raw_texts(at).replace("\\", "")


def _unescaped(df):
    """A st.table's cells as read (the Markdown escapes of data removed)."""
    return df.map(lambda v: str(v).replace("\\", ""))


def test_replay_two_steps_show_what_changed_with_turn_and_event(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["naive_rag", "xmemory"], "replay_systems")
    assert at.selectbox(key="md_system").value == "xmemory"  # the first memory with items of its own
    at.number_input(key="md_from").set_value(10).run()
    at.number_input(key="md_to").set_value(20).run()
    assert not errors(at), errors(at)
    body = texts(at)
    assert "xmemory on demo from step 10 to step 20: 10 added, 2 changed, 0 removed." in body
    # 12 changed items (up to STEP_DIFF_STATIC_ROWS): static tables, the item to read picked in a list
    counts, rows = (_unescaped(t.value) for t in at.table[-2:])  # the counts per kind, then the items
    assert counts.set_index("kind")["added"].to_dict() == {"episode": "2", "semantic": "5", "theme": "3"}
    assert len(rows) == 12 and rows.iloc[0]["item"] == "episode-3" and rows.iloc[0]["turn"] == "turn 13 (D1:13)"
    # below the table: the first changed item (a text diff says the most) with its cause
    assert at.selectbox(key="md_replay_pick").value == "11. changed theme theme-1"
    assert "theme theme-1** · changed" in body
    assert "step 17 · turn 17 (D1:17) · updated: theme labelled 'Jonas, clay' (2 members)" in body
    at.selectbox(key="md_replay_pick").set_value("1. added episode episode-3").run()
    assert "episode episode-3** · added" in texts(at)
    # steps far apart (more changed items than STEP_DIFF_STATIC_ROWS): the data grid, a row picked in it
    at.number_input(key="md_from").set_value(0).run()
    at.number_input(key="md_to").set_value(60).run()
    rows = at.dataframe(key="md_replay_rows").value
    assert len(rows) > STEP_DIFF_STATIC_ROWS
    assert "pick a row above to see another)" in texts(at)
    at.number_input(key="md_to").set_value(20).run()
    at.number_input(key="md_from").set_value(20).run()
    assert "from step 20 to step 20: nothing changed." in texts(at)
    at.selectbox(key="md_system").set_value("naive_rag").run()
    assert "naive_rag holds no memory items of its own: it indexes the raw turns" in texts(at)


def test_compare_runs_builds_and_diffs_two_configurations(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["xmemory"], "replay_systems")
    at.switch_page("pages/compare_runs.py").run()
    at.text_input(key="md_a").input("xmemory").run()
    at.text_input(key="md_b").input("xmemory[nope=1]").run()
    assert any("Memory B" in e and "nope" in e for e in [x.value.replace("\\", "") for x in at.error])
    at.text_input(key="md_b").input("xmemory[max_theme=4]").run()
    assert any("xmemory[max_theme=4] has no complete memory of demo yet" in i.value.replace("\\", "") for i in at.info)
    next(b for b in at.button if b.label == "Build xmemory[max_theme=4]").click().run()
    jobs.wait("ingest-variant:demo:xmemory[max_theme=4]", 180)
    at.number_input(key="md_step").set_value(40).run()
    assert not errors(at), errors(at)
    assert "xmemory[max_theme=4] against xmemory on demo at step 40: 4 added, 1 changed, 0 removed." in texts(at)
    at.text_input(key="md_b").input("com").run()
    assert any("different systems" in e for e in [x.value.replace("\\", "") for x in at.error])


def test_compare_runs_opens_the_memories_a_link_names(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["xmemory"], "replay_systems")
    at.query_params["md_a"] = "xmemory"
    at.query_params["md_b"] = "xmemory"
    at.query_params["md_step"] = "30"
    at.switch_page("pages/compare_runs.py").run()
    assert (at.text_input(key="md_a").value, at.number_input(key="md_step").value) == ("xmemory", 30)
    assert "xmemory against xmemory on demo at step 30: the two memories hold the same items." in texts(at)


def test_a_run_pair_whose_construction_differs_links_to_the_memory_diff(app_env):
    from memcore.eval.run_record import get_run, save_run
    from memcore.store import LanceStore
    from tests.app.test_app_compare_runs import A, B, store_two_runs

    store_two_runs(app_env / "store", [{**r, "system": "xmemory"} for r in A], [{**r, "system": "xmemory"} for r in B])
    store = LanceStore(str(app_env / "store"))
    for run_id, cfg in (("run-a", {"retriever": "dense"}), ("run-b", {"retriever": "dense", "max_theme": 4})):
        rec = get_run(store, run_id)
        save_run(store, {**rec, "systems": ["xmemory"], "payload": {"fingerprint": {"configs": {"xmemory": cfg}}}})
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/compare_runs.py").run()
    at.button(key="cr_go").click().run()
    assert not errors(at), errors(at)
    links = [el.proto.label for el in at.get("page_link")]
    assert "Memory diff: xmemory (run A) against xmemory[max_theme=4] (run B)" in links, links


def test_replay_step_diff_starts_at_the_system_and_step_on_screen(app_env):
    """Issue 37 minor 10: the diff opened on the first system from step 0 to the end whatever Replay showed; it
    starts at the step on screen (previous -> current) and the system changing there, and names the metadata keys
    that changed beside a text diff."""
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["naive_rag", "com", "xmemory"], "replay_systems")
    at.slider(key="replay_step").set_value(17).run()
    at.run()  # the page around the viewer
    assert not errors(at), errors(at)
    assert (at.number_input(key="md_from").value, at.number_input(key="md_to").value) == (16, 17)
    assert at.selectbox(key="md_system").value == "xmemory"  # its theme is labelled at step 17; com has no event
    body = texts(at)
    assert "xmemory on demo from step 16 to step 17" in body
    assert "also changed: metadata" not in body.replace("also changed: metadata.", "")  # keys named, never bare
    table = next(t for t in at.table if "text" in getattr(t.value, "columns", []))  # a step's few changes: static
    assert list(table.value.columns)[:4] == ["kind", "change", "item", "text"]  # the text on screen at 1280 px
    at.number_input(key="md_from").set_value(10).run()  # picked by hand: kept while the step moves
    at.slider(key="replay_step").set_value(30).run()
    at.run()
    assert (at.number_input(key="md_from").value, at.number_input(key="md_to").value) == (10, 17)
    at.button(key="md_here").click().run()
    assert (at.number_input(key="md_from").value, at.number_input(key="md_to").value) == (29, 30)
