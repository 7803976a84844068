"""Compare runs page (AppTest): two stored runs, the deltas table with intervals and McNemar, a flip's two sides."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.eval.test_compare import A, B  # noqa: E402

APP = str(ROOT / "app.py")


def store_two_runs(store_path: Path, a: list[dict] = A, b: list[dict] = B) -> None:
    """Rows and run records of run-a (older) and run-b in a store."""
    from memcore.eval.run_record import save_run
    from memcore.store import LanceStore

    store = LanceStore(str(store_path))
    for i, (run_id, rows) in enumerate((("run-a", a), ("run-b", b))):
        store.save_results(run_id, rows)
        save_run(store, {"run_id": run_id, "status": "done", "done": len(rows), "total": len(rows), "engine": "local x1",
                         "dataset": "locomo test.json", "systems": ["s"], "started": time.time() - 100 + i,
                         "heartbeat": time.time(), "finished": time.time(), "host": "h", "pid": 1, "message": "",
                         "payload": {}})


def test_compare_runs_shows_deltas_and_a_flips_two_sides(app_env):
    store_two_runs(app_env / "store")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/compare_runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="cr_a").value == "run-a" and at.selectbox(key="cr_b").value == "run-b"
    at.button(key="cr_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    deltas = at.dataframe[0].value.set_index("category")
    assert deltas.loc["overall", "n"] == 20 and deltas.loc["overall", "McNemar"].startswith("8 R->W, 2 W->R, p=0.109")
    assert deltas.loc["overall", "Δ f1"].startswith("-0.300 [")
    flips = at.dataframe[1].value
    assert len(flips) == 10 and flips.iloc[0]["direction"] == "right to wrong"
    at.session_state["cr_flips_s"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    sides = at.dataframe[2].value
    assert sides.iloc[0]["A"] == "cited, content in" and sides.iloc[0]["B"] == "not cited, content out"


def test_compare_runs_with_one_run_says_what_to_do(app_env):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/compare_runs.py").run()
    assert not at.exception
    assert any("needs two evaluation runs" in i.value for i in at.info)
