"""A compiled simulation kernel: flip7.engine's games, event for event, at tens of times the speed.

The kernel (numba, `flip7.kernel.core`) plays the classic game under every ruleset with every
built-in policy except `human`, and `flip7.kernel.vengeance` plays "With a Vengeance" (any
deck, Brutal or not) with the same policies; both write events straight into numpy columns.
For the same seed its event log equals the reference engine's exactly (tests/flip7/test_kernel*.py
check it). Games it cannot play (a user's own policy, numba missing) go to the reference
engine: `choose_engine` decides and says why.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flip7.cards import CLASSIC, Deck
from flip7.engine import GameResult
from flip7.kernel.batch import Batch, derive_seeds, play_batch, rotation
from flip7.kernel.encode import unsupported
from flip7.kernel.load import LoadInfo, load_info
from flip7.policies.base import Policy
from flip7.rules import Ruleset
from flip7.variants import Variant

ENGINES = ("auto", "kernel", "reference")


def choose_engine(
    requested: str,
    policies: Sequence[Policy],
    ruleset: Ruleset,
    variant: Variant | None = None,
) -> tuple[str, str | None]:
    """('kernel' or 'reference', why the kernel was not used or None) for `requested`
    (auto, kernel or reference). Asking for the kernel where it cannot run is a ValueError."""
    if requested not in ENGINES:
        raise ValueError(f"unknown engine {requested!r}; valid: {', '.join(ENGINES)}")
    if requested == "reference":
        return "reference", "asked for"
    why = unsupported(policies, ruleset, variant=variant)
    if why is None:
        return "kernel", None
    if requested == "kernel":
        raise ValueError(f"the kernel cannot play this game: {why} (use --engine reference)")
    return "reference", why


def play_game(
    ruleset: Ruleset,
    policies: Sequence[Policy],
    seed: int,
    *,
    variant: Variant | None = None,
    deck: Deck = CLASSIC,
    stacked: Sequence[int] | None = None,
    capture: bool = True,
    first_dealer: int = 0,
) -> GameResult:
    """One game in the kernel: the same GameResult as flip7.engine.Engine(...).run(), or with
    a `variant` as variant.new_engine(...).run() ("With a Vengeance" included)."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    why = unsupported(policies, ruleset, deck, variant=variant)
    if why is not None:
        raise ValueError(f"the kernel cannot play this game: {why}")
    n = len(policies)
    batch = play_batch(
        ruleset,
        policies,
        np.arange(n, dtype=np.int64)[None, :],
        np.array([seed], dtype=np.uint64),
        capture=capture,
        first_dealer=first_dealer,
        stacked=stacked,
        deck=deck,
        variant=variant,
    )
    return batch.result(0)


__all__ = [
    "ENGINES",
    "Batch",
    "LoadInfo",
    "choose_engine",
    "derive_seeds",
    "load_info",
    "play_batch",
    "play_game",
    "rotation",
    "unsupported",
]
