"""The dashboard's router: the page list, the shared sidebar filters, nothing else.

Run it with `flip7 dashboard [--data DIR]` (which calls `streamlit run` on this file with the
lake in $FLIP7_DATA). An empty lake gets a single page that says how to fill it.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import data, filters, notes

# A local icon: a Material icon or an emoji as page_icon makes the browser fetch the favicon
# from a Google or CDN host, and the dashboard must work offline.
ICON = str(Path(__file__).with_name("icon.png"))
st.set_page_config(page_title="flip7 dashboard", page_icon=ICON, layout="wide")

# The sidebar filters each page reads (url path -> policy picker shown); a page not listed
# (Classic vs Vengeance pools every run) shows none: a filter it ignores would mislead.
RUN_FILTERS = {
    "": True,  # the default page: Field size
    "field-size": True,  # the same page at its own URL (FIELD_SIZE_AT_ITS_URL below)
    "card-counting": False,
    "policies": True,
    "replay": True,
    "runs": False,
    "rulesets": True,
    "ratings": False,
}

ROOT = data.data_root()

# The page files live in views/, not pages/: Streamlit also registers a `pages/` folder beside
# the entry point the old (v1) way. Measured with Streamlit 1.67: that makes the first visit to
# any non-default page of a freshly started server show a "Page not found" dialog, and makes
# AppTest.switch_page run such a page without this router (no sidebar filters).


# Streamlit serves the default page at / only: its url_path is reserved but never served, so a
# fresh tab at /field-size got "Page not found" (and the default page). The same page file is
# therefore also registered, hidden from the menu, at /field-size. A page's script hash is
# its url_path's, so the default page must reserve another one. AppTest.switch_page and
# st.switch_page("views/field_size.py") pick the first registration: the default page.
FIELD_SIZE_AT_ITS_URL = st.Page(
    "views/field_size.py",
    title="Field size",
    icon=":material/groups:",
    url_path="field-size",
    visibility="hidden",
)

if data.is_empty(ROOT):
    pages = [
        st.Page(
            "views/getting_started.py",
            title="Getting started",
            icon=":material/rocket_launch:",
            url_path="start",
        )
    ]
else:
    pages = [
        st.Page(
            "views/field_size.py",
            title="Field size",
            icon=":material/groups:",
            url_path="field-size-home",  # reserved, never served: the default page is at /
            default=True,
        ),
        st.Page(
            "views/card_counting.py",
            title="Card counting",
            icon=":material/calculate:",
            url_path="card-counting",
        ),
        st.Page(
            "views/policies.py",
            title="Policy comparison",
            icon=":material/leaderboard:",
            url_path="policies",
        ),
        st.Page("views/ratings.py", title="Ratings", icon=":material/star:", url_path="ratings"),
        st.Page(
            "views/rulesets.py",
            title="Rule choices",
            icon=":material/rule:",
            url_path="rulesets",
        ),
        st.Page(
            "views/variants.py",
            title="Classic vs Vengeance",
            icon=":material/compare_arrows:",
            url_path="variants",
        ),
        st.Page(
            "views/replay.py", title="Game replay", icon=":material/replay:", url_path="replay"
        ),
        st.Page("views/runs.py", title="Runs", icon=":material/folder_open:", url_path="runs"),
    ]
    pages.append(FIELD_SIZE_AT_ITS_URL)
    # Runs left out (unreadable manifest) or holding shards their manifest does not record: a
    # warning each on every page, above what it qualifies; runs not verified as they are now:
    # one quiet line with the command that verifies them.
    folded = notes.fold(data.notes(ROOT))
    for note in folded.warnings:
        st.caption(f":warning: {note}")
    quiet = folded.quiet_line(ROOT)
    if quiet:
        st.caption(quiet, help=folded.reasons())

page = st.navigation(pages)
in_page = None  # the page's own progress line, above the page (the sidebar is collapsed on a
# phone): while marts are missing, the page may wait for its own to be computed
if not data.is_empty(ROOT):
    if page.url_path in RUN_FILTERS:
        filters.sidebar(ROOT, policies=RUN_FILTERS[page.url_path])
    else:
        st.sidebar.caption(
            "This page pools every run of the lake: the run and policy filters do not apply."
        )
        filters.reload_button()
    progress = data.progress(ROOT)
    if progress is not None:
        ready, total = progress
        st.sidebar.progress(
            ready / total, text=f"Preparing the other pages: {ready} of {total} tables ready"
        )
    readiness = data.readiness(ROOT)
    if readiness is not None:
        ready, total = readiness
        in_page = st.empty()
        in_page.progress(
            ready / total,
            text=f"{ready} of {total} tables ready: computing the ones this page reads first "
            "(its figures appear below as soon as they are ready)",
        )
try:
    page.run()
finally:
    if not data.is_empty(ROOT) and data.PREPARE_IN_BACKGROUND:
        # The other pages' marts, computed once this page has run (it does not wait for
        # them; a page stopped early by st.stop counts as run); the sidebar shows how far
        # that got, on the next rerun.
        data.prepare_in_background(ROOT)
    if in_page is not None:
        # The page has run: its own tables are ready. The line stays while the other pages'
        # are being prepared (as in the sidebar), and goes when none is missing.
        progress = data.progress(ROOT)
        if progress is None:
            in_page.empty()
        else:
            ready, total = progress
            in_page.progress(
                ready / total, text=f"Preparing the other pages: {ready} of {total} tables ready"
            )
