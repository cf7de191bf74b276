"""'With a Vengeance' (seeds/004): each rule as a named test on a stacked deck."""

from __future__ import annotations

import pytest

from flip7.cards import Card
from flip7.events import DrawHow, EventKind
from flip7.observation import BUSTED, STAYED
from flip7.variants import VENGEANCE, VENGEANCE_ALT, deck_from_counts, parse_variant
from tests.flip7.helpers import Scripted, draws, of_kind, vengeance_engine

U7, L13, D2 = int(Card.UNLUCKY_7), int(Card.LUCKY_13), int(Card.DIV2)
M2, M4, M10 = int(Card.MINUS2), int(Card.MINUS4), int(Card.MINUS10)
JOM, FF = int(Card.JUST_ONE_MORE), int(Card.FLIP_FOUR)
STEAL, SWAP, DISCARD = int(Card.STEAL), int(Card.SWAP), int(Card.DISCARD)
HIT, FOUR, ONE = DrawHow.HIT, DrawHow.FLIP_FOUR, DrawHow.JUST_ONE_MORE


def test_default_deck_is_108_cards_with_the_special_numbers():
    """Default split: The Zero, v copies of v in 1..13 (one 7 Unlucky, one 13 Lucky), one of each
    modifier, two of each action: 92 + 6 + 10 = 108."""
    c = VENGEANCE.counts
    assert VENGEANCE.size == 108
    assert c[0] == 1 and c[7] + c[U7] == 7 and c[13] + c[L13] == 13 and c[U7] == c[L13] == 1
    assert sum(c[v] for v in range(14)) + c[U7] + c[L13] == 92
    assert [c[m] for m in range(D2, Card.MINUS10 + 1)] == [1] * 6
    assert [c[a] for a in range(JOM, DISCARD + 1)] == [2] * 5


def test_alternative_split_is_selectable_by_name_and_custom_decks_are_declared():
    """The other published split (two each of -2..-10, one /2, one of each action) by name;
    a user's own deck from {label: copies}."""
    assert VENGEANCE_ALT.size == 108
    assert parse_variant("vengeance(deck=alt)").deck == VENGEANCE_ALT
    assert [VENGEANCE_ALT.counts[m] for m in range(M2, Card.MINUS10 + 1)] == [2] * 5
    mine = deck_from_counts("mine", {"1": 1, "2": 2, "Steal": 1, "-4": 1, "LUCKY_13": 1})
    assert mine.size == 6
    assert parse_variant("vengeance(deck=custom)", mine).deck == mine
    with pytest.raises(ValueError, match="unknown card 'Freeze!'"):
        deck_from_counts("bad", {"Freeze!": 1})
    with pytest.raises(ValueError, match="cannot hold Freeze"):
        parse_variant("vengeance(deck=custom)", deck_from_counts("x", {"Freeze": 1, "3": 3}))
    with pytest.raises(ValueError, match="unknown deck 'big'"):
        parse_variant("vengeance(deck=big)")
    assert parse_variant("vengeance(deck=alt,brutal=1)").spec == "vengeance(deck=alt,brutal=1)"


def test_a_duplicate_number_busts_and_seven_numbers_are_a_flip7():
    """004: a second card of a number busts; seven number cards end the round with +15."""
    e = vengeance_engine([Scripted(hits=1)], [5, 5])
    e.play_round()
    assert e.table.status[0] == BUSTED and e.round_scores == [(0,)]
    e = vengeance_engine([Scripted(hits=9), Scripted()], [1, 9, 2, 3, 4, 5, 6, 7, 8])
    e.play_round()
    assert [x.player for x in of_kind(e, EventKind.FLIP7)] == [0]
    assert e.round_scores == [(28 + 15, 9)]


def test_the_zero_scores_nothing_unless_flip7_and_forces_hits():
    """004: The Zero sets your score to 0 unless you Flip 7; you must keep hitting; it counts
    toward the seven."""
    e = vengeance_engine([Scripted(hits=0), Scripted()], [0, 9, 12, 11, 11])
    e.play_round()  # seat 0 would stay at once, but holds The Zero: hits until busting on 11
    hits = [(h.player, h.value) for h in of_kind(e, EventKind.HIT)]
    assert hits == [(0, 2), (0, 2), (0, 2)]
    assert e.round_scores == [(0, 9)]
    e2 = vengeance_engine([Scripted(), Scripted()], [0, 9, 1, 2, 3, 4, 5, 6])
    e2.play_round()
    assert e2.round_scores == [(0 + 1 + 2 + 3 + 4 + 5 + 6 + 15, 9)]


def test_zero_holder_banks_zero_when_the_round_ends_otherwise():
    """004: with The Zero and no Flip 7, the numbers score 0 (Just One More forces a stay)."""
    e = vengeance_engine([Scripted(), Scripted(hits=1, targets=[0])], [0, 9, JOM, 12])
    e.play_round()
    assert of_kind(e, EventKind.FORCED_STAY)[0].player == 0
    assert e.round_scores[0][0] == 0


def test_unlucky_7_wipes_the_row_and_cannot_bust_you():
    """004: the Unlucky 7 discards your other numbers and modifiers, keeps only the 7, cannot bust
    you when you receive it (even holding a 7), and counts as your 7."""
    e = vengeance_engine([Scripted(hits=4, targets=[0]), Scripted()], [7, 9, 12, M2, U7, 3])
    e.play_round()
    wiped = sorted(x.card for x in of_kind(e, EventKind.CARD_DISCARDED) if x.value == 1)
    assert wiped == sorted([7, 12, M2])
    assert e.table.status[0] != BUSTED
    assert e.round_scores == [(7 + 3, 9)]


def test_lucky_13_allows_a_second_13_and_a_third_busts():
    """004: holding the Lucky 13 you may hold a second 13 (both score and count toward the
    seven); a third 13 busts. Drawing the Lucky 13 onto a 13 is the same pair."""
    e = vengeance_engine([Scripted(hits=1), Scripted()], [L13, 9, 13])
    e.play_round()
    assert e.round_scores == [(26, 9)]
    e = vengeance_engine([Scripted(hits=1), Scripted()], [13, 9, L13])
    e.play_round()
    assert e.round_scores == [(26, 9)]
    e = vengeance_engine([Scripted(hits=2), Scripted()], [L13, 9, 13, 13])
    e.play_round()
    assert e.table.status[0] == BUSTED
    e = vengeance_engine([Scripted(hits=1), Scripted()], [13, 9, 13])
    e.play_round()
    assert e.table.status[0] == BUSTED  # two plain 13s: no Lucky 13, a bust
    e = vengeance_engine([Scripted(hits=9), Scripted()], [L13, 9, 13, 1, 2, 3, 4, 5])
    e.play_round()
    assert [x.player for x in of_kind(e, EventKind.FLIP7)] == [0]  # both 13s count for the 7


def test_actions_reach_stayed_players_and_fall_on_yourself_when_alone():
    """004: actions target any player still in play, stayed ones included; alone, yourself."""
    p1 = Scripted(hits=1, targets=[0])
    e = vengeance_engine([Scripted(), p1], [5, 6, JOM, 8])
    e.play_round()
    assert p1.offered_targets == [[0, 1]]  # seat 0 had stayed
    assert draws(e)[-1] == (0, 8, ONE)
    assert e.round_scores == [(13, 6)]
    e = vengeance_engine([Scripted(hits=1)], [5, JOM, 8])
    e.play_round()
    assert draws(e)[-1] == (0, 8, ONE) and e.table.status[0] == STAYED


def test_just_one_more_draws_one_card_then_the_target_must_stay():
    """004: Just One More: the target draws one card, then must stay."""
    e = vengeance_engine([Scripted(hits=5), Scripted(hits=1, targets=[0])], [5, 6, JOM, 8, 9])
    e.play_round()
    assert [(x.player, x.value) for x in of_kind(e, EventKind.FORCED_STAY)] == [(0, 13)]
    assert e.table.status[0] == STAYED
    assert draws(e)[-1] == (1, 9, HIT)  # seat 0 takes no more turns


def test_flip_four_defers_actions_and_modifiers_until_the_four_are_drawn():
    """004: Flip Four: four cards one at a time; actions and modifiers among them are resolved
    after all four (not at all on a bust); numbers count at once."""
    p0 = Scripted(hits=1, targets=[0, 1])
    e = vengeance_engine([p0, Scripted()], [5, 6, FF, M4, 2, 3, 4])
    e.play_round()
    seq = [
        (x.kind, x.card)
        for x in e_events(e)
        if x.kind in (EventKind.DRAW, EventKind.MODIFIER_GIVEN)
    ]
    assert seq[-5:] == [
        (EventKind.DRAW, M4),
        (EventKind.DRAW, 2),
        (EventKind.DRAW, 3),
        (EventKind.DRAW, 4),
        (EventKind.MODIFIER_GIVEN, M4),
    ]
    assert e.round_scores == [(14, 2)]
    e = vengeance_engine([Scripted(hits=1, targets=[0]), Scripted()], [5, 6, FF, M4, 5, 3])
    e.play_round()
    assert [(x.player, x.card) for x in of_kind(e, EventKind.ACTION_DROPPED)] == [(0, M4)]
    assert [d[1] for d in draws(e) if d[2] == FOUR] == [M4, 5]  # stopped at the bust


def e_events(engine):
    from flip7.events import EventLog

    return list(EventLog(engine.events))


def test_steal_takes_a_card_and_a_duplicate_after_a_move_busts():
    """004: Steal takes a card from any player into your row; after a move, a duplicate busts."""
    p0 = Scripted(hits=1)
    e = vengeance_engine([p0, Scripted()], [5, 9, STEAL, 8])
    e.play_round()
    assert p0.offered_moves == []  # one legal move: no question asked
    moved = [(x.player, x.card, x.target) for x in of_kind(e, EventKind.CARD_MOVED)]
    assert moved == [(1, 9, 0)]
    assert draws(e)[-1] == (1, 8, HIT)  # seat 1 lost its only card, so it must hit
    assert e.round_scores == [(14, 8)]
    p0 = Scripted(hits=1, moves=[(1, 5)])
    e = vengeance_engine([p0, Scripted()], [5, 5, STEAL])
    e.play_round()
    assert e.table.status[0] == BUSTED


def test_steal_takes_only_number_cards_and_without_one_is_discarded():
    """004 (French, translated): Steal: "Take a card from any player and add it to your hand";
    modifier cards: "They can be targeted by the Action cards Swap and Discard" (Steal is not
    named), and "A Swap, Steal or Discard card ... with no valid target is immediately
    discarded". So a Steal is offered number cards only, and with none to take it is
    discarded; a Swap still reaches the modifier."""
    # Seat 1 gives itself the -4 in the deal, then draws a 9; seat 0 then draws the Steal.
    p0 = Scripted(hits=2)
    e = vengeance_engine([p0, Scripted(hits=1, targets=[1])], [5, M4, 3, 9, STEAL])
    e.play_round()
    assert p0.offered_moves == []  # (1, -4) is not a move, so (1, 9) is the only one
    moved = [(x.player, x.card, x.target) for x in of_kind(e, EventKind.CARD_MOVED)]
    assert moved == [(1, 9, 0)]
    assert e.round_scores == [(17, 0)]
    # Seat 1 holds only the -4: nothing to steal, the Steal is discarded.
    p0 = Scripted(hits=1)
    e = vengeance_engine([p0, Scripted(targets=[1])], [5, M4, STEAL])
    e.play_round()
    assert not of_kind(e, EventKind.CARD_MOVED)
    assert [(x.player, x.card) for x in of_kind(e, EventKind.ACTION_DROPPED)] == [(0, STEAL)]
    assert e.round_scores == [(5, 0)]  # seat 1 still holds its -4
    # The same table with a Swap: the -4 can be swapped.
    p0 = Scripted(hits=1)
    e = vengeance_engine([p0, Scripted(targets=[1])], [5, M4, SWAP])
    e.play_round()
    assert p0.offered_moves == []  # one legal Swap: seat 0's 5 for seat 1's -4
    moved = [(x.player, x.card, x.target) for x in of_kind(e, EventKind.CARD_MOVED)]
    assert moved == [(0, 5, 1), (1, M4, 0)]
    assert e.round_scores == [(0, 5)]


def test_swap_exchanges_your_card_with_anothers_or_between_two_others():
    """004: Swap exchanges one of your cards with another player's, or cards of two others."""
    p0 = Scripted(hits=1, moves=[(0, 5, 2, 12)])
    e = vengeance_engine([p0, Scripted(), Scripted()], [5, 9, 12, SWAP])
    e.play_round()
    assert (0, 5, 2, 12) in p0.offered_moves[0] and (1, 9, 2, 12) in p0.offered_moves[0]
    assert e.round_scores == [(12, 9, 5)]
    p0 = Scripted(hits=1, moves=[(1, 9, 2, 12)])
    e = vengeance_engine([p0, Scripted(), Scripted()], [5, 9, 12, SWAP])
    e.play_round()
    assert e.round_scores == [(5, 12, 9)]


def test_discard_removes_a_card_of_your_choice():
    """004: Discard makes a player discard a card of your choice (your own -10, say)."""
    p0 = Scripted(hits=2, targets=[0], moves=[(0, M10)])
    e = vengeance_engine([p0, Scripted()], [5, 3, M10, DISCARD])
    e.play_round()
    assert (1, 3) in p0.offered_moves[0]
    assert [(x.player, x.card) for x in of_kind(e, EventKind.CARD_DISCARDED)] == [(0, M10)]
    assert e.round_scores == [(5, 3)]


def test_steal_swap_discard_with_no_valid_target_are_discarded():
    """004: a Swap, Steal or Discard that is the first card of a round, with no valid target,
    is discarded."""
    for action in (STEAL, SWAP, DISCARD):
        e = vengeance_engine([Scripted(), Scripted()], [action, 6, 7])
        e.play_round()
        dropped = of_kind(e, EventKind.ACTION_DROPPED)
        assert [(x.player, x.card) for x in dropped] == [(0, action)]


def test_modifiers_never_bust_skip_flip7_and_go_to_any_player_in_play():
    """004: modifiers never bust, do not count toward Flip 7, and can be given to any player
    not busted, stayed ones included (not to busted ones)."""
    p1 = Scripted(hits=2, targets=[0])
    e = vengeance_engine([Scripted(hits=1), p1, Scripted(hits=1)], [10, 6, 3, 12, 7, 3, M4])
    e.play_round()
    # seat 2 busted on its second 3; seat 0 stayed: candidates are 0 and 1
    assert p1.offered_targets == [[0, 1]]
    assert e.round_scores == [(22 - 4, 13, 0)]


def test_scoring_halves_before_subtracting_and_never_below_zero():
    """004: sum the numbers, /2 (rounded down) before the -N cards, not below 0."""
    from flip7.scoring import vengeance_row_points

    assert vengeance_row_points([9, 4, D2, M2], False, False) == 13 // 2 - 2
    assert vengeance_row_points([3, M10], False, False) == 0
    assert vengeance_row_points([3, M10], False, True) == -7  # Brutal
    assert vengeance_row_points([0, 5], False, False) == 0
    assert vengeance_row_points([0, 5], True, False) == 5


def test_brutal_mode_negative_scores_modifiers_on_busted_and_flip7_penalty():
    """004 Brutal: scores may go below zero; modifiers may go to busted players; a Flip 7 takes
    15 from another player instead of the bonus if its player so chooses."""
    p1 = Scripted(hits=1, targets=[0])
    e = vengeance_engine([Scripted(hits=1), p1], [5, 3, 5, M10], variant="vengeance(brutal=1)")
    e.play_round()
    assert p1.offered_targets == [[0, 1]]  # seat 0 had busted, still a candidate
    assert e.round_scores == [(-10, 3)]
    p0 = Scripted(hits=9, targets=[1])
    e = vengeance_engine([p0, Scripted()], [1, 9, 2, 3, 4, 5, 6, 7], variant="vengeance(brutal=1)")
    e.play_round()
    assert [(x.player, x.target, x.value) for x in of_kind(e, EventKind.FLIP7_PENALTY)] == [
        (0, 1, 15)
    ]
    assert e.round_scores == [(28, 9 - 15)]


def test_a_round_with_only_moves_nobody_can_make_left_stops():
    """No limit on reshuffles, but a round whose cards left to draw are all Steal, Swap or
    Discard with no legal move for anyone in play (here a lone player: nobody to steal from or
    swap with) ends at once, 'no cards left', instead of cycling them forever."""
    from flip7.engine import END_NO_CARDS
    from flip7.rules import parse_ruleset
    from flip7.vengeance import VengeanceEngine

    mine = deck_from_counts("mine", {"3": 1, "Steal": 1, "Swap": 1})
    e = VengeanceEngine(
        parse_ruleset("3.1"),
        [Scripted(hits=99)],
        seed=1,
        deck=parse_variant("vengeance(deck=custom)", mine).deck,
        stacked=[3, STEAL, SWAP],
        first_dealer=0,
    )
    e.play_round()
    dropped = [x.card for x in of_kind(e, EventKind.ACTION_DROPPED)]
    assert dropped == [STEAL, SWAP]
    assert not of_kind(e, EventKind.RESHUFFLE)
    assert [x.value for x in of_kind(e, EventKind.ROUND_END)] == [END_NO_CARDS]
    assert e.round_scores == [(3,)]
