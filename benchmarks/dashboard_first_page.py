"""Benchmark: time to the first page of a freshly started dashboard server over a large lake.

Starts `flip7 dashboard` on a free port (a new process: no cache of any kind), opens the
default page (Field size) in Debian's chromium, and times it from navigation until the script
is idle and its three charts have drawn; then the Policy comparison page in a new tab (the
marts that page reads are computed on that visit). Run:
`python benchmarks/dashboard_first_page.py [--data DIR]` (default: the lake of
`python benchmarks/warehouse.py --games 200000 --root /tmp/flip7-bench/200k --build-only`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.dashboard.browser

from tests.dashboard import browser  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/flip7-bench/200k"))
    args = parser.parse_args()
    reason = browser.chromium_missing()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with browser.browser() as b:
        t0 = time.perf_counter()
        with browser.serve(args.data.resolve(), timeout=300) as url:
            up = time.perf_counter() - t0
            first = browser.visit(b, url, "", min_charts=3, title="Field size", timeout_ms=600_000)
            second = browser.visit(
                b, url, "policies", min_charts=5, title="Policy comparison", timeout_ms=600_000
            )
    print(f"server answering after {up:.1f} s")
    print(f"first page (Field size): {first.seconds:.1f} s")
    print(f"next page (Policy comparison), first visit: {second.seconds:.1f} s")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 1 if first.exceptions or second.exceptions else 0


if __name__ == "__main__":
    raise SystemExit(main())
