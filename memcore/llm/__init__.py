"""LLM access: one client over pluggable providers, a usage ledger and a call cache.

Providers are registered once in `PROVIDERS` (name -> factory taking Settings).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memcore.llm import local_server
from memcore.llm.base import capabilities
from memcore.llm.cache import CallCache
from memcore.llm.client import LLMClient
from memcore.llm.fake import FakeLLM
from memcore.llm.ledger import CallRecord, UsageLedger
from memcore.llm.local_server import LOCAL_DEADLINE_S
from memcore.llm.offline_provider import OFFLINE_LABEL, OfflineEngine
from memcore.llm.scheduler import CallScheduler, SchedulerConfig
from memcore.llm.simulated import SimulatedProvider
from memcore.llm.windows import context_window
from memcore.settings import Settings


def __getattr__(name: str) -> Any:
    """`OpenAIProvider` on first use: importing the openai package costs ~1 s at app start-up."""
    if name == "OpenAIProvider":
        from memcore.llm.openai_provider import OpenAIProvider  # lazy: start-up (openai ~1 s)

        return OpenAIProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _openai(s: Settings) -> Any:
    from memcore.llm.openai_provider import OpenAIProvider  # lazy: start-up (openai ~1 s)

    return OpenAIProvider(s.llm_model, s.openai_api_key, s.openai_base_url, s.llm_timeout_s,
                          connect_timeout_s=s.llm_connect_timeout_s, structured=s.llm_structured)


def _local(s: Settings) -> Any:
    from memcore.llm.openai_provider import OpenAIProvider  # lazy: start-up (openai ~1 s)

    url, model = local_server.ensure_running()
    timeout = max(s.llm_timeout_s, local_server.LOCAL_TIMEOUT_S)
    # booked as `local` (priced free; the run's actual calls are found); shared by every memcore process, so a
    # check waits while it is busy with another's request; when its owner exited, a refused call starts one
    # on the same port
    return OpenAIProvider(model, "local", url, timeout, label="local SmolLM2-135M (llama.cpp)",
                          connect_timeout_s=s.llm_connect_timeout_s, structured=s.llm_structured, name="local",
                          check_busy_s=timeout, on_connect_error=local_server.ensure_running)


def _simulated(s: Settings) -> Any:
    return SimulatedProvider(delay_ms=s.sim_delay_ms, jitter_ms=s.sim_jitter_ms, rate_429=s.sim_429_rate)


PROVIDERS: dict[str, Callable[[Settings], Any]] = {
    "offline": lambda s: OfflineEngine(),
    "openai": _openai,
    "local": _local,
    "fake": lambda s: FakeLLM(),
    "simulated": _simulated,  # the offline engine's outputs after a simulated network latency (benchmarks)
}


def make_provider(settings: Settings) -> Any:
    """The provider named by settings.provider."""
    try:
        factory = PROVIDERS[settings.provider]
    except KeyError:
        raise ValueError(f"unknown LLM provider {settings.provider!r}; choose one of {sorted(PROVIDERS)}") from None
    return factory(settings)


def make_scheduler(settings: Settings) -> CallScheduler:
    """The call scheduler for these settings (concurrency, rate limits, retries, deadline)."""
    deadline = settings.llm_deadline_s
    if settings.provider == "local":  # one request at a time on 2 cores: a long prompt takes minutes

        deadline = max(deadline, LOCAL_DEADLINE_S)
    return CallScheduler(SchedulerConfig(
        concurrency=settings.concurrency, rpm=settings.llm_rpm, tpm=settings.llm_tpm,
        retries=settings.llm_retries, deadline_s=deadline))


def make_client(settings: Settings, ledger: UsageLedger | None = None, provider: Any = None,
                embedder: Any = None) -> LLMClient:
    """An LLMClient for these settings; real providers get the on-disk call cache (not the fake or
    the latency simulator, whose point is to make the calls), unless settings.ledger_text is off: the cache
    stores completions, so with the text switched off nothing is cached and a rerun asks the model again.
    A provider whose offline rules compute similarities (`capabilities.needs_embedder`) gets `embedder`
    (the runtime's: the workbench passes its own)."""
    provider = provider if provider is not None else make_provider(settings)
    caps = capabilities(provider)
    if caps.needs_embedder and embedder is not None:
        provider.use_embedder(embedder)
    cache = None
    if settings.use_cache and settings.ledger_text and not caps.offline_rules \
            and provider.name not in ("fake", "simulated"):
        cache = CallCache(settings.cache_path)
    window = context_window(provider.name, getattr(provider, "model", ""), settings.llm_context_window)
    return LLMClient(provider, ledger or UsageLedger(), cache, scheduler=make_scheduler(settings),
                     unusable=settings.llm_unusable, window=window)


def structured_status(client: LLMClient) -> tuple[bool, str]:
    """(accepts schemas, one line) for `memcore doctor`: probes the endpoint under mode auto."""
    status = getattr(client.provider, "structured_status", None)
    if not callable(status):
        return True, f"{client.label} computes outputs without a request format (no schema needed)"
    form, line = status()
    return form != "off", line


def check_endpoint(client: LLMClient | Any, timeout_s: float = 5.0) -> None:
    """Fail in seconds (ConfigError naming the URL and the fix) when the endpoint of a client (or of a provider)
    is unreachable; providers without an endpoint pass."""
    check = getattr(getattr(client, "provider", client), "check", None)
    if callable(check):
        check(timeout_s)


__all__ = [
    "CallCache", "CallRecord", "CallScheduler", "FakeLLM", "LLMClient", "OFFLINE_LABEL", "OfflineEngine",
    "OpenAIProvider", "PROVIDERS", "SchedulerConfig", "UsageLedger", "check_endpoint", "make_client",
    "make_provider", "make_scheduler", "structured_status",
]
