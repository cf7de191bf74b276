"""An S3-compatible server on 127.0.0.1 for tests: moto's standalone server (`moto_server`).

`S3Server.start()` runs it on a free port and waits until it answers; `stop()` ends that
process (and only it). `env()` is the standard AWS environment that points pyarrow (and any
AWS client) at it. With `auth=True` the server checks credentials as AWS does (moto's
INITIAL_NO_AUTH_ACTION_COUNT=0): requests without keys, or with keys it never issued, fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.fs as pafs

KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def moto_command() -> str:
    """The moto_server script of this interpreter's environment."""
    beside = Path(sys.executable).with_name("moto_server")
    found = str(beside) if beside.exists() else shutil.which("moto_server")
    if found is None:
        raise RuntimeError("moto_server not found: pip install 'moto[server]' (the dev extra)")
    return found


@dataclass
class S3Server:
    port: int = field(default_factory=free_port)
    auth: bool = False
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, log: Path) -> S3Server:
        env = {**os.environ, **({"INITIAL_NO_AUTH_ACTION_COUNT": "0"} if self.auth else {})}
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [moto_command(), "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto_server exited: {log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).close()
                return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"moto_server did not answer on {self.endpoint} within 30 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def env(self) -> dict[str, str]:
        return {**KEYS, "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint}

    def filesystem(self) -> pafs.S3FileSystem:
        return pafs.S3FileSystem(
            access_key=KEYS["AWS_ACCESS_KEY_ID"],
            secret_key=KEYS["AWS_SECRET_ACCESS_KEY"],
            region="us-east-1",
            endpoint_override=f"127.0.0.1:{self.port}",
            scheme="http",
            allow_bucket_creation=True,
        )

    def bucket(self) -> str:
        """A new, empty bucket; its name."""
        name = f"flip7-{uuid.uuid4().hex[:12]}"
        self.filesystem().create_dir(name)
        return name


@contextmanager
def serving(log_dir: Path) -> Iterator[S3Server]:
    """A started server logging into log_dir, stopped on the way out (a fixture's body)."""
    server = S3Server().start(log_dir / "moto.log")
    try:
        yield server
    finally:
        server.stop()
