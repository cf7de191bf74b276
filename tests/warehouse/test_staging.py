"""The staging views read the pipeline's Parquet contract: stg_events unpacks the event code as
pipeline.schema does, and a run written with another schema version is refused by name."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from pipeline.schema import SCHEMA_VERSION as WRITTEN
from pipeline.schema import unpack_events
from warehouse import EmptyLakeError, connect
from warehouse.db import problems
from warehouse.lake import SCHEMA_VERSION as READ

from .lakes import Lake, shard_path


def test_the_warehouse_reads_the_schema_the_pipeline_writes() -> None:
    """The version the views are written for is the one the pipeline writes."""
    assert READ == WRITTEN


def test_stg_events_unpacks_every_event_as_pipeline_schema_does(lake: Lake) -> None:
    """stg_events of one shard equals unpack_events of its file, row for row."""
    task = lake.tasks["t1"][0]
    expected = unpack_events(pq.read_table(shard_path(lake.root, "events", task)))
    con = connect(lake.root, runs=["t1"])
    got = con.sql(
        "SELECT game, round, seq, kind, player, card, target, value FROM stg_events "
        f"WHERE shard = {task.shard} ORDER BY game, seq"
    ).to_arrow_table()
    cols = expected.column_names
    assert {c: got.column(c).to_pylist() for c in cols} == {
        c: expected.column(c).to_pylist() for c in cols
    }


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
