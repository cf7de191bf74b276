"""`python -m flip7.kernel`: compile the kernel into its cache (or load it) and say how long.

CI runs it once before the tests so that no test process pays the first compile; set
NUMBA_CACHE_DIR first to warm a cache elsewhere.
"""

from __future__ import annotations

from flip7.kernel import load_info


def main() -> int:
    info = load_info(vengeance=True)
    how = "compiled" if info.compiled else "loaded from the cache"
    print(
        f"flip7 kernels (classic and Vengeance) {how} in {info.seconds:.2f} s ({info.cpu_seconds:.2f} CPU s); "
        f"cache: {info.cache_dir}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
