"""The lake's object store: its errors as one line naming the URI and what to fix, and the checks
made before anything is read (an endpoint that never answers, a bucket that does not exist).
The pipeline and the warehouse say the same things in the same words because they call these."""

from __future__ import annotations

import math
import os
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow.fs as pafs


class LakeUnreachable(OSError):
    """The lake's store refused or did not answer (no bucket, no credentials, no server)."""


def has_credentials() -> bool:
    """Whether the standard AWS environment names credentials (keys, a profile, a web identity,
    a container's, or a credentials file); an instance role cannot be seen from here."""
    names = (
        "AWS_ACCESS_KEY_ID",
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    )
    if any(os.environ.get(n) for n in names):
        return True
    config = os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.expanduser(
        "~/.aws/credentials"
    )
    return os.path.isfile(config)


def store_error(root: str, exc: BaseException) -> LakeUnreachable:
    """An error from the lake's store as one line naming the URI and what to fix."""
    text = " ".join(str(exc).split())
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL_S3")
    if "NETWORK_CONNECTION" in text or "Could not connect" in text or "curlCode" in text:
        where = f"endpoint {endpoint}" if endpoint else "its endpoint"
        why = (
            f"cannot reach the store of {root} ({where} does not answer); check that the server "
            "runs and AWS_ENDPOINT_URL (or the URI's endpoint_override) points at it"
        )
    elif "NO_SUCH_BUCKET" in text or "bucket does not exist" in text.lower():
        bucket = root.split("://", 1)[-1].split("/", 1)[0]
        why = (
            f"bucket {bucket!r} of {root} does not exist; create it, or point --data / "
            "$FLIP7_DATA at an existing bucket"
        )
    elif not has_credentials():
        why = (
            f"no AWS credentials found to read {root}; set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), or run where an instance role gives them"
        )
    elif any(
        k in text
        for k in (
            "ACCESS_DENIED",
            "AccessDenied",
            "InvalidAccessKeyId",
            "SignatureDoesNotMatch",
            "INVALID_ACCESS_KEY_ID",
            "credentials",
            "HTTP response code: 403",
        )
    ):
        why = (
            f"access to {root} denied (missing or wrong credentials); set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) for a user that may read it"
        )
    else:
        why = f"cannot read {root}: {text}"
    return LakeUnreachable(why)


#: Seconds an S3 endpoint has to answer before a command gives up on it (a store that takes
#: the connection and never answers would otherwise hold every request for minutes).
STORE_TIMEOUT_ENV = "FLIP7_STORE_TIMEOUT"
DEFAULT_STORE_TIMEOUT = 5.0
#: Seconds of silence before saying that we wait.
STORE_QUIET_SECONDS = 1.0


def store_timeout() -> float:
    """FLIP7_STORE_TIMEOUT seconds (default 5), checked."""
    raw = os.environ.get(STORE_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_STORE_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{STORE_TIMEOUT_ENV}={raw!r}: must be a number of seconds > 0")
    return value


def store_endpoint(root: str) -> str | None:
    """The endpoint an s3:// root is read from when one is set (the URI's endpoint_override,
    else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL); None for AWS's own."""
    from urllib.parse import parse_qs, urlsplit

    query = parse_qs(urlsplit(root).query)
    given = (query.get("endpoint_override") or [None])[0]
    if given:
        scheme = (query.get("scheme") or ["https"])[0]
        return given if "://" in given else f"{scheme}://{given}"
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def probe_store(root: str, seconds: float | None = None) -> None:
    """For an s3:// root with an endpoint set: a LakeUnreachable (store_error's line) unless the
    endpoint takes a connection and answers an HTTP request within `seconds` (store_timeout()),
    saying on stderr that it waits once the silence lasts STORE_QUIET_SECONDS."""
    import sys
    import time
    from urllib.parse import urlsplit

    if not root.lower().startswith("s3://"):
        return
    endpoint = store_endpoint(root)
    if not endpoint:
        return
    parts = urlsplit(endpoint)
    host = parts.hostname
    if not host:
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return
    seconds = store_timeout() if seconds is None else seconds
    deadline = time.monotonic() + seconds
    unreachable = OSError(f"NETWORK_CONNECTION: {endpoint} did not answer within {seconds:g} s")
    try:
        sock = socket.create_connection((host, port), timeout=seconds)
    except OSError:
        raise store_error(root, unreachable) from None
    said = False
    with sock:
        try:
            sock.sendall(f"HEAD / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise store_error(root, unreachable)
                sock.settimeout(min(left, STORE_QUIET_SECONDS))
                try:
                    sock.recv(1)  # any answer, or a close: the endpoint is there
                    return
                except TimeoutError:
                    if not said and time.monotonic() < deadline:
                        print(
                            f"flip7: waiting for the store at {endpoint} to answer (up to "
                            f"{seconds:g} s; {STORE_TIMEOUT_ENV}) ...",
                            file=sys.stderr,
                            flush=True,
                        )
                        said = True
        except OSError as exc:
            if isinstance(exc, LakeUnreachable):
                raise
            raise store_error(root, unreachable) from None


def check_bucket(fs: pafs.FileSystem, base: str, root: str) -> None:
    """On S3, a LakeUnreachable unless the root's bucket exists and answers (a listing of a
    missing bucket is merely empty)."""
    import pyarrow.fs as pafs  # the store's own types: only where a lake is opened

    if not isinstance(fs, pafs.S3FileSystem):
        return
    bucket = base.split("/", 1)[0]
    try:
        info = fs.get_file_info(bucket)
    except OSError as exc:
        raise store_error(root, exc) from None
    if info.type == pafs.FileType.NotFound:
        raise store_error(root, OSError("NO_SUCH_BUCKET"))
