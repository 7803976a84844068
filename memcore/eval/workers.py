"""Evaluating conversations over several processes: spawned workers take whole conversations, or one conversation's
systems (each process runs memcore.eval.evaluate on its share; the rows are saved to the one store).

`workers > 1`: spawned processes take whole conversations, each with its own Workbench on the same
store; concurrent LanceDB commits to the same tables for different conversations are safe (Lance
commits optimistically and rebases/retries; checked with 4 writers, see bench/eval_workers.py).
One conversation with `workers > 1` (`run_split`): this process does the shared work (the turn embedding),
then it and `workers - 1` spawned processes take that conversation's systems one at a time, the
costliest expected first (`expected_cost`); the rows are the same as one process's (assembled from the store).
A spawned process evaluates a system only when its registry holds what this one does for it (`process_needs`: the
system class, its retriever, the metrics, by who registered each); one registered at run time here (a test, a
notebook, a plugin imported by hand) is evaluated in this process instead, never dropped.

How many processes, and which systems a spawned process can take: memcore.eval.processes; what each process does with
a conversation: memcore.eval.evaluate.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, FIRST_EXCEPTION, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from queue import SimpleQueue
from typing import Any

from memcore.embed import warm
from memcore.eval.evaluate import (
    StopCb,
    evaluate_conversation,
    prefetch_questions,
    shared_work,
)
from memcore.eval.processes import elsewhere, process_needs, starting_workers
from memcore.serialize import conversation_from_json, conversation_to_json
from memcore.settings import Settings
from memcore.systems import get_system
from memcore.types import Conversation, Question
from memcore.workbench import Workbench

DIED = ("a worker process died (the rows saved so far are kept: the same call resumes). If run_eval(workers > 1) "
        "is called from a script, call it under `if __name__ == '__main__':` (processes are spawned)")


# ------------------------------------------------------------------ worker processes
_W: dict[str, Any] = {}


def _worker_init(queue: Any, stop_event: Any, threads: int, settings: Settings | None = None) -> None:
    # Torch threads per worker = cores / workers: oversubscribed intra-op threads made a MiniLM query
    # 5-15x slower on a busy 2-core machine; the vectors are identical with 1 or 2 threads.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and sets stop_event
    _W.update(queue=queue, stop=stop_event, threads=threads, settings=settings)


def _worker_job(settings: Settings, conv_json: str, todo_ids: dict[str, list[str]], job: dict,
                needs: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """Evaluate a whole conversation (run_parallel): {"done": questions done, "handed_back": {system: reason}},
    the systems this process does not register as the parent does (`needs`) left to the parent."""
    _worker_wb(settings)
    conv = conversation_from_json(conv_json)
    by_id = {q.id: q for q in conv.questions}
    todo = {s: [by_id[i] for i in ids] for s, ids in todo_ids.items()}
    back = {}
    for name in list(todo) if needs is not None else []:
        why = elsewhere(job, name, needs.get(name, {}))
        if why:
            back[name] = why
            del todo[name]
    done = evaluate_conversation(_W["wb"], conv, todo, job, _W["queue"].put, _W["stop"].is_set) if todo else 0
    return {"done": done, "handed_back": back}


def _worker_warm() -> None:
    """Build this worker's Workbench and load its embedding model (run_split submits it first, so the
    worker starts while the parent embeds the turns)."""
    wb = _worker_wb(_W["settings"])
    warm(wb.embedder)


def _worker_wb(settings: Settings) -> Any:
    if "wb" not in _W:
        _W["wb"] = Workbench(settings)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(_W["threads"])
    return _W["wb"]


def _worker_system(settings: Settings, conv_json: str, name: str, ids: list[str], job: dict,
                   needs: dict[str, str] | None = None) -> int | dict:
    """Evaluate one system (variant) of a conversation whose shared work is done (run_split); the number of
    questions done. {"elsewhere": reason} without evaluating when this process's registry differs from the
    parent's `needs` for it (process_needs): the parent evaluates it itself."""
    wb = _worker_wb(settings)
    why = elsewhere(job, name, needs) if needs is not None else ""
    if why:
        return {"elsewhere": why}
    if _W.get("conv_json") != conv_json:
        _W.update(conv_json=conv_json, conv=conversation_from_json(conv_json))
    conv = _W["conv"]
    by_id = {q.id: q for q in conv.questions}
    return evaluate_conversation(wb, conv, {name: [by_id[i] for i in ids]}, job, _W["queue"].put, _W["stop"].is_set,
                                 shared=False)


def expected_cost(job: dict, name: str) -> int:
    """A system's expected share of an offline evaluation, for ordering: 1 + the memory kinds its class stores.
    conv-26 offline, one process (CPU s, ingest + answers): the three systems with 3-4 kinds 15.6-19.0 each, the
    others (0-1 kinds) 3.2-7.1; a system that is not registered (a plugin missing here) counts 1."""
    try:
        cls = get_system(job.get("variants", {}).get(name, name))
    except Exception:
        return 1
    return 1 + len(getattr(cls, "kinds", ()) or ())


def run_split(settings: Settings, wb: Any, conv: Conversation, todo: dict[str, list[Question]], job: dict,
              workers: int, on_msg: Callable[[dict], None], should_stop: StopCb) -> dict[str, Any]:
    """Evaluate one conversation's systems over `workers` processes: this one and `workers - 1` spawned.

    The spawned workers start first (each loads its Workbench and model) while this process does the shared
    work (`shared_work`, the questions embedded ahead) once; then each process takes the next pending system,
    costliest expected first (`expected_cost`: list scheduling, so a wrong guess costs at most one system's
    time). Each system is evaluated by `evaluate_conversation` as in one process and saves its own rows; the
    results are assembled from the store, so they equal the sequential run's. A spawned process first checks
    that it registers the system as this one does (`process_needs`); when it does not (a system registered at
    run time here) it hands the system back and this process evaluates it. Messages reach `on_msg` in this
    thread only; `should_stop` is polled here and passed on (a stop lets running systems save and end, none
    starts after it). A failure that escapes a system (a worker that died) stops the others and is raised.
    Returns where each system ran: {"here": [...], "spawned": [...], "handed_back": {system: reason}}.
    """
    ctx = mp.get_context("spawn")
    queue, stop_event = ctx.Queue(), ctx.Event()
    local: SimpleQueue = SimpleQueue()  # this process's own system's messages
    names = [n for n in job["systems"] if todo.get(n)]
    order = sorted(names, key=lambda n: -expected_cost(job, n))  # stable: registry order among equals
    needs = {n: process_needs(job, n) for n in names}
    here_only: list[str] = []  # handed back by a spawned process: evaluated here, before the rest of `order`
    placed: dict[str, Any] = {"here": [], "spawned": [], "handed_back": {}}
    threads = max(1, (os.cpu_count() or 1) // workers)
    conv_json = conversation_to_json(conv)

    def drain() -> None:
        while not local.empty():
            on_msg(local.get())
        while not queue.empty():
            on_msg(queue.get())

    with ProcessPoolExecutor(workers - 1, mp_context=ctx, initializer=_worker_init,
                             initargs=(queue, stop_event, threads, settings)) as pool, \
            ThreadPoolExecutor(1, thread_name_prefix="memcore-split") as here:
        try:
            with starting_workers():  # each warm-up submit starts a process (spawn: on demand)
                for _ in range(workers - 1):  # a failed warm-up is met again by the worker's first system
                    pool.submit(_worker_warm)
            shared_work(wb, conv, on_msg)
            prefetch_questions(getattr(wb, "embedder", None), list({q.id: q for n in names for q in todo[n]}.values()))
            running: dict[Any, tuple[str, str]] = {}  # future -> ("pool" | "here", system)
            while order or here_only or running:
                if should_stop():
                    stop_event.set()
                if not stop_event.is_set():
                    if (here_only or order) and all(w != "here" for w, _ in running.values()):
                        name = here_only.pop(0) if here_only else order.pop(0)
                        placed["here"].append(name)
                        running[here.submit(evaluate_conversation, wb, conv, {name: todo[name]}, job, local.put,
                                            stop_event.is_set, shared=False)] = ("here", name)
                    while order and sum(w == "pool" for w, _ in running.values()) < workers - 1:
                        name = order.pop(0)
                        with starting_workers():  # a submit with no idle process starts one
                            running[pool.submit(_worker_system, settings, conv_json, name,
                                                [q.id for q in todo[name]], job, needs[name])] = ("pool", name)
                elif not running:
                    break
                finished, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
                drain()
                for f in finished:
                    where, name = running.pop(f)
                    exc = f.exception()
                    if exc is not None:
                        raise exc
                    if where == "pool" and isinstance(f.result(), dict):  # not registered there: evaluated here
                        placed["handed_back"][name] = f.result()["elsewhere"]
                        here_only.append(name)
                    elif where == "pool":
                        placed["spawned"].append(name)
            drain()
        except BrokenProcessPool as exc:  # from a system's future, or from submitting to a pool already broken
            raise RuntimeError(DIED) from exc
        finally:
            stop_event.set()  # on an error (or a progress callback raising): the others end between questions
    drain()
    return placed


def run_parallel(settings: Settings, convs: list[Conversation], todo: dict, job: dict, workers: int,
                 on_msg: Callable[[dict], None], should_stop: StopCb, wb: Any = None) -> dict[str, Any]:
    """Evaluate several conversations over `workers` spawned processes, each taking whole conversations, longest
    first. A system a spawned process does not register as this one does (`process_needs`) is handed back and
    evaluated here, with `wb`, once the processes are done. A failure that escapes a conversation (a worker that
    died) stops the others and is raised. Returns {"handed_back": {system: reason}}."""
    ctx = mp.get_context("spawn")
    queue, stop_event = ctx.Queue(), ctx.Event()
    order = sorted(convs, key=lambda c: -sum(len(v) for v in todo[c.id].values()) * len(c.turns))
    threads = max(1, (os.cpu_count() or 1) // workers)
    needs = {n: process_needs(job, n) for n in job["systems"]} if wb is not None else None
    back: dict[str, dict[str, str]] = {}  # conv id -> {system: reason}
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init,
                             initargs=(queue, stop_event, threads)) as pool:
        with starting_workers():  # the submits start the processes (spawn: on demand, up to `workers`)
            futs = {pool.submit(_worker_job, settings, conversation_to_json(c),
                                {s: [q.id for q in qs] for s, qs in todo[c.id].items()}, job, needs): c.id
                    for c in order if any(todo[c.id].values())}
        pending = set(futs)
        while pending:
            finished, pending = wait(pending, timeout=0.2, return_when=FIRST_EXCEPTION)
            while not queue.empty():
                on_msg(queue.get())
            if should_stop():
                stop_event.set()
            for f in finished:
                if isinstance(f.exception(), BrokenProcessPool):
                    raise RuntimeError(DIED) from f.exception()
                if f.exception() is not None:
                    stop_event.set()
                    raise f.exception()
                if f.result()["handed_back"]:
                    back[futs[f]] = f.result()["handed_back"]
        while not queue.empty():
            on_msg(queue.get())
    for c in order:  # what no spawned process could evaluate: here, as in one process
        if c.id in back and not should_stop():
            evaluate_conversation(wb, c, {n: todo[c.id][n] for n in back[c.id]}, job, on_msg, should_stop)
    return {"handed_back": {n: why for b in back.values() for n, why in b.items()}}
