"""Suite-wide test settings: skips that CI refuses, and the hypothesis profiles.

CI (the `CI` variable set to anything but empty, 0, false or no, as CI services set it): a test
marked `required` that skips fails instead, saying what was missing, so a run cannot go green
without it. Locally such a skip stays a skip and `-ra` prints its reason. No test in the suite
uses `pytest.importorskip`: every package it imports is a dependency or in the `dev` extra, so a
missing one (or an ImportError inside the repository) fails the run.

Hypothesis profiles (docs/testing.md); FLIP7_HYPOTHESIS_PROFILE picks one, else `ci` under CI,
else `dev`. A @given test states its example count in its @settings (docs/testing.md lists
them); one that states none runs hypothesis's default, 100.
- dev: hypothesis's defaults: new random examples on each run; a failure prints the
  @reproduce_failure line that replays it.
- ci: derandomize=True, no example database: each test's examples are a fixed function of the
  test, so a CI failure replays anywhere with FLIP7_HYPOTHESIS_PROFILE=ci.
- long: a run before a release: random examples (a failure prints its @reproduce_failure line),
  20,000 games in the kernel's differential test (tests/flip7/test_kernel.py), 1,000 examples
  for a test that states no count.

Solver tables: every table the session solves (dp, race, win) goes to a directory of its own
($FLIP7_CACHE, set here for the tests and the processes they start), never ~/.cache/flip7, so
no table left by other code can hide a change. Compiled kernels: when numba's cache lacks one,
a line says so before the first test, with what compiling it costs (docs/kernel.md).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, settings

#: pytester runs tests/test_conftest.py's small suites against this file.
pytest_plugins = ["pytester"]

PROFILE_ENV = "FLIP7_HYPOTHESIS_PROFILE"


def ci_enabled() -> bool:
    """Whether this run is CI's (the CI variable, as GitHub Actions and others set it)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


# Each on hypothesis's defaults: hypothesis itself loads its own `ci` profile when CI is set,
# and a profile registered without a parent would inherit whatever is loaded.
_DEFAULT = settings.get_profile("default")
settings.register_profile("dev", _DEFAULT, print_blob=True)
settings.register_profile(
    "ci",
    _DEFAULT,
    derandomize=True,
    database=None,
    print_blob=True,
    deadline=None,  # a shared 2-core CI machine: timing is not what these tests check
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("long", _DEFAULT, max_examples=1_000, print_blob=True)
PROFILES = ("dev", "ci", "long")


#: Set while a session runs: the suites its tests run (pytester's) share its solver cache.
SESSION_CACHE_ENV = "FLIP7_TEST_SESSION_CACHE"
_SOLVER_CACHE: list[str] = []  # the directory this session made (and removes)


def pytest_configure(config: pytest.Config) -> None:
    if SESSION_CACHE_ENV not in os.environ:  # the outermost session: its own solver cache
        _SOLVER_CACHE.append(tempfile.mkdtemp(prefix="flip7-tables-"))
        os.environ[SESSION_CACHE_ENV] = _SOLVER_CACHE[0]
    os.environ["FLIP7_CACHE"] = os.environ[SESSION_CACHE_ENV]
    name = os.environ.get(PROFILE_ENV) or ("ci" if ci_enabled() else "dev")
    if name not in PROFILES:
        raise pytest.UsageError(
            f"{PROFILE_ENV}={name!r} is not a hypothesis profile; valid: {', '.join(PROFILES)}"
        )
    settings.load_profile(name)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _SOLVER_CACHE and _outermost():
        shutil.rmtree(_SOLVER_CACHE.pop(), ignore_errors=True)
        os.environ.pop(SESSION_CACHE_ENV, None)


def _outermost() -> bool:
    """False in a suite that a test runs (pytester's)."""
    return not os.environ.get("PYTEST_CURRENT_TEST")


def pytest_sessionstart(session: pytest.Session) -> None:
    """One line before the first test when a kernel is not in numba's cache: which, and what
    compiling it costs (the test that first uses it compiles it)."""
    if not _outermost():
        return
    from flip7.kernel.load import COMPILE_CPU_SECONDS, cache_dir, cold_pieces

    cold = cold_pieces()
    if cold:
        cost = sum(COMPILE_CPU_SECONDS[p] for p in cold)
        print(
            f"flip7: compiling kernels once in the first tests that use them: {', '.join(cold)} "
            f"(about {cost} CPU seconds in all, docs/kernel.md; cache {cache_dir()}; "
            "`python -m flip7.kernel` warms it first)",
            file=sys.stderr,
            flush=True,
        )


def pytest_report_header(config: pytest.Config) -> str:
    ci = f"CI={os.environ.get('CI')!r} (skips of required tests fail)" if ci_enabled() else "CI off"
    return f"flip7: {ci}; hypothesis profile {settings.get_current_profile_name()!r}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """Under CI, a skip of a test marked `required` becomes a failure naming the reason."""
    report: pytest.TestReport = yield
    if report.skipped and ci_enabled() and item.get_closest_marker("required"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        report.outcome = "failed"
        report.longrepr = f"required test skipped under CI: {reason}"
    return report


@pytest.fixture(autouse=True)
def no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables at their full width whatever $COLUMNS the shell exports (tests that fit a width
    set COLUMNS themselves)."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(autouse=True)
def private_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """The user's configuration (the mart cache's secret) in a directory of the test session,
    never the user's own ~/.config."""
    config = tmp_path_factory.getbasetemp() / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
