"""`flip7 report RUN`: the headline analyses of one run as readable tables.

Every figure is per cell (line-up and field size of the run), with its sample size and its
95% interval in a column of its own, clustered by game as docs/warehouse.md defines: field
size (win rate, adjusted win index, pooled points per round per cell and policy), how rounds
end (bust and Flip 7 rates per cell and policy), card counting (counting minus non-counting
twin, paired on common random numbers where the run has them) and the policy comparison (the
league: the adjusted win index, the one named aggregate over all of the run's cells). It reads
only the compact games and rounds tables (through the marts, as views: each table is computed
once, straight from Parquet).
"""

from __future__ import annotations

import duckdb

from warehouse import queries
from warehouse.text import interval, num, pct, pp, table

CI = "95% interval"
TEXT = ("line-up", "policy", "comparison", "method")  # the columns aligned left


def report(con: duckdb.DuckDBPyConnection, run: str) -> list[str]:
    """The report's lines for one run of the connection's lake."""
    info = queries.runs(con)
    info = info[info.run == run]
    if info.empty:
        raise ValueError(f"no run {run!r} in this lake")
    r = info.iloc[0]
    planned = f"/{int(r.planned_games):,}" if r.planned_games == r.planned_games else ""
    lines = [
        f"Run {run}: {int(r.games):,}{planned} games, {int(r.shards)} shards committed, "
        f"status {r.status}; ruleset {r.ruleset}, variant {r.variant}, seed {r.seed}",
        *sprt_lines(con, run),  # a sequential test's decision, if the run has one
        "Figures are per cell (line-up x field size). Intervals are 95%, clustered by game (by "
        "pair of games for paired comparisons); n/a under two games.",
        "",
    ]

    fs = queries.field_size(con, runs=[run])
    lines += [
        "Field size: win rate (wins / seats), adjusted win index (win rate x players; 1.00 = "
        "average seat), points per round (points / rounds played).",
        *table(
            [
                [
                    x.lineup,
                    int(x.players),
                    x.policy,
                    int(x.games),
                    int(x.player_games),
                    pct(x.win_rate),
                    interval(x.win_rate_lo, x.win_rate_hi, scale=100),
                    num(x.win_index, 3),
                    interval(x.win_index_lo, x.win_index_hi, 3),
                    int(x.rounds),
                    num(x.points_per_round),
                    interval(x.points_per_round_lo, x.points_per_round_hi),
                ]
                for x in fs.sort_values(
                    ["lineup", "players", "win_index"], ascending=[True, True, False]
                ).itertuples()
            ],
            [
                "line-up",
                "players",
                "policy",
                "games",
                "seats",
                "win rate",
                CI,
                "win index",
                CI,
                "rounds",
                "points/round",
                CI,
            ],
            TEXT,
        ),
        "",
    ]

    rates = queries.rates(con, runs=[run])
    lines += [
        "How rounds end: bust and Flip 7 rates per round played.",
        *table(
            [
                [
                    x.lineup,
                    int(x.players),
                    x.policy,
                    int(x.rounds),
                    pct(x.bust_rate),
                    interval(x.bust_rate_lo, x.bust_rate_hi, scale=100),
                    pct(x.flip7_rate),
                    interval(x.flip7_rate_lo, x.flip7_rate_hi, scale=100),
                ]
                for x in rates.sort_values(["lineup", "players", "policy"]).itertuples()
            ],
            ["line-up", "players", "policy", "rounds", "bust rate", CI, "Flip 7 rate", CI],
            TEXT,
        ),
        "",
    ]

    cc = queries.card_counting(con, runs=[run])
    lines.append(
        "Card counting: counting policy minus its non-counting twin, each in its line-up. "
        "paired = common random numbers (n = game pairs); unpaired = n games of the two "
        "line-ups."
    )
    if cc.empty:
        lines.append("(no counting policy played beside its twin in this run)")
    else:
        lines += table(
            [
                [
                    int(x.players),
                    f"{x.counting} vs {x.base}",
                    x.lineup if x.lineup == x.base_lineup else f"{x.lineup} vs {x.base_lineup}",
                    x.method,
                    int(x.games),
                    num(x.ppr_gain, 3, sign=True),
                    interval(x.ppr_gain_lo, x.ppr_gain_hi, 3, sign=True),
                    pp(x.win_gain),
                    interval(x.win_gain_lo, x.win_gain_hi, scale=100, sign=True),
                ]
                for x in cc.itertuples()
            ],
            [
                "players",
                "comparison",
                "line-up",
                "method",
                "n",
                "points/round gain",
                CI,
                "win-rate gain",
                CI + " (pp)",
            ],
            TEXT,
        )
    lines.append("")

    lg = queries.league(con, runs=[run])
    lines += [
        "Policy comparison: league by adjusted win index, a named aggregate over every cell the "
        "policy played: its wins / its expected wins (1/n per seat at an n-player table).",
        *table(
            [
                [
                    int(x.place),
                    x.policy,
                    ",".join(str(p) for p in x.field_sizes),
                    len(x.lineups),
                    int(x.games),
                    int(x.player_games),
                    num(x.win_index, 3),
                    interval(x.win_index_lo, x.win_index_hi, 3),
                ]
                for x in lg.itertuples()
            ],
            ["place", "policy", "players", "line-ups", "games", "seats", "win index", CI],
            TEXT,
        ),
    ]
    return lines


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
