"""The solo race: backward induction over the banked score, its Markov chains, the race policy.

The exact figures are checked three ways: against a plain recursive solver written here from
the rules (tiny decks, every policy considered at every hand), against hand-derived chains, and
against the reference engine playing the race policy from a fresh deck every round (the model's
own assumption), within the simulation's error.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from functools import lru_cache

import numpy as np
import pytest

from flip7.cards import Card
from flip7.cli import main
from flip7.engine import Engine
from flip7.policies import PolicySpecError, parse_policy
from flip7.policies.race import RacePolicy
from flip7.rules import parse_ruleset
from flip7.solver.model import Model, build_space, deck_of
from flip7.solver.race import (
    MAX_ROUNDS,
    chain,
    load_race,
    policy_chain,
    read_race,
    solve_race,
    solve_within,
)
from flip7.solver.solve import solve
from tests.flip7.helpers import solo_race_rounds

TINY = {1: 1, 2: 2, 3: 3, 5: 2, Card.PLUS4: 1, Card.TIMES2: 1, Card.SECOND_CHANCE: 1}


def tiny(keep: bool) -> Model:
    return Model("tiny", deck_of("tiny", TINY), keep_duplicate=keep)


def brute_round(model: Model, cost: dict[int, float], x: float) -> float:
    """min over round policies of E[cost(S)] (cost(0) = x), by recursion over every hand,
    written from the rules without the solver's encoding."""
    counts = model.deck.counts
    mods = [c for c in (Card.PLUS2, Card.PLUS4, Card.PLUS6, Card.PLUS8, Card.PLUS10, Card.TIMES2)]
    plus = {Card.PLUS2: 2, Card.PLUS4: 4, Card.PLUS6: 6, Card.PLUS8: 8, Card.PLUS10: 10}

    def score_cost(s: int) -> float:
        return cost.get(s, 0.0) if s > 0 else x

    @lru_cache(maxsize=None)
    def value(deck: tuple[int, ...], shown: frozenset[int], held: frozenset[int], sc: bool):
        numbers = sum(shown)
        pts = numbers * (2 if Card.TIMES2 in held else 1) + sum(plus.get(m, 0) for m in held)
        stay = score_cost(pts)
        total = sum(deck)
        if total == 0:
            return stay
        acc = 0.0
        for card, n in enumerate(deck):
            if n == 0:
                continue
            rest = list(deck)
            rest[card] -= 1
            if card <= 12:
                if card in shown:
                    if not sc:
                        acc += n * x  # bust
                        continue
                    if model.keep_duplicate:
                        rest[card] += 1  # the saved duplicate stays in the deck
                    acc += n * value(tuple(rest), shown, held, False)
                elif len(shown) == 6:
                    acc += n * score_cost(pts + card * (2 if Card.TIMES2 in held else 1) + 15)
                else:
                    acc += n * value(tuple(rest), shown | {card}, held, sc)
            elif card in mods:
                acc += n * value(tuple(rest), shown, held | {card}, sc)
            else:  # a Second Chance: held, or a second one discarded
                acc += n * value(tuple(rest), shown, held, True)
        hit = acc / total
        empty = not shown and not held and not sc and deck == tuple(counts)
        return hit if empty else min(stay, hit)

    return value(tuple(counts), frozenset(), frozenset(), False)


def brute_race(model: Model, target: int) -> list[float]:
    """V(b) by the recursion above and plain fixed-point iteration on V(b)."""
    v: dict[int, float] = {}
    for b in range(target - 1, -1, -1):
        cost = {s: v.get(b + s, 0.0) for s in range(1, 200)}
        x = 1.0
        for _ in range(500):
            nxt = 1.0 + brute_round(model, cost, x)
            if abs(nxt - x) < 1e-13:
                break
            x = nxt
        v[b] = nxt
    return [v[b] for b in range(target)]


@pytest.mark.parametrize("keep", [True, False])
def test_race_values_match_a_plain_recursive_solver(keep):
    """Every banked score's value equals the brute force's; its score distributions rebuild
    the same values as a Markov chain."""
    model = tiny(keep)
    race = solve_race(model, 30)
    want = brute_race(model, 30)
    assert np.allclose(race.values, want, rtol=0, atol=1e-9)
    assert np.allclose(race.chain.rounds, race.values, rtol=0, atol=1e-9)


def test_within_matches_the_recursion():
    """P(reach the target within k rounds) at its optimum, k = 1..4, against the brute force
    (there a bust leads to the previous level's value at the same score: no fixed point)."""
    model, target, k = tiny(False), 25, 4
    w = {b: 1.0 for b in range(target, target + 200)}
    want = [0.0]
    for _ in range(k):
        nxt = dict(w)
        for b in range(target):
            cost = {s: -w.get(b + s, 0.0) for s in range(1, 200)}
            nxt[b] = -brute_round(model, cost, -w.get(b, 0.0))
        w = nxt
        want.append(w[0])
    got = solve_within(model, target, k)
    assert np.allclose(got.best, want, rtol=0, atol=1e-12)
    race = solve_race(model, target)
    assert all(got.best[j] >= race.chain.cdf[j] - 1e-12 for j in range(1, k + 1))


def test_chain_of_a_coin():
    """Scoring 0 or 1 with chance 1/2 each, to reach 2: two successes of a fair coin, the
    negative binomial: 4 rounds on average, P(done in <= k) = 1 - (k + 1) / 2^k."""
    dist = np.zeros(4)
    dist[0] = dist[1] = 0.5
    c = chain(dist, 2)
    assert c.rounds.tolist() == [4.0, 2.0]
    for k in range(1, 12):
        assert c.cdf[k] == pytest.approx(1 - (k + 1) / 2**k, abs=1e-15)
    assert c.quantile(0.5) == 3
    with pytest.raises(ValueError, match="never ends"):
        chain(np.array([1.0, 0.0]), 3)


def test_race_is_no_slower_than_the_per_round_optimum():
    """The per-round optimum (dp), played at every banked score, races no faster than the
    race-optimal policy, from any banked score; on this deck it is strictly slower from 0."""
    model = tiny(False)
    race = solve_race(model, 30)
    dp = policy_chain(race.space, solve(model).hit, 30)
    assert race.expected < dp.expected - 1e-6
    # A fixed policy evaluated as a chain is no better than the race at any banked score.
    assert np.all(race.values <= dp.rounds + 1e-12)


def test_a_race_policy_solves_its_table_when_it_first_decides(tmp_path):
    """Building a `race` policy (parsing a spec, checking a line-up) solves nothing; its table
    is loaded or solved on first use, as `win`'s."""
    pol = RacePolicy(tiny(False), str(tmp_path), target=30)
    assert list(tmp_path.iterdir()) == []
    assert pol.table.target == 30
    assert list(tmp_path.iterdir())  # solved now, and cached


def test_race_policy_plays_the_solved_table(tmp_path):
    """RacePolicy looks up its own banked score's table: the same bit as the solution's
    choice, at several scores and hands."""
    model = tiny(False)
    pol = RacePolicy(model, str(tmp_path), target=30)
    race = solve_race(model, 30)
    sp = build_space(model)
    rules = dataclasses.replace(parse_ruleset("3.1"), target=30)
    hands = [[1], [3, 5], [2, Card.PLUS4], [5, 3, Card.TIMES2], [1, Card.SECOND_CHANCE]]
    seen = set()
    for b in (0, 7, 18, 26, 29):
        for hand in hands:
            e = Engine(rules, [pol], seed=3, deck=model.deck)
            e.table.totals[0] = b
            for c in hand:
                e.draw_pile.remove(c)
                e.receive(0, c)
            mask = sum(1 << c for c in hand if c <= 12)
            mods = sum(1 << (c - Card.PLUS2) for c in hand if Card.PLUS2 <= c <= Card.TIMES2)
            held = int(Card.SECOND_CHANCE in hand)
            want = race.hit(b)[sp.dec_index(mask, mods, sp.sc_index(held, held))]
            assert pol.hit(e.obs[0]) == bool(want)
            seen.add(bool(want))
    assert seen == {True, False}  # the table is not one answer everywhere


def test_engine_race_from_a_fresh_deck_matches_the_exact_value(tmp_path):
    """The reference engine plays the race policy, a fresh deck every round (the model's
    assumption): the mean rounds to the target match the exact value within 4 standard
    errors, and so does the chance of being done within the median."""
    model, target, races = tiny(False), 30, 4000
    pol = RacePolicy(model, str(tmp_path), target=target)
    table, _, _ = load_race(model, target, str(tmp_path))
    exact = float(table.values[0])
    rules = dataclasses.replace(parse_ruleset("3.1"), target=target)
    rounds = solo_race_rounds(rules, pol, model.deck, races, seed=11)
    mean = statistics.fmean(rounds)
    se = statistics.stdev(rounds) / math.sqrt(races)
    assert abs(mean - exact) < 4 * se, (mean, exact, se)
    race = solve_race(model, target)
    k = race.chain.quantile(0.5)
    p = race.chain.cdf[k]
    share = sum(r <= k for r in rounds) / races
    assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / races)


def test_race_table_round_trip_and_errors(tmp_path):
    model = tiny(True)
    table, path, built = load_race(model, 20, str(tmp_path))
    assert built
    race = solve_race(model, 20)
    assert np.allclose(table.values, race.values)
    again, _, built = load_race(model, 20, str(tmp_path))
    assert not built and again.target == 20
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ValueError, match="truncated"):
        read_race(path)
    with pytest.raises(ValueError, match="target must be"):
        solve_race(model, 0)
    with pytest.raises(ValueError, match=f"K in 1..{MAX_ROUNDS}"):
        solve_within(model, 20, 0)


def test_race_spec_errors():
    with pytest.raises(PolicySpecError, match="race:MODEL needs MODEL in basic, real"):
        parse_policy("race:full")


def test_cli_race_refuses_the_full_model(capsys):
    assert main(["solve", "--race", "--model", "full", "--no-file"]) == 2
    assert "--model must be one of basic, real" in capsys.readouterr().err
    assert main(["solve", "--race", "--target", "0", "--no-file"]) == 2
    assert "--target must be in 1..10000" in capsys.readouterr().err
