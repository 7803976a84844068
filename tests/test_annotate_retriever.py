"""Annotation tasks record their retriever; workbench_retriever never builds a memory unless asked to."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memcore.annotate import TASKS, Annotations, workbench_retriever
from memcore.errors import MemoryNotBuilt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SYSTEMS = ["naive_rag", "naive_rag_session"]


def test_unbuilt_memory_is_refused_and_nothing_is_stored(workbench, tiny_conv):
    workbench.store.save_conversation(tiny_conv)
    ann = Annotations(workbench.store)
    with pytest.raises(MemoryNotBuilt, match=r"naive_rag for conversation .* not built.*Fix: build it"):
        ann.create_task("t", [tiny_conv], SYSTEMS, workbench_retriever(workbench, "lexical"), per_category=2)
    assert not workbench.is_ingested("naive_rag", tiny_conv)  # nothing built silently
    assert ann.tasks() == []  # and no half-made task


def test_build_flag_builds_and_the_task_records_its_retriever(workbench, tiny_conv):
    workbench.store.save_conversation(tiny_conv)
    ann = Annotations(workbench.store)
    task = ann.create_task("t", [tiny_conv], SYSTEMS, workbench_retriever(workbench, "lexical", build=True),
                           per_category=2)
    assert all(workbench.is_ingested(s, tiny_conv) for s in SYSTEMS)
    assert task.retriever == "lexical" and ann.task(task.task_id).retriever == "lexical"  # stored, read back
    assert ann.results(task.task_id)["retriever"] == "lexical"
    item = ann.items(task.task_id)[0]
    ann.label(task.task_id, item.item_id, "alice", "helpful")
    assert [r["retriever"] for r in json.loads(ann.export_labels(task.task_id, "json"))] == ["lexical"]
    rows = list(csv.DictReader(io.StringIO(ann.export_labels(task.task_id, "csv"))))
    assert [(r["annotator"], r["retriever"]) for r in rows] == [("alice", "lexical")]


def test_explicit_retriever_wins_and_old_tasks_read_as_unrecorded(workbench, tiny_conv):
    ann = Annotations(workbench.store)
    t = ann.create_task("t", [tiny_conv], ["x"], lambda s, c, q: [q.text], per_category=1, retriever="hybrid")
    assert ann.task(t.task_id).retriever == "hybrid"
    old = {"task_id": "old1", "name": "old", "systems": ["x"], "per_category": 1, "seed": 0, "conversations": [],
           "created": 1.0}  # a task stored before the retriever was recorded
    workbench.store.table("ann_tasks", TASKS).add([{"task_id": "old1", "payload": json.dumps(old), "ts": 1.0}])
    assert ann.task("old1").retriever == ""


def test_task_header_names_the_retriever_on_both_pages(tmp_path, monkeypatch, workbench, tiny_conv):
    monkeypatch.setenv("MEMCORE_STORE", workbench.settings.store_uri)
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    workbench.store.save_conversation(tiny_conv)
    Annotations(workbench.store).create_task("t", [tiny_conv], SYSTEMS,
                                             workbench_retriever(workbench, "hybrid", build=True), per_category=2)
    for page in ("annotation_results.py", "annotate.py"):
        at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=60).run()
        assert not at.exception, at.exception
        task_picker = next(s for s in at.selectbox if s.label == "Task")
        assert "hybrid retriever" in task_picker.options[0]
        assert any("hybrid retriever" in c.value for c in at.caption), [c.value for c in at.caption]
