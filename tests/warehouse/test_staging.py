"""The staging views read the pipeline's Parquet contract: stg_events unpacks the event code,
numbers the events and puts the round scores back as pipeline.schema does, stg_event_games shows
the stored rows, and a run written with another schema version is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flip7.events import EventKind
from pipeline.schema import SCHEMA_VERSION as WRITTEN
from pipeline.schema import unpack_events
from warehouse import EmptyLakeError, connect
from warehouse.db import problems
from warehouse.lake import SCHEMA_VERSION as READ
from warehouse.lake import local_footer_rows

from .lakes import Lake, read_table, shard_path, write_run


def test_the_warehouse_reads_the_schema_the_pipeline_writes() -> None:
    """The version the views are written for is the one the pipeline writes."""
    assert READ == WRITTEN


@pytest.mark.parametrize(("run", "index"), [("t1", 0), ("t1", 5), ("t2", 0), ("v1", 0)])
def test_stg_events_unpacks_every_event_as_pipeline_schema_does(
    lake: Lake, tmp_path: Path, run: str, index: int
) -> None:
    """stg_events of one shard equals unpack_events of its events and rounds files, row for
    row: every event, HITs unfolded, numbered 0.. per game, the round scores put back where the
    engine logs them (Second Chances set aside at round end included: Vengeance and 3-seat
    classic shards have them)."""
    root = lake.root
    if run not in lake.tasks:
        root = tmp_path / "data"
        tasks = write_run(root, run)
    else:
        tasks = lake.tasks[run]
    task = tasks[index]
    expected = unpack_events(
        read_table(shard_path(root, "events", task)),
        read_table(shard_path(root, "rounds", task)),
    )
    con = connect(root, runs=[run])
    got = con.sql(
        "SELECT game, round, seq, kind, player, card, target, value FROM stg_events "
        f"WHERE shard = {task.shard} ORDER BY game, seq"
    ).to_arrow_table()
    cols = expected.column_names
    assert {c: got.column(c).to_pylist() for c in cols} == {
        c: expected.column(c).to_pylist() for c in cols
    }
    kinds = set(expected.column("kind").to_pylist())
    assert {int(EventKind.ROUND_SCORE), int(EventKind.HIT)} <= kinds


def test_stg_event_games_shows_the_stored_rows(lake: Lake) -> None:
    """One row per game with its lists as the file's rows decode (lakecontract.codec), round
    lengths adding up to the codes, and the events it stands for: what the games table counts,
    and the rows of stg_events."""
    con = connect(lake.root)
    task = lake.tasks["t2"][0]
    table = read_table(shard_path(lake.root, "events", task))
    got = con.execute(
        "SELECT game, rounds, codes FROM stg_event_games WHERE run = 't2' AND shard = $s "
        "ORDER BY game",
        {"s": task.shard},
    ).fetchall()
    stored = [table.column(c).to_pylist() for c in ("game", "rounds", "codes")]
    assert got == list(zip(*stored, strict=True))
    assert con.execute(
        "SELECT count(*) FILTER (list_sum(rounds) <> len(codes)) FROM stg_event_games"
    ).fetchall() == [(0,)]
    counts = con.execute(
        "SELECT e.run, e.game, e.events, g.events FROM stg_event_games AS e "
        "JOIN stg_games AS g ON e.run = g.run AND e.game = g.game AND g.seat = 0"
    ).fetchall()
    assert counts and all(a == b for _, _, a, b in counts)
    total = con.execute("SELECT sum(events) FROM stg_event_games").fetchall()[0][0]
    assert total == con.execute("SELECT count(*) FROM stg_events").fetchall()[0][0]


def test_stg_stored_events_is_stg_events_without_the_round_scores(lake: Lake) -> None:
    """stg_stored_events holds exactly the stg_events rows that are not ROUND_SCOREs, numbered
    alike, and none that are."""
    con = connect(lake.root)
    columns = "run, players, shard, game, round, seq, kind, player, card, target, value"
    differ = con.execute(
        f"SELECT count(*) FROM ((SELECT {columns} FROM stg_events WHERE kind <> 15) "
        f"EXCEPT ALL (SELECT {columns} FROM stg_stored_events))"
    ).fetchall()
    assert differ == [(0,)]
    counts = con.execute(
        "SELECT (SELECT count(*) FROM stg_stored_events), "
        "(SELECT count(*) FILTER (kind <> 15) FROM stg_events), "
        "(SELECT count(*) FILTER (kind = 15) FROM stg_stored_events)"
    ).fetchall()
    assert counts[0][0] == counts[0][1] > 0 and counts[0][2] == 0


def test_stg_events_is_read_a_game_at_a_time(lake: Lake) -> None:
    """A filter on run and game reaches every scan of the files (game_timeline reads one
    game), and nothing is materialized in between (a materialized step would read every
    event of the lake first)."""
    con = connect(lake.root)
    plan = con.execute("EXPLAIN SELECT * FROM stg_events WHERE run = 't1' AND game = 41").fetchall()
    text = plan[0][1]
    assert "CTE" not in text
    scans = text.count("ARROW_SCAN")
    assert scans >= 2 and text.count('"game" = 41') == scans


def test_a_run_of_another_schema_version_is_refused_by_name(lake_copy: Lake) -> None:
    """A manifest naming another schema version: that run is left out with a line naming it and
    the fix, and the other run still reads; asked for alone, a clear error says the same."""
    path = lake_copy.root / "runs" / "t2" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 2
    path.write_text(json.dumps(manifest))
    con = connect(lake_copy.root)
    assert con.execute("SELECT DISTINCT run FROM stg_games").fetchall() == [("t1",)]
    (line,) = [p for p in problems(con) if p.startswith("run t2:")]
    assert "left out" in line and "schema v2" in line and "flip7 warehouse upgrade t2" in line
    with pytest.raises(EmptyLakeError, match=r"run t2 left out: .*schema v2"):
        connect(lake_copy.root, runs=["t2"])


def test_stg_parquet_files_counts_the_rows_pyarrow_reads(lake: Lake, tmp_path: Path) -> None:
    """The row count of every committed file, as the screen read it from the file's footer
    (warehouse.lake.local_footer_rows), is pyarrow's own reading of that file; a file too short
    for Parquet, or without its magic bytes, is refused saying so."""
    con = connect(lake.root)
    rows = dict(con.execute("SELECT path, num_rows FROM stg_parquet_files").fetchall())
    assert len(rows) == 4 * sum(len(tasks) for tasks in lake.tasks.values())
    assert rows == {p: pq.read_metadata(p).num_rows for p in rows}
    short, plain = tmp_path / "short.parquet", tmp_path / "plain.parquet"
    short.write_bytes(b"PAR1PAR1")
    plain.write_bytes(b"not a parquet file, only text")
    with pytest.raises(ValueError, match="too short"):
        local_footer_rows(str(short))
    with pytest.raises(ValueError, match="magic bytes"):
        local_footer_rows(str(plain))
