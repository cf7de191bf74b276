"""The S3-compatible server the tests in this folder share, and the AWS environment pointing
at it (set for each test, removed after)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pipeline.helpers import run_inline, small_plan
from tests.s3.server import S3Server, serving


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with serving(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture(autouse=True)
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLIP7_DATA", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-role probing
    return s3_server


@pytest.fixture
def bucket(s3_server: S3Server) -> str:
    """A fresh bucket of the shared server."""
    return s3_server.bucket()


@pytest.fixture(scope="session")
def lakes(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The same small run (tests/pipeline/helpers.py) written to a bucket and to a local
    directory: (s3 URI, local path)."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in s3_server.env().items():
            mp.setenv(name, value)
        uri = f"s3://{s3_server.bucket()}/lake"
        run_inline(small_plan(), uri)
    local = str(tmp_path_factory.mktemp("local") / "lake")
    run_inline(small_plan(), local)
    return uri, local
