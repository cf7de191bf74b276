"""The dp policy: table lookups from its own line, fallbacks, and the engine cross-check."""

from __future__ import annotations

import math
import statistics

import pytest

from flip7.cards import Card
from flip7.engine import Engine
from flip7.policies import PolicySpecError, parse_policy
from flip7.policies.dp import DPPolicy
from flip7.policies.ev import EVPolicy
from flip7.rng import derive_seed
from flip7.rules import parse_ruleset
from flip7.solver import evaluate, get_model, solve
from flip7.solver.families import family_policy
from tests.flip7.helpers import Scripted

RULES = parse_ruleset("3.1")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("flip7-cache"))


@pytest.fixture(scope="module")
def real():
    return solve(get_model("real"))


def table_with(policies, rows: dict[int, list[int]], deck=None) -> Engine:
    """A fresh engine whose seats show the given cards (taken from the draw pile)."""
    kw = {"deck": deck} if deck is not None else {}
    e = Engine(RULES, policies, seed=5, **kw)
    for p, cards in rows.items():
        for c in cards:
            e.draw_pile.remove(c)
            e.receive(p, c)
    return e


def test_lookup_is_the_solved_choice_from_its_own_line(real, cache):
    """At a table of three, the policy looks up its own numbers, modifiers and Second Chance
    (drawn = held) and answers as the solver does; the others' cards do not matter."""
    dp = DPPolicy("real", cache)
    sp = real.space
    hands = [[3, 8, 11, Card.PLUS4], [12, 11], [5, 9, Card.TIMES2, Card.SECOND_CHANCE], [2, 6]]
    for hand in hands:
        e = table_with([dp, Scripted(), Scripted()], {0: hand, 1: [10, 7, 4]})
        mask = sum(1 << c for c in hand if c <= 12)
        mods = sum(1 << (c - Card.PLUS2) for c in hand if Card.PLUS2 <= c <= Card.TIMES2)
        held = int(Card.SECOND_CHANCE in hand)
        expected = real.hit[sp.dec_index(mask, mods, sp.sc_index(held, held))]
        assert dp.hit(e.obs[0]) == bool(expected)


def test_solo_counts_its_used_second_chance(real, cache):
    """Alone, after a Second Chance saved a duplicate, the policy reads the state (drawn 1,
    held 0, used 1), as the real-rule model does."""
    dp = DPPolicy("real", cache)
    e = table_with([dp], {0: [9]})
    dp.hit(e.obs[0])  # first decision of the round: the count starts here
    for c in (Card.SECOND_CHANCE, 10, 9):  # the 9 is saved and discarded
        e.draw_pile.remove(c)
        e.receive(0, c)
    sp = real.space
    state = sp.dec_index((1 << 9) | (1 << 10), 0, sp.sc_index(1, 0, 1))
    assert dp._solo_sc(e.obs[0], held=False) == sp.sc_index(1, 0, 1)
    assert dp.hit(e.obs[0]) == bool(real.hit[state])


def test_outside_the_table_it_plays_ev(cache):
    """A 13 (only in the Vengeance deck) is outside every table: the policy plays ev."""
    dp = DPPolicy("basic", cache)
    for hand in ([12, 11, 10], [2, 3]):
        e = table_with([dp, Scripted()], {0: hand})
        e.table.mask[0] |= 1 << 13  # as if a 13 showed
        assert dp.hit(e.obs[0]) == EVPolicy().hit(e.obs[0])


def test_registry_builds_dp_lazily(monkeypatch, tmp_path):
    """'dp' and 'dp:real' build from $FLIP7_CACHE; a bad model is a PolicySpecError."""
    monkeypatch.setenv("FLIP7_CACHE", str(tmp_path))
    p = parse_policy("dp")
    assert repr(p) == "dp" and p.model.name == "basic" and p.path.parent == tmp_path
    assert parse_policy("dp:real").model.name == "real"
    with pytest.raises(PolicySpecError, match="valid: basic, real, full"):
        parse_policy("dp:nope")


def solo_rounds(policy, model, n: int, root: int) -> tuple[float, float]:
    """Mean and standard error of n solo rounds on the model's deck, seeds from one root."""
    xs = []
    for i in range(n):
        e = Engine(RULES, [policy], derive_seed(root, i), capture=False, deck=model.deck)
        e.play_round()
        xs.append(e.round_scores[0][0])
    return statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(n)


def test_engine_agrees_with_the_solver_within_three_standard_errors(real, cache):
    """Solo rounds on the 88-card deck (no Freeze, no Flip Three) with the engine's real
    Second Chance rule: dp:real averages the solver's EV (22.250) within 3 standard errors."""
    model = get_model("real")
    mean, se = solo_rounds(DPPolicy("real", cache), model, 20_000, root=2024)
    assert abs(mean - real.moments.ev) < 3 * se, (mean, se, real.moments.ev)


def test_engine_agrees_on_a_family_policy_too(real):
    """The exact value of sum:20 on the same model matches the engine's sum:20 within 3 se."""
    model = get_model("real")
    exact = evaluate(real.space, family_policy(real.space, "sum", 20)).ev
    mean, se = solo_rounds(parse_policy("sum:20"), model, 20_000, root=7)
    assert abs(mean - exact) < 3 * se, (mean, se, exact)
