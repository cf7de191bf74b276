"""The beer-mat advice fit and the odds reference."""

from __future__ import annotations

import numpy as np
import pytest

from flip7.solver import evaluate, get_model, solve
from flip7.solver.advice import advise, fit, fit_agreement, report, rule_policy
from flip7.solver.odds import compute, hand_report, parse_hand, table_risk


@pytest.fixture(scope="module")
def basic():
    return solve(get_model("basic"))


def test_fit_picks_the_cutoff_that_gives_up_least():
    """Four states at risks 10% 20% 30% 40%, hitting worth +1, +1, -1, -1 (weights 1): any
    cut-off in (20%, 30%] loses nothing; the middle whole percent of 21..30 is 25%. With the
    30% state made three times as common and hitting there worth +1 instead, (30%, 40%]."""
    risk = np.array([0.1, 0.2, 0.3, 0.4])
    cutoff, loss = fit(np.ones(4), risk, np.array([1.0, 1.0, -1.0, -1.0]))
    assert (cutoff, loss) == (0.25, 0.0)
    cutoff, loss = fit(np.array([1.0, 1.0, 3.0, 1.0]), risk, np.array([1.0, 1.0, 1.0, -1.0]))
    assert 0.3 < cutoff <= 0.4 and loss == 0.0
    assert fit(np.ones(2), np.array([0.1, 0.2]), np.ones(2))[0] == 1.0  # always hit


def test_fit_agreement_plays_the_optimal_move_most_often():
    """Murch's form counts agreements, not points: risks 10% 20% 30% 40%, optimal moves hit,
    stay, hit, stay, weights 1 3 1 1. Agreeing with the common 20% stay wins: a cut-off in
    (10%, 20%] (middle whole percent 15%) is wrong on 1 of 6; the cost-weighted fit, where that
    stay saves little and the 30% hit is worth much, goes to (30%, 40%] instead."""
    risk = np.array([0.1, 0.2, 0.3, 0.4])
    w = np.array([1.0, 3.0, 1.0, 1.0])
    hit = np.array([1, 0, 1, 0])
    assert fit_agreement(w, risk, hit) == (0.15, 1.0)
    cutoff, _ = fit(w, risk, np.array([1.0, -0.01, 5.0, -1.0]))
    assert 0.3 < cutoff <= 0.4


def test_murch_form_is_one_cutoff_per_count_valued_exactly(basic):
    """Murch's form: one cut-off per count whatever you hold, valued exactly as a policy; it
    is below the optimum, and our rule (a Second Chance column, cost-weighted) is worth at
    least as much; its cells share out every decision with a number showing."""
    adv = advise(basic)
    assert [c.k for c in adv.murch_cells] == [1, 2, 3, 4, 5, 6]
    per_count = {(c.k, h): c.cutoff for c in adv.murch_cells for h in (0, 1)}
    assert evaluate(basic.space, rule_policy(basic, per_count)) == adv.murch_rule
    assert adv.murch_rule.ev < adv.optimum.ev
    assert adv.rule.ev >= adv.murch_rule.ev
    assert adv.empty_share + sum(c.share for c in adv.murch_cells) == pytest.approx(1.0)
    assert all(0.5 < c.agree <= 1.0 for c in adv.murch_cells)
    text = "\n".join(report(adv))
    assert f"{adv.murch_rule.ev:.3f}" in text and f"{adv.rule.ev:.3f}" in text


def test_advice_rule_is_valued_exactly(basic):
    """The rule's printed value is the exact value of the rule played as a policy, below the
    optimum; its cells share out all of the optimal player's decisions."""
    adv = advise(basic)
    cutoffs = {(c.k, c.held): c.cutoff for c in adv.cells}
    again = evaluate(basic.space, rule_policy(basic, cutoffs))
    assert again == adv.rule
    assert adv.rule.ev < adv.optimum.ev == basic.moments.ev
    assert adv.empty_share + sum(c.share for c in adv.cells) == pytest.approx(1.0)
    assert adv.rule.ev > adv.single_value.ev  # a cut-off per count beats a single one


def test_parse_hand_and_table_risk():
    """'3 8 11 +4': 19 duplicates left (2 + 7 + 10) in the 90 cards not in front of you."""
    hand = parse_hand("3, 8 11 +4")
    assert hand.numbers == (3, 8, 11) and hand.points() == 26
    assert table_risk(hand) == (19, 90)
    assert parse_hand("5 x2 +10").points() == 20  # x2 doubles the numbers only
    with pytest.raises(ValueError, match="Flip 7"):
        parse_hand("0 1 2 3 4 5 6")


def test_odds_distribution_and_hand_are_consistent(basic):
    """The exact score distribution sums to 1 with the solver's mean; a hand's optimal EV is
    the larger of staying and hitting."""
    odds = compute(basic)
    assert odds.opt.dist.sum() == pytest.approx(1.0)
    assert odds.opt.ev == pytest.approx(basic.moments.ev)
    assert odds.opt.dist[0] == pytest.approx(basic.moments.bust)
    assert odds.always.flip7 > basic.moments.flip7
    lines = "\n".join(hand_report(odds, parse_hand("3 8 11 +4")))
    sp = basic.space
    i = sp.dec_index((1 << 3) | (1 << 8) | (1 << 11), 1 << 1, 0)
    assert basic.value[i] == pytest.approx(max(26.0, basic.qhit[i]))
    assert f"EV {basic.value[i]:.3f}" in lines
