"""memcore workbench: `streamlit run app.py`. Builds the navigation; pages live in pages/."""

from __future__ import annotations

import streamlit as st

from ui import launch, nav, state, widgets

timer = launch.RunTimer()  # inert unless $MEMCORE_PROFILE is set

st.set_page_config(page_title="memcore workbench", page_icon=str(nav.ROOT / "assets" / "icon.svg"), layout="wide")
st.logo(str(nav.ROOT / "assets" / "logo.svg"), size="large")

home = nav.page(nav.HOME)
# the root URL shows Home through a hidden twin, so that /home (the visible Home) is a page too, not "Page not found"
sections: dict[str, list] = {home.section: [st.Page(home.path, title=home.title, icon=home.icon, url_path="root",
                                                    default=True, visibility="hidden")]}
for spec in nav.PAGES:
    if spec.exists:
        sections.setdefault(spec.section, []).append(
            st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path))
current = st.navigation(sections)
widgets.sidebar_status()
try:
    with timer.profile():
        current.run()
finally:  # after the first page is drawn (or stopped), load the embedding model in the background
    timer.done(current.url_path or "root")  # first: after st.stop() a streamlit call raises again
    state.preload_embedder()
