"""The house: memcore's modules import downward, floor by floor, no module is part of an import cycle, no folder
(group) is part of a cycle of groups, and no memcore module imports another inside a function to dodge one.

Every module under memcore/ is parsed (ast). Imports at module level and inside functions both
count: an import moved into a function to dodge a cycle is still an arrow. Relative imports are
resolved; `from pkg import name` is an arrow to the module pkg.name when there is one, else to pkg.
Imports under `if TYPE_CHECKING:` are annotations only (never executed): they must point downward
like any other, but they do not make a cycle (a system's helper modules annotate their functions
with the system class they serve). Registries that import modules by name (memcore.systems.load_all,
memcore.llm.roles.load_all, the view registry's built-in system views, memcore.plugins' entry points) make no
arrow: they find a module by its name at run time, as a plugin is found.

A module's group is its folder or top-level module: memcore.<top> (memcore itself, its version, is `types`).
No module is put in another group than its folder's. The floors, bottom up (docs/architecture.md draws the
same house):

    0  types, errors                         the vocabulary
    1  text, settings, serialize, sqlite_util the toolbox: text library, settings, (de)serialisation,
       registry, extensions                   the one registry of every extension + entry-point loading;
                                              the list of extension points (imports nothing of memcore)
    2  datasets, embed, llm, retrievers,     loaders, embedders, LLM client + roles + offline engine, retrievers,
       plugins                                plugins (the names plugins import, from the registry)
    3  store/                                LanceDB: LanceStore, schema, items, records, search, leases
    4  memory_diff                           what changed in a memory (reads MemoryViews)
    5  viz/                                  figures and tables of plain data; the view registry
    6  systems/                              the memory systems, each with its view (systems/<name>/view.py)
    7  ingest/                               replay a conversation into a system
    8  workbench                             store + embedder + LLM + systems: what the app calls
    9  eval, annotate, live                  evaluation (hands viz its numbers), human labels, live conversations
    10 cli/, testing                         the `memcore` command; the contract tests shipped for plugins

A module may import its own group and anything on a lower floor. RULES adds the arrows the floors alone
would allow but the house forbids. The app (app.py, ui/, pages/) sits above all of it and is never imported
by the library, nor is streamlit.

Imports inside functions: a memcore module imports another memcore module at module level. The only
exception is a lazy load kept for start-up time, marked on its line with `# lazy: <reason>` (e.g. the
CLI loading a command's heavy modules only when that command runs); lazy loads of third-party libraries
(torch, lancedb, ray, sentence-transformers, ...) need no mark.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memcore"

FLOORS: tuple[tuple[str, ...], ...] = (
    ("types", "errors"),
    ("text", "settings", "serialize", "sqlite_util", "registry", "extensions", "gcpause"),
    ("datasets", "embed", "llm", "retrievers", "plugins"),
    ("store",),
    ("memory_diff",),
    ("viz",),
    ("systems",),
    ("ingest",),
    ("workbench",),
    ("eval", "annotate", "live"),
    ("cli", "testing"),
)
FLOOR = {group: n for n, groups in enumerate(FLOORS) for group in groups}
APP = ("streamlit", "ui", "pages", "app")  # never imported by the library
LAZY = re.compile(r"#\s*lazy:\s*\S")  # the mark of a memcore import kept inside a function for start-up time


def is_system_view(module: str) -> bool:
    """Whether a module is a system's view: memcore.systems.<name>.view or a helper memcore.systems.<name>.view_*."""
    parts = module.split(".")
    return len(parts) == 4 and parts[:2] == ["memcore", "systems"] and (
        parts[3] == "view" or parts[3].startswith("view_"))


def group_of(module: str) -> str:
    """The group (floor room) of a memcore module: memcore.<top>, its folder or top-level module; the package
    itself (its version) is `types`."""
    parts = module.split(".")
    return "types" if len(parts) == 1 else parts[1]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


@dataclass(frozen=True)
class Rule:
    """Modules under `importer` (but not under `unless_importer`) must not import modules under
    `imported`, except those in `allowed`."""

    importer: str
    imported: str
    why: str
    allowed: tuple[str, ...] = ()
    unless_importer: str | tuple[str, ...] = ""  # module prefixes, or fnmatch patterns with "*"

    def exempt(self, src: str) -> bool:
        """Whether `src` is one of the importers this rule does not apply to."""
        pats = (self.unless_importer,) if isinstance(self.unless_importer, str) else self.unless_importer
        return any(p and (fnmatch(src, p) if "*" in p else _under(src, p)) for p in pats)

    def breaks(self, src: str, dst: str) -> bool:
        """Whether the arrow src -> dst breaks this rule."""
        return (_under(src, self.importer) and not self.exempt(src)
                and _under(dst, self.imported) and dst not in self.allowed)


RULES = (
    Rule("memcore.llm", "memcore.eval", "the LLM layer never imports the evaluation (the judge role lives in eval)"),
    Rule("memcore.llm.offline", "memcore.systems", "the offline engine never imports a memory system"),
    Rule("memcore.llm.offline", "memcore.eval", "the offline engine never imports the evaluation"),
    Rule("memcore.llm.offline", "memcore.llm.roles", "roles import their offline implementation, not the other "
         "way round (the offline engine may use the registry's base types only)", allowed=("memcore.llm.roles",)),
    Rule("memcore", "memcore.llm.offline", "the offline engine is reached through LLM roles only (memcore's own, "
         "or a system's roles and offline rules: memcore/systems/<name>/roles.py, offline*.py); shared text tools "
         "are in memcore.text",
         unless_importer=("memcore.llm", "memcore.systems.*.roles", "memcore.systems.*.offline*")),
    Rule("memcore", "memcore.testing", "memcore.testing is for test suites (memcore's and plugins'): the "
         "library never imports it", unless_importer="memcore.testing"),
    Rule("memcore.text", "memcore", "memcore.text imports only the standard library, third-party libraries and "
         "memcore.types", allowed=("memcore.types",), unless_importer="memcore.text"),
)


@dataclass(frozen=True)
class Arrow:
    """One import of a memcore module (or of an app / streamlit module) by a memcore module."""

    src: str
    dst: str
    path: Path
    line: int
    type_only: bool
    in_function: bool = False  # inside a function (or a method): run when called, not when the module loads
    lazy: bool = False  # its line carries the `# lazy: <reason>` mark

    def where(self) -> str:
        """file:line of the import statement."""
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _modules() -> dict[str, tuple[Path, bool]]:
    """memcore module name -> (file, is a package __init__)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _known(name: str, modules: dict) -> str | None:
    """The longest prefix of a dotted name that is a memcore module (None outside memcore)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_pkg: bool, modules: dict) -> list[str]:
    """The modules an import statement names, relative imports resolved; outside memcore: the top-level
    name when it is the app's or streamlit."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_pkg else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules else prefix for a in node.names]
    out = []
    for name in names:
        hit = _known(name, modules)
        if hit is not None:
            out.append(hit)
        elif name.split(".")[0] in APP:
            out.append(name.split(".")[0])
    return list(dict.fromkeys(out))


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def arrows_of(module: str, path: Path, is_pkg: bool, modules: dict, source: str | None = None) -> list[Arrow]:
    """Every import in a module (module level, in functions and classes), with its line."""
    text = source if source is not None else path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path))
    lines = text.splitlines()
    guarded: set[int] = set()
    local: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _type_checking(node.test):
            guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            local |= {id(n) for n in ast.walk(node) if n is not node}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            marked = any(LAZY.search(lines[n - 1]) for n in range(node.lineno, (node.end_lineno or node.lineno) + 1))
            for dst in _targets(node, module, is_pkg, modules):
                out.append(Arrow(module, dst, path, node.lineno, id(node) in guarded, id(node) in local, marked))
    return sorted(out, key=lambda a: (a.line, a.dst))


@pytest.fixture(scope="module")
def arrows() -> list[Arrow]:
    """All arrows between memcore modules, and to the app / streamlit."""
    return [a for m, (p, pkg) in MODULES.items() for a in arrows_of(m, p, pkg, MODULES)]


def _memcore(arrows: list[Arrow]) -> list[Arrow]:
    return [a for a in arrows if a.dst in MODULES]


def test_the_parser_sees_function_level_relative_and_guarded_imports() -> None:
    modules = {"memcore": None, "memcore.llm": None, "memcore.llm.roles": None, "memcore.llm.roles.judge": None,
               "memcore.eval": None, "memcore.eval.metrics": None}
    src = ("from typing import TYPE_CHECKING\nimport os\nfrom . import judge\n"
           "if TYPE_CHECKING:\n    from memcore.eval import metrics\n"
           "def f():\n    from ...eval.metrics import lexical_judge\n    import streamlit as st\n"
           "    from memcore.llm.roles import Role\n")
    got = {(a.dst, a.line, a.type_only) for a in arrows_of("memcore.llm.roles", PACKAGE / "x.py", True, modules, src)}
    assert got == {("memcore.llm.roles.judge", 3, False), ("memcore.eval.metrics", 5, True),
                   ("memcore.eval.metrics", 7, False), ("streamlit", 8, False), ("memcore.llm.roles", 9, False)}
    local = {(a.line, a.in_function, a.lazy) for a in arrows_of("memcore.llm.roles", PACKAGE / "x.py", True, modules,
                                                                 src.replace("Role\n", "Role  # lazy: start-up\n"))}
    assert local == {(3, False, False), (5, False, False), (7, True, False), (8, True, False), (9, True, True)}


def test_group_is_the_folder_with_no_exception() -> None:
    assert group_of("memcore") == "types" and group_of("memcore.workbench") == "workbench"
    assert {group_of(m) for m in ("memcore.systems.com", "memcore.systems.com.view", "memcore.systems.com.view_x",
                                  "memcore.systems.variants")} == {"systems"}
    assert {group_of(m) for m in MODULES} == {m.split(".")[1] if "." in m else "types" for m in MODULES}


def test_every_module_is_on_a_floor() -> None:
    missing = sorted({group_of(m) for m in MODULES} - set(FLOOR))
    assert not missing, f"memcore.{missing} on no floor: add to FLOORS in tests/test_import_graph.py"


def test_no_import_cycles(arrows: list[Arrow]) -> None:
    graph = nx.DiGraph()
    lines: dict[tuple[str, str], str] = {}
    for a in _memcore(arrows):
        if not a.type_only:
            graph.add_edge(a.src, a.dst)
            lines.setdefault((a.src, a.dst), a.where())
    found = []
    for scc in nx.strongly_connected_components(graph):
        if len(scc) > 1 or any(graph.has_edge(m, m) for m in scc):
            cycle = nx.find_cycle(graph.subgraph(scc))
            found.append(" -> ".join(f"{u} ({lines[u, v]})" for u, v in cycle) + f" -> {cycle[0][0]}"
                         + (f"  [{len(scc)} modules in this knot: {sorted(scc)}]" if len(scc) > len(cycle) else ""))
    assert not found, "import cycles:\n" + "\n".join(found)


def folder_cycles(arrows: list[Arrow]) -> list[str]:
    """The cycles of the folder-level graph (groups as nodes, an edge for every executed import between two
    groups), each with one import per edge as file:line; [] when the groups form a DAG."""
    graph = nx.DiGraph()
    where: dict[tuple[str, str], str] = {}
    for a in arrows:
        src, dst = group_of(a.src), group_of(a.dst)
        if not a.type_only and src != dst:
            graph.add_edge(src, dst)
            where.setdefault((src, dst), f"{a.where()} {a.src} -> {a.dst}")
    found = []
    for scc in nx.strongly_connected_components(graph):
        if len(scc) > 1:
            cycle = nx.find_cycle(graph.subgraph(scc))
            found.append(" -> ".join(u for u, _ in cycle) + f" -> {cycle[0][0]}: "
                         + "; ".join(where[u, v] for u, v in cycle))
    return found


def test_no_folder_cycles(arrows: list[Arrow]) -> None:
    found = folder_cycles(_memcore(arrows))
    assert not found, "cycles between folders (groups):\n" + "\n".join(found)


def test_the_folder_check_fails_on_a_planted_cycle(tmp_path: Path) -> None:
    """A synthetic package whose modules form no module cycle but a folder cycle (a/x -> b/y, b/z -> a/w): the
    module check passes, the folder check names the loop."""
    sources = {"memcore/a/x.py": "from memcore.b import y\n", "memcore/a/w.py": "X = 1\n",
               "memcore/b/y.py": "Y = 2\n", "memcore/b/z.py": "def f():\n    from memcore.a import w\n",
               "memcore/c.py": "from memcore.a import x\n"}
    modules = {"memcore": None, "memcore.a": None, "memcore.b": None, **{
        k.removesuffix(".py").replace("/", "."): None for k in sources}}
    planted = [a for k, src in sources.items() for a in arrows_of(
        k.removesuffix(".py").replace("/", "."), ROOT / k, False, modules, src)]
    graph = nx.DiGraph([(a.src, a.dst) for a in planted])
    assert nx.is_directed_acyclic_graph(graph)  # no module is in a cycle
    found = folder_cycles(planted)
    assert len(found) == 1 and set(found[0].split(":")[0].split(" -> ")) == {"a", "b"}, found
    assert "memcore/b/z.py:2" in found[0] and "memcore/a/x.py:1" in found[0]
    assert not folder_cycles([a for a in planted if a.src != "memcore.b.z"])  # the loop's one arrow removed: none


def test_no_memcore_import_inside_a_function_unless_marked_lazy(arrows: list[Arrow]) -> None:
    bad = [f"{a.where()}: {a.src} imports {a.dst} inside a function" for a in _memcore(arrows)
           if a.in_function and not a.lazy]
    assert not bad, ("memcore modules import each other at module level (move code to break a loop); a lazy load "
                     "kept for start-up time says so on its line with `# lazy: <reason>`:\n" + "\n".join(bad))


def test_imports_go_downward(arrows: list[Arrow]) -> None:
    bad = []
    for a in _memcore(arrows):
        src, dst = group_of(a.src), group_of(a.dst)
        if src == dst or src not in FLOOR or dst not in FLOOR:  # no floor: test_every_module_is_on_a_floor
            continue
        if FLOOR[dst] < FLOOR[src]:
            continue
        way = "upward" if FLOOR[dst] > FLOOR[src] else "sideways"
        bad.append(f"{a.where()}: {a.src} imports {a.dst} ({way}: {src} on floor {FLOOR[src]}, "
                   f"{dst} on floor {FLOOR[dst]})")
    assert not bad, "imports against the floors:\n" + "\n".join(bad)


def test_house_rules(arrows: list[Arrow]) -> None:
    bad = [f"{a.where()}: {a.src} imports {a.dst}: {r.why}"
           for a in _memcore(arrows) for r in RULES if r.breaks(a.src, a.dst)]
    assert not bad, "imports against the house rules:\n" + "\n".join(bad)


def test_the_library_never_imports_the_app_or_streamlit(arrows: list[Arrow]) -> None:
    bad = [f"{a.where()}: {a.src} imports {a.dst}" for a in arrows if a.dst in APP]
    assert not bad, "memcore/ must not import app.py, ui/, pages/ or streamlit:\n" + "\n".join(bad)


def test_llm_roles_load_without_eval_and_eval_registers_the_judge() -> None:
    code = ("import sys\nfrom memcore.llm.roles import ROLES, load_all\nload_all()\n"
            "assert not [m for m in sys.modules if m.startswith('memcore.eval')], 'llm imported eval'\n"
            "assert 'judge' not in ROLES\n"
            "import memcore.eval.judge\nassert ROLES['judge'].name == 'judge'\nprint('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


def test_system_views_import_viz_downward_and_only_the_registry_loads_them(arrows: list[Arrow]) -> None:
    views = sorted(m for m in MODULES if is_system_view(m))
    assert {f"memcore.systems.{n}.view" for n in ("com", "memcot", "recmem", "xmemory", "memweaver")} <= set(views)
    assert {group_of(m) for m in views} == {"systems"} and FLOOR["viz"] < FLOOR["systems"]
    assert any(a.src in views and group_of(a.dst) == "viz" for a in _memcore(arrows))  # they draw with viz's parts
    assert not is_system_view("memcore.systems.com.viewer") and not is_system_view("memcore.viz.views")
    bad = [f"{a.where()}: {a.src} imports {a.dst}" for a in _memcore(arrows) if is_system_view(a.dst)
           and not (is_system_view(a.src) and a.src.split(".")[2] == a.dst.split(".")[2])]
    assert not bad, "a system's view is imported by the view registry only (by name):\n" + "\n".join(bad)


def test_viz_loads_no_system_eval_or_workbench() -> None:
    """Importing viz's modules loads nothing above viz. Left out: baselines.py, the baselines' views, whose
    register_view loads the view registry (and so, by name, every system's view, as load_views does)."""
    mods = sorted(f"memcore.viz.{p.stem}" for p in (PACKAGE / "viz").glob("*.py") if p.stem not in ("__init__",
                                                                                                   "baselines"))
    code = (f"import importlib, sys\nfor m in {mods!r}:\n    importlib.import_module(m)\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[:2] in (['memcore', 'systems'], "
            "['memcore', 'eval'], ['memcore', 'workbench'], ['memcore', 'ingest']))))\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "", f"importing memcore.viz loaded: {res.stdout.strip()}"


def test_load_all_imports_no_view_and_load_views_imports_each_builtin_view() -> None:
    code = ("import sys\nfrom memcore.systems import load_all, builtin_systems\nload_all()\n"
            "assert not [m for m in sys.modules if m.startswith('memcore.viz') or m.startswith('memcore.systems.') "
            "and m.split('.')[-1].startswith('view')], "
            "'load_all imported a view'\n"
            "from memcore.viz.views import builtin_view_modules, load_views, has_view\nload_views()\n"
            "mods = builtin_view_modules()\nassert all(m in sys.modules for m in mods), mods\n"
            "print(','.join(sorted(mods)))\nprint(','.join(n for n in builtin_systems() if has_view(n)))\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    mods, viewed = res.stdout.split()
    on_disk = sorted(f"memcore.systems.{p.parent.name}.view" for p in (PACKAGE / "systems").glob("*/view.py"))
    assert mods.split(",") == on_disk
    assert {"com", "memcot", "recmem", "xmemory", "memweaver", "naive_rag"} <= set(viewed.split(","))
