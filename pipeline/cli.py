"""`flip7 tournament run|status|list` and `flip7 replay`, registered through `flip7.commands`."""

from __future__ import annotations

import argparse
import sys
from argparse import SUPPRESS
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flip7 import format as fmt
from flip7.format import Column, Result, Table
from pipeline import DEFAULT_RETRIES
from pipeline.init import register_init

if TYPE_CHECKING:
    from flip7.cli import Output
    from pipeline.plan import Plan
    from pipeline.run import RunReport

# Building the parser imports no engine, Ray, pyarrow or DuckDB: each command imports what it
# uses when it runs, so `flip7 --help` and argument errors answer at once.


def run_tournament(plan: Plan, root: str, **kwargs: Any) -> RunReport:
    """pipeline.run.run_tournament, imported when a run starts."""
    from pipeline.run import run_tournament as run

    return run(plan, root, **kwargs)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from flip7.cli import (
        DeprecatedAlias,
        add_data_option,
        add_engine_option,
        add_format_option,
        add_output_options,
        add_policy_timeout_option,
    )

    p = sub.add_parser("tournament", help="run tournaments on Ray; list and inspect runs")
    tsub = p.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)

    r = tsub.add_parser("run", help="run a tournament spec (TOML) on a local Ray or a cluster")
    r.add_argument("spec", metavar="SPEC", help="the tournament spec, e.g. experiments/demo.toml")
    r.add_argument(
        "--address",
        help="join an existing Ray cluster: auto, HOST:PORT or ray://HOST:PORT "
        "(default: start a local Ray just for this run)",
    )
    add_data_option(
        r,
        "the lake to write",
        "the spec's `out`, else $FLIP7_DATA, else ./data",
        "any pyarrow filesystem URI",
    )
    # The lake was `--out` before: -o/--output is the output file in every command.
    r.add_argument("--out", dest="data", action=DeprecatedAlias, new="--data", help=SUPPRESS)
    r.add_argument("--resume", action="store_true", help="finish a run: only missing shards run")
    r.add_argument(
        "--scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply games per cell by F for a quick look (the run is then named NAME-xF)",
    )
    r.add_argument(
        "--num-cpus",
        type=int,
        metavar="N",
        help="CPUs for the local Ray (default: all); on a cluster, at most N tasks at a time",
    )
    add_engine_option(r, "the rows are the same either way")
    r.add_argument("--run", metavar="NAME", help="run name (default: the spec's name)")
    r.add_argument(
        "--overwrite", action="store_true", help="delete an existing run of this name first"
    )
    r.add_argument(
        "--retries",
        type=int,
        default=DEFAULT_RETRIES,
        metavar="N",
        help=f"retries per shard after a worker dies or an I/O error (default {DEFAULT_RETRIES})",
    )
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_policy_timeout_option(r, "stop a shard", "the spec's policy_timeout, else no limit")
    add_output_options(r)
    r.set_defaults(func=cmd_run)

    s = tsub.add_parser("status", help="one run: its plan, progress, row counts and summary")
    s.add_argument("run", metavar="RUN")
    _data_option(s)
    add_format_option(s)
    add_output_options(s, results_copy=False)
    s.set_defaults(func=cmd_status)

    ls = tsub.add_parser("list", help="the runs in the data root")
    _data_option(ls)
    add_format_option(ls)
    add_output_options(ls, results_copy=False)
    ls.set_defaults(func=cmd_list)

    rp = sub.add_parser(
        "replay", help="re-simulate a logged game from its seed and compare it event by event"
    )
    rp.add_argument("run", metavar="RUN")
    rp.add_argument("game", metavar="GAME", type=int, help="game id within the run")
    _data_option(rp)
    allow_policy_option(rp)
    add_format_option(rp)
    add_output_options(rp, results_copy=False)
    rp.set_defaults(func=cmd_replay)

    register_plan_games(sub)  # flip7 plan-games: size a comparison before running it
    register_init(sub)  # flip7 init: copy the shipped specs out for editing


def register_plan_games(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from flip7.cli import add_data_option

    p = sub.add_parser(
        "plan-games",
        help="games a fixed-size test needs for a difference and power (and an SPRT's average)",
    )
    p.add_argument(
        "spec", metavar="SPEC", nargs="?", help="take h0, h1, alpha, beta, metric from its [stop]"
    )
    p.add_argument("--difference", type=float, metavar="D", help="h1 - h0 (win: 0.01 = 1 point)")
    p.add_argument("--alpha", type=float, help="false H1 rate (default 0.05)")
    p.add_argument("--beta", type=float, help="false H0 rate; power = 1 - beta (default 0.05)")
    p.add_argument(
        "--sd",
        type=float,
        help="standard deviation of one game's difference A - B (default for win rates: 1, "
        "the largest it can be; for points take it from a run with --run)",
    )
    p.add_argument("--run", metavar="RUN", help="take the sd from this run's comparison")
    add_data_option(p, "the lake of --run")
    p.set_defaults(func=cmd_plan_games, tee=False)


def cmd_plan_games(args: argparse.Namespace, out: Output) -> int:
    from pipeline.sequential import cmd_plan_games as run

    return run(args, out)


def allow_policy_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-policy",
        action="append",
        default=[],
        metavar="MODULE:NAME",
        help="a user policy (import path) the logged game may load; built-in policies always "
        "replay, a user policy only when named here (repeatable)",
    )


def _data_option(p: argparse.ArgumentParser) -> None:
    from flip7.cli import add_data_option

    add_data_option(p)


def cmd_run(args: argparse.Namespace, out: Output) -> int:
    from pipeline.lake import Lake, default_root, normalize_root
    from pipeline.plan import make_plan
    from pipeline.sequential import describe, manifest_entry, summary_lines
    from pipeline.spec import load_spec
    from pipeline.summary import format_summary, run_summary

    spec = load_spec(args.spec)  # every spec error surfaces here, before Ray starts
    plan = make_plan(spec, run=args.run, scale=args.scale, engine=args.engine)
    timeout = args.policy_timeout if args.policy_timeout is not None else spec.policy_timeout
    root = args.data or spec.out or default_root()
    sizes = sorted({c.players for c in plan.cells})
    out.print(
        f"tournament {plan.run}: {len(plan.cells)} cells, {len(plan.shards)} shards, "
        f"{plan.games:,} games at {', '.join(map(str, sizes))} players; "
        f"{rulesets_text(spec.rulesets)}, "
        f"variant {spec.variant}, seed {spec.seed}"
        + (f", scale {args.scale:g}" if args.scale != 1.0 else "")
    )
    where = f"Ray at {args.address}" if args.address else "a local Ray"

    def announce() -> None:  # once there are shards to run: not for a run already complete
        out.print(f"writing to {normalize_root(root)} on {where}; {engine_line(plan)}")
        stop = manifest_entry(plan).get("stop")
        if stop is not None and stop["test"] != "fixed":
            out.print(describe(stop))
        if args.address and "://" not in normalize_root(root):
            out.print(
                "(a local path: every node of the cluster must see it, e.g. a shared mount; "
                "otherwise use --data s3://... or another shared filesystem URI)"
            )

    try:
        report = run_tournament(
            plan,
            root,
            address=args.address,
            num_cpus=args.num_cpus,
            resume=args.resume,
            overwrite=args.overwrite,
            retries=args.retries,
            progress=not args.no_progress,
            policy_timeout=timeout,
            announce=announce,
        )
    except KeyboardInterrupt as exc:  # Ctrl-C: what was kept and how to go on, then out
        kept = getattr(exc, "kept", None)
        if kept is not None:
            print(
                f"flip7 tournament: interrupted: {kept[0]:,} of {kept[1]:,} shards committed "
                f"and kept; finish the run with: flip7 tournament run {args.spec} --resume"
                + _resume_flags(args, plan.run),
                file=sys.stderr,
                flush=True,
            )
        raise
    if report.kernel is not None and report.kernel.compiled:
        out.print(
            f"(compiled the simulation kernel once, {report.kernel.seconds:.0f} s; later runs "
            "load it from numba's cache)"
        )
    if not report.ran and not report.failed:
        out.print(f"run {plan.run} is already complete: nothing to do (--overwrite runs it again)")
    else:
        rate = report.games / report.seconds if report.seconds else 0.0
        out.print(
            f"ran {len(report.ran)} shards ({len(report.skipped)} already done): "
            f"{report.games:,} games, {report.events:,} events in {report.seconds:.1f} s "
            f"({rate:,.0f} games/s; Ray start {report.ray_seconds:.1f} s)"
        )
    lake = Lake.open(root)
    manifest = lake.load_manifest(plan.run)
    out.print("")
    # the [stop] comparison's answer, if any (a sequential test's header was printed above)
    for line in summary_lines(lake, manifest, header=not plan.spec.stop.sequential):
        out.print(line)
    for line in format_summary(run_summary(lake, manifest)):
        out.print(line)
    if report.failed or manifest["status"] == "failed":
        if report.failed:
            first = min(report.failed)
            why = f"{len(report.failed)} shard(s); shard {first}: {report.failed[first]}"
        else:  # shards whose files were gone when the driver confirmed them at the end
            why = str(manifest.get("error"))
        out.print("")
        out.print(
            f"FAILED: {why}. Fix the cause, then: flip7 tournament run {args.spec} --resume"
            + _resume_flags(args, plan.run)
        )
        return 1
    out.print("")
    for line in next_steps(plan.run, root):
        out.print(line)
    return 0


def run_rulesets(manifest: dict[str, Any]) -> list[str]:
    """The rulesets a run's cells play, in cell order."""
    from pipeline.summary import cell_ruleset

    return list(dict.fromkeys(cell_ruleset(manifest, c) for c in manifest["cells"]))


def rulesets_text(rulesets: Sequence[str]) -> str:
    """`ruleset 3.1`, or `rulesets 3.1, immediate, legacy` for a run that compares several."""
    if len(rulesets) == 1:
        return f"ruleset {rulesets[0]}"
    return f"rulesets {', '.join(rulesets)}"


def engine_line(plan: Plan) -> str:
    """Which engine the shards use, e.g. 'engine: the compiled kernel'."""
    from pipeline.plan import cell_engines

    engines = cell_engines(plan)
    ref = {c: why for c, (engine, why) in engines.items() if engine == "reference"}
    if not ref:
        return "engine: the compiled kernel"
    first = next(iter(ref.values()))
    if len(ref) == len(engines):
        return f"engine: reference ({first})"
    cells = ", ".join(map(str, ref))
    return f"engine: the compiled kernel; reference for cells {cells} ({first})"


def _resume_flags(args: argparse.Namespace, run: str) -> str:
    flags = ""
    if args.data:
        flags += f" --data {args.data}"
    if args.scale != 1.0:
        flags += f" --scale {args.scale:g}"
    if args.run:
        flags += f" --run {run}"
    return flags


def next_steps(run: str, root: str) -> list[str]:
    """How to look at a finished run: SQL, a report, the dashboard, one game."""
    from pipeline.lake import default_root, normalize_root

    data = "" if normalize_root(root) == normalize_root(default_root()) else f" --data {root}"
    return [
        "Next:",
        f"  flip7 sql{data}    # an SQL prompt over the lake (DuckDB; .tables lists the views)",
        f'  flip7 sql{data} "SELECT policy, players, win_rate, win_rate_lo, win_rate_hi '
        f"FROM win_rates WHERE run = '{run}'\"",
        f"  flip7 report {run}{data}    # the headline analyses, with intervals",
        f"  flip7 dashboard{data}    # the dashboard (Streamlit, on 127.0.0.1)",
        f"  flip7 watch --run {run} --game 0{data}    # one logged game, card by card",
        f"  flip7 replay {run} 0{data}    # re-simulate it from its seed and compare",
    ]


def cmd_status(args: argparse.Namespace, out: Output) -> int:
    from pipeline.lake import (
        TABLE_ORDER,
        Lake,
        check_run_name,
        default_root,
        missing_text,
        run_status,
    )
    from pipeline.lease import describe as describe_lease
    from pipeline.lease import read_lease, staleness
    from pipeline.sequential import status_lines
    from pipeline.summary import (
        cell_ruleset,
        format_summary,
        run_summary,
        summary_json,
        summary_table,
    )

    check_run_name(args.run, "RUN")
    lake = Lake.open(args.data or default_root())
    m = lake.load_manifest(args.run)
    # after the manifest: a shard it records had its files committed first, so one absent
    # from this listing was removed (not still being written)
    missing = lake.missing_shards(m)
    status = run_status(m)
    shards = m["shards"]
    done_games = sum(s["games"] for s in shards.values())
    rows = {t: sum(s["rows"].get(t, 0) for s in shards.values()) for t in TABLE_ORDER}
    secs = sum(s["seconds"] for s in shards.values())
    summary = run_summary(lake, m)
    data: dict[str, Any] = {
        "command": "tournament status",
        "run": m["run"],
        "status": status,
        "created": m.get("created"),
        "updated": m.get("updated"),
        "ruleset": m["ruleset"],
        "rulesets": run_rulesets(m),
        "variant": m["variant"],
        "seed": m["seed"],
        "schema_version": m["schema_version"],
        "rules_version": m["rules_version"],
        "package_version": m["package_version"],
        "shards": {"done": len(shards), "planned": m["planned_shards"]},
        "games": {"done": done_games, "planned": m["planned_games"]},
        "rows": rows,
        "task_seconds": secs,
        "error": m.get("error"),
        "missing_shards": {str(k): why for k, why in sorted(missing.items())},
        "cells": [
            {
                **{k: c[k] for k in ("cell", "players", "pair", "games", "game_offset", "lineup")},
                "ruleset": cell_ruleset(m, c),
            }
            for c in m["cells"]
        ],
        "summary": summary_json(summary),
    }
    result = Result(data)
    result.line(
        f"run {m['run']}: {status}; created {m.get('created', '?')}, "
        f"updated {m.get('updated', '?')}"
    )
    result.line(
        f"  {rulesets_text(run_rulesets(m))}, variant {m['variant']}, seed {m['seed']}; schema "
        f"v{m['schema_version']}, rules v{m['rules_version']}, package {m['package_version']}"
    )
    result.line(
        f"  shards {len(shards)}/{m['planned_shards']}, games {done_games:,}/{m['planned_games']:,}; "
        f"rows stored: events {rows['events']:,}, rounds {rows['rounds']:,}, rollups "
        f"{rows['rollups']:,}, games {rows['games']:,}; "
        f"{secs:,.1f} task-seconds"
    )
    if m.get("error") and m["error"] != status:  # not "interrupted; ... error: interrupted"
        result.line(f"  error: {m['error']}")
    if missing:
        gone = sum(shards[str(k)]["games"] for k in missing)
        result.line(
            f"  MISSING: {len(missing)} recorded shard(s) have lost their files ({gone:,} "
            f"games): {missing_text(missing)}; re-run them with: flip7 tournament run "
            f"{lake.run_dir(m['run'])}/spec.toml --resume --data {lake.uri}{_spec_flags(m)}"
        )
    if status == "running" and m.get("driver"):
        d = m["driver"]
        result.line(f"  driver: pid {d.get('pid')} on {d.get('host')}, since {d.get('started')}")
    lease = read_lease(lake, m["run"])
    if lease is not None:  # the driver holding the run now (pipeline.lease)
        stale = staleness(lease)
        result.line(
            f"  lease: {describe_lease(lease)}; " + (f"stale: {stale}" if stale else "live")
        )
        result.data["lease"] = {
            **{k: v for k, v in lease.items() if k != "token"},
            "stale": stale,
        }
    if m["status"] != "complete":
        spec = f"{lake.run_dir(m['run'])}/spec.toml"
        result.line(
            "  (if no driver is running any more, finish it with: "
            f"flip7 tournament run {spec} --resume --data {lake.uri}{_spec_flags(m)})"
        )
    result.line("  cells:")
    several = len(run_rulesets(m)) > 1  # then each cell's ruleset in a column of its own
    cells = Table(
        [
            Column("cell"),
            Column("players"),
            *([Column("ruleset", right=False)] if several else []),
            Column("pair"),
            Column("games", fmt.count),
            Column("from id", fmt.count, key="game_offset"),
            Column("line-up", right=False, key="lineup"),
        ],
        [
            [
                c["cell"],
                c["players"],
                *([cell_ruleset(m, c)] if several else []),
                c["pair"],
                c["games"],
                c["game_offset"],
                ",".join(c["lineup"]),
            ]
            for c in m["cells"]
        ],
        title="cells",
    )
    cells.text = lambda colour: fmt.table_lines(cells, colour, indent=4)
    result.table(cells)
    for line in status_lines(lake, m):  # the [stop] comparison or test, if any
        result.line(line)
    result.line("")
    if summary:
        table = summary_table(summary)
        table.text = lambda colour: format_summary(summary, colour)
        result.table(table)
    else:
        result.line(format_summary(summary)[0])
    out.emit(result, args.format)
    return 0


def _spec_flags(m: dict[str, Any]) -> str:
    """The --run and --scale flags that name this run again from its saved spec."""
    flags = f" --run {m['run']}" if m["run"] != m.get("name", m["run"]) else ""
    if m.get("scale", 1.0) != 1.0:
        flags += f" --scale {m['scale']:g}"
    return flags


def cmd_list(args: argparse.Namespace, out: Output) -> int:
    from pipeline.lake import Lake, default_root, run_status

    lake = Lake.open(args.data or default_root())
    runs = lake.runs()
    result = Result({"command": "tournament list", "root": lake.uri, "runs": []})
    if not runs:
        result.line(f"no runs under {lake.uri}")
        out.emit(result, args.format)
        return 0
    result.line(f"runs under {lake.uri}:")
    rows: list[list[Any]] = []
    for name in runs:
        try:
            m: dict[str, Any] = lake.load_manifest(name)
        except ValueError as exc:
            rows.append([name, f"unreadable: {exc}", None, None, None])
            result.data["runs"].append({"run": name, "status": "unreadable", "error": str(exc)})
            continue
        done = sum(s["games"] for s in m["shards"].values())
        shards = (len(m["shards"]), m["planned_shards"])
        rows.append([name, run_status(m), shards, (done, m["planned_games"]), m.get("created")])
        result.data["runs"].append(
            {
                "run": name,
                "status": run_status(m),
                "shards": shards[0],
                "planned_shards": shards[1],
                "games": done,
                "planned_games": m["planned_games"],
                "created": m.get("created"),
            }
        )
    table = Table(
        [
            Column("run", right=False),
            Column("status", right=False),
            Column("shards", _done_of, split=_done_of_fields),
            Column("games", _done_of, split=_done_of_fields),
            Column("created", right=False),
        ],
        rows,
        title="runs",
    )
    result.table(table)
    out.emit(result, args.format)
    return 0


def _done_of(pair: tuple[int, int]) -> str:
    return f"{pair[0]:,}/{pair[1]:,}"


def _done_of_fields(name: str, pair: tuple[int, int] | None) -> dict[str, int | None]:
    done, planned = pair if pair is not None else (None, None)
    return {name: done, f"planned_{name}": planned}


def cmd_replay(args: argparse.Namespace, out: Output) -> int:
    from flip7.cli.games import event_records, events_table
    from flip7.events import EventLog
    from pipeline.lake import check_run_name
    from pipeline.replay import compare, describe_event, load_logged_game, resimulate

    check_run_name(args.run, "RUN")
    game = load_logged_game(args.run, args.game, args.data)
    replayed = resimulate(game, allow=args.allow_policy)
    result = compare(game["events"], replayed)
    names = [f"P{s}:{spec}" for s, spec in enumerate(game["policies"])]
    vengeance = str(game["variant"]).startswith("vengeance")
    records = event_records(EventLog(game["events"]), names, vengeance)
    data: dict[str, Any] = {
        "command": "replay",
        "run": args.run,
        "game": args.game,
        "shard": game["shard"],
        "lineup": list(game["policies"]),
        "ruleset": game["ruleset"],
        "variant": game["variant"],
        "seed": game["seed"],
        "matches": result.equal,
        "logged": result.logged,
        "replayed": result.replayed,
        "first_difference": result.first_difference,
        "events": records,
    }
    head = (
        f"run {args.run}, game {args.game} (shard {game['shard']}, seed {game['seed']}, "
        f"ruleset {game['ruleset']}, seats {', '.join(game['policies'])})"
    )
    report = Result(data)
    if result.equal:
        report.line(f"{head}: replay matches the log, all {result.logged} events")
    else:
        i = result.first_difference
        assert i is not None
        report.line(f"{head}: replay DIFFERS from the log at event {i}")
        report.line(f"  logged:   {describe_event(game['events'], i, names, vengeance)}")
        report.line(f"  replayed: {describe_event(replayed, i, names, vengeance)}")
        report.line(f"  ({result.logged} events logged, {result.replayed} replayed)")
    # the logged events: csv rows and a markdown table; the table format shows the comparison
    table = events_table(records, [])
    report.table(table)
    out.emit(report, args.format)
    return 0 if result.equal else 1
