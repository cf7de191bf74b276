"""What the kernel can play, and the plain arrays that tell it how.

A policy is supported when its exact type is a built-in one (a subclass may override anything,
so it is left to the reference engine); it becomes one row of four numbers: kind, an int
parameter, a float parameter and whether it counts the discard pile. A ruleset becomes an int
and a float parameter array. `unsupported` says in words why a game must go to the reference
engine, or returns None.

The kernel's constants (card ids, event kinds, statuses, rule modes) are literals in
`flip7.kernel.core`; `constant_mismatches` compares them with flip7's enums so that a renumbering
there turns the kernel off instead of silently logging wrong events (and
`vengeance_constant_mismatches` those of `flip7.kernel.vengeance`, for Vengeance games).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flip7.cards import CLASSIC, N_CARD_IDS, PLUS_VALUE, Card, Deck
from flip7.engine import END_FLIP7, END_NO_CARDS, END_NOBODY_ACTIVE, decks_for
from flip7.events import CODE_OFFSETS, CODE_SHIFTS, HIT_SHIFT, DrawHow, EventKind
from flip7.observation import ACTIVE, BUSTED, FROZEN, STAYED
from flip7.policies import base as policy_base
from flip7.policies.base import Policy
from flip7.policies.ev import EndgamePolicy, EVPolicy
from flip7.policies.thresholds import BustPolicy, CountPolicy, DupPolicy, SumPolicy
from flip7.rules import RULES_VERSION, FlipThreeActions, Ruleset
from flip7.scoring import MINUS_VALUE
from flip7.variants import VENGEANCE_CARDS, Variant

#: The rules version the kernel implements; a newer reference engine turns the kernel off.
KERNEL_RULES_VERSION = 3
#: Event rows keep `round` in int16 (pipeline.schema), so longer games stay with the reference.
MAX_KERNEL_ROUNDS = 32767
MAX_KERNEL_PLAYERS = 127  # seats fit the int8 columns of the event log
#: Event values are int16: a total is under target + 201 (the best possible round), so every
#: value fits while the target stays under this.
MAX_KERNEL_TARGET = 32000

#: The event kinds the classic game emits (others belong to other variants).
CLASSIC_KINDS = (
    "ROUND_START DRAW HIT STAY ACTION_PLAYED ACTION_DEFERRED ACTION_DROPPED FREEZE SC_KEPT "
    "SC_PASSED SC_DISCARDED SC_USED BUST FLIP7 RESHUFFLE ROUND_SCORE ROUND_END ROUND_CAP GAME_END"
).split()

#: Card ids and event kinds the Vengeance kernel (flip7.kernel.vengeance) holds as literals.
VENGEANCE_CARD_NAMES = (
    "UNLUCKY_7 LUCKY_13 DIV2 MINUS2 MINUS10 JUST_ONE_MORE FLIP_FOUR STEAL SWAP DISCARD"
).split()
VENGEANCE_KINDS = "MODIFIER_GIVEN CARD_MOVED CARD_DISCARDED FORCED_STAY FLIP7_PENALTY".split()

# Policy kinds, as in flip7.kernel.core (duplicated so that importing this needs no numba).
P_SUM, P_COUNT, P_BUST, P_EV, P_ENDGAME, P_DP, P_DUP = 0, 1, 2, 3, 4, 5, 6
P_WIN = 7


def constant_mismatches() -> list[str]:
    """Kernel constants that differ from flip7's enums (empty when the kernel is in step)."""
    from flip7.kernel import core

    expected = {
        "N_IDS": N_CARD_IDS,
        "FREEZE": int(Card.FREEZE),
        "FLIP_THREE": int(Card.FLIP_THREE),
        "SECOND_CHANCE": int(Card.SECOND_CHANCE),
        "TIMES2": int(Card.TIMES2),
        "ACTIVE": ACTIVE,
        "STAYED": STAYED,
        "FROZEN": FROZEN,
        "BUSTED": BUSTED,
        "HOW_DEAL": int(DrawHow.DEAL),
        "HOW_HIT": int(DrawHow.HIT),
        "HOW_FLIP_THREE": int(DrawHow.FLIP_THREE),
        "END_NOBODY_ACTIVE": END_NOBODY_ACTIVE,
        "END_FLIP7": END_FLIP7,
        "END_NO_CARDS": END_NO_CARDS,
        "MODE_DEFERRED": int(FlipThreeActions.DEFERRED),
        "MODE_IMMEDIATE": int(FlipThreeActions.IMMEDIATE),
        "MODE_LEGACY": int(FlipThreeActions.DEFERRED_EVEN_IF_BUST),
    }
    expected.update({f"K_{name}": int(EventKind[name]) for name in CLASSIC_KINDS})
    kinds = (P_SUM, P_COUNT, P_BUST, P_EV, P_ENDGAME, P_DP, P_DUP, P_WIN)
    names = ("P_SUM", "P_COUNT", "P_BUST", "P_EV", "P_ENDGAME", "P_DP", "P_DUP", "P_WIN")
    expected.update(zip(names, kinds, strict=True))
    bad = [
        f"{name}={getattr(core, name, None)} (flip7 says {value})"
        for name, value in expected.items()
        if getattr(core, name, None) != value
    ]
    if list(core.PLUS_VALUE) != list(PLUS_VALUE):
        bad.append("PLUS_VALUE")
    shifts = (0, core.S_PLAYER, core.S_CARD, core.S_TARGET, core.S_VALUE)
    if shifts != CODE_SHIFTS or CODE_OFFSETS != (0, 1, 1, 1, 0):
        bad.append(f"event code shifts {shifts} (flip7.events.CODE_SHIFTS {CODE_SHIFTS})")
    if core.HIT_SHIFT != HIT_SHIFT:
        bad.append(f"HIT_SHIFT={core.HIT_SHIFT} (flip7.events.HIT_SHIFT {HIT_SHIFT})")
    return bad


def vengeance_constant_mismatches() -> list[str]:
    """flip7.kernel.vengeance's literal constants that differ from flip7's (empty when in step)."""
    from flip7.cards import FLIP7_CHOICE
    from flip7.kernel import vengeance

    expected = {name: int(Card[name]) for name in VENGEANCE_CARD_NAMES}
    expected.update({f"K_{name}": int(EventKind[name]) for name in VENGEANCE_KINDS})
    expected.update(
        {
            "HOW_JUST_ONE_MORE": int(DrawHow.JUST_ONE_MORE),
            "HOW_FLIP_FOUR": int(DrawHow.FLIP_FOUR),
            "FLIP7_CHOICE": FLIP7_CHOICE,
            "N0": int(Card.N0),
            "N13": int(Card.N13),
        }
    )
    bad = [
        f"{name}={getattr(vengeance, name, None)} (flip7 says {value})"
        for name, value in expected.items()
        if getattr(vengeance, name, None) != value
    ]
    minus = {int(c): v for c, v in MINUS_VALUE.items()}
    if minus != {
        c: 2 * (c - vengeance.DIV2) for c in range(vengeance.MINUS2, vengeance.MINUS10 + 1)
    }:
        bad.append("MINUS_VALUE (the kernel reads -N as 2 x (id - DIV2))")
    return bad


def encode_policy(policy: Policy) -> tuple[int, int, float, int] | str:
    """(kind, int parameter, float parameter, counting) for a built-in policy, or why not."""
    kind = type(policy)
    counting = 1 if policy.counting else 0
    if kind is SumPolicy and isinstance(policy, SumPolicy) and isinstance(policy.n, int):
        return P_SUM, policy.n, 0.0, counting
    if kind is CountPolicy and isinstance(policy, CountPolicy) and isinstance(policy.n, int):
        return P_COUNT, policy.n, 0.0, counting
    if kind is BustPolicy and isinstance(policy, BustPolicy):
        return P_BUST, 0, float(policy.p), counting
    if kind is DupPolicy and isinstance(policy, DupPolicy):
        return P_DUP, 0, float(policy.p), counting
    if kind is EVPolicy:
        return P_EV, 0, 0.0, counting
    if (
        kind is EndgamePolicy
        and isinstance(policy, EndgamePolicy)
        and isinstance(policy.window, int)
    ):
        return P_ENDGAME, policy.window, float(policy.max_risk), counting
    dp = _dp_encoding(policy)
    if dp is not None:
        return dp
    from flip7.kernel import win

    got = win.encode(policy)
    if got is not None:
        return got
    return f"policy {getattr(policy, 'spec', kind.__name__)!r} is not one the kernel knows"


def _dp_encoding(policy: Policy) -> tuple[int, int, float, int] | None:
    """The solver's `dp` policy, when the solver exists (see flip7.kernel.dp)."""
    from flip7.kernel import dp

    return dp.encode(policy)


def unsupported(
    policies: Sequence[Policy],
    ruleset: Ruleset,
    deck: Deck = CLASSIC,
    variant: Variant | None = None,
) -> str | None:
    """Why these seats, ruleset and deck (or variant) cannot run in the kernel; None if they
    can."""
    vengeance = variant is not None and variant.name == "vengeance"
    if variant is not None:
        if variant.name not in ("classic", "vengeance"):
            return f"the kernel plays the classic game and With a Vengeance, not {variant}"
        deck = variant.deck
    if RULES_VERSION != KERNEL_RULES_VERSION:
        return (
            f"the kernel implements rules version {KERNEL_RULES_VERSION}, "
            f"the reference engine is at {RULES_VERSION}"
        )
    if not 1 <= len(policies) <= MAX_KERNEL_PLAYERS:
        return f"the kernel seats 1..{MAX_KERNEL_PLAYERS} players, got {len(policies)}"
    if ruleset.max_rounds > MAX_KERNEL_ROUNDS:
        return f"max_rounds {ruleset.max_rounds} is over the kernel's {MAX_KERNEL_ROUNDS}"
    if ruleset.target > MAX_KERNEL_TARGET:
        return f"target {ruleset.target} is over the kernel's {MAX_KERNEL_TARGET}"
    if ruleset.freeze_ties:
        return "the kernel breaks Freeze ties by points only (freeze_ties=0)"
    if vengeance:
        if any(k and c not in VENGEANCE_CARDS for c, k in enumerate(deck.counts)):
            return f"deck {deck.name!r} holds cards the Vengeance kernel does not play"
    elif any(deck.counts[c] for c in range(int(Card.SECOND_CHANCE) + 1, N_CARD_IDS)):
        return f"deck {deck.name!r} holds cards the classic kernel does not play"
    for policy in policies:
        code = encode_policy(policy)
        if isinstance(code, str):
            return code
        if code[0] == P_WIN and vengeance:
            return "the kernel plays `win` in the classic game only, not With a Vengeance"
        if code[0] == P_WIN and len(policies) == 1:
            return "`win` alone at the table plays the race policy, which the kernel does not play"
    try:
        from flip7.kernel.load import numba_missing
    except ImportError:  # pragma: no cover - load is part of this package
        return "flip7.kernel.load is missing"
    missing = numba_missing()
    if missing:
        return missing
    bad = constant_mismatches()
    if vengeance:
        bad += vengeance_constant_mismatches()
    if bad:
        return "kernel constants out of step with flip7: " + ", ".join(bad)
    return None


def policy_table(policies: Sequence[Policy]) -> tuple[np.ndarray, ...]:
    """The kernel's policy arrays (kind, int, float, counting), one row per policy."""
    rows: list[tuple[int, int, float, int]] = []
    for p in policies:
        row = encode_policy(p)
        if isinstance(row, str):
            raise ValueError(f"{row}; use engine='reference' for {p!r}")
        rows.append(row)
    kind = np.array([r[0] for r in rows], dtype=np.int64)
    ints = np.array([r[1] for r in rows], dtype=np.int64)
    floats = np.array([r[2] for r in rows], dtype=np.float64)
    counting = np.array([r[3] for r in rows], dtype=np.int64)
    return kind, ints, floats, counting


def rule_params(
    ruleset: Ruleset,
    n_players: int,
    *,
    capture: bool,
    first_dealer: int = 0,
    one_round: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's int and float parameter arrays (layout: I_* and J_* in flip7.kernel.core)."""
    ip = np.array(
        [
            n_players,
            int(ruleset.flip_three_actions),
            ruleset.target,
            ruleset.bonus,
            ruleset.max_rounds,
            1 if capture else 0,
            first_dealer,
            1 if one_round else 0,
            policy_base.FREEZE_SELF_POINTS,
        ],
        dtype=np.int64,
    )
    fp = np.array([policy_base.DANGER, policy_base.SAFE], dtype=np.float64)
    return ip, fp


def deck_counts(n_players: int, ruleset: Ruleset, deck: Deck = CLASSIC) -> np.ndarray:
    """Copies per card id of the table's deck (a second deck past `players_per_deck`)."""
    return np.array(decks_for(n_players, ruleset, deck).counts, dtype=np.int64)
