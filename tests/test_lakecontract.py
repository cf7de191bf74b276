"""lakecontract: the lake's contract said once, importable by every layer without the engine."""

from __future__ import annotations

import subprocess
import sys

import lakecontract
from flip7.cards import Card
from flip7.events import DrawHow
from lakecontract import events, layout


def test_exports_are_sorted_and_importable() -> None:
    """Every name in lakecontract.__all__ exists; the list is sorted as ruff sorts it."""
    assert lakecontract.__all__ == sorted(lakecontract.__all__, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(lakecontract, n) for n in lakecontract.__all__)


def test_importing_it_runs_nothing_of_the_engine_nor_pyarrow() -> None:
    """A fresh interpreter that imports every module of the contract has loaded no flip7,
    pipeline, warehouse or dashboard module, and no pyarrow (loaded only where a lake opens)."""
    code = (
        "import sys, lakecontract, lakecontract.events, lakecontract.layout, "
        "lakecontract.manifest, lakecontract.names, lakecontract.store\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('flip7', 'pipeline', 'warehouse', 'dashboard', 'pyarrow', 'numpy'))\n"
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_its_card_and_draw_constants_are_the_rules_cores() -> None:
    """The event texts' constants (written out so the contract imports no engine) are flip7's."""
    assert events.ZERO_CARD == Card.N0 and events.FIRST_VENGEANCE_CARD == Card.UNLUCKY_7
    assert len(events.DRAW_HOW) == len(DrawHow)
    assert events.DRAW_HOW[DrawHow.HIT] == "hit" and events.DRAW_HOW[DrawHow.DEAL] == "deal"
    assert layout.TABLES[-1] == "games"  # the commit marker is renamed last
