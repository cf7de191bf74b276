# PYTHON_ARGCOMPLETE_OK  (shell completion: see README, `register-python-argcomplete flip7`)
"""The `flip7` command: one entry point, subcommands registered by modules.

Core subcommands live in `flip7.cli.*`. Subcommands of the other packages (tournament, sql,
report, warehouse, dashboard) register through the `flip7.commands` entry-point group, so the
rules core never imports them. Each module exposes `register(subparsers)`, adding parsers whose
`func(args, out) -> int` runs the command.

`-o PATH` means one thing in every command that takes it: write the command's output to PATH
(replacing it) instead of the terminal. Without it, a command whose output is worth keeping
prints it and also keeps a copy, `results/<command>-<timestamp>.txt` (never one an earlier run
wrote; `--no-file` skips it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import io
import os
import sys
from collections.abc import Sequence
from importlib import metadata
from importlib.metadata import entry_points
from pathlib import Path
from typing import TextIO

from flip7.format import FORMATS, Result, colour_wanted, printable, terminal_width

CORE_MODULES = ("flip7.cli.games", "flip7.cli.solve")


class Output:
    """Prints to the terminal and keeps a copy for the results file."""

    def __init__(self, stream: TextIO | None = None, wide: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.lines: list[str] = []
        self.wide = wide  # --wide: tables keep every column whatever the terminal's width

    def print(self, text: str = "") -> None:
        text = printable(text)
        print(text, file=self.stream, flush=True)
        self.lines.append(text)

    def emit(self, result: Result, fmt: str = "table") -> None:
        """A command's result in `fmt`: coloured on a terminal (table format, NO_COLOR not set),
        plain in the results copy."""
        plain = result.render(fmt)  # the results copy: every column (a file has no width)
        width = terminal_width(self.stream, self.wide) if fmt == "table" else None
        colour = fmt == "table" and colour_wanted(self.stream)
        shown = plain if width is None and not colour else result.render(fmt, colour, width)
        for line in shown:
            print(line, file=self.stream)
        self.stream.flush()
        self.lines.extend(plain)

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


#: What -o means, in every command that takes it (flip7 sql and compare too); a command with
#: --format adds FORMAT_NOTE (see _finish_help).
OUTPUT_HELP = "write the output to PATH instead of the terminal (replacing PATH)"
FORMAT_NOTE = ", in the chosen --format"
#: The results copy of a command whose output is worth keeping.
RESULTS_HELP = (
    "do not keep the results copy (by default the output is also saved to a new file "
    "results/<command>-<timestamp>.txt (.json, .csv, .md in those formats), never one an "
    "earlier run wrote: a second run in the "
    "same second gets -2, -3, ...)"
)


def add_output_option(parser: argparse.ArgumentParser, metavar: str = "PATH") -> None:
    """-o/--output PATH alone, for a command that writes PATH itself (flip7 sql, compare)."""
    parser.add_argument("-o", "--output", metavar=metavar, help=OUTPUT_HELP)


def add_output_options(parser: argparse.ArgumentParser, results_copy: bool = True) -> None:
    """-o PATH (main writes the output there instead of the terminal) and, for a command whose
    output is worth keeping, --no-file (no results copy)."""
    add_output_option(parser)
    if results_copy:
        parser.add_argument("--no-file", action="store_true", help=RESULTS_HELP)
    parser.set_defaults(tee=results_copy, redirect=True)


def add_data_option(
    parser: argparse.ArgumentParser,
    what: str = "data root",
    default: str = "$FLIP7_DATA, else ./data",
    uri: str = "a URI",
) -> None:
    """--data DIR|URI, the lake a command reads or writes: `what` it is, and its `default`."""
    parser.add_argument(
        "--data",
        metavar="DIR|URI",
        help=f"{what}: a directory or {uri} such as s3://bucket/prefix (default: {default})",
    )


def add_engine_option(parser: argparse.ArgumentParser, same: str) -> None:
    """--engine auto|kernel|reference; `same` ends its help: what both engines give alike."""
    parser.add_argument(
        "--engine",
        choices=("auto", "kernel", "reference"),
        default="auto",
        help="auto (default): the compiled kernel when it can play every seat, else the "
        f"reference engine; {same}",
    )


def add_policy_timeout_option(
    parser: argparse.ArgumentParser, what: str = "stop", default: str = "no limit"
) -> None:
    """--policy-timeout SECONDS: `what` stops when a policy does not answer, and its default."""
    parser.add_argument(
        "--policy-timeout",
        type=float,
        metavar="SECONDS",
        help=f"{what} after SECONDS, naming the policy that did not answer (default: {default})",
    )


class DeprecatedAlias(argparse.Action):
    """An old spelling of an option: still works, with one line on stderr naming the new one."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str, **kwargs: object):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)  # type: ignore[arg-type]

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(
            f"{parser.prog}: warning: {option_string} is deprecated and will go; use {self.new} "
            "(the same meaning)",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """--format table|csv|json|markdown (docs/output.md gives each command's JSON), and --wide."""
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table for people; csv, json (for scripts; shapes in docs/output.md) or markdown",
    )
    add_wide_option(parser)


#: --wide: what the table format leaves out to fit the terminal.
WIDE_HELP = (
    "tables with every column, however wide (by default a table fits the terminal, $COLUMNS "
    "or its width: labels wrap and the least needed columns are left out, a line naming them)"
)


def add_wide_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wide", action="store_true", help=WIDE_HELP)


#: The results copy's suffix per --format (the table format's is .txt).
SUFFIXES = {"json": ".json", "csv": ".csv", "markdown": ".md"}


def results_path(
    command: str,
    now: dt.datetime | None = None,
    folder: Path = Path("results"),
    suffix: str = ".txt",
) -> Path:
    """A new file `results/<command>-<timestamp>.txt` (.json, .csv, .md in those formats),
    created here so that no other run takes it: a second run in the same second gets `-2`,
    then `-3`, ... (never overwritten)."""
    stamp = (now or dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(1, 10_000):
        path = folder / f"{command}-{stamp}{'' if k == 1 else f'-{k}'}{suffix}"
        try:
            with path.open("x", encoding="utf-8"):
                return path
        except FileExistsError:
            continue
    raise OSError(f"{folder}: too many results files for {command} at {stamp}")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Shows each option's default (where its help does not already say it) and keeps the
    epilog's line breaks (the example, the glossary)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        help = action.help or ""
        if (
            "default" in help
            or action.default in (None, False, argparse.SUPPRESS)
            or isinstance(action, argparse._HelpAction)
            or not (action.option_strings or action.nargs in ("?", "*"))
        ):
            return action.help
        return help + " (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """flip7's parsers: defaults shown in --help, "did you mean" for a mistyped choice or
    option. A subcommand refuses an unknown option itself, with its own usage line (argparse
    would hand it to the top-level parser, whose usage says nothing of the subcommand)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and " " in self.prog:  # a subcommand's parser ("flip7 sim")
            self.error(self.unrecognized(extras))
        return namespace, extras

    def unrecognized(self, extras: Sequence[str]) -> str:
        """argparse's message, and the closest option to each mistyped one."""
        import difflib

        known = [o for o in self._option_string_actions if o.startswith("--")]
        hints = []
        for word in extras:
            if word.startswith("-") and word not in ("-", "--"):
                close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1)
                if close:
                    hints.append(f"{word.split('=', 1)[0]}: did you mean {close[0]}?")
        text = f"unrecognized arguments: {' '.join(extras)}"
        if len(hints) == 1:
            return f"{text}; {hints[0].split(': ', 1)[1]}"
        return text + (f" ({'; '.join(hints)})" if hints else "")

    def _check_value(self, action: argparse.Action, value: object) -> None:
        choices = action.choices
        if choices is not None and value not in choices and isinstance(value, str):
            import difflib

            names = [str(c) for c in choices]
            close = difflib.get_close_matches(value, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r} (choose from {', '.join(names)}){hint}"
            )
        super()._check_value(action, value)


#: One example per command, shown at the end of its --help.
EXAMPLES = {
    "play": "flip7 play -p ev,dp --seed 7",
    "sim": "flip7 sim -p dp,ev,bust:0.25 -n 10000 --format json",
    "round": "flip7 round -p ev,dp,sum:20 -n 50000",
    "watch": "flip7 watch -p ev,dp --seed 3   (or: flip7 watch --run demo --game 0)",
    "rules": "flip7 rules --variant vengeance",
    "solve": "flip7 solve --all --model real",
    "advice": "flip7 advice --model basic",
    "odds": "flip7 odds --hand '3 8 11 +4'",
    "tournament run": "flip7 tournament run experiments/demo.toml --scale 0.1",
    "tournament status": "flip7 tournament status demo --format json",
    "tournament list": "flip7 tournament list --data s3://bucket/flip7",
    "replay": "flip7 replay demo 0",
    "report": "flip7 report demo --format markdown -o report.md",
    "compare": "flip7 compare demo demo-rerun --figure points_per_round",
    "ratings": "flip7 ratings league --players 4 --format json",
    "init": "flip7 init my-specs   (then: flip7 tournament run my-specs/demo.toml)",
    "sql": 'flip7 sql "SELECT * FROM win_rates LIMIT 5"',
    "plan-games": "flip7 plan-games --difference 0.01   (games to tell 1 point of win rate apart)",
    "dashboard": "flip7 dashboard --data ./data --port 8501",
    "warehouse verify": "flip7 warehouse verify demo --replay-sample 0.01",
    "warehouse upgrade": "flip7 warehouse upgrade demo --data s3://bucket/flip7",
}

#: What the placeholders of the usage lines mean.
GLOSSARY = {
    "RUN": "RUN: a tournament run's name, as `flip7 tournament list` shows it",
    "SPEC": "SPEC: a tournament spec, a TOML file such as experiments/demo.toml",
    "URI": "URI: a data root: a directory, or a pyarrow filesystem URI such as s3://bucket/prefix",
}


def _finish_help(parser: argparse.ArgumentParser, name: str) -> None:
    """Add the example and the glossary of the placeholders it uses to a parser's epilog,
    for it and its subcommands."""
    # A metavar may offer alternatives ("DIR|URI"): each one is a placeholder.
    words = {w for a in parser._actions if a.metavar for w in str(a.metavar).split("|")}
    options = {o: a for a in parser._actions for o in a.option_strings}
    if "-o" in options and "--format" in options and options["-o"].help == OUTPUT_HELP:
        options["-o"].help = OUTPUT_HELP + FORMAT_NOTE
    notes = [GLOSSARY[w] for w in GLOSSARY if w in words]
    extra = []
    if name in EXAMPLES:
        extra.append(f"example:\n  {EXAMPLES[name]}")
    if notes:
        extra.append("\n".join(notes))
    if extra:
        parser.epilog = "\n\n".join(([parser.epilog] if parser.epilog else []) + extra)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                if sub is not parser:
                    _finish_help(sub, f"{name} {sub_name}".strip())


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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
    _finish_help(parser, "")
    return parser


def version() -> str:
    """The installed package's version (what every run's manifest records), else 'unknown'."""
    try:
        return metadata.version("flip7")
    except metadata.PackageNotFoundError:  # a source checkout that is not installed
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["--version"]:  # answered before the subcommands' parsers are built
        print(f"flip7 {version()}")
        raise SystemExit(0)  # as argparse's version action does
    parser = build_parser()
    if argv is None and "_ARGCOMPLETE" in os.environ:  # the shell asks for completions
        import argcomplete

        argcomplete.autocomplete(parser)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from flip7.engine import PolicyError

    # -o PATH: the output goes to PATH instead of the terminal (commands marked `redirect`;
    # sql and compare write their -o file themselves).
    target = Path(args.output) if getattr(args, "redirect", False) and args.output else None
    wide = bool(getattr(args, "wide", False))
    out = Output(io.StringIO(), wide) if target is not None else Output(wide=wide)
    tee = target is None and getattr(args, "tee", False) and not args.no_file
    try:
        if getattr(args, "output", None):  # every -o, sql's and compare's too
            check_output_path(Path(args.output))
        code = int(args.func(args, out) or 0)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, PolicyError) as exc:
        # Bad input, or a user policy that failed: a clear message, no traceback. An error of
        # several problems (a spec's: pipeline.spec.SpecError) gives each its own line.
        lines = exc.lines() if callable(getattr(exc, "lines", None)) else [_one_line(exc)]
        print(f"flip7 {args.command}: error: {printable(lines[0])}", file=sys.stderr)
        for line in lines[1:]:
            print(printable(line), file=sys.stderr)
        return 2
    except OSError as exc:
        # The machine refused (a read-only or full disk, an unreachable Ray): one line, unless
        # the command already said it (a driver whose run was taken over, before stopping Ray).
        if not getattr(exc, "announced", False):
            print(f"flip7 {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    if target is not None or (tee and out.lines):
        path = target or Path("results") / f"{args.command}-..."
        try:
            if target is None:
                suffix = SUFFIXES.get(str(getattr(args, "format", "table")), ".txt")
                path = results_path(str(args.command), suffix=suffix)
            out.write_file(path)
        except OSError as exc:
            print(
                f"flip7 {args.command}: error: cannot save the output to {path} "
                f"({exc.strerror or exc})" + ("" if target else "; it was printed above"),
                file=sys.stderr,
            )
            return 1
        print(f"(output saved to {path})", file=sys.stderr)
    return code


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (its lines joined)."""
    lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
    return printable(" ".join(lines)) if lines else type(exc).__name__


if __name__ == "__main__":
    raise SystemExit(main())
