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
fresh install), so that the local workers only load it; a local Ray's workers do that as they
start, before they take work (pipeline.preload).
"""

from __future__ import annotations

import functools
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pyarrow.fs as pafs

from flip7.format import waiting
from flip7.rules import RULES_VERSION
from pipeline import DEFAULT_RETRIES, ray_start
from pipeline.lake import (
    TABLE_ORDER,
    Lake,
    check_run_name,
    driver_alive,
    driver_record,
    missing_text,
    now,
    run_status,
)
from pipeline.lease import Lease, LeaseLost, take
from pipeline.plan import Plan, cell_engines
from pipeline.reaper import OWNER_ENV, start_reaper, stop_reaper, tell_session
from pipeline.schema import SCHEMA_VERSION
from pipeline.sequential import Stopper, manifest_entry, sequential_decided, stop_mismatch
from pipeline.shard import ShardTask
from pipeline.summary import fill_stats
from pipeline.task import FAULT_ENV, PRELOAD_ENV, PRELOAD_MODULE, run_shard

#: Seconds between manifest rewrites while results arrive (one object-store PUT each on S3).
#: A driver that dies loses at most this much bookkeeping: --resume reruns those shards.
MANIFEST_INTERVAL = 0.5
#: Seconds the driver waits for results before it looks whether it still holds the run's lease.
LEASE_CHECK_SECONDS = 1.0


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
    events: int = 0  # events written by this invocation
    seconds: float = 0.0  # from the first submit to the last result
    cpu_seconds: float = 0.0  # CPU time of this invocation's tasks, summed
    ray_seconds: float = 0.0  # starting or joining Ray
    kernel: Any = None  # flip7.kernel.LoadInfo when the driver loaded the compiled kernel
    submitted: float = 0.0  # epoch seconds of the first submit
    # per finished shard: (shard, worker pid, started, finished, received by the driver; epoch
    # seconds), the task's CPU seconds and whether its worker had the kernel loaded before it
    # began (pipeline.preload), in arrival order
    timeline: list[tuple[int, int, float, float, float, float, bool]] = field(default_factory=list)
    driver_cpu_seconds: float = 0.0  # this process's CPU time from the first submit to the end


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
        # the run's one ruleset, or None when its cells play several (each cell names its own)
        "ruleset": spec.rulesets[0] if len(spec.rulesets) == 1 else None,
        "rulesets": list(spec.rulesets),
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
        **manifest_entry(plan),  # the [stop] comparison or sequential test, if any
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
    """The first manifest field whose planned value differs from `plan`'s, or None. A cell's
    ruleset is part of the cell (a manifest written before cells named theirs plays the run's)."""
    fresh = new_manifest(plan)
    for key in _PLAN_KEYS:
        have = manifest.get(key)
        if key == "cells" and isinstance(have, list):
            have = [{"ruleset": manifest.get("ruleset"), **c} for c in have]
        if have != fresh[key]:
            if key == "cells" and isinstance(have, list) and len(have) == len(fresh[key]):
                i = next(i for i, (a, b) in enumerate(zip(have, fresh[key], strict=True)) if a != b)
                return f"cells[{i}]: run has {have[i]!r}, spec gives {fresh[key][i]!r}"
            return f"{key}: run has {have!r}, spec gives {fresh[key]!r}"
    return stop_mismatch(manifest, plan)


@dataclass
class Start:
    """What starting a run will do, decided before anything is written (`check_start`)."""

    manifest: dict[str, Any]  # the manifest to continue, or a new one
    todo: list[ShardTask]
    replace: bool = False  # delete the existing run first (--overwrite)
    filled: int = 0  # shards whose statistics were read from their games files (older runs)


def check_start(lake: Lake, plan: Plan, *, resume: bool, overwrite: bool) -> Start:
    """The manifest to continue and the shards still to run, or a ValueError; reads only, so
    that a refused start (or a Ray that cannot be reached) leaves the lake as it was."""
    check_run_name(plan.run)
    existing = lake.read_manifest(plan.run)
    replace = False
    if existing is not None and existing["status"] == "running" and driver_alive(existing):
        d = existing["driver"]
        if d.get("pid") != os.getpid():  # not this very process (a caller starting it again)
            raise ValueError(
                f"run {plan.run!r} under {lake.uri} is being written right now by pid "
                f"{d['pid']} on {d['host']} (since {d.get('started', '?')}); wait for it, or "
                "stop that driver first"
            )
    if existing is not None and overwrite:
        existing, replace = None, True
    old = existing.get("schema_version") if existing is not None else SCHEMA_VERSION
    if isinstance(old, int) and not isinstance(old, bool) and old < SCHEMA_VERSION:
        raise ValueError(
            f"run {plan.run!r} under {lake.uri} was written with event-log schema v{old}; this "
            f"flip7 writes v{SCHEMA_VERSION}: upgrade it first with `flip7 warehouse upgrade "
            f"{plan.run} --data {lake.uri}`, or pass --overwrite to start it again"
        )
    if existing is not None:
        problem = plan_mismatch(existing, plan)
        if problem:
            raise ValueError(
                f"run {plan.run!r} already exists under {lake.uri} with a different plan "
                f"({problem}); choose another name with --run NAME, or --overwrite to replace it"
            )
        if not resume and existing.get("status") != "complete":
            n_done = len(existing["shards"])
            raise ValueError(
                f"run {plan.run!r} already exists under {lake.uri} ({run_status(existing)}, "
                f"{n_done}/{existing['planned_shards']} shards); pass --resume to finish it, "
                "--overwrite to start it again, or --run NAME for a new run"
            )
        missing = lake.missing_shards(existing)
        if missing and not resume:
            raise ValueError(
                f"run {plan.run!r} under {lake.uri} is recorded {run_status(existing)}, but "
                f"{len(missing)} of its shards have lost their files: {missing_text(missing)}; "
                "pass --resume to re-run them, or --overwrite to start it again"
            )
        for shard in missing:  # --resume runs them again
            del existing["shards"][str(shard)]
        manifest = existing
        manifest["engine"] = plan.engine
        filled = fill_stats(lake, manifest)  # shards recorded by a version without statistics
    else:
        manifest, filled = new_manifest(plan), 0
    done = {int(k) for k in manifest["shards"]}
    todo = [t for t in plan.shards if t.shard not in done]
    return Start(manifest, todo, replace, filled)


def start_run(
    lake: Lake, plan: Plan, start: Start, ray_session: str | None = None
) -> dict[str, Any]:
    """Write what `check_start` decided: delete the run it replaces, save the spec and a
    `running` manifest naming this driver (host, pid) so that a later start can tell a dead
    driver's run from a live one."""
    if start.replace:
        lake.delete_run(plan.run)
    manifest = start.manifest
    if start.filled and not start.todo:
        lake.write_manifest(manifest)
    if start.todo or manifest.get("status") != "complete":
        manifest["status"] = "running"
        manifest.pop("error", None)
        manifest["driver"] = driver_record()
        if ray_session:
            manifest["driver"]["ray_session"] = ray_session
        lake.write_bytes(f"{lake.run_dir(plan.run)}/spec.toml", plan.spec.text.encode("utf-8"))
        lake.write_manifest(manifest)
    return manifest


def prepare(
    lake: Lake, plan: Plan, *, resume: bool, overwrite: bool
) -> tuple[dict[str, Any], list[ShardTask]]:
    """The manifest to continue and the shards still to run; refuses to clobber by accident."""
    start = check_start(lake, plan, resume=resume, overwrite=overwrite)
    return start_run(lake, plan, start), start.todo


def confirm_shard(lake: Lake, task: ShardTask, result: dict[str, Any]) -> str | None:
    """What is wrong with the files a finished task says it committed, or None: each table's
    file must be there with the size the task reported."""
    paths = [lake.shard_path(t, task.run, task.n_players, task.shard) for t in TABLE_ORDER]
    sizes = result.get("bytes") or {}
    if isinstance(lake.fs, pafs.LocalFileSystem):
        infos = lake.fs.get_file_info(paths)
    else:  # a request each on an object store: at once, not one after another
        infos = list(_lookups().map(lake.fs.get_file_info, paths))
    for table, info in zip(TABLE_ORDER, infos, strict=True):
        if info.type != pafs.FileType.File:
            return f"its {table} file {info.path} is gone"
        if table in sizes and info.size != sizes[table]:
            return f"its {table} file has {info.size} bytes, the task wrote {sizes[table]}"
    return None


@functools.cache
def _lookups() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(len(TABLE_ORDER), thread_name_prefix="flip7-confirm")


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
    if "bytes" in result:  # each file's size, confirmed by the driver (confirm_shard)
        manifest["shards"][str(task.shard)]["bytes"] = result["bytes"]
    if "stats" in result:  # per policy, the summary's sums (pipeline.summary.STATS_FIELDS);
        # a worker of an older flip7 sends none: the summary then reads the shard's games file
        manifest["shards"][str(task.shard)]["stats"] = result["stats"]
    if "compare" in result:  # the paired sums of a [stop] comparison (pipeline.sequential)
        manifest["shards"][str(task.shard)]["compare"] = result["compare"]
    if "ahead" in result:  # the head-to-head sums of a [stop] ranking test (pipeline.ranking)
        manifest["shards"][str(task.shard)]["ahead"] = result["ahead"]


def finish(lake: Lake, manifest: dict[str, Any], failed: dict[int, str]) -> None:
    """Mark the run complete (or failed, naming the first failure) and save the manifest.
    Every recorded shard's files are confirmed first: shards whose files are gone are taken
    out of the manifest and the run fails, naming them (--resume runs them again)."""
    lake.remove_temporaries(manifest["run"])
    missing = lake.missing_shards(manifest)
    for shard in missing:
        del manifest["shards"][str(shard)]
    if missing or failed:
        errors = []
        if missing:
            errors.append(
                f"{len(missing)} shard(s) lost their files after they were written: "
                f"{missing_text(missing)}; run it again with --resume to re-run them"
            )
        if failed:
            first = min(failed)
            errors.append(f"{len(failed)} shard(s) failed; shard {first}: {failed[first]}")
        manifest["status"] = "failed"
        manifest["error"] = "; ".join(errors)
    elif len(manifest["shards"]) == manifest["planned_shards"] or sequential_decided(manifest):
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
    policy_timeout: float | None = None,
    announce: Callable[[], None] | None = None,
) -> RunReport:
    """Run (or finish) a plan on Ray; the manifest under `root` records every finished shard.
    `announce` is called once the run is known to have shards to run, before Ray starts.

    First the driver takes the run's lease (pipeline.lease): a run another driver is writing
    is refused, naming it; a stale lease is taken over only with `resume` or `overwrite`.
    Nothing else is written before Ray is reached: a refused start, or an address where no Ray
    answers, leaves the lake as it was (the lease is removed, with any folder made for it)."""
    if num_cpus is not None and num_cpus < 1:
        raise ValueError(f"--num-cpus must be >= 1, got {num_cpus}")
    if retries < 0:
        raise ValueError(f"--retries must be >= 0, got {retries}")
    policy_timeout = check_policy_timeout(policy_timeout)
    lake = Lake.open(root)
    # One writer per run: the lease comes first, before the run is read or Ray started.
    lease = take(lake, plan.run, take_over=resume or overwrite)
    lease.start_heartbeat()
    try:
        return _run_leased(
            plan, lake, lease, address, num_cpus, resume, overwrite, retries, progress,
            policy_timeout, announce,
        )  # fmt: skip
    finally:
        lease.release()


def _run_leased(
    plan: Plan,
    lake: Lake,
    lease: Lease,
    address: str | None,
    num_cpus: int | None,
    resume: bool,
    overwrite: bool,
    retries: int,
    progress: bool,
    policy_timeout: float | None,
    announce: Callable[[], None] | None = None,
) -> RunReport:
    """run_tournament, once this driver holds the run's lease."""
    start = check_start(lake, plan, resume=resume, overwrite=overwrite)
    # -- a sequential test ([stop] test = "sprt" or "ranking"): the Stopper looks at complete waves in plan
    # order; once it decides, no new shard starts (those running finish and are kept).
    stopper = Stopper(lake, plan, start.manifest) if plan.spec.stop.sequential else None
    if stopper is not None and stopper.decided:
        start.todo = []
    report = RunReport(plan.run, lake.uri, start.manifest["status"], len(plan.shards))
    report.skipped = sorted(int(k) for k in start.manifest["shards"])
    if not start.todo:
        manifest = start.manifest
        if start.filled:
            lake.write_manifest(manifest)
        if manifest["status"] != "complete":
            finish(lake, manifest, {})
        report.status = manifest["status"]
        return report
    if announce is not None:
        announce()
    fault = os.environ.get(FAULT_ENV) or None
    if not _is_local(address):  # an address that does not answer fails before any compile
        ray_start.probe(str(address))
    else:
        ray_start.start_tries()  # and so does a bad FLIP7_RAY_START_TRIES
    kernel = kernel_of(plan)
    report.kernel = warm_kernel(kernel)

    import ray

    t0 = time.perf_counter()
    reaper = start_reaper() if not ray.is_initialized() and _is_local(address) else None
    where = "starting a local Ray" if _is_local(address) else f"joining Ray at {address}"
    try:
        with waiting(f"{where} ...") if progress else nullcontext():
            started = _connect(ray, address, num_cpus, reaper, kernel)
    except BaseException:
        stop_reaper(reaper)
        raise
    report.ray_seconds = time.perf_counter() - t0
    terminated: list[int] = []
    old_handler = _on_sigterm(terminated)
    try:
        session = _ray_session(ray) if started else None
        tell_session(reaper, session)
        manifest = start_run(lake, plan, start, session)
        todo = start.todo
        # Retry worker deaths (Ray's max_retries) and I/O errors, not bugs. Ray takes a list of
        # exception types for retry_exceptions; its type stubs only know a bool.
        remote = ray.remote(  # type: ignore[call-overload]
            num_cpus=1, max_retries=retries, retry_exceptions=[OSError]
        )(run_shard)
        own_local = started and _is_local(address)
        window = _window(ray, num_cpus, own_local)
        bar = _progress_bar(plan, manifest, progress)
        pending: dict[Any, ShardTask] = {}
        tries: dict[int, int] = {}  # per shard: runs whose files were not confirmed
        queue = list(reversed(todo))
        t1 = last_write = time.perf_counter()
        c1 = time.process_time()
        report.submitted = time.time()
        try:
            while queue or pending:
                while queue and len(pending) < window:
                    task = queue.pop()
                    ref = remote.remote(task, lake.uri, fault, RULES_VERSION, policy_timeout)
                    pending[ref] = task
                ray.wait(list(pending), num_returns=1, timeout=LEASE_CHECK_SECONDS)
                lease.check()  # another driver took the run over: stop writing it
                ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
                for ref in ready:
                    task = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        report.failed[task.shard] = _one_line(exc)
                        if stopper is not None:  # its wave can never complete: stop starting
                            queue.clear()
                        continue
                    problem = confirm_shard(lake, task, result)
                    if problem is not None:  # written, then gone: run it again, or fail it
                        tries[task.shard] = tries.get(task.shard, 0) + 1
                        if tries[task.shard] <= retries:
                            queue.append(task)
                        else:
                            report.failed[task.shard] = f"files not confirmed: {problem}"
                        continue
                    record_shard(manifest, task, result)
                    if stopper is not None and stopper.record():
                        queue.clear()
                    report.ran.append(task.shard)
                    report.nodes[task.shard] = result["node"]
                    report.games += task.n_games
                    report.events += result.get("events", result["rows"]["events"])
                    report.cpu_seconds += result["cpu_seconds"]
                    if "started" in result:
                        report.timeline.append(
                            (task.shard, result["pid"], result["started"], result["finished"],
                             time.time(), result["cpu_seconds"], result["warm"])
                        )  # fmt: skip
                    if bar is not None:
                        bar.update(task.n_games)
                if bar is not None and ready:
                    rate = report.events / max(time.perf_counter() - t1, 1e-9)
                    done = len(manifest["shards"])
                    bar.set_postfix_str(
                        f"shards {done}/{len(plan.shards)}, {rate / 1e6:.2f}M events/s"
                        + (f"; {stopper.progress()}" if stopper is not None else ""),
                        refresh=False,
                    )
                if time.perf_counter() - last_write >= MANIFEST_INTERVAL:
                    lake.write_manifest(manifest)
                    last_write = time.perf_counter()
        except BaseException as exc:
            # Everything is said and recorded before the tasks are cancelled: cancelling a task
            # as it completes can trip a check failure inside Ray that ends this process at
            # once (a race in Ray's task manager). A local Ray of our own is not cancelled
            # at all: ray.shutdown below stops it, workers included, and the reaper the rest.
            if isinstance(exc, LeaseLost):  # the run is another driver's now: leave it be
                print(f"flip7 tournament: error: {_one_line(exc)}", file=sys.stderr, flush=True)
                exc.announced = True
                _cancel(ray, pending, own_local)
                raise
            manifest["status"] = "failed"
            manifest["error"] = "terminated" if terminated else stop_reason(exc)
            try:
                lake.write_manifest(manifest)
            except OSError as write_exc:
                _cancel(ray, pending, own_local)
                # The lake itself failed (read-only, full, gone): the manifest still says
                # `running`, with this driver's pid, which the next start finds dead.
                raise OSError(
                    f"run {plan.run!r} stopped: cannot write its manifest under {lake.uri} "
                    f"({_one_line(write_exc)}); once the lake is writable again, finish it "
                    "with --resume"
                ) from None
            if isinstance(exc, KeyboardInterrupt):
                exc.kept = (len(manifest["shards"]), len(plan.shards))  # for the CLI's line
            _cancel(ray, pending, own_local)
            if isinstance(exc, OSError):
                raise OSError(
                    f"run {plan.run!r} stopped: {_one_line(exc)}; finish it with --resume"
                ) from None
            raise
        finally:
            if bar is not None:
                bar.close()
        report.seconds = time.perf_counter() - t1
        report.driver_cpu_seconds = time.process_time() - c1
    finally:
        if started:
            ray.shutdown()
        stop_reaper(reaper)
        if old_handler is not None:
            signal.signal(signal.SIGTERM, old_handler)
    try:
        lease.check()
        finish(lake, manifest, report.failed)
    except LeaseLost:
        raise
    except OSError as exc:
        raise OSError(
            f"run {plan.run!r}: cannot write its manifest under {lake.uri} ({_one_line(exc)}); "
            "once the lake is writable again, finish it with --resume"
        ) from None
    report.status = manifest["status"]
    return report


def _cancel(ray: Any, pending: dict[Any, Any], own_local: bool) -> None:
    """Cancel the tasks still running, unless the Ray is a local one this driver started (its
    shutdown stops them)."""
    if own_local:
        return
    for ref in pending:
        ray.cancel(ref, force=True)


def _on_sigterm(received: list[int]) -> Any:
    """Record SIGTERM in `received`, then exit as Ray's driver handler does (SystemExit): the
    record survives Ray re-raising it as another SystemExit code. The old handler, or None
    outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_term(signum: int, frame: Any) -> None:
        received.append(signum)
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, on_term)


def stop_reason(exc: BaseException) -> str:
    """What the manifest records when the driver stops on `exc`: `interrupted` (Ctrl-C),
    `terminated` (SIGTERM, which Ray's driver turns into SystemExit(15)), else the error."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, SystemExit):
        return (
            "terminated"
            if exc.code in (signal.SIGTERM, int(signal.SIGTERM))
            else (f"exited ({exc.code})")
        )
    return _one_line(exc)


def check_policy_timeout(seconds: float | None) -> float | None:
    """None (no limit) or a finite number of seconds > 0."""
    if seconds is None:
        return None
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"--policy-timeout must be a number of seconds > 0, got {seconds!r}")
    return float(seconds)


def kernel_of(plan: Plan) -> str | None:
    """The compiled kernels the plan's cells play (pipeline.task.KERNELS, comma-separated:
    `classic` and/or `win` for the builds without and with win's code, or `vengeance`), or
    None when every cell plays on the reference engine."""
    engines = cell_engines(plan)
    cells = [c for c in plan.cells if engines[c.cell][0] == "kernel"]
    if not cells:
        return None
    if plan.spec.variant.startswith("vengeance"):
        return "vengeance"
    with_win = [any(s == "win" or s.startswith("win:") for s in c.lineup) for c in cells]
    return ",".join(
        name for name, used in (("classic", not all(with_win)), ("win", any(with_win))) if used
    )


def warm_kernel(kernel: str | None) -> Any:
    """Load (on a fresh install: compile) `kernel` (kernel_of) here before the workers need it;
    its flip7.kernel.LoadInfo, or None."""
    if kernel is None:
        return None
    from pipeline import codebook, rollups
    from pipeline.task import load_kernels

    info = load_kernels(kernel)
    rollups.warm()  # the shards' rollup and codebook passes, which the workers would
    codebook.warm()  # otherwise each compile
    return info


def _is_local(address: str | None) -> bool:
    return address in (None, "", "local")


def _connect(
    ray: Any,
    address: str | None,
    num_cpus: int | None,
    reaper: Any = None,
    kernel: str | None = None,
) -> bool:
    """Start or join Ray unless this process already has; True if we must shut it down. A Ray
    that cannot be reached is a one-line ConnectionError. A local Ray's workers load `kernel`
    (kernel_of) as they start (pipeline.preload)."""
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    kwargs: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": True}
    preload = kernel is not None and _is_local(address)
    if _is_local(address):
        kwargs.update(address="local", num_cpus=num_cpus, include_dashboard=False)
        if preload:
            kwargs["_system_config"] = {"preload_python_modules": [PRELOAD_MODULE]}
    else:
        assert address is not None
        ray_start.probe(address)
        # The nodes run their installed flip7 (not a copy shipped with the job): numba keeps
        # the compiled kernel next to the installed code, so it compiles once per node, not in
        # every worker of every run. Each task checks its rules version against the driver's.
        kwargs.update(address=address)
    try:
        # Every process of this local Ray inherits these (the raylet, so its workers too): the
        # reaper's tag (see pipeline.reaper) and the kernel its workers preload.
        if reaper is not None:
            os.environ[OWNER_ENV] = reaper.tag
        if preload:
            os.environ[PRELOAD_ENV] = str(kernel)
        if _is_local(address):
            ray_start.start_local(ray, kwargs)  # retries on a busy machine, saying so
        else:
            ray.init(**kwargs)
    except ray_start.Unreachable:
        raise
    except Exception as exc:
        where = "a local Ray" if _is_local(address) else f"Ray at {address}"
        raise ConnectionError(f"cannot start or reach {where}: {_one_line(exc)}") from None
    finally:
        os.environ.pop(OWNER_ENV, None)
        os.environ.pop(PRELOAD_ENV, None)
    return True


def _ray_session(ray: Any) -> str | None:
    """The session directory of the Ray this driver started (to find its processes)."""
    try:
        return str(ray._private.worker._global_node.get_session_dir_path())
    except AttributeError:
        return None


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
        unit=" games",  # "52.3k games/s", not "52.3kgame/s"
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
