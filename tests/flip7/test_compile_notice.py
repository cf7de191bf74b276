"""A compile is announced before it starts, once; a cache load says nothing
(flip7.kernel.load.call, which every kernel call and compiled pass goes through)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TINY = """
from numba import njit


@njit(cache=True)
def plus_one(x):
    return x + 1
"""

CALL = """
import sys
sys.path.insert(0, sys.argv[1])
import tiny
from flip7.kernel.load import call
print("calling", file=sys.stderr, flush=True)
assert call("rows", tiny.plus_one, 1) == 2
assert call("rows", tiny.plus_one, 2) == 3
print("done", file=sys.stderr, flush=True)
"""


def run(folder: Path, cache: Path) -> list[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", CALL, str(folder)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stderr.splitlines() if line.strip()]


def test_the_first_call_says_it_compiles_and_a_later_process_says_nothing(tmp_path: Path) -> None:
    (tmp_path / "tiny.py").write_text(TINY)
    cache = tmp_path / "cache"
    first = run(tmp_path, cache)
    assert first[0] == "calling" and first[-1] == "done"
    notes = first[1:-1]
    assert len(notes) == 1, first  # one line, before the compile, not again for the next call
    assert "compiling the event-table pass (once; about" in notes[0]
    assert "docs/kernel.md" in notes[0] and str(cache) in notes[0]
    assert run(tmp_path, cache) == ["calling", "done"]  # loaded from the cache: silent


CLASSIC_ONLY = """
import sys
from numba.core import types
from flip7 import kernel
from flip7.kernel import core
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
kernel.play_game(parse_ruleset("3.1"), parse_policies("ev,dp,sum:20"), 7)
builds = [sig[-1] for sig in core.play_games.signatures]
print(len(builds), all(isinstance(t, types.NoneType) for t in builds))
print(sorted(m for m in sys.modules if m.startswith("flip7.kernel.vengeance")))
"""


def test_a_game_without_win_runs_the_kernel_built_without_wins_code() -> None:
    """A classic game with no win seat runs (and, on a cold cache, compiles) only the build
    that holds none of win's code, and not the Vengeance kernel."""
    done = subprocess.run([sys.executable, "-c", CLASSIC_ONLY], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["1 True", "[]"]
