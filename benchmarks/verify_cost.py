"""Benchmark: what `flip7 warehouse verify` costs against what writing the games cost, side by
side in one run, on lakes you already have (e.g. benchmarks/warehouse_scale.py's).

For each lake (a root holding run RUN):

- the writer: a few of the run's shards re-run from its manifest (cell, line-up, seed, game
  range) by `pipeline.task.run_shard`, what a Ray task runs, into a scratch directory, in a
  fresh process; its CPU per game is the median over the warm tasks (the first task, which
  loads the kernel, is left out: this flatters the writer), times the run's games;
- verify: `warehouse.verify(ROOT, RUN)` (what `flip7 warehouse verify RUN` runs, less writing
  its record: the lakes stay as they are) in a fresh process; its CPU (user + system, every
  thread) and peak RSS from wait4.

Prints both, their ratio (target: at most 1) and verify's peak RSS (target: under 1 GB).
With --phases, verify alone, with the CPU each of its phases spent (the compiled pass, the
lake-wide SQL tests, the seeds, the replay).
Alternate the two with --rounds for medians. Run:
`python benchmarks/verify_cost.py /tmp/flip7-bench/pairs/200000 /tmp/flip7-bench/pairs/2000000`
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WRITER = r"""
import json, statistics, sys, tempfile, time
from pipeline.shard import ShardTask
from pipeline.task import run_shard
root, run, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(f"{root}/runs/{run}/manifest.json"))
cells = {c["cell"]: c for c in m["cells"]}
keys = sorted(m["shards"], key=int)
step = max(1, len(keys) // k)
picked = [keys[0]] + keys[::step][: k]  # the first again: it pays the kernel's load
per_game = []
out = tempfile.mkdtemp(prefix="verify-cost-")
for i, key in enumerate(picked):
    s = m["shards"][key]
    c = cells[s["cell"]]
    task = ShardTask(run, int(key), s["cell"], c["pair"], tuple(c["lineup"]), c.get("ruleset")
                     or m["ruleset"], m["variant"], m["seed"], m["rotate"], c["game_offset"],
                     s["start"], s["stop"])
    c0 = time.process_time()
    run_shard(task, out)
    if i:
        per_game.append((time.process_time() - c0) / s["games"])
games = sum(s["games"] for s in m["shards"].values())
print("RESULT", json.dumps({"per_game": statistics.median(per_game), "games": games,
                  "shards": len(keys), "manifest_seconds": sum(s["seconds"] for s in m["shards"].values())}))
"""

VERIFY = r"""
import json, sys
from warehouse import verify
v = verify(sys.argv[1], sys.argv[2])
print("RESULT", json.dumps({"ok": v.ok, "games": v.games, "replayed": v.replayed,
                  "failed": {c.name: c.failed for c in v.checks if c.failed}}))
"""

#: verify with its phases timed (CPU of the whole process, every thread, while each ran).
PHASES = r"""
import importlib, json, sys, time
V = importlib.import_module("warehouse.verify")
spent = {}
def timed(name, label):
    f = getattr(V, name)
    def g(*a, **k):
        c0 = time.process_time()
        try:
            return f(*a, **k)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - c0
    setattr(V, name, g)
for name, label in (("failing_rows", "lake-wide SQL tests"), ("pick", "seeds"),
                    ("_compiled_pass", "compiled pass"), ("replay_picked", "replay")):
    timed(name, label)
c0 = time.process_time()
v = V.verify(sys.argv[1], sys.argv[2])
spent["all (after imports)"] = time.process_time() - c0
print("RESULT", json.dumps(spent))
"""


def measured(code: str, *args: str) -> tuple[dict[str, object], float, float, float]:
    """(the JSON it printed, CPU seconds, wall seconds, peak RSS in MB) of a fresh process,
    read with wait4 (its own CPU, every thread, and its own peak)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=null,
            cwd=REPO,
            env=env,
        )
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{args}: exit {os.waitstatus_to_exitcode(status)}")
    cpu = usage.ru_utime + usage.ru_stime
    # the last line after RESULT (DuckDB's progress bars share stdout, without newlines)
    line = out.decode().rsplit("RESULT ", 1)[-1].splitlines()[0]
    return json.loads(line), cpu, wall, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lakes", nargs="+", type=Path, help="lake roots")
    parser.add_argument("--run", default="bench")
    parser.add_argument("--writer-shards", type=int, default=4, help="warm shard tasks timed")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--phases", action="store_true", help="only time verify's phases (CPU-s), per lake"
    )
    args = parser.parse_args()
    if args.phases:
        for lake in args.lakes:
            for _ in range(args.rounds):
                spent, cpu, wall, rss = measured(PHASES, str(lake), args.run)
                parts = ", ".join(f"{k} {float(t):.2f}" for k, t in spent.items())  # type: ignore[arg-type]
                print(f"{lake}: {parts}; process {cpu:.1f} CPU-s, {wall:.1f} s wall, {rss:.0f} MB")
        return 0
    rows = []
    for lake in args.lakes:
        writer, verifier = [], []
        for _ in range(args.rounds):
            w, *_ = measured(WRITER, str(lake), args.run, str(args.writer_shards))
            writer.append(float(w["per_game"]) * int(w["games"]))  # type: ignore[arg-type]
            v, cpu, wall, rss = measured(VERIFY, str(lake), args.run)
            if not v["ok"]:
                print(f"  {lake}: verify failed: {v['failed']}", flush=True)
            verifier.append((cpu, wall, rss))
            print(
                f"{lake} ({int(w['games']):,} games, {w['shards']} shards): writer "  # type: ignore[call-overload]
                f"{writer[-1]:.1f} CPU-s ({float(w['per_game']) * 1e6:.1f} us a game; the "  # type: ignore[arg-type]
                f"manifest's task wall seconds {float(w['manifest_seconds']):.1f}); verify "  # type: ignore[arg-type]
                f"{cpu:.1f} CPU-s, {wall:.1f} s wall, {rss:.0f} MB peak",
                flush=True,
            )
        cpu = statistics.median(c for c, _, _ in verifier)
        rss = max(r for _, _, r in verifier)
        wcpu = statistics.median(writer)
        rows.append(
            (lake, int(w["games"]), wcpu, cpu, statistics.median(x for _, x, _ in verifier), rss)
        )  # type: ignore[call-overload]
    one, five, _ = os.getloadavg()
    print(f"\nload average {one:.1f} / {five:.1f}; medians over {args.rounds} round(s)")
    print(
        f"{'games':>12} {'writer CPU-s':>13} {'verify CPU-s':>13} {'ratio':>6} "
        f"{'verify wall s':>14} {'peak MB':>8}"
    )
    for _, games, wcpu, cpu, wall, rss in rows:
        print(
            f"{games:>12,} {wcpu:>13.1f} {cpu:>13.1f} {cpu / wcpu:>6.2f} {wall:>14.1f} {rss:>8.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
