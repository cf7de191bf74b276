"""The sequential test's marts (sprt_tests, sprt_waves) read the manifest's looks as recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.lake import Lake
from pipeline.plan import make_plan
from pipeline.spec import parse_spec
from tests.pipeline.helpers import run_inline
from tests.pipeline.test_sprt_run import SPEC, run_emulated, sprt_plan
from warehouse import connect, queries, verify
from warehouse.build import sql_files
from warehouse.report import report
from warehouse.verify import failing_rows


@pytest.fixture(scope="module")
def sprt_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A lake with a decided sequential run `s` and a fixed run `f` (no test)."""
    root = tmp_path_factory.mktemp("sprt-lake")
    manifest = run_emulated(sprt_plan(), str(root))
    fixed = SPEC.replace('name = "s"', 'name = "f"').split("[stop]")[0]
    run_inline(
        make_plan(parse_spec(fixed.replace("[[lineups]]", "games = 250\n[[lineups]]"))), str(root)
    )
    return root, manifest


def test_waves_and_decision_as_the_manifest_records_them(
    sprt_lake: tuple[Path, dict[str, Any]],
) -> None:
    """sprt_waves: one row per look with the manifest's games, estimate, interval and LLR, the
    decision on the last; sprt_tests: one row for the sequential run, none for the fixed one."""
    root, manifest = sprt_lake
    stop = manifest["stop"]
    con = connect(str(root))
    waves = queries.sprt_waves(con, "s")
    assert waves.games.tolist() == [w["games"] for w in stop["waves"]]
    assert waves.llr.tolist() == pytest.approx([w["llr"] for w in stop["waves"]])
    last = stop["waves"][-1]
    assert waves.estimate_hi.iloc[-1] == pytest.approx(last["estimate"] + last["half_width"])
    assert waves.decision.tolist()[-1] == "H1" and waves.decision.isna().sum() == len(waves) - 1
    assert (waves.upper_bound == stop["bounds"][1]).all()
    tests = queries.sprt_tests(con)
    assert tests.run.tolist() == ["s"]
    row = tests.iloc[0]
    assert (row.policy_a, row.policy_b, row.decision) == ("endgame", "ev", "H1")
    assert row.games == stop["decision"]["games"] and row.looks == len(stop["waves"])
    assert queries.sprt_tests(con, runs=["f"]).empty


def test_report_header_shows_the_decision(sprt_lake: tuple[Path, dict[str, Any]]) -> None:
    """`flip7 report` names the test and its decision under the run line; a run without a
    test has no such line."""
    root, manifest = sprt_lake
    con = connect(str(root))
    n = manifest["stop"]["decision"]["games"]
    lines = report(con, "s")
    assert any(f"H1 accepted after {n:,} games: endgame − ev = +" in line for line in lines[:4])
    assert not any("accepted after" in line for line in report(con, "f")[:4])
    assert Lake.open(str(root)).load_manifest("f").get("stop") is None


def test_verify_passes_a_decided_sequential_run_and_catches_a_short_one(
    sprt_lake: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A run complete at its test's decision (far fewer shards than planned) passes every data
    test; the same run with its deciding shard's entry and files gone fails
    assert_runs_complete, which names the decision's games."""
    root, manifest = sprt_lake
    con = connect(str(root))
    assert failing_rows(con, sql_files("tests")["assert_runs_complete"]) == []
    assert verify(str(root)).ok
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    last = str(manifest["stop"]["decision"]["wave"])
    path = copy / "runs" / "s" / "manifest.json"
    edited = json.loads(path.read_text())
    del edited["shards"][last]
    path.write_text(json.dumps(edited))
    for table in ("events", "rounds", "rollups", "games"):
        (copy / table / "run=s" / "players=2" / f"shard-{int(last):05d}.parquet").unlink()
    rows = failing_rows(connect(str(copy)), sql_files("tests")["assert_runs_complete"])
    assert any("sequential test decided after" in str(r) for r in rows)
