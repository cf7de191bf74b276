"""Benchmark: how the answers scale with the lake — wall time and peak RSS of `flip7 report`,
`flip7 compare` and a card-level SQL query over lakes of growing size, with each figure's ratio
to the smallest lake's.

Each lake is `benchmarks/warehouse.py`'s (four-player games in four cells, three of them a
common-random-number group differing by one counting swap, 5,000-game shards), built once per
size under --root and reused. Every command runs in a fresh process (its peak RSS is its own,
read with wait4), alternating sizes in each round so that the machine's drift spreads over all
of them; medians over --rounds. The dashboard's first page over the same lakes is
`python benchmarks/dashboard_first_page.py --data ROOT/SIZE` (it needs chromium). `compare`
compares run `bench` with `bench2`, the same files linked under another run's name. Run:
`python benchmarks/warehouse_scale.py [--sizes 200000,2000000,10000000] [--rounds 3]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: "how often does each card turn up, by policy": the per-card question a user asks of the log.
CARD_SQL = (
    "SELECT g.policy, e.card, count(*) AS n FROM stg_stored_events e JOIN stg_games g "
    "ON e.run = g.run AND e.game = g.game AND e.player = g.seat GROUP BY ALL ORDER BY ALL"
)


def commands(root: Path) -> dict[str, list[str]]:
    flip7 = [sys.executable, "-m", "flip7"]
    data = ["--data", str(root)]
    return {
        "report": [*flip7, "report", "bench", *data, "--no-file", "--format", "json"],
        "compare": [*flip7, "compare", "bench", "bench2", *data, "--format", "json"],
        "card SQL": [*flip7, "sql", *data, "--format", "csv", CARD_SQL],
    }


def twin(root: Path) -> None:
    """Run `bench2`: the files of run `bench` linked under its name (no copy), for compare."""
    import json
    import shutil

    if (root / "runs" / "bench2" / "manifest.json").exists():
        return
    for path in root.glob("*/run=bench/*/*.parquet"):
        table, players, name = path.parts[-4], path.parts[-2], path.name
        target = root / table / "run=bench2" / players / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)
    manifest = json.loads((root / "runs" / "bench" / "manifest.json").read_text())
    manifest["run"] = "bench2"
    (root / "runs" / "bench2").mkdir(parents=True, exist_ok=True)
    spec = root / "runs" / "bench" / "spec.toml"
    if spec.exists():
        shutil.copy(spec, root / "runs" / "bench2")
    (root / "runs" / "bench2" / "manifest.json").write_text(json.dumps(manifest, indent=1))


def measure(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit status) of one fresh process running cmd."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"  exit {code}: {err.strip().splitlines()[-1] if err.strip() else ''}", flush=True)
    return wall, usage.ru_maxrss / 1024, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200000,2000000,10000000", help="games per lake")
    parser.add_argument("--root", type=Path, default=Path("/tmp/flip7-bench/scale"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated commands (default: all)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for n in sizes:
        build = [sys.executable, str(REPO / "benchmarks" / "warehouse.py")]
        subprocess.run(
            [*build, "--games", str(n), "--root", str(args.root / str(n)), "--build-only"],
            check=True,
        )
        twin(args.root / str(n))
    names = list(commands(args.root))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    runs: dict[tuple[str, int], list[tuple[float, float, int]]] = {}
    for r in range(args.rounds):
        for name in names:
            for n in sizes:
                one = measure(commands(args.root / str(n))[name])
                runs.setdefault((name, n), []).append(one)
                print(
                    f"round {r + 1} {name} {n:,} games: {one[0]:.1f} s, {one[1]:.0f} MB", flush=True
                )
    one, five, _ = os.getloadavg()
    print(f"\nmedians over {args.rounds} rounds; load average {one:.1f} / {five:.1f}")
    print(f"{'command':<10} {'games':>12} {'wall s':>8} {'x base':>7} {'peak MB':>8} {'x base':>7}")
    for name in names:
        base = None
        for n in sizes:
            got = runs[(name, n)]
            wall = statistics.median(x[0] for x in got)
            rss = statistics.median(x[1] for x in got)
            failed = sum(x[2] != 0 for x in got)
            base = base or (wall, rss)
            note = f"  ({failed} failed)" if failed else ""
            print(
                f"{name:<10} {n:>12,} {wall:>8.1f} {wall / base[0]:>7.2f} {rss:>8.0f} "
                f"{rss / base[1]:>7.2f}{note}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
