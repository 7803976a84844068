"""The offline engine's shared text tools: dates, names, rewriting, stems, question types."""

from __future__ import annotations

from datetime import date

import pytest

from memcore.text.dates import RELATIVE, fmt_day, normalize_time, parse_date, resolve_dates
from memcore.text.sentences import answer_type, capitalised_spans, sentences, third_person
from memcore.text.terms import keywords, overlap, stems, terms

ANCHOR = "1:14 pm on 25 May, 2023"  # a Thursday


@pytest.mark.parametrize("expr, exact, locomo", [
    ("yesterday", "24 May 2023", "24 May 2023"),
    ("last night", "24 May 2023", "24 May 2023"),
    ("today", "25 May 2023", "25 May 2023"),
    ("tonight", "25 May 2023", "25 May 2023"),
    ("this morning", "25 May 2023", "25 May 2023"),
    ("tomorrow", "26 May 2023", "26 May 2023"),
    ("last year", "2022", "2022"),
    ("this year", "2023", "2023"),
    ("next year", "2024", "2024"),
    ("earlier this year", "2023", "2023"),
    ("last month", "April 2023", "April 2023"),
    ("this month", "May 2023", "May 2023"),
    ("next month", "June 2023", "June 2023"),
    ("last week", "the week before 25 May 2023", "the week before 25 May 2023"),
    ("this week", "the week of 25 May 2023", "the week of 25 May 2023"),
    ("next week", "the week after 25 May 2023", "the week after 25 May 2023"),
    ("last weekend", "the weekend before 25 May 2023", "the weekend before 25 May 2023"),
    ("this past weekend", "the weekend before 25 May 2023", "the weekend before 25 May 2023"),
    ("last Saturday", "20 May 2023", "the Saturday before 25 May 2023"),
    ("last Fri", "19 May 2023", "the Friday before 25 May 2023"),
    ("last tues", "23 May 2023", "the Tuesday before 25 May 2023"),
    ("on Sunday", "21 May 2023", "the Sunday before 25 May 2023"),
    ("next Monday", "29 May 2023", "the Monday after 25 May 2023"),
    ("two days ago", "23 May 2023", "23 May 2023"),
    ("3 days ago", "22 May 2023", "22 May 2023"),
    ("a few days ago", "22 May 2023", "a few days before 25 May 2023"),
    ("a week ago", "the week before 25 May 2023", "the week before 25 May 2023"),
    ("two weeks ago", "the week of 11 May 2023", "two weeks before 25 May 2023"),
    ("two weekends ago", "the weekend before 18 May 2023", "two weekends before 25 May 2023"),
    ("two months ago", "March 2023", "March 2023"),
    ("ten years ago", "2013", "2013"),
    ("last summer", "summer 2022", "summer 2022"),
    ("next summer", "summer 2023", "summer 2023"),
])
def test_normalize_time_patterns(expr: str, exact: str, locomo: str) -> None:
    assert RELATIVE.fullmatch(expr), expr
    assert normalize_time(expr, ANCHOR) == exact
    assert normalize_time(expr, ANCHOR, style="locomo") == locomo


def test_normalize_time_accepts_dates_and_refuses_nonsense() -> None:
    assert normalize_time("yesterday", date(2023, 5, 8)) == "7 May 2023"
    assert normalize_time("last year", "8 May 2023") == "2022"
    assert normalize_time("someday", ANCHOR) == ""
    assert normalize_time("yesterday", None) == ""
    assert normalize_time("yesterday", "not a date") == ""


def test_parse_date_formats() -> None:
    assert parse_date("1:56 pm on 8 May, 2023") == date(2023, 5, 8)
    assert parse_date("2023-05-08T13:56:00") == date(2023, 5, 8)
    assert parse_date("May 8, 2023") == date(2023, 5, 8)
    assert parse_date("") is None
    assert fmt_day(date(2023, 5, 7)) == "7 May 2023"


def test_resolve_dates_annotates_in_place() -> None:
    out = resolve_dates("I went last Fri and I painted it last year.", "8 May 2023")
    assert out == "I went last Fri (5 May 2023) and I painted it last year (2022)."
    assert resolve_dates("a two-week trip", "8 May 2023") == "a two-week trip"


def test_capitalised_spans_skip_sentence_initial_time_words_and_interjections() -> None:
    text = ("Yesterday I took the kids out. Last Friday we met Jon. Hey Mel! Wow, Caroline's necklace is from Sweden. "
            "I'm reading The Lean Startup in May. Today is Sunday.")
    spans = capitalised_spans(text)
    assert spans == ["Jon", "Mel", "Caroline", "Sweden", "Lean Startup"]
    for word in ("Yesterday", "Last Friday", "Today", "Wow", "I'm", "May", "Sunday"):
        assert word not in spans


def test_capitalised_spans_common_words_and_skip() -> None:
    assert capitalised_spans("Here's a pic of Oscar. Never been to Rome!") == ["Oscar", "Rome"]
    assert capitalised_spans("Appreciate it, Jon.", common={"appreciate"}) == ["Jon"]
    assert capitalised_spans("Hey Caroline, Melanie said hi.", skip=["Caroline"]) == ["Melanie"]
    assert capitalised_spans("I like Bach and Mozart.") == ["Bach", "Mozart"]


@pytest.mark.parametrize("text, expected", [
    ("I am happy.", "Ana is happy."),
    ("I'm training for a race.", "Ana is training for a race."),
    ("I love my dog.", "Ana loves Ana's dog."),
    ("My sister called me.", "Ana's sister called Ana."),
    ("I don't like it.", "Ana doesn't like it."),
    ("I've been there and I go often.", "Ana has been there and Ana goes often."),
    ("I did it myself.", "Ana did it themself."),
    ("That one is mine.", "That one is Ana's."),
])
def test_third_person(text: str, expected: str) -> None:
    assert third_person(text, "Ana") == expected


def test_stems_terms_sentences() -> None:
    assert stems("Caroline's kids painted pots") == ["carolin", "kid", "paint", "pot"]
    assert stems("I made a self-portrait, don't you think?") == ["make", "self", "portrait", "think"]
    assert stems("We bought it") == ["buy"]
    assert terms("The dog and the CAT") == ["dog", "cat"]
    assert sentences("Hi there! How are you?\nFine.") == ["Hi there!", "How are you?", "Fine."]


def test_keywords_and_overlap() -> None:
    docs = ["pottery class pottery wheel", "pottery kiln"]
    assert keywords(docs, k=1, background=["weather today", "running shoes"]) == ["pottery"]
    assert overlap("pottery class", "pottery wheel") == pytest.approx(1 / 3)
    assert overlap("", "anything") == 0.0


@pytest.mark.parametrize("question, kind", [
    ("When did Caroline go to the support group?", "date"),
    ("How many kids does Melanie have?", "number"),
    ("Who performed at the concert?", "person"),
    ("Where did Oliver hide his bone?", "place"),
    ("Did Melanie make the bowl?", "yesno"),
    ("Why did Jon start a studio?", "reason"),
    ("What did Caroline research?", "thing"),
])
def test_answer_type(question: str, kind: str) -> None:
    assert answer_type(question) == kind


def test_terms_and_stems_are_remembered_per_text_and_each_call_gets_its_own_list():
    from memcore.text import terms as t

    text = "Melanie painted pots with her kids"
    first = stems(text)
    first.append("changed")  # a caller changing its list changes nothing remembered
    assert stems(text) == ["melani", "paint", "pot", "kid"] and terms(text) == ["melanie", "painted", "pots", "kids"]
    words = terms(text)
    words.clear()
    assert terms(text) == ["melanie", "painted", "pots", "kids"]
    long = " ".join([text] * (t.CACHED_TEXT // len(text) + 1))  # past the cached length: scanned, same words
    assert len(long) > t.CACHED_TEXT
    assert stems(long) == stems(text) * (t.CACHED_TEXT // len(text) + 1)
    assert terms(long) == terms(text) * (t.CACHED_TEXT // len(text) + 1)


def test_terms_of_ascii_and_other_text_split_the_same_words():
    # an ASCII text is lower-cased whole before the scan, another word by word: the words are those of a scan
    # of the text as written, each word lower-cased
    assert terms("Don't STOP-the Music's -rock- 'n' THE well-known") == ["don't", "stop-the", "music's", "rock",
                                                                         "n", "well-known"]
    assert terms("Café NAÏVE Straße") == ["caf", "na", "ve", "stra", "e"]  # WORD's letters are ASCII only
    # the Kelvin sign lower-cases to an ASCII "k": scanned as written, it is no letter of a word
    assert terms("The \u212aelvin scale") == ["elvin", "scale"]
    assert stems("I\u2019ve painted the \u212aelvin pots") == stems("I've painted the \u212aelvin pots") == [
        "paint", "elvin", "pot"]


def _keywords_per_word_df(docs: list[str], k: int = 5, background: list[str] = ()) -> list[str]:
    """keywords() as first written (document frequency counted by a pass over the corpus per word): the reference."""
    import math
    from collections import Counter

    from memcore.text.terms import term_set

    tf = Counter(w for d in docs for w in terms(d) if len(w) > 2 and not w.isdigit())
    if not tf:
        return []
    corpus = [term_set(d) for d in list(docs) + list(background)]
    n = len(corpus)

    def score(w: str) -> float:
        return tf[w] * (math.log((1 + n) / (1 + sum(1 for c in corpus if w in c))) + 1.0)

    return [w for w, _ in sorted(tf.items(), key=lambda kv: (-score(kv[0]), kv[0]))[:k]]


@pytest.mark.parametrize("seed", range(6))
def test_keywords_equal_the_per_word_document_frequency(seed: int) -> None:
    """One counting pass gives the same keywords, in the same order, ties by word, as a pass per word."""
    import random

    rng = random.Random(seed)
    vocab = [f"w{i}x" for i in range(40)] + ["pottery", "kiln", "glaze", "2024", "ab", "the", "and"]
    docs = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 30))) for _ in range(rng.randint(1, 60))]
    docs.append(" ".join(rng.choice(vocab) for _ in range(900)))  # longer than the terms cache keeps
    background = [" ".join(rng.choice(vocab) for _ in range(10)) for _ in range(rng.randint(0, 5))]
    for k in (1, 3, 5, 50):
        assert keywords(docs, k=k, background=background) == _keywords_per_word_df(docs, k, background)
