"""The play-to-win study's figures from a lake: per-cell win rates and paired differences.

    python experiments/play_to_win_report.py --data /tmp/ptw --run play-to-win-x0.05 \
        [--svg docs/play-to-win.svg]

Runs a query through `flip7 sql` over the lake's games (stg_games, int_cells), prints both
tables in markdown as docs/play-to-win.md gives them, then the ranges the page and README quote,
and, with --svg, draws the per-cell win rates against the fair share.

The seat a line-up's first policy holds in game i is (seat - i) mod n (seats rotate): "slot 0".
One against the field (`win vs 3 ev`): the first policy's slot 0. Half and half (`2 win vs 2
ev`): the even slots, its half of the table. The baseline (`ev vs 3 ev`) gives both, so its
cells stand for 1/n (one seat) and 1/2 (half the table) by symmetry. Paired differences are
taken game by game on the same shuffles (same pair label, same cell_game).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import subprocess
import sys

FOCUS = """
with g as (
    select s.players, c.lineup, s.pair, s.cell_game,
           ((s.seat - s.cell_game) % s.players + s.players) % s.players as slot, s.winner
    from stg_games as s inner join int_cells as c on s.run = c.run and s.cell = c.cell
    where s.run = '{run}'
),
per_game as (
    select players, lineup, pair, cell_game,
           cast(bool_or(winner and slot = 0) as integer) as one,
           cast(bool_or(winner and slot % 2 = 0) as integer) as half
    from g group by all
)
select * from per_game order by pair, players, lineup, cell_game
"""


def query(data: str, run: str) -> list[dict[str, str]]:
    cmd = [sys.executable, "-m", "flip7", "sql", "--data", data, "--format", "csv"]
    out = subprocess.run(
        [*cmd, FOCUS.format(run=run)], check=True, capture_output=True, text=True
    ).stdout
    return list(csv.DictReader(io.StringIO(out)))


def mean_ci(xs: list[int] | list[float]) -> tuple[float, float, float]:
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    h = 1.96 * sd / math.sqrt(n)
    return m, m - h, m + h


def layout(lineup: str) -> tuple[str, str, bool]:
    """(policy, opponent, half): `win vs 3 ev` -> (win, ev, False); `2 win vs 2 ev` -> half."""
    left, right = lineup.split(" vs ")
    half = left[0].isdigit()
    me = left.split(" ", 1)[1] if half else left
    return me, right.split(" ", 1)[1], half


Games = dict[tuple[str, int, str, bool], dict[int, int]]
OPPONENTS = ("ev", "dp", "bust:0.25", "sum:24")


def study(data: str, run: str) -> Games:
    """(opponent, players, policy, half) -> {cell_game: 1 if its seat (half) won, else 0}."""
    games: Games = {}
    for r in query(data, run):
        me, opp, half = layout(r["lineup"])
        n = int(r["players"])
        for h in (False, True) if me == opp and n > 2 else (half,):
            games.setdefault((opp, n, me, h), {})[int(r["cell_game"])] = int(
                r["half" if h else "one"]
            )
    return games


def tables(games: Games) -> list[tuple[str, int, bool]]:
    """The study's tables, (opponent, players, half), in the page's order: those with games of
    `win`, `dp` and the baseline (all of them once the run is complete)."""
    return [
        (opp, n, half)
        for opp in OPPONENTS
        for n in (2, 4, 6)
        for half in ((False, True) if n > 2 else (False,))
        if all((opp, n, me, half) in games for me in ("win", "dp", opp))
    ]


def _rate(won: dict[int, int]) -> str:
    m, lo, hi = mean_ci(list(won.values()))
    return f"{100 * m:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _what(n: int, half: bool) -> str:
    return f"{n // 2} vs {n // 2}" if half else f"1 vs {n - 1}"


def win_rate_rows(games: Games) -> list[str]:
    """Per table: win's, dp's and the baseline's win rate in the same seats, the fair share."""
    out = []
    for opp, n, half in tables(games):
        base = "(the `dp` column)" if opp == "dp" else _rate(games[opp, n, opp, half])
        out.append(
            f"| `{opp}` | {n} | {_what(n, half)} | {_rate(games[opp, n, 'win', half])} | "
            f"{_rate(games[opp, n, 'dp', half])} | {base} | {50 if half else 100 / n:.1f}% |"
        )
    return out


def gains(games: Games, opp: str, n: int, half: bool) -> list[tuple[float, float, float]]:
    """win's paired gain over the baseline and over dp in the same seats: (mean, lo, hi)."""
    w = games[opp, n, "win", half]
    out = []
    for other in (
        games.get((opp, n, opp, half)) or games[opp, n, "dp", half],
        games[opp, n, "dp", half],
    ):
        common = sorted(set(w) & set(other))
        out.append(mean_ci([w[i] - other[i] for i in common]))
    return out


def paired_rows(games: Games) -> list[str]:
    """Per table: win minus the baseline and win minus dp, game by game on the same shuffles."""
    out = []
    for opp, n, half in tables(games):
        figs = [
            f"{100 * m:+.1f} pp [{100 * lo:+.1f}, {100 * hi:+.1f}]"
            for m, lo, hi in gains(games, opp, n, half)
        ]
        out.append(f"| `{opp}` | {n} | {_what(n, half)} | {figs[0]} | {figs[1]} |")
    return out


def summary(games: Games) -> list[str]:
    """The ranges the page and README quote: win above its fair share, win over dp, one seat
    against the field and half the table."""
    above: dict[bool, list[float]] = {False: [], True: []}
    over_dp: dict[bool, list[float]] = {False: [], True: []}
    for opp, n, half in tables(games):
        m, _, _ = mean_ci(list(games[opp, n, "win", half].values()))
        above[half].append(100 * (m - (0.5 if half else 1 / n)))
        over_dp[half].append(100 * gains(games, opp, n, half)[1][0])

    def span(xs: list[float]) -> str:
        return f"{min(xs):.1f} to {max(xs):.1f}" if xs else "(no table yet)"

    return [
        f"by {span(above[False])} points with one seat against the field, {span(above[True])} "
        "points for half the table",
        f"worth {span(over_dp[False])} points of win rate over `dp` in the same seat against one "
        f"field, {span(over_dp[True])} points for half the table",
        f"by {span(above[False] + above[True])} points, and {span(over_dp[False] + over_dp[True])} "
        "points above `dp` in the same seats",
        f"`win` gains {span(over_dp[False] + over_dp[True])} points of win rate over `dp` in the "
        "same seats",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--svg", default=None)
    args = ap.parse_args()
    games = study(args.data, args.run)
    print("| opponent X | players | table | `win` | `dp` | X (baseline) | fair share |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(win_rate_rows(games)))
    print()
    print("| opponent X | players | table | `win` - X [95%] | `win` - `dp` [95%] |")
    print("|---|---|---|---|---|")
    print("\n".join(paired_rows(games)))
    print()
    print("\n".join(summary(games)))
    if args.svg:
        cells = []
        for (opp, n, me, half), won in sorted(games.items(), key=lambda kv: order(kv[0])):
            m, lo, hi = mean_ci(list(won.values()))
            cells.append((opp, n, half, me, m, lo, hi, 0.5 if half else 1 / n))
        with open(args.svg, "w") as fh:
            fh.write(svg(cells))


def order(key: tuple[str, int, str, bool]) -> tuple[int, int, int, int]:
    opp, n, me, half = key
    opps = ["ev", "dp", "bust:0.25", "sum:24"]
    return (
        opps.index(opp) if opp in opps else 9,
        n,
        int(half),
        ["win", "dp"].index(me) if me in ("win", "dp") else 2,
    )


def svg(cells: list[tuple[str, int, bool, str, float, float, float, float]]) -> str:
    """Win rate minus fair share with its interval, one row per cell, win and dp side by side."""
    rows = [c for c in cells if c[3] in ("win", "dp") and not (c[3] == c[0])]
    groups: dict[tuple[str, int, bool], dict[str, tuple[float, float, float, float]]] = {}
    for opp, n, half, me, m, lo, hi, fair in rows:
        groups.setdefault((opp, n, half), {})[me] = (m - fair, lo - fair, hi - fair, fair)
    keys = list(groups)
    width, left, top, row_h = 760, 210, 52, 22
    height = top + row_h * len(keys) + 50
    ends = [v for g in groups.values() for d in g.values() for v in d[1:3]]
    lo_x = math.floor(min(min(ends), 0.0) / 0.04) * 0.04
    hi_x = math.ceil(max(ends) / 0.04) * 0.04
    span = width - left - 30

    def x(v: float) -> float:
        return left + (v - lo_x) / (hi_x - lo_x) * span

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="10" y="16" font-size="13">Win rate minus fair share, 95% intervals: '
        "win filled, dp hollow, in the same seats on the same shuffles</text>",
        '<text x="10" y="32">(one against the field: the seat\'s rate minus 1/n; half and '
        "half: the half's rate minus 1/2)</text>",
    ]
    for k in range(round((hi_x - lo_x) / 0.04) + 1):
        t = round(lo_x + 0.04 * k, 2)
        out.append(
            f'<line x1="{x(t):.1f}" y1="{top - 8}" x2="{x(t):.1f}" y2="{height - 40}" '
            f'stroke="{"#555" if t == 0 else "#ddd"}"/>'
        )
        out.append(
            f'<text x="{x(t):.1f}" y="{height - 24}" text-anchor="middle">{100 * t:+.0f} pp</text>'
        )
    for i, key in enumerate(keys):
        opp, n, half = key
        y = top + row_h * i + row_h / 2
        label = f"{opp}, {n} players, " + (f"{n // 2} vs {n // 2}" if half else f"1 vs {n - 1}")
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
        for me, dy, fill in (("win", -4, "#1f77b4"), ("dp", 4, "white")):
            if me not in groups[key]:
                continue
            d, lo, hi, _ = groups[key][me]
            out.append(
                f'<line x1="{x(lo):.1f}" y1="{y + dy:.1f}" x2="{x(hi):.1f}" y2="{y + dy:.1f}" '
                'stroke="#1f77b4"/>'
            )
            out.append(
                f'<circle cx="{x(d):.1f}" cy="{y + dy:.1f}" r="3.5" fill="{fill}" '
                'stroke="#1f77b4"/>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
