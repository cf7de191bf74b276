"""Replay: a logged game re-simulates to the same events; a tampered log is caught."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from flip7.cli import main
from flip7.events import WIDTH, EventKind
from pipeline.replay import compare, load_logged_game, resimulate
from pipeline.schema import pack_events, unpack_events
from tests.pipeline.helpers import run_inline, small_plan
from tests.warehouse.lakes import read_table, write_table


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lake")
    run_inline(small_plan(), str(root))
    return root


def test_logged_game_matches_its_rows(lake: Path) -> None:
    """The loader returns the seats as played (rotated), the seed and the events in seq order."""
    game = load_logged_game("t", 250, str(lake))  # cell 1 (3 players), index 10
    assert game["policies"] == ["sum:20", "ev", "bust:0.25"]  # rotated by 10 % 3 = 1 seat
    assert game["ruleset"] == "3.1" and game["variant"] == "classic"
    events = game["events"]
    assert len(events) % WIDTH == 0
    assert events[0] == EventKind.ROUND_START and events[-WIDTH] == EventKind.GAME_END


def test_replay_reproduces_every_logged_game_checked(lake: Path) -> None:
    """Games from each cell re-simulate event for event."""
    for game_id in (0, 239, 240, 359, 360, 479):
        game = load_logged_game("t", game_id, str(lake))
        assert compare(game["events"], resimulate(game)).equal


def test_flip7_replay_and_watch(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flip7 replay` exits 0 on a faithful log; `flip7 watch --run` prints the game."""
    assert main(["replay", "t", "17", "--data", str(lake)]) == 0
    assert "replay matches the log" in capsys.readouterr().out
    assert main(["watch", "--run", "t", "--game", "17", "--data", str(lake), "--no-file"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run t, game 17:") and "-- round 1" in out and "wins with" in out


def test_replay_reports_the_first_difference(
    tmp_path: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Changing one logged card makes `flip7 replay` exit 1 and name that event."""
    root = tmp_path / "lake"
    root.mkdir()
    for p in lake.rglob("*"):
        if p.is_file():
            (root / p.relative_to(lake)).parent.mkdir(parents=True, exist_ok=True)
            (root / p.relative_to(lake)).write_bytes(p.read_bytes())
    path = root / "events" / "run=t" / "players=2" / "shard-00000.parquet"
    rounds = read_table(root / "rounds" / "run=t" / "players=2" / "shard-00000.parquet")
    table = unpack_events(read_table(path), rounds)
    game, seq = 5, 7  # the first event of game 5 that is a draw, at seq >= 7, gets a new card
    draws = table.filter(
        pc.and_(pc.equal(table["game"], game), pc.equal(table["kind"], int(EventKind.DRAW)))
    )
    seq = min(s for s in draws["seq"].to_pylist() if s >= seq)
    hit = pc.and_(pc.equal(table["game"], game), pc.equal(table["seq"], seq))
    old = table.filter(hit)["card"][0].as_py()
    card = pc.if_else(hit, pa.scalar((old + 1) % 13, pa.int8()), table["card"])
    table = table.set_column(table.schema.get_field_index("card"), "card", card)
    write_table(pack_events(table), path)  # stored as the lake stores it
    assert main(["replay", "t", str(game), "--data", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"DIFFERS from the log at event {seq}" in out
    assert "logged:   (1, " in out and "replayed: (1, " in out


def test_missing_run_and_game_are_clear_errors(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unknown runs list what exists; unknown games give the valid id range."""
    assert main(["replay", "nope", "0", "--data", str(lake)]) == 2
    assert "runs there: t" in capsys.readouterr().err
    assert main(["replay", "t", "480", "--data", str(lake)]) == 2
    assert "game ids are 0..479" in capsys.readouterr().err


def test_compare_counts_a_truncated_log() -> None:
    """A log that stops early differs at the first missing event."""
    full = [0, 0, -1, -1, 1] * 3
    assert compare(full, full).equal
    assert compare(full[:10], full).first_difference == 2


def test_replay_and_watch_json_are_the_logged_events_as_records(
    lake: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--format json: the game's events as records, field for field the logged ones, each with
    the text watch prints; watch --run gives the same records; csv one row per event; -o
    writes the document to a file instead."""
    import csv
    import io
    import json

    game = load_logged_game("t", 17, str(lake))
    assert main(["replay", "t", "17", "--data", str(lake), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "replay" and doc["matches"] and doc["first_difference"] is None
    assert doc["lineup"] == game["policies"] and doc["seed"] == game["seed"]
    fields = ("kind", "player", "card", "target", "value")
    flat = [
        int(EventKind[r["kind"].upper()]) if f == "kind" else r[f]
        for r in doc["events"]
        for f in fields
    ]
    assert flat == game["events"]
    assert [r["seq"] for r in doc["events"]] == list(range(len(game["events"]) // WIDTH))
    assert doc["events"][0]["text"].startswith("-- round 1, dealer P")
    watch = ["watch", "--run", "t", "--game", "17", "--data", str(lake)]
    saved = tmp_path / "game.json"
    assert main([*watch, "--format", "json", "-o", str(saved)]) == 0
    assert capsys.readouterr().out == ""
    watched = json.loads(saved.read_text())
    assert watched["command"] == "watch" and watched["events"] == doc["events"]
    assert sum(watched["totals"]) > 0 and watched["winner"] == doc["events"][-1]["player"]
    assert main(["replay", "t", "17", "--data", str(lake), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(doc["events"]) and rows[-1]["kind"] == "game_end"
