"""Reference-engine speed on one core: four-player games/s and events/s, with and without
event capture, for `sum:20` and `ev` tables.

    python benchmarks/engine.py [--games 2000] [--repeats 5]

Times are CPU seconds of this process (time.process_time), so other load on the machine
disturbs them less than wall time; each figure is the median of --repeats runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import median_rate  # noqa: E402
from flip7.engine import Engine  # noqa: E402
from flip7.events import EventKind  # noqa: E402
from flip7.policies import parse_policies  # noqa: E402
from flip7.rules import parse_ruleset  # noqa: E402

FLOOR = 5000  # four-player sum:20 games per CPU-second with events captured (issue 2)


def measure(specs: str, capture: bool, games: int, repeats: int) -> tuple[float, float, float]:
    """(games/s, events/s, card draws/s) medians over repeats."""
    ruleset = parse_ruleset("3.1")
    lineup = parse_policies(specs)
    events = draws = 0

    def play() -> None:
        nonlocal events, draws
        events = draws = 0
        for seed in range(games):
            result = Engine(ruleset, lineup, seed, capture=capture).run()
            if capture:
                ev = result.events
                events += len(ev) // 5
                draws += ev[0::5].count(EventKind.DRAW)

    rate = median_rate(games, repeats, play)
    per_game_events = events / games if capture else 0.0
    per_game_draws = draws / games if capture else 0.0
    return rate, rate * per_game_events, rate * per_game_draws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"reference engine, 4 players, one core, median of {args.repeats} x {args.games} games")
    print(f"{'line-up':<10}{'events':>8}{'games/s':>10}{'events/s':>12}{'cards/s':>11}")
    results = {}
    for name, specs in (("sum:20", "sum:20,sum:20,sum:20,sum:20"), ("ev", "ev,ev,ev,ev")):
        for capture in (True, False):
            rate, ev_rate, card_rate = measure(specs, capture, args.games, args.repeats)
            results[(name, capture)] = rate
            ev_s = f"{ev_rate:>12,.0f}" if capture else f"{'-':>12}"
            cards = f"{card_rate:>11,.0f}" if capture else f"{'-':>11}"
            print(f"{name:<10}{'on' if capture else 'off':>8}{rate:>10,.0f}{ev_s}{cards}")
    r = results[("sum:20", True)]
    print(f"sum:20 with events: {r:,.0f} games/s = {r / FLOOR:.2f}x the {FLOOR:,} floor")
    print(f"cost of capture (sum:20): {results[('sum:20', False)] / r - 1:+.1%}")


if __name__ == "__main__":
    main()
