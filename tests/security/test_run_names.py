"""Run names stay inside the lake: one rule for every entry point, checked before any write or
delete, and `--overwrite` deletes only the named run's own files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.lake import Lake
from tests.pipeline.helpers import run_inline, small_plan
from tests.security.helpers import one_line, tree, write_spec

pytestmark = pytest.mark.usefixtures("no_ray")

BAD_NAMES = ["..", "../x", "a/b", ".hidden", "-x", "a..b", "x" * 65, "a b", "é", "t\n"]


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """A lake holding one complete run `t` (written without Ray)."""
    root = tmp_path / "lake"
    run_inline(small_plan(), str(root))
    return root


def test_run_flag_cannot_write_outside_the_lake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--run ../../escape` is refused before anything is written (it used to put a manifest
    two levels above the lake's runs/ directory)."""
    spec = write_spec(tmp_path / "s.toml")
    root = tmp_path / "a" / "b" / "lake"
    before = tree(tmp_path)
    code = main(["tournament", "run", str(spec), "--data", str(root), "--run", "../../escape"])
    assert code == 2
    one_line(capsys.readouterr().err, "'../../escape'", "not a valid run name")
    assert tree(tmp_path) == before
    assert not (tmp_path / "a").exists()


def test_run_dotdot_overwrite_deletes_nothing(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--run .. --overwrite` over a lake where an earlier `--run ..` left `manifest.json` at the
    lake's root used to delete the whole lake, run `t` included; now nothing is touched."""
    manifest = json.loads((lake / "runs" / "t" / "manifest.json").read_text())
    (lake / "manifest.json").write_text(json.dumps({**manifest, "run": ".."}))
    spec = write_spec(tmp_path / "s.toml")
    before = tree(lake)
    code = main(["tournament", "run", str(spec), "--data", str(lake), "--run", "..", "--overwrite"])
    assert code == 2
    one_line(capsys.readouterr().err, "'..'", "not a valid run name")
    assert tree(lake) == before


@pytest.mark.parametrize("name", BAD_NAMES)
def test_every_entry_point_applies_one_rule(
    name: str, lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec's name, --run, `tournament status RUN`, `replay RUN` and `watch --run RUN` all
    refuse the same names with a one-line error naming them; nothing is read through them (a
    manifest planted where `..` would lead is not shown) and nothing is written."""
    manifest = json.loads((lake / "runs" / "t" / "manifest.json").read_text())
    (lake / "manifest.json").write_text(json.dumps({**manifest, "run": name}))
    spec = write_spec(tmp_path / "s.toml", name=name.replace("\n", "\\n"))
    plain = write_spec(tmp_path / "plain.toml")
    data = ["--data", str(lake)]
    before = tree(tmp_path)
    commands = [
        ["tournament", "run", str(spec), "--data", str(lake), "--no-file"],
        ["tournament", "run", str(plain), "--data", str(lake), f"--run={name}", "--no-file"],
        ["tournament", "status", *data, "--", name],
        ["replay", *data, "--", name, "0"],
        ["watch", f"--run={name}", *data, "--no-file"],
    ]
    for argv in commands:
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == "", argv
        one_line(captured.err, "not a valid run name")
    assert tree(tmp_path) == before
    from pipeline.lake import check_run_name

    with pytest.raises(ValueError, match="not a valid run name"):
        check_run_name(name)
    with pytest.raises(ValueError, match="not a valid run name"):
        Lake.open(str(lake)).shard_path("games", name, 2, 0)


def test_valid_names_pass() -> None:
    """Letters, digits, '.', '_' and '-' (not first), up to 64 characters."""
    from pipeline.lake import check_run_name

    for name in ["t", "demo-x0.1", "A_b.c-9", "9" * 64]:
        assert check_run_name(name) == name


def test_overwrite_refuses_a_manifest_naming_another_run(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--overwrite` deletes a run only when its directory holds that run's manifest: a copy of
    run t's files under the name `u` is refused, and nothing is deleted."""
    shutil.copytree(lake / "runs" / "t", lake / "runs" / "u")
    for table in ("events", "rounds", "rollups", "games"):
        shutil.copytree(lake / table / "run=t", lake / table / "run=u")
    spec = write_spec(tmp_path / "s.toml", name="u")
    before = tree(lake)
    code = main(["tournament", "run", str(spec), "--data", str(lake), "--overwrite", "--no-file"])
    assert code == 2
    one_line(capsys.readouterr().err, "runs/u/manifest.json", "names run 't', not 'u'")
    assert tree(lake) == before
    assert main(["tournament", "status", "u", "--data", str(lake)]) == 2
    one_line(capsys.readouterr().err, "names run 't', not 'u'")


def test_overwrite_deletes_only_the_named_run(lake: Path) -> None:
    """delete_run removes the run's own partitions and runs/ directory, nothing else."""
    other = small_plan(name="other")
    run_inline(other, str(lake))
    keep = {p for p in tree(lake) if "run=t" not in p and not p.startswith("runs/t/")}
    Lake.open(str(lake)).delete_run("t")
    assert set(tree(lake)) == keep
    assert Lake.open(str(lake)).runs() == ["other"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_warehouse_commands_apply_the_one_rule(
    name: str, lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sql --run`, `report`, `compare`, `warehouse verify RUN` and `warehouse upgrade RUN` refuse
    the names the pipeline refuses, in one line, before anything is read (`report
    'small/../../../etc'` used to list directories outside the lake)."""
    data = ["--data", str(lake)]
    before = tree(tmp_path)
    commands = [
        ["sql", *data, f"--run={name}", "select 1"],
        ["report", *data, "--no-file", "--", name],
        ["compare", *data, "--", name, "t"],
        ["compare", *data, "--", "t", name],
        ["warehouse", "verify", *data, "--", name],
        ["warehouse", "upgrade", *data, "--", name],
    ]
    for argv in commands:
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == "", argv
        one_line(captured.err, "not a valid run name", repr(name))
    assert tree(tmp_path) == before


def test_the_warehouse_rule_is_the_pipelines() -> None:
    """The warehouse (which does not import the pipeline) keeps the same rule, word for word."""
    from pipeline.lake import check_run_name as pipeline_rule
    from warehouse.lake import check_run_name as warehouse_rule

    for name in [*BAD_NAMES, "t", "demo-x0.1", "A_b.c-9", "9" * 64, "small/../../etc", 5]:
        outcomes = []
        for rule in (pipeline_rule, warehouse_rule):
            try:
                outcomes.append(rule(name))
            except ValueError as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1], name
