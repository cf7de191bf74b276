"""Which runs `verify` has passed as they are now, and what a reader should be told otherwise.

A successful `flip7 warehouse verify` writes `runs/<run>/verified.json` beside each manifest it
checked: the time, the checks that ran, how many of the run's games it re-simulated, and the
run's fingerprint (a hash of the manifest's bytes
and of the name, size and modification time of every committed file of the run). Only verify
writes it; a failing verify removes it. `notes()` gives the one-line warnings the readers
(`flip7 sql`, `flip7 report`, the dashboard) show: runs never verified, or changed since (any
file rewritten, a shard added or copied), runs verified without replay (no game re-simulated:
labels and seeds bound to the manifest only), runs whose committed shards are not all in their
manifest (a copied or stray shard counts its games twice; while a driver holds the run, they
are shards it has not recorded yet: "still being written"), runs whose manifest records shards
whose files are gone, and runs left out because their manifest cannot be read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from typing import Any

import pyarrow.fs as pafs

from warehouse.lake import TABLES, LakeUnreachable, Snapshot, _listing

RECORD = "verified.json"


def fingerprint(snap: Snapshot, run: str) -> str:
    """A hash of the run's manifest bytes and of every committed file's name, size and mtime."""
    h = hashlib.sha256()
    manifest = snap.manifests.get(run)
    h.update(snap.read_bytes(manifest) if manifest is not None else b"no manifest")
    for shard in sorted((s for s in snap.shards if s.run == run), key=lambda s: s.shard):
        for table, path in sorted(shard.files.items()):
            info = snap.infos.get(path)
            if info is None:
                h.update(f"{table} {shard.players} {shard.shard} missing\n".encode())
                continue
            h.update(
                f"{table} {shard.players} {shard.shard} {info.size} {info.mtime_ns}\n".encode()
            )
    return h.hexdigest()


def write(snap: Snapshot, run: str, details: dict[str, Any]) -> None:
    """Record that verify passed `run` as it is now (atomically: temporary name, rename)."""
    path = f"{snap.base}/runs/{run}/{RECORD}"
    record = {
        "run": run,
        "verified": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "fingerprint": fingerprint(snap, run),
        **details,
    }
    snap.write_bytes(path, (json.dumps(record, indent=1) + "\n").encode("utf-8"))


def clear(snap: Snapshot, run: str) -> None:
    """Forget that verify ever passed `run` (it has just failed)."""
    snap.delete(f"{snap.base}/runs/{run}/{RECORD}")


def _verdict(snap: Snapshot, run: str) -> tuple[str | None, bool]:
    """(why `run` is not verified as it is now, or None when it is; whether the verify that
    passed it re-simulated any of its games, or it has none: a record that does not say counts
    as not)."""
    path = f"{snap.base}/runs/{run}/{RECORD}"
    if not snap.exists(path):
        return "not verified since it was written", False
    try:
        record = snap.read_json(path)
    except LakeUnreachable:
        raise
    except (OSError, ValueError):
        return f"its verify record {path} is unreadable", False
    if not isinstance(record, dict) or record.get("fingerprint") != fingerprint(snap, run):
        when = record.get("verified", "?") if isinstance(record, dict) else "?"
        return f"changed since verify passed it ({when})", False
    counts = [record.get(k) for k in ("replayed", "games")]
    replayed, games = (c if isinstance(c, int) and not isinstance(c, bool) else -1 for c in counts)
    return None, replayed > 0 or games == 0  # a run of no games has nothing to replay


def unverified(snap: Snapshot, run: str) -> str | None:
    """Why `run` is not verified as it is now, or None when it is."""
    return _verdict(snap, run)[0]


def _manifest(snap: Snapshot, run: str) -> dict[str, Any] | None:
    """The run's manifest as it is now (read after the listing), None if unreadable."""
    path = snap.manifests.get(run)
    if path is None:
        return None
    try:
        manifest = snap.read_json(path)
    except LakeUnreachable:
        raise
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("shards"), dict):
        return None
    return manifest


def stray_shards(snap: Snapshot, run: str) -> list[int]:
    """Committed shards of `run` its manifest does not record (copies or strays, or shards
    its driver has not recorded yet: see `notes`)."""
    manifest = _manifest(snap, run)
    if manifest is None:
        return []
    recorded = set(manifest["shards"])
    return sorted(s.shard for s in snap.shards if s.run == run and str(s.shard) not in recorded)


def missing_shards(snap: Snapshot, run: str) -> dict[int, str]:
    """Shards `run`'s manifest records whose files are not in the lake (or not at their
    recorded sizes): {shard: what is wrong}. The manifest is read after the listing, so a
    shard recorded since may be absent from the listing: when any is, the run's files are
    listed again, now, and only what is still missing counts (a shard is recorded only once
    its files are committed, so a file absent now was removed)."""
    manifest = _manifest(snap, run)
    if manifest is None:
        return {}
    cells = manifest.get("cells") if isinstance(manifest.get("cells"), list) else []
    players = {c.get("cell"): c.get("players") for c in cells if isinstance(c, dict)}

    def problems(infos: dict[str, pafs.FileInfo]) -> dict[int, str]:
        out: dict[int, str] = {}
        for key, info in manifest["shards"].items():
            p = players.get(info.get("cell")) if isinstance(info, dict) else None
            if not (key.isascii() and key.isdigit()) or not isinstance(p, int):
                continue  # not a shard record the views read (the manifest is screened)
            n = int(key)
            sizes = info.get("bytes") if isinstance(info.get("bytes"), dict) else {}
            rows = info.get("rows") if isinstance(info.get("rows"), dict) else {}
            for table in (t for t in TABLES if t in rows):
                have = infos.get(f"{snap.base}/{table}/run={run}/players={p}/shard-{n:05d}.parquet")
                if have is None:
                    out[n] = f"{table} file gone"
                    break
                if table in sizes and have.size != sizes[table]:
                    out[n] = (
                        f"{table} file has {have.size} bytes, the manifest recorded {sizes[table]}"
                    )
                    break
        return out

    found = problems(snap.infos)
    if not found:
        return {}
    # Recorded after the listing, perhaps: list the run's files again, now (one listing,
    # however many shards), and keep only what is still missing.
    again: dict[str, pafs.FileInfo] = {}
    for table in TABLES:
        again |= {i.path: i for i in _listing(snap.fs, f"{snap.base}/{table}/run={run}", snap.root)}
    return problems(again)


def being_written(snap: Snapshot, run: str) -> bool:
    """Whether a driver holds `run` now: a lease (runs/RUN/lease.json, see pipeline.lease)
    renewed within its stale time. Read now, after the listing and the manifest."""
    path = f"{snap.base}/runs/{run}/lease.json"
    try:
        lease = json.loads(snap.read_text(path))
    except LakeUnreachable:
        raise
    except (OSError, ValueError):
        return False
    if not isinstance(lease, dict):
        return False
    beat, limit = lease.get("heartbeat_epoch"), lease.get("stale_after")
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in (beat, limit)):
        return False
    return bool(time.time() - beat <= limit)


def _listed(shards: list[int]) -> str:
    return ", ".join(map(str, shards[:5])) + (" ..." if len(shards) > 5 else "")


def notes(snap: Snapshot, skipped: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(run, one line) for every run a reader should be warned about (see the module doc)."""
    out = [(run, f"left out: {why}") for run, why in sorted((skipped or {}).items())]
    for run in snap.runs:
        missing = missing_shards(snap, run)
        if missing:
            what = ", ".join(f"{k} ({why})" for k, why in sorted(missing.items())[:5])
            out.append(
                (
                    run,
                    f"{len(missing)} shard(s) its manifest records have lost their files: "
                    f"{what}{', ...' if len(missing) > 5 else ''}; their games are in no figure: "
                    "re-run them with `flip7 tournament run SPEC --resume`",
                )
            )
        stray = stray_shards(snap, run)
        if stray and being_written(snap, run):
            # The driver records a shard a moment after its files are committed: not strays.
            out.append(
                (
                    run,
                    f"still being written: {len(stray)} committed shard(s) not recorded in its "
                    f"manifest yet ({_listed(stray)}); figures will change as the run goes on",
                )
            )
        elif stray:
            out.append(
                (
                    run,
                    f"{len(stray)} committed shard(s) not in its manifest ({_listed(stray)}): "
                    "copied or stray files whose games count twice; `flip7 warehouse verify` "
                    "names them",
                )
            )
        why, replayed = _verdict(snap, run)
        if why is not None:
            out.append((run, f"unverified: {why}; run `flip7 warehouse verify {run}`"))
        elif not replayed:
            out.append(
                (
                    run,
                    "verified without replay: no game was re-simulated, so its labels and "
                    "seeds are bound to its manifest only; run `flip7 warehouse verify "
                    f"{run}` (it replays a sample)",
                )
            )
    return out
