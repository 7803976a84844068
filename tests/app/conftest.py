"""Fixtures shared by the app tests (AppTest and browser)."""

from __future__ import annotations

import pytest


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    """A temporary store, the hashing embedder and the offline engine; the test runs in tmp_path."""
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    monkeypatch.chdir(tmp_path)
    return tmp_path
