"""Ask and Compare sections: the gold panel, a card per system whose memory is not built (nothing builds
without a click), the verdict of an answer on a dataset question, and one answer panel per system."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from memcore.errors import MemcoreError
from memcore.eval.diagnostics import evidence_hits, locate_missed_evidence
from memcore.eval.fallbacks import GOLD_LABEL_TEXT
from memcore.eval.fallbacks import answer_marks as answer_marks_of
from memcore.eval.judge import make_judge
from memcore.eval.metrics import locomo_f1
from memcore.types import Answer, Conversation, Question, Trace
from memcore.viz.evidence import context_table, evidence_table, missed_table, verdict_text
from memcore.viz.safe import md_escape
from memcore.viz.vega import kind_count_spec
from memcore.viz.views import get_view
from memcore.workbench import Workbench
from ui import cost_view, jobs, render, settings_panel, state, widgets
from ui.calls_view import calls_panel
from ui.embedding_map_view import map_panel, open_in_explore
from ui.nav import ASK as ASK_PAGE
from ui.nav import page
from ui.structure_view import structure_view, turn_texts
from ui.variant_names import label as variant_label

# Ask's and Compare's summary table at 1280 px: these columns (short headers, the full name in the help), the rest
# one click away; "error" joins them when an answer failed.
SUMMARY_COLUMNS: dict[str, tuple[str, int, str]] = {
    "system": ("system", 120, "The system or variant that answered."),
    "fallback": ("fallback", 100, "The fallback path behind the answer ('none': its own retrieval). An answer from a "
                                  "fallback context gets no evidence recall: its retrieval found nothing."),
    "evidence hits": ("hits", 70, "Evidence hits: gold evidence turns in the context, of the question's gold turns."),
    "evidence recall": ("recall", 64, "Evidence recall: the share of gold evidence turns the retrieval found ('-': "
                                      "no gold evidence, or a fallback context)."),
    "verdict": ("verdict", 90, "The answer's verdict against the gold answer."),
    "F1": ("F1", 52, "Token F1 of the answer against the gold answer."),
    "answer": ("answer", 220, "The system's answer."),
    "context tokens": ("ctx tokens", 80, "Context tokens: the size of the context handed to the reader."),
    "error": ("error", 160, "Why the answer failed (nothing from a failed call is shown as an answer)."),
}


def summary_table(rows: list[dict[str, Any]], key: str) -> None:
    """The per-system summary (memcore.eval.answer_rows.answer_summary rows) fitting a 1280 px page: the main
    columns with short headers (their full names in the help), the fallback column always among them, the error
    column when an answer failed; every column one click away, in an expander."""
    df = pd.DataFrame(rows)
    failed = "error" in df.columns and df["error"].fillna("").astype(str).str.strip().ne("").any()
    shown = [c for c in SUMMARY_COLUMNS if c in df.columns and (c != "error" or failed)]
    config = {c: st.column_config.Column(label, width=w, help=h) for c, (label, w, h) in SUMMARY_COLUMNS.items()
              if c in df.columns}
    render.table(df, column_order=shown, column_config=config, key=f"{key}_summary")
    rest = [c for c in df.columns if c not in shown]
    if rest:
        with st.expander(f"All columns (also {', '.join(rest)})"):
            render.table(df, key=f"{key}_summary_all")


def gold_panel(conv: Conversation, q: Question) -> None:
    """The dataset's gold answer and evidence turns."""
    if not q.answer and not q.evidence:
        return
    st.markdown(f"**Gold answer:** {md_escape(q.answer)} · category {md_escape(q.category_name)}")
    wanted = set(q.evidence)  # the evidence turns' texts only (every turn's: 0.2 s on the 10M chat, per conversation)
    texts = {t.turn_id: t.embed_text for t in conv.turns if t.turn_id in wanted}
    if q.evidence:
        st.dataframe(pd.DataFrame([{"evidence turn": t, "text": texts.get(t, "(not in this conversation)")}
                                   for t in q.evidence]), hide_index=True)


def build_cards(wb: Workbench, conv: Conversation, systems: list[str], key: str) -> list[str]:
    """The chosen systems whose memory is built; a card with a Build button for each one that is not and
    "Build all selected" when several are not (memory is built only on a click), and the build's progress
    while it runs."""
    status = {s: state.ingest_status(wb, s, conv) for s in systems}
    job = jobs.get(state.ingest_job_id(conv))
    running = job is not None and job.running
    if running:
        widgets.job_progress(job.id)
    else:
        widgets.job_outcome(job)
    todo = [s for s, (_, done) in status.items() if not done]
    if len(todo) > 1 and st.button(f"Build all selected ({len(todo)} systems)", key=f"{key}_build_all",
                                   icon=":material/construction:", type="primary", disabled=running,
                                   help="Builds the memory of every selected system not built yet, one after "
                                        "another, with progress; Cancel keeps what is committed."):
        state.start_ingest(wb, todo, conv)
        st.rerun()
    if len(todo) > 1:
        cost_view.ingest_estimate(wb, conv, todo, key)
    for s in todo:
        step = status[s][0]
        with st.container(border=True, key=f"{key}_notbuilt_{s}"):
            c1, c2 = st.columns([4, 1], vertical_alignment="center")
            c1.markdown(f"**{md_escape(s)}** · memory not built ({max(step, 0)}/{len(conv.turns)} turns): "
                        "build it to ask this system.")
            if c2.button("Build", key=f"{key}_build_{s}", icon=":material/construction:", disabled=running):
                state.start_ingest(wb, [s], conv)
                st.rerun()
            cost_view.ingest_estimate(wb, conv, [s], key)
    return [s for s in systems if s not in todo]


def judge_name(wb: Workbench) -> str:
    """The judge in use, short: 'lexical judge (offline)' or the LLM judge's model."""
    _, info = _judge(wb)
    return "lexical judge (offline)" if info["kind"] == "lexical" else str(info["label"])


def _judge(wb: Workbench) -> tuple[Any, dict[str, Any]]:
    cache: dict = st.session_state.setdefault("_judges", {})
    if wb.provider_label not in cache:
        cache[wb.provider_label] = make_judge(wb, True)
    return cache[wb.provider_label]


def verdict(wb: Workbench, q: Question, ans: Answer) -> dict[str, Any] | None:
    """Correct or not by the judge in use, with the official F1; None for a question without a gold answer.
    Judged once per answer this session."""
    if not q.answer:
        return None
    cache: dict = st.session_state.setdefault("_verdicts", {})
    if id(ans) not in cache:
        fn, info = _judge(wb)
        try:
            v = fn(wb.llm, q, ans.text)
        except MemcoreError as e:  # the judge's call failed for good: "not judged", with the reason
            v = {"correct": None, "reason": "", "error": str(e)}
        cache[id(ans)] = {"correct": v["correct"], "reason": v["reason"], "error": v["error"],
                          "judge": judge_name(wb), "judge_label": info["label"],
                          "f1": locomo_f1(ans.text, q.answer, q.category)}
    return cache[id(ans)]


def verdict_line(v: dict[str, Any] | None) -> str:
    """Markdown: correct / incorrect with F1 and the judge named (empty without a verdict)."""
    if v is None:
        return ""
    text = verdict_text(v)
    badge = {"correct": ":green-badge[:material/check_circle: correct]",
             "incorrect": ":red-badge[:material/cancel: incorrect]"}.get(text, ":gray-badge[not judged]")
    why = f" ({md_escape(v['error'])})" if v.get("error") and v["correct"] is None else ""
    return f"{badge} F1 {v['f1']:.2f} · by the {md_escape(v['judge'])}{why}"


def evidence_line(trace: Trace, evidence: list[str]) -> str:
    """Markdown: each gold evidence turn as hit (in the context) or miss (memcore.eval.diagnostics.evidence_hits)."""
    hits = evidence_hits(trace, evidence)
    return " ".join(f":green-badge[:material/check: hit {md_escape(t)}]" if t in hits.first_item
                    else f":red-badge[:material/close: miss {md_escape(t)}]" for t in hits.gold)


GOLD_LABEL_HEAD = "Gold label used (an oracle)"
NOTE_WORDS = 30  # a note longer than this opens with its first clause; the whole note is one click away


def answer_marks(ans: Answer) -> None:
    """The answer's fallback and gold-label marks in plain words, on its card (memcore.eval.fallbacks.answer_marks):
    a fallback as a warning; the gold label, a detail for researchers, one click away (its whole text kept)."""
    for mark in answer_marks_of(ans.trace):
        if mark == GOLD_LABEL_TEXT:
            with st.expander(GOLD_LABEL_HEAD, icon=":material/label:"):
                st.caption(md_escape(mark))
        else:
            st.warning(md_escape(mark), icon=":material/flag:" if mark.startswith("Fallback") else ":material/label:")


def note_line(note: str) -> None:
    """A trace note on an answer card: whole when short; a long one (a method's formula) as its first clause with
    the whole note one click away."""
    if len(note.split()) <= NOTE_WORDS:
        st.caption(md_escape(f"Note: {note}"))
        return
    head = note.split(";", 1)[0].split(". ", 1)[0]
    head = head if len(head.split()) <= NOTE_WORDS else " ".join(head.split()[:12]) + " …"
    with st.expander(f"Note: {md_escape(head)}", icon=":material/info:"):
        st.caption(md_escape(note))


def result_header(system: str, ans: Answer, provider: str) -> str:
    """Markdown header of a result: system, retriever, and what answered."""
    return (f"**{md_escape(system)}** · retriever **{md_escape(ans.trace.retriever)}** · "
            f"answered by {md_escape(provider)}")


def _style_hits(df: pd.DataFrame):
    def color(v: object) -> str:
        return "background-color: #D4EFE4" if str(v).startswith(("✔", "hit")) else (
            "background-color: #F8DCCB" if v == "miss" else "")
    return df.style.map(color, subset=[c for c in ("evidence", "result") if c in df.columns])


def answer_panel(wb: Workbench, conv: Conversation, q: Question, system: str, ans: Answer) -> None:
    """Evidence hit/miss first, the answer with its verdict, why evidence was missed, then context, the
    system's structure and the LLM calls behind the answer."""
    key = f"ask_{system}"
    st.markdown(result_header(variant_label(wb, system), ans, wb.provider_label))
    if q.evidence:
        st.markdown("Evidence: " + evidence_line(ans.trace, q.evidence))
    c = st.columns([3, 1, 1, 1])
    with c[0]:
        v = verdict(wb, q, ans)
        st.markdown("**Answer** " + verdict_line(v), help=v["judge_label"] if v else None)
        st.text(ans.text or "(empty)")
        answer_marks(ans)
    tokens = sum(u.total_tokens for u in ans.usage.values())
    c[1].metric("Context items", len(ans.trace.items))
    c[2].metric("Tokens", tokens)
    c[3].metric("Latency", f"{ans.latency_ms:.0f} ms")
    if ans.error:
        st.warning(md_escape(ans.error))
    for note in ans.trace.notes:
        note_line(note)
    texts = turn_texts(conv)
    if q.evidence:
        missed = missed_table(locate_missed_evidence(ans.trace, q.evidence), texts)
        if len(missed):
            st.markdown(f"**Why was it missed?** {len(missed)} of {len(q.evidence)} evidence turn(s) "
                        "did not reach the context:")
            st.dataframe(missed, hide_index=True)
            st.caption("For each missing gold turn: the stage that dropped it, its rank and score among that "
                       "stage's candidates, and the system's own reason.")
        else:
            st.success(f"All {len(q.evidence)} gold evidence turn(s) reached the context.")
        st.dataframe(_style_hits(evidence_table(evidence_hits(ans.trace, q.evidence), texts)), hide_index=True)
    calls = state.answer_calls(ans)
    # only the open inner tab is drawn (a switch reruns the page, as the system tabs do): the first draw after the
    # click then needs no structure charts, call inspector or map toggle, nor the browser code they load
    t1, t2, t3, t4 = st.tabs(["Retrieved context", "System structure", f"LLM calls ({len(calls)})", "Embedding map"],
                             key=f"{key}_tab", on_change="rerun")
    if t1.open is not False:
        with t1:
            st.dataframe(_style_hits(context_table(ans.trace, evidence_hits(ans.trace, q.evidence).gold)),
                         hide_index=True, height=320)
            st.caption("position: the order the reader got the context in; score rank: the item's rank by its score "
                       "(1 = highest).")
    if t2.open is not False:
        with t2:
            if q.evidence:  # for views that can mark the gold turns (e.g. gold nodes in a subgraph and the path)
                ans.trace.structure.setdefault("gold_evidence", list(q.evidence))
            structure_view(ans.trace.system, ans, texts, key)  # the system's view (a variant's entry is not its name)
    if t3.open is not False:
        with t3:
            calls_panel(calls, key=f"{key}_calls", provider=wb.provider_label)
    if t4.open is not False:
        with t4:
            if st.toggle("Show the question on this memory's embedding map", key=f"{key}_map"):
                open_in_explore(conv, system, map_panel(state.memory_of(wb, system, conv), conv, key, wb, q,
                                                        ans.trace))


def memory_overview(wb: Workbench, conv: Conversation, systems: list[str], key: str) -> None:
    """While the question is written: the memories to be asked, each one's stored items per kind (a chart and a
    table, read once per built step). The chart is Vega-Lite, as the answers' cost bars are (memcore.viz.vega):
    a plotly chart here had a fresh browser spend ~2 s of a 2-core machine's main thread on plotly's 4.7 MB chunk in
    Ask's first visit; plotly now loads only when an answer's structure, calls or map tab opens."""
    counts: dict[str, dict[str, int]] = {}
    failed: dict[str, str] = {}  # a memory whose counts could not be read: said in its row, the Ask still works
    steps = {s: (state.memory_of(wb, s, conv), state.ingest_status(wb, s, conv)[0]) for s in systems}
    state.read_together(*[lambda m=m, ck=ck: state.kind_counts(m, ck) for m, ck in steps.values()])  # at once
    for s, (mem, ck) in steps.items():
        try:
            counts[s] = state.kind_counts(mem, ck)
        except MemcoreError as e:
            counts[s], failed[s] = {}, str(e)
    st.markdown(f"**The memories you are asking**: what each system stored from the {len(conv.turns):,} turns")
    st.vega_lite_chart(kind_count_spec(counts), width="stretch")
    table = overview_table(counts, failed)
    st.dataframe(table, hide_index=True, key=f"{key}_memories_table",  # full width: the kinds' list is read whole
                 column_config={"system": st.column_config.TextColumn(width="small"),
                                "items": st.column_config.NumberColumn(width="small"),
                                "by kind": st.column_config.TextColumn(width="large")})


def overview_table(counts: dict[str, dict[str, int]], failed: dict[str, str]) -> pd.DataFrame:
    """memory_overview's rows: per system its items in all (None where they could not be read) and per kind, the
    kinds in name order (`failed`: system -> why its counts were not read, said in its row)."""
    return pd.DataFrame([{"system": s, "items": sum(c.values()) if s not in failed else None,
                          "by kind": f"not read: {failed[s]}" if s in failed else
                          ", ".join(f"{k} {n:,}" for k, n in sorted(c.items())) or "no items of its own in the store"}
                         for s, c in counts.items()], columns=["system", "items", "by kind"])


def default_picks(wb: Workbench, conv: Conversation, page: str, at_least: int = 1) -> list[str]:
    """The systems a page preselects: those whose memory of `conv` is built (views may opt out with
    pick_when_built=False) when there are `at_least` of them (Compare: 2), else the page's view defaults
    (the unbuilt ones then show Build cards)."""
    built = [s for s in widgets.systems() if get_view(s).pick_when_built and state.ingest_status(wb, s, conv)[1]]
    return built if len(built) >= at_least else widgets.default_systems(page)


def shown(key: str, ident: tuple, clicked: bool) -> bool:
    """Whether results for `ident` show: after their button was clicked, or opened from a link with ?run=1
    (once per session); the URL says so (?run=1) while they show."""
    opened = f"_{key}_from_url"
    if clicked or (st.query_params.get("run") == "1" and not st.session_state.get(opened)):
        st.session_state[key] = ident
    st.session_state[opened] = True
    on = st.session_state.get(key) == ident
    state.url_set(run="1" if on else None)
    return on


def ask_link(conv: Conversation, q: Question, system: str, retriever: str) -> str:
    """A relative link to Ask that reopens one system's answer to this question with its full trace."""
    params = {"conv": conv.id, **({"text": q.text} if q.id == "adhoc" else {"q": q.id}), "systems": system,
              **({"retriever": retriever} if retriever != "dense" else {}), "run": "1"}
    return f"{page(ASK_PAGE).url_path}?{urlencode(params)}"


def question_flow(wb: Workbench, conv: Conversation, q: Question, *, key: str, page_name: str, verb: str,
                  icon: str, at_least: int = 1,
                  overview: bool = False) -> tuple[dict[str, Answer], dict[str, dict[str, Any] | None], str]:
    """The question flow Ask and Compare share, below the question: the systems (variant picker, at least
    `at_least` picked by default for `page_name`), the retriever, the settings panel, the build cards, the `verb`
    button (with `overview`, the built memories' sizes below it until clicked: memory_overview); once clicked (and while the question, systems' answers and retriever stay the same), every built
    system's answer and verdict, under a caption naming the provider, the retriever and the judge. Stops the page
    where there is nothing to show (no built system, not asked yet, no answer). Widget keys start with `key`.
    Returns (answers, verdicts, retriever)."""
    picks = default_picks(wb, conv, page_name, at_least=at_least)
    systems = settings_panel.variant_picker(wb, "Systems", picks, key=f"{key}_systems")
    retriever = widgets.retriever_picker(f"{key}_retriever")
    settings_panel.settings_panel(wb, f"{key}_systems", systems, conv)
    built = build_cards(wb, conv, systems, key=key) if systems else []
    if not built:
        st.info(f"Choose at least one system whose memory is built (or build one above) to {verb.lower()}.")
        st.stop()
    clicked = st.button(verb, type="primary", icon=icon)
    if not shown(f"{key}_active", (conv.id, q.id, q.text, retriever), clicked):
        if overview:
            memory_overview(wb, conv, built, key)
        # their memories restored while the question is written (not on the click), started once the page is drawn:
        # a restore thread started before the overview competed with it for the interpreter (the 10M chat's first
        # Ask visit)
        state.hold_ahead(wb, conv, built)
        st.stop()
    state.hold_ahead(wb, conv, built)  # clicked at once (a link with ?run=1): the ask waits for a restore under way
    answers = widgets.answers_for(wb, conv, q, built, retriever)
    if not answers:
        st.stop()
    verdicts = {s: verdict(wb, q, a) for s, a in answers.items()}
    st.caption(f"Answers by: **{md_escape(wb.provider_label)}** · retriever: **{md_escape(retriever)}**"
               + (f" · verdicts by the **{md_escape(judge_name(wb))}**" if q.answer else ""))
    return answers, verdicts, retriever
