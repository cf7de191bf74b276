"""The compiled kernel playing the solver's `race` policy: the same games as the reference engine.

The race tables are solved for a short target (TARGET) so that they build in seconds; like the
dp tables of tests/flip7/test_kernel.py they go to the solver's cache ($FLIP7_CACHE, else
~/.cache/flip7) and are read from there afterwards.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flip7 import kernel
from flip7.engine import Engine
from flip7.kernel import core
from flip7.kernel import dp as dp_support
from flip7.policies import parse_policies, parse_policy
from flip7.policies.race import RacePolicy
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant

TARGET = 30
#: A second target: the policies were loaded for TARGET, so a game to this one makes both the
#: reference policy and the kernel switch to its tables.
OTHER = 20
RULESETS = [
    f"3.1(target={TARGET})",
    f"immediate(target={TARGET})",
    f"legacy(target={TARGET})",
    f"3.1(target={OTHER})",
]


@pytest.fixture(scope="module", autouse=True)
def compiled() -> kernel.LoadInfo:
    return kernel.load_info()


@pytest.fixture(scope="module")
def seats() -> dict[str, object]:
    """race and race:real loaded for TARGET (as parse_policy builds them, but for that target),
    with dp (the other table policy) and two of the kernel's plain policies."""
    out: dict[str, object] = {}
    for spec, model in (("race", "basic"), ("race:real", "real")):
        policy = RacePolicy(model, target=TARGET)
        policy.spec = spec
        out[spec] = policy
    out["dp"] = parse_policy("dp")
    return out


def lineup(seats: dict[str, object], specs: list[str]) -> list:  # type: ignore[type-arg]
    return [seats[s] if s in seats else parse_policies(s)[0] for s in specs]


@settings(max_examples=400, deadline=None)
@given(
    st.integers(0, 2**64 - 1),
    st.sampled_from([1, 1, 1, 2, 3, 4, 5, 8]).flatmap(
        lambda n: st.lists(
            st.sampled_from(["race", "race:real", "dp", "ev", "sum:20"]), min_size=n, max_size=n
        )
    ),
    st.sampled_from(RULESETS),
    st.integers(0, 7),
)
def test_race_games_equal_reference(seats, seed, specs, ruleset, dealer):
    """Seats playing the race tables (alone too, where they count their own discards for the
    Second Chance state), next to dp and plain seats, play the same games in the kernel as in
    the reference engine, event for event, also at a target other than the one the policy
    was loaded for."""
    policies = lineup(seats, specs)
    rules = parse_ruleset(ruleset)
    first = dealer % len(specs)
    expected = Engine(rules, policies, seed, first_dealer=first).run()
    got = kernel.play_game(rules, policies, seed, first_dealer=first)
    assert got.events == expected.events
    assert got == expected


def test_choose_engine_picks_the_kernel_for_race_seats(seats):
    """auto plays race seats (alone or not) in the kernel; a subclass of the race policy, which
    may override anything, stays with the reference engine."""
    rules = parse_ruleset(f"3.1(target={TARGET})")
    for specs in (["race"], ["race:real"], ["race", "ev", "dp"]):
        assert kernel.choose_engine("auto", lineup(seats, specs), rules) == ("kernel", None)

    class Mine(RacePolicy):
        pass

    mine = Mine(target=TARGET)
    mine.spec = "mine"
    engine, why = kernel.choose_engine("auto", [mine], rules)
    assert engine == "reference" and "'mine'" in why


def test_simulate_race_alone_runs_on_the_kernel_with_the_same_sums(seats):
    """flip7.simulate of the solo race on auto runs in the kernel and gives the reference's
    figures exactly."""
    from flip7.simulate import simulate

    args = (parse_ruleset(f"3.1(target={TARGET})"), [seats["race"]], 60, 5)
    auto = simulate(*args, engine="auto")
    ref = simulate(*args, engine="reference")
    assert auto.engine == "kernel" and auto.engine_note is None
    assert auto.stats == ref.stats and auto.game_rounds == ref.game_rounds


@pytest.mark.parametrize("spec", ["race", "race:real", "dp"])
def test_block_dedupe_keeps_every_decision(seats, spec):
    """The kernel's deduplicated blocks give back every bit of every banked score's table
    (so every decision), and equal blocks are stored once."""
    policy = seats[spec]
    race = spec != "dp"
    table = policy.table_for(TARGET) if race else policy.table  # type: ignore[attr-defined]
    enc = dp_support.blocks(table, race)
    assert dp_support.blocks(table, race) is enc  # encoded once per process
    size = 8 * table.n_sc * table.n_t
    n = dp_support.N_MASKS
    scores = range(TARGET) if race else [0]
    assert enc.n_scores == len(scores)
    rows = enc.bits.reshape(-1, size)
    for b in scores:
        dense = table.bits(b) if race else table.bits
        want = np.frombuffer(dense, dtype=np.uint8)[: n * size]
        got = rows[enc.index[b * n : (b + 1) * n]].reshape(-1)
        assert np.array_equal(got, want), f"banked score {b}"
    assert enc.distinct == rows.shape[0] < len(scores) * n // 4
    # The decision the kernel reads, on a sample of states: its block, then the bit in it.
    rng = np.random.default_rng(7)
    for _ in range(2000):
        b = int(rng.integers(0, len(scores)))
        mask = int(rng.integers(0, n))
        mods = int(rng.integers(0, 64))
        sc = int(rng.integers(0, table.n_sc))
        block = int(enc.index[b * n + mask])
        i = block * 8 * size + (mods * table.n_sc + sc) * table.n_t
        bit = bool(enc.bits[i >> 3] >> (i & 7) & 1)
        want_bit = table.hit(b, mask, mods, sc) if race else table.hit(mask, mods, sc)
        assert bit == want_bit


def test_seats_of_one_table_share_its_row_and_encoding(seats):
    """Seats whose policies loaded the same table (each seat parses its own spec) share one
    table row and one encoding; race and race:real get their own."""
    again = RacePolicy("basic", target=TARGET)
    assert again.table_for(TARGET) is not seats["race"].table_for(TARGET)  # type: ignore[attr-defined]
    policies = [*lineup(seats, ["race", "race:real", "ev"]), again]
    rows, bits, meta, states, index = dp_support.tables(policies, TARGET)
    assert rows[0] == rows[3] != rows[1]
    assert meta.shape[0] == 2 and meta[:, core.D_N_SCORES].tolist() == [TARGET, TARGET]
    assert index.shape[0] == 2 * TARGET * dp_support.N_MASKS


def test_race_seats_play_ev_in_vengeance_as_the_reference_does(seats):
    """In "With a Vengeance" the race policy falls back to ev; the kernel plays it so (and
    reads no table)."""
    variant = parse_variant("vengeance")
    rules = parse_ruleset(f"3.1(target={TARGET})")
    policies = lineup(seats, ["race", "sum:20", "race:real"])
    for seed in range(40):
        expected = variant.new_engine(rules, policies, seed).run()
        got = kernel.play_game(rules, policies, seed, variant=variant)
        assert got == expected


def test_race_tables_reach_the_kernel_in_the_warmed_up_types(seats):
    """The table arrays of race and dp seats have the dtypes of the loader's warm-up (no table),
    so a race game runs the compiled (or cached) kernel instead of compiling another one."""
    rules = parse_ruleset(f"3.1(target={TARGET})")
    kernel.play_game(rules, lineup(seats, ["race"]), 3)
    kernel.play_game(rules, lineup(seats, ["race:real", "dp", "ev"]), 3)
    assert len(core.play_games.signatures) == 1
