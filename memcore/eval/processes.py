"""Which processes evaluate what: how many (`choose_workers`, the default "auto"), whether a spawned process can
evaluate a system as this one would (`process_needs`, `elsewhere`), and starting processes without re-running this
process's main module (`starting_workers`). memcore.eval.workers runs the evaluation over them.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager

from memcore import registry
from memcore.errors import ConfigError
from memcore.eval.metric_registry import KIND as METRIC
from memcore.retrievers import KIND as RETRIEVER
from memcore.systems import KIND as SYSTEM
from memcore.systems import get_system, make_config

AUTO = "auto"
WORKERS_ENV = "MEMCORE_EVAL_WORKERS"  # "auto" (the default) or a number: run_eval's default for `workers`


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; os.cpu_count() where affinity is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def parse_workers(value: int | str) -> int | str:
    """`value` as run_eval takes it: "auto" or a number >= 1 (ConfigError, naming the fix, otherwise)."""
    text = str(value).strip().lower()
    if text == AUTO:
        return AUTO
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ConfigError(f"workers must be 'auto' or a number >= 1, not {value!r}")
    return n


def choose_workers(workers: int | str, *, offline: bool, systems: int, conversations: int = 1,
                   engine: str = "local") -> tuple[int, str]:
    """(processes, why) for run_eval's `workers`: a number is taken as given (1 forces one process); "auto" is
    $MEMCORE_EVAL_WORKERS when set, else the usable cores (at most one per system) when one conversation has more
    than one system to evaluate on the offline engine and the run is called from the main thread, else 1.

    Why not more: a hosted model's run is bound by its endpoint and already overlaps its calls (LLM concurrency);
    several conversations stay in one process (spawned processes taking whole conversations are not measured
    here: `workers=N` asks for them); a run started from another thread is a server's job (the app's Benchmark
    page), which shares the machine with its sessions. conv-26 with every system, offline, MiniLM, 2 cores
    (bench/eval_speed.py): 72 s in one process, 51 s in two (the floor's 18x -> 13x).
    """
    chosen = parse_workers(workers)
    if chosen != AUTO:
        return int(chosen), "given"
    env = os.environ.get(WORKERS_ENV, "").strip()
    if env and parse_workers(env) != AUTO:
        return int(parse_workers(env)), f"${WORKERS_ENV}"
    if engine != "local":
        return 1, f"auto: engine {engine} (its own CPUs)"
    if threading.current_thread() is not threading.main_thread():
        return 1, "auto: one process (run from a background thread: a server's job)"
    if not offline:
        return 1, "auto: one process (a hosted model: its calls overlap, LLM concurrency)"
    if conversations != 1:
        return 1, f"auto: one process ({conversations} conversations: workers=N splits them)"
    cores = usable_cores()
    if systems < 2 or cores < 2:
        return 1, f"auto: one process ({systems} system(s), {cores} usable core(s))"
    n = min(cores, systems)
    return n, f"auto: offline engine, {systems} systems, {cores} usable cores"


def process_needs(job: dict, name: str) -> dict[str, str]:
    """What a process must have registered, as this one has it, to evaluate `name` (a variant of the job) with
    the same results: {"<kind>:<name>": who registered it} for the system's class, its retriever and every
    metric ("" for a name not registered here). A spawned process compares its own with the parent's: a
    system registered at run time in the parent (not by memcore or an installed plugin) differs there."""
    system = job.get("variants", {}).get(name, name)
    needs: dict[str, str] = {}
    try:
        get_system(system)
        retriever = make_config(system, **job["configs"].get(name, {})).retriever
    except Exception:  # not registered here (or its settings not accepted here): nothing else to compare
        return {f"{SYSTEM}:{system}": ""}
    needs[f"{SYSTEM}:{system}"] = registry.owner(SYSTEM, system)
    registry.ensure(RETRIEVER)
    needs[f"{RETRIEVER}:{retriever}"] = registry.owner(RETRIEVER, retriever) if registry.get(RETRIEVER, retriever) \
        is not None else ""
    needs.update({f"{METRIC}:{e.key}": e.owner for e in registry.entries(METRIC)})
    return needs



@contextmanager
def starting_workers() -> Iterator[None]:
    """Around the submits that start spawned processes: their start-up does not re-run this process's `__main__`.

    Spawn re-runs the parent's main script in each child (as `__mp_main__`); the main module may be a user's script
    (re-running it repeats its top-level work) or a Streamlit page that a server or AppTest left in sys.modules
    (re-running it outside Streamlit fails, and the worker dies). The workers need only memcore's functions, and a
    system registered only by that script is handed back (`process_needs`), so the children start with a main
    module of their own. The swap lasts while processes start (spawn reads the main module at each start)."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__: spawn leaves it alone
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main



def elsewhere(job: dict, name: str, needs: dict[str, str]) -> str:
    """Why this process cannot evaluate `name` as the parent would ("" when it can): process_needs differ."""
    mine = process_needs(job, name)
    if mine == needs:
        return ""
    diff = [k for k in dict.fromkeys([*needs, *mine]) if mine.get(k) != needs.get(k)]  # the system first
    diff = diff[:1] if not any(mine.values()) else diff  # the system itself missing: nothing else to say
    return "a spawned process's registry differs: " + "; ".join(
        f"{k} registered here by {needs.get(k) or 'nobody'}, there by {mine.get(k) or 'nobody'}" for k in diff[:3])
