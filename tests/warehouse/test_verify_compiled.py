"""verify's compiled pass (warehouse.shardcheck): it clears every clean shard, so the SQL tests
run on none of them; it clears no damaged one, so verify's account is the SQL's, whatever the
damage; without a compiled rollup the SQL still checks every shard's rollup."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.events import CODE_SHIFTS, EventKind
from pipeline import replayer as pipeline_replayer
from pipeline.schema import event_codes
from warehouse import shardcheck, verify
from warehouse.lake import snapshot
from warehouse.verify import Verification

from .lakes import Lake, read_table, shard_path
from .test_upgrade import FIXTURES
from .test_verify import edit, edit_event, failed, rounds_of


def account(v: Verification) -> list[tuple[str, int, list[dict[str, object]]]]:
    return [(c.name, c.failed, c.examples) for c in v.checks]


def test_the_compiled_pass_clears_every_clean_shard(lake: Lake) -> None:
    """Every shard of the clean classic lake is cleared, its rollup recomputed and equal."""
    snap = snapshot(lake.root)
    assert snap.shards
    for shard in snap.shards:
        tables = shardcheck.read(snap.fs, shard.files)
        outcome = shardcheck.check(tables, shard.players, pipeline_replayer.shard_rollups)
        assert outcome == shardcheck.Outcome(True, "", True), (shard, outcome)
        # without the compiled rollup: cleared but for the rollup, which is left to SQL
        assert shardcheck.check(tables, shard.players, None) == shardcheck.Outcome(True)


def test_verify_runs_no_sql_shard_test_on_a_clean_lake(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clean lake's shards are all cleared: no SQL shard batch runs, and every check passes."""
    import importlib

    module = importlib.import_module("warehouse.verify")
    batches: list[object] = []
    worker = module._shard_worker

    def counting(*args: object, **kwargs: object) -> object:
        check = worker(*args, **kwargs)  # type: ignore[arg-type]

        def counted(shards: object) -> object:
            batches.append(shards)
            return check(shards)

        return counted

    monkeypatch.setattr(module, "_shard_worker", counting)
    v = verify(lake.root, workers=2)
    assert v.ok and batches == []


def _first_game_end(path: object) -> int:
    """The row (unpack_events order) of the first GAME_END in an events file."""
    flat = event_codes(read_table(path), rounds_of(path))  # type: ignore[arg-type]
    return int(((flat["code"] & 31) == EventKind.GAME_END).argmax())


def _first_event(path: object, kind: EventKind) -> int:
    """The row (unpack_events order) of the first event of `kind` in an events file."""
    flat = event_codes(read_table(path), rounds_of(path))  # type: ignore[arg-type]
    return int(((flat["code"] & 31) == kind).argmax())


DAMAGE = [
    ("rounds", "score", 5, 3),
    ("rounds", "dealer", 6, 1),  # a round's dealer (stored once per round: row 6 is seat 0's)
    ("rounds", "status", 4, 1),
    ("games", "total", 1, 2),
    ("games", "rank", 0, 1),
    ("games", "events", 2, 1),
    ("rollups", "yn", 3, 1),
    ("events", "game_end", 0, 1),
    # the pass reads each codebook entry's meaning once per file: entries other than GAME_END
    ("events", "draw_player", 0, 1 << CODE_SHIFTS[1]),  # a drawn card, in another hand
    ("events", "stay_player", 0, 1 << CODE_SHIFTS[1]),  # a STAY, another seat's
    ("events", "bust_player", 0, 1 << CODE_SHIFTS[1]),
    ("events", "round_end_kind", 0, int(EventKind.ROUND_CAP) - int(EventKind.ROUND_END)),
]
KINDS = {
    "draw_player": EventKind.DRAW,
    "stay_player": EventKind.STAY,
    "bust_player": EventKind.BUST,
    "round_end_kind": EventKind.ROUND_END,
}


@pytest.mark.parametrize(("table", "column", "row", "delta"), DAMAGE)
def test_damage_gets_the_sql_account(
    lake_copy: Lake, table: str, column: str, row: int, delta: int
) -> None:
    """The damaged shard is not cleared, and verify's account (every check's failures and
    examples) is the one the SQL tests alone give."""
    task = lake_copy.tasks["t1"][2]
    path = shard_path(lake_copy.root, table, task)
    if column == "game_end":
        edit_event(path, _first_game_end(path), delta << CODE_SHIFTS[4])
    elif table == "events":
        edit_event(path, _first_event(path, KINDS[column]), delta)
    else:
        edit(path, column, row, delta)
    snap = snapshot(lake_copy.root)
    (shard,) = [s for s in snap.shards if s.run == "t1" and s.shard == task.shard]
    tables = shardcheck.read(snap.fs, shard.files)
    assert not shardcheck.check(tables, shard.players, pipeline_replayer.shard_rollups).clear
    both = (
        verify(lake_copy.root, "t1", replay=0),
        verify(lake_copy.root, "t1", replay=0, compiled=False),
    )
    assert not both[1].ok
    assert account(both[0]) == account(both[1])


def test_the_compiled_pass_reads_the_list_form(tmp_path: Path) -> None:
    """A lake of the older list form (schema v6, not upgraded) is checked by the same pass: its
    events and rounds are put in the stored form first. Classic shards are cleared, rollups
    and all; the Vengeance shards go to SQL; verify passes either way, as with SQL alone."""
    root = tmp_path / "data"
    shutil.copytree(FIXTURES / "lake-v6", root)
    snap = snapshot(str(root))
    cleared = {}
    for shard in snap.shards:
        tables = shardcheck.read(snap.fs, shard.files)
        outcome = shardcheck.check(tables, shard.players, pipeline_replayer.shard_rollups)
        cleared[shard.run, shard.shard] = outcome.clear
        if shard.run == "t2":
            assert outcome == shardcheck.Outcome(True, "", True), (shard, outcome)
    assert cleared and not any(ok for (run, _), ok in cleared.items() if run == "v1")
    assert account(verify(str(root), replay=0)) == account(
        verify(str(root), replay=0, compiled=False)
    )


def test_a_list_form_shard_that_cannot_be_stored_goes_to_sql(tmp_path: Path) -> None:
    """A list-form rounds file whose totals are not running sums cannot be put in the stored
    form: the pass does not clear it (not read), and verify's account is the SQL's."""
    root = tmp_path / "data"
    shutil.copytree(FIXTURES / "lake-v6", root)
    snap = snapshot(str(root))
    shard = next(s for s in snap.shards if s.run == "t2")
    path = Path(shard.files["rounds"])
    table = pq.read_table(path)
    total = table["total"].to_numpy().copy()
    total[5] += 1
    i = table.schema.get_field_index("total")
    pq.write_table(table.set_column(i, table.schema.field(i), pa.array(total, pa.int32())), path)
    with pytest.raises(ValueError, match="running sum"):
        shardcheck.read(snap.fs, shard.files)
    both = verify(str(root), "t2", replay=0), verify(str(root), "t2", replay=0, compiled=False)
    assert not both[1].ok
    assert account(both[0]) == account(both[1])


def test_a_tampered_rollup_without_a_compiled_rollup(lake_copy: Lake) -> None:
    """With no replayer (so no compiled rollup), the SQL checks every shard's rollup: a
    tampered one still fails by name, and nothing else does."""
    task = lake_copy.tasks["t2"][0]
    edit(shard_path(lake_copy.root, "rollups", task), "y", 0, 1)
    v = verify(lake_copy.root, discover=False)
    assert failed(v).keys() == {"assert_rollups_match_tables"}


def test_the_sampled_games_read_as_the_sql_reads_them(lake: Lake) -> None:
    """The replay's games as the compiled pass reads them from a shard (codes with HITs
    unfolded, seats, cell) equal those bind's SQL reads from the lake."""
    import numpy as np

    from warehouse.bind import _read_logged
    from warehouse.build import build
    from warehouse.db import attach, scratch

    snap = snapshot(lake.root)
    con = scratch()
    build(con, snap, layers=("staging",), lake_table=attach(con, snap))
    compared = 0
    for shard in snap.shards[:6]:
        tables = shardcheck.read(snap.fs, shard.files)
        games = tables["games"]["game"].to_numpy()
        first, last = int(games.min()), int(games.min()) + 3
        ours = shardcheck.sample_games(tables, first, last)
        ids = np.arange(first, last + 1, dtype=np.int64)
        col = {"game": ids, "shard": np.full(len(ids), shard.shard, np.int64)}
        seats: dict[int, tuple[str, ...]] = {}
        cells: dict[int, int] = {}
        logged: dict[int, np.ndarray] = {}
        _read_logged(con, shard.run, col, np.arange(len(ids)), False, seats, cells, logged)
        assert sorted(ours) == sorted(seats) == ids.tolist()
        for g, (codes, policies, cell) in ours.items():
            assert (policies, cell) == (seats[g], cells[g])
            assert np.array_equal(codes, logged[g])
            compared += int(((codes & 31) == EventKind.HIT).sum())
    con.close()
    assert compared  # HITs were unfolded on both sides
