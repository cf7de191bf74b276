"""The optimal policy boiled down to rules a person can use: a bust-risk cut-off per count of
numbers showing, in two forms, each valued exactly.

- Murch's form (the table Murch's Flip 7 simulator prints): one cut-off per count, whatever
  you hold; the risk is the duplicate chance, Second Chance or not.
- Ours: a cut-off per count and per Second Chance held or not, fitted on what each mistake
  costs. It is worth more: holding a Second Chance the next card cannot bust you.

How the rules are fitted, exactly and without sampling:
1. Solve the model; sweep the optimal policy forward for w(s), the chance that the optimal
   player faces decision state s (how often each state comes up).
2. The risk of a state is what a player computes at the table: duplicates of your numbers in the
   real 94-card deck over the cards not in front of you, (sum of your numbers - how many of them
   are not 0) / (94 - your cards). A rule hits while risk < cut-off.
3. Cut-offs are whole percentages (a person cannot count finer at the table); among equally
   good ones the middle one is kept, or "always" when always hitting is one of them.
   - Murch's form: for each count, the cut-off that plays the optimal move most often, each
     state weighted by w(s): the most sum w(s) * [rule's move = optimal move].
   - Ours: for each (count, Second Chance held) cell, the cut-off that gives up the fewest
     points where it disagrees with the optimum, sum w(s) * |Q_hit(s) - Q_stay(s)| (Q: the
     value of the move, then optimal play).
4. Each rule is then played as a policy and valued exactly, next to the optimum.
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
class CountCell:
    """Murch's form: the fitted cut-off for one count of numbers showing, whatever you hold."""

    k: int
    cutoff: float  # hit while risk < cutoff
    share: float  # share of the optimal player's decisions with k numbers showing
    agree: float  # share of those (weighted) where the rule plays as the optimum does


@dataclass(frozen=True)
class Advice:
    """Both fitted rules, their exact values, and single-number rules for comparison."""

    model_name: str
    cells: list[Cell]
    empty_share: float  # decisions with no number showing (always hit)
    rule: Moments  # ours
    optimum: Moments
    single: float  # the best single cut-off for every count (exact search)
    single_value: Moments
    best_sum: tuple[str, Moments]
    murch_cells: list[CountCell]
    murch_rule: Moments


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


def fit_agreement(w: np.ndarray, risk: np.ndarray, hit: np.ndarray) -> tuple[float, float]:
    """Murch's form: the whole-percent cut-off whose move is the optimal one (`hit`, 1 = hit)
    most often, weighted by `w`: (cutoff, weight of the states where it disagrees). Ties as in
    `fit`."""
    return fit(w, risk, np.where(hit == 1, 1.0, -1.0))


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
    murch_cells = []
    per_count: dict[tuple[int, int], float] = {}
    for kk in range(1, 7):
        sel = (k == kk) & (w > 0)
        cutoff, wrong = fit_agreement(w[sel], risk[sel], solution.hit[sel])
        per_count[(kk, 0)] = per_count[(kk, 1)] = cutoff
        ws = w[sel].sum()
        murch_cells.append(CountCell(kk, cutoff, ws / total, 1.0 - wrong / ws if ws > 0 else 1.0))
    sweeper = Sweeper(space)
    rule = sweeper.backward(rule_policy(solution, cutoffs), optimize=False)
    murch_rule = sweeper.backward(rule_policy(solution, per_count), optimize=False)
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
        solution.model.name,
        cells,
        empty,
        rule,
        solution.moments,
        single[0],
        single[1],
        best_sum,
        murch_cells,
        murch_rule,
    )


def _pct(p: float) -> str:
    if p >= 1.0:
        return "always"
    if p <= 0.0:
        return "never"
    return f"under {p * 100:.3g}%"


MURCH = "Murch's form"


def report(advice: Advice) -> list[str]:
    """The advice as printed by `flip7 advice`."""
    out = [
        "Two beer-mat rules: hit while your bust risk is under the cut-off for how many numbers",
        "you show. Bust risk, counted in the real 94-card deck from the cards in front of you:",
        "    (sum of your numbers - how many of them are not 0) / (94 - cards in front of you)",
        "e.g. 3 8 11 with +4: (22 - 3) / (94 - 4) = 21.1%.",
        "",
        "Murch's form: one cut-off per count, whatever you hold (as Murch's Flip 7 simulator",
        "prints it; the risk is that of a duplicate, a Second Chance in hand or not).",
        "Ours: a cut-off per count without a Second Chance, and one holding a Second Chance",
        "(then a duplicate cannot bust you).",
        "",
        f"{'':>8}  {MURCH:>14}{'':>8}  {'ours: no Second Chance':>24}{'':>8}  {'holding one':>12}",
        f"{'numbers':>8}  {'any hand':>14}{'share':>8}  {'':>24}{'share':>8}  {'':>12}{'share':>8}",
    ]
    by = {(c.k, c.held): c for c in advice.cells}
    murch = {c.k: c for c in advice.murch_cells}
    for kk in range(1, 7):
        m, a, b = murch[kk], by[(kk, 0)], by[(kk, 1)]
        out.append(
            f"{kk:>8}  {'hit ' + _pct(m.cutoff):>14}{m.share:>8.1%}  "
            f"{'hit ' + _pct(a.cutoff):>24}{a.share:>8.1%}  "
            f"{'hit ' + _pct(b.cutoff):>12}{b.share:>8.1%}"
        )
    agree = sum(c.share * c.agree for c in advice.cells)
    murch_agree = sum(c.share * c.agree for c in advice.murch_cells)
    opt = advice.optimum.ev

    def row(name: str, m: Moments) -> str:
        return f"{name:<38}{m.row()}  {m.ev - opt:+.3f}"

    out += [
        f"(share: of the optimal player's decisions; with no number showing "
        f"({advice.empty_share:.1%}): always hit)",
        "",
        f"{'policy':<38}{'EV':>8}{'sd':>8}{'bust':>8}{'flip7':>8}",
        f"{'optimal (model ' + advice.model_name + ')':<38}{advice.optimum.row()}",
        row("ours (a Second Chance column)", advice.rule),
        row("Murch's form (one cut-off per count)", advice.murch_rule),
        row("best single cut-off: " + _pct(advice.single), advice.single_value),
        row("best stand-on-sum: " + advice.best_sum[0], advice.best_sum[1]),
        "",
        f"Ours plays as the optimum does in {agree:.1%} of the optimal player's decisions,",
        f"Murch's form in {murch_agree:.1%}.",
        "How they were fitted: the optimal policy is swept forward for w(s), how often the",
        "optimal player meets each state s. Murch's form keeps, for each count, the",
        "whole-percent cut-off that plays the optimal move most often, sum of w(s) over the",
        "states where it agrees. Ours keeps, for each count and Second Chance held or not, the",
        "cut-off that gives up the fewest points where it disagrees with the optimum, the sum of",
        "w(s) * |Q_hit(s) - Q_stay(s)|, exact over the state space.",
        "The values above are exact: each rule played as a policy over the whole state space.",
    ]
    return out
