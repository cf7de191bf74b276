"""The driver's memory does not grow with the number of shards: the summary comes from the
manifest's per-shard statistics, never from every games file at once.

Each measurement is a fresh Python process running the driver's bookkeeping without Ray (as
tests/pipeline/helpers.run_inline does: prepare, run_shard, record_shard, finish, then the
summary the CLI prints). After two warm-up shards (the kernel, pyarrow and the Parquet writers
loaded) it resets its peak resident set (`5 > /proc/self/clear_refs`), runs the other shards,
finishes and prints the summary, and reports how far its peak (VmHWM) rose above the resident
set at the reset. Only this process's own pages count, so other work on a shared machine does
not move the figure.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Four seats, two policies: per game, two rows of a per-(game, policy) table, which is what a
# summary that reads every games file would hold.
SPEC = """name = "mem"
seed = 5
games = {games}
shard_size = {shard_size}

[[lineups]]
name = "sum and count"
mix = ["sum:20", "count:4"]
players = [4]
"""

CHILD = """
import json, sys
from pipeline.lake import Lake
from pipeline.plan import make_plan
from pipeline.run import finish, prepare, record_shard
from pipeline.spec import parse_spec
from pipeline.summary import format_summary, run_summary
from pipeline.task import run_shard

def status(key):
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith(key + ":"))

spec_text, root = sys.argv[1], sys.argv[2]
plan = make_plan(parse_spec(spec_text))
lake = Lake.open(root)
manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
for task in todo[:2]:
    record_shard(manifest, task, run_shard(task, lake.uri))
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError as exc:
    print(json.dumps({"skip": f"cannot reset the peak resident set: {exc}"}))
    sys.exit(0)
base = status("VmRSS")
for task in todo[2:]:
    record_shard(manifest, task, run_shard(task, lake.uri))
finish(lake, manifest, {})
lines = format_summary(run_summary(lake, lake.read_manifest(plan.run)))
print(json.dumps({
    "growth_kb": status("VmHWM") - base,
    "shards": len(manifest["shards"]),
    "status": manifest["status"],
    "summary": lines,
}))
"""

SHARD_GAMES = 250
# Measured with this test's child process: the summary read from every games file (the driver
# before the manifest kept statistics) rose 36 MB above the warm-up at 20 shards and 141 MB at
# 200 (+105 MB); from the manifest, 2.3 MB and 2.4 MB. The bound leaves room for allocator noise
# and stays far below the old growth.
MAX_EXTRA_MB = 12


def _measure(tmp: Path, shards: int) -> dict:
    spec = SPEC.format(games=shards * SHARD_GAMES, shard_size=SHARD_GAMES)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, spec, str(tmp / f"lake{shards}")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if "skip" in result:
        pytest.skip(result["skip"])
    return result


@pytest.mark.skipif(
    platform.system() != "Linux", reason="reads and resets the peak resident set in /proc/self"
)
def test_driver_peak_memory_is_flat_from_20_to_200_shards(tmp_path: Path) -> None:
    small = _measure(tmp_path, 20)
    large = _measure(tmp_path, 200)
    for r, n in ((small, 20), (large, 200)):
        assert r["status"] == "complete" and r["shards"] == n
        games = n * SHARD_GAMES
        # the summary covers every game: one line per policy with all the games it sat in
        assert any(line.split()[:2] == ["sum:20", f"{games:,}"] for line in r["summary"]), r
        assert any(line.split()[:2] == ["count:4", f"{games:,}"] for line in r["summary"]), r
    extra_mb = (large["growth_kb"] - small["growth_kb"]) / 1024
    assert extra_mb < MAX_EXTRA_MB, (
        f"the driver's peak grew {extra_mb:.1f} MB more over 200 shards than over 20 "
        f"({small['growth_kb'] / 1024:.1f} MB -> {large['growth_kb'] / 1024:.1f} MB above "
        "the resident set after warm-up): something holds per-shard data"
    )
