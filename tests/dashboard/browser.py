"""Drive the real dashboard in Debian's chromium: start `flip7 dashboard`, visit pages, check, shoot.

Used by tests/dashboard/test_browser.py and, to refresh the screenshots in docs/, directly:

    python -m tests.dashboard.browser --data DIR --out docs

Chromium is never downloaded: playwright launches /usr/bin/chromium (`.ci/run` installs it with
apt-get). NOTES.md: wait for `[data-testid="stVegaLiteChart"]`, and size the viewport to the
page, because Streamlit scrolls an inner container (a full-page screenshot would cut it off).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = os.environ.get("FLIP7_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
CHART = '[data-testid="stVegaLiteChart"]'
EXCEPTION = '[data-testid="stException"]'

#: url path -> (screenshot name, text the page must show, charts it must draw at least)
PAGES: dict[str, tuple[str, str, int]] = {
    "": ("field-size", "Field size", 3),
    "card-counting": ("card-counting", "Card counting", 2),
    "policies": ("policies", "Policy comparison", 5),
    "variants": ("variants", "Classic vs With a Vengeance", 5),
    "replay": ("replay", "Game replay", 1),
    "runs": ("runs", "Runs", 1),
    "ratings": ("ratings", "Ratings", 2),
}
PAGES_BY_NAME = {name: path for path, (name, _, _) in PAGES.items()}


def chromium_missing() -> str | None:
    """Why the browser cannot run here, or None."""
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"chromium not found at {CHROMIUM} (install it: apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def serve(data: Path, timeout: float = 60.0, args: Sequence[str] = ()) -> Iterator[str]:
    """Run `flip7 dashboard --data DATA [ARGS]` on a free port; yield its URL; stop it
    afterwards."""
    port = free_port()
    cmd = [sys.executable, "-m", "flip7", "dashboard", "--data", str(data), "--port", str(port)]
    cmd += list(args)
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in finally)
    proc = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"flip7 dashboard exited with {proc.returncode}:\n{log.read()}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the dashboard did not answer on {url} in {timeout:.0f} s")
            time.sleep(0.25)
        yield url
    finally:
        # Stop the server we started (its own process group: streamlit and nothing else).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        log.close()


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM it when this process dies, so a killed test run does
    not leave a server behind (the normal exit stops it in `serve`)."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


@dataclass
class PageCheck:
    """What one page showed."""

    path: str
    charts: int  # charts that rendered (a canvas or svg with a size)
    exceptions: list[str]
    dialogs: list[str]  # modal dialogs, e.g. Streamlit's "Page not found"
    text: str
    screenshot: Path | None
    seconds: float
    foreign_hosts: list[str] = field(default_factory=list)  # requests to any other host
    not_found: list[str] = field(default_factory=list)  # URLs answered 404 (or any 4xx/5xx)
    overflow_px: int = 0  # how far the page is wider than the viewport (0: no sideways scroll)
    table_overflow_px: int = 0  # how far the widest table is wider than its frame (cut off)


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def visit(
    b: Any,
    url: str,
    path: str,
    *,
    min_charts: int,
    title: str | None = None,
    shot: Path | None = None,
    query: str = "",
    clicks: Sequence[str] = (),
    timeout_ms: int = 60_000,
    width: int = 1400,
    wait_text: str | None = None,
) -> PageCheck:
    """Load a page, wait until it has finished running and drawn `min_charts` charts, then check
    that every chart rendered and no exception shows; optionally press buttons (by name, each
    followed by a wait for the rerun) and save a screenshot. Records every request to a host
    other than the server's (the dashboard must work offline) and every failed response.
    `wait_text`: also wait until the page shows this text (a code block is highlighted by a
    script Streamlit loads on demand, so its text can appear after the page is idle)."""
    page = b.new_page(viewport={"width": width, "height": 1700})
    local = urlsplit(url).hostname
    foreign: list[str] = []
    failed: list[str] = []
    page.on(
        "request",
        lambda r: foreign.append(r.url) if urlsplit(r.url).hostname not in (local, None) else None,
    )
    page.on(
        "response",
        lambda r: (
            failed.append(f"{r.status} {r.url}")
            if r.status >= 400 and not _base_path_probe(r.url, path)
            else None
        ),
    )
    try:
        t0 = time.perf_counter()
        page.goto(f"{url}/{path}" + (f"?{query}" if query else ""), wait_until="domcontentloaded")
        try:
            ready = wait_ready(page, min_charts, timeout_ms, title)
        except Exception as exc:  # playwright's TimeoutError: say what the page showed instead
            shown = page.inner_text("body")[:2000] if page.query_selector("body") else ""
            raise AssertionError(
                f"/{path}: no {title!r} page with {min_charts} charts within "
                f"{timeout_ms / 1000:.0f} s ({exc.__class__.__name__}); the page shows:\n{shown}"
            ) from None
        seconds = ready - t0
        if wait_text:
            page.get_by_text(wait_text, exact=False).first.wait_for(timeout=timeout_ms)
        for name in clicks:
            page.get_by_role("button", name=name).first.click()
            page.wait_for_timeout(150)
            wait_ready(page, min_charts, timeout_ms, title)
        rendered = page.eval_on_selector_all(
            CHART,
            """els => els.filter(e => {
                const g = e.querySelector('canvas, svg');
                if (!g) return false;
                const r = g.getBoundingClientRect();
                return r.width > 50 && r.height > 50;
            }).length""",
        )
        exceptions = [e.inner_text() for e in page.query_selector_all(EXCEPTION)]
        dialogs = [e.inner_text() for e in page.query_selector_all('[role="dialog"]')]
        text = page.inner_text('[data-testid="stMain"]')
        overflow = page.evaluate(
            "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - window.innerWidth"
        )
        tables = page.evaluate(TABLE_OVERFLOW)
        if shot is not None:
            height = page.evaluate(
                "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                " return Math.max(m.scrollHeight, document.body.scrollHeight); }"
            )
            page.set_viewport_size({"width": width, "height": min(max(900, height + 40), 6000)})
            page.wait_for_timeout(800)  # let Vega re-layout at the new size
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shot))
        return PageCheck(
            path,
            rendered,
            exceptions,
            dialogs,
            text,
            shot,
            seconds,
            sorted({urlsplit(u).hostname or u for u in foreign}),
            failed,
            max(0, int(overflow)),
            max([0, *(int(t) for t in tables)]),
        )
    finally:
        page.close()


def _base_path_probe(url: str, path: str) -> bool:
    """Streamlit's frontend, opened on /PAGE, first asks /PAGE/_stcore/health and
    /PAGE/_stcore/host-config in case the app is served under /PAGE, and gets a 404 before it
    tries /_stcore/... (streamlit/streamlit issue 7074, open): its own probe, not a broken link."""
    probe = urlsplit(url).path
    return bool(path) and probe in (f"/{path}/_stcore/health", f"/{path}/_stcore/host-config")


#: Per table (st.dataframe, a canvas grid in a scrolling frame): how many px of its columns lie
#: beyond the frame's right edge, i.e. are cut off until scrolled to.
TABLE_OVERFLOW = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(e => {
    const s = e.querySelector('.dvn-scroller') || e;
    return s.scrollWidth - s.clientWidth;
})"""

_READY = """([title, n]) => {
    if (document.querySelector('[data-testid="stException"]')) return true;
    const main = document.querySelector('[data-testid="stMain"]');
    if (!main) return false;
    if (title && ![...main.querySelectorAll('h1')].some(h => h.innerText.trim().startsWith(title)))
        return false;
    const drawn = main.querySelectorAll(
        '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg');
    return drawn.length >= n;
}"""
_IDLE = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')"""


def wait_ready(page: Any, min_charts: int, timeout_ms: int, title: str | None = None) -> float:
    """Wait until the page shows `title` as its heading and has drawn `min_charts` charts (or
    shows an exception), then until Streamlit says its script is no longer running. Returns
    `time.perf_counter()` at that moment (before a short settling pause)."""
    # Poll every 50 ms rather than per animation frame (which headless chromium may throttle).
    page.wait_for_function(_READY, arg=[title or "", min_charts], timeout=timeout_ms, polling=50)
    page.wait_for_function(_IDLE, timeout=timeout_ms, polling=50)
    ready = time.perf_counter()
    page.wait_for_timeout(300)
    return ready


#: For the screenshots in docs/: buttons to press first, so the replay shows a game under way.
SCREENSHOT_CLICKS: dict[str, tuple[str, ...]] = {"replay": ("Next card",) * 30}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Screenshot dashboard pages (for docs/).")
    parser.add_argument("--data", required=True, help="the lake to show")
    parser.add_argument("--out", default="docs", help="folder for dashboard-<page>.png")
    parser.add_argument("--run", default="", help="the run to show (default: the newest)")
    parser.add_argument(
        "--pages", default="", help=f"comma-separated subset of {', '.join(PAGES_BY_NAME)}"
    )
    parser.add_argument("--width", type=int, default=1400, help="window width in px")
    args = parser.parse_args(argv)
    reason = chromium_missing()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    names = [n for n in args.pages.split(",") if n] or list(PAGES_BY_NAME)
    unknown = sorted(set(names) - set(PAGES_BY_NAME))
    if unknown:
        parser.error(f"unknown page(s) {', '.join(unknown)}; valid: {', '.join(PAGES_BY_NAME)}")
    with serve(Path(args.data).resolve()) as url, browser() as b:
        for name in names:
            path = PAGES_BY_NAME[name]
            _, title, charts = PAGES[path]
            shot = Path(args.out) / f"dashboard-{name}.png"
            check = visit(
                b,
                url,
                path,
                min_charts=charts,
                title=title,
                shot=shot,
                query=f"run={args.run}" if args.run else "",
                clicks=SCREENSHOT_CLICKS.get(name, ()),
                width=args.width,
            )
            print(
                f"{name}: {check.charts} charts, {len(check.exceptions)} exceptions, "
                f"tables {check.table_overflow_px} px too wide, "
                f"{check.seconds:.1f} s -> {check.screenshot}"
            )
            if check.exceptions or check.dialogs or check.foreign_hosts or check.not_found:
                problems = check.exceptions + check.dialogs + check.foreign_hosts + check.not_found
                print("\n".join(problems), file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
