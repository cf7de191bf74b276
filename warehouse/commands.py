"""What `flip7 sql`, `flip7 report RUN` and `flip7 warehouse verify [RUN]` do (their parsers
are in warehouse/cli.py, which imports this module only when one of them runs).

`sql` is read-only unless `--write` is given: only SELECT-like statements (SELECT, DESCRIBE,
SHOW, SUMMARIZE, EXPLAIN, PRAGMA, CALL, SET) run, so a query can never write over the lake.
DuckDB errors become one line (`flip7 sql: error: Parser Error: ...`), as do a missing run or
lake (the flip7 CLI prints ValueError and FileNotFoundError that way, exit status 2).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path
from typing import Protocol

import duckdb
import pandas as pd

from warehouse.db import connect
from warehouse.report import report
from warehouse.text import frame
from warehouse.verify import Verification, verify

READ_ONLY = {
    duckdb.StatementType.SELECT,
    duckdb.StatementType.EXPLAIN,
    duckdb.StatementType.PRAGMA,
    duckdb.StatementType.CALL,
    duckdb.StatementType.SET,
}
PROMPT_HELP = (
    "End a statement with ';'. .tables lists the relations, .schema NAME shows columns, "
    ".quit leaves."
)


class Out(Protocol):
    def print(self, text: str = "") -> None: ...


def one_line(exc: BaseException) -> str:
    """A DuckDB error as one line: its first line plus any 'Did you mean' hint."""
    lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
    hint = [s for s in lines[1:] if s.startswith("Did you mean")]
    return " ".join(lines[:1] + hint)


# -- sql ----------------------------------------------------------------------------------------


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """ValueError if any statement of sql could change something."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    for st in statements:
        if st.type not in READ_ONLY:
            kind = st.type.name.replace("_", " ")
            raise ValueError(
                f"{kind} statements are not allowed: flip7 sql is read-only "
                f"(SELECT, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN); pass --write to allow them"
            )


def execute(con: duckdb.DuckDBPyConnection, sql: str, write: bool) -> pd.DataFrame | None:
    """Run sql (every statement); the last statement's result, None if it returns no rows."""
    if not write:
        check_read_only(con, sql)
    try:
        cur = con.execute(sql)
        if cur.description is None:
            return None
        return cur.df()
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None


def emit(df: pd.DataFrame, fmt: str, output: str | None, out: Out, max_rows: int) -> None:
    """Print or write a result in the chosen format."""
    if fmt == "parquet":
        if not output:
            raise ValueError("--format parquet needs -o FILE (Parquet is binary)")
        df.to_parquet(output, index=False)
        return
    if fmt == "csv":
        text = df.to_csv(index=False)
    elif fmt == "json":
        buf = io.StringIO()
        df.to_json(buf, orient="records", date_format="iso", force_ascii=False)
        text = buf.getvalue() + "\n"
    else:
        text = "\n".join(frame(df, None if output else max_rows)) + "\n"
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def run_sql(args: argparse.Namespace, out: Out) -> int:
    con = connect(args.data, args.run)
    if args.query is not None:
        df = execute(con, args.query, args.write)
        if df is not None:
            emit(df, args.format, args.output, out, args.max_rows)
        return 0
    if not sys.stdin.isatty():
        text = sys.stdin.read()
        if not text.strip():
            raise ValueError(
                "no query: give one as an argument, pipe statements in, or run it in a terminal "
                "for a prompt"
            )
        df = execute(con, text, args.write)
        if df is not None:
            emit(df, args.format, args.output, out, args.max_rows)
        return 0
    return prompt(con, args, out)


def prompt(con: duckdb.DuckDBPyConnection, args: argparse.Namespace, out: Out) -> int:
    """An interactive SQL prompt: statements end with ';'; errors print and the prompt goes on."""
    try:
        import readline  # noqa: F401  (line editing and history for input())
    except ImportError:
        pass
    out.print(f"flip7 sql over {args.data or 'the default lake'}. {PROMPT_HELP}")
    buffer: list[str] = []
    while True:
        try:
            line = input("flip7> " if not buffer else "  ...> ")
        except EOFError:
            out.print()
            return 0
        except KeyboardInterrupt:
            out.print()
            buffer.clear()
            continue
        stripped = line.strip()
        if not buffer and stripped.startswith("."):
            if stripped in (".quit", ".exit", ".q"):
                return 0
            sql = _meta(stripped)
            if sql is None:
                out.print(PROMPT_HELP)
                continue
        else:
            buffer.append(line)
            if not stripped.endswith(";"):
                continue
            sql = "\n".join(buffer)
            buffer.clear()
        try:
            t0 = time.perf_counter()
            df = execute(con, sql, args.write)
            if df is not None:
                for text in frame(df, args.max_rows):
                    out.print(text)
            out.print(f"({time.perf_counter() - t0:.2f} s)")
        except ValueError as exc:
            out.print(f"error: {exc}")


def _meta(command: str) -> str | None:
    """The SQL behind a dot command, None for help."""
    name, _, arg = command.partition(" ")
    if name == ".tables":
        return (
            "SELECT table_name AS name, lower(table_type) AS kind FROM information_schema.tables "
            "WHERE table_schema = 'main' ORDER BY name"
        )
    if name == ".schema" and arg.strip().isidentifier():
        return f"DESCRIBE {arg.strip()}"
    return None


# -- report and verify ----------------------------------------------------------------------


def run_report(args: argparse.Namespace, out: Out) -> int:
    t0 = time.perf_counter()
    con = connect(args.data, [args.run])
    try:
        lines = report(con, args.run)
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    for line in lines:
        out.print(line)
    out.print(f"\n(report computed in {time.perf_counter() - t0:.1f} s)")
    return 0


def describe(v: Verification) -> list[str]:
    """A verification as lines: what was checked, then each check with its verdict."""
    rate = v.events / v.seconds / 1e6 if v.seconds else 0.0
    lines = [
        f"verify {', '.join(v.runs) or '(no runs)'} under {v.root}: {v.shards} shards, "
        f"{v.events:,} events in {v.seconds:.1f} s ({rate:.1f}M events/s, {v.workers} workers)"
    ]
    for c in v.checks:
        if not c.failed:
            lines.append(f"  ok    {c.name}: {c.about}")
            continue
        lines.append(f"  FAIL  {c.name}: {c.failed} failing row(s); {c.about}")
        for row in c.examples:
            where = " ".join(f"{k}={v}" for k, v in row.items() if k != "problem" and v is not None)
            lines.append(f"          {where}: {row.get('problem')}")
        if c.failed > len(c.examples):
            lines.append(f"          ... and {c.failed - len(c.examples)} more")
    lines.append(
        "all checks passed" if v.ok else f"{sum(1 for c in v.checks if c.failed)} check(s) failed"
    )
    return lines


def run_verify(args: argparse.Namespace, out: Out) -> int:
    try:
        result = verify(args.data, args.run, workers=args.workers)
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    for line in describe(result):
        out.print(line)
    return 0 if result.ok else 1
