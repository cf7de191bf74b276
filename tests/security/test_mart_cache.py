"""The mart cache trusts nothing in its directory. Each attack below once worked: a forged entry
(right key, metadata and self-hash name) made the dashboard show a made-up win rate, a FIFO
planted as an entry hung the page, a link to /dev/zero read until memory ran out (the size cap
read the link's target as 0 bytes), and a `marts/` link into the lake made the cache write its
Parquet files inside the lake.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.security.helpers import tree
from tests.warehouse.lakes import write_run
from warehouse import cache
from warehouse.cache import MartCache, lake_key, location
from warehouse.lake import screen, snapshot

ROWS = pa.table({"policy": ["ev", "bust:0.25"], "win_rate": [0.99, 0.01]})


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cachelake") / "data"
    write_run(root, "t1")
    return root


def entry(directory: Path, root: Path) -> MartCache:
    snap, skipped = screen(snapshot(str(root)))
    return MartCache(directory, location(snap), lake_key(snap, skipped))


def forged(c: MartCache, mart: str) -> Path:
    """A Parquet file with the metadata of a computed entry, named by the hash of its bytes (as
    entries once were): what anyone who can write the cache and read the lake can make."""
    sink = pa.BufferOutputStream()
    pq.write_table(ROWS.replace_schema_metadata({cache.META: c._meta(mart)}), sink)
    data = sink.getvalue().to_pybytes()
    c.folder.mkdir(parents=True, exist_ok=True)
    path = c.folder / f"{mart}-{hashlib.sha256(data).hexdigest()}.parquet"
    path.write_bytes(data)
    return path


def load_elsewhere(directory: Path, root: Path, mart: str) -> subprocess.CompletedProcess[str]:
    """`load(mart)` in a child process limited to 1 GiB of memory and 30 s (an attack that
    hangs or reads without end must not take the test run with it)."""
    code = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
        from tests.security.test_mart_cache import entry
        from pathlib import Path
        c = entry(Path({str(directory)!r}), Path({str(root)!r}))
        print("loaded" if c.load({mart!r}) is not None else "none")
        """
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )


def test_a_forged_entry_is_not_read(lake: Path, tmp_path: Path) -> None:
    """Right folder, right metadata, a name that is the hash of its bytes: not computed by this
    user (no MAC under the user's secret), so it is ignored; open_cached leaves the mart out."""
    c = entry(tmp_path / "cache", lake)
    forged(c, "win_rates")
    assert c.load("win_rates") is None
    opened = cache.open_cached(str(lake), ("win_rates",), tmp_path / "cache")
    assert opened is not None and opened.marts == set()
    # An entry the cache computed itself still reads back.
    assert c.store("win_rates", ROWS) and c.load("win_rates").equals(ROWS)


def test_an_entry_of_another_secret_is_not_read(
    lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry stored under another user's secret (a copied cache) is ignored."""
    c = entry(tmp_path / "cache", lake)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "theirs"))
    assert c.store("win_rates", ROWS) and c.load("win_rates") is not None
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "mine"))
    assert c.load("win_rates") is None


def test_a_fifo_entry_does_not_hang(lake: Path, tmp_path: Path) -> None:
    c = entry(tmp_path / "cache", lake)
    c.folder.mkdir(parents=True)
    os.mkfifo(c.folder / f"win_rates-{'a' * 64}.parquet")
    done = load_elsewhere(tmp_path / "cache", lake, "win_rates")
    assert done.returncode == 0 and done.stdout.strip() == "none", done.stderr
    assert cache._read_entry(c.folder / f"win_rates-{'a' * 64}.parquet") is None


def test_a_link_to_dev_zero_is_not_read(lake: Path, tmp_path: Path) -> None:
    """An entry that is a link (to /dev/zero here) makes the whole tree untrusted; the file is
    never opened through the link either."""
    c = entry(tmp_path / "cache", lake)
    c.folder.mkdir(parents=True)
    link = c.folder / f"win_rates-{'b' * 64}.parquet"
    link.symlink_to("/dev/zero")
    done = load_elsewhere(tmp_path / "cache", lake, "win_rates")
    assert done.returncode == 0 and done.stdout.strip() == "none", done.stderr
    assert "is a link" in done.stderr
    with pytest.raises(OSError):
        cache._read_entry(link)


def test_a_marts_link_into_the_lake_writes_nothing_there(lake: Path, tmp_path: Path) -> None:
    """`marts/` a link into the lake: the cache is refused, nothing is written in the lake."""
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    inside = lake / "runs" / "t1"
    before = tree(lake)
    (directory / "marts").symlink_to(inside)
    c = entry(directory, lake)
    assert c.store("win_rates", ROWS) is False and c.load("win_rates") is None
    assert tree(lake) == before


def test_a_cache_others_can_write_is_not_used(lake: Path, tmp_path: Path) -> None:
    """A cache directory, or a folder in it, writable by group or others is not used."""
    directory = tmp_path / "cache"
    c = entry(directory, lake)
    assert c.store("win_rates", ROWS)
    c.folder.chmod(0o777)
    assert c.load("win_rates") is None and c.store("win_rates", ROWS) is False
    c.folder.chmod(0o700)
    assert c.load("win_rates") is not None
    directory.chmod(0o777)
    try:
        assert c.load("win_rates") is None
    finally:
        directory.chmod(0o700)


def test_the_secret_is_private_and_outside_the_cache(
    lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The secret is made 0600 outside the cache; one readable by others, in a folder others
    can write, or a link, is not used (and then neither is the cache)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    c = entry(tmp_path / "cache", lake)
    assert c.store("win_rates", ROWS)
    key = cache.secret_path()
    assert key.is_file() and (key.stat().st_mode & 0o777) == 0o600
    assert tmp_path / "cache" not in key.parents
    key.chmod(0o644)
    assert c.load("win_rates") is None
    key.chmod(0o600)
    assert c.load("win_rates") is not None
    key.parent.chmod(0o777)  # another user could put a secret of theirs in its place
    try:
        assert c.load("win_rates") is None
    finally:
        key.parent.chmod(0o700)
    assert c.load("win_rates") is not None
    real = key.with_name("real.key")
    key.rename(real)
    key.symlink_to(real)
    assert c.load("win_rates") is None
