"""Where the app is served: one line for Home, from Streamlit's `server.address` (.streamlit/config.toml)."""

from __future__ import annotations

import streamlit as st

LOCAL = ("127.0.0.1", "localhost", "::1")


def address_line() -> str:
    """A sentence saying which address the app listens on and how to change it."""
    addr = (st.get_option("server.address") or "").strip()
    if addr in LOCAL:
        return (f"Served on {addr} only: other machines cannot open this app. To serve on a network address, "
                "start it with `STREAMLIT_SERVER_ADDRESS=0.0.0.0` (see README, \"Serving on a network\").")
    shown = addr or "every network interface"
    return (f"Served on {shown}: anyone who can reach this machine can load files from its disk and enter "
            "API keys here. To serve on this machine only, remove the address setting (the default is 127.0.0.1).")
