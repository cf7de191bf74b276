"""Policy comparison: the league, who beats whom, round scores, and how rounds end."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, tables

f = filters.require()
st.title("Policy comparison")
st.caption(
    "Answers: which policy wins most over every field size, who finishes ahead of whom, and "
    "how do their rounds end?"
)

st.subheader("League")
league = data.league(f.root, f.run, f.policy_filter)
st.altair_chart(charts.league_win_index(league), width="stretch")
st.caption(
    "The adjusted win index pools every cell (line-up and field size) a policy played: its "
    "wins ÷ the wins an average seat expects (1/n per seat at an n-player table); 95% "
    "intervals clustered by game."
)
tables.show(league, tables.league())

sizes = [int(s) for s in f.info.get("field_sizes", [])] or [2]
players = st.segmented_control(
    "Players at the table",
    sizes,
    default=sizes[0],
    required=True,
    key=f"pc_players:{f.run}",
    help="Head to head, round scores and rates are per cell: a field size and a line-up.",
)
lineup = st.selectbox(
    "Line-up",
    data.lineups(f.root, f.run, players),
    index=0,
    key=f"pc_lineup:{f.run}:{players}",
)

st.subheader(f"Head to head at {players} players")
h2h = data.head_to_head(f.root, f.run, players, lineup, f.policy_filter)
if h2h.empty:
    st.info("No two different selected policies met in this line-up.")
else:
    st.altair_chart(charts.head_to_head(h2h), width="content")
    st.caption(
        "Share of meetings (two seats in one game) in which the row policy finished "
        "ahead of the column policy; ties are left out. Hover for counts and 95% intervals "
        "(clustered by game)."
    )

st.subheader(f"Round scores at {players} players")
shape = st.columns(2)
cumulative = shape[0].toggle("Cumulative", key="pc_cumulative")
busts = shape[1].toggle(
    "Include rounds scoring 0", key="pc_busts", help="Mostly busts: see their rate below."
)
dist = data.round_distribution(f.root, f.run, players, lineup, f.policy_filter)
st.altair_chart(charts.round_scores(dist, cumulative, busts), width="stretch")
st.caption("Shares are of each policy's rounds in this line-up. Scroll on the chart to zoom.")

st.subheader(f"Busts and Flip 7s at {players} players")
rates = data.rates(f.root, f.run, players, lineup, f.policy_filter)
left, right = st.columns(2)
with left:
    st.altair_chart(charts.round_rate(rates, "bust_rate", "bust rate"), width="stretch")
with right:
    st.altair_chart(charts.round_rate(rates, "flip7_rate", "Flip 7 rate"), width="stretch")
tables.show(rates, tables.rates())
