"""Variants: how "With a Vengeance" changes round scores, bust rates and each policy's value."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, tables

ROOT = data.data_root()
st.title("Classic vs With a Vengeance")
st.caption(
    "Answers: how does the variant change round scores, bust and Flip 7 rates, and what each "
    "policy is worth? Per line-up and field size, pooled over every run of each variant that "
    "played that line-up (the sidebar's run filter does not apply here)."
)

everything = data.variant_comparison(ROOT)
variants = sorted(set(everything["variant"]))
if len(variants) < 2:
    # One variant has nothing to compare with: no chart (a lone bar per policy would read as a
    # comparison), only what to run to get one.
    st.info(
        f"The lake holds runs of one variant only ({', '.join(variants) or 'none'}), so there is "
        "nothing to compare. Run the same (named) line-ups in both games, e.g. "
        "`flip7 tournament run experiments/vengeance.toml` and "
        "`flip7 tournament run experiments/vengeance-classic.toml`; the other pages show "
        "each run on its own."
    )
    st.stop()
sizes = sorted(int(p) for p in everything["players"].unique())
players = st.selectbox("Players at the table", sizes, index=0, key="variants_players")
at_size = data.variant_comparison(ROOT, players)
# Line-ups named alike in each variant compare row for row: those played in most variants first.
in_variants = {
    name: len(set(at_size[at_size.lineup == name].variant)) for name in set(at_size["lineup"])
}
lineups = sorted(in_variants, key=lambda name: (-in_variants[name], name))
lineup = st.selectbox(
    "Line-up",
    lineups,
    index=0,
    key=f"variants_lineup:{players}",
    help="Figures are per cell: the same line-up at the same table size in each variant.",
)
df = data.variant_comparison(ROOT, players, lineup)
played_in = sorted(set(df["variant"]))
if len(played_in) < 2:
    st.info(
        f"Line-up `{lineup}` at {players} players was played in {', '.join(played_in)} only: "
        "nothing to compare. Pick a line-up played in both variants (those come first), or run "
        "it in the other variant under the same line-up name."
    )
    st.stop()
shared = sorted(set.intersection(*(set(df[df.variant == v].policy) for v in played_in)))
policies = st.multiselect(
    "Policies",
    sorted(set(df["policy"])),
    default=shared or sorted(set(df["policy"])),
    key=f"variants_policies:{players}:{lineup}",
)
df = df[df["policy"].isin(policies)]

left, right = st.columns(2)
with left:
    st.subheader("Points per round")
    st.altair_chart(
        charts.by_variant(
            df, "points_per_round", "points per round (mean round score)", ".2f", "rounds"
        ),
        width="stretch",
    )
with right:
    st.subheader("Win index")
    st.altair_chart(
        charts.by_variant(
            df, "win_index", "win index (wins ÷ expected; 1 = average seat)", ".2f", "player_games"
        ),
        width="stretch",
    )
left, right = st.columns(2)
with left:
    st.subheader("Bust rate")
    st.altair_chart(
        charts.by_variant(df, "bust_rate", "busts (% of rounds)", ".1%", "rounds"), width="stretch"
    )
with right:
    st.subheader("Flip 7 rate")
    st.altair_chart(
        charts.by_variant(df, "flip7_rate", "Flip 7s (% of rounds)", ".2%", "rounds"),
        width="stretch",
    )

st.subheader("Round scores")
dist = data.variant_round_distribution(ROOT, players, tuple(policies), lineup)
st.altair_chart(charts.variant_round_scores(dist), width="stretch")
st.caption("Share of rounds at each score for the chosen policies; busts are the rounds at 0.")

st.subheader("The numbers")
tables.show(df, tables.variant_comparison(), width="stretch")
