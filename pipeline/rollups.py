"""A shard's rollup: the additive sufficient statistics every headline mart is built from.

Each shard task writes, beside its games, rounds and events files, one small `rollups` table
(pipeline.schema.ROLLUPS): for each group a mart reports (a policy in the cell, the cell as a
whole, a seat, a turn position, a round score, two policies that met) and each figure of it,
the six sums of the statistics contract over the shard's games, a game being one cluster:
`games` (G: games that add a term), `y`, `n`, `yy`, `nn`, `yn` (the sums of y_g, n_g, y_g²,
n_g² and y_g·n_g). The 'policy' rows of figures 'win' and 'points' also list each game's y_g
and n_g in game order (`game_y`, `game_n`; empty on every other row): the card-counting mart
pairs two cells' games with them, shard by shard, without reading the games. They add across shards, so the warehouse answers from shards x groups rows
whatever the number of games (warehouse/sql/marts read `stg_rollups`), and `flip7 warehouse
verify` rebuilds each shard's rollup from its games and rounds files with the SQL definition
(warehouse/sql/intermediate/int_rollups_from_tables.sql) and compares the two.

The groupings, their `key` and their figures (y over n per game):

| grouping | policy, opponent, key | figures |
|---|---|---|
| policy | the policy, '', -1 | win (wins / seats), points (points / seat-rounds), rank (rank sum / seats), bust, flip7, stay, freeze (rounds so ended / rounds) |
| cell | '*', '', -1 | rounds (the game's rounds / 1), points (all seats' points / seat-rounds), bust, flip7 (all seats' / seat-rounds), events (the events the game logged / 1) |
| seat | the policy or '*', '', the seat | win (1 if it won / 1), points (its total / its rounds) |
| position | the policy or '*', '', turn position (0 acts first, n-1 deals) | points (its rounds' points there / rounds there), bust, flip7 |
| score | the policy, '', the round score | rounds (y: rounds that scored it; g: the same count; n and the squares 0) |
| versus | the policy, the other policy, -1 | ahead (meetings it finished ahead / meetings decided), meetings (y: meetings; n and the squares 0) |

Only groups with at least one game are written. The sums are accumulated in one compiled pass
over the shard's rows (numba, `cache=True`: compiled on a machine's first shard, announced as
flip7.kernel.load announces the kernels, then loaded from numba's cache), a small fraction of
what writing the shard costs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from flip7.kernel.load import call
from lakecontract import arrow, codec
from pipeline.schema import ROLLUPS

ALL = "*"  # the policy of a row that pools every policy of the cell
SUMS = ("games", "y", "n", "yy", "nn", "yn")


GROUPINGS = ("policy", "cell", "seat", "position", "score", "versus")
FIGURES = (
    "win",
    "points",
    "rank",
    "bust",
    "flip7",
    "stay",
    "freeze",
    "rounds",
    "ahead",
    "meetings",
    "events",
)
#: The figures of each grouping, in the order of the compiled pass's output arrays.
POLICY_FIGURES = ("win", "points", "rank", "bust", "flip7", "stay", "freeze")
CELL_FIGURES = ("rounds", "points", "bust", "flip7", "events")
SEAT_FIGURES = ("win", "points")
POSITION_FIGURES = ("points", "bust", "flip7")
VERSUS_FIGURES = ("ahead", "meetings")


#: The columns the compiled pass reads, in their schema dtypes (pipeline.schema), so that the
#: shard task hands it the kernel's own arrays and verify the arrays of the files it reads,
#: without a copy either way, and numba compiles one signature.
GAME_COLUMNS = {
    "game": np.int64,
    "seat": np.int8,
    "policy": np.int32,  # index into the names
    "winner": np.bool_,
    "total": np.int32,
    "rounds": np.int16,
    "rank": np.int8,
    "events": np.int32,
}
ROUND_COLUMNS = {
    "game": np.int64,
    "seat": np.int8,
    "policy": np.int32,
    "dealer": np.int8,
    "score": np.int16,
    "busted": np.bool_,
    "flip7": np.bool_,
    "status": np.int8,
}
#: The games table's columns that are one value for the whole shard: (column, rollup column).
SHARD_CONSTANTS = (
    ("cell", "cell"),
    ("variant", "variant"),
    ("ruleset", "ruleset"),
    ("lineup", "seating"),
    ("cell_game", "first_game"),
)


def rollup_table(games: pa.Table, rounds: pa.Table | codec.StoredRounds, players: int) -> pa.Table:
    """The rollup of one shard from its `games` and `rounds` tables (pipeline.schema; the rounds
    also as a file stores them, lakecontract.codec.StoredRounds, read without decoding them to
    Arrow), whose rows are in the order the shard writes them: by game then seat, by game,
    round and seat."""
    names, g_pol = arrow.dictionary_codes(games["policy"])
    if isinstance(rounds, codec.StoredRounds):
        r_names = rounds.seats[1]
        r = {k: rounds.column(k) for k in ROUND_COLUMNS}
        r_pol = r.pop("policy")
    else:
        r_names, r_pol = arrow.dictionary_codes(rounds["policy"])
        r = {k: arrow.numpy(rounds[k]) for k in ROUND_COLUMNS if k != "policy"}
    if r_names != names:  # the rounds' dictionary onto the games' (the same policies)
        lookup = np.asarray([names.index(s) for s in r_names], dtype=np.int32)
        r_pol = lookup[r_pol] if len(r_pol) else r_pol
    g = {k: arrow.numpy(games[k]) for k in GAME_COLUMNS if k != "policy"}
    shard = {out: games[col][0].as_py() if games.num_rows else None for col, out in SHARD_CONSTANTS}
    return rollup_of_columns({**g, "policy": g_pol}, {**r, "policy": r_pol}, names, players, shard)


def rollup_of_columns(
    games: Mapping[str, np.ndarray],
    rounds: Mapping[str, np.ndarray],
    names: Sequence[str],
    players: int,
    shard: Mapping[str, object],
) -> pa.Table:
    """rollup_table from numpy columns: `games` and `rounds` hold GAME_COLUMNS and
    ROUND_COLUMNS (`policy`: the index into `names`, the cell's policies), `shard` the
    per-shard constants (SHARD_CONSTANTS' rollup columns; None where there are no games). The
    shard task passes the kernel's arrays here, so the rollup costs one compiled pass."""
    n = players
    g = {k: np.ascontiguousarray(games[k], dtype=t) for k, t in GAME_COLUMNS.items()}
    r = {k: np.ascontiguousarray(rounds[k], dtype=t) for k, t in ROUND_COLUMNS.items()}
    P = len(names)
    block = _Block.empty()
    k = len(g["game"]) // n
    if k:
        first = int(g["game"][0])
        if (
            len(g["game"]) != k * n
            or not np.array_equal(g["game"], np.repeat(np.arange(first, first + k), n))
            or not np.array_equal(g["seat"], np.tile(np.arange(n, dtype=np.int8), k))
        ):
            raise ValueError("a shard's games rows must be one per seat, by game then seat")
        score = r["score"]
        lo = int(score.min()) if len(score) else 0
        span = int(score.max()) - lo + 1 if len(score) else 0
        sums = call(
            "rollups",
            _pass(),
            n,
            P,
            first,
            *(g[c] for c in ("policy", "winner", "total", "rounds", "rank", "events")),
            *(r[c] for c in ("game", "policy", "seat", "dealer", "score")),
            *(r[c] for c in ("busted", "flip7", "status")),
            lo,
            span,
        )
        block = _rows(P, n, lo, span, *sums)
    m = len(block.sums)
    lists = {
        name: arrow.list_array(block.offsets, values, ROLLUPS.field(name).type)
        for name, values in (("game_y", block.game_y), ("game_n", block.game_n))
    }

    def const(name: str, default: object) -> object:
        value = shard.get(name)
        return default if value is None else value

    return arrow.table(
        {
            "cell": np.full(m, const("cell", -1), np.int32),
            **{
                name: arrow.dictionary(np.zeros(m, np.int32), [str(const(name, ""))])
                for name in ("variant", "ruleset", "seating")
            },
            "first_game": np.full(m, const("first_game", -1), np.int32),
            "grouping": arrow.dictionary(block.grouping, GROUPINGS),
            "figure": arrow.dictionary(block.figure, FIGURES),
            "policy": arrow.dictionary(block.policy, [*names, ALL]),
            "opponent": arrow.dictionary(block.opponent, [*names, ""]),
            "key": block.key,
            **{name: np.ascontiguousarray(block.sums[:, j]) for j, name in enumerate(SUMS)},
            **lists,
        },
        ROLLUPS,
    )


@dataclass(frozen=True)
class _Block:
    """Rollup rows as columns: the group (GROUPINGS and FIGURES indices, policy and opponent
    indices into the cell's names with the last index for ALL and for no opponent, key), the
    six sums, and the per-game lists (row i's values at offsets[i]:offsets[i + 1])."""

    grouping: np.ndarray
    figure: np.ndarray
    policy: np.ndarray
    opponent: np.ndarray
    key: np.ndarray
    sums: np.ndarray  # (rows, 6)
    offsets: np.ndarray
    game_y: np.ndarray
    game_n: np.ndarray

    @classmethod
    def empty(cls) -> _Block:
        none = np.zeros(0, np.int32)
        return cls(
            none, none, none, none, none.astype(np.int16), np.zeros((0, 6), np.int64),
            np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
        )  # fmt: skip


_PerRow = np.ndarray | int  # a value per row of a figure, or one for all of them


def _rows(
    P: int,
    n: int,
    lo: int,
    span: int,
    pol_s: np.ndarray,
    cell_s: np.ndarray,
    seat_s: np.ndarray,
    pos_s: np.ndarray,
    score_c: np.ndarray,
    vs_s: np.ndarray,
    game_y: np.ndarray,
    game_n: np.ndarray,
) -> _Block:
    """The compiled pass's arrays as rollup rows, groups with no game left out. The rows run
    grouping by grouping (GROUPINGS order), figure by figure within one, and within a figure
    in the order of the pass's arrays: by policy; seat and position by key then policy (ALL
    last); score by policy then score; versus by policy then opponent."""
    Q = P + 1
    score_s = np.zeros((P * max(span, 0), 6), np.int64)
    score_s[:, 0] = score_s[:, 1] = score_c.reshape(-1)
    parts: list[tuple[str, tuple[str, ...], _PerRow, _PerRow, _PerRow, np.ndarray]] = [
        # (grouping, figures, policy, opponent, key, sums) per grouping
        ("policy", POLICY_FIGURES, np.arange(P), P, -1, pol_s),
        ("cell", CELL_FIGURES, P, P, -1, cell_s),
        ("seat", SEAT_FIGURES, np.tile(np.arange(Q), n), P, np.repeat(np.arange(n), Q), seat_s),
        ("position", POSITION_FIGURES, np.tile(np.arange(Q), n), P, np.repeat(np.arange(n), Q), pos_s),
        ("score", ("rounds",), np.repeat(np.arange(P), span), P, np.tile(np.arange(lo, lo + span), P), score_s),
        ("versus", VERSUS_FIGURES, np.repeat(np.arange(P), P), np.tile(np.arange(P), P), -1, vs_s),
    ]  # fmt: skip
    cols: dict[str, list[np.ndarray]] = {
        c: [] for c in ("grouping", "figure", "policy", "opp", "key")
    }
    for grouping, figures, policy, opponent, key, sums in parts:
        rows = sums.size // 6 // len(figures)  # rows of one figure
        cols["grouping"].append(np.full(rows * len(figures), GROUPINGS.index(grouping)))
        cols["figure"].append(np.repeat([FIGURES.index(f) for f in figures], rows))
        for name, value in (("policy", policy), ("opp", opponent), ("key", key)):
            cols[name].append(np.tile(np.broadcast_to(value, rows), len(figures)))
    every = np.concatenate([p[-1].reshape(-1, 6) for p in parts])
    keep = every[:, 0] > 0
    # the per-game lists: the first 2 * P rows (policy: win, then points), each its G games
    listed = np.zeros(len(every), np.int64)
    listed[: 2 * P] = every[: 2 * P, 0]
    length = listed[keep]
    offsets = np.zeros(len(length) + 1, np.int64)
    np.cumsum(length, out=offsets[1:])
    heads = [(f, p) for f in range(2) for p in range(P) if every[f * P + p, 0] > 0]
    values = [
        np.concatenate(
            [a[f, p, : every[f * P + p, 0]] for f, p in heads] or [np.zeros(0, np.int64)]
        )
        for a in (game_y, game_n)
    ]
    return _Block(
        *(
            np.concatenate(cols[c])[keep].astype(np.int32)
            for c in ("grouping", "figure", "policy", "opp")
        ),
        np.concatenate(cols["key"])[keep].astype(np.int16),
        every[keep],
        offsets,
        *values,
    )


_compiled: Callable[..., tuple[np.ndarray, ...]] | None = None


def _pass() -> Callable[..., tuple[np.ndarray, ...]]:
    """The compiled pass (numba, cached on disk), built on first use: numba is imported only
    by a process that writes a shard."""
    global _compiled, _add
    if _compiled is None:
        import numba

        _add = numba.njit(cache=True, inline="always")(_add_sums)
        _compiled = numba.njit(cache=True, nogil=True)(_accumulate)
    return _compiled


def warm() -> None:
    """Compile (or load) the pass now, on no games: a driver does so before its workers start,
    so that they load it from numba's cache instead of each compiling it."""
    g = {k: np.zeros(0, dtype=t) for k, t in GAME_COLUMNS.items()}
    r = {k: np.zeros(0, dtype=t) for k, t in ROUND_COLUMNS.items()}
    call(
        "rollups",
        _pass(),
        1,
        1,
        0,
        *(g[c] for c in ("policy", "winner", "total", "rounds", "rank", "events")),
        *(r[c] for c in ("game", "policy", "seat", "dealer", "score")),
        *(r[c] for c in ("busted", "flip7", "status")),
        0,
        1,
    )


def _add_sums(acc: np.ndarray, i: int, y: int, n: int) -> None:
    """One cluster's (y, n) into group i's six sums (G, Sy, Sn, Syy, Snn, Syn): row i of
    `acc` (a 2-d view of the pass's sums, so that no view is made per call)."""
    acc[i, 0] += 1
    acc[i, 1] += y
    acc[i, 2] += n
    acc[i, 3] += y * y
    acc[i, 4] += n * n
    acc[i, 5] += y * n


_add = _add_sums  # the compiled form once _pass() has run (what _accumulate calls)

#: A round row's outcome bin in the pass's per-game histogram: busted * 3 + (1 stayed,
#: 2 frozen, 0 otherwise), from the `busted` and `status` columns as stored.
BINS = 6


def _accumulate(  # type: ignore[no-untyped-def]
    n,
    P,
    first,
    gpol,
    win,
    total,
    grounds,
    rank,
    events,
    rgame,
    rpol,
    rseat,
    dealer,
    score,
    busted,
    flip7,
    status,
    lo,
    span,
):
    """Every group's six sums in one pass over the games (rows by game then seat) and their
    rounds (by game, round, seat): per game, its values per group (the cluster), then each
    group's (1, y, n, y², n², y·n) added in, all in int64 (exact). The columns come in their
    schema dtypes (GAME_COLUMNS, ROUND_COLUMNS); `first` is the shard's first game id.

    A round row does four increments: its (turn position, policy) cell's outcome bin (BINS),
    points and Flip 7s, and its policy's count of the round score. Everything else a round
    figure needs (the policy's rounds, busts, stays, freezes; the pooled positions; the
    cell's busts and Flip 7s) is summed from those cells once per game, so the loop over the
    rows (most of the pass) stays short and free of branches."""
    k = len(gpol) // n
    Q = P + 1  # the policies, then every policy pooled
    pol_s = np.zeros((7, P, 6), np.int64)
    cell_s = np.zeros((5, 6), np.int64)
    seat_s = np.zeros((2, n, Q, 6), np.int64)
    pos_s = np.zeros((3, n, Q, 6), np.int64)
    score_c = np.zeros((P, max(span, 0)), np.int64)
    vs_s = np.zeros((2, P, P, 6), np.int64)
    pol2 = pol_s.reshape(7 * P, 6)  # row f * P + p
    seat2 = seat_s.reshape(2 * n * Q, 6)  # row (f * n + seat) * Q + q
    pos2 = pos_s.reshape(3 * n * Q, 6)  # row (f * n + position) * Q + q
    vs2 = vs_s.reshape(2 * P * P, 6)  # row p * P + b: figure 'ahead'
    # win and points: each policy's (y, n) per game it sat in, the policy's g-th such game at g
    game_y = np.zeros((2, P, k), np.int64)
    game_n = np.zeros((2, P, k), np.int64)
    sat = np.zeros(P, np.int64)
    # per game and (position, policy) cell c = position * P + policy: rounds by outcome bin
    # (at c * BINS + bin), points, Flip 7s; zeroed again as they are read
    hist = np.zeros(n * P * BINS, np.int64)
    pts = np.zeros(n * P, np.int64)
    f7s = np.zeros(n * P, np.int64)
    g_pol = np.zeros(
        (7, P), np.int64
    )  # per game: wins, points, rank, busts, flip7s, stays, freezes
    g_seats = np.zeros(P, np.int64)
    g_rounds = np.zeros(P, np.int64)  # seat-rounds from the games rows
    r_rounds = np.zeros(P, np.int64)  # round rows of the policy
    pool = np.zeros(4, np.int64)  # a position's rounds, points, busts, flip7s over the policies
    v_meet = np.zeros((P, P), np.int64)
    v_ahead = np.zeros((P, P), np.int64)
    v_behind = np.zeros((P, P), np.int64)
    r = 0
    nr = len(rgame)
    for g in range(k):
        base = g * n
        c_points = 0
        c_seat_rounds = 0
        for s in range(n):
            i = base + s
            p = np.int64(gpol[i])
            w = np.int64(win[i])
            pts_i = np.int64(total[i])
            rounds_i = np.int64(grounds[i])
            g_seats[p] += 1
            g_pol[0, p] += w
            g_pol[1, p] += pts_i
            g_pol[2, p] += rank[i]
            g_rounds[p] += rounds_i
            c_points += pts_i
            c_seat_rounds += rounds_i
            for q in (p, P):  # the seat's own policy, then every policy pooled
                _add(seat2, s * Q + q, w, 1)
                _add(seat2, (n + s) * Q + q, pts_i, rounds_i)
            for t in range(n):
                j = base + t
                if t != s and gpol[j] != p:
                    v_meet[p, gpol[j]] += 1
                    if rank[i] < rank[j]:
                        v_ahead[p, gpol[j]] += 1
                    elif rank[i] > rank[j]:
                        v_behind[p, gpol[j]] += 1
        while r < nr and rgame[r] - first == g:
            p = np.int64(rpol[r])
            pos = np.int64(rseat[r]) - np.int64(dealer[r]) - 1  # -n .. n-2: one wrap at most
            pos += n * np.int64(pos < 0)
            st = status[r]
            c = pos * P + p
            hist[
                c * BINS + np.int64(busted[r]) * 3 + np.int64(st == 1) + 2 * np.int64(st == 2)
            ] += 1
            pts[c] += score[r]
            f7s[c] += flip7[r]
            score_c[p, np.int64(score[r]) - lo] += 1
            r += 1
        c_busts = 0
        c_flip7s = 0
        for pos in range(n):
            pool[:] = 0
            for p in range(P):
                c = pos * P + p
                h = hist[c * BINS : c * BINS + BINS]
                rounds = h[0] + h[1] + h[2] + h[3] + h[4] + h[5]
                if rounds == 0:
                    continue
                busts = h[3] + h[4] + h[5]
                r_rounds[p] += rounds
                g_pol[3, p] += busts
                g_pol[4, p] += f7s[c]
                g_pol[5, p] += h[1] + h[4]
                g_pol[6, p] += h[2] + h[5]
                pool[0] += rounds
                pool[1] += pts[c]
                pool[2] += busts
                pool[3] += f7s[c]
                _add(pos2, pos * Q + p, pts[c], rounds)
                _add(pos2, (n + pos) * Q + p, busts, rounds)
                _add(pos2, (2 * n + pos) * Q + p, f7s[c], rounds)
                h[:] = 0
                pts[c] = 0
                f7s[c] = 0
            if pool[0] > 0:
                _add(pos2, pos * Q + P, pool[1], pool[0])
                _add(pos2, (n + pos) * Q + P, pool[2], pool[0])
                _add(pos2, (2 * n + pos) * Q + P, pool[3], pool[0])
            c_busts += pool[2]
            c_flip7s += pool[3]
        for p in range(P):
            if g_seats[p] > 0:
                _add(pol2, 0 * P + p, g_pol[0, p], g_seats[p])
                _add(pol2, 1 * P + p, g_pol[1, p], g_rounds[p])
                _add(pol2, 2 * P + p, g_pol[2, p], g_seats[p])
                game_y[0, p, sat[p]] = g_pol[0, p]
                game_n[0, p, sat[p]] = g_seats[p]
                game_y[1, p, sat[p]] = g_pol[1, p]
                game_n[1, p, sat[p]] = g_rounds[p]
                sat[p] += 1
            if r_rounds[p] > 0:
                for f in range(3, 7):
                    _add(pol2, f * P + p, g_pol[f, p], r_rounds[p])
            g_pol[:, p] = 0
            g_seats[p] = 0
            g_rounds[p] = 0
            r_rounds[p] = 0
            for b in range(P):
                if v_meet[p, b] > 0:
                    _add(vs2, p * P + b, v_ahead[p, b], v_ahead[p, b] + v_behind[p, b])
                    vs_s[1, p, b, 0] += 1
                    vs_s[1, p, b, 1] += v_meet[p, b]
                v_meet[p, b] = 0
                v_ahead[p, b] = 0
                v_behind[p, b] = 0
        _add(cell_s, 0, grounds[base], 1)
        _add(cell_s, 1, c_points, c_seat_rounds)
        _add(cell_s, 2, c_busts, c_seat_rounds)
        _add(cell_s, 3, c_flip7s, c_seat_rounds)
        _add(cell_s, 4, events[base], 1)
    return pol_s, cell_s, seat_s, pos_s, score_c, vs_s, game_y, game_n
