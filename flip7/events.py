"""Events: every card that leaves the deck, every decision and every rule consequence.

An event is five small integers `(kind, player, card, target, value)`; -1 means "not used". The
engine appends them to one flat list (no per-event objects); `EventLog` views that buffer as
columns or as readable records. The meaning of each column per kind:

kind            player          card        target      value
ROUND_START     dealer          -           -           round number (1-based)
DRAW            receiver        card        -           how: 0 deal, 1 hit, 2 flip three
HIT             player          -           -           1 if forced (no cards), else 0
STAY            player          -           -           points banked
ACTION_PLAYED   chooser         action      receiver    -
ACTION_DEFERRED player          action      -           -       (set aside during a Flip Three)
ACTION_DROPPED  player          action      -           -       (bust, or nobody active)
FREEZE          frozen player   -           -           points banked
SC_KEPT         player          -           -           -
SC_PASSED       giver           -           receiver    -
SC_DISCARDED    player          -           -           0 spare nobody could take, 1 round end
SC_USED         player          duplicate   -           -
BUST            player          duplicate   -           -
FLIP7           player          -           -           bonus
RESHUFFLE       -               -           -           cards shuffled into the new draw pile
ROUND_SCORE     player          -           -           round score
ROUND_END       -               -           -           0 nobody active, 1 Flip 7, 2 no cards left
                                                            (or none that can change a row),
                                                            3 reshuffle safety cap
ROUND_CAP       -               -           -           rounds played (game stopped by max_rounds)
GAME_END        winner          -           -           winner's total
-- "With a Vengeance" only --
MODIFIER_GIVEN  giver           modifier    receiver    -
CARD_MOVED      from            card        to          0 Steal, 1 Swap
CARD_DISCARDED  owner           card        chooser     0 Discard action, 1 Unlucky 7 wipe
FORCED_STAY     player          -           -           points banked (after Just One More)
FLIP7_PENALTY   flipper         -           victim      points taken (Brutal mode)

DRAW's `how` is also 3 for Just One More and 4 for Flip Four. In Vengeance, ACTION_PLAYED's
receiver is -1 for Steal, Swap and Discard (the moves say who was affected).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flip7.cards import PLUS_VALUE, Card, card_label, face_value, is_number
from lakecontract.events import describe as describe_event

FIELDS = ("kind", "player", "card", "target", "value")
WIDTH = len(FIELDS)

#: An event packed into one int64 (how the Parquet event log stores it: one column instead of
#: five is 3x cheaper to encode). Bits 0-4 kind, 5-10 player + 1, 11-16 card + 1, 17-22
#: target + 1 (-1, "not used", packs as 0), 23-54 value (a signed 32-bit integer: `code >> 23`).
#: `pack`/`unpack` state it for one event; pipeline.schema, the kernel and the warehouse's
#: stg_events.sql apply it to columns, and tests hold them to this statement.
CODE_SHIFTS = (0, 5, 11, 17, 23)  # kind, player, card, target, value
CODE_BITS = (5, 6, 6, 6)  # widths of kind, player + 1, card + 1, target + 1
CODE_OFFSETS = (0, 1, 1, 1, 0)


def pack(kind: int, player: int, card: int, target: int, value: int) -> int:
    """One event as its int64 code (see CODE_SHIFTS); a field out of range is a ValueError."""
    if not -(1 << 31) <= value < 1 << 31:
        raise ValueError(f"event value {value} does not fit 32 bits")
    code = value << CODE_SHIFTS[4]
    for name, x, shift, bits, off in zip(
        FIELDS, (kind, player, card, target), CODE_SHIFTS, CODE_BITS, CODE_OFFSETS, strict=False
    ):
        if not 0 <= x + off < 1 << bits:
            raise ValueError(f"event {name} {x} does not fit its {bits} bits (offset {off})")
        code |= (x + off) << shift
    return code


def unpack(code: int) -> tuple[int, int, int, int, int]:
    """(kind, player, card, target, value) of an int64 event code."""
    fields = [
        ((code >> shift) & ((1 << bits) - 1)) - off
        for shift, bits, off in zip(CODE_SHIFTS, CODE_BITS, CODE_OFFSETS, strict=False)
    ]
    return fields[0], fields[1], fields[2], fields[3], code >> CODE_SHIFTS[4]


#: The event log stores a game's codes as one list, ROUND_SCOREs left out (the rounds table holds
#: them), with each HIT folded into the event after it: an element at or above 1 << HIT_SHIFT is
#: an event preceded by a HIT of the same player with value (element >> HIT_SHIFT) - 1; the event
#: itself is the bits below. `fold_rows` states the fold, `store_games` the stored rows and
#: `restore_round_scores` how the whole stream comes back; pipeline.schema writes and reads them,
#: the kernel and the warehouse's upgrade and SQL apply them, and tests hold them to this.
HIT_SHIFT = 55


def fold_rows(game: Any, rnd: Any, seq: Any, code: Any) -> dict[str, Any]:
    """Flat events in (game, seq) order (numpy arrays: game, round, seq, packed code) -> rows:
    `game`, `round`, `seq` (of the row's first event) per (game, round) row, and
    `offsets` into `codes`, the packed codes with a HIT folded into the next event when that is
    a non-HIT event of the same player in the same round whose value is not negative (so the
    bits from HIT_SHIFT up are free) and the HIT's card and target are unused, value 0..2."""
    import numpy as np

    game = np.asarray(game, dtype=np.int64)
    rnd = np.asarray(rnd, dtype=np.int16)
    seq = np.asarray(seq, dtype=np.int32)
    code = np.asarray(code, dtype=np.int64)
    n = code.shape[0]
    new_row = np.concatenate([[True], (game[1:] != game[:-1]) | (rnd[1:] != rnd[:-1])])[:n]
    starts = np.flatnonzero(new_row)
    fold = np.zeros(n, dtype=np.bool_)
    if n >= 2:
        head, tail = code[:-1], code[1:]
        value = head >> CODE_SHIFTS[4]
        player = 63 << CODE_SHIFTS[1]
        fold[:-1] = (
            ((head & 31) == EventKind.HIT)
            & ((head & (4095 << CODE_SHIFTS[2])) == 0)  # card and target -1
            & (value >= 0)
            & (value <= 2)
            & ((tail & 31) != EventKind.HIT)
            & (tail >= 0)
            & ((head & player) == (tail & player))
            & ~new_row[1:]
        )
    stored = code.copy()
    hit = np.flatnonzero(fold)
    stored[hit + 1] |= ((code[hit] >> CODE_SHIFTS[4]) + 1) << HIT_SHIFT
    keep = ~fold
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    return {
        "game": game[starts],
        "round": rnd[starts],
        "seq": seq[starts],
        "offsets": np.concatenate([kept_before[starts], [kept_before[n]]]).astype(np.int32),
        "codes": stored[keep],
    }


def store_games(game: Any, rnd: Any, code: Any) -> dict[str, Any]:
    """Flat events in (game, seq) order (numpy arrays: game, round, packed code; every event,
    ROUND_SCOREs included) -> the stored rows, one per game: `game`, `rounds` (how many stored
    codes each round has, rounds in order; `round_offsets` into it per game) and `codes`
    (`offsets` into it per game): the game's events without its ROUND_SCOREs, a HIT folded into
    the event after it as `fold_rows` states, within a round."""
    import numpy as np

    game = np.asarray(game, dtype=np.int64)
    rnd = np.asarray(rnd, dtype=np.int16)
    code = np.asarray(code, dtype=np.int64)
    keep = (code & 31) != EventKind.ROUND_SCORE
    rows = fold_rows(game[keep], rnd[keep], np.zeros(int(keep.sum()), np.int32), code[keep])
    return games_of_round_rows(rows["game"], rows["offsets"], rows["codes"])


def games_of_round_rows(game: Any, offsets: Any, codes: Any) -> dict[str, Any]:
    """Rows of one round each (game ids, `offsets` into `codes`, games back to back, rounds in
    order) -> the stored rows of one game each (see store_games)."""
    import numpy as np

    game = np.asarray(game, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    first = np.flatnonzero(np.concatenate([[True], game[1:] != game[:-1]])[: game.shape[0]])
    rows = np.concatenate([first, [game.shape[0]]])
    return {
        "game": game[first],
        "round_offsets": rows.astype(np.int32),
        "rounds": np.diff(offsets).astype(np.int16),
        "offsets": offsets[rows].astype(np.int32),
        "codes": np.asarray(codes, dtype=np.int64),
    }


def restore_round_scores(
    game: Any, rnd: Any, code: Any, scores: Any, n_players: int
) -> dict[str, Any]:
    """The whole event stream from the stored one: `game`, `rnd` and `code` are the stored events
    unfolded (unfold_codes), one per event in order, rounds numbered 1.. in each game; `scores`
    is [rounds, n_players], each (game, round)'s seat scores in the order the events' rounds come.
    Returns `game`, `round`, `seq` and `code` of every event, the ROUND_SCOREs put back where
    the engines emit them: at round end, seat by seat, each after that seat's SC_DISCARDED of
    value 1 (a Second Chance set aside), before ROUND_END. So a stored event's seq is its index
    j in the game's stored events plus (round - 1) * n_players, plus its player for such an
    SC_DISCARDED and n_players for ROUND_END, ROUND_CAP and GAME_END; seat p's ROUND_SCORE comes
    n_players - p events before ROUND_END, less the set-aside Second Chances of later seats. A
    ValueError when the events and scores do not fit together (a round without exactly one
    ROUND_END, scores for another number of rounds)."""
    import numpy as np

    n = int(n_players)
    game = np.asarray(game, dtype=np.int64)
    rnd = np.asarray(rnd, dtype=np.int64)
    code = np.asarray(code, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.int64).reshape(-1, n)
    m = code.shape[0]
    kind = code & 31
    player = ((code >> CODE_SHIFTS[1]) & 63) - 1
    value = code >> CODE_SHIFTS[4]
    new_game = np.concatenate([[True], game[1:] != game[:-1]])[:m]
    new_round = new_game | np.concatenate([[True], rnd[1:] != rnd[:-1]])[:m]
    round_of = np.cumsum(new_round) - 1
    n_rounds = int(round_of[-1]) + 1 if m else 0
    if scores.shape[0] != n_rounds:
        raise ValueError(f"events of {n_rounds} rounds, scores of {scores.shape[0]}")
    game_start = np.flatnonzero(new_game)
    game_of = np.cumsum(new_game) - 1
    j = np.arange(m) - game_start[game_of]
    set_aside = (kind == EventKind.SC_DISCARDED) & (value == 1)
    closing = (
        (kind == EventKind.ROUND_END) | (kind == EventKind.ROUND_CAP) | (kind == EventKind.GAME_END)
    )
    seq = j + (rnd - 1) * n + np.where(set_aside, player, np.where(closing, n, 0))
    is_end = kind == EventKind.ROUND_END
    if not np.array_equal(np.bincount(round_of[is_end], minlength=n_rounds), np.ones(n_rounds)):
        raise ValueError("every round needs exactly one ROUND_END among its events")
    end_seq = np.empty(n_rounds, dtype=np.int64)
    end_seq[round_of[is_end]] = seq[is_end]
    if set_aside.any() and not (0 <= player[set_aside].min() and player[set_aside].max() < n):
        raise ValueError("an SC_DISCARDED event names no seat of the game")
    held = np.bincount(round_of[set_aside] * n + player[set_aside], minlength=n_rounds * n).reshape(
        n_rounds, n
    )
    later = held.sum(axis=1, keepdims=True) - np.cumsum(held, axis=1)
    seats = np.arange(n, dtype=np.int64)
    score_seq = end_seq[:, None] - (n - seats)[None, :] - later
    score_code = (
        (scores << CODE_SHIFTS[4]) | ((seats + 1) << CODE_SHIFTS[1]) | int(EventKind.ROUND_SCORE)
    )
    round_game = game_of[np.flatnonzero(new_round)]
    round_no = rnd[np.flatnonzero(new_round)]
    per_game = np.bincount(game_of, minlength=game_start.shape[0]) + n * np.bincount(
        round_game, minlength=game_start.shape[0]
    )
    base = np.concatenate([[0], np.cumsum(per_game)])
    total = int(base[-1])
    at = np.concatenate([base[game_of] + seq, (base[round_game][:, None] + score_seq).ravel()])
    out = np.full(total, -1, dtype=np.int64)
    if at.size and (at.min() < 0 or at.max() >= total):
        raise ValueError("the events and round scores do not fit together")
    if not (np.bincount(at, minlength=total) == 1).all():
        raise ValueError("the events and round scores do not fit together")
    out[at] = np.concatenate([code, score_code.ravel()])
    out_round = np.empty(total, dtype=np.int16)
    out_round[at] = np.concatenate([rnd, np.repeat(round_no, n)])
    out_game = np.repeat(game[game_start], per_game)
    return {
        "game": out_game,
        "round": out_round,
        "seq": (np.arange(total) - np.repeat(base[:-1], per_game)).astype(np.int32),
        "code": out,
    }


def unfold_codes(stored: Any) -> Any:
    """The inverse of fold_rows' fold on a run of stored codes (a numpy int64 array): one code
    per event, each HIT given back its own code before the event that carried it."""
    import numpy as np

    stored = np.asarray(stored, dtype=np.int64)
    flagged = stored >= (1 << HIT_SHIFT)
    ends = np.cumsum(1 + flagged.astype(np.int64))
    code = np.empty(int(ends[-1]) if ends.shape[0] else 0, dtype=np.int64)
    code[ends - 1] = np.where(flagged, stored & ((1 << HIT_SHIFT) - 1), stored)
    s = stored[flagged]
    code[ends[flagged] - 2] = (
        int(EventKind.HIT)
        | (s & (63 << CODE_SHIFTS[1]))
        | (((s >> HIT_SHIFT) - 1) << CODE_SHIFTS[4])
    )
    return code


class EventKind(enum.IntEnum):
    ROUND_START = 0
    DRAW = 1
    HIT = 2
    STAY = 3
    ACTION_PLAYED = 4
    ACTION_DEFERRED = 5
    ACTION_DROPPED = 6
    FREEZE = 7
    SC_KEPT = 8
    SC_PASSED = 9
    SC_DISCARDED = 10
    SC_USED = 11
    BUST = 12
    FLIP7 = 13
    RESHUFFLE = 14
    ROUND_SCORE = 15
    ROUND_END = 16
    ROUND_CAP = 17
    GAME_END = 18
    MODIFIER_GIVEN = 19
    CARD_MOVED = 20
    CARD_DISCARDED = 21
    FORCED_STAY = 22
    FLIP7_PENALTY = 23


class DrawHow(enum.IntEnum):
    DEAL = 0
    HIT = 1
    FLIP_THREE = 2
    JUST_ONE_MORE = 3
    FLIP_FOUR = 4


@dataclass(frozen=True)
class Event:
    """One event as a readable record (for watch, replay and tests; not used in the hot loop)."""

    kind: EventKind
    player: int
    card: int
    target: int
    value: int

    def describe(
        self,
        names: Sequence[str] | Mapping[int, str] | None = None,
        *,
        you: int = -1,
        vengeance: bool = False,
    ) -> str:
        """One line of English, e.g. 'P2 draws 7 (hit)': the one text of an event that `watch`,
        `play`, `replay` and the dashboard's replay all print. `names[seat]` names a seat
        (default `P<seat>`); seat `you` reads in the second person ('you draw 7 (hit)', 'you
        are frozen with 12'); `vengeance` (a With a Vengeance game) names the 0 The Zero and
        the draw that sets cards aside a Flip Four."""

        def who(p: int) -> str:
            return names[p] if names is not None else f"P{p}"

        kind = EventKind(self.kind).name.lower()
        p, c, t, v = self.player, self.card, self.target, self.value
        text = describe_event(
            kind, p, c, t, v, who=who, label=card_label, you=you, vengeance=vengeance
        )
        if text is None:
            raise AssertionError(self.kind)
        return text


class EventLog:
    """A view over a flat event buffer [k, p, c, t, v, k, p, ...]."""

    def __init__(self, flat: Sequence[int]) -> None:
        if len(flat) % WIDTH:
            raise ValueError(f"event buffer length {len(flat)} is not a multiple of {WIDTH}")
        self.flat = flat

    def __len__(self) -> int:
        return len(self.flat) // WIDTH

    def __iter__(self) -> Iterator[Event]:
        f = self.flat
        for i in range(0, len(f), WIDTH):
            yield Event(EventKind(f[i]), f[i + 1], f[i + 2], f[i + 3], f[i + 4])

    def columns(self) -> dict[str, list[int]]:
        """The buffer as five columns (slices of the flat list)."""
        return {name: list(self.flat[i::WIDTH]) for i, name in enumerate(FIELDS)}


@dataclass
class Rebuilt:
    """Scores reconstructed from events alone."""

    round_scores: list[list[int]]  # [round][player]
    totals: list[int]
    winner: int

    @classmethod
    def of(cls, round_scores: list[list[int]], n_players: int, winner: int) -> Rebuilt:
        """The round scores, each player's total (the sum of its round scores) and the winner."""
        totals = [sum(r[q] for r in round_scores) for q in range(n_players)]
        return cls(round_scores, totals, winner)


def rebuild_scores(events: Sequence[Event] | EventLog, n_players: int, bonus: int = 15) -> Rebuilt:
    """Rebuild every round score, the totals and the winner from events, without the engine.

    A line is rebuilt from DRAW events (numbers and modifiers land in the drawer's row; action
    cards do not score), SC_USED (the duplicate is not added), BUST (scores 0) and FLIP7.
    """
    rounds: list[list[int]] = []
    winner = -1
    nums: list[set[int]] = [set() for _ in range(n_players)]
    plus = [0] * n_players
    x2 = [False] * n_players
    busted = [False] * n_players
    flip7 = [False] * n_players
    pending_dup: list[int | None] = [None] * n_players
    for e in events:
        k, p = e.kind, e.player
        if k == EventKind.ROUND_START:
            nums = [set() for _ in range(n_players)]
            plus = [0] * n_players
            x2 = [False] * n_players
            busted = [False] * n_players
            flip7 = [False] * n_players
            pending_dup = [None] * n_players
        elif k == EventKind.DRAW:
            c = e.card
            if is_number(c):
                if c in nums[p]:
                    pending_dup[p] = c  # resolved by SC_USED or BUST next
                else:
                    nums[p].add(c)
            elif c == Card.TIMES2:
                x2[p] = True
            else:
                plus[p] += PLUS_VALUE[c]
        elif k == EventKind.BUST:
            busted[p] = True
        elif k == EventKind.FLIP7:
            flip7[p] = True
        elif k == EventKind.ROUND_END:
            scores = []
            for q in range(n_players):
                s = 0
                if not busted[q]:
                    s = sum(nums[q]) * (2 if x2[q] else 1) + plus[q] + (bonus if flip7[q] else 0)
                scores.append(s)
            rounds.append(scores)
        elif k == EventKind.GAME_END:
            winner = p
    return Rebuilt.of(rounds, n_players, winner)


def rebuild_vengeance_scores(
    events: Sequence[Event] | EventLog, n_players: int, bonus: int = 15, brutal: bool = False
) -> Rebuilt:
    """The Vengeance counterpart of `rebuild_scores`: rows are rebuilt from DRAW (numbers land
    in the drawer's row), MODIFIER_GIVEN, CARD_MOVED and CARD_DISCARDED; BUST, FLIP7 and
    FLIP7_PENALTY settle the score (flip7.scoring.vengeance_row_points)."""
    from flip7.scoring import vengeance_row_points

    rounds: list[list[int]] = []
    winner = -1
    rows: list[list[int]] = [[] for _ in range(n_players)]
    busted = [False] * n_players
    flipped = [-1] * n_players  # -1 no Flip 7, else the bonus taken (0 if given as a penalty)
    penalty = [0] * n_players
    for e in events:
        k, p = e.kind, e.player
        if k == EventKind.ROUND_START:
            rows = [[] for _ in range(n_players)]
            busted = [False] * n_players
            flipped = [-1] * n_players
            penalty = [0] * n_players
        elif k == EventKind.DRAW and face_value(e.card) >= 0:
            rows[p].append(e.card)
        elif k == EventKind.MODIFIER_GIVEN:
            rows[e.target].append(e.card)
        elif k == EventKind.CARD_MOVED:
            rows[p].remove(e.card)
            rows[e.target].append(e.card)
        elif k == EventKind.CARD_DISCARDED:
            rows[p].remove(e.card)
        elif k == EventKind.BUST:
            busted[p] = True
        elif k == EventKind.FLIP7:
            flipped[p] = e.value
        elif k == EventKind.FLIP7_PENALTY:
            penalty[e.target] += e.value
        elif k == EventKind.ROUND_END:
            scores = []
            for q in range(n_players):
                if busted[q]:
                    minus = vengeance_row_points(
                        [c for c in rows[q] if face_value(c) < 0], False, True
                    )
                    s = minus if brutal else 0
                else:
                    s = vengeance_row_points(rows[q], flipped[q] >= 0, brutal) + max(flipped[q], 0)
                s -= penalty[q]
                scores.append(s)
            rounds.append(scores)
        elif k == EventKind.GAME_END:
            winner = p
    return Rebuilt.of(rounds, n_players, winner)
