"""win[:MODEL][:fast] — hit or stay to maximise the chance of winning the game, from the scores,
the target and the field size.

The tables (flip7.solver.win) give, for each field size 2..8, my total and the leader's total
among the others, which round policy of a menu to play this round: `dp`, the race policies,
or "reach at least k" policies. They are solved under a stated model: independent rounds from
a fresh deck, the opponents playing `dp`; exact heads-up for the best menu policy, and for 3..8
players against one opponent at the leader's total who scores the best of n - 1 `dp` rounds.
Built on first use into the cache directory ($FLIP7_CACHE or ~/.cache/flip7; a couple of
minutes of CPU for `basic`, the race table included), then loaded in well under a second.

A decision is the menu policy's bit for the hand, read as `dp` reads it; outside the tables (a
13 or any "With a Vengeance" card) it falls back to `ev`; alone at the table it plays the race.

Once every other player is done with the round (stayed, busted or frozen) and the leader among
them ends it at or above the target, the round's reward is known exactly: R(s) = 1 if my total
+ s beats the leader's, the tie value if level (a tie for the lead plays on), else 0. The policy
then plays the in-round optimum for R from the hand in front of it (flip7.solver.win.InRound:
one backward sweep over the hands it can reach, kept for the rest of the round; the sweep
depends only on the gap, so it serves every pair of totals with that gap). Further from the
target the same exact reward (the table's W between rounds) gained no measurable win rate for
six times the work, so there the menu policy plays on.

Heads-up, a Freeze it flips goes where it leaves the better chance to win: on the opponent (it
banks what it shows, and I play on against that total) or on itself (it banks its points, and
the opponent plays on: its round score's law from the hand it shows, playing dp, by a forward
sweep). Flip Three and larger tables keep the shared heuristics.

`win:fast` (`win:real:fast`) plays the menu policy's bit alone: no in-round sweep, Freezes by
the shared heuristics; one table lookup a decision, so the compiled kernel plays it at the speed
of `dp`, for a little less of the win rate (heads-up against `ev`, see docs/play-to-win.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from flip7.cards import Card
from flip7.observation import ACTIVE, Observation
from flip7.policies.base import PolicySpecError, points
from flip7.policies.dp import TargetTablePolicy

if TYPE_CHECKING:
    from flip7.solver.model import Model

WIN_MODELS = ("basic", "real")
#: One in-round workspace per model (its arrays are the size of the model's state space).
_IN_ROUND: dict[str, object] = {}


class WinPolicy(TargetTablePolicy):
    """Hit when the menu policy the win table picks for the scores says so (see the module
    docstring). Shares `dp`'s reading of the hand; the compiled kernel plays it at two or more
    seats of the classic game through the same compiled arithmetic (flip7.kernel.win)."""

    def __init__(
        self,
        model: str | Model = "basic",
        cache_dir: str | None = None,
        target: int = 200,
        endgame: bool = True,
        freeze: bool = True,
    ) -> None:
        """`endgame` and `freeze` off (the `win:fast` spec): the menu policy's bit alone, no
        in-round sweep, Freezes by the shared heuristics."""
        from flip7.solver.model import get_model

        if isinstance(model, str):
            if model not in WIN_MODELS:
                raise PolicySpecError(
                    f"policy win[:MODEL][:fast] needs MODEL in {', '.join(WIN_MODELS)}, "
                    f"got {model!r}"
                )
            model = get_model(model)
        self._solo: object | None = None
        #: Play the in-round optimum once the others are done (off: the menu policy only).
        self.endgame = endgame
        #: Heads-up, aim a Freeze by the chance to win (off: the shared heuristics).
        self.freeze = freeze
        #: The opponent's round-score law under dp, per hand it shows (totals do not enter).
        self._laws: dict[tuple[int, int, int, int], np.ndarray] = {}
        self._tables_from(model, cache_dir, target)

    def _load(self, target: int):  # type: ignore[no-untyped-def]
        from flip7.solver.win import load_win

        return load_win(self.model, target, self.cache_dir)

    def hit(self, obs: Observation) -> bool:
        me = obs.seat
        if not self._in_table(obs):
            return self.fallback.hit(obs)
        if obs.n_players == 1:
            if self._solo is None:
                from flip7.policies.race import RacePolicy

                self._solo = RacePolicy(self.model, self.cache_dir, obs.target)
            return self._solo.hit(obs)  # type: ignore[attr-defined]
        totals = obs.totals
        status = obs.status
        others = [p for p in range(obs.n_players) if p != me]
        if self.endgame and all(status[p] != ACTIVE for p in others):
            final = max(totals[p] + points(obs, p) for p in others)
            if max(final, totals[me]) >= obs.target:
                return self.decide_known(obs, obs.n_players, totals[me], final)
        leader = max(totals[p] for p in others)
        return self.decide(obs, obs.n_players, totals[me], leader)

    def _in_round(self):  # type: ignore[no-untyped-def]
        from flip7.solver.win import InRound

        ir = _IN_ROUND.get(self.model.key)
        if ir is None:
            ir = _IN_ROUND[self.model.key] = InRound(self.model)
        return ir

    def _dp_hit(self):  # type: ignore[no-untyped-def]
        """dp's round policy in the solver's order (the opponent's model)."""
        ir = self._in_round()
        got = getattr(ir, "dp_hit", None)
        if got is None:
            from flip7.solver.cache import load_table

            sp = ir.space
            table, _, _ = load_table(self.model, self.cache_dir)
            dense = table.as_array()[sp.masks]  # (mask rank, mods, sc, t)
            got = ir.dp_hit = np.ascontiguousarray(dense.transpose(2, 0, 1, 3)).reshape(-1)
        return got

    def choose_target(self, obs: Observation, card: int, candidates: Sequence[int]) -> int:
        """Heads-up, a Freeze goes where it leaves me the better chance to win: on the
        opponent (it banks what it shows; I play on against that total, my best in-round play
        for the exact reward) or on me (I bank mine; the opponent plays on, its round score's
        law from its hand under dp). Otherwise the shared heuristics."""
        me = obs.seat
        if (
            card != Card.FREEZE
            or not self.freeze
            or obs.n_players != 2
            or me not in candidates
            or (1 - me) not in candidates
            or not self._in_table(obs)
            or obs.mask[1 - me] >> 13
        ):
            return super().choose_target(obs, card, candidates)
        o = 1 - me
        table = self.table if obs.target == self.table.target else self.table_for(obs.target)
        mine, theirs = obs.totals[me], obs.totals[o]
        hand = self._seat_hand(obs, o)
        law = self._laws.get(hand)
        if law is None:
            law = self._laws[hand] = self._in_round().law(self._dp_hit(), *hand)
        mine_pts = points(obs, me)
        on_me = table.reward_against_at(2, mine, theirs, law, mine_pts)
        reward = table.reward(2, mine, theirs + points(obs, o))
        if reward[mine_pts] >= on_me:
            return o  # frozen opponent, I can stay on the same points: no worse (no sweep)
        ir = self._in_round()
        mask, mods, sc, t = self._hand(obs, False)
        ir.solve(reward, mask, sc, None)
        return o if ir.value(mask, mods, sc, t) >= on_me else me

    def decide_known(
        self, obs: Observation, n: int, mine: int, final: int, solo_count: bool = False
    ) -> bool:
        """The in-round optimum from this hand when the others are done and the leader among
        them ends the round at `final` (a field of n, my total `mine`)."""
        table = self.table if obs.target == self.table.target else self.table_for(obs.target)
        ir = self._in_round()
        mask, mods, sc, t = self._hand(obs, solo_count)
        # At the target the reward is a step at final - mine (a tie worth the tie value): one
        # sweep serves every pair of totals with that gap.
        gap = final - mine if final >= table.target else None
        key = (self.model.key, table.target, n, gap if gap is not None else (mine, final))
        if ir.key != key or not ir.covers(mask, sc):
            ir.solve(table.reward(n, mine, final), mask, sc, key)
        return ir.decide(mask, mods, sc, t)

    def decide(
        self, obs: Observation, n: int, mine: int, leader: int, solo_count: bool = False
    ) -> bool:
        """The table's answer for a field of n at these totals, from this observation's hand
        (`solo_count`: read the Second Chance state from the round's discards, as when
        alone)."""
        table = self.table if obs.target == self.table.target else self.table_for(obs.target)
        return table.hit(table.policy(n, mine, leader), *self._hand(obs, solo_count))
