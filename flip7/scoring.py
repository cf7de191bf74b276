"""Round scoring rules, one function per variant, shared by engines and policies.

Classic (the rulebook): numbers, doubled by x2 (numbers only), plus +N modifiers, plus the Flip 7
bonus. "With a Vengeance" (its rulebook): numbers (0 with The Zero unless you Flip 7), halved
(rounded down) per /2, minus the -N cards, not below 0 unless Brutal, plus the bonus.
"""

from __future__ import annotations

from collections.abc import Sequence

from flip7.cards import PLUS_VALUE, Card, face_value, is_number

MINUS_VALUE = {Card.MINUS2: 2, Card.MINUS4: 4, Card.MINUS6: 6, Card.MINUS8: 8, Card.MINUS10: 10}
VENGEANCE_MODIFIERS = frozenset([Card.DIV2, *MINUS_VALUE])


def classic_row_points(cards: Sequence[int]) -> int:
    """A classic row's score before the Flip 7 bonus: 3, 8, 11 with +4 is 26."""
    numbers = sum(c for c in cards if is_number(c))
    if Card.TIMES2 in cards:
        numbers *= 2
    return numbers + sum(PLUS_VALUE[c] for c in cards)


def vengeance_row_points(cards: Sequence[int], flip7: bool, brutal: bool) -> int:
    """A Vengeance row's score before the Flip 7 bonus."""
    total = div2 = minus = 0
    zero = False
    for c in cards:
        v = face_value(c)
        if v >= 0:
            total += v
            zero = zero or c == Card.N0
        elif c == Card.DIV2:
            div2 += 1
        else:
            minus += MINUS_VALUE.get(Card(c), 0)
    if zero and not flip7:
        total = 0
    for _ in range(div2):
        total //= 2
    total -= minus
    return total if brutal else max(total, 0)


def vengeance_row_busts(cards: Sequence[int]) -> bool:
    """Whether a Vengeance row holds a duplicate: any number twice, except a pair of 13s one of
    which is the Lucky 13 (a third 13 busts)."""
    seen: dict[int, int] = {}
    lucky = False
    for c in cards:
        v = face_value(c)
        if v >= 0:
            seen[v] = seen.get(v, 0) + 1
            lucky = lucky or c == Card.LUCKY_13
    return any(k > 2 or (k == 2 and not (v == 13 and lucky)) for v, k in seen.items())
