"""The docs state today's figures: experiments/figures.py regenerates every figure README and
docs take from a command; the exact, cheap ones (the solver's race rows) are held to their pages
here, the simulations and the race's own solve by `python experiments/figures.py --check`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("figures", ROOT / "experiments" / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["figures"] = module
    spec.loader.exec_module(module)
    return module


def test_every_cheap_figure_is_on_its_page(figures: ModuleType) -> None:
    """Each exact, cheap figure (the race rows of dp, ev and the best sum:N and bust:P, the gaps
    the prose quotes, README's sentence) is stated by its page as the code computes it today."""
    cheap = [f for f in figures.FIGURES if f.cheap]
    assert {f.page for f in cheap} == {"docs/play-to-win.md", "docs/sequential.md", "README.md"}
    stale = {(f.page, f.section, line) for f in cheap for line in figures.missing(f, f.lines())}
    assert not stale, sorted(stale)


def test_a_figure_the_page_no_longer_states_is_named(figures: ModuleType) -> None:
    """The check finds a figure whatever the page's line breaks, and names one that is not
    there: dup:0.25's race row once stood in the page as bust:0.25's."""
    fig = figures.Figure("docs/play-to-win.md", "race", "flip7 solve --race", list, True)
    stale_row = "bust:0.25     10.2550  +0.872      10    13    0.3%    2.6%   10.7%"
    wrapped = "saves 0.38 rounds on average against the per-round\noptimum (`dp`)"
    assert figures.missing(fig, [stale_row, wrapped]) == [stale_row]


def test_every_figure_names_a_page_and_a_command(figures: ModuleType) -> None:
    for fig in figures.FIGURES:
        assert (ROOT / fig.page).is_file(), fig.page
        assert fig.command.startswith(("flip7 ", "python ")), fig.command
