"""The fast kernels agree with the reference sweep, and the engine agrees with the solver
exactly when averaged over every order of a tiny stacked deck."""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest

from flip7.cards import Card
from flip7.engine import Engine
from flip7.policies.dp import DPPolicy
from flip7.rules import parse_ruleset
from flip7.solver import build_space, get_model, occupancy, solve
from flip7.solver.model import Model, deck_of
from flip7.solver.solve import Sweeper

SC, FREEZE, FLIP3 = Card.SECOND_CHANCE, Card.FREEZE, Card.FLIP_THREE
#: Tiny decks with every card kind (Flip Threes, Freezes, Second Chances, modifiers).
DECKS = [
    {2: 1, 3: 1, 5: 2, SC: 1, FREEZE: 1, Card.PLUS4: 1},
    {1: 1, 4: 2, 6: 1, SC: 2, FREEZE: 1, Card.PLUS4: 1, Card.TIMES2: 1},
    {0: 1, 2: 2, 3: 1, FLIP3: 2, FREEZE: 1, Card.TIMES2: 1},
    {2: 1, 3: 2, 4: 2, 5: 3, FLIP3: 3, FREEZE: 2, SC: 2, Card.PLUS2: 1},
]


def model_of(cards: dict[int, int], keep: bool = False) -> Model:
    return Model("tiny", deck_of("tiny", cards), keep_duplicate=keep)


def moments_from(occ) -> tuple[float, float, float, float]:
    x = np.arange(len(occ.dist))
    return occ.ev, float(x * x @ occ.dist), occ.bust, occ.flip7


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("cards", DECKS)
def test_backward_matches_the_reference_forward(cards, keep):
    """For random policies, the fast backward sweep's EV, second moment, bust and Flip 7 chance
    equal those of the final-score distribution of the reference forward sweep."""
    space = build_space(model_of(cards, keep))
    sweeper = Sweeper(space)
    rng = np.random.default_rng(11)
    for _ in range(3):
        hit = (rng.random(sweeper.qhit.size) < 0.7).astype(np.uint8)
        m = sweeper.backward(hit, optimize=False)
        ev, m2, bust, flip7 = moments_from(occupancy(space, hit, reference=True))
        assert m.ev == pytest.approx(ev, abs=1e-12)
        assert m.sd**2 + m.ev**2 == pytest.approx(m2, abs=1e-9)
        assert (m.bust, m.flip7) == pytest.approx((bust, flip7), abs=1e-12)


@pytest.mark.parametrize("name", ["basic", "real"])
def test_fast_forward_matches_the_reference_on_the_real_models(name):
    """forward_fast reaches the same states with the same chances as the reference sweep."""
    sol = solve(get_model(name))
    fast = occupancy(sol.space, sol.hit)
    ref = occupancy(sol.space, sol.hit, reference=True)
    assert np.abs(fast.reach - ref.reach).max() < 1e-15
    assert np.abs(fast.dist - ref.dist).max() < 1e-12
    assert fast.reachable_states == ref.reachable_states
    assert fast.ev == pytest.approx(sol.moments.ev, abs=1e-9)


NESTED = {2: 1, 3: 1, 4: 2, FLIP3: 3, FREEZE: 1}  # Flip Threes inside Flip Threes


@pytest.mark.parametrize("cards", [DECKS[0], DECKS[2], NESTED])
def test_engine_over_every_order_equals_the_solver(cards, tmp_path):
    """The reference engine, solo on a stacked deck, playing the solved table (dp policy), in
    every distinct order of the deck: the mean score is the solver's EV exactly. (These decks
    cannot run dry inside a Flip Three with cards in the discard pile, where the engine would
    reshuffle them: a case the model leaves out, impossible with the real 88/94-card decks.)"""
    model = model_of(cards)
    sol = solve(model)
    policy = DPPolicy(model, str(tmp_path))
    ruleset = parse_ruleset("3.1")
    orders = sorted(set(permutations(model.deck.cards())))
    total = Fraction(0)
    busts = 0
    for order in orders:
        engine = Engine(ruleset, [policy], 1, stacked=list(order), deck=model.deck, capture=False)
        engine.play_round()
        total += engine.round_scores[0][0]
        busts += engine.busts[0]
    assert float(total / len(orders)) == pytest.approx(sol.moments.ev, abs=1e-9)
    assert busts / len(orders) == pytest.approx(sol.moments.bust, abs=1e-9)
