"""Token counting with an OpenAI-compatible BPE encoding (quicktok ships the vocabularies)."""

from __future__ import annotations

from functools import lru_cache

import quicktok

DEFAULT_ENCODING = "cl100k_base"


@lru_cache(maxsize=8)
def _encoding(name: str) -> quicktok.Tokenizer:
    return quicktok.get_encoding(name)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Number of tokens in `text` under the given OpenAI encoding (cl100k_base by default). Remembered for the
    last COUNT_CACHE texts: an eval counts the same turns and items again for every question's row (conv-26
    with every system: 77K counts of a few thousand texts)."""
    if not text:
        return 0
    return _count(text, encoding)


COUNT_CACHE = 8192


@lru_cache(maxsize=COUNT_CACHE)
def _count(text: str, encoding: str) -> int:
    return len(_encoding(encoding).encode_ordinary(text))


def count_messages(messages: list[dict[str, str]], encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of a chat prompt, with OpenAI's per-message overhead (3 per message + 3)."""
    return sum(3 + count_tokens(m.get("content", ""), encoding) for m in messages) + 3


def token_spans(text: str, encoding: str = DEFAULT_ENCODING) -> list[tuple[int, int]]:
    """Each token's (start, end) character offsets in `text` (for cutting text into token windows); a token that
    ends inside a character's UTF-8 bytes ends after that character."""
    enc = _encoding(encoding)
    char_at = [0] * (len(text.encode()) + 1)  # byte offset -> index of the character it falls in (or after)
    b = 0
    for i, ch in enumerate(text):
        n = len(ch.encode())
        for k in range(n):
            char_at[b + k] = i if k == 0 else i + 1
        b += n
    char_at[b] = len(text)
    spans, pos = [], 0
    for tok in enc.encode_ordinary(text):
        end = pos + len(enc.decode_single_token_bytes(tok))
        spans.append((char_at[pos], char_at[end]))
        pos = end
    return spans
