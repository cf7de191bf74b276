"""Build the warehouse in a DuckDB connection: macros, then staging, intermediate and marts.

Each `sql/<layer>/<name>.sql` holds one relation, created as `CREATE OR REPLACE VIEW|TABLE
<name> AS <file>` (macros files hold `CREATE MACRO` statements and run as they are). Staging
reads the committed files of a `lake.Snapshot` through constant macros (`events_files()`,
`rounds_files()`, `rollups_files()`, `games_files()`, `all_files()`, `manifests()`) defined here; they replace a
`{{ data_root }}` template because the commit-marker rule needs an explicit file list. Marts are
views unless `materialize` is set, then tables, except files marked `-- materialized: view`.
Within a layer, relations are created after the relations their SQL names (a tiny topological
sort), so file names never encode order.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb

from warehouse import ratings, schema
from warehouse.lake import SCHEMA_VERSION, TABLES, Snapshot, schema_problem
from warehouse.twins import Fold, TwinMoments

SQL_DIR = Path(__file__).with_name("sql")
LAYERS = ("staging", "intermediate", "marts")


def sql_files(layer: str) -> dict[str, str]:
    """`{relation name: SQL text}` of one folder under sql/."""
    return {p.stem: p.read_text() for p in sorted((SQL_DIR / layer).glob("*.sql"))}


def is_view_only(sql: str) -> bool:
    """True for files marked `-- materialized: view` (too big to copy into memory)."""
    return re.search(r"^--\s*materialized:\s*view\s*$", sql, re.M) is not None


def scope(sql: str) -> str:
    """The `-- scope: shard|lake|marts` of a data test (what it needs to run)."""
    m = re.search(r"^--\s*scope:\s*(\w+)\s*$", sql, re.M)
    return m.group(1) if m else "marts"


def reads(sql: str) -> set[str]:
    """The relations (or other names) a SQL text reads: `from x` / `join x`, comments aside."""
    return set(re.findall(r"\b(?:from|join)\s+(\w+)", re.sub(r"--[^\n]*", "", sql), re.I))


def ordered(files: dict[str, str]) -> list[str]:
    """Names in creation order: each after the relations it reads (`from x` / `join x`)."""
    reads_of = {name: reads(sql) & set(files) for name, sql in files.items()}
    done: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in path:
            raise ValueError(f"SQL relations read each other in a cycle: {' -> '.join(path)}")
        for other in sorted(reads_of[name] - {name}):
            visit(other, (*path, name))
        done.append(name)

    for name in files:
        visit(name, ())
    return done


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def bind_files(
    con: duckdb.DuckDBPyConnection, snap: Snapshot, first_only: bool = False
) -> set[str]:
    """Point the staging views at a snapshot's files.

    The file lists and the manifests' text become constant macros (`events_files()`,
    `rounds_files()`, `games_files()`, `all_files()`, `manifests()`): catalog objects, so every
    cursor of the connection sees them, and views read them at each query, so redefining them
    re-points the views (verify does, shard by shard). Returns the tables with no file at all:
    their staging views cannot be created (DuckDB needs a file to type them), which happens only
    on a damaged lake (see `Snapshot.missing`). With `first_only` (a warehouse that reads the
    files through pyarrow, whose lake macros read only a list's first path to name its table),
    each list holds its first path alone: 80,000 paths at 20,000 shards cost 200 MB as SQL.
    """
    files = {t: snap.files(t) for t in TABLES}
    files_all = [p for paths in files.values() for p in paths]
    lists = [*((f"{t}_files", p) for t, p in files.items()), ("all_files", files_all)]
    for name, paths in lists:
        paths = paths[:1] if first_only else paths
        items = ", ".join(_literal(p) for p in paths)
        con.execute(f"CREATE OR REPLACE MACRO {name}() AS [{items}]::VARCHAR[]")
    manifests = []
    for run, path in snap.manifests.items():
        try:
            manifests.append(json.loads(snap.read_text(path)))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"manifest of run {run!r} at {path} is not valid JSON ({exc})"
            ) from None
    for m in manifests:
        _check_schema(m)
    con.execute(f"CREATE OR REPLACE MACRO manifests() AS {_literal(json.dumps(manifests))}")
    return {t for t, paths in files.items() if not paths}


def _check_schema(manifest: dict[str, object]) -> None:
    """Refuse a run written with another Parquet schema than the views read, saying what to do."""
    if manifest.get("schema_version") == SCHEMA_VERSION:
        return
    raise ValueError(schema_problem(manifest) + ", or choose other runs (--run)")


def build(
    con: duckdb.DuckDBPyConnection,
    snap: Snapshot,
    *,
    materialize: bool = False,
    layers: tuple[str, ...] = LAYERS,
    lake_table: str | None = None,
    pinned: frozenset[str] = frozenset(),
    fold: Fold | None = None,
) -> None:
    """Create every relation of `layers` over the snapshot (marts as tables if materialize).

    `lake_table` replaces the macro of that name after the macros files ran (every reader
    reads the lake through pyarrow: `warehouse.db.attach`; without it DuckDB reads the files
    itself and the events and rounds come as stored, not as the views read them); relations named in `pinned` are
    tables whatever their layer; `fold` is the card-counting products' share of the rollups'
    pass (see warehouse.twins.Fold), if the lake's reader made one. Raises ValueError when a table has no file at all (a damaged
    lake) and a relation needs it.
    """
    empty = bind_files(con, snap, first_only=lake_table is not None)
    # the card-counting mart's per-game products, computed on the first query that reads them
    con.register("lake_twin_moments", TwinMoments(snap, fold))
    for path in sorted((SQL_DIR / "macros").glob("*.sql")):
        con.execute(path.read_text())
    if lake_table is not None:
        con.execute(lake_table)
    ratings.register(con)  # the Plackett-Luce fit the `ratings` mart calls
    skipped: set[str] = set()
    for layer in layers:
        files = sql_files(layer)
        for name in ordered(files):
            sql = files[name]
            if layer == "staging" and (
                any(f"{t}_files()" in sql for t in empty) or reads(sql) & skipped
            ):
                # no file to type it by (stg_events also reads stg_rounds); what reads it in
                # a later layer fails below, by name
                skipped.add(name)
                continue
            table = name in pinned or (materialize and layer == "marts" and not is_view_only(sql))
            try:
                con.execute(f"CREATE OR REPLACE {'TABLE' if table else 'VIEW'} {name} AS\n{sql}")
            except duckdb.CatalogException as exc:
                if not empty:
                    raise
                raise ValueError(
                    f"cannot create {name}: the lake has no {' or '.join(sorted(empty))} file "
                    f"for its committed shards ({str(exc).splitlines()[0]}); run "
                    f"`flip7 warehouse verify` for an account"
                ) from None
    schema.apply(con, layers)  # descriptions as DuckDB comments (warehouse/schema.py)
