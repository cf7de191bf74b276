"""Verify's per-batch relations: the event groups are a view in classic batches and a table in
Vengeance ones, a worker switching between them finds the same damage, and the values that
ride on few events (the FLIP7 bonus, the GAME_END total) are still checked."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.events import CODE_SHIFTS, EventKind
from pipeline.schema import stored_codes, unpack_events
from warehouse import verify
from warehouse.lake import snapshot

from .lakes import Lake, read_table, shard_path, write_run
from .test_verify import edit, edit_event, failed, rounds_of

verify_module = importlib.import_module("warehouse.verify")


def _edit_value(path: Path, kind: EventKind, delta: int) -> None:
    """Add `delta` to the value of the first event of `kind` in an events file."""
    events = unpack_events(read_table(path), rounds_of(path)).to_pandas()
    row = int(events.index[events.kind == int(kind)][0])
    edit_event(path, row, delta << CODE_SHIFTS[4])


@pytest.fixture(scope="module")
def damaged_mix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A classic run (t2) and a Vengeance run (v1), each with one round score changed in the
    rounds table of its first shard; and those two shards' paths."""
    root = tmp_path_factory.mktemp("mix") / "data"
    damaged = []
    for run in ("t2", "v1"):
        task = write_run(root, run)[0]
        path = shard_path(root, "rounds", task)
        edit(path, "score", 3, 5)
        damaged.append(str(shard_path(root, "events", task)))
    return root, damaged


def test_made_as_view_table_or_empty() -> None:
    """The event groups are a view unless a Vengeance batch reads them twice; Vengeance rounds
    are an empty table where no game is a Vengeance game; the summaries are tables."""
    made_as = verify_module._made_as
    groups = "-- materialized: view\nselect 1"
    assert made_as("int_event_groups", groups, False) == "view"
    assert made_as("int_event_groups", groups, True) == "table"
    assert made_as("int_rounds_from_events", groups, True) == "view"
    assert made_as("int_vengeance_rounds", "select 1", False) == "empty"
    assert made_as("int_vengeance_rounds", "select 1", True) == "table"
    assert made_as("int_games_from_events", "select 1", False) == "table"


def test_a_worker_switching_variants_finds_the_same_damage(
    damaged_mix: tuple[Path, list[str]],
) -> None:
    """One connection checking Vengeance, classic, Vengeance, classic batches (the groups made
    a table, a view, a table, a view) names the damaged round in each damaged shard, the same
    rows each time, and nothing in the others."""
    root, damaged = damaged_mix
    snap = snapshot(root)
    by_run = {run: [s for s in snap.shards if s.run == run] for run in ("t2", "v1")}
    check = verify_module._shard_worker(str(root), verify_module.tests("shard"))
    seen: dict[str, list[dict[str, object]]] = {}
    for shard in [*by_run["v1"][:2], *by_run["t2"][:2], by_run["v1"][0], by_run["t2"][0]]:
        rows = check([shard])["assert_rounds_match_events"]
        key = str(shard.files["events"])
        if key in damaged:
            assert len(rows) == 1 and "rebuilt from events" in str(rows[0]["problem"])
            assert seen.setdefault(key, rows) == rows
        else:
            assert rows == []
    assert sorted(seen) == sorted(damaged)


def test_verify_of_the_mix_with_any_batch_size(damaged_mix: tuple[Path, list[str]]) -> None:
    """Classic and Vengeance shards in one batch or apart: the same account (the edited
    scores' totals move with them: the rounds files store no total)."""
    root, _ = damaged_mix
    one = verify(root, batch=1, workers=1)
    assert failed(one).keys() == {"assert_rounds_match_events", "assert_rollups_match_tables"}
    assert failed(one)["assert_rounds_match_events"] == 2
    for batch in (2, 50):
        many = verify(root, batch=batch, workers=1)
        assert [(c.name, c.failed, c.examples) for c in many.checks] == [
            (c.name, c.failed, c.examples) for c in one.checks
        ]


@pytest.mark.parametrize("run", ["t1", "v1"])
def test_an_edited_flip7_bonus_is_caught(lake: Lake, tmp_path: Path, run: str) -> None:
    """A FLIP7 event whose bonus was changed makes the seat's rebuilt round disagree with the
    rounds table's score (classic: summed with the +N cards; Vengeance: its own)."""
    root = tmp_path / "data"
    if run in lake.tasks:
        shutil.copytree(lake.root, root)
        tasks = lake.tasks[run]
    else:
        tasks = write_run(root, run)
    path = next(
        p
        for t in tasks
        if EventKind.FLIP7
        in set((stored_codes(read_table(p := shard_path(root, "events", t)))["code"] & 31).tolist())
    )
    _edit_value(path, EventKind.FLIP7, 4)
    v = verify(root, run)
    (check,) = [c for c in v.checks if c.name == "assert_rounds_match_events"]
    assert check.failed == 1
    assert "rebuilt from events" in str(check.examples[0]["problem"])


def test_an_edited_game_end_total_is_caught(lake_copy: Lake) -> None:
    """A GAME_END event naming another total disagrees with the winner's total in games, and
    with the game replayed from its seed (every game replayed here: the default replays a
    random sample, which holds the edited game only sometimes)."""
    path = shard_path(lake_copy.root, "events", lake_copy.tasks["t1"][1])
    _edit_value(path, EventKind.GAME_END, 3)
    v = verify(lake_copy.root, "t1", replay=1.0)
    assert failed(v) == {"assert_games_match_events": 1, "replay_matches_log": 1}
    (check,) = [c for c in v.checks if c.name == "assert_games_match_events"]
    assert "GAME_END says" in str(check.examples[0]["problem"])


def _runs_complete_problems(root: Path) -> list[str]:
    v = verify(root, "t1")
    (check,) = [c for c in v.checks if c.name == "assert_runs_complete"]
    return [str(row["problem"]) for row in check.examples]


def test_a_repeated_games_row_is_named(lake_copy: Lake) -> None:
    """A games row written twice: the lake-wide test names its game and seat, twice over."""
    path = shard_path(lake_copy.root, "games", lake_copy.tasks["t1"][2])
    table = pq.read_table(path)
    row = table.slice(5, 1).to_pylist()[0]
    pq.write_table(pa.concat_tables([table, table.slice(5, 1)]), path)
    assert f"game {row['game']} seat {row['seat']} appears 2 times" in _runs_complete_problems(
        lake_copy.root
    )


def test_seats_outside_the_bit_range_are_compared_exactly(lake_copy: Lake) -> None:
    """Seats the per-game bit sum cannot hold (40) are grouped exactly: one of them is no
    repeat, two in one game are."""
    path = shard_path(lake_copy.root, "games", lake_copy.tasks["t1"][1])
    table = pq.read_table(path)
    seats = table["seat"].to_pylist()
    game = table["game"][0].as_py()
    seats[0] = 40
    i = table.schema.get_field_index("seat")
    one = table.set_column(i, table.schema.field(i), pa.array(seats, table["seat"].type))
    pq.write_table(one, path)
    assert not [p for p in _runs_complete_problems(lake_copy.root) if "appears" in p]
    seats[1] = 40
    two = table.set_column(i, table.schema.field(i), pa.array(seats, table["seat"].type))
    pq.write_table(two, path)
    assert [p for p in _runs_complete_problems(lake_copy.root) if "appears" in p] == [
        f"game {game} seat 40 appears 2 times"
    ]


def test_a_seat_named_twice_in_a_game_is_caught(lake_copy: Lake) -> None:
    """Seats 0, 0, 2 at a three-player table (rows, first and last seat as they should be):
    the distinct seats give it away."""
    task = next(t for t in lake_copy.tasks["t1"] if t.n_players == 3)
    path = shard_path(lake_copy.root, "games", task)
    table = pq.read_table(path)
    seats = table["seat"].to_pylist()
    assert seats[:3] == [0, 1, 2]
    seats[1] = 0
    i = table.schema.get_field_index("seat")
    pq.write_table(
        table.set_column(i, table.schema.field(i), pa.array(seats, table["seat"].type)), path
    )
    v = verify(lake_copy.root, "t1")
    (check,) = [c for c in v.checks if c.name == "assert_games_complete"]
    assert "3 games rows for seats 0..2 at a 3-player table" in [
        str(row["problem"]) for row in check.examples
    ]
