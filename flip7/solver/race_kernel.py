"""The race's backward sweep (numba, compiled once and cached on disk like
`flip7.solver.kernels`): the solver's in-round sweep with a terminal cost of the round score in
place of the score, minimised, and the range of the zero-score cost over which its policy stays
optimal. Used by `flip7.solver.race` and `flip7.solver.win`."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def race_backward(
    copies,
    mask_tab,
    mod_tab,
    mod_w,
    sc_tab,
    ph_tab,
    ph_order,
    params,
    optimize,
    hit,
    cost,
    x,
    q,
    bounds,
    live,
):  # type: ignore[no-untyped-def]
    """The backward sweep of `flip7.solver.kernels.backward` with a terminal cost of the round
    score in place of the score, minimised: q[s] = (C, P0), the expected cost[S] over S > 0 and
    the chance of S = 0, from state s; the value of s is C + P0 * x (x: the cost of S = 0).

    With `optimize` the player hits when that is cheaper by more than 1e-12 (ties, to rounding: stay) and writes the
    choice to `hit`; else it reads `hit`. The empty hand must hit.

    With `optimize` it also narrows `bounds` (lo, hi) to the values of x for which every
    choice made stays optimal: at each decision state the move not taken is worth the move
    taken plus dC + dP * x (both followed by the policy found), which must stay >= 0. By the
    policy improvement theorem (the round is acyclic) the policy is optimal for any x in it.

    `live` (uint8 per (Second Chance state, numbers) row, or empty for all): rows left out are
    skipped, their q and hit untouched. A sweep from one hand needs only the rows it can reach
    (supersets of its numbers, Second Chance states after its own), far fewer than all."""
    mult = np.empty(64, np.int64)
    plus = np.empty(64, np.int64)
    free = np.zeros(64, np.int64)
    acc = np.zeros((64, ph_tab.shape[0], 2))
    race_backward_ws(
        copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, optimize, hit,
        cost, x, q, bounds, live, mult, plus, free, acc,
    )  # fmt: skip


# _nrt=False: the compiled game kernel (flip7.kernel.core, which runs without numba's runtime)
# calls it with workspaces it allocated beforehand; so it allocates nothing itself.
@nb.njit(cache=True, nogil=True, _nrt=False)
def race_backward_ws(
    copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, optimize, hit, cost,
    x, q, bounds, live, mult, plus, free, acc,
):  # fmt: skip
    """race_backward on workspaces: mult, plus, free (int64, 64 each) and acc (float64,
    (64, phases, 2)), overwritten."""
    n_masks = mask_tab.shape[0]
    n_ph = ph_tab.shape[0]
    n_sc = sc_tab.shape[0]
    n_sc_cards, n_t, n_f, keep_dup, bonus = params[1], params[2], params[3], params[4], params[5]
    n_dec = 0
    for p in range(n_ph):
        n_dec += ph_tab[p, 2]
    for mo in range(64):
        free[mo] = 0
        mult[mo] = 2 if mod_tab[mo, 1] else 1
        plus[mo] = mod_tab[mo, 0]
        for b in range(6):
            if not (mo >> b) & 1:
                free[mo] += mod_w[b]
    after = ph_tab[:, 3]
    row_len = 64 * n_ph
    eps = 1e-12
    for sc in range(n_sc - 1, -1, -1):
        h = sc_tab[sc, 1]
        used = 0 if keep_dup else sc_tab[sc, 2]
        sc_left = n_sc_cards - sc_tab[sc, 0]
        for mi in range(n_masks - 1, -1, -1):
            if live.shape[0] and not live[sc * n_masks + mi]:
                continue
            row = (sc * n_masks + mi) * row_len
            nsum = mask_tab[mi, 13]
            dups = mask_tab[mi, 14] - used
            acc[:] = 0.0
            weight = 0
            # 1. Cards that move to another row (final already).
            for v in range(14):
                if v < 13:
                    w = copies[v]
                    child = mask_tab[mi, v]
                    if w == 0 or child == -1:
                        continue
                    add = v
                elif dups > 0:
                    w = dups
                    child = sc_tab[sc, 4] * n_masks + mi if h else -3
                    add = 0
                else:
                    continue
                weight += w
                if child == -3:  # bust: S = 0
                    for mo in range(64):
                        for ph in range(n_ph):
                            acc[mo, ph, 1] += w
                    continue
                if child == -2:  # Flip 7: S > 0 always (seven distinct numbers sum to 21+)
                    for mo in range(64):
                        y = (nsum + v) * mult[mo] + plus[mo] + bonus
                        for ph in range(n_ph):
                            acc[mo, ph, 0] += w * cost[y]
                    continue
                crow = (child if v == 13 else sc * n_masks + child) * row_len
                for mo in range(64):
                    for ph in range(n_ph):
                        a = after[ph]
                        if a >= 0:
                            c = crow + mo * n_ph + a
                            acc[mo, ph, 0] += w * q[c, 0]
                            acc[mo, ph, 1] += w * q[c, 1]
                        else:
                            y = (nsum + add) * mult[mo] + plus[mo]
                            if y > 0:
                                acc[mo, ph, 0] += w * cost[y]
                            else:
                                acc[mo, ph, 1] += w
            if sc_left > 0:
                weight += sc_left
                crow = (sc_tab[sc, 3] * n_masks + mi) * row_len
                for mo in range(64):
                    for ph in range(n_ph):
                        a = after[ph]
                        if a >= 0:
                            c = crow + mo * n_ph + a
                            acc[mo, ph, 0] += sc_left * q[c, 0]
                            acc[mo, ph, 1] += sc_left * q[c, 1]
                        else:
                            y = nsum * mult[mo] + plus[mo]
                            if y > 0:
                                acc[mo, ph, 0] += sc_left * cost[y]
                            else:
                                acc[mo, ph, 1] += sc_left
            # 2. The row's own states (modifier, Flip Three, Freeze), in order.
            for mo in range(63, -1, -1):
                pts = nsum * mult[mo] + plus[mo]
                s_c = cost[pts] if pts > 0 else 0.0
                s_p = 0.0 if pts > 0 else 1.0
                for pi in range(n_ph):
                    ph = ph_order[pi]
                    a = after[ph]
                    q1 = acc[mo, ph, 0]
                    qp = acc[mo, ph, 1]
                    total = weight + free[mo]
                    for b in range(6):
                        if mod_w[b] == 0 or (mo >> b) & 1:
                            continue
                        mo2 = mo | (1 << b)
                        w = mod_w[b]
                        if a >= 0:
                            c = row + mo2 * n_ph + a
                            q1 += w * q[c, 0]
                            qp += w * q[c, 1]
                        else:
                            y = nsum * mult[mo2] + plus[mo2]
                            if y > 0:
                                q1 += w * cost[y]
                            else:
                                qp += w
                    for kind in range(2):
                        w = (n_t - ph_tab[ph, 0]) if kind == 0 else (n_f - ph_tab[ph, 1])
                        if w <= 0:
                            continue
                        total += w
                        nxt = ph_tab[ph, 4 + kind]
                        if nxt >= 0:
                            c = row + mo * n_ph + nxt
                            q1 += w * q[c, 0]
                            qp += w * q[c, 1]
                        else:
                            q1 += w * s_c
                            qp += w * s_p
                    if total > 0:
                        q1 /= total
                        qp /= total
                    stay = total == 0
                    if ph_tab[ph, 2]:
                        d = ((sc * n_masks + mi) * 64 + mo) * n_dec + ph
                        if total > 0:
                            if sc == 0 and mi == 0 and mo == 0 and ph == 0:
                                stay = False
                            elif optimize:
                                stay = not (q1 + qp * x < s_c + s_p * x - eps)
                                dc = q1 - s_c if stay else s_c - q1
                                dp = qp - s_p if stay else s_p - qp
                                if dp > 0.0:
                                    bounds[0] = max(bounds[0], -dc / dp)
                                elif dp < 0.0:
                                    bounds[1] = min(bounds[1], -dc / dp)
                            else:
                                stay = hit[d] == 0
                        if optimize:
                            hit[d] = 0 if stay else 1
                    s = row + mo * n_ph + ph
                    if stay:
                        q[s, 0] = s_c
                        q[s, 1] = s_p
                    else:
                        q[s, 0] = q1
                        q[s, 1] = qp
