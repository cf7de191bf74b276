"""Charts: pure functions from a query result (a DataFrame) to an Altair chart.

Each function takes the columns a `warehouse.queries` function returns and draws them; none
computes a new number (that is the warehouse's job), so each can be tested on a small
hand-made frame. Every axis has a title with its unit, every interval is the 95% interval the
warehouse computed (clustered by game, or by game pair for paired comparisons), and tooltips
carry the sample size behind each point. Figures are per cell: a page passes the rows of one
line-up (a `lineup` column, when present, shows in the tooltips). Policies get one
colour per name (sorted), so a policy has the same colour in every chart of a page.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import ParamSpec

import altair as alt
import pandas as pd

P = ParamSpec("P")

#: What every function returns (Altair types `.properties()` as a layer or facet chart).
AnyChart = alt.Chart | alt.LayerChart | alt.FacetChart

WIDTH = "container"
HEIGHT = 320


#: Room above every chart's drawing (px): Streamlit's chart toolbar (fullscreen, download) sits
#: over the top right corner of the chart, where a legend on the right starts; on a phone a
#: tap shows it and it covered the legend. Measured with Streamlit 1.67: it overlaps the top
#: 28 px of the chart.
TOOLBAR_ROOM = 34


def _padded(make: Callable[P, AnyChart]) -> Callable[P, AnyChart]:
    """A page's chart (never layered into another) with TOOLBAR_ROOM free above its drawing."""

    @functools.wraps(make)
    def padded(*args: P.args, **kwargs: P.kwargs) -> AnyChart:
        chart = make(*args, **kwargs)
        return chart.properties(padding={"top": TOOLBAR_ROOM, "left": 5, "right": 5, "bottom": 5})

    return padded


def policy_color(
    policies: Sequence[str], field: str = "policy", title: str = "policy", legend: bool = True
) -> alt.Color:
    """One colour per policy name, stable for a given set of names."""
    return alt.Color(
        f"{field}:N",
        title=title,
        scale=alt.Scale(domain=sorted(set(policies)), scheme="tableau10"),
        legend=alt.Undefined if legend else None,
    )


def _players_axis(df: pd.DataFrame) -> alt.X:
    sizes = sorted(int(p) for p in df["players"].unique()) if len(df) else []
    return alt.X(
        "players:Q",
        title="players at the table",
        scale=alt.Scale(domain=[min(sizes), max(sizes)] if sizes else [2, 6], nice=False),
        axis=alt.Axis(values=sizes, format="d", tickMinStep=1),
    )


def interval_tips(
    column: str, title: str, fmt: str, prefix: str = "", bounds: tuple[str, str] | None = None
) -> list[alt.Tooltip]:
    """A figure's tooltip and its 95% interval's (`bounds`, else `column_lo`, `column_hi`), in
    one format; `prefix` names whose interval it is ("observed 95% low")."""
    lo, hi = bounds or (f"{column}_lo", f"{column}_hi")
    low, high = (f"{prefix} 95% {end}".lstrip() for end in ("low", "high"))
    return [
        alt.Tooltip(f"{column}:Q", title=title, format=fmt),
        alt.Tooltip(f"{lo}:Q", title=low, format=fmt),
        alt.Tooltip(f"{hi}:Q", title=high, format=fmt),
    ]


def _lineup_tip(df: pd.DataFrame) -> list[alt.Tooltip]:
    """The line-up (the cell's label) in a tooltip, when the frame names it."""
    return [alt.Tooltip("lineup:N", title="line-up")] if "lineup" in df.columns else []


def _by_field_size(
    df: pd.DataFrame,
    value: str,
    lo: str,
    hi: str,
    title: str,
    fmt: str,
    count: str,
    count_title: str,
    zero: bool = True,
) -> AnyChart:
    """A line per policy over field size, with its 95% band and points that carry n."""
    policies = df["policy"].tolist()
    color = policy_color(policies)
    x = _players_axis(df)
    tooltip = [
        alt.Tooltip("policy:N"),
        *_lineup_tip(df),
        alt.Tooltip("players:Q", title="players"),
        *interval_tips(value, title, fmt, bounds=(lo, hi)),
        alt.Tooltip(f"{count}:Q", title=count_title, format=","),
    ]
    base = alt.Chart(df).encode(x=x)
    band = base.mark_area(opacity=0.18).encode(
        y=alt.Y(f"{lo}:Q", scale=alt.Scale(zero=zero)),
        y2=alt.Y2(f"{hi}:Q"),
        color=policy_color(policies, legend=False),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y(f"{value}:Q", title=title, axis=alt.Axis(format=fmt)),
        color=color,
        tooltip=tooltip,
    )
    # The band draws no legend of its own; independent legends keep the line's.
    chart: alt.LayerChart = alt.layer(band, line).resolve_legend(color="independent")
    return chart.properties(width=WIDTH, height=HEIGHT)


@_padded
def win_rate_by_field_size(df: pd.DataFrame) -> AnyChart:
    """Win rate per policy vs players, 95% bands, and the 1/n rate of an average seat.

    Columns: players, policy, win_rate, win_rate_lo, win_rate_hi, player_games, expected_rate.
    """
    chart = _by_field_size(
        df,
        "win_rate",
        "win_rate_lo",
        "win_rate_hi",
        "win rate (% of games)",
        ".1%",
        "player_games",
        "games played (seats)",
    )
    fair = (
        alt.Chart(df)
        .mark_line(strokeDash=[4, 4], color="gray")
        .encode(x=_players_axis(df), y=alt.Y("expected_rate:Q"))
    )
    return alt.layer(chart, fair).properties(width=WIDTH, height=HEIGHT)


@_padded
def win_index_by_field_size(df: pd.DataFrame) -> AnyChart:
    """Adjusted win index (wins / expected wins; 1 = an average seat) vs players, 95% bands.

    Columns: players, policy, win_index, win_index_lo, win_index_hi, player_games.
    """
    chart = _by_field_size(
        df,
        "win_index",
        "win_index_lo",
        "win_index_hi",
        "win index (wins ÷ expected wins)",
        ".2f",
        "player_games",
        "games played (seats)",
        zero=False,
    )
    one = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray")
    return alt.layer(chart, one.encode(y="y:Q")).properties(width=WIDTH, height=HEIGHT)


@_padded
def points_by_field_size(df: pd.DataFrame) -> AnyChart:
    """Mean points per round per policy vs players, with 95% bands.

    Columns: players, policy, points_per_round, points_per_round_lo, points_per_round_hi,
    rounds.
    """
    return _by_field_size(
        df,
        "points_per_round",
        "points_per_round_lo",
        "points_per_round_hi",
        "points per round (mean round score)",
        ".1f",
        "rounds",
        "rounds played",
        zero=False,
    )


@_padded
def counting_gain(df: pd.DataFrame, measure: str) -> AnyChart:
    """The gain of each counting policy over its twin per field size, with 95% intervals.

    `measure` is "ppr" (points per round, a single-round measure) or "win" (win rate, a
    whole-game measure). Columns: players, counting, base, method, <measure>_gain,
    <measure>_gain_lo, <measure>_gain_hi, n_counting, n_base (pairs when paired); a
    `comparison` label (naming the cells compared) when given, else "counting vs base".
    """
    if measure not in ("ppr", "win"):
        raise ValueError(f"measure must be 'ppr' or 'win', got {measure!r}")
    value, lo, hi = f"{measure}_gain", f"{measure}_gain_lo", f"{measure}_gain_hi"
    title, fmt = (
        ("points per round gain", "+.2f") if measure == "ppr" else ("win rate gain (pp)", "+.1%")
    )
    data = (
        df
        if "comparison" in df.columns
        else df.assign(comparison=df["counting"] + " vs " + df["base"])
    )
    # Labels name two line-ups: the legend goes below the chart, at full length.
    color = policy_color(data["comparison"].tolist(), "comparison", "comparison").legend(
        orient="bottom", direction="vertical", labelLimit=0
    )
    x = alt.X("players:O", title="players at the table", axis=alt.Axis(labelAngle=0))
    offset = alt.XOffset("comparison:N")
    tooltip = [
        alt.Tooltip("comparison:N"),
        alt.Tooltip("players:O", title="players"),
        alt.Tooltip("method:N", title="method"),
        *interval_tips(value, "gain", fmt, bounds=(lo, hi)),
        alt.Tooltip("n_counting:Q", title="n (counting)", format=","),
        alt.Tooltip("n_base:Q", title="n (twin)", format=","),
    ]
    base = alt.Chart(data).encode(x=x, xOffset=offset, color=color)
    bars = base.mark_rule(strokeWidth=2).encode(
        y=alt.Y(f"{lo}:Q", title=title, axis=alt.Axis(format=fmt)), y2=alt.Y2(f"{hi}:Q")
    )
    points = base.mark_point(filled=True, size=80).encode(y=alt.Y(f"{value}:Q"), tooltip=tooltip)
    zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule(color="gray").encode(y="y:Q")
    legend = 40 + 22 * data["comparison"].nunique()  # the room the legend below takes
    return alt.layer(bars, points, zero).properties(width=WIDTH, height=HEIGHT + legend)


@_padded
def league_win_index(df: pd.DataFrame, label: str = "policy") -> AnyChart:
    """The league's adjusted win index per policy (1 = an average seat; a named aggregate over
    every cell the policy played) as a dot plot: a dot per row labelled by `label` (e.g. a
    column naming the policy and the field sizes it was seen at), its 95% interval as a line
    through it, and the dashed line at 1. The x axis spans the intervals and 1, not 0: indexes
    of 0.99-1.01 differ where the intervals live, and bars from 0 would all look alike.

    Columns: place, policy, win_index, win_index_lo, win_index_hi, player_games, `label`.
    """
    order = df.sort_values("place")[label].tolist()
    y = alt.Y(f"{label}:N", sort=order, title="policy (by place)", axis=alt.Axis(labelLimit=320))
    tooltip = [
        alt.Tooltip("place:Q"),
        alt.Tooltip("policy:N"),
        *([alt.Tooltip(f"{label}:N", title="seen at")] if label != "policy" else []),
        *interval_tips("win_index", "win index", ".3f"),
        alt.Tooltip("player_games:Q", title="games played (seats)", format=","),
    ]
    title = "win index (wins ÷ expected wins; 1 = average seat)"
    scale = alt.Scale(domain=_around_one(df), nice=False, zero=False)
    base = alt.Chart(df).encode(y=y)
    color = policy_color(df["policy"].tolist(), legend=False)
    axis = alt.Axis(format=".3f", tickCount=6)
    interval, dots = _dots_with_intervals(base, "win_index", title, scale, color, tooltip, axis)
    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray")
    height = _bar_height(len(order))
    return alt.layer(one.encode(x="x:Q"), interval, dots).properties(width=WIDTH, height=height)


@_padded
def ranking_pairs(df: pd.DataFrame) -> AnyChart:
    """A ranking test's adjacent pairs (the ranking_stops mart): for each pair, in ranking
    order, how often the higher-ranked finished ahead (%) as a dot with its 95% interval, on a
    band of 50% ± the test's margin (inside it the pair counts as equivalent, outside as
    separated) around the dashed line at 50%; the colour is the verdict so far.

    Columns: place, above, below, meetings, estimate, estimate_lo, estimate_hi, llr, verdict,
    margin.
    """
    pct = df.assign(
        pair=df["above"] + " over " + df["below"],
        ahead=100 * df["estimate"],
        ahead_lo=100 * df["estimate_lo"],
        ahead_hi=100 * df["estimate_hi"],
    )
    order = pct.sort_values("place")["pair"].tolist()
    margin = 100 * float(df["margin"].iloc[0])
    pct = pct.assign(band_lo=50 - margin, band_hi=50 + margin)
    edges = [50 - margin, 50 + margin, *pct["ahead_lo"].dropna(), *pct["ahead_hi"].dropna()]
    span = max(edges) - min(edges)
    scale = alt.Scale(domain=[min(edges) - span / 10, max(edges) + span / 10], nice=False)
    title = "finished ahead of the next (%; 95% interval)"
    # A short y title: a rotated title longer than the plot makes Vega shrink the plot to fit it.
    y = alt.Y("pair:N", sort=order, title="pair (by place)", axis=alt.Axis(labelLimit=320))
    color = alt.Color(
        "verdict:N",
        title="verdict",
        scale=alt.Scale(
            domain=["separated", "equivalent", "open"], range=["#4c78a8", "#54a24b", "#9d9d9d"]
        ),
    )
    tooltip = [
        alt.Tooltip("pair:N"),
        alt.Tooltip("verdict:N"),
        *interval_tips("ahead", "ahead (%)", ".1f"),
        alt.Tooltip("meetings:Q", title="meetings", format=","),
        alt.Tooltip("llr:Q", title="LLR", format="+.2f"),
    ]
    base = alt.Chart(pct).encode(y=y)
    band = base.mark_rect(opacity=0.12, color="gray").encode(
        x=alt.X("band_lo:Q", scale=scale, title=title), x2="band_hi:Q"
    )
    even = alt.Chart(pd.DataFrame({"x": [50.0]})).mark_rule(strokeDash=[4, 4], color="gray")
    interval, dots = _dots_with_intervals(base, "ahead", title, scale, color, tooltip)
    layers = alt.layer(band, even.encode(x="x:Q"), interval, dots)
    return layers.properties(width=WIDTH, height=_bar_height(len(order)) + 30)


def _dots_with_intervals(
    base: alt.Chart,
    column: str,
    title: str,
    scale: alt.Scale,
    color: alt.Color,
    tooltip: list[alt.Tooltip],
    axis: alt.Axis | None = None,
) -> tuple[alt.Chart, alt.Chart]:
    """A dot plot's two layers over `base` (which encodes y): each row's 95% interval
    (`column_lo` to `column_hi`) as a line, and its `column` as a dot, on one x scale."""
    x = alt.X(f"{column}:Q", title=title, scale=scale, axis=alt.Undefined if axis is None else axis)
    interval = base.mark_rule(strokeWidth=2.5).encode(
        x=alt.X(f"{column}_lo:Q", title=title, scale=scale),
        x2=f"{column}_hi:Q",
        color=color,
        tooltip=tooltip,
    )
    dots = base.mark_point(filled=True, size=110, opacity=1).encode(
        x=x, color=color, tooltip=tooltip
    )
    return interval, dots


def _around_one(
    df: pd.DataFrame, lo: str = "win_index_lo", hi: str = "win_index_hi"
) -> list[float]:
    """An x domain holding every interval and 1, padded by a tenth of its span each side."""
    values = [1.0, *df[lo].dropna().astype(float), *df[hi].dropna().astype(float)]
    low, high = min(values), max(values)
    pad = max((high - low) * 0.1, 0.005)
    return [round(low - pad, 4), round(high + pad, 4)]


@_padded
def head_to_head(df: pd.DataFrame) -> AnyChart:
    """Heatmap: how often the row policy finished ahead of the column policy (ties left out).

    Columns: policy, opponent, ahead_share, ahead_share_lo, ahead_share_hi, meetings, ahead,
    behind, tied.
    """
    names = sorted(set(df["policy"]) | set(df["opponent"]))
    tooltip = [
        alt.Tooltip("policy:N"),
        alt.Tooltip("opponent:N"),
        *interval_tips("ahead_share", "finished ahead", ".1%"),
        *_lineup_tip(df),
        alt.Tooltip("meetings:Q", title="meetings (seat pairs)", format=","),
        alt.Tooltip("ahead:Q", format=","),
        alt.Tooltip("behind:Q", format=","),
        alt.Tooltip("tied:Q", format=","),
    ]
    base = alt.Chart(df).encode(
        x=alt.X("opponent:N", sort=names, title="opponent", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("policy:N", sort=names, title="policy"),
    )
    cells = base.mark_rect().encode(
        color=alt.Color(
            "ahead_share:Q",
            title="ahead",
            scale=alt.Scale(scheme="redblue", domain=[0, 1], domainMid=0.5),
            legend=alt.Legend(format="%"),
        ),
        tooltip=tooltip,
    )
    text = base.mark_text(fontSize=13).encode(
        text=alt.Text("ahead_share:Q", format=".1%"), tooltip=tooltip
    )
    size = 120 + 90 * len(names)
    return alt.layer(cells, text).properties(width=size + 60, height=size)


@_padded
def round_scores(
    df: pd.DataFrame, cumulative: bool = False, busts: bool = True, tail: float = 0.995
) -> AnyChart:
    """Distribution of round scores per policy: share of rounds at each score (or cumulative).

    `busts=False` leaves out the rounds scoring 0 (mostly busts; the rates chart has them),
    whose spike otherwise flattens the rest; shares stay shares of all rounds. The x axis ends
    at the score where every policy has reached `tail` of its rounds (beyond is a long thin
    tail; zoom to see it).
    Columns: policy, score, rounds, share, cumulative_share.
    """
    value = "cumulative_share" if cumulative else "share"
    title = "rounds scoring ≤ this (cumulative %)" if cumulative else "share of rounds (%)"
    tooltip = [
        alt.Tooltip("policy:N"),
        alt.Tooltip("score:Q", title="round score (points)"),
        alt.Tooltip("rounds:Q", title="rounds", format=","),
        alt.Tooltip("share:Q", title="share of all rounds", format=".2%"),
        alt.Tooltip("cumulative_share:Q", title="cumulative", format=".1%"),
    ]
    # Rows whose rounds start below `tail` (cumulative before them): up to each policy's first
    # score that reaches it.
    reach = df[df["cumulative_share"] - df["share"] < tail]["score"]
    upper = int(max(reach.max() if len(reach) else 0, 10))
    data = df if busts else df[df["score"] != 0]
    line = alt.Chart(data).mark_line(
        interpolate="step-after" if cumulative else "linear", clip=True, point=not cumulative
    )
    chart: alt.Chart = line.encode(
        x=alt.X(
            "score:Q",
            title="round score (points; a bust scores 0)",
            scale=alt.Scale(domain=[0, upper], nice=False),
        ),
        y=alt.Y(f"{value}:Q", title=title, axis=alt.Axis(format="%")),
        color=policy_color(df["policy"].tolist()),
        tooltip=tooltip,
    ).interactive(bind_y=False)
    return chart.properties(width=WIDTH, height=HEIGHT)


@_padded
def points_vs_wins(df: pd.DataFrame) -> AnyChart:
    """Win index against points per round, one dot per policy and field size.

    If more points per round meant more wins, the dots would climb from left to right; where
    they do not, a policy scores more and still wins less. Columns: players, policy,
    points_per_round, win_index, player_games, rounds.
    """
    tooltip = [
        alt.Tooltip("policy:N"),
        alt.Tooltip("players:Q", title="players"),
        alt.Tooltip("points_per_round:Q", title="points per round", format=".2f"),
        alt.Tooltip("win_index:Q", title="win index", format=".3f"),
        alt.Tooltip("player_games:Q", title="games played (seats)", format=","),
        alt.Tooltip("rounds:Q", title="rounds played", format=","),
    ]
    base = alt.Chart(df).encode(
        x=alt.X(
            "points_per_round:Q",
            title="points per round (mean round score)",
            scale=alt.Scale(zero=False),
        ),
        y=alt.Y(
            "win_index:Q",
            title="win index (wins ÷ expected wins)",
            scale=alt.Scale(zero=False),
        ),
    )
    dots = base.mark_point(filled=True, size=90).encode(
        color=policy_color(df["policy"].tolist()),
        shape=alt.Shape("players:N", title="players"),
        tooltip=tooltip,
    )
    labels = base.mark_text(dx=9, align="left", fontSize=11, color="gray").encode(
        text=alt.Text("players:Q", format="d")
    )
    one = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray")
    return alt.layer(dots, labels, one.encode(y="y:Q")).properties(width=WIDTH, height=HEIGHT)


@_padded
def round_rate(df: pd.DataFrame, rate: str, title: str) -> AnyChart:
    """One per-round rate (e.g. bust_rate) per policy, with its 95% interval (by game).

    Columns: policy, rounds, <rate>, <rate>_lo, <rate>_hi and the count named by the rate
    (busts for bust_rate, flip7s for flip7_rate, ...).
    """
    count = {"bust_rate": "busts", "flip7_rate": "flip7s", "stay_rate": "stays"}.get(
        rate, "freezes"
    )
    tooltip = [
        alt.Tooltip("policy:N"),
        *interval_tips(rate, title, ".2%"),
        alt.Tooltip(f"{count}:Q", title=count, format=","),
        alt.Tooltip("rounds:Q", title="rounds played", format=","),
    ]
    names = sorted(df["policy"].unique())
    base = alt.Chart(df).encode(y=alt.Y("policy:N", sort=names, title="policy"))
    bars = base.mark_bar(opacity=0.75).encode(
        x=alt.X(f"{rate}:Q", title=f"{title} (% of rounds)", axis=alt.Axis(format="%")),
        color=policy_color(df["policy"].tolist(), legend=False),
        tooltip=tooltip,
    )
    whisker = base.mark_rule(color="black", strokeWidth=1.5).encode(
        x=f"{rate}_lo:Q", x2=f"{rate}_hi:Q", tooltip=tooltip
    )
    return alt.layer(bars, whisker).properties(width=WIDTH, height=_bar_height(len(names)))


@_padded
def game_totals(df: pd.DataFrame) -> AnyChart:
    """Each seat's game total after every round of one game, with the current round marked.

    Columns: round, seat_label, total; an optional `current` boolean marks the round shown.
    """
    color = policy_color(df["seat_label"].tolist(), "seat_label", "seat")
    base = alt.Chart(df).encode(
        x=alt.X("round:Q", title="round", axis=alt.Axis(format="d", tickMinStep=1)),
        y=alt.Y("total:Q", title="game total (points)"),
        color=color,
        tooltip=[
            alt.Tooltip("seat_label:N", title="seat"),
            alt.Tooltip("round:Q"),
            alt.Tooltip("total:Q", title="total (points)"),
        ],
    )
    chart = base.mark_line(point=True)
    if "current" in df.columns:
        marks = base.transform_filter(alt.datum.current).mark_point(size=160, filled=True)
        return alt.layer(chart, marks).properties(width=WIDTH, height=260)
    return alt.layer(chart).properties(width=WIDTH, height=260)


def _bar_height(bars: int) -> int:
    """Room for the axis title and labels plus about 40 px per bar."""
    return 70 + 40 * max(bars, 1)


@_padded
def runs_games(df: pd.DataFrame) -> AnyChart:
    """Committed vs planned games per run: how big each run is and how far it got.

    Columns: run, games, planned_games, status.
    """
    data = df.assign(planned=df["planned_games"].fillna(df["games"]))
    names = data["run"].tolist()
    base = alt.Chart(data).encode(y=alt.Y("run:N", sort=names, title="run"))
    planned = base.mark_bar(color="#dddddd").encode(
        x=alt.X("planned:Q", title="games (committed of planned)")
    )
    done = base.mark_bar().encode(
        x="games:Q",
        color=alt.Color(
            "status:N",
            title="status",
            scale=alt.Scale(
                domain=["complete", "running", "interrupted", "failed", "no manifest"],
                range=["#2e7d32", "#ef6c00", "#f9a825", "#c62828", "#757575"],
            ),
        ),
        tooltip=[
            alt.Tooltip("run:N"),
            alt.Tooltip("status:N"),
            alt.Tooltip("games:Q", title="games committed", format=","),
            alt.Tooltip("planned:Q", title="games planned", format=","),
        ],
    )
    return alt.layer(planned, done).properties(width=WIDTH, height=_bar_height(len(names)))


#: What tells two cells of the variants page apart besides the variant (variant_comparison's
#: key without field size, label and policy, which the page fixes).
_VARIANT_CELL = ("ruleset", "seating")


def _variant_cells(df: pd.DataFrame) -> tuple[pd.DataFrame, str, str]:
    """The frame with the field that gives each cell its own bar or line, its title: the
    variant, or "variant · ruleset" (· seating) when the rows hold several rulesets (seatings),
    so that two cells never share a bar slot or a line."""
    parts = ["variant"] + [c for c in _VARIANT_CELL if c in df.columns and df[c].nunique() > 1]
    if len(parts) == 1:
        return df, "variant", "variant"
    title = " · ".join(parts)
    return df.assign(cell=df[parts].astype(str).agg(" · ".join, axis=1)), "cell", title


def _variant_cell_tips(df: pd.DataFrame) -> list[alt.Tooltip]:
    return [alt.Tooltip("variant:N")] + [
        alt.Tooltip(f"{c}:N", title=c) for c in _VARIANT_CELL if c in df.columns
    ]


@_padded
def by_variant(df: pd.DataFrame, value: str, title: str, fmt: str, count: str) -> AnyChart:
    """One measure per policy, a bar per variant side by side, with 95% intervals; a bar per
    variant and ruleset (and seating) when the rows hold several: never two cells in one slot.

    Columns: policy, variant, <value>, its interval (<value>_lo/_hi, or ppr_lo/ppr_hi for
    points_per_round), the sample size named by `count`, and ruleset, seating when present.
    """
    lo, hi = ("ppr_lo", "ppr_hi") if value == "points_per_round" else (f"{value}_lo", f"{value}_hi")
    df, cell, cell_title = _variant_cells(df)
    tooltip = [
        alt.Tooltip("policy:N"),
        *_variant_cell_tips(df),
        *_lineup_tip(df),
        *interval_tips(value, title, fmt, bounds=(lo, hi)),
        alt.Tooltip(f"{count}:Q", title=count.replace("_", " "), format=","),
    ]
    names = sorted(df["policy"].unique())
    cells = sorted(df[cell].unique())
    base = alt.Chart(df).encode(
        y=alt.Y("policy:N", sort=names, title="policy"),
        yOffset=alt.YOffset(f"{cell}:N", sort=cells),
    )
    axis = alt.Axis(format="%") if fmt.endswith("%") else alt.Axis()
    bars = base.mark_bar(opacity=0.8).encode(
        x=alt.X(f"{value}:Q", title=title, axis=axis),
        color=alt.Color(f"{cell}:N", title=cell_title, scale=alt.Scale(domain=cells)),
        tooltip=tooltip,
    )
    whisker = base.mark_rule(color="black", strokeWidth=1.2).encode(
        x=f"{lo}:Q", x2=f"{hi}:Q", tooltip=tooltip
    )
    height = max(160, 22 * len(names) * max(1, len(cells)))
    return alt.layer(bars, whisker).properties(width=WIDTH, height=height)


@_padded
def variant_round_scores(df: pd.DataFrame) -> AnyChart:
    """The share of rounds at each score, a line per variant (busts are the rounds at 0); a
    line per variant and ruleset (and seating) when the rows hold several.

    Columns: variant, score, rounds, share, and ruleset, seating when present.
    """
    df, cell, cell_title = _variant_cells(df)
    tooltip = [
        *_variant_cell_tips(df),
        alt.Tooltip("score:Q", title="round score (points)"),
        alt.Tooltip("share:Q", title="share of rounds", format=".2%"),
        alt.Tooltip("rounds:Q", title="rounds", format=","),
    ]
    return (
        alt.Chart(df)
        .mark_line(point=True, opacity=0.85)
        .encode(
            x=alt.X("score:Q", title="round score (points)"),
            y=alt.Y("share:Q", title="share of rounds", axis=alt.Axis(format="%")),
            color=alt.Color(f"{cell}:N", title=cell_title),
            tooltip=tooltip,
        )
        .properties(width=WIDTH, height=HEIGHT)
    )


@_padded
def by_ruleset(
    df: pd.DataFrame, value: str, title: str, fmt: str, count: str, by: str | None = None
) -> AnyChart:
    """One measure under each ruleset, with 95% intervals: a bar per ruleset, or per `by`
    (e.g. policy) a bar per ruleset side by side.

    Columns: ruleset, <value>, its interval <value>_lo/_hi, the sample size named by `count`,
    and `by` when given.
    """
    lo, hi = f"{value}_lo", f"{value}_hi"
    rulesets = list(dict.fromkeys(str(r) for r in df["ruleset"]))
    tooltip = [
        *([alt.Tooltip(f"{by}:N")] if by else []),
        alt.Tooltip("ruleset:N"),
        *_lineup_tip(df),
        *interval_tips(value, title, fmt, bounds=(lo, hi)),
        alt.Tooltip(f"{count}:Q", title=count.replace("_", " "), format=","),
    ]
    if by:
        names = sorted(str(x) for x in df[by].unique())
        base = alt.Chart(df).encode(
            y=alt.Y(f"{by}:N", sort=names, title=by),
            yOffset=alt.YOffset("ruleset:N", sort=rulesets),
        )
        height = max(160, 22 * len(names) * max(1, len(rulesets)))
    else:
        base = alt.Chart(df).encode(y=alt.Y("ruleset:N", sort=rulesets, title="ruleset"))
        height = max(120, 34 * len(rulesets))
    axis = alt.Axis(format="%") if fmt.endswith("%") else alt.Axis()
    bars = base.mark_bar(opacity=0.8).encode(
        x=alt.X(f"{value}:Q", title=title, axis=axis),
        color=alt.Color("ruleset:N", title="ruleset", scale=alt.Scale(domain=rulesets)),
        tooltip=tooltip,
    )
    whisker = base.mark_rule(color="black", strokeWidth=1.2).encode(
        x=f"{lo}:Q", x2=f"{hi}:Q", tooltip=tooltip
    )
    return alt.layer(bars, whisker).properties(width=WIDTH, height=height)
