"""Flip 7: the rules core. Cards and decks, rulesets and variants, the engines, events,
policies and the seeded generator; pure (no Ray, no DuckDB, no Parquet).

    from flip7 import parse_policies, parse_ruleset, play_game
    result = play_game(parse_ruleset("3.1"), parse_policies("ev,sum:20"), seed=1)
"""

from flip7.cards import CLASSIC, Card, Deck
from flip7.engine import Engine, GameResult, PolicyError, play_game
from flip7.events import Event, EventKind, EventLog, rebuild_scores, rebuild_vengeance_scores
from flip7.observation import Observation
from flip7.policies import Policy, PolicySpecError, parse_policies, parse_policy, register_policy
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
