"""The embedding map: projected once per memory and cached in the store, projected again when the memory changes;
the question placed by the same model; retrieved items marked with their context position, near-misses with their
cosine rank; the figure escapes hover text."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

import memcore.eval.embedding_map as em
from memcore.embed import normalise
from memcore.store import LanceStore
from memcore.store.view import MemoryView
from memcore.types import Conversation, MemoryItem, Turn
from memcore.viz.embedding_map import NEAR_MISS, RETRIEVED, embedding_map_figure

DIM = 6
RNG = np.random.default_rng(7)
VECS = normalise(RNG.normal(size=(8, DIM)).astype(np.float32))


def item(i: int, kind: str = "episode", sources=(), turns=()) -> MemoryItem:
    return MemoryItem(id=f"{kind}-{i}", kind=kind, text=f"<b>item {i}</b> & text", system="s", conv_id="c",
                      embedding=VECS[i].tolist(), sources=list(sources), turn_ids=list(turns), created_step=i + 1,
                      updated_step=i + 1)


@pytest.fixture
def mem(tmp_path) -> MemoryView:
    store = LanceStore(str(tmp_path / "db"), dim=DIM)
    items = [item(i, turns=[f"D{1 + i // 3}:{i}"]) for i in range(6)]
    items.append(item(6, "theme", sources=["episode-0", "episode-1"]))
    store.commit("sp", "s", "c", 7, items, [], [], {})
    return MemoryView(store, "s", "c", "sp")


CONV = Conversation(id="c", speakers=["A"], turns=[
    Turn(conv_id="c", turn_id=f"D{1 + i // 3}:{i}", index=i, session=1 + i // 3, session_date="", timestamp="",
         speaker="A", text="t") for i in range(6)])


def test_projection_is_cached_and_a_second_call_computes_nothing(mem, monkeypatch):
    first = em.embedding_map(mem, CONV)
    assert first.computed and len(first.points) == 7
    assert set(first.points["kind"]) == {"episode", "theme"}
    monkeypatch.setattr(em, "project", lambda *a, **k: pytest.fail("projected again"))
    second = em.embedding_map(mem, CONV)
    assert not second.computed
    assert np.allclose(second.points[["x", "y"]].to_numpy(), first.points[["x", "y"]].to_numpy(), atol=1e-4)
    assert second.points["id"].tolist() == first.points["id"].tolist()
    # another process (a new store handle) reads the same cached rows
    other = MemoryView(LanceStore(str(mem.store.uri), dim=DIM), "s", "c", "sp")
    assert not em.embedding_map(other, CONV).computed


def test_a_changed_memory_is_projected_again(mem):
    em.embedding_map(mem, CONV)
    mem.store.commit("sp", "s", "c", 8, [item(7)], [], [], {})
    again = em.embedding_map(mem, CONV)
    assert again.computed and "episode-7" in set(again.points["id"])
    assert not em.embedding_map(mem, CONV).computed
    mem.store.rollback("sp", "c", 7)  # the item is gone again: another version, projected again
    back = em.embedding_map(mem, CONV)
    assert back.computed and "episode-7" not in set(back.points["id"])


def test_methods_are_cached_apart(mem):
    assert em.embedding_map(mem, CONV, "pca").computed
    assert em.embedding_map(mem, CONV, "tsne").computed
    assert not em.embedding_map(mem, CONV, "tsne").computed
    assert not em.embedding_map(mem, CONV, "pca").computed


def test_colour_columns_session_and_theme(mem):
    pts = em.embedding_map(mem, CONV).points.set_index("id")
    assert pts.loc["episode-0", "session"] == 1 and pts.loc["episode-4", "session"] == 2
    assert pts.loc["episode-0", "theme"].startswith("theme-6") and pts.loc["episode-1", "theme"].startswith("theme-6")
    assert pts.loc["episode-3", "theme"] == ""  # nothing built on it, built on no item


def test_question_placed_by_the_same_pca_model(mem):
    emap = em.embedding_map(mem, CONV)
    pca = PCA(n_components=2).fit(emap.vectors)
    q = normalise(RNG.normal(size=(1, DIM)).astype(np.float32))[0]
    x, y, rule = em.place(emap, q)
    assert np.allclose([x, y], pca.transform(q[None])[0], atol=1e-4) and "PCA" in rule
    # a question equal to an item lands on it
    x, y, _ = em.place(emap, emap.vectors[3])
    assert np.allclose([x, y], emap.points[["x", "y"]].to_numpy()[3], atol=1e-3)


def test_tsne_question_is_the_weighted_mean_of_its_nearest_items(mem):
    emap = em.embedding_map(mem, CONV, "tsne")
    q = emap.vectors[2]
    sims = emap.vectors @ q
    top = np.argsort(-sims)[: em.TSNE_NEIGHBOURS]
    w = np.clip(sims[top], 1e-6, None)
    want = (w[:, None] * emap.points[["x", "y"]].to_numpy()[top]).sum(0) / w.sum()
    x, y, rule = em.place(emap, q)
    assert np.allclose([x, y], want, atol=1e-5) and rule == em.TSNE_RULE


def test_retrieved_ranks_near_misses_and_ids_off_the_map(mem):
    emap = em.embedding_map(mem, CONV)
    q = emap.vectors[0] + 0.1 * emap.vectors[1]
    out = em.mark_question(emap, q, ["episode-4", "D1:0", "episode-2"], near=2)
    pts = out["points"].set_index("id")
    assert pts.loc["episode-4", ["mark", "rank"]].tolist() == ["retrieved", 1]
    assert pts.loc["episode-2", ["mark", "rank"]].tolist() == ["retrieved", 3]  # its position in the context
    assert out["off_map"] == ["D1:0"]
    cos = emap.vectors @ normalise(q[None].astype(np.float32))[0]
    order = [emap.points["id"][i] for i in np.argsort(-cos)]
    misses = [i for i in order if i not in ("episode-4", "episode-2")][:2]
    assert set(pts.index[pts["mark"] == "near-miss"]) == set(misses)
    assert [int(pts.loc[i, "rank"]) for i in misses] == [order.index(i) + 1 for i in misses]
    assert (pts["mark"] == "").sum() == len(pts) - 4


def test_figure_marks_ranks_and_escapes_hover(mem):
    emap = em.embedding_map(mem, CONV)
    out = em.mark_question(emap, emap.vectors[0], ["episode-1", "episode-0"], near=1)
    fig = embedding_map_figure(out["points"], "kind", {"x": out["x"], "y": out["y"], "text": "<i>why?</i>"})
    by_name = {t.name: t for t in fig.data}
    assert list(by_name[RETRIEVED].customdata[:, 0]) == ["episode-0", "episode-1"]
    assert list(by_name[RETRIEVED].text) == ["2", "1"]  # episode-1 came first in the context
    assert len(by_name[NEAR_MISS].x) == 1
    hovers = [h for t in fig.data for h in (() if t.hovertext is None else t.hovertext)]
    assert all("<b>item" not in h and "<i>" not in h for h in hovers)
    assert any("&lt;b&gt;item 0&lt;/b&gt; &amp; text" in h for h in hovers)
    for by in ("theme", "session", "time"):
        assert len(embedding_map_figure(out["points"], by).data) >= 1


def test_a_cache_that_cannot_be_written_still_shows_the_map_and_says_so(mem, monkeypatch):
    def refuse(*a, **k):
        raise OSError("read-only store")

    monkeypatch.setattr(MemoryView, "save_projection", refuse)
    emap = em.embedding_map(mem, CONV)
    assert emap.computed and len(emap.points) == 7 and "read-only store" in emap.cache_error
    assert em.embedding_map(mem, CONV).computed  # nothing was cached: computed again
