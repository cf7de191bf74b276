"""The replayer `flip7 warehouse verify` calls (the `flip7.replayers` entry point).

The warehouse never imports the engine; it finds this module through the entry point and asks
it two things about the games it read from the lake:

- `game_seeds(root_seed, pair, indices)`: the seeds the pipeline gives game `indices` of a cell
  in CRN pair `pair` (pipeline.shard.game_seed), to bind each logged seed to the manifest's;
- `replay_games(ruleset, variant, deck, policies, seeds, logged)`: re-simulate games with the
  given seats from their seeds and compare each with its logged event codes, event by event
  (as stored: HITs unfolded, the round scores left out: the rounds table holds those, and
  verify compares them with the scores it rebuilds).
  Games the compiled kernel can play are played there in one batch (about 10k games a second
  per core with every event), the others by the reference engine one by one.

`unreplayable` says why a game cannot be re-simulated without trusting the lake: a policy label
that is an import path (`module:Class`) would import code the lake names, so it is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from flip7.events import FIELDS, WIDTH, EventKind
from flip7.kernel import choose_engine, derive_seeds
from flip7.kernel.columns import shard_columns
from flip7.policies import REGISTRY, PolicySpecError, needs_a_person, parse_policies
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant
from lakecontract import codec
from pipeline.replay import check_deck
from pipeline.schema import rows_table, stored_codes, unpack_codes
from pipeline.shard import flat_events


def game_seeds(root_seed: int, pair: int, indices: np.ndarray) -> np.ndarray:
    """The pipeline's seed of each cell game index in `indices` (int64, like the games table)."""
    idx = np.asarray(indices, dtype=np.int64)
    if idx.size == 0:
        return np.zeros(0, dtype=np.int64)
    lo = int(idx.min())
    table = derive_seeds(root_seed, pair, lo, int(idx.max()) + 1)
    return table[idx - lo].astype(np.int64)


def unreplayable(
    ruleset: str, variant: str, deck: Sequence[int] | None, policies: Sequence[str]
) -> str | None:
    """Why these seats cannot be re-simulated from the lake's labels alone, or None."""
    for spec in policies:
        if spec.partition(":")[0] not in REGISTRY:
            return f"policy {spec!r} is not a built-in policy: verify imports no code a lake names"
        person = needs_a_person(spec)
        if person is not None:
            return f"{person}: verify replays no game that would wait for answers"
    try:
        parse_policies(list(policies))
        parse_ruleset(ruleset)
        parse_variant(variant, check_deck(deck))
    except (PolicySpecError, ValueError) as exc:
        return f"cannot rebuild the game's setting: {exc}"
    return None


def replay_games(
    ruleset: str,
    variant: str,
    deck: Sequence[int] | None,
    policies: Sequence[str],
    seeds: np.ndarray,
    logged: Sequence[np.ndarray],
) -> list[str | None]:
    """Re-simulate each game (seat s plays policies[s], first dealer seat 0) from its seed and
    compare it with its logged event codes as stored (in order, HITs unfolded, no ROUND_SCORE):
    None where they are equal, else where and how they first differ."""
    why = next((p for p in map(needs_a_person, policies) if p is not None), None)
    if why is not None:
        raise ValueError(f"{why}: verify replays no game that would wait for answers")
    var = parse_variant(variant, check_deck(deck))  # bounded before it is built
    rules = parse_ruleset(ruleset)
    seats = parse_policies(list(policies))
    seeds = np.asarray(seeds, dtype=np.uint64)
    if variant == "classic" and choose_engine("auto", seats, rules)[0] == "kernel":
        cols = shard_columns(rules, seats, seeds, np.zeros(len(seeds), np.int64), 0)
        ev = cols.events
        flat = stored_codes(
            rows_table(ev["game"], ev["round_offsets"], ev["rounds"], ev["offsets"], ev["codes"])
        )
        bounds = np.searchsorted(flat["game"], np.arange(len(seeds) + 1))
        replayed = [flat["code"][a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    else:
        replayed = []
        for seed in seeds.tolist():
            events = var.new_engine(rules, seats, int(seed)).run().events
            code = flat_events(events, [len(events) // WIDTH], 0)[3]
            replayed.append(code[(code & 31) != EventKind.ROUND_SCORE])
    return [difference(a, b) for a, b in zip(logged, replayed, strict=True)]


def difference(logged: np.ndarray, replayed: np.ndarray) -> str | None:
    """Where two event-code streams first differ, in words; None when equal."""
    logged = np.asarray(logged, dtype=np.int64)
    replayed = np.asarray(replayed, dtype=np.int64)
    n = min(len(logged), len(replayed))
    diff = np.flatnonzero(logged[:n] != replayed[:n])
    if diff.size == 0 and len(logged) == len(replayed):
        return None
    if diff.size == 0:
        return f"the log has {len(logged)} events, the replay {len(replayed)}"
    i = int(diff[0])
    return (
        f"event {i} differs: logged {_fields(logged[i])}, replayed {_fields(replayed[i])} "
        "(kind, player, card, target, value)"
    )


def _fields(code: np.int64) -> tuple[int, ...]:
    unpacked = unpack_codes(np.asarray([code], dtype=np.int64))
    return tuple(int(unpacked[k][0]) for k in FIELDS)


def shard_rollups(games: pa.Table, rounds: pa.Table | codec.StoredRounds, players: int) -> pa.Table:
    """A shard's rollup recomputed from its games and rounds tables (the rounds also as stored)
    by the compiled pass the shard tasks write it with (pipeline.rollups.rollup_table): verify
    compares it with the stored one (warehouse.shardcheck), and leaves the shards where the two
    differ to its SQL."""
    from pipeline.rollups import rollup_table

    return rollup_table(games, rounds, players)
