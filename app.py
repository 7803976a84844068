"""memcore workbench: `streamlit run app.py`. Builds the navigation; pages live in pages/."""

from __future__ import annotations

import streamlit as st

from ui import nav, state, widgets

st.set_page_config(page_title="memcore workbench", page_icon=str(nav.ROOT / "assets" / "icon.svg"), layout="wide")
st.logo(str(nav.ROOT / "assets" / "logo.svg"), size="large")

sections: dict[str, list] = {}
for spec in nav.PAGES:
    if spec.exists:
        sections.setdefault(spec.section, []).append(
            st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path,
                    default=spec.title == nav.HOME))
current = st.navigation(sections)
widgets.sidebar_status()
try:
    current.run()
finally:  # after the first page is drawn (or stopped), load the embedding model in the background
    state.preload_embedder()
