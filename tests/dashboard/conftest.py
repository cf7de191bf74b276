"""Fixtures: one small real lake per test session (built without Ray), and an empty one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboard.lake import make_lake


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake with the runs of tests/dashboard/lake.py (about 2 s to write)."""
    root = tmp_path_factory.mktemp("lake")
    make_lake(root)
    return root


@pytest.fixture
def empty_lake(tmp_path: Path) -> Path:
    """A data root with nothing in it."""
    root = tmp_path / "empty"
    root.mkdir()
    return root


@pytest.fixture(autouse=True)
def fresh_dashboard(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test: a mart cache of its own (never the user's ~/.cache), no background
    preparation (a test sees what a page computes by itself), and no warehouse left open by
    an earlier test."""
    from dashboard import data

    monkeypatch.setenv("FLIP7_CACHE", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setattr(data, "PREPARE_IN_BACKGROUND", False)
    data.reload()
    yield
    data.reload()
