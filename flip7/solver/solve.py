"""Exact values over a model's state space: the optimal policy, any fixed policy, the chance of
reaching each state, and the count of reachable states.

Everything here is an expectation computed by a sweep over every state (no sampling): the mean
score, its second moment (hence the sd), the bust chance and the Flip 7 chance of a policy, and
its exact score distribution. A policy is a uint8 array over decision states (1 = hit), laid
out as `Space.dec_shape`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from flip7.solver.model import Model, Space, build_space

#: Above this many states the sweeps store float32 (the full model: 211M states x 4 values).
FLOAT32_ABOVE = 50_000_000


def kernels(reference: bool = False) -> ModuleType:
    """The compiled kernels (imports numba on first use, so `import flip7` stays cheap)."""
    try:
        if reference:
            from flip7.solver import reference as k
        else:
            from flip7.solver import kernels as k
    except ImportError as exc:  # numba missing
        raise RuntimeError(
            f"the exact solver needs numba ({exc}); install it with `pip install numba`"
        ) from None
    return k


def warm_up() -> float:
    """Load (or compile) the kernels by solving a two-card deck; returns the seconds it took,
    so that timings of real solves measure the work alone."""
    from flip7.solver.model import deck_of

    t0 = time.perf_counter()
    space = build_space(Model("warm-up", deck_of("warm-up", {5: 2}), keep_duplicate=True))
    hit = np.zeros(int(np.prod(space.dec_shape)), np.uint8)
    Sweeper(space).backward(hit, optimize=True)
    occupancy(space, hit)
    return time.perf_counter() - t0


@dataclass(frozen=True)
class Moments:
    """Exact figures of one policy on one model."""

    ev: float
    sd: float
    bust: float
    flip7: float

    def row(self) -> str:
        """EV, sd, bust, Flip 7 to the precision Murch's simulator prints."""
        return f"{self.ev:>8.3f}{self.sd:>8.2f}{self.bust:>8.1%}{self.flip7:>8.2%}"


@dataclass
class Solution:
    """The optimal solo round of a model. Decision-state arrays are flat in `dec_shape`."""

    model: Model
    space: Space
    moments: Moments
    hit: np.ndarray  # uint8: the optimal choice (1 = hit)
    value: np.ndarray  # the optimal value
    qhit: np.ndarray  # the value of hitting now, then playing optimally
    bust: np.ndarray  # chance of busting from here under optimal play
    flip7: np.ndarray  # chance of a Flip 7 from here under optimal play
    seconds: float

    def stay_value(self) -> np.ndarray:
        """Points banked by staying, per decision state."""
        return np.ascontiguousarray(self.space.feature("points")).reshape(-1)


class Sweeper:
    """Backward sweeps over one space, reusing one set of work arrays."""

    def __init__(self, space: Space, dtype: type | None = None) -> None:
        self.space = space
        self.k = kernels()
        n = space.n_states
        if dtype is None:
            dtype = np.float32 if n > FLOAT32_ABOVE else np.float64
        self.q = np.empty((n, 4), dtype)  # expected score, its square, bust, Flip 7
        self.qhit = np.empty(int(np.prod(space.dec_shape)), np.float64)

    def backward(self, hit: np.ndarray, optimize: bool) -> Moments:
        """Fill the work arrays for policy `hit` (or the optimum, written into `hit`)."""
        if hit.dtype != np.uint8 or hit.size != self.qhit.size:
            raise ValueError(f"a policy is a uint8 array of {self.qhit.size} decision states")
        self.k.backward(*self.space.tabs, optimize, hit, self.qhit, self.q)
        ev, m2, bust, flip7 = (float(x) for x in self.q[0])
        return Moments(ev, math.sqrt(max(m2 - ev * ev, 0.0)), bust, flip7)

    def decision(self, column: int) -> np.ndarray:
        """One value (0 EV, 1 square, 2 bust, 3 Flip 7) of every decision state, as float64."""
        sp = self.space
        full = self.q[:, column].reshape(sp.n_sc, sp.n_masks, 64, sp.n_phases)
        return full[..., : sp.n_dec].astype(np.float64).reshape(-1)


def solve(model: Model) -> Solution:
    """The optimal solo round of `model`, exactly."""
    space = build_space(model)
    sweeper = Sweeper(space)
    hit = np.zeros(sweeper.qhit.size, np.uint8)
    t0 = time.perf_counter()
    moments = sweeper.backward(hit, optimize=True)
    seconds = time.perf_counter() - t0
    return Solution(
        model,
        space,
        moments,
        hit,
        sweeper.decision(0),
        sweeper.qhit.copy(),
        sweeper.decision(2),
        sweeper.decision(3),
        seconds,
    )


def evaluate(space: Space, hit: np.ndarray, sweeper: Sweeper | None = None) -> Moments:
    """Exact EV, sd, bust and Flip 7 chance of the fixed policy `hit` (the empty hand hits)."""
    return (sweeper or Sweeper(space)).backward(hit, optimize=False)


def carry_policy(solution: Solution, space: Space) -> np.ndarray:
    """`solution`'s policy played in another model's space (same numbers in the deck): each
    state takes the choice of the state with the same hand, Second Chances drawn and held
    (and the same Flip Threes drawn, or none where the source has none)."""
    src = solution.space
    if not np.array_equal(src.masks, space.masks):
        raise ValueError("models with different numbers in their decks share no states")
    hit = solution.hit.reshape(src.dec_shape)
    out = np.empty(space.dec_shape, np.uint8)
    for i, (d, h, u) in enumerate(space.sc_states):
        j = src.sc_index(d, h, u)
        for t in range(space.n_dec):
            out[i, :, :, t] = hit[j, :, :, min(t, src.n_dec - 1)]
    return out.reshape(-1)


@dataclass(frozen=True)
class Occupancy:
    """Where a policy goes: the chance of reaching each decision state, the exact score
    distribution (`dist[x]` = chance of scoring x), and the bust and Flip 7 chances."""

    reach: np.ndarray
    dist: np.ndarray
    bust: float
    flip7: float
    reachable_states: int  # decision and Flip Three states with a chance above zero

    @property
    def ev(self) -> float:
        return float(np.arange(len(self.dist)) @ self.dist)


def occupancy(space: Space, hit: np.ndarray, reference: bool = False) -> Occupancy:
    """The forward sweep of policy `hit` (`reference`: the plain kernel built on `outcomes`,
    the statement the fast kernels are tested against)."""
    fast = kernels()
    prob = np.zeros(space.n_states, np.float64)
    hist = np.zeros(fast.HIST, np.float64)
    sweep = kernels(reference=True).forward if reference else fast.forward_fast
    bust, flip7 = sweep(*space.tabs, hit, prob, hist)
    dec = prob.reshape(space.n_sc, space.n_masks, 64, space.n_phases)[..., : space.n_dec]
    return Occupancy(
        dec.reshape(-1).copy(), hist, float(bust), float(flip7), int(np.count_nonzero(prob))
    )


@dataclass(frozen=True)
class Reach:
    """How many states a player can reach (playing any policy at all)."""

    decision: int  # decision points: the states a policy table needs
    total: int  # with the chance nodes inside a Flip Three
    slots: int  # the dense table's size (13-bit masks x 64 x Second Chance states x t)


def reachable(space: Space) -> Reach:
    """Count the states reachable from the empty hand: those the always-hit policy reaches
    with positive chance (staying only ends the round, so it reaches nothing new)."""
    always = np.ones(int(np.prod(space.dec_shape)), np.uint8)
    occ = occupancy(space, always)
    slots = (1 << 13) * 64 * space.n_sc * space.n_dec
    return Reach(int(np.count_nonzero(occ.reach)), occ.reachable_states, slots)
