"""When a round runs out of cards: reshuffle as often as the rules say, stop early only when the
cards left cannot change a score, in both the reference engine and the kernel.

The rulebook and the FAQ reshuffle the discard pile whenever the draw pile runs out, with no
limit. Small decks declared here make the reshuffles come fast: a round is played on a stacked
deck (helpers.play_stacked_round, dealer the last seat) whose other cards wait in the discard pile.
"""

from __future__ import annotations

import pytest

from flip7.cards import N_CARD_IDS, Deck
from flip7.engine import END_NO_CARDS, END_NOBODY_ACTIVE, Engine
from flip7.events import EventKind, EventLog
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from tests.flip7.helpers import SC, play_stacked_round

ENGINES = ["reference", "kernel"]


def small_deck(**copies: int) -> Deck:
    """A deck of a few cards: `n5=2, sc=3` is two 5s and three Second Chances."""
    counts = [0] * N_CARD_IDS
    for name, k in copies.items():
        counts[SC if name == "sc" else int(name[1:])] = k
    return Deck("small", tuple(counts))


def kinds(evs, kind):  # type: ignore[no-untyped-def]
    return [e for e in evs if e.kind == kind]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_saved_player_keeps_risking_the_reshuffled_cards_past_three_reshuffles(engine):
    """FAQ: the discard pile is reshuffled whenever the draw pile runs out. Alone with a 5 and a
    Second Chance, a player who never stays draws from {5, Second Chance, Second Chance} again and
    again: each 5 costs the Second Chance, the next one is kept, until a 5 comes without one.
    Seed 3 takes 6 reshuffles (found by trying seeds 1..40); the old limit of 3 ended the round
    there, 'no cards left', with the 5 still banked."""
    evs, scores = play_stacked_round(
        engine, "sum:200", [5, SC], deck=small_deck(n5=2, sc=3), seed=3
    )
    assert len(kinds(evs, EventKind.RESHUFFLE)) == 6
    assert len(kinds(evs, EventKind.SC_USED)) == 5
    assert [(e.player, e.card) for e in kinds(evs, EventKind.BUST)] == [(0, 5)]
    assert [e.value for e in kinds(evs, EventKind.ROUND_END)] == [END_NOBODY_ACTIVE]
    assert scores == [(0,)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_round_with_only_second_chances_nobody_can_keep_left_stops(engine):
    """When every card left to draw is a Second Chance and every active player holds one, each
    would be discarded as it is drawn forever: the round ends at once, 'no cards left' (ROUND_END
    2), with no reshuffle, and every score as it stands. Until then they are dealt out: here seat
    1 is still without one, so the pile is reshuffled once and seat 1 keeps one first."""
    evs, scores = play_stacked_round(engine, "sum:200", [5, SC], deck=small_deck(n5=1, sc=3))
    assert kinds(evs, EventKind.RESHUFFLE) == []
    assert [e.value for e in kinds(evs, EventKind.ROUND_END)] == [END_NO_CARDS]
    assert scores == [(5,)]
    evs, scores = play_stacked_round(
        engine, "sum:200,sum:200", [5, 6, SC], deck=small_deck(n5=1, n6=1, sc=3)
    )
    assert [e.value for e in kinds(evs, EventKind.RESHUFFLE)] == [2]
    assert [e.player for e in kinds(evs, EventKind.SC_KEPT)] == [0, 1]
    assert [e.value for e in kinds(evs, EventKind.SC_DISCARDED)] == [0, 1, 1]
    assert [e.value for e in kinds(evs, EventKind.ROUND_END)] == [END_NO_CARDS]
    assert scores == [(5, 6)]


@pytest.mark.parametrize("engine", ENGINES)
def test_at_18_seats_on_one_deck_a_saved_player_hits_through_15_reshuffles_and_busts(engine):
    """A legal table (18 seats, one deck, built-in policies): in round 6 of this game a seat
    saved by Second Chance after Second Chance keeps hitting on the reshuffled cards (15
    reshuffles, 15 saves) until a duplicate 8 busts it and nobody is left active. The old limit
    of 3 reshuffles ended this round early. Found by a kernel search over 20,000 games."""
    specs = ",".join(["ev", "evc", "sum:25", "dup:0.3", "endgame", "count:5"] * 3)
    seed = 7253728163365132076
    ruleset = parse_ruleset("3.1")
    result = Engine(ruleset, parse_policies(specs), seed).run()
    if engine == "kernel":
        from flip7 import kernel

        assert kernel.play_game(ruleset, parse_policies(specs), seed) == result
    round6 = []
    rnd = 0
    for e in EventLog(result.events):
        if e.kind == EventKind.ROUND_START:
            rnd = e.value
        if rnd == 6 and e.kind != EventKind.GAME_END:  # the game's last round
            round6.append(e)
    assert len(kinds(round6, EventKind.RESHUFFLE)) == 15
    assert len(kinds(round6, EventKind.SC_USED)) == 15
    assert (round6[-1].kind, round6[-1].value) == (EventKind.ROUND_END, END_NOBODY_ACTIVE)
    last_bust = kinds(round6, EventKind.BUST)[-1]
    assert last_bust.card == 8
    assert round6[-20] == last_bust  # the round's last play: 18 ROUND_SCOREs and ROUND_END follow


def test_the_kernel_keeps_the_reference_engines_reshuffle_cap():
    """The safety cap and the end reasons are the same numbers in both engines."""
    from flip7 import engine
    from flip7.kernel import core

    assert core.MAX_RESHUFFLES_PER_ROUND == engine.MAX_RESHUFFLES_PER_ROUND
    assert core.END_RESHUFFLE_CAP == engine.END_RESHUFFLE_CAP


def test_a_tie_for_the_lead_at_the_round_cap_is_drawn_from_the_seed_favouring_no_seat():
    """The round cap is a safety stop, not a rule: a game it stops with several seats tied for
    the lead is won by one of them drawn from the game's seed (flip7.rng.tie_break), not by the
    lowest seat. Three seats that stay on their first card, each dealt a 5, tie in every game."""
    from flip7.rng import tie_break
    from tests.flip7.helpers import Scripted

    winners = []
    for seed in range(300):
        policies = [Scripted(), Scripted(), Scripted()]
        game = Engine(
            parse_ruleset("3.1(max_rounds=1)"), policies, seed, stacked=[5, 5, 5], first_dealer=2
        ).run()
        assert game.capped and game.totals == (5, 5, 5)
        assert game.winner == tie_break(seed, 3)
        end = [e for e in EventLog(game.events) if e.kind == EventKind.GAME_END]
        assert [(e.player, e.value) for e in end] == [(game.winner, 5)]
        winners.append(game.winner)
    assert all(60 <= winners.count(seat) <= 140 for seat in range(3)), winners


def test_the_capped_tie_break_is_the_games_key_at_index_0_not_the_seed_mod_n():
    """flip7.rng.tie_break is the key at index 0 of the game's shuffle stream (the index no
    shuffle draws), mod the number of tied seats: key_0 of seed s is key_1 of seed s - GOLDEN,
    which CardRng draws. Not `seed mod n`, which would hand consecutive games' ties to the seats
    in turn (a cycle the seed does not draw); the first games' winners of three tied seats are
    pinned as the engine plays them."""
    from flip7.rng import GOLDEN, MASK64, CardRng, tie_break
    from tests.flip7.helpers import Scripted

    for seed in (0, 1, 2, 3, 7, 12345, 2**62 + 5, 2**63 - 1):
        key0 = int(CardRng((seed - GOLDEN) & MASK64).keys(1)[0])
        for k in (2, 3, 4, 5, 7, 18):
            assert tie_break(seed, k) == key0 % k, (seed, k)
    assert [tie_break(s, 3) for s in range(12)] == [0, 1, 1, 2, 2, 0, 1, 1, 1, 0, 2, 2]
    assert [tie_break(s, 2) for s in range(12)] == [0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    winners = [
        Engine(
            parse_ruleset("3.1(max_rounds=1)"),
            [Scripted(), Scripted(), Scripted()],
            seed,
            stacked=[5, 5, 5],
            first_dealer=2,
        )
        .run()
        .winner
        for seed in range(12)
    ]
    assert winners == [0, 1, 1, 2, 2, 0, 1, 1, 1, 0, 2, 2]
    assert winners != [seed % 3 for seed in range(12)]


def test_the_sole_leader_at_the_round_cap_wins_whatever_the_seed():
    from tests.flip7.helpers import Scripted

    for seed in range(20):
        game = Engine(
            parse_ruleset("3.1(max_rounds=1)"),
            [Scripted(), Scripted(), Scripted()],
            seed,
            stacked=[5, 9, 5],
            first_dealer=2,
        ).run()
        assert game.capped and game.winner == 1
