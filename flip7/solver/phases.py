"""The phases of a solo round with Freeze and Flip Three played on yourself (Ruleset 3.1).

At a decision point the phase is just t, the Flip Threes drawn so far. Inside a Flip Three there
are no decisions, but the rest of the round depends on a little bookkeeping, the phase
(t, f, left, b, fcur, c, F): Flip Threes and Freezes drawn so far, cards left to flip in this
Flip Three, Flip Threes waiting in it (b) and whether a Freeze waits in it (fcur), then the work
left over from enclosing Flip Threes: c more Flip Threes, then a Freeze if F.

Resolution follows the engine: when a Flip Three's three cards are out (and you have not busted
or flipped 7), its waiting cards are played in the order drawn. A Flip Three makes you flip three
more (whose own waiting cards come first); a Freeze banks your points and ends everything after
it, so cards drawn after it in the same Flip Three are dropped and the enclosing work is
forgotten (c = F = 0 once fcur is set). Flip Threes are all alike, so only their count matters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Outcome codes in the phase table: bank your points now / no such card in the deck.
BANK, NONE = -1, -2

_Phase = tuple[int, int, int, int, int, int, int]


def _resolve(t: int, f: int, b: int, fcur: int, c: int, big_f: int) -> tuple[str, object]:
    c2, f2 = (b, 1) if fcur else (b + c, big_f)
    if c2 > 0:
        return "three", (t, f, 3, 0, 0, c2 - 1, f2)
    if f2:
        return "bank", None
    return "dec", t


def _step(ph: _Phase, kind: int) -> tuple[str, object]:
    """The phase after one more card in a Flip Three: kind 0 any card that changes the hand,
    1 a Flip Three, 2 a Freeze."""
    t, f, left, b, fcur, c, big_f = ph
    if kind == 1:
        t += 1
        if not fcur:
            b += 1
    elif kind == 2:
        f += 1
        if not fcur:
            fcur, c, big_f = 1, 0, 0
    if left == 1:
        return _resolve(t, f, b, fcur, c, big_f)
    return "three", (t, f, left - 1, b, fcur, c, big_f)


@dataclass(frozen=True)
class Phases:
    """Decision phases (index t) first, then Flip Three phases; `table[p]` is
    (t, f, is_decision, after a hand card, after a Flip Three, after a Freeze)."""

    labels: list[object]
    table: np.ndarray
    order: np.ndarray  # a processing order for the backward sweep
    n_dec: int


def build_phases(n_t: int, n_f: int) -> Phases:
    """Every phase reachable with n_t Flip Threes and n_f Freezes in the deck."""
    decs = list(range(n_t + 1))
    threes: list[_Phase] = []
    seen: set[_Phase] = set()
    todo: list[_Phase] = [(t, 0, 3, 0, 0, 0, 0) for t in range(1, n_t + 1)]
    while todo:
        ph = todo.pop()
        if ph in seen:
            continue
        seen.add(ph)
        threes.append(ph)
        for kind, limit, used in ((0, 1, 0), (1, n_t, ph[0]), (2, n_f, ph[1])):
            if used >= limit:
                continue
            what, nxt = _step(ph, kind)
            if what == "three":
                todo.append(nxt)  # type: ignore[arg-type]
    threes.sort()
    labels: list[object] = [("decision", t) for t in decs] + list(threes)
    index = {ph: len(decs) + i for i, ph in enumerate(threes)}

    def code(what: str, nxt: object) -> int:
        if what == "bank":
            return BANK
        if what == "dec":
            return int(nxt)  # type: ignore[call-overload]
        return index[nxt]  # type: ignore[index]

    table = np.zeros((len(labels), 6), dtype=np.int64)
    for t in decs:
        to_three = index[(t + 1, 0, 3, 0, 0, 0, 0)] if t < n_t else NONE
        table[t] = (t, 0, 1, t, to_three, BANK if n_f else NONE)
    for ph in threes:
        row = [ph[0], ph[1], 0]
        for kind, limit, used in ((0, 1, 0), (1, n_t, ph[0]), (2, n_f, ph[1])):
            row.append(code(*_step(ph, kind)) if used < limit else NONE)
        table[index[ph]] = row
    # Same-hand transitions always draw a Flip Three or Freeze: t + f grows along them.
    order = np.argsort(-(table[:, 0] + table[:, 1]), kind="stable")
    return Phases(labels, table, order.astype(np.int64), len(decs))
