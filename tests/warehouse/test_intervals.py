"""Every interval of every mart, recomputed here from the raw Parquet tables with flip7.stats.

One parametrised test: for each mart and each of its figures (a rate, a mean or a gain with
its `_lo`/`_hi` columns), the expected figure and 95% interval per row come from the games and
rounds files read with pyarrow/pandas, grouped into clusters (a game; a CRN pair of games for
paired comparisons) as docs/warehouse.md defines them, and `flip7.stats.RatioSums`. Nothing
here reads a view or a macro of the warehouse.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from flip7.stats import RatioSums
from warehouse import connect

from .lakes import Lake, read_lake

CELL = ["run", "variant", "ruleset", "players", "lineup"]
RATE = (0.0, 1.0)


@dataclass(frozen=True)
class Raw:
    games: pd.DataFrame  # one row per seat per game, with the cell's columns
    rounds: pd.DataFrame  # one row per seat per round, with the cell's columns


def _read(root: Path, table: str) -> pd.DataFrame:
    df = read_lake(root, table).to_pandas()
    for col in df.columns:
        if isinstance(df[col].dtype, pd.CategoricalDtype) or df[col].dtype == object:
            df[col] = df[col].astype(str)
    return df


LAKES = ("runs", "specs")


@pytest.fixture(scope="module", params=LAKES)
def root(request: pytest.FixtureRequest, lake: Lake) -> Path:
    """Each test lake in turn: the session lake (lakes.RUNS) and the spec lake."""
    if request.param == "runs":
        return lake.root
    path: Path = request.getfixturevalue("spec_lake")
    return path


def _raw(root: Path) -> Raw:
    labels, seatings = {}, {}
    for path in (root / "runs").glob("*/manifest.json"):
        m = json.loads(path.read_text())
        for c in m["cells"]:
            labels[(m["run"], c["cell"])] = c.get("label") or ",".join(c["lineup"])
            seatings[(m["run"], c["cell"])] = ",".join(c["lineup"])  # in seat order, unrotated
    games = _read(root, "games")
    games["players"] = games["players"].astype(int)
    cells = list(zip(games["run"], games["cell"], strict=True))
    games["lineup"] = [labels[k] for k in cells]
    games["seating"] = [seatings[k] for k in cells]
    cell_of = games.drop_duplicates(["run", "game"]).set_index(["run", "game"])
    rounds = _read(root, "rounds")
    rounds["players"] = rounds["players"].astype(int)
    idx = pd.MultiIndex.from_arrays([rounds["run"], rounds["game"]])
    for col in ("variant", "ruleset", "lineup", "seating", "seed"):
        rounds[col] = cell_of[col].reindex(idx).to_numpy()
    return Raw(games, rounds)


@pytest.fixture(scope="module")
def raw(root: Path) -> Raw:
    return _raw(root)


@pytest.fixture(scope="module")
def con(root: Path) -> duckdb.DuckDBPyConnection:
    return connect(root, materialize=True)


def estimate(
    df: pd.DataFrame, keys: list[str], y: str, n: str, clip: tuple[float, float] | None
) -> pd.DataFrame:
    """One row per group of `keys`: value, lo, hi from the group's rows, one row per cluster."""
    out = {}
    for key, g in df.groupby(keys, sort=False):
        pairs = zip(g[y].astype(float), g[n].astype(float), strict=True)
        e = RatioSums.of(pairs).estimate(clip=clip)
        out[key] = (e.value, e.lo, e.hi)
    return _frame(out, keys)


def index_estimate(df: pd.DataFrame, keys: list[str], wins: str, seats: str) -> pd.DataFrame:
    """The win index per group, `expected` (seats / n) beside `seats`: the unclipped clustered
    ratio of wins to expected wins; with no win (or a win in every seat) in two games or more,
    the exact 95% bound for no event in the group's seats, times seats / expected wins."""
    out = {}
    for key, g in df.groupby(keys, sort=False):
        w, n, e = (g[c].astype(float) for c in (wins, seats, "expected"))
        value = w.sum() / e.sum()
        if len(g) >= 2 and w.sum() in (0.0, n.sum()):
            bound = (1 - 0.025 ** (1 / n.sum())) * n.sum() / e.sum()
            out[key] = (value, 0.0, bound) if w.sum() == 0 else (value, value - bound, value)
            continue
        est = RatioSums.of(zip(w, e, strict=True)).estimate()
        out[key] = (est.value, est.lo, est.hi)
    return _frame(out, keys)


def _frame(rows: dict[object, tuple[float, float, float]], keys: list[str]) -> pd.DataFrame:
    """value, lo, hi indexed by `keys` (a MultiIndex even for one key)."""
    index = pd.MultiIndex.from_tuples(
        [k if isinstance(k, tuple) else (k,) for k in rows], names=keys
    )
    return pd.DataFrame(list(rows.values()), index=index, columns=["value", "lo", "hi"])


# --- the expected figures, one function per (mart, figure) ---------------------------------


def policy_games(raw: Raw) -> pd.DataFrame:
    g = raw.games.assign(win=raw.games["winner"].astype(int), played=raw.games["rounds"])
    return g.groupby([*CELL, "policy", "game"], as_index=False).agg(
        seats=("seat", "size"),
        wins=("win", "sum"),
        points=("total", "sum"),
        rounds=("played", "sum"),
    )


def win_rate(raw: Raw) -> pd.DataFrame:
    return estimate(policy_games(raw), [*CELL, "policy"], "wins", "seats", RATE)


def win_index(raw: Raw) -> pd.DataFrame:
    # An index is not a rate: the unclipped interval times n, never the clipped rate's bounds.
    pg = policy_games(raw)
    return index_estimate(
        pg.assign(expected=pg["seats"] / pg["players"]), [*CELL, "policy"], "wins", "seats"
    )


def points_per_round(raw: Raw) -> pd.DataFrame:
    return estimate(policy_games(raw), [*CELL, "policy"], "points", "rounds", None)


def round_rate(status: Callable[[pd.DataFrame], pd.Series]) -> Callable[[Raw], pd.DataFrame]:
    def expected(raw: Raw) -> pd.DataFrame:
        r = raw.rounds.assign(hit=status(raw.rounds).astype(int))
        per_game = r.groupby([*CELL, "policy", "game"], as_index=False).agg(
            y=("hit", "sum"), n=("hit", "size")
        )
        return estimate(per_game, [*CELL, "policy"], "y", "n", RATE)

    return expected


def _with_all(df: pd.DataFrame) -> pd.DataFrame:
    """Rows once per policy and once more as policy '*' (all policies pooled)."""
    return pd.concat([df, df.assign(policy="*")])


def seat_win_rate(raw: Raw) -> pd.DataFrame:
    # A seat sits once in a game: one cluster per game, n = 1 seat, y = 1 if it won.
    g = _with_all(raw.games.assign(y=raw.games["winner"].astype(int), n=1))
    return estimate(g, [*CELL, "seat", "policy"], "y", "n", RATE)


def seat_win_index(raw: Raw) -> pd.DataFrame:
    g = _with_all(raw.games.assign(y=raw.games["winner"].astype(int), n=1))
    g = g.assign(expected=1 / g["players"].astype(float))
    return index_estimate(g, [*CELL, "seat", "policy"], "y", "n")


def seat_points(raw: Raw) -> pd.DataFrame:
    g = _with_all(raw.games)
    return estimate(g, [*CELL, "seat", "policy"], "total", "rounds", None)


def dealer(y: str, clip: tuple[float, float] | None) -> Callable[[Raw], pd.DataFrame]:
    def expected(raw: Raw) -> pd.DataFrame:
        r = raw.rounds
        pos = (r["seat"].astype(int) - r["dealer"].astype(int) - 1) % r["players"]
        r = r.assign(
            position=pos.astype(int),
            points=r["score"].astype(float),
            busts=r["busted"].astype(int),
            flip7s=r["flip7"].astype(int),
        )
        per_game = (
            _with_all(r)
            .groupby([*CELL, "position", "policy", "game"], as_index=False)
            .agg(y=(y, "sum"), n=(y, "size"))
        )
        return estimate(per_game, [*CELL, "position", "policy"], "y", "n", clip)

    return expected


def _ranked(raw: Raw) -> pd.DataFrame:
    return raw.games[[*CELL, "game", "seat", "policy", "rank"]]


def ahead_share(raw: Raw) -> pd.DataFrame:
    g = _ranked(raw)
    m = g.merge(g, on=[*CELL, "game"], suffixes=("", "_b"))
    m = m[(m["seat"] != m["seat_b"]) & (m["policy"] != m["policy_b"])]
    m = m.assign(
        ahead=(m["rank"] < m["rank_b"]).astype(int), decided=(m["rank"] != m["rank_b"]).astype(int)
    ).rename(columns={"policy_b": "opponent"})
    per_game = m.groupby([*CELL, "policy", "opponent", "game"], as_index=False)[
        ["ahead", "decided"]
    ].sum()
    return estimate(per_game, [*CELL, "policy", "opponent"], "ahead", "decided", RATE)


def league_win_index(raw: Raw) -> pd.DataFrame:
    pg = policy_games(raw)
    pg = pg.assign(expected=pg["seats"] / pg["players"])
    # games of different cells are different clusters: group by (run, game) within a policy
    return index_estimate(pg, ["run", "policy"], "wins", "seats")


VARIANT_CELL = ["variant", "ruleset", "players", "lineup", "seating", "policy"]


def variant_figure(
    y: str, n: str, clip: tuple[float, float] | None, scale: bool = False
) -> Callable[[Raw], pd.DataFrame]:
    """A cell over its runs: the label AND the seating make the cell (a label given to another
    line-up is another cell), and games on one shuffle (equal seeds: runs sharing a root seed)
    are one cluster."""

    def expected(raw: Raw) -> pd.DataFrame:
        g = raw.games.assign(win=raw.games["winner"].astype(int), played=raw.games["rounds"])
        per_game = [*CELL, "seating", "policy", "game", "seed"]
        pg = g.groupby(per_game, as_index=False).agg(
            seats=("seat", "size"),
            wins=("win", "sum"),
            points=("total", "sum"),
            rounds=("played", "sum"),
        )
        r = raw.rounds.assign(busts=raw.rounds["busted"].astype(int), f7=raw.rounds["flip7"])
        counts = r.groupby(per_game, as_index=False).agg(
            busts=("busts", "sum"), flip7s=("f7", "sum")
        )
        pg = pg.merge(counts, on=per_game)
        shuffles = pg.groupby([*VARIANT_CELL, "seed"], as_index=False)[
            ["seats", "wins", "points", "rounds", "busts", "flip7s"]
        ].sum()
        if scale:  # the win index
            shuffles = shuffles.assign(expected=shuffles[n] / shuffles["players"])
            return index_estimate(shuffles, VARIANT_CELL, y, n)
        return estimate(shuffles, VARIANT_CELL, y, n, clip)

    return expected


def twin(policy: str) -> str:
    return re.sub(r"^([A-Za-z_][A-Za-z0-9_]*)c(:|$)", r"\1\2", policy)


def _paired_games(raw: Raw) -> pd.DataFrame:
    """One row per CRN pair of games whose cells differ only by counting/twin swaps: the
    counting policy's (wins, seats, points, rounds) over all its seats in its game (_c) and the
    twin's in the other game (_b)."""
    g = raw.games.assign(win=raw.games["winner"].astype(int))
    rows = []
    by_game = {
        k: v.sort_values("seat")
        for k, v in g.groupby(["run", "players", "pair", "cell_game", "cell"])
    }
    cells = g.groupby(["run", "players", "pair"])["cell"].unique()
    for (run, players, pair), cs in cells.items():
        for a in cs:
            for b in cs:
                if a == b:
                    continue
                for i in g[(g.run == run) & (g.cell == a)]["cell_game"].unique():
                    ga, gb = (
                        by_game.get((run, players, pair, i, a)),
                        by_game.get((run, players, pair, i, b)),
                    )
                    if gb is None:
                        continue
                    pa, pb = list(ga["policy"]), list(gb["policy"])
                    differ = [s for s in range(players) if pa[s] != pb[s]]
                    swaps = [s for s in differ if twin(pa[s]) == pb[s]]
                    if not swaps or swaps != differ or len({pa[s] for s in swaps}) != 1:
                        continue
                    counting, base = pa[swaps[0]], pb[swaps[0]]
                    side_c = ga[ga["policy"] == counting]
                    side_b = gb[gb["policy"] == base]
                    rows.append(
                        {
                            "run": run,
                            "players": players,
                            "lineup": ga["lineup"].iloc[0],
                            "base_lineup": gb["lineup"].iloc[0],
                            "counting": counting,
                            "base": base,
                            "method": "paired",
                            "wins_c": side_c["win"].sum(),
                            "seats_c": len(side_c),
                            "points_c": side_c["total"].sum(),
                            "rounds_c": side_c["rounds"].sum(),
                            "wins_b": side_b["win"].sum(),
                            "seats_b": len(side_b),
                            "points_b": side_b["total"].sum(),
                            "rounds_b": side_b["rounds"].sum(),
                        }
                    )
    return pd.DataFrame(rows)


COUNTING_KEYS = ["run", "players", "lineup", "base_lineup", "counting", "base", "method"]
MEASURES = {"win": ("wins", "seats"), "ppr": ("points", "rounds")}


def _shared_gain(
    yc: np.ndarray, nc: np.ndarray, yb: np.ndarray, nb: np.ndarray
) -> tuple[float, float, float]:
    """R_c - R_b over clusters both sides share (CRN pairs, or one cell's games), with the
    delta-method variance G / (G - 1) sum e_g^2, e_g = (y_cg - R_c n_cg) / Sn_c -
    (y_bg - R_b n_bg) / Sn_b; no interval under two clusters."""
    rc, rb = yc.sum() / nc.sum(), yb.sum() / nb.sum()
    count = len(yc)
    if count < 2:
        return (rc - rb, math.nan, math.nan)
    e = (yc - rc * nc) / nc.sum() - (yb - rb * nb) / nb.sum()
    half = 1.959963984540054 * math.sqrt(count / (count - 1) * float((e * e).sum()))
    return (rc - rb, rc - rb - half, rc - rb + half)


def _unpaired(
    raw: Raw, paired: set[tuple[object, ...]], measure: str
) -> dict[tuple[object, ...], tuple[float, float, float]]:
    """R_c - R_b: in one cell, the shared-games interval over its games; across two cells
    (different games), each cell's own clustered variance, added."""
    pg = policy_games(raw)
    y, n = MEASURES[measure]
    out = {}
    cells = pg[["run", "players", "lineup", "policy"]].drop_duplicates()
    for c in cells.itertuples():
        for b in cells[(cells.run == c.run) & (cells.players == c.players)].itertuples():
            if b.policy == c.policy or twin(c.policy) != b.policy:
                continue
            key = (c.run, c.players, c.lineup, b.lineup, c.policy, b.policy, "unpaired")
            if key[:-1] + ("paired",) in paired:
                continue
            side_c = pg[
                (pg.run == c.run)
                & (pg.lineup == c.lineup)
                & (pg.policy == c.policy)
                & (pg.players == c.players)
            ]
            side_b = pg[
                (pg.run == b.run)
                & (pg.lineup == b.lineup)
                & (pg.policy == b.policy)
                & (pg.players == b.players)
            ]
            if c.lineup == b.lineup:
                games = sorted(set(side_c.game) | set(side_b.game))
                yc, nc, yb, nb = (
                    side.set_index("game")[col].reindex(games, fill_value=0).to_numpy(float)
                    for side, col in ((side_c, y), (side_c, n), (side_b, y), (side_b, n))
                )
                out[key] = _shared_gain(yc, nc, yb, nb)
                continue
            ec, eb = (
                RatioSums.of(zip(s[y].astype(float), s[n].astype(float), strict=True)).estimate()
                for s in (side_c, side_b)
            )
            half = math.sqrt(ec.half_width**2 + eb.half_width**2)
            gain = ec.value - eb.value
            out[key] = (gain, gain - half, gain + half)
    return out


def counting_gain(measure: str) -> Callable[[Raw], pd.DataFrame]:
    def expected(raw: Raw) -> pd.DataFrame:
        y, n = MEASURES[measure]
        rows = {}
        for key, g in _paired_games(raw).groupby(COUNTING_KEYS, sort=False):
            yc, nc, yb, nb = (g[f"{col}_{side}"].to_numpy(float) for side in "cb" for col in (y, n))
            rows[key] = _shared_gain(yc, nc, yb, nb)
        rows.update(_unpaired(raw, set(rows), measure))
        return _frame(rows, COUNTING_KEYS)

    return expected


@dataclass(frozen=True)
class Case:
    mart: str
    keys: list[str]
    value: str
    lo: str
    hi: str
    expected: Callable[[Raw], pd.DataFrame]
    where: str = "true"


def _cases() -> Iterable[Case]:
    key = [*CELL, "policy"]
    yield Case("win_rates", key, "win_rate", "win_rate_lo", "win_rate_hi", win_rate)
    yield Case("win_rates", key, "win_index", "win_index_lo", "win_index_hi", win_index)
    yield Case("points_per_round", key, "points_per_round", "ppr_lo", "ppr_hi", points_per_round)
    statuses = {
        "bust_rate": lambda r: r["busted"],
        "flip7_rate": lambda r: r["flip7"],
        "stay_rate": lambda r: r["status"] == 1,
        "freeze_rate": lambda r: r["status"] == 2,
    }
    for name, status in statuses.items():
        yield Case("round_rates", key, name, f"{name}_lo", f"{name}_hi", round_rate(status))
    seat = [*CELL, "seat", "policy"]
    yield Case("seat_effects", seat, "win_rate", "win_rate_lo", "win_rate_hi", seat_win_rate)
    yield Case("seat_effects", seat, "win_index", "win_index_lo", "win_index_hi", seat_win_index)
    yield Case(
        "seat_effects",
        seat,
        "points_per_round",
        "points_per_round_lo",
        "points_per_round_hi",
        seat_points,
    )
    pos = [*CELL, "position", "policy"]
    for name, col, clip in (
        ("points_per_round", "points", None),
        ("bust_rate", "busts", RATE),
        ("flip7_rate", "flip7s", RATE),
    ):
        yield Case("dealer_positions", pos, name, f"{name}_lo", f"{name}_hi", dealer(col, clip))
    yield Case(
        "head_to_head",
        [*CELL, "policy", "opponent"],
        "ahead_share",
        "ahead_share_lo",
        "ahead_share_hi",
        ahead_share,
    )
    yield Case(
        "league", ["run", "policy"], "win_index", "win_index_lo", "win_index_hi", league_win_index
    )
    vc = VARIANT_CELL
    yield Case(
        "variant_comparison",
        vc,
        "win_index",
        "win_index_lo",
        "win_index_hi",
        variant_figure("wins", "seats", None, scale=True),
    )
    yield Case(
        "variant_comparison",
        vc,
        "points_per_round",
        "ppr_lo",
        "ppr_hi",
        variant_figure("points", "rounds", None),
    )
    yield Case(
        "variant_comparison",
        vc,
        "bust_rate",
        "bust_rate_lo",
        "bust_rate_hi",
        variant_figure("busts", "rounds", RATE),
    )
    yield Case(
        "variant_comparison",
        vc,
        "flip7_rate",
        "flip7_rate_lo",
        "flip7_rate_hi",
        variant_figure("flip7s", "rounds", RATE),
    )
    for measure in ("ppr", "win"):
        yield Case(
            "card_counting",
            COUNTING_KEYS,
            f"{measure}_gain",
            f"{measure}_gain_lo",
            f"{measure}_gain_hi",
            counting_gain(measure),
        )


CASES = list(_cases())


@pytest.mark.parametrize("case", CASES, ids=[f"{c.mart}.{c.value}" for c in CASES])
def test_interval_matches_an_independent_computation(
    case: Case, con: duckdb.DuckDBPyConnection, raw: Raw
) -> None:
    """The mart's figure and 95% interval, row for row, equal the clustered ratio recomputed
    from the raw games/rounds files; the same rows exist on both sides; one-game groups have no
    interval (NULL), and the test lake's groups are big enough that most rows have one."""
    got = con.execute(f"SELECT * FROM {case.mart}").df().set_index(case.keys).sort_index()
    want = case.expected(raw).sort_index()
    assert sorted(got.index) == sorted(want.index)
    assert got.index.is_unique
    got = got.loc[want.index]
    np.testing.assert_allclose(
        got[case.value].to_numpy(float), want["value"].to_numpy(float), rtol=1e-9, atol=1e-12
    )
    for col, w in ((case.lo, "lo"), (case.hi, "hi")):
        g = got[col].to_numpy(float)
        e = want[w].to_numpy(float)
        assert (np.isnan(g) == np.isnan(e)).all(), col
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, err_msg=col)
    assert (~np.isnan(want["lo"].to_numpy(float))).mean() > 0.5
    assert (want["hi"] - want["lo"]).max() > 0  # a test lake whose intervals have width


def test_a_cell_over_its_runs_is_its_label_and_seating_clustered_by_shuffle(
    spec_lake: Path,
) -> None:
    """variant_comparison: "mix" at 2 players is two cells (cells-clash seats ev against
    sum:20 under that label), and cells-replay's 8 games are cells-again's first 8 replayed
    (one root seed): all 48 games pooled, on 40 shuffles (the clusters); the runs are named."""
    con = connect(spec_lake)
    rows = con.execute(
        """
        SELECT seating, policy, runs, pooled_runs, games, shuffles FROM variant_comparison
        WHERE lineup = 'mix' AND players = 2 ORDER BY seating, policy
        """
    ).fetchall()
    assert rows == [
        ("ev,bust:0.25", "bust:0.25", 3, ["cells", "cells-again", "cells-replay"], 48, 40),
        ("ev,bust:0.25", "ev", 3, ["cells", "cells-again", "cells-replay"], 48, 40),
        ("ev,sum:20", "ev", 1, ["cells-clash"], 12, 12),
        ("ev,sum:20", "sum:20", 1, ["cells-clash"], 12, 12),
    ]
