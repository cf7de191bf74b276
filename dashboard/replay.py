"""Stepping through one logged game: steps, sentences and the table as it stands.

Pure functions over a game's timeline (`warehouse.queries.game_timeline`: one row per event in
`seq` order with `round`, `kind_name`, `player`, `player_policy`, `card`, `card_label`,
`target`, `value`, `draw_how`). Event texts are word for word what `flip7 watch` prints
(both call `lakecontract.events.describe`), so the dashboard and the CLI tell a game alike. A step
is one card leaving the deck plus everything that follows it up to the next card (decisions,
actions and their targets, busts, scores), so stepping goes card by card. The board replays those events into each seat's line of cards: display
bookkeeping of who holds what, not a new statistic (scores and totals are the logged ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lakecontract.events import describe as describe_event

Row = dict[str, Any]
STATUS = {"stay": "stayed", "forced_stay": "stayed", "freeze": "frozen", "bust": "busted"}


def steps(timeline: pd.DataFrame) -> list[int]:
    """The last row index of each step: before the first card, then one step per card drawn."""
    kinds = timeline["kind_name"].tolist()
    draws = [i for i, k in enumerate(kinds) if k == "draw"]
    if not kinds:
        return []
    ends = [d - 1 for d in draws if d > 0] + [len(kinds) - 1]
    return sorted(set(ends))


def round_starts(timeline: pd.DataFrame, ends: list[int]) -> dict[int, int]:
    """{round: the first step showing that round's first card}."""
    rounds = timeline["round"].tolist()
    kinds = timeline["kind_name"].tolist()
    out: dict[int, int] = {}
    for step, end in enumerate(ends):
        r = int(rounds[end])
        if r not in out and "draw" in kinds[: end + 1] and kinds[end] != "round_start":
            out[r] = step
    return out


def _who(seat: Any, policy: Any) -> str:
    if seat is None or pd.isna(seat) or int(seat) < 0:
        return "?"
    return f"seat {int(seat)}" + (f" ({policy})" if isinstance(policy, str) and policy else "")


def _card(row: Row) -> str:
    label = row.get("card_label")
    if isinstance(label, str) and label:
        return label
    card = row.get("card")
    return f"card #{int(card)}" if card is not None and not pd.isna(card) else "a card"


def _int(value: Any, missing: int = -1) -> int:
    """A timeline cell as an int; NULL (NaN in pandas) as `missing` (the log's "not used")."""
    return missing if value is None or pd.isna(value) else int(value)


def is_vengeance(game: Row) -> bool:
    """Whether a `games` row is a With a Vengeance game (its variant, e.g. 'vengeance(brutal=1)')."""
    return str(game.get("variant", "classic")).startswith("vengeance")


def describe(row: Row, vengeance: bool = False) -> str:
    """One line of English for an event row, e.g. 'seat 2 (ev) draws 7 (hit)': word for word
    the text `flip7 watch` prints (lakecontract.events.describe, which flip7.events.Event.describe
    calls too), with seats named with their policy; a kind it does not know as 'KIND (seat)'.
    `vengeance`: the row is from a With a Vengeance game."""
    k = str(row["kind_name"])
    p, t = _int(row.get("player")), _int(row.get("target"))
    policies = {t: row.get("target_policy"), p: row.get("player_policy")}
    text = describe_event(
        k,
        p,
        _int(row.get("card")),
        t,
        _int(row.get("value"), 0),
        who=lambda seat: _who(seat, policies.get(seat)),
        label=lambda _card_id: _card(row),
        vengeance=vengeance,
    )
    return f"{k} ({_who(p, row.get('player_policy'))})" if text is None else text


@dataclass
class Seat:
    """One seat as the table shows it at a step: this round's cards, status and scores."""

    seat: int
    policy: str
    cards: list[str] = field(default_factory=list)
    status: str = "active"
    round_score: int | None = None
    total: int = 0  # game total before this round, plus this round's score once logged


def board(timeline: pd.DataFrame, seats: list[str], end: int) -> list[Seat]:
    """Each seat's line of cards, status and scores after row `end` of the timeline.

    `seats` holds the policy of each seat, in seat order (the game's line-up).
    """
    table = [Seat(i, p) for i, p in enumerate(seats)]
    rows: list[Row] = timeline.iloc[: end + 1].to_dict("records")
    for row in rows:
        k = row["kind_name"]
        p = _seat(row.get("player"), len(table))
        t = _seat(row.get("target"), len(table))
        card = _card(row)
        v = int(row["value"]) if not pd.isna(row.get("value")) else 0
        if k == "round_start":
            for s in table:
                s.cards, s.status, s.round_score = [], "active", None
        elif k == "draw" and p is not None:
            table[p].cards.append(card)
        elif k == "action_played" and p is not None:
            _take(
                table[p].cards, card, f"{card} → seat {t}" if t is not None else f"{card} (played)"
            )
        elif k in ("sc_passed", "modifier_given", "card_moved") and p is not None:
            moved = "Second Chance" if k == "sc_passed" else card
            if _take(table[p].cards, moved, None) and t is not None:
                table[t].cards.append(moved)
        elif k == "sc_used" and p is not None:  # the duplicate and the Second Chance go
            _take(table[p].cards, card, None)
            _take(table[p].cards, "Second Chance", None)
        elif k == "sc_discarded" and p is not None:
            _take(table[p].cards, "Second Chance", None)
        elif k == "card_discarded" and p is not None:
            _take(table[p].cards, card, None)
        elif k in STATUS and p is not None:
            table[p].status = STATUS[k]
        elif k == "flip7" and p is not None:
            table[p].status = "Flip 7"
        elif k == "round_score" and p is not None:
            table[p].round_score = v
            table[p].total += v
    return table


def _seat(value: Any, n: int) -> int | None:
    if value is None or pd.isna(value):
        return None
    seat = int(value)
    return seat if 0 <= seat < n else None


def _take(cards: list[str], label: str, replace: str | None) -> bool:
    """Remove (or relabel) the last `label` in a line of cards; False when it is not there."""
    for i in range(len(cards) - 1, -1, -1):
        if cards[i] == label:
            if replace is None:
                del cards[i]
            else:
                cards[i] = replace
            return True
    return False


#: A card's kind -> the colour of its chip (Streamlit's markdown badges, no raw HTML).
KIND_COLOURS = {"number": "blue", "modifier": "green", "action": "orange", "special": "violet"}
ACTIONS = frozenset(
    {"Freeze", "Flip Three", "Second Chance", "Just One More", "Flip Four", "Steal", "Swap",
     "Discard"}
)  # fmt: skip
SPECIALS = frozenset({"Unlucky 7", "Lucky 13"})  # With a Vengeance's two special cards


def card_kind(label: str) -> str:
    """number, modifier (+2, x2, /2, -4 ...), action (Freeze, Steal ...) or special (Unlucky 7,
    Lucky 13), from a card label as the board holds it ("Freeze → seat 2" is an action)."""
    base = label.split(" → ")[0].removesuffix(" (played)")
    if base.isdigit():
        return "number"
    if base in SPECIALS:
        return "special"
    if base in ACTIONS:
        return "action"
    if base[:1] in "+x/-" and base[1:].isdigit():
        return "modifier"
    return "action" if base.startswith("card #") else "special"


def chip(label: str) -> str:
    """One card as a coloured badge in Streamlit markdown, e.g. ':blue-badge[7]'."""
    text = label.replace("[", "(").replace("]", ")")
    return f":{KIND_COLOURS[card_kind(label)]}-badge[{text}]"


def seat_line(seat: Seat) -> str:
    """One seat of the board as markdown: who, status, scores, then its cards as chips."""
    score = "–" if seat.round_score is None else str(seat.round_score)
    cards = " ".join(chip(c) for c in seat.cards) or "*no cards*"
    return (
        f"**seat {seat.seat}** · {seat.policy} · *{seat.status}* · round score {score} · "
        f"game total **{seat.total}**  \n{cards}"
    )


def legend() -> str:
    """The chips' colours, as a one-line key."""
    return " ".join(f":{colour}-badge[{kind}]" for kind, colour in KIND_COLOURS.items())


def totals_by_round(
    timeline: pd.DataFrame, seats: list[str], current: int | None = None
) -> pd.DataFrame:
    """Each seat's game total after each round (running sum of its logged round scores);
    `current` marks the rows of the round on screen."""
    scores = timeline[timeline["kind_name"] == "round_score"]
    totals = [0] * len(seats)
    out: list[Row] = [
        {"round": 0, "seat": i, "seat_label": f"seat {i} ({p})", "total": 0}
        for i, p in enumerate(seats)
    ]
    for row in scores.to_dict("records"):
        seat = int(row["player"])
        totals[seat] += int(row["value"])
        out.append(
            {
                "round": int(row["round"]),
                "seat": seat,
                "seat_label": f"seat {seat} ({seats[seat]})",
                "total": totals[seat],
            }
        )
    frame = pd.DataFrame(out)
    if current is not None:
        frame["current"] = frame["round"] == current
    return frame


ROW_PX = 35  # st.dataframe's row height (and its header's), in px


def table_height(rows: int, cap: int = 320) -> int:
    """A table's height in px: all its rows and the header, up to `cap` (then it scrolls), so a
    short table ends with its last row instead of blank filler rows."""
    return min(cap, ROW_PX * (rows + 1) + 3)


def log_frame(timeline: pd.DataFrame, vengeance: bool = False) -> pd.DataFrame:
    """The events as a readable log, newest first: round, sequence number and a sentence."""
    rows = timeline.to_dict("records")[::-1]
    return pd.DataFrame(
        {
            "round": [int(r["round"]) for r in rows],
            "seq": [int(r["seq"]) for r in rows],
            "event": [describe(r, vengeance) for r in rows],
        }
    )


def lineup(game: Row) -> list[str]:
    """The policy of each seat, in seat order, from a `games` row's line-up as played."""
    return str(game["lineup"]).split(",")


def game_label(game: Row) -> str:
    """How a game appears in the picker."""
    won = (
        f"seat {int(game['winner_seat'])} ({game['winner_policy']}) won with "
        f"{int(game['winner_total'])}"
        if not pd.isna(game.get("winner_seat"))
        else "no winner"
    )
    return f"game {int(game['game'])} · {game['lineup']} · {won} in {int(game['rounds'])} rounds"
