"""replay.py: steps go card by card and the board follows the logged events."""

from __future__ import annotations

import pandas as pd

from dashboard import replay

# A hand-written two-seat round: seat 1 deals, seat 0 gets a 5, seat 1 a Second Chance then
# a 5, seat 0 hits a 5 and busts, seat 1 passes... (columns as warehouse.queries.game_timeline).
EVENTS = [
    # kind_name, player, card, card_label, target, value, draw_how
    ("round_start", 1, -1, None, -1, 1, None),
    ("draw", 0, 5, "5", -1, 0, "deal"),
    ("draw", 1, 22, "Second Chance", -1, 0, "deal"),
    ("sc_kept", 1, -1, None, -1, 0, None),
    ("draw", 1, 7, "7", -1, 0, "deal"),
    ("hit", 0, -1, None, -1, 0, None),
    ("draw", 0, 5, "5", -1, 1, "hit"),
    ("bust", 0, 5, "5", -1, 0, None),
    ("hit", 1, -1, None, -1, 0, None),
    ("draw", 1, 7, "7", -1, 1, "hit"),
    ("sc_used", 1, 7, "7", -1, 0, None),
    ("stay", 1, -1, None, -1, 7, None),
    ("round_score", 0, -1, None, -1, 0, None),
    ("round_score", 1, -1, None, -1, 7, None),
    ("round_end", -1, -1, None, -1, 0, None),
]


def timeline() -> pd.DataFrame:
    df = pd.DataFrame(
        EVENTS, columns=["kind_name", "player", "card", "card_label", "target", "value", "draw_how"]
    )
    policies = {0: "ev", 1: "bust:0.25"}
    return df.assign(
        seq=range(len(df)),
        round=1,
        player_policy=df["player"].map(policies),
        target_policy=df["target"].map(policies),
    )


def test_steps_go_card_by_card():
    """One step before the first card, then one per card drawn (5 draws -> 6 steps)."""
    ends = replay.steps(timeline())
    assert len(ends) == 1 + 5
    assert ends[0] == 0  # only the round start
    assert ends[-1] == len(EVENTS) - 1


def test_board_follows_draws_second_chances_and_busts():
    """Cards land in the drawer's line; a used Second Chance and its duplicate leave it."""
    tl = timeline()
    ends = replay.steps(tl)
    after_bust = replay.board(tl, ["ev", "bust:0.25"], ends[4])
    assert after_bust[0].cards == ["5", "5"] and after_bust[0].status == "busted"
    assert after_bust[1].cards == ["Second Chance", "7"]
    final = replay.board(tl, ["ev", "bust:0.25"], ends[-1])
    assert final[1].cards == ["7"]  # the Second Chance and the duplicate were discarded
    assert final[1].status == "stayed"
    assert [s.round_score for s in final] == [0, 7] and [s.total for s in final] == [0, 7]


def test_describe_names_seats_policies_and_targets():
    """Sentences name the seat and its policy, the card and how it was drawn."""
    rows = timeline().to_dict("records")
    assert replay.describe(rows[6]) == "seat 0 (ev) draws 5 (hit)"
    assert replay.describe(rows[7]) == "seat 0 (ev) busts on a duplicate 5"
    played = dict(
        rows[6],
        kind_name="action_played",
        card=20,
        card_label="Freeze",
        target=1,
        target_policy="bust:0.25",
    )
    assert replay.describe(played) == "seat 0 (ev) plays Freeze on seat 1 (bust:0.25)"


def _row(e, vengeance: bool) -> dict:
    """An event as a game_timeline row: kind and card by the warehouse's names (labels.sql),
    policies NULL where the log says -1, as the mart's joins give them."""
    from flip7.cards import card_label

    policies = ["ev", "bust:0.25"]
    return {
        "kind_name": e.kind.name.lower(),
        "player": e.player,
        "player_policy": policies[e.player] if e.player >= 0 else None,
        "card": e.card,
        "card_label": card_label(e.card) if e.card >= 0 else None,
        "target": e.target,
        "target_policy": policies[e.target] if e.target >= 0 else None,
        "value": e.value,
    }


def test_describe_is_the_cli_text_for_every_kind_in_both_variants():
    """The dashboard's sentence of every event kind is flip7's (what `flip7 watch` prints), in
    the classic game and in With a Vengeance (The Zero, Flip Four, no -1 after a move)."""
    from tests.flip7.test_event_texts import CLASSIC, VENGEANCE

    names = ["seat 0 (ev)", "seat 1 (bust:0.25)"]
    for events, vengeance in ((CLASSIC, False), (VENGEANCE, True)):
        for e in events:
            want = e.describe(names, vengeance=vengeance)
            assert replay.describe(_row(e, vengeance), vengeance) == want
    zero = _row(VENGEANCE[1], True)  # The Zero drawn by a Flip Four
    assert replay.describe(zero, True) == "seat 0 (ev) draws The Zero (Flip Four)"
    moved = _row(VENGEANCE[13], True)  # a bust after a move: no card
    assert replay.describe(moved, True) == "seat 0 (ev) busts: a card moved in duplicates a number"


def test_vengeance_comes_from_the_game_row():
    """A games row's variant says whether the game is a With a Vengeance one."""
    assert replay.is_vengeance({"variant": "vengeance(deck=alt,brutal=1)"})
    assert not replay.is_vengeance({"variant": "classic"}) and not replay.is_vengeance({})


def test_totals_by_round_start_at_zero_and_mark_the_current_round():
    """The totals chart data: a zero row per seat, then the running totals, current marked."""
    totals = replay.totals_by_round(timeline(), ["ev", "bust:0.25"], current=1)
    assert totals["total"].tolist() == [0, 0, 0, 7]
    assert totals["current"].tolist() == [False, False, True, True]


def test_card_kinds_and_their_chip_colours():
    """Numbers blue, modifiers green, actions orange (also once played on a seat), Vengeance's
    specials violet."""
    from dashboard.replay import card_kind, chip

    assert [card_kind(c) for c in ("0", "7", "13")] == ["number"] * 3
    assert [card_kind(c) for c in ("+2", "x2", "/2", "-10")] == ["modifier"] * 4
    assert [card_kind(c) for c in ("Freeze", "Flip Three", "Steal", "Freeze → seat 2")] == [
        "action"
    ] * 4
    assert [card_kind(c) for c in ("Unlucky 7", "Lucky 13")] == ["special"] * 2
    assert chip("7") == ":blue-badge[7]" and chip("Second Chance") == ":orange-badge[Second Chance]"


def test_seat_line_shows_status_scores_and_cards_as_chips():
    """A seat's line names it, its status and scores, then one chip per card."""
    from dashboard.replay import Seat, seat_line

    line = seat_line(Seat(1, "ev", ["3", "+4", "Unlucky 7"], "stayed", 7, 30))
    assert line.startswith("**seat 1** · ev · *stayed* · round score 7 · game total **30**")
    assert line.endswith(":blue-badge[3] :green-badge[+4] :violet-badge[Unlucky 7]")
    assert "*no cards*" in seat_line(Seat(0, "ev"))


def test_table_height_fits_the_rows_then_scrolls():
    """A short log is as tall as its rows (no blank filler rows); a long one stops at the cap."""
    assert replay.table_height(1) == 2 * replay.ROW_PX + 3
    assert replay.table_height(4) == 5 * replay.ROW_PX + 3
    assert replay.table_height(500) == 320
