"""win[:MODEL] — hit or stay to maximise the chance of winning the game, from the scores, the
target and the field size.

The tables (flip7.solver.win) give, for each field size 2..8, my total and the leader's total
among the others, which round policy of a menu to play this round: `dp`, the race policies,
or "reach at least k" policies. They are solved under a stated model: independent rounds from
a fresh deck, the opponents playing `dp`; exact heads-up for the best menu policy, and for 3..8
players against one opponent at the leader's total who scores the best of n - 1 `dp` rounds.
Built on first use into the cache directory ($FLIP7_CACHE or ~/.cache/flip7; a couple of
minutes of CPU for `basic`, the race table included), then loaded in well under a second.

A decision is the menu policy's bit for the hand, read as `dp` reads it; outside the tables (a
13 or any "With a Vengeance" card) it falls back to `ev`; alone at the table it plays the race.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flip7.observation import Observation
from flip7.policies import PolicySpecError
from flip7.policies.dp import DPPolicy

if TYPE_CHECKING:
    from flip7.solver.model import Model

WIN_MODELS = ("basic", "real")


class WinPolicy(DPPolicy):
    """Hit when the menu policy the win table picks for the scores says so (see the module
    docstring). Shares `dp`'s reading of the hand; not a `dp` for the compiled kernel."""

    def __init__(
        self, model: str | Model = "basic", cache_dir: str | None = None, target: int = 200
    ) -> None:
        from flip7.solver.model import get_model

        if isinstance(model, str):
            if model not in WIN_MODELS:
                raise PolicySpecError(
                    f"policy win:MODEL needs MODEL in {', '.join(WIN_MODELS)}, got {model!r}"
                )
            model = get_model(model)
        self.model = model
        self.cache_dir = cache_dir
        self._tables: dict[int, object] = {}
        self._solo: object | None = None
        self._use(self.table_for(target))

    def table_for(self, target: int):  # type: ignore[no-untyped-def]
        """The win tables for `target` (loaded, or solved and cached, on first use)."""
        table = self._tables.get(target)
        if table is None:
            from flip7.solver.win import load_win

            table, _, _ = load_win(self.model, target, self.cache_dir)
            self._tables[target] = table
        return table

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
        leader = max(totals[p] for p in range(obs.n_players) if p != me)
        return self.decide(obs, obs.n_players, totals[me], leader)

    def decide(
        self, obs: Observation, n: int, mine: int, leader: int, solo_count: bool = False
    ) -> bool:
        """The table's answer for a field of n at these totals, from this observation's hand
        (`solo_count`: read the Second Chance state from the round's discards, as when
        alone)."""
        table = self.table if obs.target == self.table.target else self.table_for(obs.target)
        return table.hit(table.policy(n, mine, leader), *self._hand(obs, solo_count))
