"""The OpenAI-compatible provider: OpenAI, vLLM, Ollama, llama.cpp server, ..."""

from __future__ import annotations

from typing import Any, Unpack

import openai
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from memcore.errors import ConfigError, LLMError
from memcore.llm.base import ChatOptions, ChatResult, chat_options

RETRYABLE = (
    openai.APIConnectionError,
    openai.APITimeoutError,
    openai.RateLimitError,
    openai.InternalServerError,
)


class OpenAIProvider:
    """Chat completions over HTTP; usage from the API's `usage`; retries with backoff."""

    name = "openai"

    def __init__(
        self,
        model: str,
        api_key: str = "",
        base_url: str = "",
        timeout_s: float = 60.0,
        retries: int = 3,
        label: str = "",
    ) -> None:
        if not api_key and not base_url:
            raise ConfigError(
                "the openai provider needs a key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a "
                "local OpenAI-compatible server), or choose the offline provider"
            )
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.label = label or f"{model} via {self.base_url}"
        self.client = openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url or None, timeout=timeout_s, max_retries=0
        )
        self.retries = retries
        self.supports_json_mode = True
        self.supports_logprobs = True

    def chat(self, messages: list[dict[str, str]], **opts: Unpack[ChatOptions]) -> ChatResult:
        """One chat completion; transient errors (timeouts, 429, 5xx) are retried with backoff."""
        o = chat_options(opts)
        max_tokens, temperature = o["max_tokens"], o["temperature"]
        want_json = o["json_mode"] and self.supports_json_mode
        want_lp = o["logprobs"] and self.supports_logprobs
        try:
            resp = self._create(messages, want_json, max_tokens, temperature, want_lp)
        except openai.BadRequestError as e:
            # Some servers reject response_format or logprobs: drop them once and remember.
            if not (want_json or want_lp):
                raise LLMError(f"{self.label} rejected the request: {e}") from e
            self.supports_json_mode = self.supports_json_mode and not want_json
            self.supports_logprobs = self.supports_logprobs and not want_lp
            resp = self._create(messages, False, max_tokens, temperature, False)
        except RETRYABLE as e:
            raise LLMError(f"{self.label} failed after {self.retries} attempts: {e}") from e
        except openai.APIError as e:
            raise LLMError(f"{self.label} error: {e}") from e
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

    def _create(self, messages: list, json_mode: bool, max_tokens: int, temperature: float, logprobs: bool):
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if logprobs:  # llama.cpp's server returns logprobs only when top_logprobs is set too
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = 1
        call = retry(
            retry=retry_if_exception_type(RETRYABLE),
            stop=stop_after_attempt(max(1, self.retries)),
            wait=wait_exponential(multiplier=0.2, max=4),
            reraise=True,
        )(self.client.chat.completions.create)
        return call(**kwargs)
