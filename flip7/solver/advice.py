"""The optimal policy boiled down to rules a person can use: a bust-risk cut-off per count of
numbers showing, each rule valued exactly.

- Murch's table, by the procedure of Murch's Flip 7 simulator: one cut-off per count, whatever
  you hold (the risk is the duplicate chance, Second Chance or not), fitted on the model
  deck's risk and quoted on the 94-card deck.
- Ours: a cut-off per count and per Second Chance held or not, fitted on the 94-card risk
  itself. It is worth more: holding a Second Chance the next card cannot bust you.

How the rules are fitted, exactly and without sampling:
1. Solve the model; sweep the optimal policy forward for w(s), the chance that the optimal
   player faces decision state s (how often each state comes up).
2. A rule hits while risk < cut-off. Cut-offs are whole percentages of the risk they are fitted
   on; among equally good ones the middle one is kept, or "always" when always hitting is one
   of them. Each cut-off is the one that gives up the fewest points where it disagrees with
   the optimum: the least sum w(s) * |Q_hit(s) - Q_stay(s)| over the states it plays wrongly
   (Q: the value of the move, then optimal play); not the one that agrees most often.
   - Murch's procedure: for each count, over the states that hold no Second Chance, on the
     solver's risk in the model deck (duplicates left / cards left of its 88); the cut-off is
     then quoted on the 94-card deck, x 88/94 (x model cards / 94).
   - Ours: for each (count, Second Chance held) cell, on the risk a player computes at the
     table: duplicates of your numbers in the 94-card deck over the cards not in front of you,
     (sum of your numbers - how many of them are not 0) / (94 - your cards).
3. Each rule is then played as a policy, at the table (its cut-offs against the 94-card risk),
   and valued exactly, next to the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flip7.cards import CLASSIC
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
    """Murch's procedure: the cut-off for one count of numbers showing, whatever you hold."""

    k: int
    fitted: float  # on the model deck's risk: hit while risk < fitted (1.0: always)
    cutoff: float  # quoted on the 94-card deck: fitted x model cards / 94 (1.0: always)
    share: float  # share of the optimal player's decisions with k numbers showing
    agree: float  # share of those (weighted) where the quoted rule plays as the optimum does
    loss: float  # points per round given up, as fitted (over the states without a Second Chance)


@dataclass(frozen=True)
class Advice:
    """Murch's table and ours, their exact values, and single-number rules for comparison."""

    model_name: str
    cells: list[Cell]
    empty_share: float  # decisions with no number showing (always hit)
    rule: Moments  # ours
    optimum: Moments
    single: float  # the best single cut-off for every count (exact search)
    single_value: Moments
    best_sum: tuple[str, Moments]
    murch_cells: list[CountCell]
    murch_rule: Moments  # Murch's table, played at the table
    murch_sc_rule: Moments  # Murch's cut-offs, and holding a Second Chance: always hit
    model_cards: int  # the model deck's size (Murch's 88): cut-offs are quoted x this / 94
    agreement: dict[str, float]  # per rule: share of decisions where it plays the optimal move


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


def quoted(fitted: float, model_cards: int) -> float:
    """A cut-off fitted on the model deck's risk, quoted on the 94-card deck (x model cards /
    94); "always" (1.0) stays "always"."""
    return 1.0 if fitted >= 1.0 else fitted * model_cards / CLASSIC.size


def murch_table(
    solution: Solution, w: np.ndarray
) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """Murch's procedure (module docstring): per count k = 1..6, the whole-percent cut-off on
    the model deck's risk that gives up the fewest points against the optimum over the states
    holding no Second Chance, weighted by `w`. Returns (fitted, quoted, loss) by count."""
    space = solution.space
    k = np.ascontiguousarray(space.feature("ncount")).reshape(-1)
    held = np.broadcast_to(space.sc_tab[:, 1][:, None, None, None], space.dec_shape).reshape(-1)
    risk = np.ascontiguousarray(space.feature("risk")).reshape(-1)
    gain = solution.qhit - solution.stay_value()
    cards = int(space.params[0])
    fitted, quote, loss = {}, {}, {}
    for kk in range(1, 7):
        sel = (k == kk) & (held == 0) & (w > 0)
        fitted[kk], loss[kk] = fit(w[sel], risk[sel], gain[sel])
        quote[kk] = quoted(fitted[kk], cards)
    return fitted, quote, loss


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
    fitted, quote, mloss = murch_table(solution, w)
    per_count = {(kk, h): quote[kk] for kk in range(1, 7) for h in (0, 1)}
    sc_column = {(kk, h): (quote[kk] if h == 0 else 1.0) for kk in range(1, 7) for h in (0, 1)}
    murch_policy = rule_policy(solution, per_count)
    murch_cells = []
    for kk in range(1, 7):
        sel = (k == kk) & (w > 0)
        ws = w[sel].sum()
        agree = w[sel][murch_policy[sel] == solution.hit[sel]].sum() / ws if ws > 0 else 1.0
        murch_cells.append(CountCell(kk, fitted[kk], quote[kk], ws / total, agree, mloss[kk]))
    ours_policy = rule_policy(solution, cutoffs)
    sc_policy = rule_policy(solution, sc_column)
    sweeper = Sweeper(space)
    rule = sweeper.backward(ours_policy, optimize=False)
    murch_rule = sweeper.backward(murch_policy, optimize=False)
    murch_sc_rule = sweeper.backward(sc_policy, optimize=False)
    some = (k > 0) & (w > 0)

    def agreement(policy: np.ndarray) -> float:
        return float(w[some][policy[some] == solution.hit[some]].sum() / w[some].sum())

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
        murch_sc_rule,
        int(space.params[0]),
        {
            "murch": agreement(murch_policy),
            "murch_sc": agreement(sc_policy),
            "ours": agreement(ours_policy),
        },
    )


def _pct(p: float) -> str:
    if p >= 1.0:
        return "always"
    if p <= 0.0:
        return "never"
    return f"under {p * 100:.3g}%"


MURCH = "Murch's table"
MURCH_SC = "Murch's, holding a Second Chance: hit"
OURS = "ours (a Second Chance column)"


def report(advice: Advice) -> list[str]:
    """The advice as printed by `flip7 advice`: Murch's table by his procedure first, then ours."""
    cards = advice.model_cards
    out = [
        "Beer-mat rules: hit while your bust risk is under the cut-off for how many numbers you",
        "show. Bust risk, counted in the real 94-card deck from the cards in front of you:",
        "    (sum of your numbers - how many of them are not 0) / (94 - cards in front of you)",
        "e.g. 3 8 11 with +4: (22 - 3) / (94 - 4) = 21.1%.",
        "",
        "Murch's table, by his procedure: for each count of numbers, the cut-off that gives up the",
        "fewest points against the optimum over the hands holding no Second Chance (each weighted",
        f"by how often optimal play meets it), fitted on the model deck's risk ({cards} cards) and",
        f"quoted on the 94-card deck (x {cards}/94). One cut-off per count, whatever you hold.",
        "Ours: the same criterion on the 94-card risk itself, per count and per Second Chance",
        "held or not (holding one, a duplicate cannot bust you).",
        "",
        f"{'':>8}  {MURCH + ', hit while the risk is':>34}{'':>8}  "
        f"{'ours: no Second Chance':>22}{'':>8}  {'holding one':>12}",
        f"{'numbers':>8}  {'model deck':>14}{'94 cards':>14}{'share':>8}  "
        f"{'94 cards':>22}{'share':>8}  {'94 cards':>12}{'share':>8}",
    ]
    by = {(c.k, c.held): c for c in advice.cells}
    murch = {c.k: c for c in advice.murch_cells}
    for kk in range(1, 7):
        m, a, b = murch[kk], by[(kk, 0)], by[(kk, 1)]
        out.append(
            f"{kk:>8}  {_pct(m.fitted):>14}{_pct(m.cutoff):>14}{m.share:>8.1%}  "
            f"{_pct(a.cutoff):>22}{a.share:>8.1%}  {_pct(b.cutoff):>12}{b.share:>8.1%}"
        )
    opt = advice.optimum.ev
    agree = advice.agreement

    def row(name: str, m: Moments) -> str:
        return f"{name:<38}{m.row()}  {m.ev - opt:+.3f}"

    out += [
        f"(share: of the optimal player's decisions; with no number showing "
        f"({advice.empty_share:.1%}): always hit)",
        "",
        f"{'policy':<38}{'EV':>8}{'sd':>8}{'bust':>8}{'flip7':>8}",
        row(MURCH + " (his procedure)", advice.murch_rule),
        row(MURCH_SC, advice.murch_sc_rule),
        row(OURS, advice.rule),
        row("best single cut-off: " + _pct(advice.single), advice.single_value),
        row("best stand-on-sum: " + advice.best_sum[0], advice.best_sum[1]),
        f"{'optimal (model ' + advice.model_name + ')':<38}{advice.optimum.row()}",
        "",
        "Each rule is played at the table (its cut-offs against the 94-card risk) and valued",
        "exactly as a policy over the whole state space. They play as the optimum does in",
        f"{agree['murch']:.1%} (Murch's table), {agree['murch_sc']:.1%} (Murch's, holding a Second "
        f"Chance: hit) and {agree['ours']:.1%} (ours)",
        "of the optimal player's decisions with a number showing.",
        "How they were fitted: the optimal policy is swept forward for w(s), how often the",
        "optimal player meets each state s; each cut-off is the whole percent that gives up the",
        "fewest points where it disagrees with the optimum, the sum of w(s) * |Q_hit(s) -",
        "Q_stay(s)|, exact over the state space (Murch's over the hands holding no Second Chance,",
        "on the model deck's risk; ours per Second Chance held or not, on the 94-card risk).",
        "Murch's, holding a Second Chance: hit keeps his cut-offs and always hits holding one.",
    ]
    return out
