"""`memcore new-system NAME`: write the files of a new system package (the checklist of DEVELOPERS.md, "Adding a
system") from the template in memcore/systems/_template/.

The package it writes is a working system (the last k turns of the conversation and a focus role: the example
plugin's recent_k, renamed) that registers, passes memcore.testing's contract and appears in the generated docs
(scripts/gen_docs.py) with nothing else changed; its author then replaces the mechanism with the paper's.
It never overwrites: a name that is taken (a registered system, a module or folder under memcore/systems/) is
refused with exit code 1 and nothing written.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

import typer

from memcore.systems import load_all, rank_of
from memcore.text.terminal import echo

NAME = re.compile(r"[a-z][a-z0-9_]{1,30}")
TEMPLATE = "_template"
FILES = ("__init__.py", "config.py", "roles.py", "offline.py", "reader.py", "structure.py", "stats.py",
         "fidelity.py", "view.py", "presets.py")
COLOR = "#7F3C8D"  # a colour no built-in system uses; the author picks the system's own
SYSTEMS_DIR = Path(__file__).resolve().parents[1] / "systems"


@dataclass(frozen=True)
class NewSystem:
    """What the template is rendered with."""

    name: str
    title: str
    paper: str
    rank: int
    color: str = COLOR

    @property
    def class_prefix(self) -> str:
        """The class names' prefix: `my_system` -> `MySystem` (MySystemSystem, MySystemConfig, ...)."""
        return "".join(p[:1].upper() + p[1:] for p in self.name.split("_"))


def check_name(name: str, into: Path) -> None:
    """Raise ValueError naming the fix when `name` cannot be a new system package under `into`."""
    if not NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a system name: use 2-31 lower-case letters, digits and '_', starting "
                         "with a letter (it is the package name and the name in `memcore systems`)")
    if (into / name).exists() or (into / f"{name}.py").exists():
        raise ValueError(f"{into / name} already exists: memcore new-system never overwrites; pick another name")
    if name in load_all():
        raise ValueError(f"a system named {name!r} is already registered; pick another name")


def _sort_first_party(text: str) -> str:
    """Sort each run of `from memcore... import` lines by module (the package name decides where its own
    imports go, so the rendered files are ruff-clean whatever the name)."""
    out: list[str] = []
    run: list[str] = []
    for line in [*text.split("\n"), None]:
        if line is not None and line.startswith("from memcore"):
            run.append(line)
            continue
        out.extend(sorted(run, key=lambda s: s.split()[1]))
        run = []
        if line is not None:
            out.append(line)
    return "\n".join(out)


def render(spec: NewSystem) -> dict[str, str]:
    """The package's files: file name -> text."""
    fields = {"name": spec.name, "Class": spec.class_prefix, "title": spec.title, "paper": spec.paper,
              "rank": str(spec.rank), "color": spec.color}
    folder = resources.files("memcore.systems").joinpath(TEMPLATE)
    return {f: _sort_first_party(Template(folder.joinpath(f + ".tmpl").read_text(encoding="utf-8")).substitute(fields))
            for f in FILES}


def next_rank() -> int:
    """After every registered system's rank below 1000 (plugins default to 1000), in steps of 10."""
    ranks = [rank_of(cls) for cls in load_all().values() if rank_of(cls) < 1000]
    return (max(ranks, default=0) // 10 + 1) * 10


def write_system(spec: NewSystem, into: Path = SYSTEMS_DIR) -> list[Path]:
    """Write the package `into/<name>/` (checked first: nothing is written for a name that is taken)."""
    check_name(spec.name, into)
    files = render(spec)
    package = into / spec.name
    package.mkdir(parents=True)
    out = []
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
        out.append(package / name)
    return out


def new_system_command(
    name: str = typer.Argument(..., help="the system's name: its package memcore/systems/NAME/ and its registry name"),
    title: str = typer.Option("", help="the title shown in lists and the docs (default: NAME)"),
    paper: str = typer.Option("", help="the paper it implements, as cited in lists (default: 'not yet named')"),
    rank: int = typer.Option(0, help="its place in lists (default: after the registered systems)"),
    into: Path = typer.Option(SYSTEMS_DIR, help="where the package goes (default: memcore/systems/)",
                              hidden=True),
) -> None:
    """Write a new system package from the template: every file of the checklist (DEVELOPERS.md, "Adding a
    system"). Then run `python scripts/gen_docs.py` (its docs/fidelity.md section) and its contract tests."""
    try:
        spec = NewSystem(name, title or name, paper or f"{name}: paper not yet named", rank or next_rank())
        written = write_system(spec, into)
    except (ValueError, OSError) as e:
        echo(f"Error: {e}", err=True)
        raise typer.Exit(1) from None
    echo(f"wrote {len(written)} files in {written[0].parent}: {', '.join(p.name for p in written)}")
    echo(f"{name} registers as a built-in system (rank {spec.rank}). Next: python scripts/gen_docs.py (its "
         f"docs/fidelity.md section), memcore.testing.run_contract({name!r}) in tests/systems/test_{name}.py, "
         "then replace the template's mechanism (the last k turns) with the paper's.")
