"""Context windows: how many tokens (prompt and reply) each model takes, and the rule for a prompt that needs more.

Where a model's window comes from, first match wins:
1. the setting `llm_context_window` (MEMCORE_LLM_CONTEXT_WINDOW): any provider, the offline engine included, so a
   run can simulate a model's window offline;
2. the table below, by model name (longest matching prefix), for chat providers;
3. the bundled local server's own n_ctx.
Otherwise the window is unknown (None) and nothing is checked: the offline engine and the fake
have none unless given one, and an unknown hosted model is named as such (`memcore doctor`).

The rule (LLMClient): a prompt whose tokens (cl100k_base, OpenAI's per-message overhead) plus the role's reply
budget exceed the window is never sent. The call fails with PromptDoesNotFit (an LLMCallFailed whose message
starts with DOES_NOT_FIT), booked in the ledger with outcome "does_not_fit"; nothing is built from it, the
question is reported as "does not fit" for that system, and a rerun fails the same way until the window or the
prompt changes. A system may cut its own context to fit first under a named rule (full_context keeps the turns
nearest the question: systems/full_context.py), shown on the answer card and counted in results.
"""

from __future__ import annotations

from memcore.errors import LLMCallFailed
from memcore.llm.local_server import N_CTX

DOES_NOT_FIT = "does not fit"

# Published context windows (tokens, prompt + reply), by model-name prefix; the longest matching prefix wins.
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-3": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2": 1_048_576,
    "llama-3.1": 131_072,
    "llama3.1": 131_072,
    "llama-3": 8_192,
    "llama3": 8_192,
    "qwen2.5": 32_768,
    "mistral": 32_768,
    "smollm2": 8_192,
}
NO_WINDOW_PROVIDERS = ("offline", "fake")  # the latency simulator stands in for a hosted model: its window


def context_window(provider: str, model: str, setting: int = 0) -> tuple[int | None, str]:
    """(window in tokens or None, where it comes from: "setting", "table", "local server" or "unknown")."""
    if setting and setting > 0:
        return int(setting), "setting"
    if provider in NO_WINDOW_PROVIDERS:
        return None, "unknown"
    if provider == "local":
        return N_CTX, "local server"
    name = (model or "").lower().rsplit("/", 1)[-1]
    best = max((p for p in KNOWN_WINDOWS if name.startswith(p)), key=len, default="")
    return (KNOWN_WINDOWS[best], "table") if best else (None, "unknown")


class PromptDoesNotFit(LLMCallFailed):
    """A prompt (with its reply budget) exceeds the model's context window: it was not sent (module docstring)."""

    def __init__(self, role: str, stage: str, tokens: int, window: int, model: str, source: str) -> None:
        super().__init__(role, stage, f"{DOES_NOT_FIT}: the prompt needs {tokens} tokens (reply budget included), "
                         f"over the {window}-token context window of {model or 'the model'} ({source}); it was not "
                         "sent. Fix: a model with a larger window, a system with a smaller context, or "
                         "MEMCORE_LLM_CONTEXT_WINDOW if the window is wrong", rerun_fixes=False)
        self.tokens, self.window = tokens, window
