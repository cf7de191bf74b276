"""Each mart checked against numbers computed here from the engine's own GameResults."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator

import duckdb
import pandas as pd
import pytest

from flip7.cards import card_label
from flip7.events import EventKind, EventLog
from warehouse import connect
from warehouse.build import sql_files

from .lakes import Lake, Played

Z = 1.959963984540054


@pytest.fixture(scope="module")
def con(lake: Lake) -> duckdb.DuckDBPyConnection:
    return connect(lake.root, materialize=True)


def seats(truth: dict[str, list[Played]]) -> Iterator[tuple[Played, int, str]]:
    for games in truth.values():
        for g in games:
            for s, spec in enumerate(g.specs):
                yield g, s, spec


def label(g: Played) -> str:
    """The cell's line-up label as the test lake's manifests write it (lakes.write_run)."""
    return f"cell {g.cell}"


def rank(g: Played, s: int) -> int:
    return 1 + sum(t > g.result.totals[s] for t in g.result.totals)


def mart(con: duckdb.DuckDBPyConnection, name: str, keys: list[str]) -> pd.DataFrame:
    return con.execute(f"SELECT * FROM {name}").df().set_index(keys).sort_index()


def test_every_sql_file_builds_as_its_relation(con: duckdb.DuckDBPyConnection) -> None:
    """Every staging, intermediate and mart file exists as a relation named after the file."""
    names = {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    for layer in ("staging", "intermediate", "marts"):
        assert set(sql_files(layer)) <= names


def test_win_rates_match_the_engine(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """Games, player-games, wins, win rate, win index and mean rank per cell and policy (the
    intervals are checked in test_intervals.py)."""
    acc: dict[tuple[str, int, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    games: dict[tuple[str, int, str, str], set[int]] = defaultdict(set)
    for g, s, spec in seats(truth):
        key = (g.run, len(g.specs), label(g), spec)
        a = acc[key]
        a[0] += 1
        a[1] += g.result.winner == s
        a[2] += rank(g, s)
        games[key].add(g.game)
    got = mart(con, "win_rates", ["run", "players", "lineup", "policy"])
    assert len(got) == len(acc)
    for key, (n, wins, ranks, _) in acc.items():
        row = got.loc[key]
        assert (row.games, row.player_games, row.wins) == (len(games[key]), n, wins)
        assert row.win_rate == pytest.approx(wins / n)
        assert row.win_rate_lo <= row.win_rate <= row.win_rate_hi
        assert row.win_index == pytest.approx(wins / (n / key[1]))
        assert row.win_index_hi == pytest.approx(row.win_rate_hi * key[1])
        assert row.mean_rank == pytest.approx(ranks / n)


def test_points_per_round_and_rates_match_the_engine(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """Rounds, points and pooled points per round (points / rounds), bust/Flip 7/stay/freeze
    counts from the engine's per-round status and Flip 7 seat, per cell and policy."""
    acc: dict[tuple[str, int, str, str], list[int]] = defaultdict(lambda: [0] * 6)
    for g, s, spec in seats(truth):
        a = acc[(g.run, len(g.specs), label(g), spec)]
        for r, scores in enumerate(g.result.round_scores):
            status = g.result.round_status[r][s]
            a[0] += 1
            a[1] += scores[s]
            a[2] += status == 3
            a[3] += g.result.round_flip7[r] == s
            a[4] += status == 1
            a[5] += status == 2
    ppr = mart(con, "points_per_round", ["run", "players", "lineup", "policy"])
    rates = mart(con, "round_rates", ["run", "players", "lineup", "policy"])
    assert len(ppr) == len(rates) == len(acc)
    for key, (n, pts, busts, f7, stays, freezes) in acc.items():
        assert (ppr.loc[key].rounds, ppr.loc[key].points) == (n, pts)
        assert ppr.loc[key].points_per_round == pytest.approx(pts / n)
        assert ppr.loc[key].ppr_hi == pytest.approx(pts / n + Z * ppr.loc[key].se)
        row = rates.loc[key]
        assert (row.rounds, row.busts, row.flip7s, row.stays, row.freezes) == (
            n,
            busts,
            f7,
            stays,
            freezes,
        )
        assert row.bust_rate == pytest.approx(busts / n)


def test_card_counting_pairs_games_on_common_random_numbers(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """t1 cells 0 and 1 share shuffles and differ only by ev -> evc: each side's points per
    round is pooled (points / rounds over the pairs, as points_per_round gives it), the gain is
    their difference and its standard error the delta-method one clustered by pair of games."""
    games = {(g.cell, g.cell_game): g for g in truth["t1"]}
    y_c, n_c, y_b, n_b, d_win = [], [], [], [], []
    for (cell, i), b in games.items():
        if cell != 0:
            continue
        a = games[(1, i)]
        assert a.result.seed == b.result.seed  # same shuffles: the premise of the pairing
        s = a.specs.index("evc")
        assert b.specs[s] == "ev"
        y_c.append(a.result.totals[s])
        n_c.append(a.result.rounds)
        y_b.append(b.result.totals[s])
        n_b.append(b.result.rounds)
        d_win.append(int(a.result.winner == s) - int(b.result.winner == s))
    got = con.execute("SELECT * FROM card_counting WHERE run = 't1' AND players = 2").df()
    assert len(got) == 1
    row = got.iloc[0]
    n = len(y_c)
    rc, rb = sum(y_c) / sum(n_c), sum(y_b) / sum(n_b)
    e = [
        (yc - rc * nc) / sum(n_c) - (yb - rb * nb) / sum(n_b)
        for yc, nc, yb, nb in zip(y_c, n_c, y_b, n_b, strict=True)
    ]
    assert (row.counting, row.base, row.method, row.pairs) == ("evc", "ev", "paired", n)
    assert (row.ppr_counting, row.ppr_base) == (pytest.approx(rc), pytest.approx(rb))
    assert row.ppr_gain == pytest.approx(rc - rb)
    assert row.ppr_gain_se == pytest.approx(math.sqrt(n / (n - 1) * sum(x * x for x in e)))
    # one seat a side: the win rate's pair figure is the game's own, se = sd / sqrt(pairs)
    mean = sum(d_win) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d_win) / (n - 1))
    assert row.win_gain == pytest.approx(mean)
    assert row.win_gain_se == pytest.approx(sd / math.sqrt(n))
    ppr = mart(con, "points_per_round", ["run", "players", "lineup", "policy"])
    assert row.ppr_counting == pytest.approx(ppr.loc[("t1", 2, "cell 1", "evc")].points_per_round)
    assert row.ppr_base == pytest.approx(ppr.loc[("t1", 2, "cell 0", "ev")].points_per_round)


def test_card_counting_falls_back_to_unpaired_at_a_shared_table(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """At 3 players t1 has no common-random-number partner cells: evc vs ev and bustc vs
    bust are compared within the cell they share (pooled ratios; intervals in
    test_intervals.py)."""
    got = con.execute(
        "SELECT * FROM card_counting WHERE run = 't1' AND players = 3 ORDER BY counting"
    ).df()
    assert list(got.counting) == ["bustc:0.25", "evc"]
    assert set(got.method) == {"unpaired"}
    assert list(got.lineup) == list(got.base_lineup) == ["cell 3", "cell 2"]
    for row in got.itertuples():
        stats = {}
        for spec in (row.counting, row.base):
            n = wins = rounds = pts = 0
            for g, s, p in seats({"t1": truth["t1"]}):
                if p == spec and len(g.specs) == 3:
                    n += 1
                    wins += g.result.winner == s
                    rounds += g.result.rounds
                    pts += g.result.totals[s]
            stats[spec] = (wins / n, n, pts / rounds)
        (pc, nc, mc), (pb, nb, mb) = stats[row.counting], stats[row.base]
        assert row.ppr_gain == pytest.approx(mc - mb)
        assert row.win_gain == pytest.approx(pc - pb)
        assert (row.n_counting, row.n_base, row.games) == (nc, nb, 40)
        assert row.ppr_gain_lo < row.ppr_gain < row.ppr_gain_hi


def test_head_to_head_counts_seats_finishing_ahead(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """For every two seats with different policies in a game: ahead/behind/tied by rank."""
    acc: dict[tuple[str, int, str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for games in truth.values():
        for g in games:
            for a, pa in enumerate(g.specs):
                for b, pb in enumerate(g.specs):
                    if pa == pb:
                        continue
                    c = acc[(g.run, len(g.specs), label(g), pa, pb)]
                    c[0] += 1
                    c[1] += rank(g, a) < rank(g, b)
                    c[2] += rank(g, a) > rank(g, b)
                    c[3] += rank(g, a) == rank(g, b)
    got = mart(con, "head_to_head", ["run", "players", "lineup", "policy", "opponent"])
    assert len(got) == len(acc)
    for key, (m, ahead, behind, tied) in acc.items():
        row = got.loc[key]
        assert (row.meetings, row.ahead, row.behind, row.tied) == (m, ahead, behind, tied)


def test_seat_and_dealer_position_effects(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """Wins by seat (all policies pooled), and points by turn position from the engine's
    round dealers (0 acts first after the dealer, n-1 is the dealer)."""
    wins: dict[tuple[str, int, str, int], list[int]] = defaultdict(lambda: [0, 0])
    pos: dict[tuple[str, int, str, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for g, s, _ in seats(truth):
        n = len(g.specs)
        wins[(g.run, n, label(g), s)][0] += 1
        wins[(g.run, n, label(g), s)][1] += g.result.winner == s
        for r, scores in enumerate(g.result.round_scores):
            p = pos[(g.run, n, label(g), (s - g.result.round_dealers[r] - 1) % n)]
            p[0] += 1
            p[1] += scores[s]
            p[2] += g.result.round_status[r][s] == 3
    seat = mart(con, "seat_effects", ["run", "players", "lineup", "seat", "policy"])
    for (run, n, cell, s), (games, w) in wins.items():
        row = seat.loc[(run, n, cell, s, "*")]
        assert (row.player_games, row.wins) == (games, w)
        assert row.win_index == pytest.approx(w * n / games)
    dealer = mart(con, "dealer_positions", ["run", "players", "lineup", "position", "policy"])
    for (run, n, cell, p), (rounds, pts, busts) in pos.items():
        row = dealer.loc[(run, n, cell, p, "*")]
        assert (row.rounds, row.busts) == (rounds, busts)
        assert row.points_per_round == pytest.approx(pts / rounds)


def test_round_distribution_and_league(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """Rounds per score value per cell and policy; the league's win index (a named aggregate
    over the run's cells) is wins / sum of 1/n over the seats played."""
    dist: dict[tuple[str, int, str, str, int], int] = defaultdict(int)
    league: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for g, s, spec in seats(truth):
        for scores in g.result.round_scores:
            dist[(g.run, len(g.specs), label(g), spec, scores[s])] += 1
        league[(g.run, spec)][0] += g.result.winner == s
        league[(g.run, spec)][1] += 1 / len(g.specs)
    got = mart(con, "round_distribution", ["run", "players", "lineup", "policy", "score"])
    assert got.rounds.to_dict() == dict(dist)
    lg = mart(con, "league", ["run", "policy"])
    for key, (w, expected) in league.items():
        assert lg.loc[key].win_index == pytest.approx(w / expected)
    best = lg.reset_index().sort_values(["run", "place"]).groupby("run").win_index.apply(list)
    assert all(v == sorted(v, reverse=True) for v in best)


def test_game_results_games_and_runs(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """Per-player results, one row per game with its winner, and the runs' committed counts."""
    fgr = mart(con, "fct_game_results", ["run", "game", "seat"])
    fg = mart(con, "fct_games", ["run", "game"])
    runs = mart(con, "runs", ["run"])
    for run, games in truth.items():
        assert runs.loc[run].games == len(games)
        assert runs.loc[run].events == sum(len(g.result.events) // 5 for g in games)
        assert runs.loc[run].status == "complete"
        for g in games:
            row = fg.loc[(run, g.game)]
            assert (row.winner_seat, row.rounds, row.seed) == (
                g.result.winner,
                g.result.rounds,
                g.result.seed,
            )
            for s, spec in enumerate(g.specs):
                r = fgr.loc[(run, g.game, s)]
                assert (r.policy, r.total, r["rank"]) == (spec, g.result.totals[s], rank(g, s))


def test_game_timeline_replays_the_engine_events(
    con: duckdb.DuckDBPyConnection, truth: dict[str, list[Played]]
) -> None:
    """A game's timeline is the engine's event stream in order, with kind names, card labels
    and the policy of whoever each event concerns."""
    g = truth["t1"][57]
    got = con.execute(
        "SELECT * FROM game_timeline WHERE run = 't1' AND game = $g ORDER BY seq", {"g": g.game}
    ).df()
    events = list(EventLog(g.result.events))
    assert len(got) == len(events)
    assert list(got.seq) == list(range(len(events)))
    assert list(got.kind_name) == [EventKind(e.kind).name.lower() for e in events]
    draws = got[got.kind_name == "draw"]
    expected = [card_label(e.card) for e in events if e.kind == EventKind.DRAW]
    assert list(draws.card_label) == expected
    assert list(draws.player_policy) == [
        g.specs[e.player] for e in events if e.kind == EventKind.DRAW
    ]
    rounds = got[got.kind_name == "round_start"]
    assert list(rounds["round"]) == list(range(1, g.result.rounds + 1))
