"""The label exports: current labels (one row per item and annotator, with question, system, category and
retriever) beside the full label log, and both importable."""

from __future__ import annotations

import csv
import io
import json

import pytest

from memcore.annotate import CURRENT_COLUMNS, Annotations
from memcore.store import LanceStore


@pytest.fixture
def relabelled(tmp_path, tiny_conv):
    a = Annotations(LanceStore(str(tmp_path / "db"), dim=8))
    task = a.create_task("t", [tiny_conv], ["sysA", "sysB"], lambda s, c, q: [f"{s} knows {q.text}"],
                         per_category=1, seed=1, retriever="lexical")
    first, second = a.items(task.task_id)[:2]
    a.label(task.task_id, first.item_id, "ann", "helpful")
    a.label(task.task_id, first.item_id, "ann", "not_helpful", "changed my mind")  # the current label
    a.label(task.task_id, first.item_id, "bob", "helpful")
    a.label(task.task_id, second.item_id, "ann", "skip")
    return a, task, first, second


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_current_labels_hold_one_row_per_item_and_annotator(relabelled, fmt):
    a, task, first, second = relabelled
    text = a.export_current(task.task_id, fmt)
    rows = list(csv.DictReader(io.StringIO(text))) if fmt == "csv" else json.loads(text)
    assert list(rows[0]) == CURRENT_COLUMNS
    keys = [(r["item_id"], r["annotator"]) for r in rows]
    assert sorted(keys) == sorted([(first.item_id, "ann"), (first.item_id, "bob"), (second.item_id, "ann")])
    mine = next(r for r in rows if (r["item_id"], r["annotator"]) == (first.item_id, "ann"))
    assert mine["label"] == "not_helpful" and mine["note"] == "changed my mind" and int(mine["changes"]) == 1
    bob = next(r for r in rows if (r["item_id"], r["annotator"]) == (first.item_id, "bob"))
    assert int(bob["changes"]) == 0  # given once: never changed (issue 37)
    assert (mine["question"], mine["system"], mine["retriever"]) == (first.question, first.system, "lexical")
    assert mine["category"] == (first.category_name or first.category) and mine["conv_id"] == first.conv_id
    assert mine["labelled_at"].endswith("UTC")


def test_the_label_log_keeps_every_label_given(relabelled):
    a, task, first, _ = relabelled
    log = json.loads(a.export_labels(task.task_id, "json"))
    assert [r["label"] for r in log if (r["item_id"], r["annotator"]) == (first.item_id, "ann")] == [
        "helpful", "not_helpful"]
    assert len(log) == 4


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_current_labels_file_imports_as_the_latest_labels(relabelled, tmp_path, tiny_conv, fmt):
    a, task, _, _ = relabelled
    other = Annotations(LanceStore(str(tmp_path / "db2"), dim=8))
    assert other.import_labels(a.export_current(task.task_id, fmt), fmt) == 3
    assert other.labels(task.task_id) == a.labels(task.task_id)
    assert other.import_labels(a.export_current(task.task_id, fmt), fmt) == 0  # nothing twice
