"""Is the offline reader fair to every context format? Abstentions per system on LoCoMo.

For each system (offline engine, its own retrieval) on the shared LoCoMo conversations, categories 1-4:
questions, abstentions ("No information available"), abstentions with every gold evidence turn in the
context, and LoCoMo F1. An abstention with all the evidence in hand is the reader's fault, not the memory's.

"In the context" is counted two ways: by citation (a passage given to the `answer` role cites the turn: its
`turn_ids`) and by content (the turn's content words are in the rendered context, the content-recall rule of
memcore.eval.content, the same for every system). They differ for systems whose items cite turns without
holding their words (a triple "John | has | kids" cites the turn it came from): counted by citation, such a
system seems to abstain with its evidence in hand when the evidence's words never reached the reader.
`abst+ans` also asks that the gold answer's tokens be in the context.

    python bench/offline_reader_fairness.py [LOCOMO_FILE ...] [--systems naive_rag,memweaver,...]
        [--retriever dense] [--embedder minilm] [--inputs-dir DIR]   # inputs cached per conv/system
        [--dump FILE]   # per-question rows (JSON lines)
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offline_answer_quality import DEFAULT_FILES, _modes, mode_inputs

from memcore.datasets import load_dataset
from memcore.eval.content import answer_in_context, evidence_texts, turns_present
from memcore.eval.metrics import locomo_f1
from memcore.llm.offline.answer import ABSTAIN
from memcore.settings import Settings
from memcore.workbench import Workbench


def evidence_in_context(inputs: dict[str, Any], evidence: list[str]) -> bool:
    """Whether every gold evidence turn is cited by a passage of the answer role's inputs."""
    cited = {t for p in inputs.get("passages") or [] for t in p.get("turn_ids") or []}
    return bool(evidence) and set(evidence) <= cited


def evidence_content_in_context(inputs: dict[str, Any], conv: Any, evidence: list[str]) -> bool:
    """Whether every judgeable gold evidence turn's content is in the rendered context (memcore.eval.content)."""
    present = [v for v in turns_present(evidence, evidence_texts(conv, evidence),
                                        str(inputs.get("context", ""))).values() if v is not None]
    return bool(present) and all(present)


def main(argv: list[str] | None = None) -> None:
    """Print per system: n, abstentions, abstentions with all evidence in context, F1 (categories 1-4)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--systems", default="systems")
    ap.add_argument("--retriever", default="dense")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--inputs-dir", type=Path, default=None)
    ap.add_argument("--dump", type=Path, default=None)
    args = ap.parse_args(argv)
    convs = [c for f in args.files for c in load_dataset(f)]
    systems = _modes(args.systems)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        wb = Workbench(Settings(store_uri=str(Path(tmp) / "store"), llm_provider="offline", embedder=args.embedder))
        for conv in convs:
            for name in systems:
                inputs = mode_inputs(wb, conv, name, args.retriever, args.inputs_dir)
                for q, inp in zip(conv.questions, inputs, strict=True):
                    if int(q.category) not in (1, 2, 3, 4):
                        continue
                    pred = getattr(wb.llm.run("answer", inp, stage="answer").output, "text", "") or ""
                    rows.append({"system": name, "conv": conv.id, "id": q.id, "category": int(q.category),
                                 "question": q.text, "gold": q.answer, "prediction": pred,
                                 "abstain": pred.strip() == ABSTAIN, "evidence": evidence_in_context(inp, q.evidence),
                                 "content": evidence_content_in_context(inp, conv, q.evidence),
                                 "answer_in": (answer_in_context(q.answer, str(inp.get("context", "")),
                                                                 q.category) or 0.0) >= 1.0,
                                 "f1": locomo_f1(pred, q.answer, q.category)})
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["system"]].append(r)
    print(f"LoCoMo {', '.join(c.id for c in convs)}; categories 1-4; {args.retriever} retriever, {args.embedder} "
          f"embedder; {time.perf_counter() - t0:.0f} s")
    print("abst+ev: abstentions with every evidence turn in the context, by citation (cited) and by content "
          "(content); ev_in: questions with it; abst+ans: by content and the gold answer's tokens in the context")
    print(f"{'system':17} {'n':>5} {'abstain':>8} {'abst+ev cited':>13} {'ev_in cited':>11} "
          f"{'abst+ev content':>15} {'ev_in content':>13} {'abst+ans':>8} {'F1':>6}")
    for name in systems:
        rs = by[name]
        ab = [r for r in rs if r["abstain"]]
        print(f"{name:17} {len(rs):5d} {len(ab):8d} {sum(r['evidence'] for r in ab):13d} "
              f"{sum(r['evidence'] for r in rs):11d} {sum(r['content'] for r in ab):15d} "
              f"{sum(r['content'] for r in rs):13d} {sum(r['content'] and r['answer_in'] for r in ab):8d} "
              f"{sum(r['f1'] for r in rs) / max(1, len(rs)):6.3f}")
    if args.dump:
        with args.dump.open("w") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
