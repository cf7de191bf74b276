"""Benchmark: how long each dashboard page takes on a large lake, first and after first load.

Two measurements over the same lake (default: the 1M-game lake of benchmarks/warehouse.py at
/tmp/flip7-bench/data when it exists; `--data DIR` picks another):

1. Script time (Streamlit's AppTest, in this process): each page run once cold, then three
   times warm; the warm median is the server's share of a page switch.
2. Browser time (`flip7 dashboard` in a subprocess, Debian's chromium via playwright): a fresh
   tab per page, from navigation until the script is idle and every chart has drawn; first
   visit (cold caches), then the median of three more passes (warm), and switching pages
   inside one session by clicking the sidebar links (median of three), which is what a user
   does. For scale, the same for the empty-lake page, which runs no query and draws no chart:
   that is Streamlit's own cost of opening a tab.

Prints one line per page and the worst warm figure against the 3 s target.
Run: `python benchmarks/dashboard.py [--data DIR] [--no-browser]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.dashboard.browser, when run from a checkout

from tests.dashboard import browser  # noqa: E402

TARGET_S = 3.0
DEFAULT_LAKE = Path("/tmp/flip7-bench/data")
APP = ROOT / "dashboard" / "app.py"
PAGES = {  # AppTest page path -> browser url path
    "views/field_size.py": "",
    "views/card_counting.py": "card-counting",
    "views/policies.py": "policies",
    "views/variants.py": "variants",
    "views/replay.py": "replay",
    "views/runs.py": "runs",
}
NAV_TITLES = {
    "": "Field size",
    "card-counting": "Card counting",
    "policies": "Policy comparison",
    "variants": "Classic vs Vengeance",
    "replay": "Game replay",
    "runs": "Runs",
}


def lake_size(data: Path) -> str:
    import duckdb

    files = str(data / "games" / "**" / "*.parquet")
    con = duckdb.connect()
    try:
        row = con.execute(
            f"select count(distinct (run, game)), count(*) from read_parquet('{files}', "
            "hive_partitioning = true)"
        ).fetchall()[0]
    finally:
        con.close()
    return f"{row[0]:,} games ({row[1]:,} player-game rows)"


def script_times(data: Path) -> dict[str, tuple[float, float]]:
    """{page: (cold seconds, warm median seconds)} from AppTest runs in this process."""
    from streamlit.testing.v1 import AppTest

    os.environ["FLIP7_DATA"] = str(data)
    out: dict[str, tuple[float, float]] = {}
    for page in PAGES:
        runs = []
        for _ in range(4):
            at = AppTest.from_file(str(APP), default_timeout=600)
            t0 = time.perf_counter()
            at.run()
            at.switch_page(page).run()
            runs.append(time.perf_counter() - t0)
            if at.exception:
                raise RuntimeError(f"{page}: {at.exception[0].value}")
        out[page] = (runs[0], statistics.median(runs[1:]))
    return out


def browser_times(data: Path, passes: int = 3) -> dict[str, list[float]]:
    """{url path: [first visit, median later visit, median in-session switch]} in seconds."""
    fresh: dict[str, list[float]] = {p: [] for p in NAV_TITLES}
    switch: dict[str, list[float]] = {p: [] for p in NAV_TITLES}
    with browser.serve(data, timeout=120) as url, browser.browser() as b:
        for _ in range(1 + passes):
            for path, (_, title, charts) in browser.PAGES.items():
                check = browser.visit(
                    b, url, path, min_charts=charts, title=title, timeout_ms=600_000
                )
                if check.exceptions:
                    raise RuntimeError(f"/{path}: {check.exceptions[0]}")
                fresh[path].append(check.seconds)
        page = b.new_page(viewport={"width": 1400, "height": 1700})
        page.goto(url)
        browser.wait_ready(page, 1, 600_000, "Field size")
        for _ in range(passes):
            for path in [*list(NAV_TITLES)[1:], ""]:
                t0 = time.perf_counter()
                page.get_by_role("link", name=NAV_TITLES[path]).first.click()
                _, title, charts = browser.PAGES[path]
                ready = browser.wait_ready(page, charts, 600_000, title)
                switch[path].append(ready - t0)
        page.close()
    return {
        p: [fresh[p][0], statistics.median(fresh[p][1:]), statistics.median(switch[p])]
        for p in NAV_TITLES
    }


def boot_time(passes: int = 3) -> float:
    """Median seconds for a fresh tab to show the (chartless, queryless) empty-lake page: what
    Streamlit itself costs before any page of ours does anything."""
    with tempfile.TemporaryDirectory() as empty, browser.serve(Path(empty)) as url:
        with browser.browser() as b:
            times = [
                browser.visit(b, url, "", min_charts=0, title="No tournament").seconds
                for _ in range(passes + 1)
            ]
    return statistics.median(times[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help=f"the lake (default {DEFAULT_LAKE})")
    parser.add_argument("--no-browser", action="store_true", help="script times only")
    args = parser.parse_args()
    data = args.data or DEFAULT_LAKE
    if not (data / "games").is_dir():
        print(
            f"no lake at {data}: build the 1M-game one with `python benchmarks/warehouse.py` "
            "or pass --data DIR",
            file=sys.stderr,
        )
        return 2
    print(f"lake {data}: {lake_size(data)}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    worst = 0.0
    print("\nscript time (AppTest, server side): cold, then warm median of 3")
    for page, (cold, warm) in script_times(data).items():
        worst = max(worst, warm)
        print(f"  {page:<26} cold {cold:7.2f} s   warm {warm:6.2f} s")
    if not args.no_browser:
        reason = browser.chromium_missing()
        if reason:
            print(f"\nbrowser: skipped ({reason})")
        else:
            print("\nbrowser time (chromium, from navigation until idle with every chart drawn)")
            print(f"  Streamlit boot alone (empty-lake page, fresh tab): {boot_time():.2f} s")
            print("  page                 first visit   later visit   switch in session")
            for path, (first, later, switch) in browser_times(data).items():
                worst = max(worst, later, switch)
                print(f"  /{path:<19} {first:9.2f} s   {later:9.2f} s   {switch:13.2f} s")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end (other jobs slow every figure)")
    verdict = "meets" if worst < TARGET_S else "MISSES"
    print(
        f"\nworst page after first load: {worst:.2f} s ({verdict} the {TARGET_S:g} s target; "
        f"ratio {worst / TARGET_S:.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
