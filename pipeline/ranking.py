"""The ranking stop rule: a league stops once every adjacent pair of its ranking is decided.

A spec with `[stop] test = "ranking"` plays its line-ups in waves (wave k: the k-th shard of
every cell, pipeline.sequential) and after each complete wave looks at the head-to-head sums
the shards' rollups hold (pipeline.rollups, grouping `versus`, figure `ahead`: per game, the
meetings of A and B that A finished ahead of B, over the meetings not tied; a game is a
cluster). From them:

- the ranking: policies ordered by their mean head-to-head rate over the others (under the
  Plackett-Luce model the ratings fit, A finishes ahead of B with chance sigma(theta_A -
  theta_B) at any table, so this mean orders them as the ratings do);
- for each adjacent pair (A above B), a sequential test of p = P(A ahead of B) on its pooled
  head-to-head rate R (cluster-robust variance V): H0 "equivalent", p = 1/2, against H1
  "separated", |p - 1/2| = margin. The LLR of the nearer side, margin (|R - 1/2| - margin/2) / V,
  is two one-sided SPRTs (pipeline.sprt.look toward 1/2 + margin and 1/2 - margin) of which the
  larger counts; Sobel and Wald's three-decision test.

Multiplicity: with K policies there are K - 1 adjacent pairs; each pair's test runs at
alpha / (K - 1) (split again over its two sides) and beta / (K - 1) (Bonferroni), so the
chance that any adjacent pair is wrongly separated is at most alpha and wrongly declared
equivalent at most beta, up to the normal approximation. The run stops at the first look at
which every adjacent pair is decided at once; at the ceiling (the line-ups' games) it ends
inconclusive, naming the pairs still open.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from flip7.stats import RatioSums
from pipeline import sprt

if TYPE_CHECKING:
    from pipeline.lake import Lake
    from pipeline.plan import Plan

SEPARATED, EQUIVALENT = "separated", "equivalent"
DECIDED = "decided"
#: One shard's head-to-head sums: [A, B, G, Sy, Sn, Syy, Snn, Syn] with A < B by name, y = the
#: meetings A finished ahead of B in a game, n = its meetings that were not tied.
Row = list[Any]


def ahead_rows(rollups: pa.Table) -> list[Row]:
    """The head-to-head rows of a shard's rollup table (pipeline.rollups), A < B by name."""
    keep = pc.and_(
        pc.equal(rollups["grouping"].cast(pa.string()), "versus"),
        pc.equal(rollups["figure"].cast(pa.string()), "ahead"),
    )
    rows = (
        rollups.filter(keep)
        .select(["policy", "opponent", "games", "y", "n", "yy", "nn", "yn"])
        .to_pylist()
    )
    return [
        [r["policy"], r["opponent"], r["games"], r["y"], r["n"], r["yy"], r["nn"], r["yn"]]
        for r in sorted(rows, key=lambda r: (r["policy"], r["opponent"]))
        if r["policy"] < r["opponent"]
    ]


def read_ahead(lake: Lake, manifest: dict[str, Any], shard: str) -> list[Row]:
    """`ahead_rows` of one recorded shard, from its rollups file (an entry without them)."""
    cell = manifest["shards"][shard]["cell"]
    players = next(c["players"] for c in manifest["cells"] if c["cell"] == cell)
    path = lake.shard_path("rollups", manifest["run"], players, int(shard))
    return ahead_rows(pq.read_table(path, filesystem=lake.fs))


def flipped(s: RatioSums) -> RatioSums:
    """The sums of B over A from those of A over B: y' = n - y in every game."""
    return RatioSums(
        s.games,
        s.sum_n - s.sum_y,
        s.sum_n,
        s.sum_nn - 2.0 * s.sum_yn + s.sum_yy,
        s.sum_nn,
        s.sum_nn - s.sum_yn,
    )


class Sums:
    """Head-to-head sums added up over shards, per pair of policies (A < B by name)."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[str, str], RatioSums] = {}

    def add(self, rows: Iterable[Row]) -> None:
        for a, b, g, *rest in rows:
            key = (a, b)
            self.pairs[key] = self.pairs.get(key, RatioSums()) + RatioSums(int(g), *rest)

    def of(self, a: str, b: str) -> RatioSums:
        """A over B: y counts A's meetings ahead of B."""
        if a < b:
            return self.pairs.get((a, b), RatioSums())
        return flipped(self.pairs.get((b, a), RatioSums()))


def ranking(policies: Sequence[str], sums: Sums) -> list[str]:
    """The policies, best first, by their mean head-to-head rate over the opponents they met
    (an opponent met in no decided meeting counts for nothing); ties in name order."""

    def score(a: str) -> float:
        rates = [s.sum_y / s.sum_n for b in policies if b != a and (s := sums.of(a, b)).sum_n]
        return sum(rates) / len(rates) if rates else 0.5

    return sorted(policies, key=lambda a: (-score(a), a))


@dataclass(frozen=True)
class PairLook:
    """One adjacent pair at a look: `above` finishes ahead of `below` in `estimate` of their
    decided meetings (± `half_width`, 95%); its LLR and verdict (None: still open)."""

    above: str
    below: str
    meetings: int
    estimate: float
    half_width: float
    llr: float
    verdict: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "above": self.above,
            "below": self.below,
            "meetings": self.meetings,
            "estimate": _finite(self.estimate),
            "half_width": _finite(self.half_width),
            "llr": self.llr,
            "verdict": self.verdict,
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def pair_error_rates(alpha: float, beta: float, policies: int) -> tuple[float, float]:
    """Each adjacent pair's (alpha, beta): the run's split over its K - 1 pairs (Bonferroni)."""
    pairs = max(policies - 1, 1)
    return alpha / pairs, beta / pairs


def bounds(alpha: float, beta: float, policies: int) -> tuple[float, float]:
    """Each pair's (lower, upper) LLR bounds: its alpha split again over the two directions."""
    a, b = pair_error_rates(alpha, beta, policies)
    return sprt.bounds(a / 2.0, b)


def pair_look(a: str, b: str, s: RatioSums, margin: float, lower: float, upper: float) -> PairLook:
    """The test of `a` over `b` from their sums: the larger LLR of the two one-sided SPRTs."""
    up = sprt.look(s, 0.5, 0.5 + margin)
    down = sprt.look(s, 0.5, 0.5 - margin)
    llr = max(up.llr, down.llr)
    verdict = sprt.decide(llr, lower, upper)
    name = {sprt.H1: SEPARATED, sprt.H0: EQUIVALENT}.get(verdict) if verdict else None
    return PairLook(a, b, int(round(s.sum_n)), up.estimate, up.half_width, llr, name)


def look(
    policies: Sequence[str], sums: Sums, margin: float, lower: float, upper: float
) -> tuple[list[str], list[PairLook]]:
    """The ranking and the test of each of its adjacent pairs."""
    order = ranking(policies, sums)
    pairs = [
        pair_look(a, b, sums.of(a, b), margin, lower, upper)
        for a, b in zip(order, order[1:], strict=False)
    ]
    return order, pairs


# -- the manifest's `stop` entry and the Stopper's test ------------------------------------------


def policies_of(plan: Plan) -> list[str]:
    """Every policy the plan seats, by name."""
    return sorted({p for c in plan.cells for p in c.lineup})


def manifest_entry(plan: Plan) -> dict[str, Any]:
    """What a new manifest records of a ranking test."""
    stop = plan.spec.stop
    policies = policies_of(plan)
    pair_alpha, pair_beta = pair_error_rates(stop.alpha, stop.beta, len(policies))
    return {
        **stop.to_json(),
        "policies": policies,
        "pair_alpha": pair_alpha,
        "pair_beta": pair_beta,
        "bounds": list(bounds(stop.alpha, stop.beta, len(policies))),
        "wave_games": sum(min(plan.spec.shard_size, c.games) for c in plan.cells),
        "planned_games": plan.games,
        "waves": [],
        "decision": None,
    }


class RankingTest:
    """The Stopper's test for `test = "ranking"`: sums added wave by wave, one look each."""

    def __init__(self, stop: dict[str, Any]) -> None:
        self.stop = stop
        self.lower, self.upper = stop["bounds"]
        self.sums = Sums()
        self.games = 0

    def look(self, entries: list[dict[str, Any]], last: bool) -> tuple[dict[str, Any], bool]:
        """Add a wave's shard entries (each with its `ahead` rows); the look's record and
        whether it ends the test (every pair decided, or `last`: the ceiling)."""
        for entry in entries:
            self.sums.add(entry["ahead"])
            self.games += int(entry["games"])
        order, pairs = look(
            self.stop["policies"], self.sums, self.stop["margin"], self.lower, self.upper
        )
        record = {
            "games": self.games,
            "order": order,
            "pairs": [p.to_json() for p in pairs],
            "open": sum(p.verdict is None for p in pairs),
        }
        return record, record["open"] == 0 or last


def decision_of(record: dict[str, Any], wave: int) -> dict[str, Any]:
    """The decision a final look records: `decided`, or `inconclusive` at the ceiling."""
    result = DECIDED if record["open"] == 0 else sprt.INCONCLUSIVE
    return {"result": result, "wave": wave, **record}


# -- text ----------------------------------------------------------------------------------------


def describe(stop: dict[str, Any]) -> str:
    """One line: the rule and its parameters."""
    k = len(stop["policies"])
    lower, upper = stop["bounds"]
    return (
        f"ranking test of {k} policies: stop when each of the {k - 1} adjacent pairs is "
        f"separated (one finishes ahead of the other in 1/2 + {stop['margin']:g} of their "
        f"meetings or more) or equivalent (1/2), alpha {stop['alpha']:g}, beta {stop['beta']:g} "
        "in all "
        f"({stop['pair_alpha']:.3g} and {stop['pair_beta']:.3g} a pair); LLR bounds "
        f"[{lower:.2f}, {upper:.2f}], a look every {stop['wave_games']:,} games, at most "
        f"{stop['planned_games']:,}"
    )


def pair_text(p: dict[str, Any]) -> str:
    """'evc over race: ahead in 51.2% ± 1.1 of 4,120 meetings (LLR +2.10)'."""
    x, h = p["estimate"], p["half_width"]
    rate = "n/a" if x is None else f"{100 * x:.1f}%"
    spread = "" if h is None else f" ± {100 * h:.1f}"
    return (
        f"{p['above']} over {p['below']}: ahead in {rate}{spread} of {p['meetings']:,} "
        f"meetings (LLR {p['llr']:+.2f})"
    )


def decision_line(stop: dict[str, Any]) -> str:
    """Why the run stopped (or how far it has got): pairs decided out of all."""
    decision = stop.get("decision")
    seen = decision or (stop["waves"][-1] if stop.get("waves") else None)
    if seen is None:
        return "no decision yet: no complete wave"
    pairs = seen["pairs"]
    done = len(pairs) - seen["open"]
    counts = (
        f"{sum(p['verdict'] == SEPARATED for p in pairs)} separated, "
        f"{sum(p['verdict'] == EQUIVALENT for p in pairs)} equivalent"
    )
    n = seen["games"]
    if decision is None:
        return f"no decision yet after {n:,} games: {done} of {len(pairs)} pairs decided ({counts})"
    if decision["result"] == DECIDED:
        return f"every adjacent pair decided after {n:,} games ({counts}): the run stopped there"
    return (
        f"inconclusive at the ceiling, {n:,} games: {done} of {len(pairs)} pairs decided "
        f"({counts}), {seen['open']} still open"
    )


def pair_lines(stop: dict[str, Any]) -> list[str]:
    """The ranking at the decision (or the last look), one adjacent pair a line."""
    seen = stop.get("decision") or (stop["waves"][-1] if stop.get("waves") else None)
    if seen is None:
        return []
    return [f"  {p['verdict'] or 'open':<11} {pair_text(p)}" for p in seen["pairs"]]


def progress(stop: dict[str, Any]) -> str:
    """A short line for the progress bar."""
    if not stop["waves"]:
        return "ranking: no complete wave yet"
    last = stop["waves"][-1]
    return f"ranking: {len(last['pairs']) - last['open']}/{len(last['pairs'])} pairs decided"
