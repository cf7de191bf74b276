"""Policies: spec parsing, user policies by import path, and each decision rule."""

from __future__ import annotations

import pytest

from flip7.cards import PLUS_VALUE, Card
from flip7.engine import Engine
from flip7.policies import PolicySpecError, parse_policies, parse_policy
from flip7.policies.base import bust_risk
from flip7.policies.ev import hit_value
from flip7.rules import parse_ruleset
from tests.flip7.helpers import Scripted


def table_with(rows: dict[int, list[int]], n: int = 3):
    """A fresh engine whose seats show the given cards (taken from the draw pile, as if drawn)."""
    e = Engine(parse_ruleset("3.1"), [Scripted() for _ in range(n)], seed=1)
    for p, cards in rows.items():
        for c in cards:
            e.draw_pile.remove(c)
            e.receive(p, c)
    return e


def test_specs_parse_and_print_back():
    """Every built-in spec builds a policy that prints as its spec."""
    for spec in ["sum:20", "count:4", "bust:0.25", "bustc:0.3", "ev", "evc", "endgame", "human"]:
        assert repr(parse_policy(spec)) == spec


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", "unknown policy 'nope'; valid: sum:20"),
        ("sum", "needs an argument N, e.g. sum:20"),
        ("sum:x", "needs an integer N"),
        ("bust:1.5", "needs P in [0, 1]"),
        ("ev:3", "takes no argument"),
        ("nosuchmodule_xyz:Thing", "cannot import module"),
    ],
)
def test_bad_specs_say_what_is_valid(spec, message):
    """A bad spec is a clear error naming the problem and what is valid."""
    with pytest.raises(PolicySpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_policy(spec)


def test_user_policy_loads_by_import_path(tmp_path, monkeypatch):
    """A user's own Policy subclass loads as module:Class without editing flip7."""
    (tmp_path / "mine.py").write_text(
        "from flip7.policies import Policy\n"
        "class Cautious(Policy):\n"
        "    def __init__(self, limit='10'):\n"
        "        self.limit = int(limit)\n"
        "    def hit(self, obs):\n"
        "        return obs.nsum[obs.seat] < self.limit\n"
        "def not_a_policy():\n"
        "    return 42\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    p = parse_policy("mine:Cautious:15")
    assert p.limit == 15 and repr(p) == "mine:Cautious:15"
    assert parse_policy("mine:Cautious").limit == 10
    with pytest.raises(PolicySpecError, match="not a flip7 Policy"):
        parse_policy("mine:not_a_policy")
    with pytest.raises(PolicySpecError, match="has no attribute"):
        parse_policy("mine:Missing")
    from flip7.engine import play_game
    from flip7.rules import parse_ruleset

    result = play_game(parse_ruleset("3.1"), parse_policies("mine:Cautious,ev"), seed=5)
    assert result.winner in (0, 1)


def test_sum_and_count_thresholds():
    """sum:N stays once the numbers total N; count:N once N distinct numbers show."""
    e = table_with({0: [9, 10]})
    obs = e.obs[0]
    assert parse_policy("sum:20").hit(obs) and not parse_policy("sum:19").hit(obs)
    assert parse_policy("count:3").hit(obs) and not parse_policy("count:2").hit(obs)


def test_bust_risk_reads_the_table_and_bustc_the_discard_pile_too():
    """Showing a 12: 11 of the 93 unseen cards are 12s (94 - 1 on the table). bust:P compares."""
    e = table_with({0: [12]})
    obs = e.obs[0]
    assert bust_risk(obs, 0, counting=False) == pytest.approx(11 / 93)
    assert parse_policy("bust:0.12").hit(obs) and not parse_policy("bust:0.11").hit(obs)
    # Two 12s in the discard pile: a counter sees 9 of 91.
    e.discard_pile += [12, 12]
    e.table.discarded[12] += 2
    assert bust_risk(obs, 0, counting=True) == pytest.approx(9 / 91)
    assert bust_risk(obs, 0, counting=False) == pytest.approx(11 / 93)


def brute_force_hit_value(rows: list[int], unseen: list[int], has_sc: bool) -> float:
    """One more card then stop, enumerated card by card (independent of hit_value)."""
    deck = [c for c, k in enumerate(unseen) for _ in range(k)]
    total = 0.0
    for c in deck:
        nums = [x for x in rows if x <= 13]
        mods = [x for x in rows if x > 13]
        if c <= 13:
            if c in nums:
                if not has_sc:
                    continue
            else:
                nums = nums + [c]
        elif c <= Card.TIMES2:
            mods = mods + [c]
        mult = 2 if Card.TIMES2 in mods else 1
        score = sum(nums) * mult + sum(PLUS_VALUE[m] for m in mods)
        if len(set(nums)) == 7:
            score += 15
        total += score
    return total / len(deck)


@pytest.mark.parametrize(
    "rows", [[12], [3, 8, 11, Card.PLUS4], [0, 1, 2, 3, 4, 5], [6, Card.TIMES2]]
)
def test_ev_one_step_value_matches_brute_force(rows):
    """ev's expectation equals a card-by-card enumeration over the unseen cards."""
    e = table_with({0: list(rows), 1: [7]})
    unseen = e.obs[0].unseen(counting=False)
    value, now = hit_value(e.obs[0], 0, counting=False)
    assert value == pytest.approx(brute_force_hit_value(list(rows), unseen, False))
    assert parse_policy("ev").hit(e.obs[0]) == (value > now)


def test_ev_hits_on_a_small_row_and_stays_on_a_big_one():
    """Sanity of the rule: a lone 2 is worth hitting on; 12, 11, 10, 9 is not."""
    assert parse_policy("ev").hit(table_with({0: [2]}).obs[0])
    assert not parse_policy("ev").hit(table_with({0: [12, 11, 10, 9]}).obs[0])


def test_freeze_targeting_self_when_sitting_on_points_in_danger_else_closest_to_flip7():
    """Shared heuristic: freeze yourself on 15+ points with >= 20% bust risk; else the player
    with the most distinct numbers."""
    pol = parse_policy("ev")
    e = table_with({0: [12, 11, 10], 1: [1, 2, 3, 4], 2: [5]})
    assert pol.choose_target(e.obs[0], Card.FREEZE, [0, 1, 2]) == 0
    e = table_with({0: [2], 1: [1, 3], 2: [5, 6, 7]})
    assert pol.choose_target(e.obs[0], Card.FREEZE, [0, 1, 2]) == 2


def test_flip_three_targeting_self_when_short_and_safe_else_biggest_threat():
    """Shared heuristic: take a Flip Three on a short safe row; else give it to the leader."""
    pol = parse_policy("sum:20")
    e = table_with({0: [1], 1: [9], 2: [3]})
    assert pol.choose_target(e.obs[0], Card.FLIP_THREE, [0, 1, 2]) == 0
    e = table_with({0: [12, 11, 10], 1: [9], 2: [3]})
    e.table.totals[:] = [50, 20, 150]
    assert pol.choose_target(e.obs[0], Card.FLIP_THREE, [0, 1, 2]) == 2


def test_spare_second_chance_goes_to_whoever_is_furthest_behind():
    """Shared heuristic: pass a spare Second Chance to the lowest total (ties: lowest seat)."""
    e = table_with({0: [1]}, n=4)
    e.table.totals[:] = [10, 80, 30, 30]
    assert parse_policy("ev").choose_recipient(e.obs[0], [1, 2, 3]) == 2


def test_built_in_policies_are_deterministic():
    """The same observation gets the same answer from every built-in policy."""
    e = table_with({0: [4, 9], 1: [1, 2, 3], 2: [12]})
    for spec in ["sum:20", "count:4", "bust:0.25", "bustc:0.25", "ev", "evc", "endgame"]:
        answers = {parse_policy(spec).hit(e.obs[0]) for _ in range(3)}
        assert len(answers) == 1


def test_endgame_gambles_when_trailing_and_coasts_when_ahead():
    """endgame: near the end it stays when staying wins, and hits when staying loses."""
    pol = parse_policy("endgame")
    e = table_with({0: [12, 11, 10], 1: [2]})  # 33 showing: ev would stay
    e.table.totals[:] = [190, 150, 100]
    assert not pol.hit(e.obs[0])  # 223 >= 200 and leads
    e.table.totals[:] = [100, 195, 150]
    e.table.status[1] = 1  # seat 1 stayed: 197 at the end of this round
    assert pol.hit(e.obs[0])  # 133 < 197: must gamble
    assert not parse_policy("ev").hit(e.obs[0])


def test_policy_lists_parse_with_commas():
    """'ev, sum:20' is two seats."""
    assert [p.spec for p in parse_policies("ev, sum:20")] == ["ev", "sum:20"]
    with pytest.raises(PolicySpecError):
        parse_policies(" , ")


def test_all_policies_finish_games_in_every_ruleset():
    """Every built-in policy (not human) plays whole games under every ruleset."""
    from flip7.engine import play_game
    from flip7.rules import BASE_RULESETS

    specs = ["sum:20", "count:4", "bust:0.25", "bustc:0.25", "ev", "evc", "endgame"]
    for seed, ruleset in enumerate(BASE_RULESETS.values()):
        result = play_game(ruleset, parse_policies(specs), seed)
        assert 0 <= result.winner < len(specs)
        assert max(result.totals) >= 200
