"""The SQL interval macros (warehouse/sql/macros/stats.sql) against flip7.stats.cluster_ratio."""

from __future__ import annotations

import math
import random

import duckdb
import pyarrow as pa
import pytest

from flip7.stats import RatioSums, cluster_ratio
from warehouse.build import SQL_DIR


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute((SQL_DIR / "macros" / "stats.sql").read_text())
    return con


def _groups() -> dict[int, list[tuple[float, float]]]:
    """Many random groups of (y, n) clusters, plus the edge cases: one game, zero variance
    (y = R n in every game), every y zero, a rate near 1 (clipped), negative and large y."""
    rng = random.Random(20261201)
    groups: dict[int, list[tuple[float, float]]] = {}
    for g in range(300):
        size = rng.choice([2, 3, 5, 17, 200])
        kind = g % 3
        if kind == 0:  # win rates: n seats, y wins <= n
            pairs = [(rng.randint(0, 1), rng.choice([1, 1, 2])) for _ in range(size)]
            groups[g] = [(min(y, n), n) for y, n in pairs]
        elif kind == 1:  # points per round: totals over rounds
            groups[g] = [(rng.randint(0, 400), rng.randint(3, 30)) for _ in range(size)]
        else:  # paired differences, n = 1
            groups[g] = [(rng.uniform(-40, 40), 1) for _ in range(size)]
    groups[1000] = [(1, 1)]  # one game
    groups[1001] = [(7, 1)]
    groups[1002] = [(1, 2)] * 50  # zero variance
    groups[1003] = [(6, 3), (2, 1), (10, 5)]  # zero variance, unequal n
    groups[1004] = [(0, 1)] * 9  # all zero
    groups[1005] = [(1, 1)] * 30 + [(0, 1)]  # near 1: the upper end clips
    groups[1006] = [(-5.5, 1), (3.25, 1)]  # two games, negative y
    groups[1007] = [(1e6 + i, 1000 + i % 7) for i in range(400)]  # large sums
    groups[1008] = [(1, 1), (2, 2), (1, 1)]  # every event: a rate of exactly 1
    groups[1009] = [(0, 1), (0, 2)] * 150  # no event in 300 games
    return groups


def _expected(pairs: list[tuple[float, float]], clip: bool) -> tuple[float, float, float, float]:
    est = RatioSums.of(pairs).estimate(clip=(0.0, 1.0) if clip else None)
    return est.value, est.lo, est.hi, est.half_width


def _same(got: float | None, want: float) -> bool:
    if math.isnan(want):
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


def test_aggregate_macros_match_cluster_ratio(con: duckdb.DuckDBPyConnection) -> None:
    """clustered_* over one row per game give flip7.stats' value, interval and half-width."""
    groups = _groups()
    rows = [(g, y, n) for g, pairs in groups.items() for y, n in pairs]
    g, y, n = (list(col) for col in zip(*rows, strict=True))
    clusters = pa.table({"g": pa.array(g, pa.int32()), "y": y, "n": pa.array(n, pa.float64())})
    con.register("clusters", clusters)
    got = con.execute(
        """
        SELECT g, sum(y) / sum(n), clustered_lo(y, n), clustered_hi(y, n), clustered_half(y, n),
               clustered_rate_lo(y, n), clustered_rate_hi(y, n)
        FROM clusters GROUP BY g
        """
    ).fetchall()
    assert len(got) == len(groups)
    for g, value, lo, hi, half, rate_lo, rate_hi in got:
        want = _expected(groups[g], clip=False)
        assert _same(value, want[0]) and _same(half, want[3]), g
        assert _same(lo, want[1]) and _same(hi, want[2]), g
        clipped = _expected(groups[g], clip=True)
        assert _same(rate_lo, clipped[1]) and _same(rate_hi, clipped[2]), g
    assert any(lo is None for _, _, lo, *_ in got)  # the one-game groups have no interval
    one = next(r for r in got if r[0] == 1002)
    assert one[4] == 0.0  # zero variance: a zero half-width, not NULL
    near_one = next(r for r in got if r[0] == 1005)
    assert near_one[6] == 1.0 and near_one[3] > 1.0  # clipped rate, unclipped ratio


def test_sum_macros_match_cluster_ratio(con: duckdb.DuckDBPyConnection) -> None:
    """cluster_ratio_*(g, sy, sn, syy, snn, syn) on the six sums equal cluster_ratio on them,
    including no games, one game and a zero denominator."""
    cases = [RatioSums.of(pairs) for pairs in _groups().values()]
    cases += [RatioSums(), RatioSums(1, 3, 2, 9, 4, 6), RatioSums(3, 0, 0, 0, 0, 0)]
    for s in cases:
        args = (s.games, s.sum_y, s.sum_n, s.sum_yy, s.sum_nn, s.sum_yn)
        got = con.execute(
            "SELECT cluster_ratio_lo($1, $2, $3, $4, $5, $6), cluster_ratio_hi($1, $2, $3, $4, $5, "
            "$6), cluster_ratio_half($1, $2, $3, $4, $5, $6), cluster_rate_lo($1, $2, $3, $4, "
            "$5, $6), cluster_rate_hi($1, $2, $3, $4, $5, $6)",
            list(args),
        ).fetchall()[0]
        want = cluster_ratio(*args)
        clipped = cluster_ratio(*args, clip=(0.0, 1.0))
        assert _same(got[0], want.lo) and _same(got[1], want.hi) and _same(got[2], want.half_width)
        assert _same(got[3], clipped.lo) and _same(got[4], clipped.hi)


def test_index_macros_are_the_unclipped_ratio_of_wins_to_expected_wins(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """clustered_index_*(wins, seats, players) = the clustered ratio of wins to seats / n,
    unclipped: a policy that wins nearly every game has its index interval reach above n (the
    clipped win rate's bounds times n would stop at n)."""
    rng = random.Random(7)
    groups: dict[int, tuple[int, list[tuple[int, int]]]] = {}
    for g in range(60):
        players = rng.choice([2, 3, 4, 8])
        groups[g] = (
            players,
            [(rng.randint(0, 1), rng.choice([1, 1, 2])) for _ in range(rng.choice([2, 5, 40]))],
        )
    groups[100] = (2, [(1, 1)] * 40 + [(0, 1)])  # wins nearly always: the rate's end clips
    groups[101] = (3, [(0, 1)] * 40 + [(1, 1)])  # nearly never: the rate's start clips
    groups[102] = (4, [(1, 1)])  # one game: no interval
    groups[103] = (3, [(0, 1), (0, 2)] * 50)  # never wins: [0, n x the no-event bound]
    groups[104] = (1, [(1, 1)] * 30)  # alone, wins every game
    rows = [(g, p, w, s) for g, (p, pairs) in groups.items() for w, s in pairs]
    g, p, w, s = (list(col) for col in zip(*rows, strict=True))
    con.register("per_game", pa.table({"g": g, "players": p, "wins": w, "seats": s}))
    got = con.execute(
        """
        SELECT g, clustered_index(wins, seats, players), clustered_index_lo(wins, seats, players),
               clustered_index_hi(wins, seats, players), clustered_index_half(wins, seats, players)
        FROM per_game GROUP BY g
        """
    ).fetchall()
    assert len(got) == len(groups)
    for g, value, lo, hi, half in got:
        players, pairs = groups[g]
        wins, seats = sum(w for w, _ in pairs), sum(s for _, s in pairs)
        if len(pairs) >= 2 and wins in (0, seats):
            # no win (or a win in every seat): the rate's exact no-event bound, times n
            rate = RatioSums.of(pairs).estimate(clip=(0.0, 1.0))
            assert _same(lo, rate.lo * players) and _same(hi, rate.hi * players), g
            assert _same(half, rate.half_width * players), g
            continue
        want = RatioSums.of((w, s / players) for w, s in pairs).estimate()
        assert _same(value, want.value) and _same(half, want.half_width), g
        assert _same(lo, want.lo) and _same(hi, want.hi), g
        rate = RatioSums.of(pairs).estimate()  # the same interval, on the rate's scale
        assert _same(lo, rate.lo * players if not math.isnan(rate.lo) else math.nan), g
    by_group = {row[0]: row for row in got}
    assert by_group[100][3] > 2.0 and by_group[101][2] < 0.0  # not clipped to [0, n]
    assert by_group[102][2] is None
    assert by_group[103][2] == 0.0 and by_group[103][3] == pytest.approx(
        3 * (1 - 0.025 ** (1 / 150))
    )
