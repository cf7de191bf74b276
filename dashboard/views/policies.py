"""Policy comparison: the league, who beats whom, round scores, and how rounds end."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, tables

f = filters.page(
    "Policy comparison",
    "which policy wins most over every field size, who finishes ahead of whom, and "
    "how do their rounds end?",
)

st.subheader("League")
league = f.keep(data.league(f.root, f.run, f.policy_filter))
seen = {str(p): tuple(sorted(int(n) for n in fs)) for p, fs in zip(league["policy"], league["field_sizes"], strict=True)}  # fmt: skip
league = league.assign(
    seen_at=[f"{p} ({', '.join(map(str, seen[str(p)]))} players)" for p in league["policy"]]
)
every_size = sorted({n for sizes in seen.values() for n in sizes})
scope = filters.field_size_or_pooled(
    "Rank over",
    "all field sizes (adjusted)",
    every_size,
    f"pc_league_scope:{f.run}",
    "All field sizes: the adjusted win index, which pools every cell a policy played. "
    "One field size: each policy in each line-up played at that size, ranked side by side.",
)
if scope is None:
    if len(set(seen.values())) > 1:
        st.warning(
            "These policies were not seen at the same field sizes ("
            + "; ".join(f"{p}: {', '.join(map(str, s))}" for p, s in sorted(seen.items()))
            + " players). The index adjusts for table size (1 = an average seat at each), but "
            "the rows do not rest on the same tables: rank within one field size to compare "
            "like with like."
        )
    st.altair_chart(charts.league_win_index(league, "seen_at"), width="stretch")
    st.caption(
        "The adjusted win index pools every cell (line-up and field size) a policy played: its "
        "wins ÷ the wins an average seat expects (1/n per seat at an n-player table); 95% "
        "intervals clustered by game (the line through each dot). Dashed: 1, an average seat. "
        "Each row names the field sizes the policy was seen at."
    )
    tables.show(league, tables.league(), hide=("lineups",))  # long: the per-size view names them
else:
    n = scope
    cells = f.keep(data.field_size(f.root, f.run, f.policy_filter))
    cells = cells[cells["players"] == n].sort_values("win_index", ascending=False)
    cells = cells.assign(
        place=range(1, len(cells) + 1),
        cell=[f"{p} · {lu}" for p, lu in zip(cells["policy"], cells["lineup"], strict=True)],
    )
    st.altair_chart(charts.league_win_index(cells, "cell"), width="stretch")
    st.caption(
        f"At {n} players only: one dot per policy and line-up (a cell), its win index (wins ÷ "
        "the 1/n an average seat wins) with the 95% interval clustered by game as a line."
    )
    tables.show(cells, tables.field_size(), hide=("players",))

sizes = [int(s) for s in f.info.get("field_sizes", [])] or [2]
players = filters.players_at_table(
    sizes,
    f"pc_players:{f.run}",
    "Head to head, round scores and rates are per cell: a field size and a line-up.",
)
lineup = st.selectbox(
    "Line-up",
    data.lineups(f.root, f.run, players),
    index=0,
    key=f"pc_lineup:{f.run}:{players}",
)

st.subheader(f"Head to head at {players} players")
h2h = f.keep(data.head_to_head(f.root, f.run, players, lineup, f.policy_filter))
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
dist = f.keep(data.round_distribution(f.root, f.run, players, lineup, f.policy_filter))
st.altair_chart(charts.round_scores(dist, cumulative, busts), width="stretch")
st.caption("Shares are of each policy's rounds in this line-up. Scroll on the chart to zoom.")

st.subheader(f"Busts and Flip 7s at {players} players")
rates = f.keep(data.rates(f.root, f.run, players, lineup, f.policy_filter))
left, right = st.columns(2)
with left:
    st.altair_chart(charts.round_rate(rates, "bust_rate", "bust rate"), width="stretch")
with right:
    st.altair_chart(charts.round_rate(rates, "flip7_rate", "Flip 7 rate"), width="stretch")
tables.show(rates, tables.rates(), hide=("lineup", "players", "games"))  # picked above
