"""human — you, at the terminal: the table, your bust risk and the value of one more card."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flip7.cards import card_label
from flip7.observation import STATUS_NAMES, Observation
from flip7.policies.base import Policy, bust_risk, points
from flip7.policies.ev import hit_value


def render_table(obs: Observation, names: Sequence[str] | None = None) -> str:
    """The table as a person sees it: every row, status and score."""
    lines = []
    for p in range(obs.n_players):
        who = names[p] if names else f"P{p}"
        cards = " ".join(card_label(c) for c in obs.line[p]) or "-"
        mark = "*" if p == obs.seat else " "
        lines.append(
            f"{mark}{who:>8} [{STATUS_NAMES[obs.status[p]]:>6}] total {obs.totals[p]:>3}"
            f"  showing {points(obs, p):>3}: {cards}"
        )
    return "\n".join(lines)


class HumanPolicy(Policy):
    """Prompts at the terminal; bad input asks again."""

    def __init__(
        self,
        ask: Callable[[str], str] = input,
        say: Callable[[str], None] = print,
        names: Sequence[str] | None = None,
    ) -> None:
        self.ask = ask
        self.say = say
        self.names = names

    def _who(self, p: int) -> str:
        return self.names[p] if self.names else f"P{p}"

    def hit(self, obs: Observation) -> bool:
        me = obs.seat
        value, now = hit_value(obs, me, counting=False)
        self.say(render_table(obs, self.names))
        self.say(
            f"You show {now}. Bust risk {bust_risk(obs, me, False):.0%}; "
            f"one more card is worth {value:.1f} on average."
        )
        while True:
            answer = self.ask("Hit or stay? [h/s] ").strip().lower()
            if answer in ("h", "hit"):
                return True
            if answer in ("s", "stay"):
                return False
            self.say("Please type h (hit) or s (stay).")

    def _pick(self, prompt: str, candidates: Sequence[int]) -> int:
        options = ", ".join(f"{q}={self._who(q)}" for q in candidates)
        while True:
            answer = self.ask(f"{prompt} ({options}): ").strip()
            if answer.isdigit() and int(answer) in candidates:
                return int(answer)
            self.say(f"Please type one of {list(candidates)}.")

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        self.say(render_table(obs, self.names))
        return self._pick(f"Who gets your {card_label(card)}?", candidates)

    def choose_recipient(self, obs: Observation, candidates: Sequence[int]) -> int:
        return self._pick("Who gets your spare Second Chance?", candidates)
