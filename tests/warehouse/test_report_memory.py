"""`flip7 report` under the least memory limit the warehouse takes: it gives the figures it gives
with memory to spare (not a timed test: what is checked is that it completes, and how)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from warehouse.db import MIN_MEMORY_TEXT, connect
from warehouse.report import report_result

from . import lakes

REPO = Path(__file__).resolve().parents[2]
RUN = "m1"
#: 60,000 four-player games in 4 shards: two CRN-paired cells (a counting policy against its
#: twin, so the card-counting mart joins games by seed) of 30,000 games.
SPEC = (
    "3.1",
    7,
    30_000,
    15_000,
    [
        (0, ("bust:0.25", "sum:20", "sum:20", "sum:20")),
        (0, ("bustc:0.25", "sum:20", "sum:20", "sum:20")),
    ],
)
#: The least DuckDB memory limit the warehouse takes (warehouse.db.MIN_MEMORY). Every mart of the
#: report, the card-counting mart's paired games included, reads the shards' rollups rather than
#: the games, so on one thread the report of RUN fits it in memory, without spilling (checked
#: below). It once did not: the paired games were read from the games table (over 48 MB).
LIMIT = "32MB"


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("memory") / "data"
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(lakes.RUNS, RUN, SPEC)
        lakes.write_run(root, RUN)
    return root


def close(a: Any, b: Any) -> bool:
    """Equal JSON values, floats to 1e-9 relative (a spilled sum may add in another order)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9, abs=1e-12, nan_ok=True)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_the_report_fits_the_least_memory_limit(lake: Path, tmp_path: Path) -> None:
    """`flip7 report` under the least memory limit and one thread: computed in memory without
    spilling, and as a command in a fresh process under $FLIP7_MEMORY_LIMIT with its private
    spill directory under $FLIP7_SPILL_DIR (gone at exit), with the figures of a report computed
    with memory to spare."""
    assert LIMIT == MIN_MEMORY_TEXT
    unspilled = report_result(connect(lake, [RUN], memory_limit=LIMIT, threads=1, spill=False), RUN)
    spills = tmp_path / "spills"
    spills.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "FLIP7_MEMORY_LIMIT": LIMIT,
        "FLIP7_THREADS": "1",
        "FLIP7_SPILL_DIR": str(spills),
    }
    cmd = [sys.executable, "-m", "flip7", "report", RUN, "--data", str(lake), "--format", "json"]
    done = subprocess.run(
        [*cmd, "--no-file"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    spare = report_result(connect(lake, [RUN], memory_limit="1GB"), RUN)
    expected = json.loads("\n".join(spare.render("json")))
    assert got["games"] == 60_000 and got["card_counting"], got
    in_memory = json.loads("\n".join(unspilled.render("json")))
    for key in ("field_size", "rates", "card_counting", "league"):
        assert close(got[key], expected[key]), key
        assert close(in_memory[key], expected[key]), key
    assert list(spills.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["spills"]  # nothing in the working directory
