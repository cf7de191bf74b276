"""Bind the lake's seeds and labels to its games: seeds derived again, a sample re-simulated.

verify's SQL binds every games row's policy, pair and game id to its manifest
(assert_lineups_match_manifest) and every rounds row's policy to the games table. This step
binds the rest through a replayer: every game's seed must be the one the manifest's seed
derives for it, and a sample of games (`fraction` of each shard, at least one game per shard)
is re-simulated from its seed and seats and compared with the event log, event by event (as
stored: no ROUND_SCORE, whose scores the rounds table holds and the SQL checks). So a
label swapped in every table, a reversed line-up or a changed seed cannot pass.

The warehouse never imports the engine: the replayer is found through the `flip7.replayers`
entry point group (flip7's own is pipeline.replayer). Without one, this step says it did not
run. Labels that name code (a user policy `module:Class`) are never imported: such games are
reported as not replayed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol

import duckdb
import numpy as np

GROUP = "flip7.replayers"
#: The share of each shard's games verify re-simulates unless told otherwise (--replay-sample).
SAMPLE = 0.01
#: Games fetched into Python at a time to check their seeds (five integers each).
BIND_ROWS = 100_000


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
    #: Games in the lake and games re-simulated, by run (a run absent replayed none).
    games_by_run: dict[str, int] = field(default_factory=dict)
    replayed_by_run: dict[str, int] = field(default_factory=dict)
    seed_rows: list[dict[str, object]] = field(default_factory=list)
    replay_rows: list[dict[str, object]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def sample(shards: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Indices of a random block of `fraction` of the rows of each shard (at least one row per
    shard when fraction > 0); `shards` holds each row's shard key, rows of a shard adjacent.

    A block (consecutive rows, here consecutive game ids) at a random offset: each game is as
    likely to be picked as with scattered picks, and the events of a block are contiguous in
    the shard's file, so reading them skips the rest of the file (measured: half the CPU).
    """
    if fraction <= 0 or len(shards) == 0:
        return np.zeros(0, dtype=np.int64)
    if fraction >= 1:
        return np.arange(len(shards))
    starts = np.flatnonzero(np.r_[True, shards[1:] != shards[:-1]])
    stops = np.r_[starts[1:], len(shards)]
    picked = []
    for a, b in zip(starts.tolist(), stops.tolist(), strict=True):
        k = max(1, math.ceil(fraction * (b - a)))
        first = a + int(rng.integers(0, b - a - k + 1))
        picked.append(np.arange(first, first + k))
    return np.concatenate(picked)


#: The sampled games' logged events as the compiled pass read them from their shards (run ->
#: game -> (the packed codes as stored, HITs unfolded; the seats' policies; the cell)).
Stored = dict[str, dict[int, tuple[np.ndarray, tuple[str, ...], int]]]


@dataclass
class Picked:
    """What `pick` chose: per run, the sampled games' columns (shard, game, cell_game, pair,
    seed), to replay once their events are at hand."""

    binding: Binding
    fraction: float
    games: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def ranges(self) -> dict[tuple[str, int], tuple[int, int]]:
        """Each sampled shard's block of game ids, as (run, shard) -> (first, last)."""
        out = {}
        for run, col in self.games.items():
            for s in np.unique(col["shard"]).tolist():
                ids = col["game"][col["shard"] == s]
                out[(run, int(s))] = (int(ids.min()), int(ids.max()))
        return out


def bind(
    con: duckdb.DuckDBPyConnection,
    manifests: dict[str, dict[str, Any]],
    replayer: Replayer | None,
    fraction: float = SAMPLE,
    rng: np.random.Generator | None = None,
) -> Binding:
    """Check every game's seed against its manifest and replay a sample (see the module doc).

    `con` has the staging views over the snapshot; `manifests` the parsed manifests by run.
    Runs without a manifest are left to assert_manifest_counts, which names them.
    """
    return replay(con, manifests, pick(con, manifests, replayer, fraction, rng), replayer)


def pick(
    con: duckdb.DuckDBPyConnection,
    manifests: dict[str, dict[str, Any]],
    replayer: Replayer | None,
    fraction: float = SAMPLE,
    rng: np.random.Generator | None = None,
) -> Picked:
    """bind's first half: every game's seed checked, and the sample to replay picked."""
    out = Binding()
    picked = Picked(out, fraction)
    rng = rng or np.random.default_rng()
    runs = [r for (r,) in con.execute("SELECT DISTINCT run FROM stg_games ORDER BY run").fetchall()]
    for run in runs:
        manifest = manifests.get(run)
        seed = manifest.get("seed") if manifest is not None else None
        check = replayer if manifest is not None and isinstance(seed, int) else None
        kept = []  # the sampled games' columns (a share of the run, not every game)
        for col in _games(con, run):
            out.games += len(col["game"])
            out.games_by_run[run] = out.games_by_run.get(run, 0) + len(col["game"])
            if check is None or not isinstance(seed, int):
                continue
            ok = _check_seeds(out, run, seed, col, check)
            chosen = sample(col["shard"], fraction, rng)
            chosen = chosen[ok[chosen]]  # a game with a wrong seed is already reported
            kept.append({k: v[chosen] for k, v in col.items()})
        if check is not None and manifest is not None and sum(len(k["game"]) for k in kept):
            picked.games[run] = {k: np.concatenate([c[k] for c in kept]) for k in kept[0]}
    return picked


def replay(
    con: duckdb.DuckDBPyConnection,
    manifests: dict[str, dict[str, Any]],
    picked: Picked,
    replayer: Replayer | None,
    stored: Stored | None = None,
) -> Binding:
    """bind's second half: the picked games re-simulated and compared with their events, read
    from `stored` where the compiled pass read them (warehouse.shardcheck.sample_games), else
    from the lake through `con`."""
    out, fraction = picked.binding, picked.fraction
    if replayer is not None:
        for run, col in picked.games.items():
            every = np.arange(len(col["game"]))
            _replay(
                out,
                con,
                run,
                manifests[run],
                col,
                every,
                whole=fraction >= 1,
                replayer=replayer,
                stored=(stored or {}).get(run, {}),
            )
    if replayer is not None and fraction <= 0:
        out.notes.append(
            f"no game re-simulated (a replay sample of 0): the seeds and labels of "
            f"{out.games:,} games are bound to their manifests only, so a run relabelled "
            "consistently in its manifest and compact tables would pass; replay a sample "
            "(--replay-sample F above 0) to bind them to the games"
        )
    if replayer is None:
        out.notes.append(
            f"seeds and labels of {out.games:,} games not bound to the games by replay: no "
            f"replayer is installed (entry point group {GROUP}; flip7's pipeline provides one)"
        )
    return out


def _games(con: duckdb.DuckDBPyConnection, run: str) -> Iterator[dict[str, np.ndarray]]:
    """The run's games (seat 0: shard, game, cell_game, pair, seed), sorted by shard and game,
    in batches of about BIND_ROWS games that never split a shard: verify's memory stays flat
    however many games the run has (DuckDB sorts within its memory limit, spilling if need be).
    Nothing else may run on `con` until the batches are all read."""
    reader = con.sql(
        "SELECT shard, game, cell_game, pair, seed FROM stg_games "
        "WHERE run = $run AND seat = 0 ORDER BY shard, game",
        params={"run": run},
    ).to_arrow_reader(BIND_ROWS)
    carry: dict[str, np.ndarray] | None = None
    for batch in reader:
        col = {
            name: np.asarray(batch.column(name).to_numpy(zero_copy_only=False), dtype=np.int64)
            for name in batch.schema.names
        }
        if carry is not None:
            col = {k: np.concatenate([carry[k], v]) for k, v in col.items()}
        cut = int(np.searchsorted(col["shard"], col["shard"][-1]))  # the last shard's first row
        carry = {k: v[cut:] for k, v in col.items()}  # it may go on in the next batch
        if cut:
            yield {k: v[:cut] for k, v in col.items()}
    if carry is not None and len(carry["game"]):
        yield carry


def _check_seeds(
    out: Binding, run: str, root: int, col: dict[str, np.ndarray], replayer: Replayer
) -> np.ndarray:
    """Record the games whose seed is not the manifest's; a mask of the good ones."""
    ok = np.zeros(len(col["game"]), dtype=bool)
    for p in np.unique(col["pair"]).tolist():
        rows = np.flatnonzero(col["pair"] == p)
        index = col["cell_game"][rows]
        if p < 0 or (index < 0).any():
            expected = np.full(len(rows), -1, dtype=np.int64)
        else:
            expected = replayer.game_seeds(root, int(p), index)
        good = col["seed"][rows] == expected
        ok[rows] = good
        out.seeds_checked += len(rows)
        for j in np.flatnonzero(~good).tolist():
            i = int(rows[j])
            out.seed_rows.append(
                {
                    "run": run,
                    "shard": int(col["shard"][i]),
                    "game": int(col["game"][i]),
                    "problem": f"seed {col['seed'][i]} in the games table; the manifest's seed "
                    f"{root} gives game {index[j]} of pair {p} the seed {expected[j]}",
                }
            )
    return ok


def _replay(
    out: Binding,
    con: duckdb.DuckDBPyConnection,
    run: str,
    manifest: dict[str, Any],
    col: dict[str, np.ndarray],
    picked: np.ndarray,
    *,
    whole: bool,
    replayer: Replayer,
    stored: dict[int, tuple[np.ndarray, tuple[str, ...], int]] | None = None,
) -> None:
    """Re-simulate the picked games of one run and record those that differ from the log
    (their events and seats from `stored` where it has them, else read through `con`)."""
    game = col["game"]
    wanted = set(game[picked].tolist())
    # A game replays under its cell's ruleset as the manifest names it (the run's, for a
    # manifest written before cells named theirs), never under the label its rows carry.
    run_ruleset = str(manifest.get("ruleset"))
    cell_rulesets = {
        c.get("cell"): str(c.get("ruleset") or run_ruleset) for c in manifest.get("cells") or []
    }
    seats: dict[int, tuple[str, ...]] = {}
    cells: dict[int, int] = {}
    logged: dict[int, np.ndarray] = {}
    for g in wanted & set(stored or {}):
        logged[g], seats[g], cells[g] = stored[g]  # type: ignore[index]
    rest = np.asarray([i for i in picked.tolist() if int(game[i]) not in logged], np.int64)
    if len(rest):
        _read_logged(con, run, col, rest, whole and not stored, seats, cells, logged)
    game_ruleset = {g: cell_rulesets.get(c, run_ruleset) for g, c in cells.items()}
    at = {int(game[i]): i for i in picked.tolist()}
    groups: dict[tuple[tuple[str, ...], str], list[int]] = {}
    for g in sorted(wanted):
        groups.setdefault((seats.get(g, ()), game_ruleset.get(g, run_ruleset)), []).append(g)
    variant = str(manifest.get("variant"))
    deck = manifest.get("deck") or None
    empty = np.zeros(0, dtype=np.int64)
    for (policies, ruleset), ids in groups.items():
        why = replayer.unreplayable(ruleset, variant, deck, policies) if policies else "no seats"
        if why is not None:
            out.notes.append(f"run {run}: {len(ids)} sampled games not replayed: {why}")
            continue
        seeds = col["seed"][[at[g] for g in ids]].astype(np.uint64)
        codes = [logged.get(g, empty) for g in ids]
        results = replayer.replay_games(ruleset, variant, deck, policies, seeds, codes)
        out.replayed += len(ids)
        out.replayed_by_run[run] = out.replayed_by_run.get(run, 0) + len(ids)
        for g, problem in zip(ids, results, strict=True):
            if problem is not None:
                out.replay_rows.append(
                    {
                        "run": run,
                        "shard": int(col["shard"][at[g]]),
                        "game": g,
                        "problem": f"replayed from its seed with seats {','.join(policies)}: "
                        f"{problem}",
                    }
                )


def _read_logged(
    con: duckdb.DuckDBPyConnection,
    run: str,
    col: dict[str, np.ndarray],
    picked: np.ndarray,
    whole: bool,
    seats: dict[int, tuple[str, ...]],
    cells: dict[int, int],
    logged: dict[int, np.ndarray],
) -> None:
    """The picked games' seats, cells and logged events read from the lake through `con`."""
    game = col["game"]
    if whole:
        where = ""
    else:  # each shard's block as a range of game ids (integers: safe to write into the SQL)
        shards = col["shard"][picked]
        ranges = []
        for s in np.unique(shards).tolist():
            ids = game[picked[shards == s]]
            ranges.append(f"game BETWEEN {int(ids.min())} AND {int(ids.max())}")
        where = f" AND ({' OR '.join(ranges)})"
    wanted = set(game[picked].tolist())
    for g, s, cell in con.execute(
        "SELECT game, list(policy ORDER BY seat), any_value(cell) FROM stg_games "
        f"WHERE run = $run{where} GROUP BY game",
        {"run": run},
    ).fetchall():
        if g in wanted:
            seats[g] = tuple(s)
            cells[g] = cell
    # The packed codes of each game as stored, one per event (HITs unfolded by event_codes), in
    # order: without the ROUND_SCOREs, which the files leave to the rounds table (verify
    # compares those with the scores it rebuilds), as the replayer compares them.
    events = con.execute(
        "SELECT game, code FROM (SELECT game, unnest(codes) AS code, "
        "generate_subscripts(codes, 1) AS i FROM (SELECT game, event_codes(codes) AS codes "
        f"FROM stg_event_games WHERE run = $run{where})) ORDER BY game, i",
        {"run": run},
    ).fetchnumpy()
    logged.update((g, c) for g, c in _split(events).items() if g in wanted)


def _split(events: dict[str, Any]) -> dict[int, np.ndarray]:
    """Event codes per game, from columns sorted by game and then in the game's order."""
    game = np.asarray(events["game"], dtype=np.int64)
    code = np.asarray(events["code"], dtype=np.int64)
    if len(game) == 0:
        return {}
    starts = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
    stops = np.r_[starts[1:], len(game)]
    return {int(game[a]): code[a:b] for a, b in zip(starts.tolist(), stops.tolist(), strict=True)}
