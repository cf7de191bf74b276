"""Many games through the compiled kernel into preallocated numpy columns.

`play_batch` runs one kernel call over a batch of games (seeds and per-seat policy indices as
arrays) and returns a `Batch`: the event columns of every game back to back, one row per
(round, seat), and per-game and per-(game, seat) arrays. Buffers start at an estimate and, when a
game does not fit, grow and the kernel resumes at that game (games are independent), so no event
ever becomes a Python object unless a caller asks for one (`Batch.events`, `Batch.result`).
The kernels load here too (`kernel`, `win_kernel`, `vengeance_kernel`), each warmed up on a
one-game batch so that its compile or cache load is measured (flip7.kernel.load reports it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flip7.cards import CLASSIC, Deck
from flip7.engine import GameResult
from flip7.events import HIT_SHIFT, restore_round_scores, unfold_codes, unpack
from flip7.kernel import dp as dp_support
from flip7.kernel import win as win_support
from flip7.kernel.encode import deck_counts, policy_table, rule_params
from flip7.kernel.jit import (
    VENGEANCE_CALLEES,
    LoadInfo,
    call,
    measured,
    numba_missing,
    refresh_if_callees_changed,
    write_stamp,
)
from flip7.policies.base import Policy
from flip7.rng import GOLDEN, MASK64
from flip7.rules import Ruleset
from flip7.variants import Variant

# Column layouts of the kernel's outputs (flip7.kernel.core E_*, Q_*, G_*, T_*).
EV_FIELDS = ("code", "round")  # the stored event code (flip7.events, HITs folded), its round
RS_FIELDS = (
    "game", "round", "seat", "dealer", "score", "total", "status", "flip7", "ev_pos",
)  # fmt: skip
G_FIELDS = ("rounds", "winner", "capped", "codes", "ev_start", "rs_start", "folds")
T_FIELDS = ("total", "busts", "flip7s", "rank")

# First guesses for buffer sizes; they grow when short, but growing copies them and plays the
# game that did not fit again, so a guess under the mean costs every large batch that copy: four
# seats average 8.9 rounds a classic game and 10.4-10.6 a Vengeance one, whose batches grew
# every time at 10.
_EVENTS_PER_SEAT_ROUND = 8
_ROUNDS_PER_GAME = 10
_ROUNDS_PER_VENGEANCE_GAME = 12


@dataclass
class Batch:
    """The outputs of one kernel call over k games of n seats."""

    n_players: int
    seeds: np.ndarray  # uint64 [k]
    ev: np.ndarray  # int64 [1, codes]: the stored event codes (HITs folded), games back to back
    rs: np.ndarray  # int32 [9, rows]: one row per (game, round, seat), see RS_FIELDS
    go: np.ndarray  # int64 [k, 7]: see G_FIELDS
    gt: np.ndarray  # int32 [4, k, n]: see T_FIELDS
    capture: bool

    @property
    def games(self) -> int:
        return int(self.seeds.shape[0])

    def events(self, i: int) -> list[int]:
        """Game i's flat event buffer, as flip7.engine produces it ([] without capture): its
        stored codes unfolded, the round scores put back from its round rows
        (flip7.events.restore_round_scores)."""
        if not self.capture:
            return []
        n = self.n_players
        start, count = int(self.go[i, 4]), int(self.go[i, 3])
        rounds, r0 = int(self.go[i, 0]), int(self.go[i, 5])
        rows = self.rs[:, r0 : r0 + rounds * n]
        stored = self.ev[0, start : start + count]
        starts = rows[RS_FIELDS.index("ev_pos"), ::n].astype(np.int64)
        rnd = np.searchsorted(starts, np.arange(count), side="right")
        width = 1 + (stored >= np.int64(1 << HIT_SHIFT)).astype(np.int64)
        full = restore_round_scores(
            np.zeros(int(width.sum()), np.int64),
            np.repeat(rnd, width),
            unfold_codes(stored),
            rows[RS_FIELDS.index("score")].reshape(rounds, n),
            n,
        )
        return [x for code in full["code"].tolist() for x in unpack(code)]

    def event_counts(self) -> np.ndarray:
        """Events played per game (a folded HIT and a round score count), int64 [k]; 0 without
        capture."""
        return self.go[:, 3] + self.go[:, 6]

    def result(self, i: int) -> GameResult:
        """Game i as the reference engine's GameResult."""
        n = self.n_players
        rounds = int(self.go[i, 0])
        r0 = int(self.go[i, 5])
        rows = self.rs[:, r0 : r0 + rounds * n]
        scores = rows[4].reshape(rounds, n).tolist()
        status = rows[6].reshape(rounds, n).tolist()
        dealers = rows[3, ::n].tolist() if n else []
        flip7 = rows[7].reshape(rounds, n)
        f7 = [int(np.flatnonzero(r)[0]) if r.any() else -1 for r in flip7]
        return GameResult(
            seed=int(self.seeds[i]),
            n_players=n,
            winner=int(self.go[i, 1]),
            totals=tuple(self.gt[0, i].tolist()),
            rounds=rounds,
            round_scores=tuple(tuple(r) for r in scores),
            events=self.events(i) if self.capture else [],
            busts=tuple(self.gt[1, i].tolist()),
            flip7s=tuple(self.gt[2, i].tolist()),
            capped=bool(self.go[i, 2]),
            round_dealers=tuple(dealers),
            round_status=tuple(tuple(r) for r in status),
            round_flip7=tuple(f7),
        )


def derive_seeds(root: int, cell: int, start: int, stop: int) -> np.ndarray:
    """`flip7.rng.derive_seed(root, cell, i)` for i in [start, stop), vectorised (uint64)."""
    if root < 0 or cell < 0 or start < 0:
        raise ValueError(f"seed parts must be >= 0, got {(root, cell, start)}")
    i = np.arange(start, stop, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = np.uint64(0x6A09E667F3BCC909)
        h = _mix(h ^ _mix(np.uint64(root & MASK64)))
        h = _mix(h ^ _mix(np.uint64(cell & MASK64)))
        out: np.ndarray = _mix(h ^ _mix(i)) >> np.uint64(1)
    return out


def _mix(x: Any) -> Any:
    """flip7.rng.splitmix64 on numpy uint64 (scalars or arrays)."""
    z = x + np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def rotation(n: int, shifts: np.ndarray) -> np.ndarray:
    """seat_policy [k, n]: seat s of game j plays policy (s - shifts[j]) mod n
    (flip7.simulate.rotated)."""
    seats = np.arange(n, dtype=np.int64)
    return (seats[None, :] - shifts.astype(np.int64)[:, None]) % n


def play_batch(
    ruleset: Ruleset,
    policies: Sequence[Policy],
    seat_policy: np.ndarray,
    seeds: np.ndarray,
    *,
    capture: bool = True,
    first_dealer: int = 0,
    one_round: bool = False,
    stacked: Sequence[int] | None = None,
    deck: Deck = CLASSIC,
    capacity: int | None = None,
    variant: Variant | None = None,
) -> Batch:
    """Play len(seeds) games: game j seats policies[seat_policy[j, s]] at seat s. `capacity`
    overrides the first guess of event and round-row buffer sizes (they grow when short).
    A "With a Vengeance" `variant` plays its deck in flip7.kernel.vengeance (`deck` unused)."""
    seat_policy = np.ascontiguousarray(seat_policy, dtype=np.int64)
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    k, n = seat_policy.shape
    if seeds.shape != (k,):
        raise ValueError(f"need one seed per game: {seeds.shape[0]} seeds for {k} games")
    if not 0 <= first_dealer < n:
        raise ValueError(f"first_dealer must be a seat in 0..{n - 1}, got {first_dealer}")
    vengeance = variant is not None and variant.name == "vengeance"
    counts = deck_counts(n, ruleset, variant.deck if variant is not None else deck)
    stack = _stack(stacked, counts)
    table = policy_table(policies)
    ip, fp = rule_params(
        ruleset, n, capture=capture, first_dealer=first_dealer, one_round=one_round
    )
    if vengeance:
        assert variant is not None
        ip, fp = vengeance_params(ip, fp, variant)
    return _run(
        vengeance_kernel()
        if vengeance
        else kernel(warm=not any(map(win_support.is_win, policies))),
        k,
        n,
        seeds,
        seat_policy,
        table,
        ip,
        fp,
        counts,
        stack,
        policies,
        capture,
        capacity,
        vengeance,
    )


def vengeance_params(
    ip: np.ndarray, fp: np.ndarray, variant: Variant
) -> tuple[np.ndarray, np.ndarray]:
    """core's parameter arrays with Brutal mode and the Vengeance targeting threshold appended
    (I_BRUTAL and J_VSAFE in flip7.kernel.vengeance)."""
    from flip7.policies import vengeance as vengeance_policy

    ip = np.append(ip, 1 if variant.brutal else 0).astype(np.int64)
    fp = np.append(fp, vengeance_policy.SAFE).astype(np.float64)
    return ip, fp


def _run(
    kern: Callable[..., Any],
    k: int,
    n: int,
    seeds: np.ndarray,
    seat_policy: np.ndarray,
    table: tuple[np.ndarray, ...],
    ip: np.ndarray,
    fp: np.ndarray,
    counts: np.ndarray,
    stack: np.ndarray,
    policies: Sequence[Policy],
    capture: bool,
    capacity: int | None = None,
    vengeance: bool = False,
    win_arrays: tuple[Any, ...] | None = None,
) -> Batch:
    from flip7.kernel.core import GROW, I_TARGET, N_EV, N_G, N_RS, workspace

    if vengeance:
        from flip7.kernel.vengeance import workspace

    rounds_guess = _ROUNDS_PER_VENGEANCE_GAME if vengeance else _ROUNDS_PER_GAME
    if ip[7]:  # one round
        rounds_guess = 1
    ev_cap = max(64, k * rounds_guess * (n * _EVENTS_PER_SEAT_ROUND + 4))
    rs_cap = max(16, k * rounds_guess * n)
    if capacity is not None:
        ev_cap = rs_cap = max(1, capacity)
    if not capture:
        ev_cap = 1
    ev = np.empty((N_EV, ev_cap), dtype=np.int64)
    rs = np.empty((N_RS, rs_cap), dtype=np.int32)
    go = np.zeros((k, N_G), dtype=np.int64)
    gt = np.zeros((4, k, n), dtype=np.int32)
    if vengeance:  # dp and race play ev there: no table is read
        dp_rows, dpb, dpm, dps, dpk = dp_support.placeholders(len(policies))
    else:  # a race seat reads the tables of the game's target
        dp_rows, dpb, dpm, dps, dpk = dp_support.tables(list(policies), int(ip[I_TARGET]))
    extra: tuple[Any, ...] = ()
    piece = "vengeance" if vengeance else "classic"
    if not vengeance:  # the classic kernel plays win too (its meta rows share dp's column)
        win_rows, wm, wa = win_support.tables(list(policies), int(ip[I_TARGET]))
        if win_arrays is not None:  # warm_up(win=True): the win build, on empty arrays
            wa = win_arrays
        dp_rows = dp_rows + win_rows
        extra = (wm, wa)
        piece = "classic" if wa is None else "win"
    g = pos = rpos = 0
    while True:
        work = workspace(n, counts)  # owned here, so alive for the whole call
        g, pos, rpos, status = call(
            piece, kern, seeds, seat_policy, *table, dp_rows, ip, fp, counts, stack, dpb, dpm, dps, dpk,
            ev, rs, go, gt, g, pos, rpos, *work, *extra,
        )  # fmt: skip
        if status == GROW:  # game g did not fit: double the buffers, start game g over
            if capture:
                ev = _grow(ev, pos, 2 * ev.shape[1])
            rs = _grow(rs, rpos, 2 * rs.shape[1])
            continue
        break
    return Batch(n, seeds, ev[:, :pos], rs[:, :rpos], go, gt, capture)


def _grow(buf: np.ndarray, used: int, cap: int) -> np.ndarray:
    out = np.empty((buf.shape[0], cap), dtype=buf.dtype)
    out[:, :used] = buf[:, :used]
    return out


def _stack(stacked: Sequence[int] | None, counts: np.ndarray) -> np.ndarray:
    """The stacked deck as an array (empty: shuffle as usual), checked like flip7.engine."""
    if stacked is None:
        return np.zeros(0, dtype=np.int64)
    arr = np.asarray(list(stacked), dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= counts.shape[0]):
        raise ValueError("stacked deck holds a card id outside the deck")
    if (np.bincount(arr, minlength=counts.shape[0]) > counts).any():
        raise ValueError("stacked deck holds more copies of a card than the deck has")
    if arr.size == 0:
        raise ValueError("a stacked deck needs at least one card (None shuffles as usual)")
    return arr


def warm_up(play_games: Callable[..., Any], win: bool = False, vengeance: bool = False) -> None:
    """Call the kernel once on a one-game batch so that it is compiled (or loaded) now; with
    `win`, its build with win's code (on empty arrays of the same types: no table solved); with
    `vengeance`, flip7.kernel.vengeance.play_games (its own workspace and parameters)."""
    from flip7.policies.thresholds import SumPolicy
    from flip7.rules import BASE_RULESETS
    from flip7.variants import parse_variant

    ruleset = BASE_RULESETS["3.1"]
    policy = SumPolicy(20)
    ip, fp = rule_params(ruleset, 2, capture=True)
    deck = CLASSIC
    if vengeance:
        variant = parse_variant("vengeance")
        ip, fp = vengeance_params(ip, fp, variant)
        deck = variant.deck
    _run(
        play_games,
        1,
        2,
        np.ones(1, dtype=np.uint64),
        np.zeros((1, 2), dtype=np.int64),
        policy_table([policy]),
        ip,
        fp,
        deck_counts(2, ruleset, deck),
        np.zeros(0, dtype=np.int64),
        [policy],
        True,
        vengeance=vengeance,
        win_arrays=win_support.placeholder() if win else None,
    )


# -- loading the kernels (each warmed up on a one-game batch, so its load is measured) --------

_kernel: Callable[..., Any] | None = None
_info: LoadInfo | None = None


def kernel(warm: bool = True) -> Callable[..., Any]:
    """`flip7.kernel.core.play_games`, compiled (or loaded from the cache) on first use,
    without win's code (a batch with a win seat compiles that build when it first runs). With
    `warm` False only imported, for a batch with a win seat: the build without win's code then
    does not compile unless something else plays it."""
    global _kernel, _info
    if _kernel is not None and (_info is not None or not warm):
        return _kernel
    missing = numba_missing()
    if missing:
        raise ValueError(missing)
    t0, c0 = time.perf_counter(), time.process_time()
    from flip7.kernel import core  # here, for cost: importing it imports numba

    if _kernel is None:
        # drops stale cached code before anything compiles; recorded for the next process
        write_stamp(refresh_if_callees_changed(core))
        _kernel = core.play_games
    if warm:
        warm_up(core.play_games)
        _info = measured(t0, c0, core.play_games)
    return _kernel


_win_info: LoadInfo | None = None


def win_kernel() -> LoadInfo:
    """Compile (or load) the classic kernel's build with win's code now, as the first batch
    with a win seat would; how long it took."""
    global _win_info
    if _win_info is None:
        play_games = kernel(warm=False)
        t0, c0 = time.perf_counter(), time.process_time()
        misses = len(play_games.stats.cache_misses)
        warm_up(play_games, win=True)
        info = measured(t0, c0, play_games)
        _win_info = LoadInfo(
            info.seconds,
            info.cpu_seconds,
            len(play_games.stats.cache_misses) > misses,
            info.cache_dir,
        )
    return _win_info


_vengeance: Callable[..., Any] | None = None
_vengeance_info: LoadInfo | None = None


def vengeance_kernel() -> Callable[..., Any]:
    """`flip7.kernel.vengeance.play_games`, compiled (or loaded from the cache) on first use."""
    global _vengeance, _vengeance_info
    if _vengeance is not None:
        return _vengeance
    missing = numba_missing()
    if missing:
        raise ValueError(missing)
    t0, c0 = time.perf_counter(), time.process_time()
    from flip7.kernel import vengeance  # here, for cost: only a Vengeance game compiles it

    write_stamp(refresh_if_callees_changed(vengeance, VENGEANCE_CALLEES))
    warm_up(vengeance.play_games, vengeance=True)
    _vengeance_info = measured(t0, c0, vengeance.play_games)
    _vengeance = vengeance.play_games
    return _vengeance


def loaded(vengeance: bool = False) -> bool:
    """Whether this process has loaded the kernel (with `vengeance`, the Vengeance kernel)."""
    return (_vengeance if vengeance else _kernel) is not None


def kernel_info(vengeance: bool = False) -> LoadInfo:
    """How this process got the classic kernel (with `vengeance`, the Vengeance one), loading
    it first if needed (flip7.kernel.load.load_info reports it)."""
    if vengeance:
        vengeance_kernel()
        info = _vengeance_info
    else:
        kernel()
        info = _info
    assert info is not None
    return info
