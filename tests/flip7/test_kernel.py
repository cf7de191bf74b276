"""The compiled kernel against the reference engine: the same games, event for event."""

from __future__ import annotations

import os
import subprocess
import sys

import numba  # (a dependency: missing, it fails the suite rather than skipping it)
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flip7 import kernel
from flip7.cards import CLASSIC
from flip7.engine import Engine
from flip7.kernel import core, encode
from flip7.policies import parse_policies
from flip7.rng import CardRng, derive_seed
from flip7.rules import parse_ruleset
from flip7.simulate import rotated
from flip7.variants import parse_variant
from tests.flip7.helpers import (
    KERNEL_SPECS,
    assert_one_round_is_play_round,
    ruleset_overrides,
    users_policy,
)

SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 19]  # 19: two decks shuffled together
#: Games of the main differential test: 400, 20,000 under the `long` hypothesis profile
#: (tests/conftest.py, docs/testing.md); FLIP7_KERNEL_EXAMPLES=N sets any other count.
EXAMPLES = int(
    os.environ.get(
        "FLIP7_KERNEL_EXAMPLES", 20_000 if settings.get_current_profile_name() == "long" else 400
    )
)


@pytest.fixture(scope="module", autouse=True)
def compiled() -> kernel.LoadInfo:
    """Compile (or load from the cache) once for the whole module."""
    return kernel.load_info()


@st.composite
def rulesets(draw: st.DrawFn) -> str:
    base = draw(st.sampled_from(["3.1", "immediate", "legacy"]))
    overrides = ruleset_overrides(draw)
    return f"{base}({','.join(overrides)})" if overrides else base


games = st.tuples(
    st.integers(0, 2**64 - 1),
    st.sampled_from(SIZES).flatmap(
        lambda n: st.lists(st.sampled_from(KERNEL_SPECS), min_size=n, max_size=n)
    ),
    rulesets(),
    st.integers(0, 18),
)


def reference(ruleset: str, specs: list[str], seed: int, **kw: object):  # type: ignore[no-untyped-def]
    return Engine(parse_ruleset(ruleset), parse_policies(specs), seed, **kw).run()  # type: ignore[arg-type]


@settings(max_examples=EXAMPLES, deadline=None)
@given(games)
def test_kernel_game_equals_reference_event_for_event(game):
    """Any seed, field size (1..8, 19), line-up of built-in policies and ruleset: the kernel's
    GameResult, its flat event buffer included, equals the reference engine's."""
    seed, specs, ruleset, dealer = game
    first_dealer = dealer % len(specs)
    expected = reference(ruleset, specs, seed, first_dealer=first_dealer)
    got = kernel.play_game(
        parse_ruleset(ruleset), parse_policies(specs), seed, first_dealer=first_dealer
    )
    assert got.events == expected.events
    assert got == expected


def test_ties_for_the_lead_at_the_round_cap_are_broken_as_the_reference_does():
    """Games stopped by the round cap with several seats tied for the lead (three seats that
    stay on their first card, one round): the kernel draws the same winner from the seed."""
    tied = set()
    for seed in range(400):
        specs = ["sum:1"] * 3
        expected = reference("3.1(max_rounds=1)", specs, seed)
        got = kernel.play_game(parse_ruleset("3.1(max_rounds=1)"), parse_policies(specs), seed)
        assert got == expected
        if expected.totals.count(max(expected.totals)) > 1:
            tied.add(expected.winner)
    assert tied == {0, 1, 2}


def test_kernel_plays_bust_and_dup_as_the_reference_does():
    """bust:P, bustc:P (a Second Chance in hand: no bust risk) and dup:P, dupc:P (the duplicate
    chance whatever you hold) are different policies, and the kernel plays each as the reference
    engine does: 40 four-seat games at the same P, where the two families differ in some."""
    lineups = (["bust:0.2", "bustc:0.2"] * 2, ["dup:0.2", "dupc:0.2"] * 2)
    differ = 0
    for seed in range(40):
        results = []
        for specs in lineups:
            expected = reference("3.1", specs, seed)
            got = kernel.play_game(parse_ruleset("3.1"), parse_policies(specs), seed)
            assert got.events == expected.events and got == expected
            results.append(got.events)
        differ += results[0] != results[1]
    assert differ > 0


@settings(max_examples=30, deadline=None)
@given(games)
def test_without_capture_only_the_events_are_left_out(game):
    """capture=False: no events, every other field as the reference engine has it."""
    seed, specs, ruleset, _ = game
    expected = reference(ruleset, specs, seed, capture=False)
    got = kernel.play_game(parse_ruleset(ruleset), parse_policies(specs), seed, capture=False)
    assert got.events == [] and got == expected


@pytest.mark.parametrize("ruleset", ["3.1", "immediate", "legacy"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rounds_that_run_out_of_cards(ruleset, seed):
    """32 players on one deck: rounds end with no card left anywhere (ROUND_END value 2), and
    the kernel still matches the reference engine."""
    rules = f"{ruleset}(players_per_deck=40,max_rounds=6)"
    specs = ["sum:40", "count:5", "ev", "bust:0.5"] * 8
    expected = reference(rules, specs, seed)
    ends = [expected.events[i + 4] for i in range(0, len(expected.events), 5)]
    kinds = expected.events[0::5]
    assert any(k == 16 and v == 2 for k, v in zip(kinds, ends, strict=True))
    assert kernel.play_game(parse_ruleset(rules), parse_policies(specs), seed) == expected


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**63),
    st.sampled_from([2, 3, 4]),
    st.randoms(use_true_random=False),
    st.integers(1, 40),
    st.sampled_from(["3.1", "immediate", "legacy"]),
)
def test_stacked_decks(seed, n, rnd, length, ruleset):
    """A stacked deck (drawn first card first, the rest left in the discard pile) plays out
    as in the reference engine, reshuffles included."""
    cards = CLASSIC.cards()
    rnd.shuffle(cards)
    stacked = cards[:length]
    specs = ["ev", "bustc:0.3", "sum:25", "endgame"][:n]
    expected = Engine(
        parse_ruleset(ruleset), parse_policies(specs), seed, stacked=stacked, first_dealer=n - 1
    ).run()
    got = kernel.play_game(
        parse_ruleset(ruleset), parse_policies(specs), seed, stacked=stacked, first_dealer=n - 1
    )
    assert got == expected


def test_batch_with_rotation_and_growing_buffers():
    """One kernel call over many rotated games, starting from buffers far too small: every
    game equals the reference engine's, and buffers grew instead of losing events."""
    lineup = parse_policies("ev,sum:20,bustc:0.25,endgame,count:4")
    ruleset = parse_ruleset("legacy")
    k = 60
    seeds = kernel.derive_seeds(7, 3, 0, k)
    batch = kernel.play_batch(
        ruleset, lineup, kernel.rotation(5, np.arange(k) % 5), seeds, capacity=10
    )
    for i in range(k):
        expected = Engine(ruleset, rotated(lineup, i), derive_seed(7, 3, i)).run()
        assert batch.result(i) == expected


def test_one_round_mode_equals_the_reference_play_round():
    """one_round=True plays exactly Engine.play_round(): the same events, scores and busts."""
    assert_one_round_is_play_round(parse_variant("classic"))


def test_derive_seeds_matches_derive_seed():
    """The vectorised seed derivation equals flip7.rng.derive_seed, bit for bit."""
    for root, cell in [(0, 0), (1, 2), (2**63 - 1, 5), (12345, 2**40)]:
        got = kernel.derive_seeds(root, cell, 3, 50).tolist()
        assert got == [derive_seed(root, cell, i) for i in range(3, 50)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=200), st.integers(0, 63))
def test_sort_by_keys_is_numpys_stable_argsort(small, shift):
    """The kernel's sort orders items as numpy's stable argsort of their keys, ties (equal
    keys) included; keys crowd into few buckets when they differ only in low bits."""
    keys = (np.asarray(small, dtype=np.uint64) << np.uint64(shift)).astype(np.uint64)
    m = keys.shape[0]
    items = np.arange(m + 1, dtype=np.int64)
    dst = np.full(m + 1, -1, dtype=np.int64)
    sorted_keys = np.zeros(m + 1, dtype=np.uint64)
    cnt = np.zeros(2 * m + 4, dtype=np.int64)
    core.sort_by_keys(
        np.concatenate([keys, np.zeros(1, np.uint64)]), m, items, dst, sorted_keys, cnt
    )
    order = np.argsort(keys, kind="stable")
    assert dst[:m].tolist() == order.tolist()
    assert sorted_keys[:m].tolist() == keys[order].tolist()


@pytest.mark.parametrize("seed", [0, 1, 2**64 - 1, 0x9E3779B97F4A7C15])
def test_shuffle_equals_card_rng(seed):
    """A shuffle of m cards from counter c equals CardRng's (keys, order and counter)."""
    rng = CardRng(seed)
    for m in (94, 1, 2, 37, 188):
        src = np.arange(m, dtype=np.int64) * 3 % 23
        dst = np.zeros(m + 1, dtype=np.int64)
        counter = rng.counter
        expected = rng.shuffle(src.tolist())
        keys = np.zeros(m + 1, dtype=np.uint64)
        sorted_keys = np.zeros(m + 1, dtype=np.uint64)
        cnt = np.zeros(2 * m + 4, dtype=np.int64)
        core.shuffle(src, m, dst, np.uint64(seed), counter, keys, sorted_keys, cnt)
        assert dst[:m].tolist() == expected


@pytest.mark.parametrize("n", [33, 63])
def test_the_largest_fields_equal_the_reference(n):
    """Past 32 seats (the laps keep the active seats as bits of one integer) and at the largest
    field `flip7 sim` accepts, every game equals the reference engine's, event for event."""
    ruleset = parse_ruleset("3.1")
    lineup = parse_policies(",".join((["sum:20", "ev", "bust:0.3"] * 21)[:n]))
    k = 3
    batch = kernel.play_batch(
        ruleset, lineup, kernel.rotation(n, np.arange(k) % n), kernel.derive_seeds(5, 0, 0, k)
    )
    for i in range(k):
        expected = Engine(ruleset, rotated(lineup, i), derive_seed(5, 0, i)).run()
        got = batch.result(i)
        assert got.events == expected.events
        assert got.totals == expected.totals


def test_the_spare_second_chance_round_ends_as_the_reference_does():
    """20 seats on one deck: every card but a spare Second Chance ends up in front of someone,
    and a seat that always hits would draw, discard and reshuffle it forever. Both engines end
    that round as soon as that is all that is left, with the same events."""
    from flip7.engine import Engine

    specs = (
        "sum:30,count:7,sum:30,ev,bust:1,ev,sum:200,sum:30,ev,count:7,"
        "sum:200,count:7,ev,ev,ev,sum:30,sum:200,count:7,sum:200,bust:1"
    )
    ruleset = parse_ruleset("3.1(players_per_deck=100,max_rounds=20)")
    seed = 7508186784583419233
    expected = Engine(ruleset, parse_policies(specs), seed).run()
    assert kernel.play_game(ruleset, parse_policies(specs), seed) == expected


def test_choose_engine_says_why_it_falls_back(tmp_path, monkeypatch):
    """auto picks the kernel for built-in policies (classic or Vengeance) and falls back, with a
    reason, for a user's own policy; asking for the kernel where it cannot run is an error."""
    users_policy("mine_k", tmp_path, monkeypatch)
    ruleset = parse_ruleset("3.1")
    assert kernel.choose_engine("auto", parse_policies("ev,sum:20"), ruleset) == ("kernel", None)
    engine, why = kernel.choose_engine("auto", parse_policies("ev,mine_k:Mine"), ruleset)
    assert engine == "reference" and "mine_k:Mine" in why
    vengeance = parse_variant("vengeance(brutal=1)")
    assert kernel.choose_engine("auto", parse_policies("ev,ev"), ruleset, vengeance) == (
        "kernel",
        None,
    )
    engine, why = kernel.choose_engine("auto", parse_policies("ev,mine_k:Mine"), ruleset, vengeance)
    assert engine == "reference" and "mine_k:Mine" in why
    assert kernel.choose_engine("reference", parse_policies("ev"), ruleset)[0] == "reference"
    with pytest.raises(ValueError, match="mine_k:Mine"):
        kernel.choose_engine("kernel", parse_policies("mine_k:Mine"), ruleset)
    with pytest.raises(ValueError, match="valid: auto, kernel, reference"):
        kernel.choose_engine("fast", parse_policies("ev"), ruleset)


def test_a_subclass_of_a_builtin_policy_is_left_to_the_reference_engine():
    """A subclass may override anything, so only the exact built-in types are encoded."""
    from flip7.policies.thresholds import SumPolicy

    class Sneaky(SumPolicy):
        def hit(self, obs):  # type: ignore[no-untyped-def]
            return True

    assert str(encode.encode_policy(Sneaky(20))).endswith("is not one the kernel knows")
    assert encode.encode_policy(SumPolicy(20)) == (encode.P_SUM, 20, 0.0, 0)


def test_kernel_constants_agree_with_flip7():
    """Card ids, event kinds, statuses and rule modes in the kernel equal flip7's enums."""
    assert encode.constant_mismatches() == []


def test_the_game_loops_compile_without_reference_counting():
    """The game loops, the shuffle and the Vengeance kernel's helpers compile with numba's
    runtime off (`_nrt=False`): with it on, every array an inlined helper copies costs an
    NRT_incref/decref call, about a third of the classic kernel's time (docs/kernel.md). Only
    the functions that allocate (workspace) or hand out views (play_games, bare) keep it; so do
    the machinery both kernels share (flip7.kernel.rounds)."""
    from flip7.kernel import rounds, vengeance

    allocating = {"workspace", "workspace_of", "play_games", "bare"}
    for module in (core, rounds, vengeance):
        jitted = {
            name: obj
            for name, obj in vars(module).items()
            if isinstance(obj, numba.core.registry.CPUDispatcher)
            and obj.__module__ == module.__name__
        }
        assert module is rounds or "_play" in jitted
        with_runtime = sorted(
            name
            for name, fn in jitted.items()
            if fn.targetoptions.get("_nrt", True)
            and fn.targetoptions.get("inline") != "always"  # compiled into their caller
            and name not in allocating
        )
        assert with_runtime == [], f"{module.__name__}: {with_runtime} count references"


#: What flip7.kernel.rounds.play_loop calls in the variant's module (and the draw's test),
#: inlined into the variant's `_play` by numba; the rounds (play_round) are calls.
HOOKS = ("begin_game", "begin_round", "seat_score", "end_round", "cannot_change")


def test_both_variants_are_builds_of_the_one_game_loop():
    """The classic and Vengeance kernels are the one game loop (rounds.play_loop) with each
    variant's hooks inlined into its own `_play`: after games of both (compiled or loaded),
    neither the loop, the draw nor any hook has a compiled build of its own (a build would mean
    a call between the loop and a variant, or a variant's code compiled apart from its kernel).
    Each round is one build of its own (a second, say for a literal argument, would double the
    largest part of a first compile); the classic one is marked for LLVM to inline into the
    loop (forceinline), which numba cannot do cheaply (docs/kernel.md)."""
    from flip7.kernel import rounds, vengeance

    ruleset = parse_ruleset("3.1")
    lineup = parse_policies("ev,sum:20,bustc:0.3")
    kernel.play_game(ruleset, lineup, 7)
    kernel.play_game(ruleset, lineup, 7, variant=parse_variant("vengeance(brutal=1)"))
    assert core.play_games.overloads and vengeance.play_games.overloads  # both kernels ran
    for module in (core, vengeance):
        for name in HOOKS + (("reshuffled",) if module is core else ()):
            hook = getattr(module, name)
            assert hook.targetoptions.get("inline") == "always", (module.__name__, name)
            assert not built(hook), f"{module.__name__}.{name} was compiled on its own"
    assert core.play_round.targetoptions.get("forceinline") is True
    assert core.play_round.targetoptions.get("inline", "never") == "never"
    # one build per build of the kernel (the on-disk cache holds the win build too, if any)
    index = lambda fn: len(fn._cache._cache_file._load_index())  # noqa: E731
    assert index(core.play_round) == index(core._play) >= 1
    assert builds(vengeance.play_round) == 1
    assert not built(rounds.play_loop) and not built(rounds.draw)
    # what the classic round calls rather than inlines does not inherit its forceinline
    for fn in (core.win_rule, core.win_target, rounds.shuffle, rounds.sort_by_keys):
        assert fn.targetoptions.get("forceinline") is False, fn.__name__


def built(fn) -> bool:  # type: ignore[no-untyped-def]
    """Whether numba `fn` has a build of its own: in this process, or in the on-disk cache (a
    process that loads the kernels from the cache never builds their callees here)."""
    return bool(fn.overloads) or bool(fn._cache._cache_file._load_index())


def builds(fn) -> int:  # type: ignore[no-untyped-def]
    """How many builds numba `fn` has: in this process, or else in the on-disk cache."""
    return len(fn.overloads) or len(fn._cache._cache_file._load_index())


def test_a_classic_game_imports_no_vengeance_code():
    """A classic game, in a fresh process, neither imports nor compiles the Vengeance kernel."""
    code = (
        "import sys; from flip7.kernel import play_game; from flip7.policies import "
        "parse_policies; from flip7.rules import parse_ruleset; "
        "play_game(parse_ruleset('3.1'), parse_policies('ev,sum:20'), 3); "
        "print('flip7.kernel.vengeance' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_new_process_loads_the_cached_kernel_instead_of_compiling():
    """After this session compiled (or loaded) the kernel, a fresh process finds it in the
    on-disk cache (NUMBA_CACHE_DIR when set) and does not compile."""
    code = "from flip7.kernel import load_info; print(load_info().compiled)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@pytest.fixture(scope="module")
def dp_policies():  # type: ignore[no-untyped-def]
    """The solver's dp policies (their tables built once into the solver's cache)."""
    from flip7.policies import parse_policy

    return {spec: parse_policy(spec) for spec in ("dp", "dp:real")}


@settings(max_examples=120, deadline=None)
@given(
    st.integers(0, 2**64 - 1),
    st.sampled_from([1, 1, 2, 3, 4, 19]).flatmap(
        lambda n: st.lists(
            st.sampled_from(["dp", "dp:real", "ev", "sum:20"]), min_size=n, max_size=n
        )
    ),
    st.sampled_from(["3.1", "immediate", "legacy", "3.1(target=90)"]),
)
def test_dp_games_equal_reference(dp_policies, seed, specs, ruleset):
    """Seats playing the solver's table (alone too, where dp counts its own discards) play
    the same games in the kernel as in the reference engine."""
    lineup = [dp_policies[s] if s in dp_policies else parse_policies(s)[0] for s in specs]
    rules = parse_ruleset(ruleset)
    assert kernel.play_game(rules, lineup, seed) == Engine(rules, lineup, seed).run()


@pytest.mark.parametrize(
    "specs, ruleset",
    [
        (["ev", "ev", "sum:20", "bust:0.25"], "3.1"),  # a policy in two seats of every game
        (["evc", "endgame", "count:3"], "legacy(max_rounds=6)"),  # some games hit the cap
        (["ev"], "3.1(target=120)"),  # the solo challenge
    ],
)
def test_simulate_sums_are_the_same_on_both_engines(specs, ruleset, monkeypatch):
    """flip7.simulate on the kernel: every sum of the clustered intervals (per-game second
    moments included), the rounds histogram and the capped count equal the reference's, also
    when the games are split into several kernel chunks (CHUNK patched to 7)."""
    from flip7.kernel import tally
    from flip7.simulate import simulate

    monkeypatch.setattr(tally, "CHUNK", 7)
    args = (parse_ruleset(ruleset), parse_policies(specs), 45, 17)
    ref = simulate(*args, engine="reference")
    ker = simulate(*args, engine="kernel")
    assert ker.engine == "kernel" and ref.engine == "reference"
    assert ker.stats == ref.stats
    assert ker.game_rounds == ref.game_rounds and ker.capped == ref.capped
    assert sum(ref.game_rounds.values()) + ref.capped == 45
    if "max_rounds" in ruleset:
        assert ref.capped > 0
