"""Playing to win: the round policy that maximises the chance of winning the game from the
scores, the target and the field size.

The model (stated in full in docs/play-to-win.md):
- every round, each player plays a solo round of a solver model from a fresh, full deck,
  independently of the others (no Freeze or Flip Three aimed at anyone, no shared deck);
- the opponents play a fixed round policy, `dp` (the per-round optimum), whose exact score
  distribution q comes from the solver;
- the game ends after a round in which someone has reached the target with the highest total
  alone; a tie for the lead at or above the target plays on (the engine's rule).

Heads-up the state between rounds is (my total a, the opponent's total o). My round policy at
(a, o) is chosen from a **menu** of round policies whose exact score distributions are known:
`dp`, the race policies of the banked scores (flip7.solver.race: from EV-like far from the
target to just-get-there near it; every score within 80 of the target, every tenth below), and "reach at least k this round" policies for k = 5..120
(gambles for when far behind). With the menu, W(a, o) = max_m sum_s p_m(s) sum_t q(t)
G(a + s, o + t), where G is 1 or 0 at a decided game and W elsewhere; the one self-loop
(both score 0) makes W(a, o) = max_m A_m / (1 - p_m(0) q(0)), exact. So the heads-up value is
exact for the best menu policy at every state; `menu_gap` measures what a free choice of
round policy (the in-round DP with the same terminal reward) would add at sampled states.

The menu is then widened by column generation: at a grid of states the best round policy of
all (the in-round DP with that state's terminal reward) joins the menu, and the tables are
solved again.

For 3..8 players the field is approximated by one opponent at the leader's total who scores,
each round, the best of m independent `dp` rounds (the law cdf^m, m real), with m calibrated
so that a `dp` player wins 1/n of the games against it, as it does at a table of n `dp`
players by symmetry: one effective opponent that finishes as fast as the field's first.

`InRound` plays the round in progress when its terminal reward is known (the others done):
the race's backward sweep with that reward, over the rows one hand can reach; and gives a
hand's round-score law under a round policy (a forward sweep from that hand). The tables keep
W and the tie values for it (`WinTable.reward`, `WinTable.reward_against`).
"""

from __future__ import annotations

import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np

from flip7.solver.cache import cache_dir, dense_bits, load_cached, read_file, write_file
from flip7.solver.kernels import HIST
from flip7.solver.model import Model
from flip7.solver.race import RaceSolution, _Sweeps, solve_race
from flip7.solver.win_kernel import (
    in_round_solve,
    in_round_value,
    law_into,
    reward_against_at,
    reward_into,
    rows_into,
    state_index,
)

MAGIC = b"FLIP7WN2"
#: The first format (no values): rebuilt when met.
OLD_MAGIC = b"FLIP7WN1"
#: "Reach at least k this round" policies on the menu.
THRESHOLDS = tuple(range(5, 125, 5))
#: Field sizes with a table (2: exact under the model; 3..8: the leader approximation).
FIELD = tuple(range(2, 9))


@dataclass
class Menu:
    """Round policies with their exact score distributions: `labels[m]`, `bits[m]` (packed,
    solver order, bit 1 = hit), `dists[m]` (HIST,)."""

    labels: list[str]
    bits: list[bytes]
    dists: np.ndarray


def race_menu(target: int) -> list[int]:
    """The banked scores whose race policy is on the menu: every score within 80 of the
    target, every tenth below (far from the target they differ little)."""
    return sorted(set(range(0, target, 10)) | set(range(max(0, target - 80), target)))


def threshold_policy(sw: _Sweeps, k: int) -> np.ndarray:
    """The round policy maximising P(score >= k) (uint8 over decision states)."""
    cost = np.zeros(HIST)
    cost[k:] = -1.0
    hit = np.zeros(sw.n_dec, np.uint8)
    sw.backward(hit, cost, 0.0, optimize=True)
    return hit


def build_menu(race: RaceSolution) -> Menu:
    """dp, the race policy of every banked score, and the threshold policies."""
    from flip7.solver.solve import solve

    sw = _Sweeps(race.space)
    labels, bits, dists = [], [], []
    dp = solve(race.model).hit
    labels.append("dp")
    bits.append(np.packbits(dp).tobytes())
    dists.append(sw.scores(dp))
    for b in race_menu(race.target):
        labels.append(f"race@{b}")
        bits.append(race.policies[b])
        dists.append(race.dists[b])
    for k in THRESHOLDS:
        hit = threshold_policy(sw, k)
        labels.append(f"reach{k}")
        bits.append(np.packbits(hit).tobytes())
        dists.append(sw.scores(hit))
    return Menu(labels, bits, np.array(dists))


def field_dist(q: np.ndarray, opponents: int) -> np.ndarray:
    """The distribution of the best of `opponents` independent round scores with law q."""
    cdf = np.cumsum(q)
    top = cdf**opponents
    return np.diff(np.concatenate([[0.0], top]))


@nb.njit(cache=True)
def _tie_value(p, q):  # type: ignore[no-untyped-def]
    """Both at or above the target, level: max over the menu of P(S > T) / (1 - P(S = T))."""
    best = 0.0
    n = p.shape[1]
    cq = np.zeros(n + 1)
    for t in range(n):
        cq[t + 1] = cq[t] + q[t]
    for m in range(p.shape[0]):
        win = 0.0
        tie = 0.0
        for s in range(n):
            win += p[m, s] * cq[s]
            tie += p[m, s] * q[s]
        if tie < 1.0:
            best = max(best, win / (1.0 - tie))
    return best


@nb.njit(cache=True)
def _game(p, q, target, z):  # type: ignore[no-untyped-def]
    """W[a, o] and the menu choice for every a, o < target (see the module docstring).

    H[x, o] = sum_t q(t) G(x, o + t), my chance to win once I stand at x and the opponent at o
    before its round score t, is shared by every (a, s) with a + s = x: rows at or above the
    target are closed forms, rows below are filled as soon as their W row is done (a row's
    states need only rows above, and its own entries to the right for my score 0)."""
    n_m, n = p.shape
    h = np.zeros((target + n, target))
    for x in range(target, target + n):
        for o in range(target):
            acc = 0.0
            for t in range(n):
                y = o + t
                if x > y:
                    acc += q[t]
                elif x == y:
                    acc += q[t] * z
            h[x, o] = acc
    w = np.zeros((target, target))
    choice = np.zeros((target, target), np.int16)
    g = np.zeros(n)
    for a in range(target - 1, -1, -1):
        for o in range(target - 1, -1, -1):
            acc = 0.0  # I score 0, the opponent t > 0 (both 0: the self-loop, apart)
            for t in range(1, n):
                y = o + t
                if y < target:
                    acc += q[t] * w[a, y]
            g[0] = acc
            for s in range(1, n):
                g[s] = h[a + s, o]
            best = -1.0
            arg = 0
            for m in range(n_m):
                am = 0.0
                for s in range(n):
                    am += p[m, s] * g[s]
                v = am / (1.0 - p[m, 0] * q[0])
                if v > best + 1e-13:
                    best = v
                    arg = m
            w[a, o] = best
            choice[a, o] = arg
        for o in range(target):
            acc = 0.0
            for t in range(n):
                y = o + t
                if y < target:
                    acc += q[t] * w[a, y]
            h[a, o] = acc
    return w, choice


@dataclass
class WinSolution:
    """Per field size n: `values[n][a, o]` (my chance to win) and `choice[n][a, o]` (menu
    index), against opponents playing `dp`; `field[n]` the effective number of opponent rounds
    the leader's best-of stands for (1 heads-up)."""

    model: Model
    target: int
    menu: Menu
    q: np.ndarray
    field: dict[int, float]
    values: dict[int, np.ndarray]
    choice: dict[int, np.ndarray]
    seconds: float
    ties: dict[int, float]

    def opponent(self, n: int) -> np.ndarray:
        """The round-score law of the one opponent a field of n stands for."""
        return field_dist(self.q, self.field[n])


def _solve_field(p: np.ndarray, qn: np.ndarray, target: int) -> tuple[np.ndarray, np.ndarray]:
    return _game(p, qn, target, _tie_value(p, qn))


def calibrate_field(q: np.ndarray, n: int, target: int) -> float:
    """The effective count m of the leader's best-of-m dp rounds for a field of n: the m at
    which a dp player against that one opponent wins 1/n of the games, as it does at a table
    of n dp players (by symmetry). Bisection on m in [1, n - 1]."""
    if n == 2:
        return 1.0
    top = int(np.flatnonzero(q)[-1]) + 1
    p = np.ascontiguousarray(q[None, :top])
    lo, hi = 1.0, float(n - 1)
    for _ in range(30):
        m = 0.5 * (lo + hi)
        w, _ = _solve_field(p, np.ascontiguousarray(field_dist(q, m)[:top]), target)
        if w[0, 0] > 1.0 / n:
            lo = m
        else:
            hi = m
    return 0.5 * (lo + hi)


def _terminal(w: np.ndarray, qn: np.ndarray, z: float, a: int, o: int, target: int) -> np.ndarray:
    """g(s): my chance to win after I score s this round at (a, o), leaving out the one case
    that returns to (a, o) (both score 0)."""
    g = np.zeros(HIST)
    ts = np.flatnonzero(qn)
    for s in range(HIST):
        x = a + s
        for t in ts:
            if s == 0 and t == 0:
                continue
            y = o + t
            if x >= target or y >= target:
                g[s] += qn[t] * (1.0 if x > y else z if x == y else 0.0)
            else:
                g[s] += qn[t] * w[x, y]
    return g


def free_policy(
    sw: _Sweeps, w: np.ndarray, qn: np.ndarray, z: float, a: int, o: int, target: int
) -> tuple[float, np.ndarray]:
    """The best round policy of all at (a, o), the rest of the game valued by `w`: the
    in-round DP with terminal reward g(s), my 0 worth g(0) + q(0) W(a, o) with W its own value
    (a fixed point, found by the race's policy iteration from w[a, o]). Returns (W, policy)."""
    g = _terminal(w, qn, z, a, o, target)
    hit = np.zeros(sw.n_dec, np.uint8)
    wv = float(w[a, o])
    for _ in range(50):
        cost = -g
        cost[0] = 0.0
        sw.backward(hit, cost, -(g[0] + qn[0] * wv), optimize=True)
        c, p0 = sw.root()
        nxt = (-c + p0 * g[0]) / (1.0 - p0 * qn[0])
        done = abs(nxt - wv) < 1e-13
        wv = nxt
        if done:
            break
    return wv, hit


#: States (my total, the opponent's) whose free policies join the menu (column generation).
GRID = tuple((a, o) for a in range(0, 200, 25) for o in range(0, 200, 25)) + tuple(
    (a, o) for a in range(150, 200, 10) for o in range(150, 200, 10)
)


def solve_win(
    model: Model, target: int = 200, race: RaceSolution | None = None, grid: int = 1
) -> WinSolution:
    """The win tables for every field size in FIELD. `grid` times, the heads-up free policies
    at the GRID states (scaled to the target) join the menu and the tables are solved again."""
    from flip7.solver.model import build_space

    t0 = time.perf_counter()
    race = race or solve_race(model, target)
    menu = build_menu(race)
    q = menu.dists[0]  # dp's score distribution
    top = int(np.flatnonzero(menu.dists.sum(axis=0))[-1]) + 1  # scores run 0..top-1
    for r in range(grid):
        p = np.ascontiguousarray(menu.dists[:, :top])
        q2 = np.ascontiguousarray(q[:top])
        z = _tie_value(p, q2)
        w, _ = _game(p, q2, target, z)
        sw = _Sweeps(build_space(model))
        states = sorted({(a * target // 200, o * target // 200) for a, o in GRID})
        extra = []
        for a, o in states:
            _, hit = free_policy(sw, w, q, z, a, o, target)
            extra.append((f"free{r}@{a},{o}", np.packbits(hit).tobytes(), sw.scores(hit)))
        menu = Menu(
            menu.labels + [e[0] for e in extra],
            menu.bits + [e[1] for e in extra],
            np.vstack([menu.dists, np.array([e[2] for e in extra])]),
        )
    p = np.ascontiguousarray(menu.dists[:, :top])
    field, values, choice, ties = {}, {}, {}, {}
    for n in FIELD:
        field[n] = calibrate_field(q, n, target)
        qn = np.ascontiguousarray(field_dist(q, field[n])[:top])
        ties[n] = _tie_value(p, qn)
        values[n], choice[n] = _game(p, qn, target, ties[n])
    seconds = time.perf_counter() - t0
    return WinSolution(model, target, menu, q, field, values, choice, seconds, ties)


def menu_gap(solution: WinSolution, states: list[tuple[int, int]], n: int = 2) -> list[float]:
    """At each (a, o): the win chance of a free choice of round policy (the in-round DP with
    the same terminal reward, the rest of the game valued by the menu's W) minus the menu's."""
    from flip7.solver.model import build_space

    sw = _Sweeps(build_space(solution.model))
    w = solution.values[n]
    qn = solution.opponent(n)
    top = int(np.flatnonzero(solution.menu.dists.sum(axis=0))[-1]) + 1
    z = _tie_value(
        np.ascontiguousarray(solution.menu.dists[:, :top]), np.ascontiguousarray(qn[:top])
    )
    return [free_policy(sw, w, qn, z, a, o, solution.target)[0] - float(w[a, o]) for a, o in states]


# -- the round in play, once the others are done ----------------------------------------------


def reach_table(sc_tab: np.ndarray) -> np.ndarray:
    """reach[i, j] = 1 when Second Chance state j can follow state i (i itself included)."""
    n_sc = sc_tab.shape[0]
    reach = np.eye(n_sc, dtype=bool)
    for i in range(n_sc - 1, -1, -1):  # every transition goes to a later state
        for j in sc_tab[i, 3:5]:
            if j >= 0:
                reach[i] |= reach[j]
    return reach.astype(np.uint8)


def workspaces(
    n_phases: int, forward: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scratch for one sweep (flip7.solver.win_kernel): mult, plus, free and the per-row
    accumulator (64 x phases x 2 for the backward sweep, 64 x phases for the `forward` one)."""
    return (
        np.zeros(64, np.int64),
        np.zeros(64, np.int64),
        np.zeros(64, np.int64),
        np.zeros((64, n_phases) if forward else (64, n_phases, 2), np.float64),
    )


class InRound:
    """The best decisions of the round in play when its terminal reward R(s) is known, as it
    is once every other player is done (stayed, busted or frozen): the race's backward sweep
    with cost -R over the rows the hand in front of me can reach (its numbers' supersets, the
    Second Chance states after its own). One workspace per model; the last sweep is kept, keyed
    by the caller, so the later decisions of the same round read its bits."""

    def __init__(self, model: Model) -> None:
        from flip7.solver.model import build_space

        self.space = sp = build_space(model)
        self.q = np.empty((sp.n_states, 2), np.float64)
        self.hit = np.zeros(int(np.prod(sp.dec_shape)), np.uint8)
        self.bounds = np.empty(2, np.float64)
        self.live = np.zeros(sp.n_sc * sp.n_masks, np.uint8)
        self._reach = reach_table(sp.sc_tab)
        self.cost = np.empty(HIST, np.float64)
        self.ws = workspaces(sp.n_phases)
        self.key: object = None
        self.x = 0.0
        self.sweeps = 0

    def covers(self, mask: int, sc: int) -> bool:
        """Whether the last sweep reached this hand's row."""
        mi = int(self.space.mask_rank[mask])
        return mi >= 0 and bool(self.live[sc * self.space.n_masks + mi])

    def solve(self, reward: np.ndarray, mask: int, sc: int, key: object = None) -> None:
        """Sweep from the hand (numbers `mask`, Second Chance state `sc`) for reward R."""
        sp = self.space
        reward = np.ascontiguousarray(reward, np.float64)
        self.x = float(
            in_round_solve(
                *sp.tabs,
                sp.masks,
                self._reach,
                mask,
                sc,
                reward,
                self.cost,
                self.hit,
                self.q,
                self.bounds,
                self.live,
                *self.ws,
            )  # fmt: skip
        )
        self.key = key
        self.sweeps += 1

    def rows_from(self, mask: int, sc: int, out: np.ndarray) -> np.ndarray:
        """Mark in `out` the rows a hand (numbers `mask`, Second Chance state `sc`) can reach."""
        rows_into(self.space.masks, self._reach, mask, sc, out)
        return out

    def law(self, hit: np.ndarray, mask: int, mods: int, sc: int, t: int = 0) -> np.ndarray:
        """The distribution of the round score from this hand, playing round policy `hit`
        (uint8 over the decision states, solver order): a forward sweep over the rows the hand
        can reach."""
        sp = self.space
        if not hasattr(self, "prob"):
            self.prob = np.zeros(sp.n_states, np.float64)
            self.live2 = np.zeros_like(self.live)
            self.ws2 = workspaces(sp.n_phases, forward=True)
        hist = np.zeros(HIST)
        law_into(
            *sp.tabs, sp.masks, sp.mask_rank, self._reach, hit, mask, mods, sc, t, self.prob,
            hist, self.live2, *self.ws2,
        )  # fmt: skip
        return hist

    def decide(self, mask: int, mods: int, sc: int, t: int = 0) -> bool:
        """Hit? (the hand must be one the last sweep covers)."""
        return bool(self.hit[self.space.dec_index(mask, mods, sc, t)])

    def value(self, mask: int, mods: int, sc: int, t: int = 0) -> float:
        """E[R(S)] from this hand, playing the sweep's decisions."""
        sp = self.space
        s = state_index(sp.mask_rank, sp.n_masks, sp.n_phases, mask, mods, sc, t)
        return float(in_round_value(self.q, s, self.x))


# -- the cached tables ------------------------------------------------------------------------


def win_path(model: Model, target: int, directory: str | os.PathLike[str] | None = None) -> Path:
    # win2-: the second format (with W), so code reading the first one keeps its own file.
    return cache_dir(directory) / f"win2-{model.name}-{model.key}-t{target}.bin"


def write_win(path: Path, solution: WinSolution) -> Path:
    """`FLIP7WN2`, a uint32 header length, a JSON header (model, key, target, field sizes,
    menu labels, tie values, offsets), the choice tables (int16, n = 2..8, each target x
    target, indexed [my total, the leader's total]), the values W (float32, same shape), then
    the menu policies each chose, zlib-compressed in the dp table's dense layout."""
    from flip7.solver.model import build_space

    space = build_space(solution.model)
    used = sorted({int(m) for n in FIELD for m in np.unique(solution.choice[n])})
    remap = {m: i for i, m in enumerate(used)}
    lut = np.zeros(len(solution.menu.labels), np.int16)
    for m, i in remap.items():
        lut[m] = i
    choices = b"".join(lut[solution.choice[n]].astype("<i2").tobytes() for n in FIELD)
    values = b"".join(solution.values[n].astype("<f4").tobytes() for n in FIELD)
    n_dec = int(np.prod(space.dec_shape))
    blobs = []
    for m in used:
        hit = np.unpackbits(np.frombuffer(solution.menu.bits[m], np.uint8), count=n_dec)
        dense = np.packbits(dense_bits(space, hit).reshape(-1), bitorder="little").tobytes()
        blobs.append(zlib.compress(dense, 6))
    header = {
        "format": 2,
        "model": solution.model.name,
        "key": solution.model.key,
        "target": solution.target,
        "field": list(FIELD),
        "n_sc": space.n_sc,
        "n_t": space.n_dec,
        "sc_states": [list(s) for s in space.sc_states],
        "labels": [solution.menu.labels[m] for m in used],
        "value_at_start": {str(n): float(solution.values[n][0, 0]) for n in FIELD},
        "effective_opponent_rounds": {str(n): solution.field[n] for n in FIELD},
        "tie": {str(n): float(solution.ties[n]) for n in FIELD},
        "offsets": np.cumsum([0] + [len(x) for x in blobs]).tolist(),
    }
    return write_file(path, MAGIC, header, choices, values, *blobs)


class WinTable:
    """A loaded win table: `policy(n, a, o)` the menu policy's index, `hit(m, ...)` one bit,
    `reward(n, a, y)` my chance to win after this round as a function of my round score."""

    def __init__(
        self, header: dict[str, object], choices: np.ndarray, values: np.ndarray, blob: bytes
    ) -> None:
        self.header = header
        self.target = int(header["target"])  # type: ignore[call-overload]
        self.n_sc = int(header["n_sc"])  # type: ignore[call-overload]
        self.n_t = int(header["n_t"])  # type: ignore[call-overload]
        self.sc_states = tuple(tuple(int(x) for x in s) for s in header["sc_states"])  # type: ignore[attr-defined]
        self.labels = list(header["labels"])  # type: ignore[call-overload]
        self.choices = choices  # (len(FIELD), target, target)
        self.values = values  # (len(FIELD), target, target)
        self.ties = {int(n): float(z) for n, z in header["tie"].items()}  # type: ignore[attr-defined]
        self._offsets = list(header["offsets"])  # type: ignore[call-overload]
        self._blob = blob
        self._bits: dict[int, bytes] = {}

    def sc_index(self, drawn: int, held: int, used: int = 0) -> int:
        key = (drawn, held, used)
        if key not in self.sc_states:
            key = (drawn, held, 0)
        return self.sc_states.index(key)

    def policy(self, n: int, mine: int, leader: int) -> int:
        """The menu policy for a field of n (clamped to 2..8) at my total and the leader's."""
        t = self.target - 1
        i = min(max(n, FIELD[0]), FIELD[-1]) - FIELD[0]
        return int(self.choices[i, min(max(mine, 0), t), min(max(leader, 0), t)])

    def reward(self, n: int, mine: int, final: int) -> np.ndarray:
        """R(s), s = 0..HIST-1: my chance to win the game when I score s this round at my
        total `mine`, the others done with the leader's total `final` after the round (a field
        of n, clamped to 2..8): decided at the target (a tie for the lead plays on, worth the
        tie value), else W between rounds."""
        i = min(max(n, FIELD[0]), FIELD[-1])
        out = np.empty(HIST, np.float64)
        reward_into(self.values[i - FIELD[0]], self.ties[i], self.target, mine, final, out)
        return out

    def reward_against(self, n: int, mine: int, other: int, law: np.ndarray) -> np.ndarray:
        """R(s) when the leader stands at `other` and scores t this round with law `law`:
        sum over t of law(t) times my chance to win from my total + s against `other` + t."""
        return np.array([self.reward_against_at(n, mine, other, law, s) for s in range(HIST)])

    def reward_against_at(self, n: int, mine: int, other: int, law: np.ndarray, s: int) -> float:
        """reward_against(n, mine, other, law)[s] alone."""
        i = min(max(n, FIELD[0]), FIELD[-1])
        law = np.ascontiguousarray(law, np.float64)
        values = self.values[i - FIELD[0]]
        return float(reward_against_at(values, self.ties[i], self.target, mine, other, law, s))

    def hit(self, m: int, mask: int, mods: int, sc: int, t: int = 0) -> bool:
        got = self._bits.get(m)
        if got is None:
            got = zlib.decompress(self._blob[self._offsets[m] : self._offsets[m + 1]])
            self._bits[m] = got
        i = ((mask * 64 + mods) * self.n_sc + sc) * self.n_t + t
        return bool(got[i >> 3] >> (i & 7) & 1)


def read_win(path: Path) -> WinTable:
    header, body = read_file(path, MAGIC, "win")
    target, k = int(header["target"]), len(header["field"])
    size = 2 * k * target * target
    if len(body) != 3 * size + header["offsets"][-1]:
        raise ValueError(f"{path} is truncated; delete it to rebuild")
    choices = np.frombuffer(body[:size], "<i2").reshape(k, target, target)
    values = np.frombuffer(body[size : 3 * size], "<f4").reshape(k, target, target)
    return WinTable(header, choices, values, body[3 * size :])


def load_win(
    model: Model,
    target: int = 200,
    directory: str | os.PathLike[str] | None = None,
    rebuild: bool = False,
) -> tuple[WinTable, Path, bool]:
    """The win tables from the cache, solving them first if missing (or in the first format,
    which lacks the values)."""
    path = win_path(model, target, directory)
    if path.exists():
        with path.open("rb") as fh:
            rebuild = rebuild or fh.read(8) == OLD_MAGIC
    return load_cached(
        path,
        lambda path: write_win(path, solve_win(model, target)),
        read_win,
        model.key,
        target,
        rebuild,
    )
