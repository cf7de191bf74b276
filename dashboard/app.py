"""The dashboard's router: the page list, the shared sidebar filters, nothing else.

Run it with `flip7 dashboard [--data DIR]` (which calls `streamlit run` on this file with the
lake in $FLIP7_DATA). An empty lake gets a single page that says how to fill it.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, filters

st.set_page_config(
    page_title="flip7 dashboard", page_icon=":material/playing_cards:", layout="wide"
)

ROOT = data.data_root()

# URL paths differ from the file names on purpose: Streamlit also registers a `pages/` folder
# the old way, and AppTest.switch_page prefers a page whose URL equals its file name, which
# would run the page without this router (no sidebar filters).

if data.is_empty(ROOT):
    pages = [
        st.Page(
            "pages/getting_started.py",
            title="Getting started",
            icon=":material/rocket_launch:",
            url_path="start",
        )
    ]
else:
    pages = [
        st.Page(
            "pages/field_size.py",
            title="Field size",
            icon=":material/groups:",
            url_path="field-size",
            default=True,
        ),
        st.Page(
            "pages/card_counting.py",
            title="Card counting",
            icon=":material/calculate:",
            url_path="card-counting",
        ),
        st.Page(
            "pages/policies.py",
            title="Policy comparison",
            icon=":material/leaderboard:",
            url_path="policy-comparison",
        ),
        st.Page(
            "pages/replay.py", title="Game replay", icon=":material/replay:", url_path="game-replay"
        ),
        st.Page("pages/run_list.py", title="Runs", icon=":material/folder_open:", url_path="runs"),
    ]
    filters.sidebar(ROOT)

st.navigation(pages).run()
