"""Data tests and `verify`: a clean lake passes every check; each kind of damage is caught."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.events import CODE_SHIFTS
from pipeline.schema import event_codes, events_table, unpack_events
from warehouse import connect, verify
from warehouse.build import sql_files
from warehouse.commands import describe
from warehouse.verify import Verification, failing_rows

from .lakes import Lake, plan, shard_path, write_run


def failed(v: Verification) -> dict[str, int]:
    return {c.name: c.failed for c in v.checks if c.failed}


def edit(path: Path, column: str, row: int, delta: int) -> None:
    """Rewrite a Parquet file with `delta` added to one cell (same schema)."""
    table = pq.read_table(path)
    values = table[column].to_numpy().copy()
    values[row] += delta
    i = table.schema.get_field_index(column)
    table = table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))
    pq.write_table(table, path, compression="zstd")


def edit_event(path: Path, row: int, delta: int) -> None:
    """Rewrite an events file with `delta` added to the packed code of its event `row` (in
    unpack_events order)."""
    flat = event_codes(pq.read_table(path))
    flat["code"][row] += delta
    table = events_table(flat["game"], flat["round"], flat["seq"], flat["code"])
    pq.write_table(table, path, compression="zstd")


def event_count(paths: object) -> int:
    """Events (not stored rows) in these events files."""
    return sum(len(event_codes(pq.read_table(p))["code"]) for p in paths)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(sql_files("tests")))
def test_data_tests_find_nothing_wrong_with_a_clean_lake(lake: Lake, name: str) -> None:
    """Every sql/tests/assert_*.sql returns zero rows on the freshly written lake."""
    con = connect(lake.root)
    assert failing_rows(con, sql_files("tests")[name]) == []


def test_verify_passes_a_clean_lake(lake: Lake) -> None:
    """All checks pass, every shard and event is counted, and the account says so."""
    v = verify(lake.root, workers=2)
    assert v.ok, describe(v)
    assert v.shards == sum(len(t) for t in lake.tasks.values())
    assert v.events == event_count(lake.root.glob("events/*/*/*.parquet"))
    assert describe(v)[-1] == "all checks passed"


def test_verify_one_run(lake: Lake) -> None:
    """verify RUN looks at that run only."""
    v = verify(lake.root, "t2")
    assert v.ok and v.runs == ["t2"] and v.shards == len(lake.tasks["t2"])


def test_an_edited_round_score_is_caught(lake_copy: Lake) -> None:
    """A round score changed in the compact table disagrees with the events' rebuild."""
    task = lake_copy.tasks["t1"][2]
    path = shard_path(lake_copy.root, "rounds", task)
    edit(path, "score", 5, 3)
    v = verify(lake_copy.root)
    assert failed(v).keys() == {"assert_rounds_match_events", "assert_games_complete"}
    (example,) = next(c for c in v.checks if c.name == "assert_rounds_match_events").examples
    row = pq.read_table(path).slice(5, 1).to_pylist()[0]
    assert (example["game"], example["round"], example["seat"]) == (
        row["game"],
        row["round"],
        row["seat"],
    )
    assert "rebuilt from events" in str(example["problem"])


def test_an_edited_event_is_caught(lake_copy: Lake) -> None:
    """A number card changed in the event log (in a round its drawer did not bust, where every
    number counts) no longer adds up to the logged round score."""
    task = lake_copy.tasks["t1"][0]
    path = shard_path(lake_copy.root, "events", task)
    ev = unpack_events(pq.read_table(path)).to_pandas()
    rounds = pq.read_table(shard_path(lake_copy.root, "rounds", task)).to_pandas()
    kept = rounds[~rounds.busted][["game", "round", "seat"]].rename(columns={"seat": "player"})
    draws = ev.reset_index().merge(kept, on=["game", "round", "player"])
    row = int(draws[(draws.kind == 1) & draws.card.between(2, 12)]["index"].iloc[0])
    edit_event(path, row, -(1 << CODE_SHIFTS[2]))  # the packed card, one lower
    assert "assert_rounds_match_events" in failed(verify(lake_copy.root))


def test_a_duplicated_event_row_is_caught(lake_copy: Lake) -> None:
    """An event row written twice changes the game's event count and sequence."""
    path = shard_path(lake_copy.root, "events", lake_copy.tasks["t2"][0])
    table = pq.read_table(path)
    pq.write_table(pa.concat_tables([table, table.slice(10, 1)]), path)
    bad = failed(verify(lake_copy.root))
    assert {"assert_games_match_events", "assert_manifest_counts"} <= bad.keys()


def test_a_wrong_winner_is_caught(lake_copy: Lake) -> None:
    """A games row that names another winner disagrees with GAME_END."""
    path = shard_path(lake_copy.root, "games", lake_copy.tasks["t1"][4])
    table = pq.read_table(path)
    winner = table["winner"].to_numpy(zero_copy_only=False).copy()
    winner[:2] = ~winner[:2]  # game 0 of the shard: seats 0 and 1 swap winning
    i = table.schema.get_field_index("winner")
    pq.write_table(table.set_column(i, "winner", pa.array(winner)), path)
    assert "assert_games_match_events" in failed(verify(lake_copy.root))


def test_a_deleted_events_file_is_caught(lake_copy: Lake) -> None:
    """A committed shard without its events file: reported, and the manifest disagrees."""
    task = lake_copy.tasks["t1"][3]
    shard_path(lake_copy.root, "events", task).unlink()
    v = verify(lake_copy.root)
    assert {"committed_files", "assert_manifest_counts"} <= failed(v).keys()
    assert any("events file is missing" in line for line in describe(v))


def test_a_deleted_shard_is_caught(lake_copy: Lake) -> None:
    """A whole shard gone from a complete run: the manifest lists it and its games are missing."""
    task = lake_copy.tasks["t1"][1]
    for table in ("events", "rounds", "games"):
        shard_path(lake_copy.root, table, task).unlink()
    bad = failed(verify(lake_copy.root))
    assert {"assert_manifest_counts", "assert_runs_complete"} <= bad.keys()


def test_manifest_counts_must_match_the_files(lake_copy: Lake) -> None:
    """A manifest whose row count differs from the Parquet footer is reported."""
    path = lake_copy.root / "runs" / "t2" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["shards"]["0"]["rows"]["rounds"] += 1
    path.write_text(json.dumps(manifest))
    v = verify(lake_copy.root)
    assert failed(v) == {"assert_manifest_counts": 1}
    assert any("rounds:" in line and "in the manifest" in line for line in describe(v))


def test_readers_see_only_committed_shards(tmp_path: Path, lake: Lake) -> None:
    """Mid-write, a shard's events and rounds exist without its games file, and a temporary
    file lies beside them: readers count neither, and verify passes a running run."""
    root = tmp_path / "data"
    tasks = plan("t1")
    write_run(root, "t1", tasks[:4])  # manifest says running, 4 shards done
    pending = tasks[4]
    from pipeline.shard import simulate_shard

    tables = simulate_shard(pending)
    for name in ("events", "rounds"):
        path = shard_path(root, name, pending)
        pq.write_table(tables[name], path)
    tmp = shard_path(root, "games", pending).with_name("shard-00004.parquet.tmp-abc")
    tmp.write_bytes(b"half a file")
    con = connect(root)
    committed = sum(t.n_games for t in tasks[:4])
    assert con.execute("SELECT count(*) FROM fct_games").fetchall()[0][0] == committed
    events = con.execute("SELECT count(*) FROM stg_events").fetchall()[0][0]
    assert events == event_count(shard_path(root, "events", t) for t in tasks[:4])
    assert con.execute("SELECT status, shards FROM runs").fetchall() == [("running", 4)]
    assert verify(root).ok
    os.replace(tmp, tmp)  # still there: nothing read or removed it


def test_verify_on_a_lake_with_nothing_in_it(tmp_path: Path) -> None:
    """An empty directory is an error that says so, not a traceback."""
    with pytest.raises(FileNotFoundError, match="nothing to verify"):
        verify(tmp_path)


def test_verify_scratch_database_spills_nothing_into_the_working_directory(tmp_path, monkeypatch):
    """verify's own DuckDB (warehouse.db.scratch) keeps the readers' memory limit and never
    spills into .tmp/ of the directory it is run from: only into a private directory under
    $FLIP7_SPILL_DIR, at most $FLIP7_SPILL_LIMIT (a query over both fails), gone afterwards."""
    import gc

    import duckdb as _duckdb
    import pytest as _pytest

    from warehouse.db import scratch

    cwd, spills = tmp_path / "cwd", tmp_path / "spills"
    cwd.mkdir()
    spills.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("FLIP7_SPILL_DIR", str(spills))
    monkeypatch.setenv("FLIP7_SPILL_LIMIT", "20MB")
    con = scratch("64MB")
    temp = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    assert os.path.dirname(os.path.dirname(temp)) == str(spills)
    with _pytest.raises(_duckdb.Error, match="Out of Memory"):  # spill limit, or memory
        con.execute(
            "SELECT a.i, b.i FROM range(20000) a(i), range(5000) b(i) ORDER BY hash(a.i * b.i)"
        ).fetchall()
    assert list(cwd.iterdir()) == []
    del con
    gc.collect()
    assert list(spills.iterdir()) == []
