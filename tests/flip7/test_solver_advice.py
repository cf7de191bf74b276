"""The beer-mat advice fit and the odds reference."""

from __future__ import annotations

import numpy as np
import pytest

from flip7.solver import evaluate, get_model, solve
from flip7.solver.advice import CUTOFFS, advise, fit, murch_table, report, rule_policy
from flip7.solver.odds import compute, hand_report, parse_hand, table_risk
from flip7.solver.solve import occupancy


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


def test_murch_table_gives_up_the_fewest_points_brute_force(basic):
    """Murch's procedure, checked by brute force on the solver's states: for each count, over
    the states holding no Second Chance, weighted by how often optimal play reaches them, every
    whole-percent cut-off on the model deck's risk is scored by the points it gives up against
    the optimum (hitting where staying is better loses Q_stay - Q_hit, and the reverse); the
    table's cut-off has the least, and is quoted on the 94-card deck x 88/94."""
    space = basic.space
    w = occupancy(space, basic.hit).reach.copy()
    w[0] = 0.0
    fitted, quoted, loss = murch_table(basic, w)
    k = np.ascontiguousarray(space.feature("ncount")).reshape(-1)
    held = np.broadcast_to(space.sc_tab[:, 1][:, None, None, None], space.dec_shape).reshape(-1)
    risk = np.ascontiguousarray(space.feature("risk")).reshape(-1)
    gain = basic.qhit - basic.stay_value()
    for kk in range(1, 7):
        sel = (k == kk) & (held == 0) & (w > 0)
        ws, rs, gs = w[sel], risk[sel], gain[sel]
        lost = [
            float(np.sum(ws * np.where(rs < c, np.maximum(-gs, 0), np.maximum(gs, 0))))
            for c in CUTOFFS
        ]
        assert loss[kk] == pytest.approx(min(lost), rel=1e-9, abs=1e-12)
        assert lost[round(fitted[kk] * 100)] == pytest.approx(min(lost), rel=1e-9, abs=1e-12)
        assert quoted[kk] == (1.0 if fitted[kk] == 1.0 else fitted[kk] * 88 / 94)
    # the table the procedure gives (model deck; always = 1.0), pinned
    assert [fitted[kk] for kk in range(1, 7)] == [1.0, 0.24, 0.25, 0.26, 0.27, 0.36]


def test_murch_table_is_one_cutoff_per_count_valued_exactly(basic):
    """Murch's table: one cut-off per count whatever you hold, played at the table (against the
    94-card risk) and valued exactly as a policy; below the optimum. Keeping his cut-offs and
    always hitting holding a Second Chance, and our rule (a Second Chance column), are worth
    more. The report prints his table first, with its value."""
    adv = advise(basic)
    assert [c.k for c in adv.murch_cells] == [1, 2, 3, 4, 5, 6]
    per_count = {(c.k, h): c.cutoff for c in adv.murch_cells for h in (0, 1)}
    assert evaluate(basic.space, rule_policy(basic, per_count)) == adv.murch_rule
    sc_column = {(c.k, h): (c.cutoff if h == 0 else 1.0) for c in adv.murch_cells for h in (0, 1)}
    assert evaluate(basic.space, rule_policy(basic, sc_column)) == adv.murch_sc_rule
    assert adv.murch_rule.ev < adv.murch_sc_rule.ev < adv.optimum.ev
    assert adv.murch_rule.ev < adv.rule.ev < adv.optimum.ev
    assert round(adv.murch_rule.ev, 3) == 21.065
    assert adv.empty_share + sum(c.share for c in adv.murch_cells) == pytest.approx(1.0)
    assert all(0.4 < c.agree <= 1.0 for c in adv.murch_cells)  # 6 numbers: SC holders hit
    assert 0.5 < adv.agreement["murch"] < adv.agreement["ours"] <= 1.0
    lines = report(adv)
    rows = [i for i, line in enumerate(lines) if line.startswith("policy ")]
    assert lines[rows[0] + 1].startswith("Murch's table (his procedure)")
    assert f"{adv.murch_rule.ev:.3f}" in lines[rows[0] + 1]
    table = next(i for i, line in enumerate(lines) if "ours: no Second Chance" in line)
    assert lines[table].split()[:2] == ["Murch's", "table,"]  # his column comes first
    assert lines[table + 3].split()[:4] == ["2", "under", "24%", "under"]
    text = "\n".join(lines)
    assert f"{adv.rule.ev:.3f}" in text and "not public" not in text


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
