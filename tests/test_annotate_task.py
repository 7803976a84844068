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


def test_a_category_without_labels_reads_no_labels_not_a_missing_or_zero_bar():
    def cell(system: str, category: str, helpful: int, n: int) -> dict:
        rate = helpful / n if n else None
        return {"system": system, "category": category, "rate": rate, "helpful": helpful, "n": n,
                "ci95": (0.0, 1.0), "n_annotators": 1 if n else 0, "per_annotator": {"alice": rate} if n else {}}

    rates = [cell("a", "single-hop", 0, 2), cell("a", "all", 0, 2),  # a: labelled, never helpful (0%)
             cell("b", "temporal", 1, 1), cell("b", "all", 1, 1)]  # b: nothing labelled in single-hop
    fig = helpfulness_figure(rates)
    bars = {bar.name: dict(zip(bar.x, zip(bar.y, bar.text, strict=True), strict=True)) for bar in fig.data}
    assert list(fig.data[0].x) == list(fig.data[1].x)  # every system has a slot in every category
    assert bars["a"]["single-hop"] == (0.0, "")  # 0%: a bar, no note
    assert bars["b"]["single-hop"] == (0.0, "no labels") and bars["a"]["temporal"] == (0.0, "no labels")
    assert bars["b"]["temporal"] == (1.0, "")
    assert fig.layout.uniformtext.minsize >= 10 and fig.layout.uniformtext.mode == "show"  # not shrunk to the bar
