"""The events file's codebook, built in one compiled pass as a shard writes it.

The stored events (lakecontract.codec) hold each event code as an index into the file's
codebook of distinct codes. numpy's `unique` sorts the codes (about 12 µs a game of a
four-player shard); this pass hashes them instead (about 0.4 µs), numbering the codes in the
order they first occur, so the same games give the same file. Compiled once per machine
(numba, `cache=True`) and announced as the other passes are (flip7.kernel.jit).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from flip7.kernel.jit import call

_compiled: Callable[..., np.ndarray] | None = None
#: Fibonacci hashing's multiplier (2^64 / the golden ratio).
_GOLDEN = 0x9E3779B97F4A7C15


def index_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct codes in first-seen order, each code's index into them) of int64 codes."""
    index = np.empty(codes.shape[0], dtype=np.int32)
    book = call("codebook", _pass(), np.ascontiguousarray(codes, dtype=np.int64), index)
    return book, index


def warm() -> None:
    """Compile (or load) the pass now, on no codes (a driver does, before its workers start)."""
    index_codes(np.zeros(0, dtype=np.int64))


def _pass() -> Callable[..., np.ndarray]:
    """The compiled pass, built on first use: numba is imported only by a process that writes."""
    global _compiled
    if _compiled is None:
        import numba

        _compiled = numba.njit(cache=True, nogil=True)(_index)
    return _compiled


def _index(codes: np.ndarray, index: np.ndarray) -> np.ndarray:  # compiled by _pass
    """Fill `index` with each code's number in the returned codebook (open addressing, linear
    probing; the table doubles when half full)."""
    bits = 12
    size = 1 << bits
    keys = np.zeros(size, dtype=np.int64)
    slots = np.full(size, -1, dtype=np.int32)  # codebook number held by each slot, -1: empty
    book = np.empty(1024, dtype=np.int64)
    found = 0
    for i in range(codes.shape[0]):
        code = codes[i]
        j = np.int64((np.uint64(code) * np.uint64(_GOLDEN)) >> np.uint64(64 - bits))
        while True:
            k = slots[j]
            if k < 0 or keys[j] == code:
                break
            j = (j + 1) & (size - 1)
        if k >= 0:
            index[i] = k
            continue
        if found == book.shape[0]:
            grown = np.empty(2 * found, dtype=np.int64)
            grown[:found] = book[:found]
            book = grown
        book[found] = code
        keys[j] = code
        slots[j] = found
        index[i] = found
        found += 1
        if 2 * found > size:  # rehash into a table twice the size
            bits += 1
            size <<= 1
            keys = np.zeros(size, dtype=np.int64)
            slots = np.full(size, -1, dtype=np.int32)
            for m in range(found):
                h = np.int64((np.uint64(book[m]) * np.uint64(_GOLDEN)) >> np.uint64(64 - bits))
                while slots[h] >= 0:
                    h = (h + 1) & (size - 1)
                keys[h] = book[m]
                slots[h] = m
    return book[:found].copy()
