"""The `memcore sweep` command: one system over a grid of settings (and its ablation presets), resumable."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import typer

from memcore.cli.eval import DATASET_HELP, _dataset_warnings, _split, stop_flag
from memcore.errors import ConfigError
from memcore.eval.processes import parse_workers
from memcore.eval.sweep import plan_sweep, plan_text, run_sweep
from memcore.eval.sweep_report import format_sweep, memory_line
from memcore.llm.redact import redact
from memcore.settings import Settings
from memcore.text.terminal import echo

MAX_POINTS_ENV = "MEMCORE_SWEEP_MAX_POINTS"
DEFAULT_MAX_POINTS = 50  # a sweep of more points needs --yes (or a larger --max-points)


def _env_max_points() -> int:
    raw = os.environ.get(MAX_POINTS_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_POINTS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"${MAX_POINTS_ENV}={raw!r} is not a whole number >= 1. Fix: set it to one, or unset it")
    return int(raw)


def sweep_command(
    system: str = typer.Argument(..., help="the registered system to sweep (memcore systems lists them)"),
    grid: list[str] = typer.Option([], "--grid", "-g", help="FIELD=v1,v2,... (repeat for more fields; the "
                                   "points are the product), e.g. --grid beta=0.3,0.5,0.8 --grid max_len=4,8"),
    retriever: str | None = typer.Option(None, "--retriever", "-r", help="retrievers to sweep, e.g. dense,hybrid "
                                         "(default: each point's, dense)"),
    sweep: str | None = typer.Option(None, "--sweep", help="a paper's registered sweep of the system (its grid; "
                                     "`memcore systems --variants` lists them), e.g. k"),
    presets: str | None = typer.Option(None, "--presets", help="'ablations' (every registered preset of the "
                                       "system) or preset names, run beside the full system"),
    dataset: str = typer.Option("auto", "--dataset", "-d", help=DATASET_HELP),
    file: str | None = typer.Option(None, "--file", "-f", help="dataset file (not needed for demo)"),
    conversations: str | None = typer.Option(None, "--conversations", "-c", help="comma-separated ids"),
    categories: str | None = typer.Option(None, "--categories", help="e.g. 1,2,3,4 (default: all but 5)"),
    limit: int | None = typer.Option(None, "--limit", help="at most n questions per conversation"),
    workers: str = typer.Option("auto", "--workers", "-w", help="processes: N, or auto (the usable cores when one "
                                "conversation has several systems to evaluate on the offline engine, else 1; "
                                "$MEMCORE_EVAL_WORKERS sets the default); 1 forces one process. Several "
                                "conversations: each process takes whole ones; one: its systems, this process "
                                "taking some (--engine ray: the CPUs of the local Ray it starts)"),
    engine: str = typer.Option("local", "--engine", help="local | ray (as memcore eval)"),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Ray cluster to join (as memcore eval)"),
    judge: bool = typer.Option(True, "--judge/--no-judge", help="judge answers (offline: the lexical judge)"),
    judge_runs: int = typer.Option(1, "--judge-runs", min=1, help="judge each answer K times (seeds 1..K)"),
    lenient: bool = typer.Option(False, "--lenient", help="accept a dataset file with missing sessions, empty "
                                 "turns or dangling evidence (with a warning) instead of refusing it"),
    store: str | None = typer.Option(None, "--store", help="LanceDB path or URI"),
    provider: str | None = typer.Option(None, "--provider", help="offline | openai | local | fake"),
    embedder: str | None = typer.Option(None, "--embedder", help="minilm | openai | hashing"),
    out: str = typer.Option("sweep.json", "--out", "-o", help="sweep JSON; the CSV goes beside it"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the points and the estimate of the work, then "
                                 "stop: nothing is run or written"),
    yes: bool = typer.Option(False, "--yes", "-y", help="run a sweep of more than --max-points points"),
    max_points: int | None = typer.Option(None, "--max-points", min=1,
                                   help=f"the most points run without --yes (default ${MAX_POINTS_ENV}, else "
                                        f"{DEFAULT_MAX_POINTS})"),
) -> None:
    """Evaluate one system over the product of settings: memory built once per construction point, shared by
    every query-time point; resumable (rerun the same command); a table of the metrics per point with n."""
    parse_workers(workers)  # a bad --workers fails first (ConfigError: exit 2)
    with _dataset_warnings():  # the plan first: a grid of 1,001 points is counted before anything runs
        plan = plan_sweep(system, grid, retrievers=_split(retriever), presets=presets, sweep=sweep, dataset=dataset,
                          file=file, conversations=_split(conversations), categories=_split(categories), limit=limit,
                          lenient=lenient)
    echo(plan_text(plan), err=True)
    if dry_run:
        echo("\n".join(plan["points"]))
        echo("dry run: nothing was run or written", err=True)
        return
    max_points = max_points or _env_max_points()
    if plan["points_total"] > max_points and not yes:
        raise ConfigError(f"the sweep has {plan['points_total']} points, more than --max-points {max_points}. Fix: "
                          "narrow --grid, or pass --yes to run them all (--dry-run lists them)")

    changes = {k: v for k, v in {"store_uri": store, "llm_provider": provider, "embedder": embedder}.items() if v}
    settings = Settings().with_(**changes)
    stop, on_sigint = stop_flag()

    def on_point(i: int, n: int, info: dict) -> None:
        if info["phase"] == "point":
            how = f"builds memory of {len(info['builds'])} conversation(s)" if info["builds"] else "memory stored"
            echo(f"point {i + 1}/{n} {info['point']} ({how})", err=True)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        with _dataset_warnings():
            res = run_sweep(settings, system, grid, retrievers=_split(retriever), presets=presets, sweep=sweep, dataset=dataset,
                            file=file, conversations=_split(conversations), categories=_split(categories),
                            limit=limit, judge=(judge_runs if judge_runs > 1 else True) if judge else False,
                            workers=workers, engine=engine, ray_address=ray_address, out=out, progress=on_point,
                            should_stop=lambda: stop["flag"], lenient=lenient)
    finally:
        signal.signal(signal.SIGINT, previous)
    if res["points"] and not any(p["questions_total"] for p in res["points"]):
        echo("error: no question selected, so nothing was evaluated. Fix: choose --categories that the dataset has, "
             "or check --conversations and --limit", err=True)
        raise typer.Exit(2)
    echo(f"sweep {res['sweep_id']} | {system} | {res['points_total']} points | {res.get('engine')} | "
         f"judge: {(res.get('judge') or {}).get('label', 'off')}")
    if res.get("paper_sweep"):
        echo(f"paper sweep {res['paper_sweep']['name']}: {res['paper_sweep']['source']}")
    echo(format_sweep(res))
    echo(memory_line(res))
    echo(f"wrote {out} and {Path(out).with_suffix('.csv')} ({res['points_done']}/{res['points_total']} points, "
         f"{res['wall_seconds']:.0f}s)")
    for p in res["points"]:
        for err in p.get("errors", [])[:3]:
            echo(redact(f"error: {p['name']} on {err['conv_id']} {err.get('question_id', '')}: {err['error']}"),
                 err=True)
    if not res["complete"]:
        echo("incomplete: run the same command again to resume", err=True)
        raise typer.Exit(3)
