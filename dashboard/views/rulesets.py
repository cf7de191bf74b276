"""Rule choices: the same line-ups under several rulesets of one run, side by side."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, tables

f = filters.page(
    "Rule choices",
    "what does a rule choice change (how Freeze and Flip Three resolve during a Flip "
    "Three, the target score)? The same line-up at the same table under each ruleset of the "
    "run: game length, points per round, bust and Flip 7 rates, and each policy's win rate.",
)

if len(f.rulesets) < 2:
    st.info(
        f"Run `{f.run}` plays one ruleset ({', '.join(f.rulesets) or 'unknown'}), so there is "
        'nothing to compare. Give a spec `rulesets = ["3.1", "immediate", "legacy"]` (or a '
        "line-up its own `ruleset`), e.g. `flip7 tournament run experiments/rulesets.toml`, "
        "then pick that run in the sidebar."
    )
    st.stop()

cells = data.cell_results(f.root, f.run)
lineups = list(dict.fromkeys(str(x) for x in cells["lineup"]))
lineup = st.selectbox(
    "Line-up",
    lineups,
    index=0,
    key=f"rc_lineup:{f.run}",
    help="Figures are per cell: one line-up at one field size under one ruleset.",
)
of_lineup = cells[cells["lineup"] == lineup]
sizes = sorted(int(n) for n in set(of_lineup["players"]))
players = filters.players_at_table(sizes, f"rc_players:{f.run}:{lineup}")
df = of_lineup[of_lineup["players"] == players]
if len(df) < 2:
    st.info(
        f"Line-up `{lineup}` at {players} players was played under one ruleset only "
        f"({', '.join(df['ruleset'])}): nothing to compare. Pick another line-up."
    )
    st.stop()

#: (title, column, axis title, number format, the weight its interval is over), two per row.
FIGURES = (
    ("Rounds per game", "rounds_per_game", "rounds per game", ".2f", "games"),
    ("Points per round", "points_per_round", "points per round (all seats)", ".2f", "seat_rounds"),
    ("Bust rate", "bust_rate", "busts per seat-round", ".1%", "seat_rounds"),
    ("Flip 7 rate", "flip7_rate", "Flip 7s per seat-round", ".2%", "seat_rounds"),
)
for i in range(0, len(FIGURES), 2):
    for place, (title, column, axis, number, weight) in zip(
        st.columns(2), FIGURES[i : i + 2], strict=True
    ):
        with place:
            st.subheader(title)
            st.altair_chart(charts.by_ruleset(df, column, axis, number, weight), width="stretch")
st.caption(
    "All seats of the cell pooled. Black bars: 95% intervals, clustered by game (the seats "
    "and rounds of one game are not independent)."
)

st.subheader("Win rate by policy")
wins = data.field_size(f.root, f.run, f.policy_filter, lineup)
wins = wins[wins["players"] == players]
st.altair_chart(
    charts.by_ruleset(wins, "win_rate", "win rate (wins ÷ seats)", ".1%", "player_games", "policy"),
    width="stretch",
)
st.caption(
    f"An average seat at {players} players wins {1 / players:.1%}. A rule choice that moves "
    "one policy's bar and not another's changes who the game favours."
)

st.subheader("The numbers")
# The cell's line-up and field size are the pickers' above: not repeated per row.
tables.show(df, tables.cell_results(), hide=("lineup", "players"))
tables.show(wins, tables.field_size(), hide=("lineup", "players"))
