"""Ratings: every policy of the run on one log-odds scale (Plackett-Luce), and whether the
model's pairwise chances match what the games showed."""

from __future__ import annotations

import streamlit as st

from dashboard import filters, rating_charts, rating_data

f = filters.page(
    "Ratings",
    "how strong is each policy across field sizes and opponents, and how sure are we? "
    "A Plackett-Luce model reads each game's final ranking as the winner chosen from every "
    "seat, the second from the rest, and so on; rating(A) − rating(B) is the log-odds that A "
    "finishes ahead of B at any table where both sit. ev is 0 when it played. Intervals are "
    "95%, clustered by game.",
)

sizes = rating_data.field_sizes(f.root, f.run)
players = filters.field_size_or_pooled(
    "Games rated",
    "all field sizes",
    sizes,
    f"ratings_scope:{f.run}",
    "All field sizes: one fit over every game of the run. A field size: only its games.",
)

rated = f.keep(rating_data.ratings(f.root, f.run, players))
if rated.empty:
    st.info("No games to rate here.")
    st.stop()
anchor = str(rated["anchor"].iloc[0])
st.altair_chart(rating_charts.ratings_dots(rated), width="stretch")
st.caption(
    f"Dot: rating relative to {anchor} (dashed line); bar: 95% interval (sandwich variance "
    f"clustered by game). A difference of 1 is odds of e ≈ 2.7 to 1 of finishing ahead."
)
steps = rated["above_next"].dropna()
st.caption(
    f"{int(steps.sum())} of {len(steps)} places are separated from the next one (the 95% "
    "interval of the step lies above 0); more games separate more of them."
)
if not rated["converged"].all():
    st.warning("The optimiser did not meet its tolerance on this fit: read it with care.")
number = st.column_config.NumberColumn
st.dataframe(
    rated[["place", "policy", "rating", "lo", "hi", "se", "above_next", "games", "seats"]],
    hide_index=True,
    column_config={
        "rating": number("rating", format="%+.3f"),
        "lo": number("95% low", format="%+.3f"),
        "hi": number("95% high", format="%+.3f"),
        "se": number("std. error", format="%.3f"),
        "above_next": st.column_config.CheckboxColumn(
            "above the next", help="the 95% interval of the step to the next place is above 0"
        ),
        "games": number("games", format="localized"),
        "seats": number("seats", format="localized"),
    },
)

st.subheader("Calibration: the model's pairwise chances against the games")
pairs = f.keep(rating_data.rating_pairs(f.root, f.run, players))
met = pairs.dropna(subset=["observed_ahead"])
if met.empty:
    st.info("No two policies met at a table here.")
    st.stop()
st.altair_chart(rating_charts.calibration(met), width="stretch")
off = met[met["disagrees"]]
expected = 0.05 * len(met)
st.caption(
    "One point per pair: the chance the model gives the higher-rated policy to finish ahead "
    "(x) against the share of their meetings it did finish ahead in (y; ties left out), each "
    "with its 95% interval. On the dashed diagonal the model and the games agree."
)
if off.empty:
    st.success(
        f"All {len(met)} pairs agree with the model within their intervals: the ratings "
        "summarise who finishes ahead of whom."
    )
else:
    st.warning(
        f"{len(off)} of {len(met)} pairs disagree with the model beyond their intervals "
        f"(about {expected:.1f} would by chance alone at 95%): there, a policy does better or "
        "worse against that opponent than its rating says. "
        + "; ".join(
            f"{r.policy} ahead of {r.opponent}: observed {r.observed_ahead:.1%}, "
            f"model {r.model_ahead:.1%}"
            for r in off.itertuples()
        )
    )
