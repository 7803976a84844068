"""The CLI findings of issue 37, through the real entry point (`python -m memcore.cli`): one-line errors with
exit 2 for every command (no traceback, no usage box), integer settings bounded by their spec, `memcore compare`
refusing bad files and unwritable outputs by name, and read-only commands (compare, diff, doctor) that create
nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.eval.test_compare import A, B

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
         "MEMCORE_EMBEDDER": "hashing", "MEMCORE_LLM_PROVIDER": "offline", "MEMCORE_STORE": str(cwd / "store"),
         **(env or {})}
    return subprocess.run([sys.executable, "-m", "memcore.cli", *args], cwd=cwd, env=e, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)


def one_line_error(res: subprocess.CompletedProcess, *words: str) -> str:
    err = res.stderr.strip()
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err and "╭" not in err, err
    for w in words:
        assert w in err, (w, err)
    return err


def test_integer_settings_are_bounded_by_their_spec(tmp_path) -> None:
    one_line_error(run("ask", "where?", "--system", "com[K=99999999999999999999]", cwd=tmp_path),
                   "com[K=99999999999999999999]", "K (int, paper default 20)", "in [1, 1000000]")
    huge = one_line_error(run("ask", "where?", "--system", f"com[K={'9' * 10000}]", cwd=tmp_path),
                          "K (int, paper default 20)", "(10000 characters)")
    assert len(huge) < 400
    one_line_error(run("eval", "-d", "demo", "-s", "com[K=99999999999999999999]", "--limit", "1", cwd=tmp_path),
                   "K (int")
    assert not (tmp_path / "store" / "eval_runs.lance").exists()  # refused before any run was recorded


def test_usage_errors_are_one_line(tmp_path) -> None:
    one_line_error(run("diff", "com", cwd=tmp_path), "give SYSTEM CONV", "diff --help")
    one_line_error(run("ask", "--no-such-option", cwd=tmp_path), "--no-such-option")
    one_line_error(run("compare", cwd=tmp_path), "run_a")


def test_diff_names_the_step_given_and_reads_only(tmp_path) -> None:
    assert run("ingest", "demo", "-s", "naive_rag", cwd=tmp_path).returncode == 0
    one_line_error(run("diff", "naive_rag", "demo", "--from", "999", cwd=tmp_path), "(from step 999)",
                   "step 999 is outside")
    one_line_error(run("diff", "naive_rag", "demo", "--to", "999", cwd=tmp_path), "(to step 999)")
    new = tmp_path / "new"
    one_line_error(run("diff", "naive_rag", "demo", "--store", str(new), cwd=tmp_path), "no store at")
    assert not new.exists()


def _results(path: Path, run_id: str, rows: list[dict]) -> Path:
    path.write_text(json.dumps({"run_id": run_id, "rows": rows}), encoding="utf-8")
    return path


def test_compare_refuses_bad_files_and_unwritable_outputs_and_writes_no_store(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("not json at all", encoding="utf-8")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    a, b = _results(tmp_path / "a.json", "a", A), _results(tmp_path / "b.json", "b", B)
    one_line_error(run("compare", str(tmp_path / "notes.txt"), str(b), cwd=tmp_path), "is not a results JSON")
    one_line_error(run("compare", str(tmp_path / "list.json"), str(b), cwd=tmp_path), "holds a JSON list")
    for flag in ("-o", "--html"):
        one_line_error(run("compare", str(a), str(b), flag, "/proc/no-such-dir/out.x", cwd=tmp_path),
                       f"cannot write {flag}", "/proc/no-such-dir/out.x")
    new = tmp_path / "new"
    one_line_error(run("compare", "eval-a", "eval-b", "--store", str(new), cwd=tmp_path), "no store at")
    assert not new.exists() and not (tmp_path / "store").exists()
    ok = run("compare", str(a), str(b), "-o", str(tmp_path / "c.json"), "--html", "", "--store", str(new),
             cwd=tmp_path)
    assert ok.returncode == 0 and (tmp_path / "c.json").is_file() and not new.exists(), ok.stderr


@pytest.mark.slow
def test_doctor_in_an_empty_folder_creates_nothing(tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    res = run("doctor", cwd=empty, env={"MEMCORE_STORE": ".memcore"})
    assert "does not exist yet" in res.stdout, res.stdout
    assert list(empty.iterdir()) == []


def test_an_empty_systems_list_is_refused_before_anything_is_stored(tmp_path) -> None:
    for names in ("", ",,"):
        one_line_error(run("ingest", "demo", "-s", names, cwd=tmp_path), "names no system or variant")
        one_line_error(run("eval", "-d", "demo", "-s", names, cwd=tmp_path), "names no system or variant")
    assert not (tmp_path / "store").exists()  # no conversation row, no eval_runs row
