"""Benchmark section for the papers' further metrics: memory footprint and retrieval latency per system, and
evidence density (Hu et al., Fig. 4) per system and category (memcore.viz.paper_metrics)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memcore.eval.paper_metrics import HIT_LABELS
from memcore.viz.bench import category_names
from memcore.viz.paper_metrics import density_chart, density_table, footprint_table
from ui import render


def paper_section(results: dict[str, Any]) -> None:
    """Footprint and latency table; evidence density chart (one category at a time) and table."""
    st.subheader("Memory footprint and retrieval latency")
    table = footprint_table(results)
    render.table(table)
    missing = table["memory rows"].isna().all()
    st.caption(("This run did not record the memory it read (stored before the footprint existed): rerun for it. "
                if missing else "")
               + "Memory: each system's current rows in the store over the run's conversations and their payload "
               "(UTF-8 bytes of strings, 4 bytes per vector value and integer). Shared turns: the raw turns every "
               "system can read, stored once, not counted in any system's memory. Retrieval: the retrieve step's "
               "time per question, without the answer call (papers/004, Table 2 reports both).")
    st.subheader("Evidence density")
    dens = density_table(results, HIT_LABELS)
    if dens.empty:
        st.caption("This run has no evidence density (rows stored before it existed): rerun to get it.")
        return
    cats = category_names(results)
    cat = st.selectbox("Density for", ["overall", *cats], format_func=lambda k: cats.get(k, k), key="bm_density_cat")
    st.plotly_chart(density_chart(results, HIT_LABELS, cat), key="bm_density")
    render.table(dens)
    st.caption("Hu et al. (papers/001), Fig. 4: the reference answer's content words (stopwords removed) are the "
               "evidence units; a retrieved block holding exactly one distinct unit is 1-hit, two 2-hit, three or "
               "more multi-hit. Shares are of all retrieved blocks (blocks without a unit count in the total). "
               "Abstention questions have no units and are left out.")
