"""Loading the compiled kernel: import numba lazily, compile once, say how long it took.

numba caches the machine code on disk (`cache=True`): by default in `__pycache__` next to
flip7/kernel/core.py (or a per-user directory when that is not writable); set NUMBA_CACHE_DIR
before the first import to put it elsewhere (CI warms it once with `python -m flip7.kernel`).
The first call of a process either compiles (seconds) or loads the cache (a fraction of one);
`load_info()` reports which, and how long it took.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LoadInfo:
    """How this process got its kernel."""

    seconds: float  # import + compile or cache load, wall clock
    cpu_seconds: float
    compiled: bool  # True: compiled now; False: loaded from the on-disk cache
    cache_dir: str


_kernel: Callable[..., Any] | None = None
_info: LoadInfo | None = None


def numba_missing() -> str | None:
    """Why numba cannot be used here, or None."""
    try:
        import numba  # noqa: F401
    except ImportError as exc:
        return f"numba is not installed ({exc}); pip install numba"
    return None


def cache_dir() -> str:
    """Where numba keeps the kernel's compiled code."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        return configured
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")


def kernel() -> Callable[..., Any]:
    """`flip7.kernel.core.play_games`, compiled (or loaded from the cache) on first use."""
    global _kernel, _info
    if _kernel is not None:
        return _kernel
    missing = numba_missing()
    if missing:
        raise ValueError(missing)
    t0, c0 = time.perf_counter(), time.process_time()
    from flip7.kernel import core
    from flip7.kernel.batch import warm_up

    stamp = _refresh_if_callees_changed(core)
    warm_up(core.play_games)
    _write_stamp(stamp)
    _warm_passes()
    stats = core.play_games.stats
    _info = LoadInfo(
        seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
        compiled=bool(stats.cache_misses),
        cache_dir=cache_dir(),
    )
    _kernel = core.play_games
    return _kernel


_vengeance: Callable[..., Any] | None = None
_vengeance_info: LoadInfo | None = None


def vengeance_kernel() -> Callable[..., Any]:
    """`flip7.kernel.vengeance.play_games`, compiled (or loaded from the cache) on first use."""
    global _vengeance, _vengeance_info
    if _vengeance is not None:
        return _vengeance
    kernel()  # the classic kernel and its event-rows pass, which the pipeline uses too
    t0, c0 = time.perf_counter(), time.process_time()
    from flip7.kernel import vengeance
    from flip7.kernel.batch import warm_up_vengeance

    warm_up_vengeance(vengeance.play_games)
    _vengeance_info = LoadInfo(
        seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
        compiled=bool(vengeance.play_games.stats.cache_misses),
        cache_dir=cache_dir(),
    )
    _vengeance = vengeance.play_games
    return _vengeance


#: Modules whose compiled functions the classic kernel calls (win's sweeps and arithmetic,
#: shared with the reference policy). numba's on-disk cache checks only the file of the
#: function it caches, so an edit there alone would leave the kernel's cached copy stale.
CALLEES = ("flip7.solver.win_kernel", "flip7.solver.race_kernel", "flip7.solver.kernels")


def _refresh_if_callees_changed(module: Any) -> tuple[str, str] | None:
    """When the CALLEES' sources differ from those the cached kernel was compiled with (a
    digest kept next to the cache), drop the module's cached machine code so that this process
    compiles it afresh. Returns (stamp path, digest) to record once compiled, or None."""
    import importlib

    digest = hashlib.sha256()
    for name in CALLEES:
        path = importlib.import_module(name).__file__
        assert path is not None
        with open(path, "rb") as fh:
            digest.update(fh.read())
    stamp = os.path.join(cache_dir(), f"{module.__name__}.callees")
    try:
        with open(stamp) as fh:
            if fh.read() == digest.hexdigest():
                return None
    except OSError:
        pass
    for obj in vars(module).values():
        cache = getattr(obj, "_cache", None)
        if getattr(obj, "__module__", None) == module.__name__ and hasattr(cache, "flush"):
            cache.flush()
    return stamp, digest.hexdigest()


def _write_stamp(stamp: tuple[str, str] | None) -> None:
    if stamp is None:
        return
    try:
        os.makedirs(os.path.dirname(stamp[0]), exist_ok=True)
        with open(stamp[0], "w") as fh:
            fh.write(stamp[1])
    except OSError:  # a read-only cache directory: numba then caches elsewhere or not at all
        pass


def _warm_passes() -> None:
    """Compile (or load) the pass that turns the kernel's buffers into the stored tables'
    columns (flip7.kernel.columns.table_rows)."""
    from flip7.kernel.columns import warm

    warm()


def loaded(vengeance: bool = False) -> bool:
    """Whether this process has loaded the kernel (with `vengeance`, the Vengeance kernel)."""
    return (_vengeance if vengeance else _kernel) is not None


def load_info(vengeance: bool = False) -> LoadInfo:
    """How the kernel was loaded in this process (loading it if needed); with `vengeance`, the
    "With a Vengeance" kernel too (the figures then cover both)."""
    kernel()
    assert _info is not None
    if not vengeance:
        return _info
    vengeance_kernel()
    assert _vengeance_info is not None
    return LoadInfo(
        seconds=_info.seconds + _vengeance_info.seconds,
        cpu_seconds=_info.cpu_seconds + _vengeance_info.cpu_seconds,
        compiled=_info.compiled or _vengeance_info.compiled,
        cache_dir=_info.cache_dir,
    )
