"""Compiling the kernels' pieces: import numba lazily, compile each piece once, say so first.

The pieces (PIECES) compile separately, each only when something uses it: the classic kernel
(flip7.kernel.core), the same kernel built with the `win` policy's sweeps (the first batch with
a win seat), the "With a Vengeance" kernel (flip7.kernel.vengeance), the pass that turns a
batch into the stored tables' columns, the pipeline's rollup pass and the solver's sweeps.
Before one compiles, one line on stderr says what, that it happens once, and about how long
(COMPILE_CPU_SECONDS, measured as docs/kernel.md says); a cache load is silent.

numba caches the machine code on disk (`cache=True`): by default in `__pycache__` next to the
source, or a per-user directory when that is not writable (`cache_dir()` says which); set
NUMBA_CACHE_DIR before the first import to put it elsewhere. Ray workers use the same cache (a
local Ray's workers inherit the driver's environment), so a machine compiles each piece once.

This module is the bottom of flip7.kernel (it imports no other part of it): batch, columns and the
pipeline's rollups call through `call`; flip7.kernel.batch loads the kernels themselves and
flip7.kernel.load reports on them.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: CPU seconds each piece took to compile on an empty cache, measured on the 2-core machine
#: the project runs on (`python benchmarks/startup.py --pieces`; docs/kernel.md#compilation-and-the-cache).
COMPILE_CPU_SECONDS = {
    "classic": 32,
    "win": 55,
    "vengeance": 53,
    "rows": 1,
    "rollups": 5,
    "codebook": 3,
    "solver": 6,
}


#: What each piece is, for the line before it compiles.
PIECES = {
    "classic": "the simulation kernel",
    "win": "the simulation kernel with the win policy's sweeps",
    "vengeance": 'the "With a Vengeance" kernel',
    "rows": "the event-table pass",
    "rollups": "the shard rollup pass",  # pipeline.rollups
    "codebook": "the events codebook pass",  # pipeline.codebook
    "solver": "the solver's sweeps",  # flip7.solver.kernels (solve, advice, odds)
}


def announce(piece: str, near: str | None = None, stream: Any = None) -> None:
    """The line before `piece` (a PIECES key) compiles; `near`: a source file of its code (for
    where its cache is; default this package's)."""
    cost = COMPILE_CPU_SECONDS[piece]
    print(
        f"flip7: compiling {PIECES[piece]} (once; about {cost} CPU second{'s' * (cost != 1)}, "
        "see docs/kernel.md); "
        f"later runs load it from numba's cache in {cache_dir(near)}",
        file=stream if stream is not None else sys.stderr,
        flush=True,
    )


def will_compile(dispatcher: Any, args: Sequence[Any]) -> bool:
    """Whether calling numba `dispatcher` on `args` compiles (True) rather than runs code this
    process has or loads it from the on-disk cache. Reads numba's cache index; when that cannot
    be read (another numba), True unless this process already has the code."""
    try:
        sig = tuple(dispatcher.typeof_pyval(a) for a in args)
        if sig in dispatcher.overloads:
            return False
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key not in cache._cache_file._load_index()
    except Exception:  # numba's internals moved: say it may compile
        return not dispatcher.overloads


def module_cold(module: Any) -> bool:
    """Whether none of `module`'s numba functions is in the on-disk cache (a first run, which
    compiles them). Compiles nothing."""
    found = False
    for obj in vars(module).values():
        cache = getattr(obj, "_cache", None)
        if getattr(obj, "__module__", None) != module.__name__ or cache is None:
            continue
        try:
            if cache._cache_file._load_index():
                return False
        except Exception:  # numba's internals moved: cannot tell
            return False
        found = True
    return found


#: The pieces this process has run (or loaded): no need to look at the cache again.
_ready: set[str] = set()


def call(piece: str, dispatcher: Any, *args: Any) -> Any:
    """`dispatcher(*args)`, with the line first when it compiles (`piece`: a PIECES key)."""
    if piece not in _ready:
        if will_compile(dispatcher, args):
            from flip7.format import waiting

            announce(piece, dispatcher.py_func.__code__.co_filename)
            with waiting(f"compiling {PIECES[piece]} ..."):  # a spinner, on a terminal
                result = dispatcher(*args)
        else:
            result = dispatcher(*args)
        _ready.add(piece)
        return result
    return dispatcher(*args)


@dataclass(frozen=True)
class LoadInfo:
    """How this process got its kernel."""

    seconds: float  # import + compile or cache load, wall clock
    cpu_seconds: float
    compiled: bool  # True: compiled now; False: loaded from the on-disk cache
    cache_dir: str


def measured(t0: float, c0: float, dispatcher: Any) -> LoadInfo:
    return LoadInfo(
        seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
        compiled=bool(dispatcher.stats.cache_misses),
        cache_dir=cache_dir(),
    )


def combined(a: LoadInfo, b: LoadInfo) -> LoadInfo:
    """Two loads' figures added up."""
    return LoadInfo(
        seconds=a.seconds + b.seconds,
        cpu_seconds=a.cpu_seconds + b.cpu_seconds,
        compiled=a.compiled or b.compiled,
        cache_dir=a.cache_dir,
    )


def numba_missing() -> str | None:
    """Why numba cannot be used here, or None."""
    try:
        import numba  # noqa: F401
    except ImportError as exc:
        return f"numba is not installed ({exc}); pip install numba"
    return None


def cache_dir(near: str | None = None) -> str:
    """Where numba keeps the compiled code of the functions in source file `near` (default:
    the kernels'): NUMBA_CACHE_DIR when set, else `__pycache__` next to the file, or numba's
    per-user directory when that is not writable."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        return configured
    source = os.path.abspath(near or __file__)
    here = os.path.join(os.path.dirname(source), "__pycache__")
    writable = os.access(here if os.path.isdir(here) else os.path.dirname(here), os.W_OK)
    if writable:
        return here
    try:
        from numba.core.caching import _UserWideCacheLocator

        located = _UserWideCacheLocator.from_function(_probe, source)
        if located is not None:
            return str(located.get_cache_path())
    except Exception:  # numba's internals moved
        pass
    return here


def _probe() -> None:
    """A function of this file, for asking numba where it would cache it."""


#: Modules whose compiled functions the classic kernel calls (win's sweeps and arithmetic,
#: shared with the reference policy; the round's machinery both kernels share). numba's
#: on-disk cache checks only the file of the function it caches, so an edit there alone would
#: leave the kernel's cached copy stale.
CALLEES = (
    "flip7.solver.win_kernel",
    "flip7.solver.race_kernel",
    "flip7.solver.kernels",
    "flip7.kernel.rounds",
)
#: The same for the "With a Vengeance" kernel: the one core it shares with the classic kernel.
VENGEANCE_CALLEES = ("flip7.kernel.rounds",)


def refresh_if_callees_changed(
    module: Any, callees: tuple[str, ...] = CALLEES
) -> tuple[str, str] | None:
    """When the CALLEES' sources differ from those the cached kernel was compiled with (a
    digest kept next to the cache), drop the module's cached machine code so that this process
    compiles it afresh. Returns (stamp path, digest) to record once compiled, or None."""
    import importlib

    digest = hashlib.sha256()
    for name in callees:
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


def write_stamp(stamp: tuple[str, str] | None) -> None:
    if stamp is None:
        return
    try:
        os.makedirs(os.path.dirname(stamp[0]), exist_ok=True)
        with open(stamp[0], "w") as fh:
            fh.write(stamp[1])
    except OSError:  # a read-only cache directory: numba then caches elsewhere or not at all
        pass
