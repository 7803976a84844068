"""One place per system: outside memcore/systems/<name>/ no module of the LLM layer, the evaluation, the views,
the app's glue or its pages names a paper system (issue 25). What the rest of memcore knows about a system it
finds through the system's package (its class, its registered roles, reader family, mechanism, fidelity rows,
view), so a sixth system touches one place.

The names are the packages under memcore/systems/ (each paper system is a package there; baselines are modules),
matched case-insensitively as words ("CoM", "xMemory") and as module paths ("memcore.systems.com"); a web
address such as api.openai.com is not a name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ROOT / "memcore" / "systems"
CHECKED = ("memcore/llm", "memcore/eval", "memcore/viz", "ui", "pages")


def paper_systems() -> list[str]:
    """The packages under memcore/systems/: one per paper system."""
    return sorted(p.name for p in SYSTEMS.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_"))


def _pattern(names: list[str]) -> re.Pattern[str]:
    alt = "|".join(map(re.escape, names))
    return re.compile(rf"(?<![\w.])(?:{alt})\b|systems[./](?:{alt})\b", re.IGNORECASE)


def offences(names: list[str]) -> list[str]:
    """Every line under the checked folders that names a paper system: 'path:line: text'."""
    pat, found = _pattern(names), []
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pat.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    return found


def test_the_names_are_the_paper_systems() -> None:
    assert {"com", "xmemory", "memcot", "recmem", "memweaver"} <= set(paper_systems())


@pytest.mark.parametrize("line,hit", [("CoM chains", True), ("from memcore.systems.com import x", True),
                                      ("xMemory's themes", True), ("https://api.openai.com/v1", False),
                                      ("compute the common memory", False), ("memcore/systems/recmem/x.py", True),
                                      ("from memcore.systems.com.view import x", True),
                                      ("memcore/systems/recmem/view.py", True)])
def test_the_pattern(line: str, hit: bool) -> None:
    assert bool(_pattern(paper_systems()).search(line)) is hit


def test_no_paper_system_named_outside_its_package() -> None:
    bad = offences(paper_systems())
    assert not bad, "paper system names outside memcore/systems/<name>/:\n" + "\n".join(bad)
