"""The reference sweep: the rules of one card, stated once, and a plain forward sweep on them.

`outcomes` says what the next card does to a state; `forward` walks every state in order and
moves the chance of reaching it to its outcomes. It is the readable statement the fast kernels in
`flip7.solver.kernels` are tested against (tests/flip7/test_solver_kernels.py): same values to
rounding, on tiny decks with every card kind and on the real models.

States are flat indices ((sc * n_masks + mask) * 64 + mods) * n_phases + phase, and every
transition goes to a state later in the order used here (more cards out of the deck, or the same
hand further into a Flip Three), so one sweep is exact.
"""

from __future__ import annotations

import numba as nb
import numpy as np

BANK = -1
FLAG_BANK, FLAG_BUST, FLAG_FLIP7 = 0, 1, 2
MAX_OUT = 32  # outcomes of one state: 13 numbers, duplicates, 6 modifiers, 3 action kinds


@nb.njit(cache=True)
def outcomes(
    sc, mi, mo, ph, copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, params, cidx, cw, cval, cflag
):  # type: ignore[no-untyped-def]
    """Fill the next card's outcomes of state (sc, mi, mo, ph); return (count, total weight).

    Outcome i has weight cw[i] (copies of the cards that cause it) and goes to the flat state
    cidx[i], or ends the round (cidx[i] = -1) with score cval[i] and kind cflag[i]."""
    n_masks = mask_tab.shape[0]
    n_ph = ph_tab.shape[0]
    n_sc, n_t, n_f, keep_dup, bonus = params[1], params[2], params[3], params[4], params[5]
    h = sc_tab[sc, 1]
    used = 0 if keep_dup else sc_tab[sc, 2]
    t, f = ph_tab[ph, 0], ph_tab[ph, 1]
    nsum = mask_tab[mi, 13]
    plus = mod_tab[mo, 0]
    mult = 2 if mod_tab[mo, 1] else 1
    after = ph_tab[ph, 3]  # the phase after a card that changes the hand
    n = 0
    total = 0
    for v in range(13):
        w = copies[v]
        child = mask_tab[mi, v]
        if w == 0 or child == -1:
            continue
        cw[n] = w
        total += w
        if child == -2:
            cidx[n] = -1
            cval[n] = (nsum + v) * mult + plus + bonus
            cflag[n] = FLAG_FLIP7
        elif after == BANK:
            cidx[n] = -1
            cval[n] = (nsum + v) * mult + plus
            cflag[n] = FLAG_BANK
        else:
            cidx[n] = ((sc * n_masks + child) * 64 + mo) * n_ph + after
        n += 1
    dups = mask_tab[mi, 14] - used
    if dups > 0:
        cw[n] = dups
        total += dups
        if h:
            if after == BANK:
                cidx[n] = -1
                cval[n] = nsum * mult + plus
                cflag[n] = FLAG_BANK
            else:
                cidx[n] = ((sc_tab[sc, 4] * n_masks + mi) * 64 + mo) * n_ph + after
        else:
            cidx[n] = -1
            cval[n] = 0
            cflag[n] = FLAG_BUST
        n += 1
    for b in range(6):
        if mod_w[b] == 0 or (mo >> b) & 1:
            continue
        mo2 = mo | (1 << b)
        cw[n] = mod_w[b]
        total += mod_w[b]
        if after == BANK:
            cidx[n] = -1
            cval[n] = nsum * (2 if mod_tab[mo2, 1] else 1) + mod_tab[mo2, 0]
            cflag[n] = FLAG_BANK
        else:
            cidx[n] = ((sc * n_masks + mi) * 64 + mo2) * n_ph + after
        n += 1
    left = n_sc - sc_tab[sc, 0]
    if left > 0:
        cw[n] = left
        total += left
        if after == BANK:
            cidx[n] = -1
            cval[n] = nsum * mult + plus
            cflag[n] = FLAG_BANK
        else:
            cidx[n] = ((sc_tab[sc, 3] * n_masks + mi) * 64 + mo) * n_ph + after
        n += 1
    for kind in range(2):  # Flip Three, then Freeze: the hand stays, the phase moves
        left = (n_t - t) if kind == 0 else (n_f - f)
        if left <= 0:
            continue
        nxt = ph_tab[ph, 4 + kind]
        cw[n] = left
        total += left
        if nxt == BANK:
            cidx[n] = -1
            cval[n] = nsum * mult + plus
            cflag[n] = FLAG_BANK
        else:
            cidx[n] = ((sc * n_masks + mi) * 64 + mo) * n_ph + nxt
        n += 1
    return n, total


@nb.njit(cache=True)
def forward(copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab, ph_order, params, hit, prob, hist):  # type: ignore[no-untyped-def]
    """Chance of reaching every state under the policy `hit`, first states first; adds the
    chance of each final score to `hist` and returns (bust chance, Flip 7 chance)."""
    n_masks = mask_tab.shape[0]
    n_ph = ph_tab.shape[0]
    n_sc = sc_tab.shape[0]
    n_dec = 0
    for p in range(n_ph):
        n_dec += ph_tab[p, 2]
    cidx = np.empty(MAX_OUT, np.int64)
    cw = np.empty(MAX_OUT, np.int64)
    cval = np.empty(MAX_OUT, np.int64)
    cflag = np.empty(MAX_OUT, np.int64)
    bust = 0.0
    flip7 = 0.0
    prob[0] = 1.0
    for sc in range(n_sc):
        for mi in range(n_masks):
            for mo in range(64):
                base = (sc * n_masks + mi) * 64 + mo
                pts = mask_tab[mi, 13] * (2 if mod_tab[mo, 1] else 1) + mod_tab[mo, 0]
                for pi in range(n_ph - 1, -1, -1):
                    ph = ph_order[pi]
                    s = base * n_ph + ph
                    p = prob[s]
                    if p == 0.0:
                        continue
                    n, total = outcomes(
                        sc, mi, mo, ph, copies, mask_tab, mod_tab, mod_w, sc_tab, ph_tab,
                        params, cidx, cw, cval, cflag,
                    )  # fmt: skip
                    stays = ph_tab[ph, 2] and hit[base * n_dec + ph] == 0 and s != 0
                    if total == 0 or stays:  # the empty hand (s == 0) always hits
                        hist[pts] += p
                        continue
                    for i in range(n):
                        q = p * cw[i] / total
                        c = cidx[i]
                        if c >= 0:
                            prob[c] += q
                        else:
                            hist[cval[i]] += q
                            if cflag[i] == FLAG_BUST:
                                bust += q
                            elif cflag[i] == FLAG_FLIP7:
                                flip7 += q
    return bust, flip7
