"""Export in a fresh session offers what the store holds: recorded benchmark runs and built memories' replays."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.store import LanceStore

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.exception] + [e.value for e in at.error]


def test_a_fresh_session_exports_a_stored_benchmark_run_with_its_rows(app_env):
    s = Settings(store_uri=str(app_env / "store"), llm_provider="offline", embedder="hashing")
    done = run_eval(s, "demo", systems=["naive_rag"], limit=3, retriever="lexical")  # e.g. by `memcore eval`
    at = AppTest.from_file(APP, default_timeout=120).run()  # a new browser session: nothing in session state
    at.switch_page("pages/export.py").run()
    assert not errors(at), errors(at)
    options = at.selectbox(key="exp_choice").options
    run = [o for o in options if o.startswith("Benchmark run")]
    assert len(run) == 1 and done["run_id"] in run[0], options
    assert "lexical retriever" in run[0] and "naive_rag" in run[0]
    assert "Replay · demo · naive_rag" in options  # the memory the run built, from the store
    assert not any(o.startswith(("Answer", "Comparison")) for o in options)  # answers live in their session only

    at.selectbox(key="exp_choice").set_value(run[0]).run()
    at.text_input(key="exp_folder").set_value(str(app_env / "exports")).run()
    at.button(key="exp_write").click().run()
    assert not errors(at), errors(at)
    paths = [Path(p) for p in at.session_state["exp_written"]]
    assert [p.suffix for p in paths] == [".json", ".csv", ".html"]
    obj = json.loads(paths[0].read_text())
    assert obj["run_id"] == done["run_id"] and obj["retriever"] == "lexical"
    assert len(obj["rows"]) == done["questions_done"] == 3
    stored = LanceStore(s.store_uri, dim=256).result_keys(done["run_id"])
    assert {("naive_rag", r["question_id"]) for r in obj["rows"]} == stored
    assert all(r["system"] == "naive_rag" and "f1" in r and "trace" not in r for r in obj["rows"])
    assert "Retriever: lexical" in paths[2].read_text()
