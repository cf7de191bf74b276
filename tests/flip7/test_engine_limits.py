"""Safety stops: games that the rules alone would never end."""

from __future__ import annotations

from flip7.engine import MAX_RESHUFFLES_PER_ROUND, Engine
from flip7.events import EventKind, EventLog
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


def test_a_spare_second_chance_cannot_cycle_through_reshuffles_forever():
    """The round ends (no cards left) once the draw pile runs out after the round's
    MAX_RESHUFFLES_PER_ROUND reshuffles; the game then finishes."""
    engine = Engine(parse_ruleset(STUCK_RULESET), parse_policies(STUCK_LINEUP), STUCK_SEED)
    result = engine.run()
    events = list(EventLog(result.events))
    ends = [e.value for e in events if e.kind == EventKind.ROUND_END]
    assert 2 in ends  # some round ended with no card left to draw
    per_round = 0
    most = 0
    for e in events:
        if e.kind == EventKind.ROUND_START:
            per_round = 0
        elif e.kind == EventKind.RESHUFFLE:
            per_round += 1
            most = max(most, per_round)
    assert most == MAX_RESHUFFLES_PER_ROUND
    assert result.rounds <= 20


def test_max_rounds_caps_a_game_nobody_can_win():
    """max_rounds stops a game whose seats always bust; the result says it was capped."""
    result = Engine(parse_ruleset("3.1(max_rounds=5)"), parse_policies("sum:200,sum:200"), 3).run()
    assert result.capped and result.rounds == 5
