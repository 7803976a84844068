"""`memcore new-system NAME` (memcore/cli/new_system.py): the package it writes registers as a built-in system,
passes memcore.testing's contract, gets a view and its section in the generated docs/fidelity.md; a name that is
taken or malformed is refused with nothing written. The package is written into a temporary folder that a child
process adds to memcore.systems' path, so the repository's memcore/systems/ is never touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from memcore.cli.main import app
from memcore.cli.new_system import FILES

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()

CHILD = """
import importlib, importlib.util, json, sys
import memcore.systems as systems
systems.__path__.append(sys.argv[1])
from memcore.systems import builtin_systems, get_system, load_all
from memcore.testing import CHECKS, run_contract
from memcore.viz.views import get_view
from tests.systems.test_fidelity import row_problems
spec = importlib.util.spec_from_file_location("gen_docs", sys.argv[2])
gen = importlib.util.module_from_spec(spec); spec.loader.exec_module(gen)
name = sys.argv[3]
load_all()
cls = get_system(name)
print(json.dumps({"builtin": name in builtin_systems(), "last": builtin_systems()[-1], "module": cls.__module__,
                  "passed": run_contract(name), "checks": list(CHECKS), "view": get_view(name).color, "rows": row_problems(cls), "docs": gen.fidelity_sections()}))
"""


def test_a_new_system_registers_passes_the_contract_and_is_in_the_docs(tmp_path) -> None:
    into = tmp_path / "systems"
    res = runner.invoke(app, ["new-system", "lexmem", "--title", "LexMem", "--into", str(into)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (into / "lexmem").iterdir()) == sorted(FILES)
    assert "LexmemSystem" in (into / "lexmem" / "__init__.py").read_text(encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "MEMCORE_EMBEDDER": "hashing", "MEMCORE_LLM_PROVIDER": "offline", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, str(into), str(ROOT / "scripts" / "gen_docs.py"), "lexmem"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["builtin"] and got["last"] == "lexmem" and got["module"] == "memcore.systems.lexmem"
    assert got["passed"] == got["checks"] and len(got["checks"]) >= 8  # run_contract raises on a failed check
    assert got["rows"][0] == [] and got["rows"][1] >= 2  # its fidelity rows name its code (test_fidelity's check)
    assert got["view"] == "#7F3C8D"  # its own view, not the default one
    docs = got["docs"]
    assert "\n## LexMem\n" in docs and "`lexmem.k` = 6" in docs and docs.index("## LexMem") > docs.index("## CoM")


def test_a_taken_or_malformed_name_is_refused_and_nothing_written(tmp_path) -> None:
    into = tmp_path / "systems"
    for name, says in (("com", "already registered"), ("Bad-Name", "not a system name"), ("class", "not a system")):
        res = runner.invoke(app, ["new-system", name, "--into", str(into)])
        assert res.exit_code == 1 and says in res.output, res.output
    assert not into.exists()
    assert runner.invoke(app, ["new-system", "lexmem", "--into", str(into)]).exit_code == 0
    before = (into / "lexmem" / "config.py").read_text(encoding="utf-8")
    res = runner.invoke(app, ["new-system", "lexmem", "--title", "Other", "--into", str(into)])
    assert res.exit_code == 1 and "never overwrites" in res.output
    assert (into / "lexmem" / "config.py").read_text(encoding="utf-8") == before
