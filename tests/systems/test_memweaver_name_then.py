"""MemWeaver's offline clause matcher without a pattern per sentence: `name_then` finds what the per-sentence
alternation `\\b(name1|name2|...)` + tail found (the rule it replaced), on hand-picked and random sentences."""

from __future__ import annotations

import random
import re

from memcore.systems.memweaver.offline_extract import _CLAUSE, _POSSESSIVE, clauses, name_then


def _old(tail: re.Pattern[str], text: str, names: list[str]) -> list[tuple]:
    rx = re.compile(r"\b(?P<subj_>" + "|".join(re.escape(n) for n in names) + ")" + tail.pattern)
    return [(m.group("subj_"), m.start(), m.end(), m.groups()[1:]) for m in rx.finditer(text)]


def _new(tail: re.Pattern[str], text: str, names: list[str]) -> list[tuple]:
    return [(n, m.start() - len(n), m.end(), m.groups()) for n, m in name_then(tail, text, names)]


HAND = [
    ("Bob Smith went to Paris and Bob loves tea.", ["Bob Smith", "Bob"]),
    ("Bob Smithers is here; Bob Smith moved to Rome.", ["Bob Smith", "Bob"]),  # longest first, then backtrack
    ("C++ is great and C++ has templates. aC++ runs fast.", ["C++"]),  # a name that is not a word at its start
    ("Anna's sister plays piano. Annabel's cat sleeps.", ["Anna"]),  # \b before, none after (as before)
    ("user user user really wants to go with friends", ["user"]),  # overlapping starts: next after the end
    ("The user's new laptop arrived; assistant's reply was quick.", ["assistant", "user"]),
    ("", ["x"]),
    ("nothing here", ["Zed"]),
]


def test_name_then_finds_what_the_alternation_found_on_hand_picked_sentences() -> None:
    for text, names in HAND:
        for tail in (_CLAUSE, _POSSESSIVE):
            assert _new(tail, text, names) == _old(tail, text, names), (text, names, tail.pattern)


def test_name_then_finds_what_the_alternation_found_on_random_sentences() -> None:
    rng = random.Random(7)
    words = ["Bob", "Bob Smith", "Ann", "Anna", "user", "is", "was", "really", "to", "go", "goes", "with", "the",
             "new", "cat", "'s", "'s new", "friends", "C++", "at", "in", "loves", "tea", ".", ",", "and", "never",
             "Smith", "a", "plays"]
    pool = ["Bob", "Bob Smith", "Ann", "Anna", "user", "C++", "Smith", "a"]
    checked = 0
    for _ in range(3000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 18))).replace(" '", "'")
        names = sorted(set(rng.sample(pool, rng.randint(1, 4))), key=len, reverse=True)
        for tail in (_CLAUSE, _POSSESSIVE):
            old = _old(tail, text, names)
            assert _new(tail, text, names) == old, (text, names, tail.pattern)
            checked += bool(old)
    assert checked > 300  # the random sentences do match, often


def test_clauses_read_subjects_and_possessives() -> None:
    got = clauses("I really love hiking with Maria. My brother's new bike is red.", "Caroline", ["Caroline", "Mel"])
    pairs = {(c["source"], c["relation"], c["target"]) for c in got}
    assert ("Caroline", "really love", "hiking") in pairs
    assert any(s == "Caroline" and r == "has" for s, r, _ in pairs), pairs
