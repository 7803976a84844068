"""Retrieval benchmark: evidence recall vs context size for every memory system on LoCoMo.

Runs each registered system (or --systems) on the given LoCoMo files with the offline engine
and the MiniLM embedder, in each retriever mode (dense / lexical / hybrid), and prints per
system x mode x category: evidence recall, all-evidence hit, context words and tokens per
question, retrieval p50 ms, plus ingest seconds and construction LLM calls / tokens.

    .venv/bin/python bench/retrieval_recall.py ../shared/datasets/locomo/locomo8.json
    .venv/bin/python bench/retrieval_recall.py ../shared/datasets/locomo/conv-26.json \
        --systems naive_rag,com --retrievers dense --json out.json

Memory is built once per system and conversation (the retriever is a query-side setting)
and reused by all three modes. Naive RAG (k=20 turns) is the floor; the lead measured it on
the 8 conversations at dense 0.587 recall / 648 words, BM25 0.655, RRF hybrid 0.687 / 627.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memcore.datasets import load_dataset
from memcore.eval.diagnostics import all_evidence_hit, evidence_recall
from memcore.ingest import ensure_turns
from memcore.retrievers import retriever_names
from memcore.settings import Settings
from memcore.systems import load_all
from memcore.systems.base import render_context
from memcore.text.tokens import count_tokens
from memcore.types import Trace
from memcore.workbench import Workbench

FLOOR = {"dense": (0.587, 648), "lexical": (0.655, None), "hybrid": (0.687, 627)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", help="LoCoMo json files (conv-*.json or locomo8.json)")
    p.add_argument("--systems", default="", help="comma-separated system names (default: all registered)")
    p.add_argument("--retrievers", default=",".join(retriever_names()),
                   help=f"comma-separated registered retrievers: {','.join(retriever_names())}")
    p.add_argument("--categories", default="1,2,3,4", help="question categories to score (default 1-4)")
    p.add_argument("--store", default="", help="store path (default: a fresh temporary directory)")
    p.add_argument("--max-questions", type=int, default=0, help="per conversation, for quick runs (0 = all)")
    p.add_argument("--set", action="append", default=[], metavar="SYSTEM.KEY=VALUE",
                   help="config override, e.g. com.K=30 (repeatable)")
    p.add_argument("--variant", action="append", default=None, metavar="LABEL=SYSTEM:KEY=VAL,...",
                   help="an extra labelled row, e.g. 'com+ext=com:K=40,speaker_boost=3' "
                        "(default: com+ext = CoM with memcore.systems.com.EXTENDED; 'none' for no variant)")
    p.add_argument("--json", default="", help="also write every row to this JSON file")
    return p.parse_args(argv)


def overrides(pairs: list[str]) -> dict[str, dict[str, object]]:
    """{"com": {"K": 30}} from ["com.K=30"] (values parsed as JSON when possible)."""
    out: dict[str, dict[str, object]] = defaultdict(dict)
    for p in pairs:
        key, _, val = p.partition("=")
        name, _, field = key.partition(".")
        try:
            out[name][field] = json.loads(val)
        except json.JSONDecodeError:
            out[name][field] = val
    return out


def variants(specs: list[str] | None, names: list[str]) -> list[tuple[str, str, dict[str, object]]]:
    """(label, system, config) for every run: each chosen system at defaults, then the variants."""
    from memcore.systems.com import EXTENDED

    runs: list[tuple[str, str, dict[str, object]]] = [(n, n, {}) for n in names]
    if specs is None:
        return runs + ([("com+ext", "com", dict(EXTENDED))] if "com" in names else [])
    for spec in specs:
        if spec == "none":
            continue
        label, _, rest = spec.partition("=")
        system, _, kvs = rest.partition(":")
        cfg = overrides([f"{system}.{kv}" for kv in kvs.split(",") if kv]).get(system, {})
        runs.append((label, system, dict(cfg)))
    return runs


def construction_usage(wb: Workbench, name: str, conv_id: str, mark: int, skipped: bool) -> tuple[int, int]:
    """Construction LLM calls and tokens of one ingest (from the store when it was already built)."""
    if not skipped:
        recs = [r for r in wb.ledger.since(mark) if r.stage == "construction" and r.system == name]
        return len(recs), sum(r.prompt_tokens + r.completion_tokens for r in recs)
    df = wb.llm_calls(system=name, conv_id=conv_id, stage="construction")
    return len(df), int(df["prompt_tokens"].sum() + df["completion_tokens"].sum()) if len(df) else 0


def run(args: argparse.Namespace) -> dict:
    """Ingest and query everything; returns {"rows": [...], "ingest": [...], "wall_s": ...}."""
    t_start = time.perf_counter()
    store = args.store or tempfile.mkdtemp(prefix="memcore-bench-")
    wb = Workbench(Settings(store_uri=store, llm_provider="offline"))
    convs = [c for f in args.files for c in load_dataset(f)]
    names = [s for s in args.systems.split(",") if s] or list(load_all())
    modes = [m for m in args.retrievers.split(",") if m]
    cats = {int(c) for c in args.categories.split(",") if c}
    cfg = overrides(args.set)
    runs = variants(args.variant, names)
    t0 = time.perf_counter()
    for conv in convs:  # embed turns and questions once, outside every timed section
        ensure_turns(conv, wb.store, wb.embedder.embed)
        wb.embedder.embed([q.text for q in conv.questions])
    embed_s = time.perf_counter() - t0
    per_q: dict[tuple[str, str], list[dict]] = defaultdict(list)
    ingest_rows = []
    for label, name, var in runs:
        extra = {**cfg.get(name, {}), **var}
        for conv in convs:
            mark = wb.ledger.mark()
            try:
                rep = wb.ingest(name, conv, **extra)
            except Exception as e:
                print(f"  {label:<18} {conv.id:<8} INGEST FAILED: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            calls, toks = construction_usage(wb, name, conv.id, mark, rep.skipped)
            units = getattr(wb.system(name, conv, **extra), "exchanges", {}).get("units")  # RecMem only
            ingest_rows.append({"system": label, "conv_id": conv.id, "turns": len(conv.turns),
                                "seconds": round(rep.seconds, 2), "skipped": rep.skipped,
                                "construction_calls": calls, "construction_tokens": toks, "exchange_units": units})
            qs = [q for q in conv.questions if q.category in cats and q.evidence]
            if args.max_questions:
                qs = qs[: args.max_questions]
            for mode in modes:
                sys_ = wb.system(name, conv, **{**extra, "retriever": mode})
                for q in qs:
                    t1 = time.perf_counter()
                    try:
                        tr = sys_.retrieve(q)
                    except Exception as e:
                        tr = Trace(system=name, question=q.text, errors=[f"{type(e).__name__}: {e}"])
                    ms = (time.perf_counter() - t1) * 1000
                    ctx = tr.context or render_context(tr.items)
                    per_q[(label, mode)].append({
                        "conv_id": conv.id, "question_id": q.id, "category": q.category,
                        "recall": evidence_recall(tr, q.evidence), "hit": bool(all_evidence_hit(tr, q.evidence)),
                        "words": len(ctx.split()), "tokens": count_tokens(ctx), "ms": ms,
                        "errors": len(tr.errors)})
            print(f"  {label:<18} {conv.id:<8} ingest {rep.seconds:6.1f}s  {len(qs)} questions x {len(modes)} modes",
                  file=sys.stderr, flush=True)
        if args.json:  # partial results after every system, in case a long run is stopped
            Path(args.json + ".partial").write_text(json.dumps(
                {"rows": summarize(per_q, ingest_rows, sorted(cats)), "ingest": ingest_rows}, default=str))
    rows = summarize(per_q, ingest_rows, sorted(cats))
    return {"rows": rows, "ingest": ingest_rows, "embed_s": round(embed_s, 1), "store": store,
            "wall_s": round(time.perf_counter() - t_start, 1), "questions": per_q_to_json(per_q)}


def per_q_to_json(per_q: dict[tuple[str, str], list[dict]]) -> dict[str, list[dict]]:
    """Per-question rows keyed "system/mode"."""
    return {f"{k[0]}/{k[1]}": v for k, v in per_q.items()}


def summarize(per_q: dict[tuple[str, str], list[dict]], ingest_rows: list[dict], cats: list[int]) -> list[dict]:
    """One row per system x mode x category (and "all")."""
    ing: dict[str, dict] = defaultdict(lambda: {"seconds": 0.0, "calls": 0, "tokens": 0})
    for r in ingest_rows:
        g = ing[r["system"]]
        g["seconds"] += r["seconds"]
        g["calls"] += r["construction_calls"]
        g["tokens"] += r["construction_tokens"]
    rows = []
    for (name, mode), qs in per_q.items():
        for cat in [*cats, "all"]:
            sel = [q for q in qs if cat == "all" or q["category"] == cat]
            if not sel:
                continue
            rows.append({
                "system": name, "mode": mode, "category": cat, "n": len(sel),
                "recall": statistics.fmean(q["recall"] for q in sel),
                "all_hit": statistics.fmean(q["hit"] for q in sel),
                "words": statistics.fmean(q["words"] for q in sel),
                "tokens": statistics.fmean(q["tokens"] for q in sel),
                "p50_ms": statistics.median(q["ms"] for q in sel),
                "ingest_s": ing[name]["seconds"], "constr_calls": ing[name]["calls"],
                "constr_tokens": ing[name]["tokens"], "errors": sum(q["errors"] for q in sel)})
    return rows


def print_tables(res: dict) -> None:
    """Fixed-width tables: overall summary, per-category detail, ingest per conversation."""
    rows = res["rows"]
    print(f"\nOverall (categories {sorted({r['category'] for r in rows if r['category'] != 'all'})}); "
          "floor = naive_rag k=20 (lead: dense 0.587 / 648 w, lexical 0.655, hybrid 0.687 / 627 w)")
    hdr = (f"{'system':<18} {'mode':<8} {'n':>5} {'recall':>7} {'allhit':>7} {'words':>7} {'tokens':>7} "
           f"{'p50ms':>7} {'ingest_s':>9} {'c_calls':>8} {'c_tokens':>10} {'err':>4}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if r["category"] == "all":
            print(f"{r['system']:<18} {r['mode']:<8} {r['n']:>5} {r['recall']:>7.3f} {r['all_hit']:>7.3f} "
                  f"{r['words']:>7.0f} {r['tokens']:>7.0f} {r['p50_ms']:>7.1f} {r['ingest_s']:>9.1f} "
                  f"{r['constr_calls']:>8} {r['constr_tokens']:>10} {r['errors']:>4}")
    print("\nPer category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)")
    hdr2 = f"{'system':<18} {'mode':<8} {'cat':>4} {'n':>5} {'recall':>7} {'allhit':>7} {'words':>7} {'tokens':>7} {'p50ms':>7}"
    print(hdr2)
    print("-" * len(hdr2))
    for r in rows:
        if r["category"] != "all":
            print(f"{r['system']:<18} {r['mode']:<8} {r['category']:>4} {r['n']:>5} {r['recall']:>7.3f} "
                  f"{r['all_hit']:>7.3f} {r['words']:>7.0f} {r['tokens']:>7.0f} {r['p50_ms']:>7.1f}")
    print("\nIngest seconds per conversation (turn embedding done once beforehand: "
          f"{res['embed_s']} s)")
    by_sys: dict[str, dict[str, float]] = defaultdict(dict)
    convs: list[str] = []
    for r in res["ingest"]:
        by_sys[r["system"]][r["conv_id"]] = r["seconds"]
        if r["conv_id"] not in convs:
            convs.append(r["conv_id"])
    print(f"{'system':<18} " + " ".join(f"{c:>8}" for c in convs) + f" {'max':>7}")
    for name, secs in by_sys.items():
        print(f"{name:<18} " + " ".join(f"{secs.get(c, 0):>8.1f}" for c in convs) + f" {max(secs.values()):>7.1f}")
    print_calls_per_unit(res["ingest"])
    print(f"\nwall time {res['wall_s']} s; store {res['store']}")


def print_calls_per_unit(ingest: list[dict]) -> None:
    """Construction LLM calls per exchange unit, per conversation and overall (RecMem's goal: <= 20%)."""
    by_sys: dict[str, list[dict]] = defaultdict(list)
    for r in ingest:
        if r.get("exchange_units"):
            by_sys[r["system"]].append(r)
    for name, rows in by_sys.items():
        calls, units = sum(r["construction_calls"] for r in rows), sum(r["exchange_units"] for r in rows)
        per = " ".join(f"{r['conv_id']} {r['construction_calls']}/{r['exchange_units']}="
                       f"{r['construction_calls'] / r['exchange_units']:.1%}" for r in rows)
        print(f"\n{name}: construction calls per exchange unit: {per}; overall {calls}/{units}={calls / units:.1%}")


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the tables (and write --json)."""
    args = parse_args(argv)
    res = run(args)
    print_tables(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
