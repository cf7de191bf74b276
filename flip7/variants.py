"""Game variants: the classic game and "With a Vengeance" (its rulebook), each with its decks.

A variant prints and parses as `classic`, `vengeance`, `vengeance(deck=alt)` or
`vengeance(brutal=1)`. Decks are declarations (`flip7.cards.Deck`); the "With a Vengeance" rulebook gives no per-card
counts, so two published splits are named here and a user may declare their own
(`deck_from_counts`, e.g. from a tournament spec's `[deck]` table).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flip7.cards import CLASSIC, N_CARD_IDS, Card, Deck, card_label
from flip7.rules import split_spec

if TYPE_CHECKING:
    from flip7.engine import Engine
    from flip7.policies.base import Policy
    from flip7.rules import Ruleset

VARIANT_NAMES = ("classic", "vengeance")


def _vengeance_counts(minus_each: int, div2: int, actions_each: int) -> tuple[int, ...]:
    counts = [0] * N_CARD_IDS
    counts[0] = 1  # The Zero
    for v in range(1, 14):
        counts[v] = v
    counts[7] -= 1
    counts[Card.UNLUCKY_7] = 1  # one of the seven 7s
    counts[13] -= 1
    counts[Card.LUCKY_13] = 1  # one of the thirteen 13s
    counts[Card.DIV2] = div2
    for m in (Card.MINUS2, Card.MINUS4, Card.MINUS6, Card.MINUS8, Card.MINUS10):
        counts[m] = minus_each
    for a in (Card.JUST_ONE_MORE, Card.FLIP_FOUR, Card.STEAL, Card.SWAP, Card.DISCARD):
        counts[a] = actions_each
    return tuple(counts)


#: Default split: 92 numbers (one 0 = The Zero; v copies of v in 1..13, one 7 the Unlucky 7, one
#: 13 the Lucky 13), one of each modifier (6), two of each action (10): 108 cards.
VENGEANCE = Deck("vengeance", _vengeance_counts(minus_each=1, div2=1, actions_each=2))
#: The other published split: two each of -2..-10, one /2, one of each action: 108 cards.
VENGEANCE_ALT = Deck("vengeance-alt", _vengeance_counts(minus_each=2, div2=1, actions_each=1))

DECKS: dict[str, dict[str, Deck]] = {
    "classic": {"classic": CLASSIC},
    "vengeance": {"default": VENGEANCE, "alt": VENGEANCE_ALT},
}

#: Cards a Vengeance deck may hold (its engine does not play the classic actions/modifiers).
VENGEANCE_CARDS = frozenset([*range(14), *range(Card.UNLUCKY_7, N_CARD_IDS)])


@dataclass(frozen=True)
class Variant:
    """Which game is played: its rules (`name`), its deck, and Brutal mode (Vengeance only)."""

    name: str = "classic"
    deck: Deck = CLASSIC
    brutal: bool = False

    def __post_init__(self) -> None:
        if self.name not in VARIANT_NAMES:
            raise ValueError(f"unknown variant {self.name!r}; valid: {', '.join(VARIANT_NAMES)}")
        if self.brutal and self.name != "vengeance":
            raise ValueError("brutal mode exists only in the vengeance variant")
        if self.name == "vengeance":
            extra = [c for c, k in enumerate(self.deck.counts) if k and c not in VENGEANCE_CARDS]
            if extra:
                raise ValueError(
                    f"a vengeance deck cannot hold {', '.join(card_label(c) for c in extra)}"
                )
        elif any(self.deck.counts[Card.UNLUCKY_7 :]):
            raise ValueError("a classic deck cannot hold Vengeance cards")

    @property
    def spec(self) -> str:
        """The string that parses back to this variant (custom decks print as `deck=custom`)."""
        opts = []
        named = {d.name: k for k, d in DECKS[self.name].items()}
        if self.deck.name in named and DECKS[self.name][named[self.deck.name]] == self.deck:
            if named[self.deck.name] not in ("classic", "default"):
                opts.append(f"deck={named[self.deck.name]}")
        else:
            opts.append("deck=custom")
        if self.brutal:
            opts.append("brutal=1")
        return f"{self.name}({','.join(opts)})" if opts else self.name

    def __str__(self) -> str:
        return self.spec

    def new_engine(
        self, ruleset: Ruleset, policies: Sequence[Policy], seed: int, **kwargs: Any
    ) -> Engine:
        """An engine for this variant (keyword arguments as for `flip7.engine.Engine`)."""
        from flip7.engine import Engine
        from flip7.vengeance import VengeanceEngine

        if self.name == "vengeance":
            return VengeanceEngine(
                ruleset, policies, seed, deck=self.deck, brutal=self.brutal, **kwargs
            )
        return Engine(ruleset, policies, seed, deck=self.deck, **kwargs)


CLASSIC_VARIANT = Variant()


#: What a variant spec may be, as an error names it.
_VALID = "classic, vengeance, vengeance(deck=alt), vengeance(brutal=1)"


def parse_variant(spec: str | Variant, custom_deck: Deck | None = None) -> Variant:
    """Parse `classic`, `vengeance`, `vengeance(deck=alt,brutal=1)`; `deck=custom` takes
    `custom_deck`. A clear ValueError names what is valid."""
    if isinstance(spec, Variant):
        return spec
    name, options = split_spec(spec, "variant", list(VARIANT_NAMES), _VALID)
    deck = next(iter(DECKS[name].values()))
    brutal = False
    for item in filter(None, options.split(",")):
        key, _, value = (x.strip() for x in item.partition("="))
        if key == "deck":
            if value == "custom":
                if custom_deck is None:
                    raise ValueError(f"variant {spec!r}: deck=custom needs a declared deck")
                deck = custom_deck
            elif value in DECKS[name]:
                deck = DECKS[name][value]
            else:
                raise ValueError(
                    f"variant {spec!r}: unknown deck {value!r}; valid: "
                    f"{', '.join(DECKS[name])}, custom"
                )
        elif key == "brutal":
            if value not in ("0", "1", "true", "false"):
                raise ValueError(f"variant {spec!r}: brutal must be 0 or 1, got {value!r}")
            brutal = value in ("1", "true")
        else:
            raise ValueError(f"variant {spec!r}: unknown option {key!r}; valid: deck, brutal")
    return Variant(name, deck, brutal)


_LABEL_TO_ID = {card_label(c).lower(): c for c in range(N_CARD_IDS)}
_LABEL_TO_ID.update({Card(c).name.lower(): c for c in range(N_CARD_IDS)})


def deck_from_counts(name: str, counts: Mapping[str, int]) -> Deck:
    """A user's deck from {label: copies}, labels as `flip7 rules` prints them ('7', '-4',
    'Steal', 'Lucky 13') or card names ('LUCKY_13'). Unlisted cards have 0 copies."""
    out = [0] * N_CARD_IDS
    for label, k in counts.items():
        c = _LABEL_TO_ID.get(str(label).strip().lower())
        if c is None:
            raise ValueError(
                f"deck {name!r}: unknown card {label!r}; valid: "
                + ", ".join(card_label(c) for c in range(N_CARD_IDS))
            )
        if not isinstance(k, int) or k < 0:
            raise ValueError(
                f"deck {name!r}: copies of {label!r} must be an integer >= 0, got {k!r}"
            )
        out[c] = k
    deck = Deck(name, tuple(out))
    if deck.size == 0:
        raise ValueError(f"deck {name!r} has no cards")
    return deck
