"""The OpenAI-compatible provider: OpenAI, vLLM, Ollama, llama.cpp server, ...

One request per `chat()` call: the scheduler (memcore/llm/scheduler.py) retries transient
failures, honours Retry-After and bounds concurrency. Errors are mapped to
TransientLLMError (timeouts, connection errors, 429, 5xx) or PermanentLLMError (4xx), with the
URL's credentials and the key removed from every message.
"""

from __future__ import annotations

from typing import Any, Unpack

import openai

from memcore.errors import ConfigError, LLMError, PermanentLLMError, TransientLLMError
from memcore.llm.base import ChatOptions, ChatResult, chat_options
from memcore.llm.fixes import FIX_KEY, FIX_MODEL, FIX_TIMEOUT, FIX_URL, NEEDS_KEY
from memcore.llm.redact import redact, redact_url


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
    ) -> None:
        if not api_key and not base_url:
            raise ConfigError(NEEDS_KEY)
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.url = redact_url(self.base_url)  # what may be shown and stored
        self.label = label or f"{model} via {self.url}"
        self._secrets = tuple(s for s in (api_key,) if s and s != "not-needed")
        self.timeout = openai.Timeout(timeout_s, connect=min(connect_timeout_s, timeout_s))
        self.client = openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url or None, timeout=self.timeout, max_retries=0
        )
        self.supports_json_mode = True
        self.supports_logprobs = True

    def _clean(self, text: str) -> str:
        return redact(text, self._secrets)

    def chat(self, messages: list[dict[str, str]], **opts: Unpack[ChatOptions]) -> ChatResult:
        """One chat completion (one attempt); raises TransientLLMError / PermanentLLMError."""
        o = chat_options(opts)
        max_tokens, temperature, seed = o["max_tokens"], o["temperature"], o["seed"]
        want_json = o["json_mode"] and self.supports_json_mode
        want_lp = o["logprobs"] and self.supports_logprobs
        try:
            try:
                resp = self._create(messages, want_json, max_tokens, temperature, want_lp, seed)
            except openai.BadRequestError:
                # Some servers reject response_format or logprobs: retry without them, and remember
                # only if that worked (a 400 for another reason, e.g. context length, fails again).
                if not (want_json or want_lp):
                    raise
                resp = self._create(messages, False, max_tokens, temperature, False, seed)
                self.supports_json_mode = self.supports_json_mode and not want_json
                self.supports_logprobs = self.supports_logprobs and not want_lp
        except openai.APIError as e:
            raise self._error(e) from e
        except ValueError as e:  # a 200 whose body is not JSON (a proxy's error page, a cut connection)
            raise TransientLLMError(self._clean(f"{self.url} sent an unreadable reply body ({e})")) from e
        if not getattr(resp, "choices", None):
            raise TransientLLMError(f"{self.label}: the reply had no choices")
        choice = resp.choices[0]
        text = choice.message.content or ""
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
        )

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
        try:
            self.client.with_options(timeout=openai.Timeout(timeout_s, connect=min(5.0, timeout_s))).models.list()
        except openai.APITimeoutError as e:
            raise ConfigError(f"{self.url} accepted the connection but did not answer within {timeout_s:.0f} s. "
                              f"{FIX_URL}") from e
        except openai.APIConnectionError as e:
            raise ConfigError(str(self._error(e))) from e
        except openai.APIStatusError as e:
            if e.status_code in (401, 403):
                raise ConfigError(str(self._error(e))) from e
            # 404 and friends: servers without /models still answer chat completions

    def _create(self, messages: list, json_mode: bool, max_tokens: int, temperature: float, logprobs: bool,
                seed: int | None = None):
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if seed is not None:  # sampled roles (temperature > 0) with a configured seed
            kwargs["seed"] = seed
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if logprobs:  # llama.cpp's server returns logprobs only when top_logprobs is set too
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = 1
        return self.client.chat.completions.create(**kwargs)


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
