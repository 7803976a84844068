"""Citation recall vs content recall vs answer-in-context per system, with 95% intervals, from a stored run.

Reads a run's rows with their traces from the store and recomputes the content measures
(memcore.eval.content) from each trace's rendered context and the dataset's gold turns, so runs
stored before the measures existed get them too. Prints per system (and per category with
--categories): n, citation recall, content recall, answer in context, each as mean [95% CI].

    .venv/bin/python bench/content_recall.py --store .memcore --run-id eval-1234 \
        --file ../shared/datasets/locomo/conv-26.json [--json out.json] [--categories]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memcore.datasets import load_dataset
from memcore.eval.content import content_measures
from memcore.eval.report import row_trace
from memcore.eval.scores import block_intervals
from memcore.store import LanceStore

MEASURES = ("evidence_recall", "content_recall", "answer_in_context")


def rows_with_content(store: LanceStore, run_id: str, files: list[str]) -> list[dict]:
    """The run's rows, each with the content measures recomputed from its trace's context."""
    turns, questions = {}, {}
    for f in files:
        for conv in load_dataset(f, "locomo"):
            turns.update({(conv.id, t.turn_id): t.text for t in conv.turns})
            questions.update({q.id: q for q in conv.questions})
    out = []
    for r in store.results(run_id, traces=True):
        q = questions[r["question_id"]]
        context = (row_trace(r) or {}).get("context", "")
        texts = {t: turns[(q.conv_id, t)] for t in r.get("evidence") or [] if (q.conv_id, t) in turns}
        abstain = str(q.category) == "5"
        r = {k: v for k, v in r.items() if k != "trace"}
        r.update(content_measures(q.answer, q.evidence, q.category, context, texts, abstain))
        out.append(r)
    return out


def summarise(rows: list[dict], by_category: bool) -> list[dict]:
    """One line per system (and category): n and each measure's mean with its interval."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["system"], "all"), []).append(r)
        if by_category:
            groups.setdefault((r["system"], str(r["category"])), []).append(r)
    lines = []
    for (system, cat), rs in sorted(groups.items()):
        ci = block_intervals(rs, judge=False, names=MEASURES)
        line = {"system": system, "category": cat, "n": len(rs)}
        for m in MEASURES:
            vals = [float(r[m]) for r in rs if r.get(m) is not None]
            line[m] = {"mean": round(sum(vals) / len(vals), 3) if vals else None, **ci[m]}
        lines.append(line)
    return lines


def main() -> None:
    """Parse arguments, compute, print (and write --json)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=".memcore")
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--file", action="append", required=True, help="LoCoMo file(s) the run used")
    ap.add_argument("--categories", action="store_true", help="also per category")
    ap.add_argument("--json", help="write the lines as JSON")
    a = ap.parse_args()
    lines = summarise(rows_with_content(LanceStore(a.store), a.run_id, a.file), a.categories)

    def cell(v: dict) -> str:
        return "-" if v["mean"] is None else f"{v['mean']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}] n={v['n']}"

    print(f"{'system':18s} {'cat':4s} {'n':>4s}  " + "  ".join(f"{m:34s}" for m in MEASURES))
    for line in lines:
        print(f"{line['system']:18s} {line['category']:4s} {line['n']:4d}  "
              + "  ".join(f"{cell(line[m]):34s}" for m in MEASURES))
    if a.json:
        Path(a.json).write_text(json.dumps(lines, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
