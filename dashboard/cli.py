"""`flip7 dashboard`: serve the Streamlit dashboard over a lake, on 127.0.0.1 by default.

The command only builds a `streamlit run` command line and turns into it (exec), through
dashboard/serve.py, which opens the lake while Streamlit starts; the lake location goes to the
app through the environment (`FLIP7_DATA`, the lake contract's own variable), so the app reads
the same root `flip7 sql` would, and so does the mart cache's directory (`FLIP7_CACHE`). Importing this module imports neither Streamlit nor the
warehouse, so `flip7 --help` stays fast.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flip7.cli import Output

APP = Path(__file__).with_name("app.py")
DATA_ENV = "FLIP7_DATA"
CACHE_ENV = "FLIP7_CACHE"
DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "127.0.0.1"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "dashboard",
        help="browse a lake in the Streamlit dashboard (serves on 127.0.0.1)",
        description="Serve the dashboard (win rates by field size, card counting, policy "
        "comparison, game replay, runs) over a lake with Streamlit.",
    )
    # Here, not at the top: the flip7 command (which has flip7.cli loaded) calls register, and
    # a process that serves the dashboard imports this module without loading flip7.
    from flip7.cli import add_data_option

    add_data_option(p)
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where computed tables are kept between servers, outside the lake (default: "
        "$FLIP7_CACHE, else ~/.cache/flip7)",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--address",
        default=DEFAULT_ADDRESS,
        help=f"address to listen on (default {DEFAULT_ADDRESS}: this machine only)",
    )
    p.set_defaults(func=cmd_dashboard, tee=False)


def data_dir(data: str | None) -> str:
    """The data root: --data, else $FLIP7_DATA, else ./data; a path made absolute, a URI
    (s3://bucket/prefix, ...) as given once its store answers (else a one-line error)."""
    root = data or os.environ.get(DATA_ENV) or "data"
    if "://" in root:
        from warehouse.lake import check_bucket, resolve

        fs, base = resolve(root)
        check_bucket(fs, base, root)
        return root.rstrip("/")
    return os.path.abspath(os.path.expanduser(root))


def cache_path(cache: str | None, root: str) -> str:
    """The mart cache's directory: --cache-dir, else $FLIP7_CACHE, else ~/.cache/flip7, made
    absolute; a ValueError when it lies inside a local lake (the cache is never in the lake)."""
    path = os.path.abspath(
        os.path.expanduser(cache or os.environ.get(CACHE_ENV) or "~/.cache/flip7")
    )
    if "://" not in root:
        lake = os.path.realpath(root)
        real = os.path.realpath(path)
        if real == lake or real.startswith(lake.rstrip(os.sep) + os.sep):
            raise ValueError(
                f"--cache-dir {path} lies inside the lake {root}; give a directory outside it "
                "(default: $FLIP7_CACHE, else ~/.cache/flip7)"
            )
    return path


def check_port(port: int) -> int:
    if not 1 <= port <= 65535:
        raise ValueError(f"--port must be between 1 and 65535, got {port}")
    return port


def check_address(address: str) -> str:
    try:
        ipaddress.ip_address(address)
    except ValueError:
        if address != "localhost":
            raise ValueError(
                f"--address {address!r} is not an IP address; use 127.0.0.1 (this machine "
                "only, the default) or an address of this machine such as 0.0.0.0"
            ) from None
    return address


def streamlit_command(port: int, address: str) -> list[str]:
    """The `streamlit run` command line (run by dashboard/serve.py): no usage statistics, no
    browser, no file watcher, no developer menu."""
    return [
        sys.executable,
        "-m",
        "dashboard.serve",
        "run",
        str(APP),
        "--server.address",
        address,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "minimal",
    ]


def cmd_dashboard(args: argparse.Namespace, out: Output) -> int:
    root = data_dir(args.data)
    cache = cache_path(args.cache_dir, root)
    port = check_port(args.port)
    address = check_address(args.address)
    if "://" not in root and not os.path.isdir(root):
        out.print(
            f"note: {root} does not exist yet; the dashboard will show how to fill it "
            "(flip7 tournament run SPEC)"
        )
    host = "127.0.0.1" if address in ("0.0.0.0", "::") else address
    out.print(f"dashboard over {root} at http://{host}:{port} (Ctrl-C stops it)")
    if not ipaddress.ip_address("127.0.0.1" if address == "localhost" else address).is_loopback:
        out.print(f"warning: listening on {address}: other machines can reach it")
    env = {**os.environ, DATA_ENV: root, CACHE_ENV: cache}
    cmd = streamlit_command(port, address)
    sys.stdout.flush()
    # Become the server (same process): Ctrl-C, kill and exit status all reach Streamlit itself,
    # and no parent can die leaving it behind.
    os.execve(cmd[0], cmd, env)
    return 0  # not reached
