"""Solver speed: `flip7 solve`, `solve --all`, `advice` and `odds`, as whole commands and
in-process, with the one-time compilation measured apart.

    python benchmarks/solver.py [--repeats 3] [--model basic] [--check ROUNDS]

1. Compilation: `flip7 solve` with NUMBA_CACHE_DIR pointing at an empty directory (numba
   compiles the kernels it needs), then again with that cache warm; the difference is the
   one-time compile. Every other figure runs with a warm cache.
2. Commands: each one as a fresh process (Python start-up, imports, kernel load, the work,
   printing), --repeats times: medians of wall time and of the child's CPU time (user + sys).
   Wall time suffers from other load on the machine; CPU time much less.
3. In-process: the work itself once the kernels are loaded (medians).
4. With --check ROUNDS: the engine cross-check. ROUNDS solo rounds of `dp:MODEL` on the model's
   deck by the reference engine (ruleset 3.1, which discards a saved duplicate: use --model real
   or full), mean +- standard error next to the solver's exact EV.
5. With --race: `flip7 solve --race` (the solo race to 200) as a fresh process, --race-repeats
   times (target: under 60 s), and the solve in-process. With --race-check RACES: RACES solo
   races of `race:MODEL` by the reference engine from a fresh deck every round (the model's
   assumption), mean rounds +- standard error next to the exact expectation.
6. With --win: the win tables solved from the race (the menu, the grid's free policies, the
   seven field sizes), written to a fresh cache and loaded back (target: under a second), and
   the cost of the win policy's in-round sweep from typical hands (the decisions taken once
   the others are done at the target).
Targets (issue 3): solve under 2 s, solve --all under 30 s; seeds/002 reports about 13 s to
build its table and about 3 minutes for --all.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import median_wall, run_child  # noqa: E402

TARGETS = {"solve": 2.0, "solve --all": 30.0, "solve --race": 60.0}
SEED_002 = {"solve": 13.0, "solve --all": 180.0}


def run_command(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, child CPU) seconds of one `flip7 ...` process."""
    done = run_child([sys.executable, "-m", "flip7", *args, "--no-file"], cwd=None, env=env)
    if done.code:
        raise SystemExit(f"flip7 {' '.join(args)} failed:\n{done.stderr}")
    return done.wall, done.cpu


def cross_check(model_name: str, rounds: int) -> None:
    """The reference engine playing the solved table, solo, against the exact figures."""
    import math

    from flip7.engine import Engine
    from flip7.policies.dp import DPPolicy
    from flip7.rng import derive_seed
    from flip7.rules import parse_ruleset
    from flip7.solver import get_model

    model = get_model(model_name)
    policy = DPPolicy(model_name)
    ruleset = parse_ruleset("3.1")
    scores = []
    busts = flip7s = 0
    t0 = time.perf_counter()
    for i in range(rounds):
        engine = Engine(ruleset, [policy], derive_seed(3, i), capture=False, deck=model.deck)
        engine.play_round()
        scores.append(engine.round_scores[0][0])
        busts += engine.busts[0]
        flip7s += engine.flip7s[0]
    secs = time.perf_counter() - t0
    mean = statistics.fmean(scores)
    sd = statistics.pstdev(scores)
    se = sd / math.sqrt(rounds)
    exact = policy.table.header.get("ev")
    print(
        f"engine cross-check, {rounds:,} solo rounds of dp:{model_name} on the {model.deck.size}-card "
        f"deck ({secs:.1f} s): mean {mean:.3f} +- {se:.3f} (sd {sd:.2f}, bust {busts / rounds:.1%}, "
        f"Flip 7 {flip7s / rounds:.2%}); solver EV {exact:.3f}: "
        f"{(mean - float(exact)) / se:+.2f} standard errors"  # type: ignore[arg-type]
    )


def race_check(model_name: str, races: int) -> None:
    """The reference engine racing to 200 with `race:MODEL`, a fresh deck every round."""
    import math

    from flip7.policies.race import RacePolicy
    from flip7.rules import parse_ruleset
    from flip7.solver import get_model
    from tests.flip7.helpers import solo_race_rounds

    model = get_model(model_name)
    policy = RacePolicy(model_name)
    exact = float(policy.table.values[0])
    ruleset = parse_ruleset("3.1")
    t0 = time.perf_counter()
    rounds = solo_race_rounds(ruleset, policy, model.deck, races, seed=5)
    secs = time.perf_counter() - t0
    mean = statistics.fmean(rounds)
    se = statistics.stdev(rounds) / math.sqrt(races)
    print(
        f"race cross-check, {races:,} solo races to {ruleset.target} of race:{model_name}, a "
        f"fresh {model.deck.size}-card deck every round ({secs:.1f} s): mean {mean:.4f} +- "
        f"{se:.4f} rounds; exact {exact:.4f}: {(mean - exact) / se:+.2f} standard errors"
    )


def race_timing(model_name: str, repeats: int) -> None:
    """`flip7 solve --race` as whole processes, then `solve_race()` in-process."""
    from flip7.solver import get_model
    from flip7.solver.race import solve_race
    from flip7.solver.solve import warm_up

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FLIP7_CACHE=os.path.join(tmp, "tables"))
        runs = [
            run_command(["solve", "--race", "--model", model_name], env) for _ in range(repeats)
        ]
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    ok = "ok" if wall < TARGETS["solve --race"] else "SLOW"
    print(
        f"flip7 solve --race --model {model_name}: {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"(median of {repeats}; target < 60 s: {ok}); load average {os.getloadavg()[0]:.2f}"
    )
    warm_up()
    model = get_model(model_name)
    t0, c0 = time.perf_counter(), time.process_time()
    race = solve_race(model)
    print(
        f"  solve_race() in-process: {time.perf_counter() - t0:.1f} s wall, "
        f"{time.process_time() - c0:.1f} s CPU, {race.sweeps} sweeps"
    )


def win_timing(model_name: str) -> None:
    """The win tables: solved once the race is, written, loaded back; the in-round sweep."""
    from flip7.solver import get_model
    from flip7.solver.race import solve_race
    from flip7.solver.solve import warm_up
    from flip7.solver.win import InRound, load_win, solve_win, win_path, write_win

    warm_up()
    model = get_model(model_name)
    race = solve_race(model)
    t0, c0 = time.perf_counter(), time.process_time()
    solution = solve_win(model, race=race)
    print(
        f"win tables once the race is solved: {time.perf_counter() - t0:.1f} s wall, "
        f"{time.process_time() - c0:.1f} s CPU ({len(solution.menu.labels)} menu policies); "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = write_win(win_path(model, 200, tmp), solution)
        t0 = time.perf_counter()
        table, _, built = load_win(model, 200, tmp)
        assert not built
        print(
            f"  load from the cache: {time.perf_counter() - t0:.3f} s "
            f"({path.stat().st_size / 1e6:.1f} MB; target under 1 s)"
        )
    ir = InRound(model)
    reward = table.reward(2, 180, 205)
    for numbers in ((3,), (3, 8), (3, 8, 11), (3, 8, 11, 5)):
        mask = sum(1 << v for v in numbers)
        secs = median_wall(lambda mask=mask: ir.solve(reward, mask, 0), 5)
        print(f"  in-round sweep from {len(numbers)} number(s): {secs * 1e3:.1f} ms")


def dp_decision_seconds(calls: int = 100_000) -> float:
    """Seconds per `dp` decision (a table lookup from the observation), at a 4-player table."""
    from flip7.cards import Card
    from flip7.engine import Engine
    from flip7.policies import parse_policies
    from flip7.rules import parse_ruleset

    seats = parse_policies("dp,ev,ev,ev")
    engine = Engine(parse_ruleset("3.1"), seats, seed=1)
    for p, cards in {0: [3, 8, 11, Card.PLUS4], 1: [12, 5], 2: [9]}.items():
        for c in cards:
            engine.draw_pile.remove(c)
            engine.receive(p, c)
    obs, policy = engine.obs[0], seats[0]
    t0 = time.perf_counter()
    for _ in range(calls):
        policy.hit(obs)
    return (time.perf_counter() - t0) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="basic")
    parser.add_argument("--check", type=int, default=0, metavar="ROUNDS")
    parser.add_argument("--only-check", action="store_true", help="skip the timings")
    parser.add_argument("--race", action="store_true", help="time `flip7 solve --race` only")
    parser.add_argument("--race-repeats", type=int, default=1)
    parser.add_argument("--race-check", type=int, default=0, metavar="RACES")
    parser.add_argument("--win", action="store_true", help="time the win tables only")
    args = parser.parse_args()
    if args.check:
        cross_check(args.model, args.check)
    if args.race_check:
        race_check(args.model, args.race_check)
    if args.only_check:
        return
    if args.race:
        race_timing(args.model, args.race_repeats)
    if args.win:
        win_timing(args.model)
    if args.race or args.win:
        return
    load = os.getloadavg()[0]
    print(
        f"solver benchmark, model {args.model}, {args.repeats} runs each; "
        f"{os.cpu_count()} CPUs, load average {load:.2f} at start"
    )
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FLIP7_CACHE=os.path.join(tmp, "tables"))
        cold = dict(env, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
        first, first_cpu = run_command(["solve", "--model", args.model], cold)
        warm, warm_cpu = run_command(["solve", "--model", args.model], cold)
        print(
            f"one-time compilation: first `flip7 solve` {first:.2f} s wall ({first_cpu:.2f} s "
            f"CPU), then {warm:.2f} s ({warm_cpu:.2f} s CPU): compile ~{first - warm:.1f} s"
        )
        print(f"{'command':<22}{'wall':>9}{'CPU':>9}{'target':>9}{'seeds/002':>11}{'speed-up':>10}")
        for name in ("solve", "solve --all", "advice", "odds"):
            argv = name.split() + ["--model", args.model]
            runs = [run_command(argv, env) for _ in range(args.repeats)]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            target = f"< {TARGETS[name]:g} s" if name in TARGETS else "-"
            ref = SEED_002.get(name)
            ratio = f"{ref / wall:.0f}x" if ref else "-"
            ref_s = f"~{ref:g} s" if ref else "-"
            ok = "" if name not in TARGETS else ("  ok" if wall < TARGETS[name] else "  SLOW")
            print(f"flip7 {name:<16}{wall:>8.2f}s{cpu:>8.2f}s{target:>9}{ref_s:>11}{ratio:>10}{ok}")

    from flip7.solver import get_model, reachable, solve
    from flip7.solver.advice import advise
    from flip7.solver.families import policy_rows
    from flip7.solver.odds import compute

    model = get_model(args.model)
    solution = solve(model)  # loads the kernels
    rows = policy_rows(solution)
    print("in-process, kernels loaded (medians):")
    figures = [
        ("solve()", median_wall(lambda: solve(model), args.repeats)),
        ("reachable()", median_wall(lambda: reachable(solution.space), args.repeats)),
        (
            f"policy_rows(): {len(rows) - 1} policies",
            median_wall(lambda: policy_rows(solution), args.repeats),
        ),
        ("advise()", median_wall(lambda: advise(solution), args.repeats)),
        ("odds compute()", median_wall(lambda: compute(solution), args.repeats)),
    ]
    for name, secs in figures:
        print(f"  {name:<34}{secs:>8.3f} s")
    print(f"  {'dp policy, one decision':<34}{dp_decision_seconds() * 1e6:>8.2f} us")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
