"""Logged games: load one from the lake, and replay it from its seed against the log.

`load_logged_game` is the `flip7.logged_games` entry point that `flip7 watch --run RUN --game
GAME` calls. It finds the game's cell and shard through the manifest, reads the game's rows from
that shard's games file (seats, policies as played, ruleset, seed) and its events in seq order.
`replay` re-simulates the game with the reference engine and compares the two event streams
event by event (the DESIGN promise: a logged game is reproducible bit for bit from its seed).

A lake is data: the policy names stored in it never import a module by themselves. Built-in
policies replay; a user policy (an import path) replays only when the person replaying names it
(`flip7 replay RUN GAME --allow-policy module:Name`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from flip7.cards import Deck
from flip7.events import FIELDS, WIDTH, Event, EventKind
from flip7.policies import REGISTRY, Policy, needs_a_person, parse_policies
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant
from lakecontract import codec
from pipeline.lake import Lake, check_run_name, default_root
from pipeline.schema import SCHEMA_VERSION, UPGRADE, event_codes, unpack_codes


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
    check_run_name(run, "--run")
    lake = Lake.open(data or default_root())
    manifest = lake.load_manifest(run)
    check_schema_version(manifest, lake.uri)
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
    events, rounds = (
        _stored_rows(lake, t, run, players, shard, game) for t in ("events", "rounds")
    )
    unpacked = unpack_codes(event_codes(events, rounds)["code"])
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


def _stored_rows(lake: Lake, table: str, run: str, players: int, shard: int, game: int) -> pa.Table:
    """One game's rows of a shard's events or rounds file as readers see them (decoded from the
    stored form: lakecontract.codec); a file that does not decode is a ValueError naming it."""
    path = lake.shard_path(table, run, players, shard)
    rows = pq.read_table(path, filesystem=lake.fs, filters=[("game", "=", game)])
    try:
        return codec.logical(table, rows)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def check_schema_version(manifest: dict[str, Any], lake: str) -> None:
    """A ValueError naming the run, its schema version and the upgrade command (for the lake
    at `lake`) unless the run was written with this flip7's event-log schema."""
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        run = manifest.get("run")
        raise ValueError(
            f"run {run!r} was written with event-log schema v{version}; this flip7 reads "
            f"v{SCHEMA_VERSION}: upgrade it with `{UPGRADE.format(run=run)} --data {lake}`"
        )


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


def replay_policies(specs: Sequence[str], allow: Sequence[str] = ()) -> list[Policy]:
    """The logged seats' policies: built-ins always; an import path only when `allow` names it
    (as `module:Name`, or the full spec), else a ValueError naming the seat and the flag. No
    module is imported for a policy that is not allowed."""
    allowed = {a.strip() for a in allow}
    for seat, spec in enumerate(specs):
        spec = str(spec).strip()
        name = spec.partition(":")[0]
        person = needs_a_person(spec)
        if person is not None:
            raise ValueError(
                f"seat {seat} of the logged game plays {spec!r}: {person}, so it cannot be "
                "replayed (no tournament seats it: the lake was edited)"
            )
        if name in REGISTRY:
            continue
        path = ":".join(spec.split(":")[:2])
        if path not in allowed and spec not in allowed:
            raise ValueError(
                f"seat {seat} of the logged game plays {spec!r}, which is not a built-in "
                "policy; a lake is data, so replay loads a user policy only when you name it: "
                f"--allow-policy {path}"
            )
    return parse_policies([str(s) for s in specs])


def check_deck(deck: Any) -> Deck | None:
    """A logged game's declared deck (copies per card id), bounded like a spec's [deck]."""
    from pipeline.spec import MAX_DECK_CARDS

    if deck is None or (isinstance(deck, list | tuple) and not deck):
        return None
    ok = isinstance(deck, list | tuple) and all(
        isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in deck
    )
    if not ok or sum(deck) > MAX_DECK_CARDS:
        raise ValueError(
            f"the run's manifest declares a deck that is not a list of at most {MAX_DECK_CARDS} "
            "cards (copies per card id)"
        )
    return Deck("custom", tuple(deck))


def resimulate(game: dict[str, Any], allow: Sequence[str] = ()) -> list[int]:
    """The event buffer the engine produces from the logged game's seed, seats and ruleset;
    user policies only when `allow` names them (see replay_policies)."""
    policies = replay_policies(game["policies"], allow)
    variant = parse_variant(game["variant"], check_deck(game.get("deck")))
    engine = variant.new_engine(parse_ruleset(game["ruleset"]), policies, game["seed"])
    return engine.run().events


def describe_event(flat: list[int], i: int, names: list[str], vengeance: bool = False) -> str:
    """Event i of a flat buffer as `(k, p, c, t, v)  English`, or `(none ...)` past the end;
    `vengeance`: a With a Vengeance game (its cards and draws by their names)."""
    if (i + 1) * WIDTH > len(flat):
        return "(none: the stream ended)"
    k, p, c, t, v = flat[i * WIDTH : (i + 1) * WIDTH]
    try:
        text = Event(EventKind(k), p, c, t, v).describe(names, vengeance=vengeance)
    except (ValueError, IndexError, KeyError):
        text = "(not a valid event)"
    return f"({k}, {p}, {c}, {t}, {v})  {text}"
