"""The dashboard's router: the page list, the shared sidebar filters, nothing else.

Run it with `flip7 dashboard [--data DIR]` (which calls `streamlit run` on this file with the
lake in $FLIP7_DATA). An empty lake gets a single page that says how to fill it.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, filters
from warehouse.db import problems

st.set_page_config(
    page_title="flip7 dashboard", page_icon=":material/playing_cards:", layout="wide"
)

ROOT = data.data_root()

# The page files live in views/, not pages/: Streamlit also registers a `pages/` folder beside
# the entry point the old (v1) way. Measured with Streamlit 1.67: that makes the first visit to
# any non-default page of a freshly started server show a "Page not found" dialog, and makes
# AppTest.switch_page run such a page without this router (no sidebar filters).

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
            url_path="field-size",
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
    filters.sidebar(ROOT)
    # Runs left out (unreadable manifest), not verified as they are now, or holding shards their
    # manifest does not record: said on every page, above what it qualifies.
    wh = data.warehouse(ROOT)
    if wh.con is not None:
        with wh.lock:
            notes = problems(wh.con)
        for note in notes:
            st.caption(f":warning: {note}")

st.navigation(pages).run()
