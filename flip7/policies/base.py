"""The policy interface and the shared targeting heuristics.

A policy answers the engine's decision points from an `Observation`, never from the engine's
state. Built-in policies are deterministic given their observation; ties go to the lowest seat.

Shared targeting (the heuristics of Murch's Flip 7 simulator):
- Freeze: yourself when you sit on at least `FREEZE_SELF_POINTS` points and the next card busts
  you with probability at least `DANGER`; otherwise whoever is closest to Flip 7 (most distinct
  numbers, then most points; with the ruleset's `freeze_ties=1`, then the first in turn order
  after you).
- Flip Three: yourself only when your row is short (at most 2 numbers) and safe (bust risk under
  `SAFE`); otherwise the biggest threat (highest total plus points showing).
- Spare Second Chance: whoever is furthest behind (lowest total).
Vengeance's decisions use flip7.policies.vengeance.
"""

from __future__ import annotations

from collections.abc import Sequence

from flip7.cards import Card
from flip7.observation import BUSTED, Observation
from flip7.policies import vengeance

FREEZE_SELF_POINTS = 15
DANGER = 0.2
SAFE = 0.2


def points(obs: Observation, p: int) -> int:
    """What seat p banks by staying now (0 if busted, no Flip 7 bonus)."""
    if obs.variant:
        return vengeance.points(obs, p)
    if obs.status[p] == BUSTED:
        return 0
    return obs.nsum[p] * (2 if obs.x2[p] else 1) + obs.plus[p]


def bust_risk(obs: Observation, p: int, counting: bool) -> float:
    """Chance the next card is a number p already shows, over the cards p cannot see."""
    if obs.variant:
        return vengeance.bust_risk(obs, p, counting)
    deck, vis = obs.deck, obs.visible
    m = obs.mask[p]
    total = obs.deck_size - sum(vis)
    dup = 0
    if counting:
        dis = obs.discarded
        total -= sum(dis)
        v = 0
        while m:
            if m & 1:
                dup += deck[v] - vis[v] - dis[v]
            m >>= 1
            v += 1
    else:
        v = 0
        while m:
            if m & 1:
                dup += deck[v] - vis[v]
            m >>= 1
            v += 1
    return dup / total if total > 0 else 0.0


class Policy:
    """Base class: subclasses implement `hit`; targeting defaults to the shared heuristics."""

    #: The spec string that builds this policy (e.g. 'bust:0.25'); set by the registry.
    spec: str = "policy"
    #: Whether the policy reads the discard pile (card counting).
    counting: bool = False

    def hit(self, obs: Observation) -> bool:
        """True to take another card, False to stay (asked only when you hold a card)."""
        raise NotImplementedError

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        """Who receives a Freeze or Flip Three you flipped (one of `candidates`, the active
        players, yourself included when you are active)."""
        if card != Card.FREEZE and card != Card.FLIP_THREE:
            return vengeance.choose_target(obs, card, candidates, self.counting)
        me = obs.seat
        others = [q for q in candidates if q != me]
        if card == Card.FREEZE:
            if me in candidates and (
                points(obs, me) >= FREEZE_SELF_POINTS
                and bust_risk(obs, me, self.counting) >= DANGER
            ):
                return me
            if not others:
                return me
            if getattr(obs, "freeze_ties", 0) == 1:
                n = obs.n_players
                return max(others, key=lambda q: (obs.ncount[q], -((q - me) % n)))
            return max(others, key=lambda q: (obs.ncount[q], points(obs, q), -q))
        if me in candidates and obs.ncount[me] <= 2 and bust_risk(obs, me, self.counting) < SAFE:
            return me
        if not others:
            return me
        return max(others, key=lambda q: (obs.totals[q] + points(obs, q), -q))

    def choose_recipient(self, obs: Observation, candidates: Sequence[int]) -> int:
        """Who receives your spare Second Chance: whoever is furthest behind."""
        return min(candidates, key=lambda q: (obs.totals[q], q))

    def choose_move(self, obs: Observation, card: int, options: Sequence[tuple[int, ...]]) -> int:
        """Vengeance: the index of the Steal `(victim, card)`, Swap `(a, card_a, b, card_b)` or
        Discard `(victim, card)` option to play."""
        return vengeance.choose_move(obs, card, options, self.counting)

    def __repr__(self) -> str:
        return self.spec
