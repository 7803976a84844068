"""The `memcore eval` command: run or resume a benchmark and write results JSON + CSV."""

from __future__ import annotations

import signal
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from memcore.datasets import DatasetWarning
from memcore.errors import ConfigError
from memcore.eval.estimate import FREE, estimate_eval, format_estimate, record_estimate
from memcore.eval.processes import parse_workers
from memcore.eval.report import format_table
from memcore.eval.run_timing import timing_lines
from memcore.eval.runner import run_eval
from memcore.llm import check_endpoint, make_provider
from memcore.llm.redact import redact
from memcore.retrievers import retriever_names
from memcore.settings import Settings
from memcore.store.variants import is_saved_name
from memcore.systems.variants import parse_variant, split_names
from memcore.text.terminal import echo, visible

RETRIEVER_HELP = " | ".join(retriever_names())  # the registered retrievers (memcore.retrievers)
DATASET_HELP = ("auto (detect the format from the file's content) | locomo | longmemeval | jsonl | beam (a chat.json, "
                "a chat folder or a folder of chats) | locomo-plus (stitched into $MEMCORE_LOCOMO_FILE or the "
                "locomo10.json found beside it) | demo")


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _selection(res: dict, categories: str | None, limit: int | None) -> str:
    """The selection that chose no question, in words."""
    conv = ", ".join(res.get("conversations", [])) or "none"
    cats = f"categories {categories}" if categories else "the default categories (all but 5)"
    return f"{len(res.get('conversations', []))} conversation(s): {conv}; {cats}" + \
        (f"; limit {limit}" if limit else "")


@contextmanager
def _dataset_warnings() -> Iterator[None]:
    """Show each DatasetWarning (a --lenient load) as one 'warning:' line on stderr; other warnings as usual."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", category=DatasetWarning)
        try:
            yield
        finally:
            for w in caught:
                if issubclass(w.category, DatasetWarning):
                    echo(f"warning: {w.message}", err=True)
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _dataset_judge_lines(res: dict) -> list[str]:
    """What scored the questions the CORRECT / WRONG judge leaves to others (BEAM rubrics, LoCoMo-Plus), if any."""
    prompts: dict[str, int] = {}
    for s in res.get("systems", {}).values():
        for name, n in ((s.get("overall") or {}).get("judge_prompts") or {}).items():
            prompts[name] = max(prompts.get(name, 0), n)
    out = []
    if prompts.get("offline rubric rule"):
        out.append(f"{prompts['offline rubric rule']} rubric question(s) (BEAM) scored by the offline rubric rule "
                   "(column rubric[offline rule]), not the authors' LLM judge; the judge column leaves them out")
    if prompts.get("not judged offline"):
        out.append(f"{prompts['not judged offline']} LoCoMo-Plus question(s) not judged: no reference answer and no "
                   "offline judge (retrieval scores only)")
    return out


def _reach_endpoint(settings: Settings) -> None:
    """Fail in seconds (ConfigError, exit 2) when the settings' endpoint is unreachable (the bundled local server
    is started here and waited for while busy: its provider's own check)."""
    if settings.llm_check:
        check_endpoint(make_provider(settings))


class _Bar:
    """A progress bar created on the first report (the total is known only then)."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.shown = 0

    def __call__(self, done: int, total: int, info: dict) -> None:
        if self.bar is None:
            self.bar = typer.progressbar(length=max(total, 1), label="eval", show_pos=True)
            self.bar.__enter__()
        turns = f" {info['turn']}/{info['turns']} turns" if info.get("turns") else ""
        self.bar.label = visible(f"{info.get('phase', ''):6s} {info.get('system', '')} {info.get('conv_id', '')}"
                                 f"{turns}"[:64])
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def stop_flag() -> tuple[dict[str, bool], Any]:
    """({"flag": False}, a SIGINT handler): the first Ctrl-C sets the flag (the run stops after the current
    question, saving), the second aborts."""
    stop = {"flag": False}

    def on_sigint(signum: int, frame: Any) -> None:
        if stop["flag"]:
            raise KeyboardInterrupt
        stop["flag"] = True
        echo("\nstopping after the current question (Ctrl-C again to abort)...", err=True)

    return stop, on_sigint


def eval_command(
    dataset: str = typer.Option("auto", "--dataset", "-d", help=DATASET_HELP),
    file: str | None = typer.Option(None, "--file", "-f", help="dataset file (not needed for demo)"),
    conversations: str | None = typer.Option(None, "--conversations", "-c", help="comma-separated ids"),
    systems: str = typer.Option("all", "--systems", "-s", help="comma-separated systems or variants, or 'all': "
                                "SYSTEM, SYSTEM[field=value,...] (a comma inside brackets is not a separator), "
                                "SYSTEM:PRESET (a paper's ablation), @NAME (saved with `memcore variants save`); "
                                "`memcore systems --variants` lists them"),
    categories: str | None = typer.Option(None, "--categories", help="e.g. 1,2,3,4 (default: all but 5)"),
    limit: int | None = typer.Option(None, "--limit", help="at most n questions per conversation"),
    workers: str = typer.Option("auto", "--workers", "-w", help="processes: N, or auto (the usable cores when one "
                                "conversation has several systems to evaluate on the offline engine, else 1; "
                                "$MEMCORE_EVAL_WORKERS sets the default); 1 forces one process. Several "
                                "conversations: each process takes whole ones; one: its systems, this process "
                                "taking some (--engine ray: the CPUs of the local Ray it starts; default all cores)"),
    engine: str = typer.Option("local", "--engine", help="local (this machine) | ray (tasks per conversation, or "
                               "per conversation and system, on a Ray cluster; needs `pip install -r "
                               "requirements-ray.txt`)"),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Ray cluster to join, e.g. HOST:6379 or "
                                           "ray://HOST:10001 (default: start a local Ray, or $RAY_ADDRESS)"),
    retriever: str = typer.Option("dense", "--retriever", "-r", help=RETRIEVER_HELP),
    judge: bool = typer.Option(True, "--judge/--no-judge", help="judge answers (offline: the lexical judge)"),
    judge_runs: int = typer.Option(1, "--judge-runs", min=1, help="judge each answer K times (seeds 1..K); "
                                   "results report the mean and standard deviation over the K runs"),
    lenient: bool = typer.Option(False, "--lenient", help="accept a dataset file with missing sessions, empty "
                                 "turns or dangling evidence (with a warning) instead of refusing it"),
    store: str | None = typer.Option(None, "--store", help="LanceDB path or URI"),
    provider: str | None = typer.Option(None, "--provider", help="offline | openai | local | fake"),
    embedder: str | None = typer.Option(None, "--embedder", help="minilm | openai | hashing"),
    run_id: str | None = typer.Option(None, "--run-id", help="resume or name a run (default: derived)"),
    out: str = typer.Option("results.json", "--out", "-o", help="results JSON; the CSV goes beside it"),
    llm_concurrency: int | None = typer.Option(None, "--llm-concurrency", help="LLM requests in flight at once "
                                               "(default $MEMCORE_LLM_CONCURRENCY, else 8 for HTTP providers)"),
    llm_timeout: float | None = typer.Option(None, "--llm-timeout", help="read timeout per LLM request, seconds"),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="when another process is evaluating the same run: "
                              "wait for it (up to $MEMCORE_LEASE_WAIT_S, default 3600 s, saying so), then answer "
                              "only what it left; or fail at once"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the cost estimate (calls and tokens per stage "
                                 "and system, from an earlier real run of the same eval in the store, else the "
                                 "offline engine's ledger of it, times the price table; the source is named) and "
                                 "exit without calling the provider"),
    estimate: bool = typer.Option(True, "--estimate/--no-estimate", help="with a paid provider, estimate the cost "
                                  "first (an earlier real run of the same eval, else an offline run of it) and store "
                                  "it beside the actual in the results; --no-estimate skips it"),
) -> None:
    """Evaluate memory systems on a dataset: resumable, per-category scores, evidence recall, cost."""
    try:  # a bad name fails here in one line (a saved @NAME is looked up in the store by run_eval)
        names = "all" if systems == "all" else split_names(systems)
        for name in [] if names == "all" else names:
            if not is_saved_name(name):
                parse_variant(name)
        parse_workers(workers)
    except ValueError as err:
        echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None

    changes = {k: v for k, v in {"store_uri": store, "llm_provider": provider, "embedder": embedder,
                                 "llm_concurrency": llm_concurrency, "llm_timeout_s": llm_timeout}.items() if v}
    settings = Settings().with_(**changes)
    stop, on_sigint = stop_flag()

    judge_arg = (judge_runs if judge_runs > 1 else True) if judge else False
    est = None
    if not dry_run and estimate and settings.provider not in FREE:
        _reach_endpoint(settings)  # a dead endpoint fails in seconds, before the offline estimate runs
    if dry_run or (estimate and settings.provider not in FREE):
        try:
            with _dataset_warnings():
                est = estimate_eval(settings, dataset=dataset, file=file, systems="all" if systems == "all"
                                    else _split(systems) or [], conversations=_split(conversations),
                                    categories=_split(categories), limit=limit, retriever=retriever,
                                    judge=judge_arg, lenient=lenient)
        except Exception as e:  # the estimate is advisory: a real run goes on without it, saying why
            if dry_run or isinstance(e, ConfigError):  # a bad argument fails the real run the same way
                raise
            echo(redact(f"warning: no cost estimate ({type(e).__name__}: {e}); the run goes on without one"),
                 err=True)
        if dry_run:
            echo(format_estimate(est))
            return
    started = time.time()
    previous = signal.signal(signal.SIGINT, on_sigint)
    bar = _Bar()
    try:
        with _dataset_warnings():  # a --lenient load's warnings, one line each
            res = run_eval(settings, dataset, file, names,
                           conversations=_split(conversations), categories=_split(categories), limit=limit,
                           workers=workers, retriever=retriever, judge=judge_arg, run_id=run_id, out=out, lenient=lenient,
                           progress=bar, should_stop=lambda: stop["flag"], engine=engine, ray_address=ray_address,
                           wait=wait)
    finally:
        bar.close()
        signal.signal(signal.SIGINT, previous)
    if not res["questions_total"]:
        echo(f"error: no question selected ({_selection(res, categories, limit)}), so nothing was evaluated. "
                   "Fix: choose --categories that the dataset has (see `questions_per_category` of a full run), "
                   "or check --conversations and --limit", err=True)
        raise typer.Exit(2)
    echo(f"run {res['run_id']} | {res['engine']} | embedder {res['embedder']} | judge: {res['judge']['label']}")
    echo(format_table(res))
    for line in _dataset_judge_lines(res):
        echo(line)
    for line in timing_lines(res.get("timing")):
        echo(line)
    if est is not None:
        echo(format_estimate(*record_estimate(res, est, settings, started, out)))
    echo(f"wrote {out} and {Path(out).with_suffix('.csv')} ({res['questions_done']}/"
               f"{res['questions_total']} questions, {res['wall_seconds']:.0f}s)")
    if res.get("questions_missing"):
        echo(f"{res['questions_missing']} question(s) have no result (an LLM call failed or the run stopped); "
                   "they are left out of every score", err=True)
    for err in res.get("errors", [])[:10]:
        echo(redact(f"error: {err['system']} on {err['conv_id']} {err.get('question_id', '')}: {err['error']}"),
                   err=True)
    if not res["complete"]:
        echo("incomplete: run the same command again to resume", err=True)
        raise typer.Exit(3)
