"""Shown instead of every other page while the lake holds no committed shard (or cannot be
read): how to fill it."""

from __future__ import annotations

import streamlit as st

from dashboard import data

ROOT = data.data_root()

BROKEN = data.is_broken(ROOT)
st.title("The lake could not be read" if BROKEN else "No tournament results yet")
st.caption("This page answers: how do I get data for the dashboard to show?")
if BROKEN:
    st.error(f"The lake at `{ROOT}` could not be read: {data.empty_reason(ROOT)}")
    st.markdown("`flip7 warehouse verify` says more. Or write a fresh run, or another lake:")
else:
    st.write(f"The dashboard reads the lake at `{ROOT}`, and it holds no finished shard yet.")
st.markdown(
    "Run a tournament into it (a first run also compiles the simulation kernel once, saying "
    "so; docs/kernel.md gives the cost), then press **Check again**:"
)
st.code(
    f"flip7 tournament run demo --data {ROOT}\n"
    f"# or a quick look at a tenth of the games:\n"
    f"flip7 tournament run demo --data {ROOT} --scale 0.1",
    language="bash",
)
st.markdown(
    "Or point the dashboard at another lake: `flip7 dashboard --data DIR` "
    "(default: `$FLIP7_DATA`, else `./data`)."
)
with st.expander("What the warehouse said"):
    st.text(data.empty_reason(ROOT))
if st.button("Check again", type="primary"):
    data.reload()
    st.rerun()
