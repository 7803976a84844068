"""The call inspector: the LLM calls behind an answer or a replay step, as a waterfall, a table, and each
call's prompt and completion shown literally (code blocks: dataset text never meets Markdown)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from memcore.settings import LEDGER_TEXT_ENV
from memcore.types import Conversation
from memcore.viz.calls import call_label, calls_summary, calls_table, waterfall
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui import state, widgets

NOT_STORED = (f"Prompt text not stored (setting {LEDGER_TEXT_ENV}=0 / `--no-ledger-text`): the ledger keeps each "
              "call's role, stage, tokens, latency and cache hit, not its prompt or completion; the LLM response "
              "cache is off too (it would store completions), so a rerun asks the model again.")
_TABLE_COLS = ["#", "role", "stage", "start ms", "latency ms", "prompt tokens", "completion tokens", "cache hit",
               "ok", "attempt", "format", "outcome", "model", "error"]


def calls_panel(records: Iterable[Any], key: str, provider: str = "") -> None:
    """Draw the call inspector for ledger records (CallRecords, dicts or llm_calls rows); `key` must be unique
    on the page. `provider` names what answered (the offline engine's calls show its inputs and outputs)."""
    table = calls_table(records)
    if table.empty:
        st.caption("No LLM calls were made here.")
        return
    s = calls_summary(table)
    st.caption(md_escape(f"{s['calls']} call(s) by {provider or 'the LLM'}: {s['cache hits']} cache hit(s), "
                         f"{s['failed']} failed, {s['prompt tokens']} prompt + {s['completion tokens']} completion "
                         f"tokens, {s['latency ms']:.1f} ms of calls in {s['wall ms']:.1f} ms wall time."))
    st.plotly_chart(waterfall(table), key=f"{key}_waterfall")
    st.dataframe(table[_TABLE_COLS], hide_index=True, key=f"{key}_table")
    labels = {int(r["#"]): call_label(r) for r in table.to_dict("records")}
    pick = st.selectbox("Open a call", list(labels), format_func=labels.__getitem__, key=f"{key}_pick")
    row = table[table["#"] == pick].iloc[0]
    if not row["ok"]:
        st.error(md_escape(f"Failed: {row['error']}"))
    if row["format"] == "offline":
        st.caption(md_escape(f"No request: the offline engine computed this output · reply: {row['outcome']}"))
    elif row["format"] or row["outcome"]:
        st.caption(md_escape(f"Asked for: {row['format'] or 'unrecorded'} (response_format) · "
                             f"reply: {row['outcome'] or 'unrecorded'}"))
    kept = state.workbench().settings.ledger_text
    if not kept:
        st.info(NOT_STORED)
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(f"**Prompt** ({int(row['prompt tokens'])} tokens)")
        st.code(row["prompt"] or ("(prompt text not stored)" if not kept else
                                  "(not recorded: stored before the ledger kept prompts, or with "
                                  f"{LEDGER_TEXT_ENV}=0)"), language=None, wrap_lines=True, height=360)
    with c2:
        st.markdown(f"**Completion** ({int(row['completion tokens'])} tokens)")
        st.code(row["completion"] or ("(completion text not stored)" if not kept else "(empty)"), language=None,
                wrap_lines=True, height=360)


def step_calls(wb: Workbench, conv: Conversation, system: str, step: int) -> pd.DataFrame:
    """The construction calls a system's ingest of `conv` made at one replay step (stored ledger rows)."""
    mem = state.memory_of(wb, system, conv)
    ck_step = state.ingest_status(wb, system, conv)[0]  # the checkpoint re-read at most every 2 s, not per step
    calls = state.construction_calls(mem, wb.llm.provider.name, ck_step)
    if not len(calls):
        return calls
    steps = calls["step"].to_numpy(dtype=float)
    return calls.iloc[int(np.searchsorted(steps, step, "left")):int(np.searchsorted(steps, step, "right"))]


CALLS_OPEN = "rp_calls_open"  # the expander's state: its content runs only while it is open


def replay_step_calls(wb: Workbench, conv: Conversation, systems: list[str], step: int,
                      counts: dict[str, int] | None = None) -> None:
    """An expander on Replay: the LLM calls each system made while ingesting this step's turn (built only while
    it is open: the waterfall and tables of every step would slow stepping). `counts`: each system's calls at the
    step, known without reading them (Replay's data: ReplayData.calls_at); else they are read for the title."""
    if counts is None:
        counts = {s: len(step_calls(wb, conv, s, step)) for s in systems}
    box = st.expander(f"LLM calls at this step ({sum(counts.get(s, 0) for s in systems)})", key=CALLS_OPEN,
                      on_change="rerun")
    if not box.open:
        return
    per = {s: step_calls(wb, conv, s, step) for s in systems}
    with box:
        pick = widgets.segmented("System", systems, "rp_calls_system", systems[0],
                                 format_func=lambda s: f"{s} ({len(per[s])})")
        rows = per[pick]
        if len(rows):  # the step's calls with their prompts and completions (the shared frame holds no texts)
            rows = state.memory_of(wb, pick, conv).llm_calls(stage="construction", provider=wb.llm.provider.name,
                                                            step=step)
        calls_panel(rows.to_dict("records"), key=f"rp_calls_{pick}", provider=wb.provider_label)
