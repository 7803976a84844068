"""Export: any answer, comparison, replay or benchmark as JSON, CSV and an offline HTML page."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from memcore.viz.export import file_stem, standalone_html, to_csv, to_json, write_bundle
from ui import state, widgets
from ui.export_view import available_bundles

st.title("Export")
st.caption("Download a trace, a comparison, a replay or a benchmark table as JSON, CSV, or a standalone "
           "HTML page that renders offline (charts inlined, no network requests).")

wb = state.workbench_or_stop()
with st.sidebar:
    conv = widgets.conversation_picker(wb)
bundles = available_bundles(wb, conv)
if not bundles:
    st.info("Nothing to export yet: ask a question, compare systems, build a memory or load a benchmark first.")
    st.stop()
choice = st.selectbox("What to export", list(bundles), key="exp_choice",
                      help="Replays and benchmark runs come from the store (any session); answers and "
                           "comparisons from this browser session only (memcore stores their LLM calls, not the "
                           "answers): ask again in a new session to export one.")
name, build = bundles[choice]
name = file_stem(name)  # a question id such as "conv-26:q3" is no file name


def _json() -> str:
    return to_json(build()[0])


def _csv() -> str:
    table = build()[1]
    return "" if table is None else to_csv(table)


def _html() -> str:
    return standalone_html(choice, build()[2], f"memcore export · {wb.provider_label}")


c = st.columns(3)
c[0].download_button("JSON", _json, f"{name}.json", "application/json", icon=":material/data_object:", key="exp_json")
c[1].download_button("CSV", _csv, f"{name}.csv", "text/csv", icon=":material/table:", key="exp_csv")
c[2].download_button("HTML (offline)", _html, f"{name}.html", "text/html", icon=":material/html:", key="exp_html")
st.caption("Files are built when you click. The HTML page inlines plotly.js and blocks every network request, "
           "so it opens offline.")

with st.expander("Write the files to a folder on the server"):
    folder = st.text_input("Folder", str(Path("exports").resolve()), key="exp_folder")
    if st.button("Write files", key="exp_write"):
        obj, table, sections = build()
        paths = write_bundle(folder, name, obj, table, _html())
        st.success(widgets.md_escape("Wrote " + ", ".join(str(p) for p in paths)))
        st.session_state["exp_written"] = [str(p) for p in paths]
