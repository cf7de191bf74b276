"""One truncated shard file leaves out its run only: it once made `flip7 sql` without `--run`
fail and the dashboard error for every run, without naming the file. Now the file and its run
are named in one line (the note, the report, verify, a dashboard caption) and every other run
still answers, as for a run whose manifest cannot be read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flip7.cli import main
from tests.security.helpers import one_line

pytestmark = pytest.mark.usefixtures("no_ray")


@pytest.fixture(params=["events", "rounds", "rollups", "games"])
def lake(request: pytest.FixtureRequest, clean_t_good: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the lake with one file of run t truncated to half: (root, that file)."""
    root = tmp_path / "lake"
    shutil.copytree(clean_t_good, root)
    path = sorted((root / request.param / "run=t").rglob("shard-*.parquet"))[0]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return root, path


def test_a_truncated_file_leaves_out_its_run_only(
    lake: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, bad = lake
    data = ["--data", str(root)]
    assert main(["sql", "SELECT DISTINCT run FROM stg_games ORDER BY run", *data]) == 0
    out, err = capsys.readouterr()
    assert "good" in out and "t" not in out.split(), out
    (note,) = [n for n in err.split("; ") if "run t:" in n]
    assert "left out" in note and str(bad) in note and "not readable Parquet" in note, err
    assert main(["sql", "SELECT count(*) FROM stg_games", "--run", "t", *data]) == 2
    one_line(capsys.readouterr().err, "run t", str(bad))
    assert main(["report", "good", "--no-file", *data]) == 0
    capsys.readouterr()
    assert main(["report", "t", "--no-file", *data]) == 2
    one_line(capsys.readouterr().err, str(bad))
    assert main(["warehouse", "verify", *data]) == 1
    out = capsys.readouterr().out
    assert "FAIL  manifests_readable" in out and "run=t" in out and str(bad) in out


def test_the_dashboard_names_the_file_and_shows_the_other_runs(
    lake: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from dashboard import data
    from tests.dashboard.test_app import APP

    root, bad = lake
    monkeypatch.setenv("FLIP7_DATA", str(root))
    monkeypatch.setenv("FLIP7_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "PREPARE_IN_BACKGROUND", False)
    data.reload()
    try:
        at = AppTest.from_file(APP, default_timeout=60).run()
        assert not at.exception, at.exception[0].value
        (caption,) = [c.value for c in at.caption if "run t:" in c.value]
        assert str(bad) in caption and "left out" in caption
        assert at.sidebar.selectbox(key="run").options == ["good"]
        assert len(at.get("vega_lite_chart")) > 0
    finally:
        data.reload()


@pytest.mark.parametrize("table", ["events", "games"])
def test_a_damaged_footer_of_the_same_size_leaves_out_its_run_only(
    table: str, clean_t_good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file damaged in place, neither shorter nor without its magic bytes: the middle of its
    footer overwritten with 0xff. Its footer is read when the lake is opened and does not
    parse, so its run is left out naming the file, and the other run answers."""
    root = tmp_path / "lake"
    shutil.copytree(clean_t_good, root)
    bad = sorted((root / table / "run=t").rglob("shard-*.parquet"))[0]
    data = bytearray(bad.read_bytes())
    length = int.from_bytes(data[-8:-4], "little")
    middle = len(data) - 8 - length // 2
    data[middle - 8 : middle + 8] = b"\xff" * 16
    bad.write_bytes(bytes(data))
    assert (
        main(["sql", "SELECT DISTINCT run FROM stg_games ORDER BY run", "--data", str(root)]) == 0
    )
    out, err = capsys.readouterr()
    assert "good" in out and "t" not in out.split(), out
    (note,) = [n for n in err.split("; ") if "run t:" in n]
    assert "left out" in note and str(bad) in note and "not readable Parquet" in note, err
