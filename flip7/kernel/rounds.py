"""The one core of the compiled kernels (flip7.kernel.core: the classic game,
flip7.kernel.vengeance: "With a Vengeance"): the game loop (`play_loop`: games, rounds, scores,
the game's end and its output rows), the draw with its reshuffle (`draw`), the shuffle, the
deal's order, a round's fresh rows and its cleared table, the stack's frames, the event writer,
and the layout those read (per-seat fields, census rows, output rows, event kinds, parameters).

A variant supplies its round (the laps and its special cards) and small hooks as jitted
functions; numba inlines the loop and the hooks into the variant's kernel, and the round is a
call of its own (which LLVM inlines where it is marked forceinline: see play_loop), so a
variant's code compiles only when that variant's kernel does. Every name here
is the variants' shared vocabulary (they import this module whole). numba's on-disk cache only
notices edits to the file of the function it caches, so the kernels' cached code could go stale
after an edit here alone: flip7.kernel.load drops it (CALLEES).
"""

# mypy: ignore-errors
# (numba types this module when it compiles it; Python annotations would not be checked.)

from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# --- statuses (checked against flip7 by flip7.kernel.encode) --------------------------------
ACTIVE, STAYED, FROZEN, BUSTED = 0, 1, 2, 3

# --- event kinds, draw reasons, round ends (checked against flip7 by flip7.kernel.encode) ------
K_ROUND_START, K_DRAW, K_HIT, K_STAY = 0, 1, 2, 3
K_ACTION_PLAYED, K_ACTION_DEFERRED, K_ACTION_DROPPED, K_FREEZE = 4, 5, 6, 7
K_SC_KEPT, K_SC_PASSED, K_SC_DISCARDED, K_SC_USED = 8, 9, 10, 11
K_BUST, K_FLIP7, K_RESHUFFLE, K_ROUND_SCORE, K_ROUND_END = 12, 13, 14, 15, 16
K_ROUND_CAP, K_GAME_END = 17, 18
HOW_DEAL, HOW_HIT = 0, 1
END_NOBODY_ACTIVE, END_FLIP7, END_NO_CARDS, END_RESHUFFLE_CAP = 0, 1, 2, 3

# --- integer parameters ip[I_*] (each variant adds its own after these) -------------------------
I_N, I_MODE, I_TARGET, I_BONUS, I_MAX_ROUNDS, I_CAPTURE, I_FIRST_DEALER, I_ONE_ROUND = range(8)
I_FREEZE_SELF = 8
N_IPARAMS = 9

# --- policy kinds (flip7.kernel.encode) ---------------------------------------------------------
P_SUM, P_COUNT, P_BUST, P_EV, P_ENDGAME, P_DP, P_DUP = 0, 1, 2, 3, 4, 5, 6
P_WIN = 7

# --- per-seat fields: pl[F_*, seat] (each kernel adds its own after these) --------------------
F_MASK, F_NSUM, F_NCOUNT, F_PLUS, F_X2, F_SC, F_STATUS, F_LEN = 0, 1, 2, 3, 4, 5, 6, 7
F_TOTAL, F_BUSTS, F_FLIP7S, F_KIND, F_INT, F_COUNTING, F_POLICY = 8, 9, 10, 11, 12, 13, 14

# --- card census: cd[C_*, card] (the classic kernel adds its sums' rows) ---------------------
C_VIS, C_DIS, C_DECK = 0, 1, 2

# --- the stack of Flip Threes (Flip Fours, Just One Mores) being resolved: fr[depth, R_*] -------
# (each kernel puts its own fields after these, then the set-aside cards from its R_PEND)
R_PLAYER, R_DRAWN, R_STAGE, R_NPEND, R_NEXT = 0, 1, 2, 3, 4

# --- outputs -----------------------------------------------------------------------------------
E_CODE = 0
N_EV = 1
# rs: one row per (round, seat); Q_EV_POS is the round's, on its first seat row only (seat 0;
# the others' are unset): where its first code (ROUND_START's) is, counted from the game's
# first code
Q_GAME, Q_ROUND, Q_SEAT, Q_DEALER, Q_SCORE, Q_TOTAL, Q_STATUS, Q_FLIP7, Q_EV_POS = range(9)
N_RS = 9
# go: per game; G_EVENTS: its codes, G_FOLDS: HITs folded into them (events = the two's sum)
G_ROUNDS, G_WINNER, G_CAPPED, G_EVENTS, G_EV_START, G_RS_START, G_FOLDS = range(7)
N_G = 7
# gt: per (game, seat)
T_TOTAL, T_BUSTS, T_FLIP7S, T_RANK = 0, 1, 2, 3
N_T = 4

# The event log's packed int64 code (flip7.events.CODE_SHIFTS; offsets +1 for player, card and
# target): shifts of player, card, target and value.
S_PLAYER, S_CARD, S_TARGET, S_VALUE = 5, 11, 17, 23
#: flip7.events.HIT_SHIFT: a code at or above 1 << HIT_SHIFT carries the HIT before it.
HIT_SHIFT = 55

# What play_games returns as its last value.
DONE, GROW = 0, 1
#: As flip7.engine.MAX_RESHUFFLES_PER_ROUND (the round then ends, END_RESHUFFLE_CAP). It also
#: bounds the draws of a round, by (this + 1) x the deck size, so the compiled loop, which cannot
#: be interrupted, always returns.
MAX_RESHUFFLES_PER_ROUND = 1000

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
U30, U27, U31 = np.uint64(30), np.uint64(27), np.uint64(31)


# === views and events =========================================================================


@intrinsic
def _address_as_pointer(typingctx, address):  # type: ignore[no-untyped-def]
    """An integer address as a void pointer."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


@njit(cache=True)
def bare(a):
    """A view of `a` without a reference count (its owner must outlive it). numba counts
    references to every array a variable copies, with an atomic operation each time, and
    inlined helpers copy their array arguments: on counted arrays that was two thirds of the
    kernel's time."""
    return carray(_address_as_pointer(a.ctypes.data), a.shape, a.dtype)


@njit(cache=True, inline="always")
def emit(ev, pos, capture, folds, kind, player, card, target, value):
    """Append one event at pos as its stored code (past the buffer's end it is only counted);
    returns the next pos and `folds` plus this event's fold. The fold of flip7.events.fold_rows,
    as the events come: an event that is not a HIT or a ROUND_START (so in the HIT's round), of
    a player whose HIT with no card or target and value 0..2 is the last code, with a value
    >= 0 takes that HIT into its own code (HIT_SHIFT) instead of a slot of its own. Counting
    the folds as they happen (and the ROUND_SCOREs, which have no code) gives the game's event
    count without reading the codes again. The last code is always this game's: a game ends with GAME_END
    (or, in a one-round game, ROUND_END), never a HIT."""
    if not capture:
        return pos, folds
    if pos < ev.shape[1]:
        code = (
            (np.int64(value) << S_VALUE)
            | ((np.int64(target) + 1) << S_TARGET)
            | ((np.int64(card) + 1) << S_CARD)
            | ((np.int64(player) + 1) << S_PLAYER)
            | np.int64(kind)
        )
        if pos > 0 and kind != K_HIT and kind != K_ROUND_START and value >= 0:
            d = ev[E_CODE, pos - 1] - (((np.int64(player) + 1) << S_PLAYER) | K_HIT)
            if d >= 0 and d <= (np.int64(2) << S_VALUE) and (d & ((1 << S_VALUE) - 1)) == 0:
                ev[E_CODE, pos - 1] = code | (((d >> S_VALUE) + 1) << HIT_SHIFT)
                return pos, folds + 1
        ev[E_CODE, pos] = code
    return pos + 1, folds


# === the deck =================================================================================


@njit(cache=True, _nrt=False, forceinline=False)  # see core.play_round
def sort_by_keys(keys, m, src, dst, sorted_keys, cnt):
    """dst[:m] = src[:m][numpy.argsort(keys[:m], kind="stable")], and sorted_keys[:m] the keys
    in that order. A stable counting sort by the keys' top bits (as many buckets as the next
    power of two of m) moves each key with its item, then an insertion sort (stable: a key only
    moves past greater ones) orders the few keys that share a bucket, moving items along: O(m)
    for random keys, and exactly the stable order for any keys. Moving the items with their
    keys, rather than sorting indices and gathering the items after, measured 1.45x faster on
    a 94-card deck."""
    bits = 1
    while (1 << bits) < m:
        bits += 1
    nb = 1 << bits
    shift = np.uint64(64 - bits)
    for b in range(nb + 1):
        cnt[b] = 0
    for i in range(m):
        cnt[np.int64(keys[i] >> shift) + 1] += 1
    for b in range(nb):
        cnt[b + 1] += cnt[b]
    for i in range(m):
        key = keys[i]
        b = np.int64(key >> shift)
        j = cnt[b]
        cnt[b] = j + 1
        sorted_keys[j] = key
        dst[j] = src[i]
    for j in range(1, m):
        key = sorted_keys[j]
        if sorted_keys[j - 1] > key:
            item = dst[j]
            h = j - 1
            while h >= 0 and sorted_keys[h] > key:
                sorted_keys[h + 1] = sorted_keys[h]
                dst[h + 1] = dst[h]
                h -= 1
            sorted_keys[h + 1] = key
            dst[h + 1] = item


@njit(cache=True, _nrt=False, forceinline=False)  # see core.play_round
def shuffle(src, m, dst, seed, counter, keys, sorted_keys, cnt):
    """dst[:m] = src[:m] in flip7.rng.CardRng order: key_i = splitmix64(seed + (counter+1+i) *
    GOLDEN) in uint64 arithmetic, then the stable argsort of the keys (src and dst distinct)."""
    for i in range(m):
        z = seed + np.uint64(counter + 1 + i) * GOLDEN
        z = (z ^ (z >> U30)) * MIX1
        z = (z ^ (z >> U27)) * MIX2
        keys[i] = z ^ (z >> U31)
    sort_by_keys(keys, m, src, dst, sorted_keys, cnt)


@njit(cache=True)
def workspace_of(n, deck, fields, census, frame):
    """The scratch arrays both kernels' play_games take first (see core.workspace), for n
    seats, `deck` (copies per card id), `fields` per-seat fields, `census` rows and frames of
    `frame` slots, zeroed: pl, pf, cd, lines, piles, fr, keys, sorted_keys, cnt, fresh."""
    nid = deck.shape[0]
    dsize = 0
    for c in range(nid):
        dsize += deck[c]
    return (
        np.zeros((fields, n), dtype=np.int64),  # pl
        np.zeros(n, dtype=np.float64),  # pf
        np.zeros((census, nid), dtype=np.int64),  # cd
        np.zeros((n, dsize + 1), dtype=np.int64),  # lines
        np.zeros((2, dsize + 1), dtype=np.int64),  # piles
        np.zeros((dsize + 2, frame), dtype=np.int64),  # fr
        np.zeros(dsize + 1, dtype=np.uint64),  # keys
        np.zeros(dsize + 1, dtype=np.uint64),  # sorted_keys (shuffle's)
        np.zeros(2 * dsize + 4, dtype=np.int64),  # cnt
        np.zeros(dsize + 1, dtype=np.int64),  # fresh: the unshuffled deck, in id order
    )


@njit(cache=True, _nrt=False, inline="always")
def fill_deck(deck, cd, fresh):
    """cd[C_DECK] = deck, and fresh the unshuffled deck in id order."""
    i = 0
    for c in range(deck.shape[0]):
        cd[C_DECK, c] = deck[c]
        for _ in range(deck[c]):
            fresh[i] = c
            i += 1


@njit(cache=True, _nrt=False, inline="always")
def first_pile(piles, cd, deck, stacked, fresh, dsize, seed, keys, sorted_keys, cnt):
    """A game's start: nothing on the table or in the discard pile, and the draw pile shuffled
    from `fresh` (a non-empty `stacked` instead: drawn first card first, the rest of the deck in
    the discard pile, in id order). Returns (top, ndis, counter): the draw pile's size, the
    discard pile's, and the shuffle's counter."""
    nid = deck.shape[0]
    for c in range(nid):
        cd[C_VIS, c] = 0
        cd[C_DIS, c] = 0
    if stacked.shape[0] > 0:
        m = stacked.shape[0]
        for j in range(m):
            piles[0, m - 1 - j] = stacked[j]
            cd[C_DIS, stacked[j]] -= 1
        ndis = 0
        for c in range(nid):
            cd[C_DIS, c] += deck[c]
            for _ in range(cd[C_DIS, c]):
                piles[1, ndis] = c
                ndis += 1
        return np.int64(m), np.int64(ndis), np.int64(0)
    shuffle(fresh, dsize, piles[0], seed, 0, keys, sorted_keys, cnt)
    return np.int64(dsize), np.int64(0), np.int64(dsize)


@njit(cache=True, _nrt=False, inline="always")
def reshuffle(piles, cd, ndis, seed, counter, keys, sorted_keys, cnt):
    """Engine.draw's reshuffle: the discard pile's ndis cards become the draw pile (the caller
    moves its counts: the counter on by ndis, the draw pile ndis cards, the discard pile none)."""
    shuffle(piles[1], ndis, piles[0], seed, counter, keys, sorted_keys, cnt)
    for x in range(cd.shape[1]):
        cd[C_DIS, x] = 0


@njit(cache=True, _nrt=False, inline="always")
def draw(
    cannot_change, reshuffled, vx, pl, cd, lines, piles, n, ev, pos, capture, folds, top, ndis,
    counter, rshuf, seed, keys, sorted_keys, cnt, p, how,
):  # fmt: skip
    """Engine.draw for seat p (drawn as `how`): the top card of the draw pile, logged; when the
    pile is empty, the discard pile shuffled into a new one first, unless the round cannot go
    on: no card left, none that can change a row (the variant's `cannot_change(vx, pl, cd,
    lines, n, ndis)`, Engine.cannot_change_round), or the reshuffle cap reached. After a
    reshuffle the variant's `reshuffled(vx, cd)` runs. Returns (card, or -1 when the round
    ends, and then its end reason), pos, folds, top, ndis, counter, rshuf."""
    if top == 0:
        if ndis == 0 or cannot_change(vx, pl, cd, lines, n, ndis):
            return -1, END_NO_CARDS, pos, folds, top, ndis, counter, rshuf
        if rshuf >= MAX_RESHUFFLES_PER_ROUND:  # the safety stop
            return -1, END_RESHUFFLE_CAP, pos, folds, top, ndis, counter, rshuf
        reshuffle(piles, cd, ndis, seed, counter, keys, sorted_keys, cnt)
        counter += ndis
        top = ndis
        ndis = 0
        rshuf += 1
        reshuffled(vx, cd)
        pos, folds = emit(ev, pos, capture, folds, K_RESHUFFLE, -1, -1, -1, top)
    top -= 1
    c = piles[0, top]
    pos, folds = emit(ev, pos, capture, folds, K_DRAW, p, c, -1, how)
    return c, END_NOBODY_ACTIVE, pos, folds, top, ndis, counter, rshuf


@njit(cache=True, _nrt=False, inline="always")
def seat_after(dealer, turn, n):
    """The seat at index `turn` of the round's turn order dealer+1, dealer+2, ..., dealer:
    (dealer + 1 + turn) mod n, without a division."""
    p = dealer + 1 + turn
    if p >= n:
        p -= n
    return p


@njit(cache=True, _nrt=False, inline="always")
def next_to_deal(pl, dealer, turn, n):
    """The opening deal from index `turn` of the turn order: (the next seat dealt, the index
    after it), or (-1, 0) when the deal is over (the laps begin at index 0). Only seats still active with nothing in front
    of them are dealt."""
    while turn < n:
        p = seat_after(dealer, turn, n)
        turn += 1
        if pl[F_STATUS, p] == ACTIVE and pl[F_LEN, p] == 0:
            return p, turn
    return -1, 0


@njit(cache=True, _nrt=False, inline="always")
def place(pl, cd, lines, p, c):
    """Card c lands in front of p (the caller counts it on the table)."""
    lines[p, pl[F_LEN, p]] = c
    pl[F_LEN, p] += 1
    cd[C_VIS, c] += 1


@njit(cache=True, _nrt=False, inline="always")
def take(pl, lines, p, c):
    """Remove the first copy of c from p's row (list.remove); the census is the caller's."""
    ln = pl[F_LEN, p]
    i = 0
    while lines[p, i] != c:
        i += 1
    for j in range(i, ln - 1):
        lines[p, j] = lines[p, j + 1]
    pl[F_LEN, p] = ln - 1


@njit(cache=True, _nrt=False, inline="always")
def push_frame(fr, depth, q):
    """An action that makes seat q draw (Flip Three; Flip Four, Just One More) begins: its
    frame on the stack, nothing drawn or set aside yet. Returns the new depth."""
    fr[depth, R_PLAYER] = q
    fr[depth, R_DRAWN] = 0
    fr[depth, R_STAGE] = 0
    fr[depth, R_NPEND] = 0
    fr[depth, R_NEXT] = 0
    return depth + 1


@njit(cache=True, _nrt=False, inline="always")
def below_threshold(pl, p, kind):
    """sum:N (P_SUM) and count:N (P_COUNT) hit while the numbers' sum, or count, is under N."""
    return pl[F_NSUM if kind == P_SUM else F_NCOUNT, p] < pl[F_INT, p]


# === seats, rounds, games =====================================================================


@njit(cache=True, _nrt=False, inline="always")
def seat_policies(pl, pf, seat_policy, g, n, pol_kind, pol_int, pol_flt, pol_counting):
    """A game's start: seat s plays policy seat_policy[g, s] (a row of the pol_* tables), from
    no points, busts or Flip 7s."""
    for s in range(n):
        j = seat_policy[g, s]
        pl[F_KIND, s] = pol_kind[j]
        pl[F_INT, s] = pol_int[j]
        pl[F_COUNTING, s] = pol_counting[j]
        pf[s] = pol_flt[j]
        pl[F_TOTAL, s] = 0
        pl[F_BUSTS, s] = 0
        pl[F_FLIP7S, s] = 0


@njit(cache=True, _nrt=False, inline="always")
def fresh_rows(pl, n):
    """A round's start: every seat active with an empty row (the kernel clears its own fields)."""
    for p in range(n):
        pl[F_MASK, p] = 0
        pl[F_NSUM, p] = 0
        pl[F_NCOUNT, p] = 0
        pl[F_STATUS, p] = ACTIVE
        pl[F_LEN, p] = 0


@njit(cache=True, _nrt=False, inline="always")
def round_row(rs, rpos, pl, g, rnd, p, dealer, s, flip7p):
    """Engine.end_round's row rs[:, rpos] for seat p, scored s this round (when it fits: the
    caller counts rpos on, and a batch that ran out grows)."""
    if rpos < rs.shape[1]:
        rs[Q_GAME, rpos] = g
        rs[Q_ROUND, rpos] = rnd
        rs[Q_SEAT, rpos] = p
        rs[Q_DEALER, rpos] = dealer
        rs[Q_SCORE, rpos] = s
        rs[Q_TOTAL, rpos] = pl[F_TOTAL, p]
        rs[Q_STATUS, rpos] = pl[F_STATUS, p]
        rs[Q_FLIP7, rpos] = 1 if p == flip7p else 0


@njit(cache=True, _nrt=False, inline="always")
def clear_table(pl, cd, lines, piles, n, ndis):
    """Engine.end_round: each seat's row goes to the discard pile, seat by seat in row order (the
    next shuffle permutes it, so order matters). Returns the discard pile's new size."""
    for p in range(n):
        for x in range(pl[F_LEN, p]):
            c = lines[p, x]
            piles[1, ndis] = c
            ndis += 1
            cd[C_DIS, c] += 1
        pl[F_LEN, p] = 0
    for x in range(cd.shape[1]):
        cd[C_VIS, x] = 0
    return ndis


@njit(cache=True, inline="always")
def capped_winner(pl, n, best, seed):
    """The winner of a game stopped at the round cap, whose leaders total `best`: the only one,
    or flip7.rng.tie_break's pick among them (the game's key at index 0, mod their number)."""
    count = 0
    for q in range(n):
        if pl[F_TOTAL, q] == best:
            count += 1
    z = np.uint64(seed)
    z = (z ^ (z >> U30)) * MIX1
    z = (z ^ (z >> U27)) * MIX2
    j = np.int64((z ^ (z >> U31)) % np.uint64(count))
    for q in range(n):
        if pl[F_TOTAL, q] == best:
            if j == 0:
                return q
            j -= 1
    return 0


@njit(cache=True, _nrt=False, inline="always")
def game_over(pl, n, target, rnd, max_rounds, seed):
    """Engine.run after a round: (over, winner, capped). Over when one seat alone leads at or
    past the target, or at the round cap (capped: the caller logs ROUND_CAP)."""
    best = pl[F_TOTAL, 0]
    winner = 0
    ties = 1
    for q in range(1, n):
        t = pl[F_TOTAL, q]
        if t > best:
            best = t
            winner = q
            ties = 1
        elif t == best:
            ties += 1
    if best >= target and ties == 1:
        return True, winner, 0
    if rnd >= max_rounds:
        if ties > 1:
            winner = capped_winner(pl, n, best, seed)
        return True, winner, 1
    return False, winner, 0


@njit(cache=True, _nrt=False, inline="always")
def game_rows(go, gt, pl, g, n, rnd, winner, capped, events, folds, gpos, grpos):
    """Game g's row go[g] and its seats' rows gt[:, g]."""
    go[g, G_ROUNDS] = rnd
    go[g, G_WINNER] = winner
    go[g, G_CAPPED] = capped
    go[g, G_EVENTS] = events
    go[g, G_FOLDS] = folds
    go[g, G_EV_START] = gpos
    go[g, G_RS_START] = grpos
    for s in range(n):
        t = pl[F_TOTAL, s]
        gt[T_TOTAL, g, s] = t
        gt[T_BUSTS, g, s] = pl[F_BUSTS, s]
        gt[T_FLIP7S, g, s] = pl[F_FLIP7S, s]
        rank = 1
        for q in range(n):
            if pl[F_TOTAL, q] > t:
                rank += 1
        gt[T_RANK, g, s] = rank


# === the game loop ============================================================================


@njit(cache=True, _nrt=False, inline="always")
def play_loop(
    begin_game, begin_round, play_round, seat_score, end_round, seeds, seat_policy, policies,
    ip, deck, stacked, out, g0, pos0, rpos0, ws, dsize, vx,
):  # fmt: skip
    """Games g0.. of a batch (a variant's play_games, on reference-free views): flip7.engine's
    Engine.run and the frame of its play_round and end_round, written once for every variant.
    The variant supplies its part as jitted functions, which numba inlines here, except
    play_round: a call, which LLVM inlines when the round is marked forceinline, as the classic
    one (numba's inliner costs the square of a callee's size in compile time: see
    core.play_round); the Vengeance round is a plain call (inlined, it cost 1.4x the first
    compile and measured slower). So each variant's kernel is its own compiled function and one
    variant's code never compiles for another:

    - begin_game(vx, pl, cd, seat_policy, g, n, stacked): its own per-seat fields and census
      rows at a game's start, after the first draw pile;
    - begin_round(vx, pl, n): its own per-seat fields at a round's start;
    - play_round(vx, ...): the round from its deal to its end (the laps, the special cards), on
      the running state (event and fold counts, draw and discard piles, the shuffle's
      counter), which it returns with the round's end reason and Flip 7 seat;
    - seat_score(vx, pl, p, flip7p, bonus, ev, pos, capture, folds): seat p's score this round,
      and the events the round's end logs for p (pos and folds after them);
    - end_round(vx, pl, cd, piles, n, ndis): after the table went to the discard pile (the
      discard pile's new size).

    policies: (pol_kind, pol_int, pol_flt, pol_counting); out: (ev, rs, go, gt); ws: (pl, pf,
    cd, lines, piles, keys, sorted_keys, cnt, fresh), the workspace's shared arrays; vx: the
    variant's own arrays and parameters, passed through (tuples: Python makes a call of more
    than 30 arguments a call with *args, which numba cannot inline). Returns (games done,
    event pos, round row pos, DONE or GROW), as play_games."""
    pol_kind, pol_int, pol_flt, pol_counting = policies
    ev, rs, go, gt = out
    pl, pf, cd, lines, piles, keys, sorted_keys, cnt, fresh = ws
    k = seeds.shape[0]
    n = ip[I_N]
    target = ip[I_TARGET]
    bonus = ip[I_BONUS]
    capture = ip[I_CAPTURE] != 0
    ev_cap = ev.shape[1]
    rs_cap = rs.shape[1]
    pos = pos0
    rpos = rpos0
    for g in range(g0, k):
        seed = seeds[g]
        seat_policies(pl, pf, seat_policy, g, n, pol_kind, pol_int, pol_flt, pol_counting)
        gpos = pos
        grpos = rpos
        folds = np.int64(0)  # not the literal 0: play_round would compile for both
        rnd = 0
        dealer = ip[I_FIRST_DEALER]
        top, ndis, counter = first_pile(
            piles, cd, deck, stacked, fresh, dsize, seed, keys, sorted_keys, cnt
        )
        begin_game(vx, pl, cd, seat_policy, g, n, stacked)
        capped = 0
        winner = 0
        while True:  # rounds
            # --- round start (flip7.engine.Engine.play_round)
            rnd += 1
            fresh_rows(pl, n)
            begin_round(vx, pl, n)
            if rpos < rs_cap:  # on the round's first seat row: where its codes start
                rs[Q_EV_POS, rpos] = pos - gpos
            pos, folds = emit(ev, pos, capture, folds, K_ROUND_START, dealer, -1, -1, rnd)
            pos, folds, top, ndis, counter, end_reason, flip7p = play_round(
                vx, ip, ev, pos, capture, folds, pl, pf, cd, lines, piles, keys, sorted_keys,
                cnt, dsize, top, ndis, counter, seed, rnd, dealer,
            )  # fmt: skip
            # --- round end (flip7.engine.Engine.end_round): score, discard, pass the deck left
            for p in range(n):
                s, pos, folds = seat_score(vx, pl, p, flip7p, bonus, ev, pos, capture, folds)
                pl[F_TOTAL, p] += s
                if capture:  # the log leaves ROUND_SCORE to the rounds table: counted only
                    folds += 1
                round_row(rs, rpos, pl, g, rnd, p, dealer, s, flip7p)
                rpos += 1
            pos, folds = emit(ev, pos, capture, folds, K_ROUND_END, -1, -1, -1, end_reason)
            ndis = end_round(vx, pl, cd, piles, n, clear_table(pl, cd, lines, piles, n, ndis))
            dealer = (dealer + 1) % n

            # --- game end (flip7.engine.Engine.run)
            if ip[I_ONE_ROUND]:
                break
            over, winner, capped = game_over(pl, n, target, rnd, ip[I_MAX_ROUNDS], seed)
            if capped:
                pos, folds = emit(ev, pos, capture, folds, K_ROUND_CAP, -1, -1, -1, rnd)
            if over:
                break
        if not ip[I_ONE_ROUND]:
            pos, folds = emit(
                ev, pos, capture, folds, K_GAME_END, winner, -1, -1, pl[F_TOTAL, winner]
            )
        if pos > ev_cap or rpos > rs_cap:
            return g, gpos, grpos, GROW
        game_rows(go, gt, pl, g, n, rnd, winner, capped, pos - gpos, folds, gpos, grpos)
    return k, pos, rpos, DONE
