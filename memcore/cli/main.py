"""The `memcore` command line: systems, ingest, ask, diff here; eval, compare, sweep, new-system, variants,
doctor, optimize, llm serve in the other modules of memcore.cli."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import typer

from memcore.cli.common import (
    LENIENT,
    LLM_CONCURRENCY,
    PROVIDER,
    RETRIEVER_HELP,
    STORE,
    read_only_workbench,
    settings_from,
    workbench_from,
)
from memcore.cli.compare import compare_command
from memcore.cli.eval import eval_command
from memcore.cli.mcp import mcp_command
from memcore.cli.new_system import new_system_command
from memcore.cli.sweep import sweep_command
from memcore.cli.tools import doctor, llm_serve, optimize
from memcore.cli.variants import fail, open_store, resolve, resolve_names, variant_lines, variants_app
from memcore.datasets import load_dataset
from memcore.datasets.checks import DatasetWarning
from memcore.datasets.demo import load_demo
from memcore.errors import MemcoreError
from memcore.eval.diagnostics import evidence_recall
from memcore.eval.estimate import estimate_ingest, format_estimate
from memcore.live import LiveError
from memcore.live.follow import follow
from memcore.llm import check_endpoint
from memcore.llm.redact import redact
from memcore.memory_diff import diff_memories, diff_steps
from memcore.settings import LEDGER_TEXT_ENV
from memcore.systems import load_all
from memcore.systems.fields import spec_table
from memcore.systems.variants import parse_variant
from memcore.text.terminal import echo, visible
from memcore.viz.memory_diff import summary_text

app = typer.Typer(help="memcore: watch LLM-agent memory systems build, retrieve and answer.",
                  no_args_is_help=True, add_completion=False)
llm_app = typer.Typer(help="Local LLM server (bundled SmolLM2).", no_args_is_help=True)
app.add_typer(llm_app, name="llm")
app.add_typer(variants_app, name="variants")
app.command("eval")(eval_command)
app.command("compare")(compare_command)
app.command("sweep")(sweep_command)
app.command("mcp")(mcp_command)
app.command("new-system")(new_system_command)
app.command()(optimize)
app.command()(doctor)
llm_app.command("serve")(llm_serve)


@app.callback()
def _options(ledger_text: bool = typer.Option(
        True, "--ledger-text/--no-ledger-text",
        help="store each LLM call's prompt and completion text in the ledger (the app's call inspector shows them); "
             "--no-ledger-text keeps role, stage, tokens, latency and cache hit only and turns the on-disk LLM response "
             "cache off, so no prompt or completion is written to disk and a rerun asks the model again "
             "(same as $MEMCORE_LEDGER_TEXT=0)"),
             ) -> None:
    """memcore: watch LLM-agent memory systems build, retrieve and answer."""
    if not ledger_text:  # through the environment: every command's Settings, and eval's worker processes, see it
        os.environ[LEDGER_TEXT_ENV] = "0"

def _check(wb) -> None:
    """Reach the LLM endpoint first: a dead one fails here in seconds with the URL and the fix."""
    if wb.settings.llm_check:
        check_endpoint(wb.llm)


def _conversations(wb, source: str, conversations: str | None, lenient: bool = False):
    if source == "demo":
        convs = [wb.load_demo()]
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", category=DatasetWarning)
            convs = wb.load(source, lenient=lenient)
        for w in caught:  # a --lenient load: one 'warning:' line each
            echo(f"warning: {w.message}", err=True)
    if conversations:
        want = [c.strip() for c in conversations.split(",") if c.strip()]
        have = {c.id: c for c in convs}
        missing = [w for w in want if w not in have]
        if missing:
            raise typer.BadParameter(f"no conversation(s) {missing} in {source}; have: {', '.join(have)}")
        convs = [have[w] for w in want]
    return convs


class _Reader:
    """Loads conversations like a Workbench without storing them (a --dry-run writes nothing)."""

    def load_demo(self) -> Any:
        """The demo conversation."""
        return load_demo()

    def load(self, path: str, lenient: bool = False) -> Any:
        """A dataset file's conversations."""
        return load_dataset(path, None, lenient=lenient)


def _system_names(systems: str, store: Any) -> list[str]:
    """Canonical variant names of --systems (a comma inside brackets is not a separator; @NAME looked up in
    `store`; 'all': every registered system); a bad name exits 2 with its one-line error."""
    return resolve_names(systems, store, list(load_all()))


@app.command()
def systems(
    field_help: bool = typer.Option(False, "--field-help", help="add each field's one-line help under it"),
    variants: bool = typer.Option(False, "--variants", help="list the presets (with their source) and the "
                                  "store's saved variants instead"),
    store: str | None = STORE,
) -> None:
    """List the registered memory systems and their settings: per field the paper default, the valid range or
    values, construction (keys the memory space) or query (retrieval and answering only), and the source."""
    if variants:
        for line in variant_lines(open_store(store)):
            echo(line)
        return

    for name, cls in load_all().items():
        echo(f"{name:18s} {cls.title}  [{cls.paper}]")
        for line in spec_table(cls.config_class, with_help=field_help):
            echo(line)


@app.command()
def ingest(
    source: str = typer.Argument("demo", help="dataset file (LoCoMo, LongMemEval, BEAM, LoCoMo-Plus or "
                                "JSONL; format detected from the content), a BEAM chat folder, or 'demo'"),
    systems: str = typer.Option("naive_rag", "--systems", "-s", help="comma-separated systems or variants "
                                "(com[beta=0.8,max_len=4], com:no-apt, @NAME), or 'all'"),
    conversations: str | None = typer.Option(None, "--conversations", "-c", help="conversation ids"),
    store: str | None = STORE,
    provider: str | None = PROVIDER,
    wait: bool = typer.Option(True, "--wait/--no-wait", help="when another process is building the same memory: "
                              "wait for it (up to $MEMCORE_LEASE_WAIT_S, default 3600 s), or fail at once"),
    llm_concurrency: int | None = LLM_CONCURRENCY,
    lenient: bool = LENIENT,
    dry_run: bool = typer.Option(False, "--dry-run", help="print the cost estimate (calls and tokens per stage "
                                 "and system, from an earlier real build of the same memory in the store, else "
                                 "the offline engine's ledger of the same ingest, times the price table; the "
                                 "source is named) and exit without calling the provider"),
    follow: bool = typer.Option(False, "--follow", help="SOURCE is a JSONL chat log that grows: remember each new "
                                "message as it is written (a live conversation: the Live page watches it; no "
                                "end-of-conversation step while it is followed); Ctrl-C stops, a rerun continues"),
    idle_exit: float | None = typer.Option(None, "--idle-exit", help="with --follow: stop after the file has not "
                                           "grown for this many seconds"),
) -> None:
    """Build memory for conversations (resumes an interrupted ingest; never duplicates)."""
    if follow:
        _follow(source, systems, store, provider, lenient, idle_exit)
        return
    if dry_run:
        names = _system_names(systems, open_store(store) if "@" in systems else None)  # @NAME: saved in the store
        est = estimate_ingest(settings_from(store, provider), _conversations(_Reader(), source, conversations, lenient),
                              names)
        echo(format_estimate(est))
        return
    if "@" not in systems:  # a bad or empty --systems fails before a store is opened (@NAME needs the store)
        _system_names(systems, None)
    wb = workbench_from(store, provider, llm_concurrency=llm_concurrency)
    echo(f"LLM: {wb.provider_label} | embedder: {wb.embedder.name} | store: {redact(wb.settings.store_uri)}")
    _check(wb)
    failures = 0
    names = _system_names(systems, wb.store)
    for conv in _conversations(wb, source, conversations, lenient):
        if not all(wb.is_ingested(n, conv) for n in names):  # model load, turn embedding: charged to no system
            shared = wb.prepare(conv)
            echo(f"  shared work on {conv.id}: " + ", ".join(f"{k} {v:.1f}s" for k, v in shared.items()))
        for name in names:
            label = visible(f"{name:18s} {conv.id}")
            with typer.progressbar(length=len(conv.turns), label=label) as bar:
                rep = wb.ingest(name, conv, progress=lambda done, total, ev: bar.update(1), wait=wait,
                                stage=lambda what, done, total, bar=bar, label=label: _stage(bar, label, what, done,
                                                                                            total))
            if rep.error:
                failures += 1
                echo(f"error: {rep.message}", err=True)
                continue
            state = "already complete" if rep.skipped else f"{rep.seconds:.1f}s, {rep.events} events"
            resumed = f", resumed at turn {rep.resumed_from}" if rep.resumed_from else ""
            echo(f"  {name} on {conv.id}: {state}{resumed}; memory: {rep.counts or 'turn index'}")
            if rep.degraded_calls:
                echo(f"  warning: {rep.degraded_calls} unusable replies replaced by the role's fallback "
                           "(llm_unusable=fallback)", err=True)
    wb.ledger.flush()
    if failures:
        raise typer.Exit(4)


def _follow(source: str, systems: str, store: str | None, provider: str | None, lenient: bool,
            idle_exit: float | None) -> None:
    """`ingest --follow`: remember a growing JSONL chat log (memcore.live.follow); exit 4 when a memory could not
    be built (the turns stay stored; a rerun resumes)."""
    path = Path(source)
    if source == "demo" or path.suffix != ".jsonl":
        raise typer.BadParameter(f"--follow reads a JSONL chat log (*.jsonl), not {source!r}")
    wb = workbench_from(store, provider)
    echo(f"LLM: {wb.provider_label} | embedder: {wb.embedder.name} | store: {redact(wb.settings.store_uri)}")
    _check(wb)
    names = _system_names(systems, wb.store)
    echo(f"following {visible(str(path))} for {', '.join(names)} (Ctrl-C stops)")

    def shown(conv_id: str, n: int, counts: dict) -> None:
        echo(f"  {visible(conv_id)}: +{n} turn(s); memory: " + "; ".join(f"{k} {v or 'turn index'}"
                                                                       for k, v in counts.items()))
    try:
        n = follow(wb, path, names, idle_exit_s=idle_exit, lenient=lenient, report=shown)
    except KeyboardInterrupt:
        echo("stopped; a rerun continues from the stored turns")
        return
    except LiveError as e:
        echo(f"error: {redact(str(e))}", err=True)
        raise typer.Exit(4) from None
    finally:
        wb.ledger.flush()
    echo(f"stopped after {idle_exit}s without growth: {n} turn(s) remembered")


def _stage(bar: Any, label: str, what: str, done: int, total: int) -> None:
    """Show the step around the turns (the shared embedding per batch, finishing) in the bar's label."""
    bar.label = f"{label} {what} {done}/{total}" if total > 1 and done < total else label
    bar.update(0)  # redraw with the new label


@app.command()
def ask(
    question: str = typer.Argument(..., help="question text, or a dataset question id like conv-26:q3"),
    source: str = typer.Option("demo", "--source", help="dataset file or 'demo'"),
    conversation: str | None = typer.Option(None, "--conversation", "-c"),
    system: str = typer.Option("naive_rag", "--system", "-s", help="a system or variant: com, com[beta=0.8], "
                               "com:no-apt, @NAME"),
    retriever: str | None = typer.Option(None, "--retriever", "-r", help=RETRIEVER_HELP + " (default: the "
                                         "variant's, else dense)"),
    store: str | None = STORE,
    provider: str | None = PROVIDER,
    as_json: bool = typer.Option(False, "--json", help="print the full answer and trace as JSON"),
    llm_concurrency: int | None = LLM_CONCURRENCY,
    lenient: bool = LENIENT,
) -> None:
    """Answer a question with one system and show the evidence it used."""
    wb = workbench_from(store, provider, llm_concurrency=llm_concurrency)
    try:
        variant = resolve(system, wb.store).combined({"retriever": retriever} if retriever else None).name
    except ValueError as err:
        raise fail(err) from None
    _check(wb)
    conv = _conversations(wb, source, conversation, lenient)[0]
    q = next((x for x in conv.questions if x.id == question), None) or question
    try:
        ans = wb.ask(variant, conv, q)
    finally:
        wb.ledger.flush()
    if as_json:
        echo(json.dumps(ans.to_dict(), indent=2, default=str))
        return
    echo(f"[{variant} / {ans.trace.retriever} / {wb.provider_label}]")
    echo(f"Q: {ans.trace.question}\nA: {ans.text}")
    gold = set(getattr(q, "evidence", []) or [])
    if not isinstance(q, str):
        echo(f"gold: {q.answer}  evidence: {', '.join(q.evidence)}  "
                   f"recall: {evidence_recall(ans.trace.context_turn_ids(), q.evidence)}")
    for it in ans.trace.items[:25]:
        mark = "*" if gold & set(it.turn_ids) else " "
        echo(f" {mark} {it.score:6.3f} {it.id:14s} {it.text[:100]}")
    for stage, u in ans.usage.items():
        echo(f"  {stage}: {u.calls} calls, {u.prompt_tokens}+{u.completion_tokens} tokens")
    for note in ans.trace.notes + ans.trace.errors:
        echo(f"  note: {note}")


@app.command("diff")
def diff(
    names: list[str] = typer.Argument(..., help="SYSTEM CONV (one memory, --from/--to) or SYS_A SYS_B CONV (two "
                                      "variants' memories, --at); a system may be a variant: 'xmemory[max_theme=4]'"),
    step_from: int | None = typer.Option(None, "--from", help="first step (0 = before turn 1)"),
    step_to: int | None = typer.Option(None, "--to", help="second step (default: the last built step)"),
    at: int | None = typer.Option(None, "--at", help="the step both memories are compared at (default: the last)"),
    limit: int = typer.Option(20, "--limit", help="items listed per kind (0: all)"),
    store: str | None = STORE,
    as_json: bool = typer.Option(False, "--json", help="print the whole diff as JSON"),
) -> None:
    """What changed in a memory: between two steps of one memory, or between two variants' memories of one
    conversation at one step; per kind the items added, changed (word diff) and removed, each with its turn
    and event. Reads stored memories only (build them with `memcore ingest`)."""
    if len(names) not in (2, 3):
        raise typer.BadParameter("give SYSTEM CONV (with --from/--to) or SYS_A SYS_B CONV (with --at)")
    try:
        variants = [parse_variant(n) for n in names[:-1]]
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    wb = read_only_workbench(store)  # diff only reads: no store, table or cache is created
    conv = wb.conversation(names[-1])
    mems = [wb.memory(v.system, conv, **v.settings) for v in variants]
    last = [int((m.checkpoint() or {"step": 0})["step"]) for m in mems]
    if len(mems) == 1:
        if at is not None:
            raise typer.BadParameter("--at compares two memories; one memory takes --from and --to")
        d = diff_steps(mems[0], conv, 0 if step_from is None else step_from, last[0] if step_to is None else step_to)
    else:
        if step_from is not None or step_to is not None:
            raise typer.BadParameter("two memories are compared at one step: --at STEP (not --from/--to)")
        if variants[0].system != variants[1].system:
            raise typer.BadParameter(f"{names[0]} and {names[1]} are different systems: a memory diff compares "
                                     "two variants of one system")
        d = diff_memories(*mems, conv, min(last) if at is None else at, (variants[0].name, variants[1].name))
    echo(json.dumps(d.to_dict(), indent=2, default=str) if as_json else summary_text(d, limit or None))


def main() -> None:
    """Entry point, one error style for every command: a memcore error and a usage error (a bad option or
    argument, from typer) each print one line `error: ...` (redacted) and exit 2; a command's own exit code
    (typer.Exit) passes through; no arguments print the help."""
    try:  # typer 0.29 carries its own click (requirements.txt pins it); an older typer uses click's
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - typer without a vendored click
        from click import exceptions as click_errors

    try:
        code = app(standalone_mode=False)
    except MemcoreError as e:
        echo(f"error: {redact(str(e))}", err=True)
        sys.exit(2)
    except click_errors.NoArgsIsHelpError as e:
        e.show()
        sys.exit(e.exit_code)
    except click_errors.ClickException as e:
        ctx = getattr(e, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        echo(f"error: {redact(' '.join(e.format_message().split()))}{where}", err=True)
        sys.exit(2 if isinstance(e, click_errors.UsageError) else e.exit_code)
    except typer.Abort:
        echo("error: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
