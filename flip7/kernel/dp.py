"""The solver's `dp` policy in the kernel: its tables as flat arrays the kernel reads.

`flip7.policies.dp.DPPolicy` hits when one bit of its solved table says so (see that module and
flip7.solver.cache for the layout). The kernel gets every dp seat's table concatenated into one
packed bit array, a row of numbers per table (`D_*` in flip7.kernel.core: bit offset, Second
Chance states, Flip Three states, the 'none' and 'held' state indices, where its list of Second
Chance states starts and how long it is) and the states themselves, and replays the policy's
decision bit for bit (the solo Second Chance bookkeeping included). When the solver is not
installed, no policy is dp and the arrays are empty placeholders.
"""

from __future__ import annotations

import numpy as np

from flip7.policies.base import Policy

N_DP_META = 7  # flip7.kernel.core.N_DP_META


def _dp_class() -> type | None:
    try:
        from flip7.policies.dp import DPPolicy
    except ImportError:
        return None
    return DPPolicy


def is_dp(policy: Policy) -> bool:
    """True when `policy` is exactly the built-in dp policy."""
    cls = _dp_class()
    return cls is not None and type(policy) is cls


def encode(policy: Policy) -> tuple[int, int, float, int] | None:
    """The dp policy's kernel row (kind, int, float, counting), or None when not dp."""
    if not is_dp(policy):
        return None
    from flip7.kernel.encode import P_DP

    return P_DP, 0, 0.0, 1 if policy.counting else 0


def tables(policies: list[Policy]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(meta row per policy, packed bits, meta rows, Second Chance states) for the kernel."""
    rows = np.zeros(len(policies), dtype=np.int64)
    bits: list[np.ndarray] = []
    meta: list[list[int]] = []
    states: list[tuple[int, int, int]] = []
    seen: dict[int, int] = {}
    offset = 0
    for i, policy in enumerate(policies):
        if not is_dp(policy):
            continue
        table = policy.table  # type: ignore[attr-defined]
        key = id(table)
        if key not in seen:
            seen[key] = len(meta)
            size = 8192 * 64 * table.n_sc * table.n_t
            packed = np.frombuffer(table.bits, dtype=np.uint8)[: (size + 7) // 8]
            bits.append(packed)
            meta.append(
                [
                    offset * 8,
                    table.n_sc,
                    table.n_t,
                    policy._none,  # type: ignore[attr-defined]
                    policy._held,  # type: ignore[attr-defined]
                    len(states),
                    len(table.sc_states),
                ]
            )
            states.extend(tuple(s) for s in table.sc_states)
            offset += packed.shape[0]
        rows[i] = seen[key]
    if not meta:
        return (
            rows,
            np.zeros(1, dtype=np.uint8),
            np.zeros((1, N_DP_META), dtype=np.int64),
            np.zeros((1, 3), dtype=np.int64),
        )
    return (
        rows,
        np.concatenate(bits),
        np.asarray(meta, dtype=np.int64),
        np.asarray(states or [(0, 0, 0)], dtype=np.int64).reshape(-1, 3),
    )
