"""Two runs side by side: `flip7 compare RUN_A RUN_B`.

Cells are matched by what they played, not by their run: (variant, ruleset, field size, line-up
label, seating, policy), where the seating is the line-up's policies in seat order (int_cells): a
label alone does not say what was played, and two runs may give one label to different line-ups.
Those are two cells, each shown with the other side empty, and `notes()` names them. For each, each run's figure (win rate = wins / seats, or points per round =
points / rounds) with its games, and the difference A - B with its 95% interval. Each run's
figure is the cluster-robust ratio of the statistics contract (docs/warehouse.md; the
`cluster_ratio_half` macro of warehouse/sql/macros/stats.sql over the cell's rollups,
flip7.stats.cluster_ratio in Python), unclipped; two runs play different games (their own seeds), so the two estimates are
independent and the variance of the difference is the sum of the two variances:

    diff = R_A - R_B,   half = 1.959963984540054 * sqrt(var R_A + var R_B)
                             = sqrt(half_A^2 + half_B^2)

A cell played in only one of the two runs comes back with the other side NULL (no difference).
Two runs with the same root seed may have played the same shuffles: then they are not
independent and the interval is wrong; `notes()` says so too.
"""

from __future__ import annotations

import duckdb
import pandas as pd

#: figure -> the rollups' figure of grouping 'policy' whose sums (y, n) are its numerator and
#: denominator: (wins, seats) and (points, rounds).
FIGURES = {"win_rate": "win", "points_per_round": "points"}
CELL = ("variant", "ruleset", "players", "lineup", "seating", "policy")


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
    keys = ", ".join(CELL)
    return con.execute(
        f"""
        with cells as (
            select run, cell, seating from int_cells where run in ($a, $b)
        ),
        sums as (
            select g.run, {", ".join(f"g.{k}" if k != "seating" else "c.seating" for k in CELL)},
                g.games,
                g.y / g.n as figure,
                cluster_ratio_half(g.games, g.y, g.n, g.yy, g.nn, g.yn) as half
            from int_cell_rollups as g
            inner join cells as c on g.run = c.run and g.cell = c.cell
            where g.run in ($a, $b) and g.grouping = 'policy' and g.figure = $figure
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
        {"a": run_a, "b": run_b, "figure": FIGURES[figure]},
    ).df()


def notes(con: duckdb.DuckDBPyConnection, run_a: str, run_b: str) -> list[str]:
    """What a reader of the comparison should know: labels that name different line-ups in the
    two runs (compared as different cells), and runs that may share shuffles."""
    out = [
        f"line-up {lineup!r} at {players} players under {ruleset} ({variant}) seats {seats_a} in "
        f"{run_a} but {seats_b} in {run_b}: two line-ups under one label, so two cells, not "
        "compared"
        for variant, ruleset, players, lineup, seats_a, seats_b in con.execute(
            """
            with cells as (
                select run, variant, ruleset, players, lineup, seating
                from int_cells where run in ($a, $b)
            )
            select a.variant, a.ruleset, a.players, a.lineup, a.seating, b.seating
            from cells as a
            inner join cells as b using (variant, ruleset, players, lineup)
            where a.run = $a and b.run = $b and a.seating <> b.seating
            order by all
            """,
            {"a": run_a, "b": run_b},
        ).fetchall()
    ]
    seeds = dict(
        con.execute(
            "SELECT run, seed FROM runs WHERE run IN ($a, $b) AND seed IS NOT NULL",
            {"a": run_a, "b": run_b},
        ).fetchall()
    )
    if len(seeds) == 2 and seeds[run_a] == seeds[run_b]:
        out.append(
            f"runs {run_a} and {run_b} share the root seed {seeds[run_a]}: they may have played "
            "the same shuffles, so they are not independent and the intervals are too wide or "
            "too narrow; compare runs with different seeds"
        )
    return out
