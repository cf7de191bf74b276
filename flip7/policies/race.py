"""race[:MODEL] — the solo race's optimal policy: fewest expected rounds to reach the target.

The table (flip7.solver.race) holds one round policy per banked score 0..target-1, solved by
backward induction over the banked score under the model's assumption that every round starts
from a fresh deck. It is built on first use into the cache directory ($FLIP7_CACHE or
~/.cache/flip7; about a minute of CPU for `basic`) and read from there afterwards, one table
per target: the policy reads the game's target from its observation. MODEL is `basic`
(default) or `real`.

A decision is one bit test in the table of the seat's own banked score, with the hand read as
`dp` reads it (numbers, modifiers, Flip Threes from its own line; the Second Chance state from
what it holds, or alone from this round's discards); outside the table (a 13 or any "With a
Vengeance" card) it falls back to `ev`. It plays its own race: the other seats' scores do not
enter (see the `win` family for that).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flip7.observation import Observation
from flip7.policies.base import PolicySpecError
from flip7.policies.dp import TargetTablePolicy

if TYPE_CHECKING:
    from flip7.solver.model import Model

RACE_MODELS = ("basic", "real")


class RacePolicy(TargetTablePolicy):
    """Hit exactly when the race table of its banked score says so (see the module
    docstring). Shares `dp`'s reading of the hand; the compiled kernel plays it as it plays
    `dp`, from the tables of the game's target (flip7.kernel.dp)."""

    def __init__(
        self, model: str | Model = "basic", cache_dir: str | None = None, target: int = 200
    ) -> None:
        """`model`: a name, or a `Model` (a tiny deck in a test); `target`: the table loaded
        first (a game with another target loads its own on first use)."""
        from flip7.solver.model import get_model

        if isinstance(model, str):
            if model not in RACE_MODELS:
                raise PolicySpecError(
                    f"policy race:MODEL needs MODEL in {', '.join(RACE_MODELS)}, got {model!r}"
                )
            model = get_model(model)
        self._tables_from(model, cache_dir, target)

    def _load(self, target: int):  # type: ignore[no-untyped-def]
        from flip7.solver.race import load_race

        return load_race(self.model, target, self.cache_dir)

    def hit(self, obs: Observation) -> bool:
        if not self._in_table(obs):
            return self.fallback.hit(obs)
        table = self.table if obs.target == self.table.target else self.table_for(obs.target)
        return table.hit(obs.totals[obs.seat], *self._hand(obs, obs.n_players == 1))
