"""Named, typed queries over the marts: what the dashboard and the report read (and nothing else).

Open a connection with `warehouse.connect(data_dir=None, runs=None, materialize=False)`, then:

- `runs(con)`: one row per run: status, ruleset, variant, seed, planned vs committed shards and
  games, rows per table, field sizes, policies.
- `win_rates(con, runs, variant, policies, players)`: per run, field size and policy: player
  games, wins, win rate with 95% Wilson interval, the adjusted win index (wins / expected wins,
  expecting 1/n at an n-player table) with its interval, mean finishing rank.
- `points_per_round(...)`: mean round score, sd, standard error and 95% interval.
- `field_size(...)`: win rates and points per round side by side (more points is not more wins).
- `rates(...)`: bust, Flip 7, stay and freeze rates per round, each with a Wilson interval.
- `card_counting(con, runs, variant)`: counting policy vs its twin (evc/ev, bustc:P/bust:P):
  gains in points per round and win rate with standard errors and intervals, paired on common
  random numbers where the run has them (`method` says which).
- `league(con, runs, variant)`: policies ranked by adjusted win index over all field sizes.
- `head_to_head(con, runs, players, policies)`: how often each policy finished ahead of each
  other one at the same table (meetings, ahead, behind, tied, share with interval).
- `round_distribution(con, runs, policies, players)`: rounds per score value, share, cumulative.
- `seat_effects(con, runs, players, policy)` and `dealer_positions(...)`: by seat, and by turn
  position relative to the dealer (policy '*' pools all policies).
- `games(con, run, limit, offset)`: the logged games of a run (line-up, winner, length, seed).
- `game_timeline(con, run, game)`: one game card by card, in order, for a replay.
- `variant_comparison(con, policies, players)` and `variant_round_distribution(...)`: classic
  against "With a Vengeance": each policy's points, bust and Flip 7 rates and win index, and
  the round-score distribution, per variant (pooled over its runs).
- `sprt_tests(con, runs)` and `sprt_waves(con, run)`: sequential tests (SPRT): each run's
  decision, and every look of one run's test (docs/sequential.md).

Filters are optional: None means all. `runs` and `policies` take lists; `variant` a name (as in
the run manifest); `players` a field size. Every result is a pandas DataFrame whose rows carry
`run` (plus `ruleset` and `variant` where they are per run); numbers come with their counts.
Values go into SQL as $named parameters, never by string formatting.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

#: The filter every per-run mart takes: run list, variant (via the runs mart), policies, players.
_FILTER = """
    ($runs is null or list_contains($runs, m.run))
    and ($variant is null or r.variant = $variant)
    and ($policies is null or list_contains($policies, m.policy))
    and ($players is null or m.players = $players)
"""


def _df(con: duckdb.DuckDBPyConnection, sql: str, **params: object) -> pd.DataFrame:
    return con.execute(sql, params).df()


def _list(values: Sequence[str] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        return [values]
    return list(values)


def _per_run(
    con: duckdb.DuckDBPyConnection,
    mart: str,
    order: str,
    runs: Sequence[str] | str | None,
    variant: str | None,
    policies: Sequence[str] | str | None,
    players: int | None,
) -> pd.DataFrame:
    # `mart` and `order` are names from this module, never user input.
    return _df(
        con,
        f"""
        SELECT m.run, r.ruleset, r.variant, m.* EXCLUDE (run)
        FROM {mart} AS m
        JOIN runs AS r ON m.run = r.run
        WHERE {_FILTER}
        ORDER BY {order}
        """,
        runs=_list(runs),
        variant=variant,
        policies=_list(policies),
        players=players,
    )


def runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run: manifest fields beside what is committed now (see the runs mart)."""
    return _df(con, "SELECT * FROM runs ORDER BY created DESC NULLS LAST, run")


def win_rates(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    variant: str | None = None,
    policies: Sequence[str] | str | None = None,
    players: int | None = None,
) -> pd.DataFrame:
    """Win rate, Wilson interval and adjusted win index per run, field size and policy."""
    return _per_run(
        con, "win_rates", "m.run, m.players, m.win_index DESC", runs, variant, policies, players
    )


def points_per_round(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    variant: str | None = None,
    policies: Sequence[str] | str | None = None,
    players: int | None = None,
) -> pd.DataFrame:
    """Mean round score with sd, standard error and 95% interval per run, field size, policy."""
    return _per_run(
        con,
        "points_per_round",
        "m.run, m.players, m.points_per_round DESC",
        runs,
        variant,
        policies,
        players,
    )


def field_size(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    variant: str | None = None,
    policies: Sequence[str] | str | None = None,
) -> pd.DataFrame:
    """Win rate (with interval and index) beside points per round, per run, field size, policy."""
    return _df(
        con,
        f"""
        SELECT
            m.run, r.ruleset, r.variant, m.players, m.policy, m.player_games, m.wins,
            m.win_rate, m.win_rate_lo, m.win_rate_hi, m.expected_rate,
            m.win_index, m.win_index_lo, m.win_index_hi,
            p.rounds, p.points_per_round, p.se AS points_per_round_se,
            p.ppr_lo AS points_per_round_lo, p.ppr_hi AS points_per_round_hi
        FROM win_rates AS m
        JOIN points_per_round AS p USING (run, players, policy)
        JOIN runs AS r ON m.run = r.run
        WHERE {_FILTER}
        ORDER BY m.run, m.policy, m.players
        """,
        runs=_list(runs),
        variant=variant,
        policies=_list(policies),
        players=None,
    )


def rates(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    variant: str | None = None,
    policies: Sequence[str] | str | None = None,
    players: int | None = None,
) -> pd.DataFrame:
    """Bust, Flip 7, stay and freeze rates per round with Wilson intervals."""
    return _per_run(
        con, "round_rates", "m.run, m.players, m.policy", runs, variant, policies, players
    )


def card_counting(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    variant: str | None = None,
) -> pd.DataFrame:
    """Counting vs non-counting twin: gains in points per round and win rate, with errors."""
    return _df(
        con,
        """
        SELECT m.run, r.ruleset, r.variant, m.* EXCLUDE (run)
        FROM card_counting AS m
        JOIN runs AS r ON m.run = r.run
        WHERE ($runs is null or list_contains($runs, m.run))
          and ($variant is null or r.variant = $variant)
        ORDER BY m.run, m.players, m.counting
        """,
        runs=_list(runs),
        variant=variant,
    )


def league(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    variant: str | None = None,
) -> pd.DataFrame:
    """Policies ranked by adjusted win index over every field size they played, per run."""
    return _df(
        con,
        """
        SELECT m.run, r.ruleset, r.variant, m.* EXCLUDE (run)
        FROM league AS m
        JOIN runs AS r ON m.run = r.run
        WHERE ($runs is null or list_contains($runs, m.run))
          and ($variant is null or r.variant = $variant)
        ORDER BY m.run, m.place
        """,
        runs=_list(runs),
        variant=variant,
    )


def head_to_head(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    players: int | None = None,
    policies: Sequence[str] | str | None = None,
) -> pd.DataFrame:
    """Policy vs opponent at the same table: meetings, ahead, behind, tied, share ahead.

    With `players` None, field sizes are pooled (counts added, the interval recomputed).
    """
    return _df(
        con,
        """
        WITH pooled AS (
            SELECT
                run, policy, opponent,
                sum(meetings) AS meetings, sum(ahead) AS ahead,
                sum(behind) AS behind, sum(tied) AS tied
            FROM head_to_head
            WHERE ($runs is null or list_contains($runs, run))
              and ($players is null or players = $players)
              and ($policies is null
                   or (list_contains($policies, policy) and list_contains($policies, opponent)))
            GROUP BY run, policy, opponent
        )
        SELECT
            *,
            ahead / nullif(ahead + behind, 0) AS ahead_share,
            wilson_lo(ahead, ahead + behind) AS ahead_share_lo,
            wilson_hi(ahead, ahead + behind) AS ahead_share_hi
        FROM pooled
        ORDER BY run, policy, opponent
        """,
        runs=_list(runs),
        players=players,
        policies=_list(policies),
    )


def round_distribution(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    policies: Sequence[str] | str | None = None,
    players: int | None = None,
) -> pd.DataFrame:
    """Rounds per score value, share and cumulative share, per run, field size and policy."""
    return _per_run(
        con,
        "round_distribution",
        "m.run, m.players, m.policy, m.score",
        runs,
        None,
        policies,
        players,
    )


def seat_effects(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    players: int | None = None,
    policy: str = "*",
) -> pd.DataFrame:
    """Win rate, win index and points per round by seat ('*' pools every policy)."""
    return _per_run(con, "seat_effects", "m.run, m.players, m.seat", runs, None, [policy], players)


def dealer_positions(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | str | None = None,
    players: int | None = None,
    policy: str = "*",
) -> pd.DataFrame:
    """Points per round, bust and Flip 7 rates by turn position (0 first, players-1 dealer)."""
    return _per_run(
        con, "dealer_positions", "m.run, m.players, m.position", runs, None, [policy], players
    )


def games(
    con: duckdb.DuckDBPyConnection, run: str, limit: int = 100, offset: int = 0
) -> pd.DataFrame:
    """The logged games of a run in id order: line-up, winner, rounds, seed (for a replay)."""
    return _df(
        con,
        "SELECT * FROM fct_games WHERE run = $run ORDER BY game LIMIT $limit OFFSET $offset",
        run=run,
        limit=int(limit),
        offset=int(offset),
    )


def game_timeline(con: duckdb.DuckDBPyConnection, run: str, game: int) -> pd.DataFrame:
    """One logged game card by card, ordered by seq; ValueError if the run has no such game."""
    df = _df(
        con,
        "SELECT * FROM game_timeline WHERE run = $run AND game = $game ORDER BY seq",
        run=run,
        game=int(game),
    )
    if df.empty:
        span = con.execute(
            "SELECT min(game), max(game) FROM stg_games WHERE run = $run", {"run": run}
        ).fetchall()[0]
        where = f"its games are {span[0]}..{span[1]}" if span[0] is not None else "no such run"
        raise ValueError(f"no game {game} in run {run!r} ({where})")
    return df


def variant_comparison(
    con: duckdb.DuckDBPyConnection,
    policies: Sequence[str] | str | None = None,
    players: int | None = None,
) -> pd.DataFrame:
    """Per variant, field size and policy, pooled over the variant's runs: points per round,
    bust and Flip 7 rates and win index, each with its 95% interval and sample size."""
    return _df(
        con,
        """
        SELECT * FROM variant_comparison
        WHERE ($policies is null or list_contains($policies, policy))
          and ($players is null or players = $players)
        ORDER BY players, policy, variant
        """,
        policies=_list(policies),
        players=players,
    )


def variant_round_distribution(
    con: duckdb.DuckDBPyConnection,
    policies: Sequence[str] | str | None = None,
    players: int | None = None,
) -> pd.DataFrame:
    """Round scores per variant (pooled over its runs and the chosen policies): rounds at each
    score and their share of the variant's rounds."""
    return _df(
        con,
        """
        WITH counts AS (
            SELECT r.variant, d.score, sum(d.rounds) AS rounds
            FROM round_distribution AS d JOIN runs AS r ON d.run = r.run
            WHERE ($policies is null or list_contains($policies, d.policy))
              and ($players is null or d.players = $players)
            GROUP BY r.variant, d.score
        )
        SELECT variant, score, rounds, rounds / sum(rounds) OVER (PARTITION BY variant) AS share
        FROM counts
        ORDER BY variant, score
        """,
        policies=_list(policies),
        players=players,
    )


def sprt_tests(
    con: duckdb.DuckDBPyConnection, runs: Sequence[str] | str | None = None
) -> pd.DataFrame:
    """Per run with a sequential test (SPRT): what it compared, H0/H1, alpha/beta, and its
    decision (or 'undecided') after how many games, with A - B and its 95% interval."""
    return _df(
        con,
        "SELECT * FROM sprt_tests WHERE $runs is null or list_contains($runs, run) ORDER BY run",
        runs=_list(runs),
    )


def sprt_waves(con: duckdb.DuckDBPyConnection, run: str) -> pd.DataFrame:
    """Every look of one run's sequential test, in order: games, estimate with its interval,
    the LLR between its bounds, the decision at the deciding look."""
    return _df(con, "SELECT * FROM sprt_waves WHERE run = $run ORDER BY wave", run=run)
