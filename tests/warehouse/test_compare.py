"""`flip7 compare RUN_A RUN_B`: cells matched by what they played, the difference of the two
runs' figures and its interval with the two variances added (independent runs)."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from flip7.cli import main
from flip7.stats import Z95, RatioSums
from warehouse import connect

from . import lakes
from .lakes import Lake, write_run

#: t2's one cell (legacy ruleset, ev / sum:20 / count:4) again, with another seed: "c1"; and
#: with t2's own seed: "c2" (the same shuffles, so not independent). "c3" gives t2's label
#: ("cell 0") to another line-up: ev / sum:20 / bust:0.25.
RERUNS = {
    "c1": ("legacy", 6, 20, 20, [(0, ("ev", "sum:20", "count:4"))]),
    "c2": ("legacy", 5, 20, 20, [(0, ("ev", "sum:20", "count:4"))]),
    "c3": ("legacy", 7, 20, 20, [(0, ("ev", "sum:20", "bust:0.25"))]),
}


@pytest.fixture
def reruns(lake_copy: Lake, monkeypatch: pytest.MonkeyPatch) -> Lake:
    for run, spec in RERUNS.items():
        monkeypatch.setitem(lakes.RUNS, run, spec)
        write_run(lake_copy.root, run)
    return lake_copy


def compare(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[pd.DataFrame, str]:
    code = main(["compare", *argv, "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return pd.read_csv(io.StringIO(out)), err


def test_compare_gives_the_difference_of_win_rates(
    reruns: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each figure equals the difference of the two runs' win_rates rows; the interval is
    diff +- 1.96 sqrt(var_a + var_b), each variance recomputed by flip7.stats from the games."""
    df, err = compare(capsys, "c1", "t2", "--data", str(reruns.root))
    assert "share the root seed" not in err  # different seeds: independent
    con = connect(reruns.root)
    rates = {
        (run, policy): rate
        for run, policy, rate in con.execute(
            "SELECT run, policy, win_rate FROM win_rates WHERE run IN ('c1', 't2')"
        ).fetchall()
    }
    assert sorted(df.policy) == ["count:4", "ev", "sum:20"]
    for row in df.itertuples():
        assert (row.variant, row.ruleset, row.players, row.lineup, row.seating) == (
            "classic",
            "legacy",
            3,
            "cell 0",
            "ev,sum:20,count:4",
        )
        assert row.games_a == row.games_b == 20
        assert row.diff == pytest.approx(rates["c1", row.policy] - rates["t2", row.policy])
        variance = 0.0
        for run in ("c1", "t2"):
            pairs = con.execute(
                "SELECT wins, seats FROM fct_policy_games WHERE run = ? AND policy = ?",
                [run, row.policy],
            ).fetchall()
            variance += (RatioSums.of(pairs).estimate().half_width / Z95) ** 2
        half = Z95 * math.sqrt(variance)
        assert half > 0
        assert row.diff_lo == pytest.approx(row.diff - half)
        assert row.diff_hi == pytest.approx(row.diff + half)


def test_compare_points_per_round_and_unmatched_cells(
    reruns: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """--figure points_per_round compares points / rounds; a cell played by one run only has
    the other side empty and no difference."""
    df, _ = compare(capsys, "t1", "c1", "--data", str(reruns.root), "--figure", "points_per_round")
    assert len(df) == 13  # t1's 10 (cell, policy) rows, c1's 3: no cell in common
    assert df["diff"].isna().all()
    t1 = df[df.games_a.notna()]
    assert t1.games_b.isna().all() and t1.points_per_round_a.notna().all()
    con = connect(reruns.root)
    ((ppr,),) = con.execute(
        "SELECT points_per_round FROM points_per_round WHERE run = 'c1' AND policy = 'ev'"
    ).fetchall()
    assert df[df.games_b.notna() & (df.policy == "ev")].points_per_round_b.item() == ppr


def test_compare_warns_of_runs_with_one_seed(
    reruns: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs with the same root seed played the same shuffles: the difference is 0 and the
    output says the runs are not independent."""
    df, err = compare(capsys, "c2", "t2", "--data", str(reruns.root))
    assert (df["diff"] == 0).all()
    assert "share the root seed 5" in err and "not independent" in err


def test_compare_keeps_two_line_ups_under_one_label_apart(
    reruns: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """c3 and t2 both label their cell "cell 0", but c3 seats bust:0.25 where t2 seats
    count:4: two cells, each shown with its seating and the other side empty (no difference of
    ev against ev at another table), each side's win rate the one of its own games, and a note
    naming the label and both seatings."""
    df, err = compare(capsys, "c3", "t2", "--data", str(reruns.root))
    assert df["diff"].isna().all() and not (df.games_a.notna() & df.games_b.notna()).any()
    a, b = df[df.games_a.notna()], df[df.games_b.notna()]
    assert set(a.seating) == {"ev,sum:20,bust:0.25"} and set(b.seating) == {"ev,sum:20,count:4"}
    assert sorted(a.policy) == ["bust:0.25", "ev", "sum:20"]
    games = pd.concat(
        pd.read_parquet(p) for p in (reruns.root / "games" / "run=c3").rglob("*.parquet")
    )
    for row in a.itertuples():
        seats = games[games.policy == row.policy]
        assert row.win_rate_a == pytest.approx(seats.winner.sum() / len(seats))
        assert row.games_a == seats.game.nunique() == 20
    assert (
        "line-up 'cell 0' at 3 players under legacy (classic) seats ev,sum:20,bust:0.25 in c3 "
        "but ev,sum:20,count:4 in t2" in err
    )


@pytest.mark.parametrize(
    ("runs", "message"),
    [(("t2", "t2"), "two different runs"), (("t2", "zz"), "no run 'zz'")],
)
def test_compare_refuses_bad_runs(
    lake: Lake, capsys: pytest.CaptureFixture[str], runs: tuple[str, str], message: str
) -> None:
    code = main(["compare", *runs, "--data", str(lake.root)])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err


def test_a_line_up_with_fixed_seats_is_another_cell_than_the_rotating_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs seat "duel" (ev, bust:0.25) alike, one rotating seats game by game, one with
    seats fixed (ev always first to play): a policy keeps its seat's advantage in every game of
    the second, so the two are different cells: never pooled by variant_comparison, compared
    by `flip7 compare` as two line-ups with a note."""
    spec = """
name = "{name}"
seed = {seed}
games = 30
rotate = {rotate}

[[lineups]]
name = "duel"
seats = ["ev", "bust:0.25"]
"""
    root = tmp_path / "data"
    lakes.write_spec_runs(
        root,
        [
            spec.format(name="turns", seed=1, rotate="true"),
            spec.format(name="fixed", seed=2, rotate="false"),
        ],
    )
    rows = (
        connect(root)
        .execute(
            "SELECT seating, policy, runs, games FROM variant_comparison ORDER BY seating, policy"
        )
        .fetchall()
    )
    assert rows == [
        ("ev,bust:0.25", "bust:0.25", 1, 30),
        ("ev,bust:0.25", "ev", 1, 30),
        ("ev,bust:0.25 (fixed seats)", "bust:0.25", 1, 30),
        ("ev,bust:0.25 (fixed seats)", "ev", 1, 30),
    ]
    df, err = compare(capsys, "turns", "fixed", "--data", str(root))
    assert df["diff"].isna().all()
    assert "seats ev,bust:0.25 in turns but ev,bust:0.25 (fixed seats) in fixed" in err


#: Two runs whose two line-ups, "cell 0" and "cell 1", seat the same policies (on other shuffles).
TWINS = [(0, ("ev", "bust:0.25")), (1, ("ev", "bust:0.25"))]


@pytest.mark.parametrize(
    ("runs", "cells"),
    [
        ({"c4": (*lakes.RUNS["t1"][:1], 12, *lakes.RUNS["t1"][2:])}, 10),
        ({"c5": ("3.1", 13, 30, 30, TWINS), "c6": ("3.1", 14, 30, 30, TWINS)}, 4),
    ],
    ids=["t1-rerun", "one-seating-two-labels"],
)
def test_compare_pairs_each_cell_and_policy_of_two_runs_with_its_own(
    lake_copy: Lake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    runs: dict[str, tuple],
    cells: int,
) -> None:
    """Two runs of the same cells on other seeds: t1 and a rerun of it ("c4"; two heads-up
    line-ups sharing a policy, two at three seats), and two runs that each seat ev, bust:0.25
    under two labels. Each row pairs a (line-up, policy) of one run with the same (line-up,
    policy) of the other, never with another line-up's or another run's seats: each side's
    figure is its own run's seats of that line-up summed (wins / seats, points / rounds),
    recomputed here from the games files, and the difference is the two."""
    for run, spec in runs.items():
        monkeypatch.setitem(lakes.RUNS, run, spec)
        write_run(lake_copy.root, run)
    run_a, run_b = (*runs, "t1")[:2]

    def figures(run: str) -> dict[tuple[str, str], tuple[float, float, int]]:
        games = pd.concat(
            pd.read_parquet(p) for p in (lake_copy.root / "games" / f"run={run}").rglob("*.parquet")
        )
        games["label"] = "cell " + games["cell"].astype(str)  # as the manifest labels them
        games["policy"] = games["policy"].astype(str)
        out = {}
        for (label, policy), seats in games.groupby(["label", "policy"]):
            rounds = seats.drop_duplicates("game").set_index("game")["rounds"]
            per_game = seats.groupby("game").size()
            out[label, policy] = (
                seats.winner.sum() / len(seats),
                seats.total.sum() / (rounds * per_game).sum(),
                seats.game.nunique(),
            )
        return out

    a, b = figures(run_a), figures(run_b)
    assert len(a) == len(b) == cells
    root = str(lake_copy.root)
    win, _ = compare(capsys, run_a, run_b, "--data", root)
    pts, _ = compare(capsys, run_a, run_b, "--data", root, "--figure", "points_per_round")
    assert len(win) == len(pts) == cells
    for w, p in zip(win.itertuples(), pts.itertuples(), strict=True):
        key = (w.lineup, w.policy)
        assert (p.lineup, p.policy) == key
        assert w.games_a == a[key][2] and w.games_b == b[key][2]
        assert w.win_rate_a == pytest.approx(a[key][0])
        assert w.win_rate_b == pytest.approx(b[key][0])
        assert w.diff == pytest.approx(a[key][0] - b[key][0])
        assert p.points_per_round_a == pytest.approx(a[key][1])
        assert p.points_per_round_b == pytest.approx(b[key][1])
        assert p.diff == pytest.approx(a[key][1] - b[key][1])


def test_compare_prints_figures_as_the_report_does(
    reruns: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the table format the win rates are percentages and the difference is in percentage
    points with its interval beside it, not 0.246487 and 0.00188734 (issue 32, item 8); with
    $COLUMNS it fits the terminal."""
    monkeypatch.setenv("COLUMNS", "90")
    assert main(["compare", "c1", "t2", "--data", str(reruns.root)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 90, out
    assert main(["compare", "c1", "t2", "--data", str(reruns.root), "--wide"]) == 0
    out = capsys.readouterr().out
    header, _, first = out.splitlines()[:3]
    assert "win_rate_a" in header and "diff" in header and "95% interval" in header
    assert "diff_lo" not in header and "%" in first and " pp" in first
    assert re.search(r"\[[+-]\d+\.\d\d, [+-]\d+\.\d\d\]", first), first
    assert (
        main(
            [
                "compare",
                "c1",
                "t2",
                "--data",
                str(reruns.root),
                "--figure",
                "points_per_round",
                "--wide",
            ]
        )
        == 0
    )
    first = capsys.readouterr().out.splitlines()[2]
    assert "%" not in first and re.search(r" [+-]\d+\.\d\d ", first), first
