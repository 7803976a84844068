"""Exports: any trace, comparison or table as JSON, CSV, or a standalone HTML page that works offline.

The HTML page inlines plotly.js once, escapes every text, and carries a Content-Security-Policy
that forbids any network request, so it renders the same on a laptop without network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.viz.parts import Block, Html, Text, parts_of
from memcore.viz.safe import esc

CSP = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
       "img-src data: blob:; font-src data:; frame-src 'self' data: blob:; child-src 'self' data: blob:")
CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1F2933;font-size:16px}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:2px solid #0072B2}
table{border-collapse:collapse;font-size:14px;margin:.5rem 0}td,th{border:1px solid #ccc;padding:4px 8px;
vertical-align:top;text-align:left}th{background:#F2F5F8}pre{background:#F7F7F7;padding:.75rem;white-space:pre-wrap}
.caption{color:#555;font-size:14px}iframe{width:100%;height:540px;border:1px solid #ccc}
.note{background:#EEF4FA;border-left:4px solid #0072B2;padding:.5rem .75rem}"""

# (heading, figure | DataFrame | str | dict | list | Text | Html | ("html-page", str)); "" = no heading
Section = tuple[str, Any]


def block_sections(blocks: Sequence[Block]) -> list[Section]:
    """A view's blocks (memcore.viz.parts) as export sections: every part, its caption under it."""
    out: list[Section] = []
    for p in parts_of(list(blocks)):
        out.append((p.title, Text("(none)") if p.content is None else p.content))
        if p.caption:
            out.append(("", Text(p.caption)))
    return out


def plain(obj: Any) -> Any:
    """JSON-able form of dataclasses (Answer, Trace, ...), DataFrames and nested containers."""
    if hasattr(obj, "to_dict") and not isinstance(obj, pd.DataFrame):
        return plain(obj.to_dict())
    if is_dataclass(obj) and not isinstance(obj, type):
        return plain(asdict(obj))
    if isinstance(obj, pd.DataFrame):
        return json.loads(obj.to_json(orient="records", force_ascii=False))
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [plain(v) for v in obj]
    return obj


def to_json(obj: Any) -> str:
    """Pretty JSON of any exportable object."""
    return json.dumps(plain(obj), indent=2, ensure_ascii=False, default=str)


def to_csv(data: pd.DataFrame | Sequence[dict[str, Any]]) -> str:
    """CSV text of a table (DataFrame or list of row dicts)."""
    df = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    return df.to_csv(index=False)


def _section_html(content: Any, first_fig: list[bool]) -> str:
    if isinstance(content, go.Figure):
        inline = first_fig[0]
        first_fig[0] = False
        return content.to_html(full_html=False, include_plotlyjs=True if inline else False,
                               include_mathjax=False, config={"displaylogo": False})
    if isinstance(content, pd.DataFrame):
        return content.to_html(index=False, escape=True, na_rep="", border=0)
    if isinstance(content, Html):
        content = ("html-page", content.page)
    if isinstance(content, tuple) and len(content) == 2 and content[0] == "html-page":
        return f'<iframe sandbox="allow-scripts" srcdoc="{esc(content[1])}"></iframe>'
    if isinstance(content, Text):
        return f'<p class="{"caption" if content.style == "caption" else "note"}">{esc(content.text)}</p>'
    if isinstance(content, dict | list):
        return f"<pre>{esc(to_json(content))}</pre>"
    return f"<pre>{esc(content)}</pre>"


def standalone_html(title: str, sections: Sequence[Section], caption: str = "") -> str:
    """A self-contained HTML page: headed sections of figures, tables, text and JSON (all escaped)."""
    first = [True]
    body = "".join((f"<h2>{esc(h)}</h2>\n" if h else "") + f"{_section_html(c, first)}\n" for h, c in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f"<title>{esc(title)}</title><style>{CSS}</style></head>\n"
            f"<body><h1>{esc(title)}</h1>\n<p class=\"caption\">{esc(caption)}</p>\n{body}</body></html>\n")


_REMOTE = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I)


def remote_references(html: str) -> list[str]:
    """Tags that would fetch something from the network (should be empty for every export)."""
    return [m.group(0) for m in _REMOTE.finditer(html)]


def file_stem(name: str) -> str:
    """A name safe as a file name on every system (letters, digits, `_ . -`; "export" when nothing is left)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.") or "export"


def write_bundle(folder: str | Path, name: str, obj: Any, table: pd.DataFrame | Sequence[dict] | None,
                 html: str) -> list[Path]:
    """Write name.json, name.csv (when a table is given) and name.html into a folder; returns the paths."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    safe = file_stem(name)
    paths = [out / f"{safe}.json"]
    paths[0].write_text(to_json(obj), encoding="utf-8")
    if table is not None:
        paths.append(out / f"{safe}.csv")
        paths[-1].write_text(to_csv(table), encoding="utf-8")
    paths.append(out / f"{safe}.html")
    paths[-1].write_text(html, encoding="utf-8")
    return paths
