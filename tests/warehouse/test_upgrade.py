"""Lake schema v7 against the layouts before it: readers refuse an older run by name with the
upgrade command, `flip7 warehouse upgrade RUN` rewrites it in place, and the upgraded run reads
exactly as the same run written by this flip7 (stg_events, the Python readers, verify).

fixtures/lake-v3 and fixtures/lake-v4 are run t2 of tests/warehouse/lakes.py as schemas v3 (one
events row per event: game, round, seq, code) and v4 (one row per round: game, round, seq, codes)
wrote it, each written by the flip7 of that schema; the session lake's t2 is the same run
written now. fixtures/lake-v6 holds run t2 and the two shards of run v1 (lakes.VENGEANCE_RUNS,
"With a Vengeance") as schema v6 wrote them: events a row per game with list columns, rounds a
row per seat per round, and a rollups file per shard (tests/warehouse/lakes.py's write_run at
schema v6).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.cli import main
from flip7.events import fold_rows
from lakecontract import codec
from pipeline.lake import WRITE_OPTIONS
from pipeline.replay import load_logged_game
from pipeline.schema import (
    EVENTS,
    HIT_SHIFT,
    ROLLUPS,
    SCHEMA_VERSION,
    event_codes,
    events_table,
    unpack_events,
)
from pipeline.shard import ShardTask, simulate_shard
from warehouse import EmptyLakeError, connect, verify
from warehouse import upgrade as upgrading

from .lakes import Lake, plan, read_table, shard_path

FIXTURES = Path(__file__).with_name("fixtures")
FIXTURE = FIXTURES / "lake-v3"
EVENT_COLUMNS = "run, players, shard, game, round, seq, kind, player, card, target, value"


@pytest.fixture(params=[3, 4, 6])
def old(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A copy of the v3, v4 or v6 lake (run t2; the v6 lake also holds run v1)."""
    root = tmp_path / "lake"
    shutil.copytree(FIXTURES / f"lake-v{request.param}", root)
    return root


def version(root: Path, run: str = "t2") -> int:
    manifest = json.loads((root / "runs" / run / "manifest.json").read_text())
    return int(manifest["schema_version"])


def _bump(path: Path, column: str, row: int) -> pa.Table:
    """Add one to a column's value in one row of a (pre-v7) file, rewritten in place; the
    table as read before."""
    table = pq.read_table(path)
    values = table.column(column).to_numpy().copy()
    values[row] += 1
    i = table.schema.get_field_index(column)
    field = table.schema.field(i)
    pq.write_table(table.set_column(i, field, pa.array(values, field.type)), path)
    return table


def t2_file(root: Path, table: str) -> Path:
    """Run t2's one file of `table`."""
    (path,) = root.glob(f"{table}/run=t2/*/*.parquet")
    return path


def plain(table: pa.Table) -> pa.Table:
    """A table with its dictionary columns as strings and no metadata: rows compared by value
    (two files may order a dictionary differently)."""
    return pa.table(
        {
            f.name: table[f.name].cast(f.type.value_type)
            if pa.types.is_dictionary(f.type)
            else table[f.name]
            for f in table.schema
        }
    )


def stg_events(root: Path, run: str) -> list[tuple[object, ...]]:
    con = connect(root, runs=[run])
    rows: list[tuple[object, ...]] = con.execute(
        f"SELECT {EVENT_COLUMNS} FROM stg_events ORDER BY game, seq"
    ).fetchall()
    return rows


def test_the_fixtures_are_the_older_layouts() -> None:
    """The fixtures' manifests say v3, v4 and v6; their events files hold one row per event,
    one row per round and one row per game of lists; v6's rounds a row per seat per round."""
    for v, names in (
        (3, ["game", "round", "seq", "code"]),
        (4, ["game", "round", "seq", "codes"]),
        (6, ["game", "rounds", "codes"]),
    ):
        assert version(FIXTURES / f"lake-v{v}") == v < SCHEMA_VERSION
        assert pq.read_schema(t2_file(FIXTURES / f"lake-v{v}", "events")).names == names
    v6 = FIXTURES / "lake-v6"
    assert version(v6, "v1") == 6
    for path in v6.glob("*/*/*/*.parquet"):
        name = path.parts[-4]
        schema = pq.read_schema(path)
        if name in codec.LOGICAL:
            assert schema.equals(codec.LOGICAL[name]), path
            assert not codec.is_stored(schema, name)
        assert pq.read_metadata(path).num_rows > 0
    assert len(list(v6.glob("rollups/*/*/*.parquet"))) == 3


def test_every_reader_refuses_an_older_run_naming_the_upgrade_command(old: Path) -> None:
    """SQL, verify and the replay loader each refuse run t2 (v3, v4) in one line naming the
    run, its version and `flip7 warehouse upgrade t2`."""
    v = version(old)
    with pytest.raises(EmptyLakeError, match=rf"t2.*schema v{v}.*flip7 warehouse upgrade t2"):
        connect(old, runs=["t2"])
    checked = verify(old, "t2", discover=False)
    (problem,) = [c for c in checked.checks if c.name == "manifests_readable"][0].examples
    assert f"schema v{v}" in str(problem["problem"])
    assert "flip7 warehouse upgrade t2" in str(problem["problem"])
    with pytest.raises(ValueError, match=rf"run 't2'.*schema v{v}.*flip7 warehouse upgrade t2"):
        load_logged_game("t2", 0, str(old))
    if v < 5:  # from v5 on the events file holds the rows unpack_events reads
        with pytest.raises(ValueError, match="flip7 warehouse upgrade RUN"):
            unpack_events(
                pq.read_table(t2_file(old, "events")), pq.read_table(t2_file(old, "rounds"))
            )


def test_upgrade_makes_the_run_read_as_this_flip7_writes_it(
    old: Path, lake: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `flip7 warehouse upgrade t2`: stg_events equals the same run written now, row for
    row and column for column; so do the files' rows as readers see them, unpack_events and
    the replay loader; the files are stored as this flip7 stores them; the manifest says v7
    with the files' row counts (a row per game in events and rounds), and verify passes."""
    v = version(old)
    assert main(["warehouse", "upgrade", "t2", "--data", str(old)]) == 0
    out = capsys.readouterr().out
    # events and rounds are stored anew; v3's games lose their `shard` column; v6 has rollups
    rewritten = {3: 4, 4: 3, 6: 2}[v]
    assert f"schema v{v} -> v{SCHEMA_VERSION}, {rewritten} files rewritten" in out
    assert stg_events(old, "t2") == stg_events(lake.root, "t2")
    for task in lake.tasks["t2"]:
        for name in ("events", "rounds"):
            upgraded = shard_path(old, name, task)
            assert upgraded.exists() and pq.read_schema(upgraded).equals(
                pq.read_schema(shard_path(lake.root, name, task))
            ), name
            new = read_table(shard_path(lake.root, name, task))
            assert read_table(upgraded).equals(new), name
        new = pq.read_table(shard_path(lake.root, "games", task))
        assert pq.read_table(shard_path(old, "games", task)).equals(new, check_metadata=False)
        assert same_rollups(
            shard_path(old, "rollups", task), shard_path(lake.root, "rollups", task)
        )
        events = pq.read_table(shard_path(old, "events", task))
        rounds = pq.read_table(shard_path(old, "rounds", task))
        assert unpack_events(events, rounds).equals(
            unpack_events(
                pq.read_table(shard_path(lake.root, "events", task)),
                pq.read_table(shard_path(lake.root, "rounds", task)),
            )
        )
    assert load_logged_game("t2", 7, str(old)) == load_logged_game("t2", 7, str(lake.root))
    manifest = json.loads((old / "runs" / "t2" / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    rows = manifest["shards"]["0"]["rows"]
    for name in ("events", "rounds", "rollups", "games"):
        assert rows[name] == pq.read_metadata(t2_file(old, name)).num_rows, name
    assert rows["events"] == rows["rounds"] == manifest["shards"]["0"]["games"]
    assert not list(old.rglob("*.tmp-*"))
    assert verify(old, "t2", discover=False).ok
    assert main(["warehouse", "upgrade", "t2", "--data", str(old)]) == 0
    assert f"already in event-log schema v{SCHEMA_VERSION}" in capsys.readouterr().out


def same_rollups(a: Path, b: Path) -> bool:
    """Two rollups files hold the same rows (in any order) and the same schema."""
    x, y = pq.read_table(a), pq.read_table(b)
    assert x.schema.equals(y.schema), (x.schema, y.schema)
    return bool(sorted(x.to_pylist(), key=repr) == sorted(y.to_pylist(), key=repr))


def v6_lake(tmp_path: Path) -> Path:
    """A copy of the v6 lake (runs t2 and v1)."""
    root = tmp_path / "v6"
    shutil.copytree(FIXTURES / "lake-v6", root)
    return root


def test_a_v5_run_gains_its_rollups(tmp_path: Path) -> None:
    """A v5 run is v6 without rollups: the upgrade computes each shard's rollups file (the SQL
    definition, from the decoded rounds and the games) equal to the one the shard task wrote,
    stores its events and rounds, records their rows, and verify passes."""
    root = v6_lake(tmp_path)
    for run in ("t2", "v1"):
        for path in root.glob(f"rollups/run={run}/*/*.parquet"):
            path.rename(tmp_path / f"{run}-{path.name}")
        path = root / "runs" / run / "manifest.json"
        manifest = json.loads(path.read_text())
        manifest["schema_version"] = 5
        for info in manifest["shards"].values():
            del info["rows"]["rollups"]
        path.write_text(json.dumps(manifest))
        with pytest.raises(
            EmptyLakeError, match=f"{run}.*schema v5.*flip7 warehouse upgrade {run}"
        ):
            connect(root, runs=[run])
        shards = len(plan(run))
        done = upgrading.upgrade(str(root), run)
        assert (done.rewritten, done.kept) == (3 * shards, shards)
        upgraded = json.loads(path.read_text())
        for task in plan(run):
            new = shard_path(root, "rollups", task)
            assert same_rollups(new, tmp_path / f"{run}-{new.name}")
            rows = upgraded["shards"][str(task.shard)]["rows"]
            assert rows["rollups"] == pq.read_metadata(new).num_rows
            assert rows["events"] == rows["rounds"] == task.n_games
        assert verify(root, run, discover=False).ok


def test_a_v6_run_is_stored_as_v7(tmp_path: Path) -> None:
    """A v6 run's events and rounds files are stored as v7 stores them (a row per game, read
    back as exactly the v6 files' rows); its games and rollups files are left as they are; the
    manifest says v7 with a row per game in events and rounds; verify passes (a classic and a
    "With a Vengeance" run); upgrading again changes nothing."""
    root = v6_lake(tmp_path)
    before = {p: p.read_bytes() for p in root.glob("*/*/*/*.parquet")}
    for run in ("t2", "v1"):
        shards = len(plan(run))
        done = upgrading.upgrade(str(root), run)
        assert (done.old_version, done.new_version) == (6, SCHEMA_VERSION)
        assert (done.rewritten, done.kept) == (2 * shards, 2 * shards)
        manifest = json.loads((root / "runs" / run / "manifest.json").read_text())
        assert manifest["schema_version"] == SCHEMA_VERSION
        for task in plan(run):
            rows = manifest["shards"][str(task.shard)]["rows"]
            for name in ("events", "rounds"):
                path = shard_path(root, name, task)
                assert upgraded_is_stored(path), path
                v6 = pq.read_table(FIXTURES / "lake-v6" / path.relative_to(root))
                assert plain(read_table(path)).equals(plain(v6)), path
                assert rows[name] == pq.read_metadata(path).num_rows == task.n_games
            for name in ("games", "rollups"):
                path = shard_path(root, name, task)
                assert path.read_bytes() == before[path], path
                assert rows[name] == pq.read_metadata(path).num_rows
        assert verify(root, run, discover=False).ok
    assert not list(root.rglob("*.tmp-*"))
    after = {p: p.read_bytes() for p in root.glob("*/*/*/*.parquet")}
    for run in ("t2", "v1"):
        again = upgrading.upgrade(str(root), run)
        assert (again.rewritten, again.old_version) == (0, SCHEMA_VERSION)
    assert {p: p.read_bytes() for p in root.glob("*/*/*/*.parquet")} == after


def upgraded_is_stored(path: Path) -> bool:
    """Whether a lake file is the stored form of its table, codebook or names in its footer."""
    name = path.parts[-4]
    meta = pq.read_metadata(path).metadata or {}
    key = codec.CODEBOOK if name == "events" else codec.POLICIES
    return codec.is_stored(pq.read_schema(path), name) and key in meta


def test_upgrade_refuses_a_rounds_total_that_is_not_the_running_sum(old: Path) -> None:
    """Stored rounds rebuild each total from the seat's scores: where a rounds file's total is
    not their running sum, the upgrade refuses the run naming the game, round and seat, and
    leaves the files and the manifest as they were."""
    rounds = t2_file(old, "rounds")
    table = _bump(rounds, "total", 7)
    before = {p: p.read_bytes() for p in old.rglob("*") if p.is_file()}
    game, rnd, seat = (int(table.column(c)[7].as_py()) for c in ("game", "round", "seat"))
    with pytest.raises(
        ValueError, match=rf"rounds file .*game {game}, round {rnd}, seat {seat}: total"
    ):
        upgrading.upgrade(str(old), "t2")
    assert {p: p.read_bytes() for p in old.rglob("*") if p.is_file()} == before
    assert version(old) < SCHEMA_VERSION


def test_an_interrupted_upgrade_runs_again(old: Path, lake: Lake) -> None:
    """Files rewritten before an interruption are kept; the manifest still says v3, v4 or v6
    (readers refuse the run) until an upgrade finishes; running it again completes it."""
    v = version(old)
    events, rounds = t2_file(old, "events"), t2_file(old, "rounds")
    table = pq.read_table(events)
    if v < 5:
        table = upgrading.events_v5(table, pq.read_table(rounds))
    # as if the upgrade stopped after the first file
    upgrading._write(
        upgrading.snapshot(old, ["t2"]),
        str(events),
        upgrading.store("events", table, str(events)),
        WRITE_OPTIONS["events"],
    )
    with pytest.raises(EmptyLakeError, match=f"schema v{v}"):
        connect(old, runs=["t2"])
    done = upgrading.upgrade(str(old), "t2")
    # rewritten: rounds, v3's games, the rollups before v6; kept: the rest
    assert (done.rewritten, done.kept) == {3: (3, 1), 4: (2, 2), 6: (1, 3)}[v]
    assert stg_events(old, "t2") == stg_events(lake.root, "t2")


def test_upgrade_refuses_what_it_cannot_read(old: Path) -> None:
    """An unknown run and an unknown version are one-line errors saying what to do."""
    with pytest.raises(EmptyLakeError, match="no run 'nope'"):
        upgrading.upgrade(str(old), "nope")
    path = old / "runs" / "t2" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(
        ValueError, match=r"schema v1; this upgrade reads v2, v3, v4, v5, v6: run its"
    ):
        upgrading.upgrade(str(old), "t2")


def test_upgrade_refuses_round_scores_the_rounds_table_does_not_hold(old: Path) -> None:
    """The upgrade leaves the round scores to the rounds table; where an older events file's
    ROUND_SCORE says another score than the rounds table, it refuses the run, naming the game,
    round and seat, and leaves the files as they were (v3 and v4: a v6 log holds no
    ROUND_SCORE)."""
    if version(old) >= 5:
        pytest.skip("the events of a v5 or v6 run hold no round score")
    rounds = t2_file(old, "rounds")
    table = _bump(rounds, "score", 5)
    events = t2_file(old, "events")
    before = events.read_bytes()
    game, rnd, seat = (int(table.column(c)[5].as_py()) for c in ("game", "round", "seat"))
    with pytest.raises(ValueError, match=rf"game {game} round {rnd} seat {seat}: ROUND_SCORE"):
        upgrading.upgrade(str(old), "t2")
    assert events.read_bytes() == before
    assert version(old) < SCHEMA_VERSION


@pytest.mark.parametrize("variant", ["classic", "vengeance(brutal=1)"])
def test_the_three_writers_agree(variant: str) -> None:
    """The kernel (as it writes each event), pipeline.schema.events_table and the upgrade's
    events_v5 (from a row per event and from a row per round) store the same rows; with the
    rounds table they give back every event (negative values included)."""
    lineup = ("ev", "bust:0.25", "sum:20", "count:4")
    task = ShardTask("r", 0, 0, 0, lineup, "3.1", variant, 3, True, 0, 0, 40)
    tables = simulate_shard(task, engine="kernel")
    kernel = tables["events"]
    reference = simulate_shard(task, engine="reference")["events"]
    assert kernel.equals(reference)
    flat = event_codes(kernel, tables["rounds"])
    assert (flat["code"] < 0).any() and (flat["code"] & 31 == 2).any()
    v3 = pa.table({k: flat[k] for k in ("game", "round", "seq")} | {"code": flat["code"]})
    assert upgrading.events_v5(v3, tables["rounds"]).equals(kernel)
    rows = fold_rows(flat["game"], flat["round"], flat["seq"], flat["code"])
    element = pa.field("element", pa.int64(), nullable=False)
    v4 = pa.table(
        {
            "game": rows["game"],
            "round": rows["round"],
            "seq": rows["seq"],
            "codes": pa.ListArray.from_arrays(
                pa.array(rows["offsets"]), pa.array(rows["codes"]), type=pa.list_(element)
            ),
        }
    )
    assert upgrading.events_v5(v4, tables["rounds"]).equals(kernel)
    # and the upgrade's stored form reads back as the same rows (rounds too)
    stored = simulate_shard(task, engine="kernel", stored=True)
    for name in ("events", "rounds"):
        mine = upgrading.store(name, tables[name], name)
        assert codec.logical(name, mine).equals(tables[name]), name
        assert codec.logical(name, stored[name]).equals(tables[name]), name
    assert events_table(flat["game"], flat["round"], flat["code"]).equals(kernel)
    # Almost every HIT is folded; a folded element carries the flag above bit 54.
    stored = np.asarray(kernel.column("codes").combine_chunks().flatten())
    assert (stored >= 1 << HIT_SHIFT).sum() > 0.9 * (flat["code"] & 31 == 2).sum()
    assert len(flat["code"]) == tables["games"]["events"].to_numpy()[:: len(lineup)].sum()


def test_the_upgrade_writes_as_the_pipeline_does() -> None:
    """warehouse.upgrade and the kernel repeat the pipeline's constants."""
    from flip7.kernel import core

    assert upgrading.HIT_SHIFT == HIT_SHIFT == core.HIT_SHIFT
    assert upgrading.WRITE_OPTIONS == WRITE_OPTIONS
    assert upgrading.SCHEMA_VERSION == SCHEMA_VERSION
    assert upgrading.EVENTS == EVENTS == codec.EVENTS
    assert upgrading.ROLLUPS == ROLLUPS
