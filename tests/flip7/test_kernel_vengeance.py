"""The compiled "With a Vengeance" kernel against flip7.vengeance: the same games, event for event."""

from __future__ import annotations

import os

import numba  # noqa: F401  (a dependency: imported, never skipped; docs/testing.md)
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flip7 import kernel
from flip7.cards import Card, Deck
from flip7.engine import END_NO_CARDS, END_RESHUFFLE_CAP
from flip7.events import EventKind
from flip7.kernel import encode
from flip7.policies import parse_policies
from flip7.rng import derive_seed
from flip7.rules import parse_ruleset
from flip7.simulate import rotated
from flip7.variants import VENGEANCE_CARDS, deck_from_counts, parse_variant
from tests.flip7.helpers import (
    KERNEL_SPECS,
    assert_one_round_is_play_round,
    ruleset_overrides,
    users_policy,
)
from tests.flip7.test_kernel_cli import run as cli
from tests.flip7.test_kernel_cli import without_engine_lines

VARIANTS = [
    "vengeance",
    "vengeance(deck=alt)",
    "vengeance(brutal=1)",
    "vengeance(deck=alt,brutal=1)",
]
#: Examples of the main differential test; FLIP7_KERNEL_EXAMPLES=20000 for a long run.
EXAMPLES = int(os.environ.get("FLIP7_KERNEL_EXAMPLES", "300"))
STEAL, SWAP, DISCARD = int(Card.STEAL), int(Card.SWAP), int(Card.DISCARD)


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    """Compile (or load from the cache) once for the whole module."""
    from flip7.kernel.load import vengeance_kernel

    vengeance_kernel()


def reference(ruleset: str, specs: list[str], seed: int, variant: str, **kw):  # type: ignore[no-untyped-def]
    v = parse_variant(variant, kw.pop("custom", None))  # type: ignore[arg-type]
    return v.new_engine(parse_ruleset(ruleset), parse_policies(specs), seed, **kw).run()


def kernel_game(ruleset: str, specs: list[str], seed: int, variant: str, **kw):  # type: ignore[no-untyped-def]
    v = parse_variant(variant, kw.pop("custom", None))  # type: ignore[arg-type]
    return kernel.play_game(parse_ruleset(ruleset), parse_policies(specs), seed, variant=v, **kw)


@st.composite
def rulesets(draw: st.DrawFn) -> str:
    overrides = ruleset_overrides(draw)
    if draw(st.integers(0, 5)) == 0:
        overrides.append(f"players_per_deck={draw(st.integers(1, 4))}")
    return f"3.1({','.join(overrides)})" if overrides else "3.1"


games = st.tuples(
    st.integers(0, 2**64 - 1),
    st.integers(1, 8).flatmap(
        lambda n: st.lists(st.sampled_from(KERNEL_SPECS), min_size=n, max_size=n)
    ),
    st.sampled_from(VARIANTS),
    rulesets(),
    st.integers(0, 7),
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(games)
def test_vengeance_game_equals_reference_event_for_event(game):
    """Any seed, 1..8 seats, line-up of built-in policies, deck (default or alternative), Brutal
    on or off, ruleset overrides and first dealer: the kernel's GameResult, flat event buffer
    included, equals flip7.vengeance's."""
    seed, specs, variant, ruleset, dealer = game
    first_dealer = dealer % len(specs)
    expected = reference(ruleset, specs, seed, variant, first_dealer=first_dealer)
    got = kernel_game(ruleset, specs, seed, variant, first_dealer=first_dealer)
    assert got.events == expected.events
    assert got == expected


#: Cards a declared deck may hold, for the custom-deck strategy.
CUSTOM_LABELS = sorted(VENGEANCE_CARDS)


@st.composite
def custom_decks(draw: st.DrawFn) -> Deck:
    cards = draw(st.lists(st.sampled_from(CUSTOM_LABELS), min_size=1, max_size=8, unique=True))
    counts = [0] * len(Card)
    for c in cards:
        counts[c] = draw(st.integers(1, 4))
    return Deck("custom", tuple(counts))


@settings(max_examples=max(EXAMPLES // 10, 30), deadline=None)
@given(
    st.integers(0, 2**64 - 1),
    st.integers(1, 5).flatmap(
        lambda n: st.lists(st.sampled_from(KERNEL_SPECS), min_size=n, max_size=n)
    ),
    custom_decks(),
    st.booleans(),
)
def test_declared_decks_equal_reference(seed, specs, deck, brutal):
    """A user's declared deck (a few Vengeance cards, 1..4 copies each: rounds that run out of
    cards, reshuffle, stop on moves nobody can make or hit the reshuffle cap) plays the same."""
    variant = f"vengeance(deck=custom{',brutal=1' if brutal else ''})"
    rules = "3.1(max_rounds=3)"  # a capped round costs the reference 1,000 reshuffles
    expected = reference(rules, specs, seed, variant, custom=deck)
    assert kernel_game(rules, specs, seed, variant, custom=deck) == expected


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**63),
    st.sampled_from([1, 2, 3, 4, 6]),
    st.randoms(use_true_random=False),
    st.integers(1, 60),
    st.sampled_from(VARIANTS),
)
def test_stacked_decks_rich_in_actions(seed, n, rnd, length, variant):
    """A stacked deck that opens with the deck's actions and modifiers shuffled among numbers
    (many Steal, Swap, Discard, Just One More and chained Flip Four early in a round) plays
    out as in the reference engine."""
    deck = parse_variant(variant).deck
    cards = deck.cards()
    special = [c for c in cards if c >= Card.DIV2]
    numbers = [c for c in cards if c < Card.DIV2]
    rnd.shuffle(numbers)
    stacked = special + numbers[:length]
    rnd.shuffle(stacked)
    specs = ["ev", "bustc:0.3", "sum:25", "endgame", "dup:0.2", "count:4"][:n]
    kw = {"stacked": stacked, "first_dealer": n - 1}
    assert kernel_game("3.1", specs, seed, variant, **kw) == reference(
        "3.1", specs, seed, variant, **kw
    )


@settings(max_examples=30, deadline=None)
@given(games)
def test_without_capture_only_the_events_are_left_out(game):
    """capture=False: no events, every other field as the reference engine has it."""
    seed, specs, variant, ruleset, _ = game
    expected = reference(ruleset, specs, seed, variant, capture=False)
    got = kernel_game(ruleset, specs, seed, variant, capture=False)
    assert got.events == [] and got == expected


@pytest.mark.parametrize(
    "counts, specs, seed",
    [
        ({"2": 1, "0": 2, "Steal": 1}, ["count:7", "sum:200", "sum:200", "sum:200"], 17987411994110927358),
        ({"Discard": 1, "13": 1}, ["sum:200", "count:7"], 6243831048412074556),
        ({"2": 2, "Discard": 2, "0": 2}, ["sum:200", "count:7", "sum:200"], 12248978351093800739),
    ],
)  # fmt: skip
def test_rounds_that_cycle_stop_at_the_reshuffle_cap(counts, specs, seed):
    """Tiny declared decks where seats that never stay cycle a few cards (found by a search of
    the reference engine): the round stops after 1,000 reshuffles, ROUND_END value 3, in both."""
    deck = deck_from_counts("custom", counts)
    rules = "3.1(max_rounds=3)"
    expected = reference(rules, specs, seed, "vengeance(deck=custom)", custom=deck)
    ends = [
        expected.events[i + 4]
        for i in range(0, len(expected.events), 5)
        if expected.events[i] == EventKind.ROUND_END
    ]
    assert END_RESHUFFLE_CAP in ends
    assert kernel_game(rules, specs, seed, "vengeance(deck=custom)", custom=deck) == expected


def test_ties_for_the_lead_at_the_round_cap_are_broken_as_the_reference_does():
    """As in the classic kernel: a capped game's tied leaders, the winner drawn from the seed."""
    tied = set()
    for seed in range(400):
        specs = ["sum:1"] * 3
        expected = reference("3.1(max_rounds=1)", specs, seed, "vengeance")
        got = kernel_game("3.1(max_rounds=1)", specs, seed, "vengeance")
        assert got == expected
        if expected.totals.count(max(expected.totals)) > 1:
            tied.add(expected.winner)
    assert tied == {0, 1, 2}


def test_a_round_with_only_moves_nobody_can_make_left_stops():
    """The reference's example (a lone player, a 3, a Steal and a Swap): the moves are dropped
    and the round ends 'no cards left' instead of reshuffling them, in the kernel too."""
    deck = deck_from_counts("mine", {"3": 1, "Steal": 1, "Swap": 1})
    kw = {"custom": deck, "stacked": [3, STEAL, SWAP]}
    expected = reference("3.1(max_rounds=2)", ["sum:200"], 1, "vengeance(deck=custom)", **kw)
    kw = {"custom": deck, "stacked": [3, STEAL, SWAP]}  # reference() consumed "custom"
    got = kernel_game("3.1(max_rounds=2)", ["sum:200"], 1, "vengeance(deck=custom)", **kw)
    kinds = got.events[0::5]
    end = kinds.index(int(EventKind.ROUND_END))  # the first round
    assert kinds[:end].count(int(EventKind.ACTION_DROPPED)) == 2
    assert int(EventKind.RESHUFFLE) not in kinds[:end]
    assert got.events[end * 5 + 4] == END_NO_CARDS
    assert got == expected


def test_batch_with_rotation_and_growing_buffers():
    """One kernel call over many rotated Brutal games from buffers far too small: every game
    equals the reference engine's, and the buffers grew instead of losing events."""
    lineup = parse_policies("ev,sum:20,bustc:0.25,endgame,count:4")
    ruleset = parse_ruleset("3.1")
    variant = parse_variant("vengeance(brutal=1)")
    k = 40
    seeds = kernel.derive_seeds(7, 3, 0, k)
    batch = kernel.play_batch(
        ruleset, lineup, kernel.rotation(5, np.arange(k) % 5), seeds, capacity=10, variant=variant
    )
    for i in range(k):
        expected = variant.new_engine(ruleset, rotated(lineup, i), derive_seed(7, 3, i)).run()
        assert batch.result(i) == expected


def test_one_round_mode_equals_the_reference_play_round():
    """one_round=True (flip7 round) plays exactly VengeanceEngine.play_round()."""
    assert_one_round_is_play_round(parse_variant("vengeance(deck=alt)"))


def test_dp_seats_play_ev_as_the_reference_does():
    """In Vengeance the solver's dp policy falls back to ev; the kernel plays it so."""
    from flip7.policies import parse_policy

    lineup = [parse_policy("dp"), *parse_policies("sum:20,evc")]
    rules = parse_ruleset("3.1")
    variant = parse_variant("vengeance")
    for seed in range(8):
        expected = variant.new_engine(rules, lineup, seed).run()
        assert kernel.play_game(rules, lineup, seed, variant=variant) == expected


def test_simulate_sums_are_the_same_on_both_engines(monkeypatch):
    """flip7.simulate --variant vengeance on the kernel: every sum of the clustered intervals,
    the rounds histogram and the capped count equal the reference's (chunks of 7 games)."""
    from flip7.kernel import tally
    from flip7.simulate import simulate

    monkeypatch.setattr(tally, "CHUNK", 7)
    variant = parse_variant("vengeance(deck=alt,brutal=1)")
    args = (parse_ruleset("3.1(max_rounds=8)"), parse_policies("ev,ev,endgame,dupc:0.3"), 30, 5)
    ref = simulate(*args, variant=variant, engine="reference")
    ker = simulate(*args, variant=variant, engine="auto")
    assert ker.engine == "kernel" and ref.engine == "reference"
    assert ker.stats == ref.stats
    assert ker.game_rounds == ref.game_rounds and ker.capped == ref.capped


def test_choose_engine_takes_vengeance_and_falls_back_for_a_users_policy(tmp_path, monkeypatch):
    """auto picks the kernel for every Vengeance deck and Brutal mode with built-in policies;
    a user's policy goes to the reference engine, named; --engine kernel with it is an error."""
    users_policy("mine_v", tmp_path, monkeypatch)
    ruleset = parse_ruleset("3.1")
    custom = deck_from_counts("mine", {"5": 3, "Steal": 2, "-4": 1})
    for spec in [*VARIANTS, "vengeance(deck=custom,brutal=1)"]:
        variant = parse_variant(spec, custom)
        assert kernel.choose_engine("auto", parse_policies("ev,dup:0.3"), ruleset, variant) == (
            "kernel",
            None,
        )
        engine, why = kernel.choose_engine(
            "auto", parse_policies("ev,mine_v:Mine"), ruleset, variant
        )
        assert engine == "reference" and "mine_v:Mine" in why
    with pytest.raises(ValueError, match="mine_v:Mine"):
        kernel.choose_engine(
            "kernel", parse_policies("mine_v:Mine"), ruleset, parse_variant("vengeance")
        )


def test_vengeance_constants_agree_with_flip7():
    """The Vengeance kernel's literal card ids, event kinds and draw reasons equal flip7's."""
    assert encode.vengeance_constant_mismatches() == []


@pytest.mark.parametrize(
    "command",
    [
        ["sim", "-n", "200", "--variant", "vengeance(brutal=1)"],
        ["round", "-n", "300", "--variant", "vengeance(deck=alt)"],
        ["watch", "--seed", "9", "--variant", "vengeance(deck=alt,brutal=1)"],
    ],
)
def test_sim_round_and_watch_print_the_same_under_both_engines(capsys, command):
    """sim, round and watch --variant vengeance: auto runs the kernel and says so, and every
    line (figures, intervals, the game card by card) equals the reference engine's."""
    argv = [*command, "-p", "ev,bustc:0.25,sum:20"]
    code_k, out_k, _ = cli(capsys, *argv)
    code_r, out_r, _ = cli(capsys, *argv, "--engine", "reference")
    assert code_k == code_r == 0
    assert "engine: kernel" in out_k and "engine: reference (as asked)" in out_r
    assert without_engine_lines(out_k) == without_engine_lines(out_r)
