"""The fix texts of the LLM providers' errors, one constant each: the CLI shows them as they are, a front end
replaces each with the name of its own control (ui/fixes.py)."""

from __future__ import annotations

NEEDS_KEY = ("the openai provider needs a key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible "
             "server), or choose the offline provider")
FIX_URL = "Fix: start the server, correct OPENAI_BASE_URL (or --base-url), or use --provider offline"
FIX_KEY = "Fix: check OPENAI_API_KEY"
FIX_MODEL = "Fix: check MEMCORE_LLM_MODEL and that OPENAI_BASE_URL ends in /v1"
FIX_TIMEOUT = "Fix: check the server, or raise --llm-timeout"
LARGER_MODEL = "a larger model (MEMCORE_LLM_MODEL)"  # in an unusable reply's fix (memcore.llm.client.unusable_fix)
UNUSABLE_FALLBACK = ("MEMCORE_LLM_UNUSABLE=fallback to store the role's fallback output, named as such in the "
                     "results")
