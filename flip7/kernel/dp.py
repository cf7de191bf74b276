"""The solver's table policies in the kernel: `dp` and `race`, their tables as flat arrays.

`flip7.policies.dp.DPPolicy` hits when one bit of its solved table says so (see that module and
flip7.solver.cache for the layout); `flip7.policies.race.RacePolicy` reads the hand the same
way but tests the bit in the table of its own banked score (flip7.solver.race: one table per
score 0..target-1, the game's target picking the set). Both are one kind in the kernel (P_DP):
a table is a block of bits per (banked score, number mask) — dp has one score, used at every
total; race has `target`, the total clamped to them — and blocks with equal bits are stored
once (the race tables of neighbouring scores differ in few masks: the basic model's 200 race
tables, 92 MB of dense bits, are 38,625 distinct blocks, 2.2 MB, plus a 6.5 MB index).

The kernel gets every table seat's blocks concatenated into one packed bit array, a row of
numbers per table (`D_*` in flip7.kernel.core: bit offset, Second Chance states, Flip Three
states, the 'none' and 'held' state indices, where its list of Second Chance states starts and
how long it is, where its block index starts and how many scores it has), the states and the
block index, and replays the policy's decision bit for bit (the solo Second Chance bookkeeping
included). When the solver is not installed, no policy is dp or race and the arrays are empty
placeholders.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from flip7.policies.base import Policy

P_DP = 5  # flip7.kernel.core.P_DP: the policy kind of dp and race (flip7.kernel.encode)
N_DP_META = 9  # flip7.kernel.core.N_DP_META
N_MASKS = 8192  # flip7.kernel.core.N_MASKS: the table's rows, one per 13-bit number mask
#: Tables kept encoded in this process (a race table takes about a second to encode).
CACHED_TABLES = 8


def _classes() -> tuple[type, type] | None:
    try:
        from flip7.policies.dp import DPPolicy
        from flip7.policies.race import RacePolicy
    except ImportError:
        return None
    return DPPolicy, RacePolicy


def is_dp(policy: Policy) -> bool:
    """True when `policy` is exactly the built-in dp or race policy (a subclass may override
    anything, so it stays with the reference engine)."""
    classes = _classes()
    return classes is not None and type(policy) in classes


def is_race(policy: Policy) -> bool:
    """True when `policy` is exactly the built-in race policy."""
    classes = _classes()
    return classes is not None and type(policy) is classes[1]


def encode(policy: Policy) -> tuple[int, int, float, int] | None:
    """The dp or race policy's kernel row (kind, int, float, counting), or None when neither."""
    if not is_dp(policy):
        return None
    return P_DP, 0, 0.0, 1 if policy.counting else 0


class Blocks:
    """One table (one per banked score for race) as distinct mask blocks: `bits` the packed
    blocks back to back, `index[b * N_MASKS + mask]` the block of score b and that mask. The
    scores' dense bits come one at a time, so only the distinct blocks stay in memory."""

    def __init__(self, tables: Iterable[bytes], n_scores: int, n_sc: int, n_t: int) -> None:
        self.n_sc, self.n_t, self.n_scores = n_sc, n_t, n_scores
        size = 8 * n_sc * n_t  # bytes per mask: 64 modifier masks x n_sc x n_t bits
        ids: dict[bytes, int] = {}
        self.index = np.zeros(n_scores * N_MASKS, dtype=np.int32)
        prev: np.ndarray | None = None
        prev_index = self.index[:0]
        for b, dense in enumerate(tables):
            words = np.frombuffer(dense, dtype=np.uint8)[: N_MASKS * size].view(np.uint64)
            rows = words.reshape(N_MASKS, size // 8)  # a block in 8-byte words
            index = self.index[b * N_MASKS : (b + 1) * N_MASKS]
            changed: Iterable[int] = range(N_MASKS)
            if prev is not None:  # the next score's table repeats most blocks of the last one
                same = (rows == prev).all(axis=1)
                index[same] = prev_index[same]
                changed = np.flatnonzero(~same).tolist()
            for m in changed:
                index[m] = ids.setdefault(rows[m].tobytes(), len(ids))
            prev, prev_index = rows, index
        self.bits = np.frombuffer(b"".join(ids), dtype=np.uint8)  # in id order
        self.distinct = len(ids)


_cache: dict[tuple[object, ...], tuple[Any, Blocks]] = {}


def _race_bits(table: Any) -> Iterator[bytes]:
    """A race table's per-score dense bits, decompressed here one at a time, so that the
    table's own cache (the reference policy's, which fills score by score) stays as it was."""
    offsets = table.header["offsets"]
    blob = table._blob
    for b in range(table.target):
        yield zlib.decompress(blob[offsets[b] : offsets[b + 1]])


def table_key(table: Any, race: bool) -> tuple[object, ...]:
    """What a table's bits depend on: its kind, model and model key (and the race's target),
    so that seats with tables of their own (each seat parses its spec) share one encoding."""
    key = table.header.get("key")
    if key is None:  # not a cached solver table: only this object is known to hold its bits
        return ("object", id(table))
    if race:
        return ("race", table.header.get("model"), key, table.target)
    return ("dp", table.header.get("model"), key)


def blocks(table: Any, race: bool) -> Blocks:
    """`table` (a dp Table, or a RaceTable with `race`) as Blocks, encoded once per process."""
    key = table_key(table, race)
    got = _cache.get(key)
    if got is not None:
        return got[1]
    if race:
        encoded = Blocks(_race_bits(table), table.target, table.n_sc, table.n_t)
    else:
        encoded = Blocks([table.bits], 1, table.n_sc, table.n_t)
    if len(_cache) >= CACHED_TABLES:
        _cache.pop(next(iter(_cache)))
    _cache[key] = (table, encoded)  # the table is kept, so an id in a key is not reused
    return encoded


def placeholders(n_policies: int) -> tuple[np.ndarray, ...]:
    """tables()'s arrays when no seat reads a table (their dtypes are the kernel's)."""
    return (
        np.zeros(n_policies, dtype=np.int64),
        np.zeros(1, dtype=np.uint8),
        np.zeros((1, N_DP_META), dtype=np.int64),
        np.zeros((1, 3), dtype=np.int64),
        np.zeros(1, dtype=np.int32),
    )


def tables(policies: list[Policy], target: int) -> tuple[np.ndarray, ...]:
    """(meta row per policy, packed bits, meta rows, Second Chance states, block index) for the
    kernel; a race seat reads the tables of `target`, the game's (its observation's) target."""
    rows = np.zeros(len(policies), dtype=np.int64)
    bits: list[np.ndarray] = []
    index: list[np.ndarray] = []
    meta: list[list[int]] = []
    states: list[tuple[int, int, int]] = []
    seen: dict[tuple[object, ...], int] = {}
    offset = n_index = 0
    for i, policy in enumerate(policies):
        if not is_dp(policy):
            continue
        race = is_race(policy)
        # The states and their indices are those the policy reads (its first table's; a
        # model's tables share them), the bits those of the table it looks up.
        own = policy.table  # type: ignore[attr-defined]
        table = policy.table_for(target) if race else own  # type: ignore[attr-defined]
        key = table_key(table, race)
        if key not in seen:
            enc = blocks(table, race)
            if (enc.n_sc, enc.n_t) != (own.n_sc, own.n_t):
                raise ValueError(f"policy {policy.spec!r}: its tables differ in layout")
            seen[key] = len(meta)
            bits.append(enc.bits)
            index.append(enc.index)
            meta.append(
                [
                    offset * 8,
                    enc.n_sc,
                    enc.n_t,
                    policy._none,  # type: ignore[attr-defined]
                    policy._held,  # type: ignore[attr-defined]
                    len(states),
                    len(own.sc_states),
                    n_index,
                    enc.n_scores,
                ]
            )
            states.extend(tuple(s) for s in own.sc_states)
            offset += enc.bits.shape[0]
            n_index += enc.index.shape[0]
        rows[i] = seen[key]
    if not meta:
        return placeholders(len(policies))
    return (
        rows,
        np.concatenate(bits),
        np.asarray(meta, dtype=np.int64),
        np.asarray(states or [(0, 0, 0)], dtype=np.int64).reshape(-1, 3),
        np.concatenate(index),
    )
