"""Text for a terminal: control characters from data made visible, so a dataset cannot drive the terminal.

A turn or question may hold BEL, BS, CR, VT, FF, ESC (terminal escape sequences), DEL, C1 controls or
bidirectional overrides; printed raw they ring the bell, erase or rewrite earlier output, or reorder it.
`visible` writes each as an escape (`\\x07`, `\\u202e`); newline and tab pass unchanged. `echo` is
`typer.echo` through `visible`: the CLI prints with it.
"""

from __future__ import annotations

import re

import typer

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character except newline and tab written as a visible escape."""
    return _CONTROL.sub(_escape, text)


def echo(message: object = "", err: bool = False) -> None:
    """typer.echo(message) with control characters made visible (memcore.text.terminal.visible)."""
    typer.echo(visible(str(message)), err=err)
