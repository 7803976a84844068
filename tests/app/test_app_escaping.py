"""Dataset text full of Markdown, HTML and URLs renders literally on every page (issue 15 item 9), and loading
a file switches the whole app to it (item 5). AppTest: temp store, hashing embedder, offline engine."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from memcore.viz.safe import md_escape  # noqa: E402
from ui import jobs  # noqa: E402

CONV = "[x](https://e.com)"
SPEAKER = "**bold**"
TURN = "D1:`7`"
HOSTILE = [CONV, SPEAKER, "`7`", "<script>", "https://e.com", "www.e.com", "_em_", "$x$"]
SYSTEM = "naive_rag"


def hostile_file(folder: Path) -> Path:
    """A JSONL chat log whose ids, speakers, texts, questions and answers are Markdown, HTML and URLs."""
    msgs = [{"conversation": CONV, "session": 1, "date": "2024-03-01 10:00", "speaker": SPEAKER,
             "text": "My dog is **Pepper** <script>alert(1)</script> see https://e.com and www.e.com $x$ _em_"},
            {"conversation": CONV, "session": 1, "speaker": "Bob", "text": "Nice, `code` and [y](https://e.com)"},
            {"conversation": CONV, "session": 1, "speaker": SPEAKER, "id": TURN, "text": "Pepper loves https://e.com"}]
    qs = [{"type": "question", "conversation": CONV, "question": "What is **the** dog's name at https://e.com?",
           "answer": "[Pepper](https://e.com) <b>", "evidence": [TURN], "category": 4}]
    path = folder / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in msgs + qs))
    return path


def markdown_values(at: AppTest) -> list[str]:
    """Every value Streamlit renders as Markdown: texts, alerts, headings, and widget / container labels."""
    out = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader"):
        out += [e.value for e in getattr(at, kind)]
    for kind in ("button", "expander", "tabs", "metric", "checkbox", "toggle", "text_input", "selectbox",
                 "multiselect", "radio", "slider"):
        out += [e.label for e in getattr(at, kind)]
    out += [str(e.value) for e in at.get("toast")]
    return out


CODE_SPAN = re.compile(r"(?<!\\)(`+)(?!`).*?(?<!`)\1(?!`)")  # md_escape shows a URL as one: literal, never linked


def assert_literal(at: AppTest, page: str) -> None:
    assert not at.exception, (page, [e.value for e in at.exception])
    for v in markdown_values(at):
        for raw in HOSTILE:
            assert raw not in CODE_SPAN.sub("", v), f"{page}: {raw!r} reaches Markdown unescaped in {v!r}"


def load(at: AppTest, path: Path) -> AppTest:
    next(t for t in at.text_input if t.label.startswith("…or a path")).set_value(str(path)).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    return at


def test_a_loaded_file_becomes_current_everywhere(app_env):
    at = AppTest.from_file(APP, default_timeout=120).run()
    next(b for b in at.button if b.label == "Load the built-in demo").click().run()
    assert at.session_state["conv_id"] == "demo"
    demo_turns = at.metric[0].value
    at = load(at, hostile_file(app_env))
    assert at.session_state["conv_id"] == CONV
    assert at.selectbox(key="_conv_pick").value == CONV  # the picker, not the previous conversation
    assert [m.value for m in at.metric][:3] == ["3", "1", "1"] != [demo_turns]  # the counts
    assert any(md_escape(CONV) in c.value for c in at.sidebar.caption)  # the sidebar
    msg = " ".join(s.value for s in at.success)
    assert md_escape("hostile.jsonl") in msg and md_escape(CONV) in msg
    assert_literal(at, "home")


def test_load_errors_name_the_file(app_env):
    bad = app_env / "broken.jsonl"
    bad.write_text('{"speaker": "a"}\nnot json\n')
    at = load(AppTest.from_file(APP, default_timeout=120).run(), bad)
    err = " ".join(e.value for e in at.error)
    assert md_escape("broken.jsonl") in err and not at.exception


def test_every_page_renders_dataset_text_literally(app_env):
    at = load(AppTest.from_file(APP, default_timeout=120).run(), hostile_file(app_env))
    assert_literal(at, "home")
    at.switch_page("pages/replay.py").run()
    at.multiselect(key="replay_systems").set_value([SYSTEM]).run()
    next(b for b in at.button if b.label.startswith("Build memory")).click().run()
    jobs.wait(f"ingest:{CONV}", 180)
    at.run()
    for step in range(0, 4):
        at.slider(key="replay_step").set_value(step).run()
        assert_literal(at, f"replay step {step}")
    assert any(md_escape(TURN) in m.value for m in at.markdown)  # the step header names the turn, escaped
    for page in ("explore", "ask", "compare", "benchmark", "annotate", "annotation_results", "export"):
        at.switch_page(f"pages/{page}.py").run()
        assert_literal(at, page)
        if page in ("ask", "compare"):  # the answers, gold answer and evidence lines
            at.multiselect(key={"ask": "ask_systems", "compare": "cmp_systems"}[page]).set_value([SYSTEM]).run()
            next(b for b in at.button if b.label in ("Ask", "Compare")).click().run()
            assert_literal(at, f"{page}, answered")


def test_a_file_that_breaks_its_format_is_refused_unless_accepted_with_its_problems(app_env):
    import json as _json

    from memcore.datasets import DEMO_PATH

    data = _json.loads(DEMO_PATH.read_text(encoding="utf-8"))
    del data["session_2"]
    cut = app_env / "cut.json"
    cut.write_text(_json.dumps(data), encoding="utf-8")
    at = load(AppTest.from_file(APP, default_timeout=120).run(), cut)
    assert "session 2 is missing" in " ".join(e.value for e in at.error) and not at.exception
    assert "conv_id" not in at.session_state  # nothing loaded, nothing switched
    next(c for c in at.checkbox if c.label == "Accept format problems").check().run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not at.exception and at.session_state["conv_id"] == "demo"
    assert any("session 2 is missing" in w.value for w in at.warning)
