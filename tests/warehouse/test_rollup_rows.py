"""warehouse.rollups: the rollups rows streamed file by file are stg_rollups' rows without the
per-game lists, at every scan; `prefetch` hands results out in order with a bounded lead."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from warehouse import connect
from warehouse.rollups import prefetch


def test_the_stream_is_the_rollups_without_their_lists_at_every_scan(spec_lake: Path) -> None:
    con = connect(spec_lake)
    want = con.execute("SELECT * EXCLUDE (game_y, game_n) FROM stg_rollups ORDER BY ALL").fetchall()
    assert want
    for _ in range(2):  # a new stream each time
        assert con.execute("SELECT * FROM stg_rollup_rows ORDER BY ALL").fetchall() == want
    plan = con.execute("EXPLAIN SELECT * FROM int_cell_sums").fetchall()
    assert "lake_rollup_rows" not in str(plan)  # computed once, at connect (a table)


def test_prefetch_keeps_order_and_a_bounded_lead() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            started.append(i)
        time.sleep(0.001 * (i % 3))
        return i * i

    got = []
    for i, value in enumerate(prefetch(work, list(range(30)), ahead=3)):
        got.append(value)
        with lock:
            assert len(started) <= i + 1 + 3  # never more than `ahead` past the one handed out
    assert got == [i * i for i in range(30)]
