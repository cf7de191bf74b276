"""Game subcommands: play, sim, round, watch, rules."""

from __future__ import annotations

import argparse
import math
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from flip7 import format as fmt
from flip7.cards import CLASSIC, Card, card_label
from flip7.events import CODE_BITS, Event, EventKind, EventLog
from flip7.limits import time_limit
from flip7.policies import REGISTRY, HumanPolicy, parse_policies
from flip7.policies.base import Policy
from flip7.policies.human import LeftGame
from flip7.rules import (
    BASE_RULESETS,
    RULES_VERSION,
    RULESET_DESCRIPTIONS,
    Ruleset,
    parse_ruleset,
)
from flip7.stats import RatioSums
from flip7.variants import Variant, parse_variant

if TYPE_CHECKING:
    from flip7.cli import Output
    from flip7.engine import Engine
    from flip7.simulate import SimSummary
    from flip7.summary import PolicyStats

# The engine (and numpy) load when a command runs, not when the parser is built.


def _common(
    p: argparse.ArgumentParser, policies: str | None, seed: int = 1, output: bool = True
) -> None:
    from flip7.cli import add_output_options

    if policies is not None:
        p.add_argument(
            "-p",
            "--policies",
            default=policies,
            help=f"comma-separated policy specs, one per seat (default: {policies}); see `flip7 rules`",
        )
    p.add_argument("--seed", type=int, default=seed, help=f"root seed (default {seed})")
    p.add_argument(
        "--ruleset",
        default="3.1",
        help="3.1 (default), immediate or legacy, with overrides like '3.1(target=150)'",
    )
    p.add_argument(
        "--variant",
        default="classic",
        help="classic (default) or vengeance, e.g. 'vengeance(deck=alt,brutal=1)'",
    )
    p.add_argument(
        "--players",
        type=int,
        help="table size; the policy list is repeated to fill it (default: one seat per policy)",
    )
    if output:
        add_output_options(p)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from flip7.cli import add_data_option

    p = sub.add_parser(
        "play",
        help="play against bots at the terminal",
        description="Play a game of Flip 7 at the terminal against bots: you take the first "
        "seat, the policies of -p the others. Answer h (hit) or s (stay), a number to choose a "
        "target; q (or quit, or Ctrl-D) leaves the game.",
    )
    # Interactive: the game is played at the terminal, so no -o and no results copy.
    _common(p, "ev,bust:0.25,sum:20", seed=int(time.time()), output=False)
    p.add_argument(
        "--no-file",
        action="store_true",
        help="accepted for symmetry with the other commands: play keeps no results copy",
    )
    p.set_defaults(func=cmd_play, tee=False)

    p = sub.add_parser(
        "sim",
        help="simulate games: win rate and points per round per policy",
        description="Simulate games between the policies of -p, seats rotating, and print each "
        "policy's win rate and points per round with their 95% intervals (clustered by game).",
    )
    p.add_argument("-n", "--games", type=int, default=4000, help="games to play (default 4000)")
    _playing(p, "dp,ev,bust:0.25,sum:20")
    _format_option(p)
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser("round", help="the one-round score distribution of each policy")
    p.add_argument("-n", "--rounds", type=int, default=20000, help="rounds to play (default 20000)")
    _playing(p, "ev,dp")
    _format_option(p)
    p.set_defaults(func=cmd_round)

    p = sub.add_parser("watch", help="one game, card by card (a new one, or a logged one)")
    _playing(p, "ev,ev,ev")
    p.add_argument("--run", help="show a game logged by a tournament run instead")
    p.add_argument("--game", type=int, help="game id within --run (default 0)")
    add_data_option(p, "the lake of --run")
    p.add_argument(
        "--delay", type=float, default=0.0, help="seconds to pause between cards (table format)"
    )
    _format_option(p)
    p.set_defaults(func=cmd_watch)

    p = sub.add_parser("rules", help="deck, scoring, policies and rulesets")
    from flip7.cli import add_output_options

    p.add_argument(
        "--variant",
        default="classic",
        help="classic (default) or vengeance, e.g. 'vengeance(deck=alt)': print that deck and rules",
    )
    add_output_options(p)
    p.set_defaults(func=cmd_rules)


def _format_option(p: argparse.ArgumentParser) -> None:
    from flip7.cli import add_format_option

    add_format_option(p)


def _playing(p: argparse.ArgumentParser, policies: str) -> None:
    """The options of a command whose engine plays the games (sim, round, watch): `_common`,
    --engine and --policy-timeout."""
    from flip7.cli import add_engine_option, add_policy_timeout_option

    _common(p, policies)
    add_engine_option(p, "both play the same games")
    add_policy_timeout_option(p)


def policy_timeout(args: argparse.Namespace) -> float | None:
    """--policy-timeout, checked: None or a finite number of seconds > 0."""
    seconds: float | None = args.policy_timeout
    if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"--policy-timeout must be a number of seconds > 0, got {seconds:g}")
    return seconds


def _engine_line(engine: str, note: str | None) -> str:
    """Which engine ran, and why not the kernel."""
    if engine == "kernel" or note is None:
        return f"engine: {engine}"
    return (
        f"engine: reference ({'as asked' if note == 'asked for' else 'kernel not used: ' + note})"
    )


#: The event log's player field holds seats 0..62 (flip7.events.CODE_BITS).
MAX_SEATS = (1 << CODE_BITS[1]) - 1


def lineup_from(args: argparse.Namespace) -> list[Policy]:
    if args.players is not None and not 1 <= args.players <= MAX_SEATS:
        raise ValueError(f"--players must be in 1..{MAX_SEATS}, got {args.players}")
    policies = parse_policies(args.policies)
    if len(policies) > MAX_SEATS:
        raise ValueError(f"-p/--policies: {len(policies)} seats; at most {MAX_SEATS} fit a table")
    if args.players is not None:
        specs = [policies[i % len(policies)].spec for i in range(args.players)]
        policies = parse_policies(specs)
    return policies


def _progress(total: int, label: str):  # type: ignore[no-untyped-def]
    from tqdm import tqdm

    bar = tqdm(
        total=total,
        unit=f" {label}s",
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        smoothing=0.1,
    )

    def update(done: int) -> None:
        bar.update(done - bar.n)
        if done == total:
            bar.close()

    return update


#: The most games (or rounds) one command plays: a tournament cell's bound too (the lake's int32
#: game index); at the kernel's pace, hours of play.
MAX_GAMES = 2**31 - 1


def check_count(n: int, what: str) -> None:
    """A one-line ValueError unless 1 <= n <= MAX_GAMES (`what`: the flag, e.g. -n/--games)."""
    if not 1 <= n <= MAX_GAMES:
        raise ValueError(f"{what} must be from 1 to {MAX_GAMES:,} (2^31-1), got {n}")


def cmd_sim(args: argparse.Namespace, out: Output) -> int:
    from flip7.simulate import simulate

    check_count(args.games, "-n/--games")
    ruleset = parse_ruleset(args.ruleset)
    lineup = lineup_from(args)
    t0 = time.perf_counter()
    variant = parse_variant(args.variant)
    with time_limit(policy_timeout(args)):
        summary = simulate(
            ruleset,
            lineup,
            args.games,
            args.seed,
            progress=_progress(args.games, "game"),
            variant=variant,
            engine=args.engine,
        )
    secs = time.perf_counter() - t0
    result = sim_result(summary, lineup, ruleset, variant, args.seed)
    result.data["games_per_second"] = args.games / secs
    result.line(f"({args.games / secs:,.0f} games/s)")
    result.line(_engine_line(summary.engine, summary.engine_note))
    out.emit(result, args.format)
    return 0


def _rate_column(name: str, key: str) -> fmt.Column:
    return fmt.Column(name, fmt.format_rate, False, key, fmt.estimate_fields)


def _mean_column(name: str, key: str) -> fmt.Column:
    return fmt.Column(name, fmt.format_mean, True, key, fmt.estimate_fields)


def sim_result(
    summary: SimSummary, lineup: list[Policy], ruleset: Ruleset, variant: Variant, seed: int
) -> fmt.Result:
    """`flip7 sim`'s table: per policy, win rate [95% interval] and points per round ± 95%
    (clustered by game, flip7.stats); alone at the table, the rounds it takes to reach the
    target instead of a win rate. JSON: docs/output.md."""
    n = len(lineup)
    head = (
        f"{fmt.count(summary.games)} games, {n} player{'s' if n > 1 else ''} "
        f"({', '.join(p.spec for p in lineup)}), ruleset {ruleset}, variant {variant}, seed {seed}"
    )
    stats = sorted(summary.stats.values(), key=lambda s: -s.win_rate)
    data: dict[str, object] = {
        "command": "sim",
        "games": summary.games,
        "players": n,
        "lineup": [p.spec for p in lineup],
        "ruleset": str(ruleset),
        "variant": str(variant),
        "seed": seed,
        "engine": summary.engine,
        "policies": [
            {
                "policy": st.spec,
                "seats": st.seats,
                "rounds": st.rounds,
                **({} if n == 1 else {"win_rate": fmt.estimate_json(st.win_estimate())}),
                "points_per_round": fmt.estimate_json(st.ppr_estimate()),
                "bust_rate": st.busts / st.rounds,
                "flip7_rate": st.flip7s / st.rounds,
            }
            for st in stats
        ],
    }
    if n == 1:
        result = fmt.Result(data, [f"{head}: the solo challenge"])
        _solo_lines(summary, ruleset, result)
        return result
    result = fmt.Result(data, [f"{head}, seats rotated"])
    result.table(
        fmt.Table(
            [
                fmt.Column("policy", right=False),
                fmt.Column("seats", fmt.count),
                _rate_column("win rate [95%]", "win_rate"),
                *_round_columns(),
            ],
            [
                [
                    st.spec,
                    st.seats,
                    st.win_estimate(),
                    *_round_figures(st),
                ]
                for st in stats
            ],
        )
    )
    result.line(f"({fmt.INTERVAL_NOTE})")
    return result


def _round_columns() -> list[fmt.Column]:
    """A policy's per-round figures in the sim tables: points per round, bust and Flip 7 rates."""
    return [
        _mean_column("pts/round ± 95%", "points_per_round"),
        fmt.Column("bust/rnd", fmt.rate, key="bust_rate"),
        fmt.Column("flip7/rnd", fmt.rate, key="flip7_rate"),
    ]


def _round_figures(st: PolicyStats) -> list[object]:
    """The values of `_round_columns` for one policy."""
    return [st.ppr_estimate(), st.busts / st.rounds, st.flip7s / st.rounds]


def _solo_lines(summary: SimSummary, ruleset: Ruleset, result: fmt.Result) -> None:
    """One seat: how many rounds it takes to reach the target, and points per round."""
    (st,) = summary.stats.values()
    if summary.game_rounds:
        est = summary.rounds_estimate()
        quant = {
            "median": summary.rounds_quantile(0.5),
            "p90": summary.rounds_quantile(0.9),
            "min": min(summary.game_rounds),
            "max": max(summary.game_rounds),
        }
        result.data["rounds_to_target"] = {"mean": fmt.estimate_json(est), **quant}
        result.line(
            f"rounds to reach {ruleset.target}: mean {fmt.format_mean(est)} (95%), median "
            f"{quant['median']}, p90 {quant['p90']}, min {quant['min']}, max {quant['max']}"
        )
    result.data["capped"] = summary.capped
    if summary.capped:
        result.line(
            f"({summary.capped} game(s) stopped at the cap of {ruleset.max_rounds} rounds "
            f"without reaching {ruleset.target}; not counted above)"
        )
    result.table(
        fmt.Table(
            [
                fmt.Column("policy", right=False),
                fmt.Column("rounds", fmt.count),
                *_round_columns(),
            ],
            [
                [
                    st.spec,
                    st.rounds,
                    *_round_figures(st),
                ]
            ],
        )
    )
    result.line("(± is the half-width of a 95% interval, clustered by game)")


def cmd_round(args: argparse.Namespace, out: Output) -> int:
    from flip7.rng import derive_seed
    from flip7.simulate import rotated

    check_count(args.rounds, "-n/--rounds")
    ruleset = parse_ruleset(args.ruleset)
    lineup = lineup_from(args)
    variant = parse_variant(args.variant)
    scores: dict[str, list[int]] = {p.spec: [] for p in lineup}
    busts = {p.spec: 0 for p in lineup}
    flips = {p.spec: 0 for p in lineup}
    update = _progress(args.rounds, "round")
    engine_name, note = _choose_engine(args.engine, lineup, ruleset, variant)
    with time_limit(policy_timeout(args)):
        if engine_name == "kernel":
            from flip7.kernel.tally import one_round_kernel

            scores, busts, flips = one_round_kernel(
                ruleset, lineup, args.rounds, args.seed, update, variant
            )
        else:
            for i in range(args.rounds):
                seats = rotated(lineup, i)
                seed = derive_seed(args.seed, 0, i)
                engine = variant.new_engine(ruleset, seats, seed, capture=False)
                engine.play_round()
                for s, pol in enumerate(seats):
                    scores[pol.spec].append(engine.round_scores[0][s])
                    busts[pol.spec] += engine.busts[s]
                    flips[pol.spec] += engine.flip7s[s]
                update(i + 1)
    head = (
        f"one round, {fmt.count(args.rounds)} deals, {len(lineup)} players "
        f"({', '.join(p.spec for p in lineup)}), ruleset {ruleset}, seed {args.seed}, seats "
        f"rotated; {_engine_line(engine_name, note)}"
    )
    rows, policies = [], []
    top = max(max(xs) for xs in scores.values())
    for spec, xs in scores.items():
        n = len(xs)
        mean = statistics.fmean(xs)
        sd = statistics.pstdev(xs)
        q = statistics.quantiles(xs, n=10, method="inclusive") if n > 1 else [xs[0]] * 9
        half = _deal_half_width(xs, n // args.rounds)
        rows.append([spec, n, mean, half, sd, busts[spec] / n, flips[spec] / n, q[0], q[4], q[8]])
        policies.append(
            {
                "policy": spec,
                "n": n,
                "mean": mean,
                "half_width": half,
                "sd": sd,
                "bust_rate": busts[spec] / n,
                "flip7_rate": flips[spec] / n,
                "p10": q[0],
                "p50": q[4],
                "p90": q[8],
                "histogram": [
                    {"points": label, "share": share} for label, share, _ in bins(xs, top=top)
                ],
            }
        )
    data = {
        "command": "round",
        "rounds": args.rounds,
        "lineup": [p.spec for p in lineup],
        "ruleset": str(ruleset),
        "variant": str(variant),
        "seed": args.seed,
        "engine": engine_name,
        "policies": policies,
    }
    result = fmt.Result(data, [head])
    result.table(
        fmt.Table(
            [
                fmt.Column("policy", right=False),
                fmt.Column("n", fmt.count),
                fmt.Column("mean", fmt.points),
                fmt.Column("± 95%", fmt.points, key="half_width"),
                fmt.Column("sd", fmt.points),
                fmt.Column("bust", fmt.rate, key="bust_rate"),
                fmt.Column("flip7", fmt.rate, key="flip7_rate"),
                fmt.Column("p10", lambda x: f"{x:.0f}"),
                fmt.Column("p50", lambda x: f"{x:.0f}"),
                fmt.Column("p90", lambda x: f"{x:.0f}"),
            ],
            rows,
        )
    )
    result.line("(± is the half-width of a 95% interval, clustered by deal)")
    result.line("")
    peak = max(max(s for _, s, _ in bins(xs, top=top)) for xs in scores.values())
    for spec, xs in scores.items():
        result.line(f"distribution of {spec} (points, share of rounds; one scale for all):")
        for line in histogram(xs, top=top, peak=peak).splitlines():
            result.line(line)
    out.emit(result, args.format)
    return 0


def _deal_half_width(xs: list[int], per_deal: int) -> float:
    """The 95% half-width of the mean score, clustered by deal: `xs` holds each deal's
    `per_deal` seats of the policy next to each other (both engines list them so)."""
    sums = [sum(xs[i : i + per_deal]) for i in range(0, len(xs), per_deal)]
    return RatioSums.of((y, per_deal) for y in sums).estimate().half_width


def bins(xs: list[int], width: int = 10, top: int | None = None) -> list[tuple[str, float, int]]:
    """(label, share, count) per bin: busts (0) alone, then bins of `width` points up to `top`
    (default: the highest score in xs; give the same `top` to compare policies)."""
    n = len(xs)
    counts: dict[str, int] = {"0": sum(1 for x in xs if x == 0)}
    top = max(xs) if top is None else top
    lo = 1
    while lo <= top:
        hi = lo + width - 1
        counts[f"{lo}-{hi}"] = sum(1 for x in xs if lo <= x <= hi)
        lo = hi + 1
    return [(label, c / n, c) for label, c in counts.items()]


def histogram(
    xs: list[int], width: int = 10, bar: int = 40, top: int | None = None, peak: float | None = None
) -> str:
    """A text histogram: busts (0) alone, then bins of `width` points. With `top` and `peak`
    (the highest score and the largest share over every policy) histograms share one scale:
    the same bins, and a bar of `bar` marks is the same share in each."""
    rows = bins(xs, width, top)
    peak = peak or max(s for _, s, _ in rows) or 1.0
    return "\n".join(
        f"{label:>8} {share:6.1%} {'#' * round(bar * share / peak)}" for label, share, _ in rows
    )


def cmd_watch(args: argparse.Namespace, out: Output) -> int:
    if args.run is not None:
        return _watch_logged(args, out)
    if args.game is not None:
        raise ValueError(
            "--game picks a game logged by a tournament: give --run RUN too (a new game "
            "is chosen by --seed)"
        )
    ruleset = parse_ruleset(args.ruleset)
    lineup = lineup_from(args)
    names = [f"P{s}:{p.spec}" for s, p in enumerate(lineup)]
    variant = parse_variant(args.variant)
    engine_name, note = _choose_engine(args.engine, lineup, ruleset, variant)
    with time_limit(policy_timeout(args)):
        if engine_name == "kernel":
            from flip7.kernel import play_game

            result = play_game(ruleset, lineup, args.seed, variant=variant)
        else:
            result = variant.new_engine(ruleset, lineup, args.seed).run()
    data: dict[str, object] = {
        "command": "watch",
        "lineup": [p.spec for p in lineup],
        "ruleset": str(ruleset),
        "variant": str(variant),
        "seed": args.seed,
        "engine": engine_name,
    }
    head = f"one game: {', '.join(names)}; ruleset {ruleset}; seed {args.seed}; " + _engine_line(
        engine_name, note
    )
    final = (
        f"final: {', '.join(f'{n} {t}' for n, t in zip(names, result.totals, strict=True))}"
        f"; seed {args.seed}"
    )
    events = EventLog(result.events)
    _emit_game(out, args, data, head, events, names, variant.name == "vengeance", final)
    return 0


def event_records(
    events: EventLog, names: Sequence[str], vengeance: bool = False
) -> list[dict[str, object]]:
    """A game's events as records for scripts (`--format json|csv` of watch and replay): seq,
    round, kind (as the warehouse names it), player, card, card_label, target, value (-1 and
    null where the kind does not use a field; docs/output.md) and the text watch prints."""
    records: list[dict[str, object]] = []
    round_no = 0
    for seq, e in enumerate(events):
        if e.kind == EventKind.ROUND_START:
            round_no = e.value
        label = None
        if e.card >= 0:
            label = "The Zero" if vengeance and e.card == Card.N0 else card_label(e.card)
        records.append(
            {
                "seq": seq,
                "round": round_no,
                "kind": e.kind.name.lower(),
                "player": e.player,
                "card": e.card,
                "card_label": label,
                "target": e.target,
                "value": e.value,
                "text": e.describe(names, vengeance=vengeance),
            }
        )
    return records


def _transcript(events: EventLog, names: Sequence[str], vengeance: bool) -> list[tuple[str, bool]]:
    """watch's lines, one per event, each with whether it is a card drawn (--delay paces those):
    events indented under their round, each round score with the seat's running total."""
    totals = [0] * len(names)
    lines = []
    for e in events:
        line = e.describe(names, vengeance=vengeance)
        if e.kind == EventKind.ROUND_SCORE:
            totals[e.player] += e.value
            line += f" (total {totals[e.player]})"
        indent = "" if e.kind in (EventKind.ROUND_START, EventKind.GAME_END) else "    "
        lines.append((indent + line, e.kind == EventKind.DRAW))
    return lines


def _emit_game(
    out: Output,
    args: argparse.Namespace,
    data: dict[str, object],
    head: str,
    events: EventLog,
    names: Sequence[str],
    vengeance: bool,
    final: str | None = None,
) -> None:
    """One game in --format: the transcript (table), its events as records (json, csv), or a
    table of round and event (markdown). JSON adds the seats' totals and the winner."""
    records = event_records(events, names, vengeance)
    totals = [0] * len(names)
    winner = None
    for e in events:
        if e.kind == EventKind.ROUND_SCORE:
            totals[e.player] += e.value
        elif e.kind == EventKind.GAME_END:
            winner = e.player
    data.update(totals=totals, winner=winner, events=records)
    lines = _transcript(events, names, vengeance)
    if args.format == "table" and getattr(args, "delay", 0) and not args.output:  # paced
        out.print(head)
        for line, draw in lines:
            out.print(line)
            if draw:
                time.sleep(args.delay)
        if final is not None:
            out.print(final)
        return
    result = fmt.Result(data, [head])
    result.table(events_table(records, [line for line, _ in lines]))
    if final is not None:
        result.line(final)
    out.emit(result, args.format)


def events_table(records: list[dict[str, object]], transcript: list[str]) -> fmt.Table:
    """The events as a table: round and text (markdown), every field of a record (csv), the
    transcript's own lines (table format)."""
    return fmt.Table(
        [
            fmt.Column("round"),
            fmt.Column(
                "event",
                lambda rec: str(rec["text"]),
                right=False,
                split=lambda _, rec: dict(rec),
            ),
        ],
        [[rec["round"], rec] for rec in records],
        title="events",
        text=lambda colour: transcript,
    )


def _choose_engine(
    requested: str, lineup: list[Policy], ruleset: Ruleset, variant: Variant
) -> tuple[str, str | None]:
    """flip7.kernel.choose_engine, without importing the kernel for --engine reference."""
    if requested == "reference":
        return "reference", "asked for"
    from flip7.kernel import choose_engine

    return choose_engine(requested, lineup, ruleset, variant)


def _watch_logged(args: argparse.Namespace, out: Output) -> int:
    """A logged game, through whichever package registered a `flip7.logged_games` loader."""
    loaders = list(entry_points(group="flip7.logged_games"))
    if not loaders:
        raise ValueError("--run needs the pipeline package installed (pip install -e .)")
    number = 0 if args.game is None else args.game
    game = loaders[0].load()(args.run, number, args.data)
    names = [f"P{s}:{spec}" for s, spec in enumerate(game["policies"])]
    head = (
        f"run {args.run}, game {number}: {', '.join(names)}; ruleset {game['ruleset']}; "
        f"seed {game['seed']}"
    )
    data: dict[str, object] = {
        "command": "watch",
        "run": args.run,
        "game": number,
        "lineup": list(game["policies"]),
        "ruleset": str(game["ruleset"]),
        "variant": str(game.get("variant", "classic")),
        "seed": game["seed"],
    }
    vengeance = str(game.get("variant", "classic")).startswith("vengeance")
    _emit_game(out, args, data, head, EventLog(game["events"]), names, vengeance)
    return 0


def cmd_play(args: argparse.Namespace, out: Output) -> int:
    ruleset = parse_ruleset(args.ruleset)
    variant = parse_variant(args.variant)
    bots = lineup_from(args)
    names = ["you"] + [f"P{s}:{p.spec}" for s, p in enumerate(bots, 1)]
    human = HumanPolicy(ask=input, say=out.print, names=names)
    human.spec = "human"
    vengeance = variant.name == "vengeance"
    seen = [0]

    def show(engine: Engine) -> None:
        events = engine.events
        while seen[0] < len(events):
            i = seen[0]
            e = Event(EventKind(events[i]), *events[i + 1 : i + 5])
            text = e.describe(names, you=0, vengeance=vengeance)
            out.print(
                ("  " if e.kind not in (EventKind.ROUND_START, EventKind.GAME_END) else "") + text
            )
            if e.kind == EventKind.ROUND_END:
                out.print("  totals:")
                for line in totals_table(names, engine.table.totals):
                    out.print("    " + line)
            seen[0] += 5

    out.print(
        f"Flip 7, variant {variant}, ruleset {ruleset}, seed {args.seed}: you (seat 0) against "
        f"{', '.join(names[1:])}. First to {ruleset.target}. Type q to quit."
    )
    if vengeance:
        out.print("The cards of With a Vengeance: flip7 rules --variant vengeance")
    engine = variant.new_engine(ruleset, [human, *bots], args.seed, on_event=show)
    try:
        result = engine.run()
    except LeftGame as left:
        out.print("")
        out.print(
            ("The input ended: you left the game" if left.eof else "You left the game")
            + f" in round {engine.round_no}."
        )
        _replay_lines(args, bots, out)
        return 0
    out.print("final:")
    for line in totals_table(names, list(result.totals)):
        out.print("  " + line)
    _replay_lines(args, bots, out)
    return 0


def totals_table(names: list[str], totals: list[int]) -> list[str]:
    """One line per seat, names padded to the longest so the totals line up."""
    width = max(len(n) for n in names)
    tw = max(4, *(len(str(t)) for t in totals))
    return [f"{n:<{width}} {t:>{tw}}" for n, t in zip(names, totals, strict=True)]


def _replay_lines(args: argparse.Namespace, bots: list[Policy], out: Output) -> None:
    """The seed, and the commands that deal this game again (play) or show a bot in your seat
    (watch)."""
    opts = ""
    if args.ruleset != "3.1":
        opts += f" --ruleset {shlex.quote(args.ruleset)}"
    if args.variant != "classic":
        opts += f" --variant {shlex.quote(args.variant)}"
    specs = ",".join(p.spec for p in bots)
    out.print(f"seed {args.seed}: the same answers replay this game with")
    out.print(f"  flip7 play --seed {args.seed}{opts} -p {shlex.quote(specs)}")
    out.print("and this shows ev playing the same deal in your seat:")
    out.print(f"  flip7 watch --seed {args.seed}{opts} -p {shlex.quote('ev,' + specs)}")


#: What every figure means, printed by `flip7 rules` (the same words as the README).
STATISTICS_CONTRACT = (
    "Figures: every win rate (wins / seats) and points per round (points / rounds played,",
    "pooled) is per cell: run, variant, ruleset, field size and line-up. Its 95% interval is",
    "clustered by game (by game pair for common-random-number comparisons), since the seats of",
    "one game are not independent; sim, tournament status, report, flip7 sql and the",
    "dashboard compute the same interval, so a cell shows the same numbers everywhere.",
)


def cmd_rules(args: argparse.Namespace, out: Output) -> int:
    variant = parse_variant(args.variant)
    if variant.name == "vengeance":
        return _vengeance_rules(variant, out)
    deck = CLASSIC
    out.print(f"Flip 7 (rules version {RULES_VERSION}). The classic deck: {deck.size} cards")
    nums = [f"{card_label(c)}x{deck.counts[c]}" for c in range(13)]
    out.print("  numbers:   " + " ".join(nums) + f"  ({sum(deck.counts[:13])} cards)")
    out.print("  modifiers: +2 +4 +6 +8 +10 x2 (one each)")
    out.print("  actions:   Freeze x3, Flip Three x3, Second Chance x3")
    out.print("  past 18 players a second deck is shuffled in")
    out.print("")
    out.print(
        "Scoring: sum of numbers, doubled by x2 (numbers only), plus +N modifiers, plus 15 for a"
    )
    out.print("Flip 7 (seven distinct numbers, which ends the round at once). A bust scores 0.")
    out.print("  3, 8, 11 with +4 = 26; with x2 instead = 44; 5 + 7 with x2 and +10 = 34.")
    out.print("The game ends after a round in which someone reaches 200; a tie on top plays on.")
    out.print("")
    out.print("Rulesets (--ruleset):")
    rulesets = fmt.Table(
        [fmt.Column("ruleset", right=False), fmt.Column("rules", right=False)],
        [[name, RULESET_DESCRIPTIONS[name]] for name in BASE_RULESETS],
    )
    for line in fmt.table_lines(rulesets, indent=2):
        out.print(line)
    out.print(
        "  overrides: NAME(target=150,bonus=15,players_per_deck=18,max_rounds=1000,freeze_ties=0)"
    )
    out.print("")
    out.print("Policies (-p):")
    policies = fmt.Table(
        [fmt.Column("policy", right=False), fmt.Column("how it plays", right=False)],
        [[entry.example or entry.name, entry.help] for entry in REGISTRY.values()]
        + [["module:Cls", "your own Policy subclass, imported by path (see README)"]],
    )
    for line in fmt.table_lines(policies, indent=2):
        out.print(line)
    out.print("")
    out.print("bust:P and dup:P differ only while you hold a Second Chance: then no card can bust")
    out.print("you, so bust:P hits; dup:P reads the chance of a duplicate all the same (the bust:P")
    out.print("of Murch's Flip 7 simulator). Both count the cards not on the table; bustc and dupc")
    out.print("also remove the discard pile.")
    out.print("")
    out.print("Shared targeting: Freeze yourself when sitting on 15+ points with a 20%+ chance of")
    out.print("a duplicate, else freeze whoever is closest to Flip 7; take a Flip Three yourself")
    out.print("only with at most 2 numbers and under 20% chance of a duplicate, else give it to")
    out.print("the biggest threat; pass a spare Second Chance to whoever is furthest behind.")
    out.print("")
    for line in STATISTICS_CONTRACT:
        out.print(line)
    return 0


def _vengeance_rules(variant: Variant, out: Output) -> int:
    from flip7.policies import vengeance as vp

    deck = variant.deck
    out.print(
        f"Flip 7 With a Vengeance ({variant}). The deck in use: {deck.name}, {deck.size} cards"
    )
    for label, ids in (
        ("numbers", list(range(14)) + [Card.UNLUCKY_7, Card.LUCKY_13]),
        ("modifiers", list(range(Card.DIV2, Card.MINUS10 + 1))),
        ("actions", list(range(Card.JUST_ONE_MORE, Card.DISCARD + 1))),
    ):
        items = [f"{card_label(c)}x{deck.counts[c]}" for c in ids if deck.counts[c]]
        total = sum(deck.counts[c] for c in ids)
        out.print(f"  {label + ':':<10} " + " ".join(items) + f"  ({total} cards)")
    out.print("  (0 is The Zero; decks: default, alt, or your own [deck] table in a spec)")
    out.print("")
    import flip7.vengeance as rules_text

    for line in (rules_text.__doc__ or "").strip().splitlines()[2:]:
        out.print(line)
    out.print("")
    out.print("How the built-in policies play it:")
    for line in (vp.__doc__ or "").strip().splitlines():
        out.print("  " + line if line else "")
    return 0
