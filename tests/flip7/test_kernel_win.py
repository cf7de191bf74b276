"""The `win` policy in the compiled kernel against the reference engine: the same games, event
for event (the menu bits, the endgame's in-round optimum, the heads-up Freeze), and the
arithmetic both engines share (flip7.solver.win_kernel)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flip7 import kernel
from flip7.engine import Engine
from flip7.kernel import core, encode
from flip7.policies import parse_policies, parse_policy
from flip7.policies.win import WinPolicy
from flip7.rules import parse_ruleset
from flip7.solver import win_kernel
from flip7.solver.kernels import HIST
from flip7.variants import parse_variant

WIN_SPECS = ("win", "win:real", "win:fast")
#: The games' target, and the one the win tables are solved for (this session's own solver
#: cache: about 40 CPU seconds per model at 40, against many minutes at the default 200; the
#: kernel and the reference read the same tables whatever the target).
TARGET = 40
RULESETS = [
    f"{r[:-1]},target={TARGET})" if r.endswith(")") else f"{r}(target={TARGET})"
    for r in ("3.1", "immediate", "legacy", "3.1(bonus=0)", "legacy(max_rounds=4)")
]
RULES = parse_ruleset(RULESETS[0])


@pytest.fixture(scope="module", autouse=True)
def compiled() -> kernel.LoadInfo:
    return kernel.load_info()


class Solved(dict):  # type: ignore[type-arg]
    """win, win:real, win:fast (their tables solved at TARGET) and dp, each built on first
    use, as parse_policy builds them."""

    def __missing__(self, spec: str):  # type: ignore[no-untyped-def]
        if spec in WIN_SPECS:
            fast = spec.endswith(":fast")
            model = "real" if spec == "win:real" else "basic"
            got = WinPolicy(model, target=TARGET, endgame=not fast, freeze=not fast)
            got.spec = spec
        else:
            got = parse_policy(spec)
        self[spec] = got
        return got

    def __contains__(self, spec: object) -> bool:
        return spec in (*WIN_SPECS, "dp")


@pytest.fixture(scope="module")
def policies() -> Solved:
    """The policies, over win tables solved without the menu's column generation (about 5 CPU
    seconds a model at TARGET instead of 35): both engines read the same tables, whichever."""
    from flip7.solver.model import get_model
    from flip7.solver.race import solve_race
    from flip7.solver.win import solve_win, win_path, write_win

    for name in ("basic", "real"):
        model = get_model(name)
        path = win_path(model, TARGET)  # in this session's own solver cache (tests/conftest.py)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_win(path, solve_win(model, TARGET, solve_race(model, TARGET), grid=0))
    return Solved()


def lineup(policies, specs):  # type: ignore[no-untyped-def]
    return [policies[s] if s in policies else parse_policies(s)[0] for s in specs]


def same_game(rules, seats, seed):  # type: ignore[no-untyped-def]
    got = kernel.play_game(rules, seats, seed)
    expected = Engine(rules, seats, seed).run()
    assert got.events == expected.events
    assert got == expected


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**64 - 1),
    st.sampled_from(WIN_SPECS),
    st.lists(
        st.sampled_from(["win", "win:real", "win:fast", "ev", "dp", "sum:20"]),
        min_size=1,
        max_size=1,
    ),
    st.sampled_from(RULESETS),
    st.booleans(),
)
def test_heads_up_win_games_equal_reference(policies, seed, me, other, ruleset, swap):
    """Heads-up (where the endgame and the Freeze rule matter most), either seat first: the
    kernel's game equals the reference engine's, every event."""
    specs = [me, *other]
    if swap:
        specs.reverse()
    same_game(parse_ruleset(ruleset), lineup(policies, specs), seed)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**64 - 1),
    st.integers(3, 6).flatmap(
        lambda n: st.lists(
            st.sampled_from(["win", "win:real", "win:fast", "ev", "dp", "sum:20"]),
            min_size=n,
            max_size=n,
        )
    ),
    st.sampled_from(RULESETS),
)
def test_win_games_at_larger_tables_equal_reference(policies, seed, specs, ruleset):
    """3..6 seats with win among them (the menu of the field size; the endgame once the
    others are done; Freezes by the shared heuristics): the same games on both engines."""
    if not any(s in WIN_SPECS for s in specs):
        specs = ["win", *specs[1:]]
    same_game(parse_ruleset(ruleset), lineup(policies, specs), seed)


def test_endgame_and_freeze_sweeps_are_played_the_same(policies, monkeypatch):
    """Games chosen so that the reference policy solves the endgame (decide_known) and aims
    Freezes by a sweep from its hand: the kernel replays each of them."""
    calls = {"endgame": 0, "freeze_sweep": 0}
    decide_known = WinPolicy.decide_known
    in_round = policies["win"]._in_round()
    solve = type(in_round).solve

    def counted_known(self, *args, **kw):  # type: ignore[no-untyped-def]
        calls["endgame"] += 1
        return decide_known(self, *args, **kw)

    def counted_solve(self, reward, mask, sc, key=None):  # type: ignore[no-untyped-def]
        if key is None:  # choose_target's sweep (the endgame's carries its key)
            calls["freeze_sweep"] += 1
        return solve(self, reward, mask, sc, key)

    monkeypatch.setattr(WinPolicy, "decide_known", counted_known)
    monkeypatch.setattr(type(in_round), "solve", counted_solve)
    rules = RULES
    for seed in range(12):
        for specs in (["win", "ev"], ["dp", "win"], ["win:real", "sum:20"]):
            same_game(rules, lineup(policies, specs), seed)
    assert calls["endgame"] > 0 and calls["freeze_sweep"] > 0, calls


def test_choose_engine_plays_win_in_the_kernel(policies):
    """win seats run in the kernel at two or more seats of the classic game; alone (it plays
    the race there) or in "With a Vengeance" they go to the reference engine, saying why."""
    rules = RULES
    for specs in (["win", "ev"], ["win:real", "dp", "sum:20"], ["win", "win", "win", "ev"]):
        assert kernel.choose_engine("auto", lineup(policies, specs), rules) == ("kernel", None)
    engine, why = kernel.choose_engine("auto", [policies["win"]], rules)
    assert engine == "reference" and "race" in why
    engine, why = kernel.choose_engine(
        "auto", lineup(policies, ["win", "ev"]), rules, parse_variant("vengeance")
    )
    assert engine == "reference" and "Vengeance" in why
    assert encode.encode_policy(policies["win"])[0] == encode.P_WIN == core.P_WIN


def test_a_batch_of_win_games_equals_the_reference_games(policies):
    """play_batch over games with rotated seats, twice (the last sweeps, the opponent laws and
    the endgame sweeps kept per reward carried from game to game and to the next batch; the
    second pass answers from them) gives each game the reference plays."""
    from flip7.kernel import win as kernel_win

    kernel_win._KEPT.entry = None  # start from empty kept arrays
    rules = RULES
    seats = lineup(policies, ["win", "ev"])
    k = 40
    seeds = kernel.derive_seeds(5, 0, 0, k)
    seat_policy = kernel.rotation(2, np.arange(k) % 2)
    expected = [
        Engine(rules, [seats[j] for j in seat_policy[g]], int(seeds[g])).run() for g in range(k)
    ]
    for _ in range(2):
        batch = kernel.play_batch(rules, seats, seat_policy, seeds)
        assert [batch.result(g) for g in range(k)] == expected
    wa = kernel_win._KEPT.entry[1]
    assert (wa[core.WX_EG_KEY] >= 0).sum() > 0  # some endgame sweep was kept
    assert (wa[core.WX_LAW_KEY] >= 0).sum() > 0  # and some opponent law


def test_shared_reward_helpers_match_their_definition(policies):
    """WinTable.reward and reward_against (now the compiled helpers both engines call) against
    their definition written out in Python: R(s) from the step at the target and W below it,
    and the sum over the opponent's law in ascending order."""
    table = policies["win"].table
    target = table.target
    law = np.zeros(HIST)
    law[[0, 7, 15, 22]] = [0.3, 0.25, 0.25, 0.2]

    def r(n: int, x: int, y: int) -> float:
        if x < target and y < target:
            return float(table.values[n - 2, x, y])
        return 1.0 if x > y else table.ties[n] if x == y else 0.0

    t = target
    for n, mine, other in [
        (2, t - 25, t - 10),
        (2, t - 5, t - 10),
        (3, 2, t - 20),
        (5, t - 1, t + 5),
    ]:
        reward = table.reward(n, mine, other)
        expected = [r(n, mine + s, other) for s in range(HIST)]
        assert reward.tolist() == expected
        against = table.reward_against(n, mine, other, law)
        for s in (0, 5, 20):
            acc = 0.0
            for t in (0, 7, 15, 22):
                acc += r(n, mine + s, other + t) * law[t]
            assert against[s] == acc == table.reward_against_at(n, mine, other, law, s)


def test_the_shared_helpers_run_without_numba_runtime():
    """flip7.solver.win_kernel and the sweeps it calls compile with `_nrt=False`, so the game
    loop (which runs without numba's runtime) can call them."""
    from flip7.solver.kernels import forward_from_ws
    from flip7.solver.race_kernel import race_backward_ws

    jitted = [
        obj
        for obj in vars(win_kernel).values()
        if isinstance(obj, numba.core.registry.CPUDispatcher)
    ]
    assert len(jitted) >= 6
    for fn in [*jitted, forward_from_ws, race_backward_ws]:
        assert fn.targetoptions.get("_nrt") is False, fn.__name__


def test_an_edit_to_a_callee_module_drops_the_kernels_cached_code(tmp_path, monkeypatch):
    """numba's cache checks only the file of the function it caches; the kernel calls win's
    compiled helpers in flip7.solver. A digest of those files kept next to the cache: when it
    differs (an edit there), the kernel module's cached code is dropped and compiled again."""
    import types

    from flip7.kernel import jit

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    flushed: list[str] = []

    class Cache:
        def __init__(self, name: str) -> None:
            self.name = name

        def flush(self) -> None:
            flushed.append(self.name)

    module = types.ModuleType("fake_kernel")
    jitted = types.SimpleNamespace(__module__="fake_kernel", _cache=Cache("mine"))
    imported = types.SimpleNamespace(__module__="elsewhere", _cache=Cache("theirs"))
    module.mine, module.theirs = jitted, imported  # type: ignore[attr-defined]

    stamp = jit.refresh_if_callees_changed(module)  # no digest yet: drop
    assert flushed == ["mine"] and stamp is not None
    jit.write_stamp(stamp)
    assert jit.refresh_if_callees_changed(module) is None  # in step: keep
    assert flushed == ["mine"]
    (tmp_path / "fake_kernel.callees").write_text("an older digest")
    assert jit.refresh_if_callees_changed(module) is not None
    assert flushed == ["mine", "mine"]
