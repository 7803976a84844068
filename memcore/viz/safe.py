"""Escaping for every place conversation or memory text meets HTML, Markdown or a <script> block."""

from __future__ import annotations

import html
import json
import re
from typing import Any

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:])")
# what the browser's Markdown (remark-gfm) links by itself, widened: any scheme://..., www...., a@b.c (up to a space
# or '<'); an e-mail inside a URL is part of the URL
_AUTOLINK = re.compile(r"(?:[a-z][a-z0-9+.-]*://|(?<![a-z0-9])www\.)[^\s<]*|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.I)
_TRAILING = ".,:;!?'\"*_~"  # punctuation after a URL is the sentence's (GFM leaves it out of the link too)


def esc(text: Any) -> str:
    """HTML-escape any value (quotes included), so it renders as inert text. A double quote becomes `&#34;`, not
    `&quot;`: Plotly's hover and label text decode numeric entities but only a few named ones (not `quot`), so
    `&quot;` showed as typed; browsers read both alike."""
    return html.escape("" if text is None else str(text), quote=True).replace("&quot;", "&#34;")


def _url_end(url: str) -> int:
    """Where a bare URL ends: before trailing punctuation and a closing bracket it does not open."""
    end = len(url)
    while end and (url[end - 1] in _TRAILING or (url[end - 1] == ")" and url.count("(", 0, end) < url.count(")", 0, end))
                   or (url[end - 1] == "]" and url.count("[", 0, end) < url.count("]", 0, end))):
        end -= 1
    return end


def code_span(text: str) -> str:
    """Text as a Markdown code span, shown exactly (a fence longer than any run of backticks inside it)."""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_LEADING = re.compile(r"(^|\n)([ \t]+)(?=[^ \t\n])")
_REFS = {" ": "&#32;", "\t": "&#9;"}


def _escape_plain(s: str, line_start: bool = True) -> str:
    # a line's leading spaces or tabs (before its text) as character references: four of them open an indented code
    # block, which showed the text's escapes as typed backslashes (a BEAM message's indented code: "\# Append ...
    # \{\:\.2f\}"); a reference is not indentation to the block parser and is the same space once rendered (and
    # copied). A segment that follows a URL's code span continues its line (a URL holds no line break).
    escaped = _MD_SPECIAL.sub(r"\\\1", s)
    escaped = _LEADING.sub(lambda m: m.group(1) + "".join(_REFS[c] for c in m.group(2))
                           if line_start or m.group(1) else m.group(0), escaped)
    return escaped.replace("\n", "  \n")


def md_escape(text: Any) -> str:
    """Escape Markdown syntax so text shows literally: no links, images, HTML or formatting, and no autolinks.

    The browser's renderer turns bare URLs into links after parsing (remark-gfm), so escapes cannot stop it: a
    URL or e-mail address (https://..., www...., a@b.c) is shown as a code span instead, which the autolinker
    never enters. The text on screen, and copied from it, is the text given: no invisible character is added."""
    s = "" if text is None else str(text)
    out, pos = [], 0
    for m in _AUTOLINK.finditer(s):
        url = m.group(0)[:_url_end(m.group(0))]
        out += [_escape_plain(s[pos:m.start()], line_start=not pos), code_span(url)]
        pos = m.start() + len(url)
    out.append(_escape_plain(s[pos:], line_start=not pos))
    return "".join(out)


def script_json(obj: Any) -> str:
    """JSON that is safe inside an HTML <script> element (no "</script>" or "<!--" break-out)."""
    s = json.dumps(obj, ensure_ascii=False, default=str)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def shorten(text: Any, n: int = 80) -> str:
    """Text cut to n characters with an ellipsis (not escaped), whitespace collapsed.

    Only a prefix of the text is collapsed, doubled until it decides the cut: the collapsed prefix is a prefix of
    the collapsed whole, so the result is the same as collapsing everything (a 10M-token chat's 18,460 previews
    split 41 M characters for 18,460 x 200 shown)."""
    raw = "" if text is None else str(text)
    k = 2 * n + 16 if n >= 1 else len(raw)
    while True:
        s = " ".join(raw[:k].split())
        if len(s) > n:
            return s[: n - 1] + "…"
        if k >= len(raw):
            return s
        k *= 2
