"""`memcore compare RUN_A RUN_B`: two evaluation runs side by side (memcore.eval.compare), as text, JSON, HTML.

A run is a run id in the store (rows read without traces; the flipped questions' traces fetched one
by one) or a results JSON that embeds its per-question `rows` (the Export page's). Reading only: the
store is opened read-only (a missing store or table is an error, never created). Exit code 0, or 2 with a one-line error naming the fix when a run
is missing or has no rows; a rerun with the fixed argument repeats the same read.
"""

from __future__ import annotations

import typer

from memcore.errors import ConfigError
from memcore.eval.compare import build_comparison
from memcore.eval.compare_export import comparison_text, write_comparison
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.systems.variants import canonical, split_names
from memcore.text.terminal import echo

__all__ = ["compare_command"]


def _canonical(name: str) -> str:
    """A variant's canonical name (as results are keyed); the name as given when it no longer parses (a run of
    a preset or plugin not registered here)."""
    try:
        return canonical(name)
    except ValueError:
        return name


def compare_command(
    run_a: str = typer.Argument(..., help="run id (in the store) or results JSON with rows: the baseline"),
    run_b: str = typer.Argument(..., help="run id or results JSON: compared against RUN_A (deltas B - A)"),
    systems: str | None = typer.Option(None, "--systems", "-s", help="comma-separated systems or variants (a comma "
                                       "inside brackets is not a separator; default: both runs')"),
    store: str | None = typer.Option(None, "--store", help="LanceDB path or URI (default .memcore or $MEMCORE_STORE)"),
    out: str | None = typer.Option("compare.json", "--out", "-o", help="comparison JSON ('' for none)"),
    html: str | None = typer.Option("compare.html", "--html", help="comparison HTML ('' for none)"),
) -> None:
    """Compare two evaluation runs: per system and category the paired delta with its 95% interval and
    McNemar's test on the verdicts, the flipped questions with both traces' evidence, token deltas."""
    settings = Settings()
    uri = store or settings.store_uri
    try:
        names = [_canonical(n) for n in split_names(systems)] if systems else None
    except ValueError as err:
        raise ConfigError(str(err)) from None
    from pathlib import Path

    files = all(Path(r).is_file() for r in (run_a, run_b))  # two results files: no store is opened
    report = build_comparison(run_a, run_b, None if files else LanceStore(uri, read_only=True), names)
    if not report["systems"]:
        raise ConfigError("the two runs share no system; pass --systems or compare runs of the same systems")
    echo(comparison_text(report))
    for p in write_comparison(report, out or None, html or None):
        echo(f"wrote {p}")
