"""The figures of the shipped tournaments' cells, as the lake's marts give them: field size,
card counting, the built-in policies and the rule choices (docs/experiments.md, README)."""

from __future__ import annotations

import functools

from figure_runs import fair, num, pct, query

WORDS = ("none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# -- field size ----------------------------------------------------------------------------------

_FIELD = """
SELECT w.players, w.policy, w.player_games, w.win_rate, w.win_rate_lo, w.win_rate_hi,
       w.win_index, w.win_index_lo, w.win_index_hi, p.points_per_round, p.ppr_lo, p.ppr_hi,
       r.bust_rate, r.bust_rate_lo, r.bust_rate_hi
FROM win_rates AS w JOIN points_per_round AS p USING (run, players, lineup, policy)
JOIN round_rates AS r USING (run, players, lineup, policy) ORDER BY players, policy DESC
"""


@functools.cache
def _field() -> dict[tuple[int, str], dict]:  # type: ignore[type-arg]
    return {(r["players"], r["policy"]): r for r in query("field-size", _FIELD)}


def field_rows() -> list[str]:
    """The field-size table: a row per field size and policy."""
    return [
        f"| {n} | {p} | {r['player_games']:,} | "
        f"{pct(r['win_rate'], r['win_rate_lo'], r['win_rate_hi'])} | {fair(n)} | "
        f"{num(r['win_index'], r['win_index_lo'], r['win_index_hi'], 3)} | "
        f"{num(r['points_per_round'], r['ppr_lo'], r['ppr_hi'])} | "
        f"{pct(r['bust_rate'], r['bust_rate_lo'], r['bust_rate_hi'])} |"
        for (n, p), r in _field().items()
    ]


def field_prose() -> list[str]:
    """What the page reads off the table: ev's heads-up edge, its turn at 4 and 6 players."""
    f = _field()
    ev2, ev4, ev6 = (f[n, "ev"] for n in (2, 4, 6))
    edge = [100 * (2 * ev2[k] - 1) for k in ("win_rate", "win_rate_lo", "win_rate_hi")]
    gap = {n: 100 * (f[n, "bust:0.25"]["win_rate"] - f[n, "ev"]["win_rate"]) for n in (4, 6)}
    ppr = [
        f[n, "ev"]["points_per_round"] - f[n, "bust:0.25"]["points_per_round"] for n in (2, 4, 6)
    ]
    return [
        f"`ev` wins {pct(ev2['win_rate'], ev2['win_rate_lo'], ev2['win_rate_hi'])}: an edge of "
        f"{edge[0]:.1f} points of win rate over `bust:0.25` (the difference of the two seats is "
        f"2p - 1, so its interval is [{edge[1]:+.1f}, {edge[2]:+.1f}])",
        f"at 4 players `ev` wins {100 * ev4['win_rate']:.2f}% of its seats against a fair 25% "
        f"(win index {num(ev4['win_index'], ev4['win_index_lo'], ev4['win_index_hi'], 3)}) and "
        f"at 6 players {100 * ev6['win_rate']:.2f}% against 16.7% "
        f"({num(ev6['win_index'], ev6['win_index_lo'], ev6['win_index_hi'], 3)})",
        f"its seats win {gap[4]:.1f} points more often than `ev`'s at 4 players and "
        f"{gap[6]:.1f} points more often at 6",
        f"(by {ppr[0]:.2f}, {ppr[1]:.2f} and {ppr[2]:.2f} points",
    ]


def field_readme() -> list[str]:
    """README's finding: ev's heads-up win rate, its win index at 4 and 6 players."""
    f = _field()
    ev2 = f[2, "ev"]
    return [
        f"`ev` beats `bust:0.25` ({pct(ev2['win_rate'], ev2['win_rate_lo'], ev2['win_rate_hi'], 1)}",
        f"(win index {f[4, 'ev']['win_index']:.3f} and {f[6, 'ev']['win_index']:.3f}",
    ]


# -- card counting -------------------------------------------------------------------------------

_COUNTING = """
SELECT players, counting, base, lineup, method, coalesce(pairs, games) AS n, ppr_gain,
       ppr_gain_lo, ppr_gain_hi, win_gain, win_gain_lo, win_gain_hi
FROM card_counting WHERE method = 'paired' OR lineup = base_lineup
ORDER BY counting DESC, method, players
"""


@functools.cache
def _gains() -> dict[tuple[str, int, str], dict]:  # type: ignore[type-arg]
    rows = query("card-counting", _COUNTING)
    return {(r["counting"], r["players"], r["method"]): r for r in rows}


def _ppr_gain(r: dict) -> str:  # type: ignore[type-arg]
    return num(r["ppr_gain"], r["ppr_gain_lo"], r["ppr_gain_hi"], 3, "+")


def _win_gain(r: dict, unit: str = " pp") -> str:  # type: ignore[type-arg]
    g, lo, hi = (100 * r[k] for k in ("win_gain", "win_gain_lo", "win_gain_hi"))
    return f"{g:+.2f}{unit} [{lo:+.2f}, {hi:+.2f}]"


def counting_rows() -> list[str]:
    """The card-counting table's figures: n, the points-per-round and win-rate gains."""
    return [
        f"| {r['players']} | {DESIGN[key]} | {r['n']:,} "
        f"{'pairs' if key[2] == 'paired' else 'games'} | {_ppr_gain(r)} | {_win_gain(r)} |"
        for key, r in _gains().items()
    ]


#: The card-counting table's design column, as the page words it.
DESIGN = {
    ("evc", 2, "paired"): "paired (evc or ev against one bust:0.25)",
    ("evc", 4, "paired"): "paired (evc or ev against three bust:0.25)",
    ("evc", 2, "unpaired"): "head to head (evc vs ev)",
    ("evc", 4, "unpaired"): "head to head (two of each)",
    ("bustc:0.25", 2, "paired"): "paired (against one ev)",
    ("bustc:0.25", 4, "paired"): "paired (against three ev)",
    ("bustc:0.25", 2, "unpaired"): "head to head",
    ("bustc:0.25", 4, "unpaired"): "head to head (two of each)",
}


def _paired(counting: str, players: int) -> dict:  # type: ignore[type-arg]
    return _gains()[counting, players, "paired"]


def counting_prose() -> list[str]:
    """The page's reading of the paired gains, and how counting changes how rounds end."""
    g = {(c, n): _paired(c, n)["ppr_gain"] for c in ("evc", "bustc:0.25") for n in (2, 4)}
    smallest = _paired("bustc:0.25", 2)
    rates = query(
        "card-counting",
        "SELECT policy, bust_rate, flip7_rate FROM round_rates "
        "WHERE players = 4 AND lineup = 'ev vs evc' ORDER BY policy",
    )
    r = {x["policy"]: x for x in rates}
    return [
        f"`bustc:0.25` heads-up against `ev`: {_win_gain(smallest, ' points of win rate')}",
        f"`evc` gains {g['evc', 2]:.2f} points per round over `ev` on the same shuffles "
        f"heads-up and {g['evc', 4]:.2f} at 4 players; `bustc:0.25` gains "
        f"{g['bustc:0.25', 2]:.2f} over `bust:0.25` heads-up and {g['bustc:0.25', 4]:.2f} at 4 "
        "players",
        f"`evc` busts {r['evc']['bust_rate']:.1%} of its rounds at 4 players against "
        f"{r['ev']['bust_rate']:.1%} for `ev`, and makes Flip 7 in {r['evc']['flip7_rate']:.2%} "
        f"against {r['ev']['flip7_rate']:.2%}",
    ]


def counting_readme() -> list[str]:
    """README's finding: the paired gains of evc and bustc:0.25."""
    evc = [_paired("evc", n) for n in (2, 4)]
    bustc = [_paired("bustc:0.25", n) for n in (2, 4)]
    wins = sorted(100 * r["win_gain"] for r in evc)
    return [
        f"`evc` gains {evc[0]['ppr_gain']:+.2f} (heads-up) and {evc[1]['ppr_gain']:+.2f} (4 "
        f"players) points per round over `ev` and {wins[0]:+.1f} to {wins[1]:+.1f} points of "
        f"win rate; `bustc:0.25` gains {bustc[0]['ppr_gain']:+.2f} (heads-up) and "
        f"{bustc[1]['ppr_gain']:+.2f} (4 players) over `bust:0.25`",
    ]


# -- policies ------------------------------------------------------------------------------------


@functools.cache
def _league() -> tuple[dict, ...]:  # type: ignore[type-arg]
    return tuple(query("policies", "SELECT * FROM league ORDER BY place"))


@functools.cache
def _pairs() -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
    """Heads-up win rates: (policy, opponent) -> its win_rates row."""
    rows = query(
        "policies",
        "SELECT lineup, policy, win_rate, win_rate_lo, win_rate_hi "
        "FROM win_rates WHERE players = 2",
    )
    by_lineup: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for r in rows:
        by_lineup.setdefault(r["lineup"], []).append(r)
    return {
        (a["policy"], b["policy"]): a
        for a, b in (pair for rs in by_lineup.values() for pair in (rs, rs[::-1]))
    }


def _unresolved(r: dict) -> bool:  # type: ignore[type-arg]
    return bool(r["win_rate_lo"] <= 0.5 <= r["win_rate_hi"])


def policies_matrix() -> list[str]:
    """The head-to-head table, rows and columns in the league's order; * where the interval
    includes 50%."""
    order = [r["policy"] for r in _league()]
    pairs = _pairs()
    head = "| row vs column | " + " | ".join(f"`{p}`" for p in order) + " |"
    rows = [head]
    for a in order:
        cells = [
            "–"
            if a == b
            else f"{100 * pairs[a, b]['win_rate']:.1f}" + ("*" if _unresolved(pairs[a, b]) else "")
            for b in order
        ]
        rows.append(f"| `{a}` | " + " | ".join(cells) + " |")
    return rows


def policies_prose() -> list[str]:
    """The unresolved pairs with their intervals, and the heads-up figures the page quotes."""
    order = [r["policy"] for r in _league()]
    pairs = _pairs()
    lines = [
        f"`{a}` vs `{b}` {pct(r['win_rate'], r['win_rate_lo'], r['win_rate_hi'])}"
        for i, a in enumerate(order)
        for b in order[i + 1 :]
        if _unresolved(r := pairs[a, b])
    ]
    lines.append(f"The {WORDS[len(lines)]} pairs whose interval includes 50%")
    first, second = order[:2]
    close = pairs[first, second]
    lines.append(
        f"`{first}` beats every other policy ({100 * close['win_rate']:.1f}% against "
        f"`{second}`, the closest, [{100 * close['win_rate_lo']:.1f}, "
        f"{100 * close['win_rate_hi']:.1f}])"
    )
    for a, b, how in (("bust:0.25", "dup:0.25", " heads-up"), ("bustc:0.25", "dupc:0.25", "")):
        r = pairs[a, b]
        lines.append(
            f"`{a}` beats `{b}`{how} {pct(r['win_rate'], r['win_rate_lo'], r['win_rate_hi'])}"
        )
    r = pairs["bustc:0.25", "bust:0.25"]
    lines.append(
        f"only `bustc:0.25` beats `bust:0.25` ({100 * r['win_rate']:.1f}% "
        f"[{100 * r['win_rate_lo']:.1f}, {100 * r['win_rate_hi']:.1f}])"
    )
    league = _league()
    lines.append(
        "orders them "
        + ", ".join(
            f"`{r['policy']}` {r['win_index']:.3f}"
            + (f" [{r['win_index_lo']:.3f}, {r['win_index_hi']:.3f}]" if i == 0 else "")
            for i, r in enumerate(league)
        )
    )
    return lines


_TEN = """
SELECT w.policy, w.win_rate, w.win_rate_lo, w.win_rate_hi, w.win_index, w.win_index_lo,
       w.win_index_hi, p.points_per_round, p.ppr_lo, p.ppr_hi, p.rounds, r.bust_rate,
       r.bust_rate_lo, r.bust_rate_hi, r.flip7_rate, r.flip7_rate_lo, r.flip7_rate_hi
FROM win_rates AS w JOIN points_per_round AS p USING (run, players, lineup, policy)
JOIN round_rates AS r USING (run, players, lineup, policy)
WHERE players = 10 ORDER BY w.win_rate DESC
"""


def policies_ten() -> list[str]:
    """All ten at one table: a row per policy by win rate, the rounds each played, and the
    counting twins against their plain versions there."""
    rows = query("policies", _TEN)
    out = [
        f"| {r['policy']} | {pct(r['win_rate'], r['win_rate_lo'], r['win_rate_hi'])} | "
        f"{num(r['win_index'], r['win_index_lo'], r['win_index_hi'], 3)} | "
        f"{num(r['points_per_round'], r['ppr_lo'], r['ppr_hi'])} | "
        f"{pct(r['bust_rate'], r['bust_rate_lo'], r['bust_rate_hi'])} | "
        f"{pct(r['flip7_rate'], r['flip7_rate_lo'], r['flip7_rate_hi'])} |"
        for r in rows
    ]
    (rounds,) = {r["rounds"] for r in rows}
    out.append(f"({rounds:,} rounds per policy.)")
    twins = query(
        "policies",
        "SELECT * FROM card_counting WHERE players = 10 ORDER BY counting DESC",
    )
    for t in twins:
        out.append(
            f"`{t['counting']}` over `{t['base']}` "
            f"{num(t['ppr_gain'], t['ppr_gain_lo'], t['ppr_gain_hi'], 2, '+')} points per round "
            f"and {_win_gain(t, '')} points of win rate"
        )
    return out


def policies_readme() -> list[str]:
    """README's heads-up ranking: dup:0.25 against bust:0.25, endgame at ten players."""
    r = _pairs()["dup:0.25", "bust:0.25"]
    (top,) = query("policies", _TEN + " LIMIT 1")
    return [
        f"loses to `bust:0.25` {100 * r['win_rate']:.0f}% to {100 - 100 * r['win_rate']:.0f}%",
        f"At a ten-player table `{top['policy']}` wins {100 * top['win_rate']:.1f}% (fair 10%)",
    ]


# -- the rules -----------------------------------------------------------------------------------

RULES_SCALE = 0.4
_CELLS = """
SELECT c.*, w.win_rate AS ev_win, w.win_rate_lo AS ev_win_lo, w.win_rate_hi AS ev_win_hi
FROM cell_results AS c LEFT JOIN win_rates AS w
  ON w.run = c.run AND w.variant = c.variant AND w.ruleset = c.ruleset
  AND w.players = c.players AND w.lineup = c.lineup AND w.policy = 'ev' AND c.lineup LIKE '%sum:24%'
ORDER BY c.lineup, c.players, c.ruleset
"""
#: The figures of a cell the rule choices compare: (column, scale to the page's unit).
_RULE_FIGURES = (
    ("rounds_per_game", 1.0),
    ("points_per_round", 1.0),
    ("bust_rate", 100.0),
    ("flip7_rate", 100.0),
)


@functools.cache
def _cells() -> dict[tuple[str, int, str], dict]:  # type: ignore[type-arg]
    rows = query("rulesets", _CELLS, RULES_SCALE)
    return {(r["lineup"], r["players"], r["ruleset"]): r for r in rows}


def rules_rows() -> list[str]:
    """The rule-choice tables: a row per line-up, field size and ruleset (with ev's win rate
    in the mixed tables)."""
    out = []
    for (lineup, n, ruleset), r in _cells().items():
        row = (
            f"| {lineup} | {n} | {ruleset} | "
            f"{num(r['rounds_per_game'], r['rounds_per_game_lo'], r['rounds_per_game_hi'])} | "
            f"{num(r['points_per_round'], r['points_per_round_lo'], r['points_per_round_hi'])} | "
            f"{pct(r['bust_rate'], r['bust_rate_lo'], r['bust_rate_hi'], 1)} | "
            f"{pct(r['flip7_rate'], r['flip7_rate_lo'], r['flip7_rate_hi'])} |"
        )
        if r["ev_win"] is not None:
            row += f" {pct(r['ev_win'], r['ev_win_lo'], r['ev_win_hi'], 1)} |"
        out.append(row)
    return out


def _differences(rulesets: tuple[str, ...], figures: tuple[str, ...]) -> list[tuple]:  # type: ignore[type-arg]
    """Each figure's difference from the same table under 3.1, with its 95% interval (two
    independent cells: their standard errors added in quadrature)."""
    cells, out = _cells(), []
    for (lineup, n, ruleset), r in cells.items():
        if ruleset not in rulesets:
            continue
        base = cells[lineup, n, "3.1"]
        for col, unit in _RULE_FIGURES:
            if col not in figures:
                continue
            lo, hi = f"{col}_lo", f"{col}_hi"
            if col == "points_per_round":
                lo, hi = "points_per_round_lo", "points_per_round_hi"
            half = ((r[hi] - r[lo]) ** 2 + (base[hi] - base[lo]) ** 2) ** 0.5 / 2
            d = unit * (r[col] - base[col])
            out.append((lineup, n, ruleset, col, d, d - unit * half, d + unit * half))
    return out


_TARGETS = ("3.1(target=150)", "3.1", "3.1(target=250)")


def _ev_win(n: int, ruleset: str) -> str:
    """ev's win rate against sum:24 (heads-up, or against three at four players)."""
    r = _cells()["ev vs sum:24" if n == 2 else "ev vs 3 sum:24", n, ruleset]
    return pct(r["ev_win"], r["ev_win_lo"], r["ev_win_hi"], 1)


def _clear() -> tuple[list[tuple], list[tuple], int]:  # type: ignore[type-arg]
    """The differences from 3.1 at 200 of the targets' pace figures and of the other rulesets'
    figures, and how many of the latter exclude zero."""
    pace = _differences(_TARGETS[::2], ("points_per_round", "bust_rate", "flip7_rate"))
    rules = _differences(("immediate", "legacy"), tuple(f for f, _ in _RULE_FIGURES))
    return pace, rules, sum(d[5] > 0 or d[6] < 0 for d in rules)


def rules_prose() -> list[str]:
    """What the page reads off the tables: the target's rounds, ev's win rate against sum:24
    by target, and how many differences from 3.1 exclude zero."""
    rounds = [f"{_cells()['ev vs sum:24', 2, t]['rounds_per_game']:.2f}" for t in _TARGETS]
    pace, rules, n_rules = _clear()
    clear = [d for d in pace if d[5] > 0 or d[6] < 0]
    w2, w4 = ([_ev_win(n, t) for t in _TARGETS] for n in (2, 4))
    return [
        f"`ev` against `sum:24`: {rounds[0]}, {rounds[1]} and {rounds[2]} rounds at 150, 200 and "
        "250",
        f"heads-up {w2[0]} at 150, {w2[1]} at 200 and {w2[2]} at 250; at four players (fair "
        f"share 25%) {w4[0]}, {w4[1]} and {w4[2]}",
        f"of the {len(pace)} differences of those three figures from `3.1` at 200, "
        f"{WORDS[len(clear)]} exclude{'s' if len(clear) == 1 else ''} zero",
        *(f"{d[4]:+.2f} points [{d[5]:+.2f}, {d[6]:+.2f}]" for d in clear),
        f"{WORDS[n_rules].capitalize()} of the {len(rules)} differences of these two rulesets "
        "from `3.1` exclude zero",
    ]


def rules_readme() -> list[str]:
    """README's finding: ev against sum:24 heads-up at 150 and 250; the other rulesets."""
    _, rules, n_rules = _clear()
    return [
        f"({_ev_win(2, _TARGETS[0])} heads-up at 150, {_ev_win(2, _TARGETS[2])} at 250)",
        f"({n_rules} of {len(rules)} differences exclude zero",
    ]
