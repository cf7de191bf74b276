"""experiments/play_to_win_report.py: line-up names, paired intervals and the chart."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "play_to_win_report.py"


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("play_to_win_report", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_line_up_names_give_policy_opponent_and_layout(report):
    assert report.layout("win vs 3 ev") == ("win", "ev", False)
    assert report.layout("2 dp vs 2 bust:0.25") == ("dp", "bust:0.25", True)
    assert report.layout("sum:24 vs 5 sum:24") == ("sum:24", "sum:24", False)


def test_mean_and_interval(report):
    m, lo, hi = report.mean_ci([1, 0, 1, 0])
    assert m == 0.5
    # sd of 1,0,1,0 (n - 1 = 3): sqrt(1/3); half-width 1.96 * sd / 2
    assert hi - m == pytest.approx(1.96 * (1 / 3) ** 0.5 / 2)
    assert m - lo == pytest.approx(hi - m)


def test_the_chart_draws_win_and_dp_per_cell_but_not_the_baseline(report):
    cells = [
        ("ev", 2, False, "win", 0.55, 0.54, 0.56, 0.5),
        ("ev", 2, False, "dp", 0.50, 0.49, 0.51, 0.5),
        ("ev", 2, False, "ev", 0.49, 0.48, 0.50, 0.5),
        ("sum:24", 6, True, "win", 0.66, 0.65, 0.67, 0.5),
    ]
    svg = report.svg(cells)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert svg.count("<circle") == 3
    assert "ev, 2 players, 1 vs 1" in svg and "sum:24, 6 players, 3 vs 3" in svg
