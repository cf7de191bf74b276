"""charts.py: each chart draws the columns it is given, with titled axes, units and sample sizes."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import pytest

from dashboard import charts


def _layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    out = [spec]
    for layer in spec.get("layer", []):
        out += _layers(layer)
    return out


def _titles(chart: alt.TopLevelMixin) -> dict[str, list[str]]:
    """Explicit axis titles per channel over every layer of a chart."""
    titles: dict[str, list[str]] = {}
    for layer in _layers(chart.to_dict()):
        for channel, enc in layer.get("encoding", {}).items():
            if isinstance(enc, dict) and enc.get("title"):
                titles.setdefault(channel, []).append(enc["title"])
    return titles


def _tooltip_fields(chart: alt.TopLevelMixin) -> set[str]:
    fields: set[str] = set()
    for layer in _layers(chart.to_dict()):
        tips = layer.get("encoding", {}).get("tooltip", [])
        fields |= {t["field"] for t in (tips if isinstance(tips, list) else [tips])}
    return fields


def _marks(spec: dict[str, Any]) -> list[str]:
    """The mark type of every layer, in drawing order."""
    return [
        (layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"])
        for layer in _layers(spec)
        if "mark" in layer
    ]


def _x_domain(spec: dict[str, Any]) -> tuple[float, ...]:
    """The one explicit x domain the layers share."""
    (domain,) = {
        tuple(enc["scale"]["domain"])
        for layer in _layers(spec)
        for ch, enc in layer.get("encoding", {}).items()
        if ch == "x" and isinstance(enc, dict) and "domain" in enc.get("scale", {})
    }
    return domain


def _rows(chart: alt.TopLevelMixin) -> int:
    spec = chart.to_dict()
    return sum(len(v) for v in spec.get("datasets", {}).values())


def win_rates() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "players": [2, 2, 4, 4],
            "policy": ["ev", "bust:0.25", "ev", "bust:0.25"],
            "player_games": [100, 100, 200, 200],
            "wins": [60, 40, 70, 30],
            "win_rate": [0.6, 0.4, 0.35, 0.15],
            "win_rate_lo": [0.5, 0.3, 0.29, 0.11],
            "win_rate_hi": [0.7, 0.5, 0.42, 0.21],
            "expected_rate": [0.5, 0.5, 0.25, 0.25],
            "win_index": [1.2, 0.8, 1.4, 0.6],
            "win_index_lo": [1.0, 0.6, 1.16, 0.44],
            "win_index_hi": [1.4, 1.0, 1.68, 0.84],
        }
    )


def test_win_rate_chart_has_titles_percent_axis_and_sample_sizes():
    """Win rate vs players: both axes titled, y in percent, n in the tooltip, all rows drawn."""
    chart = charts.win_rate_by_field_size(win_rates())
    titles = _titles(chart)
    assert titles["x"] == ["players at the table"] * len(titles["x"])
    assert "win rate (% of games)" in titles["y"]
    assert "player_games" in _tooltip_fields(chart)
    spec = chart.to_dict()
    axes = [
        layer["encoding"]["y"].get("axis", {}) for layer in _layers(spec) if "encoding" in layer
    ]
    assert {"format": ".1%"} in axes
    assert _rows(chart) == 4


def test_players_axis_ticks_are_the_field_sizes():
    """The x axis shows exactly the field sizes played (no 2.5 players)."""
    chart = charts.win_index_by_field_size(win_rates())
    xs = [
        layer["encoding"]["x"]
        for layer in _layers(chart.to_dict())
        if "x" in layer.get("encoding", {})
    ]
    assert xs and all(x["axis"]["values"] == [2, 4] for x in xs)


def test_counting_gain_per_measure():
    """The gain chart draws the measure asked for, with its interval, and refuses others."""
    df = pd.DataFrame(
        {
            "players": [3, 3],
            "counting": ["evc", "bustc:0.25"],
            "base": ["ev", "bust:0.25"],
            "method": ["paired", "unpaired"],
            "n_counting": [500, 400],
            "n_base": [500, 400],
            "ppr_gain": [0.3, 0.1],
            "ppr_gain_lo": [0.1, -0.2],
            "ppr_gain_hi": [0.5, 0.4],
            "win_gain": [0.02, 0.0],
            "win_gain_lo": [0.0, -0.03],
            "win_gain_hi": [0.04, 0.03],
        }
    )
    ppr = charts.counting_gain(df, "ppr").to_dict()
    fields = {
        layer["encoding"]["y"]["field"]
        for layer in _layers(ppr)
        if "y" in layer.get("encoding", {})
    }
    assert {"ppr_gain", "ppr_gain_lo"} <= fields and "win_gain" not in fields
    assert "win rate gain (pp)" in _titles(charts.counting_gain(df, "win"))["y"]
    with pytest.raises(ValueError, match="'ppr' or 'win'"):
        charts.counting_gain(df, "wins")


def test_head_to_head_heatmap_centres_colour_on_even():
    """The heatmap colours 50% as neutral and labels every cell with its share."""
    df = pd.DataFrame(
        {
            "policy": ["ev", "bust:0.25"],
            "opponent": ["bust:0.25", "ev"],
            "meetings": [10, 10],
            "ahead": [7, 3],
            "behind": [3, 7],
            "tied": [0, 0],
            "ahead_share": [0.7, 0.3],
            "ahead_share_lo": [0.4, 0.1],
            "ahead_share_hi": [0.9, 0.6],
        }
    )
    spec = charts.head_to_head(df).to_dict()
    colors = [
        layer["encoding"]["color"]
        for layer in _layers(spec)
        if "color" in layer.get("encoding", {})
    ]
    assert colors[0]["scale"]["domainMid"] == 0.5
    texts = [layer for layer in _layers(spec) if layer.get("mark", {}).get("type") == "text"]
    assert texts and texts[0]["encoding"]["text"]["field"] == "ahead_share"


def test_round_scores_cumulative_switches_the_measure():
    """The distribution chart plots share or cumulative share as asked."""
    df = pd.DataFrame(
        {
            "policy": ["ev"] * 3,
            "score": [0, 10, 20],
            "rounds": [5, 3, 2],
            "share": [0.5, 0.3, 0.2],
            "cumulative_share": [0.5, 0.8, 1.0],
        }
    )
    assert charts.round_scores(df).to_dict()["encoding"]["y"]["field"] == "share"
    cumulative = charts.round_scores(df, cumulative=True).to_dict()
    assert cumulative["encoding"]["y"]["field"] == "cumulative_share"


def test_round_scores_can_leave_out_zero_rounds_and_cut_the_tail():
    """busts=False drops the rounds at 0; the x axis ends where `tail` of the rounds are."""
    df = pd.DataFrame(
        {
            "policy": ["ev"] * 4,
            "score": [0, 10, 20, 90],
            "rounds": [500, 300, 199, 1],
            "share": [0.5, 0.3, 0.199, 0.001],
            "cumulative_share": [0.5, 0.8, 0.999, 1.0],
        }
    )
    without = charts.round_scores(df, busts=False)
    assert _rows(without) == 3
    assert _rows(charts.round_scores(df)) == 4
    assert without.to_dict()["encoding"]["x"]["scale"]["domain"] == [0, 20]


def _variant_rows() -> pd.DataFrame:
    """ev in three cells of the variants page: classic under two rulesets, Vengeance under one."""
    return pd.DataFrame(
        {
            "policy": ["ev"] * 3,
            "variant": ["classic", "classic", "vengeance"],
            "ruleset": ["3.1", "3.1(target=150)", "3.1"],
            "seating": ["ev,bust:0.25"] * 3,
            "win_index": [1.1, 1.3, 0.9],
            "win_index_lo": [1.0, 1.1, 0.8],
            "win_index_hi": [1.2, 1.5, 1.0],
            "player_games": [100, 100, 100],
        }
    )


def _data(chart: alt.TopLevelMixin) -> pd.DataFrame:
    (rows,) = chart.to_dict()["datasets"].values()
    return pd.DataFrame(rows)


def test_by_variant_never_puts_two_cells_in_one_bar_slot():
    """Rows of two rulesets: each (policy, variant, ruleset) gets its own bar slot and colour,
    named "variant · ruleset"; rows of one ruleset keep the variant alone."""
    chart = charts.by_variant(_variant_rows(), "win_index", "win index", ".2f", "player_games")
    bars = _layers(chart.to_dict())[1]
    field = bars["encoding"]["yOffset"]["field"]
    assert bars["encoding"]["color"]["field"] == field
    slots = _data(chart)[["policy", field]]
    assert not slots.duplicated().any() and len(slots) == 3
    assert bars["encoding"]["color"]["title"] == "variant · ruleset"
    assert "ruleset" in _tooltip_fields(chart)
    one = _variant_rows().iloc[[0, 2]]
    single = _layers(charts.by_variant(one, "win_index", "w", ".2f", "player_games").to_dict())
    assert single[1]["encoding"]["yOffset"]["field"] == "variant"


def test_variant_round_scores_draw_a_line_per_cell():
    """Round-score shares of two rulesets of one variant are two lines, never one."""
    df = pd.DataFrame(
        {
            "variant": ["classic"] * 4 + ["vengeance"] * 2,
            "ruleset": ["3.1", "3.1", "3.1(target=150)", "3.1(target=150)", "3.1", "3.1"],
            "score": [0, 10, 0, 10, 0, 10],
            "rounds": [5, 5, 4, 6, 3, 7],
            "share": [0.5, 0.5, 0.4, 0.6, 0.3, 0.7],
        }
    )
    chart = charts.variant_round_scores(df)
    field = chart.to_dict()["encoding"]["color"]["field"]
    lines = _data(chart).groupby(field)["score"].apply(list)
    assert len(lines) == 3 and all(scores == [0, 10] for scores in lines)


def test_points_vs_wins_puts_points_across_and_win_index_up():
    """One dot per policy and field size: points per round on x, win index on y."""
    df = win_rates().assign(points_per_round=[21.0, 20.0, 21.5, 20.5], rounds=100)
    spec = charts.points_vs_wins(df).to_dict()
    dots = _layers(spec)[1]
    assert dots["encoding"]["x"]["field"] == "points_per_round"
    assert dots["encoding"]["y"]["field"] == "win_index"
    assert _rows(charts.points_vs_wins(df)) == 4 + 1  # the dots and the line at 1


def test_every_chart_titles_both_axes():
    """Every chart function gives its x and y axes explicit titles (with units)."""
    wr = win_rates()
    league = pd.DataFrame(
        {
            "place": [1, 2],
            "policy": ["ev", "bust:0.25"],
            "win_index": [1.2, 0.8],
            "win_index_lo": [1.1, 0.7],
            "win_index_hi": [1.3, 0.9],
            "player_games": [100, 100],
        }
    )
    rates = pd.DataFrame(
        {
            "policy": ["ev"],
            "rounds": [10],
            "busts": [2],
            "bust_rate": [0.2],
            "bust_rate_lo": [0.05],
            "bust_rate_hi": [0.5],
        }
    )
    totals = pd.DataFrame({"round": [0, 1], "seat_label": ["seat 0 (ev)"] * 2, "total": [0, 12]})
    runs = pd.DataFrame({"run": ["a"], "games": [10], "planned_games": [20], "status": ["running"]})
    ppr = wr.assign(
        points_per_round=[8.0, 7.0, 6.0, 5.0],
        points_per_round_lo=0.0,
        points_per_round_hi=9.0,
        rounds=50,
    )
    for chart in [
        charts.win_rate_by_field_size(wr),
        charts.win_index_by_field_size(wr),
        charts.points_by_field_size(ppr),
        charts.points_vs_wins(ppr),
        charts.league_win_index(league),
        charts.round_rate(rates, "bust_rate", "bust rate"),
        charts.game_totals(totals),
        charts.runs_games(runs),
    ]:
        titles = _titles(chart)
        assert titles.get("x") and titles.get("y"), chart.to_dict().get("layer", chart.to_dict())


def test_league_is_a_dot_plot_around_one_not_bars_from_zero():
    """The league draws a dot per policy with its 95% interval as a line, and the dashed line at
    1; the x axis spans the intervals and 1 (0.99-1.01 indexes differ there), not 0."""
    league = pd.DataFrame(
        {
            "place": [1, 2],
            "policy": ["ev", "bust:0.25"],
            "win_index": [1.008, 0.992],
            "win_index_lo": [0.998, 0.981],
            "win_index_hi": [1.018, 1.003],
            "player_games": [12_000, 12_000],
        }
    )
    spec = charts.league_win_index(league).to_dict()
    marks = _marks(spec)
    assert "bar" not in marks and "point" in marks and marks.count("rule") == 2
    domain = _x_domain(spec)
    low, high = domain
    assert 0.95 < low < 0.981 and 1.018 < high < 1.05  # around the intervals, far from 0


def test_every_page_chart_leaves_room_for_the_toolbar_and_short_axis_titles():
    """A page's chart keeps TOOLBAR_ROOM free above its drawing (Streamlit's toolbar covers
    the top right corner, where the legend starts); the card-counting y titles fit the
    height of a phone's chart (a cut title lost its end)."""
    df = pd.DataFrame(
        {
            "players": [2],
            "counting": ["evc"],
            "base": ["ev"],
            "method": ["paired"],
            "ppr_gain": [0.1],
            "ppr_gain_lo": [0.0],
            "ppr_gain_hi": [0.2],
            "win_gain": [0.01],
            "win_gain_lo": [0.0],
            "win_gain_hi": [0.02],
            "n_counting": [10],
            "n_base": [10],
        }
    )
    for measure in ("ppr", "win"):
        chart = charts.counting_gain(df, measure)
        assert chart.to_dict()["padding"]["top"] >= charts.TOOLBAR_ROOM
        (title,) = _titles(chart)["y"]
        assert len(title) * 7 < charts.HEIGHT - 100, title  # ~7 px a character, less the x axis
    wr = pd.DataFrame(
        {
            "players": [2, 4],
            "policy": ["ev", "ev"],
            "win_index": [1.0, 1.1],
            "win_index_lo": [0.9, 1.0],
            "win_index_hi": [1.1, 1.2],
            "player_games": [10, 10],
        }
    )
    assert charts.win_index_by_field_size(wr).to_dict()["padding"]["top"] >= charts.TOOLBAR_ROOM


def test_ranking_pairs_sit_on_the_equivalence_band_coloured_by_verdict():
    """A ranking test's pairs: a dot per pair in ranking order (its share of finishing ahead, in
    %, with the interval as a line), the band of 50% ± margin and the dashed line at 50%
    behind them, and the x axis spanning the band and every interval."""
    pairs = pd.DataFrame(
        {
            "place": [2, 1],
            "above": ["b", "a"],
            "below": ["c", "b"],
            "meetings": [900, 1000],
            "estimate": [0.51, 0.60],
            "estimate_lo": [0.49, 0.57],
            "estimate_hi": [0.53, 0.63],
            "llr": [-3.1, 4.2],
            "verdict": ["equivalent", "separated"],
            "margin": [0.05, 0.05],
        }
    )
    chart = charts.ranking_pairs(pairs)
    spec = chart.to_dict()
    assert spec["padding"]["top"] >= charts.TOOLBAR_ROOM
    titles = _titles(chart)
    assert titles.get("x") and titles.get("y")
    marks = _marks(spec)
    assert marks == ["rect", "rule", "rule", "point"]
    (y,) = {
        tuple(layer["encoding"]["y"]["sort"])
        for layer in _layers(spec)
        if "y" in layer.get("encoding", {}) and "sort" in layer["encoding"]["y"]
    }
    assert y == ("a over b", "b over c")  # by place, not by row order
    domain = _x_domain(spec)
    assert domain[0] < 45 and domain[1] > 63  # the band (45-55) and every interval
    assert {"ahead", "ahead_lo", "ahead_hi", "meetings", "llr", "verdict"} <= _tooltip_fields(chart)
