"""What the warehouse's relations and columns mean, kept beside their SQL.

Each layer folder under warehouse/sql/ has a `schema.toml`: `[relations.NAME] description`
(one line) and, for the marts, `[relations.NAME.columns]`, with `[shared]` for the columns that
mean the same in every mart (run, variant, ruleset, players, lineup, policy, ...). `build.py`
applies them as DuckDB comments (`COMMENT ON VIEW|TABLE|COLUMN`) while it builds, before the
read-only sandbox locks the configuration, so DuckDB's own `duckdb_views()`,
`duckdb_tables()` and `duckdb_columns()` show them. `tables()` and `describe()` are what
`flip7 sql --tables` / `.tables` and `flip7 sql --describe NAME` / `.schema NAME` print;
`markdown()` is docs/schema.md (`flip7 sql --schema-doc > docs/schema.md`), which a test keeps
equal to what this module generates.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import duckdb

SQL_DIR = Path(__file__).with_name("sql")
LAYERS = ("staging", "intermediate", "marts")
#: What `.tables` says of each layer, after the marts.
LAYER_ABOUT = {
    "marts": "marts: query these first",
    "staging": "staging: the lake's files, typed",
    "intermediate": "intermediate: what the marts and verify build on",
}
DOC_COMMAND = "flip7 sql --schema-doc > docs/schema.md"


@cache
def descriptions(layer: str) -> dict[str, object]:
    """The parsed `schema.toml` of one layer ({} when it has none)."""
    path = SQL_DIR / layer / "schema.toml"
    if not path.exists():
        return {}
    with path.open("rb") as f:
        return tomllib.load(f)


def relations(layer: str) -> dict[str, dict[str, object]]:
    """`{relation: {"description": ..., "columns": {...}}}` of one layer."""
    found = descriptions(layer).get("relations", {})
    assert isinstance(found, dict)
    return found


def layer_of(name: str) -> str | None:
    """The layer whose folder holds `name`'s SQL file, None for other relations."""
    for layer in LAYERS:
        if (SQL_DIR / layer / f"{name}.sql").exists():
            return layer
    return None


def column_text(layer: str, relation: str, column: str) -> str | None:
    """The description of one column: the relation's own, else the layer's shared one."""
    own = relations(layer).get(relation, {}).get("columns", {})
    assert isinstance(own, dict)
    shared = descriptions(layer).get("shared", {})
    assert isinstance(shared, dict)
    text = own.get(column, shared.get(column))
    return None if text is None else str(text)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _kinds(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """`{relation: 'VIEW' | 'TABLE'}` of the main schema."""
    rows = con.execute(
        "SELECT view_name, 'VIEW' FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
        "UNION ALL SELECT table_name, 'TABLE' FROM duckdb_tables() WHERE schema_name = 'main'"
    ).fetchall()
    return {str(name): str(kind) for name, kind in rows}


def apply(con: duckdb.DuckDBPyConnection, layers: tuple[str, ...]) -> None:
    """Comment every relation of `layers` that exists, and every column that has a description.

    A relation a damaged lake kept from being created is skipped (build says why elsewhere)."""
    kinds = _kinds(con)
    named: dict[str, list[str]] = {}
    for table, column in con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main' "
        "ORDER BY table_name, column_index"
    ).fetchall():
        named.setdefault(str(table), []).append(str(column))
    statements = []
    for layer in layers:
        for name, about in relations(layer).items():
            if name not in kinds:
                continue
            statements.append(
                f"COMMENT ON {kinds[name]} {name} IS {_literal(str(about['description']))}"
            )
            for column in named.get(name, []):
                text = column_text(layer, name, column)
                if text is not None:
                    statements.append(f'COMMENT ON COLUMN {name}."{column}" IS {_literal(text)}')
    if statements:
        con.execute(";\n".join(statements))


def _comments(con: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    rows = con.execute(
        "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
        "UNION ALL SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'main' "
        "ORDER BY 1"
    ).fetchall()
    return {str(name): comment for name, comment in rows}


def tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The relations as lines: each mart with its one-line description, then the other layers'
    names, then what belongs to no layer."""
    comments = _comments(con)
    by_layer: dict[str | None, list[str]] = {}
    for name in comments:
        by_layer.setdefault(layer_of(name), []).append(name)
    marts = by_layer.get("marts", [])
    width = max((len(n) for n in marts), default=0)
    lines = [f"{LAYER_ABOUT['marts']} (.schema NAME shows one's columns)"]
    lines += [f"  {n.ljust(width)}  {comments[n] or ''}".rstrip() for n in marts]
    for layer in ("staging", "intermediate"):
        if by_layer.get(layer):
            lines += ["", f"{LAYER_ABOUT[layer]}:", "  " + ", ".join(by_layer[layer])]
    if by_layer.get(None):
        lines += ["", "other:", "  " + ", ".join(by_layer[None])]
    return lines


def columns(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[str, str, str]]:
    """(column, type, description) of one relation, in order; ValueError naming the relations
    there are when it does not exist."""
    comments = _comments(con)
    if name not in comments:
        marts = [n for n in comments if layer_of(n) == "marts"]
        raise ValueError(
            f"no relation named {name!r}: the marts are {', '.join(marts)} "
            "(`flip7 sql --tables` lists every relation)"
        )
    rows = con.execute(
        "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE schema_name = 'main' "
        "AND table_name = ? ORDER BY column_index",
        [name],
    ).fetchall()
    return [(str(c), str(t), str(d or "")) for c, t, d in rows]


def describe(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    """A relation's description, then its columns with type and description, as lines."""
    cols = columns(con, name)
    about = _comments(con)[name]
    header = f"{name}: {about}" if about else name
    wn = max(len("column"), *(len(c) for c, _, _ in cols))
    wt = max(len("type"), *(len(t) for _, t, _ in cols))
    lines = [header, "", f"{'column'.ljust(wn)}  {'type'.ljust(wt)}  description"]
    lines.append(f"{'-' * wn}  {'-' * wt}  {'-' * len('description')}")
    lines += [f"{c.ljust(wn)}  {t.ljust(wt)}  {d}".rstrip() for c, t, d in cols]
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(con: duckdb.DuckDBPyConnection) -> str:
    """docs/schema.md: every mart, then the other layers' relations, with their descriptions."""
    comments = _comments(con)
    out = [
        "# The warehouse's marts and columns",
        "",
        f"Generated by `{DOC_COMMAND}` (over any lake) from the descriptions",
        "kept beside the SQL (`warehouse/sql/<layer>/schema.toml`); edit those, not this page.",
        "The same text is in DuckDB's catalog (`duckdb_views()`, `duckdb_columns()`), at the",
        "`flip7 sql` prompt (`.tables`, `.schema NAME`) and in `flip7 sql --tables` /",
        "`--describe NAME`. The figures and their 95% intervals follow the statistics contract",
        "in docs/warehouse.md.",
        "",
        "## Marts",
    ]
    for name in (n for n in comments if layer_of(n) == "marts"):
        out += ["", f"### `{name}`", "", str(comments[name] or ""), ""]
        out += ["| column | type | description |", "|---|---|---|"]
        out += [f"| `{c}` | {t} | {_cell(d)} |" for c, t, d in columns(con, name)]
    for layer in ("staging", "intermediate"):
        out += ["", f"## {layer.capitalize()}", "", "| relation | description |", "|---|---|"]
        out += [f"| `{n}` | {comments[n] or ''} |" for n in comments if layer_of(n) == layer]
    return "\n".join(out) + "\n"
