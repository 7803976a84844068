"""Answer quality of the offline engine's `answer` role on LoCoMo, apart from and with retrieval.

Modes (comma-separated in --modes):
- `oracle`: the context is the question's gold evidence turns only (the reader apart from retrieval);
- `full`: every turn of the conversation (what the full_context system sends);
- a system name (`naive_rag`, `com`, `recmem`, `memcot`, `xmemory`, `memweaver`, ...): exactly the
  inputs that system's `answer` role call receives after its own retrieval (`--retriever`, dense by
  default), captured once per question; `systems` stands for every registered system but full_context.

Prints LoCoMo's official F1 (memcore.eval.metrics.locomo_f1) per category, overall for categories
1-4, the lexical judge's accuracy for 1-4, category 5 (abstention) separately, and per mode the
spread of F1 (1-4) over the conversations.

    .venv/bin/python bench/offline_answer_quality.py [LOCOMO_FILE ...] [--modes oracle,full,systems]
        [--embedder minilm|hashing] [--store DIR]   # ingests resume in a persistent store
        [--inputs-dir DIR]   # cache the answer role's inputs (retrieval runs once per mode)
        [--dump FILE]        # every prediction as JSON lines, for error analysis
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from memcore.datasets import load_dataset
from memcore.eval.metrics import lexical_judge, locomo_f1
from memcore.settings import Settings
from memcore.systems.base import BaseSystem
from memcore.types import Conversation, Question, Turn
from memcore.workbench import Workbench

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "locomo"
DEFAULT_FILES = sorted(SHARED.glob("conv-*.json"))
CATS = (1, 2, 3, 4, 5)


def _passage(t: Turn) -> dict[str, Any]:
    return {"text": f"{t.speaker}: {t.content}", "date": t.session_date, "score": 1.0, "speaker": t.speaker,
            "turn_ids": [t.turn_id]}


def _inputs(conv: Conversation, q: Question, passages: list[dict[str, Any]]) -> dict[str, Any]:
    context = "\n".join(f"[{p['date']}] {p['text']}" for p in passages)
    return {"question": q.text, "context": context, "question_date": q.question_date, "passages": passages,
            "speakers": list(conv.speakers)}


def oracle_inputs(conv: Conversation, q: Question) -> dict[str, Any]:
    """Answer-role inputs whose context is the question's gold evidence turns only."""
    turns = [conv.turn(tid) for tid in q.evidence]
    return _inputs(conv, q, [_passage(t) for t in turns if t is not None])


def full_inputs(conv: Conversation, q: Question) -> dict[str, Any]:
    """Answer-role inputs with every turn of the conversation (the full_context baseline)."""
    return _inputs(conv, q, [_passage(t) for t in conv.turns])


class _Recorder:
    """Wraps a system's LLM client and keeps the inputs of its reader call (stage "answer")."""

    def __init__(self, llm: Any) -> None:
        self.llm, self.inputs = llm, None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("llm", "inputs"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.llm, name, value)

    def run(self, role: str, inputs: dict[str, Any], **kw: Any) -> Any:
        if role == "answer" or kw.get("stage") == "answer":  # a reader family's role ("answer_memweaver", ...)
            self.inputs = inputs
        return self.llm.run(role, inputs, **kw)


def system_inputs(wb: Workbench, name: str, conv: Conversation, retriever: str) -> list[dict[str, Any]]:
    """The exact inputs a system's `answer` role call gets for every question (ingesting first)."""
    rep = wb.ingest(name, conv, retriever=retriever)
    if getattr(rep, "error", None):
        raise RuntimeError(f"{name} ingest of {conv.id} failed: {rep.message}")
    sys_: BaseSystem = wb.system(name, conv, retriever=retriever)
    rec = _Recorder(sys_.llm)
    sys_.llm = rec  # type: ignore[assignment]
    out = []
    for q in conv.questions:
        rec.inputs = None
        sys_.answer(q)
        out.append(rec.inputs or _inputs(conv, q, []))
    return out


def mode_inputs(wb: Workbench, conv: Conversation, mode: str, retriever: str,
                cache_dir: Path | None) -> list[dict[str, Any]]:
    """Inputs per question for a mode, read from / written to the cache directory when given."""
    if mode == "oracle":
        return [oracle_inputs(conv, q) for q in conv.questions]
    if mode == "full":
        return [full_inputs(conv, q) for q in conv.questions]
    path = cache_dir / f"{conv.id}-{mode}-{retriever}.json" if cache_dir else None
    if path is not None and path.exists():
        return json.loads(path.read_text())
    t0 = time.perf_counter()
    inputs = system_inputs(wb, mode, conv, retriever)
    print(f"  {mode} on {conv.id}: ingest + retrieval {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
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


def spread(rows: list[dict[str, Any]]) -> str:
    """F1 (1-4) over conversations: min / median / max."""
    by: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["category"] in (1, 2, 3, 4):
            by[r["conv"]].append(r["f1"])
    per = [sum(v) / len(v) for v in by.values() if v]
    if not per:
        return ""
    return f"{min(per):.3f} / {statistics.median(per):.3f} / {max(per):.3f}"


def _modes(spec: str) -> list[str]:
    out: list[str] = []
    for m in (x.strip() for x in spec.split(",")):
        if m == "systems":
            out += [s for s in Workbench.systems() if s != "full_context"]
        elif m:
            out.append(m)
    return list(dict.fromkeys(out))


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print one table row per mode."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--modes", default="oracle,full")
    ap.add_argument("--retriever", default="dense")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--store", type=Path, default=None)
    ap.add_argument("--inputs-dir", type=Path, default=None)
    ap.add_argument("--dump", type=Path, default=None)
    args = ap.parse_args(argv)
    missing = [f for f in args.files if not f.exists()]
    if missing or not args.files:
        sys.exit(f"LoCoMo file(s) not found: {', '.join(map(str, missing)) or SHARED}; pass paths on the command line")
    convs = [c for f in args.files for c in load_dataset(f)]
    modes = _modes(args.modes)
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "store"
        wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder=args.embedder))
        rows_by_mode: dict[str, list[dict]] = {m: [] for m in modes}
        seconds: dict[str, float] = defaultdict(float)
        for conv in convs:
            for mode in modes:
                inputs = mode_inputs(wb, conv, mode, args.retriever, args.inputs_dir)
                t0 = time.perf_counter()
                for q, inp in zip(conv.questions, inputs, strict=True):
                    res = wb.llm.run("answer", inp, stage="answer")
                    pred = getattr(res.output, "text", "") or ""
                    rows_by_mode[mode].append({
                        "mode": mode, "conv": conv.id, "id": q.id, "category": int(q.category),
                        "question": q.text, "gold": q.answer, "prediction": pred,
                        "f1": locomo_f1(pred, q.answer, q.category),
                        "judge": lexical_judge(pred, q.answer, q.category), "evidence": q.evidence,
                    })
                seconds[mode] += time.perf_counter() - t0
    cols = [f"f1_c{c}" for c in CATS[:4]] + ["f1_1-4", "judge_1-4", "f1_c5", "judge_5"]
    print(f"LoCoMo {', '.join(c.id for c in convs)}: offline answer role; systems: {args.retriever} retriever, "
          f"{args.embedder} embedder")
    print(f"{'mode':18} {'n':>5} " + " ".join(f"{c:>9}" for c in cols) + "   ms/q  F1 1-4 per conv min/med/max")
    for mode in modes:
        rows = rows_by_mode[mode]
        s = summarise(rows)
        ms = 1000 * seconds[mode] / max(1, len(rows))
        print(f"{mode:18} {len(rows):5d} " + " ".join(f"{s.get(c, float('nan')):9.3f}" for c in cols)
              + f" {ms:6.1f}  {spread(rows)}")
    if args.dump:
        with args.dump.open("w") as fh:
            for mode in modes:
                for r in rows_by_mode[mode]:
                    fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
