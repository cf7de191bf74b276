"""The rounds table's policy labels against the games table's: a fingerprint per game gates the
row-by-row comparison (int_games_compared.policies_differ), and the gate hides nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from warehouse import connect
from warehouse.build import sql_files
from warehouse.verify import failing_rows

from .lakes import Lake, read_table, shard_path, write_table
from .test_verify_summaries import ungated

NAME = "assert_rounds_policies_match_games"


def relabel(path: Path, row: int, policy: str) -> None:
    """Rewrite one row's policy label (same schema). The rounds file stores a policy per seat
    per game (lakecontract.codec), so there every rounds row of that row's seat in its game
    takes the label."""
    table = read_table(path)
    rows = table.to_pylist()
    at = rows[row]
    for r in rows:
        if r is at or ("round" in r and (r["game"], r["seat"]) == (at["game"], at["seat"])):
            r["policy"] = policy
    write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def test_no_game_is_flagged_in_a_clean_lake(lake: Lake) -> None:
    """Every game's rounds labels agree with its games labels: no flag, no failing row."""
    con = connect(lake.root)
    flagged = con.execute("SELECT count(*) FILTER (policies_differ) FROM int_games_compared")
    assert flagged.fetchall() == [(0,)]
    assert failing_rows(con, sql_files("tests")[NAME]) == []


@pytest.mark.parametrize(("table", "row"), [("rounds", 4), ("rounds", 17), ("games", 2)])
def test_one_relabelled_row_is_flagged_and_named(lake_copy: Lake, table: str, row: int) -> None:
    """One seat of one game given another policy label in the rounds file (which stores a policy
    per seat per game: every round of it) or in one games row: its game is flagged, and the
    gated test returns exactly what the ungated one does, naming the seat."""
    path = shard_path(lake_copy.root, table, lake_copy.tasks["t1"][1])
    original = read_table(path).slice(row, 1).to_pylist()[0]
    relabel(path, row, "sum:99")
    con = connect(lake_copy.root)
    sql = sql_files("tests")[NAME]
    rows = failing_rows(con, sql)
    assert sorted(map(str, rows)) == sorted(map(str, failing_rows(con, ungated(sql))))
    (hit,) = rows
    assert (hit["game"], hit["seat"]) == (original["game"], original["seat"])
    assert "sum:99" in str(hit["problem"])
