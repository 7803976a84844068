"""Annotate pages with AppTest: blind labelling flow, resume, results with agreement."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from memcore.annotate import Annotations
from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SYSTEMS = ["naive_rag", "naive_rag_session"]


@pytest.fixture
def task(tmp_path, monkeypatch, tiny_conv):
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    wb = Workbench(Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    from memcore.annotate import workbench_retriever

    wb.store.save_conversation(tiny_conv)
    t = Annotations(wb.store).create_task("t", [tiny_conv], SYSTEMS, workbench_retriever(wb, build=True),
                                            per_category=25)
    return t, Annotations(wb.store)


def rendered(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [b.label for b in at.button] + [str(s.options) for s in at.selectbox] + [t.label for t in at.text_input]
    parts += [p.proto.text for p in at.get("progress")]
    return "\n".join(parts)


def test_annotate_is_blind_and_records_labels(task):
    t, ann = task
    at = AppTest.from_file(str(ROOT / "pages" / "annotate.py"), default_timeout=60).run()
    at.text_input(key="annotator").set_value("alice").run()
    assert not at.exception, at.exception
    out = rendered(at)
    assert "Question:" in out and "Reference answer:" in out
    for name in SYSTEMS + ["naive", "session"]:
        assert name not in out.lower(), f"system name {name!r} leaked into the annotate page"
    first = ann.queue(t.task_id, "alice")[0]
    assert first.question in out
    next(b for b in at.button if b.label == "Helpful").click().run()
    next(b for b in at.button if b.label == "Not helpful").click().run()
    labs = ann.labels(t.task_id, "alice")
    assert labs[(first.item_id, "alice")]["label"] == "helpful"
    assert len(labs) == 2
    # a new session resumes at the first unlabelled item
    at2 = AppTest.from_file(str(ROOT / "pages" / "annotate.py"), default_timeout=60).run()
    at2.text_input(key="annotator").set_value("alice").run()
    third = ann.queue(t.task_id, "alice")[2]
    assert third.question in rendered(at2) and "2 of 6 labelled" in rendered(at2)


def test_results_page_shows_rates_and_kappa(task):
    t, ann = task
    for who in ("alice", "bob"):
        for i, it in enumerate(ann.items(t.task_id)):
            ann.label(t.task_id, it.item_id, who, "helpful" if (i % 2 == 0 or who == "alice") else "not_helpful")
    at = AppTest.from_file(str(ROOT / "pages" / "annotation_results.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Items labelled by every annotator"] == "6"
    assert metrics["Fleiss' kappa (all annotators)"] != "—"
    assert "alice" in "\n".join(m.value for m in at.markdown)


def test_annotate_without_a_task_links_to_where_one_is_made(app_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/annotate.py").run()
    assert not at.exception, at.exception
    assert "No annotation task yet" in at.info[0].value
    link = at.get("page_link")[0].proto
    assert "annotation" in link.page and "Create a task" in link.label, link


def test_results_tables_show_empty_cells_with_their_reason_not_none(task):
    """Issue 37 minor 6: the rates table showed raw None in sd (one annotator) and in an annotator's rate column
    (no label in that cell); empty cells read 'n<2' / '-' and the column help says why."""
    t, ann = task
    items = ann.items(t.task_id)
    for it in items:
        ann.label(t.task_id, it.item_id, "alice", "helpful")
    ann.label(t.task_id, items[0].item_id, "bob", "not_helpful")  # bob labelled one cell only
    at = AppTest.from_file(str(ROOT / "pages" / "annotation_results.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    rates = next(d for d in at.dataframe if "sd" in d.value.columns)
    shown = shown_cells(rates)
    assert not any(v in (None, "None", "nan") for col in shown.columns for v in shown[col]), shown
    assert "n<2" in set(shown["sd"]) and "-" in set(shown["rate · bob"])
    assert "0.707" in set(shown["sd"])  # a spread of two annotators, as a number
    assert "two or more annotators" in rates.proto.columns  # the column help (JSON of the column configuration)


def shown_cells(frame: Any) -> Any:
    """The cells of an AppTest dataframe as the page shows them: its styled display values where it has them."""
    import pyarrow as pa

    raw = frame.proto.arrow_data.styler.display_values
    if not raw:
        return frame.value.astype(object)
    return pa.ipc.open_stream(raw).read_all().to_pandas()


def test_results_task_picker_starts_on_the_newest_task_covering_the_current_conversation(app_env):
    from memcore.annotate import workbench_retriever
    from tests.conftest import make_conversation

    wb = Workbench(Settings(store_uri=str(app_env / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    mine, other = make_conversation("mine"), make_conversation("other")
    for c in (mine, other, make_conversation("third")):
        wb.store.save_conversation(c)
    ann = Annotations(wb.store)
    retrieve = workbench_retriever(wb, build=True)
    old_mine = ann.create_task("old-mine", [mine], SYSTEMS[:1], retrieve, per_category=1)
    new_mine = ann.create_task("new-mine", [mine, other], SYSTEMS[:1], retrieve, per_category=1)
    newest = ann.create_task("newest-other", [other], SYSTEMS[:1], retrieve, per_category=1)
    assert new_mine.created > old_mine.created and newest.created > new_mine.created
    at = AppTest.from_file(str(ROOT / "pages" / "annotation_results.py"), default_timeout=60)
    at.session_state["conv_id"] = "mine"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="res_task").value == new_mine.task_id  # not the newest task, which lacks "mine"
    at.selectbox(key="res_task").set_value(old_mine.task_id).run()  # a pick is kept
    assert at.selectbox(key="res_task").value == old_mine.task_id and not at.warning
    at2 = AppTest.from_file(str(ROOT / "pages" / "annotation_results.py"), default_timeout=60)
    at2.session_state["conv_id"] = "third"  # stored, but no task covers it: the newest task
    at2.run()
    assert at2.selectbox(key="res_task").value == newest.task_id


def test_results_rates_table_fits_1280_px_and_each_annotators_rate_is_one_click_away(task):
    import json

    t, ann = task
    for who in ("alice", "bob", "carol-with-a-long-name"):
        for it in ann.items(t.task_id)[:4]:
            ann.label(t.task_id, it.item_id, who, "helpful")
    at = AppTest.from_file(str(ROOT / "pages" / "annotation_results.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    table = next(d for d in at.dataframe if "system" in d.proto.column_order)
    shown = list(table.proto.column_order)
    assert "rate (mean of annotators)" in shown and "pooled 95% interval" in shown
    assert not [c for c in shown if c.startswith("rate · ")]  # a column per annotator would need scrolling
    widths = {c: w.get("width") for c, w in json.loads(table.proto.columns).items()}
    assert all(isinstance(widths.get(c), int) for c in shown) and sum(widths[c] for c in shown) <= 800, widths
    every = [d for d in at.dataframe if not d.proto.column_order and "rate · carol-with-a-long-name" in d.value.columns]
    assert every and list(every[0].value.columns) == list(table.value.columns)  # the expander's full table
    assert any(e.label.startswith("Each annotator's rate") for e in at.expander)
