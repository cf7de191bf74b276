"""Safety stops: rounds and games that the rules alone would never end."""

from __future__ import annotations

from flip7.cards import Card
from flip7.engine import END_NO_CARDS, END_RESHUFFLE_CAP, MAX_RESHUFFLES_PER_ROUND, Engine
from flip7.events import EventKind, EventLog
from flip7.observation import ACTIVE
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset

# Found by the kernel's differential test: 20 seats on one deck, many never stay; every card
# but one spare Second Chance ends up in front of someone, and that card would cycle forever.
STUCK_SEED = 7508186784583419233
STUCK_RULESET = "3.1(players_per_deck=100,max_rounds=20)"
STUCK_LINEUP = (
    "sum:30,count:7,sum:30,ev,bust:1,ev,sum:200,sum:30,ev,count:7,sum:200,count:7,ev,ev,ev,"
    "sum:30,sum:200,count:7,sum:200,bust:1"
)
# Found by a kernel search over 20,000 games of this 18-seat line-up (one deck): in round 1 two
# seats that never stay both show an 11, the last 11 and two Second Chances are left to draw
# and the third Second Chance is held; every order of the draws hands a Second Chance to
# whoever is about to draw the 11, so nobody can ever bust and the round cycles forever.
CYCLE_SEED = 3755703039390475833
CYCLE_LINEUP = (
    "sum:30,count:7,sum:30,ev,bust:1,ev,sum:200,sum:30,ev,count:7,sum:200,count:7,ev,ev,ev,"
    "sum:30,sum:200,count:7"
)


def test_a_spare_second_chance_nobody_can_keep_ends_the_round_when_it_is_all_that_is_left():
    """A round ends 'no cards left' exactly when the draw pile is empty and the discard pile
    is empty or holds only Second Chances with every active player holding one; the game then
    finishes."""
    sc = int(Card.SECOND_CHANCE)
    at_end: list[tuple[list[int], list[int], bool]] = []

    def hook(engine: Engine) -> None:
        kind, value = engine.events[-5], engine.events[-1]
        if kind == EventKind.ROUND_END and value == END_NO_CARDS:
            t = engine.table
            held = all(t.has_sc[p] for p in range(engine.n) if t.status[p] == ACTIVE)
            at_end.append((list(engine.draw_pile), list(engine.discard_pile), held))

    ruleset = parse_ruleset(STUCK_RULESET)
    result = Engine(ruleset, parse_policies(STUCK_LINEUP), STUCK_SEED, on_event=hook).run()
    assert at_end, "some round should end with no card left that can change it"
    for draw_pile, discard_pile, held in at_end:
        assert draw_pile == []
        assert discard_pile == [] or (set(discard_pile) == {sc} and held)
    assert result.rounds <= 20 and not result.capped


def test_a_round_that_cycles_forever_ends_at_the_reshuffle_cap_and_says_so():
    """The last resort: a round still going after MAX_RESHUFFLES_PER_ROUND reshuffles ends as it
    stands, with ROUND_END value END_RESHUFFLE_CAP (3), and the game goes on; the kernel agrees."""
    lineup = parse_policies(CYCLE_LINEUP)
    result = Engine(parse_ruleset("3.1"), lineup, CYCLE_SEED).run()
    events = list(EventLog(result.events))
    reshuffles = 0
    for e in events:
        if e.kind == EventKind.RESHUFFLE:
            reshuffles += 1
        if e.kind == EventKind.ROUND_END:
            assert e.value == END_RESHUFFLE_CAP
            break
    assert reshuffles == MAX_RESHUFFLES_PER_ROUND
    assert result.rounds > 1 and not result.capped
    from flip7 import kernel

    assert kernel.play_game(parse_ruleset("3.1"), lineup, CYCLE_SEED) == result


def test_max_rounds_caps_a_game_nobody_can_win():
    """max_rounds stops a game whose seats always bust; the result says it was capped."""
    result = Engine(parse_ruleset("3.1(max_rounds=5)"), parse_policies("sum:200,sum:200"), 3).run()
    assert result.capped and result.rounds == 5
