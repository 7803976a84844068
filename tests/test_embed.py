"""Embedders: MiniLM loads offline from the wheel; the cache avoids re-embedding."""

from __future__ import annotations

import numpy as np
import pytest

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


@pytest.fixture(scope="module")
def minilm():
    return MiniLMEmbedder()


def test_minilm_loads_offline_and_ranks_paraphrases(minilm):
    e = minilm
    v = e.embed(["I adopted a puppy last week", "We got a new dog recently", "The stock market fell"])
    assert v.shape == (3, 384)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.2


TEXTS = ["Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
         "Melanie: Wow, that's cool!",
         "Caroline: The transgender stories were so inspiring! I was so happy and thankful for all the support.",
         "Melanie: I'm painting a lake sunrise for the art show next month, after the pottery workshop with my kids.",
         "ok",
         "When did Caroline go to the LGBTQ support group?"]


def bytes_of(v: np.ndarray) -> list[bytes]:
    return [row.tobytes() for row in v]


def test_minilm_vector_does_not_depend_on_batch_company(minilm):
    alone = bytes_of(np.stack([minilm.embed([t])[0] for t in TEXTS]))
    assert len(set(alone)) == len(TEXTS)
    assert bytes_of(minilm.embed(TEXTS)) == alone  # padded to the longest text if batched
    assert bytes_of(minilm.embed(TEXTS[::-1]))[::-1] == alone
    mixed = minilm.embed([TEXTS[3], TEXTS[1], TEXTS[3], TEXTS[4]])
    assert bytes_of(mixed) == [alone[3], alone[1], alone[3], alone[4]]


def test_minilm_batches_texts_of_one_token_count_under_its_thread_setting(minilm, monkeypatch):
    """Texts with the same token count share a forward pass (no padding: the vectors of the texts alone, to
    float32 rounding: some CPUs block a matrix product of 4 rows differently from one of 1, 1.5e-7 apart on the
    2-core AMD EPYC CI runs on), and torch runs the embedder's thread count while it encodes (then gets its own
    count back)."""
    import torch

    same = ["a dog runs", "a cat runs", "a cow runs", "a fox runs"]
    alone = np.stack([minilm.embed([t])[0] for t in same + TEXTS])
    model, passes, threads = minilm.model, [], []
    real = model.encode

    def counting(texts, *a, **k):
        passes.append(len(texts))
        threads.append(torch.get_num_threads())
        return real(texts, *a, **k)

    monkeypatch.setattr(model, "encode", counting)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        e = MiniLMEmbedder(threads=1)
        assert np.allclose(e.embed(same + TEXTS), alone, rtol=0, atol=1e-6)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert passes[0] == len(same) and sum(passes) == len(same + TEXTS) and len(passes) < len(same + TEXTS)
    assert set(threads) == {1}


def test_cached_vectors_equal_whichever_texts_were_cached_before(minilm, tmp_path):
    """A resumed run finds some texts cached, so its misses form other batches: same bytes anyway."""
    fresh = CachedEmbedder(minilm, tmp_path / "a").embed(TEXTS)
    resumed = CachedEmbedder(minilm, tmp_path / "b")
    resumed.embed([TEXTS[i] for i in (0, 2, 3)])  # the long texts: the other misses are padded less
    assert bytes_of(resumed.embed(TEXTS)) == bytes_of(fresh)
    assert resumed.hits == 3 and resumed.misses == len(TEXTS)


def _run(code: str, **env: str) -> str:
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HF_HUB_OFFLINE": "1", **env})
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_minilm_embedder_loads_torch_only_when_it_first_embeds():
    pytest.importorskip("sentence_transformers")
    out = _run("import sys\nfrom memcore.embed import MiniLMEmbedder\n"
               "a, b = MiniLMEmbedder(), MiniLMEmbedder()\nprint('torch' in sys.modules)\n"
               "v = a.embed(['hello there'])\nprint('torch' in sys.modules, v.shape, a.model is b.model)")
    assert out.split() == ["False", "True", "(1,", "384)", "True"]


def test_minilm_preload_loads_the_model_once_in_the_background():
    pytest.importorskip("sentence_transformers")
    out = _run("import sys\nfrom memcore.embed import start_model_preload, minilm_model\n"
               "t = start_model_preload()\nprint(t is start_model_preload())\nt.join(300)\n"
               "import memcore.embed as E\nprint(len(E._MINILM), minilm_model() is E._MINILM[0])")
    assert out.split() == ["True", "1", "True"]


def test_the_tokenizer_thread_pool_is_off_unless_the_user_set_it():
    """Issue 28: the tokenizer's own threads spin beside the encoding thread on a busy machine."""
    pytest.importorskip("sentence_transformers")
    code = ("import os\nfrom memcore.embed import minilm_model\n{}minilm_model()\n"
            "print(os.environ['TOKENIZERS_PARALLELISM'])")
    assert _run(code.format("os.environ.pop('TOKENIZERS_PARALLELISM', None)\n")).split() == ["false"]
    assert _run(code.format(""), TOKENIZERS_PARALLELISM="true").split() == ["true"]


def test_app_launcher_warms_imports_and_the_model_before_serving():
    code = ("import sys\nimport ui.launch as L\nbefore = 'lancedb' in sys.modules\nL.warm(log=False)\n"
            "print(before, all(m in sys.modules for m in L.WARM_MODULES), 'torch' in sys.modules)")
    # MiniLM is loaded before the server answers, so torch never competes with a first visit (issue 15 item 12)
    assert _run(code, MEMCORE_EMBEDDER="minilm").split() == ["False", "True", "True"]
    # another embedder: no torch at all
    assert _run(code, MEMCORE_EMBEDDER="hashing").split() == ["False", "True", "False"]


def test_turns_are_embedded_in_token_count_order_and_stored_in_turn_order(minilm, tmp_path):
    """issue 28: ensure_turns embeds 16 turns per call for progress; in turn order most calls held 16 different
    token counts (a forward pass each). In MiniLM's token-count order a call's texts share passes; the stored
    vectors are those of each text alone (to float32 rounding, as above), in turn order."""
    from memcore.datasets import load_demo
    from memcore.embed import embedding_order
    from memcore.ingest import EMBED_BATCH, ensure_turns
    from memcore.store import LanceStore

    conv = load_demo()
    texts = [t.embed_text for t in conv.turns]
    counts = minilm.token_counts(texts)
    order = embedding_order(minilm, texts)
    assert sorted(order) == list(range(len(texts))) and order != list(range(len(texts)))
    assert [counts[i] for i in order] == sorted(counts)
    assert embedding_order(CachedEmbedder(minilm, tmp_path / "c"), texts) == order  # through the cache too
    assert embedding_order(HashingEmbedder(), texts) == list(range(len(texts)))  # no token counts: as given
    calls: list[list[str]] = []

    def embed(batch):
        calls.append(list(batch))
        return minilm.embed(batch)

    store = LanceStore(str(tmp_path / "store"), dim=minilm.dim)
    ensure_turns(conv, store, embed, embedder=minilm)
    assert [t for c in calls for t in c] == [texts[i] for i in order] and max(map(len, calls)) == EMBED_BATCH
    ids, mat = store.turn_matrix(conv.id)
    by_id = dict(zip(ids, np.asarray(mat, dtype=np.float32), strict=True))
    alone = {t.turn_id: minilm.embed([t.embed_text])[0] for t in conv.turns[:: max(1, len(texts) // 12)]}
    assert all(np.allclose(by_id[tid], v, rtol=0, atol=1e-6) for tid, v in alone.items())


def test_the_embedding_cache_does_not_sync_each_commit_the_llm_cache_does(tmp_path):
    """issue 28: a disk sync per embedding-cache commit (~8 ms, ~950 per conv-26 eval) was wall time of every
    eval; a lost vector is recomputed bit for bit, so that cache syncs at WAL checkpoints only. LLM replies
    cost money to redo: their cache keeps a sync per commit."""
    from memcore.llm.cache import CallCache
    from memcore.sqlite_util import LocalSQLite

    emb = CachedEmbedder(HashingEmbedder(), tmp_path / "e")
    emb.embed(["a dog"])
    assert emb._conn().execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert emb._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    calls = CallCache(tmp_path / "l")
    assert calls._conn().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert np.array_equal(CachedEmbedder(HashingEmbedder(), tmp_path / "e").embed(["a dog"]),
                          HashingEmbedder().embed(["a dog"]))  # written and read back
    with pytest.raises(ValueError, match="synchronous"):
        LocalSQLite(tmp_path / "x.sqlite", "CREATE TABLE t (k TEXT)", synchronous="OFF")
