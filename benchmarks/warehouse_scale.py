"""Benchmark: how the answers scale with the lake — wall time and peak RSS of `flip7 report`,
`flip7 compare` and a card-level SQL query over lakes of growing size, with each figure's ratio
to the smallest lake's.

Each lake is `benchmarks/warehouse.py`'s (four-player games in four cells, three of them a
common-random-number group differing by one counting swap, 5,000-game shards), built once per
size under --root and reused. Every command runs in a fresh process (its peak RSS is its own,
read with wait4), alternating sizes in each round so that the machine's drift spreads over all
of them; medians over --rounds, with the CPU seconds each used (user + system: steadier than
wall time on a loaded machine). The dashboard's first page over the same lakes is
`python benchmarks/dashboard_first_page.py --data ROOT/SIZE` (it needs chromium). `compare`
compares run `bench` with `bench2`, the same files linked under another run's name.

`--simulate N` adds a lake of N games made from the rollups alone: the largest lake's shards
registered N / (its games) times under new shard numbers in ROOT/sim-N (the games, rounds and
events files hard links, so every footer reads; each rollups file rewritten with its
`first_game` moved on by the copy's games, so that the copies are later games of the same cells;
a manifest recording them). Only what reads rollups and footers answers there: `report` and
`compare` (the card SQL reads events, and the copies' events repeat the game numbers). Run:
`python benchmarks/warehouse_scale.py [--sizes 200000,2000000,10000000] [--rounds 3]
[--simulate 100000000] [--only report,compare,card SQL] [--card-sizes 200000,2000000]`.

Last, each target of the scale contract (TARGETS) is printed with its figure, its ratio or
bound and a verdict: met, NOT MET, or not measured (a size or command left out of the run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.common import bench_lake, run_child  # noqa: E402

#: "how often does each card turn up, by policy": the per-card question a user asks of the log.
CARD_SQL = (
    "SELECT g.policy, e.card, count(*) AS n FROM stg_stored_events e JOIN stg_games g "
    "ON e.run = g.run AND e.game = g.game AND e.player = g.seat GROUP BY ALL ORDER BY ALL"
)


#: The scale contract: (command, games, what, bound). "cpu x" is the median CPU seconds over
#: those of the smallest lake (at most bound), "MB" the median peak RSS (under bound); a run
#: that failed does not meet its target.
TARGETS = (
    ("report", 2_000_000, "cpu x", 1.5),
    ("report", 2_000_000, "MB", 1000),
    ("report", 10_000_000, "MB", 1000),
    ("report", 100_000_000, "MB", 1000),
    ("card SQL", 2_000_000, "MB", 3000),
)


def verdicts(
    runs: dict[tuple[str, int], list[tuple[float, float, int, float]]], smallest: int
) -> list[str]:
    """One line per target in TARGETS: the figure, the bound and whether it is met."""
    lines = []
    for name, games, what, bound in TARGETS:
        got = runs.get((name, games))
        base = runs.get((name, smallest))
        label = f"{name} at {games:,} games"
        rule = f"CPU at most {bound}x" if what == "cpu x" else f"peak under {bound} MB"
        if not got or (what == "cpu x" and not base):
            lines.append(f"{label}: {rule}: not measured")
            continue
        failed = sum(x[2] != 0 for x in got)
        if what == "cpu x":
            assert base is not None
            value = statistics.median(x[3] for x in got) / statistics.median(x[3] for x in base)
            figure, ok = f"CPU {value:.2f}x that at {smallest:,}", value <= bound
        else:
            value = statistics.median(x[1] for x in got)
            figure, ok = f"peak {value:.0f} MB", value < bound
        ok = ok and not failed
        note = f", {failed} run(s) failed" if failed else ""
        lines.append(f"{label}: {figure} ({rule}{note}): {'met' if ok else 'NOT MET'}")
    return lines


def commands(root: Path) -> dict[str, list[str]]:
    flip7 = [sys.executable, "-m", "flip7"]
    data = ["--data", str(root)]
    return {
        "report": [*flip7, "report", "bench", *data, "--no-file", "--format", "json"],
        "compare": [*flip7, "compare", "bench", "bench2", *data, "--format", "json"],
        "card SQL": [*flip7, "sql", *data, "--format", "csv", CARD_SQL],
    }


def twin(root: Path) -> None:
    """Run `bench2`: the files of run `bench` linked under its name (no copy), for compare."""
    import json
    import shutil

    if (root / "runs" / "bench2" / "manifest.json").exists():
        return
    for path in root.glob("*/run=bench/*/*.parquet"):
        table, players, name = path.parts[-4], path.parts[-2], path.name
        target = root / table / "run=bench2" / players / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)
    manifest = json.loads((root / "runs" / "bench" / "manifest.json").read_text())
    manifest["run"] = "bench2"
    (root / "runs" / "bench2").mkdir(parents=True, exist_ok=True)
    spec = root / "runs" / "bench" / "spec.toml"
    if spec.exists():
        shutil.copy(spec, root / "runs" / "bench2")
    (root / "runs" / "bench2" / "manifest.json").write_text(json.dumps(manifest, indent=1))


def simulate(source: Path, target: Path, games: int) -> None:
    """Run `bench` (and its twin `bench2`) of `games` games in `target`, made of the shards of
    run `bench` in `source` registered games / (its games) times (see the module docstring)."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    manifest = json.loads((source / "runs" / "bench" / "manifest.json").read_text())
    if (target / "runs" / "bench" / "manifest.json").exists():
        return
    base = sum(c["games"] for c in manifest["cells"])
    copies = games // base
    shards = {int(k): v for k, v in manifest["shards"].items()}
    step = max(shards) + 1
    per_cell = {c["cell"]: c["games"] for c in manifest["cells"]}
    records = {}
    for k in range(copies):
        for number, rec in sorted(shards.items()):
            new = k * step + number
            name = f"shard-{number:05d}.parquet"
            for table in ("events", "rounds", "games", "rollups"):
                (path,) = (source / table / "run=bench").glob(f"players=*/{name}")
                out = target / table / "run=bench" / path.parent.name / f"shard-{new:05d}.parquet"
                out.parent.mkdir(parents=True, exist_ok=True)
                if table != "rollups":
                    os.link(path, out)
                    continue
                t = pq.read_table(path)
                moved = pc.add(t["first_game"], pa.scalar(k * per_cell[rec["cell"]], pa.int32()))
                t = t.set_column(t.schema.get_field_index("first_game"), "first_game", moved)
                pq.write_table(t, out, compression="lz4")
            shift = k * per_cell[rec["cell"]]
            records[str(new)] = {**rec, "start": rec["start"] + shift, "stop": rec["stop"] + shift}
    manifest["shards"] = records
    for c in manifest["cells"]:
        c["games"] *= copies
    offset = 0
    for c in manifest["cells"]:
        c["game_offset"], offset = offset, offset + c["games"]
    manifest["planned_games"] = base * copies
    manifest["planned_shards"] = len(records)
    (target / "runs" / "bench").mkdir(parents=True, exist_ok=True)
    (target / "runs" / "bench" / "manifest.json").write_text(json.dumps(manifest, indent=1))
    twin(target)


def measure(cmd: list[str]) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MB, exit status, CPU seconds) of one fresh process running
    cmd."""
    done = run_child(cmd)
    if done.code != 0:
        err = done.stderr.strip()
        print(f"  exit {done.code}: {err.splitlines()[-1] if err else ''}", flush=True)
    return done.wall, done.peak_kb / 1024, done.code, done.cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200000,2000000,10000000", help="games per lake")
    parser.add_argument("--root", type=Path, default=Path("/tmp/flip7-bench/scale"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated commands (default: all)")
    parser.add_argument(
        "--simulate", type=int, default=0, help="games of a lake made from the rollups alone"
    )
    parser.add_argument(
        "--card-sizes", default="", help="the sizes the card SQL runs at (default: every real lake)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for n in sizes:
        twin(bench_lake(n, args.root / str(n)))
    lakes = {n: args.root / str(n) for n in sizes}
    if args.simulate:
        lakes[args.simulate] = args.root / f"sim-{args.simulate}"
        simulate(args.root / str(max(sizes)), lakes[args.simulate], args.simulate)
    names = list(commands(args.root))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    card_sizes = [int(s) for s in args.card_sizes.split(",")] if args.card_sizes else sizes
    runs: dict[tuple[str, int], list[tuple[float, float, int, float]]] = {}
    for r in range(args.rounds):
        for name in names:
            for n, root in lakes.items():
                if name == "card SQL" and (n == args.simulate or n not in card_sizes):
                    continue
                one = measure(commands(root)[name])
                runs.setdefault((name, n), []).append(one)
                print(
                    f"round {r + 1} {name} {n:,} games: {one[0]:.1f} s, {one[1]:.0f} MB, "
                    f"{one[3]:.1f} CPU s",
                    flush=True,
                )
    one, five, _ = os.getloadavg()
    print(f"\nmedians over {args.rounds} rounds; load average {one:.1f} / {five:.1f}")
    print(
        f"{'command':<10} {'games':>12} {'wall s':>8} {'x base':>7} {'CPU s':>7} {'x base':>7} "
        f"{'peak MB':>8} {'x base':>7}"
    )
    for name in names:
        base = None
        for n in lakes:
            got = runs.get((name, n))
            if not got:
                continue
            wall = statistics.median(x[0] for x in got)
            rss = statistics.median(x[1] for x in got)
            cpu = statistics.median(x[3] for x in got)
            failed = sum(x[2] != 0 for x in got)
            base = base or (wall, rss, cpu)
            note = f"  ({failed} failed)" if failed else ""
            label = f"{n:,}" + (" (sim)" if n == args.simulate else "")
            print(
                f"{name:<10} {label:>12} {wall:>8.1f} {wall / base[0]:>7.2f} {cpu:>7.1f} "
                f"{cpu / base[2]:>7.2f} {rss:>8.0f} {rss / base[1]:>7.2f}{note}"
            )
    print("\ntargets:")
    for line in verdicts(runs, min(sizes)):
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
