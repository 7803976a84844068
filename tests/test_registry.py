"""The one registry (memcore.registry): a taken name is refused naming both owners, `unregister` gives the entry
back, a kind loads its built-ins and then its entry points once and lazily, installed plugins show only when
enabled, one lock makes registering and loading thread-safe, and no other module keeps a table of its own."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import sys
import textwrap
import threading
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from memcore import registry
from memcore.registry import NameTaken

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memcore"
_n = itertools.count()


@pytest.fixture
def kind() -> str:
    """A fresh kind of extension, private to one test."""
    name = f"test-kind-{next(_n)}"
    registry.define(name, "test widget")
    return name


# ------------------------------------------------------------------------------------------- the name rule
def test_a_taken_name_is_refused_naming_both_owners_and_the_same_object_again_is_a_no_op(kind) -> None:
    first, second = object(), object()
    assert registry.register(kind, "w", first) is first
    assert registry.register(kind, "w", first) is first  # the same object again: nothing changes
    assert registry.owner(kind, "w") == __name__  # the calling module owns what it registers
    with pytest.raises(NameTaken, match=f"test widget 'w' is already registered by {__name__}; "
                                        "plugin 'x' \\(memcore.test = m:W\\) cannot register another") as err:
        registry.register(kind, "w", second, owner="plugin 'x' (memcore.test = m:W)")
    assert isinstance(err.value, ValueError)  # what the wrappers documented before: callers catching it still do
    assert registry.get(kind, "w") is first  # never replaced


def test_equal_entries_count_as_the_same_when_the_kind_says_so() -> None:
    name = f"test-kind-{next(_n)}"
    registry.define(name, "test preset", same=lambda a, b: a == b)
    assert registry.register(name, ("sys", "p"), {"k": 1}) == {"k": 1}
    assert registry.register(name, ("sys", "p"), {"k": 1}) == {"k": 1}
    with pytest.raises(NameTaken, match="test preset 'sys:p' is already registered"):
        registry.register(name, ("sys", "p"), {"k": 2})


def test_unregister_gives_the_entry_back_and_frees_the_name(kind) -> None:
    first, second = object(), object()
    registry.register(kind, "w", first)
    assert registry.unregister(kind, "w") is first and registry.get(kind, "w") is None
    assert registry.unregister(kind, "w") is None  # nothing left to remove
    assert registry.register(kind, "w", second) is second and registry.names(kind) == ["w"]


def test_the_table_view_registers_and_unregisters_through_the_same_rule(kind) -> None:
    table = registry.Table(kind)
    table["a"] = 1
    assert dict(table) == {"a": 1} and len(table) == 1
    with pytest.raises(NameTaken):
        table["a"] = 2
    assert table.pop("a") == 1 and "a" not in table
    with pytest.raises(KeyError):
        del table["a"]


def test_every_kind_of_extension_is_declared_in_the_one_registry() -> None:
    import memcore.eval.metric_registry
    import memcore.retrievers
    import memcore.systems.variants
    import memcore.viz.views  # noqa: F401 - each declares its kind when imported

    declared = {k.name for k in registry.kinds()}
    assert {"system", "retriever", "view", "metric", "role", "reader family", "preset", "sweep"} <= declared


# --------------------------------------------------------------------------------- lazy loading, plugins
PLUGIN = '''
LOADS = []
LOADS.append(1)
THING = "from the plugin"
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A kind with a built-in loader and an entry-point group naming a module in a package written here."""
    (tmp_path / "fakewidgets_pkg").mkdir()
    (tmp_path / "fakewidgets_pkg" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    group = f"memcore.test-widgets-{next(_n)}"
    eps = [EntryPoint("extra", "fakewidgets_pkg:THING", group)]
    monkeypatch.setattr(registry, "entry_points", lambda group: [e for e in eps if e.group == group])
    name = f"test-kind-{next(_n)}"
    calls = {"load": 0, "accept": 0}

    def load() -> None:
        calls["load"] += 1
        registry.register(name, "builtin", "memcore's own")

    def accept(obj: object) -> None:
        calls["accept"] += 1
        registry.register(name, "extra", obj)

    registry.reload_plugins()  # the plugin packages are read afresh (with the fake entry point)
    registry.define(name, "test widget", load=load, group=group, accept=accept)
    yield name, calls, group
    sys.modules.pop("fakewidgets_pkg", None)
    registry.reload_plugins()


def test_a_kind_loads_lazily_built_ins_first_then_its_entry_points_once(installed, plugins) -> None:
    kind, calls, group = installed
    assert calls == {"load": 0, "accept": 0} and "fakewidgets_pkg" not in sys.modules  # defining loads nothing
    assert registry.names(kind) == ["builtin", "extra"]
    assert registry.names(kind) == ["builtin", "extra"] and calls == {"load": 1, "accept": 1}  # once
    assert sys.modules["fakewidgets_pkg"].LOADS == [1]
    assert registry.owner(kind, "extra") == f"plugin 'extra' ({group} = fakewidgets_pkg:THING)"
    assert registry.owner(kind, "builtin") == __name__


def test_plugins_switched_off_are_neither_loaded_nor_shown(installed, monkeypatch) -> None:
    kind, calls, _ = installed
    assert registry.names(kind) == ["builtin"]  # tests run with installed plugins off (tests/conftest.py)
    assert calls == {"load": 1, "accept": 0} and "fakewidgets_pkg" not in sys.modules
    monkeypatch.setenv(registry.PLUGINS_ENV, "1")
    assert registry.names(kind) == ["builtin", "extra"]
    monkeypatch.setenv(registry.PLUGINS_ENV, "off")
    assert registry.names(kind) == ["builtin"] and registry.get(kind, "extra") is None  # loaded, hidden
    assert registry.Table(kind).get("extra") is None


def test_tests_see_memcore_s_own_systems_unless_they_opt_in() -> None:
    from memcore.systems import builtin_systems, load_all

    assert not registry.plugins_enabled()
    assert list(load_all()) == builtin_systems()


@pytest.mark.plugins
def test_the_marker_opts_in() -> None:
    assert registry.plugins_enabled()


def test_a_read_while_the_kind_loads_gets_what_is_registered_so_far() -> None:
    name = f"test-kind-{next(_n)}"
    seen = []

    def load() -> None:
        registry.register(name, "a", 1)
        seen.append(registry.names(name))  # a module being imported asks for the entries: no deadlock, no reload
        registry.register(name, "b", 2)

    registry.define(name, "test widget", load=load)
    assert registry.names(name) == ["a", "b"] and seen == [["a"]]


def test_a_failing_built_in_loader_is_retried_at_the_next_read() -> None:
    name = f"test-kind-{next(_n)}"
    tries = []

    def load() -> None:
        tries.append(1)
        if len(tries) == 1:
            raise ImportError("first try fails")
        registry.register(name, "a", 1)

    registry.define(name, "test widget", load=load)
    with pytest.raises(ImportError):
        registry.names(name)
    assert registry.names(name) == ["a"] and len(tries) == 2


# ------------------------------------------------------------------------------------------- one lock
def test_concurrent_first_reads_load_once_and_concurrent_registrations_keep_one_owner_per_name() -> None:
    name = f"test-kind-{next(_n)}"
    loads = []

    def load() -> None:
        loads.append(threading.get_ident())
        for i in range(200):
            registry.register(name, f"b{i}", i)

    registry.define(name, "test widget", load=load)
    start = threading.Barrier(8)
    seen, refused, won = [], [], []

    def reader() -> None:
        start.wait()
        seen.append(len(registry.names(name)))

    def writer(i: int) -> None:
        start.wait()
        try:
            registry.register(name, "contested", i)
            won.append(i)
        except NameTaken:
            refused.append(i)
        for j in range(50):
            registry.register(name, f"w{i}-{j}", j)

    threads = [threading.Thread(target=reader) for _ in range(4)] + [
        threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1  # one load, however many threads read first
    assert all(n >= 200 for n in seen)  # no reader saw a half-done load
    assert len(won) == 1 and len(refused) == 3 and registry.get(name, "contested") == won[0]
    assert len(registry.names(name)) == 200 + 1 + 4 * 50


# ---------------------------------------------------------------------------------- no table elsewhere
_MUTATORS = {"pop", "setdefault", "update", "clear", "popitem", "append", "extend", "insert", "remove", "add",
             "discard", "__setitem__", "__delitem__"}
_TABLES = {"dict", "list", "set", "defaultdict", "OrderedDict"}


def _module_tables(tree: ast.Module) -> set[str]:
    """Names bound at module level to a new dict, list or set (literal, comprehension or constructor call)."""
    out = set()
    for node in tree.body:
        targets, value = ([node.target], node.value) if isinstance(node, ast.AnnAssign) else (
            (node.targets, node.value) if isinstance(node, ast.Assign) else ([], None))
        if value is None:
            continue
        is_table = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp) or (
            isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) in _TABLES)
        if is_table:
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def own_tables(source: str) -> list[str]:
    """"function mutates NAME" for every module-level table a register*/unregister* function of `source` changes."""
    tree = ast.parse(source)
    tables = _module_tables(tree)
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or "register" not in fn.name:
            continue
        for node in ast.walk(fn):
            name = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
                name = getattr(node.value, "id", None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
                name = getattr(node.func.value, "id", None)
            elif isinstance(node, ast.Global):
                name = next((n for n in node.names if n in tables), None)
            if name in tables:
                found.append(f"{fn.name} mutates {name}")
    return sorted(set(found))


def test_the_scan_finds_a_hand_written_registry() -> None:
    planted = textwrap.dedent('''
        _WIDGETS: dict[str, object] = {}
        ORDER = []

        def register_widget(w):
            _WIDGETS[w.name] = w
            ORDER.append(w.name)

        def unregister_widget(name):
            _WIDGETS.pop(name, None)

        def widgets():
            return dict(_WIDGETS)
    ''')
    assert own_tables(planted) == ["register_widget mutates ORDER", "register_widget mutates _WIDGETS",
                                   "unregister_widget mutates _WIDGETS"]
    assert own_tables("from memcore import registry\n\ndef register_widget(w):\n"
                      "    return registry.register('widget', w.name, w)\n") == []


def test_no_module_but_the_registry_keeps_a_register_unregister_table() -> None:
    files = [p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "registry.py"]
    assert len(files) > 50  # the scan sees memcore's modules
    bad = {str(p.relative_to(ROOT)): t for p in files if (t := own_tables(p.read_text()))}
    assert not bad, f"registries kept outside memcore/registry.py (use registry.define/register): {bad}"


# ------------------------------------------------------------------------------- the extension points file
def _resolve(path: str):
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def test_memcore_extensions_lists_every_kind_with_its_real_signature() -> None:
    from memcore.extensions import EXTENSION_POINTS, extension_point

    test_every_kind_of_extension_is_declared_in_the_one_registry()  # imports every module that declares a kind
    assert sorted(p.kind for p in EXTENSION_POINTS) == sorted(k.name for k in registry.kinds()
                                                              if not k.name.startswith("test-kind-"))
    for point in EXTENSION_POINTS:
        assert str(inspect.signature(_resolve(point.register))) == point.signature, point.kind
        assert all(callable(_resolve(p)) for p in (point.unregister, *point.read))
        kind = registry._kind(point.kind)
        assert (point.group, bool(point.group)) == (kind.group, kind.accept is not None), point.kind
    with pytest.raises(KeyError, match="kinds: system, retriever"):
        extension_point("hook")


@pytest.mark.parametrize("kind", ["system", "retriever", "view", "metric", "role", "reader family", "preset",
                                  "sweep"])
def test_each_extension_point_example_runs_and_registers_its_kind(kind) -> None:
    from memcore.extensions import extension_point

    point = extension_point(kind)
    registry.ensure(kind)
    before = {e.key for e in registry.entries(kind)}
    exec(compile(point.example, f"<example {kind}>", "exec"), {"__name__": "tests.extension_example"})
    added = [e for e in registry.entries(kind) if e.key not in before]
    try:
        assert added and all(e.owner == "tests.extension_example" for e in added), kind
    finally:
        for e in registry.entries(kind):
            if e.owner == "tests.extension_example":
                registry.unregister(kind, e.key)
        for other in ("role",):  # the reader-family example registers its reader role too
            for e in registry.entries(other):
                if e.owner == "tests.extension_example":
                    registry.unregister(other, e.key)
