"""The plugin's tests opt in to installed plugins (memcore's own test suite runs with them off)."""

from __future__ import annotations

import pytest

from memcore.registry import PLUGINS_ENV


@pytest.fixture(autouse=True)
def _installed_plugins_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """memcore loads installed plugins (this one) in these tests and in the processes they start."""
    monkeypatch.setenv(PLUGINS_ENV, "1")
