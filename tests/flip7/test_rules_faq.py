"""The rulebook (seeds/000) and every FAQ ruling (seeds/003) as named tests on stacked decks.

Seats are 0..n-1 and the dealer is the last seat, so the deal and each lap go 0, 1, ..., n-1.
"""

from __future__ import annotations

import pytest

from flip7.engine import decks_for
from flip7.events import DrawHow, EventKind
from flip7.observation import BUSTED, FROZEN, STAYED
from flip7.rules import parse_ruleset
from tests.flip7.helpers import (
    F3,
    P4,
    P10,
    SC,
    X2,
    F,
    Scripted,
    draws,
    events,
    of_kind,
    play_stacked_round,
    stacked_engine,
)

DEAL, HIT, FLIP3 = DrawHow.DEAL, DrawHow.HIT, DrawHow.FLIP_THREE


def test_faq_one_card_per_hit_in_turn_order():
    """FAQ: the dealer offers each active player Hit or Stay in turn order, one card per Hit."""
    e = stacked_engine([Scripted(hits=1) for _ in range(3)], [5, 6, 7, 8, 9, 10])
    e.play_round()
    assert draws(e) == [
        (0, 5, DEAL),
        (1, 6, DEAL),
        (2, 7, DEAL),
        (0, 8, HIT),
        (1, 9, HIT),
        (2, 10, HIT),
    ]
    assert e.round_scores == [(13, 15, 17)]


def test_faq_opening_card_is_any_card_and_a_modifier_stays_in_front():
    """FAQ: the opening card can be a modifier; it stays in front of you and scores."""
    e = stacked_engine([Scripted(), Scripted()], [P4, 3])
    e.play_round()
    assert e.round_scores == [(4, 3)]


def test_faq_freeze_in_opening_deal_on_player_without_cards_banks_zero_and_deal_skips_them():
    """FAQ: a player with no cards is active, can be frozen in the deal, banks 0, and is skipped."""
    s0 = Scripted(targets=[1])
    e = stacked_engine([s0, Scripted(), Scripted()], [F, 5, 6])
    e.play_round()
    assert of_kind(e, EventKind.FREEZE)[0].player == 1
    assert of_kind(e, EventKind.FREEZE)[0].value == 0
    assert draws(e) == [(0, F, DEAL), (2, 5, DEAL), (0, 6, HIT)]
    assert e.table.status[1] == FROZEN
    assert e.round_scores == [(6, 0, 5)]


def test_faq_only_players_with_no_cards_are_dealt_and_the_passer_gets_no_extra_card():
    """FAQ: a Flip Three in the deal gives its receiver cards, so the deal skips them; they may
    then Stay. The player who passed it on is not dealt another card in the deal."""
    e = stacked_engine([Scripted(targets=[1]), Scripted(), Scripted()], [F3, 2, 3, 4, 5, 6])
    e.play_round()
    assert draws(e) == [
        (0, F3, DEAL),
        (1, 2, FLIP3),
        (1, 3, FLIP3),
        (1, 4, FLIP3),
        (2, 5, DEAL),
        (0, 6, HIT),  # the passer had nothing in front of them, so their first turn must hit
    ]
    hits = of_kind(e, EventKind.HIT)
    assert [(h.player, h.value) for h in hits] == [(0, 1)]
    assert e.table.status[1] == STAYED
    assert e.round_scores == [(6, 9, 5)]


def test_faq_play_resumes_after_the_player_who_drew_the_flip_three():
    """FAQ: after a Flip Three, play continues left of the player who drew it, not of its receiver."""
    e = stacked_engine(
        [Scripted(hits=1, targets=[2]), Scripted(hits=1), Scripted()], [1, 2, 3, F3, 4, 5, 6, 7]
    )
    e.play_round()
    d = draws(e)
    assert d[3:8] == [(0, F3, HIT), (2, 4, FLIP3), (2, 5, FLIP3), (2, 6, FLIP3), (1, 7, HIT)]
    assert e.round_scores == [(1, 9, 18)]


def test_faq_actions_only_target_active_players_and_only_the_receiver_is_affected():
    """FAQ: stayed, busted and frozen players cannot receive an action; the chooser picks among
    the active ones (themself included) and only the receiver is affected."""
    s0 = Scripted(hits=2, targets=[3])
    e = stacked_engine(
        [s0, Scripted(), Scripted(hits=1), Scripted(hits=1)], [5, 6, 7, 9, 8, 7, 10, F]
    )
    e.play_round()
    assert s0.offered_targets == [[0, 3]]
    fr = of_kind(e, EventKind.FREEZE)
    assert [(x.player, x.value) for x in fr] == [(3, 19)]
    assert e.table.status[2] == BUSTED
    assert e.round_scores == [(13, 6, 0, 19)]


def test_faq_a_frozen_player_is_out_and_cannot_receive_an_action():
    """FAQ: "A frozen player is out of the round, so they are not active either": once frozen
    (here with no card in front of them), a seat is never offered as an action's target."""
    s0 = Scripted(targets=[1, 2])
    e = stacked_engine([s0, Scripted(), Scripted()], [F, 5, F, 7])
    e.play_round()
    assert s0.offered_targets == [[0, 1, 2], [0, 2]]
    assert [(x.player, x.value) for x in of_kind(e, EventKind.FREEZE)] == [(1, 0), (2, 5)]
    assert e.round_scores == [(7, 0, 5)]


class LinesSeen(Scripted):
    """A Scripted seat that records the cards in front of every seat at each of its decisions."""

    def __init__(self, hits: int) -> None:
        super().__init__(hits=hits)
        self.lines: list[list[list[int]]] = []

    def hit(self, obs):  # type: ignore[no-untyped-def]
        self.lines.append([list(line) for line in obs.line])
        return super().hit(obs)


def test_faq_the_freeze_card_stays_in_front_of_the_frozen_player_until_the_round_ends():
    """FAQ: "The Freeze card stays in front of you until the round ends", then goes to the
    discard pile with the rest of the round's cards."""
    s1 = LinesSeen(hits=1)
    e = stacked_engine([Scripted(), s1], [5, F, 8, 9])
    s1.targets = [0]
    e.play_round()
    assert [(x.player, x.value) for x in of_kind(e, EventKind.FREEZE)] == [(0, 5)]
    assert s1.lines == [[[5, F], [8]], [[5, F], [8, 9]]]  # both of seat 1's decisions
    assert e.table.line == [[], []]
    assert sorted(e.discard_pile[-4:]) == sorted([5, F, 8, 9])  # after the undealt rest
    assert e.round_scores == [(5, 17)]


def test_faq_the_only_active_player_must_take_the_action():
    """Rulebook: if you are the only active player, the action card is played on you."""
    s0 = Scripted(hits=2)
    e = stacked_engine([s0, Scripted(), Scripted(hits=1)], [5, 6, 7, 8, 7, F])
    e.play_round()
    assert s0.offered_targets == []  # no choice to make
    played = of_kind(e, EventKind.ACTION_PLAYED)[0]
    assert (played.player, played.card, played.target) == (0, F, 0)
    assert e.round_scores == [(13, 6, 0)]


def test_faq_flip_three_stops_at_a_bust_and_drops_pending_actions():
    """FAQ: stop as soon as you bust; a Freeze revealed earlier in that Flip Three is not played."""
    e = stacked_engine([Scripted(hits=1, targets=[0]), Scripted(hits=1)], [5, 6, F3, F, 5, 9])
    e.play_round()
    assert draws(e)[2:] == [(0, F3, HIT), (0, F, FLIP3), (0, 5, FLIP3), (1, 9, HIT)]
    dropped = of_kind(e, EventKind.ACTION_DROPPED)
    assert [(x.player, x.card) for x in dropped] == [(0, F)]
    assert not of_kind(e, EventKind.FREEZE)
    assert e.round_scores == [(0, 15)]


def test_legacy_ruleset_plays_pending_actions_even_after_a_bust():
    """seeds/001: 'Even if the player busts, they then choose an active player' (legacy)."""
    e = stacked_engine(
        [Scripted(hits=1, targets=[0]), Scripted(hits=1)], [5, 6, F3, F, 5, 9], ruleset="legacy"
    )
    e.play_round()
    fr = of_kind(e, EventKind.FREEZE)
    assert [(x.player, x.value) for x in fr] == [(1, 6)]
    assert e.round_scores == [(0, 6)]


def test_immediate_ruleset_resolves_actions_at_once_and_continues():
    """seeds/002's simulator: an action flipped in a Flip Three resolves at once, then the flips go on."""
    e = stacked_engine(
        [Scripted(hits=1, targets=[0, 1]), Scripted()], [5, 6, F3, F, 2, 3], ruleset="immediate"
    )
    e.play_round()
    kinds = [(x.kind, x.player) for x in events(e)]
    freeze_at = kinds.index((EventKind.FREEZE, 1))
    draw2_at = [i for i, x in enumerate(events(e)) if x.kind == EventKind.DRAW and x.card == 2][0]
    assert freeze_at < draw2_at
    assert e.round_scores == [(10, 6)]


# The deck for the chained Flip Three: seat 0 draws a Flip Three (A) and gives it to itself; in A
# it flips a Flip Three (B) and a Freeze (both set aside, in that order) and a 2; it then plays B
# on itself and busts on B's first card, a second 5. Seat 1 would go on to 6 + 7 + 8 = 21.
CHAIN = [5, 6, F3, F3, F, 2, 5, 7, 8]


@pytest.mark.parametrize("engine", ["reference", "kernel"])
@pytest.mark.parametrize(
    "ruleset, freeze, scores",
    [
        ("3.1", "dropped", (0, 21)),
        ("legacy", "played", (0, 6)),
        ("immediate", "played", (0, 6)),
    ],
)
def test_rulebook_chained_flip_three_a_bust_in_a_set_aside_flip_three_drops_what_waits(
    engine, ruleset, freeze, scores
):
    """seeds/000: a Freeze or Flip Three set aside in a Flip Three 'is used only if the player
    has not busted', checked before each set-aside card: the Flip Three played first busts its
    player, so the Freeze set aside after it is dropped (3.1). legacy still plays it (on the
    only active seat, 1, frozen at 6); immediate plays each at once (B first, then the Freeze
    inside B freezes seat 1) so seat 0 busts inside B."""
    evs, got = play_stacked_round(engine, "sum:20,sum:20", CHAIN, ruleset=ruleset)
    assert got == [scores]
    bust = [(x.player, x.card) for x in evs if x.kind == EventKind.BUST]
    assert bust == [(0, 5)]
    played = [(x.player, x.card, x.target) for x in evs if x.kind == EventKind.ACTION_PLAYED]
    dropped = [(x.player, x.card) for x in evs if x.kind == EventKind.ACTION_DROPPED]
    frozen = [(x.player, x.value) for x in evs if x.kind == EventKind.FREEZE]
    assert played[:2] == [(0, F3, 0), (0, F3, 0)]  # A, then B, each on seat 0 itself
    if freeze == "dropped":
        assert dropped == [(0, F)] and frozen == [] and len(played) == 2
    else:
        assert dropped == [] and frozen == [(1, 6)] and played[2] == (0, F, 1)


def test_faq_freeze_in_your_own_flip_three_waits_for_all_three_cards():
    """FAQ: finish all three cards first, then freeze (yourself, if you choose), unless busted."""
    e = stacked_engine([Scripted(hits=1, targets=[0, 0]), Scripted()], [5, 6, F3, F, 2, 3])
    e.play_round()
    seq = [
        (x.kind, x.card) for x in events(e) if x.kind in (EventKind.DRAW, EventKind.ACTION_PLAYED)
    ]
    assert seq[-4:] == [
        (EventKind.DRAW, F),
        (EventKind.DRAW, 2),
        (EventKind.DRAW, 3),
        (EventKind.ACTION_PLAYED, F),
    ]
    assert of_kind(e, EventKind.FREEZE)[0].player == 0
    assert e.round_scores == [(10, 6)]


def test_faq_second_chance_in_flip_three_saves_at_once_and_the_duplicate_counts():
    """FAQ: a Second Chance revealed in a Flip Three can be used against a later duplicate in it;
    the Flip Three continues and the cancelled duplicate counts as one of the three."""
    e = stacked_engine([Scripted(hits=1, targets=[0]), Scripted(hits=1)], [5, 6, F3, SC, 5, 9, 10])
    e.play_round()
    assert draws(e)[2:] == [
        (0, F3, HIT),
        (0, SC, FLIP3),
        (0, 5, FLIP3),
        (0, 9, FLIP3),
        (1, 10, HIT),
    ]
    used = of_kind(e, EventKind.SC_USED)
    assert [(x.player, x.card) for x in used] == [(0, 5)]
    assert e.round_scores == [(14, 16)]


def test_faq_one_second_chance_at_a_time_spare_goes_to_active_player_without_one_or_is_discarded():
    """FAQ: give a spare Second Chance to an active player without one; if nobody qualifies,
    discard it. A Second Chance dealt in the opening deal is kept."""
    s0 = Scripted(hits=1, recipients=[2])
    e = stacked_engine([s0, Scripted(hits=1), Scripted()], [SC, 4, 5, SC, SC])
    e.play_round()
    assert [x.player for x in of_kind(e, EventKind.SC_KEPT)] == [0, 1]
    assert s0.offered_recipients == [[1, 2]]
    assert [(x.player, x.target) for x in of_kind(e, EventKind.SC_PASSED)] == [(0, 2)]
    # Nobody active lacks one: the spare is discarded at once (value 0); held ones are
    # discarded unused at the end of the round (value 1).
    e = stacked_engine([Scripted(hits=1), Scripted()], [SC, SC, SC])
    e.play_round()
    discarded = [(x.player, x.value) for x in of_kind(e, EventKind.SC_DISCARDED)]
    assert discarded == [(0, 0), (0, 1), (1, 1)]


def test_faq_spare_second_chance_in_flip_three_is_passed_on_at_once():
    """FAQ: a spare Second Chance drawn during a Flip Three is passed on immediately."""
    e = stacked_engine([Scripted(hits=1, targets=[0]), Scripted()], [SC, 6, F3, SC, 2, 3], dealer=1)
    e.play_round()
    ev = [(x.kind, x.player, x.card) for x in events(e)]
    i_pass = ev.index((EventKind.SC_PASSED, 0, -1))
    i_draw2 = ev.index((EventKind.DRAW, 0, 2))
    assert i_pass < i_draw2


def test_faq_second_chance_save_ends_the_turn():
    """FAQ: the Second Chance only cancels that bust; the Hit is used up and play passes on."""
    e = stacked_engine([Scripted(hits=3), Scripted(hits=2)], [5, 6, SC, 7, 5, 8, 9])
    e.play_round()
    assert draws(e)[4:] == [(0, 5, HIT), (1, 8, HIT), (0, 9, HIT)]
    assert e.table.status[0] != BUSTED
    assert e.round_scores == [(14, 21)]


def test_faq_second_chance_does_not_cancel_a_freeze_and_unused_ones_are_discarded():
    """FAQ: a Second Chance cannot cancel a Freeze; unused ones are discarded at round end."""
    e = stacked_engine([Scripted(hits=1), Scripted(hits=1, targets=[0])], [SC, 6, 5, F])
    e.play_round()
    assert [(x.player, x.value) for x in of_kind(e, EventKind.FREEZE)] == [(0, 5)]
    assert (0, 1) in [(x.player, x.value) for x in of_kind(e, EventKind.SC_DISCARDED)]


def test_faq_freeze_banks_points_including_modifiers_right_after_the_first_card():
    """FAQ: frozen right after your first card, you bank what you hold, modifiers included."""
    e = stacked_engine([Scripted(), Scripted(targets=[0])], [P4, F, 3])
    e.play_round()
    assert [(x.player, x.value) for x in of_kind(e, EventKind.FREEZE)] == [(0, 4)]
    assert e.round_scores == [(4, 3)]


def test_rulebook_scoring_examples():
    """seeds/000: 3, 8, 11 with +4 scores 26; with x2 instead, 44. seeds/002: 5 + 7 with x2 and
    +10 is 34. An x2 alone scores 0."""
    for cards, score in (
        ([3, 8, 11, P4], 26),
        ([3, 8, 11, X2], 44),
        ([5, 7, X2, P10], 34),
        ([X2], 0),
    ):
        e = stacked_engine([Scripted(hits=len(cards) - 1)], cards)
        e.play_round()
        assert e.round_scores == [(score,)], cards


def test_faq_flip7_ends_the_round_at_once_mid_flip_three_leaving_pending_actions_unresolved():
    """FAQ: a Flip 7 ends the round at once, even mid-Flip-Three; only the flipper earns the
    bonus; a pending Freeze stays unresolved; no eighth card; others score what they show."""
    s0 = Scripted(hits=6)
    e = stacked_engine([s0, Scripted()], [1, 9, 2, 3, 4, 5, 6, F3, F, 7, 8, 10])
    e.play_round()
    assert draws(e)[-3:] == [(0, F3, HIT), (0, F, FLIP3), (0, 7, FLIP3)]
    assert [x.player for x in of_kind(e, EventKind.FLIP7)] == [0]
    resolved = of_kind(e, EventKind.ACTION_PLAYED, EventKind.ACTION_DROPPED, EventKind.FREEZE)
    assert [(x.kind, x.card) for x in resolved] == [(EventKind.ACTION_PLAYED, F3)]
    assert of_kind(e, EventKind.ROUND_END)[0].value == 1
    assert e.round_scores == [(1 + 2 + 3 + 4 + 5 + 6 + 7 + 15, 9)]


def test_faq_after_a_flip7_everyone_else_scores_what_they_show_unless_they_busted():
    """FAQ: "Everyone else scores the points in front of them unless they already busted": seat
    1 busted before seat 0's Flip 7 scores 0, seat 2 who stayed scores its 10."""
    e = stacked_engine(
        [Scripted(hits=6), Scripted(hits=1), Scripted()], [1, 9, 10, 2, 9, 3, 4, 5, 6, 7]
    )
    e.play_round()
    assert [(x.player, x.card) for x in of_kind(e, EventKind.BUST)] == [(1, 9)]
    assert [x.player for x in of_kind(e, EventKind.FLIP7)] == [0]
    assert e.round_scores == [(1 + 2 + 3 + 4 + 5 + 6 + 7 + 15, 0, 10)]


def test_faq_flip7_bonus_is_added_after_x2_and_modifiers():
    """FAQ: x2 doubles only the numbers; then +N; then the 15-point Flip 7 bonus."""
    e = stacked_engine([Scripted(hits=9)], [0, 1, X2, 2, P4, 3, 4, 5, 6, 9])
    e.play_round()
    assert e.round_scores == [((0 + 1 + 2 + 3 + 4 + 5 + 6) * 2 + 4 + 15,)]


def test_rulebook_bonus_and_target_are_settable():
    """The Flip 7 bonus comes from the ruleset."""
    e = stacked_engine([Scripted(hits=6)], [0, 1, 2, 3, 4, 5, 6], ruleset="3.1(bonus=20)")
    e.play_round()
    assert e.round_scores == [(21 + 20,)]


def test_faq_reshuffle_only_when_draw_pile_is_empty_and_cards_in_front_stay_out():
    """FAQ: the discard pile is reshuffled only when the draw pile runs out; cards in front of
    players (busted ones included) stay out of the reshuffle."""
    e = stacked_engine([Scripted(hits=2), Scripted(hits=1)], [5, 6, 7, 6])
    # The stacked cards are the whole draw pile; the other 90 cards wait in the discard pile.
    e.play_round()
    reshuffles = of_kind(e, EventKind.RESHUFFLE)
    assert [x.value for x in reshuffles] == [90]
    assert e.table.status[1] == BUSTED
    # After the round all 94 cards are accounted for: draw + discard (nothing in front).
    assert len(e.draw_pile) + len(e.discard_pile) == 94


def test_rulebook_cards_of_a_round_are_set_aside_not_shuffled_back():
    """Rulebook: between rounds the cards go to the discard pile; the deck is not reshuffled."""
    e = stacked_engine([Scripted(hits=1), Scripted(hits=1)], [5, 6, 7, 8, 9, 10, 11, 12])
    e.play_round()
    assert sorted(e.discard_pile[-4:]) == [5, 6, 7, 8]
    assert e.draw_pile[-4:] == [12, 11, 10, 9]
    assert not of_kind(e, EventKind.RESHUFFLE)
    assert e.dealer == 0  # the deck passed left: seat 0 deals the next round


def test_faq_reaching_the_target_only_triggers_the_end_and_the_top_total_wins():
    """FAQ: crossing 200 ends the game after the round; the most points wins, who may not be
    the first to cross."""
    e = stacked_engine([Scripted(), Scripted(hits=1)], [10, 12, 11])
    e.table.totals[:] = [195, 190]
    result = e.run()
    assert result.totals == (205, 213)
    assert result.winner == 1
    assert result.rounds == 1


def test_faq_a_tie_on_top_plays_more_rounds():
    """FAQ: if the top score is tied, everyone plays more rounds until there is one winner."""
    e = stacked_engine([Scripted(), Scripted()], [5, 5, 3, 4])
    e.table.totals[:] = [195, 195]
    result = e.run()
    assert result.rounds == 2
    assert result.totals == (204, 203)
    assert result.winner == 0


def test_rulebook_solo_challenge_plays_until_the_target():
    """Rulebook: alone, you count the rounds it takes to reach 200."""
    from flip7.engine import play_game
    from flip7.policies import parse_policy

    result = play_game(parse_ruleset("3.1"), [parse_policy("sum:20")], seed=3)
    assert result.winner == 0
    assert result.totals[0] >= 200
    assert result.rounds == len(result.round_scores) > 1


def test_rulebook_second_deck_past_18_players():
    """Rulebook: with more than 18 players, add a second deck."""
    r = parse_ruleset("3.1")
    assert decks_for(18, r).size == 94
    assert decks_for(19, r).size == 188
