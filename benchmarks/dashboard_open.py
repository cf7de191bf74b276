"""Benchmark: the server's share of the dashboard's first page, with and without the mart cache.

No browser and no Streamlit server: in this process, with an empty mart cache (a new temporary
directory), it opens the lake as a new server does (`dashboard.data.warehouse`: the full
warehouse, since nothing is cached), computes the first page's marts one by one and runs the
first page's queries (run list, line-ups, field size); then it forgets everything, as a second
server would, opens the lake from the cache those marts were stored in and runs the same
queries. Run: `python benchmarks/dashboard_open.py [--data DIR]`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def first_page(root: str) -> float:
    """Seconds for the first page's queries (the sidebar's run list, the line-ups, the figures)."""
    from dashboard import data

    t0 = time.perf_counter()
    runs = data.runs(root)
    run = str(runs["run"].iloc[0])
    lineups = data.lineups(root, run)
    data.field_size(root, run, (), lineups[0])
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/flip7-bench/200k"))
    args = parser.parse_args()
    logging.getLogger("streamlit").setLevel(logging.ERROR)  # "no runtime" notes: bare mode
    with tempfile.TemporaryDirectory() as cache:
        os.environ["FLIP7_CACHE"] = cache
        from dashboard import data

        root = str(args.data.resolve())
        print(f"lake {root}; load average {os.getloadavg()[0]:.1f}")
        t0 = time.perf_counter()
        wh = data.warehouse(root)
        print(f"empty cache: open the warehouse {time.perf_counter() - t0:.2f} s")
        for mart in data.FIRST_PAGE:
            t0 = time.perf_counter()
            data.prepare(root, [mart])
            print(f"  compute and store {mart}: {time.perf_counter() - t0:.2f} s")
        print(f"  the first page's queries: {first_page(root) * 1000:.0f} ms")
        data.reload()
        t0 = time.perf_counter()
        wh = data.warehouse(root)
        opened = time.perf_counter() - t0
        print(
            f"cache of the previous server: open {opened:.2f} s ({len(wh.cached)} marts read, "
            f"warehouse built: {'yes' if wh.con is not None else 'no'}); the first page's "
            f"queries {first_page(root) * 1000:.0f} ms"
        )
        print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
