"""Scale curve: what each system's memory costs as a conversation grows from BEAM 100K to a synthetic 10M tokens.

    nice -n 5 .venv/bin/python bench/scale_curve.py                              # 100K, every system
    .venv/bin/python bench/scale_curve.py --scales 100K 500K 1M 10M --systems naive_rag com
    .venv/bin/python bench/scale_curve.py --scales 100K --embedder hashing        # a machine too busy to embed

Per (scale, system), in a child process of its own (offline engine, its own store, a shared embedding cache):
ingest seconds (the system's build; the shared turn embedding is timed apart as "prepare", charged to no
system, and cached for the next system), the child's peak RSS (its own getrusage), the store's bytes on disk after the
build, and the latency of answering the chat's probing questions (wall p50/p95 ms of `Workbench.ask`, its CPU ms,
and the wall ms of its retrieve step alone). "s/Mtok" is ingest seconds per million tokens (cl100k_base) of the
conversation, wall and CPU (the process's CPU seconds: on a shared machine they move less with the load than wall
seconds): the issue's goal is that it grows at most 1.3x from 100K to 10M for every system.

Data: BEAM chats from ../shared/datasets/beam (`<scale>/<chat>/chat.json` and its probing questions), rewritten
here into memcore's JSONL chat format (docs/jsonl-format.md): each batch is a session dated by its time anchor
(the previous session's date when it has none; the first: 2024-01-01, named in the conversation's metadata),
message ids become turn ids, each probing question a question line (gold: the ability's gold field, evidence:
every id of `source_chat_ids`, category: the ability). memcore's own BEAM loader is another engineer's work: this
script does not depend on it. "10M" is SYNTHETIC: the shared 1M chats concatenated (in turn, repeated) until the
conversation reaches 10M tokens, sessions renumbered (turn ids D<session>:<n> stay unique); its questions are the first copy's.
The 10M release's own chats are not used (they are not shared here).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEAM = next((p / "shared" / "datasets" / "beam" for p in (ROOT.parent, ROOT.parent.parent)
             if (p / "shared" / "datasets" / "beam").is_dir()), ROOT.parent / "shared" / "datasets" / "beam")
GOLD_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
SYNTHETIC_TOKENS = 10_000_000
FIRST_DATE = "2024-01-01"


def _date(anchor: str | None) -> str | None:
    """BEAM's "March-15-2024" as ISO, or None."""
    if not anchor:
        return None
    for fmt in ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(anchor.strip(), fmt).date().isoformat()
        except ValueError:
            pass
    return None


def flat_ids(src: object) -> list[int]:
    """Every message id in `source_chat_ids`: a list, a dict of lists (named groups), or lists nested in either."""
    if isinstance(src, dict):
        return [i for v in src.values() for i in flat_ids(v)]
    if isinstance(src, list):
        return [i for v in src for i in flat_ids(v)]
    return [] if src is None else [int(src)]


def beam_lines(folder: Path, conv: str, session0: int = 0, questions: bool = True,
               date0: str = FIRST_DATE) -> tuple[list[dict], int, str]:
    """JSONL lines of one BEAM chat (messages, then questions): (lines, last session number, last date)."""
    chat = json.loads((folder / "chat.json").read_text())
    lines: list[dict] = []
    ids: dict[int, str] = {}
    session, date = session0, date0
    for batch in chat:
        msgs = [m for turn in batch["turns"] for m in turn]
        if not msgs:
            continue
        session += 1
        date = _date(batch.get("time_anchor")) or next((d for m in msgs if (d := _date(m.get("time_anchor")))), date)
        for n, m in enumerate(msgs, 1):
            tid = f"D{session}:{n}"
            ids[int(m["id"])] = tid
            line = {"conversation": conv, "session": session, "speaker": m["role"], "text": m["content"] or "(empty)"}
            if n == 1:
                line["date"] = date
            lines.append(line)
    if questions:
        probing = json.loads((folder / "probing_questions" / "probing_questions.json").read_text())
        for ability, items in probing.items():
            for i, q in enumerate(items):
                ev = flat_ids(q.get("source_chat_ids"))
                gold = next((str(q[f]) for f in GOLD_FIELDS if q.get(f)), "")
                lines.append({"type": "question", "conversation": conv, "id": f"{conv}:{ability}:{i}",
                              "question": q["question"], "answer": gold or "(no gold)", "category": ability,
                              "evidence": [ids[e] for e in ev if e in ids]})
    return lines, session, date


def write_scale(scale: str, chat: str | None, out: Path) -> tuple[Path, str]:
    """The JSONL file of one scale ("10M": synthetic) and a label naming the chat(s) it holds."""
    from memcore.text.tokens import count_tokens

    if scale == "10M":
        sources = sorted((BEAM / "1M").iterdir(), key=lambda p: int(p.name))
        lines, session, date, tokens, copy = [], 0, FIRST_DATE, 0, 0
        while tokens < SYNTHETIC_TOKENS:
            src = sources[copy % len(sources)]
            got, session, date = beam_lines(src, "beam-10M-synthetic", session, questions=copy == 0, date0=date)
            tokens += sum(count_tokens(x["text"]) for x in got if "text" in x)
            lines += got
            copy += 1
        lines.insert(0, {"type": "conversation", "conversation": "beam-10M-synthetic", "speakers": ["user", "assistant"],
                         "metadata": {"synthetic": f"{copy} copies of the BEAM 1M chats {[p.name for p in sources]}"
                                                   " concatenated", "first_date": FIRST_DATE}})
        label = f"SYNTHETIC 10M ({copy} x 1M chats {'+'.join(p.name for p in sources)})"
    else:
        folder = BEAM / scale / (chat or sorted(os.listdir(BEAM / scale), key=int)[0])
        conv = f"beam-{scale}-{folder.name}"
        lines, _, _ = beam_lines(folder, conv)
        lines.insert(0, {"type": "conversation", "conversation": conv, "speakers": ["user", "assistant"],
                         "metadata": {"source": f"BEAM {scale}/{folder.name}", "first_date": FIRST_DATE}})
        label = f"BEAM {scale}/{folder.name}"
    # the dataset loader wants no date-less first message per session, and unique question ids
    path = out / f"{scale}.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path, label


def child(args: argparse.Namespace) -> None:
    """One (scale, system): prepare, ingest, answer every question; print one JSON line."""
    from memcore.settings import Settings
    from memcore.text.tokens import count_tokens
    from memcore.workbench import Workbench

    s = Settings(store_uri=args.store, cache_dir=args.cache, embedder=args.embedder, llm_provider="offline",
                 llm_check=False)
    wb = Workbench(s)
    conv = wb.load(args.file, fmt="jsonl")[0]
    prep = wb.prepare(conv)
    t0, c0 = time.perf_counter(), time.process_time()
    rep = wb.ingest(args.system, conv)
    ingest_s, ingest_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    lat, ret, cpu = [], [], []
    for q in conv.questions[: args.questions]:
        t1, c1 = time.perf_counter(), time.process_time()
        ans = wb.ask(args.system, conv, q)
        lat.append((time.perf_counter() - t1) * 1000)
        cpu.append((time.process_time() - c1) * 1000)
        ret.append(ans.retrieve_ms)
    print(json.dumps({"turns": len(conv.turns), "tokens": sum(count_tokens(t.embed_text) for t in conv.turns),
                      "prepare_s": sum(prep.values()), "ingest_s": ingest_s, "ingest_cpu_s": ingest_cpu_s,
                      "complete": rep.complete, "error": rep.error, "ask_ms": lat, "ask_cpu_ms": cpu, "retrieve_ms": ret,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))  # KB on Linux


def _pct(xs: list[float], p: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def run_one(file: Path, system: str, work: Path, cache: Path, embedder: str, questions: int) -> dict[str, Any]:
    """Run the child for one system on its own store; its result with peak RSS and store bytes."""
    store = work / f"store-{system}"
    cmd = [sys.executable, __file__, "--child", "--file", str(file), "--system", system, "--store", str(store),
           "--cache", str(cache), "--embedder", embedder, "--questions", str(questions)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode:
        return {"system": system, "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["failed"],
                "wall_s": wall}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res.update(system=system, wall_s=wall, store_bytes=_bytes(store))
    return res


def main() -> None:
    """Print the scale curve table (and write it as JSON with --json)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", nargs="*", default=["100K"], choices=["100K", "500K", "1M", "10M"])
    ap.add_argument("--chat", default=None, help="chat folder of each real scale (default: the first)")
    ap.add_argument("--systems", nargs="*", default=None, help="default: every built-in system")
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    ap.add_argument("--questions", type=int, default=20, help="probing questions answered per chat (BEAM: 20)")
    ap.add_argument("--work", default=None, help="keep stores and files here (default: a temporary directory)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--system", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    if not BEAM.is_dir():
        sys.exit(f"no BEAM chats at {BEAM}")
    if args.systems is None:
        from memcore.systems import builtin_systems

        args.systems = list(builtin_systems())
    work = Path(args.work or tempfile.mkdtemp(prefix="memcore-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    table: list[dict[str, Any]] = []
    print(f"load at start {os.getloadavg()[0]:.1f} (2 cores); embedder {args.embedder}; offline engine; work {work}")
    for scale in args.scales:
        file, label = write_scale(scale, args.chat, work)
        cache = work / f"cache-{scale}"
        for system in args.systems:
            r = run_one(file, system, work / scale, cache, args.embedder, args.questions)
            r.update(scale=scale, chat=label, load=round(os.getloadavg()[0], 1))
            table.append(r)
            if "error" in r and "turns" not in r:
                print(f"{scale:5s} {system:18s} FAILED: {r['error']}", flush=True)
                continue
            per, cpu = r["ingest_s"] / r["tokens"] * 1e6, r["ingest_cpu_s"] / r["tokens"] * 1e6
            print(f"{scale:5s} {system:18s} turns {r['turns']:6d} tokens {r['tokens']:9d} prepare {r['prepare_s']:7.1f}s "
                  f"ingest {r['ingest_s']:8.1f}s ({per:7.1f} s/Mtok; CPU {r['ingest_cpu_s']:8.1f}s, {cpu:7.1f} s/Mtok) peak {r['peak_rss_mb'] or 0:6.0f} MB store "
                  f"{r['store_bytes'] / 1e6:7.1f} MB ask p50/p95 {_pct(r['ask_ms'], 50):7.0f}/{_pct(r['ask_ms'], 95):7.0f} ms "
                  f"(CPU {_pct(r['ask_cpu_ms'], 50):7.0f}/{_pct(r['ask_cpu_ms'], 95):7.0f}) "
                  f"retrieve p50/p95 {_pct(r['retrieve_ms'], 50):6.0f}/{_pct(r['retrieve_ms'], 95):6.0f} ms "
                  f"load {r['load']}" + (f" INCOMPLETE: {r['error']}" if r.get("error") else ""), flush=True)
    for key, what in (("ingest_s", "wall"), ("ingest_cpu_s", "CPU")):
        base = {r["system"]: r[key] / r["tokens"] for r in table if r.get("scale") == args.scales[0] and "tokens" in r}
        growth = [f"{r['system']} {r['scale']}: {r[key] / r['tokens'] / base[r['system']]:.2f}x"
                  for r in table if "tokens" in r and r["system"] in base and r["scale"] != args.scales[0]]
        if growth:
            print(f"ingest {what} cost per token relative to {args.scales[0]} (goal <= 1.3x): " + ", ".join(growth))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": table, "median_load": statistics.median(
            [r["load"] for r in table]) if table else None}, indent=1))


if __name__ == "__main__":
    main()
