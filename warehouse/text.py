"""Plain-text tables and numbers for the terminal: `flip7 sql`'s table format and the report.

`table(rows, header)` lines up columns (numbers right, text left). The number helpers print a
figure (`27.40%`, `21.48`, `+1.86 pp`) and its 95% interval in the figure's unit
(`[27.31, 27.49]`), for a column of its own beside the figure: a reader never meets a number
without its uncertainty.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from flip7.format import Table


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


def frame(
    df: pd.DataFrame,
    max_rows: int | None = None,
    width: int | None = None,
    kinds: dict[str, str] | None = None,
    drops: dict[str, int] | None = None,
) -> list[str]:
    """A DataFrame as an aligned table for people, cut at max_rows with a note saying how many
    are left: counts with thousands separators, rates in percent, each figure's 95% interval
    (columns X, X_lo, X_hi) in one column beside it, as `flip7 report` prints them (`human`).
    With `width`, it fits that many columns: labels wrap, and the columns on the right that do
    not fit are left out, a line naming them."""
    from flip7.format import table_lines

    shown = df if max_rows is None else df.head(max_rows)
    lines = table_lines(human(shown, kinds, drops), width=width)
    if len(shown) < len(df):
        lines.append(f"... {len(df) - len(shown)} more rows (use --format csv or --max-rows)")
    lines.append(f"({len(df)} row{'s' if len(df) != 1 else ''})")
    return lines


#: Column names whose figures are proportions (shown in percent) or indexes (three decimals),
#: and those that identify rather than count (no thousands separators). `_a`/`_b`: compare's.
_RATE = re.compile(r"(^|_)(rate|share)(_[ab])?$")
_INDEX = re.compile(r"(^|_)index(_[ab])?$")
_ID = re.compile(r"(^|_)(seed|id|game|shard|seq|pair|round|seat|players|place|version)$")


def kind_of(name: str, values: Sequence[object]) -> str:
    """How a column's figures show: rate, index, count, id, number or text (lists as text)."""
    present = [v for v in values if v is not None]
    if not present or not all(_is_number(v) for v in present):
        return "text"
    if _RATE.search(name):
        return "rate"
    if _INDEX.search(name):
        return "index"
    if all(isinstance(v, int) for v in present):
        return "id" if _ID.search(name) else "count"
    return "number"


def _decimals(values: Sequence[float]) -> int:
    """Decimals for a column of plain numbers: four significant digits of its typical size
    (two decimals from 10 up, none from 10,000 up)."""
    size = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    if size == 0:
        return 2
    return max(0, min(6, 3 - math.floor(math.log10(size))))


def _shower(kind: str, values: Sequence[object]) -> Callable[[object], str]:
    """A function showing one value of a column of `kind` (and `values`, for its decimals)."""
    if kind == "rate":
        return lambda v: f"{100 * v:.2f}%"  # type: ignore[operator]
    if kind == "pp":
        return lambda v: f"{100 * v:+.2f} pp"  # type: ignore[operator]
    if kind == "index":
        return lambda v: f"{v:.3f}"
    if kind == "count":
        return lambda v: f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"
    if kind == "id":
        return str
    if kind in ("number", "points", "signed"):
        numbers = [float(v) for v in values if _is_number(v)]  # type: ignore[arg-type]
        if kind == "number" and numbers and all(v.is_integer() for v in numbers):
            return lambda v: f"{v:,.0f}"  # 6000.0 expected wins: 6,000
        d = 2 if kind != "number" else _decimals(numbers)
        sign = "+" if kind == "signed" else ""
        return lambda v: f"{v:{sign},.{d}f}"
    return lambda v: _text(v)


def _text(value: object) -> str:
    """A text cell: lists as their items joined by ', '."""
    if isinstance(value, list | tuple) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value  # type: ignore[union-attr]
        return ", ".join(str(x) for x in items)
    return str(value)


def human(
    df: pd.DataFrame,
    kinds: dict[str, str] | None = None,
    drops: dict[str, int] | None = None,
) -> Table:
    """A result as flip7.format's Table of display text (what sql and compare print): each
    figure X with X_lo and X_hi becomes X and a `95% interval` column beside it, in X's unit.
    `kinds` names a column's kind where its name does not tell (compare's `diff`: pp or
    signed points). In a narrow terminal the columns leave in this order: those of `drops`
    (highest first), standard errors, columns of one value in every row (the line saying what
    was left out gives it), then from the right, figures with an interval last; the first
    column stays."""
    from flip7.format import Column, Table

    names = [str(c) for c in df.columns]
    rows = [[_plain(v) for v in row] for row in df.itertuples(index=False, name=None)]
    col = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    paired = {n for n in names if f"{n}_lo" in col and f"{n}_hi" in col}
    inner = {f"{n}_{e}" for n in paired for e in ("lo", "hi")}
    columns: list[Column] = []
    getters: list[Callable[[list[object]], object]] = []
    for i, n in enumerate(names):
        if n in inner:
            continue
        kind = (kinds or {}).get(n) or kind_of(n, col[n])
        show = _shower(kind, col[n] + col.get(f"{n}_lo", []) + col.get(f"{n}_hi", []))
        drop = len(columns) + (0 if n in paired else 100)  # figures with intervals stay longest
        if n in (drops or {}):
            drop = 3000 + (drops or {})[n]
        elif n.endswith("_se"):
            drop += 2000
        elif len(rows) > 1 and len({repr(v) for v in col[n]}) == 1 and n not in paired:
            drop += 1000
        elif i == 0:
            drop = 0
        columns.append(Column(n, _missing_or(show), kind != "text", drop=drop))
        getters.append(lambda r, i=i: r[i])
        if n in paired:
            lo, hi = names.index(f"{n}_lo"), names.index(f"{n}_hi")
            ci = _interval_shower(kind, show)
            columns.append(Column("95% interval", ci, True, drop=drop))
            getters.append(lambda r, lo=lo, hi=hi: (r[lo], r[hi]))
    return Table(columns, [[g(r) for g in getters] for r in rows])


def _missing_or(show: Callable[[object], str]) -> Callable[[object], str]:
    return lambda v: "NULL" if v is None or (isinstance(v, float) and math.isnan(v)) else show(v)


def _interval_shower(kind: str, show: Callable[[object], str]) -> Callable[[object], str]:
    """`[lo, hi]` in the unit of the figure beside it (percent for rates, without the sign)."""

    def ci(v: object) -> str:
        lo, hi = v  # type: ignore[misc]
        if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
            return "n/a"
        if kind == "rate":
            return interval(lo, hi, scale=100)
        if kind == "pp":
            return interval(lo, hi, scale=100, sign=True)
        return f"[{show(lo)}, {show(hi)}]".replace(" pp", "").replace("%", "")

    return ci


def csv_text(df: pd.DataFrame) -> str:
    """A result as CSV: list columns JSON-encoded (`[2, 4, 6]`, `["ev", "evc"]`), so a reader
    gets lists back with json.loads; everything else as pandas writes it."""
    import json

    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object and any(
            isinstance(v, list | tuple) or hasattr(v, "tolist") for v in out[c]
        ):
            out[c] = [
                None if v is None else json.dumps(_json_list(v), ensure_ascii=False) for v in out[c]
            ]
    return out.to_csv(index=False)


def _json_list(value: object) -> object:
    if hasattr(value, "tolist"):
        return value.tolist()  # type: ignore[union-attr]
    if isinstance(value, list | tuple):
        return [_json_list(v) for v in value]
    return value


def _plain(value: object) -> object:
    """numpy scalars to Python ones, arrays to lists; pandas missing values to None."""
    if getattr(value, "ndim", 0):  # an array (a list column's cell), even of one item
        return value.tolist()  # type: ignore[union-attr]
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
