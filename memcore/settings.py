"""Settings: explicit values with environment fallbacks. Keys are never written anywhere."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from memcore.errors import ConfigError


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


STORAGE_OPTIONS_ENV = "MEMCORE_STORAGE_OPTIONS"
_SECRET_KEY = re.compile(r"(?i)(secret|password|token|credential|sas|signature|account_key|access_key|private)")


def storage_options_from_env() -> tuple[tuple[str, str], ...]:
    """LanceDB storage options from $MEMCORE_STORAGE_OPTIONS, a JSON object such as
    `{"aws_endpoint": "http://127.0.0.1:9000", "allow_http": "true"}` (values become strings), as
    sorted (key, value) pairs. Unset or empty: none (LanceDB then reads its own AWS_*, GOOGLE_*,
    AZURE_* variables). Raises ConfigError naming the fix when it is not a JSON object."""
    raw = _env(STORAGE_OPTIONS_ENV).strip()
    if not raw:
        return ()
    try:
        opts = json.loads(raw)
    except ValueError as e:
        raise ConfigError(f"${STORAGE_OPTIONS_ENV} is not valid JSON ({e.msg} at character {e.pos}). Fix: set it "
                          "to a JSON object of strings, e.g. '{\"aws_endpoint\": \"http://host:9000\"}'") from None
    if not isinstance(opts, dict):
        raise ConfigError(f"${STORAGE_OPTIONS_ENV} must be a JSON object of option names to values, not "
                          f"{type(opts).__name__}. Fix: e.g. '{{\"allow_http\": \"true\"}}'")
    return tuple(sorted((str(k), _opt_str(v)) for k, v in opts.items()))


def _opt_str(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def storage_secrets(options: dict[str, str] | None = None) -> tuple[str, ...]:
    """Values that must never be shown: storage options and object-store environment variables whose
    names look secret (secret keys, tokens, passwords, SAS, account keys), for memcore.llm.redact."""
    pairs = list((options or {}).items()) + [(k, v) for k, v in os.environ.items()
                                               if k.upper().startswith(("AWS_", "AZURE_", "GOOGLE_", "GCS_"))]
    return tuple(sorted({v for k, v in pairs if v and _SECRET_KEY.search(k)}, key=len, reverse=True))


LEDGER_TEXT_ENV = "MEMCORE_LEDGER_TEXT"


def ledger_text_from_env() -> bool:
    """$MEMCORE_LEDGER_TEXT: 0/false/no/off keeps prompt and completion text out of the ledger; unset or 1/true/
    yes/on keeps it. Raises ConfigError naming the values for anything else."""
    raw = _env(LEDGER_TEXT_ENV, "1").strip().lower()
    if raw in ("1", "true", "yes", "on", ""):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"${LEDGER_TEXT_ENV}={raw!r} is not a switch. Fix: set it to 0 (store LLM calls without "
                      "their prompt and completion text) or 1 (store the text, the default)")


@dataclass(frozen=True)
class Settings:
    """Where memcore stores data and which embedder and LLM provider it uses."""

    store_uri: str = field(default_factory=lambda: _env("MEMCORE_STORE", ".memcore"))
    # LanceDB storage options of a remote store (endpoint, region, credentials...): never shown
    storage_options: tuple[tuple[str, str], ...] = field(default_factory=storage_options_from_env, repr=False)
    cache_dir: str = field(default_factory=lambda: _env("MEMCORE_CACHE", ""))
    embedder: str = field(default_factory=lambda: _env("MEMCORE_EMBEDDER", "minilm"))
    # torch threads while MiniLM encodes: 1 holds up on a busy 2-core machine (bench/eval_speed.py, issue 28)
    embed_threads: int = field(default_factory=lambda: int(_env("MEMCORE_EMBED_THREADS", "1")))
    llm_provider: str = field(default_factory=lambda: _env("MEMCORE_LLM_PROVIDER", ""))
    llm_model: str = field(default_factory=lambda: _env("MEMCORE_LLM_MODEL", "gpt-4o-mini"))
    openai_base_url: str = field(default_factory=lambda: _env("OPENAI_BASE_URL", ""))
    openai_api_key: str = field(default_factory=lambda: _env("OPENAI_API_KEY", ""), repr=False)
    embed_model: str = field(default_factory=lambda: _env("MEMCORE_EMBED_MODEL", "text-embedding-3-small"))
    llm_timeout_s: float = field(default_factory=lambda: float(_env("MEMCORE_LLM_TIMEOUT", "60")))  # read timeout
    llm_connect_timeout_s: float = 5.0
    llm_deadline_s: float = field(default_factory=lambda: float(_env("MEMCORE_LLM_DEADLINE", "180")))  # one call
    llm_retries: int = 3  # attempts per call, the first included
    llm_concurrency: int = field(default_factory=lambda: int(_env("MEMCORE_LLM_CONCURRENCY", "0")))  # 0: auto
    llm_rpm: int = field(default_factory=lambda: int(_env("MEMCORE_LLM_RPM", "0")))  # 0: no limit
    llm_tpm: int = field(default_factory=lambda: int(_env("MEMCORE_LLM_TPM", "0")))
    llm_unusable: str = field(default_factory=lambda: _env("MEMCORE_LLM_UNUSABLE", "fail"))  # or "fallback"
    # how a JSON role's schema is sent: auto (probe the endpoint once) | json_schema | json_object | off
    # (memcore.llm.structured); part of the memory space and the run id, like llm_unusable
    llm_structured: str = field(default_factory=lambda: _env("MEMCORE_LLM_STRUCTURED", "auto"))
    # the model's context window in tokens (prompt + reply); 0: memcore.llm.windows' table (none offline). Set, it
    # applies to any provider (the offline engine simulates that window) and joins the memory space and run id
    llm_context_window: int = field(default_factory=lambda: int(_env("MEMCORE_LLM_CONTEXT_WINDOW", "0")))
    llm_check: bool = True  # reach the endpoint (GET /models, 5 s) before ingest, ask and eval
    sim_delay_ms: float = field(default_factory=lambda: float(_env("MEMCORE_SIM_DELAY_MS", "500")))
    sim_jitter_ms: float = field(default_factory=lambda: float(_env("MEMCORE_SIM_JITTER_MS", "100")))
    sim_429_rate: float = field(default_factory=lambda: float(_env("MEMCORE_SIM_429_RATE", "0")))
    use_cache: bool = True  # the on-disk LLM response cache (<cache_path>/llm_cache.sqlite), real providers only
    # keep each LLM call's prompt and completion text in the ledger (the call inspector shows them);
    # MEMCORE_LEDGER_TEXT=0 (or `memcore --no-ledger-text ...`) stores calls without their text, and also turns
    # the LLM response cache off (it would store completions): a rerun or resume asks the model again
    ledger_text: bool = field(default_factory=ledger_text_from_env)

    @property
    def provider(self) -> str:
        """The LLM provider in force: explicit, else openai when a key is set, else offline."""
        if self.llm_provider:
            return self.llm_provider
        return "openai" if self.openai_api_key else "offline"

    @property
    def concurrency(self) -> int:
        """LLM calls in flight at once: explicit, else 8 for HTTP providers and 1 for in-process ones and the
        bundled local server (it answers one request at a time: more would only queue into read timeouts)."""
        if self.llm_concurrency > 0:
            return self.llm_concurrency
        return 8 if self.provider in ("openai", "simulated") else 1

    @property
    def cache_path(self) -> Path:
        """Local directory for the LLM-call and embedding caches."""
        if self.cache_dir:
            return Path(self.cache_dir)
        if "://" in self.store_uri:
            return Path(".memcore") / "cache"
        return Path(self.store_uri) / "cache"

    def with_(self, **changes: object) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)
