"""One truncated shard file leaves out its run only: it once made `flip7 sql` without `--run`
fail and the dashboard error for every run, without naming the file. Now the file and its run
are named in one line (the note, the report, verify, a dashboard caption) and every other run
still answers, as for a run whose manifest cannot be read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.cli import main
from lakecontract import codec
from tests.security.helpers import one_line

pytestmark = pytest.mark.usefixtures("no_ray")


@pytest.fixture(params=["events", "rounds", "rollups", "games"])
def lake(request: pytest.FixtureRequest, clean_t_good: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the lake with one file of run t truncated to half: (root, that file)."""
    root = tmp_path / "lake"
    shutil.copytree(clean_t_good, root)
    path = sorted((root / request.param / "run=t").rglob("shard-*.parquet"))[0]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return root, path


def test_a_truncated_file_leaves_out_its_run_only(
    lake: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, bad = lake
    data = ["--data", str(root)]
    assert main(["sql", "SELECT DISTINCT run FROM stg_games ORDER BY run", *data]) == 0
    out, err = capsys.readouterr()
    assert "good" in out and "t" not in out.split(), out
    (note,) = [n for n in err.split("; ") if "run t:" in n]
    assert "left out" in note and str(bad) in note and "not readable Parquet" in note, err
    assert main(["sql", "SELECT count(*) FROM stg_games", "--run", "t", *data]) == 2
    one_line(capsys.readouterr().err, "run t", str(bad))
    assert main(["report", "good", "--no-file", *data]) == 0
    capsys.readouterr()
    assert main(["report", "t", "--no-file", *data]) == 2
    one_line(capsys.readouterr().err, str(bad))
    assert main(["warehouse", "verify", *data]) == 1
    out = capsys.readouterr().out
    assert "FAIL  manifests_readable" in out and "run=t" in out and str(bad) in out


def test_the_dashboard_names_the_file_and_shows_the_other_runs(
    lake: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dashboard import data

    root, bad = lake
    try:
        at = _app(root, tmp_path, monkeypatch)
        assert not at.exception, at.exception[0].value
        (caption,) = [c.value for c in at.caption if "run t:" in c.value]
        assert str(bad) in caption and "left out" in caption
        assert at.sidebar.selectbox(key="run").options == ["good"]
        assert len(at.get("vega_lite_chart")) > 0
    finally:
        data.reload()


@pytest.mark.parametrize("table", ["events", "games"])
def test_a_damaged_footer_of_the_same_size_leaves_out_its_run_only(
    table: str, clean_t_good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file damaged in place, neither shorter nor without its magic bytes: the middle of its
    footer's structure overwritten with 0xff (an events file's footer ends with its codebook,
    whose values Parquet does not check: damage there is the stored-form attack below). Its
    footer is read when the lake is opened and does not parse, so its run is left out naming
    the file, and the other run answers."""
    root = tmp_path / "lake"
    shutil.copytree(clean_t_good, root)
    bad = sorted((root / table / "run=t").rglob("shard-*.parquet"))[0]
    data = bytearray(bad.read_bytes())
    length = int.from_bytes(data[-8:-4], "little")
    meta = pq.ParquetFile(bad).metadata.metadata or {}
    end = data.rindex(meta[codec.CODEBOOK]) if codec.CODEBOOK in meta else len(data) - 8
    middle = (len(data) - 8 - length + end) // 2
    data[middle - 8 : middle + 8] = b"\xff" * 16
    bad.write_bytes(bytes(data))
    assert (
        main(["sql", "SELECT DISTINCT run FROM stg_games ORDER BY run", "--data", str(root)]) == 0
    )
    out, err = capsys.readouterr()
    assert "good" in out and "t" not in out.split(), out
    (note,) = [n for n in err.split("; ") if "run t:" in n]
    assert "left out" in note and str(bad) in note and "not readable Parquet" in note, err


# --- the stored form: a file that parses but does not decode -----------------------------------
#
# The events and rounds files store a game per row as binary values read against the file's own
# metadata (lakecontract.codec): a codebook of codes and the bytes an index takes, the seats'
# policy names, and a CRC-32 of them. Each attack below rewrites one shard file of run t so that
# it still parses (and the manifest records its new size; the CRC-32 is made to match, but for
# the damage in place: the tamper is consistent, not a torn write), but its bytes do not decode.
# Every reader must refuse it naming the file, never crash or make up rows.


def _stored(path: Path) -> tuple[pa.Table, dict[bytes, bytes]]:
    """A lake file's stored rows (as written, not decoded) and its key-value metadata."""
    f = pq.ParquetFile(path)
    return f.read(), dict(f.metadata.metadata)


def _bytes_of(column: pa.ChunkedArray) -> list[bytes]:
    return [bytes(v) for v in column.to_pylist()]


def _cut_codebook(t: pa.Table, meta: dict[bytes, bytes]) -> tuple[pa.Table, int]:
    """The codebook one code short: the index of its last code is now past it."""
    book = np.frombuffer(meta[codec.CODEBOOK], "<i8")
    width = int(meta[codec.WIDTH])
    meta[codec.CODEBOOK] = book[:-1].tobytes()
    last = [
        g
        for g, blob in zip(t["game"].to_pylist(), _bytes_of(t["codes"]), strict=True)
        if (len(book) - 1) in np.frombuffer(blob, f"<u{width}")
    ]
    return t, last[0]


def _codebook_in_place(t: pa.Table, meta: dict[bytes, bytes]) -> tuple[pa.Table, int]:
    """16 bytes in the middle of the codebook overwritten with 0xff, as a disk would damage the
    footer in place (the codes would decode to others: only the CRC-32 tells)."""
    book = bytearray(meta[codec.CODEBOOK])
    middle = len(book) // 2 + 3
    book[middle : middle + 16] = b"\xff" * 16
    meta[codec.CODEBOOK] = bytes(book)
    return t, t["game"][0].as_py()


def _narrow_width(t: pa.Table, meta: dict[bytes, bytes]) -> tuple[pa.Table, int]:
    """1-byte indices said of a codebook whose indices take 2: every byte would read as an index
    into the codebook (twice the codes, each a real code): only the width itself gives it away."""
    assert len(meta[codec.CODEBOOK]) // 8 > 256 and meta[codec.WIDTH] == b"2"
    meta[codec.WIDTH] = b"1"
    return t, t["game"][0].as_py()


def _odd_width(t: pa.Table, meta: dict[bytes, bytes]) -> tuple[pa.Table, int]:
    meta[codec.WIDTH] = b"3"
    return t, t["game"][0].as_py()


def _index_past(t: pa.Table, meta: dict[bytes, bytes]) -> tuple[pa.Table, int]:
    """The first game's first code an index past the codebook (every byte of it 0xff)."""
    width = int(meta[codec.WIDTH])
    assert len(meta[codec.CODEBOOK]) // 8 < 256**width - 1
    blobs = _bytes_of(t["codes"])
    blobs[0] = b"\xff" * width + blobs[0][width:]
    return t.set_column(2, "codes", pa.array(blobs, pa.binary())), t["game"][0].as_py()


def _short_cells(t: pa.Table, meta: dict[bytes, bytes]) -> tuple[pa.Table, int]:
    """The first game's cells one cell (4 bytes) short of a cell per seat per round."""
    blobs = _bytes_of(t["cells"])
    blobs[0] = blobs[0][:-4]
    return t.set_column(3, "cells", pa.array(blobs, pa.binary())), t["game"][0].as_py()


def _policy_past(t: pa.Table, meta: dict[bytes, bytes]) -> tuple[pa.Table, int]:
    """The first game's first seat a policy index past the file's policy names."""
    assert len(json.loads(meta[codec.POLICIES])) < 255
    blobs = _bytes_of(t["seats"])
    blobs[0] = b"\xff" + blobs[0][1:]
    return t.set_column(1, "seats", pa.array(blobs, pa.binary())), t["game"][0].as_py()


#: attack -> (the table it damages, the change, a column it damages, what the refusal says).
STORED_ATTACKS = {
    "a codebook one code short": ("events", _cut_codebook, "card", "past the codebook"),
    "a codebook damaged in place": ("events", _codebook_in_place, "card", "CRC-32"),
    "an index width the codebook does not take": (
        "events",
        _narrow_width,
        "card",
        "take 2-byte indices, not the 1",
    ),
    "an index width of 3 bytes": ("events", _odd_width, "card", "not 1, 2 or 4"),
    "an index past the codebook": ("events", _index_past, "card", "past the codebook"),
    "a cells blob one cell short": ("rounds", _short_cells, "score", "one per seat per round"),
    "a policy index past the names": ("rounds", _policy_past, "policy", "policy 255 is past"),
}


@pytest.fixture(params=list(STORED_ATTACKS))
def undecodable(
    request: pytest.FixtureRequest, clean_t_good: Path, tmp_path: Path
) -> tuple[Path, Path, int, str, str]:
    """A copy of the lake with one stored file of run t (its 2-player shard 0) damaged as the
    attack says, its manifest's recorded size updated to match: (root, the file, a game whose
    rows do not decode, a column that does not, what the refusal says)."""
    table, change, column, says = STORED_ATTACKS[request.param]
    root = tmp_path / "lake"
    shutil.copytree(clean_t_good, root)
    path = root / table / "run=t" / "players=2" / "shard-00000.parquet"
    stored, meta = _stored(path)
    stored, game = change(stored, meta)
    if change is not _codebook_in_place:
        meta[codec.CHECK] = codec.checksum(meta)
    codec.write_table(stored.replace_schema_metadata(meta), str(path), compression="zstd")
    manifest = root / "runs" / "t" / "manifest.json"
    m = json.loads(manifest.read_text())
    m["shards"]["0"]["bytes"][table] = path.stat().st_size
    manifest.write_text(json.dumps(m))
    return root, path, game, column, says


def test_a_file_that_does_not_decode_is_refused_by_name(
    undecodable: tuple[Path, Path, int, str, str],
    clean_t_good: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """verify fails naming the shard, the file and what is wrong; sql, replay and watch refuse
    the damaged file in one line naming it and what is wrong; the report (from the rollups, which the damage does not touch) is the clean lake's,
    and the other run answers."""
    root, bad, game, column, says = undecodable
    data = ["--data", str(root)]
    assert main(["warehouse", "verify", *data]) == 1
    out = capsys.readouterr().out
    assert "FAIL  manifests_readable" in out, out
    (named,) = [line for line in out.splitlines() if str(bad) in line]
    assert "run=t shard=0:" in named and says in named and "damaged" in named, named
    # a query that reads the damaged column of every game of the run
    query = f"SELECT count(DISTINCT {column}) FROM stg_{bad.parts[-4]}"
    assert main(["sql", query, "--run", "t", *data]) == 2
    err = capsys.readouterr().err
    lines = [s for s in err.splitlines() if s.strip()]
    assert len(lines) == 1 and str(bad) in lines[0] and says in lines[0], err
    assert main(["sql", query, "--run", "good", *data]) == 0
    capsys.readouterr()
    assert main(["replay", "t", str(game), *data]) == 2
    one_line(capsys.readouterr().err, str(bad), says)
    assert main(["watch", "--run", "t", "--game", str(game), "--no-file", *data]) == 2
    one_line(capsys.readouterr().err, str(bad), says)
    report = ["report", "t", "--no-file"]  # figures as printed (floats summed in any order)
    assert main([*report, "--data", str(clean_t_good)]) == 0
    clean = capsys.readouterr().out
    assert main([*report, *data]) == 0
    assert capsys.readouterr().out == clean


def test_the_dashboard_replay_names_a_file_that_does_not_decode(
    undecodable: tuple[Path, Path, int, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's replay of a game whose rows do not decode says so naming the file (no
    exception, no made-up game); a game of the other run still replays."""
    from dashboard import data

    root, bad, game, _, says = undecodable
    try:
        at = _app(root, tmp_path, monkeypatch)
        at.switch_page("views/replay.py").run()
        at.sidebar.selectbox(key="run").select("t").run()
        at.number_input(key="rp_id:t").set_value(game).run()
        assert not at.exception, at.exception[0].value
        (error,) = [e.value for e in at.error]
        assert str(bad) in error and says in error, error
        at.sidebar.selectbox(key="run").select("good").run()
        at.number_input(key="rp_id:good").set_value(game).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert at.subheader[0].value.startswith("Round 1 · card 0 of ")
    finally:
        data.reload()


def _app(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The dashboard over `root` (a mart cache of its own, marts built in the foreground), run
    once in Streamlit's AppTest; the caller reloads the data module when done."""
    from streamlit.testing.v1 import AppTest

    from dashboard import data
    from tests.dashboard.test_app import APP

    monkeypatch.setenv("FLIP7_DATA", str(root))
    monkeypatch.setenv("FLIP7_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "PREPARE_IN_BACKGROUND", False)
    data.reload()
    return AppTest.from_file(APP, default_timeout=60).run()
