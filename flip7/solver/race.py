"""The solo race: the fewest rounds to reach a target score, exactly, under a solver model.

The rulebook's solo challenge asks how many rounds you need to reach 200. A round's score S
depends on the round policy; the banked score b then moves to b + S. Under the model's
assumption that **every round starts from a fresh, full deck** (the solo models of
`flip7.solver.model`), the banked score is a Markov chain and the race is solved exactly by
backward induction over b:

    V(b) = 1 + min over round policies of E[V(b + S)],   V(b) = 0 for b >= target.

For a fixed b the round's objective is a terminal reward of the round score, f(s) = V(b + s),
so the in-round dynamic programme with that terminal reward (`race_backward`, the solver's
backward sweep with f in place of the score) gives the best stop rule at b. Every s > 0 lands
on a b' > b already solved; s = 0 (a bust, or staying on a lone 0) leads back to V(b) itself.
So V(b) = x is the fixed point of x = T(x) = 1 + min_pi (C_pi + P0_pi * x), where C_pi is the
expected V(b + S) over S > 0 and P0_pi the chance of S = 0. It is solved by policy iteration
on that scalar (Newton's method on a concave piecewise-linear T): sweep at a guess x, which
returns the best policy and its (C, P0); its own value is x' = (1 + C) / (1 - P0); sweep again
at x' until the value no longer moves: then T(x') = x' and x' is V(b), exactly. The same
sweep also returns the range of x over which its policy stays optimal (policy improvement
holds state by state in an acyclic round), so when x' falls in it, x' is V(b) without a
second sweep: one backward sweep per b in the usual case, plus one forward sweep for the
distribution of S under the chosen policy.

`solve_within` maximises instead the chance of reaching the target in at most K rounds:
W_k(b) = max_pi E[W_{k-1}(b + S)], W_0(b) = [b >= target]; there s = 0 leads to W_{k-1}(b),
known, so no fixed point is needed (K x target sweeps).

A fixed round policy (dp, ev, sum:N, bust:P) makes the banked score a Markov chain with the
policy's exact score distribution; `chain` gives its expected rounds and P(done in <= k).
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flip7.solver.cache import cache_dir, dense_bits, load_cached, read_file, write_file
from flip7.solver.kernels import HIST, forward_fast
from flip7.solver.model import Model, Space, build_space
from flip7.solver.race_kernel import race_backward

#: Cut-off for "the value no longer moves" in the policy iteration on V(b).
TOL = 1e-12
MAGIC = b"FLIP7RC1"
#: Rounds the distributions run to (the chance of needing more is printed).
MAX_ROUNDS = 60


class _Sweeps:
    """Work arrays for the race's sweeps over one space."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self.q = np.empty((space.n_states, 2), np.float64)
        self.prob = np.empty(space.n_states, np.float64)
        self.hist = np.empty(HIST, np.float64)
        self.n_dec = int(np.prod(space.dec_shape))
        self.bounds = np.empty(2, np.float64)
        self.all_rows = np.zeros(0, np.uint8)
        self.sweeps = 0

    def backward(self, hit: np.ndarray, cost: np.ndarray, x: float, optimize: bool) -> float:
        """The round's expected terminal cost (C + P0 * x); `hit` is filled when optimising,
        and `bounds` with where that policy stays optimal."""
        self.bounds[0], self.bounds[1] = -np.inf, np.inf
        race_backward(*self.space.tabs, optimize, hit, cost, x, self.q, self.bounds, self.all_rows)
        self.sweeps += 1
        c, p0 = self.q[0]
        return float(c + p0 * x)

    def root(self) -> tuple[float, float]:
        """(C, P0) of the last backward sweep, from the empty hand."""
        return float(self.q[0, 0]), float(self.q[0, 1])

    def scores(self, hit: np.ndarray) -> np.ndarray:
        """The exact score distribution of round policy `hit` (a copy)."""
        self.prob[:] = 0.0
        self.hist[:] = 0.0
        forward_fast(*self.space.tabs, hit, self.prob, self.hist)
        return self.hist.copy()


@dataclass(frozen=True)
class Chain:
    """The race of a round policy: expected rounds from every banked score and the chance of
    being done within k rounds from 0 (`cdf[k]`, k = 0..MAX_ROUNDS)."""

    rounds: np.ndarray  # rounds[b]: expected rounds to reach the target from banked score b
    cdf: np.ndarray

    @property
    def expected(self) -> float:
        return float(self.rounds[0])

    def quantile(self, p: float) -> int:
        """The fewest rounds k with P(done in <= k) >= p (MAX_ROUNDS + 1 if beyond)."""
        hit = np.flatnonzero(self.cdf >= p - 1e-12)
        return int(hit[0]) if hit.size else MAX_ROUNDS + 1


def chain(dists: np.ndarray, target: int) -> Chain:
    """Expected rounds and P(done in <= k) for a race whose round score from banked score b has
    distribution `dists[b]` (shape (target, HIST)), or the same one at every b (shape (HIST,))."""
    if dists.ndim == 1:
        dists = np.broadcast_to(dists, (target, dists.shape[0]))
    if dists.shape[0] != target:
        raise ValueError(f"need one score distribution per banked score 0..{target - 1}")
    n = dists.shape[1]
    v = np.zeros(target + n)
    for b in range(target - 1, -1, -1):
        p = dists[b]
        if p[0] >= 1.0:
            raise ValueError(f"from banked score {b} the round never scores: the race never ends")
        v[b] = (1.0 + p[1:] @ v[b + 1 : b + n]) / (1.0 - p[0])
    w = np.zeros(target + n)
    w[target:] = 1.0
    cdf = np.zeros(MAX_ROUNDS + 1)
    for k in range(1, MAX_ROUNDS + 1):
        nxt = w.copy()
        for b in range(target):
            nxt[b] = dists[b] @ w[b : b + n]
        w = nxt
        cdf[k] = w[0]
    return Chain(v[:target].copy(), cdf)


@dataclass
class RaceSolution:
    """The race-optimal policy of a model for a target. `policies[b]` is the packed bits
    (numpy.packbits, solver order, bit 1 = hit) of the round policy at banked score b,
    `dists[b]` its exact score distribution."""

    model: Model
    space: Space
    target: int
    values: np.ndarray  # V(b), b = 0..target-1, from the backward induction
    policies: list[bytes]
    dists: np.ndarray
    seconds: float
    sweeps: int
    chain: Chain = field(init=False)

    def __post_init__(self) -> None:
        self.chain = chain(self.dists, self.target)

    @property
    def expected(self) -> float:
        return float(self.values[0])

    def hit(self, b: int) -> np.ndarray:
        """The round policy at banked score b as a uint8 array over the decision states."""
        n = int(np.prod(self.space.dec_shape))
        return np.unpackbits(np.frombuffer(self.policies[b], np.uint8), count=n)


def _check_target(target: int) -> None:
    if not 1 <= target <= 10_000:
        raise ValueError(f"the race target must be a whole number in 1..10000, got {target}")


def solve_race(
    model: Model, target: int = 200, progress: Callable[[int], None] | None = None
) -> RaceSolution:
    """The policy minimising the expected rounds to reach `target` (see the module docstring)."""
    _check_target(target)
    space = build_space(model)
    sw = _Sweeps(space)
    t0 = time.perf_counter()
    v = np.zeros(target + HIST)
    cost = np.zeros(HIST)
    hit = np.zeros(sw.n_dec, np.uint8)
    policies: list[bytes] = [b""] * target
    dists = np.zeros((target, HIST))
    # The score distributions (forward sweeps) run in a second thread: the kernels release
    # the GIL, and no backward sweep waits for them.
    fw = _Sweeps(space)
    pool = ThreadPoolExecutor(1)
    pending = []
    for b in range(target - 1, -1, -1):
        cost[:] = v[b : b + HIST]
        cost[0] = 0.0
        # The guess: V extrapolated from the two scores above (V changes smoothly with b).
        x = 2 * v[b + 1] - v[b + 2] if b + 2 < target else v[b + 1] if b + 1 < target else 1.0
        for _ in range(50):
            sw.backward(hit, cost, x, optimize=True)
            c, p0 = sw.root()
            if p0 >= 1.0:
                raise ValueError(f"model {model.name}: a round can never score")
            nxt = (1.0 + c) / (1.0 - p0)  # the exact value of the policy just found
            slack = TOL * max(1.0, abs(nxt))
            lo, hi = sw.bounds
            done = lo - slack <= nxt <= hi + slack or abs(nxt - x) <= slack
            x = nxt
            if done:
                break
        else:  # pragma: no cover - Newton on a piecewise-linear function ends in a few steps
            raise RuntimeError(f"the race value at banked score {b} did not settle")
        v[b] = x
        policies[b] = np.packbits(hit).tobytes()
        pending.append((b, pool.submit(fw.scores, hit.copy())))
        if progress is not None:
            progress(b)
    for b, done_b in pending:
        dists[b] = done_b.result()
    pool.shutdown()
    return RaceSolution(
        model,
        space,
        target,
        v[:target].copy(),
        policies,
        dists,
        time.perf_counter() - t0,
        sw.sweeps,
    )


@dataclass(frozen=True)
class Within:
    """The policy maximising P(reach the target in at most K rounds): `best[k]` = that
    chance for k = 0..K (each its own optimum), from banked score 0."""

    target: int
    k: int
    best: np.ndarray
    seconds: float
    sweeps: int


def solve_within(model: Model, target: int, k: int) -> Within:
    """Maximise P(reach `target` within `k` rounds) by backward induction over rounds left."""
    _check_target(target)
    if not 1 <= k <= MAX_ROUNDS:
        raise ValueError(f"--within K needs K in 1..{MAX_ROUNDS}, got {k}")
    space = build_space(model)
    sw = _Sweeps(space)
    t0 = time.perf_counter()
    hit = np.zeros(sw.n_dec, np.uint8)
    w = np.zeros(target + HIST)
    w[target:] = 1.0
    best = np.zeros(k + 1)
    cost = np.zeros(HIST)
    for j in range(1, k + 1):
        nxt = w.copy()
        for b in range(target if j < k else 1):  # the last level: only from 0
            cost[:] = -w[b : b + HIST]
            cost[0] = 0.0
            nxt[b] = -sw.backward(hit, cost, -w[b], optimize=True)
        w = nxt
        best[j] = w[0]
    return Within(target, k, best, time.perf_counter() - t0, sw.sweeps)


def policy_chain(space: Space, hit: np.ndarray, target: int) -> Chain:
    """The race of one fixed round policy (the same at every banked score)."""
    return chain(_Sweeps(space).scores(hit), target)


# -- the cached table -----------------------------------------------------------------------


def race_path(model: Model, target: int, directory: str | os.PathLike[str] | None = None) -> Path:
    """The cache file of a model's race table for a target."""
    return cache_dir(directory) / f"race-{model.name}-{model.key}-t{target}.bin"


def write_race(path: Path, solution: RaceSolution) -> Path:
    """Write the race table: `FLIP7RC1`, a uint32 header length, a JSON header (model, key,
    target, the dp table's layout, V(b), offsets), then per banked score b = 0..target-1 the
    zlib-compressed bits of its round policy in the dp table's dense layout."""
    space = solution.space
    model = space.model
    blobs = []
    for b in range(solution.target):
        dense = dense_bits(space, solution.hit(b))
        blobs.append(zlib.compress(np.packbits(dense.reshape(-1), bitorder="little").tobytes(), 6))
    offsets = np.cumsum([0] + [len(x) for x in blobs]).tolist()
    header = {
        "format": 1,
        "model": model.name,
        "key": model.key,
        "target": solution.target,
        "layout": "per banked score: zlib of ((mask13 * 64 + mods6) * n_sc + sc) * n_t + t, "
        "bit 1 = hit",
        "n_sc": space.n_sc,
        "n_t": space.n_dec,
        "sc_states": [list(s) for s in space.sc_states],
        "values": solution.values.tolist(),
        "offsets": offsets,
    }
    return write_file(path, MAGIC, header, *blobs)


class RaceTable:
    """A loaded race table: `hit(b, mask, mods, sc, t)` is one bit test in the table of banked
    score b (decompressed on first use)."""

    def __init__(self, header: dict[str, object], blob: bytes) -> None:
        self.header = header
        self.target = int(header["target"])  # type: ignore[call-overload]
        self.n_sc = int(header["n_sc"])  # type: ignore[call-overload]
        self.n_t = int(header["n_t"])  # type: ignore[call-overload]
        self.sc_states = tuple(tuple(int(x) for x in s) for s in header["sc_states"])  # type: ignore[attr-defined]
        self.values = np.asarray(header["values"], np.float64)
        self._offsets = list(header["offsets"])  # type: ignore[call-overload]
        self._blob = blob
        self._bits: dict[int, bytes] = {}

    def bits(self, b: int) -> bytes:
        """The packed dense table of banked score b (clamped to 0..target-1)."""
        b = min(max(b, 0), self.target - 1)
        got = self._bits.get(b)
        if got is None:
            got = zlib.decompress(self._blob[self._offsets[b] : self._offsets[b + 1]])
            self._bits[b] = got
        return got

    def sc_index(self, drawn: int, held: int, used: int = 0) -> int:
        """The table's index of a Second Chance state (as `flip7.solver.cache.Table`)."""
        key = (drawn, held, used)
        if key not in self.sc_states:
            key = (drawn, held, 0)
        return self.sc_states.index(key)

    def hit(self, b: int, mask: int, mods: int, sc: int, t: int = 0) -> bool:
        """True when the round policy of banked score b hits in this state."""
        i = ((mask * 64 + mods) * self.n_sc + sc) * self.n_t + t
        return bool(self.bits(b)[i >> 3] >> (i & 7) & 1)


def read_race(path: Path) -> RaceTable:
    """Load a race table file; a ValueError says what is wrong with a bad one."""
    header, blob = read_file(path, MAGIC, "race")
    if len(blob) != header["offsets"][-1]:
        raise ValueError(f"{path} is truncated; delete it to rebuild")
    return RaceTable(header, blob)


def load_race(
    model: Model,
    target: int = 200,
    directory: str | os.PathLike[str] | None = None,
    rebuild: bool = False,
) -> tuple[RaceTable, Path, bool]:
    """The model's race table for `target` from the cache, solving it first if missing."""
    return load_cached(
        race_path(model, target, directory),
        lambda path: write_race(path, solve_race(model, target)),
        read_race,
        model.key,
        target,
        rebuild,
    )


# -- fixed round policies in the race ---------------------------------------------------------


@dataclass(frozen=True)
class RaceRow:
    """One policy's race: its label and its chain."""

    label: str
    chain: Chain


def policy_rows(solution: RaceSolution) -> list[RaceRow]:
    """The race-optimal policy, then `dp` (the per-round optimum), `ev` and the best `sum:N`
    and `bust:P` of `flip7 solve --all`'s grids (best: fewest expected rounds), each played at
    every banked score and valued exactly as a Markov chain over the banked score."""
    return [RaceRow("race", solution.chain), *fixed_rows(solution.space, solution.target)]


def fixed_rows(space: Space, target: int) -> list[RaceRow]:
    """`policy_rows` without the race-optimal policy: no race to solve, a few seconds."""
    from flip7.solver.families import GRIDS, ev_policy, family_policy, label
    from flip7.solver.solve import solve

    sw = _Sweeps(space)
    rows: list[RaceRow] = []
    rows.append(RaceRow("dp", chain(sw.scores(solve(space.model).hit), target)))
    rows.append(RaceRow("ev", chain(sw.scores(ev_policy(space)), target)))
    for family in ("sum", "bust"):
        best: RaceRow | None = None
        for p in GRIDS[family]:
            got = chain(sw.scores(family_policy(space, family, p)), target)
            if best is None or got.expected < best.chain.expected:
                best = RaceRow(label(family, p), got)
        assert best is not None
        rows.append(best)
    return rows


def format_rows(rows: list[RaceRow], ks: tuple[int, ...]) -> list[str]:
    """Expected rounds, the gap to the first row, median, 90th percentile and P(done <= k)."""
    head = f"{'policy':<12}{'rounds':>9}{'gap':>8}{'median':>8}{'p90':>6}"
    head += "".join(f"{'<=' + str(k):>8}" for k in ks)
    lines = [head]
    base = rows[0].chain.expected
    for r in rows:
        c = r.chain
        gap = "" if r is rows[0] else f"{c.expected - base:+.3f}"
        line = f"{r.label:<12}{c.expected:>9.4f}{gap:>8}{c.quantile(0.5):>8}{c.quantile(0.9):>6}"
        line += "".join(f"{c.cdf[k]:>8.1%}" for k in ks)
        lines.append(line)
    return lines
