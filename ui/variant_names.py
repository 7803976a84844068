"""Variant names in the app (issue 26): what a picker entry (`sys`, `sys[alpha=0.8]`, `sys:no-x`, `@fast`)
stands for, the page's settings added when the workbench is called with it, and the name an answer is shown under.

A picker entry is the single source of truth: the settings panel (ui/settings_panel.py) edits a variant by
replacing the entry with a new canonical name; memories, answers and links follow the name. The workbench parses
names (Workbench.variant; a saved @NAME read from the store). Pure: no widgets.
"""

from __future__ import annotations

from typing import Any

from memcore.store.variants import PREFIX as SAVED
from memcore.systems import load_all
from memcore.systems.variants import Variant
from memcore.workbench import Workbench

__all__ = ["SAVED", "label", "offered", "page_settings", "resolve"]


def resolve(wb: Workbench, name: str) -> Variant:
    """The variant a picker entry stands for (a saved @NAME read from the store); ValueError (one line)."""
    return wb.variant(name)


def page_settings(wb: Workbench, name: str, retriever: str | None = None) -> dict[str, Any]:
    """The page's settings for an entry: its retriever, for a variant that sets none (the variant's own wins)."""
    return {} if retriever is None or "retriever" in resolve(wb, name).settings else {"retriever": retriever}


def label(wb: Workbench, name: str) -> str:
    """An answer's heading: the entry's canonical variant name, and the saved name it was picked by
    (`sys[alpha=0.8] (@fast)`); the retriever it used is shown beside it (the page's, unless the variant sets one)."""
    shown = resolve(wb, name).name
    return f"{shown} ({name})" if name.startswith(SAVED) else shown


def offered(wb: Workbench) -> list[str]:
    """What every picker offers besides the systems: each registered preset and each saved variant."""
    systems = set(load_all())
    return [n for n in wb.variant_names() if n not in systems]
