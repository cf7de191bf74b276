"""warehouse.db.LakeDataset: DuckDB scans the lake's files through its `scanner`, so the
read-ahead limits (LOCAL_SCAN) hold, and the query's columns still reach pyarrow."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

from flip7.cli import main
from pipeline.schema import unpack_events
from warehouse import connect
from warehouse import db as warehouse_db

from .lakes import Lake, read_lake, read_table


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
    # DuckDB reads a dataset's scanner through to_reader (the events decode batch by batch)
    sizes = [b.num_rows for b in data.scanner(columns=["game"]).to_reader()]
    assert max(sizes) == 7
    assert sum(sizes) == con.execute("SELECT count(*) FROM stg_event_games").fetchall()[0][0]


@pytest.mark.parametrize(
    ("where", "keep"),
    [
        ("round = 2", lambda t: pc.equal(t["round"], 2)),
        ("policy = 'ev'", lambda t: pc.equal(t["policy"], "ev")),
        (
            "total > 100 AND game < 60",
            lambda t: (pc.field("total") > 100) & (pc.field("game") < 60),
        ),
        ("busted AND seat = 1", lambda t: pc.and_(t["busted"], pc.equal(t["seat"], 1))),
    ],
)
def test_a_where_on_a_decoded_rounds_column_gives_the_decoded_rows(
    lake: Lake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    keep: object,
) -> None:
    """`flip7 sql` with a WHERE on columns the rounds files do not store as such (decoded from
    their per-game values: round, policy, the running total, ...) gives the rows of the decoded
    files that the condition keeps: the filter DuckDB hands the scan is applied to the decoded
    rows (a filter on stored columns alone also prunes the files)."""
    filters: list[object] = []
    scanner = warehouse_db.StoredDataset.scanner

    def spy(self: warehouse_db.StoredDataset, **kwargs: object) -> object:
        filters.append(kwargs.get("filter"))
        return scanner(self, **kwargs)

    monkeypatch.setattr(warehouse_db.StoredDataset, "scanner", spy)
    rows = read_lake(lake.root, "rounds")
    rows = rows.set_column(
        rows.column_names.index("policy"), "policy", rows["policy"].cast(pa.string())
    )
    mask = keep(rows)  # type: ignore[operator]
    expected = rows.filter(mask)
    query = (
        "SELECT run, game, round, seat, policy, score, total, busted FROM stg_rounds "
        f"WHERE {where} ORDER BY run, game, round, seat"
    )
    code = main(["sql", query, "--data", str(lake.root), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = json.loads(out)
    assert 0 < len(got) < rows.num_rows
    assert any(f is not None for f in filters)  # DuckDB pushed the WHERE into the scan
    keys = ("run", "game", "round", "seat")
    want = expected.sort_by([(k, "ascending") for k in keys]).select(list(got[0]))
    assert got == want.to_pylist()


def test_a_where_on_a_decoded_events_column_gives_the_decoded_rows(lake: Lake) -> None:
    """stg_events WHERE round = 2 (a column unpacked from the decoded codes) and stg_event_games
    WHERE len(codes) > 100 count the events and games of the decoded files that qualify."""
    con = connect(lake.root)
    events = long_games = 0
    for path in sorted(lake.root.glob("events/run=*/players=*/*.parquet")):
        t = read_table(path)
        r = read_table(Path(str(path).replace("/events/", "/rounds/")))
        flat = unpack_events(t, r)
        events += pc.sum(pc.equal(flat["round"], 2)).as_py() or 0
        long_games += pc.sum(pc.greater(pc.list_value_length(t["codes"]), 100)).as_py() or 0
    assert con.execute("SELECT count(*) FROM stg_events WHERE round = 2").fetchall() == [(events,)]
    assert con.execute(
        "SELECT count(*) FROM stg_event_games WHERE len(codes) > 100"
    ).fetchall() == [(long_games,)]
    assert 0 < long_games and 0 < events


def test_count_star_of_a_stored_table_counts_the_decoded_rows(lake: Lake) -> None:
    """count(*) asks the scan for no column: each batch still brings its decoded rows (a seat
    per round, a game's log), not none."""
    con = connect(lake.root)
    for view, table in (("stg_rounds", "rounds"), ("stg_event_games", "events")):
        got = con.execute(f"SELECT count(*) FROM {view}").fetchall()
        assert got == [(read_lake(lake.root, table).num_rows,)], view


def test_a_where_on_a_decoded_column_decodes_only_the_columns_it_needs(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan decodes the columns the query asks for and those its filter names, not every
    column of the table (the running totals and the policies cost the most to decode); the
    count is the decoded rows'."""
    decoded: list[list[str] | None] = []
    decode = warehouse_db.codec.decode

    def spy(table: str, stored: object, meta: object, columns: list[str] | None = None) -> object:
        decoded.append(columns)
        return decode(table, stored, meta, columns)  # type: ignore[arg-type]

    con = connect(lake.root)
    rows = read_lake(lake.root, "rounds")
    monkeypatch.setattr(warehouse_db.codec, "decode", spy)
    (got,) = con.execute("SELECT count(*) FROM stg_rounds WHERE round = 2").fetchall()[0]
    assert got == pc.sum(pc.equal(rows["round"], 2)).as_py() > 0
    assert decoded and all(c is not None and set(c) <= {"game", "round"} for c in decoded)
