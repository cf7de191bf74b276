"""Data tests and `verify`: a clean lake passes every check; each kind of damage is caught."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.events import CODE_SHIFTS, HIT_SHIFT, EventKind
from lakecontract import codec
from pipeline.schema import EVENTS, event_codes, events_table, unpack_events
from warehouse import connect, verify
from warehouse.build import sql_files
from warehouse.commands import describe
from warehouse.verify import Verification, failing_rows

from .lakes import Lake, plan, read_table, shard_path, write_run, write_table


def failed(v: Verification) -> dict[str, int]:
    return {c.name: c.failed for c in v.checks if c.failed}


def edit(path: Path, column: str, row: int, delta: int) -> None:
    """Rewrite a lake file with `delta` added to one cell of the rows readers see (stored as
    the lake stores it: a rounds `score` edited moves its seat's later totals with it)."""
    table = read_table(path)
    values = table[column].to_numpy().copy()
    values[row] += delta
    i = table.schema.get_field_index(column)
    table = table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))
    write_table(table, path)


def rounds_of(path: Path) -> pa.Table:
    """The rounds rows of the shard whose events file is at `path`."""
    return read_table(Path(str(path).replace("/events/", "/rounds/")))


def edit_event(path: Path, row: int, delta: int) -> None:
    """Rewrite an events file with `delta` added to the packed code of its event `row` (in
    unpack_events order: every event, round scores included; a round score is not stored, so
    `row` names another event)."""
    flat = event_codes(read_table(path), rounds_of(path))
    assert flat["code"][row] & 31 != EventKind.ROUND_SCORE
    flat["code"][row] += delta
    write_table(events_table(flat["game"], flat["round"], flat["code"]), path)


def edit_stored(path: Path, game: int, edit: Callable[[list[int], list[int]], None]) -> None:
    """Rewrite an events file with one game's stored lists (its round lengths and codes)
    changed in place by `edit`."""
    rows = read_table(path).to_pylist()
    (row,) = [r for r in rows if r["game"] == game]
    edit(row["rounds"], row["codes"])
    write_table(pa.Table.from_pylist(rows, schema=EVENTS), path)


def event_count(paths: object) -> int:
    """Events (not stored rows) in these events files, round scores included."""
    return sum(
        len(event_codes(read_table(p), rounds_of(p))["code"])
        for p in paths  # type: ignore[attr-defined]
    )


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
    """A round score changed in the compact table disagrees with the events' rebuild (and with
    the shard's rollup, made from the table as it was written). The rounds file stores no
    total (decoding sums the seat's scores), so its running totals move with the score and
    still add up."""
    task = lake_copy.tasks["t1"][2]
    path = shard_path(lake_copy.root, "rounds", task)
    edit(path, "score", 5, 3)
    v = verify(lake_copy.root)
    assert failed(v).keys() == {"assert_rounds_match_events", "assert_rollups_match_tables"}
    (example,) = next(c for c in v.checks if c.name == "assert_rounds_match_events").examples
    row = read_table(path).slice(5, 1).to_pylist()[0]
    assert (example["game"], example["round"], example["seat"]) == (
        row["game"],
        row["round"],
        row["seat"],
    )
    assert "rebuilt from events" in str(example["problem"])


@pytest.mark.parametrize("column", ["y", "yy", "games"])
def test_a_tampered_rollup_is_caught_by_name(lake_copy: Lake, column: str) -> None:
    """A rollups file whose sums were edited (a win added, a square, a game) no longer equals
    the one recomputed from its shard's games and rounds: verify names that check and the
    shard's rows; the games, rounds and events checks still pass."""
    task = lake_copy.tasks["t1"][1]
    path = shard_path(lake_copy.root, "rollups", task)
    edit(path, column, 0, 1)
    v = verify(lake_copy.root)
    assert failed(v).keys() == {"assert_rollups_match_tables"}
    examples = next(c for c in v.checks if c.name == "assert_rollups_match_tables").examples
    assert examples and all(e["shard"] == task.shard for e in examples), examples


def test_an_edited_event_is_caught(lake_copy: Lake) -> None:
    """A number card changed in the event log (in a round its drawer did not bust, where every
    number counts) no longer adds up to the round score the rounds table logs."""
    task = lake_copy.tasks["t1"][0]
    path = shard_path(lake_copy.root, "events", task)
    ev = unpack_events(read_table(path), rounds_of(path)).to_pandas()
    rounds = read_table(shard_path(lake_copy.root, "rounds", task)).to_pandas()
    kept = rounds[~rounds.busted][["game", "round", "seat"]].rename(columns={"seat": "player"})
    draws = ev.reset_index().merge(kept, on=["game", "round", "player"])
    row = int(draws[(draws.kind == 1) & draws.card.between(2, 12)]["index"].iloc[0])
    edit_event(path, row, -(1 << CODE_SHIFTS[2]))  # the packed card, one lower
    assert "assert_rounds_match_events" in failed(verify(lake_copy.root))


def test_a_duplicated_event_row_is_caught(lake_copy: Lake) -> None:
    """A game's events row written twice doubles its event count and is named."""
    path = shard_path(lake_copy.root, "events", lake_copy.tasks["t2"][0])
    table = read_table(path)
    write_table(pa.concat_tables([table, table.slice(10, 1)]), path)
    v = verify(lake_copy.root)
    bad = failed(v)
    assert {"assert_games_match_events", "assert_manifest_counts"} <= bad.keys()
    (check,) = [c for c in v.checks if c.name == "assert_games_complete"]
    assert [str(r["problem"]) for r in check.examples] == ["2 events rows, not one"]


def _first_draw(codes: list[int]) -> int:
    """The index of a game's first stored DRAW (a HIT folded into it or not)."""
    return next(i for i, c in enumerate(codes) if c & 31 == EventKind.DRAW)


def test_a_dropped_event_is_caught(lake_copy: Lake) -> None:
    """A DRAW taken out of a game's codes (its round's length one less, so the lists still fit
    together): the game's event count no longer matches the games table's."""
    task = lake_copy.tasks["t1"][2]
    path = shard_path(lake_copy.root, "events", task)
    game = read_table(path)["game"][3].as_py()

    def drop(rounds: list[int], codes: list[int]) -> None:
        i = _first_draw(codes)
        at, r = 0, 0
        while at + rounds[r] <= i:
            at, r = at + rounds[r], r + 1
        rounds[r] -= 1
        del codes[i]

    edit_stored(path, game, drop)
    v = verify(lake_copy.root, "t1")
    assert "assert_games_match_events" in failed(v)
    (check,) = [c for c in v.checks if c.name == "assert_games_match_events"]
    assert any(r["game"] == game and "events in games" in str(r["problem"]) for r in check.examples)


def test_a_changed_draw_in_the_stored_codes_is_caught(lake_copy: Lake) -> None:
    """A number card one lower in a stored DRAW (a HIT folded into it or not) of a seat that did
    not bust that round: the rebuilt round no longer equals the rounds table's."""
    task = lake_copy.tasks["t2"][0]
    path = shard_path(lake_copy.root, "events", task)
    rounds = rounds_of(path).to_pandas()
    kept = set(map(tuple, rounds[~rounds.busted][["game", "round", "seat"]].to_numpy().tolist()))
    game = read_table(path)["game"][2].as_py()

    def change(lengths: list[int], codes: list[int]) -> None:
        element_round = [r + 1 for r, n in enumerate(lengths) for _ in range(n)]
        for i, c in enumerate(codes):
            player = ((c >> CODE_SHIFTS[1]) & 63) - 1
            card = ((c >> CODE_SHIFTS[2]) & 63) - 1
            if c & 31 == EventKind.DRAW and 2 <= card <= 11:
                if (game, element_round[i], player) in kept:
                    codes[i] -= 1 << CODE_SHIFTS[2]
                    return
        raise AssertionError("no number drawn by a seat that did not bust")

    edit_stored(path, game, change)
    v = verify(lake_copy.root, "t2")
    assert "assert_rounds_match_events" in failed(v)
    (check,) = [c for c in v.checks if c.name == "assert_rounds_match_events"]
    assert {r["game"] for r in check.examples} == {game}
    assert all("rebuilt from events" in str(r["problem"]) for r in check.examples)


def test_round_lengths_that_do_not_fit_the_codes_are_caught(lake_copy: Lake) -> None:
    """A game's round lengths adding up to more than its codes: named as such, and its event
    count is off."""
    task = lake_copy.tasks["t1"][1]
    path = shard_path(lake_copy.root, "events", task)
    game = read_table(path)["game"][0].as_py()

    def lengthen(rounds: list[int], codes: list[int]) -> None:
        rounds[-1] += 1

    edit_stored(path, game, lengthen)
    v = verify(lake_copy.root, "t1")
    (check,) = [c for c in v.checks if c.name == "assert_games_complete"]
    assert [(r["game"], str(r["problem"])) for r in check.examples] == [
        (game, "the events row's round lengths do not add up to its codes")
    ]


def test_a_moved_round_boundary_is_caught(lake_copy: Lake) -> None:
    """One round a code longer and the next one shorter (the lists still fit, the count is
    unchanged): round 2's ROUND_START lands in round 1, and the rebuilt rounds disagree with
    the rounds table."""
    task = lake_copy.tasks["t1"][1]
    path = shard_path(lake_copy.root, "events", task)
    game = read_table(path)["game"][1].as_py()

    def move(rounds: list[int], codes: list[int]) -> None:
        rounds[0] += 1
        rounds[1] -= 1

    edit_stored(path, game, move)
    v = verify(lake_copy.root, "t1")
    assert failed(v).keys() == {"assert_rounds_match_events"}
    (check,) = [c for c in v.checks if c.name == "assert_rounds_match_events"]
    assert {(r["game"], r["round"]) for r in check.examples} == {(game, 1), (game, 2)}
    assert any("ROUND_START" in str(r["problem"]) for r in check.examples)


def test_a_fold_bit_set_on_an_event_is_caught(lake_copy: Lake) -> None:
    """A HIT folded into a stored element that had none: one event more than the games table
    counts."""
    task = lake_copy.tasks["t2"][0]
    path = shard_path(lake_copy.root, "events", task)
    game = read_table(path)["game"][4].as_py()

    def fold(rounds: list[int], codes: list[int]) -> None:
        i = next(
            i for i, c in enumerate(codes) if c & 31 == EventKind.DRAW and 0 <= c < 1 << HIT_SHIFT
        )
        codes[i] += 1 << HIT_SHIFT

    edit_stored(path, game, fold)
    v = verify(lake_copy.root, "t2")
    (check,) = [c for c in v.checks if c.name == "assert_games_match_events"]
    assert any(r["game"] == game and "events in games" in str(r["problem"]) for r in check.examples)


def test_a_wrong_winner_is_caught(lake_copy: Lake) -> None:
    """A games row that names another winner disagrees with GAME_END."""
    path = shard_path(lake_copy.root, "games", lake_copy.tasks["t1"][4])
    table = read_table(path)
    winner = table["winner"].to_numpy(zero_copy_only=False).copy()
    winner[:2] = ~winner[:2]  # game 0 of the shard: seats 0 and 1 swap winning
    i = table.schema.get_field_index("winner")
    write_table(table.set_column(i, "winner", pa.array(winner)), path)
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
    for table in ("events", "rounds", "rollups", "games"):
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

    tables = simulate_shard(pending, stored=True)
    for name in ("events", "rounds"):
        codec.write_table(tables[name], shard_path(root, name, pending))
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


def _damage_stored(path: Path, how: str) -> None:
    """Rewrite a stored file (as pyarrow reads it: its metadata with it) so that its values no
    longer decode, though it is readable Parquet with the stored columns."""
    stored = pq.read_table(path)
    meta = dict(stored.schema.metadata)
    if how == "width":  # an index width that is none of 1, 2, 4
        meta[codec.WIDTH] = b"3"
    elif how == "codebook":  # one code left: the indices point past it
        meta[codec.CODEBOOK] = meta[codec.CODEBOOK][:8]
    elif how == "policies":  # the policy names are not JSON
        meta[codec.POLICIES] = b"[ev,"
    elif how == "cells":  # a game's cells a byte short
        cells = stored["cells"].to_pylist()
        cells[0] = cells[0][:-1]
        i = stored.schema.get_field_index("cells")
        stored = stored.set_column(i, stored.schema.field(i), pa.array(cells, pa.binary()))
    meta[codec.CHECK] = codec.checksum(meta)  # past the checksum, to the values' own checks
    codec.write_table(stored.replace_schema_metadata(meta), path, compression="zstd")


@pytest.mark.parametrize(
    ("table", "how"),
    [("events", "width"), ("events", "codebook"), ("rounds", "policies"), ("rounds", "cells")],
)
@pytest.mark.parametrize("compiled", [True, False])
def test_a_stored_file_that_does_not_decode_is_named(
    lake_copy: Lake, table: str, how: str, compiled: bool
) -> None:
    """A stored events or rounds file whose values do not decode (lakecontract.codec refuses
    them): verify neither crashes nor guesses. It names the file as a damaged shard file, checks
    every other shard of its batches, and replays every game but that shard's (a note says so)."""
    task = lake_copy.tasks["t1"][2]
    path = shard_path(lake_copy.root, table, task)
    _damage_stored(path, how)
    with pytest.raises(ValueError):
        read_table(path)
    v = verify(lake_copy.root, "t1", replay=1.0, compiled=compiled, batch=3)
    assert failed(v) == {"manifests_readable": 1}, describe(v)
    (check,) = [c for c in v.checks if c.name == "manifests_readable"]
    (row,) = check.examples
    assert (row["run"], row["shard"]) == ("t1", task.shard)
    assert f"shard file {path} does not read as stored" in str(row["problem"])
    assert any(str(path) in line for line in describe(v))
    assert v.replayed == sum(t.n_games for t in lake_copy.tasks["t1"]) - task.n_games
    skipped = f"{task.n_games} sampled games not replayed: their shard's files do not read"
    assert any(skipped in note for note in v.notes), v.notes


def test_a_run_whose_only_shard_does_not_decode(lake_copy: Lake) -> None:
    """Run t2's one shard with a rounds file that does not decode: nothing of the run is left
    to replay or to check shard by shard, and verify still gives its account, naming the file."""
    (task,) = lake_copy.tasks["t2"]
    path = shard_path(lake_copy.root, "rounds", task)
    _damage_stored(path, "cells")
    v = verify(lake_copy.root, "t2", replay=1.0)
    assert failed(v) == {"manifests_readable": 1}
    assert v.replayed == 0 and any(str(path) in line for line in describe(v))
