"""The lake: atomic writes, the layout, leftovers of killed writers, and the summary's counts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.lake import Lake
from pipeline.summary import run_summary
from tests.pipeline.helpers import read_run, run_inline, small_plan


def test_inline_run_writes_the_contract_layout(tmp_path: Path) -> None:
    """Files sit at <table>/run=<run>/players=<n>/shard-<05d>.parquet; the manifest lists every
    shard with its row counts, and nothing temporary is left."""
    plan = small_plan()
    manifest = run_inline(plan, str(tmp_path))
    assert manifest["status"] == "complete"
    assert len(manifest["shards"]) == manifest["planned_shards"] == len(plan.shards)
    for task in plan.shards:
        info = manifest["shards"][str(task.shard)]
        for table in ("events", "rounds", "rollups", "games"):
            path = (
                tmp_path
                / table
                / "run=t"
                / f"players={task.n_players}"
                / f"shard-{task.shard:05d}.parquet"
            )
            assert pq.read_metadata(path).num_rows == info["rows"][table]
        assert info["rows"]["games"] == task.n_games * task.n_players
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]
    assert (tmp_path / "runs" / "t" / "spec.toml").read_text() == plan.spec.text
    assert Lake.open(str(tmp_path)).runs() == ["t"]


def test_rewriting_a_shard_replaces_it(tmp_path: Path) -> None:
    """write_parquet over an existing file replaces it (a re-run never duplicates rows)."""
    lake = Lake.open(str(tmp_path))
    path = lake.shard_path("games", "r", 2, 0)
    lake.write_parquet(path, pa.table({"x": [1, 2, 3]}))
    lake.write_parquet(path, pa.table({"x": [4]}))
    assert pq.read_table(path)["x"].to_pylist() == [4]
    assert [p.name for p in Path(path).parent.iterdir()] == ["shard-00000.parquet"]


def test_remove_temporaries_only_touches_temporaries(tmp_path: Path) -> None:
    """Leftover `.parquet.tmp-*` files of a run are deleted; committed files stay."""
    lake = Lake.open(str(tmp_path))
    keep = Path(lake.shard_path("events", "r", 3, 1))
    lake.write_parquet(str(keep), pa.table({"x": [1]}))
    junk = keep.with_name(keep.name + ".tmp-abc123")
    junk.write_bytes(b"partial")
    assert lake.remove_temporaries("r") == 1
    assert keep.exists() and not junk.exists()


def test_summary_counts_games_and_seats(tmp_path: Path) -> None:
    """One summary row per (line-up, field size, policy): its seats are the games rows it filled,
    and the win rates of a table, weighted by seats, add up to one winner per game."""
    plan = small_plan()
    manifest = run_inline(plan, str(tmp_path))
    rows = run_summary(Lake.open(str(tmp_path)), manifest)
    label = {c.cell: (c.label, c.players) for c in plan.cells}
    seats: dict[tuple[str, int, str], int] = {}
    for g in read_run(tmp_path, "games").to_pylist():
        key = (*label[g["cell"]], g["policy"])
        seats[key] = seats.get(key, 0) + 1
    assert {(r.lineup, r.players, r.policy): r.seats for r in rows} == seats
    for cell in plan.cells:
        mine = [r for r in rows if (r.lineup, r.players) == (cell.label, cell.players)]
        assert round(sum(r.win_rate * r.seats for r in mine)) == cell.games
        assert all(0 < r.win.half_width < 0.2 and r.ppr.value > 0 for r in mine)


def test_a_users_own_policy_plays_on_the_reference_engine(tmp_path: Path) -> None:
    """A policy given by import path falls back to the reference engine (auto), and its rows
    carry its spec."""
    from pipeline.plan import make_plan
    from pipeline.spec import parse_spec

    spec = parse_spec(
        'name = "t"\nseed = 3\ngames = 20\n'
        '[[lineups]]\nseats = ["tests.pipeline.helpers:Timid", "ev"]\n'
    )
    manifest = run_inline(make_plan(spec), str(tmp_path))
    games = read_run(tmp_path, "games")
    assert manifest["status"] == "complete" and games.num_rows == 40
    assert set(games["policy"].to_pylist()) == {"tests.pipeline.helpers:Timid", "ev"}
