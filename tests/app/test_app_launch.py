"""The launcher (`python -m ui.launch`, ./run.sh) does the first visit's one-off work before serving: every ui
module imported and plotly's templates and validators built by a styled chart of each trace type the app draws;
its run timer (`$MEMCORE_PROFILE`) reports a page's run and writes its profile only when asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ui.launch import RunTimer

ROOT = Path(__file__).resolve().parents[2]


def test_warm_imports_every_ui_module_and_builds_the_chart_templates():
    code = ("import sys, pkgutil, ui\nimport ui.launch as L\nbefore = 'ui.replay_view' in sys.modules\n"
            "L.warm(log=False)\nimport plotly.io as pio\n"
            "mods = [m.name for m in pkgutil.iter_modules(ui.__path__)]\n"
            "print(before, all(f'ui.{m}' in sys.modules for m in mods), 'plotly_white' in pio.templates._templates,"
            " 'plotly.graph_objs._sunburst' in sys.modules, 'plotly.graph_objs._heatmap' in sys.modules)")
    env = {**os.environ, "MEMCORE_EMBEDDER": "hashing", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True", "True", "True"]


def test_the_run_timer_is_silent_unless_asked(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("MEMCORE_PROFILE", raising=False)
    t = RunTimer()
    with t.profile():
        sum(range(1000))
    t.done("replay")
    assert capsys.readouterr().err == "" and list(tmp_path.iterdir()) == []
    monkeypatch.setenv("MEMCORE_PROFILE", "1")  # a timing line, no profile
    t = RunTimer()
    with t.profile():
        pass
    t.done("replay")
    assert capsys.readouterr().err.startswith("memcore-run page=replay s=")
    monkeypatch.setenv("MEMCORE_PROFILE", str(tmp_path))  # a directory: the profile too
    t = RunTimer()
    with t.profile():
        sum(range(1000))
    t.done("ask")
    assert "memcore-run page=ask" in capsys.readouterr().err
    assert [p.suffix for p in tmp_path.iterdir()] == [".prof"] and next(tmp_path.iterdir()).name.endswith("-ask.prof")


def test_prepare_demo_builds_every_memory_once_and_the_first_page_finds_them(app_env, monkeypatch):
    """./run.sh's --prepare-demo (issue 23 item 4): every registered system's memory of the demo is built in the
    app's default store before serving; a second start builds nothing; another provider builds nothing."""
    from streamlit.testing.v1 import AppTest

    from memcore.settings import Settings
    from memcore.workbench import Workbench
    from ui.launch import prepare_demo

    said: list[str] = []
    out = prepare_demo(said.append)
    names = Workbench.systems()
    assert sorted(out) == sorted(names) and all(v.startswith("built in") for v in out.values()), out
    assert any("turns embedded" in line for line in said)
    wb = Workbench(Settings())
    conv = wb.conversation("demo")
    assert all(wb.is_ingested(s, conv) for s in names)
    assert prepare_demo(said.append) == {}  # idempotent: a later start finds them built
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()  # the first page: the demo, built
    assert not at.exception and [m.value for m in at.metric][:1] == [str(len(conv.turns))]
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("MEMCORE_STORE", str(app_env / "other"))
    said.clear()
    assert prepare_demo(said.append) == {} and "offline engine only" in said[0]  # never calls a model at start
