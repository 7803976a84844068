"""Each system's view lives in its package (issue 25): no module of memcore/viz, ui/ or pages/ names a paper system.

Text that names a system on a page comes from the system's registered data (its view's blocks and captions, its
class's title), not from a literal in the page. The names are the packages under memcore/systems/ (each paper
system is one; baselines are modules), matched case-insensitively as words ("CoM", "xMemory") and as module paths
("memcore.systems.com"); a web address such as api.openai.com is not a name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("memcore/viz", "ui", "pages")


def paper_systems() -> list[str]:
    """The packages under memcore/systems/: one per paper system."""
    return sorted(p.parent.name for p in (ROOT / "memcore" / "systems").glob("*/__init__.py")
                  if not p.parent.name.startswith("_"))


def pattern(names: list[str]) -> re.Pattern[str]:
    """A system name as a word (not after a dot or a word character) or as a module path."""
    alt = "|".join(map(re.escape, names))
    return re.compile(rf"(?<![\w.])(?:{alt})\b|systems[./](?:{alt})\b", re.IGNORECASE)


def test_the_names_are_the_paper_systems() -> None:
    assert {"com", "xmemory", "memcot", "recmem", "memweaver"} <= set(paper_systems())


@pytest.mark.parametrize("line,hit", [("CoM chains", True), ("from memcore.systems.com.view import x", True),
                                      ("xMemory's themes", True), ("https://api.openai.com/v1", False),
                                      ("compute the common memory", False), ("memcore/systems/recmem/view.py", True)])
def test_the_pattern(line: str, hit: bool) -> None:
    assert bool(pattern(paper_systems()).search(line)) is hit


def test_no_paper_system_named_in_the_views_the_app_glue_or_the_pages() -> None:
    pat, bad = pattern(paper_systems()), []
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pat.search(line):
                    bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not bad, "paper system names outside memcore/systems/<name>/:\n" + "\n".join(bad)
