"""Keep a worker's freed shard buffers for its next shard (glibc malloc settings).

A shard allocates tens of MB of numpy buffers (the kernel's event buffer, the event columns)
and frees them once its files are written. By default glibc serves allocations that large with
fresh mmap()s and unmaps them on free, so every shard pays the kernel for zeroed pages again:
with the compiled kernel that was about 2 us of a 4-player game's 9 (the kernel itself: 6),
measured with benchmarks/kernel.py. Raising the mmap threshold makes them ordinary heap blocks
that the next shard reuses; the trim threshold still returns a freed top of heap beyond
TRIM_BYTES to the system. Elsewhere (not glibc) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util

MMAP_BYTES = 1 << 30  # allocations below this come from the heap and are reused
TRIM_BYTES = 1 << 30  # free heap top kept for reuse before it is given back
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters

_done: bool | None = None


def keep_freed_memory() -> bool:
    """Apply the settings once per process; True if this process's malloc took them."""
    global _done
    if _done is None:
        _done = False
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name) if name else None
            mallopt = getattr(libc, "mallopt", None)
        except OSError:
            mallopt = None
        if mallopt is not None:
            _done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(
                mallopt(_M_TRIM_THRESHOLD, TRIM_BYTES)
            )
    return _done
