"""Streamlit glue for the memcore app: cached accessors, background jobs, shared widgets.

Kept outside the `memcore` package so the library never imports Streamlit.
"""

from __future__ import annotations


def _leave_multipage_v1() -> None:
    """Make a fresh server's first request for a page URL (e.g. /replay) run app.py's navigation.

    Streamlit treats an app with a `pages/` folder as a v1 multipage app until st.navigation is
    first called in the process; before that, a request for /replay runs pages/replay.py alone
    (no app.py, so no navigation, layout or logo). Every page imports `ui`, so its first import
    switches the process to v2, as st.navigation itself would, and reruns: app.py then runs and
    routes to the requested page. Imported before any request (ui.launch), it settles v2 up front.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:  # pragma: no cover - other Streamlit layouts
        return
    if PagesManager.uses_pages_directory is not False:  # None before the first request: decide it now
        was_v1 = bool(PagesManager.uses_pages_directory)
        PagesManager.uses_pages_directory = False
        if was_v1 and get_script_run_ctx() is not None:
            import streamlit as st

            st.rerun()


_leave_multipage_v1()
