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

import numpy as np
import pyarrow as pa

from flip7.kernel.load import call
from pipeline import arrow
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


class _Rows:
    """Rows of the rollup table, appended a block (one grouping and figure) at a time."""

    def __init__(self) -> None:
        self.cols: dict[str, list[np.ndarray]] = {
            k: [] for k in ("grouping", "figure", "policy", "opponent", "key", *SUMS)
        }
        self.lists: dict[str, list[np.ndarray]] = {"game_y": [], "game_n": []}

    def add(
        self,
        grouping: str,
        figure: str,
        policy: np.ndarray,  # index into the names (len(names) = ALL)
        key: np.ndarray,
        sums: np.ndarray,  # (rows, 6)
        opponent: np.ndarray | None = None,
        per_game: tuple[np.ndarray, np.ndarray] | None = None,  # (rows, games) y and n
    ) -> None:
        keep = sums[:, 0] > 0
        m = int(keep.sum())
        for name, values in zip(("game_y", "game_n"), per_game or (None, None), strict=True):
            # a row's games are its first `games` entries (the games its policy sat in)
            self.lists[name] += [
                np.zeros(0, np.int64) if values is None else values[i, : sums[i, 0]]
                for i in np.flatnonzero(keep)
            ]
        self.cols["grouping"].append(np.full(m, GROUPINGS.index(grouping), np.int32))
        self.cols["figure"].append(np.full(m, FIGURES.index(figure), np.int32))
        self.cols["policy"].append(policy[keep].astype(np.int32))
        opp = np.full(len(keep), -1) if opponent is None else opponent
        self.cols["opponent"].append(opp[keep].astype(np.int32))
        self.cols["key"].append(key[keep].astype(np.int16))
        for j, name in enumerate(SUMS):
            self.cols[name].append(sums[keep, j])


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


def rollup_table(games: pa.Table, rounds: pa.Table, players: int) -> pa.Table:
    """The rollup of one shard from its `games` and `rounds` tables (pipeline.schema), whose
    rows are in the order the shard writes them: by game then seat, by game, round and seat."""
    names, g_pol = arrow.dictionary_codes(games["policy"])
    r_names, r_pol = arrow.dictionary_codes(rounds["policy"])
    if r_names != names:  # the rounds' dictionary onto the games' (the same policies)
        lookup = np.asarray([names.index(s) for s in r_names], dtype=np.int32)
        r_pol = lookup[r_pol] if len(r_pol) else r_pol
    g = {k: arrow.numpy(games[k]) for k in GAME_COLUMNS if k != "policy"}
    r = {k: arrow.numpy(rounds[k]) for k in ROUND_COLUMNS if k != "policy"}
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
    out = _Rows()
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
        _add_rows(out, P, n, lo, span, *sums)
    cols = {
        name: np.concatenate(parts) if parts else np.zeros(0, np.int64)
        for name, parts in out.cols.items()
    }
    m = len(cols["games"])
    lists = {}
    for name, parts in out.lists.items():
        offsets = np.zeros(m + 1, np.int64)
        np.cumsum([len(v) for v in parts], out=offsets[1:])
        values = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        lists[name] = arrow.list_array(offsets, values, ROLLUPS.field(name).type)

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
            "grouping": arrow.dictionary(cols["grouping"], GROUPINGS),
            "figure": arrow.dictionary(cols["figure"], FIGURES),
            "policy": arrow.dictionary(cols["policy"], [*names, ALL]),
            "opponent": arrow.dictionary(
                np.where(cols["opponent"] < 0, P, cols["opponent"]).astype(np.int32), [*names, ""]
            ),
            "key": cols["key"],
            **{name: cols[name].astype(np.int64) for name in SUMS},
            **lists,
        },
        ROLLUPS,
    )


def _add_rows(
    out: _Rows,
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
) -> None:
    """The compiled pass's arrays as rollup rows (groups with no game left out)."""
    policies = np.arange(P)
    none = np.full(P, -1)
    for f, figure in enumerate(POLICY_FIGURES):
        per_game = (game_y[f], game_n[f]) if f < 2 else None  # win, points
        out.add("policy", figure, policies, none, pol_s[f], per_game=per_game)
    for f, figure in enumerate(CELL_FIGURES):
        out.add("cell", figure, np.array([P]), np.array([-1]), cell_s[f][None, :])
    # seat and position arrays are (figure, key, policy or P for ALL, 6)
    pol_of = np.tile(np.arange(P + 1), n)
    key_of = np.repeat(np.arange(n), P + 1)
    for f, figure in enumerate(SEAT_FIGURES):
        out.add("seat", figure, pol_of, key_of, seat_s[f].reshape(-1, 6))
    for f, figure in enumerate(POSITION_FIGURES):
        out.add("position", figure, pol_of, key_of, pos_s[f].reshape(-1, 6))
    counts = score_c.reshape(-1)
    sums = np.zeros((len(counts), 6), np.int64)
    sums[:, 0] = sums[:, 1] = counts
    out.add(
        "score", "rounds", np.repeat(policies, span), np.tile(np.arange(lo, lo + span), P), sums
    )
    a, b = np.repeat(policies, P), np.tile(policies, P)
    for f, figure in enumerate(VERSUS_FIGURES):
        out.add("versus", figure, a, np.full(P * P, -1), vs_s[f].reshape(-1, 6), b)


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


def _add_sums(acc: np.ndarray, i: int, y: float, n: float) -> None:
    """One cluster's (y, n) into group i's six sums (G, Sy, Sn, Syy, Snn, Syn): row i of
    `acc` (a 2-d view of the pass's sums, so that no view is made per call)."""
    acc[i, 0] += 1.0
    acc[i, 1] += y
    acc[i, 2] += n
    acc[i, 3] += y * y
    acc[i, 4] += n * n
    acc[i, 5] += y * n


_add = _add_sums  # the compiled form once _pass() has run (what _accumulate calls)


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
    group's (1, y, n, y², n², y·n) added in. float64 holds these integers exactly (< 2**53).
    The columns come in their schema dtypes (GAME_COLUMNS, ROUND_COLUMNS); `first` is the
    shard's first game id. Small integers are widened before any arithmetic."""
    k = len(gpol) // n
    pol_s = np.zeros((7, P, 6))
    cell_s = np.zeros((5, 6))
    seat_s = np.zeros((2, n, P + 1, 6))
    pos_s = np.zeros((3, n, P + 1, 6))
    score_c = np.zeros((P, max(span, 0)), np.int64)
    vs_s = np.zeros((2, P, P, 6))
    pol2 = pol_s.reshape(7 * P, 6)  # row f * P + p
    seat2 = seat_s.reshape(2 * n * (P + 1), 6)  # row (f * n + seat) * (P + 1) + q
    pos2 = pos_s.reshape(3 * n * (P + 1), 6)  # row (f * n + position) * (P + 1) + q
    vs2 = vs_s.reshape(2 * P * P, 6)  # row p * P + b: figure 'ahead'
    # win and points: each policy's (y, n) per game it sat in, the policy's g-th such game at g
    game_y = np.zeros((2, P, k), np.int64)
    game_n = np.zeros((2, P, k), np.int64)
    sat = np.zeros(P, np.int64)
    g_pol = np.zeros((7, P))  # per game: wins, points, rank, busts, flip7s, stays, freezes
    g_seats = np.zeros(P)
    g_rounds = np.zeros(P)  # seat-rounds from the games rows
    r_rounds = np.zeros(P)  # round rows of the policy
    p_val = np.zeros((3, n, P + 1))  # per position: points, busts, flip7s
    p_rounds = np.zeros((n, P + 1))
    v_meet = np.zeros((P, P))
    v_ahead = np.zeros((P, P))
    v_behind = np.zeros((P, P))
    c_busts = 0.0
    c_flip7s = 0.0
    r = 0
    nr = len(rgame)
    for g in range(k):
        base = g * n
        g_pol[:] = 0.0
        g_seats[:] = 0.0
        g_rounds[:] = 0.0
        r_rounds[:] = 0.0
        p_val[:] = 0.0
        p_rounds[:] = 0.0
        v_meet[:] = 0.0
        v_ahead[:] = 0.0
        v_behind[:] = 0.0
        c_busts = 0.0
        c_flip7s = 0.0
        c_points = 0.0
        c_seat_rounds = 0.0
        for s in range(n):
            i = base + s
            p = np.int64(gpol[i])
            g_seats[p] += 1.0
            g_pol[0, p] += win[i]
            g_pol[1, p] += total[i]
            g_pol[2, p] += rank[i]
            g_rounds[p] += grounds[i]
            c_points += total[i]
            c_seat_rounds += grounds[i]
            for q in (p, P):  # the seat's own policy, then every policy pooled
                _add(seat2, (0 * n + s) * (P + 1) + q, win[i], 1.0)
                _add(seat2, (1 * n + s) * (P + 1) + q, total[i], grounds[i])
            for t in range(n):
                j = base + t
                if t != s and gpol[j] != p:
                    v_meet[p, gpol[j]] += 1.0
                    if rank[i] < rank[j]:
                        v_ahead[p, gpol[j]] += 1.0
                    elif rank[i] > rank[j]:
                        v_behind[p, gpol[j]] += 1.0
        while r < nr and rgame[r] - first == g:
            p = np.int64(rpol[r])
            r_rounds[p] += 1.0
            g_pol[3, p] += busted[r]
            g_pol[4, p] += flip7[r]
            g_pol[5, p] += 1.0 if status[r] == 1 else 0.0
            g_pol[6, p] += 1.0 if status[r] == 2 else 0.0
            c_busts += busted[r]
            c_flip7s += flip7[r]
            pos = np.int64(rseat[r]) - np.int64(dealer[r]) - 1  # -n .. n-2: one wrap at most
            if pos < 0:
                pos += n
            p_rounds[pos, p] += 1.0
            p_val[0, pos, p] += score[r]
            p_val[1, pos, p] += busted[r]
            p_val[2, pos, p] += flip7[r]
            score_c[p, np.int64(score[r]) - lo] += 1
            r += 1
        for pos in range(n):  # every policy pooled: the sums over the policies, per game
            p_rounds[pos, P] = 0.0
            for f in range(3):
                p_val[f, pos, P] = 0.0
            for p in range(P):
                p_rounds[pos, P] += p_rounds[pos, p]
                for f in range(3):
                    p_val[f, pos, P] += p_val[f, pos, p]
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
            for b in range(P):
                if v_meet[p, b] > 0:
                    _add(vs2, p * P + b, v_ahead[p, b], v_ahead[p, b] + v_behind[p, b])
                    vs_s[1, p, b, 0] += 1.0
                    vs_s[1, p, b, 1] += v_meet[p, b]
        _add(cell_s, 0, grounds[base], 1.0)
        _add(cell_s, 1, c_points, c_seat_rounds)
        _add(cell_s, 2, c_busts, c_seat_rounds)
        _add(cell_s, 3, c_flip7s, c_seat_rounds)
        _add(cell_s, 4, events[base], 1.0)
        for pos in range(n):
            for q in range(P + 1):
                if p_rounds[pos, q] > 0:
                    for f in range(3):
                        _add(pos2, (f * n + pos) * (P + 1) + q, p_val[f, pos, q], p_rounds[pos, q])
    return (
        pol_s.astype(np.int64),
        cell_s.astype(np.int64),
        seat_s.astype(np.int64),
        pos_s.astype(np.int64),
        score_c,
        vs_s.astype(np.int64),
        game_y,
        game_n,
    )
