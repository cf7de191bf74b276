"""warehouse.text: figures and their 95% intervals as report cells."""

from __future__ import annotations

import math

from warehouse.text import interval, num, pct, pp, table


def test_figures_and_intervals_format_in_the_figures_unit() -> None:
    """A rate and its interval in percent, a signed gain, and n/a where a cell of one game has
    no interval (NULL comes back as NaN or None)."""
    assert pct(0.274) == "27.40%"
    assert interval(0.27312, 0.27488, scale=100) == "[27.31, 27.49]"
    assert num(0.3812, 3, sign=True) == "+0.381"
    assert interval(-0.1, 0.25, 3, sign=True) == "[-0.100, +0.250]"
    assert pp(0.0186) == "+1.9 pp" and pp(0.0186, 2) == "+1.86 pp"  # rates: one decimal
    assert interval(math.nan, math.nan) == "n/a" and interval(None, None) == "n/a"  # type: ignore[arg-type]
    assert pct(math.nan) == "n/a"


def test_table_aligns_formatted_figures_right_except_named_text_columns() -> None:
    """With `left`, every column but the named ones aligns right (figures already text)."""
    lines = table([["ev", "7.50%"], ["bust:0.25", "12.25%"]], ["policy", "win rate"], ["policy"])
    assert lines[2] == "ev            7.50%"
    assert lines[3] == "bust:0.25    12.25%"
    assert lines[1] == "─" * len(lines[3])  # the header's rule
