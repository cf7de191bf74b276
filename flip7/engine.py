"""The reference engine for the classic game: one game, start to finish, rule by rule.

The engine drives a game and stops at explicit decision points, which it hands to the seat's
policy: hit or stay (`Policy.hit`), the receiver of a Freeze or Flip Three
(`Policy.choose_target`), the receiver of a spare Second Chance (`Policy.choose_recipient`). It
never asks which policy a seat has. Every rule follows Ruleset Edition 3.1 and the FAQ
(the rulebook and the publisher's FAQ); the `Ruleset` names the few points where texts disagree.

The only randomness is the `CardRng` shuffle, so `(ruleset, policies, seed)` fixes the game and
the event stream. Events go into one flat int list (see `flip7.events`); pass `capture=False`
to skip them. `on_event(engine)` is a test hook called after every event.

Readability first: this is the statement of the rules that faster kernels must match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flip7.cards import CLASSIC, N_CARD_IDS, PLUS_VALUE, Card, Deck
from flip7.events import DrawHow, EventKind
from flip7.limits import LeftPlay, PolicyTimeout
from flip7.observation import ACTIVE, BUSTED, CLASSIC_RULES, FROZEN, STAYED, Observation
from flip7.rng import CardRng, tie_break
from flip7.rules import FlipThreeActions, Ruleset

if TYPE_CHECKING:
    from flip7.policies.base import Policy

# Event kinds and draw reasons as plain ints for the hot path (see flip7.events).
_ROUND_START, _DRAW, _HIT, _STAY = (
    int(EventKind[k]) for k in ("ROUND_START", "DRAW", "HIT", "STAY")
)
_ACTION_PLAYED, _ACTION_DEFERRED, _ACTION_DROPPED, _FREEZE_EV = (
    int(EventKind[k]) for k in ("ACTION_PLAYED", "ACTION_DEFERRED", "ACTION_DROPPED", "FREEZE")
)
_SC_KEPT, _SC_PASSED, _SC_DISCARDED, _SC_USED = (
    int(EventKind[k]) for k in ("SC_KEPT", "SC_PASSED", "SC_DISCARDED", "SC_USED")
)
_BUST, _FLIP7, _RESHUFFLE, _ROUND_SCORE, _ROUND_END, _ROUND_CAP, _GAME_END = (
    int(EventKind[k])
    for k in ("BUST", "FLIP7", "RESHUFFLE", "ROUND_SCORE", "ROUND_END", "ROUND_CAP", "GAME_END")
)
_HOW_DEAL, _HOW_HIT, _HOW_FLIP_THREE = int(DrawHow.DEAL), int(DrawHow.HIT), int(DrawHow.FLIP_THREE)
_NO_CARDS = [0] * N_CARD_IDS
_FREEZE = int(Card.FREEZE)
_FLIP_THREE = int(Card.FLIP_THREE)
_SC = int(Card.SECOND_CHANCE)
_TIMES2 = int(Card.TIMES2)

#: Why a round ended (the ROUND_END event's value). END_NO_CARDS: nothing left to draw, or nothing
#: left that can change a row (`Engine.cannot_change_round`). END_RESHUFFLE_CAP: the safety stop.
END_NOBODY_ACTIVE, END_FLIP7, END_NO_CARDS, END_RESHUFFLE_CAP = 0, 1, 2, 3

#: A last-resort safety stop no rulebook needs. The discard pile is reshuffled whenever the draw
#: pile runs out, as the rules say; but some tables cycle a few cards forever without a score being
#: able to change, in ways no simple rule proves (seen at 18 seats on one deck: two seats that never
#: stay both show the last 11, and three Second Chances pass between them so that whoever draws
#: the 11 always holds one). A round that would reshuffle more often than this ends as it stands,
#: and its ROUND_END says so (END_RESHUFFLE_CAP). A round that merely runs long (a saved player
#: risking the reshuffled cards again) ends on its own far sooner: tens of reshuffles at most.
MAX_RESHUFFLES_PER_ROUND = 1000


@dataclass(frozen=True)
class GameResult:
    """The outcome of one game. `events` is the flat event buffer (empty if not captured)."""

    seed: int
    n_players: int
    winner: int
    totals: tuple[int, ...]
    rounds: int
    round_scores: tuple[tuple[int, ...], ...]
    events: list[int]
    busts: tuple[int, ...] = ()
    flip7s: tuple[int, ...] = ()
    capped: bool = False
    #: Per round: the dealer, every seat's status at round end, the Flip 7 seat (or -1).
    round_dealers: tuple[int, ...] = ()
    round_status: tuple[tuple[int, ...], ...] = ()
    round_flip7: tuple[int, ...] = ()


def decks_for(n_players: int, ruleset: Ruleset, deck: Deck = CLASSIC) -> Deck:
    """The deck for a table: one more copy of the deck per `players_per_deck` players."""
    k = max(1, -(-n_players // ruleset.players_per_deck))
    return deck.times(k)


class PolicyError(RuntimeError):
    """A policy answered a decision point with something that is not a legal choice, raised an
    exception, or did not answer within the time limit; the message names it and its seat."""


class Engine:
    """Plays one game. Construct, then `run()`; state attributes are public for tests."""

    def __init__(
        self,
        ruleset: Ruleset,
        policies: Sequence[Policy],
        seed: int,
        *,
        capture: bool = True,
        deck: Deck = CLASSIC,
        first_dealer: int = 0,
        stacked: Sequence[int] | None = None,
        on_event: Callable[[Engine], None] | None = None,
    ) -> None:
        n = len(policies)
        if n < 1:
            raise ValueError("a game needs at least one player")
        if not 0 <= first_dealer < n:
            raise ValueError(f"first_dealer must be a seat in 0..{n - 1}, got {first_dealer}")
        self.ruleset = ruleset
        self.policies = list(policies)
        self.n = n
        self.seed = seed
        self.deck = decks_for(n, ruleset, deck)
        self.rng = CardRng(seed)
        self.events: list[int] = []
        self.capture = capture
        self.on_event = on_event
        self.dealer = first_dealer
        self.round_no = 0
        self.round_over = False
        self.end_reason = END_NOBODY_ACTIVE
        self.flip7_player = -1
        self.round_reshuffles = 0
        #: The card just drawn and not yet placed or discarded (-1 if none): the DRAW event
        #: fires when a card leaves the deck, before it lands, so the census counts it here.
        self.in_hand = -1
        #: Cards set aside in front of players but not in anyone's row (Vengeance's Flip Four).
        self.aside: list[int] = []
        # The draw pile: the top card is the last element. A stacked deck (tests) is drawn in
        # the given order, first element first; it is shuffled only when it runs out.
        if stacked is not None:
            self.draw_pile = list(reversed(stacked))
            self.discard_pile: list[int] = []
            rest = list(self.deck.counts)
            for c in stacked:
                rest[c] -= 1
            if any(r < 0 for r in rest):
                raise ValueError("stacked deck holds more copies of a card than the deck has")
            self.discard_pile = [c for c, k in enumerate(rest) for _ in range(k)]
        else:
            self.draw_pile = self.rng.shuffle(self.deck.cards())
            self.discard_pile = []
        obs = Observation(0)
        obs.n_players = n
        obs.target = ruleset.target
        obs.bonus = ruleset.bonus
        obs.round = 0
        obs.mask = [0] * n
        obs.nsum = [0] * n
        obs.ncount = [0] * n
        obs.plus = [0] * n
        obs.x2 = [False] * n
        obs.has_sc = [False] * n
        obs.status = [ACTIVE] * n
        obs.line = [[] for _ in range(n)]
        obs.totals = [0] * n
        obs.visible = [0] * N_CARD_IDS
        obs.discarded = [0] * N_CARD_IDS
        for c in self.discard_pile:
            obs.discarded[c] += 1
        obs.deck = list(self.deck.counts)
        obs.deck_size = self.deck.size
        obs.variant = CLASSIC_RULES
        obs.minus = [0] * n
        obs.div2 = [0] * n
        obs.zero = [False] * n
        obs.lucky = [False] * n
        obs.thirteens = [0] * n
        obs.brutal = False
        obs.freeze_ties = ruleset.freeze_ties
        self.obs = [obs] + [Observation(p, obs) for p in range(1, n)]
        self.table = obs
        self.round_scores: list[tuple[int, ...]] = []
        self.busts = [0] * n
        self.flip7s = [0] * n
        self.round_dealers: list[int] = []
        self.round_status: list[tuple[int, ...]] = []
        self.round_flip7: list[int] = []
        self._bind_emit()

    # -- events -------------------------------------------------------------------------------

    def _bind_emit(self) -> None:
        """`emit((kind, player, card, target, value))` appends one event. Without a hook it is
        the buffer's own `extend` (no Python frame per event); with capture off, the buffer is
        cleared at the end of each round."""
        hook = self.on_event
        extend = self.events.extend
        if hook is None:
            self.emit: Callable[[tuple[int, int, int, int, int]], None] = extend
            return

        def emit(event: tuple[int, int, int, int, int]) -> None:
            extend(event)
            hook(self)

        self.emit = emit

    # -- the game -----------------------------------------------------------------------------

    def run(self) -> GameResult:
        """Play rounds until the game ends; return the result."""
        t = self.table
        target = self.ruleset.target
        capped = False
        while True:
            self.play_round()
            best = max(t.totals)
            if best >= target and t.totals.count(best) == 1:
                winner = t.totals.index(best)
                break
            if self.round_no >= self.ruleset.max_rounds:
                capped = True
                leaders = [p for p, total in enumerate(t.totals) if total == best]
                winner = leaders[tie_break(self.seed, len(leaders))]
                self.emit((_ROUND_CAP, -1, -1, -1, self.round_no))
                break
        self.emit((_GAME_END, winner, -1, -1, t.totals[winner]))
        if not self.capture:
            self.events.clear()
        return GameResult(
            self.seed,
            self.n,
            winner,
            tuple(t.totals),
            self.round_no,
            tuple(self.round_scores),
            self.events,
            tuple(self.busts),
            tuple(self.flip7s),
            capped,
            tuple(self.round_dealers),
            tuple(self.round_status),
            tuple(self.round_flip7),
        )

    def play_round(self) -> None:
        """One round: the opening deal, then laps of hit-or-stay, then scoring."""
        t = self.table
        n = self.n
        self.round_no += 1
        t.round = self.round_no
        for p in range(n):
            t.mask[p] = t.nsum[p] = t.ncount[p] = t.plus[p] = 0
            t.x2[p] = t.has_sc[p] = False
            t.status[p] = ACTIVE
            t.line[p].clear()
        self.round_over = False
        self.end_reason = END_NOBODY_ACTIVE
        self.flip7_player = -1
        self.round_reshuffles = 0
        emit = self.emit
        emit((_ROUND_START, self.dealer, -1, -1, self.round_no))
        order = [(self.dealer + 1 + i) % n for i in range(n)]
        status, line, policies, obs, zero = t.status, t.line, self.policies, self.obs, t.zero

        # The opening deal, in turn order ending with the dealer: only players still active with
        # no cards in front of them are dealt a card (FAQ: a Flip Three may already have given
        # someone cards; a frozen player is skipped).
        for p in order:
            if self.round_over:
                break
            if status[p] == ACTIVE and not line[p]:
                self.deal(p, _HOW_DEAL)

        # Hit or stay, in turn order, until nobody is active or the round ends at once.
        while not self.round_over:
            anyone = False
            for p in order:
                if status[p] != ACTIVE:
                    continue
                anyone = True
                if not line[p] or zero[p]:
                    # Nothing to bank (or, in Vengeance, holding The Zero): must hit.
                    emit((_HIT, p, -1, -1, 1 if not line[p] else 2))
                    self.deal(p, _HOW_HIT)
                else:
                    # Asked inline (no extra frame per decision); any failure names the policy.
                    try:
                        answer = policies[p].hit(obs[p])
                    except BaseException as exc:  # all but Ctrl-C: see policy_failed
                        raise self.policy_failed(p, "hit", exc) from None
                    if answer is not True and answer is not False:
                        answer = self.hit_answer(p, answer)
                    if answer:
                        emit((_HIT, p, -1, -1, 0))
                        self.deal(p, _HOW_HIT)
                    else:
                        status[p] = STAYED
                        emit((_STAY, p, -1, -1, self.points(p)))
                if self.round_over:
                    break
            if not anyone:
                break
        self.end_round()

    def end_round(self) -> None:
        """Score the round, set every card aside on the discard pile, pass the deck left."""
        t = self.table
        emit = self.emit
        bonus = self.ruleset.bonus
        scores = []
        for p in range(self.n):
            s = self.points(p)
            if p == self.flip7_player:
                s += bonus
            s = self.adjust_score(p, s)
            t.totals[p] += s
            scores.append(s)
            if t.has_sc[p]:
                emit((_SC_DISCARDED, p, -1, -1, 1))
            emit((_ROUND_SCORE, p, -1, -1, s))
        self.round_scores.append(tuple(scores))
        self.round_dealers.append(self.dealer)
        self.round_status.append(tuple(t.status))
        self.round_flip7.append(self.flip7_player)
        emit((_ROUND_END, -1, -1, -1, self.end_reason))
        discarded, pile = t.discarded, self.discard_pile
        for cards in [*t.line, self.aside]:
            pile += cards
            for c in cards:
                discarded[c] += 1
            cards.clear()
        t.has_sc[:] = [False] * self.n
        t.visible[:] = _NO_CARDS  # nothing is left in front of anyone
        self.dealer = (self.dealer + 1) % self.n
        if not self.capture:
            self.events.clear()

    def adjust_score(self, p: int, score: int) -> int:
        """A variant's last word on a round score (the classic game has none)."""
        return score

    def points(self, p: int) -> int:
        """What p banks now: numbers (doubled by x2), plus modifiers; 0 if busted."""
        t = self.table
        if t.status[p] == BUSTED:
            return 0
        return t.nsum[p] * (2 if t.x2[p] else 1) + t.plus[p]

    # -- cards --------------------------------------------------------------------------------

    def draw(self) -> int:
        """The top card; reshuffles the discard pile whenever the draw pile is empty. -1, and
        the round ends at once, if no card is left to draw (every card is in front of a player)
        or none left can change the round (`cannot_change_round`), both END_NO_CARDS, or after
        MAX_RESHUFFLES_PER_ROUND reshuffles (END_RESHUFFLE_CAP)."""
        if not self.draw_pile:
            if not self.discard_pile or self.cannot_change_round():
                self.end_at_once(END_NO_CARDS)
                return -1
            if self.round_reshuffles >= MAX_RESHUFFLES_PER_ROUND:
                self.end_at_once(END_RESHUFFLE_CAP)
                return -1
            self.round_reshuffles += 1
            t = self.table
            self.draw_pile = self.rng.shuffle(self.discard_pile)
            self.discard_pile = []
            t.discarded[:] = _NO_CARDS
            self.emit((_RESHUFFLE, -1, -1, -1, len(self.draw_pile)))
        return self.draw_pile.pop()

    def cannot_change_round(self) -> bool:
        """True when the cards left to draw (the discard pile, the draw pile being empty) can
        change nobody's row, so every round score is final and the round may end now instead
        of cycling them through reshuffles. Classic: they are all Second Chances and every
        active player (only they draw) holds one, so each is discarded as soon as it is drawn:
        nobody can keep or take it, and a duplicate never comes."""
        t = self.table
        if t.discarded[_SC] != len(self.discard_pile):
            return False
        return all(t.has_sc[p] for p in range(self.n) if t.status[p] == ACTIVE)

    def deal(self, p: int, how: int) -> None:
        """Deal p one card and resolve it."""
        c = self.draw_pile.pop() if self.draw_pile else self.draw()
        if c < 0:
            return  # the round is over
        self.in_hand = c
        self.emit((_DRAW, p, c, -1, how))
        self.receive(p, c)

    def end_at_once(self, reason: int) -> None:
        self.round_over = True
        self.end_reason = reason

    def place(self, p: int, c: int) -> None:
        """Card c lands in front of p."""
        t = self.table
        t.line[p].append(c)
        t.visible[c] += 1
        self.in_hand = -1

    def to_discard(self, c: int) -> None:
        self.discard_pile.append(c)
        self.table.discarded[c] += 1
        self.in_hand = -1

    def receive(self, p: int, c: int) -> None:
        """Card c, just flipped for p, takes effect."""
        t = self.table
        if c <= 13:  # a number
            if t.mask[p] >> c & 1:
                if t.has_sc[p]:
                    # The Second Chance and the duplicate are both discarded; p stays in.
                    t.has_sc[p] = False
                    t.line[p].remove(_SC)
                    t.visible[_SC] -= 1
                    self.to_discard(_SC)
                    self.to_discard(c)
                    self.emit((_SC_USED, p, c, -1, -1))
                else:
                    self.place(p, c)
                    t.status[p] = BUSTED
                    self.busts[p] += 1
                    self.emit((_BUST, p, c, -1, -1))
                return
            self.place(p, c)
            t.mask[p] |= 1 << c
            t.nsum[p] += c
            t.ncount[p] += 1
            if t.ncount[p] == 7:
                self.flip7_player = p
                self.flip7s[p] += 1
                self.emit((_FLIP7, p, -1, -1, self.ruleset.bonus))
                self.end_at_once(END_FLIP7)
        elif c < _FREEZE:  # a modifier
            self.place(p, c)
            if c == _TIMES2:
                t.x2[p] = True
            else:
                t.plus[p] += PLUS_VALUE[c]
        elif c == _SC:
            self.second_chance(p)
        else:
            self.play_action(p, c)

    def second_chance(self, p: int) -> None:
        """Keep it, or pass the spare to an active player without one, or discard it."""
        t = self.table
        if not t.has_sc[p]:
            t.has_sc[p] = True
            self.place(p, _SC)
            self.emit((_SC_KEPT, p, -1, -1, -1))
            return
        candidates = [
            q for q in range(self.n) if q != p and t.status[q] == ACTIVE and not t.has_sc[q]
        ]
        if not candidates:
            self.to_discard(_SC)
            self.emit((_SC_DISCARDED, p, -1, -1, 0))
            return
        q = candidates[0]
        if len(candidates) > 1:
            try:
                q = self.policies[p].choose_recipient(self.obs[p], candidates)
            except BaseException as exc:  # all but Ctrl-C: see policy_failed
                raise self.policy_failed(p, "choose_recipient", exc) from None
            self.check_choice(p, q, candidates, "choose_recipient")
        t.has_sc[q] = True
        self.place(q, _SC)
        self.emit((_SC_PASSED, p, -1, q, -1))

    def play_action(self, chooser: int, c: int) -> None:
        """`chooser` gives a Freeze or Flip Three to an active player (themself included)."""
        t = self.table
        candidates = [q for q in range(self.n) if t.status[q] == ACTIVE]
        if not candidates:
            self.to_discard(c)
            self.emit((_ACTION_DROPPED, chooser, c, -1, -1))
            return
        q = candidates[0]
        if len(candidates) > 1:
            try:
                q = self.policies[chooser].choose_target(self.obs[chooser], c, candidates)
            except BaseException as exc:  # all but Ctrl-C: see policy_failed
                raise self.policy_failed(chooser, "choose_target", exc) from None
            self.check_choice(chooser, q, candidates, "choose_target")
        self.place(q, c)
        self.emit((_ACTION_PLAYED, chooser, c, q, -1))
        if c == _FREEZE:
            t.status[q] = FROZEN
            self.emit((_FREEZE_EV, q, -1, -1, self.points(q)))
        else:
            self.flip_three(q)

    def flip_three(self, p: int) -> None:
        """p flips three cards, stopping early on a bust or a Flip 7.

        A Second Chance takes effect at once. A Freeze or Flip Three waits until the three are
        flipped and is then played only while p has not busted (3.1: a set-aside Flip Three
        that busts p drops the cards still waiting), played at once (`immediate`), or played
        even after a bust (`legacy`). A duplicate cancelled by a Second Chance still counts.
        """
        t = self.table
        mode = self.ruleset.flip_three_actions
        pending: list[int] = []
        for _ in range(3):
            c = self.draw()
            if c < 0:
                return  # the round is over
            self.in_hand = c
            self.emit((_DRAW, p, c, -1, _HOW_FLIP_THREE))
            if (c == _FREEZE or c == _FLIP_THREE) and mode != FlipThreeActions.IMMEDIATE:
                self.place(p, c)
                pending.append(c)
                self.emit((_ACTION_DEFERRED, p, c, -1, -1))
            else:
                self.receive(p, c)
            if self.round_over or t.status[p] != ACTIVE:
                break
        if self.round_over:
            return  # a Flip 7 ends the round at once: pending actions stay unresolved
        for c in pending:
            # Checked before each card, not once: a set-aside Flip Three played on p can bust
            # p, and what p set aside before it is then dropped too (3.1).
            if t.status[p] == BUSTED and mode == FlipThreeActions.DEFERRED:
                self.emit((_ACTION_DROPPED, p, c, -1, -1))  # stays in front of p until round end
                continue
            t.line[p].remove(c)
            t.visible[c] -= 1
            self.play_action(p, c)
            if self.round_over:
                return

    # -- asking policies ----------------------------------------------------------------------
    # Every call into a policy goes through a try/except BaseException (free in CPython 3.11
    # when nothing is raised), and its answer is checked: a failure is one PolicyError naming the policy, its
    # seat and the decision, whatever the policy did (raised, timed out, answered nonsense).

    def hit_answer(self, p: int, answer: object) -> bool:
        """A hit answer that is not a Python bool: numpy's bool, else a PolicyError (an answer
        is never read for its truthiness)."""
        if type(answer).__name__ == "bool_" and type(answer).__module__ == "numpy":
            return bool(answer)
        raise PolicyError(
            f"policy {self._name(p)} at seat {p} answered hit with {_short(answer)} "
            f"({type(answer).__name__}); hit must return True (hit) or False (stay)"
        )

    def policy_failed(self, p: int, what: str, exc: BaseException) -> BaseException:
        """The PolicyError for seat p's policy failing while answering `what`: whatever it
        raised, SystemExit and other BaseExceptions included (a policy's `sys.exit(0)` must not
        end the command as a success), except the user's Ctrl-C (KeyboardInterrupt) and a
        person leaving the game (LeftPlay), returned as they are for the command to handle."""
        if isinstance(exc, PolicyError | KeyboardInterrupt | LeftPlay):
            return exc
        if isinstance(exc, PolicyTimeout):
            return PolicyError(
                f"policy {self._name(p)} at seat {p} did not answer {what}: the time limit of "
                f"{exc.seconds:g} s (--policy-timeout) ran out while it was deciding"
            )
        lines = [s for s in str(exc).strip().splitlines() if s.strip()]
        return PolicyError(
            f"policy {self._name(p)} at seat {p} raised {type(exc).__name__} in {what}"
            + (f": {lines[0]}" if lines else "")
        )

    def check_choice(self, p: int, choice: int, candidates: list[int], what: str) -> None:
        integral = isinstance(choice, int) or (
            type(choice).__module__ == "numpy" and hasattr(choice, "__index__")
        )
        if isinstance(choice, bool) or not integral or choice not in candidates:
            raise PolicyError(
                f"policy {self._name(p)} at seat {p} answered {what} with {_short(choice)}; "
                f"legal choices were {candidates}"
            )

    def _name(self, p: int) -> str:
        return repr(str(getattr(self.policies[p], "spec", type(self.policies[p]).__name__)))


def _short(value: object) -> str:
    """repr(value), cut to one short line."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def play_game(
    ruleset: Ruleset,
    policies: Sequence[Policy],
    seed: int,
    *,
    capture: bool = True,
    first_dealer: int = 0,
) -> GameResult:
    """Play one game from a seed (the convenience entry point)."""
    return Engine(ruleset, policies, seed, capture=capture, first_dealer=first_dealer).run()
