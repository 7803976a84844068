"""Annotate pages with AppTest: blind labelling flow, resume, results with agreement."""

from __future__ import annotations

import sys
from pathlib import Path

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
