"""`python -m flip7.kernel [PIECE ...]`: compile kernels into numba's cache (or load them) and
say how long each took. PIECE: classic, win, vengeance, rows (default: all four, in that order).

CI runs it before the tests so that no test process pays a compile; set NUMBA_CACHE_DIR
first to warm a cache elsewhere. Each line's CPU seconds on an empty cache are what
flip7.kernel.load.COMPILE_CPU_SECONDS records (docs/kernel.md#compilation-and-the-cache).

Two processes may warm one cache at once only with pieces whose compiled functions are
disjoint: numba's cache index is not safe for two processes adding entries to the same
function's index. `classic` compiles the helpers `win` and `vengeance` share with it, so it
runs alone first; then `win` (the same kernel function, another build) and `vengeance` (only
loading those helpers) may run side by side, as scripts/test does.
"""

from __future__ import annotations

import sys

from flip7.kernel.load import PIECES, LoadInfo, load_info, rows_pass, win_kernel

#: What `python -m flip7.kernel PIECE` does for each piece.
WARM = {
    "classic": load_info,
    "win": win_kernel,
    "vengeance": lambda: load_info(vengeance=True),
    "rows": rows_pass,
}


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    unknown = [n for n in names if n not in WARM]
    if unknown:
        print(
            f"python -m flip7.kernel: unknown piece {', '.join(unknown)}; "
            f"choose from {', '.join(WARM)}",
            file=sys.stderr,
        )
        return 2
    pieces: dict[str, LoadInfo] = {name: WARM[name]() for name in (names or WARM)}
    for name, info in pieces.items():
        how = "compiled" if info.compiled else "loaded from the cache"
        print(
            f"flip7 {name:<9} {PIECES[name]}: {how} in {info.seconds:.2f} s "
            f"({info.cpu_seconds:.2f} CPU s)"
        )
    print(f"cache: {next(iter(pieces.values())).cache_dir}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
