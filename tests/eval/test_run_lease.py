"""One writer per eval run (issue 24 item 2): a second `memcore eval` of the same run waits for the first (saying
whose lease it waits for) or, with --no-wait, fails at once; either way no question is answered twice, so the
store's ledger equals that of one run alone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from memcore.store import LanceStore

ROOT = Path(__file__).resolve().parents[2]
ENV = {"HF_HUB_OFFLINE": "1", "MEMCORE_EMBEDDER": "hashing", "MEMCORE_LLM_PROVIDER": "simulated",
       "MEMCORE_SIM_DELAY_MS": "2500", "MEMCORE_SIM_JITTER_MS": "0", "MEMCORE_LEASE_REPORT_S": "1",
       "MEMCORE_LLM_CONCURRENCY": "1",
       "PYTHONPATH": str(ROOT)}
ARGS = ["eval", "--dataset", "demo", "--systems", "naive_rag", "--limit", "12"]


def _eval(store: Path, out: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, **ENV}
    return subprocess.Popen([sys.executable, "-m", "memcore.cli", *ARGS, "--store", str(store), "--out", str(out),
                             *extra], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ledger(store: Path) -> list[tuple]:
    calls = LanceStore(str(store), dim=256).llm_calls()
    return sorted(zip(calls["system"], calls["conv_id"], calls["stage"], calls["role"], strict=True))


def _run_lease_held(store: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not list((store / "locks").glob("run_*.holder")):
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, "the first eval never took its run lease"
        time.sleep(0.05)


def test_a_second_eval_of_the_same_run_waits_or_fails_and_answers_nothing_twice(tmp_path):
    alone = _eval(tmp_path / "alone", tmp_path / "alone.json")
    assert alone.wait(300) == 0, alone.communicate()
    one_run = _ledger(tmp_path / "alone")
    assert sum(stage == "answer" for _, _, stage, _ in one_run) == 12  # one answer per question

    store = tmp_path / "store"
    first = _eval(store, tmp_path / "first.json")
    _run_lease_held(store, first)
    refused = _eval(store, tmp_path / "refused.json", "--no-wait")
    waiting = _eval(store, tmp_path / "waiting.json")
    _, err = refused.communicate(timeout=120)
    # 12 answers at 2.5 s each: the first eval holds its lease for ~30 s, longer than a loaded machine takes to
    # start the second (a 1 s delay was outlasted by the second's start-up at load ~10: it then found no lease)
    assert first.poll() is None, "the first eval ended before --no-wait was tried: make it slower"
    assert refused.returncode == 2, err
    assert "is being evaluated by another process (pid" in err and "rerun with --wait" in err
    out_w, err_w = waiting.communicate(timeout=300)
    out_f, err_f = first.communicate(timeout=300)
    assert first.returncode == 0 and waiting.returncode == 0, err_f + err_w
    assert f"pid {first.pid}" in err_w and "waiting: eval run" in err_w and "will wait up to" in err_w
    assert _ledger(store) == one_run  # nothing answered or judged twice
    assert not (tmp_path / "refused.json").exists() and (tmp_path / "waiting.json").exists()
