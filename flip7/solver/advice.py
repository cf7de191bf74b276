"""The optimal policy boiled down to a rule a person can use: a bust-risk cut-off per count of
numbers showing (and whether you hold a Second Chance).

How the rule is fitted, exactly and without sampling:
1. Solve the model; sweep the optimal policy forward for w(s), the chance that the optimal
   player faces decision state s (how often each state comes up).
2. The risk of a state is what a player computes at the table: duplicates of your numbers in the
   real 94-card deck over the cards not in front of you, (sum of your numbers - how many of them
   are not 0) / (94 - your cards). The rule hits while risk < cut-off.
3. For each cell (numbers showing, Second Chance held), every cut-off between two consecutive
   risk values is scored by the points it gives up at the states where it disagrees with the
   optimum, sum w(s) * |Q_hit(s) - Q_stay(s)| (Q: the value of the move, then optimal play).
   Cut-offs are whole percentages (a person cannot count finer at the table); the one that
   gives up least wins (among ties, the middle one, or "always" when always hitting ties).
4. The fitted rule is then played as a policy and valued exactly, next to the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flip7.solver.families import family_policy, label
from flip7.solver.solve import Moments, Solution, Sweeper, occupancy

HELD = ("no Second Chance", "a Second Chance")


@dataclass(frozen=True)
class Cell:
    """The fitted cut-off of one (numbers showing, Second Chance held) cell."""

    k: int
    held: int
    cutoff: float  # hit while risk < cutoff
    share: float  # share of the optimal player's decisions that fall in this cell
    agree: float  # share of those (weighted) where the rule plays as the optimum does
    loss: float  # points per round the cell gives up (weighted one-step loss)


@dataclass(frozen=True)
class Advice:
    """The fitted rule, its exact value, and single-number rules for comparison."""

    model_name: str
    cells: list[Cell]
    empty_share: float  # decisions with no number showing (always hit)
    rule: Moments
    optimum: Moments
    single: float  # the best single cut-off for every count (exact search)
    single_value: Moments
    best_sum: tuple[str, Moments]


#: The single cut-offs and sum:N thresholds searched exactly for comparison.
SINGLE_GRID = np.arange(18, 33) / 100
SUM_GRID = tuple(float(n) for n in range(22, 29))
#: The cut-offs a person can use: whole percentages (1.0 = always hit, 0.0 = never).
CUTOFFS = np.arange(0, 101) / 100


def fit(w: np.ndarray, risk: np.ndarray, gain: np.ndarray) -> tuple[float, float]:
    """The whole-percent cut-off that gives up least: (cutoff, loss). `gain` is Q_hit - Q_stay
    and `w` how often each state comes up. Among equal losses: "always" if it is one of them,
    else the middle one (the lower of two)."""
    lose_hit = w * np.maximum(-gain, 0.0)
    lose_stay = w * np.maximum(gain, 0.0)
    order = np.argsort(risk, kind="stable")
    r = risk[order]
    cum_hit = np.concatenate(([0.0], np.cumsum(lose_hit[order])))
    cum_stay = np.concatenate(([0.0], np.cumsum(lose_stay[order])))
    i = np.searchsorted(r, CUTOFFS, side="left")  # states with risk < cutoff are hit
    loss = cum_hit[i] + (cum_stay[-1] - cum_stay[i])
    best = np.flatnonzero(loss <= loss.min() + 1e-12)
    j = int(best[-1]) if best[-1] == len(CUTOFFS) - 1 else int(best[(len(best) - 1) // 2])
    return float(CUTOFFS[j]), float(loss[j])


def rule_policy(solution: Solution, cutoffs: dict[tuple[int, int], float]) -> np.ndarray:
    """The rule as a policy over every decision state (no numbers showing: hit)."""
    space = solution.space
    k = np.ascontiguousarray(space.feature("ncount")).reshape(-1)
    held = np.broadcast_to(space.sc_tab[:, 1][:, None, None, None], space.dec_shape).reshape(-1)
    risk = np.ascontiguousarray(space.feature("risk94")).reshape(-1)
    cut = np.ones(k.shape)
    for (kk, h), p in cutoffs.items():
        cut[(k == kk) & (held == h)] = p
    return ((risk < cut) | (k == 0)).astype(np.uint8)


def advise(solution: Solution) -> Advice:
    """Fit the rule (see the module docstring) and value it exactly."""
    space = solution.space
    occ = occupancy(space, solution.hit)
    w = occ.reach.copy()
    w[0] = 0.0  # the empty hand has no choice
    k = np.ascontiguousarray(space.feature("ncount")).reshape(-1)
    held = np.broadcast_to(space.sc_tab[:, 1][:, None, None, None], space.dec_shape).reshape(-1)
    risk = np.ascontiguousarray(space.feature("risk94")).reshape(-1)
    gain = solution.qhit - solution.stay_value()
    total = w.sum()
    cells = []
    cutoffs: dict[tuple[int, int], float] = {}
    for kk in range(1, 7):
        for h in (0, 1):
            sel = (k == kk) & (held == h) & (w > 0)
            cutoff, loss = fit(w[sel], risk[sel], gain[sel])
            cutoffs[(kk, h)] = cutoff
            ws = w[sel].sum()
            hits = risk[sel] < cutoff
            agree = w[sel][hits == (solution.hit[sel] == 1)].sum() / ws if ws > 0 else 1.0
            cells.append(Cell(kk, h, cutoff, ws / total, agree, loss))
    sweeper = Sweeper(space)
    rule = sweeper.backward(rule_policy(solution, cutoffs), optimize=False)
    single = (0.0, Moments(-1.0, 0.0, 0.0, 0.0))
    for p in SINGLE_GRID:  # one cut-off for every count: searched exactly, as a benchmark
        policy = rule_policy(solution, {(kk, h): p for kk in range(1, 7) for h in (0, 1)})
        m = sweeper.backward(policy, optimize=False)
        if m.ev > single[1].ev:
            single = (float(p), m)
    best_sum = ("", Moments(-1.0, 0.0, 0.0, 0.0))
    for n in SUM_GRID:
        m = sweeper.backward(family_policy(space, "sum", n), optimize=False)
        if m.ev > best_sum[1].ev:
            best_sum = (label("sum", n), m)
    empty = float(w[k == 0].sum() / total)
    return Advice(
        solution.model.name, cells, empty, rule, solution.moments, single[0], single[1], best_sum
    )


def _pct(p: float) -> str:
    if p >= 1.0:
        return "always"
    if p <= 0.0:
        return "never"
    return f"under {p * 100:.3g}%"


def report(advice: Advice) -> list[str]:
    """The advice as printed by `flip7 advice`."""
    out = [
        "The beer-mat rule: hit while your bust risk is under the cut-off for how many numbers",
        "you show. Bust risk, counted in the real 94-card deck from the cards in front of you:",
        "    (sum of your numbers - how many of them are not 0) / (94 - cards in front of you)",
        "e.g. 3 8 11 with +4: (22 - 3) / (94 - 4) = 21.1%.",
        "",
        f"{'numbers':>8}  {'no Second Chance':>18}{'share':>8}  {'holding one':>14}{'share':>8}",
    ]
    by = {(c.k, c.held): c for c in advice.cells}
    for kk in range(1, 7):
        a, b = by[(kk, 0)], by[(kk, 1)]
        out.append(
            f"{kk:>8}  {'hit ' + _pct(a.cutoff):>18}{a.share:>8.1%}  "
            f"{'hit ' + _pct(b.cutoff):>14}{b.share:>8.1%}"
        )
    agree = sum(c.share * c.agree for c in advice.cells)
    out += [
        f"(share: of the optimal player's decisions; with no number showing "
        f"({advice.empty_share:.1%}): always hit)",
        "",
        f"{'policy':<34}{'EV':>8}{'sd':>8}{'bust':>8}{'flip7':>8}",
        f"{'optimal (model ' + advice.model_name + ')':<34}{advice.optimum.row()}",
        f"{'this rule':<34}{advice.rule.row()}  {advice.rule.ev - advice.optimum.ev:+.3f}",
        f"{'best single cut-off: ' + _pct(advice.single):<34}{advice.single_value.row()}"
        f"  {advice.single_value.ev - advice.optimum.ev:+.3f}",
        f"{'best stand-on-sum: ' + advice.best_sum[0]:<34}{advice.best_sum[1].row()}"
        f"  {advice.best_sum[1].ev - advice.optimum.ev:+.3f}",
        "",
        f"The rule plays as the optimum does in {agree:.1%} of the optimal player's decisions.",
        "How it was fitted: for each cell (numbers showing, Second Chance or not), every",
        "whole-percent cut-off was scored by the points it gives up where it disagrees with",
        "the optimum, weighted by how often the optimal player meets each state: the sum of",
        "w(s) * |Q_hit(s) - Q_stay(s)|, exact over the state space. The least costly one is kept.",
        "The values above are exact: each rule played as a policy over the whole state space.",
    ]
    return out
