"""Rulesets, decks and the seeded shuffler."""

from __future__ import annotations

import pytest

from flip7.cards import CLASSIC, Card, Deck
from flip7.rng import CardRng, derive_seed
from flip7.rules import FlipThreeActions, parse_ruleset


def test_classic_deck_is_the_publishers_94_cards():
    """seeds/000: one 0, v copies of v for 1..12 (79 numbers), 6 modifiers, 3 x 3 actions."""
    assert CLASSIC.size == 94
    assert sum(CLASSIC.counts[:13]) == 79
    assert CLASSIC.counts[0] == 1 and CLASSIC.counts[12] == 12 and CLASSIC.counts[13] == 0
    assert [CLASSIC.counts[c] for c in (Card.FREEZE, Card.FLIP_THREE, Card.SECOND_CHANCE)] == [
        3,
        3,
        3,
    ]


def test_deck_validation():
    """A deck declaration with the wrong length or negative counts is refused."""
    with pytest.raises(ValueError, match="need 36 counts"):
        Deck("bad", (1, 2))
    with pytest.raises(ValueError, match=">= 0"):
        Deck("bad", (-1,) + (0,) * 35)


def test_rulesets_parse_with_overrides_and_print_back():
    """'3.1(target=150)' parses; spec prints back; unknown names and keys are clear errors."""
    r = parse_ruleset("legacy(target=150,bonus=20)")
    assert r.flip_three_actions == FlipThreeActions.DEFERRED_EVEN_IF_BUST
    assert (r.target, r.bonus) == (150, 20)
    assert parse_ruleset(r.spec) == r
    assert parse_ruleset("3.1").spec == "3.1"
    with pytest.raises(ValueError, match="valid: 3.1, immediate, legacy"):
        parse_ruleset("house")
    with pytest.raises(ValueError, match="unknown override 'speed'"):
        parse_ruleset("3.1(speed=2)")
    with pytest.raises(ValueError, match="target must be an integer"):
        parse_ruleset("3.1(target=lots)")
    with pytest.raises(ValueError, match="target must be >= 1"):
        parse_ruleset("3.1(target=0)")


def test_shuffle_is_a_permutation_fixed_by_the_seed():
    """A shuffle keeps every card, depends on the seed, and repeats exactly for the same seed."""
    cards = CLASSIC.cards()
    a = CardRng(5).shuffle(cards)
    assert sorted(a) == cards
    assert CardRng(5).shuffle(cards) == a
    assert CardRng(6).shuffle(cards) != a
    rng = CardRng(5)
    first, second = rng.shuffle(cards), rng.shuffle(cards)
    assert first == a and second != first  # the counter advances


def test_shuffle_positions_are_uniform_enough():
    """Chi-square-ish check: where the single 0 lands over 4700 shuffles is spread evenly."""
    cards = CLASSIC.cards()
    hits = [0] * 94
    rng = CardRng(11)
    for _ in range(4700):
        hits[rng.shuffle(cards).index(0)] += 1
    expected = 4700 / 94
    chi2 = sum((h - expected) ** 2 / expected for h in hits)
    assert chi2 < 160  # 93 degrees of freedom: p < 1e-4 above ~150


def test_derived_seeds_are_distinct_and_not_additive():
    """derive_seed hashes the tuple: neighbours differ, order matters, all fit in 63 bits."""
    seeds = {derive_seed(7, cell, i) for cell in range(10) for i in range(1000)}
    assert len(seeds) == 10000
    assert derive_seed(7, 1, 2) != derive_seed(7, 2, 1)
    assert all(0 <= s < 2**63 for s in seeds)
    with pytest.raises(ValueError):
        derive_seed(-1)
