"""`memcore compare` pairs result sets of different names (issue 37): A's `com` against B's `com[beta=0.3]` with
--a-system / --b-system, as the app's Compare runs pairs them; the heading names both sides (for stored runs,
as they ran), with n and intervals; an unknown name is a one-line error (exit 2) naming the names the run holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.eval.compare import build_comparison
from memcore.eval.compare_export import comparison_text
from tests.eval.test_compare import A, B
from tests.test_cli_walk37 import one_line_error, run


def _as(rows: list[dict], name: str) -> list[dict]:
    return [dict(r, system=name.split("[")[0], variant=name) for r in rows]


def _results(path: Path, run_id: str, rows: list[dict]) -> str:
    path.write_text(json.dumps({"run_id": run_id, "rows": rows}), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path) -> tuple[str, str]:
    """Run A answered with `com` and `naive_rag`; run B with `com[beta=0.3]` and `naive_rag`."""
    a = _results(tmp_path / "a.json", "run-a", _as(A, "com") + _as(A, "naive_rag"))
    b = _results(tmp_path / "b.json", "run-b", _as(B, "com[beta=0.3]") + _as(A, "naive_rag"))
    return a, b


def test_the_library_pairs_names_and_refuses_unknown_ones_naming_those_held(files) -> None:
    a, b = files
    rep = build_comparison(a, b, None, pairs=[("com", "com[beta=0.3]")])
    (name, s), = rep["systems"].items()
    assert (s["a_name"], s["b_name"]) == ("com", "com[beta=0.3]") and s["overall"]["n"] == 20
    assert s["overall"]["mcnemar"]["right_to_wrong"] == 8 and s["overall"]["f1"]["delta"] == pytest.approx(-0.3)
    assert "com (A) against com[beta=0.3] (B)" in comparison_text(rep)
    with pytest.raises(Exception, match=r"has no result set com\[beta=0\.8\]; it holds 2: com\[beta=0\.3\], naive_rag"):
        build_comparison(a, b, None, pairs=[("com", "com[beta=0.8]")])
    with pytest.raises(Exception, match=r"has no result set xmemory; it holds 2: com, naive_rag"):
        build_comparison(a, b, None, systems=["xmemory"])  # --systems too: never a silent n=0


def test_cli_pairs_result_sets_of_different_names(files, tmp_path) -> None:
    a, b = files
    out = tmp_path / "c.json"
    res = run("compare", a, b, "--a-system", "com", "--b-system", "com[beta=0.3]", "-o", str(out), "--html", "",
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "com (A) against com[beta=0.3] (B)" in res.stdout
    assert "overall  n=  20  f1 -0.300 [" in res.stdout and "8 R->W, 2 W->R" in res.stdout  # n and the interval
    data = json.loads(out.read_text())
    assert list(data["systems"]) == ["com vs com[beta=0.3]"]
    # one name against each of the other side's: B's variant against both of A's result sets
    both = run("compare", a, b, "--a-system", "com,naive_rag", "--b-system", "com[beta=0.3]", "-o", "", "--html", "",
               cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert "com (A) against com[beta=0.3] (B)" in both.stdout
    assert "naive_rag (A) against com[beta=0.3] (B)" in both.stdout
    # without the options: only the name both runs hold
    plain = run("compare", a, b, "-o", "", "--html", "", cwd=tmp_path)
    assert "naive_rag (A and B)" in plain.stdout and "com[beta=0.3]" not in plain.stdout


def test_cli_pairing_errors_are_one_line(files, tmp_path) -> None:
    a, b = files
    one_line_error(run("compare", a, b, "--a-system", "com", "--b-system", "com[beta=0.8]", cwd=tmp_path),
                   "has no result set com[beta=0.8]", "com[beta=0.3], naive_rag")
    one_line_error(run("compare", a, b, "--a-system", "xmemory", "--b-system", "com[beta=0.3]", cwd=tmp_path),
                   "has no result set xmemory", "it holds 2: com, naive_rag")
    one_line_error(run("compare", a, b, "--b-system", "com[beta=0.3]", cwd=tmp_path), "--b-system pairs with --a-system")
    one_line_error(run("compare", a, b, "--a-system", "com", "--b-system", "com[beta=0.3]", "-s", "com",
                       cwd=tmp_path), "give one or the other")
    one_line_error(run("compare", a, b, "--a-system", "com,naive_rag", "--b-system", "com[beta=0.3],naive_rag,x",
                       cwd=tmp_path), "--a-system names 2 result sets and --b-system 3")
    assert not (tmp_path / "compare.json").exists()  # nothing written on an error


def test_cli_names_stored_runs_as_they_ran(tmp_path) -> None:
    from memcore.eval.run_record import save_run
    from memcore.store import LanceStore

    store = LanceStore(str(tmp_path / "store"))
    store.save_results("run-a", _as(A, "com"))
    store.save_results("run-b", _as(B, "com[beta=0.3]"))
    for rid, name in (("run-a", "com"), ("run-b", "com[beta=0.3]")):
        save_run(store, {"run_id": rid, "status": "done", "dataset": "demo", "systems": [name], "started": 1.7e9,
                         "payload": {"fingerprint": {"retriever": "dense", "model": "offline"}}})
    res = run("compare", "run-a", "run-b", "--a-system", "com", "--b-system", "com[beta=0.3]", "-o", "",
              "--html", "", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "A = run-a  (com · demo · retriever dense · offline" in res.stdout
    assert "com (A) against com[beta=0.3] (B)" in res.stdout and "n=  20" in res.stdout
    one_line_error(run("compare", "run-a", "run-b", "--a-system", "com", "--b-system", "com", cwd=tmp_path),
                   "run 'run-b' has no result set com", "it holds 1: com[beta=0.3]")
