"""Threshold policies: stand on a sum, on a count of numbers, or on a bust risk."""

from __future__ import annotations

from flip7.observation import Observation
from flip7.policies.base import Policy, bust_risk


class SumPolicy(Policy):
    """sum:N — hit until the numbers in front of you total N or more."""

    def __init__(self, n: int) -> None:
        self.n = n

    def hit(self, obs: Observation) -> bool:
        return obs.nsum[obs.seat] < self.n


class CountPolicy(Policy):
    """count:N — hit until you hold N distinct numbers."""

    def __init__(self, n: int) -> None:
        self.n = n

    def hit(self, obs: Observation) -> bool:
        return obs.ncount[obs.seat] < self.n


class BustPolicy(Policy):
    """bust:P — hit while the chance that the next card duplicates one of your numbers is
    under P, over the cards not on the table (bustc:P also removes the discard pile)."""

    def __init__(self, p: float, counting: bool = False) -> None:
        self.p = p
        self.counting = counting

    def hit(self, obs: Observation) -> bool:
        return bust_risk(obs, obs.seat, self.counting) < self.p
