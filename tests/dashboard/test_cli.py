"""flip7 dashboard: the streamlit command line it runs, and clear refusals of bad options."""

from __future__ import annotations

import pytest

from dashboard import cli
from flip7.cli import build_parser, main


def test_dashboard_is_a_flip7_subcommand():
    """`flip7 dashboard` parses --data, --port and --address, defaulting to 127.0.0.1:8501."""
    args = build_parser().parse_args(["dashboard", "--data", "/tmp/x", "--port", "9000"])
    assert (args.data, args.port, args.address) == ("/tmp/x", 9000, "127.0.0.1")
    assert args.func is cli.cmd_dashboard and args.tee is False


def test_streamlit_command_is_private_and_quiet():
    """The server binds the address given, sends no usage statistics and opens no browser."""
    cmd = cli.streamlit_command(8600, "127.0.0.1")
    flags = dict(zip(cmd[5::2], cmd[6::2], strict=True))
    assert cmd[1:5] == ["-m", "dashboard.serve", "run", str(cli.APP)]
    assert flags["--server.address"] == "127.0.0.1"
    assert flags["--server.port"] == "8600"
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.headless"] == "true"


def test_data_dir_defaults_to_the_lake_contract(monkeypatch, tmp_path):
    """--data, else $FLIP7_DATA, else ./data, always made absolute."""
    monkeypatch.setenv("FLIP7_DATA", str(tmp_path))
    assert cli.data_dir(None) == str(tmp_path)
    assert cli.data_dir("rel").endswith("/rel")
    monkeypatch.delenv("FLIP7_DATA")
    monkeypatch.chdir(tmp_path)
    assert cli.data_dir(None) == str(tmp_path / "data")


def test_cache_dir_is_the_users_and_never_inside_the_lake(monkeypatch, tmp_path):
    """--cache-dir, else $FLIP7_CACHE, else ~/.cache/flip7, made absolute; a directory inside
    the lake is refused, naming both."""
    lake = str(tmp_path / "lake")
    monkeypatch.delenv("FLIP7_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cli.cache_path(None, lake) == str(tmp_path / "home" / ".cache" / "flip7")
    monkeypatch.setenv("FLIP7_CACHE", str(tmp_path / "env"))
    assert cli.cache_path(None, lake) == str(tmp_path / "env")
    assert cli.cache_path(str(tmp_path / "flag"), lake) == str(tmp_path / "flag")
    assert cli.cache_path(str(tmp_path / "lake-cache"), lake) == str(tmp_path / "lake-cache")
    for inside in (lake, f"{lake}/cache"):
        with pytest.raises(ValueError, match="lies inside the lake"):
            cli.cache_path(inside, lake)
    assert cli.cache_path(f"{lake}/cache", "s3://bucket/lake") == f"{lake}/cache"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "70000"], "--port must be between 1 and 65535"),
        (["--address", "my laptop"], "is not an IP address"),
        (["--data", "gopher://host/lake"], "cannot open data location"),
        (["--data", "/tmp/lake", "--cache-dir", "/tmp/lake/c"], "lies inside the lake"),
    ],
)
def test_bad_options_are_one_line_errors(capsys, argv, message):
    """Bad options exit 2 with a message naming the option and what would be right."""
    assert main(["dashboard", *argv]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "dashboard" in line]
    assert len(errors) == 1 and errors[0].startswith("flip7 dashboard: error: ")
    assert message in errors[0]
