"""Benchmark runner: ingest, answer, judge, score and persist every question; resumable; parallel.

    results = run_eval(Settings(), "locomo", "locomo8.json", ["naive_rag", "<system>"], out="results.json")

Rows are saved to the store (`store.save_results`) in small batches as questions finish: a stopped
or killed run resumes and never redoes a saved question. The run id hashes the dataset file, systems,
configs, retriever, embedder, provider/model/engine and the judge switch; stored rows from another
provider are never mixed in (refused). "Correct" = the judge's label when the judge ran, else
official F1 >= 0.5 (the offline engine's judge is the lexical judge, labelled as such).
The steps live beside: `runs` (run ids, resume checks, assembly from stored rows), `judge`,
`workers` (per-conversation evaluation, in-process or in spawned worker processes).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcore.datasets import DEMO_PATH, dataset_files, detect_format, load_dataset, load_demo
from memcore.errors import ConfigError
from memcore.eval.evaluate import evaluate_conversation, score_question
from memcore.eval.judge import LEXICAL_JUDGE, make_judge
from memcore.eval.limits import count_does_not_fit, run_limits
from memcore.eval.processes import AUTO, choose_workers, parse_workers
from memcore.eval.ray_engine import import_ray, run_ray
from memcore.eval.report import row_order, write_results
from memcore.eval.run_record import DONE, INCOMPLETE, STOPPED, RunRecorder, selection_payload
from memcore.eval.run_timing import RunTiming
from memcore.eval.runs import (
    assemble,
    check_compatible,
    existing_rows,
    load_rows,
    make_run_id,
    run_fingerprint,
    run_meta,
)
from memcore.eval.workers import run_parallel, run_split
from memcore.llm import check_endpoint
from memcore.settings import Settings
from memcore.store.variants import is_saved_name, saved_variant
from memcore.systems import load_all
from memcore.systems.base import config_to_dict
from memcore.systems.variants import Variant, parse_variant
from memcore.types import Conversation, Question
from memcore.workbench import Workbench

__all__ = ["DATASETS", "ENGINES", "LEXICAL_JUDGE", "assemble", "check_compatible", "evaluate_conversation",
           "load_conversations", "load_rows", "make_judge", "make_run_id", "resolve_variants", "run_eval", "run_meta",
           "score_question", "select_questions"]

ProgressCb = Callable[[int, int, dict], None]
StopCb = Callable[[], bool]
_SETS_RETRIEVER = re.compile(r"[\[,]\s*retriever\s*=")
DATASETS = ("auto", "locomo", "longmemeval", "jsonl", "beam", "locomo-plus", "demo")
ENGINES = ("local", "ray")


def load_conversations(dataset: str, file: str | Path | None,
                       lenient: bool = False) -> tuple[list[Conversation], str, str, str]:
    """(conversations, format, file path, sha256 of the file) for a dataset name and file; `lenient`
    accepts missing sessions, empty turns and dangling evidence with a warning (memcore.datasets.checks)."""
    if dataset not in DATASETS:
        raise ConfigError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    if dataset == "demo":
        return [load_demo()], "demo", str(DEMO_PATH), _sha(DEMO_PATH)
    if not file:
        raise ConfigError(f"--dataset {dataset} needs --file PATH (or use --dataset demo)")
    fmt = detect_format(file) if dataset == "auto" else dataset
    convs = load_dataset(file, fmt, lenient=lenient, detected=dataset == "auto")
    return convs, fmt, str(file), _sha(*dataset_files(file, fmt))


def _sha(*paths: str | Path) -> str:
    """sha256 of a file's bytes; of several files (a BEAM folder, LoCoMo-Plus and its LoCoMo file), of each
    file's sha256 in order."""
    digests = []
    for path in paths:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda f=f: f.read(1 << 20), b""):
                h.update(chunk)
        digests.append(h.hexdigest())
    return digests[0] if len(digests) == 1 else hashlib.sha256("".join(digests).encode()).hexdigest()


def select_questions(conv: Conversation, categories: list | None, limit: int | None) -> list[Question]:
    """Questions in the chosen categories (default: all but LoCoMo category 5), the first `limit` of them."""
    wanted = {str(c) for c in categories} if categories else None
    qs = [q for q in conv.questions if (str(q.category) in wanted if wanted else str(q.category) != "5")]
    return qs[:limit] if limit else qs



def resolve_variants(names: list[str], retriever: str = "dense", configs: dict[str, dict] | None = None,
                     saved: Callable[[str], str] | None = None) -> dict[str, Variant]:
    """The variants of a run, keyed by the canonical name of each name given (in order; `@NAME` looked up with
    `saved`): the result set's name. Each value is what runs under that name: the variant with the run's
    `retriever` when it sets none, and `configs[name]` on top (run-level settings: the result set keeps the
    name given, as before variants; results["retriever"] and results["configs"] say what ran).
    ConfigError (one line, from the variant parser) for a bad name; two names for the same variant too."""
    out: dict[str, Variant] = {}
    for given in names:
        try:
            if is_saved_name(given):
                if saved is None:
                    raise ValueError(f"{given}: a saved variant needs a store to look it up in")
                v = parse_variant(saved(given))
            else:
                v = parse_variant(given)
            own = "retriever" in v.settings or _SETS_RETRIEVER.search(given)  # `x[retriever=dense]` sets it too
            runs = v.combined({**({} if own else {"retriever": retriever}),
                               **(configs or {}).get(given, {})})
        except ValueError as err:
            raise ConfigError(str(err)) from None
        if v.name in out:
            raise ConfigError(f"{given}: the same variant as another name of the run ({v.name}); give it once")
        out[v.name] = runs
    return out


def run_eval(settings: Settings, dataset: str, file: str | Path | None = None, systems: list[str] | str = "all",
             *, conversations: list[str] | None = None, categories: list | None = None, limit: int | None = None,
             workers: int | str = AUTO, retriever: str = "dense", judge: bool | int = True, run_id: str | None = None,
             out: str | Path | None = None, progress: ProgressCb | None = None, should_stop: StopCb | None = None,
             lenient: bool = False,
             configs: dict[str, dict] | None = None, workbench: Any = None, engine: str = "local",
             ray_address: str | None = None, wait: bool = True) -> dict[str, Any]:
    """Run (or resume) an evaluation and return the results dict; also written to `out` (+ .csv) if given.

    `systems`: names of systems or variants (`naive_rag`, `naive_rag[k=5]`, `SYSTEM:PRESET`, a saved `@NAME`; see
    resolve_variants); results, rows and the ledger are keyed by the canonical name given (`results["systems"]`,
    each naming its `system` and `variant`; `results["configs"]` the full config each ran with).

    `progress(done, total, info)` is called per answered question (info: phase, system, conv_id);
    `should_stop()` ends the run early after saving (resume later with the same arguments).
    `judge`: False, True (one judge run) or K (K runs: mean and std, memcore.eval.judge); `lenient`: load
    a dataset file with format problems (missing sessions, empty turns, dangling evidence) with a warning.
    `engine`: "local" (this process, or `workers` processes: spawned ones taking whole conversations, or, for one
    conversation, this one and `workers - 1` spawned ones taking its systems: memcore.eval.workers.run_split) or
    "ray" (Ray tasks per
    conversation, or per conversation and system (memcore.eval.ray_engine), on the cluster at `ray_address`, default a local Ray with `workers`
    CPUs when workers > 1, else all cores); both give the same results. `workers` "auto" (the default):
    memcore.eval.processes.choose_workers (the usable cores for one conversation's systems on the offline engine,
    else 1); `results["timing"]["workers"]` records the processes, why, and where each system ran.
    One process writes a run at a time (a run lease): `wait` waits for another process evaluating the same run
    (up to MEMCORE_LEASE_WAIT_S, saying so) and then answers only what it left; `wait=False` raises MemoryBusy.
    """
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    workers = parse_workers(workers)  # a bad value fails before any work
    if engine == "ray":
        import_ray()  # fails in a second, naming the install command, when Ray is missing
    t0, created = time.perf_counter(), time.time()
    stop = should_stop or (lambda: False)
    convs, fmt, path, sha = load_conversations(dataset, file, lenient)
    if conversations:
        have = {c.id: c for c in convs}
        missing = [c for c in conversations if c not in have]
        if missing:
            raise ConfigError(f"no conversation(s) {missing} in {path}; have: {', '.join(have)}")
        convs = [have[c] for c in conversations]
    given = list(load_all()) if systems == "all" else list(systems)
    saved = any(is_saved_name(n) for n in given)
    variants = {} if saved else resolve_variants(given, retriever, configs)  # bad names fail before any work
    wb = workbench or Workbench(settings)
    if saved:
        variants = resolve_variants(given, retriever, configs, lambda n: saved_variant(wb.store, n))
    names = list(variants)  # canonical variant names: the result sets (a plain system's name for itself)
    cfgs = {n: dict(v.settings) for n, v in variants.items()}
    full_cfg = {n: config_to_dict(v.config()) for n, v in variants.items()}
    for c in convs:  # an id stored with other turns is refused before anything runs (StoreError, as in Workbench.load)
        wb.store.save_conversation(c)
    if settings.llm_check:
        check_endpoint(wb.llm)  # a dead endpoint fails here, in seconds, not question by question
    meta = run_meta(wb, settings)
    _, jinfo = make_judge(wb, judge)  # fails early when the judge cannot run
    fingerprint = run_fingerprint(meta, sha, fmt, names, full_cfg, retriever, judge)
    meta["fingerprint"] = make_run_id(fingerprint)
    meta["spaces"] = {n: wb.space(variants[n].system, convs[0], **cfgs[n]) for n in names} if convs else {}  # for the footprint
    run_id = run_id or make_run_id(fingerprint)
    meta["run_id"] = run_id
    # one writer per run: a second `memcore eval` of this run waits here (or fails at once with wait=False) and
    # then reads what the first stored, so no question is answered twice (memcore.store.lease, key run|<run_id>)
    with wb.store.run_lease(run_id, wait=wait):
        have, old = existing_rows(wb.store, run_id)
        check_compatible(run_id, old, meta)
        selected = {c.id: select_questions(c, categories, limit) for c in convs}
        todo = {c.id: {n: [q for q in selected[c.id] if (n, q.id) not in have] for n in names} for c in convs}
        total = sum(len(qs) for t in todo.values() for qs in t.values())
        busy = [c for c in convs if any(todo[c.id].values())]
        offline = meta["provider"] == meta["provider_name"] == "offline"  # the rules, not a fake or hosted model
        workers, why = choose_workers(workers, offline=offline, engine=engine,
                                      systems=max((sum(bool(qs) for qs in todo[c.id].values()) for c in busy), default=0),
                                      conversations=len(busy))
        placed: dict[str, Any] = {"processes": workers, "why": why}
        job = {"systems": names, "configs": cfgs, "meta": meta, "run_id": run_id, "judge": judge,
               "variants": {n: v.system for n, v in variants.items()},
               "memory": {n: v.memory_name for n, v in variants.items()}}
        count, errors, timing = 0, [], RunTiming()
        limits = run_limits(wb, convs)  # long turns, the context window; questions that do not fit (counted below)
        n_wanted = len(names) * sum(len(qs) for qs in selected.values())
        recorder = RunRecorder(wb.store, {  # the run's record: the app lists it and follows its progress
            "run_id": run_id, "done": n_wanted - total, "total": n_wanted, "dataset": f"{dataset} {path}",
            "engine": engine if engine == "ray" else f"local x{workers}", "systems": names,
            "payload": {"meta": meta, "judge": jinfo, "fingerprint": fingerprint, "path": path, "dataset": dataset,
                        "selected": selection_payload(selected), "limits": limits}})

        def on_msg(msg: dict) -> None:
            nonlocal count
            count += msg.get("done", 0)
            recorder.done = n_wanted - total + count
            count_does_not_fit(limits, msg)
            if msg.get("phase") == "error" and len(errors) < 100:
                errors.append(msg)  # the first 100; unanswered questions also show as complete = False
            timing.add(msg)
            if progress is not None:
                progress(count, total, msg)

        with recorder:  # an exception escaping the engines marks the record failed
            if engine == "ray":
                run_ray(settings, convs, todo, job, on_msg, stop, ray_address, workers if workers > 1 else None)
            elif workers > 1 and len(busy) > 1:
                placed.update(run_parallel(settings, convs, todo, job, workers, on_msg, stop, wb))  # rows: the store's
            elif workers > 1 and busy and sum(bool(qs) for qs in todo[busy[0].id].values()) > 1:
                # its systems split; where each ran is recorded (a system registered only here ran here)
                placed.update(run_split(settings, wb, busy[0], todo[busy[0].id], job, workers, on_msg, stop))
            else:
                if workers > 1:  # nothing to split: the run says so
                    placed.update(processes=1, why=f"{why}; one system to evaluate: one process")
                for c in convs:
                    if stop():
                        break
                    evaluate_conversation(wb, c, todo[c.id], job, on_msg, stop)
            results = assemble(wb.store, run_id, convs, selected, names, meta, jinfo, fingerprint, path, dataset)
            recorder.done = results["questions_done"]
            recorder.finish(DONE if results["complete"] else STOPPED if stop() else INCOMPLETE,
                            "" if results["complete"] else f"{results['questions_missing']} question(s) without a result")
        results.update(created=created, wall_seconds=round(time.perf_counter() - t0, 3),
                       timing={**timing.as_dict(), "workers": placed},
                       finished=time.time(), configs=full_cfg, limit=limit, errors=sorted(errors, key=row_order),
                       limits=limits)
        if out:
            write_results(results, out)
        return results

