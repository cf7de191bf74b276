"""Peak memory of the commands that read a whole run: report, verify, status, the dashboard's
first build (prints figures; not a test).

Usage: python benchmarks/whole_run_memory.py --data DIR --run RUN [--only NAME ...]
       [--report-limits 1GB 500MB ...]

Each command runs in a child process; its peak resident set is the child's `ru_maxrss` from
`os.wait4` (the same figure as "Maximum resident set size" of `/usr/bin/time -v`, and VmHWM
when the process ends), with its wall time. DuckDB's buffers are in that figure. The
dashboard's first build is what the dashboard's server does on its first page view:
`warehouse.db.connect(DATA, materialize=True)` (every view and mart over the lake, the
aggregated marts computed into tables), then the runs table. Build a lake to measure with
`python benchmarks/warehouse.py --games 1000000 --root DIR --build-only` (run `bench`).
Note: `flip7 warehouse verify` records a pass beside the run's manifest (runs/RUN/verified.json).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

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


def measure(cmd: list[str]) -> tuple[int, float, int]:
    """(peak RSS in kB, wall seconds, exit status) of one child process."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_AUTH_MODE": "disabled"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.stderr.write(err.decode(errors="replace")[-2000:])
    return usage.ru_maxrss, time.perf_counter() - t0, proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--only", nargs="*", help="some of: report, verify, status, dashboard")
    parser.add_argument(
        "--report-limits",
        nargs="*",
        default=[],
        help="also run the report under these DuckDB memory limits, e.g. 1GB 500MB",
    )
    args = parser.parse_args()
    one, five, _ = os.getloadavg()
    print(f"lake {args.data}, run {args.run}; load average {one:.1f} (1 min), {five:.1f} (5 min)")
    print(f"{'command':<24}{'peak RSS':>12}{'wall':>9}  exit")
    for name, cmd in commands(args.data, args.run, args.report_limits).items():
        if args.only and not name.startswith(("report, limit", *args.only)):
            continue
        kb, wall, rc = measure(cmd)
        print(f"{name:<24}{kb / 1024:>9,.0f} MB{wall:>8.1f}s  {rc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
