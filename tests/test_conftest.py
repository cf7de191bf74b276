"""tests/conftest.py itself, run on small test files in a fresh pytest: under CI a skip of a
`required` test fails, elsewhere it stays a skip; the hypothesis profile follows CI and
FLIP7_HYPOTHESIS_PROFILE; under pytest-xdist the tests that start Ray share one worker, first,
and each file's tests stay together."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()
INI = """
[pytest]
addopts = -ra --strict-markers
markers =
    required: must run in CI
    ray: starts a real local Ray
"""
SKIPS = """
import pytest

@pytest.fixture
def browser():
    pytest.skip("no chromium here")

@pytest.mark.required
def test_required(browser):
    pass

def test_optional(browser):
    pass
"""
PROFILE = """
from hypothesis import settings

def test_profile():
    print("PROFILE", settings.get_current_profile_name(), settings.default.derandomize)
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytest project with this repository's conftest and no CI variables."""
    for name in ("CI", "FLIP7_HYPOTHESIS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makeini(INI)
    return pytester


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_a_required_skip_fails_naming_the_reason(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    """CI set: the required test errors with the skip's reason; an unmarked skip stays a skip."""
    monkeypatch.setenv("CI", ci)
    suite.makepyfile(test_skips=SKIPS)
    result = suite.runpytest_subprocess()
    result.assert_outcomes(errors=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["ERROR test_skips.py::test_required - required test skipped under CI: no chromium here"]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize("ci", [None, "0", "false"])
def test_without_ci_a_required_skip_stays_a_skip_with_its_reason(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None
) -> None:
    """CI unset or off: both tests skip, and -ra prints the reason."""
    if ci is not None:
        monkeypatch.setenv("CI", ci)
    suite.makepyfile(test_skips=SKIPS)
    result = suite.runpytest_subprocess()
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] test_skips.py:*: no chromium here"] * 2  # one line per test
    )
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    "ci, chosen, expected",
    [(None, None, "dev False"), ("true", None, "ci True"), ("true", "long", "long False")],
)
def test_hypothesis_profile_follows_ci_and_the_variable(
    suite: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    ci: str | None,
    chosen: str | None,
    expected: str,
) -> None:
    """dev locally, ci (derandomized) under CI, and FLIP7_HYPOTHESIS_PROFILE over both."""
    if ci is not None:
        monkeypatch.setenv("CI", ci)
    if chosen is not None:
        monkeypatch.setenv("FLIP7_HYPOTHESIS_PROFILE", chosen)
    suite.makepyfile(test_profile=PROFILE)
    result = suite.runpytest_subprocess("-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*PROFILE {expected}"])


def test_an_unknown_profile_is_refused_by_name(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misspelt profile stops the run, naming the valid ones."""
    monkeypatch.setenv("FLIP7_HYPOTHESIS_PROFILE", "lnog")
    suite.makepyfile(test_profile=PROFILE)
    result = suite.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*FLIP7_HYPOTHESIS_PROFILE='lnog' is not a hypothesis profile; valid: dev, ci, long"]
    )


# Each test appends "worker test" to the file $ORDER names, in the order the tests ran.
WORKERS = """
import os
import pytest

def log(name):
    with open(os.environ["ORDER"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + " " + name + "\\n")

@pytest.mark.ray
def test_ray_{f}():
    log("ray_{f}")

@pytest.mark.parametrize("i", range(4))
def test_plain_{f}(i):
    log("plain_{f}")
"""


def test_under_xdist_the_ray_tests_share_one_worker_first_and_files_stay_whole(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scripts/test's options: the `ray` tests of three files run in one worker, before any
    other test of that worker; the other tests of a file all run in one worker."""
    order = suite.path / "order.txt"
    monkeypatch.setenv("ORDER", str(order))
    suite.makepyfile(**{f"test_{f}": WORKERS.format(f=f) for f in "abc"})
    result = suite.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder")
    result.assert_outcomes(passed=15)
    ran: dict[str, list[str]] = {}
    for line in order.read_text().splitlines():
        worker, name = line.split()
        ran.setdefault(worker, []).append(name)
    ray = [w for w, names in ran.items() if any(n.startswith("ray") for n in names)]
    assert len(ray) == 1, ran
    assert sorted(ran[ray[0]][:3]) == ["ray_a", "ray_b", "ray_c"], ran
    for f in "abc":
        assert len([w for w, names in ran.items() if f"plain_{f}" in names]) == 1, ran
