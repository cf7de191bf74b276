"""Fixtures for every attack test: no Ray, and the clean lakes that tests damage copies of."""

from pathlib import Path

import pytest

from tests.pipeline.helpers import run_inline, small_plan
from tests.security.helpers import no_ray  # noqa: F401  (a fixture for every test here)
from tests.warehouse.lakes import write_run


@pytest.fixture(scope="module")
def clean_t_good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake of two runs of the small plan, t and good (a module's own; damage a copy)."""
    root = tmp_path_factory.mktemp("clean") / "lake"
    run_inline(small_plan(), str(root))
    run_inline(small_plan(name="good"), str(root))
    return root


@pytest.fixture(scope="module")
def clean_t1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake of run t1 of tests/warehouse/lakes.py (a module's own; damage a copy)."""
    root = tmp_path_factory.mktemp("clean") / "data"
    write_run(root, "t1")
    return root
