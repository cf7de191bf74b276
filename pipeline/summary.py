"""The end-of-run summary: win rate and points per round per policy per field size, 95% CIs.

Rows are grouped by line-up (the spec's [[lineups]] name) and field size, so that a policy's
numbers from different tables are never pooled.

Read from the written `games` files of finished shards (the commit markers), so a resumed run
summarises everything, not only what this driver ran. Both numbers are ratios over games:
win rate = wins / seats played, points per round = points / rounds played. Seats of one game are
not independent (they compete, and a policy may fill several seats), so the intervals are
cluster-robust with the game as the cluster (the delta method for a ratio of sums), not the
binomial formula that would treat every seat as its own trial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.lake import Lake

Z95 = 1.959963984540054


@dataclass(frozen=True)
class PolicyRow:
    lineup: str  # the line-up's label
    players: int
    policy: str
    games: int  # games in which the policy sat
    seats: int  # games x seats it filled
    win_rate: float
    win_ci: float  # half-width of the 95% interval
    ppr: float  # points per round
    ppr_ci: float


def ratio_ci(num: np.ndarray, den: np.ndarray) -> tuple[float, float]:
    """sum(num) / sum(den) over clusters, and the 95% half-width (delta method)."""
    n = len(num)
    total = float(den.sum())
    if n == 0 or total == 0:
        return math.nan, math.nan
    r = float(num.sum()) / total
    if n < 2:
        return r, math.nan
    resid = num - r * den
    var = float((resid * resid).sum()) / (n * (n - 1)) / (total / n) ** 2
    return r, Z95 * math.sqrt(var)


def read_games(lake: Lake, manifest: dict[str, Any]) -> pa.Table:
    """The games rows of every finished shard, with `players` and `label` columns (from the
    cell)."""
    players_of = {c["cell"]: c["players"] for c in manifest["cells"]}
    label_of = {c["cell"]: c.get("label") or ",".join(c["lineup"]) for c in manifest["cells"]}
    parts = []
    for key, info in sorted(manifest["shards"].items(), key=lambda kv: int(kv[0])):
        n = players_of[info["cell"]]
        path = lake.shard_path("games", manifest["run"], n, int(key))
        t = pq.read_table(
            path,
            filesystem=lake.fs,
            columns=["game", "policy", "winner", "total", "rounds"],
        )
        t = t.append_column("players", pa.array(np.full(t.num_rows, n, np.int8)))
        parts.append(t.append_column("label", pa.array([label_of[info["cell"]]] * t.num_rows)))
    if not parts:
        return pa.table(
            {
                "game": pa.array([], pa.int64()),
                "policy": pa.array([], pa.string()),
                "winner": pa.array([], pa.bool_()),
                "total": pa.array([], pa.int32()),
                "rounds": pa.array([], pa.int16()),
                "players": pa.array([], pa.int8()),
                "label": pa.array([], pa.string()),
            }
        )
    return pa.concat_tables(parts, promote_options="permissive")


def summarize(games: pa.Table) -> list[PolicyRow]:
    """Per (field size, policy): win rate and points per round with 95% CIs."""
    if games.num_rows == 0:
        return []
    t = games.set_column(
        games.schema.get_field_index("policy"), "policy", pc.cast(games["policy"], pa.string())
    )
    t = t.append_column("wins", pc.cast(t["winner"], pa.int64()))
    t = t.append_column("pts", pc.cast(t["total"], pa.int64()))
    t = t.append_column("rnds", pc.cast(t["rounds"], pa.int64()))
    per_game = t.group_by(["label", "players", "policy", "game"]).aggregate(
        [("wins", "sum"), ("pts", "sum"), ("rnds", "sum"), ("wins", "count")]
    )
    rows: list[PolicyRow] = []
    keys = per_game.select(["label", "players", "policy"]).to_pylist()
    cols = {
        name: per_game[name].to_numpy().astype(np.float64)
        for name in ("wins_sum", "pts_sum", "rnds_sum", "wins_count")
    }
    groups: dict[tuple[str, int, str], list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault((k["label"], k["players"], k["policy"]), []).append(i)
    game_ids = per_game["game"].to_numpy()
    first: dict[str, int] = {}  # each line-up's first game id: plan order
    for (label, _, _), idx in groups.items():
        first[label] = min(first.get(label, 2**62), int(game_ids[idx].min()))
    order = sorted(groups, key=lambda g: (first[g[0]], g))
    for label, players, policy in order:
        idx = groups[(label, players, policy)]
        ix = np.asarray(idx)
        seats = cols["wins_count"][ix]
        win, win_ci = ratio_ci(cols["wins_sum"][ix], seats)
        ppr, ppr_ci = ratio_ci(cols["pts_sum"][ix], cols["rnds_sum"][ix])
        rows.append(
            PolicyRow(label, players, policy, len(ix), int(seats.sum()), win, win_ci, ppr, ppr_ci)
        )
    return rows


def format_summary(rows: list[PolicyRow]) -> list[str]:
    """The summary as text lines (a table; ± is the 95% interval's half-width)."""
    if not rows:
        return ["(no finished games yet)"]
    width = max(12, *(len(r.policy) for r in rows)) + 2
    lines = [
        f"{'players':>7}  {'policy':<{width}}{'games':>8}{'seats':>8}"
        f"{'win rate':>10}{'± 95%':>8}{'fair':>7}{'pts/round':>11}{'± 95%':>8}"
    ]
    label = None
    for r in rows:
        if r.lineup != label:
            label = r.lineup
            lines.append(f"{label}:")
        lines.append(
            f"{r.players:>7}  {r.policy:<{width}}{r.games:>8}{r.seats:>8}"
            f"{r.win_rate:>10.1%}{_pct(r.win_ci):>8}{1 / r.players:>7.1%}"
            f"{r.ppr:>11.2f}{_num(r.ppr_ci):>8}"
        )
    lines.append(
        "(± is the half-width of a 95% confidence interval, clustered by game; fair = 1 / players)"
    )
    return lines


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.1%}"


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2f}"
