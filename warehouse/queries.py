"""Named, typed queries over the marts: what the dashboard and the report read (and nothing else).

Open a connection with `warehouse.connect(data_dir=None, runs=None, materialize=False)`, then:

- `runs(con)`: one row per run: status, ruleset, variant, seed, planned vs committed shards and
  games, rows per table, field sizes, policies.
Every figure is per cell: (run, variant, ruleset, field size, line-up), the rows' first five
columns (`lineup` is the line-up's label: the spec's [[lineups]] name, else its policies joined
by commas). Every interval is 95%, clustered by game (by CRN pair for paired comparisons); see
docs/warehouse.md for the definitions.

- `lineups(con, runs)`: the cells of each run, one row per line-up: its field sizes and policies.
- `win_rates(con, runs, variant, policies, players, lineup)`: per cell and policy: games,
  player games (seats), wins, win rate with its interval, the adjusted win index (win rate x n,
  1 = an average seat) with its interval, mean finishing rank.
- `points_per_round(...)`: pooled points per round (points / rounds), standard error, interval.
- `field_size(...)`: win rates and points per round side by side (more points is not more wins).
- `rates(...)`: bust, Flip 7, stay and freeze rates per round, each with its interval.
- `card_counting(con, runs, variant)`: counting policy vs its twin (evc/ev, bustc:P/bust:P) in
  named cells: gains in points per round and win rate with standard errors and intervals,
  paired on common random numbers where the run has them (`method` says which).
- `league(con, runs, variant)`: policies ranked by the adjusted win index, a named aggregate
  over every cell of the run.
- `head_to_head(con, runs, players, policies, lineup)`: per cell, how often each policy finished
  ahead of each other one at the same table (meetings, ahead, behind, tied, share, interval).
- `round_distribution(con, runs, policies, players, lineup)`: rounds per score value, share,
  cumulative share.
- `seat_effects(con, runs, players, policy, lineup)` and `dealer_positions(...)`: by seat, and by
  turn position relative to the dealer (policy '*' pools all policies of the cell).
- `games(con, run, limit, offset)`: the logged games of a run (line-up, winner, length, seed).
- `game_timeline(con, run, game)`: one game card by card, in order, for a replay.
- `variant_comparison(con, policies, players, lineup, ruleset, seating)` and
  `variant_round_distribution(...)`: classic against "With a Vengeance": each policy's points,
  bust and Flip 7 rates and win index per cell without its run (variant, ruleset, field size,
  line-up label and seating, pooled over the runs that played it), and the round-score
  distribution of those cells, one per variant, ruleset and seating.
- `sprt_tests(con, runs)` and `sprt_waves(con, run)`: sequential tests (SPRT): each run's
  decision, and every look of one run's test (docs/sequential.md).
- `ranking_stops(con, run)`: a league that stops by its ranking: each adjacent pair's
  head-to-head rate and verdict at the deciding (else the last) look (docs/sequential.md).

Filters are optional: None means all. `runs` and `policies` take lists; `variant` a name (as in
the run manifest); `players` a field size; `lineup` a line-up label. Every result is a pandas
DataFrame; numbers come with their counts.
Values go into SQL as $named parameters, never by string formatting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pandas as pd

#: A filter over names (runs, policies): one name, several, or None for all.
Names = Sequence[str] | str | None
Connection = duckdb.DuckDBPyConnection

#: The filter every per-cell mart takes: run list, variant, policies, players, line-up.
_FILTER = """
    ($runs is null or list_contains($runs, m.run))
    and ($variant is null or m.variant = $variant)
    and ($policies is null or list_contains($policies, m.policy))
    and ($players is null or m.players = $players)
    and ($lineup is null or m.lineup = $lineup)
"""


def _df(con: Connection, sql: str, **params: object) -> pd.DataFrame:
    return con.execute(sql, params).df()


def _list(values: Names) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        return [values]
    return list(values)


def _per_cell(
    con: Connection,
    mart: str,
    order: str,
    runs: Names,
    variant: str | None,
    policies: Names,
    players: int | None,
    lineup: str | None = None,
) -> pd.DataFrame:
    # `mart` and `order` are names from this module, never user input.
    return _df(
        con,
        f"SELECT m.* FROM {mart} AS m WHERE {_FILTER} ORDER BY {order}",
        runs=_list(runs),
        variant=variant,
        policies=_list(policies),
        players=players,
        lineup=lineup,
    )


def runs(con: Connection) -> pd.DataFrame:
    """Every run: manifest fields beside what is committed now (see the runs mart)."""
    return _df(con, "SELECT * FROM runs ORDER BY created DESC NULLS LAST, run")


def lineups(con: Connection, runs: Names = None) -> pd.DataFrame:
    """One row per run and line-up label: the field sizes it was played at (its cells) and its
    policies; line-ups over more field sizes first."""
    return _df(
        con,
        """
        SELECT
            run, any_value(variant) AS variant, any_value(ruleset) AS ruleset, lineup,
            list(DISTINCT players ORDER BY players) AS field_sizes,
            list(DISTINCT policy ORDER BY policy) AS policies
        FROM win_rates
        WHERE ($runs is null or list_contains($runs, run))
        GROUP BY run, lineup
        ORDER BY run, len(field_sizes) DESC, lineup
        """,
        runs=_list(runs),
    )


@dataclass(frozen=True)
class _Query:
    """A named query object: its `doc` is its docstring (what help text and inspect.getdoc
    show for it, as for a function)."""

    doc: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "__doc__", self.doc)


@dataclass(frozen=True)
class CellQuery(_Query):
    """A per-cell mart through the common filter (`_FILTER`): one row per cell and policy."""

    mart: str
    order: str  # the ORDER BY of the result, over the mart's alias `m`

    def __call__(
        self,
        con: Connection,
        runs: Names = None,
        variant: str | None = None,
        policies: Names = None,
        players: int | None = None,
        lineup: str | None = None,
    ) -> pd.DataFrame:
        return _per_cell(con, self.mart, self.order, runs, variant, policies, players, lineup)


@dataclass(frozen=True)
class SeatQuery(_Query):
    """A per-cell mart by seat or turn position, for one policy ('*' pools every policy)."""

    mart: str
    order: str

    def __call__(
        self,
        con: Connection,
        runs: Names = None,
        players: int | None = None,
        policy: str = "*",
        lineup: str | None = None,
    ) -> pd.DataFrame:
        return _per_cell(con, self.mart, self.order, runs, None, [policy], players, lineup)


@dataclass(frozen=True)
class RunQuery(_Query):
    """A mart filtered by run and variant only (its rows are not per policy and cell)."""

    mart: str
    order: str

    def __call__(
        self, con: Connection, runs: Names = None, variant: str | None = None
    ) -> pd.DataFrame:
        return _df(
            con,
            f"""
            SELECT m.* FROM {self.mart} AS m
            WHERE ($runs is null or list_contains($runs, m.run))
              and ($variant is null or m.variant = $variant)
            ORDER BY {self.order}
            """,
            runs=_list(runs),
            variant=variant,
        )


win_rates = CellQuery(
    "Win rate and adjusted win index with their intervals per cell and policy.",
    "win_rates",
    "m.run, m.players, m.lineup, m.win_index DESC",
)
points_per_round = CellQuery(
    "Pooled points per round with standard error and 95% interval per cell and policy.",
    "points_per_round",
    "m.run, m.players, m.lineup, m.points_per_round DESC",
)
rates = CellQuery(
    "Bust, Flip 7, stay and freeze rates per round with their intervals, per cell.",
    "round_rates",
    "m.run, m.players, m.lineup, m.policy",
)


def field_size(
    con: Connection,
    runs: Names = None,
    variant: str | None = None,
    policies: Names = None,
    lineup: str | None = None,
) -> pd.DataFrame:
    """Win rate (with interval and index) beside points per round, per cell and policy."""
    return _df(
        con,
        f"""
        SELECT
            m.run, m.variant, m.ruleset, m.players, m.lineup, m.policy, m.games,
            m.player_games, m.wins, m.win_rate, m.win_rate_lo, m.win_rate_hi, m.expected_rate,
            m.win_index, m.win_index_lo, m.win_index_hi,
            p.rounds, p.points_per_round, p.se AS points_per_round_se,
            p.ppr_lo AS points_per_round_lo, p.ppr_hi AS points_per_round_hi
        FROM win_rates AS m
        JOIN points_per_round AS p USING (run, variant, ruleset, players, lineup, policy)
        WHERE {_FILTER}
        ORDER BY m.run, m.lineup, m.policy, m.players
        """,
        runs=_list(runs),
        variant=variant,
        policies=_list(policies),
        players=None,
        lineup=lineup,
    )


card_counting = RunQuery(
    "Counting vs non-counting twin: gains in points per round and win rate, with errors.",
    "card_counting",
    "m.run, m.players, m.lineup, m.base_lineup, m.counting",
)
league = RunQuery(
    "Policies ranked by the adjusted win index over every cell they played, per run.",
    "league",
    "m.run, m.place",
)


def head_to_head(
    con: Connection,
    runs: Names = None,
    players: int | None = None,
    policies: Names = None,
    lineup: str | None = None,
) -> pd.DataFrame:
    """Policy vs opponent per cell: meetings, ahead, behind, tied, share ahead with interval.

    `policies` keeps the meetings where both sides are among them.
    """
    return _df(
        con,
        """
        SELECT * FROM head_to_head
        WHERE ($runs is null or list_contains($runs, run))
          and ($players is null or players = $players)
          and ($lineup is null or lineup = $lineup)
          and ($policies is null
               or (list_contains($policies, policy) and list_contains($policies, opponent)))
        ORDER BY run, players, lineup, policy, opponent
        """,
        runs=_list(runs),
        players=players,
        policies=_list(policies),
        lineup=lineup,
    )


def round_distribution(
    con: Connection,
    runs: Names = None,
    policies: Names = None,
    players: int | None = None,
    lineup: str | None = None,
) -> pd.DataFrame:
    """Rounds per score value, share and cumulative share, per cell and policy."""
    order = "m.run, m.players, m.lineup, m.policy, m.score"
    return _per_cell(con, "round_distribution", order, runs, None, policies, players, lineup)


seat_effects = SeatQuery(
    "Win rate, win index and points per round by seat per cell ('*' pools every policy).",
    "seat_effects",
    "m.run, m.players, m.lineup, m.seat",
)
dealer_positions = SeatQuery(
    "Points per round, bust and Flip 7 rates by turn position (0 first, players-1 dealer).",
    "dealer_positions",
    "m.run, m.players, m.lineup, m.position",
)


def games(con: Connection, run: str, limit: int = 100, offset: int = 0) -> pd.DataFrame:
    """The logged games of a run in id order: line-up, winner, rounds, seed (for a replay)."""
    return _df(
        con,
        "SELECT * FROM fct_games WHERE run = $run ORDER BY game LIMIT $limit OFFSET $offset",
        run=run,
        limit=int(limit),
        offset=int(offset),
    )


def game_ids(con: Connection, run: str) -> tuple[int, int, int] | None:
    """(lowest, highest, how many) of a run's logged game ids; None for a run without games."""
    lo, hi, n = con.execute(
        "SELECT min(game), max(game), count(*) FROM fct_games WHERE run = $run", {"run": run}
    ).fetchall()[0]
    return None if lo is None else (int(lo), int(hi), int(n))


def game(con: Connection, run: str, game: int) -> pd.DataFrame:
    """One logged game's row of `games` (empty when the run has no game of that id)."""
    return _df(
        con, "SELECT * FROM fct_games WHERE run = $run AND game = $game", run=run, game=int(game)
    )


def game_timeline(con: Connection, run: str, game: int) -> pd.DataFrame:
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


#: The filter of a variant_comparison cell (without its policy): field size, line-up label,
#: ruleset and seating.
_VARIANT_CELL = """
    ($players is null or players = $players)
    and ($lineup is null or lineup = $lineup)
    and ($ruleset is null or ruleset = $ruleset)
    and ($seating is null or seating = $seating)
"""


@dataclass(frozen=True)
class VariantQuery(_Query):
    """A query over variant_comparison's cells (pooled over runs), filtered by policy, field
    size, line-up label, ruleset and seating."""

    sql: str  # its text, with `_VARIANT_CELL` in it and $policies where it filters by policy

    def __call__(
        self,
        con: Connection,
        policies: Names = None,
        players: int | None = None,
        lineup: str | None = None,
        ruleset: str | None = None,
        seating: str | None = None,
    ) -> pd.DataFrame:
        return _df(
            con,
            self.sql,
            policies=_list(policies),
            players=players,
            lineup=lineup,
            ruleset=ruleset,
            seating=seating,
        )


variant_comparison = VariantQuery(
    "Per variant, ruleset, field size, line-up (label and seating) and policy, pooled over the "
    "runs that played that cell: points per round, bust and Flip 7 rates and win index, each with "
    "its 95% interval and sample size (`shuffles` < `games`: some of its runs replayed others' "
    "games, see the mart).",
    f"""
    SELECT * FROM variant_comparison
    WHERE ($policies is null or list_contains($policies, policy)) and {_VARIANT_CELL}
    ORDER BY players, lineup, seating, policy, variant, ruleset
    """,
)

variant_round_distribution = VariantQuery(
    "Round scores per cell of variant_comparison (variant, ruleset, field size, line-up label and "
    "seating): rounds at each score and their share of the cell's rounds, over the rounds of the "
    "chosen policies (all when None) in every run that the cell pools (a distribution of rounds, "
    "not a figure with an interval). Rulesets and seatings are never added together: each is its "
    "own distribution, as in variant_comparison.",
    f"""
    WITH cells AS (
        SELECT DISTINCT variant, ruleset, players, lineup, seating, unnest(pooled_runs) AS run
        FROM variant_comparison
        WHERE {_VARIANT_CELL}
    ),
    counts AS (
        SELECT d.variant, d.ruleset, c.seating, d.score, sum(d.rounds) AS rounds
        FROM round_distribution AS d
        JOIN cells AS c USING (run, variant, ruleset, players, lineup)
        WHERE ($policies is null or list_contains($policies, d.policy))
        GROUP BY d.variant, d.ruleset, c.seating, d.score
    )
    SELECT
        variant, ruleset, seating, score, rounds,
        rounds / sum(rounds) OVER (PARTITION BY variant, ruleset, seating) AS share
    FROM counts
    ORDER BY variant, ruleset, seating, score
    """,
)


def sprt_tests(con: Connection, runs: Names = None) -> pd.DataFrame:
    """Per run with a sequential test (SPRT): what it compared, H0/H1, alpha/beta, and its
    decision (or 'undecided') after how many games, with A - B and its 95% interval."""
    return _df(
        con,
        "SELECT * FROM sprt_tests WHERE $runs is null or list_contains($runs, run) ORDER BY run",
        runs=_list(runs),
    )


def sprt_waves(con: Connection, run: str) -> pd.DataFrame:
    """Every look of one run's sequential test, in order: games, estimate with its interval,
    the LLR between its bounds, the decision at the deciding look."""
    return _df(con, "SELECT * FROM sprt_waves WHERE run = $run ORDER BY wave", run=run)


def ranking_stops(con: Connection, run: str) -> pd.DataFrame:
    """The adjacent pairs of a run's ranking test, best first: each pair's head-to-head rate
    with its interval, its LLR between the bounds, and its verdict (empty for other runs)."""
    return _df(con, "SELECT * FROM ranking_stops WHERE run = $run ORDER BY place", run=run)


def cell_results(con: Connection, runs: Names = None, lineup: str | None = None) -> pd.DataFrame:
    """Per cell, all seats pooled: games, rounds per game, points per round, bust and Flip 7
    rates, each with its 95% interval: what a run's rule choices change, line-up by line-up."""
    return _df(
        con,
        """
        SELECT * FROM cell_results
        WHERE ($runs is null or list_contains($runs, run))
          and ($lineup is null or lineup = $lineup)
        ORDER BY run, lineup, players, ruleset
        """,
        runs=_list(runs),
        lineup=lineup,
    )
