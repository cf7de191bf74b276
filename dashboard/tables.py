"""How query results show as tables: column titles, number formats, which columns and in what
order. Pure functions returning `st.column_config` mappings; nothing here computes a number.
Every figure is per cell (line-up and field size); its "95% low/high" columns are the 95%
interval clustered by game (by game pair for paired comparisons).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

Config = dict[str, Any]


PERCENT = "%.1f%%"  # a share, shown ×100 with one decimal (`show` scales the column)


def percent(title: str, help: str | None = None) -> Any:
    """A share 0..1 shown as a percentage with one decimal (33.5%)."""
    return st.column_config.NumberColumn(title, format=PERCENT, help=help)


def is_percent(config: Any) -> bool:
    """True for a column made by `percent` (its values are shares to scale by 100)."""
    return isinstance(config, dict) and config.get("type_config", {}).get("format") == PERCENT


#: Columns holding a count that need not be whole (expected wins: 1/n per seat), shown rounded
#: to a whole number like the counts beside them.
WHOLE = frozenset({"expected_wins"})


def scaled(df: pd.DataFrame, config: Config) -> pd.DataFrame:
    """The frame with its percent columns ×100 (Streamlit's own "percent" format shows two
    decimals; a printf format shows one but needs the value in percent), and its `WHOLE`
    columns rounded (a "localized" number shows up to three decimals)."""
    cols = [c for c, cfg in config.items() if c in df.columns and is_percent(cfg)]
    whole = [c for c in WHOLE if c in df.columns and c in config]
    if not cols and not whole:
        return df
    return df.assign(**{c: df[c] * 100 for c in cols}, **{c: df[c].round(0) for c in whole})


def count(title: str, help: str | None = None) -> Any:
    """A count with thousands separators."""
    return st.column_config.NumberColumn(title, format="localized", help=help)


def number(title: str, digits: int = 2, help: str | None = None) -> Any:
    return st.column_config.NumberColumn(title, format=f"%.{digits}f", help=help)


CI_HELP = "95% interval, clustered by game (seats of one game are not independent)"


def with_interval(name: str, figure: Any, low: Any, high: Any) -> Config:
    """A figure's column `name` and its 95% interval's, `name_lo` and `name_hi`."""
    return {name: figure, f"{name}_lo": low, f"{name}_hi": high}


def rate_interval(name: str, title: str, help: str | None = None) -> Config:
    """A rate shown as a percentage, with its interval's "95% low/high" columns."""
    return with_interval(
        name, percent(title, help), percent("95% low", CI_HELP), percent("95% high", CI_HELP)
    )


def number_interval(
    name: str, title: str, digits: int, help: str | None = None, prefix: str = ""
) -> Config:
    """A number with `digits` decimals, with its interval's "[prefix ]95% low/high" columns."""
    low, high = (f"{prefix} 95% {end}".lstrip() for end in ("low", "high"))
    return with_interval(
        name,
        number(title, digits, help),
        number(low, digits, CI_HELP),
        number(high, digits, CI_HELP),
    )


#: A cell's columns first in a table of cells: its line-up and field size.
CELL_COLUMNS: Config = {
    "lineup": "line-up",
    "players": st.column_config.NumberColumn("players", format="%d"),
}


def every_column(config: Config) -> tuple[list[str], Config]:
    """A table of every configured column, in the config's order."""
    return list(config), config


def field_size() -> tuple[list[str], Config]:
    return every_column(
        {
            **CELL_COLUMNS,
            "policy": "policy",
            "games": count("games", "games the policy sat in (the clusters of the intervals)"),
            "player_games": count("seats", "seats the policy held: one per game and seat"),
            "wins": count("wins"),
            **rate_interval("win_rate", "win rate", "wins ÷ seats"),
            **number_interval(
                "win_index",
                "win index",
                3,
                "win rate × players (1/n per seat); 1 = average",
                "index",
            ),
            "rounds": count("rounds"),
            **number_interval(
                "points_per_round", "points / round", 2, "points ÷ rounds played (pooled)", "pts"
            ),
        }
    )


def card_counting(measure: str | None = None) -> tuple[list[str], Config]:
    """The card-counting table; `measure` "ppr" or "win" keeps the columns of one measure (the
    page shows one table each, so that each fits its width)."""
    ppr = ["ppr_counting", "ppr_base", "ppr_gain", "ppr_gain_lo", "ppr_gain_hi"]
    win = ["win_counting", "win_base", "win_gain"]  # seats: in the chart's tooltips
    win += ["win_gain_lo", "win_gain_hi"]
    cols = ["players", "comparison", "method", "games"]  # games: game pairs when paired
    cols += (ppr if measure != "win" else []) + (win if measure != "ppr" else [])
    return cols, {
        "players": st.column_config.NumberColumn("players", format="%d"),
        "comparison": st.column_config.TextColumn(
            "comparison",
            help="counting policy vs its twin (the counting line-up vs the twin's line-up)",
        ),
        "method": st.column_config.TextColumn(
            "method",
            help="paired: same shuffles (common random numbers), intervals clustered by game "
            "pair; unpaired: each line-up's own games, intervals clustered by game",
        ),
        "games": count("games", "game pairs when paired; games of both line-ups otherwise"),
        "ppr_counting": number("counting", 2, "points ÷ rounds played (pooled)"),
        "ppr_base": number("twin", 2, "points ÷ rounds played (pooled)"),
        "ppr_gain": number("gain", 3, "points per round, counting − twin"),
        "ppr_gain_lo": number("gain 95% low", 3, CI_HELP),
        "ppr_gain_hi": number("gain 95% high", 3, CI_HELP),
        "win_counting": percent("counting", "win rate: wins ÷ seats"),
        "win_base": percent("twin", "win rate: wins ÷ seats"),
        "win_gain": percent("gain", "difference of win rates, in percentage points"),
        "win_gain_lo": percent("gain 95% low", CI_HELP),
        "win_gain_hi": percent("gain 95% high", CI_HELP),
    }


def league() -> tuple[list[str], Config]:
    return every_column(
        {
            "place": st.column_config.NumberColumn("place", format="%d"),
            "policy": "policy",
            "field_sizes": st.column_config.ListColumn("field sizes"),
            "lineups": st.column_config.ListColumn("line-ups"),
            "games": count("games"),
            "player_games": count("seats"),
            "wins": count("wins"),
            "expected_wins": count(
                "expected wins", "1/n per seat at an n-player table, rounded to a whole number"
            ),
            **number_interval(
                "win_index",
                "win index",
                3,
                "adjusted win index: wins ÷ expected wins over every cell the policy played; "
                "1 = average seat",
            ),
        }
    )


def rates() -> tuple[list[str], Config]:
    return every_column(
        {
            **CELL_COLUMNS,
            "policy": "policy",
            "games": count("games"),
            "rounds": count("rounds"),
            "busts": count("busts"),
            **rate_interval("bust_rate", "bust rate", "busts ÷ rounds played"),
            "flip7s": count("Flip 7s"),
            **rate_interval("flip7_rate", "Flip 7 rate"),
            **rate_interval("stay_rate", "stayed"),
            **rate_interval("freeze_rate", "frozen"),
        }
    )


def variant_comparison() -> tuple[list[str], Config]:
    return every_column(
        {
            "variant": "variant",
            "ruleset": "ruleset",
            "players": st.column_config.NumberColumn("players", format="%d"),
            "lineup": "line-up",
            "seating": st.column_config.TextColumn(
                "seating", help="the line-up's policies in seat order: what the cell played"
            ),
            "policy": "policy",
            "runs": count("runs", "runs that played this cell (pooled: replications)"),
            "pooled_runs": st.column_config.ListColumn("pooled runs"),
            "games": count("games"),
            "shuffles": count(
                "shuffles",
                "distinct shuffles among the games (the clusters of the intervals): fewer than "
                "the games when runs sharing a root seed replayed the same games",
            ),
            "player_games": count("seats"),
            **number_interval("win_index", "win index", 3, "win rate × players; 1 = average seat"),
            "rounds": count("rounds"),
            "points_per_round": number("points / round", 2),
            "ppr_lo": number("95% low", 2, CI_HELP),
            "ppr_hi": number("95% high", 2, CI_HELP),
            **rate_interval("bust_rate", "bust rate"),
            **rate_interval("flip7_rate", "Flip 7 rate"),
        }
    )


def runs() -> tuple[list[str], Config]:
    cols = [
        "run",
        "status",
        "rulesets",
        "variant",
        "seed",
        "games",
        "planned_games",
        "shards",
        "planned_shards",
        "rounds",
        "events",
        "field_sizes",
        "policies",
        "created",
        "package_version",
        "rules_version",
        "schema_version",
    ]
    return cols, {
        "run": "run",
        "status": "status",
        "games": count("games"),
        "planned_games": count("planned games"),
        "shards": count("shards"),
        "planned_shards": count("planned shards"),
        "rounds": count("round rows"),
        "events": count("events"),
        "field_sizes": st.column_config.ListColumn("field sizes"),
        "policies": st.column_config.ListColumn("policies"),
        "rulesets": st.column_config.ListColumn("rulesets"),
        "seed": st.column_config.NumberColumn("seed", format="%d"),
    }


SPEC_FIELDS = {
    "ruleset": "ruleset",
    "rulesets": "rulesets",  # shown for a run that plays several
    "variant": "variant",
    "seed": "root seed",
    "field_sizes": "field sizes",
    "policies": "policies",
    "cells": "cells (line-up x ruleset x field size)",
    "planned_games": "games planned",
    "planned_shards": "shards planned",
    "created": "created",
    "package_version": "flip7 package",
    "rules_version": "rules version",
    "schema_version": "schema version",
}


def spec_rows(run: dict[str, Any]) -> list[dict[str, str]]:
    """A run's planning fields (from its `runs` row) as label/value rows for display."""
    rows = []
    for key, label in SPEC_FIELDS.items():
        value = run.get(key)
        if value is None or (isinstance(value, float) and value != value):
            continue
        if key == "rulesets" and len(value) < 2:
            continue
        if not isinstance(value, str) and hasattr(value, "__len__"):
            value = ", ".join(str(v) for v in value)
        elif isinstance(value, numbers.Real) and key.startswith("planned"):
            value = f"{round(float(value)):,}"  # counts (a float when the column has gaps)
        rows.append({"field": label, "value": str(value)})
    return rows


def spec_config() -> Config:
    return {"field": st.column_config.TextColumn("spec"), "value": "value"}


def present(cols: list[str], available: list[str]) -> list[str]:
    """The wanted columns that the frame has (a warehouse may add or drop some)."""
    return [c for c in cols if c in available]


MISSING = "—"  # what a table shows for a value it does not have (never a raw "None")


def _fmt(config: Any) -> str | None:
    """A NumberColumn's format (as made by `count`, `number`, `percent`), else None."""
    return config.get("type_config", {}).get("format") if isinstance(config, dict) else None


def formatted(value: Any, fmt: str | None) -> str:
    """One number as its column shows it ("localized": thousands separators; a printf format
    as given), or MISSING."""
    if value is None or (isinstance(value, float) and value != value) or pd.isna(value):
        return MISSING
    if fmt == "localized":
        v = float(value)
        return f"{v:,.0f}" if v.is_integer() else f"{v:,.3f}".rstrip("0")
    if fmt and "%" in fmt:
        return fmt.replace("%d", "%.0f") % float(value)
    return str(value)


def _title(config: Any, column: str) -> str:
    return str(config.get("label") or column) if isinstance(config, dict) else str(config or column)


def fitted(
    df: pd.DataFrame, layout: tuple[list[str], Config], hide: Sequence[str] = ()
) -> tuple[pd.DataFrame, list[str], Config]:
    """The frame, column order and config a table shows, fitted to a page's width: each 95%
    interval (`X_lo`, `X_hi`) as one text column "low – high" in its columns' format, in
    place of the two; the columns in `hide` left out (what a picker above the table already
    fixes); every other missing value as MISSING ("—"), a numeric column with gaps as text
    in its own format. The frame gains columns; none of its own changes."""
    cols, config = layout
    cols = [c for c in present(cols, list(df.columns)) if c not in hide]
    config = dict(config)
    out = scaled(df, config)
    extra: dict[str, Any] = {}
    order: list[str] = []
    for c in cols:
        if c.endswith("_hi") and c[:-3] + "_lo" in cols:
            continue  # shown with its _lo
        if c.endswith("_lo") and c[:-3] + "_hi" in cols:
            hi = c[:-3] + "_hi"
            fmt = _fmt(config.get(c))
            name = c[:-3] + "_ci"
            extra[name] = [
                MISSING
                if pd.isna(a) or pd.isna(b)
                else f"{formatted(a, fmt)} – {formatted(b, fmt)}"
                for a, b in zip(out[c], out[hi], strict=True)
            ]
            help_ = config.get(c, {}).get("help") if isinstance(config.get(c), dict) else None
            config[name] = st.column_config.TextColumn("95% interval", help=help_ or CI_HELP)
            order.append(name)
            continue
        column = out[c]
        if column.isna().any():
            fmt = _fmt(config.get(c))
            if pd.api.types.is_numeric_dtype(column) and fmt:
                name = c + "_text"
                extra[name] = [formatted(v, fmt) for v in column]
                cfg = config.get(c)
                config[name] = st.column_config.TextColumn(
                    _title(cfg, c), help=cfg.get("help") if isinstance(cfg, dict) else None
                )
                order.append(name)
                continue
            if not pd.api.types.is_numeric_dtype(column):
                extra[c] = [
                    MISSING if v is None or (isinstance(v, float) and v != v) else v for v in column
                ]
        order.append(c)
    if extra:
        out = out.assign(**extra)
    return out, order, config


def show(
    df: pd.DataFrame, layout: tuple[list[str], Config], hide: Sequence[str] = (), **kwargs: Any
) -> None:
    """Draw a query result as a table with the columns, titles and formats of `layout`, fitted
    to the page (`fitted`: intervals in one column each, no raw "None")."""
    frame, order, config = fitted(df, layout, hide)
    st.dataframe(frame, column_order=order, column_config=config, hide_index=True, **kwargs)


def cell_results() -> tuple[list[str], Config]:
    """The rule-choices table: a row per cell (line-up, field size, ruleset), all seats pooled."""
    return every_column(
        {
            **CELL_COLUMNS,
            "ruleset": "ruleset",
            "games": count("games", "games in the cell (the clusters of the intervals)"),
            **number_interval(
                "rounds_per_game", "rounds / game", 2, "rounds ÷ games: how long a game lasts"
            ),
            **number_interval(
                "points_per_round", "points / round", 2, "all seats' points ÷ seat-rounds", "pts"
            ),
            **rate_interval("bust_rate", "bust rate", "seat-rounds ending in a bust"),
            **rate_interval("flip7_rate", "Flip 7 rate", "seat-rounds ending with a Flip 7"),
        }
    )
