"""Cached reads of the ratings marts for the Ratings page (beside data.py, through its
`_query`). The ratings are fitted when asked (their marts are views that read the run's games),
so they are not prepared in the background; each (run, field size) is fitted once per server."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.data import TTL_S, _query
from warehouse import rating_queries


@st.cache_data(ttl=TTL_S, show_spinner="Fitting the ratings ...")
def ratings(root: str, run: str, players: int | None = None) -> pd.DataFrame:
    """Every policy of the run rated (ev = 0), best first; `players=None` pools field sizes."""
    return _query(rating_queries.ratings, root, run, players)


@st.cache_data(ttl=TTL_S, show_spinner="Fitting the ratings ...")
def rating_pairs(root: str, run: str, players: int | None = None) -> pd.DataFrame:
    """Model vs observed chance of finishing ahead, per pair of policies."""
    return _query(rating_queries.rating_pairs, root, run, players)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def field_sizes(root: str, run: str) -> list[int]:
    """The field sizes the run played."""
    return list(_query(rating_queries.field_sizes, root, run))
