"""Evaluating one conversation in this process: build each system's memory (the shared turn embedding first), answer
and judge its questions, save the rows in batches. Spawned worker processes (memcore.eval.workers) and Ray tasks
(memcore.eval.ray_engine) call the same `evaluate_conversation`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memcore.embed import CachedEmbedder
from memcore.eval.content import evidence_texts
from memcore.eval.judge import make_judge
from memcore.eval.metrics import similarity_texts
from memcore.eval.report import build_row, is_abstention_question
from memcore.llm.ahead import current_depth, set_depth
from memcore.llm.ledger import UsageLedger
from memcore.types import Answer, Conversation, Question

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
