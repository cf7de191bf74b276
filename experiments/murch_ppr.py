"""Points per round against Murch's simulator: where our figure grows with the table.

    python experiments/murch_ppr.py --players 2 4 6 --games 6000
    python experiments/murch_ppr.py --players 4 6 --games 30000 --freeze threat

For the equal `ev` / `bust:0.25` mix under ruleset `immediate`, on the reference engine, it
prints each policy's points per round with its 95% interval (clustered by game), and splits the
seat-rounds into those the seat ended frozen and the rest: points banked per frozen round and
per other round. `--freeze` picks whom a Freeze that is not kept goes to among the other
players: `flip7` (the shared heuristic, closest to Flip 7: most numbers, then most points),
`turn` (most numbers, ties in turn order: the ruleset override freeze_ties=1) or `threat` (the
biggest threat, as a Flip Three: banked total plus points showing). `threat` is not a reading
of Murch's text; it measures how much the Freeze's target weighs (docs/experiments.md).
"""

from __future__ import annotations

import argparse
import dataclasses

from flip7.cards import Card
from flip7.engine import Engine
from flip7.observation import FROZEN
from flip7.policies import parse_policies
from flip7.policies.base import Policy, points
from flip7.rng import derive_seed
from flip7.rules import parse_ruleset
from flip7.simulate import PolicyStats, rotated
from flip7.stats import Estimate


class FreezeThreat(Policy):
    """A built-in policy whose Freeze, when not kept, goes to the biggest threat."""

    def __init__(self, inner: Policy) -> None:
        self.inner, self.spec, self.counting = inner, inner.spec, inner.counting

    def hit(self, obs):  # type: ignore[no-untyped-def]
        return self.inner.hit(obs)

    def choose_target(self, obs, card, candidates):  # type: ignore[no-untyped-def]
        got = self.inner.choose_target(obs, card, candidates)
        others = [q for q in candidates if q != obs.seat]
        if card != Card.FREEZE or got == obs.seat or not others:
            return got
        return max(others, key=lambda q: (obs.totals[q] + points(obs, q), -q))


@dataclasses.dataclass(frozen=True)
class Split:
    """One policy's figures at a table: win rate and points per round (each an estimate with
    its 95% interval), and its seat-rounds split into frozen and the rest."""

    win: Estimate
    ppr: Estimate
    frozen_share: float  # of its seat-rounds, those it ended frozen
    frozen_ppr: float  # points banked per frozen round
    other_ppr: float  # per other round


def measure(players: int, games: int, seed: int, freeze: str) -> dict[str, Split]:
    """Each policy's Split over `games` games of the mix at `players` seats (reference engine)."""
    ruleset = parse_ruleset("immediate")
    if freeze == "turn":
        ruleset = dataclasses.replace(ruleset, freeze_ties=1)
    lineup = parse_policies(",".join(["ev", "bust:0.25"] * (players // 2)))
    if freeze == "threat":
        lineup = [FreezeThreat(p) for p in lineup]
    stats = {p.spec: PolicyStats(p.spec) for p in lineup}
    frozen = {p.spec: [0, 0] for p in lineup}  # frozen seat-rounds, their points
    for i in range(games):
        seats = rotated(lineup, i)
        r = Engine(ruleset, seats, derive_seed(seed, 0, i), capture=False).run()
        mine: dict[str, list[int]] = {}
        for s, pol in enumerate(seats):
            t = mine.setdefault(pol.spec, [0, 0, 0])
            t[0] += 1
            t[1] += r.winner == s
            for scores, status in zip(r.round_scores, r.round_status, strict=True):
                t[2] += scores[s]
                if status[s] == FROZEN:
                    frozen[pol.spec][0] += 1
                    frozen[pol.spec][1] += scores[s]
        for spec, (n, wins, pts) in mine.items():
            stats[spec].add_game(n, wins, n * r.rounds, pts)
    out = {}
    for spec, st in sorted(stats.items()):
        nf, pf = frozen[spec]
        out[spec] = Split(
            st.win_estimate(),
            st.ppr_estimate(),
            nf / st.rounds,
            pf / max(nf, 1),
            (st.points - pf) / (st.rounds - nf),
        )
    return out


def run(players: int, games: int, seed: int, freeze: str) -> None:
    for spec, f in measure(players, games, seed, freeze).items():
        w, p = f.win, f.ppr
        print(
            f"{players}p freeze={freeze} {games} games  {spec:<9}  win {w.value:.4f} "
            f"[{w.lo:.4f}, {w.hi:.4f}]  pts/round {p.value:.3f} [{p.lo:.3f}, {p.hi:.3f}]  "
            f"frozen {f.frozen_share:.1%} of rounds, {f.frozen_ppr:.2f} pts each; "
            f"other rounds {f.other_ppr:.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    ap.add_argument("--games", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--freeze", choices=("flip7", "turn", "threat"), default="flip7")
    args = ap.parse_args()
    for n in args.players:
        run(n, args.games, args.seed, args.freeze)


if __name__ == "__main__":
    main()
