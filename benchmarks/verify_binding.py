"""Benchmark: the CPU cost of verify's binding step (warehouse.bind) on a lake.

The step checks every game's seed against its manifest and re-simulates a share of each
shard's games through pipeline.replayer (the compiled kernel for the classic game), reading
their events. Prints, per share asked for, the games replayed and the CPU seconds of the step
alone (one DuckDB thread; the kernel is loaded once before timing). Run:
`python benchmarks/verify_binding.py LAKE [SHARE ...]` (default shares 0 0.01 0.05), e.g. on
the lake benchmarks/warehouse.py builds (/tmp/flip7-bench).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import duckdb
import numpy as np

# Run as a script, this folder comes first on sys.path, and its pipeline.py and warehouse.py
# (the benchmarks) would shadow the packages of the same names: put the repository first.
sys.path[:1] = [str(Path(__file__).resolve().parents[1])]

import pipeline.replayer as replayer  # noqa: E402
from warehouse.bind import bind  # noqa: E402
from warehouse.build import build  # noqa: E402
from warehouse.lake import snapshot  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lake", type=Path)
    parser.add_argument("shares", nargs="*", type=float, help="default 0 0.01 0.05")
    args = parser.parse_args()
    root = args.lake
    shares = args.shares or [0.0, 0.01, 0.05]
    snap = snapshot(root)
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    build(con, snap, layers=("staging",))
    manifests = {r: json.loads(snap.read_text(p)) for r, p in snap.manifests.items()}
    seeds = np.array([1], dtype=np.uint64)
    replayer.replay_games("3.1", "classic", None, ["ev", "ev"], seeds, [np.zeros(0)])  # load
    events = con.execute("SELECT coalesce(sum(events), 0) FROM stg_event_games").fetchall()[0][0]
    print(f"lake {root}: {events:,} events")
    for share in shares:
        cpu, wall = time.process_time(), time.perf_counter()
        b = bind(con, manifests, replayer, share)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        bad = len(b.seed_rows) + len(b.replay_rows)
        print(
            f"share {share:g}: {b.games:,} games, {b.replayed:,} replayed, {bad} failing: "
            f"{cpu:.2f} s CPU ({wall:.2f} s wall)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
