"""Starting a local Ray on a busy machine: it retries with longer pauses, saying what it waits
for, and fails with one line naming the cause and the setting to raise (pipeline.ray_start)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from pipeline import ray_start


class FlakyRay:
    """A stand-in for the ray module whose init fails `failures` times first."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.inits = 0
        self.shutdowns = 0

    def init(self, **kwargs: object) -> None:
        self.inits += 1
        if self.inits <= self.failures:
            raise Exception("Traceback ...\nThe current node timed out during startup. This could")

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_start_that_times_out_is_tried_again_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ray_start.START_TRIES_ENV, "3")
    said: list[str] = []
    ray = FlakyRay(failures=2)
    ray_start.start_local(ray, {}, say=said.append, pause=0)
    assert ray.inits == 3 and ray.shutdowns == 2
    retries = [s for s in said if "did not start" in s]
    assert len(retries) == 2 and "then try 2 of 3" in retries[0] and "load average" in retries[0]


def test_the_last_failure_is_one_line_naming_the_cause_and_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ray_start.START_TRIES_ENV, "2")
    with pytest.raises(ray_start.Unreachable) as failed:
        ray_start.start_local(FlakyRay(failures=5), {}, say=lambda line: None, pause=0)
    message = str(failed.value)
    assert "\n" not in message
    assert "timed out during startup" in message
    assert f"{ray_start.START_TRIES_ENV} above 2" in message and "load average" in message


@pytest.fixture
def cpu_load() -> Iterator[int]:
    """Busy loops, four per CPU (a load of about 4x the cores), for the test's duration."""
    _, cpus = ray_start.load()
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4 * cpus)]
    try:
        yield len(loops)
    finally:
        for p in loops:
            p.kill()
        for p in loops:
            p.wait()


@pytest.mark.ray
def test_a_local_ray_starts_under_cpu_load(cpu_load: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every core busy several times over, the local Ray starts (retrying if it must), or
    fails with one line naming the cause and the setting; it never hangs or leaks a traceback."""
    import ray

    kwargs = {
        "address": "local",
        "num_cpus": 1,
        "include_dashboard": False,
        "logging_level": logging.ERROR,
    }
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.setenv(
        ray_start.START_TRIES_ENV, "3"
    )  # at most about 150 s: within the per-test timeout
    try:
        ray_start.start_local(ray, kwargs)
        assert ray.is_initialized()
        assert ray.get(ray.remote(lambda: 7).remote()) == 7
    except ray_start.Unreachable as exc:
        assert "\n" not in str(exc) and ray_start.START_TRIES_ENV in str(exc)
    finally:
        ray.shutdown()
