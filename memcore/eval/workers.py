"""Evaluating conversations: ingest, answer, judge and save rows; in this process or in spawned workers.

`workers > 1`: spawned processes take whole conversations, each with its own Workbench on the same
store; concurrent LanceDB commits to the same tables for different conversations are safe (Lance
commits optimistically and rebases/retries; checked with 4 writers, see bench/eval_workers.py).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from memcore.eval.judge import make_judge
from memcore.eval.report import build_row
from memcore.settings import Settings
from memcore.types import Conversation, Question

StopCb = Callable[[], bool]
FLUSH_ROWS, FLUSH_SECONDS = 20, 10.0


def score_question(wb: Any, system: Any, q: Question, meta: dict, judge: Callable | None) -> dict:
    """Answer one question with a system, judge it, and build its row."""
    ans = system.answer(q)
    verdict = judge(system.llm, q, ans.text) if judge is not None else None
    row_meta = {k: meta[k] for k in ("run_id", "provider", "model", "engine", "embedder", "fingerprint")}
    return build_row(q, ans, {**row_meta, "system": system.name, "retriever": system.config.retriever}, verdict)



def evaluate_conversation(wb: Any, conv: Conversation, todo: dict[str, list[Question]], job: dict,
                          emit: Callable[[dict], None], stop: StopCb) -> int:
    """Ingest each system (resumable), answer and score its pending questions, persist rows in batches."""
    judge, _ = make_judge(wb, job["judge"])
    done = 0
    for name in job["systems"]:
        qs = todo.get(name) or []
        if not qs:
            continue
        cfg, where = job["configs"][name], {"system": name, "conv_id": conv.id}
        emit({"phase": "ingest", **where})
        try:
            rep = wb.ingest(name, conv, should_stop=stop, progress=lambda d, t, ev, w=where: d % 50 or emit(
                {"phase": "ingest", **w, "turn": d, "turns": t}), **cfg)
        except Exception as e:  # noqa: BLE001 - a broken system must not end the other systems' run
            emit({"phase": "error", **where, "error": f"ingest failed: {type(e).__name__}: {e}"})
            continue
        if not rep.complete:
            break
        sys_ = wb.system(name, conv, **cfg)
        buf: list[dict] = []
        last = time.monotonic()
        for q in qs:
            try:
                buf.append(score_question(wb, sys_, q, job["meta"], judge))
            except Exception as e:  # noqa: BLE001 - not saved, so a resumed run retries it
                emit({"phase": "error", **where, "question_id": q.id, "error": f"{type(e).__name__}: {e}"})
            done += 1
            emit({"phase": "answer", **where, "question_id": q.id, "done": 1})
            stopping = stop()
            if stopping or len(buf) >= FLUSH_ROWS or time.monotonic() - last > FLUSH_SECONDS:
                wb.store.save_results(job["run_id"], buf)
                buf, last = [], time.monotonic()
            if stopping:
                break
        wb.store.save_results(job["run_id"], buf)
        wb.ledger.flush()
        if stop():
            break
    return done


# ------------------------------------------------------------------ worker processes
_W: dict[str, Any] = {}


def _worker_init(queue: Any, stop_event: Any, threads: int) -> None:
    # Torch threads per worker = cores / workers: oversubscribed intra-op threads made a MiniLM query
    # 5-15x slower on a busy 2-core machine; the vectors are identical with 1 or 2 threads.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and sets stop_event
    _W.update(queue=queue, stop=stop_event, threads=threads)


def _worker_job(settings: Settings, conv_json: str, todo_ids: dict[str, list[str]], job: dict) -> int:
    from memcore.serialize import conversation_from_json
    from memcore.workbench import Workbench

    if "wb" not in _W:
        _W["wb"] = Workbench(settings)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(_W["threads"])
    conv = conversation_from_json(conv_json)
    by_id = {q.id: q for q in conv.questions}
    todo = {s: [by_id[i] for i in ids] for s, ids in todo_ids.items()}
    return evaluate_conversation(_W["wb"], conv, todo, job, _W["queue"].put, _W["stop"].is_set)


def run_parallel(settings: Settings, convs: list[Conversation], todo: dict, job: dict, workers: int,
                  on_msg: Callable[[dict], None], should_stop: StopCb) -> None:
    from memcore.serialize import conversation_to_json

    ctx = mp.get_context("spawn")
    queue, stop_event = ctx.Queue(), ctx.Event()
    order = sorted(convs, key=lambda c: -sum(len(v) for v in todo[c.id].values()) * len(c.turns))
    threads = max(1, (os.cpu_count() or 1) // workers)
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init,
                             initargs=(queue, stop_event, threads)) as pool:
        futs = [pool.submit(_worker_job, settings, conversation_to_json(c),
                            {s: [q.id for q in qs] for s, qs in todo[c.id].items()}, job)
                for c in order if any(todo[c.id].values())]
        pending = set(futs)
        while pending:
            finished, pending = wait(pending, timeout=0.2, return_when=FIRST_EXCEPTION)
            while not queue.empty():
                on_msg(queue.get())
            if should_stop():
                stop_event.set()
            for f in finished:
                if isinstance(f.exception(), BrokenProcessPool):
                    raise RuntimeError("a worker process died. If run_eval(workers > 1) is called from a script, "
                                       "call it under `if __name__ == '__main__':` (processes are spawned)") \
                        from f.exception()
                if f.exception() is not None:
                    stop_event.set()
                    raise f.exception()
        while not queue.empty():
            on_msg(queue.get())

