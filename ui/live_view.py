"""The Live page's parts: which conversations are live, a panel that redraws every second (turns arriving, each
turn's memory events, counts per kind, tool calls with their latency, a recall's trace with the Ask page's
views), and the chat box (memcore.live.LiveMemory: the message is remembered, the memory answers)."""

from __future__ import annotations

import json
import time
from datetime import datetime
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from memcore.datasets.jsonl_chat import to_jsonl_records
from memcore.errors import MemcoreError
from memcore.live import LiveMemory, live_conv_id
from memcore.live.log import live_conv_ids, read_calls
from memcore.store.view import MemoryView
from memcore.types import Answer, Conversation, Trace
from memcore.viz.evidence import context_table
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui import nav
from ui.calls_view import calls_panel
from ui.structure_view import structure_view, turn_texts

REFRESH_S = 1.0  # the live panel redraws this often: a write shows within about this plus one read
TURNS_SHOWN = 30


def live_conversations(wb: Workbench) -> list[str]:
    """Conversations written live (a row in the tool-call log), newest activity first."""
    return live_conv_ids(wb.store)


def memories(wb: Workbench, conv_id: str) -> dict[str, MemoryView]:
    """Every memory built of the conversation (its checkpoints: whichever process, embedder and LLM built it),
    by system; a system built in several spaces shows its newest."""
    cks = wb.store.checkpoints()
    if cks.empty:
        return {}
    cks = cks[cks["key"].str.endswith(f"|{conv_id}")].sort_values("updated")
    return {r["system"]: MemoryView(wb.store, r["system"], conv_id, r["key"].rsplit("|", 1)[0])
            for r in cks.to_dict("records")}


def page_links(conv_id: str) -> str:
    """Markdown links to Replay, Ask and Explore for the conversation."""
    q = urlencode({"conv": conv_id})
    return " · ".join(f"[{t}]({nav.page(t).url_path}?{q})" for t in (nav.REPLAY, nav.ASK, nav.EXPLORE))


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S")


def turns_table(conv: Conversation, mems: dict[str, MemoryView]) -> pd.DataFrame:
    """The newest turns, each with the memory events it caused per system (kind: item ids)."""
    events: dict[tuple[str, int], list[str]] = {}
    for name, mem in mems.items():
        for e in mem.events():
            events.setdefault((name, e.step), []).append(f"{e.kind} {', '.join(e.item_ids[:4])}".strip())
    rows = []
    for t in reversed(conv.turns[-TURNS_SHOWN:]):
        row = {"#": t.index + 1, "turn": t.turn_id, "time": t.timestamp, "speaker": t.speaker, "text": t.text}
        for name in mems:
            row[name] = "; ".join(events.get((name, t.index + 1), []))
        rows.append(row)
    return pd.DataFrame(rows)


def counts_table(mems: dict[str, MemoryView], n_turns: int) -> pd.DataFrame:
    """Per system: turns built and the current items per kind."""
    rows = []
    for name, mem in mems.items():
        step, done = mem.status()
        rows.append({"system": name, "built turns": f"{min(step, n_turns)} of {n_turns}",
                     **{k: v for k, v in sorted(mem.kind_counts().items())}})
    return pd.DataFrame(rows).fillna(0)


def latency_table(calls: pd.DataFrame) -> pd.DataFrame:
    """Per tool: calls, failures, median and max latency (ms)."""
    if calls.empty:
        return pd.DataFrame()
    g = calls.groupby("tool")
    return pd.DataFrame({"calls": g.size(), "failed": g["ok"].apply(lambda s: int((~s).sum())),
                         "median ms": g["ms"].median().round(1), "max ms": g["ms"].max().round(1)}).reset_index()


def trace_of(row: dict) -> Answer:
    """The stored recall or answer as an Answer (a recall: its trace with no answer text)."""
    if row["tool"] == "answer":
        return Answer.from_dict(row["result"]["answer"])
    return Answer(text="", trace=Trace.from_dict(row["result"]["trace"]))


def trace_panel(wb: Workbench, conv: Conversation, row: dict, key: str) -> None:
    """One recall's (or answer's) trace with the Ask page's views: the retrieved context, the system's structure,
    the LLM calls behind it."""
    ans = trace_of(row)
    st.markdown(f"**{md_escape(row['tool'])}** by **{md_escape(row['system'])}** at {_when(row['ts'])} "
                f"({row['ms']:.0f} ms) · trace id `{row['id']}` · query: {md_escape(row['request'].get('query', ''))}")
    if row["tool"] == "answer":
        st.markdown(f"Answer ({md_escape(row['result'].get('provider', ''))}):")
        st.text(ans.text or "(empty)")
    for note in ans.trace.notes + ans.trace.errors:
        st.caption(md_escape(f"Note: {note}"))
    t1, t2, t3 = st.tabs(["Retrieved context", "System structure", f"LLM calls ({len(row['calls'])})"])
    with t1:
        st.dataframe(context_table(ans.trace, []), hide_index=True, height=260, key=f"{key}_ctx")
    with t2:
        structure_view(ans.trace.system, ans, turn_texts(conv), key)
    with t3:
        calls_panel(row["calls"], key=f"{key}_calls", provider=wb.provider_label)


@st.fragment(run_every=REFRESH_S)
def live_panel(wb: Workbench, conv_id: str) -> None:
    """Redrawn every REFRESH_S s (no page reload): the conversation as stored now, its memories and tool calls."""
    wb.store.refresh()
    t0 = time.time()
    try:
        conv = wb.conversation(conv_id)
    except MemcoreError:
        st.info("Waiting for the first message of this conversation.")
        return
    mems = memories(wb, conv_id)
    calls = read_calls(wb.store, conv_id)
    last = float(calls["ts"].max()) if len(calls) else 0.0
    st.caption(f"{len(conv.turns)} turn(s) · {len(calls)} tool call(s) · last write {_when(last) if last else '-'} "
               f"· drawn {_when(t0)}", help="The panel redraws every second without reloading the page.")
    st.markdown("**Memory per system** (items per kind)")
    st.dataframe(counts_table(mems, len(conv.turns)), hide_index=True, key="live_counts")
    st.markdown(f"**Turns**, newest first (the last {TURNS_SHOWN}), with the memory events each caused")
    st.dataframe(turns_table(conv, mems), hide_index=True, height=300, key="live_turns")
    st.markdown("**Tool calls**: latency per tool")
    st.dataframe(latency_table(calls), hide_index=True, key="live_latency")
    traced = calls[calls["tool"].isin(["recall", "answer"]) & calls["ok"]] if len(calls) else calls
    if traced.empty:
        st.caption("No recall yet: its trace shows here when an agent calls recall or answer.")
        return
    rows = traced.iloc[::-1].to_dict("records")
    st.markdown(f"**Recalls and answers** ({len(rows)}): the newest is shown unless you pick another")
    ids = [r["id"] for r in rows]
    labels = {r["id"]: f"{_when(r['ts'])} {r['tool']} {r['system']}: {r['request'].get('query', '')[:60]}"
              for r in rows}
    follow = st.toggle("Follow the newest", value=True, key="live_follow")
    pick = ids[0] if follow else st.selectbox("Trace", ids, format_func=labels.get, key="live_trace")
    trace_panel(wb, conv, next(r for r in rows if r["id"] == pick), key="live_tr")


def new_chat_id() -> str:
    """A fresh conversation id for the chat box (`live-chat-<time>`)."""
    return live_conv_id(f"chat-{datetime.now().strftime('%Y%m%d-%H%M%S')}")


def chat_box(wb: Workbench, conv_id: str, systems: list[str]) -> None:
    """Type as the user: the first of `systems` answers from what its memory recalls of the conversation so far
    (the configured provider; the offline engine's reader when offline, labelled), then the message and the reply
    are remembered by every system. A failed answer is shown and never stored as a reply."""
    text = st.chat_input("Type as the user: the memory remembers it and answers", key="live_chat")
    if not text:
        return
    live = LiveMemory(wb, conv_id, systems, client="chat")
    reply: tuple[str, str, str] | None = None
    try:
        with st.spinner("Recalling, answering and remembering ..."):
            if live.conversation().turns:
                ans, _ = live.answer(text)[systems[0]]
                if ans.error:
                    st.error(md_escape(f"The answer failed ({ans.error}); nothing was stored as a reply."))
                    return
                reply = (ans.text, wb.provider_label, systems[0])
            live.remember("User", text)
            if reply is not None:
                live.remember("Assistant", reply[0])
    except (ValueError, MemcoreError) as e:
        st.error(md_escape(str(e)))
        return
    st.session_state["live_last_chat"] = (text, reply)


def last_chat() -> None:
    """The message typed last and the memory's reply, with what answered."""
    got = st.session_state.get("live_last_chat")
    if not got:
        return
    text, reply = got
    with st.chat_message("user"):
        st.text(text)
    with st.chat_message("assistant"):
        if reply is None:
            st.caption("Nothing was remembered before this message, so there was nothing to answer from: it is the "
                       "conversation's first turn.")
        else:
            st.text(reply[0] or "(empty)")
            st.caption(md_escape(f"{reply[2]}, answered by {reply[1]} from what it recalled before this message"))


def save_button(conv: Conversation) -> None:
    """Download the conversation as a JSONL chat log (loads back on Home; `memcore ingest` replays it)."""
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in to_jsonl_records(conv)) + "\n"
    st.download_button("Save as JSONL", data, file_name=f"{conv.id}.jsonl", mime="application/jsonl",
                       icon=":material/download:", key="live_save")
