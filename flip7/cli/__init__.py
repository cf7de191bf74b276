"""The `flip7` command: one entry point, subcommands registered by modules.

Core subcommands live in `flip7.cli.*`. Subcommands of the other packages (tournament, sql,
report, warehouse, dashboard) register through the `flip7.commands` entry-point group, so the
rules core never imports them. Each module exposes `register(subparsers)`, adding parsers whose
`func(args, out) -> int` runs the command.

Every command's printed output also goes to `results/<command>-<timestamp>.txt` unless the
command opts out (`tee=False`), `-o PATH` picks the file, or `--no-file` skips it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import TextIO

CORE_MODULES = ("flip7.cli.games", "flip7.cli.solve")


class Output:
    """Prints to the terminal and keeps a copy for the results file."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.lines: list[str] = []

    def print(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)
        self.lines.append(text)

    def write_file(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        return path


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """-o PATH / --no-file, for commands whose output is worth keeping."""
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="also write the output here (default: results/<command>-<timestamp>.txt)",
    )
    parser.add_argument("--no-file", action="store_true", help="do not write a results file")
    parser.set_defaults(tee=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flip7",
        description="Flip 7: rules engine, policies, exact solver, and tournaments at scale.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in CORE_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a core module not written yet
            if exc.name != name:
                raise
            continue
        module.register(sub)
    for ep in sorted(entry_points(group="flip7.commands"), key=lambda e: e.name):
        try:
            register = ep.load()
        except (ImportError, AttributeError) as exc:  # a package missing its extras, say
            print(f"flip7: commands of {ep.name!r} unavailable ({exc})", file=sys.stderr)
            continue
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    out = Output()
    try:
        code = int(args.func(args, out) or 0)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as exc:
        # Bad input: a clear message, no traceback.
        print(f"flip7 {args.command}: error: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "tee", False) and not args.no_file and out.lines:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        path = Path(args.output) if args.output else Path("results") / f"{args.command}-{stamp}.txt"
        out.write_file(path)
        print(f"(output saved to {path})", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
