"""Named queries over the ratings marts (`ratings`, `rating_pairs`): what `flip7 ratings` and
the dashboard's ratings page read. `players=None` is the fit pooled over every field size.

Ratings are fitted when asked (the marts are views calling warehouse.ratings), so each call
reads the run's games once; the dashboard caches the frames.
"""

from __future__ import annotations

import duckdb
import pandas as pd


def ratings(con: duckdb.DuckDBPyConnection, run: str, players: int | None = None) -> pd.DataFrame:
    """Every policy of a run rated (anchor = 0), best first: one row per ruleset and policy;
    `above_next`: its interval for the step to the next place lies above 0 (NULL for the last)."""
    return con.execute(
        """
        SELECT place, policy, rating, lo, hi, se, games, seats, anchor,
            gap_to_next_lo > 0 AS above_next, games_factor_to_separate AS games_factor,
            next_policy, players, ruleset, converged
        FROM ratings
        WHERE run = $run and players IS NOT DISTINCT FROM $players
        ORDER BY ruleset, place
        """,
        {"run": run, "players": players},
    ).df()


def rating_pairs(
    con: duckdb.DuckDBPyConnection, run: str, players: int | None = None
) -> pd.DataFrame:
    """Model vs observed chance of finishing ahead for every pair of a run's fit."""
    return con.execute(
        """
        SELECT * EXCLUDE (run, variant)
        FROM rating_pairs
        WHERE run = $run and players IS NOT DISTINCT FROM $players
        ORDER BY ruleset, disagrees DESC, abs(gap) DESC, policy, opponent
        """,
        {"run": run, "players": players},
    ).df()


def field_sizes(con: duckdb.DuckDBPyConnection, run: str) -> list[int]:
    """The field sizes a run played (from the manifest's cells: reads no game)."""
    rows = con.execute(
        "SELECT DISTINCT players FROM int_cells WHERE run = $run ORDER BY players", {"run": run}
    ).fetchall()
    return [int(r[0]) for r in rows]
