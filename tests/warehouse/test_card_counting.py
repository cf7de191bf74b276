"""card_counting's figures and intervals against numpy over the raw games files, and against the
marts that give each side's own figure (points_per_round, win_rates).

The lake is lakes.CELL_SPECS: a CRN pair `ev pair`/`evc pair`, a CRN pair `evc twice`/`evc
once` where evc also sits in a seat that is not swapped, a `mix` cell that seats ev and evc at
one table, and cells of one and of two games that seat ev. Two different cells are independent
(their variances add, each with its own G / (G - 1)); a pair of games on the same shuffles is
one cluster; each side's figure is the pooled ratio, the same number as its cell's own mart.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest

from warehouse import connect

Z = 1.959963984540054
MEASURES = {"ppr": ("points", "rounds"), "win": ("wins", "seats")}


@pytest.fixture(scope="module")
def con(spec_lake: Path) -> duckdb.DuckDBPyConnection:
    return connect(spec_lake, materialize=True)


@pytest.fixture(scope="module")
def games(spec_lake: Path) -> pd.DataFrame:
    """Per run, cell label, field size, policy and game: (wins, seats, points, rounds), numpy
    and pandas over the games files only."""
    labels = {}
    for path in (spec_lake / "runs").glob("*/manifest.json"):
        m = json.loads(path.read_text())
        for c in m["cells"]:
            labels[(m["run"], c["cell"])] = c.get("label") or ",".join(c["lineup"])
    t = ds.dataset(spec_lake / "games", format="parquet", partitioning="hive").to_table()
    df = t.select(["run", "players", "cell", "cell_game", "policy", "winner", "total", "rounds"])
    g = df.to_pandas()
    for col in ("run", "policy"):
        g[col] = g[col].astype(str)
    g["players"] = g["players"].astype(int)
    g["lineup"] = [labels[(r, c)] for r, c in zip(g["run"], g["cell"], strict=True)]
    g["wins"] = g["winner"].astype(int)
    return g.groupby(["run", "lineup", "players", "policy", "cell_game"], as_index=False).agg(
        wins=("wins", "sum"),
        seats=("wins", "size"),
        points=("total", "sum"),
        rounds=("rounds", "sum"),
    )


def side(games: pd.DataFrame, run: str, lineup: str, players: int, policy: str) -> pd.DataFrame:
    s = games[
        (games.run == run)
        & (games.lineup == lineup)
        & (games.players == players)
        & (games.policy == policy)
    ]
    return s.set_index("cell_game").sort_index()


def cell_variance(y: np.ndarray, n: np.ndarray) -> float:
    """One cell's clustered variance of sum(y) / sum(n): G / (G - 1) sum (y - R n)^2 / Sn^2,
    NaN under two games."""
    g = len(y)
    if g < 2:
        return math.nan
    r = y.sum() / n.sum()
    return g / (g - 1) * float(((y - r * n) ** 2).sum()) / n.sum() ** 2


def rows(con: duckdb.DuckDBPyConnection, where: str) -> pd.DataFrame:
    got = con.execute(f"SELECT * FROM card_counting WHERE {where} ORDER BY ALL").df()
    assert len(got), where
    return got


def test_a_one_game_cell_has_no_interval(con: duckdb.DuckDBPyConnection) -> None:
    """A cell of one game has no variance: a comparison with it has a gain and no interval
    (NULL, never a zero-width contribution)."""
    got = rows(con, "base_lineup = 'one game'")
    assert set(got.method) == {"unpaired"}
    for m in MEASURES:
        assert got[f"{m}_gain"].notna().all()
        for col in (f"{m}_gain_se", f"{m}_gain_lo", f"{m}_gain_hi"):
            assert got[col].isna().all(), col


def test_two_cells_add_their_own_clustered_variances(
    con: duckdb.DuckDBPyConnection, games: pd.DataFrame
) -> None:
    """Across two cells (a 2-game cell among them) the gain is R_c - R_b and its variance is
    the two cells' variances, each with its own G / (G - 1)."""
    got = rows(con, "method = 'unpaired' AND lineup <> base_lineup")
    assert "two games" in set(got.base_lineup)
    for row in got.itertuples():
        c = side(games, row.run, row.lineup, row.players, row.counting)
        b = side(games, row.run, row.base_lineup, row.players, row.base)
        assert row.games == len(c) + len(b)
        for m, (y, n) in MEASURES.items():
            rc = c[y].sum() / c[n].sum()
            rb = b[y].sum() / b[n].sum()
            var = cell_variance(c[y].to_numpy(float), c[n].to_numpy(float)) + cell_variance(
                b[y].to_numpy(float), b[n].to_numpy(float)
            )
            assert getattr(row, f"{m}_counting") == pytest.approx(rc, rel=1e-12)
            assert getattr(row, f"{m}_gain") == pytest.approx(rc - rb, rel=1e-12, abs=1e-12)
            se = getattr(row, f"{m}_gain_se")
            if math.isnan(var):
                assert pd.isna(se), (row.lineup, row.base_lineup, m)
            else:
                assert se == pytest.approx(math.sqrt(var), rel=1e-9), (row.base_lineup, m)
                assert getattr(row, f"{m}_gain_hi") == pytest.approx(
                    rc - rb + Z * math.sqrt(var), rel=1e-9
                )


#: Each card_counting row (k) beside the points_per_round rows of its two sides: the counting
#: policy in its line-up (c) and the twin in the base line-up (b).
WITH_TWO_CELLS_PPR = """
        FROM card_counting AS k
        JOIN points_per_round AS c
          ON (c.run, c.players, c.lineup, c.policy) = (k.run, k.players, k.lineup, k.counting)
        JOIN points_per_round AS b
          ON (b.run, b.players, b.lineup, b.policy)
           = (k.run, k.players, k.base_lineup, k.base)
"""


def gain_by_delta(c: pd.DataFrame, b: pd.DataFrame, y: str, n: str) -> tuple[float, float, float]:
    """The counting side's and the base side's pooled ratios sum(y) / sum(n), and the
    delta-method standard error of their difference with one cluster per row (rows aligned)."""
    yc, nc = c[y].to_numpy(float), c[n].to_numpy(float)
    yb, nb = b[y].to_numpy(float), b[n].to_numpy(float)
    rc, rb = yc.sum() / nc.sum(), yb.sum() / nb.sum()
    e = (yc - rc * nc) / nc.sum() - (yb - rb * nb) / nb.sum()
    return rc, rb, math.sqrt(len(e) / (len(e) - 1) * float((e * e).sum()))


def test_two_cells_interval_is_the_cells_own_intervals_added(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The same figures as points_per_round and win_rates give each cell: values, and standard
    errors squared that add up to the gain's (as `flip7 compare` adds two runs')."""
    got = con.execute(
        """
        SELECT k.lineup, k.base_lineup, k.ppr_counting, k.ppr_base, k.ppr_gain_se,
               k.win_counting, k.win_base,
               c.points_per_round AS ppr_c, c.se AS se_c, b.points_per_round AS ppr_b,
               b.se AS se_b, wc.win_rate AS win_c, wb.win_rate AS win_b
        """
        + WITH_TWO_CELLS_PPR
        + """
        JOIN win_rates AS wc
          ON (wc.run, wc.players, wc.lineup, wc.policy) = (k.run, k.players, k.lineup, k.counting)
        JOIN win_rates AS wb
          ON (wb.run, wb.players, wb.lineup, wb.policy)
           = (k.run, k.players, k.base_lineup, k.base)
        WHERE k.method = 'unpaired' AND k.lineup <> k.base_lineup
        """
    ).df()
    assert len(got) >= 3
    np.testing.assert_allclose(got.ppr_counting, got.ppr_c, rtol=1e-12)
    np.testing.assert_allclose(got.ppr_base, got.ppr_b, rtol=1e-12)
    np.testing.assert_allclose(got.win_counting, got.win_c, rtol=1e-12)
    np.testing.assert_allclose(got.win_base, got.win_b, rtol=1e-12)
    want = np.sqrt(got.se_c.to_numpy(float) ** 2 + got.se_b.to_numpy(float) ** 2)
    have = got.ppr_gain_se.to_numpy(float)
    assert (np.isnan(want) == np.isnan(have)).all()
    np.testing.assert_allclose(have, want, rtol=1e-9)


def test_paired_figures_are_pooled_ratios_clustered_by_pair(
    con: duckdb.DuckDBPyConnection, games: pd.DataFrame
) -> None:
    """Paired rows: each side's figure is sum(y) / sum(n) over the paired games (every seat of
    the policy there, as its cell's own mart counts them), and the gain's interval is the
    delta-method variance of R_c - R_b with a pair of games as the cluster."""
    got = rows(con, "method = 'paired'")
    assert {"evc pair", "evc twice"} <= set(got.lineup)
    for row in got.itertuples():
        c = side(games, row.run, row.lineup, row.players, row.counting)
        b = side(games, row.run, row.base_lineup, row.players, row.base)
        c, b = c.align(b, join="inner", axis=0)
        assert row.pairs == row.games == len(c) >= 2
        for m, (y, n) in MEASURES.items():
            rc, rb, se = gain_by_delta(c, b, y, n)
            assert getattr(row, f"{m}_counting") == pytest.approx(rc, rel=1e-12)
            assert getattr(row, f"{m}_base") == pytest.approx(rb, rel=1e-12)
            assert getattr(row, f"{m}_gain") == pytest.approx(rc - rb, rel=1e-12, abs=1e-12)
            assert getattr(row, f"{m}_gain_se") == pytest.approx(se, rel=1e-9)
            assert getattr(row, f"{m}_gain_lo") == pytest.approx(rc - rb - Z * se, rel=1e-9)


def test_paired_points_per_round_is_the_points_per_round_mart(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """ppr_counting and ppr_base of a paired row are the points_per_round mart's figures of
    those cells and policies (every game of the two cells is paired here)."""
    got = con.execute(
        """
        SELECT k.ppr_counting, c.points_per_round AS c, k.ppr_base, b.points_per_round AS b
        """
        + WITH_TWO_CELLS_PPR
        + """
        WHERE k.method = 'paired'
        """
    ).df()
    assert len(got) == 2
    np.testing.assert_allclose(got.ppr_counting, got.c, rtol=1e-12)
    np.testing.assert_allclose(got.ppr_base, got.b, rtol=1e-12)


def test_one_cell_keeps_the_covariance_of_sharing_a_table(
    con: duckdb.DuckDBPyConnection, games: pd.DataFrame
) -> None:
    """Both policies in one cell: the clusters are its games, e_g over both sides together."""
    got = rows(con, "method = 'unpaired' AND lineup = base_lineup")
    for row in got.itertuples():
        c = side(games, row.run, row.lineup, row.players, row.counting)
        b = side(games, row.run, row.base_lineup, row.players, row.base)
        idx = c.index.union(b.index)
        c, b = c.reindex(idx, fill_value=0), b.reindex(idx, fill_value=0)
        assert row.games == len(idx)
        for m, (y, n) in MEASURES.items():
            rc, rb, se = gain_by_delta(c, b, y, n)
            assert getattr(row, f"{m}_gain") == pytest.approx(rc - rb, rel=1e-12, abs=1e-12)
            assert getattr(row, f"{m}_gain_se") == pytest.approx(se, rel=1e-9)
