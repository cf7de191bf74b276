"""The benchmarks as one tool: `python -m benchmarks` lists them, `python -m benchmarks NAME
[ARGS]` runs one (the same as `python benchmarks/NAME.py [ARGS]`: the process becomes that
script, so it prints its figures and ratios as it always has, and its worker processes start
as they always have). docs/benchmarks.md has the same list with the figures each one prints.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: One line on each benchmark; a script missing here is listed with its docstring's first line.
ABOUT = {
    "dashboard": "each dashboard page on a large lake, cold and warm (AppTest and a browser)",
    "dashboard_first_page": "the first page of a new dashboard server, with and without its "
    "mart cache",
    "dashboard_open": "the server's share of the first page (no browser), with and without "
    "the mart cache",
    "driver_memory": "the tournament driver's peak memory against the size of the run",
    "engine": "reference-engine games/s and events/s on one core, events captured or not",
    "event_layouts": "other layouts of the events file: write CPU, bytes and a SQL read per game",
    "kernel": "the compiled kernel against the reference engine on one core; shards end to end",
    "kernel_ab": "the classic kernel of two source trees, alternated (before/after)",
    "kernel_pairs": "two source trees in pairs on one pinned core (before/after, small changes)",
    "pipeline": "tournament games/s on Ray on 1 and 2 CPUs against the bare engine",
    "ray_start": "starting a local Ray on a busy machine, as `flip7 tournament run` does",
    "ranking_oc": "the ranking stop rule's operating characteristics, by simulation",
    "s3_lake": "report and verify on a lake in an S3-compatible store against local disk",
    "scaling": "the shard work over 1 to 16 processes (weak scaling, no Ray)",
    "scaling_kernel": "the compiled kernel over 1 to 16 processes (weak scaling)",
    "solver": "`flip7 solve`, `solve --all`, `advice`, `odds`: commands, in-process, compiling",
    "sprt_oc": "the sequential test's operating characteristics, by simulation",
    "startup": "how fast `flip7` starts against a bare Python; a first compile's cost",
    "verify_binding": "the CPU cost of verify's binding step (seed checks and replays)",
    "verify_cost": "what `warehouse verify` costs against what writing the games cost",
    "warehouse": "`flip7 report` and `warehouse verify` on a 1M-game lake (built once, cached)",
    "warehouse_scale": "report, compare and card-level SQL as the lake grows: wall, CPU, peak RSS",
    "whole_run": "a whole tournament run against its shards: where the wall time goes",
    "whole_run_memory": "peak memory of report, verify, status and the dashboard's first build",
}


def scripts() -> dict[str, Path]:
    """Every benchmark: NAME -> benchmarks/NAME.py (this file and the shared helpers aside)."""
    return {
        p.stem: p
        for p in sorted(HERE.glob("*.py"))
        if not p.stem.startswith("_") and p.stem != "common"
    }


def about(name: str, path: Path) -> str:
    """The one line on a benchmark: ABOUT's, else its docstring's first line."""
    if name in ABOUT:
        return ABOUT[name]
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def usage() -> str:
    found = scripts()
    width = max(map(len, found))
    lines = [
        "usage: python -m benchmarks NAME [ARGS]   (NAME --help: its options)",
        "",
        *(f"  {name:<{width}}  {about(name, path)}" for name, path in found.items()),
        "",
        "Each prints figures and ratios; none is a test. bash benchmarks/scaling.sh runs the "
        "scaling pair.",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "list"):
        print(usage())
        return 0
    name, args = argv[0].removesuffix(".py"), argv[1:]
    found = scripts()
    if name not in found:
        print(f"no benchmark {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    path = str(found[name])
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, path, *args])  # becomes `python benchmarks/NAME.py`


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
