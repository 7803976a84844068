"""MemWeaver's offline triple selector weighs a triple's question terms by an exactly rounded sum: the weight (and
so a tie between two triples) does not depend on the order a set yields the terms in, which follows the
process's string-hash seed."""

from __future__ import annotations

import itertools

from memcore.systems.memweaver.offline import idf_weight


def test_the_weight_is_the_same_in_every_order_of_the_terms():
    idf = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 1e16, "e": -1e16}
    plain = {sum(idf[w] for w in order) for order in itertools.permutations("abc")}
    assert len(plain) > 1  # a plain float sum differs by order: the fixture can show the fault
    for words in ("abc", "abcde"):
        sums = {idf_weight(dict.fromkeys(order).keys(), idf) for order in itertools.permutations(words)}
        assert len(sums) == 1, sums
    assert idf_weight({"a", "b", "c", "zz"}, idf) == 0.6  # unknown terms weigh nothing; 0.1 + 0.2 + 0.3 exactly rounded
