"""Playing to win: the heads-up win tables against a simulation of the model they solve, the
field approximation's pieces, the menu's gap, the cached tables and the policy."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from flip7.cards import Card
from flip7.engine import Engine
from flip7.policies import PolicySpecError, parse_policy
from flip7.policies.base import Policy
from flip7.policies.dp import DPPolicy
from flip7.policies.win import WinPolicy
from flip7.rng import derive_seed
from flip7.rules import parse_ruleset
from flip7.solver.model import Model, deck_of
from flip7.solver.race import solve_race
from flip7.solver.win import FIELD, field_dist, load_win, menu_gap, read_win, solve_win

TINY = {1: 1, 2: 2, 3: 3, 5: 2, Card.PLUS4: 1, Card.TIMES2: 1, Card.SECOND_CHANCE: 1}
TARGET = 30


@pytest.fixture(scope="module")
def model() -> Model:
    return Model("tiny", deck_of("tiny", TINY), keep_duplicate=False)


@pytest.fixture(scope="module")
def win(model):
    return solve_win(model, TARGET)


class AtScores(Policy):
    """The win policy's answer for fixed totals, read from a solo engine's hand."""

    def __init__(self, policy: WinPolicy) -> None:
        self.policy = policy
        self.mine = self.leader = 0

    def hit(self, obs):  # type: ignore[no-untyped-def]
        return self.policy.decide(obs, 2, self.mine, self.leader, solo_count=True)


def test_heads_up_value_matches_a_simulation_of_its_model(model, win, tmp_path):
    """Each round both players play a solo round from a fresh deck (the model): the win
    policy picks its round policy from the totals, the opponent plays dp. The win rate of
    4,000 such games matches the exact heads-up value within 4 standard errors, and the
    value is above one half (dp against itself wins half of these games)."""
    exact = float(win.values[2][0, 0])
    pol = WinPolicy(model, str(tmp_path), target=TARGET)
    me = AtScores(pol)
    opp = DPPolicy(model, str(tmp_path))
    rules = dataclasses.replace(parse_ruleset("3.1"), target=TARGET)
    games, wins = 4000, 0
    for i in range(games):
        a = o = n = 0
        while True:
            me.mine, me.leader = a, o
            scores = []
            for seat, policy in enumerate((me, opp)):
                e = Engine(
                    rules, [policy], derive_seed(17, i, n, seat), capture=False, deck=model.deck
                )
                e.play_round()
                scores.append(e.round_scores[-1][0])
            a, o, n = a + scores[0], o + scores[1], n + 1
            if max(a, o) >= TARGET and a != o:
                wins += a > o
                break
    rate = wins / games
    se = math.sqrt(exact * (1 - exact) / games)
    assert abs(rate - exact) < 4 * se, (rate, exact, se)
    assert exact > 0.5


def test_the_field_is_the_best_of_the_others():
    q = np.array([0.5, 0.25, 0.25])
    assert field_dist(q, 1) == pytest.approx(q)
    # max of two: P(max = 0) = 1/4, P(max <= 1) = 9/16
    assert field_dist(q, 2) == pytest.approx([0.25, 0.3125, 0.4375])


def test_the_field_is_calibrated_to_one_in_n(win):
    """A dp player against the one opponent a field of n stands for wins 1/n of the games
    (as at a table of n dp players); the win policy does better, and less as n grows."""
    from flip7.solver.win import _solve_field

    top = int(np.flatnonzero(win.q)[-1]) + 1
    p = np.ascontiguousarray(win.q[None, :top])
    for n in FIELD:
        qn = np.ascontiguousarray(win.opponent(n)[:top])
        w, _ = _solve_field(p, qn, TARGET)
        assert w[0, 0] == pytest.approx(1 / n, abs=1e-6)
        assert win.values[n][0, 0] > 1 / n
    assert win.field[2] == 1.0
    assert all(win.field[n] < win.field[n + 1] < n for n in FIELD[:-1])
    start = [float(win.values[n][0, 0]) for n in FIELD]
    assert all(x > y for x, y in zip(start, start[1:], strict=False))
    assert win.values[2][20, 5] > win.values[2][5, 20]


def test_the_grid_policies_only_add(model, win):
    """Widening the menu with the grid's free policies never lowers a value."""
    narrow = solve_win(model, TARGET, grid=0)
    for n in FIELD:
        assert np.all(win.values[n] >= narrow.values[n] - 1e-12)
    assert any(label.startswith("free0@") for label in win.menu.labels)


def test_a_free_round_policy_adds_little_to_the_menu(win):
    """The in-round DP with the same terminal reward is never worse than the menu's best
    (it may choose any round policy); the gap stays small on this deck."""
    gaps = menu_gap(win, [(0, 0), (10, 20), (25, 5), (20, 25), (28, 28)])
    assert min(gaps) > -1e-9
    assert max(gaps) < 0.05


def test_win_tables_round_trip(model, tmp_path):
    race = solve_race(model, TARGET)
    table, path, built = load_win(model, TARGET, str(tmp_path))
    assert built
    sol = solve_win(model, TARGET, race)
    for n in FIELD:
        for a, o in [(0, 0), (12, 25), (29, 3)]:
            label = sol.menu.labels[sol.choice[n][a, o]]
            assert table.labels[table.policy(n, a, o)] == label
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match="truncated"):
        read_win(path)


def test_win_spec_errors():
    with pytest.raises(PolicySpecError, match="win:MODEL needs MODEL in basic, real"):
        parse_policy("win:full")
