"""Bounds with named errors, and one-line errors instead of tracebacks for bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.spec import load_spec, parse_spec
from tests.pipeline.helpers import run_inline, small_plan
from tests.security.helpers import one_line, spec_text, tree, write_spec

pytestmark = pytest.mark.usefixtures("no_ray")

CUSTOM = 'variant = "vengeance(deck=custom)"\n[deck]\n'


@pytest.mark.parametrize(
    "extra, culprit",
    [
        (CUSTOM + '"7" = 1000000000\n', "deck.7: the deck would hold more than 1,000 cards"),
        (CUSTOM + '"7" = true\n', "deck.7: copies must be an integer >= 0, got True"),
        (CUSTOM + '"7" = 1.5\n', "deck.7: copies must be an integer >= 0, got 1.5"),
        ("policy_timeout = -3\n", "policy_timeout: expected a number of seconds > 0"),
        ("policy_timeout = nan\n", "policy_timeout: expected a number of seconds > 0"),
    ],
)
def test_spec_bounds_name_the_field(extra: str, culprit: str) -> None:
    """A [deck] of a billion cards (it used to be accepted, then allocated card by card), a
    boolean card count, a bad policy_timeout: refused, naming the field."""
    with pytest.raises(ValueError) as err:
        parse_spec(spec_text(extra=extra))
    assert culprit in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("size", [0, 100_001, 10**12])
def test_shard_size_is_bounded(size: int) -> None:
    """One shard is one task's memory: shard_size stays within 1..100,000 (MAX_SHARD_SIZE)."""
    with pytest.raises(ValueError, match="shard_size: must be in 1..100,000 games"):
        parse_spec(spec_text(shard_size=size))


@pytest.mark.parametrize("scale", ["inf", "nan", "-1", "0", "1e9", "1e300"])
def test_scale_is_bounded(scale: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--scale must be finite and positive, and the scaled games per cell must fit the lake's
    int32 cell_game (inf was a traceback, 1e300 planned ~1e300 shards); nothing is written."""
    spec = write_spec(tmp_path / "s.toml")
    argv = ["tournament", "run", str(spec), "--data", str(tmp_path / "lake"), f"--scale={scale}"]
    assert main([*argv, "--no-file"]) == 2
    one_line(capsys.readouterr().err, "--scale")
    assert not (tmp_path / "lake").exists()


@pytest.mark.parametrize("players", ["0", "64", "100000"])
def test_players_per_table_is_bounded(players: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A table holds 1..63 seats (the event log's player field): --players beyond is refused."""
    assert main(["sim", "-n", "1", "--players", players, "--no-file"]) == 2
    one_line(capsys.readouterr().err, f"--players must be in 1..63, got {players}")


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    run_inline(small_plan(), str(root))
    return root


@pytest.mark.parametrize(
    "text, culprit",
    [
        ("[1, 2]", "is not a run manifest (a JSON list, expected an object)"),
        ('"t"', "is not a run manifest (a JSON str, expected an object)"),
        ('{"run": "t"}', "field 'status' missing"),
        ("{not json", "is not valid JSON"),
    ],
)
def test_a_manifest_that_is_not_one(
    text: str, culprit: str, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """status, replay and watch say which file is wrong in one line; list still lists."""
    (lake / "runs" / "t" / "manifest.json").write_text(text)
    for argv in (
        ["tournament", "status", "t"],
        ["replay", "t", "0"],
        ["watch", "--run", "t", "--no-file"],
    ):
        assert main([*argv, "--data", str(lake)]) == 2, argv
        one_line(capsys.readouterr().err, "runs/t/manifest.json", culprit)
    assert main(["tournament", "list", "--data", str(lake)]) == 0
    assert culprit in capsys.readouterr().out


def test_shards_without_a_manifest(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run whose runs/ directory is gone: one line saying its shards are there, not that the
    run does not exist."""
    shutil.rmtree(lake / "runs")
    assert main(["tournament", "status", "t", "--data", str(lake)]) == 2
    one_line(capsys.readouterr().err, "run 't'", "has shard files but no manifest")
    assert main(["tournament", "list", "--data", str(lake)]) == 0
    assert "no runs under" in capsys.readouterr().out


def test_out_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path / "s.toml")
    out = tmp_path / "data.txt"
    out.write_text("keep me")
    assert main(["tournament", "run", str(spec), "--data", str(out), "--no-file"]) == 2
    one_line(capsys.readouterr().err, str(out), "is a file, not a directory")
    assert out.read_text() == "keep me"


def test_spec_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Latin-1 spec is named, with the offending byte, instead of a bare codec error."""
    spec = tmp_path / "latin.toml"
    spec.write_bytes(
        spec_text().replace("seed = 7", 'description = "caf\xe9"\nseed = 7').encode("latin-1")
    )
    assert main(["tournament", "run", str(spec), "--no-file"]) == 2
    one_line(capsys.readouterr().err, str(spec), "not UTF-8", "0xe9")
    with pytest.raises(ValueError, match="is a directory"):
        load_spec(tmp_path)


@pytest.mark.parametrize(
    "argv",
    [
        ["sim", "-n", "5"],
        ["round", "-n", "5"],
        ["watch"],
        ["rules"],
        ["tournament", "run", "SPEC"],
    ],
)
@pytest.mark.parametrize("where", ["dir", "under-a-file", "unwritable"])
def test_output_file_that_cannot_be_written(
    argv: list[str], where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o naming a directory, a path under a file, or a file that refuses writes is one line
    before the command runs (it used to run, then fail with a traceback)."""
    spec = write_spec(tmp_path / "s.toml")
    argv = [str(spec) if a == "SPEC" else a for a in argv]
    target = {
        "dir": tmp_path,
        "under-a-file": spec / "out.txt",
        "unwritable": Path("/proc/version"),
    }[where]
    before = tree(tmp_path)
    assert main([*argv, "-o", str(target)]) == 2
    captured = capsys.readouterr()
    one_line(captured.err, f"-o {target}")
    assert captured.out == ""
    assert tree(tmp_path) == before


def test_watch_game_needs_run(capsys: pytest.CaptureFixture[str]) -> None:
    """`watch --game 5` without --run used to show a new game silently; now it says why not."""
    assert main(["watch", "--game", "5", "--no-file"]) == 2
    one_line(capsys.readouterr().err, "--game", "--run RUN")


def test_signals_are_recorded_by_name() -> None:
    """Ray's driver turns SIGTERM into SystemExit(15): the manifest says `terminated`."""
    from pipeline.run import stop_reason

    assert stop_reason(SystemExit(15)) == "terminated"
    assert stop_reason(KeyboardInterrupt()) == "interrupted"
    assert stop_reason(RuntimeError("a\nb")) == "b"


def test_manifest_naming_another_run_is_refused(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A manifest copied under another run's name is refused by status and replay."""
    manifest = json.loads((lake / "runs" / "t" / "manifest.json").read_text())
    (lake / "runs" / "v").mkdir()
    (lake / "runs" / "v" / "manifest.json").write_text(json.dumps(manifest))
    for argv in (["tournament", "status", "v"], ["replay", "v", "0"]):
        assert main([*argv, "--data", str(lake)]) == 2
        one_line(capsys.readouterr().err, "runs/v/manifest.json", "names run 't', not 'v'")
