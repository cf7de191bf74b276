"""Logged games: load one from the lake, and replay it from its seed against the log.

`load_logged_game` is the `flip7.logged_games` entry point that `flip7 watch --run RUN --game
GAME` calls. It finds the game's cell and shard through the manifest, reads the game's rows from
that shard's games file (seats, policies as played, ruleset, seed) and its events in seq order.
`replay` re-simulates the game with the reference engine and compares the two event streams
event by event (the DESIGN promise: a logged game is reproducible bit for bit from its seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from flip7.cards import Deck
from flip7.events import FIELDS, WIDTH, Event, EventKind
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant
from pipeline.lake import Lake, default_root
from pipeline.schema import unpack_codes


def locate(manifest: dict[str, Any], game: int) -> tuple[dict[str, Any], int]:
    """(the cell holding game id `game`, the finished shard holding it) or ValueError."""
    for cell in manifest["cells"]:
        offset = cell["game_offset"]
        if offset <= game < offset + cell["games"]:
            index = game - offset
            for key, info in manifest["shards"].items():
                if info["cell"] == cell["cell"] and info["start"] <= index < info["stop"]:
                    return cell, int(key)
            raise ValueError(
                f"game {game} of run {manifest['run']!r} is in a shard that has not finished; "
                "finish the run with `flip7 tournament run SPEC --resume`"
            )
    last = manifest["planned_games"] - 1
    raise ValueError(f"run {manifest['run']!r} has no game {game}; game ids are 0..{last}")


def load_logged_game(run: str, game: int, data: str | None = None) -> dict[str, Any]:
    """A logged game: policies (per seat, as played), ruleset, seed, variant, flat events."""
    lake = Lake.open(data or default_root())
    manifest = lake.load_manifest(run)
    cell, shard = locate(manifest, game)
    players = cell["players"]
    games = pq.read_table(
        lake.shard_path("games", run, players, shard),
        filesystem=lake.fs,
        columns=["game", "seat", "policy", "ruleset", "variant", "seed", "events"],
        filters=[("game", "=", game)],
    ).sort_by("seat")
    if games.num_rows != players:
        raise ValueError(
            f"run {run!r} game {game}: expected {players} seats in shard {shard}'s games file, "
            f"found {games.num_rows}"
        )
    rows = games.to_pylist()
    events = pq.read_table(
        lake.shard_path("events", run, players, shard),
        filesystem=lake.fs,
        columns=["seq", "code"],
        filters=[("game", "=", game)],
    )
    events = events.take(pc.sort_indices(events, [("seq", "ascending")]))
    unpacked = unpack_codes(events["code"].to_numpy())
    columns = [unpacked[name].tolist() for name in FIELDS]
    flat = [v for row in zip(*columns, strict=True) for v in row]
    return {
        "run": run,
        "game": game,
        "shard": shard,
        "cell": cell["cell"],
        "policies": [str(r["policy"]) for r in rows],
        "ruleset": str(rows[0]["ruleset"]),
        "variant": str(rows[0]["variant"]),
        "deck": manifest.get("deck"),
        "seed": int(rows[0]["seed"]),
        "events": flat,
    }


@dataclass(frozen=True)
class ReplayResult:
    """The comparison of a logged game with its re-simulation."""

    logged: int  # events in the log
    replayed: int  # events in the re-simulation
    first_difference: int | None  # index of the first differing event, None if equal

    @property
    def equal(self) -> bool:
        return self.first_difference is None


def compare(logged: list[int], replayed: list[int]) -> ReplayResult:
    """Event-by-event comparison of two flat event buffers."""
    n_log, n_rep = len(logged) // WIDTH, len(replayed) // WIDTH
    for i in range(min(n_log, n_rep)):
        a = logged[i * WIDTH : (i + 1) * WIDTH]
        b = replayed[i * WIDTH : (i + 1) * WIDTH]
        if a != b:
            return ReplayResult(n_log, n_rep, i)
    if n_log != n_rep:
        return ReplayResult(n_log, n_rep, min(n_log, n_rep))
    return ReplayResult(n_log, n_rep, None)


def resimulate(game: dict[str, Any]) -> list[int]:
    """The event buffer the engine produces from the logged game's seed, seats and ruleset."""
    deck = game.get("deck")
    variant = parse_variant(game["variant"], Deck("custom", tuple(deck)) if deck else None)
    engine = variant.new_engine(
        parse_ruleset(game["ruleset"]), parse_policies(game["policies"]), game["seed"]
    )
    return engine.run().events


def describe_event(flat: list[int], i: int, names: list[str]) -> str:
    """Event i of a flat buffer as `#i (k,p,c,t,v) English`, or `(none)` past the end."""
    if (i + 1) * WIDTH > len(flat):
        return "(none: the stream ended)"
    k, p, c, t, v = flat[i * WIDTH : (i + 1) * WIDTH]
    try:
        text = Event(EventKind(k), p, c, t, v).describe(names)
    except (ValueError, IndexError, KeyError):
        text = "(not a valid event)"
    return f"({k}, {p}, {c}, {t}, {v})  {text}"
