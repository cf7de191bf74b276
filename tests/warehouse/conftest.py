"""Fixtures: the session's small real lake (see lakes.py), a private copy to damage, and every
game of it replayed by the engine (the independent truth the marts are checked against)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flip7.engine import Engine
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.simulate import rotated
from pipeline.shard import game_seed

from .lakes import RUNS, Lake, Played, write_run, write_spec_runs


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """The shared, read-only test lake (runs t1 and t2)."""
    root = tmp_path_factory.mktemp("lake") / "data"
    return Lake(root, {run: write_run(root, run) for run in RUNS})


@pytest.fixture(scope="session")
def spec_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared, read-only lake of lakes.CELL_SPECS, planned and run as the pipeline does
    (named line-ups over two sizes, CRN-paired counting line-ups, cells of one and two games,
    a run replaying some games of another, a label given to two line-ups)."""
    root = tmp_path_factory.mktemp("cells") / "data"
    write_spec_runs(root)
    return root


@pytest.fixture
def lake_copy(lake: Lake, tmp_path: Path) -> Lake:
    """A private copy of the test lake, for tests that damage it."""
    root = tmp_path / "data"
    shutil.copytree(lake.root, root)
    return Lake(root, lake.tasks)


@pytest.fixture(scope="session")
def truth(lake: Lake) -> dict[str, list[Played]]:
    """Every game of the test lake replayed by the engine itself (not read from Parquet)."""
    out: dict[str, list[Played]] = {}
    for run, tasks in lake.tasks.items():
        games = out.setdefault(run, [])
        for task in tasks:
            ruleset = parse_ruleset(task.ruleset)
            base = parse_policies(list(task.lineup))
            for i in range(task.start, task.stop):
                seats = rotated(base, i) if task.rotate else base
                seed = game_seed(task.root_seed, task.pair, i)
                result = Engine(ruleset, seats, seed).run()
                games.append(
                    Played(
                        run,
                        task.game_offset + i,
                        task.cell,
                        i,
                        task.pair,
                        tuple(p.spec for p in seats),
                        result,
                    )
                )
    return out
