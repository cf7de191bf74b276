"""User policies that misbehave, loaded by import path (`tests.security.policies:Name`)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from flip7.observation import Observation
from flip7.policies import Policy


class RaisesInHit(Policy):
    """Fails on its first decision."""

    def hit(self, obs: Observation) -> bool:
        raise ZeroDivisionError("my threshold table is empty")


class AnswersNone(Policy):
    """Forgets to return: None is falsy, and must not be read as `stay`."""

    def hit(self, obs: Observation) -> bool:
        return None  # type: ignore[return-value]


class AnswersOne(Policy):
    """Answers 1 (truthy, not a bool)."""

    def hit(self, obs: Observation) -> bool:
        return 1  # type: ignore[return-value]


class NeverAnswers(Policy):
    """Loops forever on its first decision, swallowing ordinary exceptions as it goes."""

    def hit(self, obs: Observation) -> bool:
        while True:
            try:
                time.sleep(0.01)
            except Exception:
                pass


class ToThree(Policy):
    """Hits until it holds three numbers: it lives to be asked for a target or a move."""

    def hit(self, obs: Observation) -> bool:
        return bool(obs.ncount[obs.seat] < 3)


class RaisesInTarget(ToThree):
    """Hits until it holds three numbers; fails when it must give an action card away."""

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        raise KeyError("no target table")


class TargetTrue(ToThree):
    """Answers `True` as a target (True == 1 in Python, but it is not a seat)."""

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        return True


class BrokenInit(Policy):
    """Its constructor fails."""

    def __init__(self, arg: str = "x") -> None:
        raise RuntimeError(f"cannot load weights {arg!r}")

    def hit(self, obs: Observation) -> bool:
        return False


def not_a_class(arg: str = "") -> Policy:
    """A factory function: an import path must name a Policy subclass, so this is refused
    (without being called)."""
    raise AssertionError("called")


class RaisesInMove(ToThree):
    """Vengeance: hits to three numbers; fails when it must pick a Steal/Swap/Discard move."""

    def choose_move(self, obs: Observation, card: int, options: Sequence[tuple[int, ...]]) -> int:
        raise IndexError("no move table")


class ExitsZero(Policy):
    """Calls sys.exit(0) on its first decision (a success code, out of a failure)."""

    def hit(self, obs: Observation) -> bool:
        raise SystemExit(0)


class RaisesBase(Policy):
    """Raises a bare BaseException, which `except Exception` does not catch."""

    def hit(self, obs: Observation) -> bool:
        raise BaseException("out of band")


class ExitsInTarget(ToThree):
    """Hits to three numbers; exits when it must give an action card away."""

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        raise SystemExit("no target")


class ExitsInInit(Policy):
    """Its constructor exits."""

    def __init__(self) -> None:
        raise SystemExit(0)

    def hit(self, obs: Observation) -> bool:
        return False


class InterruptedInHit(Policy):
    """Stands in for the user's Ctrl-C arriving while it decides."""

    def hit(self, obs: Observation) -> bool:
        raise KeyboardInterrupt
