"""The sweep registry (memcore.systems.variants.register_sweep): points, canonical names, registration rules."""

from __future__ import annotations

import pytest

from memcore.systems.variants import get_sweep, register_sweep, sweeps, unregister_sweep


@pytest.fixture
def grid():
    sweep = register_sweep("com", "test-grid", {"beta": [0.3, 0.5], "max_len": [4, 8]}, source="test",
                           description="a 2 x 2 test grid")
    yield sweep
    unregister_sweep("com", "test-grid")


def test_points_are_the_product_in_key_order_with_canonical_names(grid) -> None:
    assert get_sweep("com", "test-grid") is grid and grid in sweeps("com") and grid in sweeps()
    assert grid.points() == [{"beta": 0.3, "max_len": 4}, {"beta": 0.3, "max_len": 8},
                             {"beta": 0.5, "max_len": 4}, {"beta": 0.5, "max_len": 8}]
    assert grid.variants() == ["com[beta=0.3,max_len=4]", "com[beta=0.3]", "com[max_len=4]", "com"]


def test_registration_rules(grid) -> None:
    again = register_sweep("com", "test-grid", {"beta": [0.3, 0.5], "max_len": [4, 8]}, source="test",
                           description="a 2 x 2 test grid")
    assert again is grid  # the same sweep again: a no-op
    with pytest.raises(ValueError, match="sweep 'com:test-grid' is already registered by tests.systems"):
        register_sweep("com", "test-grid", {"beta": [0.3]}, source="test", description="a 2 x 2 test grid")
    with pytest.raises(ValueError, match="needs a source"):
        register_sweep("com", "test-x", {"beta": [0.3]}, source="", description="y")
    with pytest.raises(ValueError, match="at least one value"):
        register_sweep("com", "test-x", {"beta": []}, source="x", description="y")
    with pytest.raises(ValueError, match="sweep name"):
        register_sweep("com", "bad name", {"beta": [0.3]}, source="x", description="y")
    with pytest.raises(ValueError, match="com has no sweep 'nope'; sweeps: "):
        get_sweep("com", "nope")
