"""The session's LLM provider: Home's form, the options that cannot work on this server (shown disabled with
the reason and the fix), a choice started and checked before the session uses it, and the way back: a provider
that cannot start leaves the session on the offline engine with the error shown next to the form."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from memcore.llm import local_server, make_provider
from memcore.llm.redact import redact_url
from memcore.settings import Settings
from memcore.viz.safe import md_escape
from ui import fixes

LABELS = {
    "offline": "offline engine (rule-based, no LLM)",
    "openai": "OpenAI-compatible endpoint",
    "local": "local SmolLM2 (llama.cpp)",
}
ERROR = "provider_error"  # why the last provider tried could not start (shown next to the form)
FELL_BACK = "provider_fell_back"  # the session's provider broke: the session went on with the offline engine
CHECK_S = 5.0  # how long the endpoint check of a chosen provider may take


@dataclass(frozen=True)
class ProviderChoice:
    """What the user picked on Home; the API key lives only in this browser session."""

    provider: str = ""
    model: str = ""
    base_url: str = ""
    unusable: str = ""  # "fail" | "fallback" (llm_unusable); "" = the environment's (MEMCORE_LLM_UNUSABLE)


def settings_for(pc: ProviderChoice | None, key: str = "") -> Settings:
    """Environment settings overridden by a provider choice and an API key (empty: the environment's)."""
    base = Settings()
    if pc is None or not pc.provider:
        return base
    return base.with_(llm_provider=pc.provider, llm_model=pc.model or base.llm_model,
                      openai_base_url=pc.base_url, openai_api_key=key or base.openai_api_key,
                      llm_unusable=pc.unusable or base.llm_unusable)


def session_settings() -> Settings:
    """The environment's settings overridden by this session's choice and key."""
    return settings_for(st.session_state.get("provider_choice"), st.session_state.get("openai_key", ""))


def offline_settings() -> Settings:
    """This session's settings with the offline engine answering (the way back from a provider that broke)."""
    return settings_for(ProviderChoice("offline"), st.session_state.get("openai_key", ""))


def label(name: str) -> str:
    """A provider's name in words."""
    return LABELS.get(name, name)


def failed(name: str, e: Exception, fell_back: bool) -> None:
    """Record why a provider could not start, in the app's words; `fell_back`: the session's own provider
    broke, so the session goes on with the offline engine (else it keeps the provider it had)."""
    now = label("offline" if fell_back else session_settings().provider)
    st.session_state[ERROR] = fixes.in_app(f"{label(name)} could not start: {e}. This session stays on {now}: "
                                           "change the choice here and press Use this provider.")
    if fell_back:
        st.session_state["provider_choice"] = ProviderChoice("offline")
        st.session_state[FELL_BACK] = True


def unavailable() -> dict[str, str]:
    """Providers that cannot work on this server: name -> the reason with the fix."""
    ok, why = local_server.is_available()
    return {} if ok else {"local": why}


def start(s: Settings) -> None:
    """Start the provider these settings name and reach its endpoint (ConfigError naming the fix when either
    fails): the local model's server is started here, an endpoint must answer within CHECK_S seconds."""
    check = getattr(make_provider(s), "check", None)
    if callable(check):
        check(CHECK_S)


def caption(name: str) -> str:
    """One line under a provider's name: what it is and, for models, what happens to an unusable reply."""
    if name == "offline":
        return "Rule-based, instant, no model: the test bed."
    unusable = (f'a reply still unusable after repair fails its call (nothing stored) unless "{fixes.FALLBACK_BOX}" '
                "is ticked below")
    if name == "local":
        return f"A small model on this machine's CPU (slow), replies constrained by JSON schema; {unusable}."
    return f"A hosted model or a local server; {unusable}."


def form() -> None:
    """Choose the LLM provider; a choice that cannot start is refused with its error shown here, and the
    session keeps the provider it had. The API key stays in this browser session only."""
    cur: ProviderChoice = st.session_state.get("provider_choice") or ProviderChoice()
    base = session_settings()
    bad = unavailable()
    options = [p for p in LABELS if p not in bad]
    now = cur.provider or base.provider
    with st.form("provider", enter_to_submit=False):
        prov = st.radio("LLM provider", options, index=options.index(now) if now in options else 0,
                        format_func=label, horizontal=True, captions=[caption(p) for p in options])
        c1, c2 = st.columns(2)
        real_url = cur.base_url or base.openai_base_url
        shown_url = redact_url(real_url)  # a password or token in the URL is never shown (nor sent to the browser)
        url = c1.text_input("Base URL (OpenAI-compatible)", shown_url, placeholder="https://api.openai.com/v1",
                            help="Credentials in the URL (user:password@, token values) are masked as *** here; "
                                 "left as shown, the URL keeps them.")
        model = c2.text_input("Model", cur.model or base.llm_model)
        key = st.text_input("API key", type="password", placeholder="kept in this session only, never stored",
                            help="Held in memory for this browser session; never written to disk.")
        fallback = st.checkbox(fixes.FALLBACK_BOX, value=base.llm_unusable == "fallback",
                               help="A model's reply that stays unusable after repair (no valid JSON for the role) "
                                    "fails its call by default: nothing is stored, the memory or run stays "
                                    "incomplete. Ticked, the role's declared fallback is stored instead, counted "
                                    "and named in every result (llm_unusable=fallback: a separate memory and run).")
        if err := st.session_state.get(ERROR):
            st.error(md_escape(err), icon=":material/error:")
        go = st.form_submit_button("Use this provider")
    for name, why in bad.items():
        st.radio("Not available on this server", [label(name)], index=None, disabled=True, key=f"na_{name}",
                 captions=[md_escape(fixes.in_app(why))])
    if go:
        unusable = "" if prov == "offline" else "fallback" if fallback else "fail"  # the offline rules' replies are usable
        kept = real_url if url.strip() == shown_url.strip() else url.strip()  # unchanged: the real URL
        _use(ProviderChoice(prov, model.strip(), kept, unusable), key.strip())


def _use(choice: ProviderChoice, key: str) -> None:
    """Start a chosen provider; on success the session uses it, else the error is kept for the form."""
    s = settings_for(choice, key or st.session_state.get("openai_key", ""))
    if choice.provider != "offline":
        try:
            with st.spinner(f"Starting {label(choice.provider)}…"):
                start(s)
        except Exception as e:
            failed(choice.provider, e, fell_back=False)
            st.rerun()
    st.session_state["provider_choice"] = choice
    if key:
        st.session_state["openai_key"] = key
    st.session_state.pop(ERROR, None)
    st.session_state.pop(FELL_BACK, None)
    st.rerun()
