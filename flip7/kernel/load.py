"""The kernels' loading, in one place: how this process got each piece, and which would compile.

The pieces compile separately, each only when something uses it (flip7.kernel.jit: the
announcement before a compile, numba's on-disk cache, COMPILE_CPU_SECONDS). `load_info` loads a
kernel (or says how it was loaded), `rows_pass` the pipeline's table pass, `cold_pieces` lists
what would compile. The kernels themselves load in flip7.kernel.batch (`kernel`,
`vengeance_kernel`, `win_kernel`), beside the batch that warms them up; their names and jit's
are re-exported here, where callers have always found them.
"""

from __future__ import annotations

import time
from typing import Any

from flip7.kernel.batch import kernel, kernel_info, loaded, vengeance_kernel, win_kernel
from flip7.kernel.jit import (
    CALLEES,
    COMPILE_CPU_SECONDS,
    PIECES,
    LoadInfo,
    announce,
    cache_dir,
    call,
    combined,
    measured,
    module_cold,
    numba_missing,
    will_compile,
)

__all__ = [
    "CALLEES",
    "COMPILE_CPU_SECONDS",
    "PIECES",
    "LoadInfo",
    "announce",
    "cache_dir",
    "call",
    "cold_pieces",
    "combined",
    "kernel",
    "load_info",
    "loaded",
    "module_cold",
    "numba_missing",
    "rows_pass",
    "vengeance_kernel",
    "will_compile",
    "win_kernel",
]


def cold_pieces() -> list[str]:
    """The kernels (PIECES keys but `rollups`, which is the pipeline's) that are not in
    numba's on-disk cache for this code: each would compile on first use. Compiles nothing."""
    from flip7.kernel import columns, core, vengeance

    def signatures(dispatcher: Any) -> list[tuple[Any, ...]]:
        try:
            return [key[0] for key in dispatcher._cache._cache_file._load_index()]
        except Exception:  # numba's internals moved: call it cold
            return []

    classic = signatures(core.play_games)
    from numba.core import types

    has = {
        "classic": any(isinstance(sig[-1], types.NoneType) for sig in classic),
        "win": any(not isinstance(sig[-1], types.NoneType) for sig in classic),
        "vengeance": bool(signatures(vengeance.play_games)),
        "rows": bool(signatures(columns.rows_dispatcher())),
    }
    return [name for name, cached in has.items() if not cached]


_rows_info: LoadInfo | None = None


def rows_pass() -> LoadInfo:
    """Compile (or load) the pass that turns the kernel's buffers into the stored tables'
    columns (flip7.kernel.columns.table_rows), which the pipeline's shards use."""
    global _rows_info
    if _rows_info is None:
        from flip7.kernel import columns

        t0, c0 = time.perf_counter(), time.process_time()
        columns.warm()
        _rows_info = measured(t0, c0, columns.rows_dispatcher())
    return _rows_info


def load_info(vengeance: bool = False, rows: bool = False, win: bool = False) -> LoadInfo:
    """How this process got the classic kernel, or with `vengeance` the "With a Vengeance"
    kernel, or with `win` the classic kernel's build with win's code (loading it if needed);
    with `rows`, the pipeline's table pass too (the figures then cover both)."""
    info = win_kernel() if win and not vengeance else kernel_info(vengeance)
    if not rows:
        return info
    return combined(info, rows_pass())
