"""MemWeaver's entity resolution compares fewer aliases (in decreasing order of their character-count bound,
stopping once the bound falls below the best ratio found) and indexes new aliases in amortised O(1): it resolves
every mention exactly as comparing every candidate did (the resolver it replaced, kept here as the reference):
the same entity, method, matched or nearest alias and similarity, on random and adversarial alias sets, with
the index growing between resolutions as in a build, and after a restore reorders it."""

from __future__ import annotations

import random
from difflib import SequenceMatcher

import numpy as np
import pytest

from memcore.systems.memweaver.graph import GraphMemory, _char_counts, char_masks, lcs_length, norm_name


class OldGraph:
    """The resolver before this change: every candidate of the 64-bucket character bound is compared."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self._alias_list: list[str] = []

    def add_alias(self, entity_id: str, alias: str) -> bool:
        key = norm_name(alias)
        if not key or key in self.aliases:
            return False
        self.aliases[key] = entity_id
        self._alias_list.append(key)
        return True

    def order_aliases(self, order: list[str]) -> None:
        keys = [k for k in dict.fromkeys(order) if k in self.aliases]
        placed = set(keys)
        keys += [k for k in self.aliases if k not in placed]
        self.aliases = {k: self.aliases[k] for k in keys}
        self._alias_list = list(keys)

    def _candidates(self, key: str, threshold: float) -> list[str]:
        if not self._alias_list:
            return []
        mat = np.stack([_char_counts(a) for a in self._alias_list])
        lens = np.array([len(a) for a in self._alias_list], dtype=np.float32)
        inter = np.minimum(mat, _char_counts(key)).sum(axis=1)
        bound = 2 * inter / np.maximum(lens + len(key), 1)
        return [self._alias_list[i] for i in np.flatnonzero(bound >= threshold - 1e-9)]

    def resolve(self, name: str, threshold: float) -> tuple:
        key = norm_name(name)
        if key in self.aliases:
            return (self.aliases[key], "exact", key, 1.0)
        best, best_sim = "", 0.0
        sm = SequenceMatcher(None)
        sm.set_seq2(key)
        for alias in self._candidates(key, threshold):
            sm.set_seq1(alias)
            r = sm.ratio()
            if r > best_sim or (r == best_sim and alias < best):
                best, best_sim = alias, r
        if best and best_sim >= threshold:
            return (self.aliases[best], "similarity", best, best_sim)
        return (None, "new", best, best_sim)


def _new(g: GraphMemory, name: str, threshold: float) -> tuple:
    r = g.resolve(name, threshold)
    return (r.entity_id, r.method, r.matched, r.similarity)


def _build(names: list[tuple[str, str]]) -> tuple[GraphMemory, OldGraph]:
    new, old = GraphMemory(), OldGraph()
    for eid, n in names:
        new.add_alias(eid, n)
        old.add_alias(eid, n)
    return new, old


def _words(rng: random.Random, alphabet: str, lo: int, hi: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


ALPHABETS = [
    "abc",  # few letters: many ties of ratio and of bound
    "abcdefghijklmnopqrstuvwxyz ",
    "pqrsxy0123456789 ",  # digits share buckets with p..y (ord % 64): the bucket bound is loose
    "aeiouéàüñ日本ø ",  # non-ASCII characters collide in buckets arbitrarily
    "ab!\"#$%&'()*+,-./ ",  # punctuation (some stripped at the ends by norm_name)
]


@pytest.mark.parametrize("alphabet", ALPHABETS)
def test_random_mentions_resolve_as_before_while_the_index_grows(alphabet: str) -> None:
    """A build's pattern: resolve a mention, then index it (a new entity or an alias); compared at every step."""
    rng = random.Random(hash(alphabet) % 1000)
    new, old = GraphMemory(), OldGraph()
    methods: dict[str, int] = {}
    for step in range(700):
        threshold = rng.choice([0.5, 0.6, 0.7, 0.7, 0.7, 0.75, 0.9, 1.0])
        if old._alias_list and rng.random() < 0.4:  # a variant of a known alias: near the threshold
            base = list(rng.choice(old._alias_list))
            for _ in range(rng.randint(1, 3)):
                op, i = rng.random(), rng.randrange(len(base) + 1)
                if op < 0.4:
                    base.insert(i, rng.choice(alphabet))
                elif op < 0.7 and base:
                    base.pop(min(i, len(base) - 1))
                elif base:
                    base[min(i, len(base) - 1)] = rng.choice(alphabet)
            name = "".join(base)
        else:
            name = _words(rng, alphabet, 1, 14)
        got, want = _new(new, name, threshold), old.resolve(name, threshold)
        assert got == want, (step, name, threshold)
        methods[want[1]] = methods.get(want[1], 0) + 1
        methods["new with a nearest alias"] = methods.get("new with a nearest alias", 0) + (want[1] == "new" and bool(want[2]))
        eid = want[0] or f"e{step}"
        new.add_alias(eid, name)
        old.add_alias(eid, name)
    assert methods.get("similarity", 0) > 20 and methods.get("new", 0) > 20  # both outcomes are exercised
    assert methods["new with a nearest alias"] > 10  # and new entities that report a nearest alias


def test_ties_of_ratio_pick_the_alphabetically_first_alias_as_before() -> None:
    """Aliases with the same ratio to the mention (and the same bound): the first in alphabetical order, whatever
    the order they were indexed in; the nearest alias of a new entity too."""
    aliases = ["abxd", "abdy", "zabd", "abcz", "yabc", "abce"]
    for perm in range(20):
        order = random.Random(perm).sample(aliases, len(aliases))
        new, old = _build([(f"e{i}", a) for i, a in enumerate(order)])
        for threshold in (0.7, 0.75, 0.76, 0.9):
            for mention in ("abcd", "abd", "dcba", "bcda"):
                assert _new(new, mention, threshold) == old.resolve(mention, threshold)


def test_adversarial_bounds_that_reach_the_threshold_but_ratios_that_do_not() -> None:
    """Anagrams and shuffles: the character bound is 1.0 for every alias while difflib's ratio is far lower, so
    the comparison cannot stop early; the nearest alias of a new entity is still the one comparing all named."""
    rng = random.Random(3)
    base = "abcdefghij"
    names = ["".join(rng.sample(base, len(base))) for _ in range(120)]
    new, old = _build([(f"e{i}", n) for i, n in enumerate(names)])
    for _ in range(80):
        mention = "".join(rng.sample(base, len(base)))
        for threshold in (0.5, 0.7, 0.95):
            assert _new(new, mention, threshold) == old.resolve(mention, threshold)


def test_a_restored_alias_order_resolves_as_before() -> None:
    """order_aliases rebuilds the index in the saved order; resolutions after it (and after more aliases) agree."""
    rng = random.Random(11)
    names = [(f"e{i}", _words(rng, "abcdefgh ", 2, 9)) for i in range(300)]
    new, old = _build(names)
    order = [norm_name(n) for _, n in rng.sample(names, 150)]
    new.order_aliases(order)
    old.order_aliases(order)
    assert new._alias_list == old._alias_list
    for i in range(300):
        mention = _words(rng, "abcdefgh ", 2, 9)
        assert _new(new, mention, 0.7) == old.resolve(mention, 0.7)
        if i % 3 == 0:
            new.add_alias(f"x{i}", mention)
            old.add_alias(f"x{i}", mention)


def test_edge_names_resolve_as_before() -> None:
    """Empty after normalisation, one character, a threshold of 0 and of 1, an empty index."""
    empty_new, empty_old = GraphMemory(), OldGraph()
    assert _new(empty_new, "Anna", 0.7) == empty_old.resolve("Anna", 0.7) == (None, "new", "", 0.0)
    new, old = _build([("e1", "a"), ("e2", "ab"), ("e3", "!a!"), ("e4", "b a")])
    for mention in ("...", "", "a", "b", "A!", "ba", "aa", "a b"):
        for threshold in (0.0, 0.3, 0.7, 1.0):
            assert _new(new, mention, threshold) == old.resolve(mention, threshold), (mention, threshold)


def _lcs_dp(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for ca in a:
        prev = 0
        for j, cb in enumerate(b, start=1):
            prev, row[j] = row[j], prev + 1 if ca == cb else max(row[j], row[j - 1])
    return row[-1]


def test_lcs_length_is_the_longest_common_subsequence_and_bounds_difflib() -> None:
    """The bit-parallel LCS equals the textbook dynamic programme, and 2*LCS/T is never below difflib's ratio
    (the bound that lets resolve skip an alias)."""
    rng = random.Random(5)
    for _ in range(3000):
        alphabet = rng.choice(["ab", "abc", "abcdefgh", "aé日 b"])
        a, b = _words(rng, alphabet, 0, 40), _words(rng, alphabet, 0, 40)
        got = lcs_length(char_masks(a), len(a), b)
        assert got == _lcs_dp(a, b), (a, b)
        if a or b:
            assert SequenceMatcher(None, b, a).ratio() <= 2.0 * got / (len(a) + len(b))


def _old_named(g: GraphMemory, words: str) -> list[str]:
    """entities_named's scan before the word-prefix index: every alias tried as a substring."""
    return [a for a in g.aliases if len(a) > 2 and f" {a} " in words]


def test_aliases_in_finds_what_scanning_every_alias_found() -> None:
    """Multi-word aliases, aliases that are prefixes of others, overlapping ones, doubled spaces, punctuation
    inside an alias (it can never match a text whose punctuation became spaces), a restored order."""
    rng = random.Random(13)
    vocab = ["new", "york", "new york", "york city", "ann", "anna", "an", "bob smith", "smith", "a,b", "x(y", "mel",
             "san francisco bay", "san", "francisco", "bay area", "the", "dr. who", "who"]
    g = GraphMemory()
    for i, a in enumerate(vocab):
        g.add_alias(f"e{i}", a)
    words_pool = ["new", "york", "city", "ann", "anna", "an", "bob", "smith", "mel", "san", "francisco", "bay",
                  "area", "the", "who", "dr", "a", "b", "x", "y", ""]
    hits = 0
    for n in range(3000):
        if n == 1500:
            g.order_aliases(rng.sample(list(g.aliases), 8))
        words = f" {' '.join(rng.choice(words_pool) for _ in range(rng.randint(0, 14)))} "
        want = _old_named(g, words)
        assert g.aliases_in(words, min_len=2) == want, words
        hits += bool(want)
    assert hits > 1000
    assert sorted(g.aliases_in(" new york city ", min_len=2)) == ["new", "new york", "york", "york city"]
