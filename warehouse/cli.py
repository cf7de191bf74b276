"""The warehouse's subcommands of `flip7`: `sql`, `report`, `warehouse verify`.

Only the parsers live here; DuckDB, pandas and the implementation (warehouse/commands.py) load
when a command runs, so `flip7 --help` and the other commands start fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from flip7.cli import (
    add_data_option,
    add_format_option,
    add_output_option,
    add_output_options,
    add_wide_option,
)

#: flip7.format's formats (every table command's), and parquet: one result, one table.
FORMATS = ("table", "csv", "json", "markdown", "parquet")
FORMAT_HELP = "table for people; csv, json (for scripts), markdown, or parquet (with -o FILE)"


def _lazy(name: str) -> Callable[[argparse.Namespace, Any], int]:
    def run(args: argparse.Namespace, out: Any) -> int:
        from warehouse import commands

        result: int = getattr(commands, name)(args, out)
        return result

    return run


run_sql, run_report, run_verify = _lazy("run_sql"), _lazy("run_report"), _lazy("run_verify")
run_compare, run_upgrade = _lazy("run_compare"), _lazy("run_upgrade")
run_ratings = _lazy("run_ratings")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--timeout takes seconds > 0, e.g. 30 (got {text!r})")
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(
            f"--replay-sample takes a share from 0 to 1, e.g. 0.01 (got {text!r})"
        )
    return value


def _add_data(parser: argparse.ArgumentParser) -> None:
    add_data_option(parser, "the lake to read", "$FLIP7_DATA, else ./data, where tournaments write")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add sql, report and warehouse to the flip7 command."""
    p = sub.add_parser(
        "sql",
        help="run SQL against the warehouse views (read-only)",
        description="Run SQL against the lake's views and marts (stg_events, stg_rounds, "
        "stg_games, fct_game_results, win_rates, ...; `.tables` at the prompt lists them). "
        "With no query, an interactive prompt (or the statements piped on stdin).",
    )
    p.add_argument("query", nargs="?", help="the SQL to run; omit it for a prompt")
    _add_data(p)
    p.add_argument(
        "--run", action="append", metavar="RUN", help="only this run (repeat for several)"
    )
    p.add_argument("--format", choices=FORMATS, default="table", help=FORMAT_HELP)
    add_output_option(p)  # written by warehouse.commands.emit (parquet too)
    add_wide_option(p)
    p.add_argument("--max-rows", type=int, default=200, help="rows shown in table format")
    p.add_argument(
        "--write",
        action="store_true",
        help="lift the read-only sandbox: statements that change things (COPY, CREATE), and "
        "files outside the lake (read_csv, ATTACH, COPY ... TO) as your user may",
    )
    p.add_argument(
        "--memory-limit",
        metavar="SIZE",
        default=None,
        help="DuckDB's memory limit, a size (4GB) or a share of the machine (default: "
        "$FLIP7_MEMORY_LIMIT, else 50%%); a query needing more fails (with --write: spills "
        "into a private temporary directory)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        default=None,
        help="interrupt a statement that runs longer than this (default: no limit)",
    )
    about = p.add_mutually_exclusive_group()
    about.add_argument(
        "--tables",
        action="store_true",
        help="list the marts to query, each with what it holds, then the other relations",
    )
    about.add_argument(
        "--describe",
        metavar="NAME",
        help="a relation's columns: type and what each means (as `.schema NAME` at the prompt)",
    )
    about.add_argument(
        "--schema-doc",
        action="store_true",
        help="print docs/schema.md: every mart and column with its description, in Markdown",
    )
    p.set_defaults(func=run_sql, tee=False)

    c = sub.add_parser(
        "compare",
        help="two runs side by side, cell by cell, with the difference and its interval",
        description="Each cell (variant, ruleset, field size, line-up label and seating: its "
        "policies in seat order) and policy played in both runs: each run's figure and games, "
        "and the difference A - B with its 95% interval (the runs are independent: the "
        "variances add; see docs/warehouse.md). A cell played in one run only shows NULL on the "
        "other side; a label that seats different line-ups in the two runs is two cells, and a "
        "note names it.",
    )
    c.add_argument("run_a", metavar="RUN_A")
    c.add_argument("run_b", metavar="RUN_B")
    _add_data(c)
    c.add_argument(
        "--figure",
        choices=("win_rate", "points_per_round"),
        default="win_rate",
        help="what to compare (default: win_rate)",
    )
    c.add_argument("--format", choices=FORMATS, default="table", help=FORMAT_HELP)
    add_output_option(c)
    add_wide_option(c)
    c.set_defaults(func=run_compare, tee=False, max_rows=None)

    r = sub.add_parser(
        "report",
        help="headline tables of a run: field size, card counting, policy comparison",
        description="The headline analyses of one run, each number with its 95% interval and "
        "sample size.",
    )
    r.add_argument("run", metavar="RUN", help="the run to report on (see `flip7 sql 'from runs'`)")
    _add_data(r)
    add_format_option(r)
    add_output_options(r)
    r.set_defaults(func=run_report)

    _register_ratings(sub)

    w = sub.add_parser("warehouse", help="check the lake (verify) or upgrade an older run")
    ws = w.add_subparsers(dest="warehouse_command", metavar="COMMAND", required=True)
    v = ws.add_parser(
        "verify",
        help="rebuild results from events and check them against the compact tables",
        description="Round and game results rebuilt from the events alone must equal the compact "
        "tables; manifest counts must equal the Parquet row counts; every game must be whole; "
        "every game's seats and seed must be the ones its manifest gives, and a sample of games "
        "re-simulated from them must equal the log. Exit status 1 and an account of what "
        "disagrees otherwise. A pass is recorded beside each manifest (runs/RUN/verified.json); "
        "sql, report and the dashboard warn about runs not verified as they are now.",
    )
    v.add_argument("run", nargs="?", help="only this run (default: every run)")
    _add_data(v)
    v.add_argument("--workers", type=int, default=None, help="threads (default: one per core)")
    replay = v.add_mutually_exclusive_group()
    replay.add_argument(
        "--replay-sample",
        type=_share,
        metavar="F",
        default=0.01,
        help="share of each shard's games to re-simulate from their seeds and compare event "
        "by event with the log (default 0.01, at least one game per shard; 0 for none)",
    )
    replay.add_argument(
        "--replay-all", action="store_true", help="re-simulate every game (slow on big lakes)"
    )
    v.set_defaults(func=run_verify, tee=False)
    u = ws.add_parser(
        "upgrade",
        help="rewrite a run written by an older flip7 in this flip7's event-log schema",
        description="Rewrite a run's shard files in place in the event-log schema this flip7 "
        "reads (each file under a temporary name, then renamed over the old one), then record "
        "the new schema version in its manifest. Readers refuse the run until then; an "
        "interrupted upgrade can be run again. Run `flip7 warehouse verify RUN` after it.",
    )
    u.add_argument("run", metavar="RUN", help="the run to upgrade")
    _add_data(u)
    u.set_defaults(func=run_upgrade, tee=False)


def _register_ratings(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    g = sub.add_parser(
        "ratings",
        help="every policy of a run on one scale: Plackett-Luce ratings with 95%% intervals",
        description="Plackett-Luce ratings fitted to every game's final ranking (ties share a "
        "rank): rating(A) - rating(B) is the log-odds that A finishes ahead of B at a table "
        "where both sit; ev is 0 when it played. Intervals are 95%, clustered by game "
        "(sandwich variance). Pooled over every field size unless --players. Same rows as "
        '`flip7 sql "FROM ratings"` (docs/warehouse.md).',
    )
    g.add_argument("run", metavar="RUN", help="the run to rate (see `flip7 sql 'from runs'`)")
    _add_data(g)
    g.add_argument(
        "--players", type=int, metavar="N", default=None, help="only the games of N seats"
    )
    g.add_argument("--format", choices=FORMATS, default="table", help="output format")
    add_output_option(g)
    g.set_defaults(func=run_ratings, tee=False, max_rows=None)
