"""Peak memory of the commands that read a whole run: report, verify, status, the dashboard's
first build (prints figures; not a test).

Usage: python benchmarks/whole_run_memory.py --data DIR --run RUN [--data DIR2 --run RUN2 ...]
       [--only NAME ...] [--report-limits 1GB 500MB ...] [--repo CHECKOUT]

Each command runs in a child process; its peak resident set is the child's `ru_maxrss` from
`os.wait4` (the same figure as "Maximum resident set size" of `/usr/bin/time -v`, and VmHWM
when the process ends), with its wall time. DuckDB's buffers are in that figure. Each child
gets a fresh, empty $FLIP7_SPILL_DIR, whose size is sampled every 0.2 s: the "spilled" column
is the most it held (DuckDB's spill files; 0 for a command that never spilled, or a checkout
that cannot spill). The dashboard's first build is what the dashboard's server does when every
page has been viewed once: `warehouse.db.connect(DATA, materialize=True)` (every view and mart
over the lake, the aggregated marts computed into tables), then the runs table. `--repo`
runs another checkout of the project through PYTHONPATH (e.g. `git archive` of an older commit
into a temporary directory), to compare before and after on the same lakes. Build a lake with
`python benchmarks/warehouse.py --games 1000000 --root DIR --build-only` (run `bench`) or
`flip7 tournament run SPEC --out DIR` (a spec as benchmarks/driver_memory.py writes).
Note: `flip7 warehouse verify` records a pass beside the run's manifest (runs/RUN/verified.json).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.common import run_child  # noqa: E402

DASHBOARD_BUILD = (
    "import sys\n"
    "from warehouse.db import connect\n"
    "from warehouse import queries\n"
    "con = connect(sys.argv[1], materialize=True)\n"
    "print(len(queries.runs(con)), 'runs')\n"
)


#: `flip7 report` under another DuckDB memory limit than the default (warehouse.db.MEMORY_LIMIT).
REPORT_LIMITED = (
    "import sys\n"
    "from warehouse.db import connect\n"
    "from warehouse.report import report\n"
    "data, run, limit = sys.argv[1:4]\n"
    "print('\\n'.join(report(connect(data, [run], memory_limit=limit), run)))\n"
)


def commands(data: str, run: str, limits: list[str]) -> dict[str, list[str]]:
    py, flip7 = sys.executable, [sys.executable, "-m", "flip7"]
    return {
        **{f"report, limit {x}": [py, "-c", REPORT_LIMITED, data, run, x] for x in limits},
        "report": [*flip7, "report", run, "--data", data, "--no-file"],
        "verify": [*flip7, "warehouse", "verify", run, "--data", data],
        "status": [*flip7, "tournament", "status", run, "--data", data],
        "dashboard first build": [py, "-c", DASHBOARD_BUILD, data],
    }


def tree_size(path: str) -> int:
    """Bytes in the files under path (0 if it is gone); files vanishing meanwhile are skipped."""
    total = 0
    for top, _, names in os.walk(path):
        for name in names:
            try:
                total += os.stat(os.path.join(top, name)).st_blocks * 512
            except OSError:
                pass
    return total


def measure(cmd: list[str], repo: Path) -> tuple[int, float, int, int]:
    """(peak RSS in kB, wall seconds, exit status, peak bytes spilled) of one child process."""
    spill = tempfile.mkdtemp(prefix="flip7-bench-spill-")
    env = {
        **os.environ,
        "PYTHONPATH": str(repo),
        "RAY_AUTH_MODE": "disabled",
        "FLIP7_SPILL_DIR": spill,
    }
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], tree_size(spill))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    child = run_child(cmd, cwd=repo, env=env)
    done.set()
    sampler.join()
    if child.code:
        sys.stderr.write(child.stderr[-2000:])
    left = os.listdir(spill)
    shutil.rmtree(spill, ignore_errors=True)
    if left:
        sys.stderr.write(f"left in the spill directory after exit: {left}\n")
    return child.peak_kb, child.wall, child.code, peak[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, action="append", help="a lake (repeatable)")
    parser.add_argument("--run", required=True, action="append", help="its run (one per --data)")
    parser.add_argument("--only", nargs="*", help="some of: report, verify, status, dashboard")
    parser.add_argument(
        "--report-limits",
        nargs="*",
        default=[],
        help="also run the report under these DuckDB memory limits, e.g. 1GB 500MB",
    )
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to run")
    args = parser.parse_args()
    if len(args.data) != len(args.run):
        parser.error("give one --run for each --data")
    repo = args.repo.resolve()
    one, five, _ = os.getloadavg()
    print(f"checkout {repo}; load average {one:.1f} (1 min), {five:.1f} (5 min)")
    print(f"{'lake':<28}{'command':<24}{'peak RSS':>12}{'wall':>9}{'spilled':>11}  exit")
    for data, run in zip(args.data, args.run, strict=True):
        for name, cmd in commands(data, run, args.report_limits).items():
            if args.only and not name.startswith(("report, limit", *args.only)):
                continue
            kb, wall, rc, spilled = measure(cmd, repo)
            print(
                f"{data[-27:]:<28}{name:<24}{kb / 1024:>9,.0f} MB{wall:>8.1f}s"
                f"{spilled / 2**20:>8,.0f} MB  {rc}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
