"""Benchmark runner: ingest, answer, judge, score and persist every question; resumable; parallel.

    results = run_eval(Settings(), "locomo", "locomo8.json", ["naive_rag", "com"], out="results.json")

Rows are saved to the store (`store.save_results`) in small batches as questions finish: a stopped
or killed run resumes and never redoes a saved question. The run id hashes the dataset file, systems,
configs, retriever, embedder, provider/model/engine and the judge switch; stored rows from another
provider are never mixed in (refused). "Correct" = the judge's label when the judge ran, else
official F1 >= 0.5 (the offline engine's judge is the lexical judge, labelled as such).
`workers > 1`: spawned processes take whole conversations, each with its own Workbench on the same
store; concurrent LanceDB commits to the same tables for different conversations are safe (Lance
commits optimistically and rebases/retries; checked with 4 writers, see bench/eval_workers.py).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from memcore.errors import ConfigError
from memcore.eval.cost import construction_usage
from memcore.eval.report import CORRECT_RULE, aggregate, build_row, write_results
from memcore.settings import Settings
from memcore.types import Conversation, Question

ProgressCb = Callable[[int, int, dict], None]
StopCb = Callable[[], bool]
DATASETS = ("locomo", "longmemeval", "jsonl", "demo", "auto")
FLUSH_ROWS, FLUSH_SECONDS = 20, 10.0


def load_conversations(dataset: str, file: str | Path | None) -> tuple[list[Conversation], str, str, str]:
    """(conversations, format, file path, sha256 of the file) for a dataset name and file."""
    from memcore.datasets import DEMO_PATH, detect_format, load_dataset, load_demo

    if dataset not in DATASETS:
        raise ConfigError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    if dataset == "demo":
        return [load_demo()], "demo", str(DEMO_PATH), _sha(DEMO_PATH)
    if not file:
        raise ConfigError(f"--dataset {dataset} needs --file PATH (or use --dataset demo)")
    fmt = detect_format(file) if dataset == "auto" else dataset
    return load_dataset(file, fmt), fmt, str(file), _sha(file)


def _sha(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def select_questions(conv: Conversation, categories: list | None, limit: int | None) -> list[Question]:
    """Questions in the chosen categories (default: all but LoCoMo category 5), the first `limit` of them."""
    wanted = {str(c) for c in categories} if categories else None
    qs = [q for q in conv.questions if (str(q.category) in wanted if wanted else str(q.category) != "5")]
    return qs[:limit] if limit else qs


def make_run_id(fingerprint: dict) -> str:
    """The deterministic run id of a fingerprint (dataset hash, systems, configs, provider, ...)."""
    blob = json.dumps(fingerprint, sort_keys=True, default=str)
    return "eval-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


def _existing(store: Any, run_id: str) -> tuple[set[tuple[str, str]], dict | None]:
    """(system, question_id) pairs already stored for the run, and one stored row (for checks)."""
    if "results" not in store.table_names():
        return set(), None
    from memcore.store import sql_str

    t, where = store.table("results"), f"run_id = {sql_str(run_id)}"
    df = t.search().where(where).select(["system", "question_id"]).limit(None).to_pandas()
    if df.empty:
        return set(), None
    one = t.search().where(where).select(["payload"]).limit(1).to_pandas()["payload"].iloc[0]
    return set(zip(df["system"], df["question_id"], strict=True)), json.loads(one)


def check_compatible(run_id: str, old: dict | None, meta: dict) -> None:
    """Refuse to resume a run whose stored rows came from another provider or setup."""
    if old is None:
        return
    was = {k: old.get(k) for k in ("provider", "model", "engine")}
    now = {k: meta[k] for k in ("provider", "model", "engine")}
    if was != now:
        raise ConfigError(
            f"run {run_id} holds results from provider {was['provider']} / model {was['model']} "
            f"({was['engine']}), but this run uses {now['provider']} / {now['model']} ({now['engine']}); results "
            "never mix providers. Fix: rerun with that provider, or drop --run-id to start a separate run")
    if old.get("fingerprint") != meta["fingerprint"]:
        raise ConfigError(f"run {run_id} was made with other settings (dataset file, systems, retriever, "
                          "embedder, configs or judge). Fix: use the same settings, or drop --run-id")


def run_meta(wb: Any, settings: Settings) -> dict[str, Any]:
    """Run-level fields copied into every row: provider, model, engine label, embedder, store, version."""
    from memcore import __version__

    return {"provider": settings.provider, "provider_name": wb.llm.provider.name, "model": wb.llm.provider.model,
            "engine": wb.provider_label, "embedder": wb.embedder.name, "store": wb.settings.store_uri,
            "memcore_version": __version__}


LEXICAL_JUDGE = ("lexical judge (offline engine, not an LLM): official F1 >= 0.5 or every gold part contained "
                 "in the answer; abstention rule for category 5")


def make_judge(wb: Any, enabled: bool) -> tuple[Callable[[Any, Question, str], dict] | None, dict[str, Any]]:
    """(judge function (llm, question, prediction) -> verdict dict, or None; {"enabled", "kind", "label"})."""
    from memcore.eval.metrics import lexical_judge
    from memcore.llm.ledger import by_stage
    from memcore.llm.roles import load_all as load_roles

    if not enabled:
        return None, {"enabled": False, "kind": None, "label": "no judge (--no-judge)"}
    name, offline = wb.llm.provider.name, wb.llm.is_offline
    if "judge" not in load_roles():
        if not offline and name != "fake":
            raise ConfigError("the 'judge' LLM role is not registered (memcore/llm/roles/judge.py). "
                              "Fix: rerun with --no-judge, or use --provider offline (lexical judge)")

        def lexical(llm: Any, q: Question, pred: str) -> dict:
            ok = lexical_judge(pred, q.answer, 5 if q.metadata.get("abstention") else q.category)
            return {"correct": ok, "label": "CORRECT" if ok else "WRONG", "usage": None, "error": ""}
        return lexical, {"enabled": True, "kind": "lexical", "label": LEXICAL_JUDGE}

    def llm_judge(llm: Any, q: Question, pred: str) -> dict:
        mark = llm.ledger.mark()
        qtype = "abstention" if q.metadata.get("abstention") else q.metadata.get("question_type", "")
        res = llm.run("judge", {"question": q.text, "gold": q.answer, "prediction": pred,
                                "category": q.category, "question_type": qtype}, stage="judge")
        usage = by_stage(llm.ledger.since(mark)).get("judge")
        label = str(getattr(res.output, "label", "")).upper()
        ok = None if res.error or label not in ("CORRECT", "WRONG") else label == "CORRECT"
        return {"correct": ok, "label": label, "reason": getattr(res.output, "reason", ""),
                "usage": dict(vars(usage)) if usage else None,
                "error": res.error or ("" if ok is not None else f"unreadable judge label {label!r}")}
    info = {"enabled": True, "kind": "lexical", "label": LEXICAL_JUDGE} if offline else \
        {"enabled": True, "kind": "fake", "label": "fake judge (scripted test replies)"} if name == "fake" else \
        {"enabled": True, "kind": "llm", "label": f"LLM judge: {wb.llm.provider.model} ({wb.provider_label})"}
    return llm_judge, info


def score_question(wb: Any, system: Any, q: Question, meta: dict, judge: Callable | None) -> dict:
    """Answer one question with a system, judge it, and build its row."""
    ans = system.answer(q)
    verdict = judge(system.llm, q, ans.text) if judge is not None else None
    row_meta = {k: meta[k] for k in ("run_id", "provider", "model", "engine", "embedder", "fingerprint")}
    return build_row(q, ans, {**row_meta, "system": system.name, "retriever": system.config.retriever}, verdict)


def load_rows(store: Any, run_id: str, systems: list[str]) -> list[dict]:
    """Stored rows of a run without their traces (streamed in batches to bound memory)."""
    from memcore.store import sql_in, sql_str

    if "results" not in store.table_names():
        return []
    q = store.table("results").search().where(f"run_id = {sql_str(run_id)} AND system IN {sql_in(systems)}")
    out = []
    for batch in q.select(["payload"]).limit(None).to_batches(256):
        for payload in batch.column("payload").to_pylist():
            row = json.loads(payload)
            row.pop("trace", None)
            out.append(row)
    return out


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


def _run_parallel(settings: Settings, convs: list[Conversation], todo: dict, job: dict, workers: int,
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


# ----------------------------------------------------------------------- the API
def run_eval(settings: Settings, dataset: str, file: str | Path | None = None, systems: list[str] | str = "all",
             *, conversations: list[str] | None = None, categories: list | None = None, limit: int | None = None,
             workers: int = 1, retriever: str = "dense", judge: bool = True, run_id: str | None = None,
             out: str | Path | None = None, progress: ProgressCb | None = None, should_stop: StopCb | None = None,
             configs: dict[str, dict] | None = None, workbench: Any = None) -> dict[str, Any]:
    """Run (or resume) an evaluation and return the results dict; also written to `out` (+ .csv) if given.

    `progress(done, total, info)` is called per answered question (info: phase, system, conv_id);
    `should_stop()` ends the run early after saving (resume later with the same arguments).
    """
    from memcore.store import LanceStore
    from memcore.systems import load_all, make_config
    from memcore.systems.base import config_to_dict
    from memcore.workbench import Workbench

    t0, created = time.perf_counter(), time.time()
    stop = should_stop or (lambda: False)
    convs, fmt, path, sha = load_conversations(dataset, file)
    if conversations:
        have = {c.id: c for c in convs}
        missing = [c for c in conversations if c not in have]
        if missing:
            raise ConfigError(f"no conversation(s) {missing} in {path}; have: {', '.join(have)}")
        convs = [have[c] for c in conversations]
    names = list(load_all()) if systems == "all" else list(systems)
    unknown = [n for n in names if n not in load_all()]
    if unknown:
        raise ConfigError(f"unknown system(s) {unknown}; available: {', '.join(load_all())}")
    cfgs = {n: {"retriever": retriever, **(configs or {}).get(n, {})} for n in names}
    full_cfg = {n: config_to_dict(make_config(n, **c)) for n, c in cfgs.items()}
    wb = workbench or Workbench(settings)
    meta = run_meta(wb, settings)
    _, jinfo = make_judge(wb, judge)  # fails early when the judge cannot run
    fingerprint = {"dataset_sha256": sha, "format": fmt, "systems": names, "configs": full_cfg,
                   "retriever": retriever, "embedder": meta["embedder"], "judge": judge,
                   **{k: meta[k] for k in ("provider", "model", "engine")}}
    meta["fingerprint"] = make_run_id(fingerprint)
    run_id = run_id or make_run_id(fingerprint)
    meta["run_id"] = run_id
    have, old = _existing(wb.store, run_id)
    check_compatible(run_id, old, meta)
    selected = {c.id: select_questions(c, categories, limit) for c in convs}
    todo = {c.id: {n: [q for q in selected[c.id] if (n, q.id) not in have] for n in names} for c in convs}
    total = sum(len(qs) for t in todo.values() for qs in t.values())
    job = {"systems": names, "configs": cfgs, "meta": meta, "run_id": run_id, "judge": judge}
    store = wb.store
    count, errors = 0, []

    def on_msg(msg: dict) -> None:
        nonlocal count
        count += msg.get("done", 0)
        if msg.get("phase") == "error" and len(errors) < 100:
            errors.append(msg)  # the first 100; unanswered questions also show as complete = False
        if progress is not None:
            progress(count, total, msg)

    if workers > 1 and len([c for c in convs if any(todo[c.id].values())]) > 1:
        _run_parallel(settings, convs, todo, job, workers, on_msg, stop)
        # a fresh handle: this process's open tables do not see versions other processes committed
        store = LanceStore(wb.store.uri, dim=wb.store.dim)
    else:
        for c in convs:
            if stop():
                break
            evaluate_conversation(wb, c, todo[c.id], job, on_msg, stop)
    results = assemble(store, run_id, convs, selected, names, meta, jinfo, fingerprint, path, dataset)
    results.update(created=created, wall_seconds=round(time.perf_counter() - t0, 3),
                   finished=time.time(), configs=full_cfg, limit=limit, errors=errors)
    if out:
        write_results(results, out)
    return results


def assemble(store: Any, run_id: str, convs: list[Conversation], selected: dict[str, list[Question]],
             names: list[str], meta: dict, judge_info: dict, fingerprint: dict, path: str,
             dataset: str) -> dict[str, Any]:
    """The results dict of a run from its stored rows (only the selected questions)."""
    wanted = {(n, q.id) for n in names for qs in selected.values() for q in qs}
    rows = [r for r in load_rows(store, run_id, names) if (r["system"], r["question_id"]) in wanted]
    conv_ids = [c.id for c in convs]
    construction = {n: construction_usage(store, n, conv_ids, meta["provider_name"], meta["model"])
                    for n in names}
    summaries = aggregate(rows, construction, judge=judge_info["enabled"], model=meta["model"],
                          provider=meta["provider"], systems=names)
    cats = sorted({str(q.category) for qs in selected.values() for q in qs}, key=lambda s: (len(s), s))
    return {
        "run_id": run_id, "complete": len(rows) == len(wanted), "questions_total": len(wanted),
        "questions_done": len(rows), "memcore_version": meta["memcore_version"],
        "provider": meta["provider"], "model": meta["model"], "engine": meta["engine"],
        "embedder": meta["embedder"], "store": meta["store"], "retriever": fingerprint["retriever"],
        "dataset": {"name": dataset, "format": fingerprint["format"], "file": path,
                    "sha256": fingerprint["dataset_sha256"]},
        "conversations": conv_ids, "categories": cats,
        "questions_per_category": {c: sum(str(q.category) == c for qs in selected.values() for q in qs)
                                   for c in cats},
        "judge": judge_info, "correct_rule": CORRECT_RULE, "systems": summaries,
    }
