"""The mart cache on disk: keyed by the lake as it is now, read only when it is ours and whole."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.solver.cache import cache_dir as solver_cache_dir
from warehouse import cache
from warehouse.cache import MartCache, cache_dir, lake_key, location
from warehouse.lake import screen, snapshot

ROWS = pa.table({"run": ["t1", "t2"], "players": [3, 4], "win_rate": [0.25, 0.5]})


def key_of(root: Path) -> str:
    return lake_key(*screen(snapshot(str(root))))


def entry(directory: Path, root: Path) -> MartCache:
    snap, skipped = screen(snapshot(str(root)))
    return MartCache(directory, location(snap), lake_key(snap, skipped))


@pytest.mark.parametrize("find", [cache_dir, solver_cache_dir], ids=["marts", "solver"])
def test_cache_dir_precedence(monkeypatch, tmp_path, find):
    """--cache-dir beats $FLIP7_CACHE, which beats ~/.cache/flip7: for the mart cache and the
    solver's tables alike."""
    monkeypatch.delenv("FLIP7_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert find() == tmp_path / "home" / ".cache" / "flip7"
    monkeypatch.setenv("FLIP7_CACHE", str(tmp_path / "env"))
    assert find() == tmp_path / "env"
    assert find(tmp_path / "flag") == tmp_path / "flag"


def test_a_stored_mart_reads_back_with_its_rows_and_types(lake, tmp_path):
    """store then load gives the same table (no metadata of ours left on it), under
    marts/<lake>/<key>/<mart>.parquet in the cache directory, never in the lake."""
    c = entry(tmp_path / "cache", lake.root)
    assert c.load("win_rates") is None
    assert c.store("win_rates", ROWS)
    (path,) = c.files("win_rates")
    assert path.parent.parent.parent == tmp_path / "cache" / "marts"
    assert c.load("win_rates").equals(ROWS)
    assert c.store("win_rates", ROWS.slice(1)) and c.load("win_rates").equals(ROWS.slice(1))
    assert len(c.files("win_rates")) == 1 and len(list(c.folder.iterdir())) == 1


def test_the_key_follows_the_lake(lake_copy, tmp_path):
    """The same lake listed twice has one key; touching a file, editing a manifest or adding
    a shard gives another; and so does an identical copy of the lake elsewhere."""
    root = lake_copy.root
    before = key_of(root)
    assert key_of(root) == before
    games = sorted((root / "games").rglob("shard-*.parquet"))[0]
    st = games.stat()
    os.utime(games, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    touched = key_of(root)
    assert touched != before
    manifest = next((root / "runs").glob("*/manifest.json"))
    manifest.write_text(manifest.read_text().replace('"status"', '"status" ', 1))
    edited = key_of(root)
    assert edited not in (before, touched)
    extra = games.with_name("shard-99999.parquet")
    shutil.copy(games, extra)
    assert key_of(root) not in (before, touched, edited)
    twin = tmp_path / "twin"
    shutil.copytree(root, twin, copy_function=shutil.copy2)  # same files, same times
    assert key_of(twin) != key_of(root)


def test_the_key_follows_the_warehouses_sql(lake, tmp_path, monkeypatch):
    """An upgrade that changes a mart's SQL (or adds a view) changes the key of an unchanged
    lake, so the dashboard computes the mart again instead of serving the old rows from the
    cache; the same SQL again gives the same key."""
    sql = tmp_path / "sql"
    shutil.copytree(cache.SQL_DIR, sql)
    monkeypatch.setattr(cache, "SQL_DIR", sql)
    before = key_of(lake.root)
    assert key_of(lake.root) == before
    mart = sql / "marts" / "win_rates.sql"
    mart.write_text(mart.read_text().replace("select", "select  ", 1))
    changed = key_of(lake.root)
    assert changed != before
    (sql / "marts" / "new_mart.sql").write_text("select 1 as x\n")
    assert key_of(lake.root) not in (before, changed)
    c = entry(tmp_path / "cache", lake.root)
    assert c.store("win_rates", ROWS)
    mart.write_text(mart.read_text() + "\n-- upgraded\n")
    assert entry(tmp_path / "cache", lake.root).load("win_rates") is None


def test_a_damaged_file_is_not_read(lake, tmp_path):
    """A flipped byte anywhere in a stored mart (data, schema or footer), a truncated file, or
    text that is not Parquet: load says None (the mart is computed again), never raises."""
    c = entry(tmp_path, lake.root)
    c.store("win_rates", ROWS)
    (path,) = c.files("win_rates")
    whole = path.read_bytes()
    for i in range(len(whole)):
        data = bytearray(whole)
        data[i] ^= 0x01
        path.write_bytes(bytes(data))
        assert c.load("win_rates") is None, i
    path.write_bytes(whole[:-40])
    assert c.load("win_rates") is None
    path.write_bytes(whole)
    assert c.load("win_rates").equals(ROWS)
    (c.folder / f"league-{'0' * 64}.parquet").write_text("import os; os.system('echo pwned')")
    assert c.load("league") is None


def test_a_planted_or_foreign_file_is_not_read(lake, lake_copy, tmp_path):
    """Parquet written by anyone else (no metadata of ours), an entry of another lake or of
    another mart copied into this one's place, and a file over the size limit are ignored."""
    mine = entry(tmp_path, lake.root)
    theirs = entry(tmp_path, lake_copy.root)
    assert mine.folder != theirs.folder
    mine.folder.mkdir(parents=True)
    sink = pa.BufferOutputStream()
    pq.write_table(ROWS, sink)  # plain Parquet, named as an entry of runs
    data = sink.getvalue().to_pybytes()
    (mine.folder / f"runs-{hashlib.sha256(data).hexdigest()}.parquet").write_bytes(data)
    assert mine.files("runs") and mine.load("runs") is None
    theirs.store("win_rates", ROWS)
    shutil.copy(theirs.files("win_rates")[0], mine.folder)  # another lake's entry
    assert mine.files("win_rates") and mine.load("win_rates") is None
    mine.store("league", ROWS)
    (league,) = mine.files("league")
    shutil.copy(league, mine.folder / league.name.replace("league", "head_to_head"))
    assert mine.files("head_to_head") and mine.load("head_to_head") is None
    assert mine.load("league") is not None
    cache.MAX_BYTES, limit = 100, cache.MAX_BYTES
    try:
        assert mine.load("league") is None
    finally:
        cache.MAX_BYTES = limit


def test_storing_removes_the_lakes_older_entries_only(lake, lake_copy, tmp_path):
    """A new key of a lake removes that lake's older key folders; another lake's entries and
    folders not named like a key stay."""
    old = entry(tmp_path, lake_copy.root)
    old.store("runs", ROWS)
    other = entry(tmp_path, lake.root)
    other.store("runs", ROWS)
    keep = old.folder.parent / "notes"
    keep.mkdir()
    new = MartCache(tmp_path, old.lake, "f" * 64)
    new.store("runs", ROWS)
    assert not old.folder.exists() and keep.is_dir()
    assert new.load("runs") is not None and other.load("runs") is not None


def test_an_unwritable_cache_costs_speed_only(lake, tmp_path):
    """A cache directory that cannot be created: store says False, load says None."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    c = entry(blocker / "cache", lake.root)
    assert c.store("runs", ROWS) is False
    assert c.load("runs") is None


def test_a_mart_name_is_a_relation_name(lake, tmp_path):
    """A name that is not a relation name never becomes a path."""
    with pytest.raises(ValueError, match="not a relation name"):
        entry(tmp_path, lake.root).files("../../etc/passwd")


def test_open_cached_reads_the_cache_and_the_runs_notes_only(lake, tmp_path):
    """open_cached over a lake: the stored marts as tables the queries read, the others absent,
    the same warnings connect() gives; None for a lake without shards."""
    from warehouse import connect, queries
    from warehouse.db import problems

    con = connect(lake.root)
    c = entry(tmp_path, lake.root)
    c.store("runs", con.sql("SELECT * FROM runs").to_arrow_table())
    opened = cache.open_cached(str(lake.root), ("runs", "win_rates"), tmp_path)
    assert opened is not None and opened.marts == {"runs"}
    assert opened.notes == problems(con)
    assert queries.runs(opened.con).equals(queries.runs(con))
    with pytest.raises(Exception, match="win_rates"):
        queries.win_rates(opened.con)
    assert cache.open_cached(str(tmp_path / "nothing"), ("runs",), tmp_path) is None
