"""The example plugin's system on every page of memcore's app (Streamlit AppTest; a temporary store, the
hashing embedder, the offline engine): every system picker offers it, Ask draws its view and lists its roles'
calls (the focus role and its reader's prompt), Replay draws its growth view, Benchmark shows its mechanism
statistics. memcore's app (and its app tests' fixtures) are found next to the memcore package imported (a
source checkout)."""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import memcore
from memcore.eval.runner import run_eval
from memcore.settings import Settings

NAME, LABEL = "recent_k", "recent_k (plugin)"
ROOT = Path(memcore.__file__).resolve().parents[1]
APP = ROOT / "app.py"
if not APP.is_file():
    pytest.skip("memcore's app.py is not next to the memcore package (not a source checkout)", allow_module_level=True)
if NAME not in {ep.name for ep in entry_points(group="memcore.systems")}:  # installed (loads in tests: conftest)
    pytest.fail("the example plugin is not installed: pip install --no-deps -e examples/memcore-example-plugin",
                pytrace=False)
sys.path.insert(0, str(ROOT))  # the app's `ui` package and memcore's app tests' helpers

from tests.app.conftest import app_env  # noqa: E402, F401 - the app tests' store/embedder/engine fixture
from tests.app.test_app_pages import errors, open_tab  # noqa: E402
from ui import jobs  # noqa: E402


def picker(at: AppTest, key: str | None = None, label: str = "Systems"):
    """A page's system picker, by key or (in a form without one) by label."""
    return at.multiselect(key=key) if key else next(m for m in at.multiselect if m.label == label)


def test_every_page_offers_it_and_ask_draws_its_view_and_its_roles(app_env) -> None:  # noqa: F811
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    next(b for b in at.button if b.label == "Load the built-in demo").click().run()
    offered = {}
    for page, key in (("ask", "ask_systems"), ("compare", "cmp_systems"), ("replay", "replay_systems"),
                      ("benchmark", "bm_run_systems"), ("annotation_results", None)):
        at.switch_page(f"pages/{page}.py").run()
        assert not errors(at), (page, errors(at))
        offered[page] = list(picker(at, key).options)
    for page, opts in offered.items():  # the systems first (rank 90: the plugin's last of them), then the presets
        systems = [o for o in opts if ":" not in o and "[" not in o and not o.startswith("@")]
        assert systems[-1] == LABEL, opts
        assert (f"{NAME}:no-focus" in opts) is (page != "annotation_results"), (page, opts)  # pages with a panel

    at.switch_page("pages/ask.py").run()
    at.multiselect(key="ask_systems").set_value([NAME]).run()
    next(b for b in at.button if b.label == "Build" or b.label.startswith("Build memory")).click().run()
    jobs.wait("ingest:demo", 180)
    at.run()
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not errors(at), errors(at)
    open_tab(at, f"ask_{NAME}_tab", "System structure")  # an answer's inner tabs draw only the open one
    notes = [i.value for i in at.info]
    assert any(n.startswith("The memory is the last 6 turns") and "The focus role (recent_k_focus) named" in n
               for n in notes), notes  # its view's structure, drawn by Ask
    tables = [d.value for d in at.dataframe]
    window = next(t for t in tables if list(t.columns)[:2] == ["turn", "focus"])
    assert list(window["focus"]).count("focus") == 1 and window.iloc[0]["focus"] == "focus"
    open_tab(at, f"ask_{NAME}_tab", "LLM calls")
    tables = [d.value for d in at.dataframe]
    calls = next(t for t in tables if "role" in t.columns and "stage" in t.columns)
    assert list(calls["role"]) == ["recent_k_focus", "answer_recent_k"]  # its role, then its reader's prompt
    assert list(calls["stage"]) == ["retrieval", "answer"]

    at.switch_page("pages/replay.py").run()
    at.multiselect(key="replay_systems").set_value([NAME]).run()
    at.segmented_control(key="rp_view").set_value("Growth").run()
    assert not errors(at), errors(at)
    # its growth view: the memory table (a static table, redrawn at every step)
    assert any("<th>since step</th>" in h.proto.body for h in at.get("html"))


def test_benchmark_shows_its_mechanism_statistics(app_env) -> None:  # noqa: F811
    out = app_env / "results.json"
    settings = Settings(store_uri=str(app_env / "store"), llm_provider="offline", embedder="hashing")
    run_eval(settings, "demo", systems=[NAME], limit=3, out=out)
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.switch_page("pages/benchmark.py").run()
    at.text_input(key="bm_path").set_value(str(out)).run()
    at.button(key="bm_load").click().run()
    assert not errors(at), errors(at)
    assert NAME in [m.value.strip("*").replace("\\", "") for m in at.markdown]  # its heading (Markdown-escaped)
    tables = [d.value for d in at.dataframe if list(d.value.columns) == ["statistic", "value"]]
    assert len(tables) == 1, tables  # one system in the run: one mechanism table, its own
    stats = dict(zip(tables[0]["statistic"], tables[0]["value"], strict=True))
    assert set(stats) == {"window_mean", "focus_rate", "focus_agrees_rate", "focus_back_mean", "questions"}
    assert stats["window_mean"] == "6" or float(stats["window_mean"]) == 6.0
    assert stats["questions"] == "3"
