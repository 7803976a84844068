"""Compare runs (issue 37): runs of one system under other settings are listed with what ran, the result sets
pair across names (`com` in A against `com[beta=0.3]` in B), the heading names both sides and McNemar is
shown above the table (not in its last, off-screen column)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.eval.test_compare import A, B  # noqa: E402

APP = str(ROOT / "app.py")


def store_variant_runs(store_path: Path) -> None:
    """run-a: `com` at the paper's settings; run-b: `com[beta=0.3]` (as a sweep stores its point) and run-c:
    `com` given beta=0.3 beside the name (as sweeps stored points before)."""
    from memcore.eval.run_record import save_run
    from memcore.store import LanceStore
    from memcore.systems.base import config_to_dict
    from memcore.systems.variants import parse_variant

    store = LanceStore(str(store_path))
    runs = [("run-a", "com", "com", A), ("run-b", "com[beta=0.3]", "com[beta=0.3]", B),
            ("run-c", "com", "com[beta=0.3]", B)]
    for i, (run_id, name, ran, rows) in enumerate(runs):
        store.save_results(run_id, [{**r, "system": "com", "variant": name} for r in rows])
        cfg = config_to_dict(parse_variant(ran).config())
        save_run(store, {"run_id": run_id, "status": "done", "done": len(rows), "total": len(rows),
                         "engine": "local x1", "dataset": "demo /x/demo.json", "systems": [name],
                         "started": time.time() - 100 + i, "heartbeat": time.time(), "finished": time.time(),
                         "host": "h", "pid": 1, "message": "",
                         "payload": {"fingerprint": {"configs": {name: cfg}, "retriever": "dense",
                                                     "model": "offline-engine"}}})


def test_variant_runs_are_told_apart_and_compared_across_names(app_env):
    store_variant_runs(app_env / "store")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/compare_runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    options = at.selectbox(key="cr_a").options
    assert len({o.rsplit(" · ", 1)[0] for o in options}) == 3  # distinct even without the run id
    assert any(o.startswith("com[beta=0.3] · demo") for o in options)
    assert any(o.startswith("com = com[beta=0.3] · demo") for o in options)  # settings beside the name, named
    assert any(o.startswith("com · demo") for o in options)
    at.selectbox(key="cr_a").set_value("run-a").run()
    at.selectbox(key="cr_b").set_value("run-b").run()
    pairs = at.multiselect(key="cr_pairs_run-a_run-b")
    assert pairs.value == [("com", "com[beta=0.3]")]
    at.button(key="cr_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [h.value.replace("\\", "") for h in at.subheader][-1] == "com (A) against com[beta=0.3] (B)"
    texts = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "McNemar (overall, n=20): 8 R->W, 2 W->R, p=0.109" in texts
    assert "**Run A**: com · demo" in texts and "**Run B**: com[beta=0.3] · demo" in texts
    assert at.dataframe[0].value.set_index("category").loc["overall", "Δ f1"].startswith("-0.300 [")
