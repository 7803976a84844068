"""The OpenAI-compatible provider: OpenAI, vLLM, Ollama, llama.cpp server, ...

One request per `chat()` call: the scheduler (memcore/llm/scheduler.py) retries transient
failures, honours Retry-After and bounds concurrency. Errors are mapped to
TransientLLMError (timeouts, connection errors, 429, 5xx) or PermanentLLMError (4xx), with the
URL's credentials and the key removed from every message.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, Unpack

import openai

from memcore.errors import ConfigError, LLMError, PermanentLLMError, TransientLLMError
from memcore.llm.base import ChatOptions, ChatResult, chat_options
from memcore.llm.fixes import FIX_KEY, FIX_MODEL, FIX_TIMEOUT, FIX_URL, NEEDS_KEY
from memcore.llm.redact import mask_secrets, redact, redact_url, url_secrets
from memcore.llm.structured import (
    FORMS,
    PROBE_MESSAGES,
    PROBE_NAME,
    PROBE_REPLY,
    PROBE_SCHEMA,
    check_mode,
    response_format,
)

REJECTED = (openai.BadRequestError, openai.UnprocessableEntityError)  # a request the server refuses (400, 422)


def rejects_format(e: Exception) -> bool:
    """Whether an error refuses the request's response_format: a 400 or 422, or a 500 whose body names it
    (llama-cpp-python's server answers an unknown response_format type with a 500 validation error)."""
    if isinstance(e, REJECTED):
        return True
    return isinstance(e, openai.InternalServerError) and "response_format" in str(e)


FORMAT_NAMES = {"json_schema": "json_schema", "json_object": "json_object+schema", "off": "json_object"}

# What `auto` found per (endpoint, model) in this process: "json_schema", "json_object" or "off".
_FORMATS: dict[tuple[str, str], str] = {}
_FORMATS_LOCK = threading.Lock()


def forget_formats() -> None:
    """Forget every endpoint's probed request format (tests; a server that was upgraded)."""
    with _FORMATS_LOCK:
        _FORMATS.clear()


class OpenAIProvider:
    """Chat completions over HTTP; usage from the API's `usage`."""

    name = "openai"

    def __init__(
        self,
        model: str,
        api_key: str = "",
        base_url: str = "",
        timeout_s: float = 60.0,
        label: str = "",
        connect_timeout_s: float = 5.0,
        structured: str = "auto",
        name: str = "",
        check_busy_s: float = 0.0,
        on_connect_error: Callable[[], object] | None = None,
    ) -> None:
        """`name`: how the ledger books the calls (default "openai"); `check_busy_s` and `on_connect_error`:
        see below (the bundled local server sets both)."""
        if not api_key and not base_url:
            raise ConfigError(NEEDS_KEY)
        self.name = name or type(self).name
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.url = redact_url(self.base_url)  # what may be shown and stored
        self.label = label or f"{model} via {self.url}"
        # the key and the endpoint's credentials: masked in errors and in every reply text (a model may quote them)
        self._secrets = tuple(s for s in (api_key, *url_secrets(self.base_url)) if s and s != "not-needed")
        self.timeout = openai.Timeout(timeout_s, connect=min(connect_timeout_s, timeout_s))
        self.client = openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url or None, timeout=self.timeout, max_retries=0
        )
        self.supports_json_mode = True
        self.supports_logprobs = True
        # a server answering one request at a time (the bundled local one) may be busy with another process's
        # request: `check` then waits up to this long for its answer once connected (a dead port still fails fast)
        self.check_busy_s = check_busy_s
        # called when the endpoint refuses the connection (the bundled local server sets it: a server another
        # memcore process started goes away when that process exits; the hook starts one on the same port); the
        # call still fails transiently, so the scheduler's retry reaches the new server
        self.on_connect_error = on_connect_error
        self.structured = check_mode(structured)
        self._probes: list[dict[str, Any]] = []  # probe requests not yet taken by the client (take_probes)

    def _clean(self, text: str) -> str:
        return redact(text, self._secrets)

    def chat(self, messages: list[dict[str, str]], **opts: Unpack[ChatOptions]) -> ChatResult:
        """One chat completion (one attempt); raises TransientLLMError / PermanentLLMError."""
        o = chat_options(opts)
        max_tokens, temperature, seed = o["max_tokens"], o["temperature"], o["seed"]
        want_lp = o["logprobs"] and self.supports_logprobs
        fmt, rf = self._format(o["json_mode"], o["schema"], o["role"], max_tokens)
        try:
            try:
                resp = self._create(messages, rf, max_tokens, temperature, want_lp, seed)
            except openai.APIStatusError as e:
                if not rejects_format(e):
                    raise
                if rf is not None and self.structured in FORMS:  # the form was asked for by name: say so
                    raise PermanentLLMError(
                        f"{self.url} rejected the request with response_format {fmt} "
                        f"({getattr(e, 'status_code', '')}: {self._clean(str(e))[:200]}). Fix: set "
                        "MEMCORE_LLM_STRUCTURED=auto (memcore finds the form the endpoint accepts)") from e
                # Some servers reject response_format or logprobs: retry without them, and remember
                # only if that worked (a 400 for another reason, e.g. context length, fails again).
                if not (rf is not None or want_lp):
                    raise
                resp = self._create(messages, None, max_tokens, temperature, False, seed)
                self.supports_json_mode = self.supports_json_mode and rf is None
                self.supports_logprobs = self.supports_logprobs and not want_lp
                fmt = "text" if rf is not None else fmt
        except openai.APIError as e:
            if self.on_connect_error is not None and isinstance(e, openai.APIConnectionError) \
                    and not isinstance(e, openai.APITimeoutError):
                self.on_connect_error()
            raise self._error(e) from e
        except ValueError as e:  # a 200 whose body is not JSON (a proxy's error page, a cut connection)
            raise TransientLLMError(self._clean(f"{self.url} sent an unreadable reply body ({e})")) from e
        if not getattr(resp, "choices", None):
            raise TransientLLMError(f"{self.label}: the reply had no choices")
        choice = resp.choices[0]
        text = mask_secrets(choice.message.content or "", self._secrets)  # never stored, cached or shown as is
        lps = None
        if want_lp and getattr(choice, "logprobs", None) and choice.logprobs.content:
            lps = [float(t.logprob) for t in choice.logprobs.content]
        usage = resp.usage
        return ChatResult(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            model=resp.model or self.model,
            logprobs=lps,
            request_format=fmt,
        )

    # ------------------------------------------------------------ structured outputs
    def _format(self, json_mode: bool, schema: dict[str, Any] | None, role: str,
                max_tokens: int = 0) -> tuple[str, dict | None]:
        """(request format name, response_format or None) for one call (see memcore.llm.structured)."""
        if not json_mode or not self.supports_json_mode:
            return "text", None
        form = "off" if schema is None else self.structured if self.structured != "auto" else self.accepted_form()
        if form == "off" or schema is None:
            return FORMAT_NAMES["off"], response_format("off", "", {})
        return FORMAT_NAMES[form], response_format(form, role or "reply", schema, max_tokens)

    def accepted_form(self) -> str:
        """The schema form this endpoint and model accept and honour ("json_schema", "json_object" or
        "off"), probed on first use and remembered for the process (structured mode auto)."""
        key = (self.url, self.model)
        with _FORMATS_LOCK:
            if key not in _FORMATS:
                _FORMATS[key] = self._probe()
            return _FORMATS[key]

    def _probe(self) -> str:
        """Try each schema form with the probe schema; the first accepted and honoured one wins."""
        for form in FORMS:
            t0 = time.perf_counter()
            rec: dict[str, Any] = {"form": FORMAT_NAMES[form], "prompt_tokens": 0, "completion_tokens": 0, "text": ""}
            try:
                resp = self._create(PROBE_MESSAGES, response_format(form, PROBE_NAME, PROBE_SCHEMA), 16, 0.0, False)
            except openai.APIError as e:
                if not rejects_format(e):
                    raise self._error(e) from e
                rec.update(outcome=f"rejected ({getattr(e, 'status_code', '')})", error=self._clean(str(e))[:200])
                self._add_probe(rec, t0)
                continue
            except ValueError as e:  # an unreadable body
                raise TransientLLMError(self._clean(f"{self.url} sent an unreadable reply body ({e})")) from e
                raise self._error(e) from e
            choice = resp.choices[0] if getattr(resp, "choices", None) else None
            text = mask_secrets((choice.message.content or "") if choice else "", self._secrets)
            usage = resp.usage
            rec.update(text=text, prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                       completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0))
            honoured = _loads(text) == PROBE_REPLY
            rec["outcome"] = "honoured" if honoured else "accepted but not honoured"
            self._add_probe(rec, t0)
            if honoured:
                return form
        return "off"

    def _add_probe(self, rec: dict[str, Any], t0: float) -> None:
        rec["latency_ms"] = (time.perf_counter() - t0) * 1000
        self._probes.append(rec)

    def take_probes(self) -> list[dict[str, Any]]:
        """The probe requests made since the last call (for the client's ledger), emptied."""
        with _FORMATS_LOCK:
            out, self._probes = self._probes, []
        return out

    def structured_status(self) -> tuple[str, str]:
        """(form in force, one line for `memcore doctor`): probes the endpoint under mode auto."""
        if self.structured == "off":
            return "off", "structured outputs off (MEMCORE_LLM_STRUCTURED=off): json_object without a schema"
        if self.structured != "auto":
            return self.structured, f"{FORMAT_NAMES[self.structured]} (set by MEMCORE_LLM_STRUCTURED)"
        form = self.accepted_form()
        tried = "; ".join(f"{p['form']}: {p['outcome']}" for p in self._probes) or "probed earlier"
        what = "no schema form honoured, JSON mode only" if form == "off" else f"accepts schemas as {FORMAT_NAMES[form]}"
        return form, f"{what} ({tried})"

    def _error(self, e: openai.APIError) -> LLMError:
        """Map an openai exception to a transient or permanent memcore error with a clean message."""
        if isinstance(e, openai.APITimeoutError):
            return TransientLLMError(f"{self.url} did not answer within {self.timeout.read:g} s (read timeout). "
                                     + FIX_TIMEOUT)
        if isinstance(e, openai.APIConnectionError):
            cause = e.__cause__ or e
            return TransientLLMError(self._clean(f"cannot connect to {self.url} ({type(cause).__name__}: "
                                                 f"{cause}). {FIX_URL}"))
        status = getattr(e, "status_code", None)
        body = self._clean(str(getattr(e, "message", "") or e))[:300]
        if isinstance(e, openai.RateLimitError) or status == 429:
            return TransientLLMError(f"{self.url} rate limit (429): {body}", retry_after=_retry_after(e), status=429)
        if isinstance(e, openai.APIStatusError) and status is not None and status >= 500:
            return TransientLLMError(f"{self.url} server error {status}: {body}", retry_after=_retry_after(e),
                                     status=status)
        if status in (401, 403):
            return PermanentLLMError(f"{self.url} refused the key ({status}): {body}. {FIX_KEY}")
        if status == 404:
            return PermanentLLMError(f"{self.url} has no such model or path (404): {body}. {FIX_MODEL}")
        if status is not None:
            err = PermanentLLMError(f"{self.url} rejected the request ({status}): {body}")
            err.status = status
            return err
        return TransientLLMError(f"{self.url}: {type(e).__name__}: {body}")

    def check(self, timeout_s: float = 5.0) -> None:
        """Fail in seconds when the endpoint cannot be reached or refuses the key (GET /models)."""
        read_s = max(timeout_s, self.check_busy_s)
        try:
            self.client.with_options(timeout=openai.Timeout(read_s, connect=min(5.0, timeout_s))).models.list()
        except openai.APITimeoutError as e:
            raise ConfigError(f"{self.url} accepted the connection but did not answer within {read_s:.0f} s. "
                              f"{FIX_URL}") from e
        except openai.APIConnectionError as e:
            raise ConfigError(str(self._error(e))) from e
        except openai.APIStatusError as e:
            if e.status_code in (401, 403):
                raise ConfigError(str(self._error(e))) from e
            # 404 and friends: servers without /models still answer chat completions

    def _create(self, messages: list, rf: dict[str, Any] | None, max_tokens: int, temperature: float,
                logprobs: bool, seed: int | None = None):
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if seed is not None:  # sampled roles (temperature > 0) with a configured seed
            kwargs["seed"] = seed
        if rf is not None:
            kwargs["response_format"] = rf
        if logprobs:  # llama.cpp's server returns logprobs only when top_logprobs is set too
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = 1
        return self.client.chat.completions.create(**kwargs)


def _loads(text: str) -> Any:
    try:
        return json.loads(text.strip())
    except ValueError:
        return None


def _retry_after(e: Exception) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms) header, if the server sent one."""
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        if headers.get("retry-after"):
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None
