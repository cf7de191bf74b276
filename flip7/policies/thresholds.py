"""Threshold policies: stand on a sum, on a count of numbers, or on a risk.

Two risks, two families:
- bust:P / bustc:P read the chance that the next card *busts you*. In the classic game that is
  the chance of a duplicate of one of your numbers, and 0 while you hold a Second Chance (it
  saves you). In "With a Vengeance" see `flip7.policies.vengeance.bust_risk`.
- dup:P / dupc:P read the chance that the next card *duplicates* a number you show, whether or
  not it would bust you (a Second Chance held or not). This is the literal "bust risk" of Murch's
  Flip 7 simulator.
Both count over the cards not on the table; the `c` versions also remove the discard pile.
"""

from __future__ import annotations

from flip7.observation import Observation
from flip7.policies import vengeance
from flip7.policies.base import Policy, bust_risk


def next_card_busts(obs: Observation, p: int, counting: bool) -> float:
    """The chance that the next card busts seat p (0 while p holds a Second Chance)."""
    if obs.variant:
        return vengeance.bust_risk(obs, p, counting)
    if obs.has_sc[p]:
        return 0.0
    return bust_risk(obs, p, counting)


def next_card_duplicates(obs: Observation, p: int, counting: bool) -> float:
    """The chance that the next card shows a number seat p already shows."""
    if obs.variant:
        return vengeance.dup_risk(obs, p, counting)
    return bust_risk(obs, p, counting)  # classic: the duplicate chance, Second Chance ignored


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
    """bust:P — hit while the chance that the next card busts you is under P (0 while you hold
    a Second Chance), over the cards not on the table (bustc:P also removes the discard pile)."""

    def __init__(self, p: float, counting: bool = False) -> None:
        self.p = p
        self.counting = counting

    def hit(self, obs: Observation) -> bool:
        return next_card_busts(obs, obs.seat, self.counting) < self.p


class DupPolicy(Policy):
    """dup:P — hit while the chance that the next card duplicates one of your numbers is under
    P, Second Chance or not, over the cards not on the table (dupc:P also removes the discard
    pile)."""

    def __init__(self, p: float, counting: bool = False) -> None:
        self.p = p
        self.counting = counting

    def hit(self, obs: Observation) -> bool:
        return next_card_duplicates(obs, obs.seat, self.counting) < self.p
