"""Solo-round models and the state encoding the exact solver runs over.

A `Model` is a deck declaration plus the two rule choices the models differ in: whether a
Second Chance that saves you leaves the duplicate in the deck (Murch's simplification) or
discards it (the real rule), and whether the deck holds Freeze and Flip Three (played on
yourself, since you are alone). `MODELS` names the three the CLI offers.

A decision state is (numbers shown, modifiers shown, Second Chance state, Flip Threes drawn):
- numbers: a 13-bit mask with at most 6 bits (7 distinct numbers end the round at once);
  the solver uses the rank of the mask among those masks (`Space.masks`: 4096 for a deck with
  every number 0..12, fewer for a tiny deck that lacks some).
- modifiers: a 6-bit mask, bit i for +2, +4, +6, +8, +10, x2 (i = 0..5).
- Second Chance state (d, h, u): Second Chances drawn, whether one is held, and (real rule only)
  saved duplicates discarded. Which duplicates were discarded never matters: the next card
  busts or not according to how many duplicates are left, and any discard lowers that by one.
- Flip Threes drawn t (0 where the deck has none). No Freeze is ever drawn at a decision point.
Inside a Flip Three there are no decisions; its bookkeeping is a *phase* (`flip7.solver.phases`). The
deck left is always the model deck minus these cards, so these few integers are the whole state.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from flip7.cards import CLASSIC, MODIFIERS, N_CARD_IDS, PLUS_VALUE, Card, Deck
from flip7.solver.phases import Phases, build_phases

#: Numbers 0..12 (13 exists only in the Vengeance deck, which no model covers).
N_NUMBERS = 13
MAX_HELD = 6  # a seventh distinct number is a Flip 7, which ends the round
N_MODS = len(MODIFIERS)


@cache
def code_digest() -> str:
    """A digest of the source of every module the solved tables depend on: flip7/solver/*.py
    and flip7/cards.py (the deck)."""
    import flip7.cards

    here = Path(__file__).resolve().parent
    files = sorted(here.glob("*.py")) + [Path(flip7.cards.__file__)]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


_MODELLED = set(range(N_NUMBERS)) | set(MODIFIERS) | {Card.FREEZE, Card.FLIP_THREE}
_MODELLED.add(Card.SECOND_CHANCE)


@dataclass(frozen=True)
class Model:
    """One solo-round model: its deck, the duplicate rule and the Flip 7 bonus."""

    name: str
    deck: Deck
    keep_duplicate: bool
    bonus: int = 15
    description: str = ""

    def __post_init__(self) -> None:
        counts = self.deck.counts
        for card, n in enumerate(counts):
            if n and card not in _MODELLED:
                raise ValueError(
                    f"model {self.name!r}: deck holds card id {card}, which no solo model covers "
                    "(only numbers 0..12, the six modifiers, Freeze, Flip Three, Second Chance)"
                )
        for m in MODIFIERS:
            if counts[m] > 1:
                raise ValueError(
                    f"model {self.name!r}: at most one copy of each modifier, got {counts[m]} "
                    f"of {Card(m).name}"
                )
        for c in (Card.FREEZE, Card.FLIP_THREE, Card.SECOND_CHANCE):
            if counts[c] > 3:
                raise ValueError(
                    f"model {self.name!r}: at most 3 copies of {Card(c).name}, got {counts[c]}"
                )
        if self.bonus < 0:
            raise ValueError(f"model {self.name!r}: bonus must be >= 0, got {self.bonus}")

    @property
    def key(self) -> str:
        """A short hash of everything the solution depends on, the model and the solver's code
        (names cache files: a changed solver never reads a table an older one wrote)."""
        text = f"{code_digest()}|{self.deck.counts}|{self.keep_duplicate}|{self.bonus}"
        return hashlib.sha1(text.encode()).hexdigest()[:10]

    @property
    def has_actions(self) -> bool:
        """True when Freeze or Flip Three are in the deck."""
        return bool(self.deck.counts[Card.FREEZE] or self.deck.counts[Card.FLIP_THREE])

    def assumptions(self) -> str:
        """The model's assumptions, in one paragraph for the CLI."""
        c = self.deck.counts
        dup = (
            "a Second Chance that saves you leaves the duplicate in the deck (Murch's Flip 7 simulator)"
            if self.keep_duplicate
            else "a Second Chance that saves you is discarded with the duplicate (the real rule)"
        )
        acts = (
            f"{c[Card.FREEZE]} Freeze and {c[Card.FLIP_THREE]} Flip Three played on yourself "
            "(Ruleset 3.1: one flipped during a Flip Three waits, dropped if you bust)"
            if self.has_actions
            else "Freeze and Flip Three left out"
        )
        return (
            f"model {self.name}: {self.deck.size} cards ({sum(c[:N_NUMBERS])} numbers, "
            f"{sum(c[m] for m in MODIFIERS)} modifiers, {c[Card.SECOND_CHANCE]} Second Chances); "
            f"{acts}; {dup}; one player alone from a full deck; stay any time you show a card; "
            f"7 distinct numbers end the round with +{self.bonus}."
        )


def model_deck(name: str, freeze: int, flip_three: int) -> Deck:
    """The classic deck with the given numbers of Freeze and Flip Three."""
    counts = list(CLASSIC.counts)
    counts[Card.FREEZE] = freeze
    counts[Card.FLIP_THREE] = flip_three
    return Deck(name, tuple(counts))


def deck_of(name: str, cards: dict[int, int]) -> Deck:
    """A deck from {card id: copies} (tiny decks for tests and experiments)."""
    counts = [0] * N_CARD_IDS
    for card, n in cards.items():
        counts[card] = n
    return Deck(name, tuple(counts))


_DECK88 = model_deck("model88", 0, 0)

MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model(
            "basic",
            _DECK88,
            keep_duplicate=True,
            description="Murch's model: 88 cards, saved duplicate stays in the deck",
        ),
        Model(
            "real",
            _DECK88,
            keep_duplicate=False,
            description="88 cards, saved duplicate discarded (the real rule)",
        ),
        Model(
            "full",
            CLASSIC,
            keep_duplicate=False,
            description="all 94 cards: Freeze and Flip Three played on yourself, real rule",
        ),
    )
}


def get_model(name: str) -> Model:
    """The named model; a ValueError lists the valid names."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; valid: {', '.join(MODELS)}") from None


def _sc_states(n_sc: int, track_used: bool) -> list[tuple[int, int, int]]:
    """Every reachable (drawn, held, used-and-discarded) Second Chance state, in an order where
    every transition goes to a later state; (0, 0, 0) first."""
    seen = {(0, 0, 0)}
    todo = [(0, 0, 0)]
    while todo:
        d, h, u = todo.pop()
        nxt = []
        if d < n_sc:
            nxt.append((d + 1, 1, u))  # a second one is discarded: nobody to pass it to
        if h:
            nxt.append((d, 0, u + 1 if track_used else u))
        for s in nxt:
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return sorted(seen, key=lambda s: (s[0], 1 - s[1], s[2]))


@dataclass(frozen=True, eq=False)
class Space:
    """A model's state space as integer tables for the kernels (see the module docstring).

    `mask_tab[i]`: columns 0..12 the rank of mask|v (-1 if v is held, -2 if it is the 7th),
    13 the sum, 14 the duplicates left in a full deck, 15 the count. `mod_tab[m]`: +N sum, x2,
    count. `sc_tab[s]`: d, h, u, state after drawing a Second Chance, after using one.
    `params`: total cards, Second Chances, Flip Threes, Freezes, keep duplicate, bonus.
    """

    model: Model
    masks: np.ndarray
    mask_rank: np.ndarray
    copies: np.ndarray
    mask_tab: np.ndarray
    mod_tab: np.ndarray
    mod_w: np.ndarray
    sc_states: list[tuple[int, int, int]]
    sc_tab: np.ndarray
    phases: Phases
    params: np.ndarray
    tabs: tuple[np.ndarray, ...] = field(repr=False)

    @property
    def n_sc(self) -> int:
        return len(self.sc_states)

    @property
    def n_masks(self) -> int:
        return len(self.masks)

    @property
    def n_phases(self) -> int:
        return len(self.phases.labels)

    @property
    def n_dec(self) -> int:
        return self.phases.n_dec

    @property
    def n_states(self) -> int:
        """Slots in the kernels' arrays (decision and Flip Three states)."""
        return self.n_sc * self.n_masks * 64 * self.n_phases

    @property
    def dec_shape(self) -> tuple[int, int, int, int]:
        """Shape of per-decision-state arrays: (Second Chance state, mask rank, mods, t)."""
        return (self.n_sc, self.n_masks, 64, self.n_dec)

    def sc_index(self, drawn: int, held: int, used: int = 0) -> int:
        """The index of a Second Chance state (used is ignored when duplicates stay)."""
        key = (drawn, held, 0 if self.model.keep_duplicate else used)
        try:
            return self.sc_states.index(key)
        except ValueError:
            raise ValueError(f"no Second Chance state {key} in model {self.model.name}") from None

    def dec_index(self, mask: int, mods: int, sc: int, t: int = 0) -> int:
        """Flat index of a decision state in per-decision-state arrays."""
        mi = int(self.mask_rank[mask])
        if mi < 0:
            raise ValueError(
                f"mask {mask:#x} shows more than {MAX_HELD} numbers, or one the deck lacks"
            )
        return ((sc * self.n_masks + mi) * 64 + mods) * self.n_dec + t

    # Features of every decision state, as arrays of `dec_shape` (for policies and advice).

    def feature(self, name: str) -> np.ndarray:
        """'nsum', 'ncount', 'points', 'risk' (the chance the next card is a duplicate, in the
        model deck), 'risk94' (duplicates / cards not in front of you, counted in the 94-card
        deck: what a player computes at the table), 'dups', 'left' (cards in the deck)."""
        shape = self.dec_shape
        mt, md = self.mask_tab, self.mod_tab
        nsum = mt[:, 13][None, :, None, None]
        k = mt[:, 15][None, :, None, None]
        dup = mt[:, 14][None, :, None, None]
        plus = md[:, 0][None, None, :, None]
        x2 = md[:, 1][None, None, :, None]
        j = md[:, 2][None, None, :, None]
        sc = self.sc_tab
        d, h, u = (sc[:, i][:, None, None, None] for i in range(3))
        t = np.arange(self.n_dec)[None, None, None, :]
        used = 0 if self.model.keep_duplicate else u
        if name == "nsum":
            out = nsum
        elif name == "ncount":
            out = k
        elif name == "points":
            out = nsum * (1 + x2) + plus
        elif name == "dups":
            out = np.maximum(dup - used, 0)
        elif name == "left":
            out = self.params[0] - k - j - d - used - t
        elif name == "risk":
            left = self.params[0] - k - j - d - used - t
            out = np.maximum(dup - used, 0) / np.maximum(left, 1)
        elif name == "risk94":
            out = dup / (CLASSIC.size - k - j - h - t)
        else:
            raise ValueError(f"unknown feature {name!r}")
        return np.broadcast_to(out, shape)


@cache
def build_space(model: Model) -> Space:
    """The state encoding of a model (cached per process)."""
    counts = model.deck.counts
    copies = np.array(counts[:N_NUMBERS], dtype=np.int64)
    pop = np.array([bin(m).count("1") for m in range(1 << N_NUMBERS)])
    absent = sum(1 << v for v in range(N_NUMBERS) if copies[v] == 0)
    in_deck = (np.arange(1 << N_NUMBERS) & absent) == 0  # only numbers the deck holds
    masks = np.flatnonzero((pop <= MAX_HELD) & in_deck).astype(np.int64)
    rank = np.full(1 << N_NUMBERS, -1, dtype=np.int64)
    rank[masks] = np.arange(len(masks))
    mask_tab = np.zeros((len(masks), 16), dtype=np.int64)
    bits = (masks[:, None] >> np.arange(N_NUMBERS)) & 1
    values = np.arange(N_NUMBERS)
    mask_tab[:, 13] = bits @ values
    mask_tab[:, 14] = bits @ np.maximum(copies - 1, 0)
    mask_tab[:, 15] = pop[masks]
    for v in range(N_NUMBERS):
        child = rank[masks | (1 << v)]
        child = np.where(mask_tab[:, 15] == MAX_HELD, -2, child)
        mask_tab[:, v] = np.where(bits[:, v] == 1, -1, child)
    mods = np.arange(64)
    mod_bits = (mods[:, None] >> np.arange(N_MODS)) & 1
    plus_values = np.array([PLUS_VALUE[m] for m in MODIFIERS])
    mod_tab = np.zeros((64, 4), dtype=np.int64)
    mod_tab[:, 0] = mod_bits @ plus_values
    mod_tab[:, 1] = mod_bits[:, N_MODS - 1]  # x2 is the last modifier
    mod_tab[:, 2] = mod_bits.sum(axis=1)
    mod_w = np.array([counts[m] for m in MODIFIERS], dtype=np.int64)
    n_sc, n_t, n_f = counts[Card.SECOND_CHANCE], counts[Card.FLIP_THREE], counts[Card.FREEZE]
    states = _sc_states(n_sc, not model.keep_duplicate)
    where = {s: i for i, s in enumerate(states)}
    sc_tab = np.full((len(states), 5), -1, dtype=np.int64)
    for i, (d, h, u) in enumerate(states):
        sc_tab[i, :3] = (d, h, u)
        if d < n_sc:
            sc_tab[i, 3] = where[(d + 1, 1, u)]
        if h:
            sc_tab[i, 4] = where[(d, 0, u if model.keep_duplicate else u + 1)]
    phases = build_phases(n_t, n_f)
    total = sum(counts[c] for c in _MODELLED)
    params = np.array(
        [total, n_sc, n_t, n_f, int(model.keep_duplicate), model.bonus], dtype=np.int64
    )
    tabs = (copies, mask_tab, mod_tab, mod_w, sc_tab, phases.table, phases.order, params)
    return Space(
        model, masks, rank, copies, mask_tab, mod_tab, mod_w, states, sc_tab, phases, params, tabs
    )
