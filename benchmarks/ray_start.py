"""Starting a local Ray on a busy machine, as `flip7 tournament run` does (pipeline.ray_start).

    python benchmarks/ray_start.py [--loops 16] [--starts 5]

Starts --loops busy-loop processes (16 on 2 cores is a load of about 15), then starts and shuts
down a local Ray --starts times, each in a fresh process, printing for each whether it started,
in how many seconds and tries, or its one-line failure. The loops are stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

START = """
import logging, sys, time
import ray
from pipeline import ray_start
tries = []
def say(line):
    tries.append(line)
    print(line, file=sys.stderr, flush=True)
t0 = time.perf_counter()
try:
    ray_start.start_local(ray, {"address": "local", "num_cpus": 1, "include_dashboard": False,
                                "logging_level": logging.ERROR}, say=say)
    print(f"started in {time.perf_counter() - t0:.1f} s, try {len(tries) + 1}")
except ray_start.Unreachable as exc:
    print(f"failed after {time.perf_counter() - t0:.1f} s: {exc}")
finally:
    ray.shutdown()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=16)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.loops)
    ]
    try:
        time.sleep(10)  # let the load average climb
        for i in range(args.starts):
            load = os.getloadavg()[0]
            done = subprocess.run(
                [sys.executable, "-c", START], env=env, capture_output=True, text=True
            )
            result = done.stdout.strip().splitlines()[-1:] or [done.stderr.strip()[-300:]]
            print(f"start {i + 1}/{args.starts} at load average {load:.1f}: {result[0]}")
    finally:
        for p in loops:
            p.kill()
        for p in loops:
            p.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
