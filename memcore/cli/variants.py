"""`memcore variants save/list/delete` and the variant listing of `memcore systems --variants`.

A variant is a system with config overrides (`com[beta=0.8]`) or a paper's ablation preset (`com:no-apt`),
memcore.systems.variants; a saved variant is a name kept in the store for one (memcore.store.variants),
written `@NAME` wherever a system name is accepted.
"""

from __future__ import annotations

from typing import Any

import typer

from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.store.variants import (
    check_name,
    delete_variant,
    is_saved_name,
    save_variant,
    saved_variant,
    saved_variants,
)
from memcore.systems.variants import Variant, parse_variant, presets, split_names
from memcore.text.terminal import echo

variants_app = typer.Typer(help="Saved variants: a name (written @NAME) for a system with settings, kept in the "
                           "store; `memcore systems --variants` lists them with the presets.", no_args_is_help=True)
STORE = typer.Option(None, "--store", help="LanceDB path or URI (default .memcore or $MEMCORE_STORE)")


def fail(err: Exception) -> typer.Exit:
    """Print a bad name's one-line error; the exit (code 2) to raise."""
    echo(f"error: {err}", err=True)
    return typer.Exit(2)


def resolve(name: str, store: Any) -> Variant:
    """A variant name parsed, `@NAME` looked up in `store` first (ValueError, one line, when bad or unknown)."""
    return parse_variant(saved_variant(store, name) if is_saved_name(name) else name)


def resolve_names(text: str, store: Any, every: list[str]) -> list[str]:
    """The canonical variant names of a comma-separated list (a comma inside brackets is not a separator), or
    `every` for 'all'; raises typer.Exit(2) after the one-line error of a bad name."""
    if text == "all":
        return list(every)
    try:
        out = [resolve(n, store).name for n in split_names(text)]
    except ValueError as err:
        raise fail(err) from None
    return list(dict.fromkeys(out))


def variant_lines(store: Any) -> list[str]:
    """The presets (with their source) and the store's saved variants, one line each."""
    lines = ["presets (system:preset; the paper's ablations):"]
    have = presets()
    width = max((len(f"{p.system}:{p.name}") for p in have), default=0)
    for p in have:
        over = ",".join(f"{k}={v}" for k, v in sorted(p.overrides.items()))
        lines.append(f"  {p.system + ':' + p.name:{width}s}  [{p.source}] {p.description}" +
                     (f"  ({over})" if over else ""))
    if not have:
        lines.append("  (none registered)")
    saved = saved_variants(store)
    lines.append(f"saved variants (@NAME; store {getattr(store, 'uri', '')}):")
    lines += [f"  @{n:24s} {v['variant']}" for n, v in saved.items()] or \
        ["  (none; memcore variants save NAME VARIANT)"]
    return lines


def open_store(store: str | None) -> Any:
    """The store at `store` (default: the settings' store), for reading and saving variants."""
    s = Settings()
    s = s.with_(store_uri=store) if store else s
    return LanceStore(s.store_uri, storage_options=s.storage_options)  # reads no vectors: any dim


@variants_app.command("save")
def save(name: str = typer.Argument(..., help="the name to keep (written @NAME when used)"),
         variant: str = typer.Argument(..., help="a variant: com[beta=0.8,max_len=4], com:no-apt, or @OTHER"),
         store: str | None = STORE) -> None:
    """Keep NAME for a variant (its canonical form); saving a name again replaces it."""
    st = open_store(store)
    try:
        bare = check_name(name)
        v = resolve(variant, st)
    except ValueError as err:
        raise fail(err) from None
    save_variant(st, bare, v.name, v.system)
    echo(f"@{bare} = {v.name}")


@variants_app.command("list")
def list_(store: str | None = STORE) -> None:
    """List the presets and the saved variants."""
    for line in variant_lines(open_store(store)):
        echo(line)


@variants_app.command("delete")
def delete(name: str = typer.Argument(..., help="a saved variant's name (@NAME or NAME)"),
           store: str | None = STORE) -> None:
    """Forget a saved variant (results that used it keep its canonical name)."""
    try:
        gone = delete_variant(open_store(store), name)
    except ValueError as err:
        raise fail(err) from None
    if not gone:
        raise fail(ValueError(f"{name}: no saved variant of that name"))
    echo(f"deleted @{check_name(name)}")
