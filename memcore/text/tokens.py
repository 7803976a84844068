"""Token counting with an OpenAI-compatible BPE encoding (quicktok ships the vocabularies)."""

from __future__ import annotations

from functools import lru_cache

import quicktok

DEFAULT_ENCODING = "cl100k_base"


@lru_cache(maxsize=8)
def _encoding(name: str) -> quicktok.Tokenizer:
    return quicktok.get_encoding(name)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Number of tokens in `text` under the given OpenAI encoding (cl100k_base by default)."""
    if not text:
        return 0
    return len(_encoding(encoding).encode_ordinary(text))


def count_messages(messages: list[dict[str, str]], encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of a chat prompt, with OpenAI's per-message overhead (3 per message + 3)."""
    return sum(3 + count_tokens(m.get("content", ""), encoding) for m in messages) + 3
