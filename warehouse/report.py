"""`flip7 report RUN`: the headline analyses of one run as readable tables.

Three tables, each number with its 95% interval and its sample size: field size (win rate,
adjusted win index, points per round per field size and policy), card counting (counting minus
non-counting twin, paired on common random numbers where the run has them) and the policy
comparison (a league over all field sizes). It reads only the compact games and rounds tables
(through the marts, as views: each table is computed once, straight from Parquet).
"""

from __future__ import annotations

import duckdb

from warehouse import queries
from warehouse.text import num, pct, pp, table


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
        "Intervals are 95%: Wilson for rates, normal (1.96 standard errors) for means and gains.",
        "",
    ]

    fs = queries.field_size(con, runs=[run])
    lines += [
        "Field size: win rate, adjusted win index (wins / expected wins at 1/n; 1.00 = average "
        "seat), points per round. n = player-games.",
        *table(
            [
                [
                    int(x.players),
                    x.policy,
                    int(x.player_games),
                    pct(x.win_rate, x.win_rate_lo, x.win_rate_hi),
                    num(x.win_index, x.win_index_lo, x.win_index_hi, 3),
                    int(x.rounds),
                    num(x.points_per_round, x.points_per_round_lo, x.points_per_round_hi),
                ]
                for x in fs.sort_values(
                    ["players", "win_index"], ascending=[True, False]
                ).itertuples()
            ],
            ["players", "policy", "n", "win rate", "win index", "rounds", "points/round"],
        ),
        "",
    ]

    cc = queries.card_counting(con, runs=[run])
    lines.append(
        "Card counting: counting policy minus its non-counting twin. paired = common random "
        "numbers (n = game pairs); unpaired = separate seats (n = player-games each)."
    )
    if cc.empty:
        lines.append("(no counting policy played beside its twin in this run)")
    else:
        lines += table(
            [
                [
                    int(x.players),
                    f"{x.counting} vs {x.base}",
                    x.method,
                    int(x.pairs)
                    if x.method == "paired"
                    else f"{int(x.n_counting)}/{int(x.n_base)}",
                    num(x.ppr_gain, x.ppr_gain_lo, x.ppr_gain_hi, 3, sign=True),
                    f"{x.ppr_gain_se:.3f}",
                    pp(x.win_gain, x.win_gain_lo, x.win_gain_hi),
                    f"{100 * x.win_gain_se:.2f}",
                ]
                for x in cc.itertuples()
            ],
            [
                "players",
                "comparison",
                "method",
                "n",
                "points/round gain",
                "se",
                "win-rate gain",
                "se (pp)",
            ],
        )
    lines.append("")

    lg = queries.league(con, runs=[run])
    lines += [
        "Policy comparison: league over all field sizes, by adjusted win index. n = player-games;"
        " bust and Flip 7 rates are per round played.",
        *table(
            [
                [
                    int(x.place),
                    x.policy,
                    ",".join(str(p) for p in x.field_sizes),
                    int(x.player_games),
                    num(x.win_index, x.win_index_lo, x.win_index_hi, 3),
                    pct(x.win_rate, x.win_rate_lo, x.win_rate_hi),
                    f"{x.points_per_round:.2f} ± {1.959963984540054 * x.points_per_round_se:.2f}",
                    pct(x.bust_rate, x.bust_rate_lo, x.bust_rate_hi),
                    pct(x.flip7_rate, x.flip7_rate_lo, x.flip7_rate_hi),
                    f"{x.mean_rank:.3f}",
                ]
                for x in lg.itertuples()
            ],
            [
                "place",
                "policy",
                "players",
                "n",
                "win index",
                "win rate",
                "points/round",
                "bust",
                "flip 7",
                "mean rank",
            ],
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
