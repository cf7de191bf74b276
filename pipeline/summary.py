"""The end-of-run summary: per cell and policy, win rate and points per round with 95% intervals.

A cell is one line-up at one field size under one ruleset of a run (the run fixes the variant);
a policy's numbers from different cells are never pooled. The figures follow the statistics contract of
flip7.stats: for each game g in which policy p sits, win rate y_g = p's wins, n_g = p's seats;
points per round y_g = the points of p's seats, n_g = their rounds (seats x rounds of the game);
95% intervals clustered by game.

Those sums are additive, so every shard task returns them for its games (`shard_stats`) and the
manifest records them per shard, compactly: per policy the eleven integers of STATS_FIELDS. The
summary adds them up from the manifest alone, in memory that does not grow with the number of
games. A shard recorded by an older version, without `stats`, is read from its own games file
(one shard at a time); the driver stores what it computes when it resumes such a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from flip7 import format as fmt
from flip7.format import Column, Table
from flip7.stats import Estimate, RatioSums
from lakecontract import arrow
from pipeline.lake import Lake

#: One policy's entry in a shard's `stats`: games it sat in, then (sum y, sum n, sum y^2,
#: sum n^2, sum y*n) of wins/seats and of points/rounds over those games.
STATS_FIELDS = (
    "games",
    "wins",
    "seats",
    "wins_sq",
    "seats_sq",
    "wins_seats",
    "points",
    "rounds",
    "points_sq",
    "rounds_sq",
    "points_rounds",
)
#: The games-table columns the statistics need.
STATS_COLUMNS = ["game", "policy", "winner", "total", "rounds"]


@dataclass(frozen=True)
class PolicyRow:
    cell: int
    lineup: str  # the line-up's label
    players: int
    variant: str
    ruleset: str
    policy: str
    games: int  # games in which the policy sat
    seats: int  # games x seats it filled
    win: Estimate  # wins / seats, clipped to [0, 1]
    ppr: Estimate  # points per round: points / seat-rounds

    @property
    def win_rate(self) -> float:
        return self.win.value


def shard_stats(games: pa.Table) -> dict[str, list[int]]:
    """Per policy, the STATS_FIELDS sums over the games of one shard's `games` rows (one row
    per game and seat; columns STATS_COLUMNS). Vectorised: a few bincounts per shard."""
    if games.num_rows == 0:
        return {}
    names, code = arrow.dictionary_codes(games["policy"])
    code = code.astype(np.int64)
    game = arrow.numpy(games["game"]).astype(np.int64)
    game = game - game.min()
    n_games, n_pol = int(game.max()) + 1, len(names)
    key = game * n_pol + code  # one bin per (game, policy)
    size = n_games * n_pol

    def per_key(weights: np.ndarray | None) -> np.ndarray:
        # float64 bincount weights are exact for these integers (far below 2**53)
        counts = np.bincount(key, weights=weights, minlength=size)
        return counts.astype(np.int64).reshape(n_games, n_pol)

    seats = per_key(None)
    wins = per_key(arrow.numpy(games["winner"]).astype(np.float64))
    points = per_key(arrow.numpy(games["total"]).astype(np.float64))
    rounds = per_key(arrow.numpy(games["rounds"]).astype(np.float64))  # seats x rounds
    out: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        sat = seats[:, j] > 0
        if not sat.any():
            continue
        w, s, p, r = wins[sat, j], seats[sat, j], points[sat, j], rounds[sat, j]
        out[name] = [
            int(sat.sum()),
            *(int(x) for x in (w.sum(), s.sum(), (w * w).sum(), (s * s).sum(), (w * s).sum())),
            *(int(x) for x in (p.sum(), r.sum(), (p * p).sum(), (r * r).sum(), (p * r).sum())),
        ]
    return out


def read_shard_stats(lake: Lake, manifest: dict[str, Any], shard: str) -> dict[str, list[int]]:
    """`shard_stats` of one recorded shard, from its games file (for shards whose manifest
    entry has no `stats`: written by an older version)."""
    cell = manifest["shards"][shard]["cell"]
    players = next(c["players"] for c in manifest["cells"] if c["cell"] == cell)
    path = lake.shard_path("games", manifest["run"], players, int(shard))
    return shard_stats(pq.read_table(path, filesystem=lake.fs, columns=STATS_COLUMNS))


def fill_stats(lake: Lake, manifest: dict[str, Any]) -> int:
    """Compute and store `stats` for recorded shards that lack them; how many there were."""
    missing = [k for k, info in manifest["shards"].items() if "stats" not in info]
    for key in missing:
        manifest["shards"][key]["stats"] = read_shard_stats(lake, manifest, key)
    return len(missing)


def run_stats(lake: Lake, manifest: dict[str, Any]) -> dict[tuple[int, str], list[int]]:
    """Per (cell, policy), the STATS_FIELDS sums over every recorded shard: from the manifest,
    or from a shard's games file where its entry has no `stats` (not stored: read-only)."""
    totals: dict[tuple[int, str], list[int]] = {}
    for key, info in manifest["shards"].items():
        stats = info.get("stats")
        if stats is None:
            stats = read_shard_stats(lake, manifest, key)
        for policy, sums in stats.items():
            acc = totals.setdefault((info["cell"], policy), [0] * len(STATS_FIELDS))
            for i, x in enumerate(sums):
                acc[i] += x
    return totals


def summarize(
    manifest: dict[str, Any], totals: dict[tuple[int, str], list[int]]
) -> list[PolicyRow]:
    """One row per (cell, policy), cells in plan order, policies in line-up order."""
    rows: list[PolicyRow] = []
    for c in manifest["cells"]:
        label = c.get("label") or ",".join(c["lineup"])
        for policy in dict.fromkeys(c["lineup"]):
            sums = totals.get((c["cell"], policy))
            if sums is None:
                continue
            g = sums[0]
            win = RatioSums(g, *sums[1:6]).estimate(clip=(0.0, 1.0))
            ppr = RatioSums(g, *sums[6:11]).estimate()
            rows.append(
                PolicyRow(
                    c["cell"],
                    label,
                    c["players"],
                    manifest["variant"],
                    cell_ruleset(manifest, c),
                    policy,
                    g,
                    sums[2],
                    win,
                    ppr,
                )
            )
    return rows


def cell_ruleset(manifest: dict[str, Any], cell: dict[str, Any]) -> str:
    """A manifest cell's ruleset: its own, or the run's (a manifest written before cells named
    theirs)."""
    return str(cell.get("ruleset") or manifest["ruleset"])


def run_summary(lake: Lake, manifest: dict[str, Any]) -> list[PolicyRow]:
    """The summary of every recorded shard of a run (see the module docstring)."""
    return summarize(manifest, run_stats(lake, manifest))


def summary_table(rows: list[PolicyRow]) -> Table:
    """The summary as a table: a row per cell and policy (csv, markdown; the text format
    groups the rows under a heading per cell)."""
    return Table(
        [
            Column("line-up", right=False, key="lineup"),
            Column("players"),
            Column("policy", right=False),
            Column("games", fmt.count),
            Column("seats", fmt.count),
            Column("win rate [95%]", fmt.format_rate, False, "win_rate", fmt.estimate_fields),
            Column("fair", fmt.rate),
            Column(
                "pts/round ± 95%", fmt.format_mean, True, "points_per_round", fmt.estimate_fields
            ),
        ],
        [
            [r.lineup, r.players, r.policy, r.games, r.seats, r.win, 1 / r.players, r.ppr]
            for r in rows
        ],
        title="summary",
    )


def summary_json(rows: list[PolicyRow]) -> list[dict[str, Any]]:
    """The summary for JSON: a record per cell and policy (docs/output.md)."""
    return [
        {
            "cell": r.cell,
            "lineup": r.lineup,
            "players": r.players,
            "variant": r.variant,
            "ruleset": r.ruleset,
            "policy": r.policy,
            "games": r.games,
            "seats": r.seats,
            "win_rate": fmt.estimate_json(r.win),
            "fair": 1 / r.players,
            "points_per_round": fmt.estimate_json(r.ppr),
        }
        for r in rows
    ]


def format_summary(rows: list[PolicyRow], colour: bool = False) -> list[str]:
    """The summary as text lines: the header, then a heading per cell over its policies' rows
    (one table, so the columns line up across cells), then the footnote."""
    if not rows:
        return ["(no finished games yet)"]
    t = summary_table(rows)
    t.columns = t.columns[2:]
    t.rows = [row[2:] for row in t.rows]
    lines = fmt.table_lines(t, colour, indent=2)
    out = lines[:2]
    cell = None
    for r, line in zip(rows, lines[2:], strict=True):
        if r.cell != cell:
            cell = r.cell
            out.append(f"{r.lineup}: {r.players} players, variant {r.variant}, ruleset {r.ruleset}")
        out.append(line)
    out.append(f"({fmt.INTERVAL_NOTE}; fair = 1 / players)")
    return out
