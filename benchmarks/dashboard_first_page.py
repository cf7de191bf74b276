"""Benchmark: time to the first page of a freshly started dashboard server over a large lake.

Each start runs `flip7 dashboard` on a free port (a new process), opens the default page (Field
size) in Debian's chromium and times it from navigation until the script is idle and its three
charts have drawn; then the Policy comparison page in a new tab (its first visit). A start is
done twice per round: with an empty mart cache (`--cache-dir`, a new temporary directory: a lake
this machine has never shown), then again with the cache the first server left (a second
server over the same, unchanged lake). `--starts N` rounds; the medians are printed. Also
printed: when the server answered, the first page counted from the command's start (the
server's start-up thread opens the lake while Streamlit starts), and for scale the page of an
empty lake (no query, no chart), timed the same way in each round. Run:
`python benchmarks/dashboard_first_page.py [--data DIR] [--starts 3] [--first-page-only]`
(default lake: the one of
`python benchmarks/warehouse.py --games 200000 --root /tmp/flip7-bench/200k --build-only`).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.dashboard.browser
import streamlit  # noqa: E402, F401  (creates its loggers, quieted below)

# Importing the dashboard's data layer outside a Streamlit server makes each of its cached
# functions warn "No runtime found"; this process only reads its list of marts.
logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

from dashboard.data import MARTS  # noqa: E402
from tests.dashboard import browser  # noqa: E402

KINDS = ("empty cache", "cache of the previous server")
FLOOR = "empty lake (Streamlit alone)"


def prepared(cache: str) -> int:
    """How many marts the cache holds (one file each)."""
    return len(list(Path(cache).glob("marts/*/*/*.parquet")))


def one_start(
    b: object, data: Path, cache: str, wait: bool, next_page: bool = True
) -> tuple[float, float, float, bool, float | None]:
    """(server answering, first page, next page) in seconds, whether a page raised, and with
    `wait` the seconds from the command until the server had every page's marts in the cache
    (it stays up until then: the background preparation finishes, as on a server left open).
    Without `next_page` the next page is not visited (0 s)."""
    t0 = time.perf_counter()
    ready = None
    with browser.serve(data, timeout=300, args=["--cache-dir", cache]) as url:
        up = time.perf_counter() - t0
        first = browser.visit(b, url, "", min_charts=3, title="Field size", timeout_ms=600_000)
        second = (
            browser.visit(
                b, url, "policies", min_charts=5, title="Policy comparison", timeout_ms=600_000
            )
            if next_page
            else None
        )
        while wait and prepared(cache) < len(MARTS) and time.perf_counter() - t0 < 900:
            time.sleep(0.5)
        if wait and prepared(cache) == len(MARTS):
            ready = time.perf_counter() - t0
    raised = bool(first.exceptions or (second is not None and second.exceptions))
    return up, first.seconds, second.seconds if second is not None else 0.0, raised, ready


def floor(b: object) -> tuple[float, float, float, bool]:
    """The same for the page of an empty lake (no query, no chart): what Streamlit and the
    browser cost by themselves under the same load."""
    with tempfile.TemporaryDirectory() as empty:
        t0 = time.perf_counter()
        with browser.serve(Path(empty), timeout=300) as url:
            up = time.perf_counter() - t0
            first = browser.visit(b, url, "", min_charts=0, title="No tournament")
    return up, first.seconds, 0.0, bool(first.exceptions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/flip7-bench/200k"))
    parser.add_argument("--starts", type=int, default=3, help="rounds of two starts (default 3)")
    parser.add_argument(
        "--first-page-only",
        action="store_true",
        help="only the empty-cache start's first page: no next page, no second server, no "
        "wait for the background preparation (minutes on a 10M-game lake); what compares "
        "lakes of different sizes",
    )
    args = parser.parse_args()
    reason = browser.chromium_missing()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    print(f"lake {args.data}; load average at start: {os.getloadavg()[0]:.1f}")
    results: dict[str, list[tuple[float, float, float]]] = {k: [] for k in (*KINDS, FLOOR)}
    failed = False
    with browser.browser() as b:
        for i in range(args.starts):
            cache = tempfile.mkdtemp(prefix="flip7-bench-cache-")
            try:
                for kind in KINDS[:1] if args.first_page_only else KINDS:
                    up, first, nxt, raised, ready = one_start(
                        b,
                        args.data.resolve(),
                        cache,
                        wait=kind == KINDS[0] and not args.first_page_only,
                        next_page=not args.first_page_only,
                    )
                    failed |= raised
                    results[kind].append((up, first, nxt))
                    print(
                        f"start {i + 1}, {kind}: server answering {up:.1f} s, first page "
                        f"{first:.1f} s ({up + first:.1f} s from the command)"
                        + ("" if args.first_page_only else f", next page {nxt:.1f} s")
                        + f"; load average {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
                    if ready is not None:
                        print(f"  every page's marts in the cache {ready:.1f} s after the command")
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            up, first, _, raised = floor(b)
            failed |= raised
            results[FLOOR].append((up, first, 0.0))
            print(
                f"start {i + 1}, {FLOOR}: server answering {up:.1f} s, page {first:.1f} s",
                flush=True,
            )
    print(f"\nmedians of {args.starts} starts:")
    for kind, rows in results.items():
        if not rows:
            continue
        if kind == FLOOR:
            up, first = (statistics.median(col) for col in list(zip(*rows, strict=True))[:2])
            print(f"  {kind}: page {first:.1f} s after navigation; server answering {up:.1f} s")
            continue
        up, first, nxt = (statistics.median(col) for col in zip(*rows, strict=True))
        total = statistics.median(u + f for u, f, _ in rows)
        print(
            f"  {kind}: first page (Field size) {first:.1f} s after navigation, {total:.1f} s "
            "after the command; "
            + ("" if args.first_page_only else f"next page (Policy comparison) {nxt:.1f} s; ")
            + f"server answering {up:.1f} s"
        )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
