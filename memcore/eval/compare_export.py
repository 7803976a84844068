"""A run comparison (memcore.eval.compare.compare_runs) as JSON, HTML (every data text escaped) and text."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from memcore.errors import ConfigError
from memcore.eval.beam_scores import DATASET_SCORES
from memcore.eval.compare import delta_scores

__all__ = ["comparison_html", "comparison_text", "delta_frame", "delta_text", "mcnemar_text", "pair_heading",
           "write_comparison"]


def _num(v: Any) -> str:
    return "-" if v is None else f"{v:+.3f}" if isinstance(v, float) else str(v)


def delta_text(d: dict | None) -> str:
    """'+0.034 [-0.010, +0.080]' with a '*' when the interval excludes 0."""
    if not d or d.get("delta") is None:
        return "-"
    ci = f" [{_num(d['lo'])}, {_num(d['hi'])}]" if d.get("lo") is not None else ""
    return f"{_num(d['delta'])}{ci}{' *' if d.get('separated') else ''}"


def mcnemar_text(m: dict) -> str:
    return f"{m['right_to_wrong']} R->W, {m['wrong_to_right']} W->R, p={m['p_value']:.3g}"


def delta_frame(system: dict[str, Any]) -> pd.DataFrame:
    """One row per category and overall: n, each delta (B - A) with its 95% interval ('*' = excludes 0), McNemar
    (the Compare runs page draws it: memcore.viz.run_diff draws the flips)."""
    rows = []
    for key, block in [("overall", system["overall"]), *system["categories"].items()]:
        row: dict[str, Any] = {"category": "overall" if key == "overall" else str(block.get("name", key)),
                               "n": block["n"]}
        for m in delta_scores():
            if block.get(m):
                row[f"Δ {m}"] = delta_text(block[m])
        row["McNemar"] = mcnemar_text(block["mcnemar"])
        rows.append(row)
    return pd.DataFrame(rows)


def pair_heading(report: dict[str, Any], name: str) -> str:
    """A compared pair named by both sides: 'X (A) against Y (B)', or 'X (A and B)' for one configuration; each
    side as its run ran it (report[side]["ran_as"], when the run records were read), else its result set's name."""
    s = report["systems"][name]
    a, b = s.get("a_name", name), s.get("b_name", name)
    ran_a, ran_b = (report["a"].get("ran_as") or {}).get(a, a), (report["b"].get("ran_as") or {}).get(b, b)
    return f"{ran_a} (A and B)" if ran_a == ran_b else f"{ran_a} (A) against {ran_b} (B)"


def comparison_text(report: dict[str, Any]) -> str:
    """Plain text: both runs (with what they ran, when known), then per compared pair (headed by both sides'
    names) and category, n, the deltas (B - A) and McNemar; then the flip counts."""
    lines = [f"{side.upper()} = {report[side]['label']}" + (f"  ({report[side]['description']})"
                                                            if report[side].get("description") else "")
             for side in ("a", "b")]
    lines.append("deltas B - A, 95% paired bootstrap; * = interval excludes 0")
    for name, s in report["systems"].items():
        lines.append(f"\n{pair_heading(report, name)}  (only in A: {s['only_a']}, only in B: {s['only_b']})")
        if s.get("judge_comparable") is False:
            lines.append(f"  JUDGES DIFFER (A: {', '.join(s['judge_ids']['a']) or 'none'}; B: "
                         f"{', '.join(s['judge_ids']['b']) or 'none'}): judge scores are not compared")
        for key, block in [("overall", s["overall"]), *s["categories"].items()]:
            lines.append(f"  {key:8s} n={block['n']:4d}  " + "  ".join(
                f"{m} {delta_text(block.get(m))}" for m in ("f1", "judge", "rubric_judge", "rubric_rule", "plus_judge",
                                                            "content_recall", "context_tokens")
                if block.get(m) and (m not in DATASET_SCORES or block[m].get("delta") is not None)) + f"  McNemar: {mcnemar_text(block['mcnemar'])}")
        lines.append(f"  flipped: {len(s['flips'])} question(s)")
    return "\n".join(lines)


def _evidence(side: dict) -> str:
    parts = []
    for tid, ev in side["evidence"].items():
        content = {True: "content in", False: "content out", None: "content n/a"}[ev["content"]]
        parts.append(f"{html.escape(tid)}: {'cited' if ev['cited'] else 'not cited'}, {content}")
    lost = [f"{html.escape(m['turn_id'])} lost at {html.escape(str(m['stage'] or m['status']))}" for m in side["missed"]]
    notes = [html.escape(str(n)) for n in side.get("notes") or []]
    return "<br>".join(parts + lost + ([f"notes: {'; '.join(notes)}"] if notes else []))


def comparison_html(report: dict[str, Any]) -> str:
    """A self-contained HTML page: tables of deltas per system and category, then each flipped question
    with both answers and evidence side by side. Every text from data is HTML-escaped."""
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>memcore compare</title><style>"
           "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0}"
           "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px;vertical-align:top}.sep{font-weight:bold}"
           "</style></head><body>",
           f"<h1>B: {e(report['b']['label'])} vs A: {e(report['a']['label'])}</h1>",
           *(f"<p>{side.upper()}: {e(report[side]['description'])}</p>" for side in ("a", "b")
             if report[side].get("description")),
           "<p>Deltas are B - A over the questions both runs answered, with 95% paired bootstrap intervals; "
           "bold = the interval excludes 0. McNemar: exact binomial test on the flipped verdicts.</p>"]
    cols = delta_scores()
    for name, s in report["systems"].items():
        if s.get("judge_comparable") is False:
            out.append(f"<p><b>Judges differ</b> (A: {e(', '.join(s['judge_ids']['a']) or 'none')}; B: "
                       f"{e(', '.join(s['judge_ids']['b']) or 'none')}): judge scores are not compared.</p>")
        out.append(f"<h2>{e(pair_heading(report, name))}</h2><table><tr><th>category</th><th>n</th>"
                   + "".join(f"<th>{e(m)}</th>" for m in cols) + "<th>McNemar</th></tr>")
        for key, block in [("overall", s["overall"]), *s["categories"].items()]:
            label = block.get("name", key) if key != "overall" else "overall"
            cells = "".join(f"<td class='{'sep' if (block.get(m) or {}).get('separated') else ''}'>"
                            f"{e(delta_text(block.get(m)))}</td>" for m in cols)
            out.append(f"<tr><td>{e(str(label))}</td><td>{block['n']}</td>{cells}<td>{e(mcnemar_text(block['mcnemar']))}</td></tr>")
        out.append(f"</table><h3>Flipped questions ({len(s['flips'])})</h3><table><tr><th>question</th>"
                   "<th>gold</th><th>A</th><th>B</th></tr>")
        for f in s["flips"]:
            cells = "".join(f"<td>{e(str(f[k]['prediction']))} ({'right' if f[k]['correct'] else 'wrong'})"
                            f"<br><small>{_evidence(f[k])}</small></td>" for k in ("a", "b"))
            out.append(f"<tr><td>{e(str(f['question_id']))} [{e(f['direction'])}]<br>{e(str(f['question']))}</td>"
                       f"<td>{e(str(f['gold']))}</td>{cells}</tr>")
        out.append("</table>")
    return "\n".join(out + ["</body></html>"])


def write_comparison(report: dict[str, Any], json_path: str | Path | None = None,
                     html_path: str | Path | None = None) -> list[Path]:
    """Write the comparison as JSON and/or HTML; returns the paths written. A path that cannot be written is a
    ConfigError naming it and the fix (the other file, when written first, stays)."""
    written = []
    for path, flag, text in ((json_path, "-o/--out", lambda: json.dumps(report, indent=2, default=str)),
                             (html_path, "--html", lambda: comparison_html(report))):
        if not path:
            continue
        p = Path(path)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text(), encoding="utf-8")
        except OSError as err:
            done = f" ({', '.join(map(str, written))} written)" if written else ""
            raise ConfigError(f"cannot write {flag} {str(p)!r}: {err.strerror or err}{done}. Fix: choose a "
                              f"writable path, or {flag.split('/')[-1]} '' for none") from None
        written.append(p)
    return written
