"""The query API the dashboard reads: filters, shapes, the replay timeline, clear errors."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import warehouse
from warehouse import EmptyLakeError, connect, queries
from warehouse.lake import data_root, snapshot

from .lakes import Lake


@pytest.fixture(scope="module")
def con(lake: Lake) -> duckdb.DuckDBPyConnection:
    return connect(lake.root)


def test_public_names() -> None:
    """warehouse re-exports exactly its sorted __all__ (STYLE L4)."""
    assert warehouse.__all__ == sorted(warehouse.__all__)
    assert {n for n in dir(warehouse) if not n.startswith("_")} >= set(warehouse.__all__)


def test_runs_lists_manifest_and_committed_counts(con: duckdb.DuckDBPyConnection) -> None:
    """One row per run with the manifest's plan and what is committed."""
    runs = queries.runs(con).set_index("run")
    assert sorted(runs.index) == ["t1", "t2"]
    assert runs.loc["t1", "games"] == runs.loc["t1", "planned_games"] == 160
    assert list(runs.loc["t2", "field_sizes"]) == [3]
    assert runs.loc["t2", "ruleset"] == "legacy"


def test_filters_select_runs_policies_players_and_variant(con: duckdb.DuckDBPyConnection) -> None:
    """runs, policies, players and variant each narrow the result; None means everything."""
    everything = queries.win_rates(con)
    assert set(everything.run) == {"t1", "t2"}
    assert set(queries.win_rates(con, runs=["t2"]).run) == {"t2"}
    assert set(queries.win_rates(con, runs="t2").run) == {"t2"}
    assert set(queries.win_rates(con, policies=["ev"]).policy) == {"ev"}
    assert set(queries.points_per_round(con, players=2).players) == {2}
    assert len(queries.rates(con, variant="classic")) == len(everything)
    assert queries.win_rates(con, variant="no-such-variant").empty
    assert set(queries.win_rates(con, lineup="cell 2").lineup) == {"cell 2"}
    assert list(everything.columns[:5]) == ["run", "variant", "ruleset", "players", "lineup"]
    assert {"games", "win_index_lo"} <= set(everything.columns)


def test_field_size_puts_win_rate_beside_points(con: duckdb.DuckDBPyConnection) -> None:
    """field_size joins win_rates and points_per_round row for row, per cell (bust:0.25 plays
    in two 2-player cells of t1: two rows, never one blend)."""
    keys = ["players", "lineup", "policy"]
    fs = queries.field_size(con, runs=["t1"]).set_index(keys)
    wr = queries.win_rates(con, runs=["t1"]).set_index(keys)
    ppr = queries.points_per_round(con, runs=["t1"]).set_index(keys)
    assert fs.index.is_unique and len(fs.loc[(2, slice(None), "bust:0.25"), :]) == 2
    assert len(fs) == len(wr) == len(ppr)
    assert (fs.win_index == wr.win_index.loc[fs.index]).all()
    assert (fs.points_per_round_se == ppr.se.loc[fs.index]).all()


def test_card_counting_and_league(con: duckdb.DuckDBPyConnection) -> None:
    """t1 holds one paired comparison (across two cells) and two unpaired ones (each within
    one cell); t2 has no counting policy."""
    cc = queries.card_counting(con)
    rows = zip(cc.players, cc.lineup, cc.base_lineup, cc.counting, cc.method, strict=True)
    assert sorted(rows) == [
        (2, "cell 1", "cell 0", "evc", "paired"),
        (3, "cell 2", "cell 2", "evc", "unpaired"),
        (3, "cell 3", "cell 3", "bustc:0.25", "unpaired"),
    ]
    lg = queries.league(con, runs=["t2"])
    assert list(lg.place) == [1, 2, 3] and set(lg.policy) == {"ev", "sum:20", "count:4"}


def test_head_to_head_is_per_cell(con: duckdb.DuckDBPyConnection) -> None:
    """Head to head is never pooled over cells: evc meets bust:0.25 in one 2-player cell of t1
    and ev meets bust:0.25 in another; filters narrow by field size, line-up and policies."""
    h2h = queries.head_to_head(con, runs=["t1"])
    assert h2h.set_index(["players", "lineup", "policy", "opponent"]).index.is_unique
    two = queries.head_to_head(con, runs=["t1"], players=2)
    assert set(zip(two.lineup, two.policy, strict=True)) == {
        ("cell 0", "ev"),
        ("cell 0", "bust:0.25"),
        ("cell 1", "evc"),
        ("cell 1", "bust:0.25"),
    }
    one = queries.head_to_head(con, runs=["t1"], lineup="cell 1", policies=["evc", "bust:0.25"])
    assert set(one.lineup) == {"cell 1"} and len(one) == 2
    row = one.set_index("policy").loc["evc"]
    assert row.ahead_share_lo <= row.ahead_share <= row.ahead_share_hi
    assert row.meetings == row.games == 40


def test_distribution_and_position_effects(con: duckdb.DuckDBPyConnection) -> None:
    """Shares add up to 1 per policy; seat and dealer effects default to all policies pooled."""
    dist = queries.round_distribution(con, runs=["t1"], policies=["ev"])
    assert dist.groupby(["players", "lineup"]).share.sum().round(12).eq(1).all()
    seats = queries.seat_effects(con, runs=["t2"])
    assert list(seats.seat) == [0, 1, 2] and set(seats.policy) == {"*"}
    pos = queries.dealer_positions(con, runs=["t2"], policy="ev")
    assert list(pos.position) == [0, 1, 2] and set(pos.policy) == {"ev"}


def test_games_and_timeline(con: duckdb.DuckDBPyConnection) -> None:
    """games lists a run's games in order; game_timeline gives one in seq order."""
    games = queries.games(con, "t1", limit=5, offset=40)
    assert list(games.game) == [40, 41, 42, 43, 44]
    timeline = queries.game_timeline(con, "t1", 41)
    assert list(timeline.seq) == list(range(len(timeline)))
    assert timeline.kind_name.iloc[0] == "round_start"
    assert timeline.kind_name.iloc[-1] == "game_end"
    assert timeline.player.iloc[-1] == games.set_index("game").winner_seat.loc[41]
    with pytest.raises(ValueError, match=r"no game 999 in run 't1' \(its games are 0\.\.159\)"):
        queries.game_timeline(con, "t1", 999)


def test_missing_runs_and_empty_lakes_are_clear_errors(lake: Lake, tmp_path: Path) -> None:
    """An unknown run names the runs there; an empty lake says how to fill it."""
    with pytest.raises(EmptyLakeError, match=r"no run 'nope' .* \(runs there: t1, t2\)"):
        connect(lake.root, ["nope"])
    with pytest.raises(EmptyLakeError, match="flip7 tournament run"):
        connect(tmp_path)


def test_data_root_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--data wins, then $FLIP7_DATA, then ./data."""
    monkeypatch.delenv("FLIP7_DATA", raising=False)
    assert data_root() == "data"
    monkeypatch.setenv("FLIP7_DATA", str(tmp_path))
    assert data_root() == str(tmp_path)
    assert data_root("elsewhere") == "elsewhere"
    assert data_root("s3://bucket/lake") == "s3://bucket/lake"


def test_snapshot_ignores_strangers(lake: Lake) -> None:
    """Only shard-NNNNN.parquet files under run=/players= directories count."""
    snap = snapshot(lake.root)
    assert len(snap.shards) == sum(len(t) for t in lake.tasks.values())
    assert not snap.missing


def test_cursors_share_the_views_not_the_lake(lake: Lake) -> None:
    """A cursor (another thread's handle on the same database) of a writable warehouse sees
    the same views (the file lists are catalog macros, not per-connection variables), but every
    warehouse reads the lake through pyarrow datasets registered on its own connection (the
    events and rounds decoded batch by batch), which a cursor does not see: a cursor's read of
    the lake fails by the dataset's name, never reading the files some other way. The
    connection is used under a lock instead, as the dashboard does."""
    con = connect(lake.root, read_only=False)
    cur = con.cursor()
    views = "SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary ORDER BY ALL"
    shared = cur.execute(views).fetchall()
    assert ("stg_events",) in shared and shared == con.execute(views).fetchall()
    with pytest.raises(duckdb.CatalogException, match="lake_events"):
        queries.game_timeline(cur, "t2", 7)
    assert len(queries.game_timeline(con, "t2", 7))


def test_lineups_lists_each_runs_cells(con: duckdb.DuckDBPyConnection) -> None:
    """One row per run and line-up label with its field sizes and policies (the cells a page
    can pick), from the manifests' labels."""
    cells = queries.lineups(con, runs=["t1"])
    assert list(cells.lineup) == ["cell 0", "cell 1", "cell 2", "cell 3"]
    assert [list(s) for s in cells.field_sizes] == [[2], [2], [3], [3]]
    assert list(cells.policies.iloc[2]) == ["ev", "evc", "sum:20"]
    assert set(queries.lineups(con).run) == {"t1", "t2"}
