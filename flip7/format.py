"""How every command prints figures and tables: one set of rules, one renderer.

Figures: counts with thousands separators (`4,000`); rates as percentages with one decimal and
their trailing zeros (`48.0%`); points with two decimals (`6.20`); a rate's 95% interval in
percent (`48.2% [46.1, 50.3]`), a mean's as a half-width (`6.21 ± 0.12`). Missing figures
print `n/a`.

Tables: a `Table` holds each cell's value (what csv and json carry) and the text it shows
(what the table and markdown formats print); `render` writes one in a format of FORMATS.
Colour only on a terminal, never with NO_COLOR set (https://no-color.org), never in a file:
the results copy and tests always get plain text.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, TextIO

from flip7.stats import Estimate

#: The output formats of the commands that print tables (`--format`).
FORMATS = ("table", "csv", "json", "markdown")

#: The footnote every table with clustered intervals prints.
INTERVAL_NOTE = (
    "win rate [95% interval], pts/round ± 95% half-width; intervals clustered by game, "
    "since the seats of one game are not independent"
)


def settle(x: Any) -> Any:
    """A float (or a tuple of them) rounded to 12 significant digits before it is shown: sums
    taken in another order (DuckDB aggregates in parallel) differ in the last bits, and a figure
    that sits on a rounding tie (0.9375 to three decimals) must not print one way or the other
    from run to run."""
    if isinstance(x, float) and math.isfinite(x):
        return float(f"{x:.12g}")
    if isinstance(x, tuple):
        return tuple(settle(v) for v in x)
    return x


def _missing(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def count(n: int | None) -> str:
    """A count with thousands separators: `12,345`."""
    return "n/a" if _missing(n) else f"{n:,}"


def rate(p: float | None, digits: int = 1) -> str:
    """A proportion as a percentage, trailing zeros kept: `48.0%`."""
    return "n/a" if _missing(p) else f"{settle(p):.{digits}%}"


def points(x: float | None, digits: int = 2) -> str:
    """Points (or any mean of them): `6.20`, thousands separated."""
    return "n/a" if _missing(x) else f"{settle(x):,.{digits}f}"


def format_rate(est: Estimate) -> str:
    """A win rate and its 95% interval, e.g. '48.2% [46.1, 50.3]' (the interval in percent)."""
    if math.isnan(est.value):
        return "n/a"
    value, lo, hi = settle((est.value, est.lo, est.hi))
    if math.isnan(lo):
        return f"{value:.1%} [n/a]"
    return f"{value:.1%} [{settle(100 * lo):.1f}, {settle(100 * hi):.1f}]"


def format_mean(est: Estimate, digits: int = 2) -> str:
    """A mean and the half-width of its 95% interval, e.g. '6.21 ± 0.12'."""
    if math.isnan(est.value):
        return "n/a"
    half = "n/a" if math.isnan(est.half_width) else f"{settle(est.half_width):.{digits}f}"
    return f"{settle(est.value):.{digits}f} ± {half}"


def estimate_json(est: Estimate) -> dict[str, float | None]:
    """An estimate for JSON: value, lo, hi (null where there is none)."""
    return {k: _num(getattr(est, k)) for k in ("value", "lo", "hi")}


def estimate_fields(name: str, est: Estimate) -> dict[str, float]:
    """An estimate as csv fields: NAME, NAME_lo, NAME_hi."""
    return {name: est.value, f"{name}_lo": est.lo, f"{name}_hi": est.hi}


def _num(x: Any) -> Any:
    """A JSON-safe value: NaN to None, numpy scalars to Python ones."""
    item = getattr(x, "item", None)
    if callable(item) and not isinstance(x, list | tuple | dict | str):
        try:
            x = item()
        except (TypeError, ValueError):
            pass
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


# C0 and C1 controls but tab and newline, and the bidirectional overrides and isolates.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with its control characters written as escapes (ESC as \\x1b, a right-to-left
    override as \\u202e): a name read from a lake or a spec cannot move the cursor, recolour
    or retitle the terminal, or reorder what is shown. Tab and newline are kept."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


@dataclass
class Column:
    """A column: its name, how a value shows (None: str), and its side (numbers right)."""

    name: str
    show: Callable[[Any], str] | None = None
    right: bool = True
    key: str | None = None  # its name in csv (default: the name, snake_cased)
    #: for a value of several figures (an Estimate): its csv fields, e.g. rate, rate_lo, rate_hi
    split: Callable[[str, Any], dict[str, Any]] | None = None
    #: 0: always shown; else the table format may hide it to fit the terminal, the highest
    #: first (columns of one value hide together); `--wide` shows every column
    drop: int = 0

    @property
    def field(self) -> str:
        if self.key:
            return self.key
        return "".join(c if c.isalnum() else "_" for c in self.name.lower()).strip("_")


@dataclass
class Table:
    columns: Sequence[Column]
    rows: list[Sequence[Any]] = field(default_factory=list)
    title: str | None = None
    #: the table format's lines, where a command lays them out itself (given colour or not)
    text: Callable[[bool], list[str]] | None = None

    def text_rows(self) -> list[list[str]]:
        return [
            [
                ""
                if v is None
                else c.show(settle(v))
                if c.show
                else "n/a"
                if _missing(v)
                else str(v)
                for c, v in zip(self.columns, row, strict=True)
            ]
            for row in self.rows
        ]

    def records(self) -> list[dict[str, Any]]:
        """The rows as flat records of plain values (csv)."""
        out = []
        for row in self.rows:
            rec: dict[str, Any] = {}
            for c, v in zip(self.columns, row, strict=True):
                if c.split is not None:
                    rec.update({k: _num(x) for k, x in c.split(c.field, v).items()})
                else:
                    rec[c.field] = _num(v)
            out.append(rec)
        return out


def colour_wanted(stream: TextIO) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set to anything non-empty."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(callable(isatty) and isatty())


def terminal_width(stream: TextIO | None = None, wide: bool = False) -> int | None:
    """The width a table printed to `stream` must fit: None (no limit) with --wide or for a
    file or pipe; else $COLUMNS when set (as shells export it), else the terminal's width."""
    import shutil
    import sys

    if wide:
        return None
    stream = stream if stream is not None else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        # $COLUMNS speaks for the terminal: only output bound for it (stdout) is fitted
        return int(columns) if stream in (sys.stdout, sys.__stdout__) else None
    isatty = getattr(stream, "isatty", None)
    if not (callable(isatty) and isatty()):
        return None
    return shutil.get_terminal_size().columns


#: Spaces between two columns of the table format.
GAP = 2


def _fit(t: Table, texts: list[list[str]], width: int) -> list[int]:
    """The columns shown in `width`: every one if the table fits with its labels wrapped at
    spaces; else without the droppable columns, highest `drop` first (equal ones together)."""
    cols = list(range(len(t.columns)))

    def least(i: int) -> int:  # a column's narrowest: numbers never wrap, labels at spaces
        c = t.columns[i]
        cells = [printable(c.name)] + [printable(r[i]) for r in texts]
        if c.right:
            return max(len(x) for x in cells)
        return max((len(w) for x in cells for w in x.split()), default=1)

    need = {i: least(i) for i in cols}
    while sum(need[i] for i in cols) + GAP * (len(cols) - 1) > width:
        top = max((t.columns[i].drop for i in cols), default=0)
        if top <= 0:
            break
        cols = [i for i in cols if t.columns[i].drop != top]
    return cols


def table_lines(
    t: Table, colour: bool = False, indent: int = 0, width: int | None = None
) -> list[str]:
    """A table as aligned lines (rich): header, rule, rows; plain text unless `colour`. With
    `width`, it fits that many columns: labels wrap, and the droppable columns that do not
    fit are left out, a last line naming them."""
    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    texts = t.text_rows()
    shown = list(range(len(t.columns)))
    if width is not None:
        shown = _fit(t, texts, max(width - indent, 20))
    rt = RichTable(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        header_style="bold" if colour else "",
        padding=(0, 1),
        collapse_padding=True,
    )
    for i in shown:
        c = t.columns[i]
        wraps = width is not None and not c.right
        rt.add_column(
            Text(printable(c.name)),
            justify="right" if c.right else "left",
            no_wrap=not wraps,
            overflow="fold" if wraps else "ellipsis",
        )
    for row in texts:  # as text: "[n/a]" or a user's "[label]" is not rich markup
        rt.add_row(*(Text(printable(row[i])) for i in shown))
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=10_000 if width is None else max(width - indent, 20),
        color_system="standard" if colour else None,
        force_terminal=colour,
        no_color=not colour,
        highlight=False,
        emoji=False,
        legacy_windows=False,
    )
    console.print(rt)
    pad = " " * indent
    lines = [pad + line.rstrip() for line in buf.getvalue().splitlines()]
    lines = [line for line in lines if line.strip()]
    # an interval column leaves with its figure: the figure names both
    hidden = [
        _named(t.columns[i].name, [row[i] for row in texts])
        for i in range(len(t.columns))
        if i not in shown and not t.columns[i].name.startswith("95%")
    ]
    if hidden:
        text = f"(left out to fit {width} columns: {', '.join(hidden)}; --wide shows them)"
        lines += wrap(text, width, indent)
    return lines


def _named(name: str, cells: list[str]) -> str:
    """A left-out column as the line naming it says it: `variant = classic` when every row has
    that value, else its name."""
    values = set(cells)
    if len(cells) > 1 and len(values) == 1:
        return f"{name} = {printable(cells[0])}"
    return name


def wrap(line: str, width: int | None, indent: int = 0) -> list[str]:
    """A line of prose wrapped at `width` (None: as it is), its leading spaces kept on every
    line; words longer than the width stay whole."""
    import textwrap

    if width is None or len(line) <= width:
        return [" " * indent + line]
    lead = " " * indent + line[: len(line) - len(line.lstrip(" "))]
    return textwrap.wrap(
        line.strip(),
        width,
        initial_indent=lead,
        subsequent_indent=lead,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


def markdown_lines(t: Table) -> list[str]:
    """A table in GitHub-flavoured markdown (text cells, `|` escaped)."""

    def cells(xs: Sequence[str]) -> str:
        return "| " + " | ".join(x.replace("|", "\\|") for x in xs) + " |"

    rule = ["---:" if c.right else ":---" for c in t.columns]
    return [cells([c.name for c in t.columns]), "|" + "|".join(rule) + "|"] + [
        cells(r) for r in t.text_rows()
    ]


def csv_lines(t: Table) -> list[str]:
    """A table as CSV: one header of field names, then the values (not their display text)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    records = t.records()
    w.writerow(list(records[0]) if records else [c.field for c in t.columns])
    for r in records:
        w.writerow(["" if v is None else v for v in r.values()])
    return buf.getvalue().splitlines()


@dataclass
class Result:
    """A command's output: text lines and tables in order (the table format), the tables
    alone (csv, markdown), and a JSON document (json; docs/output.md gives each shape)."""

    data: dict[str, Any]
    blocks: list[str | Table] = field(default_factory=list)

    def line(self, text: str = "") -> None:
        self.blocks.append(text)

    def table(self, t: Table) -> None:
        self.blocks.append(t)

    def render(self, fmt: str, colour: bool = False, width: int | None = None) -> list[str]:
        """The output's lines in `fmt` (one of FORMATS); the table format fits `width`
        columns when given (terminal_width)."""
        if fmt == "json":
            return json.dumps(_json_safe(self.data), indent=2, ensure_ascii=False).splitlines()
        tables = [b for b in self.blocks if isinstance(b, Table)]
        if fmt == "csv":
            lines: list[str] = []
            for i, t in enumerate(tables):
                if len(tables) > 1:
                    lines += ([""] if i else []) + [f"# {t.title or f'table {i + 1}'}"]
                lines += csv_lines(t)
            return lines
        if fmt == "markdown":
            lines = []
            for b in self.blocks:
                if isinstance(b, Table):
                    if b.title:
                        lines += [f"**{b.title}**", ""]
                    lines += markdown_lines(b) + [""]
                elif b:
                    lines += [b, ""]
            while lines and not lines[-1]:
                lines.pop()
            return lines
        if fmt != "table":
            raise ValueError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
        lines = []
        for b in self.blocks:
            if isinstance(b, Table):
                if b.text is not None:
                    lines += [printable(line) for line in b.text(colour)]
                    continue
                lines += table_lines(b, colour, width=width)  # the text around it names it
            else:
                lines += wrap(printable(b), width)
        return lines


def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    return _num(x)


def waiting(text: str, stream: TextIO | None = None) -> AbstractContextManager[object]:
    """A spinner with `text` on stderr while a long silent step runs (starting Ray, loading
    compiled code), only when stderr is a terminal: pipes, files and tests see nothing."""
    import sys

    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    if not (callable(isatty) and isatty()):
        return nullcontext()
    from rich.console import Console

    console = Console(file=stream, no_color=bool(os.environ.get("NO_COLOR")), highlight=False)
    return console.status(text, spinner="dots")


def suggest(word: str, choices: Sequence[str], then: str = "") -> str:
    """`; did you mean 'X'?` for the closest of `choices` to a mistyped `word` (difflib), or '';
    `then` follows X (a policy's argument)."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0] + then!r}?" if close else ""
