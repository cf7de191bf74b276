"""Bind the lake's seeds and labels to its games: seeds derived again, a sample re-simulated.

verify's SQL binds every games row's policy, pair and game id to its manifest
(assert_lineups_match_manifest) and every rounds row's policy to the games table. This step
binds the rest through a replayer: every game's seed must be the one the manifest's seed
derives for it, and a sample of games (`fraction` of each shard, at least one game per shard)
is re-simulated from its seed and seats and compared with the event log, event by event. So a
label swapped in every table, a reversed line-up or a changed seed cannot pass.

The warehouse never imports the engine: the replayer is found through the `flip7.replayers`
entry point group (flip7's own is pipeline.replayer). Without one, this step says it did not
run. Labels that name code (a user policy `module:Class`) are never imported: such games are
reported as not replayed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol

import duckdb
import numpy as np
import pyarrow as pa

GROUP = "flip7.replayers"
#: The share of each shard's games verify re-simulates unless told otherwise (--replay-sample).
SAMPLE = 0.01


class Replayer(Protocol):
    """What verify asks of a replayer (pipeline.replayer is one)."""

    def game_seeds(self, root_seed: int, pair: int, indices: np.ndarray) -> np.ndarray: ...

    def unreplayable(
        self, ruleset: str, variant: str, deck: Sequence[int] | None, policies: Sequence[str]
    ) -> str | None: ...

    def replay_games(
        self,
        ruleset: str,
        variant: str,
        deck: Sequence[int] | None,
        policies: Sequence[str],
        seeds: np.ndarray,
        logged: Sequence[np.ndarray],
    ) -> list[str | None]: ...


def find_replayer() -> Replayer | None:
    """The first replayer installed under the entry point group, by name; None if none is."""
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        loaded: Replayer = ep.load()
        return loaded
    return None


@dataclass
class Binding:
    """The outcome: failing rows of the seed check and of the replay, and what was done."""

    games: int = 0
    seeds_checked: int = 0
    replayed: int = 0
    seed_rows: list[dict[str, object]] = field(default_factory=list)
    replay_rows: list[dict[str, object]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def sample(shards: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Indices of a random `fraction` of the rows of each shard (at least one per shard when
    fraction > 0); `shards` holds each row's shard key, rows of a shard adjacent."""
    if fraction <= 0 or len(shards) == 0:
        return np.zeros(0, dtype=np.int64)
    if fraction >= 1:
        return np.arange(len(shards))
    starts = np.flatnonzero(np.r_[True, shards[1:] != shards[:-1]])
    stops = np.r_[starts[1:], len(shards)]
    picked = []
    for a, b in zip(starts.tolist(), stops.tolist(), strict=True):
        k = max(1, math.ceil(fraction * (b - a)))
        picked.append(a + rng.choice(b - a, size=k, replace=False))
    return np.sort(np.concatenate(picked))


def bind(
    con: duckdb.DuckDBPyConnection,
    manifests: dict[str, dict[str, Any]],
    replayer: Replayer | None,
    fraction: float = SAMPLE,
    rng: np.random.Generator | None = None,
) -> Binding:
    """Check every game's seed against its manifest and replay a sample (see the module doc).

    `con` has the staging views over the snapshot; `manifests` the parsed manifests by run.
    """
    out = Binding()
    cur = con.execute(
        "SELECT run, shard, game, cell_game, pair, seed FROM stg_games WHERE seat = 0 "
        "ORDER BY run, shard, game"
    )
    games = cur.fetchnumpy()
    out.games = len(games["game"])
    if replayer is None:
        out.notes.append(
            f"seeds and labels of {out.games:,} games not bound to the games by replay: no "
            f"replayer is installed (entry point group {GROUP}; flip7's pipeline provides one)"
        )
        return out
    runs = np.asarray(games["run"], dtype=object)
    shard = np.asarray(games["shard"], dtype=np.int64)
    game = np.asarray(games["game"], dtype=np.int64)
    index = np.asarray(games["cell_game"], dtype=np.int64)
    pair = np.asarray(games["pair"], dtype=np.int64)
    seed = np.asarray(games["seed"], dtype=np.int64)
    ok = np.zeros(len(game), dtype=bool)
    for run in sorted(set(runs.tolist())):
        manifest = manifests.get(run)
        in_run = runs == run
        if manifest is None or not isinstance(manifest.get("seed"), int):
            continue  # no manifest to bind to: assert_manifest_counts names the run
        root = int(manifest["seed"])
        for p in np.unique(pair[in_run]).tolist():
            rows = np.flatnonzero(in_run & (pair == p))
            if p < 0 or (index[rows] < 0).any():
                expected = np.full(len(rows), -1, dtype=np.int64)
            else:
                expected = replayer.game_seeds(root, int(p), index[rows])
            good = seed[rows] == expected
            ok[rows] = good
            out.seeds_checked += len(rows)
            for j in np.flatnonzero(~good).tolist():
                i, want = int(rows[j]), int(expected[j])
                out.seed_rows.append(
                    {
                        "run": run,
                        "shard": int(shard[i]),
                        "game": int(game[i]),
                        "problem": f"seed {seed[i]} in the games table; the manifest's seed "
                        f"{root} gives game {index[i]} of pair {p} the seed {want}",
                    }
                )
    keys = np.char.add(runs.astype(str), np.char.add("/", shard.astype(str)))
    picked = sample(keys, fraction, rng or np.random.default_rng())
    picked = picked[ok[picked]]  # a game with a wrong seed is already reported
    if len(picked) == 0:
        return out
    chosen = pa.table({"run": runs[picked].astype(str).tolist(), "game": game[picked]})
    con.register("verify_sample", chosen)
    try:
        seats = con.execute(
            "SELECT run, game, list(policy ORDER BY seat) AS seats FROM stg_games "
            "SEMI JOIN verify_sample USING (run, game) GROUP BY run, game"
        ).fetchall()
        events = con.execute(
            # The packed codes as the file holds them (stg_events unpacks them).
            "SELECT run, game, code FROM lake_table(events_files()) "
            "SEMI JOIN verify_sample USING (run, game) ORDER BY run, game, seq"
        ).fetchnumpy()
    finally:
        con.unregister("verify_sample")
    logged = _split(events)
    lineup = {(r, g): tuple(s) for r, g, s in seats}
    where = {(runs[i], int(game[i])): (int(shard[i]), int(seed[i])) for i in picked.tolist()}
    groups: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for r, g in sorted(where):
        groups.setdefault((r, lineup.get((r, g), ())), []).append(g)
    for (run, policies), ids in groups.items():
        manifest = manifests.get(run, {})
        ruleset, variant = str(manifest.get("ruleset")), str(manifest.get("variant"))
        deck = manifest.get("deck") or None
        why = replayer.unreplayable(ruleset, variant, deck, policies) if policies else "no seats"
        if why is not None:
            out.notes.append(f"run {run}: {len(ids)} sampled games not replayed: {why}")
            continue
        seeds = np.asarray([where[(run, g)][1] for g in ids], dtype=np.int64).astype(np.uint64)
        empty = np.zeros(0, dtype=np.int64)
        codes = [logged.get((run, g), empty) for g in ids]
        results = replayer.replay_games(ruleset, variant, deck, policies, seeds, codes)
        out.replayed += len(ids)
        for g, problem in zip(ids, results, strict=True):
            if problem is not None:
                out.replay_rows.append(
                    {
                        "run": run,
                        "shard": where[(run, g)][0],
                        "game": g,
                        "problem": f"replayed from its seed with seats {','.join(policies)}: "
                        f"{problem}",
                    }
                )
    return out


def _split(events: dict[str, Any]) -> dict[tuple[str, int], np.ndarray]:
    """Event codes per (run, game), from columns sorted by run, game, seq."""
    run = np.asarray(events["run"], dtype=object)
    game = np.asarray(events["game"], dtype=np.int64)
    code = np.asarray(events["code"], dtype=np.int64)
    if len(game) == 0:
        return {}
    starts = np.flatnonzero(np.r_[True, (game[1:] != game[:-1]) | (run[1:] != run[:-1])])
    stops = np.r_[starts[1:], len(game)]
    return {
        (str(run[a]), int(game[a])): code[a:b]
        for a, b in zip(starts.tolist(), stops.tolist(), strict=True)
    }
