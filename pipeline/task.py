"""One shard, end to end: simulate its games and write its three Parquet files.

`run_shard` is what a Ray task runs (pipeline.run) and what the process-pool scaling benchmark
runs (benchmarks/scaling.py), so both measure the same work. It imports no Ray.

Fault injection for tests (`FLIP7_FAULT`, read by the driver and passed to every task):
- `kill:SHARD:MARKER`: the worker running SHARD dies (os._exit) after committing its events file
  and before the other two, once: MARKER (a file path) records that it happened.
- `delay:SECONDS`: every shard sleeps first, so that a test can interrupt a run midway.
- `fail:SHARD`: the task of SHARD raises a RuntimeError (a bug, not retried) before writing.
"""

from __future__ import annotations

import os
import time
from typing import Any

from flip7.kernel.load import loaded
from flip7.limits import PolicyTimeout, time_limit
from flip7.rules import RULES_VERSION
from lakecontract import arrow
from pipeline.lake import TABLE_ORDER, WRITE_OPTIONS, Lake
from pipeline.memory import keep_freed_memory
from pipeline.ranking import ahead_rows
from pipeline.sequential import compare_sums
from pipeline.shard import ShardTask, simulate_shard
from pipeline.summary import shard_stats

FAULT_ENV = "FLIP7_FAULT"
#: A worker loads these kernels as it starts, before it takes work, when Ray imports
#: PRELOAD_MODULE in it (Ray's `preload_python_modules`): KERNELS names, comma-separated
#: (`classic`, `win`: the classic kernel's build with win's code, `vengeance`). The driver sets
#: it for a local Ray it starts; a cluster sets it on every node.
PRELOAD_ENV = "FLIP7_PRELOAD_KERNEL"
PRELOAD_MODULE = "pipeline.preload"
KERNELS = ("classic", "win", "vengeance")


def run_shard(
    task: ShardTask,
    root: str,
    fault: str | None = None,
    rules_version: int | None = None,
    policy_timeout: float | None = None,
) -> dict[str, Any]:
    """Simulate and write one shard; return its row counts and events, seconds (wall and CPU) and where it
    ran, and its games' sufficient statistics per policy (pipeline.summary.shard_stats: what the
    manifest records and the summary adds up). `rules_version`: the driver's; a node whose flip7
    plays other rules refuses. `policy_timeout`: seconds the shard's games may take; a policy
    still deciding then is named in a PolicyError (flip7.limits)."""
    t0, c0, started = time.perf_counter(), time.process_time(), time.time()
    warm = loaded()  # the worker loaded the kernel before this task (pipeline.preload)
    if rules_version is not None and rules_version != RULES_VERSION:
        raise RuntimeError(
            f"this node's flip7 plays rules version {RULES_VERSION}, the driver's "
            f"{rules_version}: install the same flip7 on every node"
        )
    keep_freed_memory()
    kill_after_events = _apply_fault(fault, task.shard)
    lake = Lake.open(root)
    try:
        with time_limit(policy_timeout):
            tables = simulate_shard(task, stored=True)
    except PolicyTimeout as exc:  # the limit ran out outside any policy's code
        raise RuntimeError(
            f"shard {task.shard} ran past its time limit of {exc.seconds:g} s (policy_timeout) "
            "while no policy was deciding; raise the limit or use smaller shards"
        ) from None
    paths = [lake.shard_path(name, task.run, task.n_players, task.shard) for name in TABLE_ORDER]
    for name, path in zip(TABLE_ORDER, paths, strict=True):
        lake.write_parquet(path, tables[name], WRITE_OPTIONS[name])
        if kill_after_events and name == "events":
            os._exit(17)  # a worker crash mid-shard: events committed, rounds and games not
    result = {
        "shard": task.shard,
        "rows": {name: tables[name].num_rows for name in TABLE_ORDER},
        # the committed files' sizes: the driver confirms them before it records the shard
        "bytes": dict(
            zip(TABLE_ORDER, (i.size for i in lake.fs.get_file_info(paths)), strict=True)
        ),
        # events played (the events file holds a row per game): the games table counts them
        "events": int(arrow.numpy(tables["games"]["events"])[:: task.n_players].sum()),
        "stats": shard_stats(tables["games"]),
        "seconds": round(time.perf_counter() - t0, 4),
        "cpu_seconds": time.process_time() - c0,  # this process's CPU time (benchmarks)
        "started": started,  # wall-clock (epoch seconds) start and end, for the driver's
        "finished": time.time(),  # timeline (RunReport.timeline, benchmarks/whole_run.py)
        "pid": os.getpid(),
        "warm": warm,
        "node": _node_id(),
    }
    if task.compare:  # the paired sums of a [stop] comparison (pipeline.sequential)
        result["compare"] = compare_sums(tables["games"], task.compare)
    if task.ahead:  # the head-to-head sums of a [stop] ranking test (pipeline.ranking)
        result["ahead"] = ahead_rows(tables["rollups"])
    return result


def load_kernels(kernel: str) -> Any:
    """Load (on a fresh install: compile) the kernels `kernel` names (KERNELS, comma-separated)
    and the shards' table pass in this process; their flip7.kernel.LoadInfo, added up."""
    import flip7.kernel
    from flip7.kernel.load import combined

    info = None
    for name in kernel.split(","):
        if name not in KERNELS:
            raise ValueError(f"{PRELOAD_ENV}: unknown kernel {name!r}; valid: {', '.join(KERNELS)}")
        got = flip7.kernel.load_info(
            vengeance=name == "vengeance", win=name == "win", rows=info is None
        )
        info = got if info is None else combined(info, got)
    return info


def load_kernel(kernel: str | None) -> bool:
    """Load `kernel` (KERNELS, comma-separated) in this process now, as a worker's first task
    would; True if done, False for no kernel or a failure, which is left to the first task: it
    meets the same error and reports it with its shard."""
    if not kernel or any(name not in KERNELS for name in kernel.split(",")):
        return False
    try:
        load_kernels(kernel)
    except Exception:
        return False
    return True


def _apply_fault(fault: str | None, shard: int) -> bool:
    """Sleep for `delay:`, raise for `fail:`; True when this attempt of `shard` must die
    mid-write (`kill:`)."""
    if not fault:
        return False
    kind, _, rest = fault.partition(":")
    if kind == "delay":
        time.sleep(float(rest))
        return False
    if kind == "kill":
        target, _, marker = rest.partition(":")
        if int(target) == shard and marker and not os.path.exists(marker):
            with open(marker, "w") as f:
                f.write(f"killed shard {shard} in pid {os.getpid()}\n")
            return True
        return False
    if kind == "fail":
        if int(rest) == shard:
            raise RuntimeError(f"injected failure in shard {shard} ({FAULT_ENV}={fault})")
        return False
    raise ValueError(
        f"{FAULT_ENV}={fault!r}: expected kill:SHARD:MARKER, delay:SECONDS or fail:SHARD"
    )


def _node_id() -> str:
    """The Ray node this runs on ('' outside Ray), without importing Ray when it is absent."""
    import sys

    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return ""
    node: str = ray.get_runtime_context().get_node_id()
    return node
