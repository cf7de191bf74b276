"""Where the lake is, and which of its files a reader may see (a snapshot of committed shards).

The data root is `--data DIR`, else `$FLIP7_DATA`, else `./data` (the lake contract). A shard is
visible only once its `games` file exists: the pipeline renames events first, rounds second and
games last, so listing the games files first and then looking up their siblings gives a set of
whole shards even while a tournament writes. Temporary files (`shard-00012.parquet.tmp-<x>`)
never match the shard file name, so they are never read. A snapshot is what every query of one
connection sees; reconnect to see shards committed later.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

TABLES = ("events", "rounds", "games")
#: The version of the pipeline's Parquet schema (pipeline.schema.SCHEMA_VERSION) these views
#: read; a run whose manifest names another is refused by name (tests keep the two equal).
SCHEMA_VERSION = 3
SHARD_FILE = re.compile(r"^shard-(\d+)\.parquet$")


class EmptyLakeError(FileNotFoundError):
    """The data root holds no committed shard (or none of the runs asked for)."""


def data_root(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The lake root: the argument, else $FLIP7_DATA, else ./data."""
    if data_dir is not None:
        return Path(data_dir)
    return Path(os.environ.get("FLIP7_DATA") or "data")


@dataclass(frozen=True)
class Shard:
    """One committed shard: its run, field size, number and the three file paths."""

    run: str
    players: int
    shard: int
    files: dict[str, Path]


@dataclass
class Snapshot:
    """The committed shards of the runs asked for, plus the run manifests found."""

    root: Path
    shards: list[Shard] = field(default_factory=list)
    manifests: dict[str, Path] = field(default_factory=dict)
    #: Events/rounds files missing beside a committed games file (a damaged lake).
    missing: list[Path] = field(default_factory=list)

    @property
    def runs(self) -> list[str]:
        """Every run with a manifest or a committed shard, sorted."""
        return sorted({s.run for s in self.shards} | set(self.manifests))

    def files(self, table: str) -> list[str]:
        """Paths of `table` for every committed shard (absent files left out)."""
        return [str(s.files[table]) for s in self.shards if s.files[table].exists()]


def _partitions(table_dir: Path, key: str) -> list[tuple[str, Path]]:
    if not table_dir.is_dir():
        return []
    out = []
    for entry in sorted(os.scandir(table_dir), key=lambda e: e.name):
        if entry.is_dir() and entry.name.startswith(f"{key}="):
            out.append((entry.name[len(key) + 1 :], Path(entry.path)))
    return out


def snapshot(root: Path, runs: list[str] | None = None) -> Snapshot:
    """List the committed shards (and manifests) under root, optionally for some runs only.

    Raises EmptyLakeError when a run asked for does not exist, naming the runs that do.
    """
    snap = Snapshot(root)
    wanted = set(runs) if runs else None
    runs_dir = root / "runs"
    if runs_dir.is_dir():
        for entry in sorted(os.scandir(runs_dir), key=lambda e: e.name):
            manifest = Path(entry.path) / "manifest.json"
            if (wanted is None or entry.name in wanted) and manifest.is_file():
                snap.manifests[entry.name] = manifest
    for run, run_dir in _partitions(root / "games", "run"):
        if wanted is not None and run not in wanted:
            continue
        for players, part in _partitions(run_dir, "players"):
            if not players.isdigit():
                continue
            for entry in sorted(os.scandir(part), key=lambda e: e.name):
                m = SHARD_FILE.match(entry.name)
                if not m:
                    continue  # a temporary file of a shard being written, or a stranger
                rel = Path(f"run={run}") / f"players={players}" / entry.name
                files = {t: root / t / rel for t in TABLES}
                snap.shards.append(Shard(run, int(players), int(m.group(1)), files))
                snap.missing += [p for t, p in files.items() if t != "games" and not p.exists()]
    if wanted is not None:
        unknown = sorted(wanted - set(snap.runs))
        if unknown:
            known = ", ".join(snapshot(root).runs) or "none"
            raise EmptyLakeError(
                f"no run {', '.join(map(repr, unknown))} under {root} (runs there: {known})"
            )
    return snap


def _manifest_problem(run: str, manifest: object) -> str | None:
    """What makes a parsed manifest unreadable for the views, None if nothing: the fields the
    staging views type (stg_manifests) must have their types, and it must name its own run."""
    if not isinstance(manifest, dict):
        return "the manifest is not a JSON object"
    if manifest.get("run") != run:
        return f"the manifest names run {manifest.get('run')!r}, not the run it sits in"
    if manifest.get("schema_version") != SCHEMA_VERSION:
        return (
            f"written with event-log schema v{manifest.get('schema_version')} (flip7 "
            f"{manifest.get('package_version', '?')}); this flip7 reads v{SCHEMA_VERSION}: run "
            "its tournament again with this flip7"
        )
    ints = ("seed", "planned_shards", "planned_games")
    for key in ints:
        if not isinstance(manifest.get(key), int) or isinstance(manifest.get(key), bool):
            return f"field {key!r} is {manifest.get(key)!r}, not an integer"
    cells = manifest.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return "field 'cells' is not a list of cells"
    for c in cells:
        for key in ("cell", "players", "pair", "games", "game_offset"):
            if not isinstance(c.get(key), int) or isinstance(c.get(key), bool):
                return f"a cell's {key!r} is {c.get(key)!r}, not an integer"
        lineup = c.get("lineup")
        if not isinstance(lineup, list) or not all(isinstance(s, str) for s in lineup):
            return f"cell {c.get('cell')}'s line-up is not a list of policy names"
    shards = manifest.get("shards")
    if not isinstance(shards, dict):
        return "field 'shards' is not an object"
    for key, info in shards.items():
        if not key.isdigit() or not isinstance(info, dict):
            return f"shard entry {key!r} is not a shard number with its record"
        for field_name in ("cell", "start", "stop", "games"):
            if not isinstance(info.get(field_name), int) or isinstance(info.get(field_name), bool):
                return f"shard {key}'s {field_name!r} is {info.get(field_name)!r}, not an integer"
    return None


def screen(snap: Snapshot) -> tuple[Snapshot, dict[str, str]]:
    """The snapshot without the runs whose manifest cannot be read, and why each was left out
    ({run: one line}): one bad manifest must not stop queries on every other run."""
    problems: dict[str, str] = {}
    for run, path in snap.manifests.items():
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems[run] = f"manifest {path} is not readable JSON ({exc})"
            continue
        problem = _manifest_problem(run, manifest)
        if problem is not None:
            problems[run] = f"manifest {path}: {problem}"
    if not problems:
        return snap, {}
    kept = Snapshot(
        snap.root,
        [s for s in snap.shards if s.run not in problems],
        {r: p for r, p in snap.manifests.items() if r not in problems},
        [p for p in snap.missing if not any(f"/run={r}/" in str(p) for r in problems)],
    )
    return kept, problems
