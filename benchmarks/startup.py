"""How fast flip7 starts: the command's answers against a bare Python, and what a first compile
costs.

    python benchmarks/startup.py [--repeats 7] [--no-compile] [--pieces] [--only PIECE ...]

1. Start-up: `flip7 --version` and `flip7 sim --help` (as `python -m flip7`) against
   `python -c "import json"`, each a fresh process, interleaved --repeats times: median wall
   seconds and the ratio to the bare Python (target: at most 8x). Byte-code is written and
   used as an installed package has it (PYTHONDONTWRITEBYTECODE is dropped for these runs).
2. First compile: a first classic `flip7 sim` on an empty numba cache (NUMBA_CACHE_DIR set to a
   new directory), the child's CPU seconds (user + sys; target: at most 45), then the same
   command on the now warm cache.
3. With --pieces: each compiled piece alone on an empty cache, the CPU seconds the process
   spent getting it (flip7.kernel.load.COMPILE_CPU_SECONDS records these figures; the line
   before each compile quotes them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import run_child  # noqa: E402

PY = sys.executable

COMMANDS = {
    'python -c "import json"': [PY, "-c", "import json"],
    "flip7 --version": [PY, "-m", "flip7", "--version"],
    "flip7 sim --help": [PY, "-m", "flip7", "sim", "--help"],
}
SIM = [PY, "-m", "flip7", "sim", "-n", "200", "-p", "ev,sum:20", "--no-file"]

#: Each piece in a fresh process: its own CPU seconds (the process's CPU up to the point where
#: the pieces it needs first are loaded is left out).
PIECES = {
    "classic": "from flip7.kernel.load import load_info; i = load_info()",
    "win": "from flip7.kernel.load import kernel, win_kernel; kernel(); i = win_kernel()",
    "vengeance": "from flip7.kernel.load import load_info; i = load_info(vengeance=True)",
    "rows": "from flip7.kernel.load import kernel, rows_pass; kernel(); i = rows_pass()",
    "rollups": (
        "import time; from pipeline.rollups import warm; c = time.process_time(); warm(); "
        "i = type('I', (), {'cpu_seconds': time.process_time() - c})"
    ),
    "codebook": (
        "import time; from pipeline.codebook import warm; c = time.process_time(); warm(); "
        "i = type('I', (), {'cpu_seconds': time.process_time() - c})"
    ),
    "solver": (
        "import time; from flip7.solver.solve import kernels, warm_up; kernels(); "
        "c = time.process_time(); warm_up(); "
        "i = type('I', (), {'cpu_seconds': time.process_time() - c})"
    ),
}


def env(**extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    e.update(extra)
    return e


def timed(cmd: list[str], environ: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run of `cmd`."""
    done = run_child(cmd, cwd=ROOT, env=environ)
    if done.code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return done.wall, done.cpu


def startup(repeats: int) -> None:
    environ = env()
    for cmd in COMMANDS.values():  # writes the byte-code an install would have
        timed(cmd, environ)
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(repeats):
        for name, cmd in COMMANDS.items():
            walls[name].append(timed(cmd, environ)[0])
    base = statistics.median(walls['python -c "import json"'])
    load = os.getloadavg()[0]
    print(f"start-up, median of {repeats} fresh processes each (load average {load:.1f}):")
    for name, values in walls.items():
        med = statistics.median(values)
        print(f"  {name:<26} {med * 1000:7.0f} ms  {med / base:5.1f}x  (target: at most 8x)")


def first_sim() -> None:
    with tempfile.TemporaryDirectory(prefix="flip7-numba-") as cache:
        environ = env(NUMBA_CACHE_DIR=cache)
        wall, cpu = timed(SIM, environ)
        wall2, cpu2 = timed(SIM, environ)
    print(f"first classic `{' '.join(['flip7', *SIM[3:]])}`:")
    print(f"  empty numba cache: {cpu:6.1f} CPU s, {wall:6.1f} s wall  (target: at most 45 CPU s)")
    print(f"  warm cache:        {cpu2:6.1f} CPU s, {wall2:6.1f} s wall")


def pieces(only: list[str] | None = None) -> None:
    print("each piece alone on an empty numba cache (CPU seconds of getting it):")
    for name, code in PIECES.items():
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="flip7-numba-") as cache:
            done = subprocess.run(
                [PY, "-c", code + "; print(round(i.cpu_seconds, 1))"],
                cwd=ROOT,
                env=env(NUMBA_CACHE_DIR=cache),
                capture_output=True,
                text=True,
            )
        if done.returncode != 0:
            raise SystemExit(f"{name} failed:\n{done.stderr}")
        print(f"  {name:<10} {float(done.stdout.split()[-1]):6.1f} CPU s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-compile", action="store_true", help="start-up figures only")
    parser.add_argument("--pieces", action="store_true", help="each compiled piece alone")
    parser.add_argument("--only", nargs="+", choices=list(PIECES), help="these pieces only")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    if args.only:
        pieces(args.only)
        return 0
    startup(args.repeats)
    if not args.no_compile:
        first_sim()
    if args.pieces:
        pieces()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
