"""A spec's [stop] comparison in the pipeline: shard sums, waves, the decision, its text.

A spec with `[stop] compare = [A, B]` has one cell where A and B share the table; every shard
task returns, beside its per-policy `stats`, the paired sums of A - B over its games
(`compare_sums`: for each metric the six RatioSums fields), and the manifest records them per
shard under `compare`. With `test = "sprt"` the driver (pipeline.run) also keeps a `Stopper`:
wave k is the shards that play games [k * shard_size, (k + 1) * shard_size) (in plan order), and
the test looks only at the prefix of waves 0..k that are all recorded, adding their sums in plan
order. So the looks, the decision and the games it took depend on the seed and the plan only,
never on the number of workers or the order in which shards finish; shards still running when
it decides are finished and kept, but not looked at. The manifest's `stop` entry holds the
test, every look and the decision; `--resume` recomputes them from the recorded shards.
With `test = "ranking"` (a league) the same waves, the k-th shard of every cell, feed the
ranking test of pipeline.ranking instead: each shard then returns its head-to-head sums
(`ahead`), and a sequential plan lists its shards wave by wave, so they run in that order.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from flip7.stats import Z95, RatioSums
from lakecontract import arrow
from pipeline import ranking, sprt

if TYPE_CHECKING:
    from flip7.cli import Output
    from pipeline.lake import Lake
    from pipeline.plan import Plan

#: How many of the last looks `tournament status` lists.
STATUS_WAVES = 8


def compare_sums(games: pa.Table, compare: tuple[str, ...]) -> dict[str, list[float]]:
    """Per metric, the RatioSums fields [G, Sy, Sn, Syy, Snn, Syn] of A - B over the games of a
    `games` table in which both A and B sit. win: y = A's wins / seats - B's, n = 1; points:
    y = A's points per seat - B's, n = the game's rounds (so Sy / Sn is the difference of
    points per round)."""
    a, b = compare
    names, policy = arrow.dictionary_codes(games["policy"])
    game = arrow.numpy(games["game"]).astype(np.int64)
    if len(game) == 0:
        return {"win": [0, *[0.0] * 5], "points": [0, *[0.0] * 5]}
    game = game - game.min()
    size = int(game.max()) + 1
    wins = arrow.numpy(games["winner"]).astype(np.float64)
    totals = arrow.numpy(games["total"]).astype(np.float64)
    rounds = np.zeros(size)
    rounds[game] = arrow.numpy(games["rounds"]).astype(np.float64)

    def per_game(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mask = policy == (names.index(name) if name in names else -1)
        g = game[mask]
        seats = np.bincount(g, minlength=size).astype(np.float64)
        return (
            seats,
            np.bincount(g, weights=wins[mask], minlength=size),
            np.bincount(g, weights=totals[mask], minlength=size),
        )

    seats_a, wins_a, points_a = per_game(a)
    seats_b, wins_b, points_b = per_game(b)
    both = (seats_a > 0) & (seats_b > 0)
    sa, sb = seats_a[both], seats_b[both]
    y_win = wins_a[both] / sa - wins_b[both] / sb
    y_pts = points_a[both] / sa - points_b[both] / sb
    return {"win": _sums(y_win, np.ones_like(y_win)), "points": _sums(y_pts, rounds[both])}


def _sums(y: np.ndarray, n: np.ndarray) -> list[float]:
    return [
        int(len(y)),
        *(float(x) for x in (y.sum(), n.sum(), (y * y).sum(), (n * n).sum(), (y * n).sum())),
    ]


def read_compare(lake: Lake, manifest: dict[str, Any], shard: str) -> dict[str, list[float]]:
    """`compare_sums` of one recorded shard, from its games file (an entry without them)."""
    cell = manifest["shards"][shard]["cell"]
    players = next(c["players"] for c in manifest["cells"] if c["cell"] == cell)
    path = lake.shard_path("games", manifest["run"], players, int(shard))
    columns = ["game", "policy", "winner", "total", "rounds"]
    table = pq.read_table(path, filesystem=lake.fs, columns=columns)
    return compare_sums(table, tuple(manifest["stop"]["compare"]))


# -- the manifest's `stop` entry -----------------------------------------------------------------


def manifest_entry(plan: Plan) -> dict[str, Any]:
    """What a new manifest records of the spec's [stop] table: {} for a plain fixed run."""
    stop = plan.spec.stop
    if stop.test == "ranking":
        return {"stop": ranking.manifest_entry(plan)}
    if not stop.compare:
        return {}
    entry: dict[str, Any] = {**stop.to_json(), "cell": plan.cells[0].cell}
    if stop.sequential:
        lower, upper = sprt.bounds(stop.alpha, stop.beta)
        entry.update(
            wave_games=plan.spec.shard_size,
            planned_games=plan.cells[0].games,  # max_games under --scale
            bounds=[lower, upper],
            waves=[],
            decision=None,
        )
    return {"stop": entry}


def stop_mismatch(manifest: dict[str, Any], plan: Plan) -> str | None:
    """The first [stop] field in which a recorded run and the spec differ, or None."""
    fresh = manifest_entry(plan).get("stop") or {}
    old = manifest.get("stop") or {}
    for key in ("test", "compare", "metric", "h0", "h1", "alpha", "beta", "max_games", "margin"):
        if old.get(key) != fresh.get(key):
            return f"stop.{key}: run has {old.get(key)!r}, spec gives {fresh.get(key)!r}"
    return None


def waves_of(plan: Plan) -> list[list[int]]:
    """The plan's waves: shard ids grouped by the games they play ([start, stop) within their
    cell), in plan order."""
    by_start: dict[int, list[int]] = {}
    for task in plan.shards:
        by_start.setdefault(task.start, []).append(task.shard)
    return [by_start[s] for s in sorted(by_start)]


class Stopper:
    """The sequential test of a run, fed with recorded shards; it writes `manifest["stop"]`:
    the SPRT of one comparison, or the ranking test of a league (pipeline.ranking)."""

    def __init__(self, lake: Lake, plan: Plan, manifest: dict[str, Any]) -> None:
        self.lake = lake
        self.manifest = manifest
        self.spec = plan.spec.stop
        self.waves = waves_of(plan)
        self.state: dict[str, Any] = manifest["stop"]
        self.lower, self.upper = self.state["bounds"]
        # Recomputed from the recorded shards, so a resumed run looks exactly as before.
        self.state["waves"] = []
        self.state["decision"] = None
        self.total = RatioSums()
        self.ranking = ranking.RankingTest(self.state) if self.spec.test == "ranking" else None
        self.advance()

    @property
    def decided(self) -> bool:
        return self.state["decision"] is not None

    def record(self) -> bool:
        """Look at every newly complete wave; True once the test has decided."""
        self.advance()
        return self.decided

    def _shard_sums(self, shard: int) -> RatioSums:
        entry = self.manifest["shards"][str(shard)]
        if "compare" not in entry:  # recorded by a worker that did not send them
            entry["compare"] = read_compare(self.lake, self.manifest, str(shard))
        g, *rest = entry["compare"][self.spec.metric]
        return RatioSums(int(g), *rest)

    def _shard_entry(self, shard: int) -> dict[str, Any]:
        entry: dict[str, Any] = self.manifest["shards"][str(shard)]
        if "ahead" not in entry:  # recorded by a worker that did not send them
            entry["ahead"] = ranking.read_ahead(self.lake, self.manifest, str(shard))
        return entry

    def advance(self) -> None:
        shards = self.manifest["shards"]
        looks = self.state["waves"]
        while not self.decided and len(looks) < len(self.waves):
            k = len(looks)
            ids = self.waves[k]
            if not all(str(i) in shards for i in ids):
                return
            last = k == len(self.waves) - 1
            if self.ranking is not None:
                entries = [self._shard_entry(i) for i in ids]  # plan order
                record, ends = self.ranking.look(entries, last)
                looks.append({"wave": k, "shards": ids, **record})
                if ends:
                    self.state["decision"] = ranking.decision_of(record, k)
                continue
            wave = RatioSums()
            for i in ids:  # plan order: the same float sums on every run
                wave = wave + self._shard_sums(i)
            self.total = self.total + wave
            seen = sprt.look(self.total, self.spec.h0, self.spec.h1)
            looks.append({"wave": k, "shards": ids, "sums": _fields(wave), **seen.to_json()})
            decision = sprt.decide(seen.llr, self.lower, self.upper)
            if decision is None and last:
                decision = sprt.INCONCLUSIVE
            if decision is not None:
                self.state["decision"] = {"result": decision, "wave": k, **seen.to_json()}

    def progress(self) -> str:
        """A short line for the progress bar: the LLR between its bounds, the estimate."""
        if self.ranking is not None:
            return ranking.progress(self.state)
        if not self.state["waves"]:
            return "SPRT: no complete wave yet"
        last = self.state["waves"][-1]
        return (
            f"LLR {last['llr']:+.2f} in [{self.lower:.2f}, {self.upper:.2f}]; "
            f"{difference_text(self.state, last)}"
        )


def _fields(s: RatioSums) -> list[float]:
    return [s.games, s.sum_y, s.sum_n, s.sum_yy, s.sum_nn, s.sum_yn]


# -- text ----------------------------------------------------------------------------------------


def difference_text(stop: dict[str, Any], seen: dict[str, Any], *, short: bool = False) -> str:
    """'ev − sum:15 = +4.10 ± 1.25 percentage points of win rate (95%)' from a look; `short`:
    '+4.10 ± 1.25'."""
    a, b = stop["compare"]
    scale, unit = (100, "percentage points of win rate") if stop["metric"] == "win" else (1, "")
    unit = unit or "points per round"
    x, h = (_defined(seen[k]) for k in ("estimate", "half_width"))
    value = "n/a" if x is None else f"{scale * x:+.2f}"
    half = "n/a" if h is None else f"{scale * h:.2f}"
    if short:
        return f"{value} ± {half}"
    return f"{a} − {b} = {value} ± {half} {unit} (95%)"


def _defined(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else x


def describe(stop: dict[str, Any]) -> str:
    """One line: the test and its parameters."""
    if stop["test"] == "ranking":
        return ranking.describe(stop)
    a, b = stop["compare"]
    what = "win rate" if stop["metric"] == "win" else "points per round"
    if stop["test"] != "sprt":
        return f"fixed-size comparison of {a} − {b} ({what})"
    scale = 100 if stop["metric"] == "win" else 1
    unit = " percentage points" if stop["metric"] == "win" else ""
    lower, upper = stop["bounds"]
    return (
        f"sequential test (SPRT) of {a} − {b} ({what}): H0 {scale * stop['h0']:+g} against "
        f"H1 {scale * stop['h1']:+g}{unit}, alpha {stop['alpha']:g}, beta {stop['beta']:g}; "
        f"LLR bounds [{lower:.2f}, {upper:.2f}], a look every {stop['wave_games']:,} games, "
        f"at most {stop['planned_games']:,}"
    )


def decision_line(stop: dict[str, Any]) -> str:
    """'H1 accepted after N games: A − B = x ± y (95%)', 'H0 accepted ...', 'inconclusive at the
    ceiling ...', or how far an undecided test has got."""
    if stop["test"] == "ranking":
        return ranking.decision_line(stop)
    decision = stop.get("decision")
    if decision is None:
        if not stop.get("waves"):
            return "no decision yet: no complete wave"
        last = stop["waves"][-1]
        return (
            f"no decision yet after {last['games']:,} games (LLR {last['llr']:+.2f}): "
            f"{difference_text(stop, last)}"
        )
    text = difference_text(stop, decision)
    n = decision["games"]
    if decision["result"] == sprt.INCONCLUSIVE:
        return f"inconclusive at the ceiling, {n:,} games (LLR {decision['llr']:+.2f}): {text}"
    return f"{decision['result']} accepted after {n:,} games: {text}"


def fixed_line(lake: Lake, manifest: dict[str, Any]) -> str:
    """A fixed run's comparison over every recorded game, with a one-sided test at `alpha`."""
    stop = manifest["stop"]
    total = RatioSums()
    for key in sorted(manifest["shards"], key=int):
        entry = manifest["shards"][key]
        sums = entry.get("compare") or read_compare(lake, manifest, key)
        g, *rest = sums[stop["metric"]]
        total = total + RatioSums(int(g), *rest)
    seen = sprt.look(total, stop["h0"], stop["h1"])
    text = difference_text(stop, seen.to_json())
    if math.isnan(seen.half_width):
        return f"over {total.games:,} games: {text}"
    # One-sided, toward h1: H1 when the estimate is z_{1-alpha} standard errors beyond h0.
    direction = 1.0 if stop["h1"] > stop["h0"] else -1.0
    z = direction * (seen.estimate - stop["h0"]) / (seen.half_width / Z95)
    verdict = "H1" if z >= sprt.z_quantile(1 - stop["alpha"]) else "H0"
    return (
        f"{verdict} accepted after {total.games:,} games (fixed size, one-sided at alpha "
        f"{stop['alpha']:g}): {text}"
    )


def summary_lines(lake: Lake, manifest: dict[str, Any], *, header: bool = True) -> list[str]:
    """What `tournament run` and `status` print of a run's [stop] comparison ([] if none):
    the test (unless `header` is False), its answer, and a note when the per-policy summary
    counts games played after the decision."""
    stop = manifest.get("stop")
    if not stop:
        return []
    head = [describe(stop)] if header else []
    if stop["test"] == "fixed":
        return [*head, fixed_line(lake, manifest)] if manifest["shards"] else []
    lines = [*head, decision_line(stop)]
    if stop["test"] == "ranking":
        lines += ranking.pair_lines(stop)
    decision = stop.get("decision")
    recorded = sum(s["games"] for s in manifest["shards"].values())
    if decision is not None and recorded > decision["games"]:
        lines.append(
            f"(the test decided on the first {decision['games']:,} games; the "
            f"{recorded - decision['games']:,} games of shards still running then were "
            f"finished and kept: the per-policy summary counts all {recorded:,})"
        )
    return lines


def status_lines(lake: Lake, manifest: dict[str, Any]) -> list[str]:
    """`summary_lines` and, for a sequential test, its last looks."""
    lines = summary_lines(lake, manifest)
    stop = manifest.get("stop") or {}
    looks = stop.get("waves") or []
    if not looks:
        return lines
    if stop["test"] == "ranking":
        lines.append(f"  {'look':>6}{'games':>12}{'decided':>9}")
        for w in looks[-STATUS_WAVES:]:
            done = f"{len(w['pairs']) - w['open']}/{len(w['pairs'])}"
            lines.append(f"  {w['wave']:>6}{w['games']:>12,}{done:>9}")
        return lines
    unit = "percentage points" if stop["metric"] == "win" else "points per round"
    lines.append(f"  {'look':>6}{'games':>12}{'LLR':>9}  {' − '.join(stop['compare'])} ({unit})")
    for w in looks[-STATUS_WAVES:]:
        est = difference_text(stop, w, short=True)
        lines.append(f"  {w['wave']:>6}{w['games']:>12,}{w['llr']:>+9.2f}  {est}")
    return lines


# -- flip7 plan-games ----------------------------------------------------------------------------


def cmd_plan_games(args: argparse.Namespace, out: Output) -> int:
    from pipeline.lake import Lake, default_root
    from pipeline.spec import load_spec

    stop = load_spec(args.spec).stop if args.spec else None
    if stop is not None and stop.test == "ranking":
        raise ValueError(
            f"{args.spec}: a ranking test has no single difference to size; plan-games sizes "
            "one comparison (a [stop] with compare = [A, B])"
        )
    metric = stop.metric if stop else "win"
    alpha = args.alpha if args.alpha is not None else (stop.alpha if stop else 0.05)
    beta = args.beta if args.beta is not None else (stop.beta if stop else 0.05)
    for name, p in (("--alpha", alpha), ("--beta", beta)):
        if not 0 < p < 0.5:
            raise ValueError(f"{name}: must be in (0, 0.5), got {p}")
    difference = args.difference
    if difference is not None:
        top = 1 if metric == "win" else math.inf
        if not (math.isfinite(difference) and 0 < difference < top):
            bound = "in (0, 1) for a win rate" if metric == "win" else "a finite number > 0"
            raise ValueError(
                f"--difference: the size of the difference to detect is {bound}, got "
                f"{difference:g}; e.g. 0.01 (one point of win rate)"
            )
    if difference is None and stop is not None:
        difference = stop.h1 - stop.h0
    if difference is None or difference == 0:
        raise ValueError("--difference: give the non-zero difference to detect (or a SPEC)")
    sd, source = args.sd, "given"
    if args.run:
        lake = Lake.open(args.data or default_root())
        manifest = lake.load_manifest(args.run)
        run_stop = manifest.get("stop")
        if not run_stop or run_stop["test"] == "ranking":
            raise ValueError(f"--run: run {args.run!r} compares no policies (no [stop] compare)")
        metric = run_stop["metric"]
        total = RatioSums()
        for key, entry in manifest["shards"].items():
            sums = entry.get("compare") or read_compare(lake, manifest, key)
            g, *rest = sums[metric]
            total = total + RatioSums(int(g), *rest)
        var = sprt.variance(total)
        if not var > 0:
            raise ValueError(f"--run: run {args.run!r} has too few games to estimate the sd")
        sd, source = math.sqrt(var * total.games), f"measured on run {args.run}"
    if sd is None:
        if metric != "win":
            raise ValueError("--sd: needed for points per round; or measure it with --run RUN")
        sd, source = 1.0, "the largest a win rate difference can have"
    if not (sd > 0 and math.isfinite(sd)):
        raise ValueError(f"--sd: must be a finite number > 0, got {sd:g}")
    n = sprt.fixed_games(difference, sd, alpha, beta)
    e0, e1 = sprt.expected_games(difference, sd, alpha, beta)
    unit = " (win rate)" if metric == "win" else " (points per round)"
    out.print(
        f"difference {difference:+g}{unit}, alpha {alpha:g}, power {1 - beta:.0%} (beta "
        f"{beta:g}); sd of one game's difference {sd:.4g} ({source})"
    )
    out.print(f"fixed-size test (one-sided): {n:,} games")
    out.print(
        f"sequential test (SPRT): about {e1:,} games on average when H1 holds, {e0:,} when H0 "
        "holds (Wald's approximation; fewer when the true difference is larger)"
    )
    return 0


def sequential_decided(manifest: dict[str, Any]) -> bool:
    """True when the run's sequential test has decided (the run is then complete)."""
    stop = manifest.get("stop") or {}
    return stop.get("decision") is not None
