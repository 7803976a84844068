"""The offline reader parses a context once (a full-context reader gets the same one for every question): the
cached parse equals a fresh one, callers get their own list, and the passages cannot be changed through it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memcore.llm.offline.answer_passages import _parse, _parsed_context, _parsed_passages, parse_passages

CONTEXT = ("[8 May, 2023] Caroline: I went to the LGBTQ support group yesterday. It was powerful.\n"
           "[8 May, 2023] Melanie: That's great! [shares a photo of a sunset over the lake]\n")


def test_a_context_is_parsed_once_and_equals_a_fresh_parse():
    _parsed_context.cache_clear()
    first = parse_passages({"context": CONTEXT})
    second = parse_passages({"context": CONTEXT})
    assert _parsed_context.cache_info().hits == 1
    assert first == second and first is not second  # the same passages, each caller its own list
    fresh = list(_parse([{"text": "Caroline: I went to the LGBTQ support group yesterday. It was powerful.",
                          "date": "8 May, 2023", "score": 0.0},
                         {"text": "Melanie: That's great! [shares a photo of a sunset over the lake]",
                          "date": "8 May, 2023", "score": 0.0}]))
    assert first == fresh
    assert [p.speaker for p in first] == ["Caroline", "Melanie"]
    assert [s.text for s in first[1].sents][-1] == "a sunset over the lake"  # the caption is a sentence
    first.pop()  # a caller's list is its own
    assert len(parse_passages({"context": CONTEXT})) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        second[0].score = 9.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        second[0].sents[0].text = "changed"  # type: ignore[misc]


def test_passages_are_cached_by_value_and_numpy_scores_are_parsed_as_given():
    _parsed_passages.cache_clear()
    raw = [{"text": "Caroline: I paint sunsets.", "score": 0.75}, {"text": "Melanie: Me too!", "score": 0.5}]
    a = parse_passages({"passages": raw})
    b = parse_passages({"passages": [dict(r) for r in raw]})  # equal values, other objects: one parse
    assert a == b and _parsed_passages.cache_info().hits == 1
    assert [p.score for p in a] == [0.75, 0.5]
    c = parse_passages({"passages": [{**r, "score": np.float32(0.123)} for r in raw]})  # not JSON: not cached
    assert [p.score for p in c] == [float(np.float32(0.123))] * 2
    assert _parsed_passages.cache_info().currsize == 1


def test_stem_pairs_are_the_sorted_consecutive_pairs() -> None:
    from memcore.llm.offline.answer_passages import pairs

    seqs = [[], ["a"], ["yoga", "upsid", "down", "yoga", "yoga"], ["b", "a", "b", "a"], ["cook", "show", "cook"]]
    for seq in seqs:
        assert pairs(seq) == frozenset(tuple(sorted(ab)) for ab in zip(seq, seq[1:], strict=False)
                                       if ab[0] != ab[1])
    assert pairs(["show", "cook", "show"]) == {("cook", "show")}  # unordered, once
