"""dp[:MODEL] — the exact solo optimum of a solver model, looked up in its cached table.

The table (flip7.solver.cache) is built on first use into the cache directory ($FLIP7_CACHE or
~/.cache/flip7) and read from there afterwards; a decision is one bit test, deterministic.
MODEL is `basic` (default: Murch's model), `real` or `full` (see `flip7 solve --model`).

The policy plays from its own line, as if alone with a full deck minus its own cards:
- numbers and modifiers shown are read from the observation, Flip Threes from its line;
- Second Chance state: at a table with others it cannot tell its own discards from theirs, so
  it uses (drawn = held, used = 0). Alone (one seat) it counts this round's discards, which are
  all its own: Second Chances drawn = held + discarded, duplicates discarded = numbers
  discarded. The count starts at its first decision of each round, so it is exact unless a
  Flip Three on the deal already used a Second Chance.
- Outside the table (a 13 or any "With a Vengeance" card) it falls back to `ev`, the one-step
  lookahead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flip7.cards import Card
from flip7.observation import Observation
from flip7.policies.base import Policy, PolicySpecError
from flip7.policies.ev import EVPolicy

if TYPE_CHECKING:
    from flip7.solver.model import Model

_MOD_LO, _MOD_HI = int(Card.PLUS2), int(Card.TIMES2)
_FLIP_THREE = int(Card.FLIP_THREE)
_SC = int(Card.SECOND_CHANCE)
_N13 = int(Card.N13)


class DPPolicy(Policy):
    """Hit exactly when the solved table says so (see the module docstring)."""

    def __init__(self, model: str | Model = "basic", cache_dir: str | None = None) -> None:
        """`model`: a model name, or a `Model` (e.g. a tiny deck in a test)."""
        from flip7.solver.cache import load_table
        from flip7.solver.model import get_model

        try:
            self.model = get_model(model) if isinstance(model, str) else model
        except ValueError as exc:
            raise PolicySpecError(f"policy dp:MODEL: {exc}") from None
        table, self.path, _ = load_table(self.model, cache_dir)
        self._use(table)

    def _use(self, table) -> None:  # type: ignore[no-untyped-def]
        """Play from `table` (this policy's, or a `race`/`win` table, which share its hand
        encoding): index its Second Chance states and reset the per-round reading."""
        self.table = table
        self.fallback = EVPolicy()
        self._n_t = table.n_t
        self._none = table.sc_index(0, 0, 0)
        held = (1, 1, 0)  # a deck without Second Chances has no such state
        self._held = table.sc_states.index(held) if held in table.sc_states else 0
        self._obs: Observation | None = None
        self._round = -1
        self._base_sc = 0
        self._base_numbers = 0

    def _in_table(self, obs: Observation) -> bool:
        """Whether the table covers this hand (no 13, no "With a Vengeance" card)."""
        return not (obs.mask[obs.seat] >> _N13 or getattr(obs, "variant", 0))

    def _hand(self, obs: Observation, solo_count: bool) -> tuple[int, int, int, int]:
        """The seat's hand as the table indexes it: (number mask, modifier bits, Second Chance
        state, Flip Threes held); the Second Chance state read from the round's discards when
        `solo_count` (alone at the table, every discard is ours)."""
        me = obs.seat
        if solo_count:
            return self._seat_hand(obs, me, self._solo_sc(obs, bool(obs.has_sc[me])))
        return self._seat_hand(obs, me)

    def _seat_hand(
        self, obs: Observation, p: int, sc: int | None = None
    ) -> tuple[int, int, int, int]:
        """Seat p's hand as the table indexes it; its Second Chance state `sc`, else read from
        what it holds."""
        mods = 0
        t = 0
        for c in obs.line[p]:
            if _MOD_LO <= c <= _MOD_HI:
                mods |= 1 << (c - _MOD_LO)
            elif c == _FLIP_THREE:
                t += 1
        if sc is None:
            sc = self._held if obs.has_sc[p] else self._none
        return obs.mask[p], mods, sc, min(t, self._n_t - 1)

    def hit(self, obs: Observation) -> bool:
        if not self._in_table(obs):
            return self.fallback.hit(obs)
        return self.table.hit(*self._hand(obs, obs.n_players == 1))

    def _solo_sc(self, obs: Observation, held: bool) -> int:
        """Second Chance state from this round's discards (all our own when alone)."""
        dis = obs.discarded
        numbers = sum(dis[: _N13 + 1])
        if obs is not self._obs or obs.round != self._round:
            self._obs, self._round = obs, obs.round
            self._base_sc, self._base_numbers = dis[_SC], numbers
        spent = dis[_SC] - self._base_sc
        used = numbers - self._base_numbers
        key = (spent + held, int(held), used)
        states = self.table.sc_states
        if key not in states:
            key = (key[0], key[1], 0)  # models where a saved duplicate stays in the deck
            if key not in states:
                return self._held if held else self._none
        return states.index(key)


class TargetTablePolicy(DPPolicy):
    """A policy that reads the hand as `dp` does but plays from one table per game target
    (`race`, `win`): `_load(target)` loads (or solves and caches) it. Tables load on first
    use: parsing the spec, or naming it in a line-up that is checked, solves nothing."""

    def _tables_from(self, model: Model, cache_dir: str | None, target: int) -> None:
        """Set the model and cache, and the target whose table `table` is (loaded on first
        use)."""
        self.model = model
        self.cache_dir = cache_dir
        self._tables: dict[int, object] = {}
        self._target = target

    def _load(self, target: int):  # type: ignore[no-untyped-def]
        """(table, path, solved) for `target`, as flip7.solver's load_* functions return."""
        raise NotImplementedError

    def __getattr__(self, name: str) -> object:
        """The dp policy's table and its fields (`table`, ...), on first use (see _target)."""
        if name.startswith("__") or "table" in self.__dict__ or "_target" not in self.__dict__:
            raise AttributeError(name)
        self._use(self.table_for(self._target))
        return object.__getattribute__(self, name)

    def table_for(self, target: int):  # type: ignore[no-untyped-def]
        """The table for `target` (loaded, or solved and cached, on first use)."""
        table = self._tables.get(target)
        if table is None:
            table, _, _ = self._load(target)
            self._tables[target] = table
        return table
