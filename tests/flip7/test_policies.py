"""Policies: spec parsing, user policies by import path, and each decision rule."""

from __future__ import annotations

import pytest

from flip7.cards import PLUS_VALUE, Card
from flip7.engine import Engine
from flip7.policies import PolicySpecError, parse_policies, parse_policy
from flip7.policies.base import bust_risk
from flip7.policies.ev import hit_value
from flip7.policies.thresholds import next_card_busts, next_card_duplicates
from flip7.rules import parse_ruleset
from tests.flip7.helpers import SC, Scripted

L13 = int(Card.LUCKY_13)


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
    specs = ["sum:20", "count:4", "bust:0.25", "bustc:0.3", "dup:0.25", "dupc:0.3", "ev", "evc"]
    for spec in [*specs, "endgame", "human"]:
        assert repr(parse_policy(spec)) == spec


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", "unknown policy 'nope'; valid: sum:20"),
        ("sum", "needs an argument N, e.g. sum:20"),
        ("sum:x", "needs an integer N"),
        ("bust:1.5", "needs P in [0, 1]"),
        ("dup", "policy 'dup' needs an argument P, e.g. dup:0.25"),
        ("dup:x", "policy dup:P needs a probability P in [0, 1], got 'x'"),
        ("dupc:-0.1", "policy dupc:P needs P in [0, 1], got -0.1"),
        ("dupc:", "policy dupc:P needs a probability P in [0, 1], got ''"),
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


def test_bust_is_the_risk_of_busting_and_dup_the_risk_of_a_duplicate():
    """Showing a 12 and a Second Chance: 11 of the 91 unseen cards are 12s (12.1%), yet none
    of them busts you. bust:0.12 hits (risk 0), dup:0.12 stays; without the Second Chance both
    read 11/92 and agree again."""
    e = table_with({0: [SC, 12], 1: [5]})
    obs = e.obs[0]
    assert obs.has_sc[0]
    assert next_card_duplicates(obs, 0, counting=False) == pytest.approx(11 / 91)
    assert next_card_busts(obs, 0, counting=False) == 0.0
    assert parse_policy("bust:0.12").hit(obs) and parse_policy("bustc:0.12").hit(obs)
    assert not parse_policy("dup:0.12").hit(obs) and not parse_policy("dupc:0.12").hit(obs)
    assert not parse_policy("bust:0").hit(obs)  # a risk of 0 is not under 0: bust:0 stays
    e = table_with({0: [12], 1: [5]})
    obs = e.obs[0]
    assert next_card_busts(obs, 0, False) == next_card_duplicates(obs, 0, False) == 11 / 92
    for spec in ("bust:0.12", "dup:0.12"):
        assert parse_policy(spec).hit(obs) and not parse_policy(spec.replace("12", "11")).hit(obs)


@pytest.mark.parametrize(
    "spec, hits, score",
    [
        # Holding only the Second Chance both hit (nothing to duplicate) and draw a 12.
        # Second Chance and 12: 11/91 duplicates, no bust risk: hit, the second 12 is saved;
        # a lone 12 again (the saved pair discarded, not counted): 11/92 = 11.96%, hit the 3;
        # 12 3: 13/91, stay on 15.
        ("bust:0.12", 3, 15),
        # 11/91 = 12.09% is not under 12%: stay on 12, the Second Chance unused.
        ("dup:0.12", 1, 12),
    ],
)
def test_a_stacked_round_bust_hits_on_a_second_chance_where_dup_stays(spec, hits, score):
    """Stacked deck: seat 0 is dealt a Second Chance, seat 1 a 5 (then stays), seat 0 hits a 12;
    then bust:P takes the next 12 on its Second Chance and goes on, dup:P stays on 12."""
    from flip7.events import EventKind
    from tests.flip7.helpers import of_kind, stacked_engine

    e = stacked_engine([parse_policy(spec), Scripted()], [SC, 5, 12, 12, 3, 9, 9])
    e.play_round()
    chosen = [x for x in of_kind(e, EventKind.HIT) if x.player == 0 and x.value == 0]
    assert len(chosen) == hits
    assert e.round_scores[-1][0] == score
    assert bool(of_kind(e, EventKind.SC_USED)) == (hits > 1)


def test_vengeance_bust_and_dup_read_the_special_numbers():
    """Vengeance (108 cards): a lone Lucky 13 cannot be busted (a plain 13 makes the allowed
    pair), yet the 12 plain 13s of the 107 unseen cards duplicate it; showing a plain 7, the 5
    other plain 7s bust and the Unlucky 7 (which wipes, never busts) duplicates too: 5 vs 6."""
    from tests.flip7.helpers import vengeance_engine

    e = vengeance_engine([Scripted(), Scripted()], [L13])
    e.receive(0, e.draw_pile.pop())
    obs = e.obs[0]
    assert next_card_busts(obs, 0, False) == 0.0
    assert next_card_duplicates(obs, 0, False) == pytest.approx(12 / 107)
    assert parse_policy("bust:0.01").hit(obs) and not parse_policy("dup:0.1").hit(obs)
    e = vengeance_engine([Scripted(), Scripted()], [7])
    e.receive(0, e.draw_pile.pop())
    obs = e.obs[0]
    assert next_card_busts(obs, 0, False) == pytest.approx(5 / 107)
    assert next_card_duplicates(obs, 0, False) == pytest.approx(6 / 107)
    assert parse_policy("bust:0.05").hit(obs) and not parse_policy("dup:0.05").hit(obs)


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
    specs = ["sum:20", "count:4", "bust:0.25", "bustc:0.25", "dup:0.25", "dupc:0.25", "ev"]
    for spec in [*specs, "evc", "endgame"]:
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

    specs = ["sum:20", "count:4", "bust:0.25", "bustc:0.25", "dup:0.25", "dupc:0.25", "ev", "evc"]
    specs.append("endgame")
    for seed, ruleset in enumerate(BASE_RULESETS.values()):
        result = play_game(ruleset, parse_policies(specs), seed)
        assert 0 <= result.winner < len(specs)
        assert max(result.totals) >= 200


def test_every_vengeance_seat_sees_the_vengeance_rules():
    """Each seat's observation says Vengeance (and Brutal), not only seat 0's: otherwise a
    built-in policy at seat 1 reads a Vengeance table with the classic rules (its bust risk
    counting the Unlucky 7 as a bust, its points ignoring the -N cards)."""
    from tests.flip7.helpers import vengeance_engine

    e = vengeance_engine([Scripted() for _ in range(3)], [7], variant="vengeance(brutal=1)")
    assert [(o.variant, o.brutal) for o in e.obs] == [(1, True)] * 3
    e.receive(2, e.draw_pile.pop())
    assert next_card_busts(e.obs[2], 2, False) == pytest.approx(5 / 107)
