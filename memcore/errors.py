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
