"""The solver's subcommands: solve (and solve --all), advice, odds."""

from __future__ import annotations

import argparse
import io
import textwrap
import time
from typing import Any

from flip7.cli import Output


def _model_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default="basic",
        help="basic (default: Murch's 88-card model, the saved duplicate stays in the deck), "
        "real (the saved duplicate is discarded), full (all 94 cards; Freeze and Flip Three "
        "played on yourself)",
    )


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from flip7.cli import add_format_option, add_output_options

    p = sub.add_parser("solve", help="the exact optimal solo round; --all: every policy family")
    _model_option(p)
    p.add_argument(
        "--all",
        action="store_true",
        help="also value every policy family exactly (sum:N, count:N, bust:P, dup:P, ev)",
    )
    p.add_argument("--rebuild-cache", action="store_true", help="rewrite the cached policy table")
    add_format_option(p)
    p.add_argument(
        "--cache-dir",
        help="where the policy table lives (default: $FLIP7_CACHE, else ~/.cache/flip7)",
    )
    p.add_argument(
        "--race",
        action="store_true",
        help="the solo race instead: the policy with the fewest expected rounds to reach "
        "--target (each round from a fresh deck), against dp, ev and the best sum:N, bust:P",
    )
    p.add_argument("--target", type=int, default=200, help="the race's target score (default 200)")
    p.add_argument(
        "--within",
        type=int,
        metavar="K",
        help="with --race: also the policy with the best chance to reach the target in at "
        "most K rounds",
    )
    add_output_options(p)
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("advice", help="the optimal policy as a bust-risk rule a person can use")
    _model_option(p)
    add_format_option(p)
    add_output_options(p)
    p.set_defaults(func=cmd_advice)

    p = sub.add_parser("odds", help="an odds reference for the table (exact, under a model)")
    _model_option(p)
    p.add_argument(
        "--hand",
        help="also the odds of one hand, e.g. '3 8 11 +4' (sc: holding a Second Chance)",
    )
    add_format_option(p)
    add_output_options(p)
    p.set_defaults(func=cmd_odds)


def _header(out: Output, model_name: str) -> tuple[object, float]:
    """Print the model's assumptions; return (model, seconds to load the kernels)."""
    from flip7.solver.model import get_model
    from flip7.solver.solve import kernels, warm_up

    model = get_model(model_name)
    for line in textwrap.wrap(model.assumptions(), 100):
        out.print(line)
    from flip7.format import waiting

    t0 = time.perf_counter()
    from flip7.kernel.load import announce, module_cold

    compiled = kernels()  # imports numba
    if module_cold(compiled):
        announce("solver", compiled.__file__)
    with waiting("loading the solver's compiled code (numba compiles it the first time) ..."):
        warm_up()  # loads the compiled kernels from numba's cache (compiles them the first time)
    return model, time.perf_counter() - t0


def cmd_solve(args: argparse.Namespace, out: Output) -> int:
    if args.race or args.within is not None:
        return cmd_race(args, out)
    import numpy as np

    from flip7 import format as fmt
    from flip7.solver.cache import dense_bits, read_table, table_path, write_table
    from flip7.solver.families import LEGEND, policy_rows
    from flip7.solver.model import get_model
    from flip7.solver.solve import carry_policy, evaluate, reachable, solve

    start = time.perf_counter()
    head = Output(io.StringIO())
    model, load = _header(head, args.model)
    solution = solve(model)  # type: ignore[arg-type]
    m = solution.moments
    result = fmt.Result(
        {
            "command": "solve",
            "model": solution.model.name,
            "assumptions": model.assumptions(),  # type: ignore[attr-defined]
            "optimal": _moments(m),
        },
        list(head.lines),
    )
    result.line(
        f"optimal solo round: EV {m.ev:.3f}  sd {m.sd:.2f}  bust {m.bust:.1%}  Flip 7 {m.flip7:.2%}"
    )
    headline = fmt.Table(  # csv and markdown; the table format says it in the line above
        [
            fmt.Column("model", right=False),
            fmt.Column("EV", lambda x: f"{x:.3f}", key="ev"),
            fmt.Column("sd", fmt.points),
            fmt.Column("bust", fmt.rate),
            fmt.Column("flip7", lambda x: fmt.rate(x, 2)),
        ],
        [[solution.model.name, m.ev, m.sd, m.bust, m.flip7]],
        title="optimal solo round",
        text=lambda colour: [],
    )
    result.table(headline)
    t0 = time.perf_counter()
    reach = reachable(solution.space)
    t_reach = time.perf_counter() - t0
    result.data["reachable"] = {
        "decision_states": reach.decision,
        "table_slots": reach.slots,
        "with_flip_three_chance_nodes": reach.total,
    }
    extra = (
        f"; {reach.total:,} with the chance nodes inside a Flip Three"
        if reach.total != reach.decision
        else ""
    )
    result.line(
        f"reachable states: {reach.decision / 1e6:.2f}M ({reach.decision:,} decision states of "
        f"{reach.slots:,} table slots{extra})"
    )
    path = table_path(solution.model, args.cache_dir)
    status = "rebuilt" if args.rebuild_cache else "written"
    if path.exists() and not args.rebuild_cache:
        try:
            cached = read_table(path).as_array()
            same = np.array_equal(cached, dense_bits(solution.space, solution.hit))
            status = "up to date" if same else "rewritten: the cached one differed"
        except ValueError:
            status = "rewritten: the cached one was unreadable"
    if status != "up to date":
        write_table(path, solution.space, solution.hit, {"ev": m.ev})
    size = path.stat().st_size
    result.data["policy_table"] = {"path": str(path), "bytes": size, "status": status}
    result.line(f"policy table: {path} ({size:,} bytes, {status})")
    if solution.model.name != "basic":
        base = solve(get_model("basic"))
        carried = evaluate(solution.space, carry_policy(base, solution.space))
        result.data["basic_table_here"] = _moments(carried)
        result.line(
            f"Murch's optimal table (model basic) played under these rules: EV "
            f"{carried.ev:.3f} (this model's optimum: {m.ev - carried.ev:+.4f} more)"
        )
    result.line(
        f"time: solve {solution.seconds:.2f} s, reachable count {t_reach:.2f} s, "
        f"kernels loaded in {load:.2f} s"
    )
    if args.all:
        t0 = time.perf_counter()
        rows = policy_rows(solution)
        best: dict[str, float] = {}
        for r in rows:
            best[r.family] = max(best.get(r.family, -1.0), r.moments.ev)
        table = fmt.Table(
            [
                *_moment_columns(),
                fmt.Column("best", lambda x: "*" if x else "", right=False),
            ],
            [
                [
                    r.label,
                    r.moments.ev,
                    r.moments.sd,
                    r.moments.bust,
                    r.moments.flip7,
                    None if r.family == "optimal" else r.moments.ev - rows[0].moments.ev,
                    r.family in LEGEND and r.moments.ev == best[r.family],
                ]
                for r in rows
            ],
            title="every policy family",
        )
        result.data["policies"] = [
            {"policy": r.label, "family": r.family, "param": r.param, **_moments(r.moments)}
            for r in rows
        ]
        result.line("")
        result.line(f"Every policy family, exactly (model {model.name}; * best of its family):")  # type: ignore[attr-defined]
        result.table(table)
        families = sorted({r.family for r in rows} & set(LEGEND), key=list(LEGEND).index)
        for family in families:
            for line in textwrap.wrap(LEGEND[family] + ";", 100, subsequent_indent="    "):
                result.line(line)
        result.line("chances are exact in the model's deck (duplicates left / cards left).")
        result.line("ev hits when one more card then staying beats staying (actions neutral).")
        result.line(f"time: {len(rows) - 1} policies valued in {time.perf_counter() - t0:.2f} s")
    result.line(f"(total {time.perf_counter() - start:.2f} s)")
    out.emit(result, args.format)
    return 0


#: Race models: the full model's 211M states make a race of ~500 sweeps take hours.
RACE_MODELS = ("basic", "real")


def cmd_race(args: argparse.Namespace, out: Output) -> int:
    """`flip7 solve --race`: the solo race to --target, exactly (flip7.solver.race)."""
    from flip7.solver.race import (
        format_rows,
        policy_rows,
        race_path,
        solve_race,
        solve_within,
        write_race,
    )

    if args.model not in RACE_MODELS:
        raise ValueError(
            f"--race: --model must be one of {', '.join(RACE_MODELS)}, got "
            f"{args.model!r} (the full model's 211M states take hours over ~500 sweeps)"
        )
    if not 1 <= args.target <= 10_000:
        raise ValueError(f"--race: --target must be in 1..10000, got {args.target}")
    if args.within is not None and not 1 <= args.within <= 60:
        raise ValueError(f"--race: --within K needs K in 1..60, got {args.within}")
    start = time.perf_counter()
    model, load = _header(out, args.model)
    out.print(
        f"The race: fewest rounds to reach {args.target}. Exact under this model's assumption "
        "that every round starts from a fresh, full deck (in the real game the deck carries "
        "over from round to round)."
    )
    race = solve_race(model, args.target)  # type: ignore[arg-type]
    c = race.chain
    out.print(
        f"race-optimal policy: {race.expected:.4f} expected rounds (median {c.quantile(0.5)}, "
        f"90% done in {c.quantile(0.9)}); {race.sweeps} sweeps in {race.seconds:.1f} s"
    )
    path = race_path(model, args.target, args.cache_dir)  # type: ignore[arg-type]
    write_race(path, race)
    out.print(f"race table: {path} ({path.stat().st_size:,} bytes)")
    t0 = time.perf_counter()
    rows = policy_rows(race)
    lo = max(1, c.quantile(0.05) - 1)
    ks = tuple(range(lo, lo + 8))
    out.print("")
    out.print(
        f"Rounds to reach {args.target}, each policy played every round (model {args.model}):"
    )
    for line in format_rows(rows, ks):
        out.print(line)
    out.print(
        "dp maximises the points of each round; sum:N and bust:P are the best of their "
        "families by expected rounds."
    )
    t_rows = time.perf_counter() - t0
    t_within = 0.0
    if args.within is not None:
        k = args.within
        t0 = time.perf_counter()
        within = solve_within(model, args.target, k)  # type: ignore[arg-type]
        t_within = time.perf_counter() - t0
        out.print("")
        out.print(
            f"Best chance to reach {args.target} within {k} rounds: {within.best[k]:.4%} "
            f"(race-optimal policy {c.cdf[k]:.4%}, dp {rows[1].chain.cdf[k]:.4%}); "
            f"{within.sweeps} sweeps"
        )
        out.print(
            "within k rounds, each k its own optimum: "
            + ", ".join(f"{j}: {within.best[j]:.2%}" for j in range(max(1, k - 5), k + 1))
        )
    out.print(
        f"time: race {race.seconds:.1f} s, other policies {t_rows:.1f} s"
        + (f", within {t_within:.1f} s" if args.within is not None else "")
        + f", kernels loaded in {load:.2f} s (total {time.perf_counter() - start:.1f} s)"
    )
    return 0


def _moment_columns() -> list[Any]:
    """The table columns of a round policy's exact figures: policy, EV, sd, bust, Flip 7 rate,
    and the gap to the optimum."""
    from flip7 import format as fmt

    return [
        fmt.Column("policy", right=False),
        fmt.Column("EV", lambda x: f"{x:.3f}", key="ev"),
        fmt.Column("sd", fmt.points),
        fmt.Column("bust", fmt.rate),
        fmt.Column("flip7", lambda x: fmt.rate(x, 2)),
        fmt.Column("vs optimal", lambda x: f"{x:+.3f}", key="gap"),
    ]


def _moments(m: object) -> dict[str, float]:
    """A policy's exact figures for JSON: ev, sd, bust, flip7 (rates as shares)."""
    return {k: float(getattr(m, k)) for k in ("ev", "sd", "bust", "flip7")}


def cmd_advice(args: argparse.Namespace, out: Output) -> int:
    from flip7.solver.advice import advise, report
    from flip7.solver.solve import solve

    start = time.perf_counter()
    head = Output(io.StringIO())
    model, _ = _header(head, args.model)
    result = advice_result(advise(solve(model)), model.assumptions(), report)  # type: ignore[arg-type, attr-defined]
    result.blocks[:0] = [*head.lines, ""]
    result.line(f"(total {time.perf_counter() - start:.2f} s)")
    out.emit(result, args.format)
    return 0


def advice_result(advice: Any, assumptions: str, report: Any) -> Any:
    """`flip7 advice` as a Result: the printed report (table format), its two tables (csv,
    markdown) and their figures (json; docs/output.md)."""
    from flip7 import format as fmt

    lines: list[str] = report(advice)
    # The report's two tables: the cut-offs (two header lines, one row per count 1..6) and
    # the rules' values (a header, then six rows); the prose around them stays text.
    cut = next(i for i, line in enumerate(lines) if "ours: no Second Chance" in line)
    val = next(i for i, line in enumerate(lines) if line.startswith("policy "))
    by = {(c.k, c.held): c for c in advice.cells}
    murch = {c.k: c for c in advice.murch_cells}
    counts = range(1, 7)
    cutoffs = fmt.Table(
        [
            fmt.Column("numbers"),
            fmt.Column("Murch's table: model deck", fmt.rate, key="murch_fitted"),
            fmt.Column("Murch's table: hit under", fmt.rate, key="murch_cutoff"),
            fmt.Column("share", fmt.rate, key="murch_share"),
            fmt.Column("no Second Chance: hit under", fmt.rate, key="cutoff"),
            fmt.Column("share", fmt.rate, key="share"),
            fmt.Column("holding one: hit under", fmt.rate, key="cutoff_second_chance"),
            fmt.Column("share", fmt.rate, key="share_second_chance"),
        ],
        [
            [
                k,
                murch[k].fitted,
                murch[k].cutoff,
                murch[k].share,
                by[(k, 0)].cutoff,
                by[(k, 0)].share,
                by[(k, 1)].cutoff,
                by[(k, 1)].share,
            ]
            for k in counts
        ],
        title="cut-offs: hit while the bust risk is under",
        text=lambda colour: lines[cut : cut + 8],
    )
    opt = advice.optimum
    rules = [
        advice.murch_rule,
        advice.murch_sc_rule,
        advice.rule,
        advice.single_value,
        advice.best_sum[1],
        opt,
    ]
    # each rule by the name the report gives it (its first 38 characters)
    named = [(line[:38].strip(), m) for line, m in zip(lines[val + 1 :], rules, strict=False)]
    values = fmt.Table(
        [
            *_moment_columns(),
        ],
        [
            [name, m.ev, m.sd, m.bust, m.flip7, None if m is opt else m.ev - opt.ev]
            for name, m in named
        ],
        title="each rule's exact value",
        text=lambda colour: lines[val : val + 1 + len(rules)],
    )

    def cell(c: Any) -> dict[str, float]:
        return {"cutoff": c.cutoff, "share": c.share, "agree": c.agree}

    def murch_cell(c: Any) -> dict[str, float]:
        return {"fitted": c.fitted, **cell(c), "loss": c.loss}

    data = {
        "command": "advice",
        "model": advice.model_name,
        "assumptions": assumptions,
        "cutoffs": [
            {
                "numbers": k,
                "murch": murch_cell(murch[k]),
                "no_second_chance": cell(by[(k, 0)]),
                "second_chance": cell(by[(k, 1)]),
            }
            for k in counts
        ],
        "empty_hand_share": advice.empty_share,
        "model_cards": advice.model_cards,
        "agreement": dict(advice.agreement),
        "policies": [{"policy": name, **_moments(m)} for name, m in named],
    }
    result = fmt.Result(data, list(lines[:cut]))
    result.table(cutoffs)
    result.blocks += lines[cut + 8 : val]
    result.table(values)
    result.blocks += lines[val + 1 + len(rules) :]
    return result


def cmd_odds(args: argparse.Namespace, out: Output) -> int:
    from flip7.solver.odds import compute, hand_report, parse_hand, report_result
    from flip7.solver.solve import solve

    hand = parse_hand(args.hand) if args.hand is not None else None  # bad input fails first
    start = time.perf_counter()
    head = Output(io.StringIO())
    model, _ = _header(head, args.model)
    odds = compute(solve(model))  # type: ignore[arg-type]
    result = report_result(odds)
    lines = [*head.lines, ""]
    if hand is not None:
        hand_lines = hand_report(odds, hand)
        result.data["hand"] = {"hand": str(hand), "lines": hand_lines}
        lines += [*hand_lines, ""]
    result.blocks[:0] = lines
    result.line(f"(total {time.perf_counter() - start:.2f} s)")
    out.emit(result, args.format)
    return 0
