"""Verify's per-game summaries: where they agree nothing is compared row by row, and that
hides no failing row (each damage gives the same rows as comparing every game)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from warehouse import connect, verify
from warehouse.build import sql_files
from warehouse.verify import failing_rows, gate
from warehouse.verify import tests as data_tests

from .lakes import Lake, read_table, shard_path, write_table
from .test_verify import edit_stored

GATED = {n: gate(s) for n, s in data_tests("shard").items() if gate(s)}


def ungated(sql: str) -> str:
    """A gated test comparing every game: its suspects are all games, not just the flagged."""
    flag = gate(sql)
    assert flag and f"from int_games_compared where {flag}" in sql
    return sql.replace(f"from int_games_compared where {flag}", "from int_games_compared")


def change_cell(path: Path, column: str, row: int, delta: int) -> None:
    """Rewrite a lake file with one cell of the rows readers see changed: delta added, or a
    flag flipped; stored as the lake stores it (lakes.write_table). A rounds file stores a
    dealer per round (seat 0's row says it) and numbers the rounds by their place, so there
    `round` takes out the row's round (every seat of it: the game's later rounds move up
    one)."""
    table = read_table(path)
    if column == "round":
        at = table.slice(row, 1).to_pylist()[0]
        keep = pc.invert(
            pc.and_(pc.equal(table["game"], at["game"]), pc.equal(table["round"], at["round"]))
        )
        write_table(table.filter(keep), path)
        return
    values = table[column].to_pylist()
    values[row] = not values[row] if isinstance(values[row], bool) else values[row] + delta
    i = table.schema.get_field_index(column)
    table = table.set_column(i, table.schema.field(i), pa.array(values, table[column].type))
    write_table(table, path)


def test_the_gated_tests_are_the_row_comparisons() -> None:
    """The row-by-row comparisons are gated, each on its own int_games_compared verdict."""
    assert GATED == {
        "assert_games_match_events": "games_differ",
        "assert_rounds_match_events": "rounds_differ",
        "assert_rounds_policies_match_games": "policies_differ",
    }
    assert gate("-- scope: shard\nselect 1") is None


def test_summaries_agree_on_a_clean_lake(lake: Lake) -> None:
    """Every game of the clean lake has both summaries, and neither verdict is raised."""
    con = connect(lake.root)
    rows = con.execute(
        "SELECT count(*), count(*) FILTER (rounds_differ OR games_differ) FROM int_games_compared"
    ).fetchall()
    games = con.execute("SELECT count(DISTINCT (run, game)) FROM stg_games").fetchall()
    assert rows == [(games[0][0], 0)]


# (table, column, row, delta; flags flip): damage that the gated checks name row by row.
DAMAGE = [
    ("rounds", "score", 5, 3),
    ("rounds", "busted", 7, 0),
    ("rounds", "flip7", 8, 0),
    ("rounds", "status", 9, 1),
    ("rounds", "dealer", 10, 1),  # seat 0's row (2 seats): the round's dealer as stored
    ("rounds", "round", 12, 0),  # the row's round taken out
    ("games", "total", 1, -7),
    ("games", "rank", 2, 1),
    ("games", "capped", 3, 0),
    ("games", "rounds", 0, 1),
    ("games", "events", 5, 3),
    ("games", "winner", 6, 0),
]


@pytest.mark.parametrize(("table", "column", "row", "delta"), DAMAGE)
def test_gates_hide_no_failing_row(
    lake_copy: Lake, table: str, column: str, row: int, delta: int
) -> None:
    """A damaged cell flags its game, and each gated test returns exactly the rows it returns
    when it compares every game."""
    change_cell(shard_path(lake_copy.root, table, lake_copy.tasks["t1"][1]), column, row, delta)
    con = connect(lake_copy.root)
    found = 0
    for name in GATED:
        sql = sql_files("tests")[name]
        rows = failing_rows(con, sql)
        assert sorted(map(str, rows)) == sorted(map(str, failing_rows(con, ungated(sql))))
        found += len(rows)
    assert found > 0


def test_batches_of_any_size_give_the_same_account(lake_copy: Lake) -> None:
    """Shards checked one by one or many to a query: the same failures, the same examples."""
    change_cell(shard_path(lake_copy.root, "rounds", lake_copy.tasks["t1"][3]), "score", 2, 5)
    change_cell(shard_path(lake_copy.root, "games", lake_copy.tasks["t1"][6]), "total", 0, 1)
    # a game's round lengths one past its codes (the rounds files' totals cannot be off)
    events = shard_path(lake_copy.root, "events", lake_copy.tasks["t1"][8])
    first = read_table(events)["game"][0].as_py()
    edit_stored(events, first, lambda rounds, codes: rounds.__setitem__(-1, rounds[-1] + 1))
    one = verify(lake_copy.root, "t1", batch=1)
    assert {c.name for c in one.checks if c.failed} == {
        "assert_rounds_match_events",
        "assert_games_match_events",
        "assert_games_complete",
        "assert_rollups_match_tables",
    }
    for batch in (3, 50):
        many = verify(lake_copy.root, "t1", batch=batch)
        assert [(c.name, c.failed, c.examples) for c in many.checks] == [
            (c.name, c.failed, c.examples) for c in one.checks
        ]
