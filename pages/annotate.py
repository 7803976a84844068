"""Annotate: blind helpfulness labelling (a paper's human-evaluation protocol: memcore.annotate)."""

from __future__ import annotations

import streamlit as st

from memcore.annotate import Annotations
from ui import nav, state
from ui.annotate_view import card, task_header, task_label

st.title("Annotate")
st.caption("Judge whether the knowledge a memory system retrieved is sufficient to derive the reference "
           "answer. Systems are hidden and items come in your own shuffled order; you can stop at any "
           "time and resume later, or go back and change a label.")

wb = state.workbench_or_stop()
ann = Annotations(wb.store)
tasks = ann.tasks()
if not tasks:
    st.info("No annotation task yet: a task freezes each system's retrieved evidence for a sample of questions, "
            "so every annotator judges the same items.")
    st.page_link(nav.page(nav.ANNOTATION_RESULTS).path, label="Create a task on the Annotation results page",
                 icon=":material/arrow_forward:")
    st.stop()
names = {t.task_id: task_label(t) for t in tasks}
task_id = st.selectbox("Task", list(names), format_func=names.__getitem__)
task_header(next(t for t in tasks if t.task_id == task_id))
annotator = st.text_input("Your name", key="annotator", placeholder="e.g. annotator-1").strip()
if not annotator:
    st.info("Type your name to start: your labels are kept under it.")
    st.stop()
queue = ann.queue(task_id, annotator)
if not queue:
    st.warning("This task has no items.")
    st.stop()
card(ann, task_id, annotator, queue, pos_key=f"pos-{task_id}-{annotator}")
