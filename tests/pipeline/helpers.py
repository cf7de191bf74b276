"""A small tournament spec, a Ray-free way to run it, and readers that compare runs."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flip7.observation import Observation
from flip7.policies import Policy
from lakecontract import codec
from pipeline.lake import Lake
from pipeline.plan import Plan, make_plan
from pipeline.run import finish, prepare, record_shard
from pipeline.shard import ShardTask
from pipeline.spec import parse_spec
from pipeline.task import run_shard

os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

# Two field sizes, rotation, and a common-random-number pair: every planning feature, ~0.5 s of
# engine time in all.
SMALL_SPEC = """
name = "t"
seed = 99
games = 240
shard_size = {shard_size}

[[lineups]]
name = "mix"
mix = ["ev", "bust:0.25"]
players = [2]

[[lineups]]
seats = ["ev", "bust:0.25", "sum:20"]
games = 120
pair = "p"

[[lineups]]
seats = ["evc", "bust:0.25", "sum:20"]
games = 120
pair = "p"
"""


class Timid(Policy):
    """A user's own policy (imported by path, so only the reference engine can play it)."""

    def hit(self, obs: Observation) -> bool:
        return bool(obs.nsum[obs.seat] < 12)


MiB = 1024 * 1024
# Small, explicit resources per node: otherwise each node claims the whole machine.
NODE: dict[str, Any] = {"num_cpus": 1, "object_store_memory": 100 * MiB, "memory": 512 * MiB}

KEYS = {"events": ["game"], "rounds": ["game", "round", "seat"], "games": ["game", "seat"]}


def shard_task(**fields: Any) -> ShardTask:
    """A shard task of run "r": cell 0's first shard (pair 0, game ids from 0) playing games
    0..59 of ev, bust:0.25, sum:20 under 3.1 classic, root seed 11, seats rotating; `fields`
    change any of that."""
    base: dict[str, Any] = {
        "run": "r",
        "shard": 0,
        "cell": 0,
        "pair": 0,
        "lineup": ("ev", "bust:0.25", "sum:20"),
        "ruleset": "3.1",
        "variant": "classic",
        "root_seed": 11,
        "rotate": True,
        "game_offset": 0,
        "start": 0,
        "stop": 60,
    }
    return ShardTask(**{**base, **fields})


def small_plan(shard_size: int = 60, name: str = "t") -> Plan:
    spec = parse_spec(SMALL_SPEC.format(shard_size=shard_size).replace('"t"', f'"{name}"'))
    return make_plan(spec)


def write_spec(path: Path, shard_size: int = 60) -> Path:
    path.write_text(SMALL_SPEC.format(shard_size=shard_size))
    return path


def run_inline(plan: Plan, root: str, *, overwrite: bool = False) -> dict[str, Any]:
    """The driver's bookkeeping without Ray: every shard in this process (resuming the run, or
    with `overwrite` replacing it); the final manifest."""
    lake = Lake.open(root)
    manifest, todo = prepare(lake, plan, resume=not overwrite, overwrite=overwrite)
    for task in todo:
        record_shard(manifest, task, run_shard(task, lake.uri))
    finish(lake, manifest, {})
    return manifest


def write_run(spec_text: str, root: str | Path) -> str:
    """Run a spec's shards in this process into the lake at root, replacing any run of its
    name; return the run name."""
    plan = make_plan(parse_spec(spec_text))
    run_inline(plan, str(root), overwrite=True)
    return plan.run


def read_run(root: str | Path, table: str, run: str = "t") -> pa.Table:
    """All committed rows of one table of a run (strings decoded), sorted by the table's key."""
    parts = []
    for path in sorted(Path(root, table, f"run={run}").glob("players=*/shard-*.parquet")):
        t = codec.read_table(path, table)  # the rows readers see (events and rounds decoded)
        players = int(path.parent.name.split("=")[1])
        parts.append(t.append_column("players", pa.array([players] * t.num_rows, pa.int8())))
    t = pa.concat_tables(parts)
    for i, field in enumerate(t.schema):
        if pa.types.is_dictionary(field.type):
            t = t.set_column(i, field.name, pc.cast(t[field.name], pa.string()))
    return t.sort_by([(k, "ascending") for k in KEYS[table]]).combine_chunks()


def assert_same_rows(
    root_a: str | Path, root_b: str | Path, run_a: str = "t", run_b: str = "t"
) -> None:
    """Both runs hold the same rows in every table, whatever their sharding or row order."""
    for table in KEYS:
        a, b = read_run(root_a, table, run_a), read_run(root_b, table, run_b)
        assert a.num_rows == b.num_rows, table
        assert a.equals(b), f"{table} rows differ"


@contextmanager
def local_ray() -> Iterator[None]:
    """A local Ray of two CPUs of this test's own (never a leftover cluster), shut down after."""
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR)
    try:
        yield
    finally:
        ray.shutdown()


@contextmanager
def two_node_cluster() -> Iterator[object]:
    """A real two-node `ray.cluster_utils` cluster on this machine (NODE each), shut down after;
    its nodes inherit this process's environment."""
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    try:
        c.add_node(**NODE)
        c.wait_for_nodes()
        yield c
    finally:
        c.shutdown()
