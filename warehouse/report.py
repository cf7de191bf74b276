"""`flip7 report RUN`: the headline analyses of one run as readable tables.

Every figure is per cell (line-up, field size and ruleset of the run), with its sample size and its
95% interval in a column of its own, clustered by game as docs/warehouse.md defines: field
size (win rate, adjusted win index, pooled points per round per cell and policy), how rounds
end (bust and Flip 7 rates per cell and policy), card counting (counting minus non-counting
twin, paired on common random numbers where the run has them) and the policy comparison (the
league: the adjusted win index, the one named aggregate over the run's cells under one
ruleset). A run that plays its line-ups under several rulesets gets a ruleset column in every
table and a "rule choices" table: per line-up, field size and ruleset, all seats pooled, rounds
per game, points per round, bust and Flip 7 rates (the cell_results mart). It reads
only the compact games and rounds tables (through the marts, as views: each table is computed
once, straight from Parquet).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import pandas as pd

from flip7.format import Column, Result, Table
from warehouse import queries
from warehouse.text import interval, num, pct, pp

CI = "95% interval"


def report(con: duckdb.DuckDBPyConnection, run: str) -> list[str]:
    """The report's lines for one run of the connection's lake (the table format)."""
    return report_result(con, run).render("table")


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame's rows as JSON-ready records (arrays as lists, NaN as null)."""
    return [
        {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in row.items()}
        for row in df.to_dict(orient="records")
    ]


def _ci(name: str, show: Callable[[Any], str], key: str, drop: int = 0) -> Column:
    """A 95% interval column: (lo, hi) shown as `[lo, hi]`, csv fields KEY_lo and KEY_hi;
    `drop` as its figure's (the two leave a narrow terminal's table together)."""
    return Column(name, show, True, key, lambda k, v: {f"{k}_lo": v[0], f"{k}_hi": v[1]}, drop)


def _estimate(
    name: str,
    show: Callable[[Any], str],
    show_ci: Callable[[Any], str],
    key: str,
    drop: int = 0,
    ci: str = CI,
) -> list[Column]:
    """A figure's two columns: its value (csv field KEY) and its interval (`ci`, as `_ci`)."""
    return [Column(name, show, key=key, drop=drop), _ci(ci, show_ci, key, drop)]


def _figure(row: Any, key: str) -> list[Any]:
    """A figure's two values in a row of `_estimate`'s columns: KEY and (KEY_lo, KEY_hi)."""
    return [getattr(row, key), (getattr(row, f"{key}_lo"), getattr(row, f"{key}_hi"))]


def _cell_columns(several: bool) -> list[Column]:
    """The columns naming a cell and policy: line-up, players, ruleset (when several), policy."""
    return [
        Column("line-up", None, False, "lineup"),
        Column("players"),
        *_ruleset_column(several),
        Column("policy", None, False),
    ]


def _cell(row: Any, several: bool) -> list[Any]:
    """A row's values for `_cell_columns`."""
    return [row.lineup, int(row.players), *([row.ruleset] if several else []), row.policy]


def _rate_ci(v: tuple[float, float]) -> str:
    return interval(*v, digits=1, scale=100)


def _points_ci(v: tuple[float, float]) -> str:
    return interval(*v)


def _index_ci(v: tuple[float, float]) -> str:
    return interval(*v, digits=3)


def report_result(con: duckdb.DuckDBPyConnection, run: str) -> Result:
    """The report of one run: its text and tables, and the JSON of docs/output.md."""
    from flip7 import format as fmt

    info = queries.runs(con)
    info = info[info.run == run]
    if info.empty:
        raise ValueError(f"no run {run!r} in this lake")
    r = info.iloc[0]
    planned = f"/{int(r.planned_games):,}" if r.planned_games == r.planned_games else ""
    rulesets = [str(x) for x in _listed(r.get("rulesets"))] or [str(r.ruleset)]
    several = len(rulesets) > 1
    order = {name: i for i, name in enumerate(rulesets)}  # rulesets in the spec's order

    def by_rules(df: pd.DataFrame, keys: list[str], descending: str | None = None) -> pd.DataFrame:
        df = df.assign(_rules=[order.get(str(x), len(order)) for x in df["ruleset"]])
        keys = [("_rules" if k == "ruleset" else k) for k in keys]
        up = [k != descending for k in keys]
        return df.sort_values(keys, ascending=up, kind="stable").drop(columns="_rules")

    fs = by_rules(
        queries.field_size(con, runs=[run]),
        ["lineup", "players", "ruleset", "win_index"],
        "win_index",
    )
    rates = by_rules(queries.rates(con, runs=[run]), ["lineup", "players", "ruleset", "policy"])
    cc = by_rules(queries.card_counting(con, runs=[run]), ["players", "ruleset"])
    lg = by_rules(queries.league(con, runs=[run]), ["ruleset", "place"])
    cells = (
        by_rules(queries.cell_results(con, runs=[run]), ["lineup", "players", "ruleset"])
        if several
        else None
    )
    data: dict[str, Any] = {
        "command": "report",
        "run": run,
        "games": int(r.games),
        "planned_games": int(r.planned_games) if planned else None,
        "shards": int(r.shards),
        "status": r.status,
        "ruleset": r.ruleset if not several else None,
        "rulesets": rulesets,
        "variant": r.variant,
        "seed": r.seed,
        "field_size": _records(fs),
        "rates": _records(rates),
        "card_counting": _records(cc),
        "league": _records(lg),
    }
    if cells is not None:
        data["rule_choices"] = _records(cells)
    result = Result(data)
    what = f"rulesets {', '.join(rulesets)}" if several else f"ruleset {rulesets[0]}"
    result.line(
        f"Run {run}: {int(r.games):,}{planned} games, {int(r.shards)} shards committed, "
        f"status {r.status}; {what}, variant {r.variant}, seed {r.seed}"
    )
    for line in sprt_lines(con, run):  # a sequential test's decision, if the run has one
        result.line(line)
    for line in ranking_lines(con, run):  # a ranking test's pairs, if the run stops by one
        result.line(line)
    result.line(
        "Figures are per cell (line-up x field size"
        + (" x ruleset" if several else "")
        + "). Intervals are 95%, clustered by game (by "
        "pair of games for paired comparisons); n/a under two games."
    )
    if cells is not None:
        result.line("")
        _rule_choices(result, cells)
    result.line("")
    result.line(
        "Field size: win rate (wins / seats), adjusted win index (win rate x players; 1.00 = "
        "average seat), points per round (points / rounds played)."
    )
    result.table(
        Table(
            [
                *_cell_columns(several),
                Column("games", fmt.count, drop=4),
                Column("seats", fmt.count, key="player_games", drop=2),
                *_estimate("win rate", fmt.rate, _rate_ci, "win_rate"),
                *_estimate("win index", lambda x: f"{x:.3f}", _index_ci, "win_index", drop=1),
                Column("rounds", fmt.count, drop=5),
                *_estimate("points/round", fmt.points, _points_ci, "points_per_round", drop=3),
            ],
            [
                [
                    *_cell(x, several),
                    int(x.games),
                    int(x.player_games),
                    *_figure(x, "win_rate"),
                    *_figure(x, "win_index"),
                    int(x.rounds),
                    *_figure(x, "points_per_round"),
                ]
                for x in fs.itertuples()
            ],
            title="field size",
        )
    )
    result.line("")
    result.line("How rounds end: bust and Flip 7 rates per round played.")
    result.table(
        Table(
            [
                *_cell_columns(several),
                Column("rounds", fmt.count, drop=2),
                *_estimate("bust rate", fmt.rate, _rate_ci, "bust_rate"),
                *_estimate("Flip 7 rate", fmt.rate, _rate_ci, "flip7_rate", drop=1),
            ],
            [
                [
                    *_cell(x, several),
                    int(x.rounds),
                    *_figure(x, "bust_rate"),
                    *_figure(x, "flip7_rate"),
                ]
                for x in rates.itertuples()
            ],
            title="how rounds end",
        )
    )
    result.line("")
    result.line(
        "Card counting: counting policy minus its non-counting twin, each in its line-up. "
        "paired = common random numbers (n = game pairs); unpaired = n games of the two "
        "line-ups."
    )
    if cc.empty:
        result.line("(no counting policy played beside its twin in this run)")
    else:
        result.table(
            Table(
                [
                    Column("players"),
                    *_ruleset_column(several),
                    Column("comparison", None, False),
                    Column("line-up", None, False, "lineup"),
                    Column("method", None, False, drop=1),
                    Column("n", fmt.count),
                    *_estimate(
                        "points/round gain",
                        lambda x: num(x, 2, sign=True),
                        lambda v: interval(*v, sign=True),
                        "ppr_gain",
                    ),
                    *_estimate(
                        "win-rate gain",
                        lambda x: pp(x),
                        lambda v: interval(*v, digits=1, scale=100, sign=True),
                        "win_gain",
                        drop=2,
                        ci=CI + " (pp)",
                    ),
                ],
                [
                    [
                        int(x.players),
                        *([x.ruleset] if several else []),
                        f"{x.counting} vs {x.base}",
                        x.lineup if x.lineup == x.base_lineup else f"{x.lineup} vs {x.base_lineup}",
                        x.method,
                        int(x.games),
                        *_figure(x, "ppr_gain"),
                        *_figure(x, "win_gain"),
                    ]
                    for x in cc.itertuples()
                ],
                title="card counting",
            )
        )
    result.line("")
    result.line(
        "Policy comparison: league by adjusted win index, a named aggregate over every cell the "
        "policy played"
        + (" under one ruleset (a league per ruleset)" if several else "")
        + ": its wins / its expected wins (1/n per seat at an n-player table)."
    )
    result.table(
        Table(
            [
                *_ruleset_column(several),
                Column("place"),
                Column("policy", None, False),
                Column("players", None, True, "field_sizes"),
                Column("line-ups", fmt.count, key="lineups", drop=3),
                Column("games", fmt.count, drop=2),
                Column("seats", fmt.count, key="player_games", drop=1),
                *_estimate("win index", lambda x: f"{x:.3f}", _index_ci, "win_index"),
            ],
            [
                [
                    *([x.ruleset] if several else []),
                    int(x.place),
                    x.policy,
                    ",".join(str(p) for p in x.field_sizes),
                    len(x.lineups),
                    int(x.games),
                    int(x.player_games),
                    *_figure(x, "win_index"),
                ]
                for x in lg.itertuples()
            ],
            title="policy comparison",
        )
    )
    return result


def _listed(value: Any) -> list[Any]:
    """A list column's cell (list, numpy array or missing) as a list."""
    if value is None or (isinstance(value, float) and value != value):
        return []
    return list(value)


def _ruleset_column(several: bool) -> list[Column]:
    """The ruleset column, in a run whose line-ups play under several rulesets."""
    return [Column("ruleset", None, False)] if several else []


def _rule_choices(result: Result, cells: pd.DataFrame) -> None:
    """The rule-choices table: each line-up at each field size under each ruleset, all seats
    pooled (the cell_results mart)."""
    from flip7 import format as fmt

    result.line(
        "Rule choices: each line-up under each ruleset, all seats pooled: rounds per game, "
        "points per round (points / seat-rounds), bust and Flip 7 rates per seat-round. Win "
        "rates per policy are in the field-size table below."
    )
    result.table(
        Table(
            [
                Column("line-up", None, False, "lineup"),
                Column("players"),
                Column("ruleset", None, False),
                Column("games", fmt.count, drop=4),
                *_estimate(
                    "rounds/game", lambda x: num(x, 2), _points_ci, "rounds_per_game", drop=3
                ),
                *_estimate("points/round", fmt.points, _points_ci, "points_per_round"),
                *_estimate("bust rate", fmt.rate, _rate_ci, "bust_rate", drop=1),
                # Flip 7s are rare (about 1 in 80 seat-rounds): two decimals tell rulesets apart
                *_estimate(
                    "Flip 7 rate",
                    pct,
                    lambda v: interval(*v, digits=2, scale=100),
                    "flip7_rate",
                    drop=2,
                ),
            ],
            [
                [
                    x.lineup,
                    int(x.players),
                    x.ruleset,
                    int(x.games),
                    *_figure(x, "rounds_per_game"),
                    *_figure(x, "points_per_round"),
                    *_figure(x, "bust_rate"),
                    *_figure(x, "flip7_rate"),
                ]
                for x in cells.itertuples()
            ],
            title="rule choices",
        )
    )


def sprt_lines(con: duckdb.DuckDBPyConnection, run: str) -> list[str]:
    """The run's sequential test (SPRT) and its decision, as `flip7 tournament status` says
    them (docs/sequential.md); [] for a run without one."""
    tests = queries.sprt_tests(con, runs=[run])
    if tests.empty:
        return []
    t = tests.iloc[0]
    win = t.metric == "win"
    scale, unit = (100, "percentage points of win rate") if win else (1, "points per round")
    what = "win rate" if win else "points per round"
    head = (
        f"Sequential test (SPRT) of {t.policy_a} − {t.policy_b} ({what}): H0 {scale * t.h0:+g} "
        f"against H1 {scale * t.h1:+g}{' percentage points' if win else ''}, alpha {t.alpha:g}, "
        f"beta {t.beta:g}, at most {int(t.max_games):,} games."
    )
    half = (t.estimate_hi - t.estimate_lo) / 2
    value = "n/a" if t.estimate != t.estimate else f"{scale * t.estimate:+.2f}"
    spread = "n/a" if half != half else f"{scale * half:.2f}"
    text = f"{t.policy_a} − {t.policy_b} = {value} ± {spread} {unit} (95%)"
    n = int(t.games)
    if t.decision in ("H1", "H0"):
        verdict = f"{t.decision} accepted after {n:,} games: {text}"
    elif t.decision == "inconclusive":
        verdict = f"inconclusive at the ceiling, {n:,} games: {text}"
    else:
        verdict = f"no decision yet after {n:,} games (LLR {t.llr:+.2f}): {text}"
    return [head, verdict]


def ranking_lines(con: duckdb.DuckDBPyConnection, run: str) -> list[str]:
    """A run that stops by its ranking: why it stopped, and each adjacent pair's verdict, as
    `flip7 tournament status` says them (docs/sequential.md); [] for any other run."""
    pairs = queries.ranking_stops(con, run)
    if pairs.empty:
        return []
    lines = [ranking_headline(pairs)]
    for p in pairs.itertuples():
        rate = "n/a" if p.estimate != p.estimate else f"{100 * p.estimate:.1f}%"
        half = (p.estimate_hi - p.estimate_lo) / 2
        spread = "" if half != half else f" ± {100 * half:.1f}"
        lines.append(
            f"  {p.verdict:<11} {p.above} over {p.below}: ahead in {rate}{spread} of "
            f"{int(p.meetings):,} meetings (LLR {p.llr:+.2f})"
        )
    return lines


def ranking_headline(pairs: pd.DataFrame) -> str:
    """The ranking test's rule and outcome in one line, from its ranking_stops rows (not
    empty): what `flip7 report` and the dashboard's Runs page head the pairs with."""
    first = pairs.iloc[0]
    n = int(first.games)
    done = int((pairs.verdict != "open").sum())
    counts = (
        f"{int((pairs.verdict == 'separated').sum())} separated, "
        f"{int((pairs.verdict == 'equivalent').sum())} equivalent"
    )
    if first.decision == "decided":
        head = f"every adjacent pair decided after {n:,} games ({counts}): the run stopped there"
    elif first.decision == "inconclusive":
        head = (
            f"inconclusive at the ceiling, {n:,} games: {done} of {len(pairs)} pairs decided "
            f"({counts})"
        )
    else:
        head = f"no decision yet after {n:,} games: {done} of {len(pairs)} pairs decided ({counts})"
    return (
        f"Ranking test (stop once every adjacent pair is separated by {first.margin:g} in the "
        f"chance of finishing ahead, or equivalent; alpha {first.alpha:g}, beta {first.beta:g}): "
        + head
    )
