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
from flip7.policies import PolicySpecError
from flip7.policies.dp import _FLIP_THREE, _MOD_HI, _MOD_LO, _N13, DPPolicy
from flip7.policies.ev import EVPolicy

if TYPE_CHECKING:
    from flip7.solver.model import Model

RACE_MODELS = ("basic", "real")


class RacePolicy(DPPolicy):
    """Hit exactly when the race table of its banked score says so (see the module
    docstring). Shares `dp`'s reading of the hand; not a `dp` for the compiled kernel."""

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
        self.model = model
        self.cache_dir = cache_dir
        self.fallback = EVPolicy()
        self._tables: dict[int, object] = {}
        self.table = self.table_for(target)
        self._n_t = self.table.n_t
        self._none = self.table.sc_index(0, 0, 0)
        held = (1, 1, 0)
        self._held = self.table.sc_states.index(held) if held in self.table.sc_states else 0
        self._obs: Observation | None = None
        self._round = -1
        self._base_sc = 0
        self._base_numbers = 0

    def table_for(self, target: int):  # type: ignore[no-untyped-def]
        """The race table for `target` (loaded, or solved and cached, on first use)."""
        table = self._tables.get(target)
        if table is None:
            from flip7.solver.race import load_race

            table, _, _ = load_race(self.model, target, self.cache_dir)
            self._tables[target] = table
        return table

    def hit(self, obs: Observation) -> bool:
        me = obs.seat
        mask = obs.mask[me]
        if mask >> _N13 or getattr(obs, "variant", 0):
            return self.fallback.hit(obs)
        table = self.table if obs.target == self.table.target else self.table_for(obs.target)
        mods = 0
        t = 0
        for c in obs.line[me]:
            if _MOD_LO <= c <= _MOD_HI:
                mods |= 1 << (c - _MOD_LO)
            elif c == _FLIP_THREE:
                t += 1
        held = bool(obs.has_sc[me])
        sc = self._held if held else self._none
        if obs.n_players == 1:
            sc = self._solo_sc(obs, held)
        return table.hit(obs.totals[me], mask, mods, sc, min(t, self._n_t - 1))
