"""Human-evaluation tasks over several conversations: sampling per task, annotators' mean rates, names."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from memcore.annotate import Annotations
from memcore.types import CATEGORY_NAMES, Conversation
from memcore.viz.annotation import helpfulness_figure, rates_table


def _copy(conv: Conversation, cid: str) -> Conversation:
    return replace(conv, id=cid, questions=[replace(q, conv_id=cid) for q in conv.questions])


def _retrieve(system: str, conv: Conversation, q) -> list[str]:
    return [f"{system} knows {q.id}"]


def test_per_category_counts_over_the_whole_task(workbench, tiny_conv):
    convs = [_copy(tiny_conv, f"c{i}") for i in range(3)]
    ann = Annotations(workbench.store)
    t = ann.create_task("multi", convs, ["a"], _retrieve, per_category=1, seed=3)
    items = ann.items(t.task_id)
    per_cat = Counter(i.category for i in items)
    cats = {str(q.category) for q in tiny_conv.questions if q.category in (1, 2, 3, 4)}
    assert set(per_cat) == cats and set(per_cat.values()) == {1}  # not 1 per category per conversation
    assert len({i.item_id for i in items}) == len(items)
    assert all(i.category_name == CATEGORY_NAMES[int(i.category)] for i in items)


def test_rate_is_mean_of_annotators_rates_with_spread(workbench, tiny_conv):
    ann = Annotations(workbench.store)
    t = ann.create_task("rates", [tiny_conv], ["a", "b"], _retrieve, per_category=25)
    items = ann.items(t.task_id)
    assert len(items) >= 4  # two systems x >= 2 questions
    items = [i for i in items if i.system == "a"]
    for it in items:  # alice: every item helpful
        ann.label(t.task_id, it.item_id, "alice", "helpful")
    for it in items[:2]:  # bob labels two, one helpful
        ann.label(t.task_id, it.item_id, "bob", "helpful" if it is items[0] else "not_helpful")
    r = next(r for r in ann.results(t.task_id)["rates"] if r["category"] == "all" and r["system"] == "a")
    assert r["per_annotator"] == {"alice": 1.0, "bob": 0.5}
    assert r["rate"] == 0.75  # (1 + 0.5) / 2, not the pooled (n + 1) / (n + 2)
    assert r["helpful"] == len(items) + 1 and r["n"] == len(items) + 2
    assert (r["min"], r["max"], r["n_annotators"]) == (0.5, 1.0, 2) and r["sd"] > 0
    cats = {r["category"] for r in ann.results(t.task_id)["rates"]}
    assert cats - {"all"} <= set(CATEGORY_NAMES.values())
    table = rates_table(ann.results(t.task_id)["rates"])
    assert table[-1]["category"] == "all" and "rate · bob" in table[0]
    bar = helpfulness_figure(ann.results(t.task_id)["rates"]).data[0]
    assert list(bar.x)[-1] == "all" and "alice: 100%" in bar.customdata[-1][3]
