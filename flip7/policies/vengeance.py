"""The built-in policies' "With a Vengeance" versions: risk, one-step value and targeting.

Hit/stay rules keep their meaning (sum, count, bust risk, one-step EV) with Vengeance's cards
understood: the Unlucky 7 never busts (it wipes the row to a lone 7), a 13 is safe while you hold
the Lucky 13 with one 13, The Zero zeroes your numbers unless you Flip 7 (and forces you to hit),
and a drawn modifier is given away (so it is neutral for the drawer).

Two risks, over the cards not on the table (bustc/dupc: the discard pile removed too):
- bust:P hits while the chance that the next card busts you on arrival is under P. Only a
  number card can: a plain number you already show (the decks hold one 0, so only a custom
  deck's second 0 could bust on The Zero); the Unlucky 7 never (drawn onto a 7 it wipes the
  row to a lone 7); a plain 13 onto a lone plain 13; any 13 (the Lucky 13 too) once you hold
  two 13s; nothing onto a lone Lucky 13 (a plain 13 makes the allowed pair), nor the Lucky 13
  onto a lone plain 13. Modifiers and actions never bust the drawer as they arrive (what they
  lead to, a Flip Four's cards or a Swap, is not counted). There is no Second Chance in this
  deck. Holding The Zero you must hit: no rule is asked.
- dup:P hits while the chance that the next card shows a number you already show is under P,
  busting or not: the Unlucky 7 counts as a 7 and the Lucky 13 as a 13.

Targeting (shared by every built-in policy):
- Just One More: the opponent in play with the most points at risk (points x bust risk); if
  nobody risks anything, the leader.
- Flip Four: yourself when your row is short (at most 2 numbers) and safe (risk < 20%), else the
  biggest threat (highest total + points showing).
- A /2 or -N modifier: the biggest threat among the others (yourself only if alone).
- Steal / Swap / Discard: the legal move with the best value, where value = change in your
  row's worth (points x (1 - bust risk) while you are active) minus half the change of each
  opponent's points (the whole change for the leader). So it steals what helps, discards the
  leader's best card or your own -10, and swaps risk away.
- Brutal Flip 7: -15 to the leader when the leader is ahead of you and within 40 of the target,
  else +15 for yourself.
"""

from __future__ import annotations

from collections.abc import Sequence

from flip7.cards import FLIP7_CHOICE, Card, face_value
from flip7.observation import ACTIVE, BUSTED, Observation
from flip7.scoring import VENGEANCE_MODIFIERS, vengeance_row_busts, vengeance_row_points

SAFE = 0.2


def points(obs: Observation, p: int) -> int:
    """What p banks by staying now (no bonus)."""
    if obs.status[p] == BUSTED:
        return -obs.minus[p] if obs.brutal else 0
    return vengeance_row_points(obs.line[p], False, obs.brutal)


def _busting(cards: Sequence[int], unseen: Sequence[int]) -> int:
    """How many unseen cards would bust a row: its numbers again, except the Unlucky 7 (never)
    and a 13 while the Lucky pair rule allows it."""
    nums = [face_value(c) for c in cards if face_value(c) >= 0]
    held = set(nums)
    thirteens = nums.count(13)
    lucky = Card.LUCKY_13 in cards
    dup = 0
    for v in held:
        if v == 13:
            if thirteens >= 2:
                dup += unseen[13] + unseen[Card.LUCKY_13]
            elif not lucky:
                dup += unseen[13]  # drawing the Lucky 13 onto a 13 is allowed
        else:
            dup += unseen[v]
    return dup


def bust_risk(obs: Observation, p: int, counting: bool) -> float:
    """The chance that the next card busts p on arrival (see the module docstring)."""
    unseen = obs.unseen(counting)
    total = sum(unseen)
    return _busting(obs.line[p], unseen) / total if total > 0 else 0.0


def dup_risk(obs: Observation, p: int, counting: bool) -> float:
    """The chance that the next card is a number p already shows (by face value: the Unlucky 7
    is a 7, the Lucky 13 a 13), whether or not it would bust p."""
    unseen = obs.unseen(counting)
    total = sum(unseen)
    if total <= 0:
        return 0.0
    held = {face_value(c) for c in obs.line[p] if face_value(c) >= 0}
    same = sum(u for c, u in enumerate(unseen) if u > 0 and face_value(c) in held)
    return same / total


def hit_value(obs: Observation, p: int, counting: bool) -> tuple[float, int]:
    """(expected points after one more card then staying, points if staying now)."""
    unseen = obs.unseen(counting)
    row = obs.line[p]
    now = points(obs, p)
    nums = [face_value(c) for c in row if face_value(c) >= 0]
    held = set(nums)
    thirteens = nums.count(13)
    lucky = Card.LUCKY_13 in row
    brutal = obs.brutal
    bust_value = -obs.minus[p] if brutal else 0
    total = 0
    acc = 0.0
    for c, u in enumerate(unseen):
        if u <= 0:
            continue
        total += u
        v = face_value(c)
        if v < 0:
            acc += u * now  # modifiers are given away, actions taken as neutral
        elif c == Card.UNLUCKY_7:
            acc += u * vengeance_row_points([c], False, brutal)
        else:
            dup = v in held
            if dup and v == 13:
                dup = thirteens >= 2 or not (lucky or c == Card.LUCKY_13)
            if dup:
                acc += u * bust_value
            else:
                flip7 = len(nums) + 1 >= 7
                acc += u * (
                    vengeance_row_points([*row, c], flip7, brutal) + (obs.bonus if flip7 else 0)
                )
    if total <= 0:
        return float(now), now
    return acc / total, now


def _threat(obs: Observation, q: int) -> tuple[int, int]:
    return (obs.totals[q] + points(obs, q), -q)


def choose_target(obs: Observation, card: int, candidates: Sequence[int], counting: bool) -> int:
    me = obs.seat
    others = [q for q in candidates if q != me]
    if card == FLIP7_CHOICE:
        if not others:
            return me
        leader = max(others, key=lambda q: (obs.totals[q], -q))
        mine = obs.totals[me] + points(obs, me)
        if obs.totals[leader] > mine and obs.totals[leader] >= obs.target - 40:
            return leader
        return me
    if not others:
        return me
    if card in VENGEANCE_MODIFIERS:
        live = [q for q in others if obs.status[q] != BUSTED] or others
        return max(live, key=lambda q: _threat(obs, q))
    if card == Card.JUST_ONE_MORE:
        loss = {q: points(obs, q) * bust_risk(obs, q, counting) for q in others}
        if max(loss.values()) > 0:
            return max(others, key=lambda q: (loss[q], obs.totals[q], -q))
        return max(others, key=lambda q: _threat(obs, q))
    # Flip Four
    if (
        me in candidates
        and obs.status[me] == ACTIVE
        and obs.ncount[me] <= 2
        and bust_risk(obs, me, counting) < SAFE
    ):
        return me
    return max(others, key=lambda q: _threat(obs, q))


def choose_move(
    obs: Observation, card: int, options: Sequence[tuple[int, ...]], counting: bool
) -> int:
    """The index of the best Steal/Swap/Discard option (see the module docstring)."""
    me = obs.seat
    unseen = obs.unseen(counting)
    total = sum(unseen) or 1
    opponents = [q for q in range(obs.n_players) if q != me]
    leader = max(opponents, key=lambda q: _threat(obs, q)) if opponents else -1

    def worth(q: int, row: list[int]) -> float:
        if vengeance_row_busts(row):
            return -obs.minus[q] if obs.brutal else 0.0
        pts = vengeance_row_points(row, False, obs.brutal)
        if q == me and obs.status[q] == ACTIVE:
            return pts * (1 - _busting(row, unseen) / total)
        return float(pts)

    def value(option: tuple[int, ...]) -> float:
        rows = {q: list(obs.line[q]) for q in range(obs.n_players)}
        if card == Card.STEAL:
            victim, c = option
            rows[victim].remove(c)
            rows[me].append(c)
        elif card == Card.SWAP:
            a, ca, b, cb = option
            rows[a].remove(ca)
            rows[b].remove(cb)
            rows[a].append(cb)
            rows[b].append(ca)
        else:
            victim, c = option
            rows[victim].remove(c)
        affected = {me, option[0]} | ({option[2]} if card == Card.SWAP else set())
        score = 0.0
        for q in sorted(affected):
            delta = worth(q, rows[q]) - worth(q, list(obs.line[q]))
            score += delta if q == me else -delta * (1.0 if q == leader else 0.5)
        return score

    values = [value(o) for o in options]
    return max(range(len(options)), key=lambda i: (values[i], -i))
