"""The Plackett-Luce ratings: the fit recovers a known model at its nominal coverage, and the
`ratings` and `rating_pairs` marts equal a fit of the engine's own games."""

from __future__ import annotations

import json
import math

import duckdb
import numpy as np
import pytest

from warehouse import connect
from warehouse.ratings import Z95, Stages, fit, stages_from_rankings

from .lakes import Lake, Played


def simulate(
    theta: np.ndarray, n_games: int, seats: int, rng: np.random.Generator, tie: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Games drawn from a Plackett-Luce model: random tables of distinct policies, ranked by
    strength + Gumbel noise (the Gumbel trick samples a PL ranking exactly); with `tie` > 0,
    utilities are rounded to that grid so some seats tie."""
    k = len(theta)
    tables = np.argsort(rng.random((n_games, k)), axis=1)[:, :seats]
    util = theta[tables] + rng.gumbel(size=tables.shape)
    if tie:
        util = np.round(util / tie)
    ranks = (util[:, None, :] > util[:, :, None]).sum(axis=2) + 1
    return tables, ranks


def stacked(policies: list[str], parts: list[Stages]) -> Stages:
    """The stages of several field sizes as one fit's data (each part's outcomes renumbered
    after the previous parts')."""
    from scipy import sparse

    offsets = np.cumsum([0] + [len(d.games) for d in parts[:-1]])
    return Stages(
        policies=policies,
        games=np.concatenate([d.games for d in parts]),
        outcome=np.concatenate([d.outcome + o for d, o in zip(parts, offsets, strict=True)]),
        chosen=np.concatenate([d.chosen for d in parts]),
        members=sparse.vstack([d.members for d in parts]).tocsr(),
        tables=sparse.vstack([d.tables for d in parts]).tocsr(),
    )


def test_fit_recovers_known_ratings_within_intervals_at_the_nominal_rate() -> None:
    """Over 200 replications of 150 mixed 2-6 seat games among 6 policies of known strength,
    each true rating difference to the anchor lies inside its 95% interval about 95% of the
    time: 1000 intervals, so the count must lie within 950 +- 3 binomial sd (950 +- 21)."""
    rng = np.random.default_rng([34, 2026])
    theta = np.array([-1.2, -0.5, 0.0, 0.3, 0.6, 1.5])
    policies = [f"p{i}" for i in range(len(theta))]
    anchor = 2
    inside = total = 0
    for _ in range(200):
        parts = [simulate(theta, 30, n, rng) for n in (2, 3, 4, 6)]
        ranked = [stages_from_rankings(policies, t, r) for t, r in parts]
        # mixed field sizes: stack the stages of each size (outcomes renumbered)
        data = stacked(policies, ranked)
        f = fit(data, policies[anchor])
        assert f.converged
        truth = theta - theta[anchor]
        lo, hi = f.rating - Z95 * f.se, f.rating + Z95 * f.se
        mask = np.arange(len(theta)) != anchor
        inside += int(((lo <= truth) & (truth <= hi))[mask].sum())
        total += int(mask.sum())
    expected = 0.95 * total
    sd = math.sqrt(total * 0.95 * 0.05)
    assert abs(inside - expected) <= 3 * sd, (inside, total)


def test_fit_handles_ties_and_keeps_the_anchor_at_zero() -> None:
    """With tied ranks (utilities on a coarse grid) the fit still converges, the anchor is 0
    with no spread, and stronger true policies rate higher (4000 4-seat games, 5 policies)."""
    rng = np.random.default_rng(7)
    theta = np.array([-1.0, -0.3, 0.0, 0.4, 1.0])
    tables, ranks = simulate(theta, 4000, 4, rng, tie=1.0)
    assert (np.sort(ranks, axis=1)[:, 1:] == np.sort(ranks, axis=1)[:, :-1]).any()  # some ties
    f = fit(stages_from_rankings(["a", "b", "ev", "d", "e"], tables, ranks))
    assert f.anchor == "ev" and f.rating[2] == 0.0 and f.se[2] == 0.0
    assert list(np.argsort(f.rating)) == [0, 1, 2, 3, 4]
    assert f.games.sum() == 4000 * 4


@pytest.fixture(scope="module")
def con(lake: Lake) -> duckdb.DuckDBPyConnection:
    return connect(lake.root)


def engine_fit(games: list[Played], players: int | None) -> tuple[list[str], np.ndarray, object]:
    """The fit of the engine's own games (ranks from its totals), as the mart should give."""
    chosen = [g for g in games if players is None or len(g.specs) == players]
    policies = sorted({s for g in chosen for s in g.specs})
    parts = []
    for n in sorted({len(g.specs) for g in chosen}):
        of_n = [g for g in chosen if len(g.specs) == n]
        tables = np.array([[policies.index(s) for s in g.specs] for g in of_n])
        totals = np.array([g.result.totals for g in of_n])
        ranks = (totals[:, None, :] > totals[:, :, None]).sum(axis=2) + 1
        parts.append(stages_from_rankings(policies, tables, ranks))
    data = stacked(policies, parts)
    f = fit(data)
    return policies, f.rating, f


@pytest.mark.parametrize("players", [None, 2, 3])
def test_ratings_mart_equals_a_fit_of_the_engines_games(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]], players: int | None
) -> None:
    """Run t1 (2- and 3-seat cells): the mart's ratings, intervals and game counts per field
    size and pooled are the fit of the games the engine replays, to 1e-6."""
    rows = con.execute(
        "SELECT policy, rating, lo, hi, se, games, anchor FROM ratings "
        "WHERE run = 't1' AND players IS NOT DISTINCT FROM $p ORDER BY policy",
        {"p": players},
    ).fetchall()
    policies, rating, f = engine_fit(truth["t1"], players)
    assert [r[0] for r in rows] == policies
    assert {r[6] for r in rows} == {"ev"}
    np.testing.assert_allclose([r[1] for r in rows], rating, atol=1e-6)
    np.testing.assert_allclose([r[4] for r in rows], f.se, atol=1e-6)  # type: ignore[attr-defined]
    assert [r[5] for r in rows] == list(f.games)  # type: ignore[attr-defined]
    for _, r, lo, hi, se, *_ in rows:
        assert lo == pytest.approx(r - Z95 * se) and hi == pytest.approx(r + Z95 * se)


def test_rating_pairs_compare_the_model_with_head_to_head(con: duckdb.DuckDBPyConnection) -> None:
    """rating_pairs: one row per pair with the higher-rated policy first; the model's chance is
    the logistic of the rating difference; the observed counts equal head_to_head's summed over
    cells."""
    pairs = con.execute(
        "SELECT p.*, a.rating - b.rating AS diff FROM rating_pairs p "
        "JOIN ratings a ON a.run = p.run AND a.players IS NOT DISTINCT FROM p.players "
        "AND a.policy = p.policy "
        "JOIN ratings b ON b.run = p.run AND b.players IS NOT DISTINCT FROM p.players "
        "AND b.policy = p.opponent WHERE p.run = 't1'"
    ).df()
    assert len(pairs) and (pairs["diff"] >= 0).all()
    np.testing.assert_allclose(pairs["model_ahead"], 1 / (1 + np.exp(-pairs["diff"])))
    assert (pairs["model_ahead_lo"] <= pairs["model_ahead"]).all()
    h2h = con.execute(
        "SELECT policy, opponent, sum(ahead) AS ahead, sum(ahead + behind) AS meetings "
        "FROM head_to_head WHERE run = 't1' GROUP BY ALL"
    ).df()
    pooled = pairs[pairs["players"].isna()].merge(h2h, on=["policy", "opponent"], how="left")
    met = pooled["meetings_y"].notna()
    assert met.any()
    assert (pooled.loc[met, "ahead_x"] == pooled.loc[met, "ahead_y"]).all()
    assert (pooled.loc[met, "meetings_x"] == pooled.loc[met, "meetings_y"]).all()


def test_flip7_ratings_prints_json_rows_and_sql_reads_the_mart(
    lake: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flip7 ratings t1 --format json` gives policy, rating, lo, hi and games per policy, the
    same numbers as `FROM ratings`; --players narrows to one field size; an absent size says so."""
    from flip7.cli import main

    assert main(["ratings", "t1", "--data", str(lake.root), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"policy", "rating", "lo", "hi", "games"} <= set(rows[0])
    assert {r["policy"] for r in rows} == {
        "ev",
        "evc",
        "bust:0.25",
        "bustc:0.25",
        "sum:20",
        "count:4",
    }
    assert [r["place"] for r in rows] == list(range(1, len(rows) + 1))
    con = connect(lake.root, ["t1"])
    mart = dict(con.execute("SELECT policy, rating FROM ratings WHERE players IS NULL").fetchall())
    assert all(mart[r["policy"]] == pytest.approx(r["rating"]) for r in rows)
    assert (
        main(["ratings", "t1", "--data", str(lake.root), "--players", "2", "--format", "json"]) == 0
    )
    two = json.loads(capsys.readouterr().out)
    assert {r["policy"] for r in two} == {"ev", "evc", "bust:0.25"}
    assert main(["ratings", "t1", "--data", str(lake.root), "--players", "5"]) != 0
    assert "no games at 5 players" in capsys.readouterr().err


def test_a_policy_that_never_finishes_ahead_gets_a_finite_rating() -> None:
    """A policy last in every game has no finite maximum likelihood; the weak prior (sd 10)
    keeps its rating finite, far below the others, and the fit still converges."""
    rng = np.random.default_rng(3)
    theta = np.array([0.0, 0.5, 1.0])
    tables, ranks = simulate(theta, 600, 3, rng)
    # policy 0 moved to last place in every game, the others closing up behind the winner
    loser = np.where(tables == 0, ranks, 0).sum(axis=1, keepdims=True)
    ranks = np.where(tables == 0, 3, ranks - (loser < ranks))
    assert sorted(map(tuple, np.sort(ranks, axis=1)))[0] == (1, 2, 3)
    f = fit(stages_from_rankings(["loser", "ev", "c"], tables, ranks))
    assert f.converged and np.isfinite(f.rating).all()
    assert f.rating[0] < f.rating[1] - 5


def test_a_table_of_one_policy_rates_it_zero_without_failing() -> None:
    """A run of copies of one policy (e.g. eight sum:20 seats) has nothing to compare: the fit
    gives that policy 0 with no spread instead of failing the whole mart."""
    tables = np.zeros((20, 4), dtype=np.int64)
    ranks = np.tile(np.array([1, 2, 3, 4]), (20, 1))
    f = fit(stages_from_rankings(["sum:20"], tables, ranks))
    assert f.rating.tolist() == [0.0] and f.se.tolist() == [0.0] and f.games.tolist() == [20]


def test_the_mart_fits_the_outcomes_in_one_order_so_a_rating_repeats_to_the_last_digit(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The fit's sums run in the order of its outcomes; the mart hands them over sorted by field
    size and outcome, so its ratings are bit-identical to a fit of the outcomes so sorted (in any
    other order the last digits change from one build to the next)."""
    from warehouse.ratings import stages_from_arrow

    outcomes = con.sql(
        "SELECT list(struct_pack(games, seats, stages) ORDER BY players, outcome) AS o "
        "FROM int_rating_outcomes WHERE run = 't1'"
    ).to_arrow_table()["o"][0]
    f = fit(stages_from_arrow(outcomes), "ev")
    rows = con.execute(
        "SELECT policy, rating, se FROM ratings WHERE run = 't1' AND players IS NULL "
        "ORDER BY policy"
    ).fetchall()
    assert [r[0] for r in rows] == f.policies
    assert [r[1] for r in rows] == [float(x) for x in f.rating]
    assert [r[2] for r in rows] == [float(x) for x in f.se]
