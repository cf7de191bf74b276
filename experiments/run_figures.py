"""The figures README and docs take from runs, each with its command, for experiments/figures.py:
the tournaments' cells (lake_figures.py), the sequential tests' decisions, the comparison with
Murch's simulator (`flip7 sim`, experiments/murch_ppr.py) and the play-to-win study."""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable

from figure_runs import lake, num, pct, printed, run, sim
from lake_figures import (
    RULES_SCALE,
    counting_prose,
    counting_readme,
    counting_rows,
    field_prose,
    field_readme,
    field_rows,
    policies_matrix,
    policies_prose,
    policies_readme,
    policies_ten,
    rules_prose,
    rules_readme,
    rules_rows,
)

# -- sequential tests ----------------------------------------------------------------------------


def sprt_status(spec: str, looks: bool = True) -> list[str]:
    """`flip7 tournament status SPEC`'s test: its answer, then its decision line and each look
    (the decision, its games and its looks are the same on any number of workers)."""
    name = run(spec)
    out = printed([sys.executable, "-m", "flip7", "tournament", "status", name, "--data", lake()])
    (decided,) = [line for line in out if line.startswith(("H1 accepted", "H0 accepted"))]
    answer = decided.split(" after ")[0] + ": " + decided.split(": ", 1)[1].split(" percentage")[0]
    if not looks:
        return [f"{answer} points of win rate"]
    steps = [line.strip() for line in out if line.strip()[:1].isdigit() and "±" in line]
    return [f"{answer} points of win rate", decided, *steps]


def sprt_readme() -> list[str]:
    """README's comment on the demo: its decision, shortened."""
    decided = sprt_status("sprt-demo")[1]
    return [decided.split(" percentage points")[0] + " points"]


# -- points per round against Murch's simulator --------------------------------------------------


def murch_sim_rows() -> list[str]:
    """`flip7 sim -p ev,bust:0.25 --players N --ruleset immediate -n 60000` at 2, 4 and 6."""
    out = []
    for n in (2, 4, 6):
        got = sim(
            "-p", "ev,bust:0.25", "--players", str(n), "--ruleset", "immediate", "-n", "60000"
        )
        p = {x["policy"]: x for x in got["policies"]}
        ppr = [p[k]["points_per_round"] for k in ("ev", "bust:0.25")]
        w = p["ev"]["win_rate"]
        out.append(
            f"| {n} | {num(ppr[0]['value'], ppr[0]['lo'], ppr[0]['hi'], 3)} | "
            f"{num(ppr[1]['value'], ppr[1]['lo'], ppr[1]['hi'], 3)} | "
            f"{pct(w['value'], w['lo'], w['hi'])} |"
        )
    return out


#: `python experiments/murch_ppr.py --games MURCH_GAMES` (seed 11), reference engine.
MURCH_GAMES = 20000


@functools.cache
def _murch(players: int, freeze: str):  # type: ignore[no-untyped-def]
    from murch_ppr import measure  # the sibling script

    return measure(players, MURCH_GAMES, 11, freeze)


def murch_split() -> list[str]:
    """Where the figure grows with the table: points per frozen round and per other round."""
    by = {n: _murch(n, "flip7") for n in (2, 4, 6)}

    def span(spec: str) -> str:
        xs = [by[n][spec].other_ppr for n in (2, 4, 6)]
        return f"{min(xs):.2f} to {max(xs):.2f}"

    shares = [f.frozen_share for n in (2, 4, 6) for f in by[n].values()]

    def frozen(spec: str) -> str:
        return ", ".join(f"{by[n][spec].frozen_ppr:.1f}" for n in (2, 4)) + (
            f" and {by[6][spec].frozen_ppr:.1f}"
        )

    return [
        f"({span('bust:0.25')} points for `bust:0.25`, {span('ev')} for `ev`); the frozen ones "
        f"({100 * min(shares):.0f}-{100 * max(shares):.0f}% of rounds) bank "
        f"{frozen('bust:0.25')} points (`bust:0.25`) and {frozen('ev')} (`ev`) at 2, 4 and 6 "
        "players",
    ]


def murch_readings() -> list[str]:
    """The readings of the Freeze's target against the default: points per round at 4 and 6
    players (z of the difference) and the largest move of a win rate."""
    cells = [(n, spec) for n in (4, 6) for spec in ("ev", "bust:0.25")]
    base = {n: _murch(n, "flip7") for n in (4, 6)}
    rows = ["| " + " | ".join(f"{base[n][s].ppr.value:.3f}" for n, s in cells) + " |"]
    for freeze in ("turn", "threat"):
        got = {n: _murch(n, freeze) for n in (4, 6)}

        def diff(a, b, scale: float = 1.0) -> tuple[float, float]:  # type: ignore[no-untyped-def]
            se = ((a.half_width**2 + b.half_width**2) ** 0.5) / 1.96
            return scale * (b.value - a.value), abs(b.value - a.value) / se

        ppr = [diff(base[n][s].ppr, got[n][s].ppr) for n, s in cells]
        win = [diff(base[n][s].win, got[n][s].win, 100) for n, s in cells]
        rows.append(
            "| "
            + " | ".join(f"{d:+.3f} (z {z:.1f})" for d, z in ppr)
            + f" | within {max(abs(d) for d, _ in win):.2f} points, "
            f"z < {math.floor(10 * max(z for _, z in win) + 1) / 10:.1f} |"
        )
    return rows


# -- the play-to-win study -----------------------------------------------------------------------


@functools.cache
def _study():  # type: ignore[no-untyped-def]
    import play_to_win_report as ptw  # the sibling script

    return ptw, ptw.study(lake(), run("play-to-win"))


def play_to_win_tables() -> list[str]:
    """`python experiments/play_to_win_report.py`'s tables over the study's run, and the
    ranges the page reads off them."""
    ptw, games = _study()
    return [*ptw.win_rate_rows(games), *ptw.paired_rows(games), *ptw.summary(games)[:2]]


def play_to_win_readme() -> list[str]:
    """README's two sentences on the study: win above its fair share, and over dp."""
    ptw, games = _study()
    return ptw.summary(games)[2:]


# -- the pages -----------------------------------------------------------------------------------

EXP, README, SEQ, PTW = (
    "docs/experiments.md",
    "README.md",
    "docs/sequential.md",
    "docs/play-to-win.md",
)
FIELD = "flip7 tournament run experiments/field-size.toml; flip7 sql (win_rates, points_per_round, round_rates)"
COUNTING = (
    "flip7 tournament run experiments/card-counting.toml; flip7 sql (card_counting, round_rates)"
)
POLICIES = "flip7 tournament run experiments/policies.toml; flip7 sql (win_rates, league, ...)"
RULES = (
    f"flip7 tournament run experiments/rulesets.toml --scale {RULES_SCALE:g}; "
    "flip7 sql (cell_results, win_rates)"
)
MURCH = (
    f"python experiments/murch_ppr.py --players 2 4 6 --games {MURCH_GAMES} [--freeze turn|threat]"
)
PTW_COMMAND = (
    "flip7 tournament run experiments/play-to-win.toml; python experiments/play_to_win_report.py"
)
#: The tournaments' sections of docs/experiments.md: (section, command, its figures there, its
#: finding in README's "What the experiments show").
TOURNAMENTS = (
    ("Field size", FIELD, (field_rows, field_prose), field_readme),
    ("Card counting", COUNTING, (counting_rows, counting_prose), counting_readme),
    ("Policies", POLICIES, (policies_matrix, policies_prose, policies_ten), policies_readme),
    ("The effect of the rules", RULES, (rules_rows, rules_prose), rules_readme),
)
#: (page, section, command, what it prints): every figure here is from a run (not cheap).
FIGURES: list[tuple[str, str, str, Callable[[], list[str]]]] = [
    *((EXP, section, command, f) for section, command, fs, _ in TOURNAMENTS for f in fs),
    *(
        (README, "What the experiments show", command, finding)
        for _, command, _, finding in TOURNAMENTS
    ),
    (
        EXP,
        "Points per round against Murch's simulator",
        "flip7 sim -p ev,bust:0.25 --players 2|4|6 --ruleset immediate -n 60000",
        murch_sim_rows,
    ),
    (EXP, "Points per round against Murch's simulator", MURCH, murch_split),
    (EXP, "Points per round against Murch's simulator", MURCH, murch_readings),
    *(
        (
            SEQ,
            "Worked example",
            f"flip7 tournament run experiments/{spec}.toml; flip7 tournament status {spec}",
            functools.partial(sprt_status, spec, looks=spec == "sprt-demo"),
        )
        for spec in ("sprt-demo", "sprt-demo-fixed")
    ),
    (README, "Sequential tests", "flip7 tournament run experiments/sprt-demo.toml", sprt_readme),
    (
        PTW,
        "The play-to-win study",
        PTW_COMMAND,
        play_to_win_tables,
    ),
    (README, "The exact solver: playing to win", PTW_COMMAND, play_to_win_readme),
]
