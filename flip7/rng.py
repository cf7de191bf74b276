"""The one source of randomness: a small counter-based generator the engine owns.

Shuffles are the only randomness in Flip 7 (policies are deterministic). A shuffle of m cards
draws m 64-bit keys, key_i = splitmix64(seed + (counter + i) * GOLDEN), and orders the cards by
key (stable sort, so equal keys keep deck order). The rule is tiny and uses only 64-bit integer
arithmetic, so a compiled kernel reproduces the same shuffles bit for bit, and a game is replayed
exactly from its seed. Nothing here touches `random` or numpy's global state.

A game stopped at the round cap with several seats tied for the lead has its winner drawn from
the same seed (`tie_break`: the key at index 0, which no shuffle draws), so no seat is favoured.

Seeds for many games derive from one root by hashing the tuple (root, cell, game index) with the
same mixer (`derive_seed`), never `root + i`.
"""

from __future__ import annotations

import numpy as np

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB


def splitmix64(x: int) -> int:
    """The splitmix64 finalizer of x (mod 2**64)."""
    z = (x + GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * _C1) & MASK64
    z = ((z ^ (z >> 27)) * _C2) & MASK64
    return z ^ (z >> 31)


def tie_break(seed: int, k: int) -> int:
    """Which of k tied seats (0..k-1, in seat order) wins a game stopped at the round cap: the
    game's key at index 0 (shuffles start at index 1), mod k."""
    z = seed & MASK64
    z = ((z ^ (z >> 30)) * _C1) & MASK64
    z = ((z ^ (z >> 27)) * _C2) & MASK64
    return (z ^ (z >> 31)) % k


def derive_seed(*parts: int) -> int:
    """A 63-bit seed from a tuple of non-negative ints, e.g. (root_seed, cell, game_index)."""
    h = 0x6A09E667F3BCC909
    for p in parts:
        if p < 0:
            raise ValueError(f"seed parts must be >= 0, got {p}")
        h = splitmix64(h ^ splitmix64(p & MASK64))
    return h >> 1


_U_GOLDEN = np.uint64(GOLDEN)
_U_C1 = np.uint64(_C1)
_U_C2 = np.uint64(_C2)
_U30, _U27, _U31 = np.uint64(30), np.uint64(27), np.uint64(31)


class CardRng:
    """Seeded shuffler. `counter` advances by m per shuffle of m cards."""

    __slots__ = ("seed", "counter")

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= MASK64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        self.seed = seed
        self.counter = 0

    def keys(self, m: int) -> np.ndarray:
        """The next m shuffle keys (uint64)."""
        idx = np.arange(self.counter + 1, self.counter + m + 1, dtype=np.uint64)
        self.counter += m
        with np.errstate(over="ignore"):
            z = np.uint64(self.seed) + idx * _U_GOLDEN
            z = (z ^ (z >> _U30)) * _U_C1
            z = (z ^ (z >> _U27)) * _U_C2
            z = z ^ (z >> _U31)
        return z

    def shuffle(self, cards: list[int]) -> list[int]:
        """A new list: `cards` in shuffled order."""
        order = np.argsort(self.keys(len(cards)), kind="stable")
        return [cards[i] for i in order.tolist()]
