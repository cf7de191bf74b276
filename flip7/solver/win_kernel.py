"""The `win` policy's arithmetic, once, for both engines: the reference policy
(flip7.policies.win, through flip7.solver.win's WinTable and InRound) and the compiled game kernel
(flip7.kernel.core) call these same compiled functions, so both compute every float a decision
reads in the same order and get the same bits.

All run without numba's runtime (`_nrt=False`, as the kernel's game loop does): the caller
allocates the workspaces (`ws_*`) and passes them in.
"""

# mypy: ignore-errors
# (numba types this module when it compiles it; Python annotations would not be checked.)

from __future__ import annotations

import numba as nb

from flip7.solver.kernels import forward_from_ws
from flip7.solver.race_kernel import race_backward_ws


@nb.njit(cache=True, nogil=True, _nrt=False)
def reward_into(values, tie, target, mine, final, out):
    """out[s] = R(s), my chance to win the game when I score s this round from my total
    `mine`, the others done with the leader's total `final` after the round: 1 above it, the
    tie value `tie` level with it, 0 below, and where neither reaches the target the table's W
    between rounds, values[mine + s, final] (values: W of the field size, target x target)."""
    fin = final if final > 0 else 0
    for s in range(out.shape[0]):
        x = mine + s
        if final < target and x < target:
            out[s] = values[x, fin]
        elif x > final:
            out[s] = 1.0
        elif x == final:
            out[s] = tie
        else:
            out[s] = 0.0


@nb.njit(cache=True, nogil=True, _nrt=False)
def reward_against_at(values, tie, target, mine, other, law, s):
    """R(s) when the leader stands at `other` and scores t this round with law `law`: the sum
    over t (ascending, the nonzero entries) of law(t) times my chance to win from mine + s
    against other + t."""
    x = mine + s
    acc = 0.0
    for t in range(law.shape[0]):
        p = law[t]
        if p == 0.0:
            continue
        y = other + t
        if x < target and y < target:
            g = float(values[x, y])
        elif x > y:
            g = 1.0
        elif x == y:
            g = tie
        else:
            g = 0.0
        acc += g * p
    return acc


@nb.njit(cache=True, nogil=True, _nrt=False)
def rows_into(masks, reach, mask, sc, live):
    """Mark in `live` the rows (Second Chance state, numbers) a hand (numbers `mask`, Second
    Chance state `sc`) can reach: the states `reach[sc]` allows, the supersets of its numbers."""
    n_masks = masks.shape[0]
    for s2 in range(reach.shape[1]):
        on = reach[sc, s2] != 0
        for mi in range(n_masks):
            live[s2 * n_masks + mi] = 1 if on and (masks[mi] & mask) == mask else 0


@nb.njit(cache=True, nogil=True, _nrt=False)
def state_index(mask_rank, n_masks, n_ph, mask, mods, sc, t):
    """The solver's state index of a hand (its rows x 64 modifier sets x phases)."""
    return ((sc * n_masks + mask_rank[mask]) * 64 + mods) * n_ph + t


@nb.njit(cache=True, nogil=True, _nrt=False)
def in_round_solve(
    copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, masks, reach, mask, sc,
    reward, cost, hit, q, bounds, live, ws_mult, ws_plus, ws_free, ws_acc,
):  # fmt: skip
    """The race's backward sweep with cost -R over the rows the hand (numbers `mask`, Second
    Chance state `sc`) can reach, its decisions written to `hit`; returns x, the cost of a
    zero score (flip7.solver.win.InRound.solve)."""
    rows_into(masks, reach, mask, sc, live)
    for s in range(cost.shape[0]):
        cost[s] = -reward[s]
    x = cost[0]
    cost[0] = 0.0
    race_backward_ws(
        copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, True, hit, cost, x,
        q, bounds, live, ws_mult, ws_plus, ws_free, ws_acc,
    )  # fmt: skip
    return x


@nb.njit(cache=True, nogil=True, _nrt=False)
def in_round_value(q, s, x):
    """E[R(S)] from state s, playing the last sweep's decisions (x: its cost of a zero)."""
    return -(q[s, 0] + q[s, 1] * x)


@nb.njit(cache=True, nogil=True, _nrt=False)
def law_into(
    copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, masks, mask_rank, reach,
    hit, mask, mods, sc, t, prob, hist, live, ws_mult, ws_plus, ws_free, ws_out,
):  # fmt: skip
    """hist = the round score's law from a hand (numbers `mask`, modifiers `mods`, Second
    Chance state `sc`, Flip Three phase `t`) playing `hit` (solver order): a forward sweep over
    the rows the hand can reach (flip7.solver.win.InRound.law). `prob` is zeroed on those rows
    first (the sweep reads no other)."""
    rows_into(masks, reach, mask, sc, live)
    n_masks = masks.shape[0]
    n_ph = ph_tab.shape[0]
    row_len = 64 * n_ph
    for r in range(live.shape[0]):
        if live[r]:
            for i in range(r * row_len, (r + 1) * row_len):
                prob[i] = 0.0
    for i in range(hist.shape[0]):
        hist[i] = 0.0
    prob[state_index(mask_rank, n_masks, n_ph, mask, mods, sc, t)] = 1.0
    forward_from_ws(
        copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, hit, prob, hist,
        live, ws_mult, ws_plus, ws_free, ws_out,
    )  # fmt: skip
