"""Escaping for every place conversation or memory text meets HTML, Markdown or a <script> block."""

from __future__ import annotations

import html
import json
import re
from typing import Any

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:])")
_AUTOLINK = re.compile(r"://|(?<![\w.])www(?=\.)|@", re.I)
_JOINER = "\u2060"


def esc(text: Any) -> str:
    """HTML-escape any value (quotes included), so it renders as inert text."""
    return html.escape("" if text is None else str(text), quote=True)


def md_escape(text: Any) -> str:
    """Escape Markdown syntax so text shows literally: no links, images, HTML or formatting, and no autolinks.

    The browser's renderer turns bare URLs into links after parsing (remark-gfm), so escapes cannot stop it:
    an invisible WORD JOINER (U+2060) goes after "://", after "www" and after "@", where its autolinker
    (https://..., www...., a@b.c) then finds no address. Copying the text copies the joiner too."""
    s = "" if text is None else str(text)
    s = _AUTOLINK.sub(lambda m: m.group(0) + _JOINER, s)
    return _MD_SPECIAL.sub(r"\\\1", s).replace("\n", "  \n")


def script_json(obj: Any) -> str:
    """JSON that is safe inside an HTML <script> element (no "</script>" or "<!--" break-out)."""
    s = json.dumps(obj, ensure_ascii=False, default=str)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def shorten(text: Any, n: int = 80) -> str:
    """Text cut to n characters with an ellipsis (not escaped)."""
    s = " ".join(("" if text is None else str(text)).split())
    return s if len(s) <= n else s[: n - 1] + "…"
