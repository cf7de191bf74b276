"""One bad run does not hide the others, and a hostile manifest is one line, never a traceback:
each manifest below once crashed `tournament status`, `tournament list`, `sql`, `report` or
`warehouse verify` (a RecursionError, a KeyError, a TypeError, a DuckDB BinderException)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.cli import main
from pipeline.spec import parse_spec
from tests.security.helpers import one_line

pytestmark = pytest.mark.usefixtures("no_ray")

Edit = Callable[[dict[str, Any]], object]
DEEP = '{"run": "t", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _set(path: tuple[str, ...], value: object) -> Edit:
    def edit(m: dict[str, Any]) -> None:
        for key in path[:-1]:
            m = m[key]
        m[path[-1]] = value

    return edit


def _drop_rows(m: dict[str, Any]) -> None:
    del m["shards"]["0"]["rows"]


#: What the pipeline's commands refuse; the warehouse refuses those in WAREHOUSE too (the fields
#: its views type) and reads the others' runs as usual.
HOSTILE: dict[str, Edit] = {
    "nested 100,000 deep": lambda m: DEEP,
    "a shard entry that is a number": _set(("shards", "0"), 5),
    "a shard's games as a string": _set(("shards", "0", "games"), "60"),
    "a shard without rows": _drop_rows,
    "a shard's stats of strings": _set(("shards", "0", "stats"), {"ev": "x"}),
    "2^70 planned games": _set(("planned_games",), 2**70),
    "a stop without compare": _set(("stop",), {"test": "sprt", "alpha": "x"}),
}
WAREHOUSE = set(HOSTILE) - {"a shard without rows", "a shard's stats of strings"}


@pytest.fixture
def lake(clean_t_good: Path, tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "lake"
    shutil.copytree(clean_t_good, root)
    return root


def _tamper(lake: Path, edit: Edit) -> None:
    path = lake / "runs" / "t" / "manifest.json"
    manifest = json.loads(path.read_text())
    text = edit(manifest)
    path.write_text(text if isinstance(text, str) else json.dumps(manifest))


@pytest.mark.parametrize("what", list(HOSTILE))
def test_a_hostile_manifest_is_one_line_and_hides_no_other_run(
    what: str, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """status and report of the tampered run: one line naming its manifest; list, sql and
    verify: the tampered run named in one line, the good run still answered."""
    _tamper(lake, HOSTILE[what])
    data = ["--data", str(lake)]
    assert main(["tournament", "status", "t", *data]) == 2
    one_line(capsys.readouterr().err, "runs/t/manifest.json")
    assert main(["tournament", "list", *data]) == 0
    out = capsys.readouterr().out
    assert "good" in out and "unreadable" in out and "Traceback" not in out
    assert main(["report", "good", "--no-file", *data]) == 0
    capsys.readouterr()
    assert main(["sql", "SELECT DISTINCT run FROM stg_games", *data]) == 0
    out, err = capsys.readouterr()
    assert "good" in out and "Traceback" not in err
    if what not in WAREHOUSE:  # fields the warehouse does not read: the run reads as usual
        assert "t" in out.split()
        return
    assert "t" not in out.split() and "run t: left out: manifest" in err
    assert main(["report", "t", "--no-file", *data]) == 2
    one_line(capsys.readouterr().err, "runs/t/manifest.json")
    assert main(["warehouse", "verify", *data]) == 1
    out, err = capsys.readouterr()
    assert "FAIL  manifests_readable" in out and "run=t" in out and "Traceback" not in out + err


def test_a_stray_run_folder_hides_no_other_run(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run folder with no manifest whose Parquet files have another schema is left out with
    one line naming it; every query still answers for the other runs."""
    for table in ("events", "rounds", "rollups", "games"):
        folder = lake / table / "run=stray" / "players=2"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"x": [1, 2]}), folder / "shard-00000.parquet")
    data = ["--data", str(lake)]
    assert main(["sql", "SELECT DISTINCT run FROM stg_games ORDER BY run", *data]) == 0
    out, err = capsys.readouterr()
    assert "good" in out and "stray" not in out
    (note,) = [n for n in err.split("; ") if "stray" in n]
    assert "run stray: left out" in note and "no manifest" in note and "Traceback" not in err
    assert main(["warehouse", "verify", *data]) == 1
    out = capsys.readouterr().out
    assert "FAIL  manifests_readable" in out and "run=stray" in out


def test_a_spec_nested_too_deep_is_one_line() -> None:
    """TOML arrays nested 100,000 deep: the spec reader's RecursionError becomes one line."""
    with pytest.raises(ValueError, match="nested too deep") as err:
        parse_spec("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert "\n" not in str(err.value)
