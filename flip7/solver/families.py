"""The named policy families as exact policies over a model's decision states, and their table.

- sum:N    hit while the numbers shown total less than N (the engine's SumPolicy)
- count:N  hit while fewer than N distinct numbers show (CountPolicy)
- bust:P   hit while the chance that the next card busts you is under P: the chance of a
           duplicate, and 0 while you hold a Second Chance (BustPolicy)
- dup:P    hit while the chance that the next card duplicates one of your numbers is under P,
           Second Chance or not (DupPolicy): the rows "bust risk < P" of Murch's simulator
           Both chances are exact in the model's deck (duplicates left / cards left).
- ev       hit when one more card then staying is worth more than staying now, over the model's
           deck, Freeze and Flip Three counted as neutral (EVPolicy's rule)
Every policy hits from the empty hand (there is nothing to bank). Values are exact: each policy
is one backward sweep over the whole state space.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from flip7.solver.model import MODELS, Space
from flip7.solver.solve import FLOAT32_ABOVE, Moments, Solution, Sweeper

_RISKS = tuple(round(0.05 * i, 2) for i in range(1, 14))
#: The grids `flip7 solve --all` evaluates; they hold the rows Murch's simulator printed
#: (sum 16, 20, 24; count 3, 4, 5; its "bust risk" 0.25, 0.35, 0.45, our dup family).
GRIDS: dict[str, tuple[float, ...]] = {
    "sum": tuple(float(n) for n in range(10, 36)),
    "count": tuple(float(n) for n in range(1, 8)),
    "bust": _RISKS,
    "dup": _RISKS,
}
#: A smaller grid for models whose sweeps take seconds each (the full model).
SHORT_GRIDS: dict[str, tuple[float, ...]] = {
    "sum": (16.0, 20.0, 22.0, 24.0, 26.0, 28.0),
    "count": (3.0, 4.0, 5.0),
    "bust": (0.25, 0.3, 0.35, 0.45),
    "dup": (0.25, 0.3, 0.35, 0.45),
}
#: The `Space.feature` each family compares with its parameter (bust: see `bust_risk`).
_FEATURE = {"sum": "nsum", "count": "ncount", "dup": "risk"}
#: The families and what each one's rule says, for the table's legend.
LEGEND = {
    "sum": "sum:N hits while the numbers shown total under N",
    "count": "count:N hits while fewer than N numbers show",
    "bust": "bust:P hits while the chance that the next card busts you is under P (0 holding a "
    "Second Chance)",
    "dup": "dup:P hits while the chance that the next card is a duplicate is under P, Second "
    "Chance or not (Murch's simulator's \"bust risk < P\" rows)",
}


def label(family: str, param: float) -> str:
    """The policy spec, e.g. 'sum:20' or 'bust:0.25'."""
    return f"{family}:{int(param)}" if family in ("sum", "count") else f"{family}:{param:g}"


def bust_risk(space: Space) -> np.ndarray:
    """The chance that the next card busts you, in every decision state (`dec_shape`): the
    chance of a duplicate in the model's deck, 0 while you hold a Second Chance."""
    held = space.sc_tab[:, 1][:, None, None, None] == 1
    return np.where(held, 0.0, space.feature("risk"))


def family_policy(space: Space, family: str, param: float) -> np.ndarray:
    """The hit/stay choice of `family:param` in every decision state (uint8, 1 = hit)."""
    if family not in LEGEND:
        raise ValueError(f"unknown policy family {family!r}; valid: {', '.join(LEGEND)}")
    value = bust_risk(space) if family == "bust" else space.feature(_FEATURE[family])
    return (value < param).astype(np.uint8).reshape(-1)


def ev_policy(space: Space) -> np.ndarray:
    """The one-step lookahead in every decision state (uint8, 1 = hit)."""
    copies = space.copies
    mt, md = space.mask_tab, space.mod_tab
    bits = 1 - ((space.masks[:, None] >> np.arange(13)) & 1)  # numbers not shown
    new_w = (bits @ copies)[None, :, None, None]
    new_v = (bits @ (copies * np.arange(13)))[None, :, None, None]
    nsum = mt[:, 13][None, :, None, None]
    k = mt[:, 15][None, :, None, None]
    plus = md[:, 0][None, None, :, None]
    mult = 1 + md[:, 1][None, None, :, None]
    pts = nsum * mult + plus
    _, n_sc, n_t, n_f, _, bonus = (int(x) for x in space.params)
    d = space.sc_tab[:, 0][:, None, None, None]
    h = space.sc_tab[:, 1][:, None, None, None]
    t = np.arange(space.n_dec)[None, None, None, :]
    acc = mult * (new_w * nsum + new_v) + new_w * plus + (k == 6) * new_w * bonus
    acc = acc + space.feature("dups") * h * pts
    mod_bits = (np.arange(64)[:, None] >> np.arange(6)) & 1
    free = (1 - mod_bits) * space.mod_w  # modifier copies still in the deck
    plus_values = np.array([2, 4, 6, 8, 10])
    free_plus = free[:, :5].sum(axis=1)[None, None, :, None]
    gain_plus = (free[:, :5] @ plus_values)[None, None, :, None]
    free_x2 = free[:, 5][None, None, :, None]
    acc = acc + free_plus * pts + gain_plus + free_x2 * (nsum * 2 + plus)
    acc = acc + ((n_sc - d) + (n_t - t) + n_f) * pts  # actions: neutral
    left = space.feature("left")
    hit = (left > 0) & (acc > pts * left)
    return hit.astype(np.uint8).reshape(-1)


@dataclass(frozen=True)
class Row:
    """One row of the policy table."""

    label: str
    family: str
    param: float
    moments: Moments


def policy_rows(solution: Solution, grids: dict[str, Iterable[float]] | None = None) -> list[Row]:
    """The optimum, ev, then every family over its grid, each valued exactly."""
    space = solution.space
    big = space.n_states > FLOAT32_ABOVE
    if grids is None:
        grids = SHORT_GRIDS if big else GRIDS
    jobs = [("ev", "ev", 0.0)] + [
        (label(family, p), family, p) for family, params in grids.items() for p in params
    ]
    # The kernel releases the GIL: one thread and one set of work arrays per core.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = 1 if big else max(1, min(cores or 1, 4))
    sweepers: queue.SimpleQueue[Sweeper] = queue.SimpleQueue()
    for _ in range(workers):
        sweepers.put(Sweeper(space))

    def value(job: tuple[str, str, float]) -> Row:
        name, family, p = job
        hit = ev_policy(space) if family == "ev" else family_policy(space, family, p)
        sweeper = sweepers.get()
        try:
            return Row(name, family, p, sweeper.backward(hit, optimize=False))
        finally:
            sweepers.put(sweeper)

    with ThreadPoolExecutor(workers) as pool:
        rows = list(pool.map(value, jobs))
    return [Row("optimal", "optimal", 0.0, solution.moments), *rows]


def format_rows(rows: list[Row]) -> list[str]:
    """The table as Murch's simulator prints it, a star on the best of each family."""
    best: dict[str, float] = {}
    for r in rows:
        best[r.family] = max(best.get(r.family, -1.0), r.moments.ev)
    lines = [f"{'policy':<20}{'EV':>8}{'sd':>8}{'bust':>8}{'flip7':>8}"]
    for r in rows:
        star = "  *" if r.family in LEGEND and r.moments.ev == best[r.family] else ""
        gap = "" if r.family == "optimal" else f"  {r.moments.ev - rows[0].moments.ev:+.3f}"
        lines.append(f"{r.label:<20}{r.moments.row()}{gap}{star}")
    return lines


__all__ = [
    "GRIDS",
    "LEGEND",
    "MODELS",
    "Row",
    "bust_risk",
    "ev_policy",
    "family_policy",
    "format_rows",
    "policy_rows",
]
