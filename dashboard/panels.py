"""A page's titled chart: its heading, the chart at the page's width, and the caption that says
how to read it. Layout only: the chart comes from `dashboard.charts`, its data from `data`."""

from __future__ import annotations

from typing import Any

import streamlit as st


def chart(title: str, figure: Any, caption: str | None = None) -> None:
    """Draw `figure` (an Altair chart) under the heading `title`, with `caption` below it."""
    st.subheader(title)
    st.altair_chart(figure, width="stretch")
    if caption:
        st.caption(caption)
