"""Invariants over random games (hypothesis): card census, scores rebuilt from events, replay."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from flip7.cards import N_CARD_IDS
from flip7.engine import Engine
from flip7.events import EventLog, rebuild_scores, rebuild_vengeance_scores
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant

SPECS = [
    "sum:20",
    "sum:35",
    "count:4",
    "bust:0.25",
    "bustc:0.3",
    "dup:0.25",
    "dupc:0.3",
    "ev",
    "evc",
    "endgame",
]
games = st.tuples(
    st.integers(0, 2**63 - 1),
    st.lists(st.sampled_from(SPECS), min_size=1, max_size=6),
    st.sampled_from(["3.1", "immediate", "legacy", "3.1(target=80)"]),
)


def census(engine: Engine) -> list[int]:
    """Copies of each card id across the draw pile, the discard pile and every player's row."""
    counts = [0] * N_CARD_IDS
    for c in engine.draw_pile:
        counts[c] += 1
    for c in engine.discard_pile:
        counts[c] += 1
    for line in engine.table.line:
        for c in line:
            counts[c] += 1
    for c in engine.aside:  # set aside in front of a player (Vengeance's Flip Four)
        counts[c] += 1
    if engine.in_hand >= 0:  # drawn (its DRAW event fired) but not yet placed
        counts[engine.in_hand] += 1
    return counts


def assert_census_kept(new_engine: Callable[..., Engine]) -> None:
    """Play the game new_engine(on_event=...) builds, checking after every event that each of
    the deck's cards is in exactly one place."""
    bad: list[int] = []

    def check(engine: Engine) -> None:
        if census(engine) != list(engine.deck.counts):
            bad.append(len(engine.events))

    new_engine(on_event=check).run()
    assert not bad, f"census broken after event(s) {bad[:3]}"


@settings(max_examples=40, deadline=None)
@given(games)
def test_every_card_is_in_exactly_one_place_at_every_event(game):
    """After every event, each of the deck's cards is in exactly one place."""
    seed, specs, ruleset = game
    assert_census_kept(partial(Engine, parse_ruleset(ruleset), parse_policies(specs), seed))


@settings(max_examples=60, deadline=None)
@given(games)
def test_scores_rebuilt_from_events_equal_the_engines(game):
    """Round scores, totals and the winner rebuilt from events alone equal the engine's."""
    seed, specs, ruleset_spec = game
    ruleset = parse_ruleset(ruleset_spec)
    result = Engine(ruleset, parse_policies(specs), seed).run()
    rebuilt = rebuild_scores(EventLog(result.events), len(specs), ruleset.bonus)
    assert [tuple(r) for r in rebuilt.round_scores] == list(result.round_scores)
    assert tuple(rebuilt.totals) == result.totals
    assert rebuilt.winner == result.winner


@settings(max_examples=25, deadline=None)
@given(games)
def test_same_seed_same_events_whatever_the_global_rngs(game):
    """Replaying a seed reproduces the event stream exactly, even with the global RNGs disturbed."""
    seed, specs, ruleset = game
    first = Engine(parse_ruleset(ruleset), parse_policies(specs), seed).run()
    random.seed(12345)
    np.random.seed(54321)
    random.random()
    np.random.random(7)
    second = Engine(parse_ruleset(ruleset), parse_policies(specs), seed).run()
    assert first.events == second.events


def test_different_seeds_give_different_games():
    """The seed matters (guards against a generator that ignores it)."""
    lineup = parse_policies("ev,ev,ev")
    a = Engine(parse_ruleset("3.1"), lineup, 1).run()
    b = Engine(parse_ruleset("3.1"), lineup, 2).run()
    assert a.events != b.events


vengeance_games = st.tuples(
    st.integers(0, 2**63 - 1),
    st.lists(st.sampled_from(SPECS), min_size=1, max_size=5),
    st.sampled_from(["vengeance", "vengeance(deck=alt)", "vengeance(brutal=1)"]),
)


@settings(max_examples=40, deadline=None)
@given(vengeance_games)
def test_vengeance_every_card_in_one_place_after_every_steal_swap_and_discard(game):
    """Vengeance: after every event (steals, swaps, discards included) each of the 108 cards is
    in exactly one place."""
    seed, specs, variant = game
    new_engine = parse_variant(variant).new_engine
    assert_census_kept(partial(new_engine, parse_ruleset("3.1"), parse_policies(specs), seed))


@settings(max_examples=40, deadline=None)
@given(vengeance_games)
def test_vengeance_scores_rebuilt_from_events_and_replay(game):
    """Vengeance: scores rebuilt from events equal the engine's; the same seed replays exactly."""
    seed, specs, variant = game
    v = parse_variant(variant)
    result = v.new_engine(parse_ruleset("3.1"), parse_policies(specs), seed).run()
    rebuilt = rebuild_vengeance_scores(EventLog(result.events), len(specs), 15, v.brutal)
    assert [tuple(r) for r in rebuilt.round_scores] == list(result.round_scores)
    assert rebuilt.winner == result.winner
    again = v.new_engine(parse_ruleset("3.1"), parse_policies(specs), seed).run()
    assert again.events == result.events
