"""One writer per run: the lease a driver takes in the run's folder before anything else.

`runs/<run>/lease.json` names the driver that owns the run (host, pid, a random token, when it
took the run and when it last said it was alive). A driver takes it before Ray starts and
before it reads or writes anything else of the run, keeps it fresh while it runs (a heartbeat
every HEARTBEAT_SECONDS), and removes it at the end. Taking it is an atomic create-if-absent,
then a re-read that must show this driver's token:

- a local (or mounted) lake: the lease is written under a temporary name and hard-linked to its
  name, which fails if the name exists; renewals and take-overs hold an flock on
  `runs/<run>/lease.lock` while they read, compare and replace;
- S3 (with boto3 installed): a conditional PUT (`If-None-Match: *` to create, `If-Match: ETAG`
  to renew or take over), which the store refuses when another driver got there first;
- any other store: a best effort: create only if absent, wait SETTLE_SECONDS, re-read. Two
  drivers that start within the same fraction of a second may then both pass; the heartbeat
  re-reads the lease, and the driver that finds another's token stops.

A lease is live while its driver heartbeats; it is stale once STALE_SECONDS pass without a
heartbeat (by the clock of the host that reads it), or at once when its driver ran on this host
and that process is gone. A live lease is never taken; a stale one only when the user says so
(`--resume` or `--overwrite`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

import pyarrow.fs as pafs

from pipeline.lake import Lake, _proc_start, now, store_error

LEASE = "lease.json"
LOCK = "lease.lock"
#: Seconds between heartbeats (one small write each; on S3 one PUT).
HEARTBEAT_SECONDS = 10.0
#: Seconds without a heartbeat after which a lease is stale (may be taken over on request).
STALE_SECONDS = 60.0
#: Best effort only: how long a driver waits before it re-reads the lease it wrote.
SETTLE_SECONDS = 2.0


class LeaseHeld(ValueError):
    """Another driver owns the run (or may still: its lease is stale but not taken over)."""


class LeaseLost(OSError):
    """This driver no longer owns its run: another took the lease, or it could not be renewed.
    `announced`: its one error line is already on stderr (said before Ray was stopped)."""

    announced = False


def lease_path(lake: Lake, run: str) -> str:
    return f"{lake.run_dir(run)}/{LEASE}"


def read_lease(lake: Lake, run: str) -> dict[str, Any] | None:
    """The run's lease record, None if there is none; an unreadable lease reads as a record
    without a driver (stale after STALE_SECONDS by the file's time)."""
    path = lease_path(lake, run)
    info = lake.fs.get_file_info(path)
    if info.type == pafs.FileType.NotFound:
        return None
    try:
        record = json.loads(lake.read_text(path))
    except FileNotFoundError:
        return None
    except (UnicodeDecodeError, ValueError):
        record = None
    if not isinstance(record, dict):
        mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
        return {"token": None, "heartbeat_epoch": mtime, "unreadable": True}
    return record


def describe(record: dict[str, Any]) -> str:
    """'pid 123 on host h (since T, last heartbeat T2)'."""
    if record.get("unreadable"):
        return "an unreadable lease"
    return (
        f"pid {record.get('pid', '?')} on {record.get('host', '?')} "
        f"(since {record.get('taken', '?')}, last heartbeat {record.get('heartbeat', '?')})"
    )


def staleness(record: dict[str, Any], clock: float | None = None) -> str | None:
    """Why a lease is stale ('its process is gone', 'no heartbeat for 75 s'), or None if live."""
    if record.get("host") == socket.gethostname() and _int(record.get("pid")):
        pid = record["pid"]
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return f"its process {pid} on this host is gone"
        except PermissionError:
            pass
        start, recorded = _proc_start(pid), record.get("pid_start")
        if start is not None and _int(recorded) and start != recorded:
            return f"its process {pid} on this host is gone (the pid is another's now)"
        return None  # a process of this host that is alive: live, heartbeat or not
    beat = record.get("heartbeat_epoch")
    limit = record.get("stale_after", STALE_SECONDS)
    if not isinstance(beat, int | float) or not isinstance(limit, int | float):
        return "it records no heartbeat"
    age = (time.time() if clock is None else clock) - beat
    if age > limit:
        return f"no heartbeat for {age:.0f} s (stale after {limit:g} s)"
    return None


def _int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x > 0


def new_record(run: str) -> dict[str, Any]:
    t = time.time()
    return {
        "run": run,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "pid_start": _proc_start(os.getpid()),
        "token": secrets.token_hex(16),
        "taken": now(),
        "heartbeat": now(),
        "heartbeat_epoch": t,
        "stale_after": STALE_SECONDS,
    }


def _encode(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, indent=1) + "\n").encode("utf-8")


# -- the stores ----------------------------------------------------------------------------------


class _Store:
    """Create-if-absent and compare-and-replace of one small object; `how` names the guarantee."""

    how = "best effort"

    def __init__(self, lake: Lake, path: str) -> None:
        self.lake, self.path = lake, path

    def create(self, data: bytes) -> bool:
        if self.lake.exists(self.path):
            return False
        self.lake.write_bytes(self.path, data)
        time.sleep(SETTLE_SECONDS)
        return True

    def replace(self, expected: str | None, data: bytes) -> bool:
        """Write `data` if the lease still holds the token `expected`; whether it did."""
        record = read_lease(self.lake, _run_of(self.path))
        if (record or {}).get("token") != expected:
            return False
        self.lake.write_bytes(self.path, data)
        return True

    def delete(self, expected: str) -> None:
        record = read_lease(self.lake, _run_of(self.path))
        if record is not None and record.get("token") == expected:
            self.lake.fs.delete_file(self.path)


def _run_of(path: str) -> str:
    return path.rsplit("/", 2)[-2]


class _LocalStore(_Store):
    """A local or mounted lake: link() is an atomic create-if-absent; an flock serialises
    renewals and take-overs."""

    how = "atomic (hard link, flock)"

    def create(self, data: bytes) -> bool:
        tmp = f"{self.path}.tmp-{secrets.token_hex(6)}"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        return True

    @contextlib.contextmanager
    def _locked(self) -> Any:
        import fcntl

        lock = f"{os.path.dirname(self.path)}/{LOCK}"
        while True:  # the lock file may be removed (release) while we wait: lock the one there
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(lock).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        try:
            yield
        finally:
            os.close(fd)

    def replace(self, expected: str | None, data: bytes) -> bool:
        with self._locked():
            return super().replace(expected, data)

    def delete(self, expected: str) -> None:
        with self._locked():
            super().delete(expected)
            with contextlib.suppress(OSError):
                os.unlink(f"{os.path.dirname(self.path)}/{LOCK}")


class _S3Store(_Store):
    """S3 with boto3: conditional PUTs (If-None-Match to create, If-Match to replace)."""

    how = "atomic (S3 conditional writes)"

    def __init__(self, lake: Lake, path: str, client: Any) -> None:
        super().__init__(lake, path)
        self.client = client
        self.bucket, self.key = path.split("/", 1)
        self.etag: str | None = None

    def _call(self, method: str, **kwargs: Any) -> Any:
        """A call of the S3 client; a refused precondition is _Refused, a missing key None,
        any other failure a one-line LakeUnreachable naming the lake."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, method)(Bucket=self.bucket, Key=self.key, **kwargs)
        except ClientError as exc:
            if _precondition(exc):
                raise _Refused from None
            if exc.response.get("Error", {}).get("Code") == "NotImplemented":
                raise _Unsupported from None
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise store_error(self.lake.uri, exc) from None
        except BotoCoreError as exc:
            raise store_error(self.lake.uri, exc) from None

    def _etag_of(self, expected: str | None) -> str | None:
        got = self._call("get_object")
        if got is None:
            return None
        try:
            record = json.loads(got["Body"].read())
        except ValueError:
            record = None
        token = record.get("token") if isinstance(record, dict) else None
        return str(got["ETag"]) if token == expected else None

    def create(self, data: bytes) -> bool:
        # Asked first as well: a store that ignored If-None-Match must still not overwrite a
        # lease that has long been there.
        if self._call("head_object") is not None:
            return False
        try:
            put = self._call("put_object", Body=data, IfNoneMatch="*")
        except _Refused:
            return False
        except _Unsupported:  # an S3-compatible store without conditional writes
            self.how = _Store.how
            return super().create(data)
        self.etag = put["ETag"]
        return True

    def replace(self, expected: str | None, data: bytes) -> bool:
        etag = self.etag if expected is not None and self.etag else self._etag_of(expected)
        if etag is None:
            return False
        try:
            put = self._call("put_object", Body=data, IfMatch=etag)
        except _Refused:
            self.etag = None
            return False
        except _Unsupported:
            return super().replace(expected, data)
        self.etag = put["ETag"]
        return True

    def delete(self, expected: str) -> None:
        if self._etag_of(expected) is not None:
            self._call("delete_object")


class _Refused(Exception):
    """The store refused a conditional write: another driver changed the lease first."""


class _Unsupported(Exception):
    """The store does not do conditional writes (HTTP 501): the best effort is used instead."""


def _precondition(exc: Any) -> bool:
    code = str(exc.response.get("Error", {}).get("Code", ""))
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412)


def _s3_client(uri: str) -> Any:
    """A boto3 S3 client for the lake's store (the standard AWS environment, and the URI's
    endpoint_override/scheme/region if it names them), or None without boto3."""
    try:
        import boto3
    except ImportError:
        return None
    query = {k: v[-1] for k, v in parse_qs(urlparse(uri).query).items()}
    kwargs: dict[str, Any] = {}
    endpoint = query.get("endpoint_override")
    if endpoint:
        scheme = query.get("scheme", "https")
        kwargs["endpoint_url"] = endpoint if "://" in endpoint else f"{scheme}://{endpoint}"
    if query.get("region"):
        kwargs["region_name"] = query["region"]
    return boto3.client("s3", **kwargs)


def store_for(lake: Lake, path: str) -> _Store:
    """The strongest create-if-absent the lake's store offers (see the module docstring)."""
    if isinstance(lake.fs, pafs.LocalFileSystem):
        return _LocalStore(lake, path)
    if isinstance(lake.fs, pafs.S3FileSystem):
        client = _s3_client(lake.uri)
        if client is not None:
            return _S3Store(lake, path, client)
    return _Store(lake, path)


# -- the lease -----------------------------------------------------------------------------------


@dataclass
class Lease:
    """This driver's hold on a run: renewed by a thread until `release()`."""

    lake: Lake
    run: str
    record: dict[str, Any]
    store: _Store
    created: list[str] = field(default_factory=list)  # folders made to hold it
    lost: str | None = None  # why this driver no longer owns the run
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start_heartbeat(self, every: float = HEARTBEAT_SECONDS) -> None:
        self._thread = threading.Thread(
            target=self._beat, args=(every,), name="flip7-lease", daemon=True
        )
        self._thread.start()

    def _beat(self, every: float) -> None:
        failing_since: float | None = None
        while not self._stop.wait(every):
            try:
                self.renew()
                failing_since = None
            except LeaseLost as exc:
                self.lost = str(exc)
                return
            except OSError as exc:
                failing_since = failing_since or time.monotonic()
                if time.monotonic() - failing_since > self.record["stale_after"] / 2:
                    self.lost = (
                        f"run {self.run!r}: cannot renew its lease under {self.lake.uri} "
                        f"({' '.join(str(exc).split())}); another driver may take it over"
                    )
                    return

    def renew(self) -> None:
        """Refresh the heartbeat, or LeaseLost if the lease is no longer this driver's."""
        token = self.record["token"]
        self.record.update(heartbeat=now(), heartbeat_epoch=time.time())
        if not self.store.replace(token, _encode(self.record)):
            other = read_lease(self.lake, self.run)
            who = describe(other) if other else "nobody (the lease was removed)"
            raise LeaseLost(
                f"run {self.run!r} under {self.lake.uri} was taken over by {who}: this driver "
                "stopped writing it"
            )

    def check(self) -> None:
        """LeaseLost if the heartbeat found the run taken from this driver."""
        if self.lost is not None:
            raise LeaseLost(self.lost)

    def release(self) -> None:
        """Stop the heartbeat and remove the lease if it is still this driver's; remove the
        folders made only to hold it (a refused start leaves the lake as it was)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with contextlib.suppress(OSError):
            self.store.delete(self.record["token"])
        for folder in self.created:  # innermost first; only while empty
            with contextlib.suppress(OSError):
                sel = pafs.FileSelector(folder, allow_not_found=True)
                if not self.lake.fs.get_file_info(sel):
                    self.lake.fs.delete_dir(folder)


def take(lake: Lake, run: str, *, take_over: bool = False) -> Lease:
    """Take run `run` of `lake` for this process, or a LeaseHeld naming the driver that has
    it. `take_over`: replace a stale lease (never a live one)."""
    path = lease_path(lake, run)
    folders = [lake.base, f"{lake.base}/runs", lake.run_dir(run)]
    created = [f for f in reversed(folders) if not lake.exists(f)]
    lake.fs.create_dir(lake.run_dir(run), recursive=True)
    store = store_for(lake, path)
    record = {**new_record(run), "how": store.how}
    lease = Lease(lake, run, record, store, created)
    try:
        for _ in range(5):
            if store.create(_encode(record)):
                break
            other = read_lease(lake, run)
            if other is None:
                continue  # released in between: try again
            why = staleness(other)
            if why is None:
                after = (
                    "then --resume takes the run over"
                    if other.get("host") == socket.gethostname()
                    else f"its lease goes stale {other.get('stale_after', STALE_SECONDS):g} s "
                    "after its last heartbeat, and then --resume takes the run over"
                )
                raise LeaseHeld(
                    f"run {run!r} under {lake.uri} is being written by another driver: "
                    f"{describe(other)}; wait for it to finish, or stop it ({after})"
                )
            if not take_over:
                raise LeaseHeld(
                    f"run {run!r} under {lake.uri} is held by a driver that stopped: "
                    f"{describe(other)}, {why}; pass --resume to take the run over and finish "
                    "it, or --overwrite to start it again"
                )
            if store.replace(other.get("token"), _encode(record)):
                break
        else:
            raise LeaseHeld(f"run {run!r} under {lake.uri}: its lease keeps changing; try again")
        confirmed = read_lease(lake, run)
        if confirmed is None or confirmed.get("token") != record["token"]:
            who = describe(confirmed) if confirmed else "nobody"
            raise LeaseHeld(
                f"run {run!r} under {lake.uri} was taken by another driver at the same moment: "
                f"{who}; wait for it to finish"
            )
    except BaseException:
        if lease.created:
            lease.release()
        raise
    return lease
