"""The cached policy table: its layout, the cache directory, rebuilding, bad files."""

from __future__ import annotations

import numpy as np
import pytest

from flip7.solver import get_model, solve
from flip7.solver.cache import (
    MAGIC,
    dense_bits,
    load_table,
    read_table,
    table_path,
    write_table,
)


@pytest.fixture(scope="module")
def basic():
    return solve(get_model("basic"))


def test_table_round_trips_bit_for_bit(basic, tmp_path):
    """Written then read, the table holds the solver's choice in every decision state, at the
    index the header documents: ((mask * 64 + mods) * n_sc + sc) * n_t + t."""
    path = write_table(tmp_path / "t.bin", basic.space, basic.hit, {"ev": basic.moments.ev})
    table = read_table(path)
    assert table.header["model"] == "basic" and table.header["ev"] == basic.moments.ev
    assert np.array_equal(table.as_array(), dense_bits(basic.space, basic.hit))
    sp = basic.space
    rng = np.random.default_rng(3)
    for _ in range(200):
        mask = int(rng.choice(sp.masks))
        mods, sc = int(rng.integers(64)), int(rng.integers(sp.n_sc))
        assert table.hit(mask, mods, sc) == bool(basic.hit[sp.dec_index(mask, mods, sc)])
    # 8192 masks x 64 modifier sets x 7 Second Chance states, one bit each: 458,752 bytes.
    assert len(table.bits) == 8192 * 64 * 7 // 8 == 458_752


def test_load_builds_once_then_reads(tmp_path):
    """The first load solves and writes the table; the next one reads it; rebuild rewrites."""
    model = get_model("basic")
    table, path, built = load_table(model, tmp_path)
    assert built and path == table_path(model, tmp_path) and path.exists()
    assert path.name == f"dp-basic-{model.key}.bin"
    mtime = path.stat().st_mtime_ns
    again, _, built = load_table(model, tmp_path)
    assert not built and again.bits == table.bits and path.stat().st_mtime_ns == mtime
    _, _, built = load_table(model, tmp_path, rebuild=True)
    assert built


def test_bad_files_are_refused_with_a_way_out(tmp_path):
    """A file that is not a table, or is cut short, is a ValueError saying to delete it."""
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not a table at all")
    with pytest.raises(ValueError, match="bad magic.*delete it"):
        read_table(bad)
    model = get_model("basic")
    _, path, _ = load_table(model, tmp_path)
    data = path.read_bytes()
    assert data.startswith(MAGIC)
    path.write_bytes(data[:1000])
    with pytest.raises(ValueError, match="truncated"):
        read_table(path)


def test_models_get_different_keys():
    """Each model's table file is named by a hash of its deck and rules."""
    keys = {get_model(n).key for n in ("basic", "real", "full")}
    assert len(keys) == 3


def test_a_tables_key_changes_with_the_solvers_code(monkeypatch):
    """Cached tables are named by a digest of the model and of the solver's source, not a
    hand-bumped version: other solver code never reads this code's tables."""
    from flip7.solver import model as solver_model

    basic = solver_model.get_model("basic")
    key = basic.key
    monkeypatch.setattr(solver_model, "code_digest", lambda: "an edited solver")
    assert basic.key != key
    assert table_path(basic).name != f"dp-basic-{key}.bin"


def _load_slowly(args: tuple[str, str]) -> bool:
    """One process's load_cached of a table another process may be building (a child of the
    test below): the build takes a while and notes each time it runs."""
    import time
    from pathlib import Path
    from types import SimpleNamespace

    from flip7.solver.cache import load_cached

    path, log = Path(args[0]), Path(args[1])

    def build(p: Path) -> None:
        with open(log, "a") as f:
            f.write("built\n")
        time.sleep(1.0)
        p.write_text("k")

    def read(p: Path) -> SimpleNamespace:
        return SimpleNamespace(header={"key": p.read_text()}, target=None)

    return load_cached(path, build, read, "k")[2]


def test_processes_wanting_one_table_build_it_once(tmp_path):
    """Two processes (a tournament's workers) loading the same missing table at once: one
    builds it, the other waits for it and reads it, so it is solved once, not once each."""
    import multiprocessing

    path, log = tmp_path / "cache" / "t.bin", tmp_path / "builds.log"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        built = pool.map(_load_slowly, [(str(path), str(log))] * 2)
    assert sorted(built) == [False, True]
    assert log.read_text() == "built\n"
