"""The exact solver: seeds/002's headline figures, hand-checkable values on tiny decks, models."""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest

from flip7.cards import CLASSIC, Card
from flip7.solver import build_space, evaluate, get_model, reachable, solve
from flip7.solver.families import GRIDS, ev_policy, family_policy, label, policy_rows
from flip7.solver.model import MODELS, Model, deck_of
from flip7.solver.solve import carry_policy

SC, FREEZE, FLIP3 = Card.SECOND_CHANCE, Card.FREEZE, Card.FLIP_THREE


@pytest.fixture(scope="module")
def basic():
    return solve(get_model("basic"))


def tiny(cards: dict[int, int], keep_duplicate: bool = False) -> Model:
    return Model("tiny", deck_of("tiny", cards), keep_duplicate=keep_duplicate)


def test_headline_figures_match_seed_002(basic):
    """flip7 solve on 002's 88-card model prints what 002 prints: EV 22.232, sd 17.47, bust
    31.7%, Flip 7 1.55% (seeds/002, 'What the model says')."""
    m = basic.moments
    assert basic.model.deck.size == 88
    assert (f"{m.ev:.3f}", f"{m.sd:.2f}", f"{m.bust:.1%}", f"{m.flip7:.2%}") == (
        "22.232",
        "17.47",
        "31.7%",
        "1.55%",
    )


def test_reachable_state_count(basic):
    """1.83M reachable states (seeds/002). By hand: masks of at most 6 of the 13 numbers
    (sum C(13,k), k<=6 = 4096) x 64 modifier sets x 7 Second Chance states (drawn/held:
    00 11 10 21 20 31 30) = 1,835,008; a Second Chance can only have been used on a number
    with a duplicate, so the 3 'used' states (10 20 30) are out of reach with no number but 0
    or 1 showing: 4 masks ({}, {0}, {1}, {0,1}) x 64 x 3 = 768 fewer: 1,834,240."""
    r = reachable(basic.space)
    assert r.decision == r.total == 4096 * 64 * 7 - 4 * 64 * 3 == 1_834_240
    assert f"{r.decision / 1e6:.2f}M" == "1.83M"


def test_tiny_deck_bust_or_bank():
    """Deck 5 5 +4. First card 5 (2/3): stay 5, or hit: 1/2 bust, 1/2 +4 (then 5 +4 = 9, and
    the last card busts) = 4.5 < 5, so stay. First card +4 (1/3): hit, a 5 for sure: 9. EV =
    2/3*5 + 1/3*9 = 19/3; 4 decision states (empty, 5, +4, 5 +4)."""
    sol = solve(tiny({5: 2, Card.PLUS4: 1}))
    assert sol.moments.ev == pytest.approx(19 / 3, abs=1e-12)
    assert sol.moments.bust == 0.0
    assert reachable(sol.space).decision == 4
    sp = sol.space
    assert sol.hit[sp.dec_index(1 << 5, 0, 0)] == 0  # stay on a lone 5
    assert sol.hit[sp.dec_index(0, 1 << 1, 0)] == 1  # hit on a lone +4


def test_tiny_deck_flip7_bonus_and_x2():
    """Deck 0..6 once each and x2: no card can bust, so hit to the end; the round ends at the
    seventh number (+15), which comes before the x2 with chance 1/8 (x2 last of 8 cards).
    EV = 7/8 * (21*2 + 15) + 1/8 * (21 + 15) = 54.375; Flip 7 every round."""
    sol = solve(tiny({**{v: 1 for v in range(7)}, Card.TIMES2: 1}))
    assert sol.moments.ev == pytest.approx(54.375, abs=1e-12)
    assert sol.moments.flip7 == pytest.approx(1.0)


def test_tiny_deck_second_chance_duplicate_rule():
    """Deck 3 5 5 SC, the two duplicate rules. Real rule (duplicate discarded): from 3: hit
    (every line ends at 3 5 = 8) = 8; from 5: 1/3 3 -> 8, 1/3 bust, 1/3 SC -> 5 SC, where a
    duplicate is saved and the 3 follows -> 8: hit = 16/3; from SC: 8. EV = 8/4 + 16/6 + 8/4 =
    20/3. 002's rule (duplicate stays): from 5 SC a saved 5 leaves 3 5 in the deck, worth 5,
    so 5 SC = 6.5 and 5 = max(5, (8 + 0 + 6.5)/3) = 5; SC = (8 + 2*6.5)/3 = 7. EV = 8/4 + 5/2
    + 7/4 = 25/4."""
    cards = {3: 1, 5: 2, SC: 1}
    assert solve(tiny(cards)).moments.ev == pytest.approx(20 / 3, abs=1e-12)
    assert solve(tiny(cards, keep_duplicate=True)).moments.ev == pytest.approx(25 / 4, abs=1e-12)


def test_tiny_deck_freeze_on_yourself():
    """Deck 2 3 Freeze, alone: the Freeze banks what you show. First 2: hit = 1/2 * 5 + 1/2 * 2
    = 3.5; first 3: hit = 1/2 * 5 + 1/2 * 3 = 4; first Freeze: 0. EV = (3.5 + 4 + 0)/3 = 2.5."""
    assert solve(tiny({2: 1, 3: 1, FREEZE: 1})).moments.ev == pytest.approx(2.5, abs=1e-12)


def test_tiny_deck_flip_three_is_forced():
    """Deck 5 5 Flip Three: first 5 (2/3): stay (a hit busts or forces the last 5): 5. First
    Flip Three (1/3): you must flip both 5s and bust. EV = 10/3, bust 1/3."""
    sol = solve(tiny({5: 2, FLIP3: 1}))
    assert sol.moments.ev == pytest.approx(10 / 3, abs=1e-12)
    assert sol.moments.bust == pytest.approx(1 / 3, abs=1e-12)


def test_the_real_rule_is_worth_a_little_more(basic):
    """Discarding the saved duplicate leaves one fewer card to bust on: the real-rule optimum
    beats 002's model, by less than a tenth of a point (at most 3 cards of 88)."""
    real = solve(get_model("real")).moments.ev
    assert 0 < real - basic.moments.ev < 0.1


def test_family_policies_follow_their_rules(basic):
    """sum:N hits exactly below N; count:7, dup:1 and bust:1 all hit to the end (same values);
    the always-hit Flip 7 chance exceeds the optimum's; no family beats the optimum."""
    sp = basic.space
    nsum = sp.feature("nsum").reshape(-1)
    assert np.array_equal(family_policy(sp, "sum", 20) == 1, nsum < 20)
    count7 = evaluate(sp, family_policy(sp, "count", 7))
    assert count7 == evaluate(sp, family_policy(sp, "dup", 1.0))
    assert count7 == evaluate(sp, family_policy(sp, "bust", 1.0))
    assert count7.flip7 > basic.moments.flip7
    assert evaluate(sp, ev_policy(sp)).ev < basic.moments.ev
    assert label("bust", 0.25) == "bust:0.25" and label("sum", 20.0) == "sum:20"
    assert label("dup", 0.25) == "dup:0.25"
    with pytest.raises(ValueError, match="unknown policy family 'risk'; valid: sum, count"):
        family_policy(sp, "risk", 0.25)


def test_bust_reads_a_second_chance_and_dup_does_not(basic):
    """dup:P hits where the duplicate chance (model deck) is under P, whatever you hold; bust:P
    hits at the same states without a Second Chance and at every state holding one. In 002's
    model a hit holding a Second Chance can never bust you nor leave you worse off, and once
    the Second Chance is spent beyond the cut-off both rules stay: bust:P is worth at least
    dup:P and busts exactly as often."""
    sp = basic.space
    held = np.broadcast_to(sp.sc_tab[:, 1][:, None, None, None], sp.dec_shape).reshape(-1)
    risk = sp.feature("risk").reshape(-1)
    for p in (0.2, 0.25, 0.35):
        dup, bust = family_policy(sp, "dup", p), family_policy(sp, "bust", p)
        assert np.array_equal(dup == 1, risk < p)
        assert np.array_equal(bust[held == 0], dup[held == 0]) and bust[held == 1].all()
        assert (dup[held == 1] == 0).any()
        mb, md = evaluate(sp, bust), evaluate(sp, dup)
        assert mb.ev > md.ev and mb.bust == pytest.approx(md.bust, abs=1e-12)


def test_grids_hold_the_rows_002_printed(basic):
    """--all includes sums 16, 20, 24; 3, 4, 5 cards; risks 0.25, 0.35, 0.45 (seeds/002's
    "bust risk < P", a duplicate risk whatever you hold: our dup family)."""
    for fam, params in (("sum", (16, 20, 24)), ("count", (3, 4, 5)), ("dup", (0.25, 0.35, 0.45))):
        assert set(params) <= set(GRIDS[fam])
    assert GRIDS["bust"] == GRIDS["dup"]
    rows = policy_rows(basic, {"sum": (20.0,), "count": (4.0,)})
    assert [r.label for r in rows] == ["optimal", "ev", "sum:20", "count:4"]
    assert all(r.moments.ev <= rows[0].moments.ev for r in rows)


def test_optimal_policy_beats_every_random_policy(basic):
    """The optimum is an upper bound: random hit/stay tables never beat it."""
    rng = np.random.default_rng(7)
    for _ in range(3):
        hit = (rng.random(basic.hit.size) < 0.6).astype(np.uint8)
        assert evaluate(basic.space, hit).ev < basic.moments.ev


def test_models_are_the_three_decks():
    """basic and real: 88 cards (no Freeze, no Flip Three); full: the 94-card classic deck."""
    assert MODELS["basic"].deck.size == MODELS["real"].deck.size == 88
    assert MODELS["full"].deck == CLASSIC
    assert MODELS["basic"].keep_duplicate and not MODELS["real"].keep_duplicate
    assert "duplicate in the deck" in MODELS["basic"].assumptions()
    assert build_space(MODELS["full"]).n_dec == 4  # 0..3 Flip Threes drawn


@pytest.mark.parametrize(
    "cards, message",
    [
        ({13: 1}, "no solo model covers"),
        ({Card.PLUS4: 2}, "at most one copy of each modifier"),
        ({SC: 4}, "at most 3 copies"),
    ],
)
def test_bad_decks_are_refused(cards, message):
    """Decks the encoding cannot hold fail with a message naming the card."""
    with pytest.raises(ValueError, match=message):
        tiny(cards)


def test_unknown_model_names_the_valid_ones():
    """get_model lists the valid model names."""
    with pytest.raises(ValueError, match="valid: basic, real, full"):
        get_model("nope")


def test_brute_force_over_every_order_of_a_tiny_deck():
    """Brute force: every order of the deck 1 2 2 +2, played with the solved policy by a few
    lines of plain Python, averages to the solver's EV."""
    model = tiny({1: 1, 2: 2, Card.PLUS2: 1})
    sol = solve(model)
    sp = sol.space
    total = Fraction(0)
    orders = sorted(set(permutations(model.deck.cards())))
    for order in orders:
        mask = mods = 0
        score = None
        for i, c in enumerate(order):
            if i > 0 and not sol.hit[sp.dec_index(mask, mods, 0)]:
                break
            if c == Card.PLUS2:
                mods |= 1
            elif mask >> c & 1:
                score = 0
                break
            else:
                mask |= 1 << c
        if score is None:
            score = sum(v for v in range(13) if mask >> v & 1) + 2 * (mods & 1)
        total += score
    assert float(total / len(orders)) == pytest.approx(sol.moments.ev, abs=1e-12)


def test_carrying_002s_table_into_other_rules(basic):
    """002's table played in its own model is worth its own optimum; played under the real
    rule it is worth no more than the real optimum and within a hundredth of it (the two
    models differ by at most 3 cards of 88)."""
    assert evaluate(basic.space, carry_policy(basic, basic.space)) == basic.moments
    real = solve(get_model("real"))
    carried = evaluate(real.space, carry_policy(basic, real.space)).ev
    assert real.moments.ev - 0.01 < carried <= real.moments.ev
