"""After an upload, Benchmark and Annotation results start on the file and the conversation the user loaded, and
Benchmark runs on the upload (no server path needed); its errors are in the app's words (issue 37 minor 3)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from tests.app.test_app_pages import errors, home_with_demo  # noqa: E402
from ui import fixes  # noqa: E402

LINES = [{"conversation": "upl", "session": 1, "date": "2024-03-01 10:00", "speaker": "A", "text": "I moved to Lyon."},
         {"conversation": "upl", "session": 1, "date": "2024-03-01 10:01", "speaker": "B", "text": "Nice city."}]


def _upload(at: AppTest) -> AppTest:
    body = "\n".join(json.dumps(x) for x in LINES).encode()
    at.get("file_uploader")[0].set_value(("my chat.jsonl", body, "application/json")).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not errors(at), errors(at)
    return at


def test_benchmark_and_annotation_results_start_on_the_uploaded_file(app_env):
    at = _upload(home_with_demo())  # the demo first: the upload must win over it
    assert at.session_state["conv_id"] == "upl"
    at.switch_page("pages/benchmark.py").run()
    assert not errors(at), errors(at)
    ds = at.selectbox(key="bm_ds")
    assert ds.value == "__loaded__" and "the file loaded on Home: my chat.jsonl" in ds.format_func(ds.value)
    loaded = at.session_state["_loaded_file"]
    assert Path(loaded["path"]).read_bytes().startswith(b'{"conversation": "upl"')  # the upload, kept for a run
    assert not next(b for b in at.button if b.label == "Start run").disabled
    ds.set_value("locomo").run()  # a format without a file: said in the app's words, and no start
    said = " ".join(i.value.replace("\\", "") for i in at.info)
    assert 'Dataset "locomo" needs a file' in said and "--file" not in said and "--dataset" not in said
    assert next(b for b in at.button if b.label == "Start run").disabled
    at.switch_page("pages/annotation_results.py").run()
    assert at.multiselect[0].value == ["upl"]  # the conversation loaded, not the demo


def test_a_runs_missing_file_error_reads_in_the_apps_words():
    msg = fixes.in_app("Evaluation on locomo: --dataset locomo needs --file PATH (or use --dataset demo)")
    assert "--" not in msg and 'Dataset "locomo" needs a file' in msg and "Dataset file" in msg
