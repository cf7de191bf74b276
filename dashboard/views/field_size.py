"""Field size: win index (the default: where policies cross) or win rate, and points per round,
per policy as the table grows."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, panels, tables

f = filters.page(
    "Field size",
    "how does each policy's chance of winning change with the number of players, "
    "and does scoring more points per round mean winning more?",
)

lineups = data.lineups(f.root, f.run)
lineup = st.selectbox(
    "Line-up",
    lineups,
    index=0,
    key=f"fs_lineup:{f.run}",
    help="Figures are per cell: one line-up at one field size. A line-up played at several "
    "field sizes (a `mix` in the spec) draws one line per policy across them; line-ups over "
    "more field sizes come first.",
)
sizes = f.keep(data.field_size(f.root, f.run, f.policy_filter, lineup))
if sizes.empty:
    st.info("No games of the selected policies in this line-up.")
    st.stop()

measure = st.segmented_control(
    "Win measure",
    ["win index", "win rate"],
    default="win index",
    required=True,
    key="fs_measure",
    help="The win index divides wins by the wins an average seat expects (1/n per game), so "
    "field sizes compare on one scale: 1 = average, 1.2 = 20% more wins than a fair share. "
    "It is the default because it shows where one policy overtakes another as the table "
    "grows; the win rate falls with 1/n for every policy, so its lines bunch together.",
)
left, right = st.columns(2)
with left:
    if measure == "win index":
        panels.chart(
            "Adjusted win index",
            charts.win_index_by_field_size(sizes),
            "Bands: 95% intervals, clustered by game. Dashed: 1, an average seat. Where two "
            "lines cross, the better policy changes with the size of the table.",
        )
    else:
        panels.chart(
            "Win rate",
            charts.win_rate_by_field_size(sizes),
            "Bands: 95% intervals, clustered by game. Dashed: 1/n, an average seat's rate.",
        )
with right:
    panels.chart(
        "Points per round",
        charts.points_by_field_size(sizes),
        "Bands: 95% intervals, clustered by game. Compare the order of the lines with the win "
        "chart: more points per round is not the same as more wins.",
    )

left, right = st.columns(2)
with left:
    panels.chart(
        "Points against wins",
        charts.points_vs_wins(sizes),
        "One dot per policy and field size (the number beside it). Dots that do not climb "
        "from left to right are policies that score more per round yet win less.",
    )
with right:
    st.subheader("How to read it")
    st.markdown(
        "- **Win rate**: wins ÷ seats played; an average seat at an n-player table wins 1/n.\n"
        "- **Win index**: wins ÷ the wins an average seat expects, so field sizes share one "
        "scale (1 = average).\n"
        "- **Points per round**: points ÷ rounds played (a bust scores 0).\n"
        "- Bands are 95% intervals clustered by game (the seats of one game are not "
        "independent); hover a point for its sample size, or see the table."
    )

st.subheader("The numbers")
tables.show(sizes, tables.field_size(), hide=("lineup",))  # the picker above names it
