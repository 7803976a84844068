"""`memcore compare RUN_A RUN_B`: two evaluation runs side by side (memcore.eval.compare), as text, JSON, HTML.

A run is a run id in the store (rows read without traces; the flipped questions' traces fetched one
by one) or a results JSON that embeds its per-question `rows` (the Export page's). Result sets pair by name
(--systems, or every name both runs hold), or across names with --a-system / --b-system (A's `com` against B's
`com[beta=0.3]`, as Compare runs pairs them); each compared pair is headed by both sides' names and, for stored
runs, the configurations they ran as. Reading only: the store is opened read-only (a missing store or table is
an error, never created; an older table's schema is not migrated). Exit code 0, or 2 with a one-line error
naming the fix when a run is missing or has no rows, or lacks a result set named (the error lists those it
holds); a rerun with the fixed argument repeats the same read.
"""

from __future__ import annotations

from pathlib import Path

import typer

from memcore.errors import ConfigError
from memcore.eval.compare import build_comparison
from memcore.eval.compare_export import comparison_text, write_comparison
from memcore.eval.run_labels import run_label, run_variants
from memcore.eval.run_record import list_runs
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


def _names(arg: str | None, option: str = "--systems") -> list[str] | None:
    """The canonical names of a comma-separated option (None when not given); a name that does not parse is
    kept as given (a run of a preset or plugin not registered here); no name at all is refused."""
    if arg is None:
        return None
    try:
        return [_canonical(n) for n in split_names(arg)]
    except ValueError as err:  # unbalanced brackets, or no name at all ('', ',')
        raise ConfigError(f"{option}: {err}") from None


def _pairs(a_arg: str | None, b_arg: str | None) -> list[tuple[str, str]] | None:
    """(A's name, B's name) pairs of --a-system / --b-system: in order, or one name against each of the other
    side's; None when neither is given."""
    if a_arg is None and b_arg is None:
        return None
    if a_arg is None or b_arg is None:
        given, missing = ("--a-system", "--b-system") if b_arg is None else ("--b-system", "--a-system")
        raise ConfigError(f"{given} pairs with {missing}: give both, e.g. --a-system com --b-system 'com[beta=0.3]'")
    a, b = _names(a_arg, "--a-system") or [], _names(b_arg, "--b-system") or []
    if len(a) == 1 or len(b) == 1:
        return [(x, y) for x in a for y in b]
    if len(a) != len(b):
        raise ConfigError(f"--a-system names {len(a)} result sets and --b-system {len(b)}: they pair in order. Fix: "
                          "give as many on each side, or one on a side to pair it with each of the other's")
    return list(zip(a, b, strict=True))


def describe_sides(report: dict, store: LanceStore) -> None:
    """Name what each stored run ran, as Compare runs does: its line (variants, dataset, retriever, model, date)
    and, per result set, the configuration it ran as (run records absent: the run ids and names alone)."""
    recs = {r["run_id"]: r for r in list_runs(store)}  # none in a store without run records
    for side in ("a", "b"):
        rec = recs.get(report[side].get("run_id"))
        if rec is not None:
            report[side]["description"] = run_label(rec)
            report[side]["ran_as"] = run_variants(rec)


def compare_command(
    run_a: str = typer.Argument(..., help="run id (in the store) or results JSON with rows: the baseline"),
    run_b: str = typer.Argument(..., help="run id or results JSON: compared against RUN_A (deltas B - A)"),
    systems: str | None = typer.Option(None, "--systems", "-s", help="comma-separated systems or variants (a comma "
                                       "inside brackets is not a separator; default: both runs')"),
    a_system: str | None = typer.Option(None, "--a-system", help="RUN_A's result set(s) to pair with --b-system's, "
                                        "e.g. --a-system com --b-system 'com[beta=0.3]' (comma-separated: paired "
                                        "in order; one name pairs with each of the other side's)"),
    b_system: str | None = typer.Option(None, "--b-system", help="RUN_B's result set(s), paired with --a-system's"),
    store: str | None = typer.Option(None, "--store", help="LanceDB path or URI (default .memcore or $MEMCORE_STORE)"),
    out: str | None = typer.Option("compare.json", "--out", "-o", help="comparison JSON ('' for none)"),
    html: str | None = typer.Option("compare.html", "--html", help="comparison HTML ('' for none)"),
) -> None:
    """Compare two evaluation runs: per system and category the paired delta with its 95% interval and
    McNemar's test on the verdicts, the flipped questions with both traces' evidence, token deltas. Result sets
    of different names (a variant against the system it varies) pair with --a-system / --b-system."""
    settings = Settings()
    uri = store or settings.store_uri
    names, pairs = _names(systems), _pairs(a_system, b_system)
    if pairs and names:
        raise ConfigError("--systems compares result sets of the same name on both sides; --a-system / --b-system "
                          "pair different ones. Fix: give one or the other")
    files = all(Path(r).is_file() for r in (run_a, run_b))  # two results files: no store is opened
    st = None if files else LanceStore(uri, read_only=True)
    report = build_comparison(run_a, run_b, st, names, pairs=pairs)
    if st is not None:
        describe_sides(report, st)
    if not report["systems"]:
        raise ConfigError("the two runs share no system; pass --systems, or pair result sets of different names "
                          "with --a-system NAME --b-system NAME")
    echo(comparison_text(report))
    for p in write_comparison(report, out or None, html or None):
        echo(f"wrote {p}")
