"""Long turns: evidence recall of dense retrieval over BEAM chats when messages exceed MiniLM's window.

    nice -n 5 .venv/bin/python bench/long_turns.py                    # every BEAM 100K chat in ../shared
    .venv/bin/python bench/long_turns.py --chats 2 3 4 --k 5 10 20     # a few chats

all-MiniLM-L6-v2 reads 256 word pieces; BEAM messages average ~580 tokens. Three ways to embed a message, each
message its own retrieval unit (a turn), questions ranked against every message of their chat by cosine:
- cut:   the first window of the message only (what memcore did before issue 38: the model truncated silently);
         computed as the first chunk's vector (the same word pieces the model kept);
- mean:  memcore.embed.LONG_TEXT_RULE, the normalised mean of the vectors of overlapping chunks that each fit;
- max:   max-sim, a message scores its best chunk (one vector per chunk, mapped back to the message).
Chunks are memcore.embed.chunk_spans of the model's own tokenizer (CHUNK_OVERLAP word pieces shared). Evidence
recall@k: the share of a question's `source_chat_ids` (all groups of a dict) among its chat's top-k messages,
averaged over questions that name evidence (abstention names none). BEAM is read here directly (chat.json +
probing_questions/probing_questions.json), not through memcore's loaders.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale_curve import flat_ids  # noqa: E402
from memcore.embed import MiniLMEmbedder, chunk_spans, normalise, pool_chunks  # noqa: E402

# ../shared from the project root (a worktree under wt/ looks one level further up)
BEAM = next((p / "shared" / "datasets" / "beam" for p in (ROOT.parent, ROOT.parent.parent)
             if (p / "shared" / "datasets" / "beam").is_dir()), ROOT.parent / "shared" / "datasets" / "beam")


def read_chat(folder: Path) -> tuple[list[tuple[int, str]], list[tuple[str, str, list[int]]]]:
    """(message id, "role: content") of every message and (ability, question, evidence ids) of every question."""
    msgs = [(m["id"], f"{m['role']}: {m['content']}") for b in json.loads((folder / "chat.json").read_text())
            for turn in b["turns"] for m in turn]
    qs = []
    for ability, items in json.loads((folder / "probing_questions" / "probing_questions.json").read_text()).items():
        for q in items:
            qs.append((ability, q["question"], flat_ids(q.get("source_chat_ids"))))
    return msgs, qs


def main() -> None:
    """Print evidence recall@k of cut / mean / max per chat and overall, with the share of long messages."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="100K")
    ap.add_argument("--chats", nargs="*", default=None, help="chat folder names (default: all)")
    ap.add_argument("--k", nargs="*", type=int, default=[5, 10, 20])
    args = ap.parse_args()
    root = BEAM / args.scale
    if not root.is_dir():
        sys.exit(f"no BEAM {args.scale} chats at {root}")
    folders = sorted((root / c for c in (args.chats or os.listdir(root))), key=lambda p: int(p.name))
    emb = MiniLMEmbedder()
    tok = emb.model.tokenizer
    recall = {m: {k: [] for k in args.k} for m in ("cut", "mean", "max")}
    n_msgs = n_long = 0
    t0 = time.perf_counter()
    for folder in folders:
        msgs, qs = read_chat(folder)
        chunks = []
        for _, text in msgs:
            offs = tok(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
            chunks.append([text[a:b] for a, b in chunk_spans(offs, emb.window - 2)])
        n_msgs += len(msgs)
        n_long += sum(len(c) > 1 for c in chunks)
        flat = [c for cs in chunks for c in cs]
        vecs = emb.embed(flat)  # every chunk fits: embedded as is
        starts = np.cumsum([0] + [len(c) for c in chunks])
        ids = [i for i, _ in msgs]
        qvecs = emb.embed([q for _, q, _ in qs])
        cut = normalise(np.stack([vecs[s] for s in starts[:-1]]))
        mean = np.stack([pool_chunks(vecs[s:e]) for s, e in zip(starts[:-1], starts[1:], strict=True)])
        for (_, _, gold), qv in zip(qs, qvecs, strict=True):
            if not gold:
                continue
            sims = vecs @ qv
            scores = {"cut": cut @ qv, "mean": mean @ qv,
                      "max": np.array([sims[s:e].max() for s, e in zip(starts[:-1], starts[1:], strict=True)])}
            for m, sc in scores.items():
                order = [ids[i] for i in np.argsort(-sc, kind="stable")]
                for k in args.k:
                    recall[m][k].append(len(set(order[:k]) & set(gold)) / len(set(gold)))
        print(f"chat {args.scale}/{folder.name}: {len(msgs)} messages, {sum(len(c) > 1 for c in chunks)} over the "
              f"window, {len(flat)} chunks ({time.perf_counter() - t0:.0f} s so far); so far " + ", ".join(
                  f"{m} @{args.k[1 if len(args.k) > 1 else 0]} {np.mean(recall[m][args.k[1 if len(args.k) > 1 else 0]]):.3f}"
                  for m in recall), flush=True)
    n_q = len(recall["cut"][args.k[0]])
    print(f"\nBEAM {args.scale}, {len(folders)} chats, {n_msgs} messages ({n_long} = {n_long / max(1, n_msgs):.0%} longer "
          f"than {emb.window} word pieces), {n_q} questions with evidence; load {os.getloadavg()[0]:.1f}")
    print("evidence recall@k (mean over questions; 95% bootstrap interval)")
    rng = np.random.default_rng(0)
    for m in ("cut", "mean", "max"):
        cells = []
        for k in args.k:
            a = np.array(recall[m][k])
            boots = [a[rng.integers(0, len(a), len(a))].mean() for _ in range(1000)]
            cells.append(f"@{k} {a.mean():.3f} [{np.percentile(boots, 2.5):.3f}, {np.percentile(boots, 97.5):.3f}]")
        print(f"  {m:5s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
