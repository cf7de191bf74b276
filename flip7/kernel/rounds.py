"""The round's machinery both compiled kernels share (flip7.kernel.core: the classic game,
flip7.kernel.vengeance: "With a Vengeance"): the shuffle, the game's first draw pile, the
reshuffle, a round's fresh rows and its cleared table, its score rows, the game's end and its
output rows, and the layout those read (per-seat fields, census rows, output rows).

Each kernel keeps its own loop over jobs (the deal, the laps, its special cards) and calls these
leaves, which numba inlines: a variant's code compiles only when that variant's kernel does.
numba's on-disk cache only notices edits to the file of the function it caches, so the kernels'
cached code could go stale after an edit here alone: flip7.kernel.load drops it (CALLEES).
"""

# mypy: ignore-errors
# (numba types this module when it compiles it; Python annotations would not be checked.)

from __future__ import annotations

import numpy as np
from numba import njit

# --- statuses (checked against flip7 by flip7.kernel.encode) --------------------------------
ACTIVE, STAYED, FROZEN, BUSTED = 0, 1, 2, 3

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

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
U30, U27, U31 = np.uint64(30), np.uint64(27), np.uint64(31)


# === the deck =================================================================================


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
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
