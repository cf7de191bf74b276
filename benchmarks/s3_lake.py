"""Benchmark: `flip7 report` and `flip7 warehouse verify` on a lake in an S3-compatible store
against the same lake on local disk (the ratio is what it costs to query a cluster's results
where they lie).

The local lake is benchmarks/warehouse.py's (build it first: `python benchmarks/warehouse.py
--games 200000 --root DIR --build-only`). The script starts moto's S3 server (`moto_server`,
the dev extra) on 127.0.0.1, copies the lake into a bucket, times report and verify on each
(alternating, `--repeat` times; the best of each is compared), prints both and the ratio, and
stops the server. Run: `python benchmarks/s3_lake.py [--root DIR] [--repeat N] [--workers N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.fs as pafs

# Run as a script, this folder comes first on sys.path, and its pipeline.py and warehouse.py
# (the benchmarks) would shadow the packages of the same names: put the repository first.
sys.path[:1] = [str(Path(__file__).resolve().parents[1])]

from tests.s3.server import S3Server  # noqa: E402
from warehouse.db import connect  # noqa: E402
from warehouse.report import report  # noqa: E402
from warehouse.verify import verify  # noqa: E402

RUN = "bench"


def timed(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("/tmp/flip7-bench/data"))
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="verify's threads")
    args = parser.parse_args()
    manifest = args.root / "runs" / RUN / "manifest.json"
    if not manifest.exists():
        print(
            f"no lake at {args.root}: build one with `python benchmarks/warehouse.py --games "
            f"200000 --root {args.root} --build-only`",
            file=sys.stderr,
        )
        return 2
    games = json.loads(manifest.read_text())["planned_games"]
    with tempfile.TemporaryDirectory() as tmp:
        server = S3Server().start(Path(tmp) / "moto.log")
        try:
            os.environ.update(server.env())
            bucket = server.bucket()
            uri = f"s3://{bucket}/lake"
            t0 = time.perf_counter()
            pafs.copy_files(
                str(args.root), f"{bucket}/lake", pafs.LocalFileSystem(), server.filesystem()
            )
            size = sum(p.stat().st_size for p in args.root.rglob("*") if p.is_file())
            print(
                f"lake: {games:,} games, {size / 1e6:.0f} MB; copied to {uri} on "
                f"{server.endpoint} (moto) in {time.perf_counter() - t0:.1f} s; load average "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
                flush=True,
            )
            roots = {"local": str(args.root), "s3": uri}
            best: dict[tuple[str, str], float] = {}
            for i in range(args.repeat):
                for where, root in roots.items():
                    for what, fn in (
                        ("report", lambda r=root: report(connect(r, [RUN]), RUN)),
                        ("verify", lambda r=root: verify(r, RUN, workers=args.workers)),
                    ):
                        s = timed(fn)
                        print(f"  round {i + 1}: {what} on {where}: {s:.1f} s", flush=True)
                        best[(what, where)] = min(s, best.get((what, where), s))
            for what in ("report", "verify"):
                local, s3 = best[(what, "local")], best[(what, "s3")]
                print(f"{what}: local {local:.1f} s, s3 {s3:.1f} s, ratio {s3 / local:.2f}x")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
