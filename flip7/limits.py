"""A time limit on a stretch of play, so that a policy that never answers is stopped and named.

`time_limit(seconds)` arms a real-time alarm (SIGALRM) around a block: `flip7 sim`, `round` and
`watch` wrap their games in it (`--policy-timeout`), and each tournament shard wraps its games
(`--policy-timeout` or the spec's `policy_timeout`). When the alarm fires, `PolicyTimeout` is
raised wherever Python is running: inside a policy's method, the engine turns it into a
`PolicyError` naming the policy and its seat. It derives from BaseException so that a policy's own
`except Exception` cannot swallow it.

Caveats: signals reach only the main thread, so in any other thread (and on platforms without
SIGALRM) the block runs without a limit; code that never returns to the interpreter (a C call
that ignores signals) is stopped only when it does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class LeftPlay(BaseException):  # noqa: N818 (not an error: the person left)
    """A person at the terminal left the game (the human policy raises it on `q` or the end of
    input): the engine passes it through to the command that seated them, as it does the user's
    Ctrl-C, instead of reporting it as a policy failure."""


class PolicyTimeout(BaseException):
    """The time limit of a block of play ran out."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"time limit of {seconds:g} s ran out")
        self.seconds = seconds


def can_limit() -> bool:
    """Whether time_limit can enforce a limit here (the main thread, a platform with SIGALRM)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise PolicyTimeout inside the block once `seconds` have passed (None: no limit)."""
    if seconds is None or not can_limit():
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise PolicyTimeout(seconds)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
