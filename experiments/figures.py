"""The figures README and docs state, regenerated from the code, each with its command.

    python experiments/figures.py                      # every figure, page by page
    python experiments/figures.py docs/play-to-win.md  # one page
    python experiments/figures.py --cheap              # the exact, cheap ones only (seconds)
    python experiments/figures.py --check              # exit 1 naming each figure a page lacks
    python experiments/figures.py --data DIR           # keep the tournaments' lake for next time

A figure is the text a page states, as the code gives it today: a table row of the solver's
race, a rate from `flip7 sim` with its interval, a cell of a shipped tournament as the lake's
marts give it. The script prints each one under the command that produces it, so a change in
what a policy means (bust:0.25 once stood for another rule here) shows up as a figure the page
no longer states: `--check` compares every figure with its page, whitespace and line breaks
aside. tests/test_figures.py runs the cheap ones (exact solver values, a few seconds) on every
test run; the rest run here: the solver's longer solves, the simulations, and (run_figures.py,
lake_figures.py) the shipped tournaments (every game seeded by its spec; about 4.3M games, a
few CPU minutes on the compiled kernel, plus the play-to-win study's `win` seats: its tables
solve on first use), `experiments/murch_ppr.py` on the reference engine and the play-to-win
study's report.

Figures a page states that are not here: timings and sizes on disk (they measure a machine, not
the code), the league's ratings (docs/experiments.md: `flip7 ratings` over the league run), the
`full` model's slower solves in docs/solver.md, `flip7 odds`'s figures, the games a sequential
run plays past its decision (they depend on the shards in flight), the screens of other
readings in docs/experiments.md's comparison with Murch's simulator (no shipped script), and
the benchmarks' own figures (`python benchmarks/sprt_oc.py`: the test's operating
characteristics).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import figure_runs  # runs the commands: tournaments into a lake, flip7 sim, flip7 sql
import run_figures  # the figures from runs: tournaments, simulations, experiment scripts
from figure_runs import sim

ROOT = Path(__file__).resolve().parent.parent
#: The race-optimal policy's expected rounds to 200 (model basic), as `flip7 solve --race`
#: solves it (about a minute of CPU). The cheap figures take the gaps to it from here; the
#: race's own figure (not cheap) checks that the solve still gives it.
RACE_BASIC_200 = 9.38339688840503
#: The solo real-game policies of docs/play-to-win.md, as `flip7 solve --race` lists them.
SOLO = ("race", "dp", "ev", "sum:25", "bust:0.25")


@dataclass(frozen=True)
class Figure:
    """Text a page states (`lines`, each found in the page, whitespace aside), the command
    that prints it, and whether it is cheap (exact, seconds: the test runs it)."""

    page: str
    section: str
    command: str
    lines: Callable[[], list[str]]
    cheap: bool


# -- what the commands compute ------------------------------------------------------------------


@functools.cache
def _basic_space():  # type: ignore[no-untyped-def]
    from flip7.solver.model import build_space, get_model

    return build_space(get_model("basic"))


@functools.cache
def _fixed_rows() -> tuple:  # type: ignore[type-arg]
    """dp, ev and the best sum:N and bust:P in the race to 200, as `flip7 solve --race`."""
    from flip7.solver.race import fixed_rows

    return tuple(fixed_rows(_basic_space(), 200))


def _row(label: str):  # type: ignore[no-untyped-def]
    (row,) = [r for r in _fixed_rows() if r.label == label]
    return row.chain


def _race_lines(rows: list, base: float) -> list[str]:  # type: ignore[type-arg]
    """format_rows of `rows` with the gap to `base`, without its header (the CLI's k range)."""
    import numpy as np

    from flip7.solver.race import MAX_ROUNDS, Chain, RaceRow, format_rows

    stub = RaceRow("race", Chain(np.array([base]), np.zeros(MAX_ROUNDS + 1)))
    return format_rows([stub, *rows], tuple(range(5, 13)))[2:]


def race_fixed_rows() -> list[str]:
    """The race table's rows of dp, ev, sum:25 and bust:0.25 (each played every round)."""
    return _race_lines(list(_fixed_rows()), RACE_BASIC_200)


@functools.cache
def _race():  # type: ignore[no-untyped-def]
    from flip7.solver.model import get_model
    from flip7.solver.race import solve_race

    race = solve_race(get_model("basic"), 200)
    if abs(race.expected - RACE_BASIC_200) > 1e-9:
        print(
            f"RACE_BASIC_200 is stale: the race now needs {race.expected!r} rounds; set it "
            "in experiments/figures.py",
            file=sys.stderr,
        )
    return race


def race_table() -> list[str]:
    """`flip7 solve --race`'s headline and table, as printed (timings aside)."""
    from flip7.solver.race import RaceRow, format_rows

    race = _race()
    c = race.chain
    head = (
        f"race-optimal policy: {race.expected:.4f} expected rounds (median {c.quantile(0.5)}, "
        f"90% done in {c.quantile(0.9)}); {race.sweeps} sweeps"
    )
    lo = max(1, c.quantile(0.05) - 1)
    rows = format_rows([RaceRow("race", c), *_fixed_rows()], tuple(range(lo, lo + 8)))
    return [head, *rows, f"it finishes within 10 rounds {c.cdf[10]:.1%} of the time"]


def race_prose() -> list[str]:
    """The sentence under the race table: what the race policy saves against each."""
    dp, ev = _row("dp"), _row("ev")
    best_sum = next(r for r in _fixed_rows() if r.label.startswith("sum:"))
    best_bust = next(r for r in _fixed_rows() if r.label.startswith("bust:"))
    return [
        f"saves {dp.expected - RACE_BASIC_200:.2f} rounds on average against the per-round "
        f"optimum (`dp`), {ev.expected - RACE_BASIC_200:.2f} against `ev`, "
        f"{best_bust.chain.expected - RACE_BASIC_200:.2f} against the best bust-risk rule "
        f"(`{best_bust.label}`) and {best_sum.chain.expected - RACE_BASIC_200:.2f} against "
        f"the best stand-on-a-sum rule (`{best_sum.label}`)",
        f"of the time against {dp.cdf[10]:.1%} for `dp`",
    ]


def race_within() -> list[str]:
    """`flip7 solve --race --within 10`'s two lines (1,801 more sweeps: minutes)."""
    from flip7.solver.model import get_model
    from flip7.solver.race import solve_within

    race, k = _race(), 10
    within = solve_within(get_model("basic"), 200, k)
    return [
        f"Best chance to reach 200 within {k} rounds: {within.best[k]:.4%} (race-optimal "
        f"policy {race.chain.cdf[k]:.4%}, dp {_row('dp').cdf[k]:.4%}); {within.sweeps} sweeps",
        "within k rounds, each k its own optimum: "
        + ", ".join(f"{j}: {within.best[j]:.2%}" for j in range(k - 5, k + 1)),
    ]


@functools.cache
def _full():  # type: ignore[no-untyped-def]
    """The full model's optimum and dp:full's race to 200 (about 20 s and 4-5 GB)."""
    from flip7.solver.model import get_model
    from flip7.solver.race import chain
    from flip7.solver.solve import occupancy, solve

    sol = solve(get_model("full"))
    return sol.moments, chain(occupancy(sol.space, sol.hit).dist, 200)


def full_dp_race() -> list[str]:
    """`dp:full` (the per-round optimum of the full model: 94 cards, Freeze and Flip Three
    played on yourself) played every round of the race to 200: its expected rounds."""
    return [f"`dp:full`, played every round, needs {_full()[1].expected:.4f} expected rounds"]


@functools.cache
def _solution(model: str):  # type: ignore[no-untyped-def]
    from flip7.solver.model import get_model
    from flip7.solver.solve import solve

    return solve(get_model(model))


def readme_solver() -> list[str]:
    """`flip7 solve` (model basic): the optimum's moments and its reachable states; the
    `real` model's EV; `flip7 solve --all`'s bust:0.25, dup:0.25 and sum:25."""
    from flip7.solver.families import policy_rows
    from flip7.solver.solve import reachable

    opt = _solution("basic")
    m, reach = opt.moments, reachable(opt.space)
    grids = {"sum": (25.0,), "bust": (0.25,), "dup": (0.25,)}
    ev = {r.label: r.moments.ev for r in policy_rows(opt, grids)}
    return [
        f"EV {m.ev:.3f}, sd {m.sd:.2f}, bust {m.bust:.1%}, Flip 7 {m.flip7:.2%}, "
        f"{reach.decision / 1e6:.2f}M reachable states ({reach.decision:,} exactly)",
        f"discards the saved duplicate (EV {_solution('real').moments.ev:.3f})",
        f"is worth {ev['bust:0.25']:.3f}, only {m.ev - ev['bust:0.25']:.3f} below the optimum",
        f"is worth {ev['dup:0.25']:.3f} ({ev['dup:0.25'] - m.ev:+.3f}), about as much as "
        f"standing on 25 ({ev['sum:25']:.3f})",
    ]


def printed(*argv: str) -> list[str]:
    """What `flip7 ARGV` prints (run in this process), one line each."""
    import contextlib
    import io

    from flip7.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    if code != 0:
        raise RuntimeError(f"flip7 {' '.join(argv)} exited {code}")
    return [line for line in out.getvalue().splitlines() if line.strip()]


def _solo(policy: str) -> dict:  # type: ignore[type-arg]
    return sim("--players", "1", "-p", policy, "-n", "100000")


def solo_row(policy: str) -> list[str]:
    """One row of the real-game solo table: rounds to 200 +- 95%, points per round, busts."""
    got = _solo(policy)
    mean = got["rounds_to_target"]["mean"]
    (p,) = got["policies"]
    return [
        f"| `{policy}` | {mean['value']:.2f} +- {mean['hi'] - mean['value']:.2f} | "
        f"{p['points_per_round']['value']:.2f} | {p['bust_rate']:.1%} |"
    ]


def readme_solo() -> list[str]:
    """README's sentence on the real game: race's rounds to 200 +- 95%, dp's."""
    race, dp = (_solo(p)["rounds_to_target"]["mean"] for p in ("race", "dp"))
    return [
        f"{race['value']:.2f} ± {race['hi'] - race['value']:.2f} rounds against "
        f"{dp['value']:.2f} for `dp`"
    ]


def _rate(x: dict) -> str:  # type: ignore[type-arg]
    return f"{x['value']:.1%} [{100 * x['lo']:.1f}, {100 * x['hi']:.1f}]"


def heads_up(lineup: str) -> dict:  # type: ignore[type-arg]
    return sim("-p", lineup, "-n", "40000", "--players", "2")


def heads_up_rows() -> list[str]:
    """`flip7 sim -p win,ev -n 40000 --players 2`: win rate, points per round, busts."""
    out = []
    for p in heads_up("win,ev")["policies"]:
        pts = p["points_per_round"]
        out.append(
            f"| `{p['policy']}` | {_rate(p['win_rate'])} | {pts['value']:.2f} ± "
            f"{(pts['hi'] - pts['lo']) / 2:.2f} | {p['bust_rate']:.1%} |"
        )
    return out


def _win_rate(lineup: str, policy: str) -> str:
    (p,) = [p for p in heads_up(lineup)["policies"] if p["policy"] == policy]
    return _rate(p["win_rate"])


#: The rows docs/solver.md shows of `flip7 solve --all` (an excerpt: the command prints more).
SOLVE_ALL_ROWS = (
    "optimal ev sum:16 sum:20 sum:24 sum:25 sum:26 count:3 count:4 count:5 count:7 bust:0.2 "
    "bust:0.25 bust:0.3 bust:0.35 bust:0.45 dup:0.2 dup:0.25 dup:0.3 dup:0.35 dup:0.45"
).split()


def solve_all() -> list[str]:
    """`flip7 solve --all`'s rows that docs/solver.md shows."""
    rows = printed("solve", "--all", "--no-file")
    return [r for r in rows if r.split()[0] in SOLVE_ALL_ROWS and r.split()[1][:1].isdigit()]


def advice() -> list[str]:
    """`flip7 advice`'s tables: the cut-offs per count of numbers and each rule's value."""
    out = printed("advice", "--no-file")
    table = [line for line in out if line[:1] == " " and line.strip()[:1].isdigit()]
    start = next(i for i, line in enumerate(out) if line.startswith("policy "))
    end = next(i for i, line in enumerate(out) if line.startswith("optimal ("))
    shares = [line for line in out if line.startswith("(share:")]
    return table + shares + out[start : end + 1]


# -- the pages ----------------------------------------------------------------------------------

PTW = "docs/play-to-win.md"
SOLVE_RACE = "flip7 solve --race"
FIGURES = [
    Figure(PTW, "The race to 200", SOLVE_RACE, race_fixed_rows, True),
    Figure(PTW, "The race to 200", SOLVE_RACE, race_table, False),
    Figure(PTW, "The race to 200", SOLVE_RACE, race_prose, True),
    *(
        Figure(
            PTW,
            "The race to 200: the real game",
            f"flip7 sim --players 1 -p {policy} -n 100000",
            functools.partial(solo_row, policy),
            False,
        )
        for policy in SOLO
    ),
    Figure(
        PTW,
        "The race to 200: the C++ peer",
        "python experiments/figures.py (flip7.solver.race.chain of dp:full's round scores)",
        full_dp_race,
        False,
    ),
    Figure(PTW, "The race to 200: within 10", "flip7 solve --race --within 10", race_within, False),
    Figure(
        PTW,
        "The `win` policy: win:fast",
        "flip7 sim -p win:fast,ev -n 40000 --players 2",
        lambda: [f"Heads-up against `ev` it wins {_win_rate('win:fast,ev', 'win:fast')}"],
        False,
    ),
    Figure(
        PTW,
        "The `win` policy: in the real game",
        "flip7 sim -p win,ev -n 40000 --players 2",
        heads_up_rows,
        False,
    ),
    Figure(
        "docs/sequential.md",
        "Planning a test",
        "flip7 plan-games --difference 0.01",
        lambda: printed("plan-games", "--difference", "0.01"),
        True,
    ),
    Figure("README.md", "The solver", "flip7 solve [--model real] [--all]", readme_solver, True),
    Figure(
        "docs/solver.md",
        "Measured figures",
        "flip7 solve",
        lambda: [x for x in printed("solve", "--no-file") if x.startswith(("optimal", "reach"))],
        True,
    ),
    Figure("docs/solver.md", "Measured figures", "flip7 solve --all", solve_all, False),
    Figure("docs/solver.md", "Measured figures", "flip7 advice", advice, False),
    Figure(
        "README.md",
        "The solver",
        "flip7 solve --model full",
        lambda: [f"cards with Freeze and Flip Three on yourself (EV {_full()[0].ev:.3f})"],
        False,
    ),
    Figure(
        "README.md",
        "Playing to win",
        SOLVE_RACE,
        lambda: [
            f"optimum needs {RACE_BASIC_200:.3f} rounds on average (model `basic`), against "
            f"{_row('dp').expected:.3f} for `dp`, {_row('bust:0.25').expected:.3f} for the best "
            f"bust-risk rule and {_row('sum:25').expected:.2f} for the best stand-on-a-sum rule"
        ],
        True,
    ),
    Figure(
        "README.md",
        "Playing to win",
        "flip7 sim --players 1 -p race|dp -n 100000",
        readme_solo,
        False,
    ),
    Figure(
        "README.md",
        "Playing to win",
        "flip7 sim -p win,ev -n 40000 --players 2",
        lambda: [f"Heads-up it beats `ev` {_win_rate('win,ev', 'win')}"],
        False,
    ),
    Figure(
        "README.md",
        "Speed",
        "flip7 sim -p win:fast,ev -n 40000 --players 2",
        lambda: [
            f"{_win_rate('win:fast,ev', 'win:fast')} of the games (`win`: "
            f"{_win_rate('win,ev', 'win')})"
        ],
        False,
    ),
    *(
        Figure(page, section, command, lines, False)
        for page, section, command, lines in run_figures.FIGURES
    ),
]


def normal(text: str) -> str:
    """Text with every run of whitespace one space (pages wrap their prose anywhere)."""
    return re.sub(r"\s+", " ", text).strip()


def missing(figure: Figure, lines: list[str]) -> list[str]:
    """The lines of `figure` its page does not state."""
    page = normal((ROOT / figure.page).read_text())
    return [line for line in lines if normal(line) not in page]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", help="only these pages (e.g. docs/play-to-win.md)")
    parser.add_argument("--cheap", action="store_true", help="only the exact, cheap figures")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page lacks a figure")
    parser.add_argument(
        "--command", metavar="TEXT", help="only the figures whose command contains TEXT"
    )
    parser.add_argument(
        "--data",
        metavar="DIR",
        help="the lake the tournaments run into, kept for a later run (a run complete there is "
        "not run again; default: a temporary directory, removed at the end)",
    )
    parser.add_argument("--num-cpus", type=int, metavar="N", help="CPUs for the tournaments' Ray")
    args = parser.parse_args(argv)
    figure_runs.SETTINGS.update(data=args.data, num_cpus=args.num_cpus and str(args.num_cpus))
    stale = 0
    page = section = None
    for fig in sorted(FIGURES, key=lambda f: f.page):  # page by page, in their order
        if (args.pages and fig.page not in args.pages) or (args.cheap and not fig.cheap):
            continue
        if args.command and args.command not in fig.command:
            continue
        if fig.page != page:
            page, section = fig.page, None
            print(f"\n# {page}")
        if fig.section != section:
            section = fig.section
            print(f"\n## {section}")
        lines = fig.lines()
        print(f"\n$ {fig.command}")
        gone = missing(fig, lines)
        for line in lines:
            print(("STALE " if line in gone else "") + line)
        stale += len(gone)
        sys.stdout.flush()
    if args.check and stale:
        print(f"\n{stale} figure line(s) not on their page (marked STALE)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
