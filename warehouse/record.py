"""Which runs `verify` has passed as they are now, and what a reader should be told otherwise.

A successful `flip7 warehouse verify` writes `runs/<run>/verified.json` beside each manifest it
checked: the time, the checks that ran, how many of the run's games it re-simulated, and the
run's fingerprint (a hash of the manifest's bytes
and of the name, size and modification time of every committed file of the run). Only verify
writes it; a failing verify removes it. `notes()` gives the one-line warnings the readers
(`flip7 sql`, `flip7 report`, the dashboard) show: runs never verified, or changed since (any
file rewritten, a shard added or copied), runs verified without replay (no game re-simulated:
labels and seeds bound to the manifest only), runs whose committed shards are not all in their
manifest (a copied or stray shard counts its games twice), and runs left out because their
manifest cannot be read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from warehouse.lake import LakeUnreachable, Snapshot

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


def stray_shards(snap: Snapshot, run: str) -> list[int]:
    """Committed shards of `run` its manifest does not record (copies or strays)."""
    path = snap.manifests.get(run)
    if path is None:
        return []
    try:
        manifest: Any = snap.read_json(path)
        recorded = set((manifest.get("shards") or {}).keys())
    except LakeUnreachable:
        raise
    except (OSError, ValueError, AttributeError):
        return []
    return sorted(s.shard for s in snap.shards if s.run == run and str(s.shard) not in recorded)


def notes(snap: Snapshot, skipped: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(run, one line) for every run a reader should be warned about (see the module doc)."""
    out = [(run, f"left out: {why}") for run, why in sorted((skipped or {}).items())]
    for run in snap.runs:
        stray = stray_shards(snap, run)
        if stray:
            listed = ", ".join(map(str, stray[:5])) + (" ..." if len(stray) > 5 else "")
            out.append(
                (
                    run,
                    f"{len(stray)} committed shard(s) not in its manifest ({listed}): copied or "
                    "stray files whose games count twice; `flip7 warehouse verify` names them",
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
