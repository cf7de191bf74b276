"""An odds reference for the table, exact over a model's state space.

- bust risk: the formula a player can work out, and its range for each count of numbers;
- Flip 7: the chance from each count, going for it (hitting to the end) and playing optimally;
- where the optimal player stops, and the exact distribution of round scores under optimal play;
- one hand (`--hand "3 8 11 +4"`): its bust risk, the optimal move and what each move is worth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flip7 import format as fmt
from flip7.cards import CLASSIC, MODIFIERS, PLUS_VALUE
from flip7.solver.model import MAX_HELD, Space
from flip7.solver.solve import Occupancy, Solution, Sweeper, occupancy

_MOD_NAMES = {"+2": 0, "+4": 1, "+6": 2, "+8": 3, "+10": 4, "x2": 5}


@dataclass(frozen=True)
class Hand:
    """A position: numbers and modifiers shown, a Second Chance held, Flip Threes taken."""

    numbers: tuple[int, ...]
    mods: int
    sc: bool
    flip_threes: int = 0

    @property
    def mask(self) -> int:
        return sum(1 << v for v in self.numbers)

    @property
    def cards(self) -> int:
        return len(self.numbers) + bin(self.mods).count("1") + self.sc + self.flip_threes

    def points(self) -> int:
        total = sum(self.numbers) * (2 if self.mods >> 5 & 1 else 1)
        return total + sum(PLUS_VALUE[MODIFIERS[i]] for i in range(5) if self.mods >> i & 1)

    def __str__(self) -> str:
        parts = [str(v) for v in self.numbers]
        parts += [name for name, i in _MOD_NAMES.items() if self.mods >> i & 1]
        parts += ["sc"] * self.sc + ["f3"] * self.flip_threes
        return " ".join(parts) or "(nothing)"


def parse_hand(text: str) -> Hand:
    """'3 8 11 +4 x2 sc' -> Hand; a ValueError names the bad token."""
    numbers: list[int] = []
    mods = 0
    sc = False
    f3 = 0
    for tok in text.replace(",", " ").lower().split():
        if tok.isdigit() and 0 <= int(tok) <= 12:
            if int(tok) in numbers:
                raise ValueError(f"hand {text!r}: {tok} twice is a bust, not a hand")
            numbers.append(int(tok))
        elif tok in _MOD_NAMES:
            mods |= 1 << _MOD_NAMES[tok]
        elif tok in ("sc", "second-chance"):
            sc = True
        elif tok in ("f3", "flip-three"):
            f3 += 1
        else:
            raise ValueError(
                f"hand {text!r}: unknown card {tok!r}; use numbers 0..12, +2 +4 +6 +8 +10 x2, "
                "sc (a Second Chance held), f3 (a Flip Three taken), e.g. '3 8 11 +4'"
            )
    if len(numbers) > MAX_HELD:
        raise ValueError(f"hand {text!r}: seven numbers is a Flip 7, the round is over")
    return Hand(tuple(sorted(numbers)), mods, sc, f3)


def table_risk(hand: Hand) -> tuple[int, int]:
    """(duplicates left, cards unseen) in the 94-card deck, from the cards in front of you."""
    dups = sum(CLASSIC.counts[v] - 1 for v in hand.numbers)
    return dups, CLASSIC.size - hand.cards


@dataclass(frozen=True)
class Odds:
    """Everything `flip7 odds` prints, computed once."""

    solution: Solution
    opt: Occupancy  # the optimal policy's forward sweep
    always: Occupancy  # hitting to the end
    always_flip7: np.ndarray  # Flip 7 chance from each decision state, hitting to the end


def compute(solution: Solution) -> Odds:
    """The sweeps the odds need: the optimal and the always-hit policies, both ways."""
    space = solution.space
    always = np.ones_like(solution.hit)
    sweeper = Sweeper(space)
    sweeper.backward(always, optimize=False)
    return Odds(
        solution, occupancy(space, solution.hit), occupancy(space, always), sweeper.decision(3)
    )


def _weighted_quantiles(x: np.ndarray, w: np.ndarray, qs: tuple[float, ...]) -> list[float]:
    order = np.argsort(x, kind="stable")
    cw = np.cumsum(w[order])
    return [float(x[order][np.searchsorted(cw, q * cw[-1])]) for q in qs]


def _flat(space: Space, name: str) -> np.ndarray:
    return np.ascontiguousarray(space.feature(name)).reshape(-1)


def report(odds: Odds) -> list[str]:
    """The reference tables (the table format of `report_result`)."""
    return report_result(odds).render("table")


def report_result(odds: Odds) -> fmt.Result:
    """The reference tables, and their figures for JSON (docs/output.md)."""
    sol, space = odds.solution, odds.solution.space
    k = _flat(space, "ncount")
    risk = _flat(space, "risk94")
    reach = odds.opt.reach
    risk_rows = []
    for kk in range(1, 7):
        low = sum(CLASSIC.counts[v] - 1 for v in range(kk)) / (CLASSIC.size - kk)
        high = sum(CLASSIC.counts[v] - 1 for v in range(12, 12 - kk, -1)) / (CLASSIC.size - kk)
        sel = (k == kk) & (reach > 0)
        qs = _weighted_quantiles(risk[sel], reach[sel], (0.25, 0.5, 0.75)) if sel.any() else []
        risk_rows.append([kk, low, high, *(qs or [None] * 3)])
    occ_all = odds.always.reach
    flip7_rows = []
    for kk in range(0, 7):
        sel = k == kk
        flip7_rows.append(
            [kk, _avg(odds.always_flip7[sel], occ_all[sel]), _avg(sol.flip7[sel], reach[sel])]
        )
    stays = (sol.hit == 0) & (reach > 0)
    stays[0] = False
    pts = _flat(space, "points")
    stay_rows = []
    for kk in range(1, 7):
        sel = stays & (k == kk)
        share = float(reach[sel].sum())
        stay_rows.append([kk, share, _avg(pts[sel], reach[sel]) if share > 0 else None])
    bins, quantiles, tails = distribution_figures(odds.opt.dist)
    risk_table = fmt.Table(
        [
            fmt.Column("numbers"),
            fmt.Column("lowest", fmt.rate),
            fmt.Column("highest", fmt.rate),
            fmt.Column("met: 25%", fmt.rate, key="p25"),
            fmt.Column("50%", fmt.rate, key="p50"),
            fmt.Column("75%", fmt.rate, key="p75"),
        ],
        risk_rows,
        title="bust risk of the next card",
    )
    flip7_table = fmt.Table(
        [
            fmt.Column("numbers"),
            fmt.Column("hit to the end", lambda x: fmt.rate(x, 2), key="hit_to_the_end"),
            fmt.Column("optimal play", lambda x: fmt.rate(x, 2), key="optimal_play"),
        ],
        flip7_rows,
        title="chance of a Flip 7",
    )
    stay_table = fmt.Table(
        [
            fmt.Column("numbers"),
            fmt.Column("share of rounds", fmt.rate, key="share"),
            fmt.Column("mean points banked", lambda x: fmt.points(x, 1), key="mean_points"),
        ],
        stay_rows,
        title="where the optimal player stays",
    )
    dist_table = fmt.Table(
        [
            fmt.Column("points", right=True),
            fmt.Column("share", lambda x: fmt.rate(x, 2)),
            fmt.Column("", right=False, key="bar"),
        ],
        bins,
        title="round score under optimal play",
    )
    data = {
        "command": "odds",
        "model": sol.model.name,
        "bust_risk": risk_table.records(),
        "flip7_chance": flip7_table.records(),
        "flip7_from_empty_hand": {
            "hit_to_the_end": odds.always.flip7,
            "optimal_play": sol.moments.flip7,
        },
        "stays": stay_table.records(),
        "optimal": {k: float(getattr(sol.moments, k)) for k in ("ev", "sd", "bust", "flip7")},
        "distribution": [{"points": b[0], "share": b[1]} for b in bins],
        "quantiles": dict(zip(("p10", "p25", "p50", "p75", "p90"), quantiles, strict=True)),
        "chance_of_at_least": {str(x): p for x, p in tails},
    }
    result = fmt.Result(
        data,
        [
            "Bust risk of the next card = duplicates left / cards you cannot see. From what is in",
            "front of you, in the 94-card deck: (sum of your numbers - how many are not 0) / (94 -",
            "your cards): each number v you show leaves v - 1 copies (the 0 and the 1: none).",
            "",
            "Per count of numbers: the lowest and highest risk, and its quartiles as the optimal "
            "player meets them:",
        ],
    )
    result.table(risk_table)
    result.line("(lowest: 0 1 2 ...; highest: 12 11 10 ...; no modifiers in front of you)")
    result.line("")
    result.line("Chance of a Flip 7 from each count (averaged over the hands as they come up):")
    result.table(flip7_table)
    result.line(
        f"(from the empty hand: {odds.always.flip7:.2%} if you never stop, "
        f"{sol.moments.flip7:.2%} under optimal play)"
    )
    result.line("")
    result.line("Where the optimal player stays (share of rounds, mean points banked):")
    result.table(stay_table)
    result.line(f"busts: {sol.moments.bust:.1%}; Flip 7: {sol.moments.flip7:.2%}")
    result.line("")
    result.line(
        f"Round score under optimal play (model {sol.model.name}): EV {sol.moments.ev:.3f}, "
        f"sd {sol.moments.sd:.2f}"
    )
    peak = max(b[1] for b in bins) or 1.0
    for b in bins:
        b.append("#" * round(40 * b[1] / peak))
    result.table(dist_table)
    result.line("quantiles 10/25/50/75/90%: " + " ".join(str(q) for q in quantiles))
    result.line("chance of at least: " + ", ".join(f"{x}: {p:.1%}" for x, p in tails))
    return result


def distribution_figures(
    dist: np.ndarray, width: int = 10
) -> tuple[list[list[Any]], list[int], list[tuple[int, float]]]:
    """The exact score distribution: [label, share] bins (they stop once less than 0.1% is
    left above them), the 10/25/50/75/90% quantiles, and the chances of at least 20 ... 100."""
    bins: list[list[Any]] = [["0 (bust)", float(dist[0])]]
    top = int(np.flatnonzero(dist > 0).max())
    lo = 1
    while lo <= top:
        rest = float(dist[lo:].sum())
        if rest < 0.001:
            bins.append([f"{lo}-{top}", rest])
            break
        hi = lo + width - 1
        bins.append([f"{lo}-{hi}", float(dist[lo : hi + 1].sum())])
        lo = hi + 1
    cdf = np.cumsum(dist)
    qs = [int(np.searchsorted(cdf, q - 1e-12)) for q in (0.1, 0.25, 0.5, 0.75, 0.9)]
    tails = [(x, float(dist[x:].sum())) for x in (20, 30, 40, 50, 75, 100)]
    return bins, qs, tails


def _avg(x: np.ndarray, w: np.ndarray) -> float:
    total = w.sum()
    return float(x @ w / total) if total > 0 else float("nan")


def hand_report(odds: Odds, hand: Hand) -> list[str]:
    """Everything about one position under the model."""
    sol, space = odds.solution, odds.solution.space
    n_t = space.n_dec - 1
    if hand.flip_threes > n_t:
        raise ValueError(
            f"hand {hand}: model {sol.model.name} has {n_t} Flip Threes; try --model full"
        )
    sc = space.sc_index(int(hand.sc), int(hand.sc))
    i = space.dec_index(hand.mask, hand.mods, sc, hand.flip_threes)
    dups, unseen = table_risk(hand)
    m_dups = int(space.feature("dups").reshape(-1)[i])
    m_left = int(space.feature("left").reshape(-1)[i])
    stay = hand.points()
    move = "HIT" if sol.hit[i] else "STAY"
    if not hand.cards:
        move = "HIT (nothing to bank yet)"
    lines = [
        f"hand: {hand}   points if you stay: {stay}",
        f"bust risk of the next card: {dups}/{unseen} = {dups / unseen:.1%} at the table "
        f"(94-card deck); {m_dups}/{m_left} = {m_dups / max(m_left, 1):.1%} in model "
        f"{sol.model.name}" + (" (a Second Chance saves you)" if hand.sc else ""),
        f"optimal move: {move}; staying is worth {stay:.3f}, hitting {sol.qhit[i]:.3f} "
        "(then playing on optimally)",
        f"from here under optimal play: EV {sol.value[i]:.3f}, bust {sol.bust[i]:.1%}, "
        f"Flip 7 {sol.flip7[i]:.2%}",
        f"Flip 7 if you hit to the end: {odds.always_flip7[i]:.2%}",
    ]
    nxt = [(str(v), space.copies[v]) for v in range(13) if not hand.mask >> v & 1]
    counts = sol.model.deck.counts
    new_w = sum(w for _, w in nxt)
    mods_w = sum(counts[m] for b, m in enumerate(MODIFIERS) if not hand.mods >> b & 1)
    rest = m_left - new_w - m_dups - mods_w
    lines.append(
        f"next card (model): a new number {new_w / m_left:.1%}, a duplicate "
        f"{m_dups / m_left:.1%}, a modifier {mods_w / m_left:.1%}, an action card "
        f"{rest / m_left:.1%}"
    )
    return lines
