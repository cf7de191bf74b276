"""The `win` policy in the kernel: its tables, the solver's spaces and sweep workspaces as flat
arrays the kernel reads.

`flip7.policies.win.WinPolicy` (see that module) decides in three ways, all replayed bit for bit
by `flip7.kernel.core` (win_rule, win_target):
- the menu: the win table picks a round policy from the field size and the totals, and one bit
  of that policy's table (dp's dense layout, the hand read as dp reads it) answers;
- the endgame: once the others are done and the round ends the game, the in-round optimum for
  the exact reward, by the race's backward sweep from the hand;
- heads-up, a Freeze goes where it leaves the better chance to win (the opponent's round-score
  law under dp by a forward sweep, the reward against it, my sweep's value).
The floats of the last two come from flip7.solver.win_kernel's compiled functions, the same the
reference policy calls, so both engines compute the same bits.

Arrays (flip7.kernel.core W_* and WX_*): `meta[row, W_*]` per win policy (its model, its table,
the Second Chance states it reads, its switches), and one tuple `arrays` (WX_* positions): the
tables' menu bits and choices, values and tie values; per model the solver's space tables (padded
to the largest model and sliced to size in the kernel), dp's round policy in solver order, the
sweeps' workspaces, and what the kernel keeps between decisions: the opponent laws met (the
policy keeps them too) and the endgame's sweeps per reward (core.win_endgame). Sweeps are exact
backward induction, so reusing one where it reaches the hand changes no decision. The arrays
are kept for the next batch of the same tables (one set per thread), so a long run reuses them.

Alone at the table `win` plays the race policy, which this kernel does not play: such games go
to the reference engine (`unsupported`).
"""

from __future__ import annotations

import threading
import zlib
from typing import Any

import numpy as np

from flip7.policies.base import Policy

P_WIN = 7  # flip7.kernel.core.P_WIN: the policy kind of win (flip7.kernel.encode)
N_WIN_META = 8  # flip7.kernel.core.N_WIN_META
#: flip7.solver.kernels.HIST (round scores 0..HIST-1), as a literal so importing this needs no numba.
HIST = 256
#: Opponent round-score laws kept per model (the Freeze rule's; 8 MiB at this size).
LAWS = 4096
#: Endgame rewards kept per model, one per (table, field size, gap), each with the decision
#: bits of the sweeps made for it: up to 229 KiB for `basic`, 416 KiB for `real` (memory is
#: touched only as they fill).
SWEEPS = 512


def _win_class() -> type | None:
    try:
        from flip7.policies.win import WinPolicy
    except ImportError:
        return None
    return WinPolicy


def is_win(policy: Policy) -> bool:
    """True when `policy` is exactly the built-in win policy."""
    cls = _win_class()
    return cls is not None and type(policy) is cls


def encode(policy: Policy) -> tuple[int, int, float, int] | None:
    """The win policy's kernel row (kind, int, float, counting), or None when not win."""
    if not is_win(policy):
        return None
    return P_WIN, 0, 0.0, 1 if policy.counting else 0


def _menu_bits(table: Any) -> np.ndarray:
    """Every menu policy of a win table, decompressed and concatenated (kept on the table)."""
    got = getattr(table, "_kernel_bits", None)
    if got is None:
        parts = [
            np.frombuffer(zlib.decompress(table._blob[a:b]), np.uint8)
            for a, b in zip(table._offsets[:-1], table._offsets[1:], strict=True)
        ]
        got = table._kernel_bits = np.concatenate(parts) if parts else np.zeros(1, np.uint8)
    return got  # type: ignore[no-any-return]


def _pad(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    """Stack arrays of the same rank, zero-padded to the largest shape."""
    shape = tuple(max(a.shape[d] for a in arrays) for d in range(arrays[0].ndim))
    out = np.zeros((len(arrays), *shape), dtype=dtype)
    for i, a in enumerate(arrays):
        out[(i, *(slice(0, k) for k in a.shape))] = a
    return out


def tables(policies: list[Policy], target: int) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    """(meta row per policy, meta rows, the array tuple) for the kernel, the tables of the
    game's `target` (solved first when not cached, as the reference policy would); the tuple
    is None when no seat plays win (the kernel then compiles without win's code)."""
    from flip7.kernel.core import N_WIN_META as CORE_N_WIN_META

    assert CORE_N_WIN_META == N_WIN_META
    rows = np.zeros(len(policies), dtype=np.int64)
    meta: list[list[int]] = []
    models: dict[str, int] = {}
    spaces: list[Any] = []
    dp_hits: list[np.ndarray] = []
    tabs: dict[int, int] = {}
    wtables: list[Any] = []
    for i, policy in enumerate(policies):
        if not is_win(policy):
            continue
        table = policy.table_for(target)  # type: ignore[attr-defined]
        model = policy.model  # type: ignore[attr-defined]
        if model.key not in models:
            models[model.key] = len(spaces)
            ir = policy._in_round()  # type: ignore[attr-defined]
            spaces.append(ir.space)
            dp_hits.append(np.asarray(policy._dp_hit(), np.uint8))  # type: ignore[attr-defined]
        if id(table) not in tabs:
            tabs[id(table)] = len(wtables)
            wtables.append(table)
        rows[i] = len(meta)
        meta.append(
            [
                models[model.key],
                tabs[id(table)],
                policy._held,  # type: ignore[attr-defined]
                policy._none,  # type: ignore[attr-defined]
                table.n_sc,
                table.n_t,
                1 if policy.endgame else 0,  # type: ignore[attr-defined]
                1 if policy.freeze else 0,  # type: ignore[attr-defined]
            ]
        )
    if not meta:
        return rows, np.zeros((1, N_WIN_META), dtype=np.int64), None  # no win code compiled
    # The arrays (the sweeps' workspaces and the laws met so far with them) serve the next
    # batch of the same tables too, also read again by another policy object (a new line-up):
    # one set per thread, for the last tables asked for (named by model key and target).
    key = (tuple((t.header["key"], t.target) for t in wtables), tuple(models))
    kept = getattr(_KEPT, "entry", None)
    if kept is None or kept[0] != key:
        kept = _KEPT.entry = (key, _arrays(wtables, spaces, dp_hits))
    return rows, np.asarray(meta, dtype=np.int64), kept[1]


_KEPT = threading.local()


def _arrays(wtables: list[Any], spaces: list[Any], dp_hits: list[np.ndarray]) -> tuple:
    from flip7.solver.win import FIELD, reach_table

    bits = [_menu_bits(t) for t in wtables]
    menu = np.zeros((len(wtables), max(len(t.labels) for t in wtables)), dtype=np.int64)
    offset = 0
    for k, (t, b) in enumerate(zip(wtables, bits, strict=True)):
        size = 8192 * 64 * t.n_sc * t.n_t  # one menu policy's bits, dp's dense layout
        assert b.shape[0] == len(t.labels) * size // 8, "a menu policy of unexpected size"
        menu[k, : len(t.labels)] = offset * 8 + size * np.arange(len(t.labels))
        offset += b.shape[0]
    choices = np.stack([np.asarray(t.choices, np.int16) for t in wtables])
    values = np.stack([np.asarray(t.values, np.float32) for t in wtables])
    ties = np.array([[t.ties[n] for n in FIELD] for t in wtables], dtype=np.float64)
    dims = np.array([[sp.n_masks, sp.n_sc, sp.n_phases, sp.n_dec] for sp in spaces], dtype=np.int64)
    n_states = max(sp.n_states for sp in spaces)
    n_dec = max(int(np.prod(sp.dec_shape)) for sp in spaces)
    n_rows = max(sp.n_sc * sp.n_masks for sp in spaces)
    n_ph = max(sp.n_phases for sp in spaces)
    m = len(spaces)
    key = np.zeros((m, 8), dtype=np.int64)
    return (
        np.concatenate(bits),
        menu,
        np.ascontiguousarray(choices),
        np.ascontiguousarray(values),
        ties,
        _pad([sp.copies for sp in spaces], np.int64),
        _pad([sp.mask_tab for sp in spaces], np.int64),
        _pad([sp.mod_tab for sp in spaces], np.int64),
        _pad([sp.mod_w for sp in spaces], np.int64),
        _pad([sp.sc_tab for sp in spaces], np.int64),
        _pad([sp.phases.table for sp in spaces], np.int64),
        _pad([sp.phases.order for sp in spaces], np.int64),
        _pad([sp.params for sp in spaces], np.int64),
        _pad([sp.masks for sp in spaces], np.int64),
        _pad([sp.mask_rank for sp in spaces], np.int64),
        _pad([reach_table(sp.sc_tab) for sp in spaces], np.uint8),
        _pad(dp_hits, np.uint8),
        dims,
        np.empty((m, n_states, 2), np.float64),  # q
        np.zeros((m, n_dec), np.uint8),  # hit
        np.empty((m, n_states), np.float64),  # prob
        np.zeros((m, n_rows), np.uint8),  # live
        np.zeros((m, n_rows), np.uint8),  # live2
        key,
        np.zeros((4, HIST), np.float64),  # reward, cost, law, bounds
        np.zeros((3, 64), np.int64),  # mult, plus, free
        np.zeros((64, n_ph, 2), np.float64),  # acc
        np.zeros((64, n_ph), np.float64),  # out
        np.full((m, LAWS), -1, np.int64),  # the laws' keys (-1: free)
        np.empty((m, LAWS, HIST), np.float64),  # the laws
        np.full((m, SWEEPS), -1, np.int64),  # the endgame rewards' keys (-1: free)
        np.empty((m, SWEEPS, (n_dec + 7) // 8), np.uint8),  # their sweeps' decision bits
        np.empty((m, SWEEPS, n_rows), np.uint8),  # the rows those sweeps reached
    )


def placeholder() -> tuple:
    """An array tuple of the same types as `tables` gives, nothing in them: warms the kernel
    built with win's code (flip7.kernel.load.win_kernel) without solving a table."""
    i2 = np.zeros((1, 1), np.int64)
    i3 = np.zeros((1, 1, 1), np.int64)
    return (
        np.zeros(1, np.uint8),
        i2,
        np.zeros((1, 1, 1, 1), np.int16),
        np.zeros((1, 1, 1, 1), np.float32),
        np.zeros((1, 1), np.float64),
        i2,
        i3,
        i3,
        i2,
        i3,
        i3,
        i2,
        i2,
        i2,
        i2,
        np.zeros((1, 1, 1), np.uint8),
        np.zeros((1, 1), np.uint8),
        i2,
        np.zeros((1, 1, 2), np.float64),
        np.zeros((1, 1), np.uint8),
        np.zeros((1, 1), np.float64),
        np.zeros((1, 1), np.uint8),
        np.zeros((1, 1), np.uint8),
        i2,
        np.zeros((4, HIST), np.float64),
        np.zeros((3, 64), np.int64),
        np.zeros((64, 1, 2), np.float64),
        np.zeros((64, 1), np.float64),
        np.full((1, 1), -1, np.int64),
        np.zeros((1, 1, HIST), np.float64),
        np.full((1, 1), -1, np.int64),
        np.zeros((1, 1, 1), np.uint8),
        np.zeros((1, 1, 1), np.uint8),
    )
