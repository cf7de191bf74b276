"""A run's manifest (`runs/<run>/manifest.json`): the shape every reader relies on, checked once
where a manifest is read so that no command meets a field of the wrong type later.

Two readers, two depths: the pipeline's commands (`status`, `list`, resume) refuse a manifest
unless everything they read has its type (check_manifest); the warehouse's views type fewer
fields and refuse a run only for those (view_problem), reading the others' runs as usual.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from lakecontract.layout import ROLLUPS_SINCE, SCHEMA_VERSION, TABLES

#: Fields every manifest has, with their JSON types (what `status`, `list` and resume read).
MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "run": str,
    "status": str,
    "planned_shards": int,
    "planned_games": int,
    "cells": list,
    "shards": dict,
}
#: Counts the lake holds are below 2**63 (Parquet's int64, DuckDB's BIGINT); a manifest's
#: beyond that is forged (JSON allows any size).
MAX_COUNT = (1 << 63) - 1
_CELL_COUNTS = ("cell", "players", "pair", "games", "game_offset")
_SHARD_COUNTS = ("cell", "start", "stop", "games")
_LOOK_NUMBERS = ("estimate", "half_width")


def is_count(x: object) -> bool:
    """An integer in 0..2^63-1 (not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_COUNT


def is_number(x: object) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def manifest_tables(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The tables a run of the manifest's schema version holds: runs before v6 have no rollups
    (`flip7 warehouse upgrade` computes them)."""
    version = manifest.get("schema_version")
    if is_count(version) and version < ROLLUPS_SINCE:
        return tuple(t for t in TABLES if t != "rollups")
    return TABLES


def schema_problem(manifest: dict[str, object]) -> str:
    """Why a run of another event-log schema cannot be read, and what to do: the command that
    upgrades an older run in place, or a newer flip7 for a newer run."""
    version = manifest.get("schema_version")
    run = manifest.get("run")
    head = (
        f"run {run!r} was written with event-log schema v{version} (flip7 "
        f"{manifest.get('package_version', '?')}); this flip7 reads v{SCHEMA_VERSION}: "
    )
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        return head + "read it with a flip7 as new as the one that wrote it"
    return head + f"upgrade it with `flip7 warehouse upgrade {run} [--data DIR|URI]`"


def check_manifest(manifest: object, run: str, path: str) -> None:
    """A ValueError naming `path` unless `manifest` is a JSON object of run `run`'s manifest."""
    if not isinstance(manifest, dict):
        raise ValueError(
            f"manifest {path} is not a run manifest (a JSON {type(manifest).__name__}, "
            "expected an object)"
        )
    for key, kind in MANIFEST_FIELDS.items():
        if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool):
            raise ValueError(
                f"manifest {path} is not a run manifest (field {key!r} missing or not a "
                f"{getattr(kind, '__name__', kind)})"
            )
    if manifest["run"] != run:
        raise ValueError(
            f"manifest {path} names run {manifest['run']!r}, not {run!r}: it was copied or "
            "edited; move it back under runs/<its run>/ or delete it"
        )
    problem = manifest_shape_problem(manifest)
    if problem is not None:
        raise ValueError(
            f"manifest {path} is not a run manifest ({problem}); it was edited or damaged: "
            "rerun its spec with --overwrite, or delete runs/" + run
        )


def manifest_shape_problem(manifest: dict[str, Any]) -> str | None:
    """What in a manifest (its MANIFEST_FIELDS of their types) does not have the shape the
    pipeline's commands rely on (counts, cells, shard records with their rows, sizes, seconds
    and statistics, the [stop] record), in a few words; None when all is well."""
    if not isinstance(manifest.get("created", ""), str):
        return "field 'created' is not a string"
    tables = manifest_tables(manifest)

    def recorded(key: str, info: dict[str, Any]) -> str | None:
        rows = info.get("rows")
        if not isinstance(rows, dict) or not all(is_count(rows.get(t)) for t in tables):
            return f"shards.{key}.rows is not a count per table"
        sizes = info.get("bytes", {})
        if not isinstance(sizes, dict) or not all(is_count(sizes.get(t)) for t in sizes):
            return f"shards.{key}.bytes is not a size per table"
        if not is_number(info.get("seconds")):
            return f"shards.{key}.seconds is not a number"
        for record in ("stats", "compare"):
            table = info.get(record, {})
            if not isinstance(table, dict) or not all(
                isinstance(v, list) and all(is_number(x) for x in v) for v in table.values()
            ):
                return f"shards.{key}.{record} is not a list of numbers per name"
        ahead = info.get("ahead", [])
        if not isinstance(ahead, list) or not all(
            isinstance(r, list)
            and len(r) == 8
            and all(isinstance(p, str) for p in r[:2])
            and all(is_number(x) for x in r[2:])
            for r in ahead
        ):
            return f"shards.{key}.ahead is not a list of [policy, policy, six sums] rows"
        return None

    return _body_problem(manifest, recorded)


def view_problem(run: str, manifest: object) -> str | None:
    """What makes a parsed manifest unreadable for the warehouse's views, None if nothing: the
    fields the staging views type (stg_manifests, stg_manifest_stops) must have their types,
    it must name its own run and be of the schema version they read."""
    if not isinstance(manifest, dict):
        return "the manifest is not a JSON object"
    if manifest.get("run") != run:
        return f"the manifest names run {manifest.get('run')!r}, not the run it sits in"
    if manifest.get("schema_version") != SCHEMA_VERSION:
        return schema_problem(manifest)
    for key in ("seed", "planned_shards", "planned_games"):
        if not isinstance(manifest.get(key), int) or isinstance(manifest.get(key), bool):
            return f"field {key!r} is {manifest.get(key)!r}, not an integer"
    if not isinstance(manifest.get("shards"), dict):
        return "field 'shards' is not an object"
    return _body_problem(manifest, lambda key, info: None)


def _body_problem(
    manifest: dict[str, Any], recorded: Callable[[str, dict[str, Any]], str | None]
) -> str | None:
    """The checks both readers make: the planned counts, each cell, each shard record's counts
    (then `recorded(key, info)`, the reader's own), the [stop] record."""
    for key in ("planned_shards", "planned_games"):
        if not is_count(manifest[key]):
            return f"field {key!r} is {manifest[key]!r}, not a count in 0..2^63-1"
    cells = manifest.get("cells")
    if not isinstance(cells, list):
        return "field 'cells' is not a list of cells"
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            return f"cells[{i}] is not an object"
        for key in _CELL_COUNTS:
            if not is_count(cell.get(key)):
                return f"cells[{i}].{key} is {cell.get(key)!r}, not a count"
        lineup = cell.get("lineup")
        if not isinstance(lineup, list) or not all(isinstance(s, str) for s in lineup):
            return f"cells[{i}].lineup is not a list of policy names"
    for key, info in manifest["shards"].items():
        if not (key.isascii() and key.isdigit()) or not isinstance(info, dict):
            return f"shard entry {key!r} is not a shard number with its record"
        for field_name in _SHARD_COUNTS:
            if not is_count(info.get(field_name)):
                return f"shards.{key}.{field_name} is {info.get(field_name)!r}, not a count"
        problem = recorded(key, info)
        if problem is not None:
            return problem
    stop = manifest.get("stop")
    return stop_problem(stop) if stop else None


def stop_problem(stop: object) -> str | None:
    """What is wrong with a manifest's [stop] record (see pipeline.sequential; the fields
    stg_manifest_stops types), or None."""
    if not isinstance(stop, dict):
        return "field 'stop' is not an object"
    if stop.get("test") == "ranking":
        return _ranking_problem(stop)
    compare = stop.get("compare")
    if not (
        isinstance(compare, list) and len(compare) == 2 and all(isinstance(c, str) for c in compare)
    ):
        return "stop.compare is not a pair of policy names"
    if stop.get("test") not in ("sprt", "fixed") or stop.get("metric") not in ("win", "points"):
        return "stop.test or stop.metric is not one a spec can give"
    for key in ("h0", "h1", "alpha", "beta"):
        if not is_number(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a number"
    if stop["test"] != "sprt":
        return None
    for key in ("max_games", "wave_games", "planned_games", "cell"):
        if not is_count(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a count"
    return _looks_problem(stop, _sprt_look, "games, llr and numbers")


def _sprt_look(look: object) -> bool:
    if not (isinstance(look, dict) and is_count(look.get("games")) and is_number(look.get("llr"))):
        return False
    return all(look.get(k) is None or is_number(look[k]) for k in _LOOK_NUMBERS)


def _looks_problem(stop: dict[str, Any], good: Callable[[object], bool], what: str) -> str | None:
    """A sequential [stop] record's bounds, looks (each `good`) and decision result."""
    bounds = stop.get("bounds")
    if not (isinstance(bounds, list) and len(bounds) == 2 and all(map(is_number, bounds))):
        return "stop.bounds is not a pair of numbers"
    waves = stop.get("waves") or []
    decision = stop.get("decision")
    looks = [*(waves if isinstance(waves, list) else [None]), *([decision] if decision else [])]
    if not all(good(look) for look in looks):
        return f"stop.waves or stop.decision holds a look that is not {what}"
    if isinstance(decision, dict) and not isinstance(decision.get("result"), str):
        return "stop.decision.result is not a string"
    return None


def _ranking_problem(stop: dict[str, Any]) -> str | None:
    """What is wrong with a ranking test's [stop] record (pipeline.ranking), or None."""
    for key in ("alpha", "beta", "margin", "pair_alpha", "pair_beta"):
        if not is_number(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a number"
    for key in ("wave_games", "planned_games"):
        if not is_count(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a count"
    policies = stop.get("policies")
    if not (isinstance(policies, list) and all(isinstance(p, str) for p in policies)):
        return "stop.policies is not a list of policy names"
    return _looks_problem(stop, _ranking_look, "games, open and pairs")


def _ranking_look(look: object) -> bool:
    if not (isinstance(look, dict) and is_count(look.get("games")) and is_count(look.get("open"))):
        return False
    pairs = look.get("pairs")
    return isinstance(pairs, list) and all(
        isinstance(p, dict) and is_number(p.get("llr")) and is_count(p.get("meetings"))
        for p in pairs
    )
