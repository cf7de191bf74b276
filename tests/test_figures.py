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
    sys.path.insert(0, str(ROOT / "experiments"))  # its siblings: figure_runs, run_figures, ...
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
    pages = {"docs/play-to-win.md", "docs/sequential.md", "docs/solver.md", "README.md"}
    assert {f.page for f in cheap} == pages
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


def test_run_figures_are_written_as_the_pages_write_them(figures: ModuleType) -> None:
    """The tournament figures' formats: a rate with its interval in %, a gain with signs, a
    fair share (the field-size table's first row: ev heads-up, 160,000 games)."""
    import figure_runs as rf

    assert rf.pct(0.5077125, 0.5052628, 0.5101622) == "50.77% [50.53, 51.02]"
    assert rf.pct(0.5077125, 0.5052628, 0.5101622, 1) == "50.8% [50.5, 51.0]"
    assert rf.num(0.2257686, 0.1925853, 0.2589519, 3, "+") == "+0.226 [+0.193, +0.259]"
    assert rf.num(20.7122055, 20.6855416, 20.7388693) == "20.71 [20.69, 20.74]"
    assert [rf.fair(n) for n in (2, 4, 6, 10)] == ["50%", "25%", "16.7%", "10%"]


def test_every_run_figure_is_not_cheap_and_names_its_run(figures: ModuleType) -> None:
    """The figures from runs (tournaments, simulations, experiment scripts) are not run by
    the tests, and each command names what runs."""
    import run_figures as rf

    got = [f for f in figures.FIGURES if f.lines in {x[3] for x in rf.FIGURES}]
    assert len(got) == len(rf.FIGURES) and not any(f.cheap for f in got)
    assert all(("experiments/" in f.command) or "flip7 sim" in f.command for f in got)


def test_play_to_win_report_pivots_the_study_as_the_page_does(figures: ModuleType) -> None:
    """The study's report: a row per table with win, dp and the baseline in the same seats
    (against dp the baseline is the dp column), the paired gains, the ranges the prose quotes;
    a table missing a line-up's games (a partial run) is left out. Zero-variance games make
    every interval its point."""
    import play_to_win_report as ptw

    won, lost = dict.fromkeys(range(4), 1), dict.fromkeys(range(4), 0)
    games = {
        ("ev", 2, "win", False): won,
        ("ev", 2, "dp", False): lost,
        ("ev", 2, "ev", False): {0: 1, 1: 1, 2: 0, 3: 0},
        ("dp", 4, "win", False): {0: 1, 1: 0, 2: 0, 3: 0},
        ("dp", 4, "dp", False): lost,
        ("sum:24", 6, "win", True): won,  # no dp, no baseline: not a table yet
    }
    assert ptw.tables(games) == [("ev", 2, False), ("dp", 4, False)]
    assert ptw.win_rate_rows(games)[1] == (
        "| `dp` | 4 | 1 vs 3 | 25.0% [-24.0, 74.0] | 0.0% [0.0, 0.0] | (the `dp` column) | 25.0% |"
    )
    assert ptw.paired_rows(games)[0] == (
        "| `ev` | 2 | 1 vs 1 | +50.0 pp [-6.6, +106.6] | +100.0 pp [+100.0, +100.0] |"
    )
    assert (
        ptw.summary(games)[3]
        == "`win` gains 25.0 to 100.0 points of win rate over `dp` in the same seats"
    )


def test_murch_split_adds_up_to_points_per_round(figures: ModuleType) -> None:
    """murch_ppr.measure's split of each policy's seat-rounds: the frozen rounds' and the
    others' points per round, weighted by their shares, give its points per round (40 games at
    4 players on the reference engine)."""
    import murch_ppr

    got = murch_ppr.measure(4, 40, 11, "flip7")
    assert set(got) == {"ev", "bust:0.25"}
    for f in got.values():
        assert 0 < f.frozen_share < 1
        mixed = f.frozen_share * f.frozen_ppr + (1 - f.frozen_share) * f.other_ppr
        assert abs(mixed - f.ppr.value) < 1e-9
