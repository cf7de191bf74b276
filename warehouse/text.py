"""Plain-text tables and numbers for the terminal: `flip7 sql`'s table format and the report.

`table(rows, header)` lines up columns (numbers right, text left). The number helpers print a
value with its interval in one cell, e.g. `27.40% [27.31, 27.49]`, so a reader never meets a
number without its uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def cell(value: object) -> str:
    """One value as text: NULL for missing, 6 significant digits for floats."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> list[str]:
    """Aligned lines: header, rule, rows. Cells that are numbers align right."""
    text = [[cell(v) if not isinstance(v, str) else v for v in row] for row in rows]
    right = [
        bool(rows) and all(_is_number(row[i]) or row[i] is None for row in rows)
        for i in range(len(header))
    ]
    widths = [max([len(h)] + [len(r[i]) for r in text]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return [line(list(header)), line(["-" * w for w in widths])] + [line(r) for r in text]


def frame(df: pd.DataFrame, max_rows: int | None = None) -> list[str]:
    """A DataFrame as an aligned table, cut at max_rows with a note saying how many are left."""
    shown = df if max_rows is None else df.head(max_rows)
    rows = [[_plain(v) for v in row] for row in shown.itertuples(index=False, name=None)]
    lines = table(rows, [str(c) for c in df.columns])
    if len(shown) < len(df):
        lines.append(f"... {len(df) - len(shown)} more rows (use --format csv or --max-rows)")
    lines.append(f"({len(df)} row{'s' if len(df) != 1 else ''})")
    return lines


def _plain(value: object) -> object:
    """numpy scalars to Python ones; pandas missing values to None."""
    if value is pd.NaT:
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):  # lists and arrays
        pass
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            return value
    return value


def pct(p: float, lo: float, hi: float) -> str:
    """A proportion with its interval, in percent: `27.40% [27.31, 27.49]`."""
    return f"{100 * p:.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]"


def num(x: float, lo: float, hi: float, digits: int = 2, sign: bool = False) -> str:
    """A value with its interval: `21.48 [21.45, 21.51]` (with sign: `+0.38 [+0.36, +0.40]`)."""
    f = f"{{:{'+' if sign else ''}.{digits}f}}"
    return f"{f.format(x)} [{f.format(lo)}, {f.format(hi)}]"


def pp(x: float, lo: float, hi: float) -> str:
    """A difference of proportions in percentage points: `+1.86 pp [+1.66, +2.06]`."""
    return f"{100 * x:+.2f} pp [{100 * lo:+.2f}, {100 * hi:+.2f}]"
