"""The eval part of bench/scale.py: `memcore eval` over the 8 LoCoMo conversations on each engine, and a
paper estimate for LongMemEval-S/-M on K machines from the measured per-turn and per-question costs.

Each setting runs the CLI from a fresh store under a temporary folder (offline engine, the embedder
given, ingest included); a sampler reads /proc every 0.2 s for the resident memory of the CLI and
every process below it (local workers, or the Ray processes of the local Ray it starts).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LOCOMO8 = ROOT.parent / "shared" / "datasets" / "locomo" / "locomo8.json"
# LongMemEval (Wu et al., 2025): 500 questions, each with its own haystack (the paper's sizes)
LONGMEMEVAL = {"LongMemEval-S": 115_000, "LongMemEval-M": 1_500_000}  # tokens of haystack per question


def _children(pid: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        out.add(p)
        todo += kids.get(p, [])
    return out


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_cli(args: list[str], env: dict, cwd: Path) -> tuple[float, dict[int, float], float]:
    """Run `memcore ...`; (wall seconds, peak RSS MB per process of its tree, CPU seconds of the CLI and the
    workers it waited for: not the Ray processes, which are not its children)."""
    peaks: dict[int, float] = {}
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "memcore.cli", *args], env=env, cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for p in _children(proc.pid):
                peaks[p] = max(peaks.get(p, 0.0), _rss_mb(p))
            time.sleep(0.2)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, _ = proc.communicate()
    done.set()
    th.join()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"memcore {' '.join(args)} failed ({proc.returncode}):\n{out[-3000:]}")
    return wall, peaks, _children_cpu() - cpu0


def eval_part(a: argparse.Namespace) -> dict:
    """Each engine setting from a fresh store; then the answer-only cost on a built store; MiniLM per turn."""
    env = {**os.environ, "MEMCORE_LLM_PROVIDER": "offline", "MEMCORE_EMBEDDER": a.eval_embedder,
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    tmp = Path(tempfile.mkdtemp(prefix="memcore-scale-eval-", dir=a.tmp))
    base = ["eval", "--dataset", "locomo", "--file", str(LOCOMO8), "--systems", a.eval_systems,
            "--limit", str(a.eval_limit)]
    rows: dict = {"settings": {}}
    try:
        for setting in a.engines.split(","):
            engine, _, workers = setting.partition(":")
            store = tmp / f"store-{engine}-{workers or 'all'}"
            args = [*base, "--engine", engine, "--workers", workers or "2", "--store", str(store),
                    "--out", str(tmp / f"{engine}{workers}.json"), "--llm-concurrency", "1"]
            try:
                wall, peaks, cpu = run_cli(args, {**env, "MEMCORE_CACHE": str(tmp / f"cache-{setting}")}, tmp)
            except (RuntimeError, OSError) as e:
                rows["settings"][setting] = {"error": str(e)[-500:]}
                print(f"eval {setting}: FAILED {str(e)[-300:]}", flush=True)
                continue
            res = json.loads((tmp / f"{engine}{workers}.json").read_text())
            big = sorted(peaks.values(), reverse=True)
            rows["settings"][setting] = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb_max": big[0] if big else 0.0,
                                         "peak_rss_mb_top": [round(x) for x in big[:4]],
                                         "questions": res["questions_done"],
                                         "f1": {s: v["overall"]["f1"] for s, v in res["systems"].items()}}
            print(f"eval {setting}: {wall:.0f} s, peak RSS {big[:4]}", flush=True)
        first = next((s for s in a.engines.split(",") if "error" not in rows["settings"].get(s, {"error": 1})), None)
        if first:  # the same run again on the built store: ingest is skipped, so this is the answering cost
            engine, _, workers = first.partition(":")
            store = tmp / f"store-{engine}-{workers or 'all'}"
            wall_q, _, cpu_q = run_cli([*base, "--engine", "local", "--workers", "1", "--store", str(store),
                                    "--run-id", "answers-only", "--out", str(tmp / "again.json"),
                                    "--llm-concurrency", "1"], {**env, "MEMCORE_CACHE": str(tmp / f"cache-{first}")},
                                   tmp)
            res = json.loads((tmp / "again.json").read_text())
            n_sys = len(res["systems"])
            turns = sum(c["turns"] for c in res["conversations"]) if isinstance(res["conversations"][0], dict) \
                else None
            rows["answer_only_s"] = wall_q
            rows["questions_per_system"] = res["questions_done"] / n_sys
            rows["systems"] = n_sys
            rows["turns"] = turns or _locomo_turns()
            w1 = rows["settings"][first]["wall_s"]
            rows["per_turn_s"] = max(w1 - wall_q, 0.0) / (rows["turns"] * n_sys)
            rows["per_question_s"] = wall_q / res["questions_done"]
            cpu1 = rows["settings"][first]["cpu_s"]
            rows["per_turn_cpu_s"] = max(cpu1 - cpu_q, 0.0) / (rows["turns"] * n_sys)
            rows["per_question_cpu_s"] = cpu_q / res["questions_done"]
        rows["minilm"] = minilm_cost()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _locomo_turns() -> int:
    from memcore.datasets import load_dataset

    return sum(len(c.turns) for c in load_dataset(str(LOCOMO8)))


def minilm_cost(n: int = 40) -> dict:
    """Seconds per turn of memcore's MiniLM embedding (one pass per text) and tokens per LoCoMo turn."""
    from memcore.datasets import load_dataset
    from memcore.embed import MiniLMEmbedder
    from memcore.text.tokens import count_tokens

    turns = [t for c in load_dataset(str(LOCOMO8))[:2] for t in c.turns][:n]
    texts = [f"{t.speaker}: {t.content}" for t in turns]
    emb = MiniLMEmbedder()
    emb.embed(texts[:2])  # load the model
    t0, c0 = time.perf_counter(), time.process_time()
    emb.embed(texts)
    dt, dc = (time.perf_counter() - t0) / len(texts), (time.process_time() - c0) / len(texts)
    return {"s_per_turn": dt, "cpu_s_per_turn": dc, "tokens_per_turn": float(np.mean([count_tokens(x) for x in texts]))}


def print_eval(ev: dict, store_rows: list | None = None) -> None:
    """The eval table and the LongMemEval estimate."""
    print("\n| eval setting (8 LoCoMo conversations) | wall s | peak RSS of the largest processes MB | questions |")
    print("|---|---|---|---|")
    for s, r in ev["settings"].items():
        if "error" in r:
            print(f"| {s} | failed | - | - |")
        else:
            print(f"| {s} | {r['wall_s']:.0f} | {r['peak_rss_mb_top']} | {r['questions']} |")
    if "per_question_s" not in ev:
        return
    m = ev["minilm"]
    print(f"\nmeasured (wall under the machine's load / CPU seconds): {ev['per_turn_s'] * 1000:.1f} / "
          f"{ev['per_turn_cpu_s'] * 1000:.1f} ms per turn per system to build memory (eval embedder); "
          f"{ev['per_question_s'] * 1000:.0f} / {ev['per_question_cpu_s'] * 1000:.0f} ms per question per system "
          f"to answer; MiniLM {m['s_per_turn'] * 1000:.1f} / {m['cpu_s_per_turn'] * 1000:.1f} ms per LoCoMo turn "
          f"({m['tokens_per_turn']:.0f} tokens)")
    per_tok = m["cpu_s_per_turn"] / max(m["tokens_per_turn"], 1.0)  # MiniLM cost grows with length (to 256 tokens)
    print("paper estimate from CPU seconds: 500 questions, one system, offline engine, MiniLM, one worker per core "
          "of 2-core machines, no embedding cache hits (LongMemEval-S haystacks share sessions: an upper bound):")
    for name, tokens in LONGMEMEVAL.items():
        cells = []
        for k in (1, 8, 32):
            seconds = 500 * (tokens * per_tok + tokens / m["tokens_per_turn"] * ev["per_turn_cpu_s"]
                             + ev["per_question_cpu_s"]) / (2 * k)
            cells.append(f"K={k}: {seconds / 3600:.1f} h")
        print(f"  {name} (~{tokens:,} haystack tokens per question): " + ", ".join(cells))
