"""memcore's exceptions: each message says what went wrong and how to fix it."""

from __future__ import annotations


class MemcoreError(Exception):
    """Base class for memcore errors."""


class DatasetError(MemcoreError, ValueError):
    """A dataset file is malformed: the message names the file, the field and the fix."""

    def __init__(self, path: str, problem: str, fix: str = "") -> None:
        self.path, self.problem, self.fix = str(path), problem, fix
        msg = f"{path}: {problem}"
        if fix:
            msg += f". Fix: {fix}"
        super().__init__(msg)


class StoreError(MemcoreError, RuntimeError):
    """The store cannot be opened or written."""


class LLMError(MemcoreError, RuntimeError):
    """An LLM call failed after retries, or its output could not be parsed."""


class ConfigError(MemcoreError, ValueError):
    """A setting is missing or invalid."""


class TransientLLMError(LLMError):
    """A call that may succeed when retried: timeout, connection error, 429, 5xx.

    `retry_after` is the server's Retry-After in seconds (429/503), when it sent one.
    """

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class PermanentLLMError(LLMError):
    """A call that will fail the same way again (bad request, refused key, unknown model)."""


class LLMCallFailed(LLMError):
    """A role call failed after retries (or its reply stayed unusable): nothing may be built from it.

    Raised by `LLMClient.run`; the ingest driver does not checkpoint the step, the evaluator does not
    score the question, and `memcore ask` exits non-zero.
    """

    def __init__(self, role: str, stage: str, message: str, rerun_fixes: bool = True) -> None:
        super().__init__(f"{role} ({stage}): {message}")
        self.role, self.stage = role, stage
        self.rerun_fixes = rerun_fixes  # False: a rerun gets the same reply (unusable at temperature 0)


class MemoryBusy(MemcoreError):
    """Another process holds the write lease of this memory (space, conversation)."""


class MemoryNotBuilt(MemcoreError):
    """A system's memory of a conversation is not built and the caller did not ask to build it."""
