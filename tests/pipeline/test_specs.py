"""The example specs ship inside the package: identical to experiments/, found by name without
a checkout, copied out by `flip7 init`; `flip7 --version` is what manifests record."""

from __future__ import annotations

from pathlib import Path

import pytest

from flip7.cli import main
from pipeline import specs
from pipeline.run import package_version
from pipeline.spec import load_spec

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def test_shipped_specs_are_the_experiments() -> None:
    """pipeline/specs holds exactly experiments/*.toml, byte for byte (after editing one,
    copy it: cp experiments/*.toml pipeline/specs/)."""
    ours = {p.stem: p.read_text(encoding="utf-8") for p in EXPERIMENTS.glob("*.toml")}
    shipped = {n: f.read_text(encoding="utf-8") for n, f in specs.shipped().items()}
    assert ours and shipped == ours


def test_a_shipped_name_loads_without_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`demo` (or `demo.toml`) from a folder with no experiments/ is the shipped demo; a file
    of that name in the folder wins; an unknown name lists the shipped ones."""
    monkeypatch.chdir(tmp_path)
    demo = load_spec(EXPERIMENTS / "demo.toml")
    assert load_spec("demo") == demo and load_spec("demo.toml") == demo
    for name in specs.names():
        assert load_spec(name).name
    (tmp_path / "demo.toml").write_text(demo.text.replace('name = "demo"', 'name = "mine"'))
    assert load_spec("demo.toml").name == "mine"
    with pytest.raises(FileNotFoundError, match="shipped spec name .*demo.*field-size"):
        load_spec("nope")
    with pytest.raises(FileNotFoundError, match="not found"):
        load_spec("elsewhere/demo.toml")  # a path is a path


def test_init_copies_the_specs_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`flip7 init` writes every shipped spec to ./experiments (or DIR), keeps edited files on
    a second run, and refuses a file as the folder."""
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert "wrote" in capsys.readouterr().out
    copied = {p.stem for p in (tmp_path / "experiments").glob("*.toml")}
    assert copied == set(specs.names())
    mine = tmp_path / "experiments" / "demo.toml"
    mine.write_text("# edited\n")
    assert main(["init", "experiments"]) == 0
    assert "kept" in capsys.readouterr().out and mine.read_text() == "# edited\n"
    assert main(["init", str(mine)]) == 2
    assert "is a file" in capsys.readouterr().err


def test_version_is_the_manifests(capsys: pytest.CaptureFixture[str]) -> None:
    """`flip7 --version` prints the version string every run's manifest records."""
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"flip7 {package_version()}"
