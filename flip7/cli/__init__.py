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
from importlib import metadata
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


def check_output_path(path: Path) -> None:
    """A one-line ValueError, before the command runs, when `-o PATH` cannot take the output:
    a directory, a path under a file, or a file that cannot be opened for writing."""
    if path.is_dir():
        raise ValueError(f"-o {path}: is a directory; give a file path such as {path}/out.txt")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"-o {path}: {parent} is a file, not a directory")
            break
    existed = path.exists()
    try:
        if path.parent.exists():
            with path.open("a", encoding="utf-8"):
                pass
    except OSError as exc:
        raise ValueError(f"-o {path}: cannot write there ({exc.strerror or exc})") from None
    finally:
        if not existed and path.exists() and path.stat().st_size == 0:
            path.unlink()


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
    parser.add_argument(
        "--version", action="version", version=f"flip7 {version()}", help="print the version"
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


def version() -> str:
    """The installed package's version (what every run's manifest records), else 'unknown'."""
    try:
        return metadata.version("flip7")
    except metadata.PackageNotFoundError:  # a source checkout that is not installed
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from flip7.engine import PolicyError

    out = Output()
    tee = getattr(args, "tee", False) and not args.no_file
    try:
        if tee and args.output:
            check_output_path(Path(args.output))
        code = int(args.func(args, out) or 0)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, PolicyError) as exc:
        # Bad input, or a user policy that failed: a clear message, no traceback.
        print(f"flip7 {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:
        # The machine refused (a read-only or full disk, an unreachable Ray): one line.
        print(f"flip7 {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    if tee and out.lines:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        path = Path(args.output) if args.output else Path("results") / f"{args.command}-{stamp}.txt"
        try:
            out.write_file(path)
        except OSError as exc:
            print(
                f"flip7 {args.command}: error: cannot save the output to {path} "
                f"({exc.strerror or exc}); it was printed above",
                file=sys.stderr,
            )
            return 1
        print(f"(output saved to {path})", file=sys.stderr)
    return code


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (its lines joined)."""
    lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
    return " ".join(lines) if lines else type(exc).__name__


if __name__ == "__main__":
    raise SystemExit(main())
