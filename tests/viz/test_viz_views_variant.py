"""A variant looks like its system on every page and export (issue 26): its view is the system's own view
(structure on Ask, growth on Replay, colour in charts), not the default view of an unknown name."""

from __future__ import annotations

from memcore.viz.views import default_view, get_view, system_color


def test_a_variant_gets_its_systems_view() -> None:
    for name in ("com[beta=0.8]", "com:no-apt", "com:no-apt[K=10]", "com[beta=0.8] (@fast)"):
        assert get_view(name) is get_view("com") and get_view("com") is not default_view("com")
        assert system_color(name) == system_color("com")
    assert get_view("nosuch") is default_view("nosuch")
