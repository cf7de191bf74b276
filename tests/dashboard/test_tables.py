"""tables.py: a run's spec rows read well, and layouts keep only the columns a result has."""

from __future__ import annotations

import numpy as np

from dashboard import tables


def test_spec_rows_format_lists_and_counts_and_skip_missing_fields():
    """Lists join with commas, planned counts get thousands separators, absent fields go."""
    rows = tables.spec_rows(
        {
            "ruleset": "3.1",
            "planned_games": np.int64(200000),
            "planned_shards": 40.0,
            "field_sizes": np.array([2, 4, 6]),
            "created": None,
        }
    )
    several = {"ruleset": None, "rulesets": np.array(["3.1", "legacy"])}
    assert tables.spec_rows(several) == [{"field": "rulesets", "value": "3.1, legacy"}]
    assert tables.spec_rows({"ruleset": "3.1", "rulesets": ["3.1"]}) == [
        {"field": "ruleset", "value": "3.1"}
    ]
    assert rows == [
        {"field": "ruleset", "value": "3.1"},
        {"field": "field sizes", "value": "2, 4, 6"},
        {"field": "games planned", "value": "200,000"},
        {"field": "shards planned", "value": "40"},
    ]


def test_every_layout_configures_only_columns_it_orders():
    """Each table layout titles the columns it shows, and present() keeps their order."""
    for layout in (
        tables.field_size,
        tables.card_counting,
        tables.league,
        tables.rates,
        tables.runs,
        tables.variant_comparison,
        tables.cell_results,
    ):
        cols, config = layout()
        assert set(config) <= set(cols), layout.__name__
    assert tables.present(["b", "a", "z"], ["a", "b", "c"]) == ["b", "a"]


def test_rates_show_as_percent_with_one_decimal_and_points_with_two():
    """Shares go to the table ×100 under a one-decimal percent format; points keep two
    decimals; other columns are untouched."""
    import pandas as pd

    cols, config = tables.rates()
    assert config["bust_rate"]["type_config"]["format"] == "%.1f%%"
    df = pd.DataFrame({"bust_rate": [0.3353], "rounds": [519], "policy": ["ev"]})
    out = tables.scaled(df, config)
    assert out["bust_rate"].tolist() == [33.53] and out["rounds"].tolist() == [519]
    assert df["bust_rate"].tolist() == [0.3353]  # the cached frame is not changed in place
    _, fs = tables.field_size()
    assert fs["points_per_round"]["type_config"]["format"] == "%.2f"


def test_expected_wins_show_as_a_whole_count_like_the_wins_beside_them():
    """The league's expected wins (1/n per seat, so fractional) show rounded with thousands
    separators, the format of the wins and seats beside them (not "12000.0")."""
    import pandas as pd

    cols, config = tables.league()
    assert config["expected_wins"] == config["wins"] | {"label": "expected wins"} | {
        "help": config["expected_wins"]["help"]
    }
    assert config["expected_wins"]["type_config"]["format"] == "localized"
    out = tables.scaled(pd.DataFrame({"expected_wins": [11_999.6667], "wins": [11_875]}), config)
    assert out["expected_wins"].tolist() == [12_000.0]


def test_fitted_tables_show_intervals_in_one_column_and_no_raw_none():
    """Each interval (X_lo, X_hi) becomes one "low – high" column in its format, in place of
    the two; hidden columns go; a gap shows as an em dash, in numeric and text columns."""
    import pandas as pd

    df = pd.DataFrame(
        {
            "lineup": ["duel", "duel"],
            "policy": ["ev", None],
            "games": [1200, float("nan")],
            "win_rate": [0.246, 0.25],
            "win_rate_lo": [0.231, float("nan")],
            "win_rate_hi": [0.26, 0.27],
            "win_index": [1.0312, 0.99],
            "win_index_lo": [0.9801, 0.95],
            "win_index_hi": [1.0823, 1.03],
        }
    )
    frame, order, config = tables.fitted(df, tables.field_size(), hide=("lineup",))
    assert order == ["policy", "games_text", "win_rate", "win_rate_ci", "win_index", "win_index_ci"]
    assert frame["win_rate_ci"].tolist() == ["23.1% – 26.0%", "—"]
    assert frame["win_index_ci"].tolist() == ["0.980 – 1.082", "0.950 – 1.030"]
    assert frame["games_text"].tolist() == ["1,200", "—"]
    assert frame["policy"].tolist() == ["ev", "—"]
    assert config["win_rate_ci"]["label"] == "95% interval"
    assert config["games_text"]["label"] == "games"
    assert pd.isna(df["policy"][1])  # the cached frame is not changed in place
