"""The benchmarks as one tool: every benchmark starts (`--help`) through `python -m benchmarks`,
and each is listed there and in docs/benchmarks.md. No benchmark measures anything here."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.__main__ import ABOUT, scripts

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "benchmarks", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_every_benchmark_help_runs() -> None:
    """`python -m benchmarks NAME --help` exits 0 with a usage line, for every script."""
    names = list(scripts())
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(names, pool.map(lambda n: run(n, "--help"), names), strict=True))
    failed = {
        n: d.stderr[-500:] for n, d in done.items() if d.returncode or "usage" not in d.stdout
    }
    assert not failed


def test_the_list_names_every_benchmark_with_one_line() -> None:
    """`python -m benchmarks` lists every script, each with its line from ABOUT."""
    listed = run()
    assert listed.returncode == 0
    assert set(ABOUT) == set(scripts())
    for name, line in ABOUT.items():
        assert f"{name} " in listed.stdout and line in listed.stdout


def test_an_unknown_name_fails_with_the_list() -> None:
    """A name that is no benchmark exits 2 and prints the list."""
    done = run("no_such_benchmark")
    assert done.returncode == 2 and "usage: python -m benchmarks" in done.stderr


def test_docs_list_every_benchmark() -> None:
    """docs/benchmarks.md has one table row per benchmark."""
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    rows = {
        line.split("|")[1].strip().strip("`") for line in text.splitlines() if line[:3] == "| `"
    }
    assert rows == set(scripts())
