"""Docs generated from the code (scripts/gen_docs.py): the committed docs are what the code says, a stale one is
found and rewritten, and the generated parts carry what they claim (every built-in system's rows, every module)."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

from memcore.systems import builtin_systems, load_all

ROOT = Path(__file__).resolve().parents[1]


def gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_docs_are_not_stale() -> None:
    stale = gen_docs().generate(ROOT, check=True)
    assert not stale, f"stale generated docs: {[str(p) for p in stale]}; run python scripts/gen_docs.py"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", root / "docs")
    (root / "memcore").symlink_to(ROOT / "memcore")
    return root


def test_a_stale_doc_is_found_then_rewritten(tmp_path) -> None:
    g, root = gen_docs(), _copy(tmp_path)
    fid = root / "docs" / "fidelity.md"
    text = fid.read_text(encoding="utf-8")
    fid.write_text(text.replace("| `com.K` = 20 |", "| `com.K` = 21 |"), encoding="utf-8")
    assert g.main(["--check", "--root", str(root)]) == 1
    assert g.generate(root) == [fid] and fid.read_text(encoding="utf-8") == text
    assert g.main(["--check", "--root", str(root)]) == 0
    hand = text.replace("## Reader prompts", "## Reader prompts (edited by hand)")
    fid.write_text(hand, encoding="utf-8")
    assert g.generate(root) == [] and fid.read_text(encoding="utf-8") == hand  # hand-written parts are kept


def test_missing_markers_say_so(tmp_path) -> None:
    g, root = gen_docs(), _copy(tmp_path)
    (root / "docs" / "architecture.md").write_text("# architecture\n", encoding="utf-8")
    try:
        g.generate(root, check=True)
    except ValueError as e:
        assert "generated markers are missing" in str(e)
    else:
        raise AssertionError("no error for a doc without markers")


def test_every_builtin_systems_rows_are_in_the_doc_in_rank_order() -> None:
    text = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    systems = load_all()
    with_rows = [n for n in builtin_systems() if systems[n].fidelity is not None]
    assert len(with_rows) >= 8
    at = [text.index("| " + " | ".join(systems[n].fidelity.rows[0].cells()) + " |") for n in with_rows]
    assert at == sorted(at)
    for name in with_rows:
        for row in systems[name].fidelity.rows:
            assert "| " + " | ".join(row.cells()) + " |" in text, (name, row.step)


def test_the_module_index_lists_every_module_once() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(memcore/[^`]+)` \|", text, re.M)
    rels = [p.relative_to(ROOT).parts for p in (ROOT / "memcore").rglob("*.py") if "__pycache__" not in p.parts]
    want = ["/".join(r) for r in rels if not (len(r) >= 4 and r[1] == "systems")]  # a system package: one row
    packages = {f"memcore/systems/{p.parent.name}/" for p in (ROOT / "memcore" / "systems").glob("*/__init__.py")}
    assert len(listed) == len(set(listed))
    assert set(listed) == set(want) | packages
