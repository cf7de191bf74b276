"""warehouse.db.LakeDataset: DuckDB scans the lake's files through its `scanner`, so the
read-ahead limits (LOCAL_SCAN) hold, and the query's columns still reach pyarrow."""

from __future__ import annotations

from pathlib import Path

import pyarrow.dataset as ds
import pytest

from warehouse import connect
from warehouse import db as warehouse_db


def test_duckdb_scans_the_lake_through_lake_dataset_with_the_projection(
    spec_lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every scan of a staging view asks LakeDataset.scanner (a DuckDB that stopped calling it
    would read ahead pyarrow's default 16 batches of 131,072 rows again), naming only the
    columns the query needs and its filter."""
    calls: list[dict[str, object]] = []
    scanner = warehouse_db.LakeDataset.scanner

    def spy(self: warehouse_db.LakeDataset, **kwargs: object) -> ds.Scanner:
        calls.append(kwargs)
        return scanner(self, **kwargs)

    monkeypatch.setattr(warehouse_db.LakeDataset, "scanner", spy)
    con = connect(spec_lake)
    calls.clear()  # what connect computed (the marts it keeps) scanned too
    con.execute("SELECT count(DISTINCT game) FROM stg_games WHERE seat = 0").fetchall()
    assert len(calls) == 1
    # the filter is pyarrow's to apply (it pushes it down), so seat is not asked for
    assert calls[0]["columns"] == ["game"]
    assert calls[0]["filter"] is not None


def test_a_scan_hands_duckdb_batches_of_the_lake_batch_rows(
    spec_lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batches of an events scan of a local lake hold EVENT_BATCH_ROWS rows at most (a
    game's log each), and every row comes."""
    monkeypatch.setattr(warehouse_db, "EVENT_BATCH_ROWS", 7)
    con = connect(spec_lake)
    data = warehouse_db.arrow_dataset(warehouse_db.snapshot(spec_lake), "events")
    assert isinstance(data, warehouse_db.LakeDataset)
    sizes = [b.num_rows for b in data.scanner(columns=["game"]).to_batches()]
    assert max(sizes) == 7
    assert sum(sizes) == con.execute("SELECT count(*) FROM stg_event_games").fetchall()[0][0]
