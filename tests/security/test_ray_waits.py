"""Waits with an end: an --address whose port takes the connection and never answers fails
after a bounded wait, with a line while it waits and one line at the end, and writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline import ray_start
from tests.security.helpers import hung_port, write_spec

pytestmark = pytest.mark.usefixtures("no_ray")


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts every connection and never sends a byte."""
    with hung_port() as port:
        yield port


def test_an_address_that_never_answers_fails_after_a_bounded_wait(
    silent_port: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(ray_start.CONNECT_TIMEOUT_ENV, "2")
    spec = write_spec(tmp_path / "s.toml")
    lake = tmp_path / "lake"
    address = f"127.0.0.1:{silent_port}"
    argv = ["tournament", "run", str(spec), "--data", str(lake), "--address", address]
    assert main([*argv, "--no-file"]) == 1
    err = capsys.readouterr().err
    lines = [s for s in err.splitlines() if s.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 2, err  # one while waiting, one at the end
    assert "waiting for Ray at" in lines[0] and address in lines[0]
    assert address in lines[1] and "did not answer" in lines[1], lines[1]
    assert ray_start.CONNECT_TIMEOUT_ENV in lines[1]
    assert not lake.exists()


def test_ray_client_addresses_are_asked_the_same_way(silent_port: int) -> None:
    with pytest.raises(ray_start.Unreachable, match="did not answer"):
        ray_start.probe(f"ray://127.0.0.1:{silent_port}", say=lambda line: None, seconds=0.5)


def test_a_bad_wait_setting_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ray_start.CONNECT_TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match=ray_start.CONNECT_TIMEOUT_ENV):
        ray_start.connect_timeout()
    monkeypatch.setenv(ray_start.START_TRIES_ENV, "0")
    with pytest.raises(ValueError, match=ray_start.START_TRIES_ENV):
        ray_start.start_tries()


def test_a_bad_start_setting_stops_the_run_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ray_start.START_TRIES_ENV, "lots")
    spec = write_spec(tmp_path / "s.toml")
    lake = tmp_path / "lake"
    assert main(["tournament", "run", str(spec), "--data", str(lake), "--no-file"]) == 2
    err = capsys.readouterr().err
    lines = [s for s in err.splitlines() if s.strip()]
    assert len(lines) == 1 and ray_start.START_TRIES_ENV in lines[0], err
    assert not lake.exists()
