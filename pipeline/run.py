"""The driver: a plan's shards -> Ray tasks -> Parquet files, a manifest, a progress bar.

Plain Ray tasks, one per shard, each writing its own files with pyarrow (NOTES.md measured Ray
Data's write_parquet 2-5x slower here, and per-shard files keep resume trivial: a shard is done
when its games file exists and the manifest lists it). The driver keeps a window of tasks in
flight, records finished shards in the manifest as results arrive (an atomic rewrite at most
every MANIFEST_INTERVAL seconds, and at the end), and retries a task whose worker died (Ray's
`max_retries`) or that hit an I/O error. `--resume` runs only the shards the manifest lacks.

Ray: `address=None` starts a private local Ray (`ray.init(address="local")`); `auto`,
`HOST:PORT` or `ray://...` joins an existing cluster, whose nodes must have the same flip7
installed (every task checks its rules version against the driver's). If Ray is already
initialised in this process (tests), that connection is used and left open. Before any task
starts, the driver loads the compiled kernel once (compiling it into numba's on-disk cache on a
fresh install), so that the local workers only load it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from flip7.rules import RULES_VERSION
from pipeline.lake import Lake, now
from pipeline.plan import Plan, cell_engines
from pipeline.schema import SCHEMA_VERSION
from pipeline.shard import ShardTask
from pipeline.summary import fill_stats
from pipeline.task import FAULT_ENV, run_shard

DEFAULT_RETRIES = 3
#: Seconds between manifest rewrites while results arrive (one object-store PUT each on S3).
#: A driver that dies loses at most this much bookkeeping: --resume reruns those shards.
MANIFEST_INTERVAL = 0.5


@dataclass
class RunReport:
    """What one driver invocation did."""

    run: str
    root: str
    status: str
    planned_shards: int
    skipped: list[int] = field(default_factory=list)  # already done before this invocation
    ran: list[int] = field(default_factory=list)  # finished by this invocation
    failed: dict[int, str] = field(default_factory=dict)
    nodes: dict[int, str] = field(default_factory=dict)  # shard -> Ray node id
    games: int = 0  # games simulated by this invocation
    events: int = 0  # event rows written by this invocation
    seconds: float = 0.0  # from the first submit to the last result
    cpu_seconds: float = 0.0  # CPU time of this invocation's tasks, summed
    ray_seconds: float = 0.0  # starting or joining Ray
    kernel: Any = None  # flip7.kernel.LoadInfo when the driver loaded the compiled kernel


def package_version() -> str:
    try:
        return version("flip7")
    except PackageNotFoundError:  # a source checkout that is not installed
        return "unknown"


def new_manifest(plan: Plan) -> dict[str, Any]:
    spec = plan.spec
    return {
        "run": plan.run,
        "schema_version": SCHEMA_VERSION,
        "package_version": package_version(),
        "rules_version": RULES_VERSION,
        "ruleset": spec.ruleset,
        "variant": spec.variant,
        "deck": list(spec.deck) or None,  # copies per card id of a declared deck
        "seed": spec.seed,
        "created": now(),
        "status": "running",
        "planned_shards": len(plan.shards),
        "planned_games": plan.games,
        "cells": [c.to_json() for c in plan.cells],
        "shards": {},
        # Beyond the contract's fields: what else fixes the plan.
        "name": spec.name,
        "rotate": spec.rotate,
        "shard_size": spec.shard_size,
        "scale": plan.scale,
        "engine": plan.engine,  # as asked; the rows do not depend on it
    }


_PLAN_KEYS = (
    "schema_version",
    "rules_version",
    "ruleset",
    "variant",
    "deck",
    "seed",
    "rotate",
    "shard_size",
    "planned_shards",
    "planned_games",
    "cells",
)


def plan_mismatch(manifest: dict[str, Any], plan: Plan) -> str | None:
    """The first manifest field whose planned value differs from `plan`'s, or None."""
    fresh = new_manifest(plan)
    for key in _PLAN_KEYS:
        if manifest.get(key) != fresh[key]:
            return f"{key}: run has {manifest.get(key)!r}, spec gives {fresh[key]!r}"
    return None


def prepare(
    lake: Lake, plan: Plan, *, resume: bool, overwrite: bool
) -> tuple[dict[str, Any], list[ShardTask]]:
    """The manifest to continue and the shards still to run; refuses to clobber by accident."""
    existing = lake.read_manifest(plan.run)
    if existing is not None and overwrite:
        lake.delete_run(plan.run)
        existing = None
    if existing is not None:
        problem = plan_mismatch(existing, plan)
        if problem:
            raise ValueError(
                f"run {plan.run!r} already exists under {lake.uri} with a different plan "
                f"({problem}); choose another name with --run NAME, or --overwrite to replace it"
            )
        if not resume and existing.get("status") != "complete":
            n_done = len(existing.get("shards", {}))
            raise ValueError(
                f"run {plan.run!r} already exists under {lake.uri} ({existing.get('status')}, "
                f"{n_done}/{existing['planned_shards']} shards); pass --resume to finish it, "
                "--overwrite to start it again, or --run NAME for a new run"
            )
        manifest = existing
        manifest["engine"] = plan.engine
        filled = fill_stats(lake, manifest)  # shards recorded by a version without statistics
    else:
        manifest, filled = new_manifest(plan), 0
    done = {int(k) for k in manifest["shards"]}
    todo = [t for t in plan.shards if t.shard not in done]
    if filled and not todo:
        lake.write_manifest(manifest)
    if todo or manifest.get("status") != "complete":
        manifest["status"] = "running"
        manifest.pop("error", None)
        lake.write_bytes(f"{lake.run_dir(plan.run)}/spec.toml", plan.spec.text.encode("utf-8"))
        lake.write_manifest(manifest)
    return manifest, todo


def record_shard(manifest: dict[str, Any], task: ShardTask, result: dict[str, Any]) -> None:
    """Enter a finished shard (a `run_shard` result) into the manifest."""
    manifest["shards"][str(task.shard)] = {
        "cell": task.cell,
        "start": task.start,
        "stop": task.stop,
        "games": task.n_games,
        "rows": result["rows"],
        "seconds": result["seconds"],
    }
    if "stats" in result:  # per policy, the summary's sums (pipeline.summary.STATS_FIELDS);
        # a worker of an older flip7 sends none: the summary then reads the shard's games file
        manifest["shards"][str(task.shard)]["stats"] = result["stats"]


def finish(lake: Lake, manifest: dict[str, Any], failed: dict[int, str]) -> None:
    """Mark the run complete (or failed, naming the first failure) and save the manifest."""
    lake.remove_temporaries(manifest["run"])
    if failed:
        first = min(failed)
        manifest["status"] = "failed"
        manifest["error"] = f"{len(failed)} shard(s) failed; shard {first}: {failed[first]}"
    elif len(manifest["shards"]) == manifest["planned_shards"]:
        manifest["status"] = "complete"
        manifest.pop("error", None)
    lake.write_manifest(manifest)


def run_tournament(
    plan: Plan,
    root: str,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    retries: int = DEFAULT_RETRIES,
    progress: bool = True,
) -> RunReport:
    """Run (or finish) a plan on Ray; the manifest under `root` records every finished shard."""
    if num_cpus is not None and num_cpus < 1:
        raise ValueError(f"--num-cpus must be >= 1, got {num_cpus}")
    if retries < 0:
        raise ValueError(f"--retries must be >= 0, got {retries}")
    lake = Lake.open(root)
    manifest, todo = prepare(lake, plan, resume=resume, overwrite=overwrite)
    report = RunReport(plan.run, lake.uri, manifest["status"], len(plan.shards))
    report.skipped = sorted(int(k) for k in manifest["shards"])
    if not todo:
        if manifest["status"] != "complete":
            finish(lake, manifest, {})
        report.status = manifest["status"]
        return report
    fault = os.environ.get(FAULT_ENV) or None
    report.kernel = warm_kernel(plan)

    import ray

    t0 = time.perf_counter()
    started = _connect(ray, address, num_cpus)
    report.ray_seconds = time.perf_counter() - t0
    try:
        # Retry worker deaths (Ray's max_retries) and I/O errors, not bugs. Ray takes a list of
        # exception types for retry_exceptions; its type stubs only know a bool.
        remote = ray.remote(  # type: ignore[call-overload]
            num_cpus=1, max_retries=retries, retry_exceptions=[OSError]
        )(run_shard)
        own_local = started and address in (None, "", "local")
        window = _window(ray, num_cpus, own_local)
        bar = _progress_bar(plan, manifest, progress)
        pending: dict[Any, ShardTask] = {}
        queue = list(reversed(todo))
        t1 = last_write = time.perf_counter()
        try:
            while queue or pending:
                while queue and len(pending) < window:
                    task = queue.pop()
                    pending[remote.remote(task, lake.uri, fault, RULES_VERSION)] = task
                ready, _ = ray.wait(list(pending), num_returns=1)
                ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
                for ref in ready:
                    task = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        report.failed[task.shard] = _one_line(exc)
                        continue
                    record_shard(manifest, task, result)
                    report.ran.append(task.shard)
                    report.nodes[task.shard] = result["node"]
                    report.games += task.n_games
                    report.events += result["rows"]["events"]
                    report.cpu_seconds += result["cpu_seconds"]
                    if bar is not None:
                        bar.update(task.n_games)
                if bar is not None and ready:
                    rate = report.events / max(time.perf_counter() - t1, 1e-9)
                    done = len(manifest["shards"])
                    bar.set_postfix_str(
                        f"shards {done}/{len(plan.shards)}, {rate / 1e6:.2f}M events/s",
                        refresh=False,
                    )
                if time.perf_counter() - last_write >= MANIFEST_INTERVAL:
                    lake.write_manifest(manifest)
                    last_write = time.perf_counter()
        except BaseException as exc:
            for ref in pending:
                ray.cancel(ref, force=True)
            manifest["status"] = "failed"
            manifest["error"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
            lake.write_manifest(manifest)
            raise
        finally:
            if bar is not None:
                bar.close()
        report.seconds = time.perf_counter() - t1
    finally:
        if started:
            ray.shutdown()
    finish(lake, manifest, report.failed)
    report.status = manifest["status"]
    return report


def warm_kernel(plan: Plan) -> Any:
    """Load (on a fresh install: compile) the kernel here before the workers need it, when some
    cell will use it; its flip7.kernel.LoadInfo, or None."""
    if not any(engine == "kernel" for engine, _ in cell_engines(plan).values()):
        return None
    from flip7.kernel import load_info

    return load_info(vengeance=plan.spec.variant.startswith("vengeance"))


def _connect(ray: Any, address: str | None, num_cpus: int | None) -> bool:
    """Start or join Ray unless this process already has; True if we must shut it down."""
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    kwargs: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": True}
    if address in (None, "", "local"):
        kwargs.update(address="local", num_cpus=num_cpus, include_dashboard=False)
    else:
        # The nodes run their installed flip7 (not a copy shipped with the job): numba keeps
        # the compiled kernel next to the installed code, so it compiles once per node, not in
        # every worker of every run. Each task checks its rules version against the driver's.
        kwargs.update(address=address)
    ray.init(**kwargs)
    return True


def _window(ray: Any, num_cpus: int | None, own_local: bool) -> int:
    """How many tasks to keep in flight. On a Ray this run started with num_cpus, Ray itself
    caps the concurrency; on any other Ray (a cluster, or one this process already had),
    --num-cpus N means at most N tasks at a time. Otherwise twice the cluster's CPUs, so that
    no CPU waits for the driver."""
    if num_cpus is not None and not own_local:
        return num_cpus
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(2, 2 * cpus)


def _progress_bar(plan: Plan, manifest: dict[str, Any], enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    done = sum(s["games"] for s in manifest["shards"].values())
    return tqdm(
        total=plan.games,
        initial=done,
        unit="game",
        unit_scale=True,
        desc=plan.run,
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        smoothing=0.2,
        mininterval=0.5,
        dynamic_ncols=True,
    )


def _one_line(exc: BaseException) -> str:
    lines = [s for s in str(exc).strip().splitlines() if s.strip()]
    return lines[-1] if lines else type(exc).__name__
