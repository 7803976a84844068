"""Answer quality of the offline engine's `answer` role on LoCoMo.

Modes: `oracle` (context = the gold evidence turns only: isolates the answer engine from
retrieval), `dense` and `hybrid` (naive_rag, k=20, MiniLM embedder). Prints LoCoMo's
official F1 (memcore.eval.metrics.locomo_f1) per category, overall for categories 1-4,
category 5 (abstention) separately, and the lexical judge's accuracy.

    .venv/bin/python bench/offline_answer_quality.py [LOCOMO_FILE ...] [--modes oracle,dense,hybrid]
        [--inputs-dir DIR]   # cache the answer role's inputs (retrieval runs once)
        [--dump FILE]        # write every prediction as JSON lines for error analysis
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from memcore.datasets import load_dataset
from memcore.eval.metrics import lexical_judge, locomo_f1
from memcore.settings import Settings
from memcore.systems.base import render_context
from memcore.types import Conversation, Question
from memcore.workbench import Workbench

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "locomo"
DEFAULT_FILES = [SHARED / "conv-26.json", SHARED / "conv-30.json"]
CATS = (1, 2, 3, 4, 5)


def oracle_inputs(conv: Conversation, q: Question) -> dict[str, Any]:
    """Answer-role inputs whose context is the question's gold evidence turns only."""
    passages = []
    for tid in q.evidence:
        t = conv.turn(tid)
        if t is not None:
            passages.append({"text": t.embed_text, "date": t.session_date, "score": 1.0,
                             "speaker": t.speaker})
    context = "\n".join(f"[{p['date']}] {p['text']}" for p in passages)
    return {"question": q.text, "context": context, "question_date": q.question_date, "passages": passages}


def rag_inputs(wb: Workbench, conv: Conversation, retriever: str, k: int) -> list[dict[str, Any]]:
    """Answer-role inputs for every question as naive_rag (top-k turns) would send them."""
    wb.ingest("naive_rag", conv, retriever=retriever, k=k)
    sys_ = wb.system("naive_rag", conv, retriever=retriever, k=k)
    out = []
    for q in conv.questions:
        tr = sys_.retrieve(q)
        out.append({
            "question": q.text, "context": tr.context or render_context(tr.items),
            "question_date": q.question_date,
            "passages": [{"text": i.text, "date": i.metadata.get("date", ""), "score": i.score,
                          "speaker": i.metadata.get("speaker", "")} for i in tr.items],
        })
    return out


def mode_inputs(wb: Workbench | None, conv: Conversation, mode: str, k: int,
                cache_dir: Path | None) -> list[dict[str, Any]]:
    """Inputs per question for a mode, read from / written to the cache directory when given."""
    if mode == "oracle":
        return [oracle_inputs(conv, q) for q in conv.questions]
    path = cache_dir / f"{conv.id}-{mode}-k{k}.json" if cache_dir else None
    if path is not None and path.exists():
        return json.loads(path.read_text())
    assert wb is not None
    inputs = rag_inputs(wb, conv, mode, k)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(inputs))
    return inputs


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean F1 per category, overall 1-4, and lexical-judge accuracy (1-4 and 5)."""
    by: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["category"]].append(r)
    out: dict[str, float] = {}
    for c in CATS:
        if by[c]:
            out[f"f1_c{c}"] = sum(r["f1"] for r in by[c]) / len(by[c])
    main = [r for r in rows if r["category"] in (1, 2, 3, 4)]
    if main:
        out["f1_1-4"] = sum(r["f1"] for r in main) / len(main)
        out["judge_1-4"] = sum(r["judge"] for r in main) / len(main)
    if by[5]:
        out["judge_5"] = sum(r["judge"] for r in by[5]) / len(by[5])
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print one table row per mode."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--modes", default="oracle,dense,hybrid")
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--inputs-dir", type=Path, default=None)
    ap.add_argument("--dump", type=Path, default=None)
    args = ap.parse_args(argv)
    missing = [f for f in args.files if not f.exists()]
    if missing:
        sys.exit(f"LoCoMo file(s) not found: {', '.join(map(str, missing))}; pass paths on the command line")
    convs = [c for f in args.files for c in load_dataset(f)]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        wb = Workbench(Settings(store_uri=str(Path(tmp) / "store"), llm_provider="offline"))
        rows_by_mode: dict[str, list[dict]] = {m: [] for m in modes}
        seconds: dict[str, float] = defaultdict(float)
        for conv in convs:
            for mode in modes:
                inputs = mode_inputs(wb, conv, mode, args.k, args.inputs_dir)
                t0 = time.perf_counter()
                for q, inp in zip(conv.questions, inputs, strict=True):
                    res = wb.llm.run("answer", inp, stage="answer")
                    pred = getattr(res.output, "text", "") or ""
                    rows_by_mode[mode].append({
                        "mode": mode, "id": q.id, "category": int(q.category), "question": q.text,
                        "gold": q.answer, "prediction": pred, "f1": locomo_f1(pred, q.answer, q.category),
                        "judge": lexical_judge(pred, q.answer, q.category), "evidence": q.evidence,
                    })
                seconds[mode] += time.perf_counter() - t0
    cols = [f"f1_c{c}" for c in CATS[:4]] + ["f1_1-4", "judge_1-4", "f1_c5", "judge_5"]
    print(f"LoCoMo {', '.join(c.id for c in convs)}: offline answer role, k={args.k}")
    print(f"{'mode':8} {'n':>4} " + " ".join(f"{c:>9}" for c in cols) + "   ms/q")
    for mode in modes:
        rows = rows_by_mode[mode]
        s = summarise(rows)
        ms = 1000 * seconds[mode] / max(1, len(rows))
        print(f"{mode:8} {len(rows):4d} " + " ".join(f"{s.get(c, float('nan')):9.3f}" for c in cols) + f" {ms:6.1f}")
    if args.dump:
        with args.dump.open("w") as fh:
            for mode in modes:
                for r in rows_by_mode[mode]:
                    fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
