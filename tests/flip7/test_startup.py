"""The command answers at once: `flip7 --version`, `--help`, every `COMMAND --help` and
argument errors import neither DuckDB, pyarrow, Ray nor numba (each command imports what it
uses when it runs; benchmarks/startup.py times it)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from flip7.cli import build_parser

HEAVY = ("duckdb", "pyarrow", "ray", "numba")

PROBE = """
import contextlib, io, json, sys
from flip7.cli import main
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[2])))))
"""


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[list[str]]:
    """Every command and subcommand, as the words that name it."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append([*prefix, name])
                found.extend(commands(sub, (*prefix, name)))
    return found


def heavy_imports(argvs: list[list[str]]) -> list[str]:
    """The heavy packages a fresh process imports while running each argv through main."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argvs), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_command_exists_in_the_probe() -> None:
    names = {" ".join(c) for c in commands(build_parser())}
    assert {"sim", "tournament run", "sql", "warehouse verify", "dashboard"} <= names


def test_version_help_and_every_commands_help_import_nothing_heavy() -> None:
    argvs = [["--version"], ["--help"], []]
    argvs += [[*c, "--help"] for c in commands(build_parser())]
    assert heavy_imports(argvs) == []


def test_argument_errors_import_nothing_heavy() -> None:
    argvs = [
        ["no-such-command"],
        ["sim", "-n", "many"],
        ["sim", "--engine", "fast"],
        ["tournament", "run"],
        ["sql", "--timeout", "-1"],
        ["warehouse", "verify", "--replay-sample", "2"],
        ["report"],
    ]
    assert heavy_imports(argvs) == []
