"""Variant names in the app (issue 26): what a picker entry (`com`, `com[beta=0.8]`, `com:no-apt`, `@fast`)
stands for, the system and settings the workbench is called with, and the name an answer is shown under.

A picker entry is the single source of truth: the settings panel (ui/settings_panel.py) edits a variant by
replacing the entry with a new canonical name; memories, answers and links follow the name. Pure: no widgets.
"""

from __future__ import annotations

from typing import Any

from memcore.systems import load_all
from memcore.systems.variants import Variant, parse_variant, presets, variant_name
from memcore.workbench import Workbench

SAVED = "@"  # a saved variant is written @NAME (kept in the store)


def saved_variants(wb: Workbench) -> dict[str, str]:
    """The store's saved variants: bare name -> canonical variant ({} while the workbench keeps none)."""
    fn = getattr(wb, "saved_variants", None)  # the store's saved variants (engineer "variants", issue 26)
    return dict(fn()) if fn is not None else {}


def resolve(wb: Workbench, name: str) -> Variant:
    """The variant a picker entry stands for (a saved @NAME read from the store); ValueError (one line)."""
    if name.startswith(SAVED):
        have = saved_variants(wb)
        if name[1:] not in have:
            raise ValueError(f"{name}: no saved variant of that name; saved: "
                             f"{', '.join(SAVED + n for n in have) or '(none)'}")
        name = have[name[1:]]
    return parse_variant(name)


def query_settings(v: Variant, retriever: str | None) -> dict[str, Any]:
    """The variant's settings with the page's retriever for a variant that sets none (its own one wins)."""
    extra = {} if retriever is None or "retriever" in v.settings else {"retriever": retriever}
    return {**extra, **v.settings}


def call(wb: Workbench, name: str, retriever: str | None = None) -> tuple[str, dict[str, Any]]:
    """(system, settings) to call the workbench with for a picker entry (and the page's retriever)."""
    v = resolve(wb, name)
    return v.system, query_settings(v, retriever)


def label(wb: Workbench, name: str) -> str:
    """An answer's heading: the entry's canonical variant name, and the saved name it was picked by
    (`com[beta=0.8] (@fast)`); the retriever it used is shown beside it (the page's, unless the variant sets one)."""
    shown = resolve(wb, name).name
    return f"{shown} ({name})" if name.startswith(SAVED) else shown


def memory_name(wb: Workbench, name: str) -> str:
    """The canonical name of the memory a picker entry answers from: its system with its construction settings."""
    v = resolve(wb, name)
    return variant_name(v.system, v.construction())


def offered(wb: Workbench) -> list[str]:
    """What every picker offers besides the systems: each registered preset and each saved variant."""
    return [f"{p.system}:{p.name}" for p in presets() if p.system in load_all()] + \
        [SAVED + n for n in saved_variants(wb)]


def split_names(text: str) -> list[str]:
    """Picker entries from a comma-separated URL value; a comma inside brackets belongs to its name."""
    names, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth <= 0:
            names.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [n for n in [*names, cur.strip()] if n]
