"""Starting a local Ray, or reaching a cluster, with bounded waits that say what they wait for.

A local Ray gives its processes a fixed 30 s to register; on a busy machine they may not, and
`ray.init` fails with "The current node timed out during startup". `start_local` then tries
again, after a pause that grows with the machine's load, saying so on stderr, and fails with
one line naming the cause and FLIP7_RAY_START_TRIES. An address is asked first whether it
answers as a gRPC server does (Ray's GCS and Ray Client both are): a port that takes the
connection and never answers fails after FLIP7_RAY_CONNECT_TIMEOUT seconds, with a line while
waiting, instead of hanging in `ray.init` (docs/pipeline.md#starting-ray).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

START_TRIES_ENV = "FLIP7_RAY_START_TRIES"
DEFAULT_START_TRIES = 4
CONNECT_TIMEOUT_ENV = "FLIP7_RAY_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds of silence from an address before saying that we wait for it.
QUIET_SECONDS = 1.0

#: What an HTTP/2 client sends first (its preface, then an empty SETTINGS frame): a gRPC
#: server answers with frames of its own; a port that is no such server says nothing.
H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


class Unreachable(ConnectionError):
    """No Ray to be had: a local one that did not start, an address none answers at (the
    message is the one line to print)."""


def _say(line: str) -> None:
    print(f"flip7: {line}", file=sys.stderr, flush=True)


def _setting(name: str, default: float, kind: type, low: float) -> Any:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return kind(default)
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not value >= low or value != value or value == float("inf"):
        raise ValueError(f"{name}={raw!r}: must be a number >= {low:g}")
    return value


def start_tries() -> int:
    """How many times to try starting a local Ray (FLIP7_RAY_START_TRIES, default 4)."""
    return int(_setting(START_TRIES_ENV, DEFAULT_START_TRIES, int, 1))


def connect_timeout() -> float:
    """Seconds to wait for an address to answer (FLIP7_RAY_CONNECT_TIMEOUT, default 10)."""
    return float(_setting(CONNECT_TIMEOUT_ENV, DEFAULT_CONNECT_TIMEOUT, float, 0.1))


def load() -> tuple[float, int]:
    """(the 1-minute load average, the CPUs this process may use)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        return os.getloadavg()[0], cpus
    except OSError:
        return 0.0, cpus


def load_text() -> str:
    avg, cpus = load()
    return f"load average {avg:.1f} on {cpus} CPU{'s' if cpus != 1 else ''}"


def start_local(
    ray: Any, kwargs: dict[str, Any], say: Callable[[str], None] = _say, pause: float = 5.0
) -> None:
    """`ray.init(**kwargs)` for a local Ray, tried up to start_tries() times. Between tries,
    what is left of the failed start is shut down and we wait `pause` seconds times the try's
    number, longer in proportion to the load. The last failure is a one-line ConnectionError
    naming the cause and FLIP7_RAY_START_TRIES."""
    tries = start_tries()  # a first try that works prints nothing (stderr stays the command's)
    for attempt in range(1, tries + 1):
        try:
            ray.init(**kwargs)
            return
        except Exception as exc:
            cause = _one_line(exc)
            try:
                ray.shutdown()
            except Exception:
                pass
            if attempt == tries:
                raise Unreachable(
                    f"cannot start a local Ray: {cause} ({tries} tr{'ies' if tries > 1 else 'y'}, "
                    f"{load_text()}); set {START_TRIES_ENV} above {tries} to try longer, or "
                    "start it when the machine is less busy"
                ) from None
            avg, cpus = load()
            wait = min(60.0, pause * attempt * max(1.0, avg / cpus))
            say(
                f"the local Ray did not start ({cause}; {load_text()}): waiting {wait:.0f} s "
                f"for the machine, then try {attempt + 1} of {tries} (each waits about 30 s for "
                f"Ray's processes to register; {START_TRIES_ENV})"
            )
            time.sleep(wait)


def probe(address: str, say: Callable[[str], None] = _say, seconds: float | None = None) -> None:
    """A one-line ConnectionError when HOST:PORT (or ray://HOST:PORT) takes no connection, or
    takes one and does not answer as a gRPC server within `seconds` (connect_timeout()),
    saying on stderr that it waits once the silence lasts QUIET_SECONDS. `auto` and other
    forms are left to Ray."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    seconds = connect_timeout() if seconds is None else seconds
    deadline = time.monotonic() + seconds
    try:
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=seconds)
    except OSError as exc:
        raise Unreachable(
            f"no Ray answers at {address} ({exc.strerror or exc}); start one there "
            "(`ray start --head`) or leave out --address to run on a local Ray"
        ) from None
    said = False
    with sock:
        try:
            sock.sendall(H2_HELLO)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(min(left, QUIET_SECONDS))
                try:
                    if sock.recv(64) == b"":
                        raise Unreachable(
                            f"{address} closed the connection without answering as Ray does: "
                            "is it a Ray head's port (6379 by default) or a ray:// client port?"
                        )
                    break
                except TimeoutError:
                    if not said and time.monotonic() < deadline:
                        say(f"waiting for Ray at {address} to answer (up to {seconds:g} s) ...")
                        said = True
        except TimeoutError:
            raise Unreachable(
                f"{address} took the connection but did not answer as Ray does within "
                f"{seconds:g} s: check that it is a Ray head's port (6379 by default) or a "
                f"ray:// client port, or set {CONNECT_TIMEOUT_ENV} above {seconds:g} for a slow "
                "link"
            ) from None
        except Unreachable:
            raise
        except OSError as exc:
            raise Unreachable(
                f"{address} dropped the connection ({exc.strerror or exc}): is Ray running there?"
            ) from None
    if not address.startswith("ray://"):
        check_token(hostport, max(1.0, deadline - time.monotonic()))


#: Ray's token authentication (on by default since Ray 2.5x for a head started with a token):
#: the setting, the token itself, and the file holding it (default ~/.ray/auth_token).
AUTH_MODE_ENV, AUTH_TOKEN_ENV, AUTH_TOKEN_PATH_ENV = (
    "RAY_AUTH_MODE",
    "RAY_AUTH_TOKEN",
    "RAY_AUTH_TOKEN_PATH",
)
#: A cheap call every Ray head (its GCS) answers; the one `ray.init` makes first.
CLUSTER_ID_METHOD = "/ray.rpc.NodeInfoGcsService/GetClusterId"


def our_token() -> tuple[str | None, str]:
    """The token `ray.init(address=...)` would send, and where it comes from: none unless
    RAY_AUTH_MODE=token (an explicit address never turns it on by itself)."""
    if os.environ.get(AUTH_MODE_ENV, "").lower() != "token":
        return None, f"{AUTH_MODE_ENV} is not token here"
    if os.environ.get(AUTH_TOKEN_ENV):
        return os.environ[AUTH_TOKEN_ENV].strip(), f"${AUTH_TOKEN_ENV}"
    path = os.environ.get(AUTH_TOKEN_PATH_ENV) or os.path.join(
        os.path.expanduser("~"), ".ray", "auth_token"
    )
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip(), path
    except OSError:
        return None, f"no token in {path}"


def check_token(hostport: str, seconds: float) -> None:
    """A one-line ConnectionError when the Ray head at HOST:PORT refuses the token this process
    would send (none, or another one): `ray.init` would log some twenty lines of
    InvalidAuthToken and then fail saying only that it cannot connect. Anything else (a head
    without authentication, an older Ray, no grpc here) is left to `ray.init`."""
    try:
        import grpc
    except ImportError:
        return
    token, source = our_token()
    metadata = [("authorization", f"Bearer {token}")] if token else []
    channel = grpc.insecure_channel(hostport)
    try:
        call = channel.unary_unary(
            CLUSTER_ID_METHOD,
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        call(b"", timeout=seconds, metadata=metadata)
        return
    except grpc.RpcError as exc:
        if exc.code() != grpc.StatusCode.UNAUTHENTICATED:
            return
    finally:
        channel.close()
    if token is None:
        how = (
            f"it has Ray's token authentication on and this process sends no token ({source}); "
            f"run with {AUTH_MODE_ENV}=token (the token is read from ~/.ray/auth_token, or set "
            f"{AUTH_TOKEN_ENV} to the head's: `ray get-auth-token` on the head prints it), or "
            f"start the head with {AUTH_MODE_ENV}=disabled on every node (README: On a cluster)"
        )
    else:
        how = (
            f"the token from {source} is not the head's; set {AUTH_TOKEN_ENV} to the head's "
            "(`ray get-auth-token` on the head prints it)"
        )
    raise Unreachable(f"the head at {hostport} refused our token: {how}")


def _one_line(exc: BaseException) -> str:
    lines = [s.strip() for s in str(exc).strip().splitlines() if s.strip()]
    return lines[-1] if lines else type(exc).__name__
