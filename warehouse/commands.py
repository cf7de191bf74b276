"""What `flip7 sql`, `flip7 report RUN`, `flip7 compare RUN_A RUN_B` and `flip7 warehouse verify
[RUN]` do (their parsers are in warehouse/cli.py, which imports this module only when one of
them runs).

`sql --tables`, `--describe NAME` and `--schema-doc` (and `.tables`, `.schema NAME` at the
prompt or on a pipe) print the descriptions kept beside the SQL (warehouse.schema); `compare`
is warehouse.compare.

`sql` is read-only unless `--write` is given. The guarantee is DuckDB's own sandbox (see
warehouse.db: DuckDB opens no file, settings are locked), so no statement can write a file or
read one outside the lake; the statement-type check below only gives plain COPY/CREATE/INSERT a
clearer message. `--memory-limit` caps a query's memory (read-only, a query over it fails: it
does not spill, see warehouse.db; with `--write` it spills into a private temporary directory)
and `--timeout` interrupts it. DuckDB errors become one line (`flip7 sql: error: Parser Error: ...`), as do a missing run or lake (the
flip7 CLI prints ValueError and FileNotFoundError that way, exit status 2).
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Protocol

import duckdb
import pandas as pd

from flip7.format import markdown_lines, printable, terminal_width
from warehouse import schema
from warehouse.db import (
    MEMORY_LIMIT_ENV,
    SPILL_DIR_ENV,
    SPILL_LIMIT_ENV,
    THREADS_ENV,
    connect,
    problems,
)
from warehouse.lake import data_root, is_uri
from warehouse.report import report_result
from warehouse.text import csv_text, frame, human
from warehouse.verify import Verification, verify

READ_ONLY = {
    duckdb.StatementType.SELECT,
    duckdb.StatementType.EXPLAIN,
    duckdb.StatementType.PRAGMA,
    duckdb.StatementType.CALL,
    duckdb.StatementType.SET,
}
PROMPT_HELP = (
    "End a statement with ';'. .tables lists the marts (and the other relations), .schema NAME "
    "shows a relation's columns and what they mean, .quit leaves."
)


class Out(Protocol):
    def print(self, text: str = "") -> None: ...


def _shown_root(data: str | None) -> str:
    """The lake as the prompt names it: a URI as given, a local path made absolute."""
    root = data_root(data)
    return root if is_uri(root) else os.path.abspath(root)


def one_line(exc: BaseException) -> str:
    """A DuckDB error as one line: its first line plus DuckDB's hints ('Did you mean ...',
    'Candidate bindings: ...'); the sandbox's refusals say what was refused and how to allow it."""
    lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
    hint = [s for s in lines[1:] if s.startswith(("Did you mean", "Candidate bindings"))]
    # a failure raised in Python while DuckDB read the lake (a stored file that does not
    # decode names itself): its message, without the traceback DuckDB announces after it
    first = _PYTHON_DETAIL.sub("", lines[0]) if lines else ""
    text = " ".join([first, *hint])
    return sandbox_message(text) or text


_PYTHON_DETAIL = re.compile(r"\s*Detail: Python exception: Traceback \(most recent call last\):$")


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


def memory_message(exc: duckdb.OutOfMemoryException, spills: bool | None = None) -> str:
    """DuckDB's out-of-memory error as one line: which limit was reached (the memory limit, or
    the spill directory's size limit) and how to raise it. `spills` is whether the connection
    could spill (flip7 sql: only with --write); None for the commands without --memory-limit."""
    first = str(exc).splitlines()[0]
    if "max_temp_directory_size" in str(exc):
        return (
            f"query needs more disk to spill to than its limit ({first}); narrow it, or raise "
            f"${SPILL_LIMIT_ENV} (e.g. {SPILL_LIMIT_ENV}=100GB; ${SPILL_DIR_ENV} for another disk)"
        )
    if spills is None:
        return (
            f"query needs more memory than its limit ({first}); raise ${MEMORY_LIMIT_ENV} "
            f"(e.g. {MEMORY_LIMIT_ENV}=8GB) or lower ${THREADS_ENV} (each thread needs its own)"
        )
    how = "" if spills else ", or pass --write to let it spill to a private temporary directory"
    return (
        f"query needs more memory than its limit ({first}); narrow it or raise --memory-limit "
        f"(e.g. --memory-limit 80%){how}"
    )


# -- sql ----------------------------------------------------------------------------------------


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """ValueError if any statement of sql could change something."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    for st in statements:
        kind = _refused_kind(con, st)
        if kind is not None:
            raise ValueError(
                f"{kind} statements are not allowed: flip7 sql is read-only "
                f"(SELECT, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN of those); pass --write to allow them"
            )


#: `EXPLAIN [ANALYZE] [(options)]` before the statement it explains (comments allowed first).
_EXPLAIN = re.compile(
    r"\A(?:\s|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*EXPLAIN\b\s*(?:ANALY[SZ]E\b\s*)?(?:\([^()]*\)\s*)?",
    re.IGNORECASE | re.DOTALL,
)


def _refused_kind(
    con: duckdb.DuckDBPyConnection, st: duckdb.Statement, depth: int = 0
) -> str | None:
    """The kind of statement `st` is, in words, when it is not read-only; None when it is. An
    EXPLAIN is what it explains: EXPLAIN ANALYZE runs it."""
    if st.type not in READ_ONLY:
        return st.type.name.replace("_", " ")
    if st.type != duckdb.StatementType.EXPLAIN:
        return None
    head = _EXPLAIN.match(st.query)
    if head is None or depth > 8:
        return "EXPLAIN (of a statement flip7 cannot tell apart)"
    try:
        inner = con.extract_statements(st.query[head.end() :])
    except duckdb.Error:
        return "EXPLAIN (of a statement flip7 cannot parse)"
    if len(inner) != 1:
        return "EXPLAIN (of a statement flip7 cannot tell apart)"
    if inner[0].type == duckdb.StatementType.COPY:
        return None  # every COPY reaches a file: DuckDB's sandbox refuses it, naming the file
    kind = _refused_kind(con, inner[0], depth + 1)
    return None if kind is None else f"EXPLAIN of {kind}"


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
        raise ValueError(memory_message(exc, write)) from None
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    finally:
        if timer is not None:
            timer.cancel()


def emit(
    df: pd.DataFrame,
    fmt: str,
    output: str | None,
    out: Out,
    max_rows: int,
    wide: bool = False,
    kinds: dict[str, str] | None = None,
    drops: dict[str, int] | None = None,
) -> None:
    """Print or write a result in the chosen format: the table (and markdown) format for
    people, as `report` prints figures (warehouse.text.human), fitted to the terminal unless
    `wide` or written to a file; csv (list columns JSON-encoded), json and parquet carry the
    values themselves."""
    if fmt == "parquet":
        if not output:
            raise ValueError("--format parquet needs -o FILE (Parquet is binary)")
        df.to_parquet(output, index=False)
        return
    if fmt == "csv":
        text = csv_text(df)
    elif fmt == "json":
        buf = io.StringIO()
        df.to_json(buf, orient="records", date_format="iso", force_ascii=False)
        text = buf.getvalue() + "\n"
    elif fmt == "markdown":
        text = "\n".join(markdown_lines(human(df, kinds, drops))) + "\n"
    else:
        width = None if output else terminal_width(sys.stdout, wide)
        text = "\n".join(frame(df, None if output else max_rows, width, kinds, drops)) + "\n"
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def run_sql(args: argparse.Namespace, out: Out) -> int:
    # The user's SQL: read-only, no spill directory (DuckDB would let SQL read and write in it).
    con = connect(
        args.data,
        args.run,
        read_only=not args.write,
        memory_limit=args.memory_limit or None,
        spill=args.write,
    )
    note = "; ".join(problems(con))
    if args.tables or args.describe or args.schema_doc:
        if args.query is not None:
            raise ValueError(
                "--tables, --describe and --schema-doc take no query: run the query on its own"
            )
        if args.schema_doc:
            sys.stdout.write(schema.markdown(con))
        for line in schema.tables(con) if args.tables else []:
            out.print(line)
        for line in schema.describe(con, args.describe) if args.describe else []:
            out.print(line)
        return 0
    if args.query is not None:
        df = execute(con, args.query, args.write, args.timeout)
        if df is not None:
            emit(df, args.format, args.output, out, args.max_rows, args.wide)
        if note:  # one line, after the result it qualifies (an error prints only the error)
            print(f"flip7 sql: note: {printable(note)}", file=sys.stderr)
        return 0
    if not sys.stdin.isatty():
        text = sys.stdin.read()
        if not text.strip():
            raise ValueError(
                "no query: give one as an argument, pipe statements in, or run it in a terminal "
                "for a prompt"
            )
        for chunk in script(text):
            if chunk in (".quit", ".exit", ".q"):
                break
            if chunk.startswith("."):
                for line in dot(con, chunk):
                    out.print(line)
                continue
            df = execute(con, chunk, args.write, args.timeout)
            if df is not None:
                emit(df, args.format, args.output, out, args.max_rows, args.wide)
        if note:
            print(f"flip7 sql: note: {printable(note)}", file=sys.stderr)
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
    runs = [r for (r,) in con.execute("SELECT run FROM runs ORDER BY run").fetchall()]
    out.print(
        f"flip7 sql over the lake at {_shown_root(args.data)} (runs: "
        f"{', '.join(runs) or 'none'}; {'--write' if args.write else 'read-only'}). {PROMPT_HELP}"
    )
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
            try:
                for text in dot(con, stripped):
                    out.print(text)
            except ValueError as exc:
                out.print(f"error: {exc}")
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
                width = terminal_width(sys.stdout, args.wide)
                for text in frame(df, args.max_rows, width):
                    out.print(text)
            out.print(f"({time.perf_counter() - t0:.2f} s)")
        except ValueError as exc:
            out.print(f"error: {exc}")


def dot(con: duckdb.DuckDBPyConnection, command: str) -> list[str]:
    """What a dot command prints: `.tables`, `.schema NAME` (`.describe NAME`), else the help.
    ValueError for a relation that does not exist."""
    name, _, arg = command.strip().partition(" ")
    if name == ".tables":
        return schema.tables(con)
    if name in (".schema", ".describe") and arg.strip():
        return schema.describe(con, arg.strip())
    if name in (".schema", ".describe"):
        return schema.tables(con)
    return [PROMPT_HELP]


def script(text: str) -> list[str]:
    """Piped input in order: each dot command (a line starting with '.' between statements) on
    its own, and the SQL between them as one chunk (run whole, its last result shown)."""
    chunks: list[str] = []
    sql: list[str] = []
    for line in text.splitlines():
        pending = "\n".join(sql).strip()
        if line.strip().startswith(".") and (not pending or pending.endswith(";")):
            chunks += [pending] if pending else []
            chunks.append(line.strip())
            sql.clear()
        else:
            sql.append(line)
    if "\n".join(sql).strip():
        chunks.append("\n".join(sql))
    return chunks


def run_compare(args: argparse.Namespace, out: Out) -> int:
    from warehouse.compare import compare, notes

    con = connect(args.data, [args.run_a, args.run_b])
    df = compare(con, args.run_a, args.run_b, args.figure)
    # the difference of two rates is in percentage points; of points per round, signed points
    kinds = {"diff": "pp" if args.figure == "win_rate" else "signed"}
    if args.figure == "points_per_round":
        kinds |= {"points_per_round_a": "points", "points_per_round_b": "points"}
    # in a narrow terminal the figures and their difference stay; what names the cell goes first
    drops = {"seating": 5, "variant": 4, "ruleset": 3, "games_a": 2, "games_b": 2}
    emit(df, args.format, args.output, out, len(df), args.wide, kinds, drops)
    for note in notes(con, args.run_a, args.run_b) + problems(con):
        print(f"flip7 compare: note: {printable(note)}", file=sys.stderr)
    return 0


# -- report and verify ----------------------------------------------------------------------


def run_report(args: argparse.Namespace, out: Out) -> int:
    t0 = time.perf_counter()
    con = connect(args.data, [args.run], card_counting=True)
    try:
        notes = problems(con, [args.run])
        result = report_result(con, args.run)
    except duckdb.OutOfMemoryException as exc:
        raise ValueError(memory_message(exc)) from None
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    fmt = getattr(args, "format", "table")
    result.data["notes"] = notes
    out.emit(result, fmt)
    # Notes go to stderr, as every command's do: stdout (and -o, and the results copy) holds the
    # report alone.
    for line in notes:
        print(f"flip7 report: note: {printable(line)}", file=sys.stderr)
    print(f"(report computed in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
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
        if not c.ran:
            lines.append(f"  skip  {c.name}: {c.about} (no game was replayed)")
            continue
        if not c.failed:
            lines.append(f"  ok    {c.name}: {c.about}")
            continue
        lines.append(f"  FAIL  {c.name}: {c.failed} failing row(s); {c.about}")
        for row in c.examples:
            where = " ".join(f"{k}={v}" for k, v in row.items() if k != "problem" and v is not None)
            lines.append(f"          {where}: {row.get('problem')}")
        if c.failed > len(c.examples):
            lines.append(f"          ... and {c.failed - len(c.examples)} more")
    bare = v.without_replay()
    if not v.ok:
        lines.append(f"{sum(1 for c in v.checks if c.failed)} check(s) failed")
    elif bare:
        lines.append(
            f"checks passed WITHOUT REPLAY for run {', '.join(bare)}: no game was re-simulated, "
            "so its labels and seeds are bound to its manifest only (recorded as verified "
            "without replay)"
        )
    else:
        lines.append("all checks passed")
    return lines


def run_upgrade(args: argparse.Namespace, out: Out) -> int:
    from warehouse.upgrade import upgrade

    done = upgrade(args.data, args.run)
    if done.rewritten == 0 and done.old_version == done.new_version:
        out.print(f"run {done.run} is already in event-log schema v{done.new_version}")
        return 0
    out.print(
        f"run {done.run}: event-log schema v{done.old_version} -> v{done.new_version}, "
        f"{done.rewritten} files rewritten, {done.kept} already new; check it with "
        f"`flip7 warehouse verify {done.run}`"
    )
    return 0


def run_verify(args: argparse.Namespace, out: Out) -> int:
    try:
        result = verify(
            args.data,
            args.run,
            keep_record=True,
            workers=args.workers,
            replay=1.0 if args.replay_all else args.replay_sample,
        )
    except duckdb.OutOfMemoryException as exc:
        raise ValueError(memory_message(exc)) from None
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    for line in describe(result):
        out.print(line)
    return 0 if result.ok else 1


# -- ratings --------------------------------------------------------------------------------


def run_ratings(args: argparse.Namespace, out: Out) -> int:
    from warehouse.rating_queries import ratings

    con = connect(args.data, [args.run])
    try:
        df = ratings(con, args.run, args.players)
    except duckdb.OutOfMemoryException as exc:
        raise ValueError(memory_message(exc)) from None
    except duckdb.Error as exc:
        raise ValueError(one_line(exc)) from None
    if df.empty:
        at = f" at {args.players} players" if args.players else ""
        raise ValueError(f"run {args.run!r} has no games{at} to rate")
    if df["ruleset"].nunique() == 1:
        df = df.drop(columns=["ruleset"])
    emit(
        df.drop(columns=["players", "games_factor", "next_policy"]),
        args.format,
        args.output,
        out,
        len(df),
    )
    steps = df.dropna(subset=["above_next"])
    print(
        f"flip7 ratings: {int(steps['above_next'].sum())} of {len(steps)} places are separated "
        "from the next (95% interval of the step above 0)",
        file=sys.stderr,
    )
    open_steps = steps[~steps["above_next"].astype(bool)].dropna(subset=["games_factor"])
    if len(open_steps):
        hard = open_steps.loc[open_steps["games_factor"].idxmax()]
        print(
            f"flip7 ratings: the closest step ({hard['policy']} over {hard['next_policy']}) "
            f"would take about {hard['games_factor']:,.0f} times the games to resolve "
            "(80% power, were it as estimated)",
            file=sys.stderr,
        )
    for note in problems(con, [args.run]):
        print(f"flip7 ratings: note: {printable(note)}", file=sys.stderr)
    return 0
