"""Event-log schema v5 against the layouts before it: readers refuse an older run by name with
the upgrade command, `flip7 warehouse upgrade RUN` rewrites it in place, and the upgraded run
reads exactly as the same run written by this flip7 (stg_events, the Python readers, verify).

fixtures/lake-v3 and fixtures/lake-v4 are run t2 of tests/warehouse/lakes.py as schemas v3 (one
events row per event: game, round, seq, code) and v4 (one row per round: game, round, seq, codes)
wrote it, each written by the flip7 of that schema; the session lake's t2 is the same run
written now.
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

from .lakes import Lake, shard_path

FIXTURES = Path(__file__).with_name("fixtures")
FIXTURE = FIXTURES / "lake-v3"
EVENT_COLUMNS = "run, players, shard, game, round, seq, kind, player, card, target, value"


@pytest.fixture(params=[3, 4])
def old(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A copy of the v3 or the v4 lake (run t2)."""
    root = tmp_path / "lake"
    shutil.copytree(FIXTURES / f"lake-v{request.param}", root)
    return root


def version(root: Path) -> int:
    manifest = json.loads((root / "runs" / "t2" / "manifest.json").read_text())
    return int(manifest["schema_version"])


def stg_events(root: Path, run: str) -> list[tuple[object, ...]]:
    con = connect(root, runs=[run])
    rows: list[tuple[object, ...]] = con.execute(
        f"SELECT {EVENT_COLUMNS} FROM stg_events ORDER BY game, seq"
    ).fetchall()
    return rows


def test_the_fixtures_are_the_older_layouts() -> None:
    """The fixtures' manifests say v3 and v4; their events files hold one row per event and one
    row per round."""
    for v, names in ((3, ["game", "round", "seq", "code"]), (4, ["game", "round", "seq", "codes"])):
        assert version(FIXTURES / f"lake-v{v}") == v < SCHEMA_VERSION
        (path,) = (FIXTURES / f"lake-v{v}").glob("events/*/*/*.parquet")
        assert pq.read_schema(path).names == names


def test_every_reader_refuses_an_older_run_naming_the_upgrade_command(old: Path) -> None:
    """SQL, verify and the replay loader each refuse run t2 (v3, v4) in one line naming the
    run, its version and `flip7 warehouse upgrade t2`."""
    v = version(old)
    with pytest.raises(EmptyLakeError, match=rf"t2.*schema v{v}.*flip7 warehouse upgrade t2"):
        connect(old, runs=["t2"])
    checked = verify(old, discover=False)
    (problem,) = [c for c in checked.checks if c.name == "manifests_readable"][0].examples
    assert f"schema v{v}" in str(problem["problem"])
    assert "flip7 warehouse upgrade t2" in str(problem["problem"])
    with pytest.raises(ValueError, match=rf"run 't2'.*schema v{v}.*flip7 warehouse upgrade t2"):
        load_logged_game("t2", 0, str(old))
    (path,) = old.glob("events/*/*/*.parquet")
    (rounds,) = old.glob("rounds/*/*/*.parquet")
    with pytest.raises(ValueError, match="flip7 warehouse upgrade RUN"):
        unpack_events(pq.read_table(path), pq.read_table(rounds))


def test_upgrade_makes_the_run_read_as_this_flip7_writes_it(
    old: Path, lake: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `flip7 warehouse upgrade t2`: stg_events equals the same run written now, row for
    row and column for column; so do the files' tables, unpack_events and the replay loader;
    the manifest says v5 with the files' row counts, and verify passes."""
    v = version(old)
    assert main(["warehouse", "upgrade", "t2", "--data", str(old)]) == 0
    out = capsys.readouterr().out
    # v4's rounds and games files are v5's already; the rollups file is new
    rewritten = 4 if v == 3 else 2
    assert f"schema v{v} -> v{SCHEMA_VERSION}, {rewritten} files rewritten" in out
    assert stg_events(old, "t2") == stg_events(lake.root, "t2")
    for task in lake.tasks["t2"]:
        for name in ("events", "rounds", "games"):
            new = pq.read_table(shard_path(lake.root, name, task))
            upgraded = pq.read_table(shard_path(old, name, task))
            assert upgraded.equals(new, check_metadata=False), name
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
    (path,) = old.glob("events/*/*/*.parquet")
    assert manifest["shards"]["0"]["rows"]["events"] == pq.read_metadata(path).num_rows
    assert not list(old.rglob("*.tmp-*"))
    assert verify(old, discover=False).ok
    assert main(["warehouse", "upgrade", "t2", "--data", str(old)]) == 0
    assert f"already in event-log schema v{SCHEMA_VERSION}" in capsys.readouterr().out


def same_rollups(a: Path, b: Path) -> bool:
    """Two rollups files hold the same rows (in any order) and the same schema."""
    x, y = pq.read_table(a), pq.read_table(b)
    assert x.schema.equals(y.schema), (x.schema, y.schema)
    return bool(sorted(x.to_pylist(), key=repr) == sorted(y.to_pylist(), key=repr))


def test_a_v5_run_gains_its_rollups(lake: Lake, tmp_path: Path) -> None:
    """A v5 run is this layout without rollups: the upgrade computes each shard's rollups file
    (the SQL definition) equal to the one the shard task writes, records their rows, and
    verify passes."""
    root = tmp_path / "v5"
    shutil.copytree(lake.root, root)
    for path in root.glob("rollups/run=t2/*/*.parquet"):
        path.unlink()
    path = root / "runs" / "t2" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 5
    for info in manifest["shards"].values():
        del info["rows"]["rollups"]
    path.write_text(json.dumps(manifest))
    with pytest.raises(EmptyLakeError, match="t2.*schema v5.*flip7 warehouse upgrade t2"):
        connect(root, runs=["t2"])
    done = upgrading.upgrade(str(root), "t2")
    assert (done.rewritten, done.kept) == (len(lake.tasks["t2"]), 3 * len(lake.tasks["t2"]))
    upgraded = json.loads(path.read_text())
    for task in lake.tasks["t2"]:
        new, old = shard_path(lake.root, "rollups", task), shard_path(root, "rollups", task)
        assert same_rollups(old, new)
        assert (
            upgraded["shards"][str(task.shard)]["rows"]["rollups"] == pq.read_metadata(old).num_rows
        )
    assert verify(root, "t2", discover=False).ok


def test_an_interrupted_upgrade_runs_again(old: Path, lake: Lake) -> None:
    """Files rewritten before an interruption are kept; the manifest still says v3 or v4
    (readers refuse the run) until an upgrade finishes; running it again completes it."""
    v = version(old)
    (events,) = old.glob("events/*/*/*.parquet")
    (rounds,) = old.glob("rounds/*/*/*.parquet")
    table = upgrading.events_v5(pq.read_table(events), pq.read_table(rounds))
    pq.write_table(table, events)  # as if the upgrade stopped after the first file
    with pytest.raises(EmptyLakeError, match=f"schema v{v}"):
        connect(old, runs=["t2"])
    done = upgrading.upgrade(str(old), "t2")
    assert (done.rewritten, done.kept) == ((3, 1) if v == 3 else (1, 3))
    assert stg_events(old, "t2") == stg_events(lake.root, "t2")


def test_upgrade_refuses_what_it_cannot_read(old: Path) -> None:
    """An unknown run and an unknown version are one-line errors saying what to do."""
    with pytest.raises(EmptyLakeError, match="no run 'nope'"):
        upgrading.upgrade(str(old), "nope")
    path = old / "runs" / "t2" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"schema v1; this upgrade reads v2, v3, v4, v5: run its"):
        upgrading.upgrade(str(old), "t2")


def test_upgrade_refuses_round_scores_the_rounds_table_does_not_hold(old: Path) -> None:
    """The upgrade leaves the round scores to the rounds table; where an older events file's
    ROUND_SCORE says another score than the rounds table, it refuses the run, naming the game,
    round and seat, and leaves the files as they were."""
    (rounds,) = old.glob("rounds/*/*/*.parquet")
    table = pq.read_table(rounds)
    score = table.column("score").to_numpy().copy()
    score[5] += 1
    i = table.schema.get_field_index("score")
    pq.write_table(table.set_column(i, table.schema.field(i), pa.array(score, pa.int16())), rounds)
    (events,) = old.glob("events/*/*/*.parquet")
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
    assert upgrading.EVENTS == EVENTS
    assert upgrading.ROLLUPS == ROLLUPS
