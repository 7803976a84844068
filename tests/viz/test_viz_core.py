"""memcore.viz basics: escaping, theme, replay aggregates and their figures."""

from __future__ import annotations

import html
import json
import re
import unicodedata

import pandas as pd
import plotly.graph_objects as go

from memcore.types import Event
from memcore.viz.replay import (
    build_replay,
    calls_by_step,
    counts_by_step,
    cumulative_cost_figure,
    event_strip_figure,
    events_frame,
    layer_counts_figure,
)
from memcore.viz.safe import esc, md_escape, script_json, shorten
from memcore.viz.theme import kind_color
from memcore.viz.views import has_view, system_color

XSS = "<script>alert('x')</script>"


def test_esc_and_md_escape_make_script_inert():
    assert "<script>" not in esc(XSS)
    assert esc(XSS).startswith("&lt;script&gt;")
    md = md_escape(f"{XSS} ![img](http://example.com/x.png) [link](http://e.com) **bold**")
    assert "<script>" not in md and "![img](" not in md and "](http" not in md and "**" not in md
    assert "\\<script\\>" in md


def test_esc_uses_only_entities_plotly_decodes():
    """Plotly's hover text decodes numeric entities and only a few named ones (amp, lt, gt, nbsp, ...): a quote as
    `&quot;` showed as typed on the embedding map's hover of a BEAM message ("&quot;TimeoutError...")."""
    out = esc('He said "hi" & it\'s <b>')
    assert "&quot;" not in out and '"' not in out and "'" not in out and "<" not in out
    named = set(re.findall(r"&([a-z]+);", out))
    assert named <= {"amp", "lt", "gt"}, named
    assert html.unescape(out) == 'He said "hi" & it\'s <b>'


CODE_SPAN = re.compile(r"(`+) ?(.*?) ?\1(?!`)")


def test_md_escape_breaks_autolinks_without_invisible_characters():
    # what remark-gfm links in the text outside code spans, once escapes are removed
    autolink = re.compile(r"(https?|ftp)://\w|www\.|\w@\w", re.I)
    for text in ("see https://e.com now", "www.e.com", "mail a@b.com", "ftp://x.org/a_b", "_www.e.com",
                 "(see https://en.wikipedia.org/wiki/A_(b)).", "openai gpt-4o @ http://u:***@127.0.0.1:9/v1?k=`x`",
                 "[x](https://e.com)"):
        md = md_escape(text)
        assert not any(unicodedata.category(c) == "Cf" for c in md), md  # no word joiner or other invisible one
        outside = CODE_SPAN.sub(" ", md).replace("\\", "")
        assert not autolink.search(outside), md
        assert re.sub(r"\\(.)", r"\1", CODE_SPAN.sub(r"\2", md)) == text  # shown (and copied) as typed
    assert md_escape("see https://e.com.") == "see `https://e.com`\\."  # the sentence's full stop stays outside
    assert md_escape("D1:7 at 3.5 (@fast)") == "D1\\:7 at 3\\.5 \\(@fast\\)"  # no address: no code span


def test_md_escape_opens_no_indented_code_block():
    """A line indented by four spaces or a tab (code in a BEAM message) opened a Markdown code block, which showed the
    escapes as typed backslashes ("\\# Append ... \\{\\:\\.2f\\}"): no line of the escaped text starts with
    whitespace, and the text is the one given once escapes and character references are read."""
    text = ("    first line indented\nHere is code:\n\n    # Append the metrics\n    q = '{:.2f}'.format(x)\n\treturn q"
            "\n  two\n   \nok, see https://e.com    now")
    md = md_escape(text)
    lines = md.replace("  \n", "\n").split("\n")
    assert not any(re.match(r"[ \t]+\S", line) for line in lines), md  # no line indented before its text
    assert lines[2] == "" and lines[7] == "   "  # blank lines stay blank: the paragraphs are the text's
    assert "`https://e.com`    now" in md  # spaces within a line are left as they are
    assert html.unescape(re.sub(r"\\(.)", r"\1", CODE_SPAN.sub(r"\2", md))).replace("  \n", "\n") == text
    assert not any(unicodedata.category(c) == "Cf" for c in md)


def test_script_json_cannot_close_a_script_block():
    s = script_json({"t": "</script><script>alert(1)</script>"})
    assert "</script>" not in s and "<" not in s
    assert json.loads(s)["t"].startswith("</script>")


def test_shorten():
    assert shorten("a   b\nc", 10) == "a b c"
    assert shorten("x" * 20, 5) == "xxxx…"


def test_shorten_reads_a_prefix_and_cuts_as_collapsing_the_whole_does() -> None:
    import random

    rng = random.Random(7)
    for _ in range(3000):  # runs of whitespace longer than the first prefix read, words across its end
        text = "".join(rng.choice(["a", "bc", " ", "\n", "  " * rng.randint(1, 40), "w" * rng.randint(1, 30)])
                       for _ in range(rng.randint(0, 60)))
        n = rng.randint(1, 40)
        whole = " ".join(text.split())
        assert shorten(text, n) == (whole if len(whole) <= n else whole[: n - 1] + "…"), (text, n)


def test_every_registered_system_has_its_own_colour():
    from memcore.systems import load_all

    names = list(load_all())
    colours = [system_color(n) for n in names]
    assert all(has_view(n) for n in names)  # every built-in system declares its colour with its view
    assert len(set(colours)) == len(colours)
    assert system_color("unknown-system") == system_color("unknown-system")
    assert kind_color("episode").startswith("#")


def _versions() -> pd.DataFrame:
    return pd.DataFrame([
        {"id": "e1", "kind": "episode", "valid_from": 2, "valid_to": 5},  # replaced at 5
        {"id": "e1", "kind": "episode", "valid_from": 5, "valid_to": 2**31 - 1},
        {"id": "e2", "kind": "episode", "valid_from": 3, "valid_to": 4},  # deleted at 4
        {"id": "s1", "kind": "semantic", "valid_from": 4, "valid_to": 2**31 - 1},
    ])


def test_counts_by_step_follows_versions():
    c = counts_by_step(_versions(), 6)
    assert list(c["episode"]) == [0, 0, 1, 2, 1, 1, 1]
    assert list(c["semantic"]) == [0, 0, 0, 0, 1, 1, 1]
    assert counts_by_step(pd.DataFrame(), 3).empty


def _calls(step: bool) -> pd.DataFrame:
    df = pd.DataFrame({"ts": [1.0, 2.0, 3.0, 4.0], "prompt_tokens": [10, 10, 10, 10],
                       "completion_tokens": [1, 1, 1, 1], "cache_hit": [False, False, True, False]})
    if step:
        df["step"] = [1, 1, 3, 4]
    return df


def test_calls_by_step_uses_ledger_steps():
    cost, exact = calls_by_step(_calls(True), 4)
    assert exact
    assert list(cost["tokens"]) == [0, 22, 22, 33, 44]
    assert list(cost["calls"]) == [0, 2, 2, 2, 3]  # cache hits are not calls


def test_calls_by_step_without_steps_is_flagged_approximate():
    cost, exact = calls_by_step(_calls(False), 4)
    assert not exact and cost["tokens"].iloc[-1] == 44
    rd = build_replay("x", [], _versions(), _calls(False), 4)
    assert rd.notes and not rd.cost_exact


def test_build_replay_and_figures():
    events = [Event(2, "created", ["e1"], "new episode", "xm", "c", "D1:2", "episode", {"sim": 0.8}),
              Event(4, "merged", ["e1", "e2"], "merge", "xm", "c", "D1:4", "episode")]
    rd = build_replay("xm", events, _versions(), _calls(True), 6)
    assert list(rd.events_at(4)["event"]) == ["merged"]
    assert rd.event_counts.loc[2, "created"] == 1
    for fig in (layer_counts_figure(rd, 3), cumulative_cost_figure({"xm": rd}, 3), event_strip_figure({"xm": rd}, 3)):
        assert isinstance(fig, go.Figure) and fig.data
    assert events_frame([]).empty


def test_figure_hover_text_is_escaped():
    rd = build_replay(XSS, [], _versions(), _calls(True), 6)
    fig = layer_counts_figure({XSS: rd})
    dumped = fig.to_json()
    assert "<script>" not in dumped
