"""Event-log schema v4 against the layout before it: readers refuse an older run by name with
the upgrade command, `flip7 warehouse upgrade RUN` rewrites it in place, and the upgraded run
reads exactly as the same run written by this flip7 (stg_events, the Python readers, verify).

fixtures/lake-v3 is run t2 of tests/warehouse/lakes.py as schema v3 wrote it (one events row per
event: game, round, seq, code), written by the flip7 of that schema; the session lake's t2 is the
same run written now.
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
from pipeline.lake import WRITE_OPTIONS
from pipeline.replay import load_logged_game
from pipeline.schema import HIT_SHIFT, SCHEMA_VERSION, event_codes, events_table, unpack_events
from pipeline.shard import ShardTask, simulate_shard
from warehouse import EmptyLakeError, connect, verify
from warehouse import upgrade as upgrading

from .lakes import Lake, shard_path

FIXTURE = Path(__file__).with_name("fixtures") / "lake-v3"
EVENT_COLUMNS = "run, players, shard, game, round, seq, kind, player, card, target, value"


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A copy of the v3 lake (run t2)."""
    root = tmp_path / "lake"
    shutil.copytree(FIXTURE, root)
    return root


def stg_events(root: Path, run: str) -> list[tuple[object, ...]]:
    con = connect(root, runs=[run])
    rows: list[tuple[object, ...]] = con.execute(
        f"SELECT {EVENT_COLUMNS} FROM stg_events ORDER BY game, seq"
    ).fetchall()
    return rows


def test_the_fixture_is_the_older_layout() -> None:
    """The fixture's manifest says v3 and its events file holds one row per event."""
    manifest = json.loads((FIXTURE / "runs" / "t2" / "manifest.json").read_text())
    assert manifest["schema_version"] == 3 == SCHEMA_VERSION - 1
    (path,) = FIXTURE.glob("events/*/*/*.parquet")
    assert pq.read_schema(path).names == ["game", "round", "seq", "code"]


def test_every_reader_refuses_an_older_run_naming_the_upgrade_command(old: Path) -> None:
    """SQL, verify and the replay loader each refuse run t2 (v3) in one line naming the run,
    its version and `flip7 warehouse upgrade t2`."""
    with pytest.raises(EmptyLakeError, match=r"t2.*schema v3.*flip7 warehouse upgrade t2"):
        connect(old, runs=["t2"])
    checked = verify(old, discover=False)
    (problem,) = [c for c in checked.checks if c.name == "manifests_readable"][0].examples
    assert "schema v3" in str(problem["problem"])
    assert "flip7 warehouse upgrade t2" in str(problem["problem"])
    with pytest.raises(ValueError, match=r"run 't2'.*schema v3.*flip7 warehouse upgrade t2"):
        load_logged_game("t2", 0, str(old))
    (path,) = old.glob("events/*/*/*.parquet")
    with pytest.raises(ValueError, match="flip7 warehouse upgrade RUN"):
        unpack_events(pq.read_table(path))


def test_upgrade_makes_the_run_read_as_this_flip7_writes_it(
    old: Path, lake: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `flip7 warehouse upgrade t2`: stg_events equals the same run written now, row for
    row and column for column; so do the files' tables, unpack_events and the replay loader;
    the manifest says v4 with the files' row counts, and verify passes."""
    assert main(["warehouse", "upgrade", "t2", "--data", str(old)]) == 0
    out = capsys.readouterr().out
    assert "run t2: event-log schema v3 -> v4, 3 files rewritten" in out
    assert stg_events(old, "t2") == stg_events(lake.root, "t2")
    for task in lake.tasks["t2"]:
        for name in ("events", "rounds", "games"):
            new = pq.read_table(shard_path(lake.root, name, task))
            upgraded = pq.read_table(shard_path(old, name, task))
            assert upgraded.equals(new, check_metadata=False), name
        events = pq.read_table(shard_path(old, "events", task))
        assert unpack_events(events).equals(
            unpack_events(pq.read_table(shard_path(lake.root, "events", task)))
        )
    assert load_logged_game("t2", 7, str(old)) == load_logged_game("t2", 7, str(lake.root))
    manifest = json.loads((old / "runs" / "t2" / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    (path,) = old.glob("events/*/*/*.parquet")
    assert manifest["shards"]["0"]["rows"]["events"] == pq.read_metadata(path).num_rows
    assert not list(old.rglob("*.tmp-*"))
    assert verify(old, discover=False).ok
    assert main(["warehouse", "upgrade", "t2", "--data", str(old)]) == 0
    assert "already in event-log schema v4" in capsys.readouterr().out


def test_an_interrupted_upgrade_runs_again(old: Path, lake: Lake) -> None:
    """Files rewritten before an interruption are kept; the manifest still says v3 (readers
    refuse the run) until an upgrade finishes; running it again completes it."""
    (events,) = old.glob("events/*/*/*.parquet")
    table = upgrading.events_v4(pq.read_table(events))
    pq.write_table(table, events)  # as if the upgrade stopped after the first file
    with pytest.raises(EmptyLakeError, match="schema v3"):
        connect(old, runs=["t2"])
    done = upgrading.upgrade(str(old), "t2")
    assert (done.rewritten, done.kept) == (2, 1)
    assert stg_events(old, "t2") == stg_events(lake.root, "t2")


def test_upgrade_refuses_what_it_cannot_read(old: Path) -> None:
    """An unknown run and an unknown version are one-line errors saying what to do."""
    with pytest.raises(EmptyLakeError, match="no run 'nope'"):
        upgrading.upgrade(str(old), "nope")
    path = old / "runs" / "t2" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"schema v1; this upgrade reads v2, v3: run its"):
        upgrading.upgrade(str(old), "t2")


@pytest.mark.parametrize("variant", ["classic", "vengeance(brutal=1)"])
def test_the_three_folds_agree(variant: str) -> None:
    """The kernel's fold (as it writes each event), pipeline.schema.events_table and the
    upgrade's events_v4 store the same rows; unfolding gives back every event (negative values
    included)."""
    lineup = ("ev", "bust:0.25", "sum:20", "count:4")
    task = ShardTask("r", 0, 0, 0, lineup, "3.1", variant, 3, True, 0, 0, 40)
    kernel = simulate_shard(task, engine="kernel")["events"]
    reference = simulate_shard(task, engine="reference")["events"]
    assert kernel.equals(reference)
    flat = event_codes(kernel)
    assert (flat["code"] < 0).any() and (flat["code"] & 31 == 2).any()
    v3 = pa.table({k: flat[k] for k in ("game", "round", "seq")} | {"code": flat["code"]})
    assert upgrading.events_v4(v3).equals(kernel)
    assert events_table(flat["game"], flat["round"], flat["seq"], flat["code"]).equals(kernel)
    # Almost every HIT is folded; a folded element carries the flag above bit 54.
    stored = np.asarray(kernel.column("codes").combine_chunks().flatten())
    assert (stored >= 1 << HIT_SHIFT).sum() > 0.9 * (flat["code"] & 31 == 2).sum()
    games = simulate_shard(task, engine="reference")["games"]
    assert len(flat["code"]) == games["events"].to_numpy()[:: len(lineup)].sum()


def test_the_upgrade_writes_as_the_pipeline_does() -> None:
    """warehouse.upgrade and the kernel repeat the pipeline's constants."""
    from flip7.kernel import core

    assert upgrading.HIT_SHIFT == HIT_SHIFT == core.HIT_SHIFT
    assert upgrading.WRITE_OPTIONS == WRITE_OPTIONS
    assert upgrading.SCHEMA_VERSION == SCHEMA_VERSION
