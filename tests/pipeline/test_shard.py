"""The shard function: rows that agree with the events, never depend on sharding, pair on seeds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from flip7.engine import Engine
from flip7.events import FIELDS, EventLog, rebuild_scores
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.simulate import rotated
from pipeline.schema import TABLES, event_codes, unpack_events
from pipeline.shard import game_seed, simulate_shard
from tests.pipeline.helpers import shard_task

TASK = shard_task(shard=3, cell=1, pair=1, root_seed=5, game_offset=1000, start=10, stop=40)


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    return simulate_shard(TASK)


def test_schemas_and_row_counts(tables: dict[str, pa.Table]) -> None:
    """Each table has its declared schema; games has games x players rows, all ids in range."""
    for name, table in tables.items():
        assert table.schema == TABLES[name]
    games = tables["games"].to_pydict()
    assert len(games["game"]) == TASK.n_games * TASK.n_players
    assert set(games["game"]) == set(range(1010, 1040))
    assert sum(games["events"]) // TASK.n_players == len(
        event_codes(tables["events"], tables["rounds"])["code"]
    )


def test_rows_agree_with_the_events(tables: dict[str, pa.Table]) -> None:
    """Round scores, totals and winners rebuilt from the events alone equal the compact tables."""
    ev = unpack_events(tables["events"], tables["rounds"]).to_pydict()
    rounds = tables["rounds"].to_pydict()
    games = tables["games"].to_pydict()
    n = TASK.n_players
    for game in range(1010, 1040):
        rows = [i for i, g in enumerate(ev["game"]) if g == game]
        assert [ev["seq"][i] for i in rows] == list(range(len(rows)))
        flat = [ev[f][i] for i in rows for f in FIELDS]
        rebuilt = rebuild_scores(EventLog(flat), n)
        r_rows = [i for i, g in enumerate(rounds["game"]) if g == game]
        scores = [
            [rounds["score"][i] for i in r_rows if rounds["round"][i] == r]
            for r in range(1, len(r_rows) // n + 1)
        ]
        assert scores == rebuilt.round_scores
        g_rows = sorted(
            (i for i, g in enumerate(games["game"]) if g == game), key=lambda i: games["seat"][i]
        )
        assert [games["total"][i] for i in g_rows] == rebuilt.totals
        assert [games["winner"][i] for i in g_rows] == [s == rebuilt.winner for s in range(n)]
        last = [rounds["total"][i] for i in r_rows[-n:]]
        assert last == rebuilt.totals  # running totals end at the game totals


def test_rows_equal_the_engine_game_by_game(tables: dict[str, pa.Table]) -> None:
    """Each game's events are the engine's own buffer for its seed and rotated line-up."""
    ev = unpack_events(tables["events"], tables["rounds"])
    games = tables["games"].to_pydict()
    base = parse_policies(list(TASK.lineup))
    for i in (TASK.start, TASK.stop - 1):
        seats = rotated(base, i)
        result = Engine(parse_ruleset("3.1"), seats, game_seed(5, 1, i)).run()
        mask = [g == TASK.game_offset + i for g in ev["game"].to_pylist()]
        mine = ev.filter(pa.array(mask)).to_pydict()
        flat = [mine[f][j] for j in range(len(mine["seq"])) for f in FIELDS]
        assert flat == result.events
        lineup = {
            games["lineup"][j] for j, g in enumerate(games["game"]) if g == TASK.game_offset + i
        }
        assert lineup == {",".join(p.spec for p in seats)}


def test_rows_do_not_depend_on_the_shard_split(tables: dict[str, pa.Table]) -> None:
    """Games [10, 40) in one shard or split at 23 give the same rows (the shard number is only
    in the file name); the rollups, sums over a shard's games, add up to the whole's."""
    a = dataclasses.replace(TASK, shard=7, stop=23)
    b = dataclasses.replace(TASK, shard=8, start=23)
    for name, whole in tables.items():
        parts = pa.concat_tables([simulate_shard(a)[name], simulate_shard(b)[name]])
        if name == "rollups":
            assert summed(parts) == summed(whole)
            continue
        assert parts.to_pylist() == whole.to_pylist()


def summed(rollups: pa.Table) -> dict[tuple[object, ...], list[int]]:
    """A rollups table's sums added up per group, whatever the shards (first game and seating
    aside: they name a shard)."""
    keys = ("cell", "variant", "ruleset", "grouping", "figure", "policy", "opponent", "key")
    sums = ("games", "y", "n", "yy", "nn", "yn")
    out: dict[tuple[object, ...], list[int]] = {}
    for row in rollups.to_pylist():
        total = out.setdefault(tuple(row[k] for k in keys), [0] * len(sums))
        for i, k in enumerate(sums):
            total[i] += row[k]
    return out


def test_paired_cells_share_shuffles() -> None:
    """Two cells of one pair see the same seeds: with ev vs evc in seat 0, round 1 (no discards
    yet, so counting changes nothing) is the same event for event."""
    ev = dataclasses.replace(TASK, cell=4, pair=4, lineup=("ev", "bust:0.25"), start=0, stop=12)
    evc = dataclasses.replace(ev, cell=5, lineup=("evc", "bust:0.25"), game_offset=5000)
    a, b = simulate_shard(ev), simulate_shard(evc)
    assert a["games"]["seed"].to_pylist() == b["games"]["seed"].to_pylist()
    for t in (a, b):
        assert len(set(t["games"]["seed"].to_pylist())) == 12  # distinct games, distinct seeds
    first = []
    for t in (a, b):
        events = unpack_events(t["events"], t["rounds"])
        first.append(events.filter(pc.equal(events["round"], 1)).select(FIELDS).to_pylist())
    assert first[0] == first[1]
    unpaired = dataclasses.replace(ev, pair=6)
    assert simulate_shard(unpaired)["games"]["seed"].to_pylist() != a["games"]["seed"].to_pylist()


def test_a_shard_task_counts_events_not_stored_rows(tmp_path: Path) -> None:
    """run_shard reports the events played (what the run's progress and summary count) beside
    the files' row counts: the events file holds one row per game, so they differ."""
    from pipeline.task import run_shard

    result = run_shard(TASK, str(tmp_path))
    tables = simulate_shard(TASK)
    assert result["events"] == len(event_codes(tables["events"], tables["rounds"])["code"])
    assert result["rows"]["events"] == tables["events"].num_rows < result["events"]
