"""How experiments/figures.py runs what its figures come from, and writes figures as pages do.

The shipped tournaments: each spec runs once
(`flip7 tournament run experiments/SPEC.toml`, every game seeded by the spec, so the figures
are the same on any machine) into the figures' lake, a temporary directory unless
`figures.py --data DIR` keeps it; a run already complete there is not run again. The figures
are then read with `flip7 sql` over that run, the queries the pages give.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The lake the runs go to (set by figures.py --data; else a temporary directory, removed when
#: the process ends) and the CPUs the local Ray may use (figures.py --num-cpus).
SETTINGS: dict[str, str | None] = {"data": None, "num_cpus": None}


@functools.cache
def lake() -> str:
    if SETTINGS["data"]:
        return str(SETTINGS["data"])
    tmp = tempfile.mkdtemp(prefix="flip7-figures-")
    import atexit

    atexit.register(shutil.rmtree, tmp, True)
    return tmp


@functools.cache
def run(spec: str, scale: float = 1.0) -> str:
    """The run of experiments/SPEC.toml at `scale` in the figures' lake (run now if it is not
    complete there; its output goes to stderr): its name."""
    name = spec if scale == 1.0 else f"{spec}-x{scale:g}"
    argv = [sys.executable, "-m", "flip7", "tournament", "run", f"experiments/{spec}.toml"]
    argv += ["--data", lake(), "--no-progress", "--no-file", "--resume"]
    argv += ["--scale", f"{scale:g}"] if scale != 1.0 else []
    argv += ["--num-cpus", str(SETTINGS["num_cpus"])] if SETTINGS["num_cpus"] else []
    status = subprocess.run(
        [sys.executable, "-m", "flip7", "tournament", "status", name, "--data", lake()],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
    )
    if status.returncode != 0 or "complete" not in status.stdout.split("\n", 1)[0]:
        subprocess.run(argv, cwd=ROOT, env=_env(), stdout=sys.stderr, check=True)
    return name


def _env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}


def query(spec: str, sql: str, scale: float = 1.0) -> list[dict]:  # type: ignore[type-arg]
    """`flip7 sql --run RUN --format json SQL` over the run of SPEC: its rows."""
    from flip7.cli import main

    name = run(spec, scale)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        argv = ["sql", "--data", lake(), "--run", name, "--format", "json", "-o", str(out), sql]
        if main(argv) != 0:
            raise RuntimeError(f"flip7 sql over {name} failed: {sql}")
        return json.loads(out.read_text())  # type: ignore[no-any-return]


@functools.cache
def sim(*argv: str) -> dict:  # type: ignore[type-arg]
    """`flip7 sim ARGV --format json`'s answer (run in this process, no results file)."""
    from flip7.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sim.json"
        with contextlib.redirect_stdout(sys.stderr):  # its "output saved to" line
            code = main(["sim", *argv, "--format", "json", "-o", str(out), "--no-file"])
        if code != 0:
            raise RuntimeError(f"flip7 sim {' '.join(argv)} exited {code}")
        return json.loads(out.read_text())  # type: ignore[no-any-return]


def printed(argv: list[str]) -> list[str]:
    """What a command (`python experiments/...` or `flip7 ...` over the figures' lake) prints,
    one non-blank line each."""
    out = subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True, check=True)
    return [line.rstrip() for line in out.stdout.splitlines() if line.strip()]


# -- formats, as the pages write them ------------------------------------------------------------


def pct(x: float, lo: float, hi: float, digits: int = 2) -> str:
    """A rate in % with its interval: 50.77% [50.53, 51.02]."""
    return f"{100 * x:.{digits}f}% [{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"


def num(x: float, lo: float, hi: float, digits: int = 2, sign: str = "") -> str:
    """A figure with its interval: 20.71 [20.69, 20.74] (sign "+": +0.226 [+0.193, +0.259])."""
    f = f"{sign}.{digits}f"
    return f"{x:{f}} [{lo:{f}}, {hi:{f}}]"


def fair(players: int) -> str:
    """1/players as the pages write a fair share: 50%, 25%, 16.7%."""
    return f"{100 / players:.1f}".removesuffix(".0") + "%"
