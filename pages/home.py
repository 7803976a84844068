"""Home: load a conversation, choose the LLM provider, see where things are stored."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memcore.llm.redact import redact
from memcore.plugins import plugin_errors
from memcore.viz.safe import md_escape, shorten
from ui import nav, provider, serving, state, widgets

TURN_PREVIEW = 200  # characters of a turn shown in the Turns table
TURN_ROWS = 2000  # turns listed (a 10M-token chat's 18,460 previews were a 4.4 MB message, ~3.3 s a first visit)

st.title("memcore workbench")
st.caption("Watch LLM-agent memory at work: replay a conversation as memory systems build their "
           "memories, ask questions and see why evidence was found or missed, compare systems.")

wb = state.workbench_or_stop()

st.subheader("1 · Conversation")
widgets.dataset_loader(wb)
conv = widgets.conversation_picker(wb)
if conv is None:
    st.info("No conversation yet: load the built-in demo or a dataset file above.")
else:
    sessions = conv.sessions()
    c = st.columns(4)
    c[0].metric("Turns", len(conv.turns))
    c[1].metric("Sessions", len(sessions))
    c[2].metric("Questions", len(conv.questions))
    c[3].metric("Speakers", len(conv.speakers))
    t1, t2 = st.tabs(["Turns", "Questions"])
    # each turn's text cut to a preview: a BEAM 1M chat's 1,600 whole turns (3.6M characters) made a 3.7 MB table
    # the browser took ~2 s to receive and draw on every first visit
    t1.dataframe(pd.DataFrame([{"turn": t.turn_id, "date": t.session_date, "speaker": t.speaker,
                                "text": shorten(t.content, TURN_PREVIEW)} for t in conv.turns[:TURN_ROWS]]),
                 hide_index=True, height=260)
    if len(conv.turns) > TURN_ROWS:
        t1.caption(f"The first {TURN_ROWS:,} of {len(conv.turns):,} turns are listed here; Replay and Explore show "
                   "every turn.")
    if any(len(t.content) > TURN_PREVIEW for t in conv.turns[:TURN_ROWS]):
        t1.caption(f"Each turn's text is cut here to its first {TURN_PREVIEW} characters (marked …, whitespace "
                   "collapsed); Replay and Explore show every turn whole.")
    t2.dataframe(pd.DataFrame([{"id": q.id, "category": q.category_name, "question": q.text,
                                "gold answer": q.answer, "evidence": ", ".join(q.evidence)}
                               for q in conv.questions]), hide_index=True, height=260)

st.subheader("2 · LLM provider")
st.caption("The default offline engine answers every LLM role with deterministic rules, no model: "
           "results are labelled **offline engine (rule-based, no LLM)** wherever they appear.")
provider.form()

st.subheader("3 · Status")
st.caption(serving.address_line())
s = state.settings()
st.dataframe(pd.DataFrame([
    {"setting": "LLM", "value": wb.provider_label},
    {"setting": "store", "value": redact(wb.store.uri)},
    {"setting": "embedder", "value": wb.embedder.name},
    {"setting": "systems", "value": ", ".join(widgets.systems())},
    {"setting": "API key", "value": "set for this session" if s.openai_api_key else "none"},
]), hide_index=True)
for err in plugin_errors():  # installed plugins that failed to load: skipped, named here (memcore.plugins)
    st.warning(md_escape(err.message()))
if conv is not None:
    rows = []
    for name in widgets.systems():
        step, done = state.ingest_status(wb, name, conv)
        rows.append({"system": name, "memory built": "yes" if done else f"{step}/{len(conv.turns)} turns"})
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    if nav.page(nav.REPLAY).exists:
        st.page_link(nav.page(nav.REPLAY).path, label="Next: replay the conversation", icon=":material/arrow_forward:")
