"""Shared Streamlit widgets: sidebar status, provider form, dataset loader, job progress, text."""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from memcore.datasets.checks import DatasetWarning
from memcore.llm.redact import redact
from memcore.retrievers import builtin_retrievers, retriever_names
from memcore.systems import builtin_systems
from memcore.types import Conversation, Question
from memcore.viz.safe import md_escape
from memcore.viz.views import picked, view_order
from memcore.workbench import Workbench
from ui import fixes, jobs, nav, provider, state

FORMATS = ("auto", "locomo", "longmemeval", "jsonl", "beam", "locomo-plus")
CARDS_PER_ROW = 3  # Compare's answer cards: at 1280 px each card keeps a system name and a badge on one line


def text(s: str) -> None:
    """Conversation or memory text shown literally (Markdown syntax and HTML escaped)."""
    st.markdown(md_escape(s))


def text_table(df: Any) -> None:
    """A small static table of text from data (st.table renders Markdown: every cell is escaped and shown as text,
    on one line); no data grid, so a step that redraws it costs no canvas."""
    st.table(df.map(lambda v: md_escape(str(v)).replace("  \n", " ")), hide_index=True, border="horizontal")


def grid(n: int, per_row: int) -> list:
    """n equal cells in rows of at most `per_row` columns (a last, shorter row keeps the same cell width), so
    that cards and metrics of many systems wrap onto several rows instead of shrinking until names split."""
    cells: list = []
    for start in range(0, n, per_row):
        cells.extend(st.columns(per_row)[:min(per_row, n - start)])
    return cells


def sidebar_status() -> None:
    """Store, provider and conversation in the sidebar of every page."""
    with st.sidebar:
        try:
            wb = state.workbench()
        except Exception as e:
            st.error(md_escape(fixes.in_app(f"memcore is not ready: {e}")))
            return
        opts = wb.llm.options()  # e.g. unusable=fallback: part of every memory and run id, so named here too
        st.caption(f"**LLM:** {md_escape(wb.provider_label)}" + (f" · {md_escape(', '.join(opts))}" if opts else ""))
        if st.session_state.get(provider.FELL_BACK):  # the chosen provider broke: say so on every page
            st.warning("The chosen LLM provider could not start: this session runs on the offline engine.")
            st.page_link(nav.page(nav.HOME).path, label="See why, and choose again", icon=":material/settings:")
        st.caption(f"**Store:** `{redact(wb.store.uri)}` · **Embedder:** {md_escape(wb.embedder.name)}")
        conv_id = state.current_conv_id(wb)
        if missing := state.missing_linked_conv():  # a link to a conversation this store lacks: never silently
            st.warning(md_escape(f"The link names conversation {missing}, which this store does not hold")
                       + (f"; showing {md_escape(conv_id)} instead." if conv_id else ".")
                       + " Load its file on Home.")
        if conv_id:
            st.caption(f"**Conversation:** {md_escape(conv_id)}")


def dataset_loader(wb: Workbench) -> None:
    """Load the demo, an uploaded file or a path; the loaded conversations are stored."""
    c1, c2 = st.columns([1, 2])
    if c1.button("Load the built-in demo", type="primary", icon=":material/play_circle:"):
        conv = wb.load_demo()
        st.session_state.pop(state.LOADED_FILE, None)  # Benchmark defaults to the demo again
        _switch_to([conv], f"Demo loaded: {len(conv.turns)} turns, {len(conv.questions)} questions.")
    if msg := st.session_state.pop("_load_msg", None):
        st.success(msg)  # left by _switch_to before its rerun (already escaped)
    if warned := st.session_state.pop("_load_warn", None):
        st.warning(warned)  # a lenient load's accepted problems (already escaped)
    with c2.expander("Load a dataset file (LoCoMo, LongMemEval, BEAM, LoCoMo-Plus, JSONL chat log)"):
        fmt = st.selectbox("Format", FORMATS, help="auto detects the format from the file's content; a BEAM chat is "
                           "best given as its folder's path (its questions are in probing_questions/); LoCoMo-Plus "
                           "is stitched into $MEMCORE_LOCOMO_FILE or the locomo10.json found beside it")
        up = st.file_uploader("Upload", type=["json", "jsonl", "ndjson"])
        path = st.text_input("…or a path on the server (a file, or a BEAM chat folder)",
                             placeholder="../shared/datasets/locomo/locomo10.json")
        lenient = st.checkbox("Accept format problems", help="load a file with missing sessions, empty turns or "
                              "evidence naming no turn (each problem is shown as a warning) instead of refusing it")
        if st.button("Load file"):
            _load(wb, up, path, None if fmt == "auto" else fmt, lenient)


def _load(wb: Workbench, up, path: str, fmt: str | None, lenient: bool = False) -> None:
    name = Path(up.name).name if up is not None else path.strip()
    tmp = ""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", category=DatasetWarning)
            if up is not None:  # kept in this process's uploads folder: a Benchmark run reads it again
                tmp = tempfile.mkdtemp(dir=state.uploads_dir())
                p = Path(tmp) / name
                p.write_bytes(up.getvalue())
                convs = wb.load(p, fmt, lenient=lenient)
            elif name:
                convs = wb.load(name, fmt, lenient=lenient)
            else:
                st.warning("Choose a file to upload or type a path.")
                return
        warned = [str(w.message).replace(str(Path(tmp) / name), name) if tmp else str(w.message)
                  for w in caught if issubclass(w.category, DatasetWarning)]
        if warned:
            st.session_state["_load_warn"] = md_escape("Accepted with problems: " + " ".join(warned))
    except Exception as e:
        msg = str(e)  # an upload is named by its file name, never by the temporary copy's path
        msg = msg.replace(str(Path(tmp) / name), name).replace(tmp, "") if tmp else msg
        st.error(md_escape(fixes.in_app(msg)))
        return
    if not convs:
        st.warning(md_escape(f"{name} holds no conversation."))
        return
    state.remember_loaded_file(name, str(Path(tmp) / name) if tmp else name, fmt, lenient, [c.id for c in convs])
    more = f" (and {len(convs) - 10} more)" if len(convs) > 10 else ""
    _switch_to(convs, f"Loaded {len(convs)} conversation(s) from {name}: "
                      f"{', '.join(c.id for c in convs[:10])}{more}. Current: {convs[0].id}.")


def _switch_to(convs: list[Conversation], message: str) -> None:
    """Make the first loaded conversation the current one everywhere (picker, counts, sidebar) and rerun."""
    for c in convs:
        state.forget_conversation(c.id)
    state.make_current(convs[0].id)  # every page, link and the sidebar follow (the picker included)
    st.session_state["_load_msg"] = md_escape(message)
    st.rerun()


_PICK = "_conv_pick"


def conversation_picker(wb: Workbench) -> Conversation | None:
    """Select among stored conversations; returns the current one (state.current_conv_id), which a pick changes
    for every page."""
    conv = state.current_conversation(wb)
    if conv is None:
        return None  # the page says what to do (no_conversation)
    # the widget shows the session's current conversation on every page: its own value would not survive a page
    # switch (Streamlit drops the state of a widget that stops being drawn) and came back as the first option
    st.session_state[_PICK] = conv.id
    st.selectbox("Conversation", list(wb.store.conversations()["conv_id"]), key=_PICK, on_change=_picked)
    state.url_set(conv=conv.id)
    return conv


def _picked() -> None:
    state.make_current(st.session_state[_PICK])


def no_conversation() -> None:
    """Say that no conversation is loaded yet, link Home, and stop the page."""
    st.info("No conversation yet: load the built-in demo or a dataset file on Home first.")
    st.page_link(nav.page(nav.HOME).path, label="Go to Home", icon=":material/home:")
    st.stop()


def systems() -> list[str]:
    """Registered systems in display order (their views' ranks, memcore.viz.views)."""
    return view_order(Workbench.systems())


def default_systems(page: str) -> list[str]:
    """The systems a page's picker starts with (their views' `picks`: "ask", "replay", ...)."""
    return picked(Workbench.systems(), page)


def system_label(name: str) -> str:
    """A system's name as listed: a plugin's says so."""
    return name if name in builtin_systems() else f"{name} (plugin)"


def retriever_label(name: str) -> str:
    """A retriever's name as listed: dense is the papers' mode, a plugin's says so."""
    return f"{name} (paper mode)" if name == "dense" else (name if name in builtin_retrievers() else f"{name} (plugin)")


def retriever_picker(key: str) -> str:
    """Dense (the papers' mode, default), lexical, hybrid or a plugin's retriever (memcore.retrievers)."""
    names = list(retriever_names())
    state.url_seed(key, "retriever", names)
    pick = segmented(
        "Retriever", names, key, "dense", format_func=retriever_label,
        help="How systems search the store for this question: dense (cosine, the papers' setting), lexical (BM25) "
             "or hybrid (RRF of both). Memory is built once; the retriever only changes the search.")
    state.url_set(retriever=None if pick == "dense" else pick)
    return pick


def segmented(label: str, options: Sequence[str], key: str, default: str, **kw: Any) -> str:
    """st.segmented_control whose active choice stays chosen when clicked again (Streamlit would deselect it and
    the page fell back to the default while showing nothing selected)."""
    last = f"_{key}_last"

    def keep() -> None:
        if st.session_state.get(key) is None:
            st.session_state[key] = st.session_state.get(last) if st.session_state.get(last) in options else default

    pick = st.segmented_control(label, options, key=key, on_change=keep,
                                default=None if key in st.session_state else default, **kw)
    st.session_state[last] = pick = pick if pick is not None else default
    return pick


def question_picker(conv: Conversation, key: str) -> Question | None:
    """A dataset question or free text."""
    if st.query_params.get("text") and f"{key}_mode" not in st.session_state:
        st.session_state[f"{key}_mode"] = "free text"  # a link with ?text= opens its free-text question
    state.url_seed(f"{key}_free", "text")
    mode = segmented("Question", ["dataset question", "free text"], f"{key}_mode", "dataset question")
    if mode == "free text" or not conv.questions:
        q = st.text_input("Your question", key=f"{key}_free")
        state.url_set(q=None, text=q.strip() or None)
        return Question(id="adhoc", conv_id=conv.id, text=q, answer="") if q.strip() else None
    labels = {q.id: f"[{q.category_name}] {q.text}" for q in conv.questions}
    state.url_seed(f"{key}_pick", "q", list(labels))
    qid = st.selectbox("Pick a question", list(labels), format_func=labels.__getitem__, key=f"{key}_pick")
    state.url_set(q=qid, text=None)
    return next(q for q in conv.questions if q.id == qid)


def ingest_panel(wb: Workbench, conv: Conversation, systems: list[str]) -> bool:
    """Status of each system's memory, a build button with progress and cancel; True when all built.

    Drawn in one container whatever it shows (progress, an outcome, a button, nothing), so what follows it keeps its
    place on the page: a fragment's id is its place, and Replay's step viewer, drawn below while a build runs, must
    keep its id when the build ends and reruns the page (else a step picked then is dropped as an unknown fragment).
    """
    with st.container():
        return _ingest_panel(wb, conv, systems)


def _ingest_panel(wb: Workbench, conv: Conversation, systems: list[str]) -> bool:
    status = {s: state.ingest_status(wb, s, conv) for s in systems}
    todo = [s for s, (_, done) in status.items() if not done]
    job = jobs.get(state.ingest_job_id(conv))
    if job is not None and job.running:
        job_progress(job.id)
        return False
    job_outcome(job)
    if todo:
        parts = [f"{s} ({step}/{len(conv.turns)})" for s, (step, _) in status.items() if s in todo]
        st.info("Memory not built yet for: " + ", ".join(parts))
        if st.button(f"Build memory ({len(todo)} system(s))", type="primary", icon=":material/construction:"):
            state.start_ingest(wb, todo, conv)
            st.rerun()
        return False
    return True


def job_outcome(job: jobs.Job | None) -> None:
    """A failed job's error (fix texts in the app's words) or a cancelled job's message; nothing otherwise."""
    if job is not None and job.status in (jobs.FAILED, jobs.CANCELLED):
        (st.error if job.status == jobs.FAILED else st.warning)(
            md_escape(fixes.in_app(f"{job.title}: {job.error or job.message}")))


@st.fragment(run_every=1.0)
def job_progress(job_id: str) -> None:
    """Progress bar and Cancel button of a background job (refreshes every second; reruns the page at the end):
    the step in progress in the units it processes, with the time left in it and, when the bar covers more than
    the step, the bar's share and the time left in all, each named (ui.jobs.Job.progress_text)."""
    job = jobs.get(job_id)
    if job is None:
        return
    if not job.running:
        st.rerun()
    st.progress(job.fraction, text=md_escape(job.progress_text()))
    if st.button("Cancel", icon=":material/stop_circle:", key=f"cancel_{job_id}"):
        job.cancel()
        st.toast("Stopping after the next commit; what is built so far is kept.")


def answers_for(wb: Workbench, conv: Conversation, q: Question, systems: Sequence[str],
                retriever: str = "dense") -> dict:
    """Each system's answer to one question with a retriever (a failing system is reported, the others shown)."""
    answers = {}
    for name in systems:
        with st.spinner(f"{name} is answering…"):
            try:
                answers[name] = state.ask(wb, name, conv, q, retriever)
            except Exception as e:
                st.error(md_escape(fixes.in_app(f"{name} failed: {e}")))
    return answers
