"""Card counting: what counting the discard pile gains, per round and per game."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, panels, tables

f = filters.page(
    "Card counting",
    "how much does counting the discard pile gain (evc over ev, bustc over bust) in "
    "points per round and in games won?",
)

everything = f.keep(data.card_counting(f.root, f.run))
if everything.empty:
    st.info(
        "This run has no counting policy beside its non-counting twin (e.g. evc and ev, or "
        "bustc:0.25 and bust:0.25). Put both in a spec, ideally as two line-ups with the same "
        '`pair = "..."` so that they see the same shuffles, and run it.'
    )
    st.stop()

options = sorted(set(everything["comparison"]))
picked = st.multiselect("Comparisons", options, default=options, key=f"cc_comparisons:{f.run}")
gains = f.keep(data.card_counting(f.root, f.run, tuple(picked) or tuple(options)))

left, right = st.columns(2)
with left:
    panels.chart(
        "Single rounds: points per round",
        charts.counting_gain(gains, "ppr"),
        "Counting policy minus its twin, mean round score; bars are 95% intervals.",
    )
with right:
    panels.chart(
        "Whole games: win rate",
        charts.counting_gain(gains, "win"),
        "Counting policy minus its twin, share of games won; bars are 95% intervals.",
    )
st.markdown(
    "Each comparison names its cells: the counting policy's line-up and its twin's, each "
    "side's figure pooled over its games (points ÷ rounds played, wins ÷ seats), as on the "
    "other pages. **paired** rows compare games played on the same shuffles (common random "
    "numbers), intervals clustered by game pair, so they are narrow; **unpaired** rows compare "
    "the line-ups' own games, intervals clustered by game (none when a line-up has one game)."
)

st.subheader("The numbers")
st.markdown("**Points per round** (mean round score)")
tables.show(gains, tables.card_counting("ppr"))
st.markdown("**Win rate** (share of games won)")
tables.show(gains, tables.card_counting("win"))
