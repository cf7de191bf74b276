"""human — you, at the terminal: the table, your bust risk and the value of one more card.

Every decision the engines ask of a policy is asked here: hit or stay; who gets a Freeze,
Flip Three, Just One More, Flip Four or a modifier you drew; who gets a spare Second Chance;
which Steal, Swap or Discard move to make; and (Brutal) what your Flip 7 does. Choices are a
numbered list of options by name; `q` (or the end of the input) leaves the game (`LeftGame`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flip7.cards import FLIP7_CHOICE, Card, card_label
from flip7.limits import LeftPlay
from flip7.observation import STATUS_NAMES, Observation
from flip7.policies.base import Policy, bust_risk, points
from flip7.policies.ev import hit_value

QUIT = ("q", "quit", "exit")


class LeftGame(LeftPlay):
    """The person left the game: `q` typed (`eof` False) or the input ended (`eof` True).

    A LeftPlay, so that the engine passes it through instead of reporting it as a policy
    failure."""

    def __init__(self, eof: bool) -> None:
        super().__init__("input ended" if eof else "quit")
        self.eof = eof


def label(obs: Observation, c: int) -> str:
    """A card's name at this table (0 is The Zero in Vengeance)."""
    return "The Zero" if obs.variant and c == Card.N0 else card_label(c)


def render_table(obs: Observation, names: Sequence[str] | None = None) -> str:
    """The table as a person sees it: every row, status and score, aligned however long the
    names are."""
    seats = range(obs.n_players)
    who = [names[p] if names else f"P{p}" for p in seats]
    width = max(len(w) for w in who)
    showing = [points(obs, p) for p in seats]
    # numbers as wide as the widest at the table (a target of 1000, Brutal's negative totals)
    tw = max(3, *(len(str(obs.totals[p])) for p in seats))
    sw = max(3, *(len(str(x)) for x in showing))
    lines = []
    for p in seats:
        cards = " ".join(label(obs, c) for c in obs.line[p]) or "-"
        mark = "*" if p == obs.seat else " "
        lines.append(
            f"{mark}{who[p]:<{width}} [{STATUS_NAMES[obs.status[p]]:>6}] total "
            f"{obs.totals[p]:>{tw}}  showing {showing[p]:>{sw}}: {cards}"
        )
    return "\n".join(lines)


class HumanPolicy(Policy):
    """Prompts at the terminal; bad input asks again; `q` or the end of input raises LeftGame."""

    def __init__(
        self,
        ask: Callable[[str], str] = input,
        say: Callable[[str], None] = print,
        names: Sequence[str] | None = None,
    ) -> None:
        self.ask = ask
        self.say = say
        self.names = names

    def _who(self, obs: Observation, p: int) -> str:
        if p == obs.seat:
            return "you"
        return self.names[p] if self.names else f"P{p}"

    def _whose(self, obs: Observation, p: int) -> str:
        return "your" if p == obs.seat else f"{self._who(obs, p)}'s"

    def _answer(self, prompt: str) -> str:
        try:
            answer = self.ask(prompt).strip().lower()
        except EOFError:
            raise LeftGame(eof=True) from None
        if answer in QUIT:
            raise LeftGame(eof=False)
        return answer

    def hit(self, obs: Observation) -> bool:
        me = obs.seat
        value, now = hit_value(obs, me, counting=False)
        self.say(render_table(obs, self.names))
        self.say(
            f"You show {now}. Bust risk {bust_risk(obs, me, False):.0%}; "
            f"one more card is worth {value:.1f} on average."
        )
        while True:
            answer = self._answer("Hit or stay? [h/s, q quits] ")
            if answer in ("h", "hit"):
                return True
            if answer in ("s", "stay"):
                return False
            self.say("Please type h (hit), s (stay) or q (quit).")

    def _choose(self, question: str, options: Sequence[str], suggested: int) -> int:
        """The index of the option the person picks from a numbered list (1-based on screen)."""
        self.say(question)
        for i, text in enumerate(options, 1):
            self.say(f"  {i}) {text}")
        n = len(options)
        while True:
            answer = self._answer(f"Your choice [1-{n}, bots would pick {suggested + 1}]: ")
            if answer.isdigit() and 1 <= int(answer) <= n:
                return int(answer) - 1
            self.say(f"Please type a number from 1 to {n} (or q to quit).")

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        self.say(render_table(obs, self.names))
        bots = candidates.index(Policy.choose_target(self, obs, card, candidates))
        if card == FLIP7_CHOICE:
            options = [
                f"+{obs.bonus} for you" if q == obs.seat else f"-{obs.bonus} to {self._who(obs, q)}"
                for q in candidates
            ]
            i = self._choose("You Flip 7! Take the bonus, or take it from a player:", options, bots)
            return candidates[i]
        options = ["yourself" if q == obs.seat else self._who(obs, q) for q in candidates]
        i = self._choose(f"Who gets your {label(obs, card)}?", options, bots)
        return candidates[i]

    def choose_recipient(self, obs: Observation, candidates: Sequence[int]) -> int:
        bots = candidates.index(Policy.choose_recipient(self, obs, candidates))
        options = [self._who(obs, q) for q in candidates]
        return candidates[self._choose("Who gets your spare Second Chance?", options, bots)]

    def move_text(self, obs: Observation, card: int, option: tuple[int, ...]) -> str:
        """A Steal, Swap or Discard option in words, e.g. 'steal 9 from P2:ev'."""
        if card == Card.STEAL:
            victim, c = option
            return f"steal {label(obs, c)} from {self._who(obs, victim)}"
        if card == Card.SWAP:
            a, ca, b, cb = option
            if a == obs.seat:
                return f"swap your {label(obs, ca)} for {self._whose(obs, b)} {label(obs, cb)}"
            return (
                f"swap {self._whose(obs, a)} {label(obs, ca)} with "
                f"{self._whose(obs, b)} {label(obs, cb)}"
            )
        victim, c = option
        return f"discard {self._whose(obs, victim)} {label(obs, c)}"

    def choose_move(self, obs: Observation, card: int, options: Sequence[tuple[int, ...]]) -> int:
        self.say(render_table(obs, self.names))
        bots = Policy.choose_move(self, obs, card, options)
        texts = [self.move_text(obs, card, o) for o in options]
        return self._choose(f"Your {card_label(card)}: what do you do?", texts, bots)
