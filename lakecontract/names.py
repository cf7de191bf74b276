"""One rule for run names everywhere (a spec's `name`, `--run`, the lake's `run=` partitions and
`runs/` directories, `tournament status RUN`, `watch --run`, `replay RUN`, every warehouse
command): a name is one path segment that cannot climb out of the lake."""

from __future__ import annotations

import re
from typing import TypeGuard

RUN_NAME_MAX = 64
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def is_run_name(name: object) -> TypeGuard[str]:
    """Whether `name` follows the rule."""
    return (
        isinstance(name, str)
        and _RUN_NAME.fullmatch(name) is not None
        and ".." not in name
        and len(name) <= RUN_NAME_MAX
    )


def check_run_name(name: object, what: str = "run name") -> str:
    """`name` if it is a valid run name, else a one-line ValueError saying what is valid."""
    if not is_run_name(name):
        raise ValueError(
            f"{what} {name!r} is not a valid run name; use 1-{RUN_NAME_MAX} letters, digits, "
            "'.', '_' or '-', starting with a letter or digit, without '..'"
        )
    return name
