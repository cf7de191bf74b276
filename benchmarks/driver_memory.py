"""The tournament driver's peak memory against the size of the run (prints figures; not a test).

Usage: python benchmarks/driver_memory.py [--games 200000 2000000] [--repo PATH] [--num-cpus 2]

For each size, a spec of four `sum:20` seats in 10,000-game shards is run with
`flip7 tournament run SPEC --data TMP --no-progress` in a child process (the driver; Ray's
workers, raylet and GCS are other processes). The driver's peak resident set (VmHWM) is read
from /proc/PID/status twice: sampled every 20 ms from here, and read by the driver itself
after `main()` returns (the exact peak; the sampled figure can only be lower). Also printed:
wall seconds and the size of the run's manifest. `--repo PATH` runs another checkout of the
project (e.g. `git archive` of an older commit) through PYTHONPATH, to compare before/after.
The lake is written under a temporary directory and deleted afterwards (about 0.5 GB per
million games).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """name = "{name}"
seed = 7
games = {games}
shard_size = {shard_size}

[[lineups]]
name = "four sum:20"
seats = ["sum:20", "sum:20", "sum:20", "sum:20"]
"""

#: Runs the CLI, then prints the driver's own VmHWM (kB) on stderr.
DRIVER = (
    "import sys\n"
    "from flip7.cli import main\n"
    "rc = main()\n"
    "peak = [x for x in open('/proc/self/status') if x.startswith('VmHWM:')][0]\n"
    "print('DRIVER_' + peak.strip(), file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


def vm_hwm_kb(pid: int) -> int | None:
    """VmHWM of a live process in kB, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def measure(games: int, shard_size: int, repo: Path, num_cpus: int | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="flip7-drivermem-") as tmp:
        name = f"mem{games}"
        spec = Path(tmp, "spec.toml")
        spec.write_text(SPEC.format(name=name, games=games, shard_size=shard_size))
        lake = Path(tmp, "lake")
        cmd = [sys.executable, "-c", DRIVER, "tournament", "run", str(spec), "--data", str(lake)]
        cmd += ["--no-progress", "--no-file"]
        if num_cpus:
            cmd += ["--num-cpus", str(num_cpus)]
        env = {
            **os.environ,
            "PYTHONPATH": str(repo),
            "RAY_AUTH_MODE": "disabled",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        sampled = 0
        while proc.poll() is None:
            sampled = max(sampled, vm_hwm_kb(proc.pid) or 0)
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"the run failed ({proc.returncode}):\n{out}\n{err}")
        own = [line for line in err.splitlines() if line.startswith("DRIVER_VmHWM:")]
        manifest = lake / "runs" / name / "manifest.json"
        return {
            "games": games,
            "shards": -(-games // shard_size),
            "peak_mb": int(own[0].split()[1]) / 1024 if own else float("nan"),
            "sampled_mb": sampled / 1024,
            "manifest_kb": manifest.stat().st_size / 1024,
            "seconds": wall,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, nargs="+", default=[200_000, 2_000_000])
    ap.add_argument("--shard-size", type=int, default=10_000)
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--num-cpus", type=int, help="CPUs for the local Ray (default: all)")
    args = ap.parse_args()
    print(f"checkout: {args.repo}; four sum:20 seats, {args.shard_size:,}-game shards")
    print(
        f"{'games':>10}{'shards':>8}{'driver peak MB':>16}{'(sampled)':>11}"
        f"{'manifest kB':>13}{'wall s':>8}"
    )
    for games in args.games:
        r = measure(games, args.shard_size, args.repo.resolve(), args.num_cpus)
        print(
            f"{r['games']:>10,}{r['shards']:>8,}{r['peak_mb']:>16.0f}{r['sampled_mb']:>11.0f}"
            f"{r['manifest_kb']:>13.1f}{r['seconds']:>8.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
