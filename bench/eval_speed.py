"""Offline eval speed of one LoCoMo conversation, all systems, quiet and under a fixed background load.

    nice python bench/eval_speed.py                       # conv-26, all systems, quiet then loaded
    nice python bench/eval_speed.py --demo                # build all systems on the demo (the app's build)
    python bench/eval_speed.py --systems naive_rag,com --limit 20 --phases quiet
    nice python bench/eval_speed.py --profile /tmp/eval.prof   # one eval under a CPU-time cProfile
    nice python bench/eval_speed.py --workers 1 --phases quiet  # one process (the default is run_eval's: auto)

Each phase runs `run_eval` (offline engine, MiniLM, lexical judge, one process, what `memcore eval`
runs) in a fresh child process on a fresh store and fresh caches, and reports per system its ingest
and answering seconds (wall, and the child's CPU seconds over all its threads: less
dependent on what else runs), the shared work (model load, the turn embedding) on its own lines, and the
LanceDB calls (every outermost LanceTable / connection method call, counted by wrapping lancedb's
classes in the child) by phase, plus the calls per commit batch. The "loaded" phase starts `--load`
busy processes (pure Python loops, at the bench's own niceness) for the duration of the child, so
the loaded/quiet ratio is measured in one run under the same conditions. `uptime` is recorded
before and after every phase: other users of the machine add to both phases.

The floor (issue 38): in the same child, before the eval, the least work any dense system's eval must do,
embedding every turn of the conversation once, uncached, with MiniLM on one thread (MiniLMEmbedder(threads=1):
batched by token count, as the eval embeds). Each phase prints its total wall (model load included) and CPU
seconds as multiples of the floor's: the ratio divides by work measured under the same load, so it moves less
with the machine than the seconds do (the goal: <= 15x).

`--workers` is run_eval's: "auto" by default (what `memcore eval` runs: the usable cores for one conversation's
systems on the offline engine, memcore.eval.processes.choose_workers), or N (1: one process). With N > 1 this child
does the shared work, then it and N - 1 spawned processes take the systems (memcore.eval.workers.run_split); the
eval then uses N cores while the floor uses one thread. The per-step lines show this child's own systems only
(the others ran elsewhere: see run_eval's own timing, which says where each ran), the CPU seconds add the spawned
processes' (children's rusage), and the peak RSS is given for this child and for the largest spawned process.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LOCOMO = Path("shared") / "datasets" / "locomo" / "conv-26.json"  # beside the checkout (a worktree: further up)
CONV26 = next((p / _LOCOMO for p in ROOT.parents if (p / _LOCOMO).is_file()), ROOT.parent / _LOCOMO)
TABLE_METHODS = ("add", "update", "delete", "merge_insert", "search", "count_rows", "checkout_latest", "checkout",
                 "to_pandas", "to_arrow", "head", "create_index", "create_scalar_index", "create_fts_index",
                 "optimize", "list_indices", "take_offsets", "take_row_ids")
DB_METHODS = ("open_table", "create_table", "table_names", "list_tables", "drop_table")


def uptime() -> str:
    """The load averages (1, 5, 15 min) as `uptime` shows them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _busy(stop: mp.Event) -> None:  # type: ignore[valid-type]
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


# ------------------------------------------------------------------ child: one eval, instrumented
class Clock:
    """Seconds and LanceDB calls charged to the phase in force ("shared", "<system> ingest", ...)."""

    def __init__(self) -> None:
        self.phase, self.t, self.cpu_t = "setup", time.perf_counter(), time.process_time()
        self.seconds: Counter = Counter()
        self.cpu: Counter = Counter()  # CPU seconds of this process (all threads) by phase: less load-dependent
        self.calls: Counter = Counter()
        self.call_s: Counter = Counter()  # seconds inside outermost LanceDB calls, by phase
        self.commit_s: Counter = Counter()  # seconds inside store.commit, by system
        self.methods: Counter = Counter()
        self.commits: Counter = Counter()
        self.commit_calls: Counter = Counter()
        self.commit_methods: Counter = Counter()
        self.in_commit = ""
        self.local = threading.local()

    def switch(self, phase: str) -> str:
        """Enter `phase`; returns the phase left."""
        now, cpu = time.perf_counter(), time.process_time()
        self.seconds[self.phase] += now - self.t
        self.cpu[self.phase] += cpu - self.cpu_t
        old, self.phase, self.t, self.cpu_t = self.phase, phase, now, cpu
        return old

    def wrap(self, cls: type, names: tuple[str, ...], label: str) -> None:
        """Count outermost calls of cls.<name> (a method calling another counts once)."""
        for name in names:
            fn = getattr(cls, name, None)
            if fn is None or isinstance(fn, property):
                continue

            def counted(*a, _fn=fn, _name=name, **k):
                depth = getattr(self.local, "depth", 0)
                if depth == 0:
                    self.calls[self.phase] += 1
                    self.methods[f"{label}.{_name}"] += 1
                    if self.in_commit:
                        self.commit_calls[self.in_commit] += 1
                        self.commit_methods[f"{label}.{_name}"] += 1
                self.local.depth = depth + 1
                t0 = time.perf_counter()
                try:
                    return _fn(*a, **k)
                finally:
                    self.local.depth = depth
                    if depth == 0:
                        self.call_s[self.phase] += time.perf_counter() - t0

            setattr(cls, name, counted)


def measure_floor(conv_path: str) -> dict:
    """The one-thread MiniLM floor: wall and CPU seconds to embed every turn of the conversation once, uncached
    (MiniLMEmbedder(threads=1); the model is loaded before, not timed)."""
    from memcore.datasets import load_dataset
    from memcore.embed import MiniLMEmbedder

    texts = [t.embed_text for c in load_dataset(conv_path, "locomo") for t in c.turns]
    emb = MiniLMEmbedder(threads=1)
    emb.embed(["warm up the floor"])
    t, cpu = time.perf_counter(), time.process_time()
    emb.embed(texts)
    return {"wall": time.perf_counter() - t, "cpu": time.process_time() - cpu, "texts": len(texts)}


def child(args: argparse.Namespace) -> dict:
    """Run the eval once in this process and return its measurements."""
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MEMCORE_LLM_PROVIDER="offline")
    import lancedb.db
    import lancedb.table

    import memcore.eval.runner as runner
    import memcore.ingest.driver as ingest
    from memcore.settings import Settings
    from memcore.store import LanceStore
    from memcore.workbench import Workbench

    clock = Clock()
    clock.wrap(lancedb.table.LanceTable, TABLE_METHODS, "table")
    clock.wrap(lancedb.db.LanceDBConnection, DB_METHODS, "db")

    ens, ing, commit, prep = ingest.ensure_turns, Workbench.ingest, LanceStore.commit, Workbench.prepare

    def ensure_turns(*a, **k):
        old = clock.switch("shared: turn embedding")
        try:
            return ens(*a, **k)
        finally:
            clock.switch(old)

    def prepare(*a, **k):
        old = clock.switch("shared: turn embedding")
        try:
            return prep(*a, **k)
        finally:
            clock.switch(old)

    def wb_ingest(self, name, *a, **k):
        clock.switch(f"{name} ingest")
        try:
            return ing(self, name, *a, **k)
        finally:
            clock.switch(f"{name} answer")

    def store_commit(self, space, system, *a, **k):
        clock.commits[system] += 1
        clock.in_commit = system
        t = time.perf_counter()
        try:
            return commit(self, space, system, *a, **k)
        finally:
            clock.in_commit = ""
            clock.commit_s[system] += time.perf_counter() - t

    def assemble(*a, **k):
        clock.switch("assemble results")
        return asm(*a, **k)

    asm = runner.assemble
    ingest.ensure_turns, Workbench.ingest, LanceStore.commit, Workbench.prepare = (ensure_turns, wb_ingest,
                                                                                   store_commit, prepare)
    runner.assemble = assemble  # answering = from a system's built memory to the next system (or assembly)
    store = Path(args.store)
    settings = Settings().with_(store_uri=str(store), cache_dir=str(store / "cache"), llm_provider="offline",
                                embedder=args.embedder)
    t0 = time.perf_counter()
    clock.switch("shared: model load")
    floor_s = 0.0
    wb = Workbench(settings)
    wb.embedder.embed(["warm up"])  # loads the model (the CLI preloads it too)
    clock.switch("floor")
    floor = measure_floor(args.conv) if args.embedder == "minilm" and not args.demo else None
    clock.switch("setup")
    if args.demo:  # what the app's "build all systems" does: ingest every system on the demo conversation
        from memcore.systems import load_all

        conv = wb.load_demo()
        for name in (list(load_all()) if args.systems == "all" else args.systems.split(",")):
            wb.ingest(name, conv)
        clock.switch("end")
        return {"wall": time.perf_counter() - t0, "seconds": dict(clock.seconds), "cpu": dict(clock.cpu), "calls": dict(clock.calls),
                "call_s": dict(clock.call_s), "commit_s": dict(clock.commit_s), "methods": dict(clock.methods),
                "commits": dict(clock.commits), "commit_calls": dict(clock.commit_calls),
                "commit_methods": dict(clock.commit_methods), "questions": 0, "overall": {}, "results_digest": ""}
    res = runner.run_eval(settings, "locomo", args.conv, args.systems.split(",") if args.systems != "all" else "all",
                   limit=args.limit, workbench=wb, workers=args.workers)
    clock.switch("end")
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the spawned workers' CPU (reaped when the pool closed)
    clock.cpu["spawned workers"] = kids.ru_utime + kids.ru_stime
    rss = {"this process MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
           "largest spawned MB": kids.ru_maxrss // 1024}
    floor_s = clock.seconds.get("floor", 0.0)
    rows = sorted(wb.store.results(res["run_id"], traces=False), key=lambda r: (r["system"], r["question_id"]))
    digest = hashlib.sha256(json.dumps([(r["system"], r["question_id"], r["prediction"], r["context_turn_ids"],
                                         r["f1"]) for r in rows]).encode()).hexdigest()[:16]
    return {"wall": time.perf_counter() - t0 - floor_s, "seconds": dict(clock.seconds), "cpu": dict(clock.cpu),
            "calls": dict(clock.calls), "floor": floor,
            "call_s": dict(clock.call_s), "commit_s": dict(clock.commit_s), "methods": dict(clock.methods),
            "commits": dict(clock.commits), "commit_calls": dict(clock.commit_calls),
            "commit_methods": dict(clock.commit_methods), "questions": res["questions_done"],
            "overall": {s: {k: b["overall"].get(k) for k in ("f1", "evidence_recall")}
                        for s, b in res["systems"].items()}, "results_digest": digest, "timing": res.get("timing"),
            "workers": (res.get("timing") or {}).get("workers", {}).get("processes", args.workers), "rss": rss}


# ------------------------------------------------------------------ parent: phases and report
def run_phase(args: argparse.Namespace, loaded: bool) -> dict:
    """One child eval, with `args.load` busy processes running when `loaded`."""
    stop = mp.Event()
    busy = [mp.Process(target=_busy, args=(stop,), daemon=True) for _ in range(args.load if loaded else 0)]
    for p in busy:
        p.start()
    before = uptime()
    with tempfile.TemporaryDirectory(prefix="eval_speed_") as tmp:
        cmd = [sys.executable, __file__, "--child", "--store", tmp, "--conv", str(args.conv), "--systems",
               args.systems, "--embedder", args.embedder, "--workers", str(args.workers)] \
            + (["--limit", str(args.limit)] if args.limit else []) \
            + (["--demo"] if args.demo else [])
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    stop.set()
    for p in busy:
        p.join()
    if out.returncode:
        sys.exit(f"child failed:\n{out.stderr[-4000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res.update(load_before=before, load_after=uptime(), busy=len(busy))
    return res


def report(phases: dict[str, dict]) -> None:
    """Print seconds and LanceDB calls per phase step, side by side, and the loaded/quiet ratios."""
    names = list(phases)
    seen = dict.fromkeys(k for r in phases.values() for k in r["seconds"] if k not in ("setup", "end", "floor"))
    rows = sorted(seen, key=lambda k: not k.startswith("shared"))  # stable: the systems in run order
    print(f"{'step':34s}" + "".join(f"{n + ' s':>12s}{'cpu s':>8s}{'calls':>8s}" for n in names)
          + ("   loaded/quiet" if len(names) == 2 else ""))
    for k in rows + ["setup"] + (["spawned workers"] if any("spawned workers" in r.get("cpu", {})
                                                             for r in phases.values()) else []):
        vals = [phases[n]["seconds"].get(k, 0.0) for n in names]
        line = f"{k:34s}" + "".join(f"{v:12.2f}{phases[n].get('cpu', {}).get(k, 0.0):8.2f}"
                                    f"{phases[n]['calls'].get(k, 0):8d}" for v, n in zip(vals, names, strict=True))
        if len(names) == 2 and vals[0] > 0.05:
            line += f"   {vals[1] / vals[0]:6.2f}"
        print(line)
    walls = [phases[n]["wall"] for n in names]
    cpus = [sum(v for k, v in phases[n].get("cpu", {}).items() if k != "floor") for n in names]
    print(f"{'total (wall, incl. model load)':34s}"
          + "".join(f"{w:12.2f}{c:8.2f}{sum(phases[n]['calls'].values()):8d}"
                    for w, c, n in zip(walls, cpus, names, strict=True))
          + (f"   {walls[1] / walls[0]:6.2f}" if len(names) == 2 else ""))
    for n, w, c in zip(names, walls, cpus, strict=True):
        f = phases[n].get("floor")
        if f:
            print(f"[{n}] floor (one-thread MiniLM, {f['texts']} turns embedded once, uncached): {f['wall']:.2f} s wall, "
                  f"{f['cpu']:.2f} s CPU; the eval is {w / f['wall']:.1f}x the floor (wall), {c / f['cpu']:.1f}x (CPU)"
                  f"; goal <= 15x; the eval ran on {phases[n].get('workers', 1)} process(es); peak RSS "
                  f"{phases[n].get('rss')}")
    for n in names:
        r = phases[n]
        per = {s: round(r["commit_calls"].get(s, 0) / c, 1) for s, c in r["commits"].items() if c}
        print(f"[{n}] seconds in LanceDB calls {({k: round(v, 2) for k, v in r['call_s'].items()})}; "
              f"in store.commit {({k: round(v, 2) for k, v in r['commit_s'].items()})}")
        print(f"[{n}] load before {r['load_before']} after {r['load_after']} (busy processes: {r['busy']}); "
              f"{r['questions']} rows (digest of predictions and contexts {r['results_digest']}); commits {r['commits']}; LanceDB calls per commit {per}")
        print(f"[{n}] overall {r['overall']}")
        print(f"[{n}] run_eval's own timing: {r.get('timing')}")
        print(f"[{n}] calls by method: {dict(sorted(r['methods'].items(), key=lambda kv: -kv[1]))}")
        print(f"[{n}] calls in commits: {dict(sorted(r['commit_methods'].items(), key=lambda kv: -kv[1]))}")


def profile(args: argparse.Namespace) -> None:
    """One eval in this process under a CPU-time cProfile; prints the child's measurements and the top functions."""
    import cProfile
    import pstats

    sys.path.insert(0, str(ROOT))  # this checkout's memcore, as the phases' children get it
    with tempfile.TemporaryDirectory(prefix="eval_speed_") as tmp:
        args.store = tmp
        prof = cProfile.Profile(time.process_time)
        res = prof.runcall(child, args)
    prof.dump_stats(args.profile)
    print(f"uptime {uptime()}; digest {res['results_digest']}; CPU s (profiled) "
          f"{sum(v for k, v in res['cpu'].items() if k != 'floor'):.1f}; stats in {args.profile}")
    pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)


def main() -> None:
    """Parse arguments; run as the child (one eval) or as the parent (phases, report)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conv", default=str(CONV26))
    ap.add_argument("--systems", default="all")
    ap.add_argument("--limit", type=int, default=None, help="questions per conversation (default all)")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--demo", action="store_true", help="build every system's memory of the demo conversation "
                    "(the app's 'build all') instead of the eval")
    ap.add_argument("--phases", default="quiet,loaded")
    ap.add_argument("--workers", default="auto", help="run_eval's workers: auto (the default, as memcore eval) or "
                    "N: > 1 splits the conversation's systems over that many processes, 1 keeps one process")
    ap.add_argument("--load", type=int, default=2, help="busy processes in the loaded phase")
    ap.add_argument("--json", default="", help="also write the measurements here")
    ap.add_argument("--profile", default="", help="run one child eval (no phases) under cProfile timed by CPU "
                    "seconds (time.process_time: threads' CPU is charged to where the main thread waits, e.g. "
                    "LanceDB's queries to the future's wait) and write its stats here (pstats)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--store", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    if args.profile:
        profile(args)
        return
    print(f"uptime at start: {uptime()}  (cores: {os.cpu_count()})", flush=True)
    phases = {}
    for ph in args.phases.split(","):
        phases[ph] = run_phase(args, ph == "loaded")
        print(f"{ph}: {phases[ph]['wall']:.1f}s (load {phases[ph]['load_before']} -> {phases[ph]['load_after']})",
              flush=True)
    report(phases)
    if args.json:
        Path(args.json).write_text(json.dumps(phases, indent=1))


if __name__ == "__main__":
    main()
