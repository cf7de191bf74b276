"""The running dashboard in a real browser: `flip7 dashboard` in a subprocess, Debian's chromium
driven by playwright. Every page loads, draws its charts and shows no exception; screenshots
go to the test's tmp dir (python -m tests.dashboard.browser refreshes the ones in docs/).

Required: without chromium or playwright these tests skip locally (saying which is missing) and
fail under CI (tests/conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.dashboard import browser

pytestmark = [pytest.mark.browser, pytest.mark.required]

MISSING = browser.chromium_missing()


@pytest.fixture(scope="module")
def chromium():
    if MISSING:
        pytest.skip(f"no browser for the real-browser test: {MISSING}")
    with browser.browser() as b:
        yield b


@pytest.fixture(scope="module")
def server(lake: Path):
    if MISSING:
        pytest.skip(f"no browser for the real-browser test: {MISSING}")
    with browser.serve(lake) as url:
        yield url


@pytest.mark.parametrize("path", list(browser.PAGES))
def test_page_renders_its_charts_without_exceptions(chromium, server, path, tmp_path):
    """Each page shows its title, draws at least its charts with a real size, and no exception."""
    name, title, charts = browser.PAGES[path]
    shot = tmp_path / f"dashboard-{name}.png"
    check = browser.visit(
        chromium, server, path, min_charts=charts, title=title, shot=shot, query="run=field"
    )
    assert not check.exceptions, check.exceptions[0]
    assert not check.dialogs, check.dialogs[0]
    assert not check.foreign_hosts, f"requests left 127.0.0.1 for {check.foreign_hosts}"
    assert not check.not_found, check.not_found
    assert title in check.text
    assert check.charts >= charts
    assert shot.stat().st_size > 10_000  # a real picture, not a blank page
    # Every table fits the page at 1400 px: no column cut off at the right.
    assert check.table_overflow_px == 0, (
        f"/{path}: a table is {check.table_overflow_px} px too wide"
    )


def test_next_card_steps_the_replay_in_the_browser(chromium, server):
    """Clicking "Next card" in the browser moves the replay on by one card."""
    page = chromium.new_page(viewport={"width": 1400, "height": 1700})
    try:
        page.goto(f"{server}/replay?run=field")
        browser.wait_ready(page, 1, 60_000, "Game replay")
        assert page.get_by_text("card 0 of", exact=False).count() == 1
        page.get_by_role("button", name="Next card").click()
        page.get_by_text("card 1 of", exact=False).wait_for(timeout=30_000)
        assert not page.query_selector_all(browser.EXCEPTION)
    finally:
        page.close()


def test_first_visit_to_a_page_of_a_fresh_server(chromium, lake):
    """A link straight to a non-default page works on a just-started server (no "Page not
    found" dialog: Streamlit 1.67 shows one when the page files sit in a pages/ folder), and so
    does the default page at its own URL, /field-size (Streamlit serves a default page at /
    only; the app registers it there too)."""
    with browser.serve(lake) as url:
        own = browser.visit(chromium, url, "field-size", min_charts=3, title="Field size")
        assert not own.dialogs and not own.exceptions and not own.not_found, own.dialogs
        check = browser.visit(chromium, url, "runs", min_charts=1, title="Runs")
        assert not check.dialogs and not check.exceptions and not check.not_found
        deep = browser.visit(
            chromium, url, "replay", min_charts=1, title="Game replay", query="run=other"
        )
    assert not deep.dialogs and not deep.exceptions and not deep.not_found
    assert not deep.foreign_hosts, deep.foreign_hosts


def test_empty_lake_page_in_the_browser(chromium, empty_lake):
    """A server over an empty lake shows how to run a tournament, not an exception."""
    with browser.serve(empty_lake) as url:
        check = browser.visit(
            chromium,
            url,
            "",
            min_charts=0,
            title="No tournament results yet",
            wait_text="flip7 tournament run",
        )
    assert not check.exceptions
    assert "flip7 tournament run" in check.text


@pytest.mark.parametrize("path", ["", "policies", "replay"])
def test_pages_fit_an_800_px_window(chromium, server, path, tmp_path):
    """At 800 px wide the page needs no sideways scrolling and still draws every chart."""
    name, title, charts = browser.PAGES[path]
    check = browser.visit(
        chromium,
        server,
        path,
        min_charts=charts,
        title=title,
        shot=tmp_path / f"{name}-800.png",
        query="run=field",
        width=800,
    )
    assert not check.exceptions and not check.foreign_hosts
    assert check.overflow_px == 0, f"/{path} is {check.overflow_px} px wider than the window"
    assert check.charts >= charts


def test_a_link_to_a_missing_run_lists_the_runs_in_the_browser(chromium, server):
    """/policies?run=nope shows an error naming the lake's runs, not another run's charts."""
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server}/policies?run=nope")
        page.get_by_text("which this lake does not hold", exact=False).wait_for(timeout=60_000)
        text = page.inner_text('[data-testid="stMain"]')
        assert "nope" in text and "field" in text and "other" in text
        assert not page.query_selector_all(browser.CHART)
    finally:
        page.close()


#: Records, from the first paint on, every progress bar text the page shows (a bar can come
#: and go between two polls of the test).
_RECORD_PROGRESS = """
window.__progress = [];
new MutationObserver(() => {
    for (const e of document.querySelectorAll('[data-testid="stMain"] [data-testid="stProgress"]')) {
        const t = e.innerText.trim();
        if (t && !window.__progress.includes(t)) window.__progress.push(t);
    }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def test_a_page_waiting_for_its_tables_says_so_in_the_page_on_a_phone(chromium, lake):
    """A fresh server (nothing cached) opened at /policies on a phone: the page itself (not
    only the collapsed sidebar) says how many tables are ready, above the page: while it
    computes those it reads (when that takes long enough to be drawn) and then while the
    other pages' are being prepared."""
    with browser.serve(lake) as url:
        page = chromium.new_page(viewport={"width": 390, "height": 844})
        try:
            page.add_init_script(_RECORD_PROGRESS)
            page.goto(f"{url}/policies?run=field")
            browser.wait_ready(page, 5, 90_000, "Policy comparison")
            seen = page.evaluate("() => window.__progress")
            assert not page.query_selector_all(browser.EXCEPTION)
        finally:
            page.close()
    assert any(re.search(r"\d+ of \d+ tables ready", t) for t in seen), seen


#: Per legend of each chart (Vega draws SVG: `.role-legend`): how far (px) Streamlit's chart
#: toolbar (shown on hover, or a tap on a phone) reaches down over it, where they share columns.
_TOOLBAR_OVER_LEGEND = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
  .flatMap(c => {
    const host = c.closest('[data-testid="stElementContainer"]') || c.parentElement;
    const bar = host.querySelector('[data-testid="stElementToolbar"]');
    if (!bar) return [];
    const b = bar.getBoundingClientRect();
    return [...c.querySelectorAll('.role-legend')].map(l => {
        const r = l.getBoundingClientRect();
        const across = Math.min(b.right, r.right) - Math.max(b.left, r.left);
        return across > 0 ? b.bottom - r.top : 0;
    });
})"""


@pytest.mark.parametrize("path", ["", "card-counting", "policies"])
def test_on_a_phone_the_toolbar_covers_no_legend_and_one_line_says_unverified(
    chromium, server, path
):
    """At 390x844: each chart's toolbar lies over the room left free above the drawing (where
    the legend would start), not over the legend; the unverified runs take one quiet line,
    with the command; the field-size page opens on the win index."""
    name, title, charts = browser.PAGES[path]
    page = chromium.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"{server}/{path}?run=field")
        browser.wait_ready(page, charts, 60_000, title)
        covered = page.evaluate(_TOOLBAR_OVER_LEGEND)
        text = page.inner_text('[data-testid="stMain"]')
        assert not page.query_selector_all(browser.EXCEPTION)
    finally:
        page.close()
    assert covered and max(covered) <= 0, f"a toolbar covers a legend by {max(covered)} px"
    assert text.count("not verified") == 1 and "flip7 warehouse verify --data" in text
    if not path:
        assert "Adjusted win index" in text
