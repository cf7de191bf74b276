"""Plain-text tables and numbers for the terminal: `flip7 sql`'s table format and the report.

`table(rows, header)` lines up columns (numbers right, text left). The number helpers print a
figure (`27.40%`, `21.48`, `+1.86 pp`) and its 95% interval in the figure's unit
(`[27.31, 27.49]`), for a column of its own beside the figure: a reader never meets a number
without its uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

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


def table(
    rows: Sequence[Sequence[object]],
    header: Sequence[str],
    left: Collection[str] | None = None,
) -> list[str]:
    """Aligned lines (flip7.format's renderer, plain text): header, rule, rows. Columns of
    numbers align right; with `left`, every column but those named there does (figures
    already formatted as text)."""
    from flip7.format import Column, Table, table_lines  # the one table renderer

    right = [
        h not in left
        if left is not None
        else bool(rows) and all(_is_number(row[i]) or row[i] is None for row in rows)
        for i, h in enumerate(header)
    ]
    columns = [
        Column(h, lambda v: v if isinstance(v, str) else cell(v), r)
        for h, r in zip(header, right, strict=True)
    ]
    # NULL for missing values, as SQL shells print them (the renderer leaves None blank)
    cells = [["NULL" if v is None else v for v in row] for row in rows]
    return table_lines(Table(columns, cells))


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


def _missing(x: float) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(p: float) -> str:
    """A proportion in percent: `27.40%`."""
    return "n/a" if _missing(p) else f"{100 * p:.2f}%"


def num(x: float, digits: int = 2, sign: bool = False) -> str:
    """A value: `21.48` (with sign: `+0.38`)."""
    return "n/a" if _missing(x) else f"{x:{'+' if sign else ''}.{digits}f}"


def pp(x: float, digits: int = 1) -> str:
    """A difference of proportions in percentage points: `+1.9 pp` (rates show one decimal)."""
    return "n/a" if _missing(x) else f"{100 * x:+.{digits}f} pp"


def interval(lo: float, hi: float, digits: int = 2, scale: float = 1.0, sign: bool = False) -> str:
    """A 95% interval in the unit of the figure beside it: `[27.31, 27.49]` (scale 100 for a
    percentage). `n/a` where there is none (a cell of one game)."""
    if _missing(lo) or _missing(hi):
        return "n/a"
    f = f"{{:{'+' if sign else ''}.{digits}f}}"
    return f"[{f.format(scale * lo)}, {f.format(scale * hi)}]"
