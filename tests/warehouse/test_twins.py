"""warehouse.twins: the card-counting mart's per-game products, read from the rollups' lists a
group of shards (one first game) at a time, equal to numpy over the games paired one by one,
whether the shards of two cells line up, do not, or a file holds several first games."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from warehouse import twins
from warehouse.lake import Shard, Snapshot, screen, snapshot

RUN = "r"


def test_the_twin_rule_is_the_sql_rule() -> None:
    names = ["evc", "ev", "bustc:0.25", "bust:0.25", "c", "cc", "evcc", "abc:c", "x_1c:2", "sum:20"]
    sql = duckdb.sql(
        "SELECT regexp_replace(p, '^([A-Za-z_][A-Za-z0-9_]*)c(:|$)', '\\1\\2') "
        f"FROM unnest({names}) AS t(p)"
    ).fetchall()
    assert [twins.twin(n) for n in names] == [r[0] for r in sql]
    sql_text = (Path(twins.__file__).parent / "sql" / "marts" / "card_counting.sql").read_text()
    assert twins.COUNTING.pattern in sql_text


def write(path: Path, rows: list[tuple[int, int, str, str, list[int], list[int]]]) -> None:
    """A rollups file holding only the columns twins reads: (cell, first_game, policy, figure,
    game_y, game_n) per row, all of grouping 'policy', plus one row of another grouping."""
    rows = [*rows, (rows[0][0], rows[0][1], "*", "rounds", [], [])]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table(
            {
                "cell": pa.array([r[0] for r in rows], pa.int32()),
                "first_game": pa.array([r[1] for r in rows], pa.int32()),
                "grouping": pa.array(["policy"] * (len(rows) - 1) + ["cell"]).dictionary_encode(),
                "figure": pa.array([r[3] for r in rows]).dictionary_encode(),
                "policy": pa.array([r[2] for r in rows]).dictionary_encode(),
                "game_y": pa.array([r[4] for r in rows], pa.list_(pa.int64())),
                "game_n": pa.array([r[5] for r in rows], pa.list_(pa.int64())),
            }
        ),
        path,
    )


@pytest.fixture
def lake(tmp_path: Path) -> tuple[Snapshot, dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]]:
    """Three cells of 20 games on common random numbers: cell 0 (ev) in shards of 10 games,
    cell 1 (evc) in one of 10 then two of 5, cell 2 seating both in shards of 10; cell 3 (ev)
    of another CRN pair; a manifest saying where each shard starts. Returns the snapshot and
    each (cell, policy)'s per-game y and n."""
    rng = np.random.default_rng(7)
    games = {
        (cell, p): (rng.integers(0, 300, 20), rng.integers(5, 40, 20))
        for cell, p in ((0, "ev"), (1, "evc"), (2, "ev"), (2, "evc"), (3, "ev"))
    }
    split = {0: (0, 0, 10), 1: (0, 10, 20), 2: (1, 0, 10), 3: (1, 10, 15), 6: (1, 15, 20)}
    split |= {4: (2, 0, 10), 5: (2, 10, 20), 7: (3, 0, 20)}
    shards, records = [], {}
    for number, (cell, lo, hi) in split.items():
        path = tmp_path / "rollups" / f"run={RUN}" / "players=2" / f"shard-{number:05d}.parquet"
        write(
            path,
            [
                (cell, lo, p, f, list(y[lo:hi]), list(n[lo:hi]))
                for (c, p), (y, n) in games.items()
                if c == cell
                for f in ("win", "points")
            ],
        )
        shards.append(Shard(RUN, 2, number, {"rollups": str(path)}))
        records[str(number)] = {"cell": cell, "start": lo}
    manifest = tmp_path / "runs" / RUN / "manifest.json"
    manifest.parent.mkdir(parents=True)
    lineups = {0: ["ev", "x"], 1: ["evc", "x"], 2: ["ev", "evc"], 3: ["ev", "x"]}
    cells = [
        {"cell": c, "players": 2, "pair": int(c == 3), "lineup": lineup}
        for c, lineup in lineups.items()
    ]
    manifest.write_text(json.dumps({"run": RUN, "cells": cells, "shards": records}))
    return Snapshot(str(tmp_path), shards, {RUN: str(manifest)}), games


def expected(
    games: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]], c: tuple[int, str], b: tuple
) -> np.ndarray:
    yc, nc = (x.astype(float) for x in games[c])
    yb, nb = (x.astype(float) for x in games[b])
    return twins.products(yc, nc, yb, nb)


def got(table: pa.Table, cell_c: int, cell_b: int, figure: str = "points") -> np.ndarray:
    rows = [
        r
        for r in table.to_pylist()
        if (r["run"], r["cell_c"], r["counting"], r["cell_b"], r["base"], r["figure"])
        == (RUN, cell_c, "evc", cell_b, "ev", figure)
    ]
    assert len(rows) == 1, rows
    return np.array([rows[0]["g"], *(rows[0][s] for s in twins.SUMS)], dtype=float)


def test_paired_sums_equal_numpy_over_the_games_however_the_shards_split(lake) -> None:
    snap, games = lake
    table = twins.moments(snap)
    assert table.schema == twins.SCHEMA
    # cell 1 against cell 0: shards 0-10 line up; 10-20 is one shard against two of 5 games
    assert np.array_equal(got(table, 1, 0), expected(games, (1, "evc"), (0, "ev")))
    # both policies at one table: the same shard's two lists
    assert np.array_equal(got(table, 2, 2), expected(games, (2, "evc"), (2, "ev")))
    assert np.array_equal(got(table, 1, 2), expected(games, (1, "evc"), (2, "ev")))
    assert {r["counting"] for r in table.to_pylist()} == {"evc"}  # ev has no twin
    assert 3 not in table["cell_b"].to_pylist()  # another CRN pair: its shard is not read


def test_without_a_manifest_or_with_a_wrong_one_the_sums_are_the_same(lake) -> None:
    snap, _ = lake
    hinted = twins.moments(snap)
    unhinted = Snapshot(snap.root, snap.shards)  # every file read first, grouped as it says
    every = twins.moments(unhinted)
    assert every.filter(pc.field("cell_b") != 3).equals(hinted)
    path = Path(snap.manifests[RUN])
    m = json.loads(path.read_text())
    m["shards"]["6"]["start"] = 10  # shard 6 starts at game 15 of its cell
    path.write_text(json.dumps(m))
    assert twins.moments(snap).equals(hinted)


def test_the_relation_is_computed_on_first_read_only(
    spec_lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from warehouse import connect

    calls = []
    real = twins.moments
    monkeypatch.setattr(twins, "moments", lambda snap: calls.append(1) or real(snap))
    con = connect(spec_lake)
    assert calls == []  # opening the lake reads no list
    n = con.execute("SELECT count(*) FROM int_twin_moments").fetchall()[0][0]
    assert con.execute("SELECT count(*) FROM card_counting").fetchall()[0][0] > 0
    assert calls == [1]
    assert n == real(screen(snapshot(spec_lake))[0]).num_rows > 0


def test_the_rollups_pass_folds_in_the_same_sums(lake) -> None:
    """Folded into the rollups rows' one pass (each file handed over once, in the fold's
    order), the sums are moments': hinted, without a manifest, and with a shard misplaced."""
    from warehouse.rollups import RollupRows

    snap, _ = lake

    def folded(snap: Snapshot) -> pa.Table:
        fold = twins.Fold(snap)
        rows = RollupRows(snap, fold)
        n = sum(b.num_rows for b in rows.batches())
        assert n == sum(b.num_rows for b in RollupRows(snap).batches())  # the same rows
        assert fold.table is not None
        return fold.table

    assert folded(snap).equals(twins.moments(snap))
    unhinted = Snapshot(snap.root, snap.shards)
    assert folded(unhinted).equals(twins.moments(unhinted))
    path = Path(snap.manifests[RUN])
    m = json.loads(path.read_text())
    m["shards"]["6"]["start"] = 10  # misplaced: that run is read again without hints
    path.write_text(json.dumps(m))
    assert folded(snap).equals(twins.moments(snap))


def test_the_report_reads_each_rollups_file_once(
    spec_lake: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flip7 report`: the card-counting mart's lists come from the rollups pass at connect,
    not from reading every file again, and its figures are those of the separate pass."""
    from flip7.cli import main
    from warehouse import connect
    from warehouse.rollups import RollupRows

    run = screen(snapshot(spec_lake))[0].shards[0].run
    alone = connect(spec_lake, [run]).execute("SELECT * FROM card_counting ORDER BY ALL")
    expected_rows = alone.fetchall()
    assert expected_rows
    reads: list[str] = []
    real_whole, real_lists = RollupRows.read_whole, twins.read_lists

    def whole(self: RollupRows, shard: Shard, lists: bool = True) -> tuple[pa.Table, pa.Table]:
        reads.append(shard.files["rollups"])
        return real_whole(self, shard, lists)

    def lists(snap: Snapshot, path: str) -> list[twins.Entry]:
        reads.append(path)
        return real_lists(snap, path)

    monkeypatch.setattr(RollupRows, "read_whole", whole)
    monkeypatch.setattr(twins, "read_lists", lists)
    assert main(["report", run, "--data", str(spec_lake), "--no-file", "--format", "json"]) == 0
    capsys.readouterr()
    assert reads and len(reads) == len(set(reads))  # each file once
    con = connect(spec_lake, [run], card_counting=True)
    reads.clear()
    assert con.execute("SELECT * FROM card_counting ORDER BY ALL").fetchall() == expected_rows
    assert reads == []  # the mart read no file: connect's pass gave it its lists
