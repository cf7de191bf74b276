"""lakecontract: the lake's contract said once, importable by every layer without the engine."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import lakecontract
from flip7.cards import Card
from flip7.events import DrawHow
from lakecontract import events, layout

ROOT = Path(__file__).resolve().parents[1]


def test_exports_are_sorted_and_importable() -> None:
    """Every name in lakecontract.__all__ exists; the list is sorted as ruff sorts it."""
    assert lakecontract.__all__ == sorted(lakecontract.__all__, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(lakecontract, n) for n in lakecontract.__all__)


#: The contract's modules that read and write a lake's files, the only ones that import numpy
#: and pyarrow (docs/architecture.md).
LAKE_MODULES = {"lakecontract.codec", "lakecontract.arrow"}


def loaded_after(modules: list[str]) -> list[str]:
    """The engine, pipeline, warehouse, dashboard, numpy, pyarrow and pandas modules a fresh
    interpreter has loaded after importing `modules`."""
    code = (
        f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'flip7', 'pipeline', "
        "'warehouse', 'dashboard', 'pyarrow', 'numpy', 'pandas'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return ast.literal_eval(out.stdout.strip())


def test_importing_it_runs_nothing_of_the_engine_nor_numpy_or_pyarrow() -> None:
    """A fresh interpreter that imports the contract and every module of it but codec and arrow
    (each module found on disk, so a new one is held to this too) has loaded no flip7,
    pipeline, warehouse or dashboard module, and no numpy or pyarrow (loaded only where a lake
    is read or written)."""
    found = {f"lakecontract.{m.name}" for m in pkgutil.iter_modules(lakecontract.__path__)}
    assert LAKE_MODULES <= found
    others = sorted(found - LAKE_MODULES)
    assert {"lakecontract.layout", "lakecontract.manifest", "lakecontract.store"} <= set(others)
    assert loaded_after(["lakecontract", *others]) == []


def test_its_lake_modules_load_numpy_and_pyarrow_but_nothing_of_the_engine() -> None:
    """codec and arrow bring numpy and pyarrow (what they are for), and still no engine,
    pipeline, warehouse, dashboard or pandas module."""
    assert loaded_after(sorted(LAKE_MODULES)) == ["numpy", "pyarrow"]


def test_its_card_and_draw_constants_are_the_rules_cores() -> None:
    """The event texts' constants (written out so the contract imports no engine) are flip7's."""
    assert events.ZERO_CARD == Card.N0 and events.FIRST_VENGEANCE_CARD == Card.UNLUCKY_7
    assert len(events.DRAW_HOW) == len(DrawHow)
    assert events.DRAW_HOW[DrawHow.HIT] == "hit" and events.DRAW_HOW[DrawHow.DEAL] == "deal"
    assert layout.TABLES[-1] == "games"  # the commit marker is renamed last
