"""What `flip7 sql`, `flip7 report RUN` and `flip7 warehouse verify [RUN]` do (their parsers
are in warehouse/cli.py, which imports this module only when one of them runs).

`sql` is read-only unless `--write` is given. The guarantee is DuckDB's own sandbox (see
warehouse.db: DuckDB opens no file, settings are locked), so no statement can write a file or
read one outside the lake; the statement-type check below only gives plain COPY/CREATE/INSERT a
clearer message. `--memory-limit` caps a query's memory and `--timeout` interrupts it. DuckDB
errors become one line (`flip7 sql: error: Parser Error: ...`), as do a missing run or lake (the
flip7 CLI prints ValueError and FileNotFoundError that way, exit status 2).
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import threading
import time
from pathlib import Path
from typing import Protocol

import duckdb
import pandas as pd

from warehouse.db import connect, problems
from warehouse.report import report_result
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
    """A DuckDB error as one line: its first line plus any 'Did you mean' hint; the sandbox's
    refusals say what was refused and how to allow it."""
    lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
    hint = [s for s in lines[1:] if s.startswith("Did you mean")]
    text = " ".join(lines[:1] + hint)
    return sandbox_message(text) or text


_REFUSED_FILE = re.compile(r'Cannot access (?:file|directory) "([^"]*)"')
_REFUSED_SETTING = re.compile(r'Cannot change configuration option "([^"]*)"')


def sandbox_message(text: str) -> str | None:
    """The one-line account of a refusal by the read-only sandbox, None for other errors."""
    m = _REFUSED_FILE.search(text)
    if m:
        return (
            f"flip7 sql is read-only: DuckDB may not open {m.group(1)!r} (no file outside the "
            "lake is read and none is written); pass --write to let it"
        )
    m = _REFUSED_SETTING.search(text)
    if m:
        return (
            f"flip7 sql is read-only: setting {m.group(1)!r} is locked; pass --write to change "
            "settings"
        )
    if "Loading external extensions is disabled" in text or "autoload" in text.lower():
        return "flip7 sql is read-only: DuckDB extensions do not load; pass --write to load one"
    return None


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


def execute(
    con: duckdb.DuckDBPyConnection, sql: str, write: bool, timeout: float | None = None
) -> pd.DataFrame | None:
    """Run sql (every statement); the last statement's result, None if it returns no rows.

    With `timeout` (seconds), a timer interrupts DuckDB when it runs longer (ValueError).
    """
    if not write:
        check_read_only(con, sql)
    timer = threading.Timer(timeout, con.interrupt) if timeout else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        cur = con.execute(sql)
        if cur.description is None:
            return None
        return cur.df()
    except duckdb.InterruptException:
        raise ValueError(
            f"query stopped after --timeout {timeout:g} s; narrow it (a WHERE on run, players "
            "or shard reads fewer files) or give it more time with --timeout"
        ) from None
    except duckdb.OutOfMemoryException as exc:
        raise ValueError(
            f"query needs more memory than its limit ({str(exc).splitlines()[0]}); narrow it "
            "or raise --memory-limit (e.g. --memory-limit 80%)"
        ) from None
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    finally:
        if timer is not None:
            timer.cancel()


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
    con = connect(
        args.data, args.run, read_only=not args.write, memory_limit=args.memory_limit or None
    )
    note = "; ".join(problems(con))
    if args.query is not None:
        df = execute(con, args.query, args.write, args.timeout)
        if df is not None:
            emit(df, args.format, args.output, out, args.max_rows)
        if note:  # one line, after the result it qualifies (an error prints only the error)
            print(f"flip7 sql: note: {note}", file=sys.stderr)
        return 0
    if not sys.stdin.isatty():
        text = sys.stdin.read()
        if not text.strip():
            raise ValueError(
                "no query: give one as an argument, pipe statements in, or run it in a terminal "
                "for a prompt"
            )
        df = execute(con, text, args.write, args.timeout)
        if df is not None:
            emit(df, args.format, args.output, out, args.max_rows)
        if note:
            print(f"flip7 sql: note: {note}", file=sys.stderr)
        return 0
    if note:
        out.print(f"note: {note}")
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
            df = execute(con, sql, args.write, args.timeout)
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
        notes = problems(con, [args.run])
        result = report_result(con, args.run)
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    fmt = getattr(args, "format", "table")
    result.data["notes"] = notes
    result.blocks[:0] = [f"NOTE {line}" for line in notes]
    result.line("")
    result.line(f"(report computed in {time.perf_counter() - t0:.1f} s)")
    out.emit(result, fmt)
    return 0


def describe(v: Verification) -> list[str]:
    """A verification as lines: what was checked, then each check with its verdict."""
    rate = v.events / v.seconds / 1e6 if v.seconds else 0.0
    lines = [
        f"verify {', '.join(v.runs) or '(no runs)'} under {v.root}: {v.shards} shards, "
        f"{v.events:,} events in {v.seconds:.1f} s ({rate:.1f}M events/s, {v.workers} workers)"
    ]
    if v.replayed:
        lines.append(
            f"  replayed {v.replayed:,} of {v.games:,} games ({v.replayed / v.games:.1%}) from "
            "their seeds and seats, event for event"
        )
    for note in v.notes:
        lines.append(f"  NOTE  {note}")
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
        result = verify(
            args.data,
            args.run,
            keep_record=True,
            workers=args.workers,
            replay=1.0 if args.replay_all else args.replay_sample,
        )
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    for line in describe(result):
        out.print(line)
    return 0 if result.ok else 1
