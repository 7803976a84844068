"""Streamlit glue for the memcore app: cached accessors, background jobs, shared widgets.

Kept outside the `memcore` package so the library never imports Streamlit.
"""
