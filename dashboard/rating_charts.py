"""Charts of the Ratings page: pure functions from query frames to Altair charts."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboard.charts import WIDTH, AnyChart, interval_tips, policy_color


def ratings_dots(df: pd.DataFrame) -> AnyChart:
    """Each policy's rating as a dot with its 95% interval, best on top, 0 (the anchor) marked.

    Columns: place, policy, rating, lo, hi, games, anchor."""
    order = df.sort_values("place")["policy"].tolist()
    tooltip = [
        alt.Tooltip("place:Q"),
        alt.Tooltip("policy:N"),
        alt.Tooltip("rating:Q", format="+.3f"),
        alt.Tooltip("lo:Q", title="95% low", format="+.3f"),
        alt.Tooltip("hi:Q", title="95% high", format="+.3f"),
        alt.Tooltip("games:Q", format=","),
    ]
    base = alt.Chart(df).encode(y=alt.Y("policy:N", sort=order, title="policy (by rating)"))
    whisker = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("lo:Q", title="rating (log-odds of finishing ahead of the anchor)"),
        x2="hi:Q",
        color=policy_color(df["policy"].tolist(), legend=False),
        tooltip=tooltip,
    )
    dots = base.mark_circle(size=90, opacity=1).encode(
        x="rating:Q", color=policy_color(df["policy"].tolist(), legend=False), tooltip=tooltip
    )
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(strokeDash=[4, 4], color="gray")
    return alt.layer(whisker, dots, zero.encode(x="x:Q")).properties(
        width=WIDTH, height=max(160, 26 * len(order))
    )


def calibration(df: pd.DataFrame) -> AnyChart:
    """Model-implied chance that the higher-rated policy finishes ahead vs the observed share,
    one point per pair with both intervals as crosses; the diagonal is perfect agreement and
    pairs that disagree beyond their intervals are drawn in red.

    Columns: policy, opponent, model_ahead(_lo, _hi), observed_ahead(_lo, _hi), meetings,
    disagrees."""
    df = df.dropna(subset=["observed_ahead"]).assign(
        pair=lambda d: d["policy"] + " ahead of " + d["opponent"],
        verdict=lambda d: d["disagrees"].map({True: "disagrees", False: "agrees"}),
    )
    tooltip = [
        alt.Tooltip("pair:N"),
        alt.Tooltip("model_ahead:Q", title="model", format=".3f"),
        *interval_tips("observed_ahead", "observed", ".3f", "observed"),
        alt.Tooltip("meetings:Q", format=","),
        alt.Tooltip("verdict:N"),
    ]
    color = alt.Color(
        "verdict:N",
        scale=alt.Scale(domain=["agrees", "disagrees"], range=["#4c78a8", "#e45756"]),
        title="model vs observed",
    )
    scale = alt.Scale(domain=[0.4, 1.0], clamp=True, nice=False)
    base = alt.Chart(df).encode(color=color, tooltip=tooltip)
    x = alt.X("model_ahead:Q", title="model: P(policy finishes ahead)", scale=scale)
    y = alt.Y("observed_ahead:Q", title="observed share of meetings ahead", scale=scale)
    points = base.mark_circle(size=60, opacity=0.9).encode(x=x, y=y)
    v_bars = base.mark_rule(opacity=0.5).encode(
        x="model_ahead:Q", y="observed_ahead_lo:Q", y2="observed_ahead_hi:Q"
    )
    h_bars = base.mark_rule(opacity=0.5).encode(
        y="observed_ahead:Q", x="model_ahead_lo:Q", x2="model_ahead_hi:Q"
    )
    line = (
        alt.Chart(pd.DataFrame({"a": [0.4, 1.0]}))
        .mark_line(strokeDash=[4, 4], color="gray")
        .encode(x=alt.X("a:Q", scale=scale), y=alt.Y("a:Q", scale=scale))
    )
    return alt.layer(line, v_bars, h_bars, points).properties(width=WIDTH, height=420)
