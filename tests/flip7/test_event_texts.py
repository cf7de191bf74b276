"""Event texts (flip7.events.Event.describe): every kind, in both variants, names its cards,
speaks to you in the second person and of the others in the third, and never shows the log's
"not used" -1; the dashboard and `flip7 replay` print the same texts."""

from __future__ import annotations

import re

import pytest

from flip7.cards import Card
from flip7.events import Event, EventKind

K = EventKind
#: One event of every kind per variant, seat 0 acting and seat 1 on the receiving end where the
#: kind has a receiver; the fields as the engines write them (flip7/events.py's table).
CLASSIC = [
    Event(K.ROUND_START, 0, -1, -1, 2),
    Event(K.DRAW, 0, 7, -1, 1),
    Event(K.DRAW, 0, 0, -1, 2),
    Event(K.HIT, 0, -1, -1, 0),
    Event(K.HIT, 0, -1, -1, 1),
    Event(K.STAY, 0, -1, -1, 12),
    Event(K.ACTION_PLAYED, 0, Card.FREEZE, 1, -1),
    Event(K.ACTION_PLAYED, 0, Card.FLIP_THREE, 0, -1),
    Event(K.ACTION_DEFERRED, 0, Card.FREEZE, -1, -1),
    Event(K.ACTION_DROPPED, 0, Card.FLIP_THREE, -1, -1),
    Event(K.FREEZE, 0, -1, -1, 10),
    Event(K.SC_KEPT, 0, -1, -1, -1),
    Event(K.SC_PASSED, 0, -1, 1, -1),
    Event(K.SC_DISCARDED, 0, -1, -1, 0),
    Event(K.SC_DISCARDED, 0, -1, -1, 1),
    Event(K.SC_USED, 0, 5, -1, -1),
    Event(K.BUST, 0, 5, -1, -1),
    Event(K.FLIP7, 0, -1, -1, 15),
    Event(K.RESHUFFLE, -1, -1, -1, 40),
    Event(K.ROUND_SCORE, 0, -1, -1, 20),
    *(Event(K.ROUND_END, -1, -1, -1, v) for v in range(4)),
    Event(K.ROUND_CAP, -1, -1, -1, 1000),
    Event(K.GAME_END, 0, -1, -1, 203),
]
VENGEANCE = [
    Event(K.ROUND_START, 0, -1, -1, 2),
    Event(K.DRAW, 0, 0, -1, 4),
    Event(K.DRAW, 0, Card.UNLUCKY_7, -1, 3),
    Event(K.DRAW, 0, Card.MINUS4, -1, 0),
    Event(K.HIT, 0, -1, -1, 2),
    Event(K.STAY, 0, -1, -1, 12),
    Event(K.ACTION_PLAYED, 0, Card.FLIP_FOUR, 1, -1),
    Event(K.ACTION_PLAYED, 0, Card.STEAL, -1, -1),
    Event(K.ACTION_DEFERRED, 0, Card.MINUS4, -1, -1),
    Event(K.ACTION_DEFERRED, 0, Card.FREEZE, -1, -1),  # a custom deck's Freeze in a Flip Four
    Event(K.ACTION_DROPPED, 0, Card.DIV2, -1, -1),
    Event(K.BUST, 0, 0, -1, -1),
    Event(K.BUST, 0, Card.LUCKY_13, -1, -1),
    Event(K.BUST, 0, -1, -1, -1),  # after a Steal or Swap: no card drawn
    Event(K.FLIP7, 0, -1, -1, 0),
    Event(K.ROUND_SCORE, 0, -1, -1, -7),
    *(Event(K.ROUND_END, -1, -1, -1, v) for v in range(4)),
    Event(K.GAME_END, 0, -1, -1, 203),
    Event(K.MODIFIER_GIVEN, 0, Card.MINUS4, 1, -1),
    Event(K.MODIFIER_GIVEN, 0, Card.DIV2, 0, -1),
    Event(K.CARD_MOVED, 1, 0, 0, 0),
    Event(K.CARD_MOVED, 0, Card.LUCKY_13, 1, 1),
    Event(K.CARD_DISCARDED, 0, 12, 1, 0),
    Event(K.CARD_DISCARDED, 0, 0, -1, 1),
    Event(K.FORCED_STAY, 0, -1, -1, 9),
    Event(K.FLIP7_PENALTY, 0, -1, 1, 15),
]
NAMES = ["P0:ev", "P1:bust:0.25"]
#: The log's "not used" -1 shown as if it were a card or a number ("-15" and "-4" are fine).
NOT_USED = re.compile(r"(?<![\w+/-])-1(?!\d)|None|P-1|\?")
YOU_WRONG = re.compile(
    r"\byou (is|was|has|draws|hits|stays|plays|sets|keeps|passes|discards|uses|busts|FLIPS|"
    r"scores|wins|gives|steals|loses|deals)\b"
)
THEY_WRONG = re.compile(
    r"\bP\d:\S+ (are|were|have|draw|hit|stay|play|set|keep|pass|discard|use|bust|FLIP|score|"
    r"win|give|steal|lose|deal)\b"
)


def test_every_kind_has_an_example_in_each_variant():
    """The lists above cover every EventKind (the Vengeance-only kinds in VENGEANCE)."""
    assert {e.kind for e in CLASSIC} | {e.kind for e in VENGEANCE} == set(EventKind)
    assert {e.kind for e in VENGEANCE} >= {K.MODIFIER_GIVEN, K.CARD_MOVED, K.FORCED_STAY}


@pytest.mark.parametrize(
    ("event", "vengeance"), [(e, False) for e in CLASSIC] + [(e, True) for e in VENGEANCE]
)
def test_texts_name_cards_and_keep_their_grammar(event, vengeance):
    """Seat 0 as you and as a player: no -1, None or unknown seat; 'you are', 'P0:ev is'; the
    second person names no seat 0, the third person no 'you'."""
    for you in (0, -1):
        text = event.describe(NAMES, you=you, vengeance=vengeance)
        assert text and not NOT_USED.search(text), text
        assert not YOU_WRONG.search(text) and not THEY_WRONG.search(text), text
        assert "P0:ev" not in text if you == 0 else not re.search(r"\byour?\b", text), text
        if vengeance:
            assert "Flip Three" not in text, text
            assert event.card != Card.N0 or "The Zero" in text, text


def test_vengeance_names_the_zero_and_flip_four_and_classic_keeps_its_own():
    """The same card ids read by each variant's names."""
    draw_zero = Event(K.DRAW, 0, 0, -1, 2)
    assert draw_zero.describe(NAMES) == "P0:ev draws 0 (Flip Three)"
    assert Event(K.DRAW, 0, 0, -1, 4).describe(NAMES, vengeance=True) == (
        "P0:ev draws The Zero (Flip Four)"
    )
    freeze = Event(K.ACTION_DEFERRED, 0, Card.FREEZE, -1, -1)
    assert freeze.describe(NAMES).endswith("until the Flip Three is done")
    assert freeze.describe(NAMES, vengeance=True).endswith("until the Flip Four is done")
    assert Event(K.BUST, 0, -1, -1, -1).describe(NAMES, you=0, vengeance=True) == (
        "you bust: a card moved in duplicates a number"
    )
    assert Event(K.FREEZE, 0, -1, -1, 12).describe(NAMES, you=0) == "you are frozen with 12"
    assert Event(K.FREEZE, 1, -1, -1, 12).describe(NAMES, you=0) == "P1:bust:0.25 is frozen with 12"


def test_replay_describes_vengeance_events_with_vengeance_names():
    """`flip7 replay`'s account of a differing event: Vengeance names when the game is one."""
    from pipeline.replay import describe_event

    flat = [int(K.DRAW), 0, 0, -1, 4]
    assert describe_event(flat, 0, NAMES, vengeance=True).endswith(
        "P0:ev draws The Zero (Flip Four)"
    )
    assert describe_event(flat, 0, NAMES).endswith("P0:ev draws 0 (Flip Four)")
    assert describe_event(flat, 1, NAMES) == "(none: the stream ended)"
