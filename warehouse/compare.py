"""Two runs side by side: `flip7 compare RUN_A RUN_B`.

Cells are matched by what they played, not by their run: (variant, ruleset, field size, line-up
label, policy). For each, each run's figure (win rate = wins / seats, or points per round =
points / rounds) with its games, and the difference A - B with its 95% interval. Each run's
figure is the cluster-robust ratio of the statistics contract (docs/warehouse.md; the
`clustered_half` macro of warehouse/sql/macros/stats.sql, flip7.stats.cluster_ratio in
Python), unclipped; two runs play different games (their own seeds), so the two estimates are
independent and the variance of the difference is the sum of the two variances:

    diff = R_A - R_B,   half = 1.959963984540054 * sqrt(var R_A + var R_B)
                             = sqrt(half_A^2 + half_B^2)

A cell played in only one of the two runs comes back with the other side NULL (no difference).
Two runs with the same root seed may have played the same shuffles: then they are not
independent and the interval is wrong; `notes()` says so.
"""

from __future__ import annotations

import duckdb
import pandas as pd

#: figure -> (numerator, denominator) columns of fct_policy_games.
FIGURES = {"win_rate": ("wins", "seats"), "points_per_round": ("points", "rounds")}
CELL = ("variant", "ruleset", "players", "lineup", "policy")


def compare(
    con: duckdb.DuckDBPyConnection, run_a: str, run_b: str, figure: str = "win_rate"
) -> pd.DataFrame:
    """One row per matched cell and policy (and per cell played in one run only), ordered."""
    if figure not in FIGURES:
        raise ValueError(f"unknown figure {figure!r}: choose one of {', '.join(FIGURES)}")
    if run_a == run_b:
        raise ValueError(f"compare needs two different runs (got {run_a!r} twice)")
    known = {r for (r,) in con.execute("SELECT run FROM runs").fetchall()}
    for run in (run_a, run_b):
        if run not in known:
            raise ValueError(
                f"no run {run!r} in the lake (runs there: {', '.join(sorted(known)) or 'none'})"
            )
    y, n = FIGURES[figure]
    keys = ", ".join(CELL)
    return con.execute(
        f"""
        with sums as (
            select run, {keys}, count(*) as games,
                sum({y}) / sum({n}) as figure, clustered_half({y}, {n}) as half
            from fct_policy_games
            where run in ($a, $b)
            group by all
        ),
        a as (select * from sums where run = $a),
        b as (select * from sums where run = $b)
        select
            {", ".join(f"coalesce(a.{k}, b.{k}) as {k}" for k in CELL)},
            a.games as games_a,
            a.figure as {figure}_a,
            b.games as games_b,
            b.figure as {figure}_b,
            a.figure - b.figure as diff,
            a.figure - b.figure - sqrt(a.half * a.half + b.half * b.half) as diff_lo,
            a.figure - b.figure + sqrt(a.half * a.half + b.half * b.half) as diff_hi
        from a full outer join b using ({keys})
        order by all
        """,
        {"a": run_a, "b": run_b},
    ).df()


def notes(con: duckdb.DuckDBPyConnection, run_a: str, run_b: str) -> list[str]:
    """What a reader of the comparison should know: runs that may share shuffles."""
    seeds = dict(
        con.execute(
            "SELECT run, seed FROM runs WHERE run IN ($a, $b) AND seed IS NOT NULL",
            {"a": run_a, "b": run_b},
        ).fetchall()
    )
    if len(seeds) == 2 and seeds[run_a] == seeds[run_b]:
        return [
            f"runs {run_a} and {run_b} share the root seed {seeds[run_a]}: they may have played "
            "the same shuffles, so they are not independent and the intervals are too wide or "
            "too narrow; compare runs with different seeds"
        ]
    return []
