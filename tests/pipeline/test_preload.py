"""Ray workers load the compiled kernel as they start (pipeline.preload), on a local Ray the
driver starts and on a cluster started with the preload."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.plan import make_plan
from pipeline.run import kernel_of, run_tournament
from pipeline.spec import parse_spec
from pipeline.task import PRELOAD_ENV, PRELOAD_MODULE, load_kernel
from tests.pipeline.helpers import small_plan

ROOT = Path(__file__).resolve().parents[2]

PROBE = (
    "import importlib, json, sys\n"
    f"importlib.import_module({PRELOAD_MODULE!r})\n"
    "from flip7.kernel.load import loaded\n"
    "print(json.dumps([loaded(), loaded(vengeance=True), 'numba' in sys.modules]))\n"
)
DRIVER = (
    "import json, sys\n"
    "import pipeline.run, flip7.cli\n"
    "print(json.dumps(['numba' in sys.modules]))\n"
)


def imported_with(kernel: str | None, code: str = PROBE) -> list[bool]:
    """[classic kernel loaded, Vengeance kernel loaded, numba imported] in a new process that
    imports PRELOAD_MODULE (as Ray does) with PRELOAD_ENV set to `kernel` (unset for None)."""
    env = {k: v for k, v in os.environ.items() if k != PRELOAD_ENV}
    if kernel is not None:
        env[PRELOAD_ENV] = kernel
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    result: list[bool] = json.loads(done.stdout)
    return result


def test_importing_it_loads_the_kernel_the_environment_names_and_nothing_otherwise() -> None:
    """Imported with PRELOAD_ENV=classic the process has the classic kernel, with vengeance
    the Vengeance kernel alone (a kernel compiles only where it runs); without it, or with a
    name that is no kernel, it does not even import numba."""
    assert imported_with("classic") == [True, False, True]
    assert imported_with("vengeance") == [False, True, True]
    assert imported_with(None) == [False, False, False]
    assert imported_with("fast") == [False, False, False]


def test_the_driver_never_preloads_even_where_the_variable_is_set() -> None:
    """A node's shell may export PRELOAD_ENV for its Ray (the cluster recipe) and run `flip7`
    too: the driver's modules do not import PRELOAD_MODULE, so no command loads numba for it."""
    assert imported_with("classic", DRIVER) == [False]


def test_a_failed_preload_is_left_to_the_first_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that cannot load (numba missing, say) makes load_kernel return False instead
    of raising, which would stop the worker from starting: the first task meets the error and
    reports it with its shard."""
    import flip7.kernel

    def broken(**kwargs: bool) -> None:
        raise ValueError("numba is not installed")

    monkeypatch.setattr(flip7.kernel, "load_info", broken)
    assert load_kernel("classic") is False
    assert load_kernel(None) is False


def test_the_kernel_a_plan_needs() -> None:
    """kernel_of: classic for a plan the kernel plays (win for the build with win's code),
    vengeance for a Vengeance plan, None when every cell plays on the reference engine."""
    lineup = '[[lineups]]\nseats = ["sum:20", "ev"]\n'
    classic = parse_spec(f'name = "k"\nseed = 1\ngames = 10\n{lineup}')
    vengeance = parse_spec(f'name = "v"\nseed = 1\ngames = 10\nvariant = "vengeance"\n{lineup}')
    assert kernel_of(make_plan(classic)) == "classic"
    assert kernel_of(make_plan(vengeance)) == "vengeance"
    assert kernel_of(make_plan(classic, engine="reference")) is None


def test_a_plan_with_win_seats_needs_the_build_with_wins_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kernel_of names the classic kernel's builds without and with win's code that the cells
    play (a real plan with win would solve its tables at target 200 first: minutes)."""
    import pipeline.run

    def plan(*lineups: tuple[str, ...]) -> SimpleNamespace:
        cells = [SimpleNamespace(cell=i, lineup=seats) for i, seats in enumerate(lineups)]
        return SimpleNamespace(cells=cells, spec=SimpleNamespace(variant="classic"))

    monkeypatch.setattr(
        pipeline.run, "cell_engines", lambda p: {c.cell: ("kernel", None) for c in p.cells}
    )
    assert kernel_of(plan(("sum:20", "ev"), ("win:fast", "ev"))) == "classic,win"  # type: ignore[arg-type]
    assert kernel_of(plan(("win", "win:real"))) == "win"  # type: ignore[arg-type]
    assert kernel_of(plan(("ev", "winner:x"))) == "classic"  # type: ignore[arg-type]


@pytest.mark.ray
def test_every_task_of_its_own_local_ray_finds_the_kernel_loaded(tmp_path: Path) -> None:
    """run_tournament starting its own local Ray has each worker load the kernel before it takes
    work: every task, each worker's first included, finds it loaded (the timeline's last
    field, from run_shard's `warm`); the rows are those of any other run."""
    import ray

    assert not ray.is_initialized()
    plan = small_plan(shard_size=40)
    assert kernel_of(plan) == "classic"
    report = run_tournament(plan, str(tmp_path), num_cpus=2, progress=False)
    assert report.status == "complete" and not ray.is_initialized()
    assert len(report.timeline) == len(plan.shards)
    assert all(row[6] is True for row in report.timeline)


@pytest.mark.ray
def test_a_cluster_started_with_the_preload_warms_the_workers_of_every_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster recipe (docs/pipeline.md): PRELOAD_ENV on every node and the head started
    with `--system-config '{"preload_python_modules": ["pipeline.preload"]}'` (what
    ray.cluster_utils passes as _system_config). A driver joining by address then finds the
    kernel loaded in every task, on both nodes."""
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 1, "object_store_memory": 100 << 20, "memory": 512 << 20}
    monkeypatch.setenv(PRELOAD_ENV, "classic")
    config = {"preload_python_modules": [PRELOAD_MODULE]}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={**node, "include_dashboard": False, "_system_config": config},
    )
    try:
        cluster.add_node(**node)
        cluster.wait_for_nodes()
        monkeypatch.delenv(PRELOAD_ENV)  # the driver's own environment plays no part
        plan = small_plan(shard_size=20)
        report = run_tournament(plan, str(tmp_path), address=cluster.address, progress=False)
    finally:
        cluster.shutdown()
    assert report.status == "complete"
    assert len({report.nodes[row[0]] for row in report.timeline}) == 2
    assert all(row[6] is True for row in report.timeline)
