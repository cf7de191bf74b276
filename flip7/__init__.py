"""Flip 7: the rules core. Cards and decks, rulesets and variants, the engines, events,
policies and the seeded generator; pure (no Ray, no DuckDB, no Parquet).

    from flip7 import parse_policies, parse_ruleset, play_game
    result = play_game(parse_ruleset("3.1"), parse_policies("ev,sum:20"), seed=1)
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flip7.cards import CLASSIC, Card, Deck
    from flip7.engine import Engine, GameResult, PolicyError, play_game
    from flip7.events import Event, EventKind, EventLog, rebuild_scores, rebuild_vengeance_scores
    from flip7.observation import Observation
    from flip7.policies import (
        Policy,
        PolicySpecError,
        parse_policies,
        parse_policy,
        register_policy,
    )
    from flip7.rng import CardRng, derive_seed
    from flip7.rules import RULES_VERSION, Ruleset, parse_ruleset
    from flip7.variants import VENGEANCE, VENGEANCE_ALT, Variant, parse_variant

__all__ = [
    "CLASSIC",
    "RULES_VERSION",
    "VENGEANCE",
    "VENGEANCE_ALT",
    "Card",
    "CardRng",
    "Deck",
    "Engine",
    "Event",
    "EventKind",
    "EventLog",
    "GameResult",
    "Observation",
    "Policy",
    "PolicyError",
    "PolicySpecError",
    "Ruleset",
    "Variant",
    "derive_seed",
    "parse_policies",
    "parse_policy",
    "parse_ruleset",
    "parse_variant",
    "play_game",
    "rebuild_scores",
    "rebuild_vengeance_scores",
    "register_policy",
]

#: Where each name lives, imported on first use: `import flip7.cli` (the command's parser)
#: then loads neither the engine nor numpy.
_LAZY = {
    "CLASSIC": "flip7.cards",
    "Card": "flip7.cards",
    "Deck": "flip7.cards",
    "Engine": "flip7.engine",
    "GameResult": "flip7.engine",
    "PolicyError": "flip7.engine",
    "play_game": "flip7.engine",
    "Event": "flip7.events",
    "EventKind": "flip7.events",
    "EventLog": "flip7.events",
    "rebuild_scores": "flip7.events",
    "rebuild_vengeance_scores": "flip7.events",
    "Observation": "flip7.observation",
    "Policy": "flip7.policies",
    "PolicySpecError": "flip7.policies",
    "parse_policies": "flip7.policies",
    "parse_policy": "flip7.policies",
    "register_policy": "flip7.policies",
    "CardRng": "flip7.rng",
    "derive_seed": "flip7.rng",
    "RULES_VERSION": "flip7.rules",
    "Ruleset": "flip7.rules",
    "parse_ruleset": "flip7.rules",
    "VENGEANCE": "flip7.variants",
    "VENGEANCE_ALT": "flip7.variants",
    "Variant": "flip7.variants",
    "parse_variant": "flip7.variants",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'flip7' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
