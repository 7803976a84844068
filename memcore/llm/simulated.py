"""A latency simulator: the offline engine's outputs served like a remote chat model.

`SimulatedProvider` answers every role with exactly what the offline engine computes, but
only after a (jittered) delay, and optionally with simulated 429s. It is a chat provider (its
capabilities say no offline rules), so runs through it take the full chat / scheduler path: benchmarks can measure
how well memcore overlaps slow LLM calls without a network or a model.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any, Unpack

from memcore.errors import PermanentLLMError, TransientLLMError
from memcore.llm.base import Capabilities, ChatOptions, ChatResult, chat_options
from memcore.llm.offline_provider import OfflineEngine
from memcore.llm.roles import get_role
from memcore.text.tokens import count_messages, count_tokens

# The offline engine's lazy initialisations are not known to be thread-safe, and its work is
# CPU-bound anyway: every offline computation made on behalf of a simulated remote model holds it.
OFFLINE_LOCK = threading.Lock()

SIMULATED_429_DELAY_S = 0.05  # how long a simulated 429 takes to come back (at most)


def offline_reply(role: str, inputs: dict[str, Any], engine: OfflineEngine | None = None) -> str:
    """The offline engine's output for `role` (computed by `engine`, a fresh one without an embedder when
    None), serialized as a model's reply would be: JSON for json roles (`model_dump_json()`), the bare
    `.text` for free-text roles. Thread-safe."""
    r = get_role(role)
    with OFFLINE_LOCK:
        out = (engine or OfflineEngine()).run_role(role, inputs)
    if not r.json_output:
        return str(getattr(out, "text", ""))
    return out.model_dump_json()


class SimulatedProvider:
    """Offline-engine outputs after `delay_ms` ± `jitter_ms` (uniform, clipped at 0); with
    probability `rate_429` a call raises TransientLLMError(status=429, retry_after=retry_after_s)
    instead. Outputs never depend on the random draws: only timing and 429s do.

    `calls` counts chat() calls and `peak_concurrency` the most calls ever in flight at once.
    """

    name = "simulated"
    model = "offline-engine"
    capabilities = Capabilities(needs_embedder=True)  # a chat provider; its replies come from the offline engine

    def __init__(
        self,
        delay_ms: float = 500.0,
        jitter_ms: float = 100.0,
        rate_429: float = 0.0,
        seed: int = 0,
        retry_after_s: float = 1.0,
    ) -> None:
        if delay_ms < 0 or jitter_ms < 0 or not 0.0 <= rate_429 <= 1.0 or retry_after_s < 0:
            raise ValueError("simulated LLM: delay_ms, jitter_ms, retry_after_s must be >= 0 and rate_429 in [0, 1]")
        self.delay_ms, self.jitter_ms = float(delay_ms), float(jitter_ms)
        self.rate_429, self.retry_after_s = float(rate_429), float(retry_after_s)
        self.label = f"simulated LLM: offline engine outputs after {delay_ms:g}±{jitter_ms:g} ms"
        if rate_429 > 0:
            self.label += f", {rate_429:.0%} 429s"
        self.calls = 0
        self.peak_concurrency = 0
        self.errors_429 = 0
        self._in_flight = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.engine = OfflineEngine()

    def use_embedder(self, embedder: Any) -> None:
        """Give the offline engine behind the simulated replies the runtime's embedder."""
        self.engine.use_embedder(embedder)

    def chat(self, messages: list[dict[str, str]], **opts: Unpack[ChatOptions]) -> ChatResult:
        """One simulated call: the role's offline output after the delay (or a simulated 429)."""
        o = chat_options(opts)
        role, inputs = o["role"], o["inputs"]
        if not role or inputs is None:
            raise PermanentLLMError("the simulated LLM answers roles only: pass role= and inputs= "
                                    "(LLMClient.run does)")
        with self._lock:
            self.calls += 1
            self._in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self._in_flight)
            is_429 = self.rate_429 > 0 and self._rng.random() < self.rate_429
            delay_s = max(0.0, self.delay_ms + self._rng.uniform(-self.jitter_ms, self.jitter_ms)) / 1000.0
            if is_429:
                self.errors_429 += 1
        try:
            if is_429:
                time.sleep(min(delay_s, SIMULATED_429_DELAY_S))
                raise TransientLLMError("simulated 429", retry_after=self.retry_after_s, status=429)
            t0 = time.monotonic()
            text = offline_reply(role, inputs, self.engine)
            # The offline computation stands for the remote model's own work, which a hosted model's
            # latency already includes: the reply comes `delay_s` after the request (or when computed).
            time.sleep(max(0.0, delay_s - (time.monotonic() - t0)))  # outside every lock: calls overlap
            return ChatResult(text, count_messages(messages), count_tokens(text), self.model)
        finally:
            with self._lock:
                self._in_flight -= 1
