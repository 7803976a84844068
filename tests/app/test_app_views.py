"""The view registry drives Ask, Replay, the system pickers and the export alike.

(1) Every registered system has a view (its own or the default one), and Ask draws exactly the
blocks its answer export writes, on real traces of the demo. (2) A system and a view registered
from outside memcore (here: temporarily, in the test) show up with their colour and order in
every page's system list, on Ask, on Replay and in the export, without editing any other file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from memcore.embed import HashingEmbedder
from memcore.eval.bundles import answer_bundle
from memcore.settings import Settings
from memcore.systems import SYSTEMS, get_system, load_all
from memcore.types import Trace
from memcore.viz.bundles import replay_bundle, structure_sections
from memcore.viz.export import block_sections, standalone_html
from memcore.viz.parts import Choice, Html, Part, Row, Text
from memcore.viz.replay import build_replay
from memcore.viz.safe import esc
from memcore.viz.views import (
    ASK,
    COMPARE,
    REPLAY,
    SystemView,
    get_view,
    has_view,
    register_view,
    system_color,
    unregister_view,
)
from memcore.workbench import Workbench
from ui import graph_assets

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.app.test_app_pages import build, errors, home_with_demo, open_tab, vega_charts  # noqa: E402


@pytest.fixture(scope="module")
def demo_answers(tmp_path_factory):
    """Every registered system's real answer to one demo question (offline engine, hashing embedder)."""
    wb = Workbench(Settings(store_uri=str(tmp_path_factory.mktemp("views") / "store"), llm_provider="offline",
                            embedder="hashing"), embedder=HashingEmbedder())
    conv = wb.load_demo()
    q = conv.questions[0]
    texts = {t.turn_id: f"{t.speaker}: {t.content}" for t in conv.turns}
    return q, texts, {name: wb.ask(name, conv, q) for name in load_all()}


def _ask_page(system, ans, texts):
    from ui.structure_view import structure_view

    structure_view(system, ans, texts, "t")


def _content_sig(c: object) -> tuple:
    if isinstance(c, go.Figure):
        return ("figure", json.dumps(json.loads(c.to_json())["data"], sort_keys=True))
    if isinstance(c, pd.DataFrame):
        return ("table", tuple(map(str, c.columns)), len(c))
    if isinstance(c, Html):  # the app links its own copy of the graph library where it serves one (ui.graph_assets)
        return ("html", graph_assets.served(c.page) if st.get_option("server.enableStaticServing") else c.page)
    if isinstance(c, Text):
        return ("text", c.style, c.text)
    if isinstance(c, dict | list):
        return ("json", json.dumps(c, sort_keys=True, default=str))
    return ("other", str(c))


def _expected_on_page(blocks: list) -> list[tuple]:
    """What Ask should draw for these blocks, in order (a choice shows its first option)."""
    out: list[tuple] = []
    for b in blocks:
        if isinstance(b, Row):
            out += _expected_on_page(list(b.parts))
        elif isinstance(b, Choice):
            if b.options:
                out.append(("choice", b.label))
                out += _expected_on_page(list(b.options[0][1]))
        else:
            if b.label:
                out.append(("text", "markdown", b.label))
            if b.content is not None:
                out.append(_content_sig(b.content))
            if b.caption:
                out.append(("text", "caption", b.caption))
    return out


def _drawn(at: AppTest) -> list[tuple]:
    """What the page drew, in order, in the same terms."""
    out: list[tuple] = []
    for el in at.main:
        kind = getattr(el, "type", "")
        if kind == "plotly_chart":
            out.append(("figure", json.dumps(json.loads(el.proto.spec)["data"], sort_keys=True)))
        elif kind == "dataframe":
            out.append(("table", tuple(map(str, el.value.columns)), len(el.value)))
        elif kind == "iframe":
            out.append(("html", el.proto.srcdoc))
        elif kind in ("caption", "info", "success", "warning", "markdown"):
            out.append(("text", kind, el.value))
        elif kind == "json":
            out.append(("json", json.dumps(json.loads(el.proto.body), sort_keys=True, default=str)))
        elif kind == "selectbox":
            out.append(("choice", el.label))
        elif kind == "expander":
            break  # the generic "all candidates per stage" table follows every view
    return out


def test_every_registered_system_has_a_view_that_ask_and_the_export_draw_alike(demo_answers):
    q, texts, answers = demo_answers
    assert set(answers) == set(load_all())
    for name, ans in answers.items():
        view = get_view(name)
        assert view.name == name and view.color.startswith("#")
        assert has_view(name), f"{name}: the built-in systems declare their views next to their viz modules"
        blocks = view.structure(ans.trace, texts)
        assert blocks, name
        sections = structure_sections(name, ans.trace, texts)
        assert [h for h, _ in sections] == [h for h, _ in block_sections(blocks)]
        bundle = answer_bundle(q, name, ans, "offline", texts)[2]
        assert [h for h, _ in bundle[-len(sections):]] == [h for h, _ in sections], name  # the export's tail
        at = AppTest.from_function(_ask_page, args=(name, ans, texts), default_timeout=60).run()
        assert not errors(at), (name, errors(at))
        assert _drawn(at) == _expected_on_page(blocks), name
        html = standalone_html(name, sections)
        for p in blocks:  # every titled part of the view is in the export
            for title in ([p.title] if isinstance(p, Part) else [x.title for x in getattr(p, "parts", ())]):
                if title:
                    assert f"<h2>{esc(title)}</h2>" in html, (name, title)


# ------------------------------------------------------------- a system and a view from outside memcore
TOY_COLOR = "#123456"


def toy_structure(trace: Trace, texts: dict) -> list:
    """The toy system's retrieval structure: one note and one table."""
    return [Part("Toy retrieval", Text(f"toy retrieved {len(trace.items)} items", "info")),
            Part("Toy items", pd.DataFrame([{"id": it.id, "score": it.score} for it in trace.items]))]


def toy_growth(rd, step, items_at) -> list:
    """The toy system's memory at a Replay step."""
    return [Part("Toy growth", Text(f"toy memory at step {step}", "success"))]


@pytest.fixture
def toy_system(monkeypatch):
    """A sixth system (naive RAG under another name) with a view of its own, registered for this test only."""
    base = get_system("naive_rag")
    toy = type("ToySystem", (base,), {"name": "toy", "title": "Toy memory"})
    monkeypatch.setitem(SYSTEMS, "toy", toy)
    register_view(SystemView("toy", color=TOY_COLOR, rank=25, structure=toy_structure, growth=toy_growth,
                             growth_rank=0, picks=frozenset({ASK, COMPARE, REPLAY})))
    yield "toy"
    unregister_view("toy")


def test_a_registered_view_shows_its_system_everywhere(app_env, toy_system):
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    picker = at.multiselect(key="ask_systems")
    assert picker.options[:4] == ["full_context", "naive_rag", "toy (plugin)", "naive_rag_session"]  # rank 25
    assert picker.value == ["naive_rag", "toy", "com", "xmemory", "memweaver"]
    at = build(at, ["toy"], "ask_systems")
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not errors(at), errors(at)
    n_items = next(m for m in at.metric if m.label == "Context items").value
    open_tab(at, "ask_toy_tab", "System structure")  # the answer's tabs draw only the open one
    assert not errors(at), errors(at)
    assert f"toy retrieved {n_items} items" in [i.value for i in at.info]

    at.switch_page("pages/compare.py").run()  # one memory built: the views' Compare picks
    assert at.multiselect(key="cmp_systems").value == ["naive_rag", "toy", "com"]

    at.switch_page("pages/replay.py").run()
    assert at.multiselect(key="replay_systems").value == ["toy", "com", "recmem", "memcot", "xmemory", "memweaver"]
    at.multiselect(key="replay_systems").set_value(["toy"]).run()
    layers, _ = vega_charts(at)["Memory layers over time"]
    assert layers["layer"][0]["encoding"]["color"]["scale"]["range"] == [TOY_COLOR]
    at.segmented_control(key="rp_view").set_value("Growth").run()
    assert not errors(at), errors(at)
    step = at.session_state["replay_step"]
    assert f"toy memory at step {step}" in [s.value for s in at.success]

    at.switch_page("pages/export.py").run()
    options = at.selectbox(key="exp_choice").options
    assert any(o.startswith("Answer · toy") for o in options) and "Replay · demo · toy" in options
    at.selectbox(key="exp_choice").set_value(next(o for o in options if o.startswith("Answer · toy"))).run()
    at.text_input(key="exp_folder").set_value(str(app_env / "exports")).run()
    at.button(key="exp_write").click().run()
    assert not errors(at), errors(at)
    html = Path(at.session_state["exp_written"][2]).read_text()
    assert "<h2>Toy retrieval</h2>" in html and f"toy retrieved {n_items} items" in html
    assert "<h2>Toy items</h2>" in html


def test_a_system_without_a_view_gets_the_default_view(monkeypatch, tmp_path):
    base = get_system("naive_rag")
    monkeypatch.setitem(SYSTEMS, "bare", type("BareSystem", (base,), {"name": "bare", "title": "Bare"}))
    view = get_view("bare")
    assert not has_view("bare") and view.structure is not None and view.growth is None
    from ui import widgets

    assert widgets.systems()[-1] == "bare"  # listed after every system with a view
    assert "bare" in widgets.default_systems(REPLAY) and "bare" not in widgets.default_systems(ASK)
    wb = Workbench(Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    conv = wb.load_demo()
    ans = wb.ask("bare", conv, conv.questions[0])
    sections = structure_sections("bare", ans.trace)
    assert sections == [("Structure", dict(ans.trace.structure))]
    layers = replay_bundle({"bare": build_replay("bare", [], None, None, 3)})[2][0][1]
    assert layers.data[0].line.color == view.color == system_color("bare")
