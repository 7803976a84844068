"""Tables, HTML and text of a memory diff (memcore.memory_diff): counts per kind, the changed items with
their causes, one item's word diff, and the summary the CLI prints."""

from __future__ import annotations

import pandas as pd

from memcore.memory_diff import CHANGES, Cause, ItemChange, MemoryDiff
from memcore.viz.safe import esc, shorten

__all__ = ["cause_text", "changes_frame", "counts_frame", "headline", "summary_text", "word_diff_html"]

_SIGN = {"added": "+", "changed": "~", "removed": "-"}


def headline(d: MemoryDiff) -> str:
    """One plain sentence: what is compared and how much changed (an empty diff said as such)."""
    if d.mode == "steps":
        what = f"{d.a.system} on {d.conv_id} from step {d.a.step} to step {d.b.step}"
    else:
        what = f"{d.b.label} against {d.a.label} on {d.conv_id} at step {d.a.step}"
    if not d.kinds:
        return f"{what}: no memory items on either side (nothing to compare)."
    if d.empty:
        return (f"{what}: nothing changed." if d.mode == "steps"
                else f"{what}: the two memories hold the same items.")
    tot = {c: sum(n[c] for n in d.counts().values()) for c in CHANGES}
    return f"{what}: {tot['added']} added, {tot['changed']} changed, {tot['removed']} removed."


def counts_frame(d: MemoryDiff) -> pd.DataFrame:
    """One row per memory kind: added, changed, removed, unchanged."""
    return pd.DataFrame([{"kind": k, **n} for k, n in d.counts().items()],
                        columns=["kind", *CHANGES, "unchanged"])


def cause_text(c: Cause) -> str:
    """`[A ]step 13 · turn 13 (D1:13) · created: <reason>; linked: <reason>` (plain text)."""
    events = "; ".join(f"{e['kind']}: {e['reason']}" for e in c.events) or "no stored event names this item here"
    return f"{c.side + ' ' if c.side else ''}step {c.step} · {c.turn} · {events}"


def changes_frame(d: MemoryDiff, kinds: list[str] | None = None) -> pd.DataFrame:
    """One row per added, changed or removed item: kind, change, id, step(s), turn(s), events, text (shortened)."""
    rows = []
    for kind, items in d.changes.items():
        if kinds is not None and kind not in kinds:
            continue
        for c in items:
            rows.append({"kind": kind, "change": c.change, "item": c.item_id,
                         "step": ", ".join(f"{x.side + ' ' if x.side else ''}{x.step}" for x in c.causes),
                         "turn": ", ".join(dict.fromkeys(x.turn for x in c.causes)),
                         "event": "; ".join(dict.fromkeys(e["kind"] for x in c.causes for e in x.events)),
                         "text": shorten(c.after if c.after is not None else c.before, 160)})
    return pd.DataFrame(rows, columns=["kind", "change", "item", "step", "turn", "event", "text"])


_STYLE = {"-": "background:#fde2e2;color:#8a1c1c;text-decoration:line-through",
          "+": "background:#dcf5dc;color:#145214"}


def word_diff_html(c: ItemChange) -> str:
    """The item's text as HTML (escaped): for a changed item two lines, before (removed words struck through
    in red) and after (added words in green); else its one text."""
    if c.change != "changed":
        return f"<div>{esc(c.after if c.after is not None else c.before)}</div>"

    def line(keep: str, label: str) -> str:
        body = "".join(esc(t) if op == "=" else f'<span style="{_STYLE[op]}">{esc(t)}</span>'
                       for op, t in c.diff if op in ("=", keep))
        return f"<div><b>{label}</b> {body}</div>"

    return line("-", "before:") + line("+", "after:")


def summary_text(d: MemoryDiff, max_items: int | None = None) -> str:
    """The readable summary `memcore diff` prints: the headline, notes, counts per kind, then per kind every
    changed item (`+` added, `~` changed with an inline word diff, `-` removed) with its causes."""
    lines = [headline(d)]
    if d.mode == "memories":
        lines += [f"  A: {d.a.label} (memory {d.a.space})", f"  B: {d.b.label} (memory {d.b.space})"]
    lines += [f"note: {n}" for n in d.notes]
    if d.kinds:
        lines.append("")
        lines.append(f"{'kind':12s} {'added':>6s} {'changed':>8s} {'removed':>8s} {'unchanged':>10s}")
        for k, n in d.counts().items():
            lines.append(f"{k:12s} {n['added']:6d} {n['changed']:8d} {n['removed']:8d} {n['unchanged']:10d}")
    for kind, items in d.changes.items():
        if not items:
            continue
        lines.append(f"\n{kind}:")
        shown = items if max_items is None else items[:max_items]
        for c in shown:
            if c.change == "changed":
                lines += [f"  ~ {c.item_id}:", f"      before: {c.before}", f"      after:  {c.after}"]
                if c.fields:
                    lines.append(f"      also changed: {', '.join(c.fields)}")
            else:
                lines.append(f"  {_SIGN[c.change]} {c.item_id}: {c.after if c.after is not None else c.before}")
            lines += [f"      {cause_text(x)}" for x in c.causes]
        if len(shown) < len(items):
            lines.append(f"  ... and {len(items) - len(shown)} more {kind} change(s) (--limit 0 lists all)")
    return "\n".join(lines)
