"""The pieces a system's view is made of: pure data that ui/ draws on a page and the export writes out.

A view returns a list of blocks: `Part` (one figure, table, embedded HTML page, text or JSON,
with an optional label above and caption below), `Row` (parts side by side) and `Choice` (a
picker: the page shows the chosen option's parts, the export writes every option).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TEXT_STYLES = ("caption", "info", "success", "warning", "markdown")


@dataclass(frozen=True)
class Text:
    """A sentence shown as a caption, a coloured note (info / success / warning) or Markdown."""

    text: str
    style: str = "caption"

    def __post_init__(self) -> None:
        if self.style not in TEXT_STYLES:
            raise ValueError(f"unknown text style {self.style!r}; use one of {TEXT_STYLES}")


@dataclass(frozen=True)
class Html:
    """A self-contained HTML page (e.g. a pyvis graph), shown in a sandboxed frame."""

    page: str


@dataclass(frozen=True)
class Part:
    """One piece of a view.

    `content`: a plotly Figure, a DataFrame, `Html`, `Text`, a dict / list (JSON), or None
    (label only). `title` heads it in the export; `label` (Markdown) is shown above it on the
    page; `caption` under it on both. `height` sizes tables and frames on the page; `key`
    names its chart or picker (unique within the view).
    """

    title: str
    content: Any = None
    caption: str = ""
    label: str = ""
    height: int | None = None
    key: str = ""


@dataclass(frozen=True)
class Row:
    """Parts side by side (one column each) on the page; one after another in the export."""

    parts: tuple[Part, ...]

    def __init__(self, *parts: Part) -> None:
        object.__setattr__(self, "parts", tuple(parts))


@dataclass(frozen=True)
class Choice:
    """A picker over options (value -> parts): the page shows the chosen one, the export all of them."""

    label: str
    options: tuple[tuple[Any, tuple[Part, ...]], ...] = field(default=())
    key: str = ""


Block = Part | Row | Choice


def parts_of(blocks: list[Block] | tuple[Block, ...]) -> list[Part]:
    """Every part of a view in order (rows flattened, every option of a choice)."""
    out: list[Part] = []
    for b in blocks:
        if isinstance(b, Row):
            out += b.parts
        elif isinstance(b, Choice):
            for _, opt in b.options:
                out += opt
        else:
            out.append(b)
    return out
