"""The one English text of a logged event: what `flip7 watch`, `play`, `replay` and the
dashboard's replay all print, from an event's plain fields (its kind's name as the lake's
`kind_name` spells it, seat, card, target, value). The rules core (flip7.events.Event.describe)
and the dashboard (which imports nothing of the rules core) both call `describe`.
"""

from __future__ import annotations

from collections.abc import Callable

#: How a card was drawn, by a draw's value (flip7.events.DrawHow).
DRAW_HOW = ("deal", "hit", "Flip Three", "Just One More", "Flip Four")
#: Why a round ended, by a round_end's value.
ROUND_ENDS = (
    "nobody active",
    "Flip 7",
    "no cards left",
    "stopped by the reshuffle safety cap",
)
#: flip7.cards.Card.N0 and Card.UNLUCKY_7 (Vengeance's own card ids start there); tests hold
#: them equal.
ZERO_CARD = 0
FIRST_VENGEANCE_CARD = 23
_NAMES_A_CARD = frozenset(
    (
        "draw",
        "action_played",
        "action_deferred",
        "action_dropped",
        "sc_used",
        "bust",
        "modifier_given",
        "card_moved",
        "card_discarded",
    )
)


def describe(
    kind: str,
    p: int,
    c: int,
    t: int,
    v: int,
    *,
    who: Callable[[int], str],
    label: Callable[[int], str],
    you: int | None = None,
    vengeance: bool = False,
) -> str | None:
    """One line of English for an event, e.g. 'P2 draws 7 (hit)'; None for a kind it does not
    know. `who(seat)` names a seat and `label(card)` a card; seat `you` reads in the second
    person ('you draw 7 (hit)'); `vengeance` (a With a Vengeance game) names the 0 The Zero
    and the draw that sets cards aside a Flip Four."""

    def does(s: int, verb: str, verb_you: str) -> str:
        return "you " + verb_you if s == you else f"{who(s)} {verb}"

    def name(s: int) -> str:
        return "you" if s == you else who(s)

    def whose(s: int) -> str:
        return "your" if s == you else f"{who(s)}'s"

    if kind == "bust" and c < 0:  # Vengeance: a Steal or Swap left two of a number in the row
        return f"{does(p, 'busts', 'bust')}: a card moved in duplicates a number"
    card = ""  # the card's label, only for the kinds that name one (no card: no label)
    if kind in _NAMES_A_CARD:
        card = "The Zero" if vengeance and c == ZERO_CARD else label(c)
    if kind == "round_start":
        return f"-- round {v}, you deal --" if p == you else f"-- round {v}, dealer {who(p)} --"
    if kind == "draw":
        return f"{does(p, 'draws', 'draw')} {card} ({DRAW_HOW[v]})"
    if kind == "hit":
        zero = " (The Zero: you must hit)" if p == you else " (holds The Zero, must hit)"
        return does(p, "hits", "hit") + ["", " (no cards, must hit)", zero][v]
    if kind == "action_played":
        on = "" if t < 0 else " on yourself" if t == p == you else f" on {name(t)}"
        return f"{does(p, 'plays', 'play')} {card}{on}"
    if kind == "action_deferred":
        # Vengeance has no Flip Three; its own cards say so even where the caller does not.
        flip = "Flip Four" if vengeance or c >= FIRST_VENGEANCE_CARD else "Flip Three"
        return f"{does(p, 'sets', 'set')} {card} aside until the {flip} is done"
    if kind == "modifier_given" and t == p:
        return f"{does(p, 'keeps', 'keep')} {card}"
    if kind == "card_moved":
        if v == 0:  # Steal: the receiver chose
            return f"{does(t, 'steals', 'steal')} {card} from {name(p)}"
        return f"{card} goes from {name(p)} to {name(t)} (Swap)"
    if kind == "card_discarded":
        why = "Unlucky 7" if v else "your Discard" if t == you else f"Discard by {name(t)}"
        return f"{does(p, 'loses', 'lose')} {card} ({why})"
    sc_why = "unused at round end" if v else "nobody can take it"
    texts = {
        "stay": lambda: f"{does(p, 'stays', 'stay')} with {v}",
        "action_dropped": lambda: f"{whose(p)} {card} is dropped",
        "freeze": lambda: f"{does(p, 'is', 'are')} frozen with {v}",
        "sc_kept": lambda: f"{does(p, 'keeps', 'keep')} a Second Chance",
        "sc_passed": lambda: f"{does(p, 'passes', 'pass')} a spare Second Chance to {name(t)}",
        "sc_discarded": lambda: f"{does(p, 'discards', 'discard')} a Second Chance ({sc_why})",
        "sc_used": lambda: f"{does(p, 'uses', 'use')} a Second Chance on a duplicate {card}",
        "bust": lambda: f"{does(p, 'busts', 'bust')} on a duplicate {card}",
        "flip7": lambda: f"{does(p, 'FLIPS', 'FLIP')} 7!" + (f" (+{v})" if v else ""),
        "reshuffle": lambda: f"the discard pile ({v} cards) is reshuffled into a new deck",
        "round_score": lambda: f"{does(p, 'scores', 'score')} {v}",
        "round_end": lambda: (
            "round over: " + (ROUND_ENDS[v] if 0 <= v < len(ROUND_ENDS) else str(v))
        ),
        "round_cap": lambda: f"game stopped after {v} rounds (max_rounds)",
        "game_end": lambda: f"{does(p, 'wins', 'win')} with {v}",
        "modifier_given": lambda: f"{does(p, 'gives', 'give')} {card} to {name(t)}",
        "forced_stay": lambda: f"{does(p, 'must', 'must')} stay with {v} (Just One More)",
        "flip7_penalty": lambda: (
            f"{does(p, 'gives', 'give')} -{v} to {name(t)} instead of taking the bonus"
        ),
    }
    text = texts.get(kind)
    return None if text is None else text()
