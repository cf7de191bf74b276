"""Settings out of bounds are one line naming the bound and what would be right. Each once
crashed or ran on: $FLIP7_MEMORY_LIMIT=1B (a 23-line traceback), $FLIP7_THREADS=99999999999
(a C++ abort), $FLIP7_MEMORY_LIMIT=-5 (taken as no limit), `sim -n 99999999999999999999` (ran
until killed), `plan-games --difference -1` (answered) or `nan` (a raw conversion error), and
`--scale 1e6` (said the run name was invalid instead of naming the bound)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.plan import make_plan
from pipeline.spec import parse_spec
from tests.pipeline.helpers import run_inline, small_plan
from tests.security.helpers import one_line, spec_text, write_spec

pytestmark = pytest.mark.usefixtures("no_ray")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bounds") / "lake"
    run_inline(small_plan(), str(root))
    return root


def flip7(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """`flip7 ARGV` in a fresh process (a C++ abort must not take the test run with it)."""
    return subprocess.run(
        [sys.executable, "-m", "flip7", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize(
    "value, bound",
    [
        ("1B", "below 32MB"),
        ("10KB", "below 32MB"),
        ("-5", "at least 32MB"),
        ("0", "at least 32MB"),
        ("lots", "at least 32MB"),
        ("0%", "1% to 100%"),
        ("101%", "1% to 100%"),
    ],
)
def test_a_memory_limit_out_of_bounds_is_one_line(
    value: str, bound: str, lake: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("FLIP7_MEMORY_LIMIT", value)
    assert main(["report", "t", "--data", str(lake), "--no-file"]) == 2
    one_line(capsys.readouterr().err, f"$FLIP7_MEMORY_LIMIT {value!r}", bound, "give ")
    monkeypatch.delenv("FLIP7_MEMORY_LIMIT")
    assert main(["sql", "SELECT 1", "--memory-limit", value, "--data", str(lake)]) == 2
    one_line(capsys.readouterr().err, f"--memory-limit {value!r}", bound)


def test_a_memory_limit_in_bounds_is_taken(
    lake: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    for value in ("64MB", "2GiB", "50%"):
        monkeypatch.setenv("FLIP7_MEMORY_LIMIT", value)
        assert main(["report", "t", "--data", str(lake), "--no-file"]) == 0, value
    capsys.readouterr()


@pytest.mark.parametrize("value", ["99999999999", "257", "0"])
def test_threads_out_of_bounds_is_one_line(value: str, lake: Path) -> None:
    done = flip7({"FLIP7_THREADS": value}, "report", "t", "--data", str(lake), "--no-file")
    assert done.returncode == 2, done.stderr
    one_line(done.stderr, f"$FLIP7_THREADS {value!r}", "from 1 to 256")


@pytest.mark.parametrize("command, flag", [("sim", "-n/--games"), ("round", "-n/--rounds")])
@pytest.mark.parametrize("n", ["99999999999999999999", "2147483648", "0"])
def test_games_beyond_the_bound_are_one_line(
    command: str, flag: str, n: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "-n", n, "--no-file"]) == 2
    one_line(capsys.readouterr().err, flag, "from 1 to 2,147,483,647", f"got {n}")


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "1.5"])
def test_plan_games_difference_is_bounded(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan-games", f"--difference={value}"]) == 2
    one_line(capsys.readouterr().err, "--difference", "in (0, 1) for a win rate", "e.g. 0.01")


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_plan_games_sd_is_bounded(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan-games", "--difference", "0.01", f"--sd={value}"]) == 2
    one_line(capsys.readouterr().err, "--sd: must be a finite number > 0")


def test_a_scale_beyond_the_bound_names_the_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--scale 1e6 on 10,000 games per cell: the bound on games per cell is named, with the
    largest --scale that fits, not the run name it would make; nothing is written."""
    spec = write_spec(tmp_path / "s.toml", games=10_000, shard_size=1000)
    argv = ["tournament", "run", str(spec), "--data", str(tmp_path / "lake"), "--scale=1e6"]
    assert main([*argv, "--no-file"]) == 2
    one_line(capsys.readouterr().err, "--scale 1e+06", "2,147,483,647", "at most 214748")
    assert not (tmp_path / "lake").exists()


def test_a_large_scale_within_the_bound_makes_a_valid_run_name() -> None:
    plan = make_plan(parse_spec(spec_text(name="s", games=2, shard_size=1000)), scale=1e6)
    assert plan.run == "s-x1e06" and plan.cells[0].games == 2_000_000
