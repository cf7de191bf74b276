"""`flip7 warehouse verify` binds labels and seeds to games: each tamper below once passed it
(and then sql, report and the dashboard showed a flipped result). Each must now fail verify
with a line naming the run, shard and game, and leave the lake as it was (no verify record).

Run t1 of the warehouse tests: 2-player CRN-paired cells (ev vs bust:0.25, evc vs bust:0.25)
and 3-player cells, seats rotating, 15-game shards.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline.replayer
from flip7.cli import main
from pipeline.rollups import rollup_table
from tests.warehouse.lakes import read_table, write_run, write_table
from warehouse import verify
from warehouse.commands import describe
from warehouse.verify import Verification

Rows = list[dict[str, Any]]


@pytest.fixture
def lake(clean_t1: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of run t1; the CLI's verify finds pipeline.replayer as the entry point
    would (the shared test environment may predate the entry point's installation)."""
    root = tmp_path / "data"
    shutil.copytree(clean_t1, root)
    # warehouse.verify the attribute is the function; the module is in sys.modules.
    monkeypatch.setattr(
        sys.modules["warehouse.verify"], "find_replayer", lambda: pipeline.replayer, raising=False
    )
    return root


def rewrite(path: Path, change: Callable[[Rows], None]) -> None:
    """Rewrite a lake file with its rows (as readers see them) changed in place by `change`,
    stored again as the lake stores them."""
    table = read_table(path)
    rows = table.to_pylist()
    change(rows)
    write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def shard_file(root: Path, table: str, players: int, shard: int) -> Path:
    return root / table / "run=t1" / f"players={players}" / f"shard-{shard:05d}.parquet"


def swap_seats(game: int, a: int, b: int) -> Callable[[Rows], None]:
    """Swap the policy labels of seats a and b in one game's rows."""

    def change(rows: Rows) -> None:
        labels = {r["seat"]: r["policy"] for r in rows if r["game"] == game}
        for r in rows:
            if r["game"] == game and r["seat"] in (a, b):
                r["policy"] = labels[b if r["seat"] == a else a]

    return change


def state(root: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


def run_verify(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["warehouse", "verify", "--data", str(root), *extra])
    return code, capsys.readouterr().out


def names(out: str, check: str, shard: int, game: int) -> bool:
    """The account has a FAIL line for `check` and an example line naming run, shard, game."""
    lines = out.splitlines()
    return any(line.strip().startswith(f"FAIL  {check}:") for line in lines) and any(
        f"run=t1 shard={shard} game={game}" in line for line in lines
    )


def first_game(root: Path, players: int, shard: int) -> int:
    return int(pq.read_table(shard_file(root, "games", players, shard))["game"][0].as_py())


def test_a_clean_lake_passes_and_is_recorded(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The untouched run passes (every game replayed) and verify records the pass."""
    code, out = run_verify(lake, capsys, "--replay-all")
    assert code == 0, out
    assert "replayed 160 of 160 games (100.0%)" in out
    assert (lake / "runs" / "t1" / "verified.json").is_file()


def test_labels_swapped_in_the_games_file(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seats 0 and 1 swap labels in the games file of shard 0: the line-up check names it."""
    game = first_game(lake, 2, 0)
    rewrite(shard_file(lake, "games", 2, 0), swap_seats(game, 0, 1))
    before = state(lake)
    code, out = run_verify(lake, capsys)
    assert code == 1 and names(out, "assert_lineups_match_manifest", 0, game), out
    assert state(lake) == before and not (lake / "runs" / "t1" / "verified.json").exists()


def test_labels_swapped_in_the_rounds_file(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same swap in the rounds file only: the rounds labels disagree with the games'."""
    game = first_game(lake, 2, 0)
    rewrite(shard_file(lake, "rounds", 2, 0), swap_seats(game, 0, 1))
    code, out = run_verify(lake, capsys)
    assert code == 1 and names(out, "assert_rounds_policies_match_games", 0, game), out


def test_labels_swapped_in_games_and_rounds(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Swapped in both compact tables alike: still bound to the manifest's line-up."""
    game = first_game(lake, 2, 0)
    for table in ("games", "rounds"):
        rewrite(shard_file(lake, table, 2, 0), swap_seats(game, 0, 1))
    code, out = run_verify(lake, capsys)
    assert code == 1 and names(out, "assert_lineups_match_manifest", 0, game), out


def test_a_reversed_manifest_lineup(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Cell 2's line-up reversed in the manifest: every game of the cell disagrees with it."""
    path = lake / "runs" / "t1" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["cells"][2]["lineup"].reverse()
    path.write_text(json.dumps(manifest))
    shards = {int(k) for k, v in manifest["shards"].items() if v["cell"] == 2}
    code, out = run_verify(lake, capsys)
    assert code == 1 and "FAIL  assert_lineups_match_manifest:" in out, out
    examples = [line for line in out.splitlines() if "the manifest's line-up seats" in line]
    assert examples and all(
        any(f"run=t1 shard={s} game=" in line for s in shards) for line in examples
    ), out


def test_labels_relabelled_everywhere_fail_the_replay(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Cell 2 relabelled consistently (manifest reversed, games and rounds rows swapped to
    match, their rollups written again): only re-simulating the games from their seeds and seats can tell, and does."""
    path = lake / "runs" / "t1" / "manifest.json"
    manifest = json.loads(path.read_text())
    old = list(manifest["cells"][2]["lineup"])
    new = old[::-1]
    manifest["cells"][2]["lineup"] = new
    path.write_text(json.dumps(manifest))
    relabel = dict(zip(old, new, strict=True))
    shards = sorted(int(k) for k, v in manifest["shards"].items() if v["cell"] == 2)

    def change(rows: Rows) -> None:
        for r in rows:
            r["policy"] = relabel[r["policy"]]
            if "lineup" in r:
                r["lineup"] = ",".join(relabel[p] for p in r["lineup"].split(","))

    for shard in shards:
        for table in ("games", "rounds"):
            rewrite(shard_file(lake, table, 3, shard), change)
        games, rounds = (read_table(shard_file(lake, t, 3, shard)) for t in ("games", "rounds"))
        path = shard_file(lake, "rollups", 3, shard)
        write_table(rollup_table(games, rounds, 3), path)
    v: Verification = verify(lake, replay=1.0, replayer=pipeline.replayer, discover=False)
    failed = {c.name for c in v.checks if c.failed}
    assert failed == {"replay_matches_log"}, describe(v)
    (check,) = [c for c in v.checks if c.name == "replay_matches_log"]
    assert {row["shard"] for row in check.examples} <= set(shards)
    assert "replayed from its seed with seats" in str(check.examples[0]["problem"])


def test_a_changed_seed(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One game's seed changed (on every seat): bound to the manifest's seed, it is named."""
    game = first_game(lake, 3, 6) + 4

    def change(rows: Rows) -> None:
        for r in rows:
            if r["game"] == game:
                r["seed"] += 1

    shard = 6
    rewrite(shard_file(lake, "games", 3, shard), change)
    code, out = run_verify(lake, capsys, "--replay-sample", "0")
    assert code == 1 and names(out, "seeds_match_manifest", shard, game), out


def test_without_a_replayer_verify_says_what_it_did_not_bind(lake: Path) -> None:
    """No replayer installed: verify still runs its checks and says, in a note, that seeds and
    labels were not bound by replay (it does not pretend)."""
    v = verify(lake, replayer=None, discover=False)
    assert v.ok and v.replayed == 0
    assert any("not bound to the games by replay" in n for n in v.notes)


def test_vengeance_games_replay_on_the_reference_engine(tmp_path: Path) -> None:
    """A "With a Vengeance" run (the kernel plays only the classic game): every game replays
    event for event through the reference engine, and a changed seed is still named."""
    root = tmp_path / "data"
    write_run(root, "v1")
    v = verify(root, replay=1.0, replayer=pipeline.replayer, discover=False)
    assert v.ok and v.replayed == v.games == 12, describe(v)
    path = next((root / "games" / "run=v1").rglob("shard-00000.parquet"))
    game = int(pq.read_table(path)["game"][0].as_py())

    def change(rows: Rows) -> None:
        for r in rows:
            if r["game"] == game:
                r["seed"] += 1

    rewrite(path, change)
    v = verify(root, replay=1.0, replayer=pipeline.replayer, discover=False)
    (check,) = [c for c in v.checks if c.failed]
    assert check.name == "seeds_match_manifest" and check.examples[0]["game"] == game


def test_a_label_naming_code_is_never_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy label that is an import path is refused by the replayer before anything is
    imported (verify imports no code a lake names)."""
    imported: list[str] = []
    monkeypatch.setattr("importlib.import_module", lambda name, *a: imported.append(name))
    why = pipeline.replayer.unreplayable("3.1", "classic", None, ["ev", "evil_module:Policy"])
    assert why is not None and "'evil_module:Policy' is not a built-in policy" in why
    assert imported == []


def test_games_it_cannot_replay_are_noted_not_passed_silently(lake: Path) -> None:
    """Where the replayer cannot re-simulate (e.g. a user policy), verify says how many sampled
    games it left and why, and counts none of them as replayed."""
    from types import SimpleNamespace

    refusing = SimpleNamespace(
        game_seeds=pipeline.replayer.game_seeds,
        unreplayable=lambda *args: "a user policy",
        replay_games=pipeline.replayer.replay_games,
    )
    v = verify(lake, replay=0.1, replayer=refusing, discover=False)
    assert v.ok and v.replayed == 0
    assert any("sampled games not replayed: a user policy" in n for n in v.notes)


def test_a_lake_declared_deck_is_bounded_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest declaring a deck of a billion cards (which verify once built, and ran out of
    memory) is refused by the replayer with the bound a spec's [deck] has; verify says so in one
    note line and the other checks still run."""
    root = tmp_path / "data"
    write_run(root, "v1")
    path = root / "runs" / "v1" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["deck"] = [0, 10**9, *[1] * 20]
    manifest["variant"] = "vengeance(deck=custom)"
    path.write_text(json.dumps(manifest))
    why = pipeline.replayer.unreplayable("3.1", "vengeance", manifest["deck"], ["ev", "ev"])
    assert why is not None and "at most 1000 cards" in why
    with pytest.raises(ValueError, match="at most 1000 cards"):
        pipeline.replayer.replay_games(
            "3.1", "vengeance", manifest["deck"], ["ev", "ev"], np.zeros(1, np.uint64), []
        )
    monkeypatch.setattr(
        sys.modules["warehouse.verify"], "find_replayer", lambda: pipeline.replayer, raising=False
    )
    code = main(["warehouse", "verify", "--data", str(root), "--replay-all"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    notes = [line for line in out.splitlines() if "not replayed" in line]
    assert notes and all("run v1" in n and "at most 1000 cards" in n for n in notes)
    assert code in (0, 1)


def test_an_interactive_policy_in_a_lake_is_never_asked(tmp_path: Path) -> None:
    """A lake seating `human` (no tournament can: specs refuse it) is not replayed by verify,
    which would otherwise wait for answers on the terminal: the replayer says why in one line."""
    why = pipeline.replayer.unreplayable("3.1", "classic", None, ["human", "ev"])
    assert why is not None and "'human'" in why and "person at the terminal" in why
    with pytest.raises(ValueError, match="person at the terminal"):
        pipeline.replayer.replay_games(
            "3.1", "classic", None, ["human", "ev"], np.zeros(1, np.uint64), []
        )


def test_verify_writes_nothing_through_a_linked_run_folder(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """runs/t1 a symbolic link to a folder outside the lake: verify refuses, in one line, to
    write its record there (or remove one), and the folder outside is left as it was."""
    outside = tmp_path / "outside" / "t1"
    shutil.move(lake / "runs" / "t1", outside)
    (lake / "runs" / "t1").symlink_to(outside, target_is_directory=True)
    before = state(outside)
    code = main(["warehouse", "verify", "--data", str(lake)])
    err = capsys.readouterr().err
    assert code == 2
    assert "leads outside the lake" in err and len(err.strip().splitlines()) == 1
    assert state(outside) == before and not (outside / "verified.json").exists()
