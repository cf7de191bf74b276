"""Snapshot tests: a command's plain-text output (NO_COLOR, not a terminal) against a file in
tests/snapshots/. What changes from run to run (timestamps, temporary paths, timings) is
replaced first. After an intended change of layout: FLIP7_UPDATE_SNAPSHOTS=1 pytest ..., then
read the diff of tests/snapshots/ before committing it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.conftest import ci_enabled

SNAPSHOTS = Path(__file__).parent / "snapshots"

#: (pattern, replacement): what varies between runs of the same command.
VOLATILE = [
    (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?", "<time>"),
    (r"\([\d,]+ games/s\)", "(<rate> games/s)"),
    (r"[\d,.]+ task-seconds", "<secs> task-seconds"),
    (r"computed in [\d.]+ s", "computed in <secs> s"),
    (r"package [\w.+-]+", "package <version>"),
]


def normalize(text: str, *paths: str | Path) -> str:
    for path in paths:
        text = text.replace(str(path), "<tmp>")
    for pattern, repl in VOLATILE:
        text = re.sub(pattern, repl, text)
    return text


def check_snapshot(name: str, text: str) -> None:
    """Assert `text` equals tests/snapshots/NAME.txt (rewritten with FLIP7_UPDATE_SNAPSHOTS=1)."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("FLIP7_UPDATE_SNAPSHOTS"):
        # Under CI a rewritten snapshot would compare the output with itself.
        assert not ci_enabled(), "FLIP7_UPDATE_SNAPSHOTS is refused under CI"
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path}; write it with FLIP7_UPDATE_SNAPSHOTS=1"
    want = path.read_text(encoding="utf-8")
    assert text == want, f"output differs from {path}:\n{text}"
