"""What a policy may see: the table, the scores, its own hand, and the discard pile.

An `Observation` is a live, read-only view for one seat. The engine creates one per seat per game
and mutates the underlying lists in place, so a decision costs no allocation. It never exposes
the draw pile or its order. Policies must not mutate anything they are shown.

Per-seat lists are indexed by seat: `mask[p]` (bit v set if p shows number v), `nsum[p]` (sum of
numbers), `ncount[p]` (distinct numbers), `plus[p]` (sum of +N modifiers), `x2[p]`, `has_sc[p]`,
`status[p]` (ACTIVE, STAYED, FROZEN, BUSTED), `line[p]` (every card in front of p, in order),
`totals[p]` (banked game score). `visible[c]` counts card c on the table this round,
`discarded[c]` counts it in the discard pile, `deck[c]` in the whole deck. `freeze_ties` is the
ruleset's reading of ties in the shared Freeze targeting (flip7.rules).

"With a Vengeance" (`variant == VENGEANCE`) adds `minus[p]` (sum of -N modifiers), `div2[p]`
(count of /2), `zero[p]` (holds The Zero), `lucky[p]` (holds the Lucky 13), `thirteens[p]` (13s
held) and `brutal`; there `ncount[p]` counts number cards (a Lucky pair of 13s counts twice).
"""

from __future__ import annotations

from flip7.cards import N_CARD_IDS, Card

ACTIVE, STAYED, FROZEN, BUSTED = 0, 1, 2, 3
CLASSIC_RULES, VENGEANCE_RULES = 0, 1
STATUS_NAMES = ("active", "stayed", "frozen", "busted")


class Observation:
    """A live view of the table for `seat`. See the module docstring for the fields."""

    __slots__ = (
        "seat",
        "n_players",
        "target",
        "bonus",
        "round",
        "mask",
        "nsum",
        "ncount",
        "plus",
        "x2",
        "has_sc",
        "status",
        "line",
        "totals",
        "visible",
        "discarded",
        "deck",
        "deck_size",
        "variant",
        "minus",
        "div2",
        "zero",
        "lucky",
        "thirteens",
        "brutal",
        "freeze_ties",
    )

    seat: int
    n_players: int
    target: int
    bonus: int
    round: int
    mask: list[int]
    nsum: list[int]
    ncount: list[int]
    plus: list[int]
    x2: list[bool]
    has_sc: list[bool]
    status: list[int]
    line: list[list[int]]
    totals: list[int]
    visible: list[int]
    discarded: list[int]
    deck: list[int]
    deck_size: int
    variant: int
    minus: list[int]
    div2: list[int]
    zero: list[bool]
    lucky: list[bool]
    thirteens: list[int]
    brutal: bool
    freeze_ties: int

    def __init__(self, seat: int, table: Observation | None = None) -> None:
        self.seat = seat
        if table is not None:  # share every list with another seat's view
            for name in self.__slots__[1:]:
                setattr(self, name, getattr(table, name))

    # Convenience for policies; the hot built-in policies read the lists directly.

    def round_points(self, p: int | None = None) -> int:
        """What seat p (default: self) would bank by staying now (no Flip 7 bonus)."""
        p = self.seat if p is None else p
        if self.status[p] == BUSTED:
            return 0
        return self.nsum[p] * (2 if self.x2[p] else 1) + self.plus[p]

    def unseen(self, counting: bool) -> list[int]:
        """Copies of each card not on the table (and, if counting, not in the discard pile)."""
        deck, vis = self.deck, self.visible
        if counting:
            dis = self.discarded
            return [deck[c] - vis[c] - dis[c] for c in range(N_CARD_IDS)]
        return [deck[c] - vis[c] for c in range(N_CARD_IDS)]

    def bust_risk(self, counting: bool = False, p: int | None = None) -> float:
        """Chance that the next card duplicates a number seat p shows (0 with a Second Chance
        is not assumed: this is the raw duplicate chance)."""
        p = self.seat if p is None else p
        unseen = self.unseen(counting)
        total = sum(unseen)
        if total <= 0:
            return 0.0
        m = self.mask[p]
        dup = sum(unseen[v] for v in range(14) if m >> v & 1)
        return dup / total

    def active_players(self) -> list[int]:
        return [p for p in range(self.n_players) if self.status[p] == ACTIVE]

    def numbers(self, p: int | None = None) -> list[int]:
        """The number cards in p's row, in the order they arrived."""
        p = self.seat if p is None else p
        return [c for c in self.line[p] if c <= Card.N13]
