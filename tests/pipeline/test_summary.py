"""The run summary: added up from the manifest's per-shard statistics (no games file read), equal
to flip7.stats over the games rows, exact across --resume, and the same in `status` and `run`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from flip7.cli import main
from flip7.stats import RatioSums
from pipeline import cli as pipeline_cli
from pipeline.lake import Lake
from pipeline.plan import Plan
from pipeline.run import RunReport, finish, prepare, record_shard
from pipeline.summary import STATS_FIELDS, PolicyRow, run_summary, shard_stats
from pipeline.task import run_shard
from tests.pipeline.helpers import read_run, run_inline, small_plan, write_spec


def expected_rows(root: Path, plan: Plan) -> dict[tuple[int, str], tuple[Any, ...]]:
    """Per (cell, policy), recomputed here from the games rows: (games, seats, win estimate,
    points-per-round estimate), with flip7.stats over per-game (y, n) pairs."""
    per_game: dict[tuple[int, str], dict[int, list[int]]] = {}
    for r in read_run(root, "games").to_pylist():
        g = per_game.setdefault((r["cell"], r["policy"]), {}).setdefault(r["game"], [0, 0, 0, 0])
        g[0] += r["winner"]
        g[1] += 1
        g[2] += r["total"]
        g[3] += r["rounds"]
    out = {}
    for key, games in per_game.items():
        win = RatioSums.of((w, s) for w, s, _, _ in games.values()).estimate(clip=(0.0, 1.0))
        ppr = RatioSums.of((p, r) for _, _, p, r in games.values()).estimate()
        out[key] = (len(games), sum(s for _, s, _, _ in games.values()), win, ppr)
    return out


def assert_rows_match(rows: list[PolicyRow], want: dict[tuple[int, str], tuple[Any, ...]]) -> None:
    assert {(r.cell, r.policy) for r in rows} == set(want)
    for r in rows:
        games, seats, win, ppr = want[(r.cell, r.policy)]
        assert (r.games, r.seats) == (games, seats)
        for got, exp in ((r.win, win), (r.ppr, ppr)):
            for a, b in ((got.value, exp.value), (got.lo, exp.lo), (got.hi, exp.hi)):
                assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (r, exp)


def test_summary_of_many_shards_reads_only_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """48 shards of 10 games: the summary is built from the manifest's per-shard stats with the
    games files deleted and parquet reads forbidden, and equals flip7.stats recomputed from the
    games rows per (cell, policy)."""
    plan = small_plan(shard_size=10)
    assert len(plan.shards) == 48
    manifest = run_inline(plan, str(tmp_path))
    want = expected_rows(tmp_path, plan)
    for path in (tmp_path / "games").rglob("*.parquet"):
        path.unlink()

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the summary read a parquet file")

    monkeypatch.setattr(pq, "read_table", forbidden)
    monkeypatch.setattr(pq, "ParquetFile", forbidden)
    lake = Lake.open(str(tmp_path))
    assert all(set(s["stats"]) for s in manifest["shards"].values())
    rows = run_summary(lake, lake.load_manifest("t"))
    assert_rows_match(rows, want)
    # the table's interval: a policy filling every seat of no game still has one per cell
    assert all(0 < r.win.hi - r.win.lo < 0.4 and r.ppr.value > 0 for r in rows)


def test_shard_stats_hold_the_contract_sums(tmp_path: Path) -> None:
    """A shard's stats are G and the five sums of wins/seats and points/rounds per policy, over
    the games of the shard (here a line-up with one policy in two seats)."""
    from pipeline.plan import make_plan
    from pipeline.spec import parse_spec

    spec = parse_spec(
        'name = "t"\nseed = 5\ngames = 30\n[[lineups]]\nseats = ["ev", "ev", "sum:20"]\n'
    )
    plan = make_plan(spec)
    stats = run_shard(plan.shards[0], str(tmp_path))["stats"]
    rows = read_run(tmp_path, "games").to_pylist()
    for policy in ("ev", "sum:20"):
        pairs: dict[int, list[int]] = {}
        for r in rows:
            if r["policy"] == policy:
                g = pairs.setdefault(r["game"], [0, 0, 0, 0])
                g[0] += r["winner"]
                g[1] += 1
                g[2] += r["total"]
                g[3] += r["rounds"]
        win = RatioSums.of((w, s) for w, s, _, _ in pairs.values())
        pts = RatioSums.of((p, r) for _, _, p, r in pairs.values())
        sums = stats[policy]
        assert len(sums) == len(STATS_FIELDS)
        assert RatioSums(sums[0], *sums[1:6]) == win
        assert RatioSums(sums[0], *sums[6:11]) == pts
    assert stats["ev"][2] == 60 and stats["sum:20"][2] == 30  # seats


def test_old_manifests_without_stats_read_the_games_files_and_resume_stores_them(
    tmp_path: Path,
) -> None:
    """Shards recorded without `stats` (an older version): the summary reads their games files
    and gives the same figures; resuming the run stores the recomputed stats in the manifest."""
    plan = small_plan(shard_size=60)
    manifest = run_inline(plan, str(tmp_path))
    lake = Lake.open(str(tmp_path))
    full = run_summary(lake, manifest)
    stored = {k: s.pop("stats") for k, s in manifest["shards"].items() if int(k) % 2 == 0}
    lake.write_manifest(manifest)
    assert run_summary(lake, lake.load_manifest("t")) == full
    prepare(lake, plan, resume=True, overwrite=False)
    again = lake.load_manifest("t")
    assert {k: again["shards"][k]["stats"] for k in stored} == stored
    assert run_summary(lake, again) == full


def test_a_resumed_run_summarises_every_shard_exactly(tmp_path: Path) -> None:
    """A run stopped after three shards and resumed by another driver: the summary covers all
    shards and equals an uninterrupted run's, figure for figure."""
    plan = small_plan(shard_size=30)
    whole = run_inline(plan, str(tmp_path / "whole"))
    lake = Lake.open(str(tmp_path / "parts"))
    manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
    for task in todo[:3]:
        record_shard(manifest, task, run_shard(task, lake.uri))
    lake.write_manifest(manifest)
    resumed = run_inline(plan, lake.uri)
    assert len(resumed["shards"]) == len(plan.shards)
    assert run_summary(lake, resumed) == run_summary(Lake.open(str(tmp_path / "whole")), whole)


def summary_block(out: str) -> list[str]:
    """The summary table of a command's output: from its header to its footnote."""
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.lstrip().startswith("policy "))
    end = next(i for i, x in enumerate(lines) if "clustered by game" in x)
    return lines[start : end + 1]


def test_status_prints_the_run_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tournament run` (its driver's bookkeeping, without Ray) and then `tournament status`
    print the same summary table, each figure as flip7.stats gives it from the games rows."""

    def inline(plan: Plan, root: str, **kwargs: object) -> RunReport:
        lake = Lake.open(root)
        manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
        report = RunReport(plan.run, lake.uri, "running", len(plan.shards))
        for task in todo:
            record_shard(manifest, task, run_shard(task, lake.uri))
            report.ran.append(task.shard)
        finish(lake, manifest, {})
        report.status = manifest["status"]
        return report

    monkeypatch.setattr(pipeline_cli, "run_tournament", inline)
    spec = write_spec(tmp_path / "t.toml", shard_size=50)
    data = str(tmp_path / "lake")
    assert main(["tournament", "run", str(spec), "--data", data, "--no-progress", "--no-file"]) == 0
    ran = summary_block(capsys.readouterr().out)
    assert main(["tournament", "status", "t", "--data", data]) == 0
    status = summary_block(capsys.readouterr().out)
    assert ran == status
    assert "mix: 2 players, variant classic, ruleset 3.1" in status
    want = expected_rows(tmp_path / "lake", small_plan(shard_size=50))
    ev = next(
        x
        for x in status[status.index("mix: 2 players, variant classic, ruleset 3.1") :]
        if x.split()[0] == "ev"
    )
    _, seats, win, ppr = want[(0, "ev")]
    assert f"{win.value:.1%} [{100 * win.lo:.1f}, {100 * win.hi:.1f}]" in ev
    assert f"{ppr.value:.2f} ± {ppr.half_width:.2f}" in ev


def test_shard_stats_of_no_rows_is_empty() -> None:
    """An empty games table has no statistics (not a crash)."""
    from pipeline.schema import GAMES

    assert shard_stats(GAMES.empty_table()) == {}
