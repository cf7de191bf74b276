"""verify binds seeds to games a batch of shards at a time: what it holds in Python does not
grow with the run, and the batches find exactly what one batch of every game finds."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline.replayer
from warehouse import bind as binding
from warehouse.build import build
from warehouse.db import attach, scratch
from warehouse.lake import snapshot

from .lakes import Lake


def staging(root: str) -> duckdb.DuckDBPyConnection:
    """A scratch connection with the staging views over the lake, as verify builds it."""
    con = scratch()
    snap = snapshot(root)
    build(con, snap, layers=("staging",), lake_table=attach(con, snap))
    return con


def change_a_seed(lake: Lake) -> tuple[int, int]:
    """Add one to a game's seed (every seat) in run t1's second shard; (shard, game)."""
    path = sorted((lake.root / "games" / "run=t1").rglob("shard-00001.parquet"))[0]
    table = pq.read_table(path)
    game = table.column("game")[0].as_py()
    seeds = [
        s + 1 if g == game else s
        for g, s in zip(table["game"].to_pylist(), table["seed"].to_pylist(), strict=True)
    ]
    i = table.schema.get_field_index("seed")
    table = table.set_column(i, table.schema.field(i), pa.array(seeds, table.schema.field(i).type))
    pq.write_table(table, path, compression="zstd")
    return 1, game


def test_games_come_in_batches_of_whole_shards(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    """With 7 games a batch (the shards hold 15), every batch holds whole shards, and the
    batches together are every game of the run, sorted, each once."""
    con = staging(str(lake.root))
    whole = con.execute(
        "SELECT shard, game FROM stg_games WHERE run = 't1' AND seat = 0 ORDER BY shard, game"
    ).fetchall()
    monkeypatch.setattr(binding, "BIND_ROWS", 7)
    batches = list(binding._games(con, "t1"))
    assert len(batches) > 3
    seen = [(int(s), int(g)) for b in batches for s, g in zip(b["shard"], b["game"], strict=True)]
    assert seen == whole
    shards = [set(b["shard"].tolist()) for b in batches]
    assert all(not (a & b) for i, a in enumerate(shards) for b in shards[i + 1 :])


def test_small_batches_bind_what_one_batch_binds(
    lake_copy: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed seed is named, and the same games are replayed, whether verify fetches the
    run's games 7 at a time or all at once (the same random sample for the same generator)."""
    shard, game = change_a_seed(lake_copy)
    manifests = {
        p.parent.name: json.loads(p.read_text())
        for p in (lake_copy.root / "runs").glob("*/manifest.json")
    }
    outcomes = []
    for rows in (10**9, 7):
        monkeypatch.setattr(binding, "BIND_ROWS", rows)
        con = staging(str(lake_copy.root))
        out = binding.bind(con, manifests, pipeline.replayer, 0.2, np.random.default_rng(3))
        outcomes.append(out)
    one, small = outcomes
    assert [(r["run"], r["shard"], r["game"]) for r in small.seed_rows] == [("t1", shard, game)]
    assert small.seed_rows == one.seed_rows and small.replay_rows == one.replay_rows == []
    assert (small.games, small.seeds_checked, small.replayed) == (
        one.games,
        one.seeds_checked,
        one.replayed,
    )
    assert small.replayed > 0
