"""`python -m flip7.kernel`: compile every kernel into numba's cache (or load it) and say how
long each took.

CI runs it once before the tests so that no test process pays a compile; set NUMBA_CACHE_DIR
first to warm a cache elsewhere. Each line's CPU seconds on an empty cache are what
flip7.kernel.load.COMPILE_CPU_SECONDS records (docs/kernel.md#compilation-and-the-cache).
"""

from __future__ import annotations

import sys

from flip7.kernel.load import PIECES, LoadInfo, kernel, load_info, rows_pass, win_kernel


def main() -> int:
    kernel()
    pieces: dict[str, LoadInfo] = {
        "classic": load_info(),
        "win": win_kernel(),
        "vengeance": load_info(vengeance=True),
        "rows": rows_pass(),
    }
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
