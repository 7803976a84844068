"""Ask, Compare and Replay on the demo with AppTest (issue 15 items 2, 3, 4, 7, 8): verdicts with F1 by the named
judge, the retriever control, built systems preselected with a Build card per missing one (nothing built without
a click), the call inspector, and the view in the URL."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from memcore.eval.metrics import lexical_judge, locomo_f1
from memcore.settings import Settings
from memcore.viz.views import ASK, picked
from memcore.workbench import Workbench
from tests.app.test_app_pages import APP, build, errors, home_with_demo, open_tab, texts, vega_charts
from ui import jobs

pytestmark = pytest.mark.usefixtures("app_env")  # temp store, hashing embedder, offline engine

FLAGSHIP = "demo:q0"  # What is the name of Maya's dog? (gold: Pepper, evidence D1:7)


def _summary(at: AppTest) -> list[dict]:
    df = next(d.value for d in at.dataframe if hasattr(d.value, "columns") and "verdict" in d.value.columns)
    return df.to_dict("records")


def _click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label == label).click().run()
    assert not errors(at), errors(at)
    return at


def _ask(at: AppTest, qid: str, retriever: str = "dense") -> AppTest:
    at.selectbox(key="ask_q_pick").set_value(qid).run()
    at.button_group(key="ask_retriever").set_value(retriever).run()
    return _click(at, "Ask")


def test_ask_builds_nothing_without_a_click_and_preselects_built_systems():
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    assert not errors(at), errors(at)
    defaults = picked(Workbench.systems(), ASK)
    assert at.multiselect(key="ask_systems").value == defaults
    assert [b.label for b in at.button if b.label == "Build"] == ["Build"] * len(defaults)
    assert not any(b.label == "Ask" for b in at.button)
    wb = Workbench(Settings())
    conv = wb.conversation("demo")
    assert not any(wb.is_ingested(s, conv) for s in Workbench.systems())  # visiting Ask built nothing
    # build one from its card: a fresh visit preselects exactly the built system
    at = build(at, ["naive_rag"], "ask_systems")
    assert wb.is_ingested("naive_rag", conv)
    fresh = AppTest.from_file(APP, default_timeout=120).run()
    fresh.switch_page("pages/ask.py").run()
    assert fresh.multiselect(key="ask_systems").value == ["naive_rag"]
    # a chosen system without memory gets a card, and Ask still answers the built one
    fresh.multiselect(key="ask_systems").set_value(["naive_rag", "com"]).run()
    assert "**com** · memory not built" in texts(fresh)
    assert any(b.label == "Build" for b in fresh.button)
    _ask(fresh, FLAGSHIP)
    assert [r["system"] for r in _summary(fresh)] == ["naive_rag"]


def test_ask_shows_verdict_f1_evidence_retriever_and_calls_and_puts_the_view_in_the_url():
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag"], "ask_systems")
    _ask(at, FLAGSHIP, "lexical")
    row = _summary(at)[0]
    q = Workbench(Settings()).conversation("demo").questions[0]
    assert row["retriever"] == "lexical"
    assert row["verdict"] == ("correct" if lexical_judge(row["answer"], q.answer, q.category) else "incorrect")
    assert row["F1"] == round(locomo_f1(row["answer"], q.answer, q.category), 3)
    body = texts(at)
    assert "retriever **lexical**" in body and r"by the lexical judge \(offline\)" in body
    hit = row["evidence hits"] == "1/1"
    assert (r"hit D1\:7" if hit else r"miss D1\:7") in body
    assert list(row)[:5] == ["system", "retriever", "fallback", "evidence hits", "evidence recall"]  # evidence first
    assert row["fallback"] == "none"  # the answer came from its own retrieval
    # only the open inner tab is drawn: the call inspector after a click on its tab
    assert not [d for d in at.dataframe if hasattr(d.value, "columns") and "completion tokens" in d.value.columns]
    open_tab(at, "ask_naive_rag_tab", "LLM calls")
    assert not errors(at), errors(at)
    # the call inspector: the answer call's prompt holds the question, its completion the answer
    calls = next(d.value for d in at.dataframe
                 if hasattr(d.value, "columns") and "completion tokens" in d.value.columns)
    assert "answer" in set(calls["role"])
    codes = [c.value for c in at.code]
    assert any(q.text in c for c in codes)
    assert any(row["answer"] in c for c in codes)
    assert len(at.get("plotly_chart")) >= 1 and "Tokens per question by stage" in vega_charts(at)  # waterfall, cost
    want = {"conv": "demo", "q": FLAGSHIP, "systems": "naive_rag", "retriever": "lexical", "run": "1"}
    assert {k: at.query_params.get(k) for k in want} == want


def test_a_link_reopens_the_same_ask_view():
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    build(at, ["naive_rag"], "ask_systems")
    link = AppTest.from_file(APP, default_timeout=120)
    link.query_params.update({"conv": "demo", "q": "demo:q1", "systems": "naive_rag", "retriever": "hybrid",
                              "run": "1"})
    link.switch_page("pages/ask.py").run()
    assert not errors(link), errors(link)
    assert link.selectbox(key="ask_q_pick").value == "demo:q1"
    assert link.button_group(key="ask_retriever").value == "hybrid"
    assert [(r["system"], r["retriever"]) for r in _summary(link)] == [("naive_rag", "hybrid")]  # no click needed


def test_compare_cards_show_verdicts_first_evidence_and_link_to_the_full_trace():
    at = home_with_demo()
    at.switch_page("pages/compare.py").run()
    at = build(at, ["naive_rag", "com"], "cmp_systems")
    at.selectbox(key="cmp_q_pick").set_value(FLAGSHIP).run()
    _click(at, "Compare")
    rows = at.session_state["cmp_rows"]
    assert [r["system"] for r in rows] == ["naive_rag", "com"]
    assert all(r["verdict"] in ("correct", "incorrect") and 0 <= r["F1"] <= 1 and r["retriever"] == "dense"
               for r in rows)
    urls = [b.proto.url for b in at.get("link_button")]
    assert len(urls) == 2 and all(u.startswith("ask?") and "q=demo%3Aq0" in u and "run=1" in u for u in urls)
    assert "systems=naive_rag" in urls[0] and "systems=com" in urls[1]


def test_free_text_question_has_no_verdict_and_is_in_the_url():
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag"], "ask_systems")
    at.button_group(key="ask_q_mode").set_value("free text").run()
    at.text_input(key="ask_q_free").set_value("Where did Maya go in July?").run()
    _click(at, "Ask")
    df = next(d.value for d in at.dataframe if hasattr(d.value, "columns") and "retriever" in d.value.columns)
    assert "verdict" not in df.columns
    assert at.query_params.get("text") == "Where did Maya go in July?" and "q" not in at.query_params


@pytest.mark.parametrize("system", ["xmemory"])
def test_replay_step_in_the_url_and_its_construction_calls(system):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    build(at, [system], "replay_systems")
    wb = Workbench(Settings())
    calls = wb.llm_calls(system=system, stage="construction")
    step = int(calls["step"].value_counts().index[0])  # a step with construction calls
    link = AppTest.from_file(APP, default_timeout=120)
    link.query_params.update({"conv": "demo", "systems": system, "step": str(step)})
    link.switch_page("pages/replay.py").run()
    assert not errors(link), errors(link)
    assert link.session_state["replay_step"] == step
    assert f"LLM calls at this step ({int((calls['step'] == step).sum())})" in [e.label for e in link.expander]
    # closed, the expander builds nothing (a step stays fast); opened, the calls' table and texts
    assert not any(hasattr(d.value, "columns") and "completion tokens" in d.value.columns for d in link.dataframe)
    link.session_state["rp_calls_open"] = True
    link.run()
    table = next(d.value for d in link.dataframe
                 if hasattr(d.value, "columns") and "completion tokens" in d.value.columns)
    assert len(table) == int((calls["step"] == step).sum())
    assert all(c.value for c in link.code)  # prompt and completion of the first call, stored by the ledger
    link.slider(key="replay_step").set_value(step + 1).run()
    assert link.query_params.get("step") == str(step + 1)


def test_task_creation_builds_nothing_silently_names_are_unique_and_the_retriever_is_chosen():
    from memcore.annotate import Annotations

    at = home_with_demo()
    at.switch_page("pages/annotation_results.py").run()
    next(m for m in at.multiselect if m.label == "Systems").set_value(["naive_rag"])  # in the form: sent on submit
    at.selectbox(key="task_retriever").set_value("lexical")
    next(b for b in at.button if b.label == "Create task").click().run()
    assert not errors(at), errors(at)
    wb = Workbench(Settings())
    assert not wb.is_ingested("naive_rag", wb.conversation("demo")) and not Annotations(wb.store).tasks()
    assert r"Memory not built for demo\: naive\_rag\." in "\n".join(w.value for w in at.warning)
    next(b for b in at.button if b.label.startswith("Build memory of demo")).click().run()
    jobs.wait("ingest:demo", 180)
    at.run()
    next(b for b in at.button if b.label == "Create task").click().run()
    assert not errors(at), errors(at)
    tasks = Annotations(Workbench(Settings()).store).tasks()  # a fresh handle sees the app's writes
    assert [t.name for t in tasks] == ["helpfulness"]
    assert "lexical retriever" in "\n".join(s.value for s in at.success)
    next(b for b in at.button if b.label == "Create task").click().run()  # the same name again
    assert "choose another name" in "\n".join(e.value for e in at.error)
    assert len(Annotations(Workbench(Settings()).store).tasks()) == 1


def test_benchmark_defaults_to_the_built_systems_and_offers_the_retriever():
    at = home_with_demo()
    at.switch_page("pages/benchmark.py").run()
    assert not errors(at), errors(at)
    assert at.button_group(key="bm_retriever").value == "dense"  # the papers' mode by default
    at.switch_page("pages/ask.py").run()
    build(at, ["naive_rag", "com"], "ask_systems")
    at.switch_page("pages/benchmark.py").run()
    assert at.multiselect(key="bm_run_systems").value == ["naive_rag", "com"]
    assert set(at.button_group(key="bm_retriever").options) >= {"dense (paper mode)", "lexical", "hybrid"}


def test_a_judge_that_fails_for_good_leaves_the_answer_not_judged(monkeypatch):
    from memcore.errors import LLMCallFailed
    from memcore.types import Answer, Question, Trace
    from ui import ask_view

    def failing(llm, q, pred):
        raise LLMCallFailed("judge", "judge", "HTTP 500 three times")

    info = {"kind": "llm", "label": "LLM judge: m"}
    monkeypatch.setattr(ask_view, "_judge", lambda wb: (failing, info))
    wb = type("WB", (), {"llm": None, "provider_label": "p"})()
    q = Question(id="q", conv_id="c", text="Dog?", answer="Pepper", category=4)
    v = ask_view.verdict(wb, q, Answer("Pepper", Trace(system="s", question="Dog?")))
    assert v["correct"] is None and v["f1"] == 1.0 and "HTTP 500" in v["error"]
    line = ask_view.verdict_line(v)
    assert "not judged" in line and "HTTP 500" in line and "LLM judge" in line


def test_asks_summary_fits_1280_px_with_the_fallback_column_and_the_rest_one_click_away():
    """Issue 37 minor 15: the summary's 14 columns needed horizontal scrolling at 1280 px (a ~800 px main area)."""
    import json

    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag"], "ask_systems")
    _ask(at, FLAGSHIP)
    table = next(d for d in at.dataframe if "fallback" in d.proto.column_order)  # the summary, as shown
    shown = list(table.proto.column_order)
    assert "fallback" in shown and "evidence recall" in shown and "answer" in shown
    assert "latency ms" not in shown and len(shown) < len(table.value.columns)
    widths = {c: w.get("width") for c, w in json.loads(table.proto.columns).items()}
    assert all(isinstance(widths.get(c), int) for c in shown) and sum(widths[c] for c in shown) <= 800, widths
    every = next(d for d in at.dataframe if hasattr(d.value, "columns") and "latency ms" in d.value.columns
                 and not d.proto.column_order)  # the expander's full table
    assert list(every.value.columns) == list(table.value.columns) and "latency ms" in every.value.columns
    assert any(e.label.startswith("All columns (also retriever") for e in at.expander)


def test_ask_draws_only_the_open_system_tab_and_a_switch_draws_the_other():
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag", "com"], "ask_systems")
    at.multiselect(key="ask_systems").set_value(["naive_rag", "com"]).run()
    _ask(at, FLAGSHIP)
    headers = [m.value for m in at.markdown if "· retriever **" in m.value]
    assert len(_summary(at)) == 2 and len(headers) == 1 and headers[0].startswith("**naive\\_rag**")
    at.session_state["tab"] = "com"  # the user switches tabs: the page reruns with that tab open
    at.run()
    assert not errors(at), errors(at)
    headers = [m.value for m in at.markdown if "· retriever **" in m.value]
    assert len(headers) == 1 and headers[0].startswith("**com**")


def test_ask_shows_the_memories_asked_until_the_click():
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag_session", "xmemory"], "ask_systems")
    at.multiselect(key="ask_systems").set_value(["naive_rag_session", "xmemory"]).run()
    wb = Workbench(Settings())
    conv = wb.conversation("demo")
    table = next(d.value for d in at.dataframe if list(getattr(d.value, "columns", [])) == ["system", "items", "by kind"])
    want = {s: wb.memory(s, conv).kind_counts() for s in ("naive_rag_session", "xmemory")}
    assert dict(zip(table["system"], table["items"], strict=True)) == {s: sum(c.values()) for s, c in want.items()}
    assert all(n > 0 for c in want.values() for n in c.values()) and want["xmemory"]
    by_kind = dict(zip(table["system"], table["by kind"], strict=True))
    assert by_kind == {s: ", ".join(f"{k} {n:,}" for k, n in sorted(c.items())) for s, c in want.items()}
    _, data = vega_charts(at)["Items stored per memory, by kind"]
    bars = data["bars"]
    assert {(r.system, r.part, r.value) for r in bars.itertuples()} == {
        (s, k, n) for s, c in want.items() for k, n in c.items()}
    _click(at, "Ask")
    assert not errors(at), errors(at)
    assert not [d for d in at.dataframe if list(getattr(d.value, "columns", [])) == ["system", "items", "by kind"]]
    assert len(_summary(at)) == 2


def test_a_memory_whose_counts_cannot_be_read_is_said_and_ask_still_answers(monkeypatch):
    from memcore.errors import StoreError
    from memcore.store.view import MemoryView
    from ui import state

    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag_session"], "ask_systems")
    at.multiselect(key="ask_systems").set_value(["naive_rag_session"]).run()

    def broken(self, at_step=None):
        raise StoreError("table unreadable (test)")

    monkeypatch.setattr(MemoryView, "kind_counts", broken)
    state._kind_counts.clear()  # counts are read once per memory and built step: read them again
    at.run()
    assert not errors(at), errors(at)
    table = next(d.value for d in at.dataframe if list(getattr(d.value, "columns", [])) == ["system", "items", "by kind"])
    assert table["by kind"].tolist() == ["not read: table unreadable (test)"]
    _click(at, "Ask")
    assert len(_summary(at)) == 1
