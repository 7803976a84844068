"""Scale: search latency of one conversation's scope as the store grows, and `memcore eval` across engines.

    nice -n 5 .venv/bin/python bench/scale.py                 # store: 10K, 100K, 1M items; then eval
    .venv/bin/python bench/scale.py --quick                   # store: 1K, 10K items; no eval
    .venv/bin/python bench/scale.py --no-store --eval         # eval part only

Store part. Synthetic conversations are the shared LoCoMo conversations renamed (speakers from a
name pool, names replaced in the text) and re-dated (years shifted), 1,000 memory items each
(one `unit` per turn, one `episode` per session, `semantic` pairs of turns up to 1,000), written
with the store's own calls (save_turns, commit): memcore's index upkeep runs as it would in use.
Embedding 1M texts with MiniLM on 2 cores (~100 texts/s) would take hours, so the unique LoCoMo
texts are embedded once (cached under --cache) and each synthetic copy reuses their vectors
with Gaussian noise (sigma 0.02, renormalised); items take the mean of their turns' vectors.
Latency does not depend on the vector values, only on their count and layout (`--embedder hashing`
gives 384-d vectors in a second, for a machine too busy to embed). At each size the searches are
timed twice: "before", with the scope indexes dropped (what memcore did until it built them), and
"after", with the indexes memcore keeps (memcore.store.indexes; index_scopes() refreshes them).
Cells: wall p50/p95 ms (CPU ms p50). The first lexical search of a scope never searched before builds
its snapshot: a scope searched in an earlier run over the same --path reuses its stored snapshot.

Eval part: `memcore eval` over the 8 LoCoMo conversations, offline engine, with --engine local
--workers 1 and 2 and --engine ray: wall time and peak resident memory of the largest process.
Then a paper estimate for LongMemEval-S/-M on K machines from the measured costs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memcore.datasets import load_dataset  # noqa: E402
from memcore.store import LanceStore  # noqa: E402
from memcore.types import MemoryItem  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo"
NAMES = ("Avery Blake Casey Devon Emery Finley Gray Harper Indigo Jules Kai Logan Morgan Noel Oakley Parker "
         "Quinn Reese Sage Taylor Umber Vale Wren Xen Yael Zion Ash Bay Cruz Dale").split()
ITEMS_PER_CONV = 1000
SPACE = "scale-bench"


def embed_base(convs: list, embedder: str, cache: Path) -> dict[str, np.ndarray]:
    """Vectors of every unique turn text and question of the base conversations (cached on disk)."""
    texts = sorted({t.content for c in convs for t in c.turns} | {q.text for c in convs for q in c.questions})
    path = cache / f"scale-{embedder}-{len(texts)}.npz"
    if path.exists():
        z = np.load(path, allow_pickle=False)
        if list(z["texts"]) == texts:
            return dict(zip(texts, z["vecs"], strict=True))
    from memcore.embed import HashingEmbedder, minilm_model

    t0 = time.perf_counter()
    if embedder == "minilm":  # batched (memcore embeds one text per pass for bit-exactness; speed only here)
        vecs = minilm_model().encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False).astype(np.float32)
    else:
        vecs = HashingEmbedder(384).embed(texts)
    dt = time.perf_counter() - t0
    print(f"embedded {len(texts)} unique texts with {embedder} in {dt:.0f} s ({len(texts) / dt:.0f} texts/s)")
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, texts=np.array(texts), vecs=vecs)
    return dict(zip(texts, vecs, strict=True))


def synthetic(i: int, base, vec: dict[str, np.ndarray]) -> tuple[object, np.ndarray, list[MemoryItem]]:
    """Conversation i: base renamed and re-dated, its turn vectors perturbed, and its memory items."""
    rng = np.random.default_rng(i)
    a, b = base.speakers[:2] if len(base.speakers) >= 2 else (base.speakers + ["B"])[:2]
    na, nb = NAMES[i % len(NAMES)], NAMES[(i // len(NAMES) + i + 7) % len(NAMES)]
    if na == nb:
        nb = NAMES[(NAMES.index(nb) + 1) % len(NAMES)]
    na, nb = f"{na}{i}", f"{nb}{i}"

    def ren(s: str) -> str:
        return re.sub(rf"\b{re.escape(b)}\b", nb, re.sub(rf"\b{re.escape(a)}\b", na, s))

    def redate(s: str) -> str:
        return re.sub(r"\b(19|20)(\d\d)\b", lambda m: str(int(m.group(0)) + i // 8), s)

    cid = f"syn-{i:04d}"
    turns = [replace(t, conv_id=cid, speaker={a: na, b: nb}.get(t.speaker, t.speaker), text=ren(t.text),
                     image_caption=ren(t.image_caption), session_date=redate(t.session_date),
                     timestamp=redate(t.timestamp)) for t in base.turns]
    base_v = np.stack([vec[t.content] for t in base.turns])
    tv = base_v + rng.normal(0, 0.02, base_v.shape).astype(np.float32)
    tv /= np.linalg.norm(tv, axis=1, keepdims=True)

    def item(kind: str, n: int, idx: list[int], text: str) -> MemoryItem:
        v = tv[idx].mean(axis=0)
        return MemoryItem(id=f"{kind[0]}{n}", kind=kind, text=text, system="scale", conv_id=cid,
                          embedding=(v / np.linalg.norm(v)).tolist(), sources=[turns[j].turn_id for j in idx[:2]],
                          turn_ids=[turns[j].turn_id for j in idx], created_step=idx[-1], updated_step=0,
                          timestamp=turns[idx[0]].timestamp)

    items = [item("unit", j, [j], f"{t.speaker}: {t.content}") for j, t in enumerate(turns)]
    sessions: dict[int, list[int]] = {}
    for j, t in enumerate(turns):
        sessions.setdefault(t.session, []).append(j)
    items += [item("episode", s, js, " ".join(turns[j].content for j in js[:12])) for s, js in sessions.items()]
    n_sem = max(0, ITEMS_PER_CONV - len(items))
    items += [item("semantic", j, [j % len(turns), (j + 1) % len(turns)],
                   f"{turns[j % len(turns)].content} {turns[(j + 1) % len(turns)].content}") for j in range(n_sem)]
    return replace(base, id=cid, turns=turns), tv, items[:ITEMS_PER_CONV]


def pct(xs: list[float], p: float) -> float:
    """The p-th percentile (0-100) of xs."""
    return float(np.percentile(np.asarray(xs), p))


def timed(f) -> float:
    """Wall milliseconds of one call."""
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) * 1000


def disk(path: Path) -> int:
    """Bytes under a folder."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(st: LanceStore, conv, vec: dict, probe: str, n_q: int) -> dict:
    """p50/p95 of search_items (units) and search_turns in each mode for conversation syn-0000, and the
    first lexical search of a scope never searched before (`probe`: its snapshot is built then)."""
    out: dict[str, float] = {}
    out["first_snapshot_items_ms"] = timed(lambda: st.search_items(SPACE, probe, "unit", "hello", None, 10, "lexical"))
    out["first_snapshot_turns_ms"] = timed(lambda: st.search_turns(probe, "hello", None, 10, "lexical"))
    qs = [q.text for q in conv.questions][:n_q]
    for mode in ("dense", "lexical", "hybrid"):
        for what, fn in (("items", lambda q, m: st.search_items(SPACE, "syn-0000", "unit", q, vec[q], 10, m)),
                         ("turns", lambda q, m: st.search_turns("syn-0000", q, vec[q], 10, m))):
            fn(qs[0], mode)  # warm: a lexical scope re-checks its snapshot once after the table moved
            lat, cpu = [], []
            for q in qs:
                c0 = time.process_time()
                lat.append(timed(lambda q=q, f=fn, m=mode: f(q, m)))
                cpu.append((time.process_time() - c0) * 1000)  # all threads: less sensitive to other load
            out[f"{what}_{mode}_p50"], out[f"{what}_{mode}_p95"] = pct(lat, 50), pct(lat, 95)
            out[f"{what}_{mode}_cpu_p50"] = pct(cpu, 50)
    return out


def store_part(a: argparse.Namespace) -> list[dict]:
    """Build the synthetic store in steps and measure at each size; returns one row per size."""
    convs = [c for f in sorted(LOCOMO.glob("conv-*.json")) for c in load_dataset(str(f))]
    vec = embed_base(convs, a.embedder, Path(a.cache))
    root = Path(a.path) if a.path else Path(tempfile.mkdtemp(prefix="memcore-scale-", dir=a.tmp))
    rows = []
    try:
        st = LanceStore(str(root / "db"), dim=384)
        built, build_s = len(st.checkpoints()), 0.0  # --path: go on from the conversations stored there
        for n in a.sizes:
            if n < built:
                continue
            t0, n_built = time.perf_counter(), len(st.tables.indexes.built)
            for i in range(built, n):
                conv, tv, items = synthetic(i, convs[i % len(convs)], vec)
                st.save_turns(conv.turns, tv)
                st.commit(SPACE, "scale", conv.id, 0, items, [], [], {}, done=True)
            build_s += time.perf_counter() - t0
            built = n
            row = {"conversations": n, "turns": st.table("turns").count_rows(), "build_s": build_s,
                   "items": sum(st.table(f"mem_{k}").count_rows() for k in ("unit", "episode", "semantic")),
                   "built_while_writing": st.tables.indexes.built[n_built:]}
            for name in ("turns", "mem_unit"):  # before: no scope index (what memcore did until now)
                for ix in st.table(name).list_indices():
                    st.table(name).drop_index(ix.name)
            row["before"] = measure(st, convs[0], vec, f"syn-{n - 1:04d}", a.queries)
            t1 = time.perf_counter()
            st.index_scopes()
            row["index_s"] = time.perf_counter() - t1
            row["after"] = measure(st, convs[0], vec, f"syn-{n - 2:04d}" if n > 1 else "syn-0000", a.queries)
            row["indexes"] = sorted(f"{t}:{','.join(ix.columns)}" for t in ("turns", "mem_unit")
                                    for ix in st.table(t).list_indices())
            row["disk_mb"] = disk(root) / 1e6
            row["load"] = os.getloadavg()[0]
            rows.append(row)
            print(json.dumps(rows[-1]), flush=True)
    finally:
        if not a.keep and not a.path:
            shutil.rmtree(root, ignore_errors=True)
    return rows


def print_store(rows: list[dict]) -> None:
    """The store table: one line per size, before (no scope index) and after (memcore's indexes); each cell
    wall p50/p95 ms (CPU ms p50 of the process, all threads), and the load average while measuring."""
    print("\n| items | convs | turns | disk MB | build s | when | first snapshot items/turns ms | items dense "
          "p50/p95 | items lexical | items hybrid | turns dense | turns lexical | turns hybrid |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for when in ("before", "after"):
            m = r[when]
            cells = [f"{m[f'{w}_{mode}_p50']:.1f}/{m[f'{w}_{mode}_p95']:.1f} ({m.get(f'{w}_{mode}_cpu_p50', 0):.1f})"
                     for w in ("items", "turns") for mode in ("dense", "lexical", "hybrid")]
            print(f"| {r['items']:,} | {r['conversations']} | {r['turns']:,} | {r['disk_mb']:.0f} | {r['build_s']:.0f} "
                  f"| {when} | {m['first_snapshot_items_ms']:.0f}/{m['first_snapshot_turns_ms']:.0f} | "
                  + " | ".join(cells) + " |")
    for r in rows:
        print(f"{r['items']:,} items: indexes {', '.join(r['indexes']) or 'none'}; built by the writes: "
              f"{', '.join(f'{t}.{c} at {n:,} rows' for t, c, n in r['built_while_writing']) or 'none'}; "
              f"index_scopes() rebuilt all in {r['index_s']:.1f} s; load average {r.get('load', 0):.0f}")


def main() -> None:
    """Run the parts asked for and print their tables."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="store sizes 1K and 10K items only")
    p.add_argument("--sizes", default="", help="conversations per step, e.g. 10,100,1000 (1,000 items each)")
    p.add_argument("--queries", type=int, default=50, help="questions timed per mode")
    p.add_argument("--embedder", default="minilm", choices=("minilm", "hashing"))
    p.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "memcore-scale-cache"))
    p.add_argument("--tmp", default=None, help="folder for the store (default: the system's temp folder)")
    p.add_argument("--keep", action="store_true", help="keep the store folder")
    p.add_argument("--path", default="", help="build in (or go on from, or only measure) this folder; kept")
    p.add_argument("--no-store", dest="store", action="store_false", help="skip the store part")
    p.add_argument("--eval", action="store_true", help="run the eval part (minutes per engine)")
    p.add_argument("--engines", default="local:1,local:2,ray", help="eval settings to run")
    p.add_argument("--eval-systems", default="naive_rag,com")
    p.add_argument("--eval-limit", type=int, default=20, help="questions per conversation in the eval part")
    p.add_argument("--eval-embedder", default="hashing", help="embedder of the eval runs (MiniLM's cost per turn "
                   "is measured apart and added in the estimate)")
    p.add_argument("--json", default="", help="also write every measurement to this JSON file")
    a = p.parse_args()
    a.sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else ([1, 10] if a.quick else [10, 100, 1000])
    report: dict = {}
    if a.store:
        report["store"] = store_part(a)
        print_store(report["store"])
    if a.eval:
        from bench.scale_eval import eval_part, print_eval

        report["eval"] = eval_part(a)
        print_eval(report["eval"], report.get("store"))
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
