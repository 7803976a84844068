"""Agreement on too few items (issue 37): a Fleiss' kappa of -1.000 from 2 shared items comes with a caveat."""

from __future__ import annotations

from memcore.annotate.stats import MIN_KAPPA_ITEMS, agreement


def test_a_kappa_from_two_items_carries_a_caveat() -> None:
    two = agreement({"i1": {"ann": "helpful", "bob": "not_helpful"}, "i2": {"ann": "not_helpful", "bob": "helpful"}})
    assert two["fleiss_kappa"] is not None and two["n_items_all_raters"] == 2
    assert "Too few items" in two["caveat"] and "from 2 item(s)" in two["caveat"]
    assert two["pairs"][0]["too_few_items"] is True
    many = agreement({f"i{i}": {"ann": "helpful", "bob": "helpful" if i % 3 else "not_helpful"}
                      for i in range(MIN_KAPPA_ITEMS)})
    assert many["caveat"] == "" and many["pairs"][0]["too_few_items"] is False
