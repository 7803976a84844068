"""Annotation results: create tasks; helpfulness per system and category, agreement, export."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memcore.annotate import Annotations, workbench_retriever
from memcore.errors import MemoryNotBuilt
from memcore.retrievers import retriever_names
from memcore.viz.annotation import helpfulness_figure
from memcore.viz.tables import explain_empty
from memcore.viz.views import ANNOTATE
from ui import jobs, render, state, widgets
from ui.annotate_view import default_task, rates_table, task_header, task_label

st.title("Annotation results")
st.caption("Create a human-evaluation task (retrieval runs once and is frozen so every annotator sees the "
           "same evidence), then follow helpfulness rates with 95% intervals and agreement between annotators.")

wb = state.workbench_or_stop()
ann = Annotations(wb.store)
with st.expander("Create a task", expanded=not ann.tasks()):
    convs = wb.store.conversations()
    with st.form("new_task", enter_to_submit=False):  # only the button creates a task
        name = st.text_input("Task name", "helpfulness")
        stored = list(convs["conv_id"])
        current = state.current_conv_id(wb)  # the conversation loaded or picked last (an upload's), not the first
        conv_ids = st.multiselect("Conversations", stored, default=[current] if current in stored else stored[:1])
        systems = st.multiselect("Systems", widgets.systems(), default=widgets.default_systems(ANNOTATE),
                                 format_func=widgets.system_label)
        c1, c2, c3 = st.columns(3)
        per_cat = c1.number_input("Questions per category", 1, 200, 25)
        seed = c2.number_input("Seed", 0, 10**6, 0)
        retriever = c3.selectbox("Retriever", list(retriever_names()), key="task_retriever",
                                 format_func=widgets.retriever_label)
        go = st.form_submit_button("Create task", type="primary")
    if go:
        convs_ = [state.conversation(wb, c) for c in conv_ids]
        missing = {c.id: [s for s in systems if not state.ingest_status(wb, s, c)[1]] for c in convs_}
        st.session_state["task_missing"] = {c: m for c, m in missing.items() if m}
        if not conv_ids or not systems:
            st.error("Pick at least one conversation and one system.")
        elif name.strip() in {t.name for t in ann.tasks()}:
            st.error(widgets.md_escape(f"A task named {name.strip()!r} exists: choose another name."))
        elif not st.session_state["task_missing"]:
            try:  # the memories were checked above; one that disappeared since is refused, never built here
                with st.spinner("Retrieving evidence once for every sampled question and system…"):
                    task = ann.create_task(name.strip(), convs_, systems, workbench_retriever(wb, retriever),
                                           int(per_cat), int(seed), retriever=retriever)
                st.success(widgets.md_escape(f"Created task {task.task_id} ({retriever} retriever) with "
                                             f"{len(ann.items(task.task_id))} items."))
                st.session_state["res_task"] = task.task_id  # the results below show the new task
            except MemoryNotBuilt as e:
                st.error(widgets.md_escape(str(e)))
    for cid, todo in st.session_state.get("task_missing", {}).items():  # never built without this click
        st.warning(widgets.md_escape(f"Memory not built for {cid}: {', '.join(todo)}. Build it, then create the task."))
        if st.button(widgets.md_escape(f"Build memory of {cid} ({len(todo)} system(s))"), key=f"task_build_{cid}",
                     icon=":material/construction:"):
            state.start_ingest(wb, todo, state.conversation(wb, cid))
            st.session_state["task_missing"], st.session_state["task_building"] = {}, cid
            st.rerun()
cid = st.session_state.get("task_building")
building = jobs.get(state.ingest_job_id(state.conversation(wb, cid))) if cid else None
if building is not None and building.running:
    widgets.job_progress(building.id)
tasks = ann.tasks()
if not tasks:
    st.stop()
names = {t.task_id: task_label(t) for t in tasks}
kept = st.session_state.get("res_task") in names  # a pick (or a task just created) wins over the default
if not kept:  # else the newest task covering the current conversation
    st.session_state.pop("res_task", None)
start = 0 if kept else default_task(tasks, state.current_conv_id(wb))
task_id = st.selectbox("Task", list(names), index=start, format_func=names.__getitem__, key="res_task")
task_header(next(t for t in tasks if t.task_id == task_id))
res = ann.results(task_id)
st.write(f"Annotators: {', '.join(widgets.md_escape(a) for a in res['annotators']) or 'none yet'}")
if res["rates"]:
    st.plotly_chart(helpfulness_figure(res["rates"]), key="help_fig")
    rates_table(res["rates"])
agr = res["agreement"]
c1, c2 = st.columns(2)
fk = agr["fleiss_kappa"]
c1.metric("Fleiss' kappa (all annotators)", "—" if fk is None else f"{fk:.3f}")
c2.metric("Items labelled by every annotator", agr["n_items_all_raters"])
if agr.get("caveat"):
    st.warning(agr["caveat"], icon=":material/warning:")
if agr["pairs"]:
    st.caption("Pairwise Cohen's kappa")
    render.table(explain_empty(pd.DataFrame(agr["pairs"]), {
        "cohen_kappa": "'-': the two annotators share no labelled item.",
        "agreement": "'-': the two annotators share no labelled item."}))
if res["disagreements"]:
    st.caption("Disagreements to review")
    render.table(pd.DataFrame([{**d, "labels": ", ".join(f"{k}: {v}" for k, v in d["labels"].items())}
                               for d in res["disagreements"]]))
st.caption("Current labels: one row per item and annotator with the latest label, the question, system, category "
           "and retriever. Label log: every label given, changes included. Import reads either file.")
c = st.columns(4)
c[0].download_button("Current labels (CSV)", ann.export_current(task_id, "csv"), f"labels-{task_id}.csv")
c[1].download_button("Current labels (JSON)", ann.export_current(task_id, "json"), f"labels-{task_id}.json")
c[2].download_button("Label log (CSV)", ann.export_labels(task_id, "csv"), f"label-log-{task_id}.csv")
c[3].download_button("Label log (JSON)", ann.export_labels(task_id, "json"), f"label-log-{task_id}.json")
up = st.file_uploader("Import labels (a current-labels or label-log file exported here)", type=["json", "csv"])
if up is not None and st.button("Import"):
    n = ann.import_labels(up.getvalue().decode(), "csv" if up.name.endswith(".csv") else "json")
    st.success(f"Imported {n} new label rows.")
