"""Cells: the line-up labels the marts key on, and the one-cell-per-shard rule they rely on."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from warehouse import connect, verify

from .lakes import Lake, shard_path


def test_cells_take_the_manifest_labels(lake: Lake) -> None:
    """int_cells names each cell by its manifest label; int_shard_cells maps every committed
    shard to the cell its task played."""
    con = connect(lake.root)
    cells = con.execute("SELECT run, cell, players, lineup FROM int_cells ORDER BY ALL").fetchall()
    assert cells == [
        ("t1", 0, 2, "cell 0"),
        ("t1", 1, 2, "cell 1"),
        ("t1", 2, 3, "cell 2"),
        ("t1", 3, 3, "cell 3"),
        ("t2", 0, 3, "cell 0"),
    ]
    shards = dict(
        ((r, s), c)
        for r, s, c in con.execute("SELECT run, shard, cell FROM int_shard_cells").fetchall()
    )
    assert shards == {(t.run, t.shard): t.cell for ts in lake.tasks.values() for t in ts}


def test_a_shard_mixing_cells_fails_verify(lake_copy: Lake) -> None:
    """A games file whose rows name two cells breaks assert_one_cell_per_shard (the marts
    would file its rounds under one cell)."""
    task = lake_copy.tasks["t1"][0]
    path = shard_path(lake_copy.root, "games", task)
    table = pq.read_table(path)
    cells = table["cell"].to_numpy().copy()
    cells[-task.n_players :] = task.cell + 1  # the shard's last game, all its seats
    i = table.schema.get_field_index("cell")
    field = table.schema.field(i)
    pq.write_table(table.set_column(i, field, pa.array(cells, field.type)), path)
    v = verify(lake_copy.root, "t1")
    failing = {c.name for c in v.checks if c.failed}
    assert "assert_one_cell_per_shard" in failing
