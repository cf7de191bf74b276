"""Runs: which runs the lake holds, what they planned and how far they got."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, tables
from warehouse.report import ranking_headline

ROOT = data.data_root()
st.title("Runs")
st.caption(
    "Answers: which tournament runs are in the lake, with what spec, how big, and are "
    "they complete?"
)
st.markdown(f"Lake: `{ROOT}` (every run in it; the sidebar picks the run the other pages show)")

runs = data.runs(ROOT)
st.altair_chart(charts.runs_games(runs), width="stretch")
# What the run picked below shows in full (rows, versions, creation) is left out here.
tables.show(
    runs,
    tables.runs(),
    hide=(
        "seed",
        "planned_shards",
        "rounds",
        "events",
        "created",
        "package_version",
        "rules_version",
        "schema_version",
    ),
)

f = filters.current()
if f is not None:
    info = f.info
    st.subheader(f"Run {f.run}: {info['status']}")
    m = st.columns(4)
    m[0].metric(
        "games committed",
        f"{int(info['games']):,}",
        help=f"of {int(info['planned_games'] or 0):,} planned",
    )
    m[1].metric(
        "shards committed",
        f"{int(info['shards']):,}",
        help=f"of {int(info['planned_shards'] or 0):,} planned",
    )
    m[2].metric("round rows", f"{int(info['rounds']):,}")
    m[3].metric("events", f"{int(info['events']):,}")
    spec = tables.spec_rows(info)
    st.dataframe(
        spec,
        hide_index=True,
        column_config=tables.spec_config(),
        height=35 * (len(spec) + 1) + 3,  # every row, no inner scrolling
    )

    # A sequential test (SPRT): its looks, the last one with the decision (docs/sequential.md).
    waves = data.sprt_waves(ROOT, f.run) if f is not None else None
    if waves is not None and not waves.empty:
        last = waves.iloc[-1]
        st.subheader(f"Sequential test: {last.policy_a} − {last.policy_b} ({last.metric})")
        outcome = last.decision if isinstance(last.decision, str) else "no decision yet"
        st.caption(
            f"{outcome} after {int(last.games):,} games; the test accepts H1 when the LLR "
            f"reaches {last.upper_bound:.2f} and H0 when it falls to {last.lower_bound:.2f}."
        )
        st.dataframe(
            waves[["wave", "games", "estimate", "estimate_lo", "estimate_hi", "llr", "decision"]],
            hide_index=True,
        )

    # A league that stops by its ranking: each adjacent pair's verdict (docs/sequential.md).
    pairs = data.ranking_stops(ROOT, f.run)
    if not pairs.empty:
        st.subheader("Ranking test: adjacent pairs")
        st.caption(ranking_headline(pairs))
        st.altair_chart(charts.ranking_pairs(pairs), width="stretch")
        shown = pairs.assign(
            ahead=100 * pairs.estimate,
            ahead_lo=100 * pairs.estimate_lo,
            ahead_hi=100 * pairs.estimate_hi,
        )
        st.dataframe(
            shown[
                [
                    "place",
                    "above",
                    "below",
                    "verdict",
                    "meetings",
                    "ahead",
                    "ahead_lo",
                    "ahead_hi",
                    "llr",
                ]
            ],  # fmt: skip
            hide_index=True,
            column_config={
                "above": "higher ranked",
                "below": "lower ranked",
                "ahead": st.column_config.NumberColumn("ahead %", format="%.1f"),
                "ahead_lo": st.column_config.NumberColumn("95% low", format="%.1f"),
                "ahead_hi": st.column_config.NumberColumn("95% high", format="%.1f"),
                "llr": st.column_config.NumberColumn("LLR", format="%+.2f"),
            },
        )
