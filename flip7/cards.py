"""Cards and decks as data.

Every card is a small integer id (`Card`). Numbers 0..13 are their own ids, so a number card's id
is its face value. A deck is a declaration: a tuple of copies per card id (`Deck.counts`), never
a code path. The classic 94-card deck is declared here; other variants extend the same id table
so that one id space (and one event schema) serves every variant.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Card(enum.IntEnum):
    """Card ids. Numbers are 0..13 (13 only exists in Vengeance)."""

    N0 = 0
    N1 = 1
    N2 = 2
    N3 = 3
    N4 = 4
    N5 = 5
    N6 = 6
    N7 = 7
    N8 = 8
    N9 = 9
    N10 = 10
    N11 = 11
    N12 = 12
    N13 = 13
    PLUS2 = 14
    PLUS4 = 15
    PLUS6 = 16
    PLUS8 = 17
    PLUS10 = 18
    TIMES2 = 19
    FREEZE = 20
    FLIP_THREE = 21
    SECOND_CHANCE = 22
    # "With a Vengeance" (its rulebook). Its plain numbers reuse N0..N13; N0 is The Zero there.
    UNLUCKY_7 = 23
    LUCKY_13 = 24
    DIV2 = 25
    MINUS2 = 26
    MINUS4 = 27
    MINUS6 = 28
    MINUS8 = 29
    MINUS10 = 30
    JUST_ONE_MORE = 31
    FLIP_FOUR = 32
    STEAL = 33
    SWAP = 34
    DISCARD = 35


N_CARD_IDS = 36

#: Not a card: what a Vengeance Brutal-mode Flip 7 offers to `Policy.choose_target` (choose
#: yourself for +15, or another seat to take 15 from them).
FLIP7_CHOICE = -7
MAX_NUMBER = 13

#: The bonus a modifier id adds (0 for x2 and non-modifiers).
PLUS_VALUE: tuple[int, ...] = tuple(
    {Card.PLUS2: 2, Card.PLUS4: 4, Card.PLUS6: 6, Card.PLUS8: 8, Card.PLUS10: 10}.get(Card(i), 0)
    for i in range(N_CARD_IDS)
)

ACTIONS = (Card.FREEZE, Card.FLIP_THREE, Card.SECOND_CHANCE)
MODIFIERS = (Card.PLUS2, Card.PLUS4, Card.PLUS6, Card.PLUS8, Card.PLUS10, Card.TIMES2)


def is_number(card: int) -> bool:
    """True for number cards (ids 0..13)."""
    return card <= MAX_NUMBER


def is_modifier(card: int) -> bool:
    """True for +2..+10 and x2, and Vengeance's /2 and -2..-10."""
    return Card.PLUS2 <= card <= Card.TIMES2 or Card.DIV2 <= card <= Card.MINUS10


def is_action(card: int) -> bool:
    """True for Freeze, Flip Three, Second Chance and Vengeance's five actions."""
    return Card.FREEZE <= card <= Card.SECOND_CHANCE or card >= Card.JUST_ONE_MORE


def face_value(card: int) -> int:
    """The number a number card counts as (the Unlucky 7 is a 7, the Lucky 13 a 13); -1 if
    the card is not a number."""
    if card <= MAX_NUMBER:
        return card
    return {Card.UNLUCKY_7: 7, Card.LUCKY_13: 13}.get(Card(card), -1)


_LABELS = {
    Card.PLUS2: "+2",
    Card.PLUS4: "+4",
    Card.PLUS6: "+6",
    Card.PLUS8: "+8",
    Card.PLUS10: "+10",
    Card.TIMES2: "x2",
    Card.FREEZE: "Freeze",
    Card.FLIP_THREE: "Flip Three",
    Card.SECOND_CHANCE: "Second Chance",
    Card.UNLUCKY_7: "Unlucky 7",
    Card.LUCKY_13: "Lucky 13",
    Card.DIV2: "/2",
    Card.MINUS2: "-2",
    Card.MINUS4: "-4",
    Card.MINUS6: "-6",
    Card.MINUS8: "-8",
    Card.MINUS10: "-10",
    Card.JUST_ONE_MORE: "Just One More",
    Card.FLIP_FOUR: "Flip Four",
    Card.STEAL: "Steal",
    Card.SWAP: "Swap",
    Card.DISCARD: "Discard",
}


def card_label(card: int) -> str:
    """A short human label: '7', '+4', 'x2', 'Freeze'."""
    if is_number(card):
        return str(card)
    return _LABELS[Card(card)]


@dataclass(frozen=True)
class Deck:
    """A deck declaration: `counts[card_id]` copies of each card."""

    name: str
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.counts) != N_CARD_IDS:
            raise ValueError(
                f"deck {self.name!r}: need {N_CARD_IDS} counts, got {len(self.counts)}"
            )
        if any(c < 0 for c in self.counts):
            raise ValueError(f"deck {self.name!r}: counts must be >= 0")

    @property
    def size(self) -> int:
        return sum(self.counts)

    def cards(self) -> list[int]:
        """Every card id, once per copy, in id order (an unshuffled deck)."""
        return [card for card, n in enumerate(self.counts) for _ in range(n)]

    def times(self, k: int) -> Deck:
        """k decks shuffled together (the rulebook adds a second deck past 18 players)."""
        return Deck(f"{self.name}x{k}" if k > 1 else self.name, tuple(c * k for c in self.counts))


def _classic_counts() -> tuple[int, ...]:
    counts = [0] * N_CARD_IDS
    counts[0] = 1
    for v in range(1, 13):
        counts[v] = v
    for m in MODIFIERS:
        counts[m] = 1
    for a in ACTIONS:
        counts[a] = 3
    return tuple(counts)


#: The publisher's 94-card deck: one 0, v copies of each v in 1..12, six modifiers, 3 x 3 actions.
CLASSIC = Deck("classic", _classic_counts())
