"""Embedders: MiniLM loads offline from the wheel; the cache avoids re-embedding."""

from __future__ import annotations

import numpy as np

from memcore.embed import CachedEmbedder, HashingEmbedder, MiniLMEmbedder


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=32)
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return super().embed(texts)


def test_cache_embeds_each_text_once_across_instances(tmp_path):
    inner = CountingEmbedder()
    first = CachedEmbedder(inner, tmp_path).embed(["a dog", "a cat", "a dog"])
    again = CachedEmbedder(inner, tmp_path).embed(["a cat", "a dog"])
    assert inner.seen == ["a dog", "a cat"]
    assert np.array_equal(first[1], again[0]) and np.array_equal(first[0], again[1])


def test_hashing_embedder_is_deterministic_and_lexical():
    e = HashingEmbedder()
    a, b, c = e.embed(["pottery class on Monday", "on Monday: pottery class", "the marathon in Lisbon"])
    assert np.allclose(a, b) and float(a @ c) < 0.5
    assert np.allclose(np.linalg.norm(e.embed(["", "x"]), axis=1), 1.0)


def test_minilm_loads_offline_and_ranks_paraphrases(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    e = MiniLMEmbedder()
    v = e.embed(["I adopted a puppy last week", "We got a new dog recently", "The stock market fell"])
    assert v.shape == (3, 384)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.2
