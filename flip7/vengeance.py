"""The "With a Vengeance" engine (its rulebook; where another source disagrees, that rulebook wins).

It reuses the classic engine's deal, turn order, deck handling, events and game end, and
replaces what a card does:

- Players who stayed are still *in play*: actions and modifiers can reach them. Busted players
  are out (in Brutal mode modifiers can still be given to them).
- A duplicate number busts. The Unlucky 7 wipes your other numbers and modifiers and never busts
  you when you draw it (moved later by Steal/Swap it is a plain 7). Holding the Lucky 13 (or
  drawing it onto a 13) you may hold two 13s; a third busts. The Zero scores your numbers as 0
  unless you Flip 7, and you must keep hitting while you hold it.
- Seven number cards are a Flip 7: the round ends, +15 (Brutal: +15 for you or -15 for another).
- Modifiers (/2, -2..-10) never bust; whoever draws one gives it to any player in play.
- Actions resolve at once on any player in play (yourself if you are the only one) and are then
  discarded. Just One More: the receiver draws one card, then must stay. Flip Four: four cards,
  stopping at a bust or a Flip 7; modifiers and actions among them wait until the four are done
  and are dropped on a bust. Steal: take a number card from another player's row (the rules
  name only Swap and Discard as reaching modifiers). Swap: exchange one of your cards with
  another player's, or a card of one other player with a card of another. Discard: a player of
  your choice loses a card of your choice. With no legal move the card is discarded. After any
  move, a player holding a duplicate busts. Once nothing but Steal, Swap and Discard cards
  without a legal move is left to draw, the round ends (no cards left).
- Score: numbers (0 with The Zero and no Flip 7), halved (rounded down) per /2, minus the -N
  cards, not below 0 (Brutal: below 0 allowed, and a busted player still pays the -N cards in
  front of them), then the Flip 7 bonus.

Decision points: hit/stay; `choose_target` for Just One More, Flip Four, a modifier's receiver
and (Brutal) the Flip 7 choice (`FLIP7_CHOICE`: yourself = the bonus, another seat = -15 to
them); `choose_move` for Steal `(victim, card)`, Swap `(a, card_a, b, card_b)` and Discard
`(victim, card)`, choosing an index into the legal options.
"""

from __future__ import annotations

from collections.abc import Sequence

from flip7.cards import FLIP7_CHOICE, Card, Deck, face_value
from flip7.engine import END_FLIP7, Engine
from flip7.events import DrawHow, EventKind
from flip7.observation import ACTIVE, BUSTED, STAYED, VENGEANCE_RULES
from flip7.policies.base import Policy
from flip7.rules import Ruleset
from flip7.scoring import (
    MINUS_VALUE,
    VENGEANCE_MODIFIERS,
    vengeance_row_busts,
    vengeance_row_points,
)

_MINUS = MINUS_VALUE
_MODIFIERS = VENGEANCE_MODIFIERS
_MOVES = frozenset({Card.STEAL, Card.SWAP, Card.DISCARD})
_DEFERRED_IN_FLIP_FOUR = _MODIFIERS | {
    Card.JUST_ONE_MORE,
    Card.FLIP_FOUR,
    Card.STEAL,
    Card.SWAP,
    Card.DISCARD,
}


class VengeanceEngine(Engine):
    """Plays one "With a Vengeance" game; same construction and results as `Engine`."""

    def __init__(
        self,
        ruleset: Ruleset,
        policies: Sequence[Policy],
        seed: int,
        *,
        deck: Deck,
        brutal: bool = False,
        **kwargs: object,
    ) -> None:
        """`deck`: a Vengeance deck (flip7.variants checks it; `Variant.new_engine` builds this
        engine from a variant), `brutal`: Brutal mode."""
        super().__init__(ruleset, policies, seed, deck=deck, **kwargs)  # type: ignore[arg-type]
        self.brutal = brutal
        for obs in self.obs:  # every seat's view (they share the lists, not these two fields)
            obs.variant = VENGEANCE_RULES
            obs.brutal = brutal
        self.penalty = [0] * self.n
        self.declined = False

    # -- the round ----------------------------------------------------------------------------

    def play_round(self) -> None:
        t = self.table
        for p in range(self.n):
            t.minus[p] = t.div2[p] = t.thirteens[p] = 0
            t.zero[p] = t.lucky[p] = False
            self.penalty[p] = 0
        self.declined = False
        super().play_round()

    def must_hit(self, p: int) -> int:
        """0 if p may stay; 1 with no cards in front; 2 holding The Zero."""
        t = self.table
        if not t.line[p]:
            return 1
        return 2 if t.zero[p] else 0

    def adjust_score(self, p: int, score: int) -> int:
        if p == self.flip7_player and self.declined:
            score -= self.ruleset.bonus  # Brutal: the flipper took 15 from someone instead
        return score - self.penalty[p]

    def points(self, p: int) -> int:
        t = self.table
        if t.status[p] == BUSTED:
            return -t.minus[p] if self.brutal else 0
        return vengeance_row_points(t.line[p], p == self.flip7_player, self.brutal)

    def cannot_change_round(self) -> bool:
        """Vengeance: the cards left to draw are all Steal, Swap or Discard, and none of them
        has a legal move for any player in play (only they draw: a hit, Just One More or Flip
        Four), so each is discarded as soon as it is drawn and no row can change."""
        left = set(self.discard_pile)
        if not left <= _MOVES:
            return False
        return not any(self.move_options(p, c) for p in self.in_play() for c in left)

    def in_play(self) -> list[int]:
        status = self.table.status
        return [q for q in range(self.n) if status[q] == ACTIVE or status[q] == STAYED]

    # -- cards --------------------------------------------------------------------------------

    def recompute(self, p: int) -> None:
        """Derive p's counters from p's row (after a card moved in or out)."""
        t = self.table
        mask = nsum = ncount = thirteens = div2 = minus = 0
        zero = lucky = False
        for c in t.line[p]:
            v = face_value(c)
            if v >= 0:
                mask |= 1 << v
                nsum += v
                ncount += 1
                thirteens += v == 13
                zero = zero or c == Card.N0
                lucky = lucky or c == Card.LUCKY_13
            elif c == Card.DIV2:
                div2 += 1
            else:
                minus += _MINUS.get(Card(c), 0)
        t.mask[p], t.nsum[p], t.ncount[p], t.thirteens[p] = mask, nsum, ncount, thirteens
        t.div2[p], t.minus[p], t.zero[p], t.lucky[p] = div2, minus, zero, lucky

    def receive(self, p: int, c: int) -> None:
        v = face_value(c)
        if v >= 0:
            self.receive_number(p, c, v)
        elif c in _MODIFIERS:
            self.give_modifier(p, c)
        else:
            self.play_action(p, c)

    def receive_number(self, p: int, c: int, v: int) -> None:
        t = self.table
        if c == Card.UNLUCKY_7:
            # Every other number and modifier of p is discarded; the 7 cannot bust p.
            for old in list(t.line[p]):
                self.discard_from_row(p, old)
                self.emit((int(EventKind.CARD_DISCARDED), p, old, -1, 1))
            self.place(p, c)
            self.recompute(p)
            return
        dup = t.mask[p] >> v & 1
        if dup and v == 13:
            dup = t.thirteens[p] >= 2 or not (t.lucky[p] or c == Card.LUCKY_13)
        self.place(p, c)
        self.recompute(p)
        if dup:
            self.bust(p, c)
        elif t.ncount[p] >= 7:
            self.flip7(p)

    def bust(self, p: int, c: int) -> None:
        self.table.status[p] = BUSTED
        self.busts[p] += 1
        self.emit((int(EventKind.BUST), p, c, -1, -1))

    def flip7(self, p: int) -> None:
        self.flip7_player = p
        self.flip7s[p] += 1
        self.end_at_once(END_FLIP7)
        bonus = self.ruleset.bonus
        if self.brutal and self.n > 1:
            try:
                choice = self.policies[p].choose_target(
                    self.obs[p], FLIP7_CHOICE, list(range(self.n))
                )
            except BaseException as exc:  # all but Ctrl-C: see policy_failed
                raise self.policy_failed(p, "choose_target (Flip 7)", exc) from None
            self.check_choice(p, choice, list(range(self.n)), "choose_target (Flip 7)")
            if choice != p:
                self.declined = True  # no bonus for p: the other player pays instead
                self.penalty[choice] += bonus
                self.emit((int(EventKind.FLIP7), p, -1, -1, 0))
                self.emit((int(EventKind.FLIP7_PENALTY), p, -1, choice, bonus))
                return
        self.emit((int(EventKind.FLIP7), p, -1, -1, bonus))

    def give_modifier(self, p: int, c: int) -> None:
        """The drawer gives a modifier to a player in play (Brutal: to anyone)."""
        candidates = list(range(self.n)) if self.brutal else self.in_play()
        if not candidates:
            self.to_discard(c)
            self.emit((int(EventKind.ACTION_DROPPED), p, c, -1, -1))
            return
        q = self.choose_target(p, c, candidates)
        self.place(q, c)
        self.recompute(q)
        self.emit((int(EventKind.MODIFIER_GIVEN), p, c, q, -1))

    def choose_target(self, p: int, c: int, candidates: list[int]) -> int:
        if len(candidates) == 1:
            return candidates[0]
        try:
            q = self.policies[p].choose_target(self.obs[p], c, candidates)
        except BaseException as exc:  # all but Ctrl-C: see policy_failed
            raise self.policy_failed(p, "choose_target", exc) from None
        self.check_choice(p, q, candidates, "choose_target")
        return q

    # -- actions ------------------------------------------------------------------------------

    def play_action(self, chooser: int, c: int) -> None:
        if c in (Card.STEAL, Card.SWAP, Card.DISCARD):
            self.play_move(chooser, c)
            return
        candidates = self.in_play() or [chooser]
        q = self.choose_target(chooser, c, candidates)
        self.aside.append(c)  # in front of the receiver until resolved, then discarded
        self.in_hand = -1
        self.emit((int(EventKind.ACTION_PLAYED), chooser, c, q, -1))
        if c == Card.JUST_ONE_MORE:
            self.draw_for(q, int(DrawHow.JUST_ONE_MORE))
            if not self.round_over and self.table.status[q] != BUSTED:
                self.table.status[q] = STAYED
                self.emit((int(EventKind.FORCED_STAY), q, -1, -1, self.points(q)))
        else:
            self.flip_four(q)
        if c in self.aside:  # the round may have ended; then end_round discards it
            self.aside.remove(c)
            self.to_discard(c)

    def draw_for(self, p: int, how: int) -> int:
        """Draw one card for p and emit its DRAW event; -1 (and the round ends) if none left."""
        c = self.draw_pile.pop() if self.draw_pile else self.draw()
        if c < 0:
            return -1
        self.in_hand = c
        self.emit((int(EventKind.DRAW), p, c, -1, how))
        if how != DrawHow.FLIP_FOUR:
            self.receive(p, c)
        return c

    def flip_four(self, p: int) -> None:
        """Four cards one at a time; numbers count at once, the rest wait for the four."""
        t = self.table
        pending: list[int] = []
        for _ in range(4):
            c = self.draw_for(p, int(DrawHow.FLIP_FOUR))
            if c < 0:
                return
            if c in _DEFERRED_IN_FLIP_FOUR:
                self.aside.append(c)
                self.in_hand = -1
                pending.append(c)
                self.emit((int(EventKind.ACTION_DEFERRED), p, c, -1, -1))
            else:
                self.receive(p, c)
            if self.round_over or t.status[p] == BUSTED:
                break
        if self.round_over:
            return  # a Flip 7 ends the round: what waits stays unresolved
        for c in pending:
            if t.status[p] == BUSTED:
                self.emit((int(EventKind.ACTION_DROPPED), p, c, -1, -1))  # set aside till round end
                continue
            self.aside.remove(c)
            self.in_hand = c
            self.receive(p, c)
            if self.round_over:
                return

    def move_options(self, chooser: int, c: int) -> list[tuple[int, ...]]:
        """The legal moves of a Steal, Swap or Discard (cards are ids in rows of players in play)."""
        line = self.table.line
        others = [q for q in self.in_play() if q != chooser]
        if c == Card.STEAL:
            # Numbers only: the rules say modifiers "can be targeted by Swap and Discard".
            return [
                (q, card)
                for q in others
                for card in dict.fromkeys(line[q])
                if face_value(card) >= 0
            ]
        if c == Card.DISCARD:
            players = self.in_play()
            return [(q, card) for q in players for card in dict.fromkeys(line[q])]
        options: list[tuple[int, ...]] = []
        mine = dict.fromkeys(line[chooser]) if chooser in self.in_play() else {}
        for q in others:
            for a in mine:
                for b in dict.fromkeys(line[q]):
                    options.append((chooser, a, q, b))
        for i, q1 in enumerate(others):
            for q2 in others[i + 1 :]:
                for a in dict.fromkeys(line[q1]):
                    for b in dict.fromkeys(line[q2]):
                        options.append((q1, a, q2, b))
        return options

    def play_move(self, chooser: int, c: int) -> None:
        options = self.move_options(chooser, c)
        if not options:
            self.to_discard(c)
            self.emit((int(EventKind.ACTION_DROPPED), chooser, c, -1, -1))
            return
        i = 0
        if len(options) > 1:
            try:
                i = self.policies[chooser].choose_move(self.obs[chooser], c, options)
            except BaseException as exc:  # all but Ctrl-C: see policy_failed
                raise self.policy_failed(chooser, "choose_move", exc) from None
            self.check_choice(chooser, i, list(range(len(options))), "choose_move")
        move = options[i]
        self.aside.append(c)
        self.in_hand = -1
        self.emit((int(EventKind.ACTION_PLAYED), chooser, c, -1, -1))
        touched: list[int] = []
        if c == Card.STEAL:
            victim, card = move
            self.move_card(victim, chooser, card, 0)
            touched = [chooser, victim]
        elif c == Card.SWAP:
            a, card_a, b, card_b = move
            self.move_card(a, b, card_a, 1)
            self.move_card(b, a, card_b, 1)
            touched = [a, b]
        else:
            victim, card = move
            self.discard_from_row(victim, card)
            self.recompute(victim)
            self.emit((int(EventKind.CARD_DISCARDED), victim, card, chooser, 0))
            touched = [victim]
        self.aside.remove(c)
        self.to_discard(c)
        self.settle(touched)

    def discard_from_row(self, p: int, card: int) -> None:
        """A card leaves p's row for the discard pile (the card in hand, if any, stays there)."""
        t = self.table
        t.line[p].remove(card)
        t.visible[card] -= 1
        self.discard_pile.append(card)
        t.discarded[card] += 1

    def move_card(self, src: int, dst: int, card: int, how: int) -> None:
        t = self.table
        t.line[src].remove(card)
        t.line[dst].append(card)
        self.recompute(src)
        self.recompute(dst)
        self.emit((int(EventKind.CARD_MOVED), src, card, dst, how))

    def settle(self, players: list[int]) -> None:
        """After cards moved: a player holding a duplicate busts; seven numbers are a Flip 7."""
        t = self.table
        for q in players:
            if t.status[q] != BUSTED and vengeance_row_busts(t.line[q]):
                self.bust(q, -1)
        for q in players:
            if t.status[q] != BUSTED and t.ncount[q] >= 7 and not self.round_over:
                self.flip7(q)
