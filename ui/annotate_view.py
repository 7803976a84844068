"""Annotate page pieces: the blind labelling card. Never renders a system name."""

from __future__ import annotations

import time

import streamlit as st

from memcore.annotate import AnnotationItem, Annotations, AnnotationTask
from memcore.viz.annotation import RATE_EMPTIES, rates_frame
from memcore.viz.safe import md_escape
from ui import render

CHOICES = {"helpful": ("Helpful", "h", ":material/thumb_up:"),
           "not_helpful": ("Not helpful", "n", ":material/thumb_down:"),
           "skip": ("Skip", "s", ":material/skip_next:")}


def task_label(t: AnnotationTask) -> str:
    """A task as pickers show it: name, id and the retriever its evidence was frozen with."""
    return f"{t.name} ({t.task_id}) · {t.retriever or 'unrecorded'} retriever"


def default_task(tasks: list[AnnotationTask], conv_id: str | None) -> int:
    """The index of the task a picker starts on: the newest task covering the current conversation, else the
    newest task (`tasks` newest first, as `Annotations.tasks` returns them)."""
    covering = [i for i, t in enumerate(tasks) if conv_id is not None and conv_id in t.conversations]
    newest = max(covering, key=lambda i: tasks[i].created, default=None)
    if newest is not None:
        return newest
    return max(range(len(tasks)), key=lambda i: tasks[i].created) if tasks else 0


RATE_COLUMNS = {  # the rates table's columns shown at 1280 px (~800 px of table): short header, width, help
    "system": ("system", 130, "The system whose frozen evidence was labelled."),
    "category": ("category", 110, "The question category ('all': every category together)."),
    "rate (mean of annotators)": ("rate", 60, "Helpfulness rate: the mean of the annotators' rates in this cell "
                                              f"('-': {RATE_EMPTIES['rate (mean of annotators)']})"),
    "sd": ("sd", 55, RATE_EMPTIES["sd"][1]),
    "annotators": ("annotators", 80, "Annotators who labelled at least one item in this cell."),
    "helpful (pooled)": ("helpful", 65, "Helpful labels, all annotators' labels pooled."),
    "n (pooled)": ("n", 50, "Labels given in this cell, all annotators pooled."),
    "pooled 95% interval": ("pooled 95% CI", 110, "Wilson 95% interval of the pooled helpful share."),
}


def rates_table(rates: list[dict], key: str = "rates") -> None:
    """The helpfulness rates table fitting a 1280 px page: the pooled and mean columns with short headers (full
    names in their help); each annotator's own rate (a column per annotator, which would need horizontal
    scrolling) one click away, in an expander holding every column."""
    df = rates_frame(rates)
    shown = [c for c in RATE_COLUMNS if c in df.columns]
    config = {c: st.column_config.Column(label, width=w, help=h) for c, (label, w, h) in RATE_COLUMNS.items()
              if c in df.columns}
    render.table(df, column_order=shown, column_config=config, key=f"{key}_table")
    rest = [c for c in df.columns if c not in shown]
    if rest:
        with st.expander(md_escape(f"Each annotator's rate (all columns: also {', '.join(rest)})")):
            render.table(df, key=f"{key}_table_all")


def task_header(t: AnnotationTask) -> None:
    """The chosen task's header: retriever, questions per category, seed, conversations, creation date."""
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t.created))
    retriever = t.retriever or "not recorded (task made before memcore stored it)"
    st.caption(md_escape(f"Evidence retrieved with the {retriever} retriever · {t.per_category} questions per "
                         f"category · seed {t.seed} · conversations: {', '.join(t.conversations)} · created {made}"))


def current_index(queue: list[AnnotationItem], done: dict, key: str) -> int:
    """Where this annotator is: the chosen position, else the first unlabelled item."""
    if key in st.session_state:
        return min(st.session_state[key], len(queue) - 1)
    todo = [i for i, it in enumerate(queue) if it.item_id not in done]
    return todo[0] if todo else len(queue) - 1


BLUR = """<script>
(() => {{ // run {n}: let the h/n/s/j/k shortcuts work after typing a name or a note (Enter keeps the focus)
  const a = document.activeElement;
  if (a && a.closest(".st-key-annotator, [class*='st-key-note-']")) a.blur();
}})();
</script>"""


def release_focus() -> None:
    """Take the keyboard focus out of the name and note fields, so the label shortcuts work after typing."""
    n = st.session_state["_blur_n"] = st.session_state.get("_blur_n", 0) + 1  # new body: the script runs again
    st.html(BLUR.format(n=n), unsafe_allow_javascript=True, width=1)


def card(ann: Annotations, task_id: str, annotator: str, queue: list[AnnotationItem], pos_key: str) -> None:
    """One item: question, retrieved knowledge, reference answer, and the label buttons."""
    done = {iid: lab for (iid, _), lab in ann.labels(task_id, annotator).items()}
    idx = current_index(queue, done, pos_key)
    item = queue[idx]
    n_done = sum(1 for it in queue if it.item_id in done)
    st.progress(n_done / len(queue), text=f"{n_done} of {len(queue)} labelled · item {idx + 1}")
    if n_done == len(queue):
        st.success(f"All {len(queue)} items labelled: thank you. Results are on the Annotation results page; "
                   "you can still go back (k) and change any label.", icon=":material/task_alt:")
    release_focus()
    st.markdown(f"**Question:** {md_escape(item.question)}")
    with st.container(border=True):
        st.caption("Retrieved knowledge")
        if not item.knowledge:
            st.write("(nothing was retrieved)")
        for line in item.knowledge:
            st.markdown(f"- {md_escape(line)}")
    st.markdown(f"**Reference answer:** {md_escape(item.reference)}")
    prev = done.get(item.item_id)
    if prev:
        st.info(f"Your label: {CHOICES[prev['label']][0]}" + (f" — {md_escape(prev['note'])}" if prev["note"] else ""))
    st.caption("Is the retrieved knowledge sufficient to derive the reference answer? "
               "Keys: h = helpful, n = not helpful, s = skip.")
    note = st.text_input("Note (optional)", key=f"note-{task_id}-{item.item_id}")
    cols = st.columns(5)
    for col, (label, (title, key, icon)) in zip(cols, CHOICES.items(), strict=False):
        if col.button(title, key=f"b-{label}", icon=icon, shortcut=key, type="primary" if label == "helpful" else
                      "secondary"):
            ann.label(task_id, item.item_id, annotator, label, note)
            st.session_state[pos_key] = min(idx + 1, len(queue) - 1)
            st.rerun()
    if cols[3].button("Previous", key="b-prev", icon=":material/arrow_back:", disabled=idx == 0, shortcut="k"):
        st.session_state[pos_key] = idx - 1
        st.rerun()
    if cols[4].button("Next", key="b-next", icon=":material/arrow_forward:", disabled=idx >= len(queue) - 1,
                      shortcut="j"):
        st.session_state[pos_key] = idx + 1
        st.rerun()
