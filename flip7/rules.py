"""Rulesets: every rule choice people disagree about, as one frozen value with a short name.

The default, `3.1`, is the publisher's Ruleset Edition 3.1 plus every ruling of the official FAQ
(the publisher's FAQ). The others differ only in how a Freeze or Flip Three flipped *during* a Flip
Three resolves:

- `3.1`: set aside until all three cards are flipped, dropped if the player busted (FAQ).
- `immediate`: resolved the moment it is flipped, then the remaining flips continue (the
  behaviour of Murch's Flip 7 simulator).
- `legacy`: set aside, and still played after a bust by the busted player (older rulebook text,
  the older rulebook text).

A ruleset prints and parses as `3.1` or `3.1(target=150,bonus=15)`.

`freeze_ties` is a reading of the shared targeting heuristic rather than a rule: a Freeze not
kept goes to the other player "closest to Flip 7" (the most numbers showing), and the texts say
nothing of ties. 0 (default): the most points showing, then the lowest seat; 1: the first of them
in turn order after the player who gives it (docs/experiments.md, "Points per round against
Murch's simulator").
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: Bumped whenever the engine's behaviour (not its code layout) changes; written into every output.
RULES_VERSION = 3


class FlipThreeActions(enum.IntEnum):
    """How Freeze / Flip Three flipped during a Flip Three resolve."""

    DEFERRED = 0
    IMMEDIATE = 1
    DEFERRED_EVEN_IF_BUST = 2


@dataclass(frozen=True)
class Ruleset:
    """One set of rule choices. `name` is the base ruleset; overrides show in `spec`."""

    name: str = "3.1"
    flip_three_actions: FlipThreeActions = FlipThreeActions.DEFERRED
    target: int = 200
    bonus: int = 15
    #: Above this many players a second deck is shuffled in (the rulebook recommends it past 18).
    players_per_deck: int = 18
    #: Safety stop for games that can never end (e.g. every seat busts forever); the game then
    #: ends with the leader (ties: lowest seat) as winner and the GAME_END reason says so.
    max_rounds: int = 1000
    #: Ties for "closest to Flip 7" when a Freeze goes to another player: 0 = most points
    #: showing, then lowest seat; 1 = first in turn order after the giver (module docstring).
    freeze_ties: int = 0

    def __post_init__(self) -> None:
        if self.target < 1:
            raise ValueError(f"ruleset target must be >= 1, got {self.target}")
        if self.bonus < 0:
            raise ValueError(f"ruleset bonus must be >= 0, got {self.bonus}")
        if self.players_per_deck < 1 or self.max_rounds < 1:
            raise ValueError("ruleset players_per_deck and max_rounds must be >= 1")
        if self.freeze_ties not in (0, 1):
            raise ValueError(f"ruleset freeze_ties must be 0 or 1, got {self.freeze_ties}")

    @property
    def spec(self) -> str:
        """The string that parses back to this ruleset."""
        base = BASE_RULESETS[self.name]
        changed = [
            f"{f.name}={getattr(self, f.name)}"
            for f in dataclasses.fields(self)
            if f.name in _OVERRIDABLE and getattr(self, f.name) != getattr(base, f.name)
        ]
        return f"{self.name}({','.join(changed)})" if changed else self.name

    def __str__(self) -> str:
        return self.spec


BASE_RULESETS: dict[str, Ruleset] = {
    "3.1": Ruleset("3.1", FlipThreeActions.DEFERRED),
    "immediate": Ruleset("immediate", FlipThreeActions.IMMEDIATE),
    "legacy": Ruleset("legacy", FlipThreeActions.DEFERRED_EVEN_IF_BUST),
}

RULESET_DESCRIPTIONS: dict[str, str] = {
    "3.1": "Ruleset Edition 3.1 + official FAQ: actions flipped in a Flip Three wait, dropped on a bust",
    "immediate": "actions flipped in a Flip Three resolve at once (Murch's Flip 7 simulator)",
    "legacy": "actions flipped in a Flip Three wait and are still played after a bust (older text)",
}

_OVERRIDABLE = ("target", "bonus", "players_per_deck", "max_rounds", "freeze_ties")
#: What a ruleset spec may be, as an error names it.
_VALID = f"{', '.join(BASE_RULESETS)} optionally with overrides, e.g. '3.1(target=150,bonus=15)'"
_SPEC = re.compile(r"^\s*([\w.]+)\s*(?:\((.*)\))?\s*$")


def split_spec(spec: str, kind: str, names: Sequence[str], valid: str) -> tuple[str, str]:
    """A `NAME` or `NAME(options)` spec (a ruleset's, a variant's) as (NAME, options text);
    a ValueError naming the `kind`, what is `valid` and the nearest name when NAME is not one
    of `names`."""
    m = _SPEC.match(spec)
    if not m or m.group(1) not in names:
        from flip7.format import suggest

        raise ValueError(
            f"unknown {kind} {spec!r}; valid: {valid}"
            + suggest(m.group(1) if m else spec, list(names))
        )
    return m.group(1), m.group(2) or ""


def parse_ruleset(spec: str | Ruleset) -> Ruleset:
    """Parse `3.1`, `legacy`, `immediate(target=150)`; a clear ValueError otherwise."""
    if isinstance(spec, Ruleset):
        return spec
    name, options = split_spec(spec, "ruleset", list(BASE_RULESETS), _VALID)
    ruleset = BASE_RULESETS[name]
    if options:
        overrides: dict[str, int] = {}
        for item in options.split(","):
            key, _, value = item.partition("=")
            key = key.strip()
            if key not in _OVERRIDABLE:
                raise ValueError(
                    f"ruleset {spec!r}: unknown override {key!r}; valid: {', '.join(_OVERRIDABLE)}"
                )
            try:
                overrides[key] = int(value)
            except ValueError:
                raise ValueError(
                    f"ruleset {spec!r}: {key} must be an integer, got {value.strip()!r}"
                ) from None
        ruleset = dataclasses.replace(ruleset, **overrides)  # type: ignore[arg-type]
    return ruleset
