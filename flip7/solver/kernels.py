"""The fast sweeps over a model's state space (numba, compiled once and cached on disk).

`backward` values every state (last states first); `forward_fast` moves the chance of reaching
each state (first states first). Both work a row at a time: the 64 x n_phases states that share
a Second Chance state and a set of numbers. Cards that leave the row (a new number, a duplicate,
a Second Chance) go to rows already done, so they are handled for the whole row at once; cards
that stay in it (a modifier, a Flip Three, a Freeze) are walked in order. The rules are stated
once, in `flip7.solver.reference.outcomes`; tests hold these kernels equal to it.

numba caches the compiled code next to this file (or under $NUMBA_CACHE_DIR): the first run in
a fresh environment compiles for several seconds, later processes load it in a fraction of that.
"""

from __future__ import annotations

import numba as nb
import numpy as np

HIST = 256  # scores run 0..171 (six top numbers doubled, +30, +15)


@nb.njit(cache=True, nogil=True)
def backward(
    copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, optimize, hit, qhit, q
):  # type: ignore[no-untyped-def]
    """Values of every state, last states first; q[s] = (expected score, expected square,
    bust chance, Flip 7 chance) of state s.

    At a decision state the player stays (score = points) or hits; with `optimize` it hits when
    hitting is worth strictly more and writes its choice to `hit`, else it reads `hit`. The
    empty hand must hit. qhit gets the value of hitting at every decision state.

    The rules are those of `reference.outcomes`, reorganised for speed: for one (Second Chance state, numbers) row of 64 x n_phases states it first
    adds everything that lands in other rows (a new number, a used or a new Second Chance),
    then walks the row's own states in order (modifiers, Flip Three, Freeze)."""
    n_masks = mask_tab.shape[0]
    n_ph = ph_tab.shape[0]
    n_sc = sc_tab.shape[0]
    n_sc_cards, n_t, n_f, keep_dup, bonus = params[1], params[2], params[3], params[4], params[5]
    n_dec = 0
    for p in range(n_ph):
        n_dec += ph_tab[p, 2]
    mult = np.empty(64, np.int64)
    plus = np.empty(64, np.int64)
    free = np.zeros(64, np.int64)
    for mo in range(64):
        mult[mo] = 2 if mod_tab[mo, 1] else 1
        plus[mo] = mod_tab[mo, 0]
        for b in range(6):
            if not (mo >> b) & 1:
                free[mo] += mod_w[b]
    after = ph_tab[:, 3]
    acc = np.zeros((64, n_ph, 4))
    row_len = 64 * n_ph
    for sc in range(n_sc - 1, -1, -1):
        h = sc_tab[sc, 1]
        used = 0 if keep_dup else sc_tab[sc, 2]
        sc_left = n_sc_cards - sc_tab[sc, 0]
        for mi in range(n_masks - 1, -1, -1):
            row = (sc * n_masks + mi) * row_len
            nsum = mask_tab[mi, 13]
            dups = mask_tab[mi, 14] - used
            acc[:] = 0.0
            weight = 0
            # 1. Cards that move to another row: those rows are final already.
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
                if child == -3:  # a duplicate without a Second Chance: bust
                    for mo in range(64):
                        for ph in range(n_ph):
                            acc[mo, ph, 2] += w
                    continue
                if child == -2:  # the seventh number: Flip 7
                    for mo in range(64):
                        x = (nsum + v) * mult[mo] + plus[mo] + bonus
                        for ph in range(n_ph):
                            acc[mo, ph, 0] += w * x
                            acc[mo, ph, 1] += w * x * x
                            acc[mo, ph, 3] += w
                    continue
                crow = (child if v == 13 else sc * n_masks + child) * row_len
                for mo in range(64):
                    for ph in range(n_ph):
                        a = after[ph]
                        if a >= 0:
                            c = crow + mo * n_ph + a
                            acc[mo, ph, 0] += w * q[c, 0]
                            acc[mo, ph, 1] += w * q[c, 1]
                            acc[mo, ph, 2] += w * q[c, 2]
                            acc[mo, ph, 3] += w * q[c, 3]
                        else:
                            x = (nsum + add) * mult[mo] + plus[mo]
                            acc[mo, ph, 0] += w * x
                            acc[mo, ph, 1] += w * x * x
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
                            acc[mo, ph, 2] += sc_left * q[c, 2]
                            acc[mo, ph, 3] += sc_left * q[c, 3]
                        else:
                            x = nsum * mult[mo] + plus[mo]
                            acc[mo, ph, 0] += sc_left * x
                            acc[mo, ph, 1] += sc_left * x * x
            # 2. The row's own states: a modifier, a Flip Three or a Freeze stays in the row.
            for mo in range(63, -1, -1):
                pts = nsum * mult[mo] + plus[mo]
                for pi in range(n_ph):
                    ph = ph_order[pi]
                    a = after[ph]
                    q1 = acc[mo, ph, 0]
                    q2 = acc[mo, ph, 1]
                    qb = acc[mo, ph, 2]
                    qf = acc[mo, ph, 3]
                    total = weight + free[mo]
                    for b in range(6):
                        if mod_w[b] == 0 or (mo >> b) & 1:
                            continue
                        mo2 = mo | (1 << b)
                        w = mod_w[b]
                        if a >= 0:
                            c = row + mo2 * n_ph + a
                            q1 += w * q[c, 0]
                            q2 += w * q[c, 1]
                            qb += w * q[c, 2]
                            qf += w * q[c, 3]
                        else:
                            x = nsum * mult[mo2] + plus[mo2]
                            q1 += w * x
                            q2 += w * x * x
                    for kind in range(2):
                        w = (n_t - ph_tab[ph, 0]) if kind == 0 else (n_f - ph_tab[ph, 1])
                        if w <= 0:
                            continue
                        total += w
                        nxt = ph_tab[ph, 4 + kind]
                        if nxt >= 0:
                            c = row + mo * n_ph + nxt
                            q1 += w * q[c, 0]
                            q2 += w * q[c, 1]
                            qb += w * q[c, 2]
                            qf += w * q[c, 3]
                        else:
                            q1 += w * pts
                            q2 += w * pts * pts
                    if total > 0:
                        q1 /= total
                        q2 /= total
                        qb /= total
                        qf /= total
                    stay = total == 0  # no card left anywhere: the round ends, you bank
                    if ph_tab[ph, 2]:
                        d = ((sc * n_masks + mi) * 64 + mo) * n_dec + ph
                        qhit[d] = q1
                        if total > 0:
                            if sc == 0 and mi == 0 and mo == 0 and ph == 0:
                                stay = False  # nothing in front of you: you must hit
                            elif optimize:
                                stay = not q1 > pts
                            else:
                                stay = hit[d] == 0
                        if optimize:
                            hit[d] = 0 if stay else 1
                    s = row + mo * n_ph + ph
                    if stay:
                        q[s, 0] = pts
                        q[s, 1] = pts * pts
                        q[s, 2] = 0.0
                        q[s, 3] = 0.0
                    else:
                        q[s, 0] = q1
                        q[s, 1] = q2
                        q[s, 2] = qb
                        q[s, 3] = qf


@nb.njit(cache=True, nogil=True)
def forward_from(
    copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, hit, prob, hist, live
):  # type: ignore[no-untyped-def]
    """`forward_fast` from wherever `prob` puts the chance (one hand, for
    the round's rest from there), over the rows of `live` only (uint8 per (Second Chance
    state, numbers) row: those the starting hands can reach); adds the chance of each final
    score to `hist`. `prob` must be zero on the live rows apart from the start."""
    mult = np.empty(64, np.int64)
    plus = np.empty(64, np.int64)
    free = np.zeros(64, np.int64)
    out = np.zeros((64, ph_tab.shape[0]))  # chance per card leaving each state of the row
    return forward_from_ws(
        copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, hit, prob, hist,
        live, mult, plus, free, out,
    )  # fmt: skip


# _nrt=False: the compiled game kernel (flip7.kernel.core, which runs without numba's runtime)
# calls it with workspaces it allocated beforehand; so it allocates nothing itself.
@nb.njit(cache=True, nogil=True, _nrt=False)
def forward_from_ws(
    copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, hit, prob, hist, live,
    mult, plus, free, out,
):  # fmt: skip
    """forward_from on workspaces: mult, plus, free (int64, 64 each) and out (float64,
    (64, phases)), overwritten."""
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
    bust = 0.0
    flip7 = 0.0
    for sc in range(n_sc):
        h = sc_tab[sc, 1]
        used = 0 if keep_dup else sc_tab[sc, 2]
        sc_left = n_sc_cards - sc_tab[sc, 0]
        for mi in range(n_masks):
            if not live[sc * n_masks + mi]:
                continue
            row = (sc * n_masks + mi) * row_len
            nsum = mask_tab[mi, 13]
            dups = mask_tab[mi, 14] - used
            weight = 0
            for v in range(13):
                if copies[v] > 0 and mask_tab[mi, v] != -1:
                    weight += copies[v]
            weight += max(dups, 0) + max(sc_left, 0)
            # 1. Along the row, in order.
            out[:] = 0.0
            for mo in range(64):
                pts = nsum * mult[mo] + plus[mo]
                for pi in range(n_ph - 1, -1, -1):
                    ph = ph_order[pi]
                    s = row + mo * n_ph + ph
                    p = prob[s]
                    if p == 0.0:
                        continue
                    total = weight + free[mo]
                    wt = n_t - ph_tab[ph, 0]
                    wf = n_f - ph_tab[ph, 1]
                    total += max(wt, 0) + max(wf, 0)
                    stays = ph_tab[ph, 2] and s != 0 and hit[s // n_ph * n_dec + ph] == 0
                    if total == 0 or stays:
                        hist[pts] += p
                        continue
                    f = p / total
                    out[mo, ph] = f
                    a = after[ph]
                    for b in range(6):
                        if mod_w[b] == 0 or (mo >> b) & 1:
                            continue
                        mo2 = mo | (1 << b)
                        if a >= 0:
                            prob[row + mo2 * n_ph + a] += f * mod_w[b]
                        else:
                            hist[nsum * mult[mo2] + plus[mo2]] += f * mod_w[b]
                    for kind in range(2):
                        w = wt if kind == 0 else wf
                        if w <= 0:
                            continue
                        nxt = ph_tab[ph, 4 + kind]
                        if nxt >= 0:
                            prob[row + mo * n_ph + nxt] += f * w
                        else:
                            hist[pts] += f * w
            # 2. To the other rows.
            for v in range(15):
                if v < 13:
                    w = copies[v]
                    child = mask_tab[mi, v]
                    if w == 0 or child == -1:
                        continue
                    crow = (sc * n_masks + child) * row_len
                    add = v
                elif v == 13:
                    if dups <= 0:
                        continue
                    w = dups
                    child = 0 if h else -3
                    crow = (sc_tab[sc, 4] * n_masks + mi) * row_len
                    add = 0
                else:
                    if sc_left <= 0:
                        continue
                    w = sc_left
                    child = 0
                    crow = (sc_tab[sc, 3] * n_masks + mi) * row_len
                    add = 0
                for mo in range(64):
                    for ph in range(n_ph):
                        f = out[mo, ph]
                        if f == 0.0:
                            continue
                        q = f * w
                        if child == -3:
                            hist[0] += q
                            bust += q
                        elif child == -2:
                            hist[(nsum + v) * mult[mo] + plus[mo] + bonus] += q
                            flip7 += q
                        elif after[ph] >= 0:
                            prob[crow + mo * n_ph + after[ph]] += q
                        else:
                            hist[(nsum + add) * mult[mo] + plus[mo]] += q
    return bust, flip7


@nb.njit(cache=True, nogil=True)
def forward_fast(
    copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, hit, prob, hist
):  # type: ignore[no-untyped-def]
    """`reference.forward`, reorganised by rows like `backward`; returns (bust chance, Flip 7
    chance) and adds the chance of each final score to `hist`. Within a row it first moves
    chance along the row's own states (modifiers, Flip Three, Freeze), then pushes what leaves
    each state to the other rows all at once. From the empty hand, over every row."""
    prob[0] = 1.0
    live = np.ones(sc_tab.shape[0] * mask_tab.shape[0], np.uint8)
    return forward_from(
        copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, hit, prob, hist, live
    )
