"""The compiled game kernel: flip7.engine's rules, event for event, as one numba state machine.

Why one big function: numba passes each array to a call as a dozen words and counts references
to it with atomic operations. With a function per rule this kernel measured 15k four-player
games per CPU-second; as one function, 80k; as one function over arrays that carry no reference
count (`bare`), 165k. So `_play` holds the whole game as a loop over *jobs*: each turn of the
loop advances the opening deal or the hit-or-stay laps, or takes the next step of the innermost
pending Flip Three (an explicit stack, `fr`, instead of the reference engine's recursion), then
resolves at most one card. Every rule appears once; only small leaf functions (what a policy
decides) are separate, and those are inlined.

The game loop and the round's machinery that "With a Vengeance" shares (the loop over games
and rounds, the draw and reshuffle, the deal's order, fresh rows, the cleared table, score rows,
the game's end and its rows, the event writer, and the layout they read) live in
`flip7.kernel.rounds`; this module supplies the classic round (`play_round`, which LLVM
inlines into the loop: see its comment) and the loop's hooks, which numba inlines into `_play`
with the loop. numba's on-disk cache (`cache=True`) only notices edits to the file holding a
function, so `flip7.kernel.load` drops a kernel's cached code when a
callee's file changes (CALLEES). The constants are literals for the same reason;
`flip7.kernel.encode` checks at import time that they still equal flip7's enums.

Arrays (allocated once per call, reused by every game):
- `pl[F_*, seat]`: per-seat fields (numbers mask, sum, count, modifiers, status, line length,
  totals, the seat's encoded policy). `pf[seat]`: the policy's float parameter.
- `cd[C_*, card]`: copies of each card on the table, in the discard pile, in the deck.
- `piles[0]`: the draw pile (top = last used slot); `piles[1]`: the discard pile, in order of
  arrival. `lines[seat, i]`: cards in front of a seat, in order (the discard pile is built from
  them, and the next shuffle permutes it, so order matters).
- `fr[depth, R_*]`: the Flip Threes being resolved, innermost last.
Events go straight into `ev[E_CODE, pos]` as the event log stores them (flip7.events: one int64
code each, a HIT folded into the event after it; a round begins at its ROUND_START).
"""

# mypy: ignore-errors
# ruff: noqa: F405 (names from flip7.kernel.rounds, imported whole)
# (numba types this module when it compiles it; Python annotations would not be checked.)

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

# The vocabulary every variant shares, whole: the layout (per-seat fields, census rows, frames,
# outputs), the event kinds and parameters, and the round's machinery (flip7.kernel.rounds).
from flip7.kernel.rounds import *  # noqa: F403
from flip7.solver.win_kernel import (
    in_round_solve,
    in_round_value,
    law_into,
    reward_against_at,
    reward_into,
    state_index,
)

# --- card ids, event kinds, statuses (checked against flip7 by flip7.kernel.encode) ---------
N_IDS = 36
FREEZE, FLIP_THREE, SECOND_CHANCE, TIMES2 = 20, 21, 22, 19
PLUS2 = 14
LAST_CLASSIC = 22
N13 = 13
# (event kinds K_*, HOW_DEAL, HOW_HIT, END_*: flip7.kernel.rounds)
HOW_FLIP_THREE = 2
MODE_DEFERRED, MODE_IMMEDIATE, MODE_LEGACY = 0, 1, 2
PLUS_VALUE = np.array([0] * 14 + [2, 4, 6, 8, 10] + [0] * (N_IDS - 19), dtype=np.int64)

# --- policy kinds (flip7.kernel.encode) ---------------------------------------------------------
# P_SUM .. P_WIN: flip7.kernel.rounds

# --- per-seat fields: pl[F_*, seat] ----------------------------------------------------------
# F_MASK .. F_POLICY: flip7.kernel.rounds, then
F_DP_ROUND, F_DP_SC, F_DP_NUMBERS = 15, 16, 17  # dp's per-round Second Chance bookkeeping
N_FIELDS = 18

# --- card census: cd[C_*, card] ----------------------------------------------------------------
# C_VIS, C_DIS, C_DECK: flip7.kernel.rounds
# ... and its sums for ev (ev_hit), kept as cards move: cd[C_UNSEEN, U_*] over the cards off the
# table, cd[C_GONE, U_*] over the discard pile (counting sees C_UNSEEN minus C_GONE), and
# cd[C_ALL, U_*] over the deck: how many numbers, their values, the +modifiers' points.
C_UNSEEN, C_GONE, C_ALL = 3, 4, 5
N_CENSUS = 6
U_NUMBERS, U_VALUES, U_PLUS = 0, 1, 2

# --- Flip Three frames: fr[depth, R_*] ---------------------------------------------------------
# R_PLAYER .. R_NEXT: flip7.kernel.rounds
R_PEND = 5
N_FRAME = 8  # R_PEND .. R_PEND + 2 hold up to three set-aside actions

# --- integer parameters ip[I_*] and float parameters fp[J_*] -----------------------------------
# I_N .. I_FREEZE_SELF, N_IPARAMS: flip7.kernel.rounds
J_DANGER, J_SAFE = 0, 1
N_FPARAMS = 2

# --- dp tables: dp_meta[policy, D_*] (flip7.kernel.dp) -----------------------------------------
# A table is one block of bits per (banked score, 13-bit number mask): the block of score b and
# mask m starts at bit D_OFFSET + dp_blocks[D_BLOCKS + b * N_MASKS + m] * 64 * n_sc * n_t, so
# equal blocks are stored once. dp has one score (every total reads it), race `target` of them.
D_OFFSET, D_N_SC, D_N_T, D_NONE, D_HELD, D_STATES, D_N_STATES = 0, 1, 2, 3, 4, 5, 6
D_BLOCKS, D_N_SCORES = 7, 8
N_DP_META = 9
N_MASKS = 8192

# --- win tables: win_meta[policy, W_*] and the array tuple's positions WX_* (flip7.kernel.win) --
W_MODEL, W_TABLE, W_HELD, W_NONE, W_N_SC, W_N_T, W_ENDGAME, W_FREEZE = range(8)
N_WIN_META = 8
WX_BITS, WX_MENU, WX_CHOICE, WX_VALUES, WX_TIES = 0, 1, 2, 3, 4
WX_COPIES, WX_MASK_TAB, WX_MOD_TAB, WX_MOD_W, WX_SC_TAB = 5, 6, 7, 8, 9
WX_PH_TAB, WX_PH_ORDER, WX_PARAMS, WX_MASKS, WX_RANK = 10, 11, 12, 13, 14
WX_REACH, WX_DP_HIT, WX_DIMS, WX_Q, WX_HIT, WX_PROB = 15, 16, 17, 18, 19, 20
WX_LIVE, WX_LIVE2, WX_KEY, WX_F, WX_I, WX_ACC, WX_OUT = 21, 22, 23, 24, 25, 26, 27
WX_LAW_KEY, WX_LAWS = 28, 29  # the opponent laws met so far (a hash table per model)
WX_EG_KEY, WX_EG_BITS = 30, 31  # the endgame's sweeps, kept per reward (hash table per model)
WX_EG_ROWS = 32  # the rows each kept entry's sweeps reached
# WX_F rows: the reward, the sweep's cost, the opponent's law; WX_I rows: mult, plus, free
WF_REWARD, WF_COST, WF_LAW, WF_BOUNDS = 0, 1, 2, 3

# --- outputs: flip7.kernel.rounds (E_CODE .. N_T)

# The event codes' shifts, HIT_SHIFT, DONE/GROW, MAX_RESHUFFLES_PER_ROUND: flip7.kernel.rounds

JOB_NONE, JOB_DRAW, JOB_PENDING = 0, 1, 2


# === what policies see (flip7.policies) =======================================================


@njit(cache=True, inline="always")
def points(pl, p):
    """What p banks now: numbers (doubled by x2) plus modifiers; 0 if busted."""
    if pl[F_STATUS, p] == BUSTED:
        return 0
    return pl[F_NSUM, p] * (2 if pl[F_X2, p] else 1) + pl[F_PLUS, p]


@njit(cache=True, inline="always")
def bust_risk(pl, cd, p, counting, unseen_total, ndis):
    """flip7.policies.base.bust_risk (the chance of a duplicate, Second Chance or not): the
    same integers, then one float division.
    `unseen_total` is the deck size minus the cards on the table; the discard pile holds
    exactly the discarded census, so counting removes `ndis` more."""
    m = pl[F_MASK, p]
    total = unseen_total
    if counting:
        total -= ndis
    dup = 0
    v = 0
    while m:
        if m & 1:
            dup += cd[C_DECK, v] - cd[C_VIS, v]
            if counting:
                dup -= cd[C_DIS, v]
        m >>= 1
        v += 1
    if total > 0:
        return dup / total
    return 0.0


@njit(cache=True, inline="always")
def ev_hit(pl, cd, p, counting, bonus):
    """flip7.policies.ev.EVPolicy.hit: one more card then stopping beats stopping now.

    The reference hits when the float acc / total > now, summing over the cards c with u_c > 0
    unseen copies: total = sum u_c, acc = sum u_c * v_c (v_c: the points after drawing c then
    stopping). All are small integers (exact as doubles), so that equals acc > now * total:
    rounding is monotonic and `now` is a double, and acc / total, when above now, is above it by
    at least 1 / total, far more than half an ulp of now. That is gain = sum u_c * (v_c - now)
    > 0, and with no card left (total 0) gain is 0 too. No u_c is negative (the census counts
    each copy once: in the draw pile, on the table or discarded), so the sums may run over
    every card. v_c - now is c * mult for a number p lacks (plus the bonus on a seventh),
    -now for one p holds (0 with a Second Chance), the points of a +modifier, nsum for an x2
    (0 if p has one), 0 for an action card. So gain is its value as if p held no number, from
    the sums over all unseen numbers and modifiers that the game keeps as cards move
    (cd[C_UNSEEN], counting less cd[C_GONE]), less u_c * (k + c * mult) for each number c p
    holds (six at most), with k = the bonus on a seventh + now without a Second Chance. No
    branch on the hand but that pass, one product per held number: measured faster."""
    mask = pl[F_MASK, p]
    nsum = pl[F_NSUM, p]
    x2 = pl[F_X2, p]
    mult = 1 + x2
    seventh = (pl[F_NCOUNT, p] == 6) * bonus
    # gain as if p held no number, less for each unseen copy of a number c that p holds what it
    # was counted as (mult * c, and the bonus on a seventh) and the points it busts (now, unless a
    # Second Chance keeps them): k + mult * c
    k = seventh + (1 - pl[F_SC, p]) * (mult * nsum + pl[F_PLUS, p])
    numbers = cd[C_UNSEEN, U_NUMBERS]
    values = cd[C_UNSEEN, U_VALUES]
    plus = cd[C_UNSEEN, U_PLUS]
    x2_left = cd[C_DECK, TIMES2] - cd[C_VIS, TIMES2]
    if counting:
        numbers -= cd[C_GONE, U_NUMBERS]
        values -= cd[C_GONE, U_VALUES]
        plus -= cd[C_GONE, U_PLUS]
        x2_left -= cd[C_DIS, TIMES2]
    gain = plus + mult * values + seventh * numbers + (1 - x2) * nsum * x2_left
    if counting:
        while mask:
            c = trailing_zeros(mask)
            gain -= (cd[C_DECK, c] - cd[C_VIS, c] - cd[C_DIS, c]) * (k + mult * c)
            mask &= mask - 1
    else:
        while mask:
            c = trailing_zeros(mask)
            gain -= (cd[C_DECK, c] - cd[C_VIS, c]) * (k + mult * c)
            mask &= mask - 1
    return gain > 0


@njit(cache=True, inline="always")
def census_sums(cd):
    """cd[C_UNSEEN, U_*] and cd[C_GONE, U_*] summed afresh from the census (ev_hit's sums; the
    game keeps them as cards move)."""
    for u in range(U_PLUS + 1):
        cd[C_UNSEEN, u] = 0
        cd[C_GONE, u] = 0
    for c in range(TIMES2):
        off = cd[C_DECK, c] - cd[C_VIS, c]
        gone = cd[C_DIS, c]
        if c <= N13:
            cd[C_UNSEEN, U_NUMBERS] += off
            cd[C_UNSEEN, U_VALUES] += off * c
            cd[C_GONE, U_NUMBERS] += gone
            cd[C_GONE, U_VALUES] += gone * c
        else:
            cd[C_UNSEEN, U_PLUS] += off * PLUS_VALUE[c]
            cd[C_GONE, U_PLUS] += gone * PLUS_VALUE[c]


@njit(cache=True, inline="always")
def number_seen(cd, row, c, step):
    """Number c joins (step 1) or leaves (-1) the cards that cd[row] sums."""
    cd[row, U_NUMBERS] += step
    cd[row, U_VALUES] += step * c


@njit(cache=True, inline="always")
def endgame_rule(pl, pf, cd, p, n, target, unseen_total, ndis):
    """flip7.policies.ev.EndgamePolicy.hit before its ev fallback: 1 hit, 0 stay, -1 play ev."""
    top = pl[F_TOTAL, 0]
    for q in range(1, n):
        if pl[F_TOTAL, q] > top:
            top = pl[F_TOTAL, q]
    if top < target - pl[F_INT, p]:
        return -1
    mine = pl[F_TOTAL, p] + points(pl, p)
    best = -1
    for q in range(n):
        if q != p:
            t = pl[F_TOTAL, q] + points(pl, q)
            if t > best:
                best = t
    if mine >= target and mine > best:
        return 0
    if mine <= best:
        if best >= target:
            return 1
        if bust_risk(pl, cd, p, pl[F_COUNTING, p], unseen_total, ndis) <= pf[p]:
            return 1
    return -1


@njit(cache=True, inline="always")
def line_mods(pl, lines, p):
    """The solver tables' reading of seat p's line: (modifier bits, Flip Threes in it)."""
    mods = 0
    t = 0
    for i in range(pl[F_LEN, p]):
        c = lines[p, i]
        if PLUS2 <= c <= TIMES2:
            mods |= 1 << (c - PLUS2)
        elif c == FLIP_THREE:
            t += 1
    return mods, t


@njit(cache=True, inline="always")
def dp_rule(pl, cd, lines, p, n, rnd, dp_bits, dp_meta, dp_states, dp_blocks):
    """flip7.policies.dp.DPPolicy.hit (and RacePolicy.hit: the table of the seat's banked
    score): one bit of the solver's table; -1 means fall back to ev (a 13 showing)."""
    if pl[F_MASK, p] >> N13:
        return -1
    meta = pl[F_POLICY, p]
    mods, t = line_mods(pl, lines, p)
    n_sc = dp_meta[meta, D_N_SC]
    n_t = dp_meta[meta, D_N_T]
    held = pl[F_SC, p]
    sc = dp_meta[meta, D_HELD] if held else dp_meta[meta, D_NONE]
    if n == 1:
        # Alone, every discard of this round is its own: Second Chances spent and duplicates
        # saved since its first decision of the round.
        numbers = 0
        for c in range(N13 + 1):
            numbers += cd[C_DIS, c]
        if pl[F_DP_ROUND, p] != rnd:
            pl[F_DP_ROUND, p] = rnd
            pl[F_DP_SC, p] = cd[C_DIS, SECOND_CHANCE]
            pl[F_DP_NUMBERS, p] = numbers
        drawn = cd[C_DIS, SECOND_CHANCE] - pl[F_DP_SC, p] + held
        used = numbers - pl[F_DP_NUMBERS, p]
        s0 = dp_meta[meta, D_STATES]
        ns = dp_meta[meta, D_N_STATES]
        found = -1
        for j in range(ns):
            if (
                dp_states[s0 + j, 0] == drawn
                and dp_states[s0 + j, 1] == held
                and dp_states[s0 + j, 2] == used
            ):
                found = j
                break
        if found < 0:
            for j in range(ns):
                if (
                    dp_states[s0 + j, 0] == drawn
                    and dp_states[s0 + j, 1] == held
                    and dp_states[s0 + j, 2] == 0
                ):
                    found = j
                    break
        if found >= 0:
            sc = found
    if t > n_t - 1:
        t = n_t - 1
    b = pl[F_TOTAL, p]
    if b > dp_meta[meta, D_N_SCORES] - 1:
        b = dp_meta[meta, D_N_SCORES] - 1
    if b < 0:
        b = 0
    block = dp_blocks[dp_meta[meta, D_BLOCKS] + b * N_MASKS + pl[F_MASK, p]]
    i = dp_meta[meta, D_OFFSET] + block * (64 * n_sc * n_t) + (mods * n_sc + sc) * n_t + t
    return (dp_bits[i >> 3] >> (i & 7)) & 1


@njit(cache=True, inline="always")
def wants_hit(
    pl, pf, cd, lines, p, n, target, bonus, unseen_total, ndis, rnd, dpb, dpm, dps, dpk, wm, wa
):
    """The seat's policy answers hit-or-stay (flip7.policies.thresholds, ev, dp, race, win)."""
    kind = pl[F_KIND, p]
    if kind <= P_COUNT:
        return below_threshold(pl, p, kind)
    counting = pl[F_COUNTING, p]
    if kind == P_BUST:
        if pl[F_SC, p]:
            return 0.0 < pf[p]  # a Second Chance saves you: the next card cannot bust you
        return bust_risk(pl, cd, p, counting, unseen_total, ndis) < pf[p]
    if kind == P_DUP:
        return bust_risk(pl, cd, p, counting, unseen_total, ndis) < pf[p]
    if kind == P_ENDGAME:
        rule = endgame_rule(pl, pf, cd, p, n, target, unseen_total, ndis)
        if rule >= 0:
            return rule == 1
    elif kind == P_DP:
        rule = dp_rule(pl, cd, lines, p, n, rnd, dpb, dpm, dps, dpk)
        if rule >= 0:
            return rule == 1
        counting = 0  # DPPolicy's (and RacePolicy's) fallback is a plain EVPolicy()
    elif kind == P_WIN:
        rule = win_rule_if(pl, lines, p, n, target, wm, wa)
        if rule >= 0:
            return rule == 1
        counting = 0  # WinPolicy's fallback is dp's plain EVPolicy()
    return ev_hit(pl, cd, p, counting, bonus)


@njit(cache=True, inline="always")
def choose_target(pl, cd, fp, lines, me, card, n, target, freeze_self, unseen_total, ndis, wm, wa):
    """flip7.policies.base.Policy.choose_target over the active players (two or more); win's
    heads-up Freeze first (flip7.policies.win.WinPolicy.choose_target)."""
    if pl[F_KIND, me] == P_WIN and card == FREEZE and n == 2:
        got = win_target_if(pl, lines, me, target, wm, wa)
        if got >= 0:
            return got
    counting = pl[F_COUNTING, me]
    me_in = pl[F_STATUS, me] == ACTIVE
    best = -1
    if card == FREEZE:
        if (
            me_in
            and points(pl, me) >= freeze_self
            and bust_risk(pl, cd, me, counting, unseen_total, ndis) >= fp[J_DANGER]
        ):
            return me
        bc = 0
        bp = 0
        for q in range(n):
            if q == me or pl[F_STATUS, q] != ACTIVE:
                continue
            c = pl[F_NCOUNT, q]
            pts = points(pl, q)
            if best < 0 or c > bc or (c == bc and pts > bp):
                best, bc, bp = q, c, pts
    else:
        if (
            me_in
            and pl[F_NCOUNT, me] <= 2
            and bust_risk(pl, cd, me, counting, unseen_total, ndis) < fp[J_SAFE]
        ):
            return me
        bt = 0
        for q in range(n):
            if q == me or pl[F_STATUS, q] != ACTIVE:
                continue
            t = pl[F_TOTAL, q] + points(pl, q)
            if best < 0 or t > bt:
                best, bt = q, t
    return me if best < 0 else best


@njit(cache=True, inline="always")
def win_hand(pl, lines, p, wm, row):
    """Seat p's hand as a win table reads it: (modifier bits, Second Chance state, Flip Threes
    held) (flip7.policies.dp.DPPolicy._hand at a table with others, and WinPolicy._seat_hand)."""
    mods, t = line_mods(pl, lines, p)
    if t > wm[row, W_N_T] - 1:
        t = wm[row, W_N_T] - 1
    sc = wm[row, W_HELD] if pl[F_SC, p] else wm[row, W_NONE]
    return mods, sc, t


@njit(cache=True, inline="always")
def win_space(wa, mdl):
    """The solver's space tables of model `mdl`, sliced to its sizes (flip7.solver.model)."""
    nm = wa[WX_DIMS][mdl, 0]
    nsc = wa[WX_DIMS][mdl, 1]
    nph = wa[WX_DIMS][mdl, 2]
    return (
        wa[WX_COPIES][mdl],
        wa[WX_MASK_TAB][mdl, :nm],
        wa[WX_MOD_TAB][mdl],
        wa[WX_MOD_W][mdl],
        wa[WX_SC_TAB][mdl, :nsc],
        wa[WX_PH_TAB][mdl, :nph],
        wa[WX_PH_ORDER][mdl, :nph],
        wa[WX_PARAMS][mdl],
    )


@njit(cache=True, _nrt=False)
def win_solve(wa, mdl, mask, sc):
    """flip7.solver.win.InRound.solve from a hand, for the reward in wa[WX_F][WF_REWARD];
    returns the cost of a zero score."""
    nm = wa[WX_DIMS][mdl, 0]
    nsc = wa[WX_DIMS][mdl, 1]
    nph = wa[WX_DIMS][mdl, 2]
    f = wa[WX_F]
    return in_round_solve(
        *win_space(wa, mdl), wa[WX_MASKS][mdl, :nm], wa[WX_REACH][mdl, :nsc, :nsc], mask, sc,
        f[WF_REWARD], f[WF_COST], wa[WX_HIT][mdl], wa[WX_Q][mdl], f[WF_BOUNDS, :2],
        wa[WX_LIVE][mdl, : nsc * nm], wa[WX_I][0], wa[WX_I][1], wa[WX_I][2],
        wa[WX_ACC][:, :nph],
    )  # fmt: skip


@njit(cache=True, _nrt=False)
def win_law(wa, mdl, mask, mods, sc, t):
    """flip7.solver.win.InRound.law under dp from a hand (numbers `mask`, modifiers `mods`,
    Second Chance state `sc`, Flip Three phase `t`), kept in a hash table per model (a forward
    sweep from an early hand costs tens of milliseconds; the policy keeps each law too).
    Returns its slot in wa[WX_LAWS][mdl], or -1 when the table is full (then it is in
    wa[WX_F][WF_LAW])."""
    nm = wa[WX_DIMS][mdl, 0]
    nsc = wa[WX_DIMS][mdl, 1]
    nph = wa[WX_DIMS][mdl, 2]
    keys = wa[WX_LAW_KEY][mdl]
    cap = keys.shape[0]
    key = ((mask * 64 + mods) * nsc + sc) * nph + t
    h = (key * 0x9E3779B1) % cap
    slot = -1
    for _ in range(cap):
        if keys[h] == key:
            return h
        if keys[h] < 0:
            slot = h
            break
        h = h + 1 if h + 1 < cap else 0
    out = wa[WX_F][WF_LAW] if slot < 0 else wa[WX_LAWS][mdl, slot]
    law_into(
        *win_space(wa, mdl), wa[WX_MASKS][mdl, :nm], wa[WX_RANK][mdl],
        wa[WX_REACH][mdl, :nsc, :nsc], wa[WX_DP_HIT][mdl], mask, mods, sc, t,
        wa[WX_PROB][mdl], out, wa[WX_LIVE2][mdl, : nsc * nm], wa[WX_I][0], wa[WX_I][1],
        wa[WX_I][2], wa[WX_OUT][:, :nph],
    )  # fmt: skip
    if slot >= 0:
        keys[slot] = key
    return slot


@njit(cache=True, _nrt=False)
def win_endgame(wa, mdl, tbl, ni, mine, final, target, mask, mods, sc, t):
    """flip7.policies.win.WinPolicy.decide_known: the in-round optimum's bit for this hand
    when the others are done and the round ends the game (the leader among them at `final`).

    R(s) is then 1 above the gap g = final - mine, the tie value at it, 0 below (the same array
    for every g < 0, and when final is under the target with mine at or above it; zeros for
    every g >= HIST), so a sweep serves every hand with the same (table, field size, g) that it
    reaches. Sweeps are exact backward induction: any sweep that reaches a hand gives it the
    same bit, so which one answers changes no decision. Each sweep from a hand is kept: its bits
    join those of the earlier sweeps with the same reward (WX_EG_BITS, packed, and the rows they
    cover, WX_EG_ROWS), so a later hand sweeps only when no earlier sweep reached its row. When
    that table is full, the last sweep alone is kept (as the policy keeps it)."""
    hist = wa[WX_F].shape[1]
    g = final - mine if final >= target else -1
    g = min(max(g, -1), hist)
    gkey = (tbl * 8 + ni) * (hist + 2) + g + 1
    nm = wa[WX_DIMS][mdl, 0]
    nsc = wa[WX_DIMS][mdl, 1]
    n_dec = wa[WX_DIMS][mdl, 3]
    mi = wa[WX_RANK][mdl, mask]
    row = sc * nm + mi
    d = (row * 64 + mods) * n_dec + t
    keys = wa[WX_EG_KEY][mdl]
    cap = keys.shape[0]
    h = (gkey * 0x9E3779B1) % cap
    for _ in range(cap):
        if keys[h] == gkey or keys[h] < 0:
            break
        h = h + 1 if h + 1 < cap else 0
    found = keys[h] == gkey
    if found and mi >= 0 and wa[WX_EG_ROWS][mdl, h, row]:
        return (wa[WX_EG_BITS][mdl, h, d >> 3] >> (d & 7)) & 1
    last = wa[WX_KEY][mdl]
    if last[0] == 1 and last[1] == gkey and mi >= 0 and wa[WX_LIVE][mdl, row]:
        return wa[WX_HIT][mdl, d]
    reward_into(
        wa[WX_VALUES][tbl, ni], wa[WX_TIES][tbl, ni], target, mine, final, wa[WX_F][WF_REWARD]
    )
    win_solve(wa, mdl, mask, sc)
    last[0] = 1
    last[1] = gkey
    hit = wa[WX_HIT][mdl]
    if not found and keys[h] >= 0:
        return hit[d]  # the kept table is full
    rows = wa[WX_EG_ROWS][mdl, h]
    if not found:
        keys[h] = gkey
        for r in range(nsc * nm):
            rows[r] = 0
    live = wa[WX_LIVE][mdl]
    bits = wa[WX_EG_BITS][mdl, h]
    per = 64 * n_dec  # decision states per row (a multiple of 8: whole bytes)
    for r in range(nsc * nm):
        if live[r]:
            rows[r] = 1
            base = r * per
            for j in range(per >> 3):
                v = 0
                for b in range(8):
                    if hit[base + (j << 3) + b]:
                        v |= 1 << b
                bits[(base >> 3) + j] = v
    return hit[d]


@njit(cache=True, _nrt=False, forceinline=False)  # see play_round
def win_rule(pl, lines, p, n, target, wm, wa):
    """flip7.policies.win.WinPolicy.hit with others at the table: 1 hit, 0 stay, -1 play ev
    (a 13 showing). Once the others are done and the round ends the game, the in-round optimum
    for the exact reward (win_endgame); else one bit of the menu policy the table picks."""
    mask = pl[F_MASK, p]
    if mask >> N13:
        return -1
    row = pl[F_POLICY, p]
    mods, sc, t = win_hand(pl, lines, p, wm, row)
    tbl = wm[row, W_TABLE]
    ni = min(max(n, 2), 8) - 2
    mine = pl[F_TOTAL, p]
    if wm[row, W_ENDGAME]:
        done = True
        final = 0
        first = True
        for q in range(n):
            if q == p:
                continue
            if pl[F_STATUS, q] == ACTIVE:
                done = False
                break
            v = pl[F_TOTAL, q] + points(pl, q)
            if first or v > final:
                final = v
                first = False
        if done and (final >= target or mine >= target):
            mdl = wm[row, W_MODEL]
            return win_endgame(wa, mdl, tbl, ni, mine, final, target, mask, mods, sc, t)
    leader = -1
    for q in range(n):
        if q != p and (leader < 0 or pl[F_TOTAL, q] > leader):
            leader = pl[F_TOTAL, q]
    top = target - 1
    m = wa[WX_CHOICE][tbl, ni, min(max(mine, 0), top), min(max(leader, 0), top)]
    i = ((mask * 64 + mods) * wm[row, W_N_SC] + sc) * wm[row, W_N_T] + t + wa[WX_MENU][tbl, m]
    return (wa[WX_BITS][i >> 3] >> (i & 7)) & 1


@njit(cache=True, _nrt=False, forceinline=False)  # see play_round
def win_target(pl, lines, me, target, wm, wa):
    """flip7.policies.win.WinPolicy.choose_target heads-up for a Freeze (both seats active):
    the seat to freeze, or -1 for the shared heuristics. On the opponent: it banks what it
    shows, and I play on against that total; on me: I bank mine, and the opponent plays on
    (its round score's law from its hand under dp)."""
    row = pl[F_POLICY, me]
    o = 1 - me
    if not wm[row, W_FREEZE] or pl[F_STATUS, me] != ACTIVE or pl[F_STATUS, o] != ACTIVE:
        return -1
    if pl[F_MASK, me] >> N13 or pl[F_MASK, o] >> N13:
        return -1
    mdl = wm[row, W_MODEL]
    tbl = wm[row, W_TABLE]
    nm = wa[WX_DIMS][mdl, 0]
    nph = wa[WX_DIMS][mdl, 2]
    f = wa[WX_F]
    mods_o, sc_o, t_o = win_hand(pl, lines, o, wm, row)
    slot = win_law(wa, mdl, pl[F_MASK, o], mods_o, sc_o, t_o)
    law = wa[WX_LAWS][mdl, slot] if slot >= 0 else f[WF_LAW]
    mine = pl[F_TOTAL, me]
    theirs = pl[F_TOTAL, o]
    mine_pts = points(pl, me)
    values = wa[WX_VALUES][tbl, 0]
    tie = wa[WX_TIES][tbl, 0]
    on_me = reward_against_at(values, tie, target, mine, theirs, law, mine_pts)
    reward_into(values, tie, target, mine, theirs + points(pl, o), f[WF_REWARD])
    if f[WF_REWARD, mine_pts] >= on_me:
        return o
    mask = pl[F_MASK, me]
    mods, sc, t = win_hand(pl, lines, me, wm, row)
    x = win_solve(wa, mdl, mask, sc)
    wa[WX_KEY][mdl, 0] = 0  # the endgame's last hand sweep is gone
    s = state_index(wa[WX_RANK][mdl], nm, nph, mask, mods, sc, t)
    return o if in_round_value(wa[WX_Q][mdl], s, x) >= on_me else me


# Without a win seat the batch passes wa=None: these two then compile to "no answer" and the
# kernel holds none of win's code (its sweeps and tables), so a run without win compiles only
# what it plays; the first batch with a win seat compiles the kernel again with them
# (flip7.kernel.load announces each compile).
def win_rule_if(pl, lines, p, n, target, wm, wa):
    """win_rule, or -1 (play ev) when wa is None."""


def win_target_if(pl, lines, me, target, wm, wa):
    """win_target, or -1 (the shared heuristics) when wa is None."""


@overload(win_rule_if, inline="always")
def _win_rule_if(pl, lines, p, n, target, wm, wa):
    if isinstance(wa, types.NoneType):
        return lambda pl, lines, p, n, target, wm, wa: -1
    return lambda pl, lines, p, n, target, wm, wa: win_rule(pl, lines, p, n, target, wm, wa)


@overload(win_target_if, inline="always")
def _win_target_if(pl, lines, me, target, wm, wa):
    if isinstance(wa, types.NoneType):
        return lambda pl, lines, me, target, wm, wa: -1
    return lambda pl, lines, me, target, wm, wa: win_target(pl, lines, me, target, wm, wa)


@njit(cache=True, inline="always")
def out_of_laps(live, p, dealer, n):
    """`live` (bit i: the seat at index i of the round's turn order dealer+1, dealer+2, ...,
    dealer is active) without seat p."""
    i = p - dealer - 1
    if i < 0:
        i += n
    return live & ~(np.int64(1) << i)


@njit(cache=True, inline="always")
def unplace(pl, cd, lines, p, c):
    """Take the first copy of c out of p's line (list.remove)."""
    take(pl, lines, p, c)
    cd[C_VIS, c] -= 1


# === the game =================================================================================


@njit(cache=True)
def workspace(n, deck):
    """play_games' scratch arrays for n seats and `deck` (copies per card id), zeroed.

    The caller allocates them and passes them in, so that they outlive the call: play_games
    hands bare() views (no reference count) to _play, and numba frees an array right after its
    variable's last use, so arrays allocated inside play_games were freed while _play still
    wrote to them (a heap corruption that crashed a Ray worker, whose other threads allocate)."""
    return workspace_of(n, deck, N_FIELDS, N_CENSUS, N_FRAME)


@njit(cache=True)
def play_games(
    seeds,
    seat_policy,
    pol_kind,
    pol_int,
    pol_flt,
    pol_counting,
    pol_dp,
    ip,
    fp,
    deck,
    stacked,
    dpb,
    dpm,
    dps,
    dpk,
    ev,
    rs,
    go,
    gt,
    g0,
    pos0,
    rpos0,
    pl,
    pf,
    cd,
    lines,
    piles,
    fr,
    keys,
    sorted_keys,
    cnt,
    fresh,
    wm,
    wa,
):
    """Play games g0.. of a batch; game g uses seeds[g], and seat s plays policy
    seat_policy[g, s] (a row of the pol_* tables). Writes events from ev[:, pos0], round rows
    from rs[:, rpos0], go[g] and gt[:, g]. Returns (games done, event pos, round row pos,
    status): DONE, or GROW when game `games done` did not fit (grow, resume there). A
    non-empty `stacked` is drawn first card first (tests).
    pl..fresh: a fresh `workspace(n, deck)` for every call. wm, wa: the win policies' meta
    rows and array tuple (flip7.kernel.win.tables).
    """
    nid = deck.shape[0]
    dsize = fresh.shape[0] - 1  # the deck's size (workspace sized fresh by it)
    fill_deck(deck, cd, fresh)
    numbers = 0
    values = 0
    plus = 0
    for c in range(nid):
        if c <= N13:
            numbers += deck[c]
            values += deck[c] * c
        else:
            plus += deck[c] * PLUS_VALUE[c]
    cd[C_ALL, U_NUMBERS] = numbers
    cd[C_ALL, U_VALUES] = values
    cd[C_ALL, U_PLUS] = plus
    return _play(
        seeds, seat_policy, bare(pol_kind), bare(pol_int), bare(pol_flt), bare(pol_counting),
        bare(pol_dp), bare(ip), bare(fp), deck, stacked, bare(dpb), bare(dpm), bare(dps),
        bare(dpk), bare(ev), bare(rs), bare(go), bare(gt), g0, pos0, rpos0, bare(pl), bare(pf),
        bare(cd), bare(lines), bare(piles), bare(fr), bare(keys), bare(sorted_keys), bare(cnt),
        bare(fresh), dsize, bare(wm), wa,
    )  # fmt: skip


@njit(cache=True, _nrt=False, inline="always")
def begin_game(vx, pl, cd, seat_policy, g, n, stacked):
    """A game's start (play_loop's hook): each seat's dp/race/win table, no dp bookkeeping yet,
    and ev_hit's census sums over the whole deck (afresh for a stacked deck)."""
    pol_dp = vx[0]
    for s in range(n):
        pl[F_POLICY, s] = pol_dp[seat_policy[g, s]]
        pl[F_DP_ROUND, s] = -1
    for u in range(U_PLUS + 1):
        cd[C_UNSEEN, u] = cd[C_ALL, u]
        cd[C_GONE, u] = 0
    if stacked.shape[0] > 0:
        census_sums(cd)


@njit(cache=True, _nrt=False, inline="always")
def begin_round(vx, pl, n):
    """A round's start (play_loop's hook): no modifiers, no Second Chance."""
    for p in range(n):
        pl[F_PLUS, p] = 0
        pl[F_X2, p] = 0
        pl[F_SC, p] = 0


@njit(cache=True, _nrt=False, inline="always")
def seat_score(vx, pl, p, flip7p, bonus, ev, pos, capture, folds):
    """Seat p's score at the round's end (play_loop's hook), and its Second Chance discarded."""
    s = points(pl, p)
    if p == flip7p:
        s += bonus
    if pl[F_SC, p]:
        pos, folds = emit(ev, pos, capture, folds, K_SC_DISCARDED, p, -1, -1, 1)
    return s, pos, folds


@njit(cache=True, _nrt=False, inline="always")
def end_round(vx, pl, cd, piles, n, ndis):
    """After the round's table went to the discard pile (play_loop's hook): ev_hit's sums."""
    for p in range(n):
        pl[F_SC, p] = 0
    for u in range(U_PLUS + 1):  # the table's cards went to the discard pile
        cd[C_GONE, u] += cd[C_ALL, u] - cd[C_UNSEEN, u]
        cd[C_UNSEEN, u] = cd[C_ALL, u]
    return ndis


@njit(cache=True, _nrt=False, inline="always")
def cannot_change(vx, pl, cd, lines, n, ndis):
    """Engine.cannot_change_round on an empty draw pile (draw's hook): only Second Chances are
    left, and every active seat holds one."""
    spent = cd[C_DIS, SECOND_CHANCE] == ndis
    for q in range(n):
        if pl[F_STATUS, q] == ACTIVE and not pl[F_SC, q]:
            spent = False
    return spent


@njit(cache=True, _nrt=False, inline="always")
def reshuffled(vx, cd):
    """The discard pile became the draw pile (draw's hook): ev_hit's sums of it start again."""
    for u in range(U_PLUS + 1):
        cd[C_GONE, u] = 0


# The classic round is a call that LLVM inlines (forceinline: LLVM's alwaysinline), not one that
# numba inlines. numba's inliner copies a callee's IR block by block, and each block's copy
# takes the callee's whole variable scope with it: quadratic in the callee's size, so inlining
# this round (the largest function of the kernel) took 1.6x the kernel's first compile
# (docs/kernel.md). Compiled as a function of its own, it costs no more than the round written
# into the loop did, and the inlined call runs as fast; a plain call measured 0.78-0.84x.
# Functions a forceinline function compiles inherit the flag; the ones it calls rather than
# inlines (win_rule, win_target, the shuffle) say forceinline=False, so they stay calls.
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def play_round(
    vx, ip, ev, pos, capture, folds, pl, pf, cd, lines, piles, keys, sorted_keys, cnt, dsize,
    top, ndis, counter, seed, rnd, dealer,
):  # fmt: skip
    """The classic round from its deal to its end (play_loop's hook): each pass of the loop
    takes the next job (the innermost Flip Three's next step, the deal, or the laps' next
    hit-or-stay), then resolves at most one card."""
    pol_dp, fp, fr, dpb, dpm, dps, dpk, wm, wa = vx
    n = ip[I_N]
    mode = ip[I_MODE]
    target = ip[I_TARGET]
    bonus = ip[I_BONUS]
    freeze_self = ip[I_FREEZE_SELF]
    round_over = False
    end_reason = END_NOBODY_ACTIVE
    flip7p = -1
    rshuf = 0
    vis = 0  # cards on the table (sum of cd[C_VIS])
    dealing = True  # the opening deal, then laps of hit-or-stay
    turn = 0  # index into the turn order dealer+1, dealer+2, ..., dealer
    anyone = False
    # bit i: the seat at index i of the turn order is active (the laps visit only those)
    live = (np.int64(1) << n) - 1
    depth = 0
    while not round_over:
        # --- pick the next job: a card for p (JOB_DRAW, drawn as `how`), or one of p's
        # set-aside actions to play (JOB_PENDING, card c)
        job = JOB_NONE
        p = 0
        c = -1
        how = HOW_DEAL
        if depth > 0:  # the innermost Flip Three (flip7.engine.Engine.flip_three)
            d = depth - 1
            p = fr[d, R_PLAYER]
            if fr[d, R_STAGE] == 0:
                drawn = fr[d, R_DRAWN]
                if drawn == 3 or (drawn > 0 and pl[F_STATUS, p] != ACTIVE):
                    fr[d, R_STAGE] = 1
                    continue
                fr[d, R_DRAWN] = drawn + 1
                job = JOB_DRAW
                how = HOW_FLIP_THREE
            else:
                j = fr[d, R_NEXT]
                if j == fr[d, R_NPEND]:
                    depth = d
                    continue
                c = fr[d, R_PEND + j]
                fr[d, R_NEXT] = j + 1
                if pl[F_STATUS, p] == BUSTED and mode == MODE_DEFERRED:
                    # dropped (checked before each: a set-aside Flip Three may have
                    # busted p); it stays in front of p until the round ends
                    pos, folds = emit(ev, pos, capture, folds, K_ACTION_DROPPED, p, c, -1, -1)
                    continue
                job = JOB_PENDING
        elif dealing:
            p, turn = next_to_deal(pl, dealer, turn, n)
            if p < 0:
                dealing = False
                continue
            job = JOB_DRAW
            how = HOW_DEAL
        else:
            # the next active seat of this lap, found in `live` rather than by visiting
            # each seat (whether a seat is still in is a branch no CPU can predict)
            rest = live >> turn
            if rest == 0:  # the lap is over
                if not anyone:
                    break
                turn = 0
                anyone = False
                continue
            turn += trailing_zeros(rest)
            p = seat_after(dealer, turn, n)
            turn += 1
            anyone = True
            how = HOW_HIT
            job = JOB_DRAW
            if pl[F_LEN, p] == 0:
                pos, folds = emit(ev, pos, capture, folds, K_HIT, p, -1, -1, 1)  # must hit
            elif wants_hit(
                pl,
                pf,
                cd,
                lines,
                p,
                n,
                target,
                bonus,
                dsize - vis,
                ndis,
                rnd,
                dpb,
                dpm,
                dps,
                dpk,
                wm,
                wa,
            ):
                pos, folds = emit(ev, pos, capture, folds, K_HIT, p, -1, -1, 0)
            else:
                pl[F_STATUS, p] = STAYED
                live = out_of_laps(live, p, dealer, n)
                pos, folds = emit(ev, pos, capture, folds, K_STAY, p, -1, -1, points(pl, p))
                continue

        # --- do it
        act = False
        if job == JOB_DRAW:
            c, end_reason, pos, folds, top, ndis, counter, rshuf = draw(
                cannot_change, reshuffled, vx, pl, cd, lines, piles, n, ev, pos, capture, folds,
                top, ndis, counter, rshuf, seed, keys, sorted_keys, cnt, p, how,
            )  # fmt: skip
            if c < 0:
                round_over = True
                continue
            if (
                how == HOW_FLIP_THREE
                and (c == FREEZE or c == FLIP_THREE)
                and mode != MODE_IMMEDIATE
            ):
                # set aside until the three are flipped
                d = depth - 1
                place(pl, cd, lines, p, c)
                vis += 1
                fr[d, R_PEND + fr[d, R_NPEND]] = c
                fr[d, R_NPEND] += 1
                pos, folds = emit(ev, pos, capture, folds, K_ACTION_DEFERRED, p, c, -1, -1)
                continue
            # the card takes effect (flip7.engine.Engine.receive)
            if c <= N13:
                if pl[F_MASK, p] >> c & 1:
                    if pl[F_SC, p]:
                        # the Second Chance and the duplicate are discarded; p stays in
                        pl[F_SC, p] = 0
                        unplace(pl, cd, lines, p, SECOND_CHANCE)
                        vis -= 1
                        piles[1, ndis] = SECOND_CHANCE
                        piles[1, ndis + 1] = c
                        ndis += 2
                        cd[C_DIS, SECOND_CHANCE] += 1
                        cd[C_DIS, c] += 1
                        number_seen(cd, C_GONE, c, 1)
                        pos, folds = emit(ev, pos, capture, folds, K_SC_USED, p, c, -1, -1)
                    else:
                        place(pl, cd, lines, p, c)
                        vis += 1
                        number_seen(cd, C_UNSEEN, c, -1)
                        pl[F_STATUS, p] = BUSTED
                        live = out_of_laps(live, p, dealer, n)
                        pl[F_BUSTS, p] += 1
                        pos, folds = emit(ev, pos, capture, folds, K_BUST, p, c, -1, -1)
                else:
                    place(pl, cd, lines, p, c)
                    vis += 1
                    number_seen(cd, C_UNSEEN, c, -1)
                    pl[F_MASK, p] |= 1 << c
                    pl[F_NSUM, p] += c
                    pl[F_NCOUNT, p] += 1
                    if pl[F_NCOUNT, p] == 7:
                        flip7p = p
                        pl[F_FLIP7S, p] += 1
                        pos, folds = emit(ev, pos, capture, folds, K_FLIP7, p, -1, -1, bonus)
                        round_over = True
                        end_reason = END_FLIP7
            elif c < FREEZE:  # a modifier
                place(pl, cd, lines, p, c)
                vis += 1
                if c == TIMES2:
                    pl[F_X2, p] = 1
                else:
                    pl[F_PLUS, p] += PLUS_VALUE[c]
                    cd[C_UNSEEN, U_PLUS] -= PLUS_VALUE[c]
            elif c == SECOND_CHANCE:
                if not pl[F_SC, p]:
                    pl[F_SC, p] = 1
                    place(pl, cd, lines, p, SECOND_CHANCE)
                    vis += 1
                    pos, folds = emit(ev, pos, capture, folds, K_SC_KEPT, p, -1, -1, -1)
                else:
                    # a spare: to whoever is furthest behind (lowest total, then seat)
                    # among the active players without one, else discarded
                    best = -1
                    bt = 0
                    for q in range(n):
                        if q != p and pl[F_STATUS, q] == ACTIVE and not pl[F_SC, q]:
                            if best < 0 or pl[F_TOTAL, q] < bt:
                                best = q
                                bt = pl[F_TOTAL, q]
                    if best < 0:
                        piles[1, ndis] = SECOND_CHANCE
                        ndis += 1
                        cd[C_DIS, SECOND_CHANCE] += 1
                        pos, folds = emit(ev, pos, capture, folds, K_SC_DISCARDED, p, -1, -1, 0)
                    else:
                        pl[F_SC, best] = 1
                        place(pl, cd, lines, best, SECOND_CHANCE)
                        vis += 1
                        pos, folds = emit(ev, pos, capture, folds, K_SC_PASSED, p, -1, best, -1)
            else:
                act = True
        else:  # JOB_PENDING: a set-aside action leaves p's line to be played
            unplace(pl, cd, lines, p, c)
            vis -= 1
            act = True

        if act:  # p gives a Freeze or Flip Three (flip7.engine.Engine.play_action)
            first = -1
            count = 0
            for q in range(n):
                if pl[F_STATUS, q] == ACTIVE:
                    if first < 0:
                        first = q
                    count += 1
            if count == 0:
                piles[1, ndis] = c
                ndis += 1
                cd[C_DIS, c] += 1
                pos, folds = emit(ev, pos, capture, folds, K_ACTION_DROPPED, p, c, -1, -1)
                continue
            q = first
            if count > 1:
                q = choose_target(
                    pl, cd, fp, lines, p, c, n, target, freeze_self, dsize - vis, ndis,
                    wm, wa,
                )  # fmt: skip
            place(pl, cd, lines, q, c)
            vis += 1
            pos, folds = emit(ev, pos, capture, folds, K_ACTION_PLAYED, p, c, q, -1)
            if c == FREEZE:
                pl[F_STATUS, q] = FROZEN
                live = out_of_laps(live, q, dealer, n)
                pos, folds = emit(ev, pos, capture, folds, K_FREEZE, q, -1, -1, points(pl, q))
            else:
                depth = push_frame(fr, depth, q)
    return pos, folds, top, ndis, counter, end_reason, flip7p


# error_model="numpy": a division or modulo by zero gives 0 or inf instead of raising, so numba
# drops its zero checks and their exception paths from the loop; every division here is
# guarded (total > 0, n >= 1), so no result changes. Measured +5-8% on four sum:20 seats.
@njit(cache=True, error_model="numpy", _nrt=False)
def _play(
    seeds, seat_policy, pol_kind, pol_int, pol_flt, pol_counting, pol_dp, ip, fp, deck,
    stacked, dpb, dpm, dps, dpk, ev, rs, go, gt, g0, pos0, rpos0, pl, pf, cd, lines, piles,
    fr, keys, sorted_keys, cnt, fresh, dsize, wm, wa,
):  # fmt: skip
    """play_games on reference-free views of its arrays (wa: win's, counted, used rarely): the
    shared game loop with the classic round."""
    return play_loop(
        begin_game, begin_round, play_round, seat_score, end_round, seeds, seat_policy,
        (pol_kind, pol_int, pol_flt, pol_counting), ip, deck, stacked, (ev, rs, go, gt), g0,
        pos0, rpos0, (pl, pf, cd, lines, piles, keys, sorted_keys, cnt, fresh), dsize,
        (pol_dp, fp, fr, dpb, dpm, dps, dpk, wm, wa),
    )  # fmt: skip
