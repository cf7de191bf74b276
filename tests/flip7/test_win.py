"""Playing to win: the heads-up win tables against a simulation of the model they solve, the
field approximation's pieces, the menu's gap, the cached tables and the policy."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from flip7.cards import Card
from flip7.engine import Engine
from flip7.observation import ACTIVE, STAYED, Observation
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
            assert table.values[n - 2, a, o] == pytest.approx(sol.values[n][a, o], abs=1e-6)
        assert table.ties[n] == pytest.approx(sol.ties[n])
    # A table in the first format (no values) is solved again, not refused.
    path.write_bytes(b"FLIP7WN1" + path.read_bytes()[8:])
    again, _, built = load_win(model, TARGET, str(tmp_path))
    assert built and again.values.shape == table.values.shape
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match="truncated"):
        read_win(path)


def test_win_spec_errors():
    with pytest.raises(PolicySpecError, match=r"win\[:MODEL\]\[:fast\] needs MODEL in basic, real"):
        parse_policy("win:full")
    with pytest.raises(PolicySpecError, match="takes a model and 'fast', got 'basic:fast:x'"):
        parse_policy("win:basic:fast:x")


def test_win_fast_plays_the_table_alone():
    """`win:fast` turns off the in-round sweep and the Freeze rule; the model still parses."""
    exact, fast, real_fast = (parse_policy(s) for s in ("win", "win:fast", "win:real:fast"))
    assert (exact.endgame, exact.freeze) == (True, True)
    assert (fast.endgame, fast.freeze, fast.model.name) == (False, False, "basic")
    assert (real_fast.endgame, real_fast.freeze, real_fast.model.name) == (False, False, "real")
    assert fast.spec == "win:fast"


# -- the round in play once the others are done ----------------------------------------------


def test_a_sweep_from_a_hand_matches_the_full_sweep(model):
    """The in-round sweep over the rows one hand can reach takes the same decisions there as
    the sweep over every row, and the same values."""
    from flip7.solver.model import build_space
    from flip7.solver.race import _Sweeps
    from flip7.solver.win import InRound

    space = build_space(model)
    rng = np.random.default_rng(5)
    reward = np.cumsum(rng.random(256) * (rng.random(256) < 0.3))
    reward /= reward[-1]
    full = _Sweeps(space)
    hit_all = np.zeros(full.n_dec, np.uint8)
    cost = -reward.copy()
    cost[0] = 0.0
    full.backward(hit_all, cost, -reward[0], optimize=True)
    ir = InRound(model)
    held = space.sc_index(1, 1)
    checked = 0
    for mask, sc in [(0b10, 0), (0b110, 0), (0b100, held), (0b100010, 0)]:
        ir.solve(reward, mask, sc)
        assert 0 < ir.live.sum() < ir.live.size
        for mi, m in enumerate(space.masks):
            for s in range(space.n_sc):
                if not ir.covers(int(m), s):
                    continue
                for mods in range(64):
                    i = space.dec_index(int(m), mods, s)
                    assert ir.hit[i] == hit_all[i]
                    st = ((s * space.n_masks + mi) * 64 + mods) * space.n_phases
                    assert ir.value(int(m), mods, s) == pytest.approx(
                        -(full.q[st, 0] + full.q[st, 1] * -reward[0])
                    )
                    checked += 1
        assert ir.covers(mask, sc) and not ir.covers(0, 0)
    assert checked > 100


class Endgame(Policy):
    """The win policy once the other player is done at `final`, read from a solo engine."""

    def __init__(self, policy: WinPolicy, mine: int, final: int) -> None:
        self.policy, self.mine, self.final = policy, mine, final

    def hit(self, obs):  # type: ignore[no-untyped-def]
        return self.policy.decide_known(obs, 2, self.mine, self.final, solo_count=True)


def test_the_last_round_against_a_known_total_matches_a_simulation(model, tmp_path):
    """The opponent is done at 34, past the target of 30; I stand at 20 and must score more
    than 14 (a tie plays on). The policy plays the in-round optimum for that reward: 4,000
    solo rounds of the model win as often as its exact value says, which beats every round
    policy on the menu (the old play: the menu policy picked at the round's start)."""
    from flip7.solver.win import InRound

    pol = WinPolicy(model, str(tmp_path), target=TARGET)
    table = pol.table
    reward = table.reward(2, 20, 34)
    assert reward[15] == 1.0 and reward[13] == 0.0 and 0 < reward[14] < 1
    ir = InRound(model)
    ir.solve(reward, 0, 0)
    exact = ir.value(0, 0, 0)
    sol = solve_win(model, TARGET)
    menu_best = float(np.max(sol.menu.dists @ reward))
    assert exact > menu_best + 1e-3
    me = Endgame(pol, 20, 34)
    rules = dataclasses.replace(parse_ruleset("3.1"), target=TARGET)
    games, got = 4000, 0.0
    for i in range(games):
        e = Engine(rules, [me], derive_seed(23, i), capture=False, deck=model.deck)
        e.play_round()
        got += reward[e.round_scores[-1][0]]
    rate = got / games
    se = math.sqrt(exact * (1 - exact) / games)
    assert abs(rate - exact) < 4 * se, (rate, exact, se)


def _table_obs(mine: int, opp: int, opp_points: int, opp_status: int, mask: int) -> Observation:
    """Seat 0 of two, holding the numbers of `mask`; seat 1 shows `opp_points` (one number)."""
    obs = Observation(0)
    obs.n_players, obs.target, obs.round, obs.variant = 2, TARGET, 3, 0
    numbers = [v for v in range(13) if mask >> v & 1]
    obs.mask = [mask, 1 << opp_points]
    obs.nsum = [sum(numbers), opp_points]
    obs.ncount = [len(numbers), 1]
    obs.plus, obs.x2, obs.has_sc = [0, 0], [False, False], [False, False]
    obs.status = [ACTIVE, opp_status]
    obs.line = [numbers, [opp_points]]
    obs.totals = [mine, opp]
    obs.discarded = [0] * 32
    return obs


def test_once_the_other_is_done_at_the_target_the_policy_plays_for_its_total(model, tmp_path):
    """At the table: the opponent stayed on 5 at 29 (34, past the target of 30), I stand at 20.
    Every decision is the in-round optimum for "score more than 14", and some differ from
    the menu policy's; while the opponent is still active the menu policy decides."""
    from flip7.solver.win import InRound

    pol = WinPolicy(model, str(tmp_path), target=TARGET)
    ir = InRound(model)
    ir.solve(pol.table.reward(2, 20, 34), 0, 0)
    hands = [0b10, 0b110, 0b1110, 0b100110, 0b101110, 0b101010, 0b1000]
    differ = 0
    for mask in hands:
        done = _table_obs(20, 29, 5, STAYED, mask)
        assert pol.hit(done) == ir.decide(mask, 0, 0)
        menu = pol.decide(done, 2, 20, 29)
        differ += menu != ir.decide(mask, 0, 0)
        active = _table_obs(20, 29, 5, ACTIVE, mask)
        assert pol.hit(active) == menu
    assert differ > 0


def test_a_freeze_goes_where_it_leaves_the_better_chance_to_win(model, tmp_path):
    """Heads-up, a Freeze goes to the seat whose freezing leaves the better chance to win,
    as the two chances computed apart say: on the opponent (it banks what it shows, I play on
    against that total) or on me (I bank mine, it plays on). I show 2, 3, 5 doubled (20
    points) at 0, the opponent a 1: the shared heuristic freezes me (15 points or more, a
    risky next card); the win policy freezes the opponent, since I can still stay on 20. With
    the rule off, the heuristic decides."""
    from flip7.solver.win import InRound

    pol = WinPolicy(model, str(tmp_path), target=TARGET)
    counts = [0] * 32
    for card, n in TINY.items():
        counts[card] = n
    ir = InRound(model)
    checked = 0
    for mine, theirs, omask, mymask, x2 in [
        (0, 0, 0b10, 0b101100, True),
        (20, 28, 0b100000, 0b1110, False),
        (20, 25, 0b1110, 0b100000, False),
    ]:
        obs = _table_obs(mine, theirs, 0, ACTIVE, mymask)
        opts = [v for v in range(13) if omask >> v & 1]
        obs.mask[1], obs.line[1], obs.nsum[1], obs.ncount[1] = omask, opts, sum(opts), len(opts)
        if x2:
            obs.line[0] = [*obs.line[0], Card.TIMES2]
            obs.x2[0] = True
        obs.deck, obs.deck_size = counts, sum(counts)
        obs.visible = [0] * 32
        for c in obs.line[0] + obs.line[1]:
            obs.visible[c] += 1
        mods = 32 if x2 else 0
        pts = obs.nsum[0] * (2 if x2 else 1)
        ir.solve(pol.table.reward(2, mine, theirs + sum(opts)), mymask, 0)
        on_them = ir.value(mymask, mods, 0)
        law = ir.law(pol._dp_hit(), omask, 0, 0)
        on_me = pol.table.reward_against(2, mine, theirs, law)[pts]
        assert pol.choose_target(obs, Card.FREEZE, [0, 1]) == (1 if on_them >= on_me else 0)
        if x2:
            assert Policy.choose_target(pol, obs, Card.FREEZE, [0, 1]) == 0
            assert pol.choose_target(obs, Card.FREEZE, [0, 1]) == 1
            assert on_them > on_me
        checked += 1
    pol.freeze = False
    assert pol.choose_target(obs, Card.FREEZE, [0, 1]) == Policy.choose_target(
        pol, obs, Card.FREEZE, [0, 1]
    )
    assert checked == 3
