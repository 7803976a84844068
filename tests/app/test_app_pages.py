"""Every page's main path with Streamlit's AppTest (temp store, hashing embedder, offline engine)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from memcore.datasets import load_demo  # noqa: E402
from ui import jobs  # noqa: E402

DEMO = load_demo()
STEPS = len(DEMO.turns) + 1  # Replay counts one step per turn plus the empty start


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.exception] + [e.value for e in at.error]


def home_with_demo() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    next(b for b in at.button if b.label == "Load the built-in demo").click().run()
    return at


def build(at: AppTest, systems: list[str], key: str, conv: str = "demo") -> AppTest:
    """Pick systems and click Build (the page's one button, or Ask/Compare's card per system) until all are built."""
    at.multiselect(key=key).set_value(systems).run()
    for _ in systems:
        buttons = [b for b in at.button if b.label == "Build" or b.label.startswith("Build memory")]
        if not buttons:
            break
        buttons[0].click().run()
        jobs.wait(f"ingest:{conv}", 180)
        at.run()
    assert not errors(at), errors(at)
    return at


def open_tab(at: AppTest, key: str, label_start: str) -> AppTest:
    """Open the tab of the tabs keyed `key` whose label starts with `label_start`, as a click on it does (the page
    reruns with that tab open: lazily drawn tabs draw only the open one)."""
    labels = [t.label for t in at.tabs if t.label.startswith(label_start)]
    assert labels, f"no tab starting {label_start!r} among {[t.label for t in at.tabs]}"
    at.session_state[key] = labels[0]
    return at.run()


def vega_charts(at: AppTest) -> dict[str, tuple[dict, dict]]:
    """The page's Vega-Lite charts by title: (spec, {dataset name: its rows as a DataFrame})."""
    import pyarrow as pa

    out = {}
    for e in at.get("vega_lite_chart"):
        spec = json.loads(e.proto.spec)
        data = {d.name: pa.ipc.open_stream(d.data.data).read_pandas() for d in e.proto.datasets}
        out[spec["title"]["text"]] = (spec, data)
    return out


def texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [t.value for t in at.text] + [c.value for c in at.caption])


def test_home_loads_the_demo_and_shows_it(app_env):
    at = home_with_demo()
    assert not errors(at), errors(at)
    assert [m.value for m in at.metric][:3] == [str(len(DEMO.turns)), str(len(DEMO.sessions())), str(len(DEMO.questions))]
    assert at.session_state["conv_id"] == "demo"
    assert "offline engine (rule-based, no LLM)" in texts(at) or any(
        "offline engine" in str(d.value.to_dict()) for d in at.dataframe)


def test_home_shows_turn_text_inert(app_env):
    chat = app_env / "xss.jsonl"
    lines = [{"conversation": "xss", "session": 1, "date": "2024-03-01 10:00", "speaker": "Eve",
              "text": "<script>alert(1)</script> ![x](http://example.com/a.png)"},
             {"conversation": "xss", "session": 1, "speaker": "Bob", "text": "hello"}]
    chat.write_text("\n".join(json.dumps(x) for x in lines))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_input[0].set_value(str(chat)).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not errors(at), errors(at)
    assert at.session_state["conv_id"] == "xss"
    at.switch_page("pages/replay.py").run()
    at = build(at, ["naive_rag"], "replay_systems", conv="xss")
    md = [m.value for m in at.markdown]
    assert any("\\<script\\>" in m for m in md), md
    assert not any("<script>" in m or "](http" in m for m in md)


def test_a_stale_url_value_the_page_wrote_does_not_switch_the_picker_back(app_env):
    chat = app_env / "two.jsonl"
    lines = [{"conversation": "two", "session": 1, "date": "2024-03-01 10:00", "speaker": "Eve", "text": "hi"},
             {"conversation": "two", "session": 1, "speaker": "Bob", "text": "hello"}]
    chat.write_text("\n".join(json.dumps(x) for x in lines))
    at = home_with_demo()
    assert at.query_params["conv"] == "demo"  # the page wrote the picked conversation into the URL
    at.text_input[0].set_value(str(chat)).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not errors(at), errors(at)
    assert at.session_state["conv_id"] == "two" and at.query_params["conv"] == "two"
    at.query_params["conv"] = "demo"  # a rerun sent before the browser saw the new URL
    at.run()
    assert not errors(at), errors(at)
    assert at.session_state["conv_id"] == "two" and at.selectbox(key="_conv_pick").value == "two"

def test_a_link_to_a_conversation_the_store_lacks_is_said_not_silently_replaced(app_env):
    home_with_demo()  # the demo is stored
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["conv"] = "conv-50"  # a copied link to a conversation this store lacks
    at.run()
    warned = " ".join(w.value for w in at.sidebar.warning).replace("\\", "")  # Markdown-escaped text
    assert "conv-50" in warned and "showing demo" in warned, warned
    assert at.session_state["conv_id"] == "demo"


def test_replay_after_ingest_shows_events_at_a_step(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["naive_rag_session", "com"], "replay_systems")
    at.slider(key="replay_step").set_value(20).run()
    body = texts(at)
    assert f"Turn 20 of {STEPS - 1}" in body
    assert {m.label: m.value for m in at.metric}["com"] == "1"  # events now (the caption says so)
    assert "Memory layers over time" in vega_charts(at)
    ev = at.table[0].value  # cells are Markdown-escaped text
    assert list(ev["system"]) == ["com"] and list(ev["event"]) == ["indexed"]
    assert "event(s) now · 20 turn(s) indexed" in [c.value for c in at.caption]  # not "0 item(s)"
    at.button(key="rp_next").click().run()
    assert at.session_state["replay_step"] == 21


def test_ask_with_naive_rag_returns_answer_and_cost_chart(app_env):
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag"], "ask_systems")
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not errors(at), errors(at)
    assert at.text and at.text[0].value.strip()
    assert "Gold answer:" in texts(at)
    _, data = vega_charts(at)["Tokens per question by stage"]
    assert set(data["bars"]["system"]) == {"naive_rag"} and data["bars"]["value"].sum() > 0
    assert any("evidence" in d.value.columns for d in at.dataframe if hasattr(d.value, "columns"))


def test_explore_lists_items_and_walks_provenance(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    build(at, ["naive_rag_session"], "replay_systems")
    at.switch_page("pages/explore.py").run()
    at.selectbox(key="ex_system").set_value("naive_rag_session").run()
    df = at.dataframe[0].value
    sessions = {f"session-{i}" for i in DEMO.sessions()}
    assert len(df) == len(sessions) and set(df["id"]) == sessions
    at.session_state["ex_table"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not errors(at), errors(at)
    body = texts(at)
    assert "Down to raw turns" in body and "Version history" in body


def test_compare_two_systems(app_env):
    at = home_with_demo()
    at.switch_page("pages/compare.py").run()
    at = build(at, ["naive_rag", "com"], "cmp_systems")
    next(b for b in at.button if b.label == "Compare").click().run()
    assert not errors(at), errors(at)
    assert [r["system"] for r in at.session_state["cmp_rows"]] == ["naive_rag", "com"]
    charts = vega_charts(at)
    assert list(charts["Context tokens"][1]["bars"]["system"]) == ["naive_rag", "com"]
    assert set(charts["Tokens per question by stage"][1]["bars"]["system"]) <= {"naive_rag", "com"}


def benchmark_with(folder: Path, results: dict) -> AppTest:
    """The Benchmark page with `results` written to folder/results.json and loaded by its path."""
    path = folder / "results.json"
    path.write_text(json.dumps(results))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/benchmark.py").run()
    at.text_input(key="bm_path").set_value(str(path)).run()
    at.button(key="bm_load").click().run()
    return at


def test_benchmark_loads_a_results_file(app_env):
    from tests.viz.test_viz_export import results_fixture

    at = benchmark_with(app_env, results_fixture())
    assert not errors(at), errors(at)
    assert list(at.dataframe[0].value["system"]) == ["naive_rag", "com"]
    assert len(at.get("plotly_chart")) == 4  # intervals, heatmap, accuracy vs tokens, failures
    at.session_state["bm_rows"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert "Why was it missed?" in texts(at)


def test_export_writes_json_csv_and_offline_html(app_env):
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag"], "ask_systems")
    next(b for b in at.button if b.label == "Ask").click().run()
    at.switch_page("pages/export.py").run()
    assert not errors(at), errors(at)
    choice = next(o for o in at.selectbox(key="exp_choice").options if o.startswith("Answer"))
    at.selectbox(key="exp_choice").set_value(choice).run()
    at.text_input(key="exp_folder").set_value(str(app_env / "exports")).run()
    at.button(key="exp_write").click().run()
    assert not errors(at), errors(at)
    paths = [Path(p) for p in at.session_state["exp_written"]]
    assert [p.suffix for p in paths] == [".json", ".csv", ".html"]
    html = paths[2].read_text()
    assert "Content-Security-Policy" in html and "cdn.plot.ly/plotly" not in html
    assert json.loads(paths[0].read_text())["system"] == "naive_rag"


def run_benchmark(at: AppTest, limit: int) -> AppTest:
    """Start a run on Benchmark with `limit` questions per conversation and wait until it is done."""
    at.number_input(key="bm_limit").set_value(limit).run()
    at.button(key="bm_start").click().run()
    job = jobs.wait("benchmark-run", 300)
    assert job is not None and job.status == jobs.DONE, (job.status, job.error, job.message)
    at.run()
    assert not errors(at), errors(at)
    return at


def test_benchmark_starts_a_run_on_the_demo_and_drills_into_a_question(app_env):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/benchmark.py").run()
    run_benchmark(at, 3)
    assert list(at.dataframe[0].value["system"]) == ["naive_rag"]
    at.session_state["bm_rows"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not errors(at), errors(at)
    assert "Q: " in "\n".join(t.value for t in at.text)


def test_ask_after_replay_answers_from_the_restored_memory(app_env):
    """Regression: checking a system's memory space must not leave an unrestored system behind."""
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    build(at, ["xmemory"], "replay_systems")
    at.switch_page("pages/ask.py").run()
    at.multiselect(key="ask_systems").set_value(["xmemory"]).run()
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not errors(at), errors(at)
    items = next(m for m in at.metric if m.label == "Context items")
    assert int(items.value) > 0
    open_tab(at, "ask_xmemory_tab", "System structure")  # the answer's tabs draw only the open one
    assert not errors(at), errors(at)
    assert "Stage II" in texts(at) or len(at.get("plotly_chart")) >= 2
