"""One-step lookahead: hit when one more card, then stopping, beats stopping now.

The expectation runs over the cards the player cannot see (the table removed; with counting, the
discard pile too). A duplicate scores 0 (or keeps the current points with a Second Chance); a new
number adds to the row (with the Flip 7 bonus on the seventh); a modifier adds; an action card is
taken as neutral (worth the current points).
"""

from __future__ import annotations

from flip7.cards import PLUS_VALUE, Card
from flip7.observation import Observation
from flip7.policies import vengeance
from flip7.policies.base import Policy, bust_risk, points

_TIMES2 = int(Card.TIMES2)
_CLASSIC_END = int(Card.SECOND_CHANCE) + 1


def hit_value(obs: Observation, p: int, counting: bool) -> tuple[float, int]:
    """(expected points after one more card then staying, points if staying now)."""
    if obs.variant:
        return vengeance.hit_value(obs, p, counting)
    deck, vis, dis = obs.deck, obs.visible, obs.discarded
    mask, nsum, plus, x2 = obs.mask[p], obs.nsum[p], obs.plus[p], obs.x2[p]
    mult = 2 if x2 else 1
    now = nsum * mult + plus
    seventh = obs.ncount[p] == 6
    total = 0
    acc = 0
    for c in range(14):
        u = deck[c] - vis[c] - (dis[c] if counting else 0)
        if u <= 0:
            continue
        total += u
        if mask >> c & 1:
            if obs.has_sc[p]:
                acc += u * now
        else:
            v = (nsum + c) * mult + plus
            if seventh:
                v += obs.bonus
            acc += u * v
    for c in range(14, _CLASSIC_END):  # a classic deck holds no Vengeance cards
        u = deck[c] - vis[c] - (dis[c] if counting else 0)
        if u <= 0:
            continue
        total += u
        if c == _TIMES2:
            acc += u * (nsum * 2 + plus if not x2 else now)
        else:
            acc += u * (now + PLUS_VALUE[c])
    if total <= 0:
        return float(now), now
    return acc / total, now


class EVPolicy(Policy):
    """ev — hit whenever one more card, then stopping, is worth more than stopping now;
    evc counts the discard pile exactly."""

    def __init__(self, counting: bool = False) -> None:
        self.counting = counting

    def hit(self, obs: Observation) -> bool:
        value, now = hit_value(obs, obs.seat, self.counting)
        return value > now


class EndgamePolicy(EVPolicy):
    """endgame — ev, with race awareness once someone is within `window` of the target.

    Then it compares its total-if-it-stays-now with the best other total (banked plus points
    showing): if staying reaches the target and leads, it stays (coasts); if it trails, it keeps
    hitting while staying would still leave it behind, unless the next card busts it with
    probability above `max_risk` and nobody can end the game this round; otherwise it plays ev.
    """

    def __init__(self, window: int = 60, max_risk: float = 0.5) -> None:
        super().__init__(counting=False)
        self.window = window
        self.max_risk = max_risk

    def hit(self, obs: Observation) -> bool:
        me = obs.seat
        target = obs.target
        if max(obs.totals) < target - self.window:
            return super().hit(obs)
        mine = obs.totals[me] + points(obs, me)
        best = max(
            (obs.totals[q] + points(obs, q) for q in range(obs.n_players) if q != me),
            default=-1,
        )
        if mine >= target and mine > best:
            return False
        if mine <= best:
            if best >= target or bust_risk(obs, me, self.counting) <= self.max_risk:
                return True
        return super().hit(obs)
