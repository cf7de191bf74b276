"""Variants: how "With a Vengeance" changes round scores, bust rates and each policy's value."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import streamlit as st

from dashboard import charts, data, panels, tables

ROOT = data.data_root()
st.title("Classic vs With a Vengeance")
st.caption(
    "Answers: how does the variant change round scores, bust and Flip 7 rates, and what each "
    "policy is worth? Per line-up, field size and ruleset, pooled over every run of each "
    "variant that played that line-up (the sidebar's run filter does not apply here)."
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


def variant_count(rows: pd.DataFrame) -> int:
    return len(set(rows["variant"]))


# One ruleset at a time, as on the other pages (a bar per variant must not pool two rule
# choices): those played in most variants first.
by_rules = {r: variant_count(at_size[at_size.ruleset == r]) for r in set(at_size["ruleset"])}
rulesets = sorted(by_rules, key=lambda r: (-by_rules[r], r))
if len(rulesets) > 1:
    ruleset = st.selectbox(
        "Ruleset",
        rulesets,
        index=0,
        key=f"variants_ruleset:{players}",
        help="Runs at this table size play under several rulesets: the page shows one at a "
        "time, each variant's cells under these rules (those played in most variants first).",
    )
else:
    ruleset = rulesets[0]
    st.caption(f"Ruleset `{ruleset}`: every run at this table size plays under it.")
under = at_size[at_size.ruleset == ruleset]
# A line-up is its label and its seating (policies in seat order): two runs may give one label
# to different line-ups, which are then two choices, each shown with its seats. Line-ups named
# and seated alike in each variant compare row for row: those played in most variants first.
cells = {
    (str(lineup), str(seating)): variant_count(
        under[(under.lineup == lineup) & (under.seating == seating)]
    )
    for lineup, seating in set(zip(under["lineup"], under["seating"], strict=True))
}
labels = Counter(lineup for lineup, _ in cells)
choices = {
    (lineup if labels[lineup] == 1 else f"{lineup} (seats {seating})"): (lineup, seating)
    for lineup, seating in cells
}
names = sorted(choices, key=lambda name: (-cells[choices[name]], name))
choice = st.selectbox(
    "Line-up",
    names,
    index=0,
    key=f"variants_lineup:{players}:{ruleset}",
    help="Figures are per cell: the same line-up (the same policies in the same seats) at the "
    "same table size under the same rules in each variant.",
)
lineup, seating = choices[choice]
df = data.variant_comparison(ROOT, players, lineup, ruleset, seating)
played_in = sorted(set(df["variant"]))
if len(played_in) < 2:
    st.info(
        f"Line-up `{choice}` at {players} players under ruleset `{ruleset}` was played in "
        f"{', '.join(played_in)} only: nothing to compare. Pick a line-up played in both "
        "variants (those come first), or run it in the other variant under the same line-up "
        "name, seats and ruleset."
    )
    st.stop()
replayed = df[df["shuffles"] < df["games"]]
if not replayed.empty:
    # The runs of each replaying cell grouped by root seed: those sharing one are named.
    seeds = data.runs(ROOT).set_index("run")["seed"]
    groups: dict[tuple[str, str], set[str]] = {}
    for variant, runs_of in zip(replayed["variant"], replayed["pooled_runs"], strict=True):
        for run in runs_of:
            seed = seeds.get(str(run))
            if seed is not None and not pd.isna(seed):
                groups.setdefault((str(variant), str(int(seed))), set()).add(str(run))
    shared = sorted(
        f"{', '.join(sorted(runs))} (root seed {seed})"
        for (_, seed), runs in groups.items()
        if len(runs) > 1
    )
    st.warning(
        "Some runs pooled here share a root seed and replayed the same games: "
        f"{'; '.join(shared)}. They are not independent replications: every game counts (a "
        "replayed game as often as it was played), and the intervals are clustered by shuffle "
        "(the table's `shuffles` column, fewer than its games). For independent replications, "
        "give each run its own seed."
    )
common = sorted(set.intersection(*(set(df[df.variant == v].policy) for v in played_in)))
policies = st.multiselect(
    "Policies",
    sorted(set(df["policy"])),
    default=common or sorted(set(df["policy"])),
    key=f"variants_policies:{players}:{ruleset}:{choice}",
)
df = df[df["policy"].isin(policies)]

left, right = st.columns(2)
with left:
    panels.chart(
        "Points per round",
        charts.by_variant(
            df, "points_per_round", "points per round (mean round score)", ".2f", "rounds"
        ),
    )
with right:
    panels.chart(
        "Win index",
        charts.by_variant(
            df, "win_index", "win index (wins ÷ expected; 1 = average seat)", ".2f", "player_games"
        ),
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
dist = data.variant_round_distribution(ROOT, players, tuple(policies), lineup, ruleset, seating)
st.altair_chart(charts.variant_round_scores(dist), width="stretch")
st.caption("Share of rounds at each score for the chosen policies; busts are the rounds at 0.")

st.subheader("The numbers")
# Field size, ruleset, line-up and seating are the pickers' above: not repeated per row.
tables.show(
    df,
    tables.variant_comparison(),
    hide=("players", "ruleset", "lineup", "seating", "pooled_runs", "player_games", "rounds")
    # shuffles: only when some cell replayed games (the warning above refers to the column)
    + (("shuffles",) if (df["shuffles"] == df["games"]).all() else ())
    # runs: only when some cell pools several (replications)
    + (("runs",) if (df["runs"] == 1).all() else ()),
    width="stretch",
)
