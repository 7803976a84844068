"""Evaluating conversations: ingest, answer, judge and save rows; in this process or in spawned workers.

`workers > 1`: spawned processes take whole conversations, each with its own Workbench on the same
store; concurrent LanceDB commits to the same tables for different conversations are safe (Lance
commits optimistically and rebases/retries; checked with 4 writers, see bench/eval_workers.py).
One conversation with `workers > 1` (`run_split`): this process does the shared work (the turn embedding),
then it and `workers - 1` spawned processes take that conversation's systems one at a time, the
costliest expected first (`expected_cost`); the rows are the same as one process's (assembled from the store).
A spawned process evaluates a system only when its registry holds what this one does for it (`process_needs`: the
system class, its retriever, the metrics, by who registered each); one registered at run time here (a test, a
notebook, a plugin imported by hand) is evaluated in this process instead, never dropped.

How many processes, and which systems a spawned process can take: memcore.eval.processes.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, FIRST_EXCEPTION, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from queue import SimpleQueue
from typing import Any

from memcore.embed import CachedEmbedder, warm
from memcore.eval.content import evidence_texts
from memcore.eval.judge import make_judge
from memcore.eval.metrics import similarity_texts
from memcore.eval.processes import elsewhere, process_needs, starting_workers
from memcore.eval.report import build_row, is_abstention_question
from memcore.llm.ahead import current_depth, set_depth
from memcore.llm.ledger import UsageLedger
from memcore.serialize import conversation_from_json, conversation_to_json
from memcore.settings import Settings
from memcore.systems import get_system
from memcore.types import Answer, Conversation, Question
from memcore.workbench import Workbench

StopCb = Callable[[], bool]
FLUSH_ROWS, FLUSH_SECONDS = 20, 10.0
# With the offline engine a row costs milliseconds to redo, so rows are saved every FLUSH_SECONDS (or every
# FLUSH_ROWS_OFFLINE rows): a batch's answers are embedded together for the similarity (prefetch_similarity), and
# few large batches make a fraction of the one-token-count forward passes of many small ones (conv-26 with every
# system: 474 -> ~250 passes); the vectors do not depend on the batch (memcore.embed). A killed run still loses at
# most FLUSH_SECONDS of answering.
FLUSH_ROWS_OFFLINE = 200


def score_question(wb: Any, system: Any, q: Question, meta: dict, judge: Callable | None, variant: str = "") -> dict:
    """Answer one question with a system (as variant `variant`, default the plain system: its canonical name goes
    on the trace, the row and the ledger rows of the answer and judge calls), judge it, and build its row (raises
    when a call failed for good: such a question has no row, is left out of every score, and a resumed run
    retries it)."""
    ans, verdict = answer_question(system, q, judge, variant)
    return question_row(wb, system, q, ans, verdict, meta, variant)


def answer_question(system: Any, q: Question, judge: Callable | None, variant: str = "") -> tuple[Answer, Any]:
    """(answer, judge verdict or None) of one question (score_question's first half; raises as there)."""
    variant = variant or system.name
    with UsageLedger.variant(variant):
        ans = system.answer(q)
        verdict = judge(system.llm, q, ans.text) if judge is not None else None
    ans.trace.variant = variant
    return ans, verdict


def question_row(wb: Any, system: Any, q: Question, ans: Answer, verdict: Any, meta: dict, variant: str = "") -> dict:
    """The result row of an answered question (score_question's second half)."""
    row_meta = {k: meta[k] for k in ("run_id", "provider", "model", "engine", "embedder", "fingerprint")}
    texts = evidence_texts(system.conv, q.evidence)  # the gold turns' words, for the content measures
    return build_row(q, ans, {**row_meta, "system": system.name, "variant": variant or system.name,
                              "retriever": system.config.retriever}, verdict,
                     embedder=getattr(wb, "embedder", None), turn_texts=texts)  # similarity: the run's embedder


def prefetch_similarity(embedder: Any, answered: list[tuple[Question, Answer]]) -> None:
    """Embed the texts the rows' embedding similarity will ask for (answer and gold answer of each answerable
    question) in one call, into the embedding cache, so each row reads it: MiniLM encodes texts of one token
    count in one forward pass with the same vectors as one pass each (memcore.embed), a fraction of the cost
    of a pass per question. Only with the on-disk cache (CachedEmbedder); a failure is left to the rows."""
    if not isinstance(embedder, CachedEmbedder):
        return
    texts = [t for q, a in answered if not is_abstention_question(q) for t in similarity_texts(a.text or "", q.answer)]
    if texts:
        try:
            embedder.embed(list(dict.fromkeys(texts)))
        except Exception:
            pass


def prefetch_questions(embedder: Any, questions: list[Question]) -> None:
    """Embed, in one call into the embedding cache, the texts every dense system and the rows will ask for one at a
    time: each question's text (a system's query vector, embedded once, then read from the cache by the others)
    and each answerable question's gold answer (the rows' embedding similarity). One text per call is one
    forward pass each; one call groups the texts of one token count into a pass, with the same vectors (MiniLM:
    memcore.embed). conv-26's 199 questions one at a time: 4.7 CPU s; in one call: 1.0 (load 7.7). Only with the
    on-disk cache (CachedEmbedder); a failure is left to the systems and rows, which meet it again."""
    if not isinstance(embedder, CachedEmbedder):
        return
    texts = [q.text for q in questions] + [t for q in questions if not is_abstention_question(q)
                                           for t in similarity_texts("-", q.answer)[1:]]
    if texts:
        try:
            embedder.embed(list(dict.fromkeys(texts)))
        except Exception:
            pass


INGEST_REPORT_S = 0.5  # an ingest's progress messages: at most one per this many seconds, and the last one


def ingest_reporter(emit: Callable[[dict], None], where: dict) -> Callable[[str, int, int], None]:
    """`report(phase, done, total)` for one system's ingest: emits {"phase", "turn", "turns", system, conv_id}
    for turns ingested and turns embedded (phase "embedding turns") as they happen, at most every
    INGEST_REPORT_S seconds per phase (Ray sends each message to an actor), always the last of a phase."""
    last: dict[str, float] = {}

    def report(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last.get(phase, -INGEST_REPORT_S) < INGEST_REPORT_S:
            return
        last[phase] = now
        emit({"phase": phase, **where, "turn": done, "turns": total})

    return report


def shared_work(wb: Any, conv: Conversation, emit: Callable[[dict], None]) -> None:
    """Do what every system of a conversation shares, once, before any of them (Workbench.prepare: load the
    embedding model, embed and store the turns), reporting the turn embedding as "embedding turns" with no
    system, then emit {"phase": "shared", "conv_id", "seconds": {step: s}}: the run's timing charges it to no
    system (it used to land in the first system's ingest). A failure here is left to each system's ingest,
    which meets it again and reports it as that system's error, as before (nothing is stored; rerun resumes)."""
    try:
        seconds = wb.prepare(conv, stage=ingest_reporter(emit, {"system": "", "conv_id": conv.id}))
    except Exception:
        return
    emit({"phase": "shared", "system": "", "conv_id": conv.id, "seconds": seconds})


def evaluate_conversation(wb: Any, conv: Conversation, todo: dict[str, list[Question]], job: dict,
                          emit: Callable[[dict], None], stop: StopCb, *, shared: bool = True) -> int:
    """Ingest each system (resumable), answer and score its pending questions, persist rows in batches.
    The shared work comes first (`shared_work`, and the questions embedded ahead; `shared=False`: another
    process did both, `run_split`); each system's ingest and answering seconds follow its
    questions as {"phase": "timing", system, conv_id, "seconds": {"ingest": s, "answer": s}}.

    With an LLM concurrency above 1 (hosted models), the systems run side by side and each system's
    questions are answered concurrently once its memory is built; every LLM call still goes through
    the one scheduler, so at most `concurrency` requests are in flight. Rows are saved in question
    order: results never depend on the concurrency.
    """
    judge, _ = make_judge(wb, job["judge"])
    names = [n for n in job["systems"] if todo.get(n)]
    lanes = 1 if wb.llm.is_offline else wb.llm.scheduler.concurrency
    save_lock = threading.Lock()
    qpool: ThreadPoolExecutor | None = None

    def one_system(name: str) -> int:
        set_depth(0)  # systems are independent of each other (for the critical-path measure)
        qs = todo[name]  # name: the variant (job["variants"] its system, job["memory"] the memory it answers from)
        system = job.get("variants", {}).get(name, name)
        cfg, where = job["configs"][name], {"system": name, "conv_id": conv.id}
        t0 = time.perf_counter()
        emit({"phase": "ingest", **where})
        report = ingest_reporter(emit, where)
        try:
            with UsageLedger.variant(job.get("memory", {}).get(name, name)):
                rep = wb.ingest(system, conv, should_stop=stop, progress=lambda d, t, ev: report("ingest", d, t),
                                stage=report, **cfg)
        except Exception as e:
            emit({"phase": "error", **where, "error": f"ingest failed: {type(e).__name__}: {e}"})
            return 0
        if rep.error:
            emit({"phase": "error", **where, "error": rep.message, "missing": len(qs)})
            return 0
        if not rep.complete:
            return 0
        sys_ = wb.system(system, conv, **cfg)
        depth = current_depth()  # the questions depend on the built memory
        t1 = time.perf_counter()

        def task(q: Question) -> tuple[Question, Answer, Any] | None:
            set_depth(depth)
            if stop():
                return None
            try:
                return (q, *answer_question(sys_, q, judge, name))
            except Exception as e:
                emit({"phase": "error", **where, "question_id": q.id, "error": f"{type(e).__name__}: {e}"})
                return None
            finally:
                emit({"phase": "answer", **where, "question_id": q.id, "done": 1})

        def save(answered: list[tuple[Question, Answer, Any]]) -> None:
            # the rows of a batch are built together: their similarity embeddings in one call (prefetch_similarity)
            prefetch_similarity(getattr(wb, "embedder", None), [(q, a) for q, a, _ in answered])
            rows = []
            for q, ans, verdict in answered:
                try:
                    rows.append(question_row(wb, sys_, q, ans, verdict, job["meta"], name))
                except Exception as e:
                    emit({"phase": "error", **where, "question_id": q.id, "error": f"{type(e).__name__}: {e}"})
            with save_lock:
                wb.store.save_results(job["run_id"], rows)

        buf: list[tuple[Question, Answer, Any]] = []
        last = time.monotonic()
        done = 0
        flush_rows = FLUSH_ROWS_OFFLINE if wb.llm.is_offline else FLUSH_ROWS
        for item in (qpool or _Inline()).map(task, qs):
            done += 1
            if item is not None:
                buf.append(item)
            if len(buf) >= flush_rows or time.monotonic() - last > FLUSH_SECONDS:
                save(buf)
                buf, last = [], time.monotonic()
        save(buf)
        wb.ledger.flush()
        emit({"phase": "timing", **where, "seconds": {"ingest": t1 - t0, "answer": time.perf_counter() - t1}})
        return done

    if shared and names and not stop():
        shared_work(wb, conv, emit)
        prefetch_questions(getattr(wb, "embedder", None), list({q.id: q for n in names for q in todo[n]}.values()))
    if lanes > 1 and names:  # one pool of question lanes for all systems: at most `lanes` questions at once
        with ThreadPoolExecutor(lanes, thread_name_prefix="memcore-q") as qpool, \
                ThreadPoolExecutor(len(names), thread_name_prefix="memcore-sys") as spool:
            return sum(spool.map(one_system, names))
    qpool = None
    done = 0
    for name in names:
        done += one_system(name)
        if stop():
            break
    return done


class _Inline:
    """A stand-in for a thread pool that maps in this thread, lazily (so a stop takes effect between questions)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @staticmethod
    def map(fn: Callable[[Any], Any], items: list) -> Any:
        return (fn(x) for x in items)


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
