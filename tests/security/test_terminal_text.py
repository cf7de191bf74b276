"""Text read from a lake cannot drive the terminal: control characters in a run folder's name
(ESC sequences that retitle or recolour it, BEL, a right-to-left override) are printed as
escapes by `flip7 sql`'s notes, `tournament list`, the tables and the one-line errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flip7.cli import main
from flip7.format import Column, Table, printable, table_lines
from tests.pipeline.helpers import run_inline, small_plan

pytestmark = pytest.mark.usefixtures("no_ray")

EVIL = "e\x1b]0;PWNED\x07\x1b[31mRED\u202e"


def test_printable_escapes_controls_and_keeps_text() -> None:
    assert printable(EVIL) == "e\\x1b]0;PWNED\\x07\\x1b[31mRED\\u202e"
    assert printable("\x9b2J") == "\\x9b2J"  # a C1 control sequence introducer
    assert printable("tab\tand\nnewline, ümlaut, 漢字") == "tab\tand\nnewline, ümlaut, 漢字"


def test_a_table_shows_a_control_character_as_an_escape() -> None:
    t = Table([Column("run", right=False)], [[EVIL]])
    for colour in (False, True):
        text = "\n".join(table_lines(t, colour=colour))
        assert "\x07" not in text and "\u202e" not in text and "PWNED" in text
        if not colour:
            assert "\x1b" not in text


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake whose one real run has a copy of its games under a hostile run folder name, and
    a copy of its manifest under another."""
    root = tmp_path_factory.mktemp("esc") / "lake"
    run_inline(small_plan(), str(root))
    run = next(p.name for p in (root / "runs").iterdir())
    shutil.copytree(root / "games" / f"run={run}", root / "games" / f"run={EVIL}")
    shutil.copytree(root / "runs" / run, root / "runs" / EVIL)
    return root


@pytest.mark.parametrize(
    "argv",
    [
        ["sql", "select 1 as x"],
        ["tournament", "list"],
        ["report", EVIL, "--no-file"],
        ["tournament", "status", EVIL],
    ],
    ids=["sql note", "tournament list", "report's error", "status's error"],
)
def test_a_hostile_run_name_reaches_the_terminal_escaped(
    lake: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    main([*argv, "--data", str(lake)])
    out, err = capsys.readouterr()
    for text in (out, err):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    if argv[0] != "tournament" or argv[1] != "list":  # list leaves out what is no run
        assert "PWNED" in out + err  # shown, as escapes
