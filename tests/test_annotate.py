"""Human evaluation: sampling, kappa against hand computations, concurrency, export/import."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from memcore.annotate import Annotations, stratified_sample
from memcore.annotate.stats import cohen_kappa, fleiss_kappa, wilson_interval
from memcore.store import LanceStore
from memcore.types import Question


def questions(n_per_cat=10):
    return [Question(f"c:q{c}{i}", "c", f"q {c} {i}", "a", [], c) for c in (1, 2, 3, 4) for i in range(n_per_cat)]


def test_stratified_sampling_reproducible_per_seed():
    qs = questions()
    a = stratified_sample(qs, 3, seed=7)
    b = stratified_sample(list(reversed(qs)), 3, seed=7)
    c = stratified_sample(qs, 3, seed=8)
    assert [q.id for q in a] == [q.id for q in b]
    assert [q.id for q in a] != [q.id for q in c]
    assert {cat: sum(q.category == cat for q in a) for cat in (1, 2, 3, 4)} == {1: 3, 2: 3, 3: 3, 4: 3}
    assert len(stratified_sample(qs, 50, seed=1)) == 40  # capped by what each category has


def test_cohen_kappa_hand_computed():
    # po = 4/5; pe = (3*2 + 2*3) / 25 = 0.48; kappa = 0.32 / 0.52
    assert cohen_kappa(list("yynny"), list("ynnny")) == pytest.approx(0.32 / 0.52)
    assert cohen_kappa(list("yyny"), list("yyny")) == 1.0  # perfect
    assert cohen_kappa(list("yynn"), list("ynyn")) == pytest.approx(0.0)  # chance: po = pe = 0.5
    with pytest.raises(ValueError):
        cohen_kappa(["y"], [])


def test_fleiss_kappa_hand_computed():
    # P_i = 1, 1/3, 1 -> P_bar = 7/9; p_y = 5/9, p_n = 4/9 -> P_e = 41/81; kappa = (22/81) / (40/81) = 0.55
    assert fleiss_kappa([{"y": 3}, {"y": 2, "n": 1}, {"n": 3}]) == pytest.approx(0.55)
    assert fleiss_kappa([{"y": 2}, {"n": 2}]) == pytest.approx(1.0)
    # two raters disagreeing on every item: P_bar = 0, P_e = 0.5 -> -1
    assert fleiss_kappa([{"y": 1, "n": 1}, {"y": 1, "n": 1}]) == pytest.approx(-1.0)


def test_wilson_interval_contains_rate():
    lo, hi = wilson_interval(20, 25)
    assert lo < 0.8 < hi and 0.6 < lo and hi < 0.93


@pytest.fixture
def ann(tmp_path, tiny_conv):
    store = LanceStore(str(tmp_path / "db"), dim=8)
    a = Annotations(store)
    task = a.create_task("t", [tiny_conv], ["sysA", "sysB"], lambda s, c, q: [f"{s} knows {q.text}"],
                         per_category=25, seed=1)
    return a, task


def test_task_freezes_items_and_results_with_agreement(ann):
    a, task = ann
    items = a.items(task.task_id)
    assert len(items) == 6 and {i.system for i in items} == {"sysA", "sysB"}
    q1 = [i.item_id for i in a.queue(task.task_id, "ann1")]
    q2 = [i.item_id for i in a.queue(task.task_id, "ann2")]
    assert sorted(q1) == sorted(q2) and q1 != q2  # same items, each annotator's own order
    assert q1 == [i.item_id for i in a.queue(task.task_id, "ann1")]  # stable across sessions
    ann1 = {it.item_id: "helpful" if it.system == "sysA" else "not_helpful" for it in items}
    ann2 = {it.item_id: "helpful" if i % 2 == 0 else "not_helpful" for i, it in enumerate(items)}
    ann2[items[-1].item_id] = "not_helpful" if ann1[items[-1].item_id] == "helpful" else "helpful"  # >= 1 differs
    for it in items:
        a.label(task.task_id, it.item_id, "ann1", ann1[it.item_id])
        a.label(task.task_id, it.item_id, "ann2", ann2[it.item_id])
    a.label(task.task_id, items[0].item_id, "ann2", "skip")  # a later change wins
    res = a.results(task.task_id)
    rate_a = next(r for r in res["rates"] if r["system"] == "sysA" and r["category"] == "all")
    assert rate_a["n"] == sum(1 for it in items if it.system == "sysA") * 2 - (items[0].system == "sysA")
    assert res["agreement"]["annotators"] == ["ann1", "ann2"]
    assert res["agreement"]["pairs"][0]["n"] == 5
    differ = sorted(i for i in ann1 if ann1[i] != ann2[i] and i != items[0].item_id)  # the skip drops item 0
    assert [d["item_id"] for d in res["disagreements"]] == differ
    assert all(d["labels"] == {"ann1": ann1[d["item_id"]], "ann2": ann2[d["item_id"]]} for d in res["disagreements"])


def test_export_import_round_trip(ann, tmp_path):
    a, task = ann
    for it in a.items(task.task_id)[:3]:
        a.label(task.task_id, it.item_id, "x", "helpful", note="fine, \"quoted\"")
    for fmt in ("json", "csv"):
        text = a.export_labels(task.task_id, fmt)
        other = Annotations(LanceStore(str(tmp_path / f"other-{fmt}"), dim=8))
        assert other.import_labels(text, fmt) == 3
        assert other.export_labels(task.task_id, fmt) == text
        assert other.import_labels(text, fmt) == 0  # importing twice adds nothing


def test_bad_label_and_empty_annotator_are_refused(ann):
    a, task = ann
    with pytest.raises(ValueError, match="one of"):
        a.label(task.task_id, "x", "me", "maybe")
    with pytest.raises(ValueError, match="type your name"):
        a.label(task.task_id, "x", "  ", "helpful")


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from memcore.annotate import Annotations
    from memcore.store import LanceStore
    a = Annotations(LanceStore({store!r}, dim=8))
    for i in range(200):
        a.label("task", f"item-{{i}}", sys.argv[1], "helpful" if i % 2 else "not_helpful")
""")


def test_two_processes_writing_200_labels_each_lose_none(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    store = str(tmp_path / "db")
    Annotations(LanceStore(store, dim=8)).label("task", "warm-up", "setup", "skip")
    script = tmp_path / "w.py"
    script.write_text(WRITER.format(root=root, store=store))
    procs = [subprocess.Popen([sys.executable, str(script), who]) for who in ("alice", "bob")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    labs = Annotations(LanceStore(store, dim=8)).labels("task")
    assert sum(1 for (_, who) in labs if who == "alice") == 200
    assert sum(1 for (_, who) in labs if who == "bob") == 200
