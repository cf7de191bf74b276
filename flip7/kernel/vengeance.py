"""The compiled "With a Vengeance" kernel: flip7.vengeance's rules, event for event, in numba.

It has the classic kernel's inputs and outputs (`play_games`: seeds, seat -> policy rows, the
same ev/rs/go/gt buffers and GROW/resume protocol) because it is the same game loop
(`flip7.kernel.rounds.play_loop`) with this variant's round and hooks, so Batch, tally and the
pipeline columns work unchanged. The rules are flip7.vengeance.VengeanceEngine's; the decisions are
flip7.policies.vengeance's, computed with the same integers and the same float operations in
the same order (so a threshold comparison comes out the same bit for bit).

The reference engine recurses (Just One More and Flip Four draw cards that may be Just One More
or Flip Four again). numba's on-disk cache does not survive recursive functions, so, as in
core, an explicit stack `fr[depth, R_*]` holds the Just One More / Flip Four being resolved,
innermost last, and each pass of the round loop takes one step of the innermost one (or of the
deal, or of the hit-or-stay laps), then resolves at most one card. When the round ends inside
them, the stack unwinds as the reference's returns do: each action card leaves the set-aside
cards for the discard pile, innermost first.

Rows are lists with the reference's order (`lines[seat, i]`), as are the discard pile and the
set-aside cards (`aside`): the next shuffle permutes the discard pile, so every append and
every remove-the-first-copy happens here as it does there.

The machinery every variant shares (the game loop, the shuffle and reshuffle, the deal order,
fresh rows, cleared table, frames, score rows, game end and rows, the event writer) is
flip7.kernel.rounds'; this module supplies the round (`play_round`, its loop over jobs, its own
copy of the draw on the state array, and the Vengeance cards), which this module's own `_play`
calls, and the loop's hooks, which numba inlines into `_play` with the loop.
Cache caveat: numba caches this module's machine code keyed on this file only;
flip7.kernel.load drops it when rounds.py changes (VENGEANCE_CALLEES).
"""

# mypy: ignore-errors
# ruff: noqa: F405 (names from flip7.kernel.rounds, imported whole)
# (numba types this module when it compiles it; Python annotations would not be checked.)

from __future__ import annotations

import numpy as np
from numba import njit

# The vocabulary every variant shares, whole: the layout (per-seat fields, census rows, frames,
# outputs), the event kinds and parameters, and the round's machinery (flip7.kernel.rounds).
from flip7.kernel.rounds import *  # noqa: F403

# --- Vengeance card ids, event kinds, draw reasons (checked by flip7.kernel.encode) ------------
N0, N7, N13 = 0, 7, 13
UNLUCKY_7, LUCKY_13, DIV2, MINUS2, MINUS10 = 23, 24, 25, 26, 30
JUST_ONE_MORE, FLIP_FOUR, STEAL, SWAP, DISCARD = 31, 32, 33, 34, 35
K_MODIFIER_GIVEN, K_CARD_MOVED, K_CARD_DISCARDED, K_FORCED_STAY, K_FLIP7_PENALTY = (
    19,
    20,
    21,
    22,
    23,
)
HOW_JUST_ONE_MORE, HOW_FLIP_FOUR = 3, 4
FLIP7_CHOICE = -7
#: flip7.policies.vengeance.choose_target's Brutal Flip 7 rule: take 15 from a leader within this
#: many points of the target.
FLIP7_LEADER_WINDOW = 40

# --- extra per-seat fields, after core's: pl[V_*, seat] ----------------------------------------
V_MINUS, V_DIV2, V_THIRTEENS, V_ZERO, V_LUCKY, V_PENALTY = 18, 19, 20, 21, 22, 23
N_VFIELDS = 24

# --- parameters past core's: ip[I_BRUTAL], fp[J_VSAFE] ------------------------------------------
I_BRUTAL = N_IPARAMS
N_VIPARAMS = N_IPARAMS + 1
J_VSAFE = 2  # flip7.policies.vengeance.SAFE
N_VFPARAMS = 3

# --- round state st[S_*] (helpers update it in place) -----------------------------------------
S_POS, S_CAPTURE, S_OVER, S_END, S_FLIP7P, S_DECLINED = 0, 1, 2, 3, 4, 5
S_TOP, S_NDIS, S_NASIDE, S_N, S_BRUTAL, S_BONUS, S_TARGET = 6, 7, 8, 9, 10, 11, 12
N_STATE = 13

# --- the Just One More / Flip Four stack: fr[depth, R_*] --------------------------------------
# R_PLAYER .. R_NEXT: flip7.kernel.rounds; then the action (Just One More or Flip Four), its card
R_TYPE, R_CARD, R_PEND = 5, 6, 7
N_VFRAME = 11  # R_PEND .. R_PEND + 3 hold up to four set-aside cards

JOB_DRAW, JOB_RECEIVE = 1, 2
WHO_IN_PLAY, WHO_ALL = 0, 1


@njit(cache=True, _nrt=False, inline="always")
def face(c):
    """flip7.cards.face_value: numbers are themselves, the Unlucky 7 a 7, the Lucky 13 a 13."""
    if c <= N13:
        return c
    if c == UNLUCKY_7:
        return 7
    if c == LUCKY_13:
        return 13
    return -1


@njit(cache=True, _nrt=False, inline="always")
def em(ev, st, kind, player, card, target, value):
    # emit's fold count is left unused: play_round reads the folds off the codes once per
    # round, so this helper, inlined at every event, stays one store
    st[S_POS] = emit(ev, st[S_POS], st[S_CAPTURE] != 0, 0, kind, player, card, target, value)[0]


@njit(cache=True, _nrt=False, inline="always")
def in_play(pl, q):
    s = pl[F_STATUS, q]
    return s == ACTIVE or s == STAYED


@njit(cache=True, _nrt=False, inline="always")
def row_points(nsum, zero, div2, minus, flip7, brutal):
    """flip7.scoring.vengeance_row_points from a row's sums."""
    t = 0 if (zero and not flip7) else nsum
    for _ in range(div2):
        t //= 2
        if t == 0:
            break
    t -= minus
    if brutal or t > 0:
        return t
    return 0


@njit(cache=True, _nrt=False, inline="always")
def vpoints(pl, p, flip7, brutal):
    """What p banks now (VengeanceEngine.points / policies.vengeance.points with flip7 False)."""
    if pl[F_STATUS, p] == BUSTED:
        return -pl[V_MINUS, p] if brutal else 0
    return row_points(pl[F_NSUM, p], pl[V_ZERO, p], pl[V_DIV2, p], pl[V_MINUS, p], flip7, brutal)


@njit(cache=True, _nrt=False, inline="always")
def tally(c, v, mask, nsum, div2, minus, zero, lucky):
    """Card c (face value v, -1 for none) added to a row's sums: (numbers mask, numbers' sum, /2
    count, -N total, holds The Zero, holds the Lucky 13)."""
    if v >= 0:
        mask |= 1 << v
        nsum += v
        if c == N0:
            zero = 1
        if c == LUCKY_13:
            lucky = 1
    elif c == DIV2:
        div2 += 1
    elif MINUS2 <= c <= MINUS10:
        minus += 2 * (c - DIV2)
    return mask, nsum, div2, minus, zero, lucky


@njit(cache=True, _nrt=False)
def recompute(pl, lines, p):
    """VengeanceEngine.recompute: p's counters from p's row."""
    mask = nsum = ncount = thirteens = div2 = minus = zero = lucky = 0
    for i in range(pl[F_LEN, p]):
        c = lines[p, i]
        v = face(c)
        mask, nsum, div2, minus, zero, lucky = tally(c, v, mask, nsum, div2, minus, zero, lucky)
        if v >= 0:
            ncount += 1
            if v == 13:
                thirteens += 1
    pl[F_MASK, p], pl[F_NSUM, p], pl[F_NCOUNT, p] = mask, nsum, ncount
    pl[V_THIRTEENS, p], pl[V_DIV2, p], pl[V_MINUS, p] = thirteens, div2, minus
    pl[V_ZERO, p], pl[V_LUCKY, p] = zero, lucky


@njit(cache=True, _nrt=False, inline="always")
def unseen(cd, c, counting):
    u = cd[C_DECK, c] - cd[C_VIS, c]
    if counting:
        u -= cd[C_DIS, c]
    return u


@njit(cache=True, _nrt=False, inline="always")
def unseen_total(cd, counting):
    total = 0
    for c in range(cd.shape[1]):
        total += unseen(cd, c, counting)
    return total


@njit(cache=True, _nrt=False, inline="always")
def busting(cd, counting, mask, thirteens, lucky):
    """policies.vengeance._busting: unseen cards that would bust a row showing `mask`."""
    dup = 0
    for v in range(14):
        if mask >> v & 1:
            if v == 13:
                if thirteens >= 2:
                    dup += unseen(cd, 13, counting) + unseen(cd, LUCKY_13, counting)
                elif not lucky:
                    dup += unseen(cd, 13, counting)
            else:
                dup += unseen(cd, v, counting)
    return dup


@njit(cache=True, _nrt=False, inline="always")
def bust_risk(pl, cd, p, counting):
    """policies.vengeance.bust_risk."""
    total = unseen_total(cd, counting)
    if total <= 0:
        return 0.0
    dup = busting(cd, counting, pl[F_MASK, p], pl[V_THIRTEENS, p], pl[V_LUCKY, p])
    return dup / total


@njit(cache=True, _nrt=False, inline="always")
def dup_risk(pl, cd, p, counting):
    """policies.vengeance.dup_risk."""
    total = unseen_total(cd, counting)
    if total <= 0:
        return 0.0
    held = pl[F_MASK, p]
    same = 0
    for c in range(cd.shape[1]):
        u = unseen(cd, c, counting)
        v = face(c)
        if u > 0 and v >= 0 and held >> v & 1:
            same += u
    return same / total


@njit(cache=True, _nrt=False)
def ev_hit(pl, cd, p, counting, bonus, brutal):
    """policies.vengeance.hit_value: one more card then staying beats staying now. The
    accumulator only ever holds integers (exact in a float), so the one division decides."""
    now = vpoints(pl, p, False, brutal)
    mask = pl[F_MASK, p]
    thirteens = pl[V_THIRTEENS, p]
    lucky = pl[V_LUCKY, p]
    nsum = pl[F_NSUM, p]
    zero = pl[V_ZERO, p]
    div2 = pl[V_DIV2, p]
    minus = pl[V_MINUS, p]
    flip7 = pl[F_NCOUNT, p] + 1 >= 7
    bust_value = -minus if brutal else 0
    total = 0
    acc = 0
    for c in range(cd.shape[1]):
        u = unseen(cd, c, counting)
        if u <= 0:
            continue
        total += u
        v = face(c)
        if v < 0:
            acc += u * now
        elif c == UNLUCKY_7:
            acc += u * 7
        else:
            dup = mask >> v & 1
            if dup and v == 13:
                dup = thirteens >= 2 or not (lucky or c == LUCKY_13)
            if dup:
                acc += u * bust_value
            else:
                pts = row_points(nsum + v, zero or c == N0, div2, minus, flip7, brutal)
                acc += u * (pts + (bonus if flip7 else 0))
    if total <= 0:
        return False
    return acc / total > now


@njit(cache=True, _nrt=False)
def wants_hit(pl, pf, cd, p, n, target, bonus, brutal):
    """The seat's policy answers hit-or-stay (thresholds, ev, endgame; dp plays ev here)."""
    kind = pl[F_KIND, p]
    if kind <= P_COUNT:
        return below_threshold(pl, p, kind)
    counting = pl[F_COUNTING, p]
    if kind == P_BUST:
        return bust_risk(pl, cd, p, counting) < pf[p]
    if kind == P_DUP:
        return dup_risk(pl, cd, p, counting) < pf[p]
    if kind == P_ENDGAME:
        top = pl[F_TOTAL, 0]
        for q in range(1, n):
            if pl[F_TOTAL, q] > top:
                top = pl[F_TOTAL, q]
        if top >= target - pl[F_INT, p]:
            mine = pl[F_TOTAL, p] + vpoints(pl, p, False, brutal)
            best = -1
            first = True
            for q in range(n):
                if q != p:
                    t = pl[F_TOTAL, q] + vpoints(pl, q, False, brutal)
                    if first or t > best:
                        best = t
                        first = False
            if mine >= target and mine > best:
                return False
            if mine <= best:
                if best >= target or bust_risk(pl, cd, p, counting) <= pf[p]:
                    return True
    elif kind == P_DP:
        counting = 0  # DPPolicy falls back to a plain EVPolicy() in this variant
    return ev_hit(pl, cd, p, counting, bonus, brutal)


@njit(cache=True, _nrt=False, inline="always")
def threat_best(pl, me, n, who, skip_busted, brutal):
    """max(candidates other than me, key=(total + points, -seat)); -1 if none."""
    best = -1
    bt = 0
    for q in range(n):
        if q == me:
            continue
        if who == WHO_IN_PLAY and not in_play(pl, q):
            continue
        if skip_busted and pl[F_STATUS, q] == BUSTED:
            continue
        t = pl[F_TOTAL, q] + vpoints(pl, q, False, brutal)
        if best < 0 or t > bt:
            best = q
            bt = t
    return best


@njit(cache=True, _nrt=False)
def choose_target(pl, cd, fp, me, card, n, who, brutal, target):
    """policies.vengeance.choose_target over the candidates `who` names (two or more)."""
    counting = pl[F_COUNTING, me]
    if who == WHO_IN_PLAY:
        me_in = in_play(pl, me)
    else:
        me_in = True
    others = 0
    live = 0
    for q in range(n):
        if q != me and (who == WHO_ALL or in_play(pl, q)):
            others += 1
            if pl[F_STATUS, q] != BUSTED:
                live += 1
    if card == FLIP7_CHOICE:
        if others == 0:
            return me
        leader = -1
        lt = 0
        for q in range(n):
            if q != me and (leader < 0 or pl[F_TOTAL, q] > lt):
                leader = q
                lt = pl[F_TOTAL, q]
        mine = pl[F_TOTAL, me] + vpoints(pl, me, False, brutal)
        if lt > mine and lt >= target - FLIP7_LEADER_WINDOW:
            return leader
        return me
    if others == 0:
        return me
    if DIV2 <= card <= MINUS10:
        return threat_best(pl, me, n, who, live > 0, brutal)
    if card == JUST_ONE_MORE:
        best = -1
        bl = 0.0
        btot = 0
        for q in range(n):
            if q == me or not (who == WHO_ALL or in_play(pl, q)):
                continue
            loss = vpoints(pl, q, False, brutal) * bust_risk(pl, cd, q, counting)
            t = pl[F_TOTAL, q]
            if best < 0 or loss > bl or (loss == bl and t > btot):
                best = q
                bl = loss
                btot = t
        if bl > 0:
            return best
        return threat_best(pl, me, n, who, False, brutal)
    # Flip Four
    if (
        me_in
        and pl[F_STATUS, me] == ACTIVE
        and pl[F_NCOUNT, me] <= 2
        and bust_risk(pl, cd, me, counting) < fp[J_VSAFE]
    ):
        return me
    return threat_best(pl, me, n, who, False, brutal)


# === Steal / Swap / Discard ===================================================================


@njit(cache=True, _nrt=False, inline="always")
def seen_before(lines, q, i):
    """Whether lines[q, i] also sits earlier in q's row (dict.fromkeys keeps the first)."""
    c = lines[q, i]
    for j in range(i):
        if lines[q, j] == c:
            return True
    return False


@njit(cache=True, _nrt=False)
def worth(pl, cd, lines, vc, q, rem, add, me, counting, brutal):
    """policies.vengeance.choose_move's worth(q, row) for q's row less the first `rem` and plus
    `add` (-1: none): what q banks (busted: the -N penalty in Brutal), times the chance of not
    busting on the next card for the chooser while active."""
    for v in range(14):
        vc[v] = 0
    nsum = zero = lucky = div2 = minus = mask = 0
    skipped = False
    ln = pl[F_LEN, q]
    for i in range(ln + 1):
        if i < ln:
            c = lines[q, i]
            if c == rem and not skipped:
                skipped = True
                continue
        else:
            c = add
            if c < 0:
                break
        v = face(c)
        if v >= 0:
            vc[v] += 1
        mask, nsum, div2, minus, zero, lucky = tally(c, v, mask, nsum, div2, minus, zero, lucky)
    for v in range(14):
        k = vc[v]
        if k > 2 or (k == 2 and not (v == 13 and lucky)):
            if brutal:
                return float(-pl[V_MINUS, q])
            return 0.0
    pts = row_points(nsum, zero, div2, minus, False, brutal)
    if q == me and pl[F_STATUS, q] == ACTIVE:
        total = unseen_total(cd, counting)
        if total == 0:
            total = 1
        dup = busting(cd, counting, mask, vc[13], lucky)
        return pts * (1 - dup / total)
    return float(pts)


@njit(cache=True, _nrt=False)
def option_value(pl, cd, lines, vc, w0, me, card, leader, a, ca, b, cb, counting, brutal):
    """The value of one option (see policies.vengeance.choose_move): Steal (a, ca), Discard
    (a, ca), Swap (a, ca, b, cb)."""
    # affected = sorted({me, a} | {b} for a Swap)
    x0 = me
    x1 = a
    x2 = b if card == SWAP else -1
    if x1 == x0:
        x1 = -1
    if x2 == x0 or x2 == x1:
        x2 = -1
    # sort the three (at most), -1 meaning absent
    s0, s1, s2 = x0, x1, x2
    if s1 >= 0 and s1 < s0:
        s0, s1 = s1, s0
    if s2 >= 0:
        if s2 < s0:
            s0, s1, s2 = s2, s0, s1
        elif s1 >= 0 and s2 < s1:
            s1, s2 = s2, s1
    score = 0.0
    for k in range(3):
        q = s0 if k == 0 else (s1 if k == 1 else s2)
        if q < 0:
            continue
        rem = -1
        add = -1
        if card == STEAL:
            if q == a:
                rem = ca
            elif q == me:
                add = ca
        elif card == SWAP:
            if q == a:
                rem = ca
                add = cb
            elif q == b:
                rem = cb
                add = ca
        elif q == a:
            rem = ca
        if rem < 0 and add < 0:
            delta = 0.0
        else:
            delta = worth(pl, cd, lines, vc, q, rem, add, me, counting, brutal) - w0[q]
        if q == me:
            score += delta
        else:
            score += -delta * (1.0 if q == leader else 0.5)
    return score


@njit(cache=True, _nrt=False, inline="always")
def swaps(pl, cd, lines, vc, w0, me, card, leader, a, b, counting, brutal, out, count, bv):
    """best_move's Swap options between rows a and b, each card of a (first copies) with each of
    b, in move_options' order: (count, best value) after them, out[:4] the best so far."""
    for i in range(pl[F_LEN, a]):
        if seen_before(lines, a, i):
            continue
        ca = lines[a, i]
        for j in range(pl[F_LEN, b]):
            if seen_before(lines, b, j):
                continue
            cb = lines[b, j]
            val = option_value(
                pl, cd, lines, vc, w0, me, card, leader, a, ca, b, cb, counting, brutal
            )
            if count == 0 or val > bv:
                bv = val
                out[0], out[1], out[2], out[3] = a, ca, b, cb
            count += 1
    return count, bv


@njit(cache=True, _nrt=False)
def best_move(pl, cd, lines, vc, w0, me, card, n, brutal, out):
    """Enumerate VengeanceEngine.move_options in its order; out[:4] = the option the policy
    picks (the first best value). Returns how many options there are."""
    counting = pl[F_COUNTING, me]
    for q in range(n):
        w0[q] = worth(pl, cd, lines, vc, q, -1, -1, me, counting, brutal)
    leader = threat_best(pl, me, n, WHO_ALL, False, brutal)
    count = 0
    bv = 0.0
    if card == STEAL or card == DISCARD:
        for q in range(n):
            if not in_play(pl, q) or (card == STEAL and q == me):
                continue
            for i in range(pl[F_LEN, q]):
                c = lines[q, i]
                if seen_before(lines, q, i) or (card == STEAL and face(c) < 0):
                    continue
                val = option_value(
                    pl, cd, lines, vc, w0, me, card, leader, q, c, -1, -1, counting, brutal
                )
                if count == 0 or val > bv:
                    bv = val
                    out[0] = q
                    out[1] = c
                count += 1
        return count
    # Swap: mine with each other's, then each pair of others
    if in_play(pl, me):
        for q in range(n):
            if q != me and in_play(pl, q):
                count, bv = swaps(
                    pl, cd, lines, vc, w0, me, card, leader, me, q, counting, brutal, out, count, bv
                )
    for q1 in range(n):
        if q1 == me or not in_play(pl, q1):
            continue
        for q2 in range(q1 + 1, n):
            if q2 != me and in_play(pl, q2):
                count, bv = swaps(
                    pl,
                    cd,
                    lines,
                    vc,
                    w0,
                    me,
                    card,
                    leader,
                    q1,
                    q2,
                    counting,
                    brutal,
                    out,
                    count,
                    bv,
                )
    return count


@njit(cache=True, _nrt=False)
def has_move(pl, lines, p, card, n):
    """Whether VengeanceEngine.move_options(p, card) is not empty."""
    if card == STEAL:
        for q in range(n):
            if q != p and in_play(pl, q):
                for i in range(pl[F_LEN, q]):
                    if face(lines[q, i]) >= 0:
                        return True
        return False
    if card == DISCARD:
        for q in range(n):
            if in_play(pl, q) and pl[F_LEN, q] > 0:
                return True
        return False
    filled = 0
    for q in range(n):
        if q != p and in_play(pl, q) and pl[F_LEN, q] > 0:
            filled += 1
    if filled >= 2:
        return True
    return filled == 1 and in_play(pl, p) and pl[F_LEN, p] > 0


# === card movements ===========================================================================


@njit(cache=True, _nrt=False, inline="always")
def to_discard(st, cd, piles, c):
    piles[1, st[S_NDIS]] = c
    st[S_NDIS] += 1
    cd[C_DIS, c] += 1


@njit(cache=True, _nrt=False, inline="always")
def aside_remove(st, aside, c):
    """aside.remove(c) if c is there; whether it was."""
    m = st[S_NASIDE]
    for i in range(m):
        if aside[i] == c:
            for j in range(i, m - 1):
                aside[j] = aside[j + 1]
            st[S_NASIDE] = m - 1
            return True
    return False


@njit(cache=True, _nrt=False)
def bust(st, pl, ev, p, c):
    pl[F_STATUS, p] = BUSTED
    pl[F_BUSTS, p] += 1
    em(ev, st, K_BUST, p, c, -1, -1)


@njit(cache=True, _nrt=False)
def flip7(st, pl, cd, fp, ev, p):
    """VengeanceEngine.flip7: the round ends; Brutal: the bonus, or 15 from another seat."""
    n = st[S_N]
    bonus = st[S_BONUS]
    st[S_FLIP7P] = p
    pl[F_FLIP7S, p] += 1
    st[S_OVER] = 1
    st[S_END] = END_FLIP7
    if st[S_BRUTAL] and n > 1:
        choice = choose_target(pl, cd, fp, p, FLIP7_CHOICE, n, WHO_ALL, True, st[S_TARGET])
        if choice != p:
            st[S_DECLINED] = 1
            pl[V_PENALTY, choice] += bonus
            em(ev, st, K_FLIP7, p, -1, -1, 0)
            em(ev, st, K_FLIP7_PENALTY, p, -1, choice, bonus)
            return
    em(ev, st, K_FLIP7, p, -1, -1, bonus)


@njit(cache=True, _nrt=False, inline="always")
def move_card(pl, lines, src, card, dst):
    """card leaves src's row (its first copy) for the end of dst's; both rows' counters anew."""
    take(pl, lines, src, card)
    lines[dst, pl[F_LEN, dst]] = card
    pl[F_LEN, dst] += 1
    recompute(pl, lines, src)
    recompute(pl, lines, dst)


@njit(cache=True, _nrt=False)
def play_move(st, pl, cd, fp, lines, piles, aside, ev, vc, w0, out, chooser, c):
    """VengeanceEngine.play_move: Steal, Swap or Discard, then settle the rows it touched."""
    n = st[S_N]
    brutal = st[S_BRUTAL] != 0
    count = best_move(pl, cd, lines, vc, w0, chooser, c, n, brutal, out)
    if count == 0:
        to_discard(st, cd, piles, c)
        em(ev, st, K_ACTION_DROPPED, chooser, c, -1, -1)
        return
    aside[st[S_NASIDE]] = c
    st[S_NASIDE] += 1
    em(ev, st, K_ACTION_PLAYED, chooser, c, -1, -1)
    t0 = out[0]
    t1 = -1
    if c == STEAL:
        victim, card = out[0], out[1]
        move_card(pl, lines, victim, card, chooser)
        em(ev, st, K_CARD_MOVED, victim, card, chooser, 0)
        t0, t1 = chooser, victim
    elif c == SWAP:
        a, ca, b, cb = out[0], out[1], out[2], out[3]
        move_card(pl, lines, a, ca, b)
        em(ev, st, K_CARD_MOVED, a, ca, b, 1)
        move_card(pl, lines, b, cb, a)
        em(ev, st, K_CARD_MOVED, b, cb, a, 1)
        t0, t1 = a, b
    else:
        victim, card = out[0], out[1]
        take(pl, lines, victim, card)
        cd[C_VIS, card] -= 1
        to_discard(st, cd, piles, card)
        recompute(pl, lines, victim)
        em(ev, st, K_CARD_DISCARDED, victim, card, chooser, 0)
    aside_remove(st, aside, c)
    to_discard(st, cd, piles, c)
    # settle: a duplicate busts, then seven numbers are a Flip 7
    for k in range(2):
        q = t0 if k == 0 else t1
        if q >= 0 and pl[F_STATUS, q] != BUSTED and row_busts(pl, lines, vc, q):
            bust(st, pl, ev, q, -1)
    for k in range(2):
        q = t0 if k == 0 else t1
        if q >= 0 and pl[F_STATUS, q] != BUSTED and pl[F_NCOUNT, q] >= 7 and not st[S_OVER]:
            flip7(st, pl, cd, fp, ev, q)


@njit(cache=True, _nrt=False)
def row_busts(pl, lines, vc, q):
    """flip7.scoring.vengeance_row_busts on q's row."""
    for v in range(14):
        vc[v] = 0
    lucky = False
    for i in range(pl[F_LEN, q]):
        c = lines[q, i]
        v = face(c)
        if v >= 0:
            vc[v] += 1
            if c == LUCKY_13:
                lucky = True
    for v in range(14):
        k = vc[v]
        if k > 2 or (k == 2 and not (v == 13 and lucky)):
            return True
    return False


# === the game =================================================================================


@njit(cache=True)
def workspace(n, deck):
    """play_games' scratch arrays for n seats and `deck`, zeroed (see core.workspace)."""
    nid = deck.shape[0]
    dsize = 0
    for c in range(nid):
        dsize += deck[c]
    return workspace_of(n, deck, N_VFIELDS, 3, N_VFRAME) + (
        np.zeros(dsize + 1, dtype=np.int64),  # aside
        np.zeros(N_STATE, dtype=np.int64),  # st
        np.zeros(16, dtype=np.int64),  # vc: counts per face value
        np.zeros(n, dtype=np.float64),  # w0: worth of each row before a move
        np.zeros(4, dtype=np.int64),  # out: the chosen move
    )


@njit(cache=True)
def play_games(
    seeds, seat_policy, pol_kind, pol_int, pol_flt, pol_counting, pol_dp, ip, fp, deck,
    stacked, dpb, dpm, dps, dpk, ev, rs, go, gt, g0, pos0, rpos0, pl, pf, cd, lines, piles,
    fr, keys, sorted_keys, cnt, fresh, aside, st, vc, w0, out,
):  # fmt: skip
    """core.play_games for "With a Vengeance" (ip carries I_BRUTAL, fp J_VSAFE); the dp
    arguments are unused (dp and race play ev in this variant)."""
    dsize = fresh.shape[0] - 1
    fill_deck(deck, cd, fresh)
    return _play(
        seeds, seat_policy, bare(pol_kind), bare(pol_int), bare(pol_flt), bare(pol_counting),
        bare(ip), bare(fp), deck, stacked, bare(ev), bare(rs), bare(go), bare(gt), g0, pos0,
        rpos0, bare(pl), bare(pf), bare(cd), bare(lines), bare(piles), bare(fr), bare(keys),
        bare(sorted_keys), bare(cnt), bare(fresh), bare(aside), bare(st), bare(vc), bare(w0),
        bare(out), dsize,
    )  # fmt: skip


@njit(cache=True, _nrt=False, inline="always")
def begin_game(vx, pl, cd, seat_policy, g, n, stacked):
    """A game's start (play_loop's hook): nothing of its own."""


@njit(cache=True, _nrt=False, inline="always")
def begin_round(vx, pl, n):
    """A round's start (play_loop's hook, VengeanceEngine.play_round): empty rows' counters."""
    for p in range(n):
        for f in range(V_MINUS, N_VFIELDS):  # V_MINUS .. V_PENALTY
            pl[f, p] = 0


@njit(cache=True, _nrt=False, inline="always")
def seat_score(vx, pl, p, flip7p, bonus, ev, pos, capture, folds):
    """Seat p's score at the round's end (play_loop's hook): VengeanceEngine's row points, the
    bonus unless a Brutal Flip 7 took 15 from another seat instead, less the penalties taken."""
    st = vx[3]
    s = vpoints(pl, p, p == flip7p, st[S_BRUTAL] != 0)
    if p == flip7p:
        s += bonus
        if st[S_DECLINED]:
            s -= bonus
    s -= pl[V_PENALTY, p]
    return s, pos, folds


@njit(cache=True, _nrt=False, inline="always")
def end_round(vx, pl, cd, piles, n, ndis):
    """After the round's table went to the discard pile (play_loop's hook): the cards set
    aside follow it."""
    aside, st = vx[2], vx[3]
    st[S_NDIS] = ndis
    for x in range(st[S_NASIDE]):
        to_discard(st, cd, piles, aside[x])
    st[S_NASIDE] = 0
    return st[S_NDIS]


@njit(cache=True, _nrt=False, inline="always")
def cannot_change(vx, pl, cd, lines, n, ndis):
    """VengeanceEngine.cannot_change_round on an empty draw pile (the draw's test): only moves are
    left in the discard pile, and none of them is legal for any seat in play."""
    for x in range(cd.shape[1]):
        if cd[C_DIS, x] and x != STEAL and x != SWAP and x != DISCARD:
            return False
    for q in range(n):
        if in_play(pl, q):
            for x in range(STEAL, DISCARD + 1):
                if cd[C_DIS, x] and has_move(pl, lines, q, x, n):
                    return False
    return True


@njit(cache=True, _nrt=False)
def play_round(
    vx, ip, ev, pos, capture, folds, pl, pf, cd, lines, piles, keys, sorted_keys, cnt, dsize,
    top, ndis, counter, seed, rnd, dealer,
):  # fmt: skip
    """The Vengeance round from its deal to its end (play_loop's hook): each pass of the loop
    takes the next job (the innermost Just One More or Flip Four's next step, the deal, or the
    laps' next hit-or-stay), then resolves at most one card. The round's state lives in st
    (the helpers update it in place); the HITs folded into its codes are counted once, at its
    end, off the codes themselves (em writes one store per event)."""
    fp, fr, aside, st, vc, w0, out = vx
    n = ip[I_N]
    target = ip[I_TARGET]
    bonus = ip[I_BONUS]
    brutal = st[S_BRUTAL] != 0
    start = pos
    st[S_POS] = pos
    st[S_TOP] = top
    st[S_NDIS] = ndis
    st[S_OVER] = 0
    st[S_END] = END_NOBODY_ACTIVE
    st[S_FLIP7P] = -1
    st[S_DECLINED] = 0
    st[S_NASIDE] = 0
    rshuf = 0
    dealing = True
    turn = 0
    anyone = False
    depth = 0
    while not st[S_OVER]:
        job = JOB_DRAW
        p = 0
        c = -1
        how = HOW_DEAL
        if depth > 0:
            d = depth - 1
            p = fr[d, R_PLAYER]
            if fr[d, R_TYPE] == JUST_ONE_MORE:
                if fr[d, R_STAGE] == 0:
                    fr[d, R_STAGE] = 1
                    how = HOW_JUST_ONE_MORE
                else:
                    # the card is resolved: the receiver must stay
                    if pl[F_STATUS, p] != BUSTED:
                        pl[F_STATUS, p] = STAYED
                        em(
                            ev, st, K_FORCED_STAY, p, -1, -1,
                            vpoints(pl, p, p == st[S_FLIP7P], brutal),
                        )  # fmt: skip
                    if aside_remove(st, aside, fr[d, R_CARD]):
                        to_discard(st, cd, piles, fr[d, R_CARD])
                    depth = d
                    continue
            elif fr[d, R_STAGE] == 0:  # Flip Four: drawing
                drawn = fr[d, R_DRAWN]
                if drawn == 4 or (drawn > 0 and pl[F_STATUS, p] == BUSTED):
                    fr[d, R_STAGE] = 1
                    continue
                fr[d, R_DRAWN] = drawn + 1
                how = HOW_FLIP_FOUR
            else:  # Flip Four: the set-aside cards, in order
                j = fr[d, R_NEXT]
                if j == fr[d, R_NPEND]:
                    if aside_remove(st, aside, fr[d, R_CARD]):
                        to_discard(st, cd, piles, fr[d, R_CARD])
                    depth = d
                    continue
                c = fr[d, R_PEND + j]
                fr[d, R_NEXT] = j + 1
                if pl[F_STATUS, p] == BUSTED:
                    em(ev, st, K_ACTION_DROPPED, p, c, -1, -1)
                    continue
                job = JOB_RECEIVE
                aside_remove(st, aside, c)
        elif dealing:
            p, turn = next_to_deal(pl, dealer, turn, n)
            if p < 0:
                dealing = False
                continue
        else:
            if turn == n:
                if not anyone:
                    break
                turn = 0
                anyone = False
                continue
            p = seat_after(dealer, turn, n)
            turn += 1
            if pl[F_STATUS, p] != ACTIVE:
                continue
            anyone = True
            how = HOW_HIT
            if pl[F_LEN, p] == 0:
                em(ev, st, K_HIT, p, -1, -1, 1)
            elif pl[V_ZERO, p]:
                em(ev, st, K_HIT, p, -1, -1, 2)
            elif wants_hit(pl, pf, cd, p, n, target, bonus, brutal):
                em(ev, st, K_HIT, p, -1, -1, 0)
            else:
                pl[F_STATUS, p] = STAYED
                em(ev, st, K_STAY, p, -1, -1, vpoints(pl, p, p == st[S_FLIP7P], brutal))
                continue

        if job == JOB_DRAW:
            # Engine.draw, as rounds.draw on this round's state in st: calling rounds.draw here
            # measured 0.90x on four sum:20 seats (benchmarks/kernel_ab.py), this copy 0.96x
            if st[S_TOP] == 0:
                ndis = st[S_NDIS]
                if ndis == 0 or cannot_change(vx, pl, cd, lines, n, ndis):
                    st[S_OVER] = 1
                    st[S_END] = END_NO_CARDS
                    continue
                if rshuf >= MAX_RESHUFFLES_PER_ROUND:
                    st[S_OVER] = 1
                    st[S_END] = END_RESHUFFLE_CAP
                    continue
                reshuffle(piles, cd, ndis, seed, counter, keys, sorted_keys, cnt)
                counter += ndis
                st[S_TOP] = ndis
                st[S_NDIS] = 0
                rshuf += 1
                em(ev, st, K_RESHUFFLE, -1, -1, -1, ndis)
            st[S_TOP] -= 1
            c = piles[0, st[S_TOP]]
            em(ev, st, K_DRAW, p, c, -1, how)
            if how == HOW_FLIP_FOUR and face(c) < 0:
                # set aside until the four are drawn
                d = depth - 1
                aside[st[S_NASIDE]] = c
                st[S_NASIDE] += 1
                fr[d, R_PEND + fr[d, R_NPEND]] = c
                fr[d, R_NPEND] += 1
                em(ev, st, K_ACTION_DEFERRED, p, c, -1, -1)
                continue

        # --- the card takes effect (VengeanceEngine.receive)
        v = face(c)
        if v >= 0:
            if c == UNLUCKY_7:
                # every other card of p is discarded; the 7 cannot bust p
                for x in range(pl[F_LEN, p]):
                    old = lines[p, x]
                    cd[C_VIS, old] -= 1
                    to_discard(st, cd, piles, old)
                    em(ev, st, K_CARD_DISCARDED, p, old, -1, 1)
                pl[F_LEN, p] = 0
                place(pl, cd, lines, p, c)
                recompute(pl, lines, p)
                continue
            dup = pl[F_MASK, p] >> v & 1
            if dup and v == 13:
                dup = pl[V_THIRTEENS, p] >= 2 or not (pl[V_LUCKY, p] or c == LUCKY_13)
            place(pl, cd, lines, p, c)
            recompute(pl, lines, p)
            if dup:
                bust(st, pl, ev, p, c)
            elif pl[F_NCOUNT, p] >= 7:
                flip7(st, pl, cd, fp, ev, p)
        elif DIV2 <= c <= MINUS10:
            # a modifier: the drawer gives it to a player in play (Brutal: anyone)
            who = WHO_ALL if brutal else WHO_IN_PLAY
            count = 0
            q = -1
            for x in range(n):
                if who == WHO_ALL or in_play(pl, x):
                    if q < 0:
                        q = x
                    count += 1
            if count == 0:
                to_discard(st, cd, piles, c)
                em(ev, st, K_ACTION_DROPPED, p, c, -1, -1)
                continue
            if count > 1:
                q = choose_target(pl, cd, fp, p, c, n, who, brutal, target)
            place(pl, cd, lines, q, c)
            recompute(pl, lines, q)
            em(ev, st, K_MODIFIER_GIVEN, p, c, q, -1)
        elif c >= STEAL:
            play_move(st, pl, cd, fp, lines, piles, aside, ev, vc, w0, out, p, c)
        else:
            # Just One More or Flip Four: on a player in play (yourself if none)
            count = 0
            q = -1
            for x in range(n):
                if in_play(pl, x):
                    if q < 0:
                        q = x
                    count += 1
            if count == 0:
                q = p
            elif count > 1:
                q = choose_target(pl, cd, fp, p, c, n, WHO_IN_PLAY, brutal, target)
            aside[st[S_NASIDE]] = c
            st[S_NASIDE] += 1
            em(ev, st, K_ACTION_PLAYED, p, c, q, -1)
            fr[depth, R_TYPE] = c
            fr[depth, R_CARD] = c
            depth = push_frame(fr, depth, q)
    # the round ended inside actions: each leaves the set-aside cards, innermost first
    while depth > 0:
        depth -= 1
        if aside_remove(st, aside, fr[depth, R_CARD]):
            to_discard(st, cd, piles, fr[depth, R_CARD])

    # the round ended inside actions: each leaves the set-aside cards, innermost first
    while depth > 0:
        depth -= 1
        if aside_remove(st, aside, fr[depth, R_CARD]):
            to_discard(st, cd, piles, fr[depth, R_CARD])
    pos = st[S_POS]
    if capture:
        for x in range(start, min(pos, ev.shape[1])):
            if ev[E_CODE, x] >= np.int64(1) << HIT_SHIFT:
                folds += 1
    return pos, folds, st[S_TOP], st[S_NDIS], counter, st[S_END], st[S_FLIP7P]


@njit(cache=True, _nrt=False)
def _play(
    seeds, seat_policy, pol_kind, pol_int, pol_flt, pol_counting, ip, fp, deck, stacked, ev,
    rs, go, gt, g0, pos0, rpos0, pl, pf, cd, lines, piles, fr, keys, sorted_keys, cnt, fresh, aside,
    st, vc, w0, out, dsize,
):  # fmt: skip
    """play_games on reference-free views: the shared game loop with the Vengeance round."""
    st[S_CAPTURE] = 1 if ip[I_CAPTURE] != 0 else 0
    st[S_N] = ip[I_N]
    st[S_BRUTAL] = 1 if ip[I_BRUTAL] != 0 else 0
    st[S_BONUS] = ip[I_BONUS]
    st[S_TARGET] = ip[I_TARGET]
    return play_loop(
        begin_game, begin_round, play_round, seat_score, end_round, seeds, seat_policy,
        (pol_kind, pol_int, pol_flt, pol_counting), ip, deck, stacked, (ev, rs, go, gt), g0,
        pos0, rpos0, (pl, pf, cd, lines, piles, keys, sorted_keys, cnt, fresh), dsize,
        (fp, fr, aside, st, vc, w0, out),
    )  # fmt: skip
