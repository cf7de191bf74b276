"""Stacked decks and scripted policies for rule tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from flip7.cards import CLASSIC, Card, Deck
from flip7.engine import Engine
from flip7.events import Event, EventKind, EventLog
from flip7.observation import Observation
from flip7.policies import parse_policies
from flip7.policies.base import Policy
from flip7.rng import derive_seed
from flip7.rules import Ruleset, parse_ruleset
from flip7.simulate import rotated
from flip7.variants import Variant

F, F3, SC = int(Card.FREEZE), int(Card.FLIP_THREE), int(Card.SECOND_CHANCE)
P2, P4, P6, P8, P10, X2 = (
    int(c) for c in (Card.PLUS2, Card.PLUS4, Card.PLUS6, Card.PLUS8, Card.PLUS10, Card.TIMES2)
)


class Scripted(Policy):
    """Hits `hits` times then stays; answers targets/recipients from lists (then defaults to
    the first candidate). Records every candidates list it was offered."""

    def __init__(
        self,
        hits: int = 0,
        targets: Sequence[int] = (),
        recipients: Sequence[int] = (),
        moves: Sequence[tuple[int, ...]] = (),
    ) -> None:
        self.hits_left = hits
        self.targets = list(targets)
        self.recipients = list(recipients)
        self.moves = list(moves)
        self.offered_targets: list[list[int]] = []
        self.offered_recipients: list[list[int]] = []
        self.offered_moves: list[list[tuple[int, ...]]] = []
        self.spec = "scripted"

    def hit(self, obs: Observation) -> bool:
        if self.hits_left > 0:
            self.hits_left -= 1
            return True
        return False

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        self.offered_targets.append(list(candidates))
        return self.targets.pop(0) if self.targets else candidates[0]

    def choose_recipient(self, obs: Observation, candidates: Sequence[int]) -> int:
        self.offered_recipients.append(list(candidates))
        return self.recipients.pop(0) if self.recipients else candidates[0]

    def choose_move(self, obs: Observation, card: int, options: Sequence[tuple[int, ...]]) -> int:
        """Plays the next scripted move (a tuple that must be among the options), else option 0."""
        self.offered_moves.append(list(options))
        return list(options).index(self.moves.pop(0)) if self.moves else 0


def stacked_engine(
    policies: Sequence[Policy],
    cards: Sequence[int],
    *,
    ruleset: str | Ruleset = "3.1",
    dealer: int | None = None,
) -> Engine:
    """An engine whose draw pile starts with `cards` (first card first). The dealer defaults to
    the last seat, so seat 0 is dealt first and acts first."""
    n = len(policies)
    return Engine(
        parse_ruleset(ruleset),
        policies,
        seed=1,
        stacked=cards,
        first_dealer=n - 1 if dealer is None else dealer,
    )


def vengeance_engine(
    policies: Sequence[Policy],
    cards: Sequence[int],
    *,
    variant: str = "vengeance",
    ruleset: str = "3.1",
) -> Engine:
    """A Vengeance engine with a stacked draw pile; the dealer is the last seat."""
    from flip7.variants import parse_variant
    from flip7.vengeance import VengeanceEngine

    v = parse_variant(variant)
    return VengeanceEngine(
        parse_ruleset(ruleset),
        policies,
        seed=1,
        deck=v.deck,
        brutal=v.brutal,
        stacked=cards,
        first_dealer=len(policies) - 1,
    )


def events(engine: Engine) -> list[Event]:
    return list(EventLog(engine.events))


def of_kind(engine: Engine, *kinds: EventKind) -> list[Event]:
    return [e for e in events(engine) if e.kind in kinds]


def draws(engine: Engine) -> list[tuple[int, int, int]]:
    """(player, card, how) of every DRAW event."""
    return [(e.player, e.card, e.value) for e in of_kind(engine, EventKind.DRAW)]


def play_stacked_round(
    engine: str,
    specs: str,
    cards: Sequence[int],
    *,
    ruleset: str = "3.1",
    deck: Deck = CLASSIC,
    seed: int = 1,
) -> tuple[list[Event], list[tuple[int, ...]]]:
    """One round of built-in policies on a stacked deck (dealer: the last seat) in the
    `reference` engine or the `kernel`: (events, round scores). The kernel's round must also
    equal the reference engine's, event for event."""
    policies = parse_policies(specs)
    n = len(policies)
    ref = Engine(
        parse_ruleset(ruleset), policies, seed, stacked=cards, first_dealer=n - 1, deck=deck
    )
    ref.play_round()
    if engine == "reference":
        return list(EventLog(ref.events)), ref.round_scores
    assert engine == "kernel", f"engine must be 'reference' or 'kernel', got {engine!r}"
    from flip7 import kernel

    got = kernel.play_batch(
        parse_ruleset(ruleset),
        policies,
        np.arange(n, dtype=np.int64)[None, :],
        np.array([seed], dtype=np.uint64),
        first_dealer=n - 1,
        one_round=True,
        stacked=cards,
        deck=deck,
    ).result(0)
    assert got.events == ref.events
    assert list(got.round_scores) == ref.round_scores
    return list(EventLog(got.events)), list(got.round_scores)


#: The built-in policy specs the compiled kernels play, for their differential tests.
KERNEL_SPECS = [
    "sum:20",
    "sum:0",
    "sum:35",
    "sum:200",
    "count:3",
    "count:7",
    "bust:0.25",
    "bust:0",
    "bust:1",
    "bustc:0.3",
    "dup:0.25",
    "dup:0",
    "dup:1",
    "dupc:0.3",
    "ev",
    "evc",
    "endgame",
]


def ruleset_overrides(draw: st.DrawFn) -> list[str]:
    """Drawn overrides of a ruleset's numbers: target, bonus, and now and then a round cap."""
    overrides = []
    if draw(st.booleans()):
        overrides.append(f"target={draw(st.integers(1, 400))}")
    if draw(st.booleans()):
        overrides.append(f"bonus={draw(st.integers(0, 40))}")
    if draw(st.integers(0, 4)) == 0:
        overrides.append(f"max_rounds={draw(st.integers(1, 30))}")
    return overrides


def assert_one_round_is_play_round(variant: Variant) -> None:
    """The kernel's one_round=True (`flip7 round`) plays exactly the variant's reference
    play_round(): the same events, round scores, busts and Flip 7s, over 40 rotated games."""
    from flip7 import kernel  # numba loads only for the kernel's own tests

    lineup = parse_policies("ev,bust:0.3,sum:18")
    ruleset = parse_ruleset("3.1")
    k = 40
    seeds = kernel.derive_seeds(11, 0, 0, k)
    rotation = kernel.rotation(3, np.arange(k) % 3)
    batch = kernel.play_batch(ruleset, lineup, rotation, seeds, one_round=True, variant=variant)
    for i in range(k):
        engine = variant.new_engine(ruleset, rotated(lineup, i), derive_seed(11, 0, i))
        engine.play_round()
        got = batch.result(i)
        assert got.events == engine.events
        assert got.round_scores == tuple(engine.round_scores)
        assert got.busts == tuple(engine.busts) and got.flip7s == tuple(engine.flip7s)


def users_policy(module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A user's own policy (hit below 12) in a module of that name on sys.path: its spec,
    `module:Mine`. Only the reference engine can play it."""
    (tmp_path / f"{module}.py").write_text(
        "from flip7.policies import Policy\n"
        "class Mine(Policy):\n"
        "    def hit(self, obs):\n"
        "        return obs.nsum[obs.seat] < 12\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{module}:Mine"


def solo_race_rounds(
    rules: Ruleset, policy: Policy, deck: Deck, races: int, seed: int
) -> list[int]:
    """The rounds each of `races` solo races takes to reach the target on the reference engine:
    `policy` in the one seat, a fresh `deck` every round (the race model's assumption), round
    n of race i seeded derive_seed(seed, i, n)."""
    rounds = []
    for i in range(races):
        banked = n = 0
        while banked < rules.target:
            engine = Engine(rules, [policy], derive_seed(seed, i, n), capture=False, deck=deck)
            engine.table.totals[0] = banked
            engine.play_round()
            banked += engine.round_scores[-1][0]
            n += 1
        rounds.append(n)
    return rounds
