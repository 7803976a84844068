"""Plugins from outside memcore: entry points add systems, retrievers and views; a broken plugin is
skipped with a warning naming it and its error, and everything else loads.

The end-to-end tests build a fake installed distribution (a *.dist-info folder with entry_points.txt
next to its modules) in a temporary folder and run a fresh Python with it on the path, so entry
points are discovered exactly as after `pip install`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from memcore import registry
from memcore.plugins import PluginWarning, load_plugins, plugin_errors
from memcore.systems import builtin_systems, load_all

ROOT = Path(__file__).resolve().parents[1]

GOOD = '''
from memcore.systems import register_system
from memcore.systems.naive_rag import NaiveRAGSystem


class ZetaSystem(NaiveRAGSystem):
    name = "zeta_plug"   # no rank: plugins come after the built-ins (BaseSystem.rank = 1000)
    title = "Zeta (fake plugin)"


@register_system
class AlphaSystem(NaiveRAGSystem):
    name = "alpha_plug"
    title = "Alpha (fake plugin)"


@register_system
class MidSystem(NaiveRAGSystem):
    name = "mid_plug"
    title = "Mid (fake plugin)"
    rank = 15  # declared: between full_context (10) and naive_rag (20)
'''
VIEWS = '''
from memcore.viz.views import SystemView
VIEW = SystemView("zeta_plug", color="#010203", rank=15)
'''
BAD = 'raise ImportError("libfoo.so: cannot open shared object file")\n'
TAKEN = '''
from memcore.systems.naive_rag import NaiveRAGSystem
from memcore.viz.views import SystemView
class Impostor(NaiveRAGSystem):
    name = "com"
    title = "not CoM"
STEAL = SystemView("com", color="#000000", rank=1)  # a plugin's view for a built-in system: refused
'''
ENTRY_POINTS = '''
[memcore.systems]
zeta = fakeplug_good:ZetaSystem
alpha = fakeplug_good
broken = fakeplug_bad:System
impostor = fakeplug_taken:Impostor
wrong_type = fakeplug_views:VIEW

[memcore.views]
zeta = fakeplug_views:VIEW
broken_view = fakeplug_bad:VIEW
steal = fakeplug_taken:STEAL

[memcore.retrievers]
broken_retriever = fakeplug_missing_module:R
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder holding an 'installed' distribution fakeplug with entry points in all three groups."""
    root = tmp_path_factory.mktemp("site")
    for name, src in {"fakeplug_good": GOOD, "fakeplug_views": VIEWS, "fakeplug_bad": BAD, "fakeplug_taken": TAKEN}.items():
        (root / f"{name}.py").write_text(textwrap.dedent(src))
    info = root / "fakeplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return root


def run_with(site: Path, code: str) -> subprocess.CompletedProcess:
    """Run Python code in a fresh process that sees the fake distribution."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "default"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


def test_plugin_systems_load_after_the_built_ins_and_broken_ones_are_skipped(site, plugins) -> None:
    res = run_with(site, """
        from memcore.plugins import plugin_errors
        from memcore.systems import builtin_systems, load_all
        names = list(load_all())
        print("ORDER", names)
        print("BUILTIN", builtin_systems())
        print("COM", load_all()["com"].__module__)
        print("ERRORS", sorted(e.name for e in plugin_errors()))
    """)
    assert res.returncode == 0, res.stderr
    out = dict(line.split(" ", 1) for line in res.stdout.splitlines())
    names = eval(out["ORDER"])
    builtin = eval(out["BUILTIN"])
    # the built-ins in their rank order; plugins after them (ties by name) unless they declare a rank,
    # also when they subclass a built-in (zeta and alpha inherit naive_rag's 20 but come last)
    assert [n for n in names if n in builtin] == builtin and len(builtin) >= 8
    assert names[:3] == ["full_context", "mid_plug", "naive_rag"]
    assert [n for n in names if n.endswith("_plug")] == ["mid_plug", "alpha_plug", "zeta_plug"]
    assert names.index("alpha_plug") > names.index("memweaver")
    assert out["COM"] == "memcore.systems.com"  # a plugin cannot take a built-in's name
    assert eval(out["ERRORS"]) == ["broken", "impostor", "wrong_type"]
    # one clear warning per broken plugin, naming it, its package and its error
    assert "memcore plugin 'broken' (memcore.systems = fakeplug_bad:System) from package 'fakeplug 0.1' was not " \
           "loaded: ImportError: libfoo.so: cannot open shared object file" in res.stderr
    assert "'impostor'" in res.stderr and ("memory system 'com' is already registered by memcore.systems.com; "
                                          "plugin 'impostor' (memcore.systems = fakeplug_taken:Impostor) from "
                                          "package 'fakeplug 0.1' cannot register another") in res.stderr
    assert "'wrong_type'" in res.stderr and "must name a BaseSystem subclass" in res.stderr


def test_plugin_views_and_retrievers_load_and_broken_ones_warn(site, plugins) -> None:
    res = run_with(site, """
        from memcore.retrievers import retriever_names
        from memcore.viz.views import get_view, has_view, view_order
        print("RETRIEVERS", list(retriever_names()))
        print("VIEW", has_view("zeta_plug"), get_view("zeta_plug").color, view_order(["com", "zeta_plug"]))
        from memcore.registry import owner
        print("BUILTIN_VIEW", has_view("com"), owner("view", "com"), get_view("com").rank)
    """)
    assert res.returncode == 0, res.stderr
    out = dict(line.split(" ", 1) for line in res.stdout.splitlines())
    assert eval(out["RETRIEVERS"])[:3] == ["dense", "lexical", "hybrid"]
    assert out["VIEW"] == "True #010203 ['zeta_plug', 'com']"
    assert out["BUILTIN_VIEW"] == "True memcore.systems.com.view 40"  # the plugin's view of com was refused, not swapped in
    assert ("memcore plugin 'steal' (memcore.views = fakeplug_taken:STEAL) from package 'fakeplug 0.1' was not loaded: "
            "NameTaken: view 'com' is already registered by memcore.systems.com.view; plugin 'steal'") in res.stderr
    assert "memcore plugin 'broken_view' (memcore.views = fakeplug_bad:VIEW)" in res.stderr
    assert "memcore plugin 'broken_retriever' (memcore.retrievers = fakeplug_missing_module:R)" in res.stderr
    assert "ModuleNotFoundError: No module named 'fakeplug_missing_module'" in res.stderr


def test_the_cli_lists_plugin_systems_and_survives_a_broken_one(site, plugins) -> None:
    res = run_with(site, "import sys; sys.argv = ['memcore', 'systems']; from memcore.cli import main; main()")
    assert res.returncode == 0, res.stderr
    assert "alpha_plug" in res.stdout and "zeta_plug" in res.stdout and "memweaver" in res.stdout
    assert "memcore plugin 'broken'" in res.stderr


def test_load_plugins_passes_each_object_on_and_keeps_going_after_a_failure(monkeypatch) -> None:
    eps = [EntryPoint("b_fails", "memcore_no_such_module_xyz:thing", "memcore.test"),
           EntryPoint("a_ok", "os.path:join", "memcore.test"),
           EntryPoint("c_rejected", "os:sep", "memcore.test")]
    monkeypatch.setattr(registry, "entry_points", lambda group: [e for e in eps if e.group == group])
    seen = []

    def accept(obj: object) -> None:
        if obj == os.sep:
            raise TypeError("not a Retriever")
        seen.append(obj)

    before = len(plugin_errors())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert load_plugins("memcore.test", accept) == ["a_ok"]
    assert seen == [os.path.join]
    errors = plugin_errors()[before:]
    assert [(e.name, e.target) for e in errors] == [("b_fails", "memcore_no_such_module_xyz:thing"),
                                                   ("c_rejected", "os:sep")]
    assert errors[0].error.startswith("ModuleNotFoundError: No module named 'memcore_no_such_module_xyz'")
    assert [w.category for w in caught] == [PluginWarning, PluginWarning]
    assert "memcore plugin 'c_rejected' (memcore.test = os:sep) was not loaded: TypeError: not a Retriever" \
        in str(caught[1].message)


def test_built_in_systems_are_ordered_by_their_class_rank() -> None:
    systems = load_all()
    builtin = builtin_systems()
    assert builtin == ["full_context", "naive_rag", "naive_rag_session", "com", "recmem", "memcot", "xmemory",
                       "memweaver"]
    assert [systems[n].rank for n in builtin] == sorted(systems[n].rank for n in builtin)
    assert [systems[n].rank for n in builtin] == [10, 20, 30, 40, 50, 60, 70, 80]


def test_memcore_testing_imports_without_pytest() -> None:
    code = ("import sys\nimport memcore.testing\nfrom memcore.systems import load_all\nload_all()\n"
            "assert 'pytest' not in sys.modules and '_pytest' not in sys.modules\nprint('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


def test_the_app_runs_with_a_broken_plugin_and_lists_the_good_ones(site, tmp_path, plugins) -> None:
    code = f"""
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=120).run()
        next(b for b in at.button if b.label == "Load the built-in demo").click().run()
        print("WARNINGS", [w.value for w in at.warning])
        at.switch_page("pages/ask.py").run()
        print("ERRORS", [e.value for e in at.exception] + [e.value for e in at.error])
        print("OPTIONS", list(at.multiselect(key="ask_systems").options))
    """
    env_code = ("import os\n" + "".join(f"os.environ[{k!r}] = {v!r}\n" for k, v in {
        "MEMCORE_STORE": str(tmp_path / "store"), "MEMCORE_EMBEDDER": "hashing",
        "MEMCORE_LLM_PROVIDER": "offline"}.items()) + f"os.chdir({str(tmp_path)!r})\n")
    res = run_with(site, env_code + textwrap.dedent(code))
    assert res.returncode == 0, res.stderr
    out = dict(line.split(" ", 1) for line in res.stdout.splitlines() if " " in line)
    assert out["ERRORS"] == "[]"
    options = eval(out["OPTIONS"])
    assert options[:2] == ["full_context", "zeta_plug (plugin)"]  # zeta's view: rank 15; plugins say so
    assert "alpha_plug (plugin)" in options and "mid_plug (plugin)" in options and "memweaver" in options
    assert "memcore plugin 'broken'" in res.stderr and "memcore plugin 'broken_view'" in res.stderr
    shown = [w.replace("\\", "") for w in eval(out["WARNINGS"])]
    assert any("memcore plugin 'broken' (memcore.systems = fakeplug_bad:System)" in w
               and "ImportError: libfoo.so: cannot open shared object file" in w for w in shown), shown
    assert any("'impostor'" in w for w in shown) and any("'broken_view'" in w for w in shown), shown
