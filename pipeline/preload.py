"""Warm a local Ray's workers as they start: the shard task's imports and the compiled kernel.

The driver that starts a local Ray names this module in Ray's `preload_python_modules`, so each
worker imports it before it takes work, while the driver is still finishing Ray's start and
submitting the first tasks, rather than in its first task: numpy, pyarrow, numba and the
kernel's machine code from numba's cache are about a second of CPU per worker, and without this
they wait for Ray's first task hand-off (a few tenths of a second) before they begin
(`benchmarks/whole_run.py` times both). PRELOAD_ENV, set by that driver, names the kernel the
run plays: `classic`, or `vengeance` (both kernels). Imported anywhere else it does nothing, and
a preload that fails changes nothing: the first task loads the kernel, and reports any error,
as it would have.
"""

from __future__ import annotations

import os

PRELOAD_ENV = "FLIP7_PRELOAD_KERNEL"
KERNELS = ("classic", "vengeance")
#: What a driver names in Ray's `preload_python_modules`: this module.
MODULE = __name__


def preload(kernel: str | None) -> bool:
    """Import the shard task and load `kernel` (one of KERNELS) in this process; True if done,
    False for no kernel or a failure (left to the first task)."""
    if kernel not in KERNELS:
        return False
    try:
        import pipeline.task  # noqa: F401  (numpy, pyarrow, the lake and the shard)
        from flip7.kernel import load_info

        load_info(vengeance=kernel == "vengeance")
    except Exception:  # the first task meets the same error and reports it with its shard
        return False
    return True


preload(os.environ.get(PRELOAD_ENV))
