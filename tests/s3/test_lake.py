"""A lake on an S3-compatible server is written, listed, queried, reported and verified in
place, with the same figures as the same run on local disk; its snapshot rule and its errors.

Ray-free: the shards run in this process (tests/pipeline/helpers.py); test_ray.py runs the
same chain through `flip7 tournament run --data s3://...` on a real local Ray.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from flip7.cli import main
from pipeline import lake as plake
from pipeline.lake import Lake
from pipeline.run import prepare, record_shard
from pipeline.task import run_shard
from tests.pipeline.helpers import run_inline, small_plan
from tests.s3.server import S3Server
from warehouse import lake as wlake
from warehouse.db import connect, problems
from warehouse.lake import LakeUnreachable, snapshot
from warehouse.report import report
from warehouse.verify import verify

#: Marts whose every column is a figure of the run (no file paths, no times).
MARTS = ("win_rates", "league", "card_counting", "round_rates", "points_per_round")


def rounded(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """Rows with floats to 9 decimals: DuckDB's parallel sums may add in another order."""
    return [tuple(round(v, 9) if isinstance(v, float) else v for v in row) for row in rows]


def mart(root: str, name: str) -> list[tuple[object, ...]]:
    con = connect(root)
    return rounded(con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall())


def test_marts_on_s3_equal_the_local_lake(lakes: tuple[str, str]) -> None:
    """Every figure of the marts is the same read from the bucket as from the local copy."""
    uri, local = lakes
    for name in MARTS:
        on_s3 = mart(uri, name)
        assert on_s3 and on_s3 == mart(local, name), name


def test_report_and_footers_on_s3(lakes: tuple[str, str]) -> None:
    """The report's lines are the local lake's; row counts come from the Parquet footers
    that pyarrow read from the bucket."""
    uri, local = lakes
    assert report(connect(uri), "t") == report(connect(local), "t")
    counts = "SELECT table_name, sum(num_rows) FROM stg_parquet_files GROUP BY ALL ORDER BY 1"
    assert connect(uri).execute(counts).fetchall() == connect(local).execute(counts).fetchall()


def test_verify_on_s3_records_its_pass_in_the_bucket(lakes: tuple[str, str], bucket: str) -> None:
    """verify checks the bucket's lake like the local one, writes runs/t/verified.json there,
    and readers then see the run as verified; a changed file makes it unverified again."""
    uri, local = lakes
    on_s3, here = verify(uri, keep_record=True), verify(local)
    assert on_s3.ok and here.ok
    assert (on_s3.shards, on_s3.events, on_s3.games) == (here.shards, here.events, here.games)
    fs, base = wlake.resolve(uri)
    assert fs.get_file_info(f"{base}/runs/t/verified.json").type == pafs.FileType.File
    assert problems(connect(uri)) == []
    # Rewrite one games file with the same bytes: a new object, a new modification time.
    path = snapshot(uri).shards[0].files["games"]
    fs.copy_file(path, f"{bucket}/copy.parquet")
    with fs.open_input_stream(f"{bucket}/copy.parquet") as f, fs.open_output_stream(path) as g:
        g.write(f.read())
    assert any("changed since verify" in p for p in problems(connect(uri)))


def test_a_shard_without_its_games_file_is_invisible(bucket: str) -> None:
    """A shard whose events and rounds are written but whose games file is not (a writer
    still at work) is not read, nor is a temporary file; once the games file lands, it is."""
    uri = f"s3://{bucket}/lake"
    plan = small_plan()
    lake = Lake.open(uri)
    manifest, todo = prepare(lake, plan, resume=True, overwrite=False)
    for task in todo[:-1]:
        record_shard(manifest, task, run_shard(task, uri))
    last = todo[-1]
    run_shard(last, uri)
    games = lake.shard_path("games", "t", plan.cells[last.cell].players, last.shard)
    lake.fs.move(games, games + ".tmp-abc")
    games_in = "SELECT count(DISTINCT game) FROM stg_games"
    seen = connect(uri).execute(games_in).fetchall()[0][0]
    assert seen == sum(t.n_games for t in todo[:-1])
    assert len(snapshot(uri).shards) == len(todo) - 1
    lake.fs.move(games + ".tmp-abc", games)
    assert connect(uri).execute(games_in).fetchall()[0][0] == plan.games


def test_a_killed_run_resumed_on_s3_has_every_game_once(bucket: str) -> None:
    """A driver killed after some shards (one of them written but never recorded, a stray
    temporary file left) and resumed: every planned game exactly once, and verify passes."""
    uri = f"s3://{bucket}/lake"
    plan = small_plan()
    lake = Lake.open(uri)
    manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
    half = len(todo) // 2
    for task in todo[:half]:
        record_shard(manifest, task, run_shard(task, uri))
    lake.write_manifest(manifest)  # what the driver had saved when it was killed
    run_shard(todo[half], uri)  # written, never recorded
    stray = lake.shard_path("events", "t", plan.cells[todo[-1].cell].players, todo[-1].shard)
    lake.write_bytes(stray + ".tmp-dead", b"half a file")
    final = run_inline(plan, uri)
    assert final["status"] == "complete" and len(final["shards"]) == len(todo)
    con = connect(uri)
    rows = con.execute(
        "SELECT count(*), count(DISTINCT (game, seat)), count(DISTINCT game) FROM stg_games"
    ).fetchall()[0]
    seats = sum(t.n_games * plan.cells[t.cell].players for t in todo)
    assert rows == (seats, seats, plan.games)
    assert verify(uri).ok


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_commands_read_the_bucket(
    lakes: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """sql, report, warehouse verify, tournament status and list take --data s3://...; the
    figures printed are the local lake's."""
    uri, local = lakes
    query = "SELECT policy, players, wins, win_rate FROM win_rates ORDER BY ALL"
    outs = {}
    for root in (uri, local):
        code, out, err = run_cli(capsys, "sql", query, "--data", root, "--format", "csv")
        assert code == 0, err
        outs[root] = out
    assert outs[uri] == outs[local] and "ev" in outs[uri]
    code, out, _ = run_cli(capsys, "report", "t", "--data", uri, "--no-file")
    assert code == 0 and "Field size" in out
    code, out, _ = run_cli(capsys, "warehouse", "verify", "--data", uri)
    assert code == 0 and "all checks passed" in out
    code, out, _ = run_cli(capsys, "tournament", "status", "t", "--data", uri)
    assert code == 0 and "run t: complete" in out
    code, out, _ = run_cli(capsys, "tournament", "list", "--data", uri)
    assert code == 0 and f"runs under {uri}" in out


def test_flip7_data_names_the_bucket(
    lakes: tuple[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """$FLIP7_DATA takes the same URIs as --data."""
    uri, _ = lakes
    monkeypatch.setenv("FLIP7_DATA", uri)
    code, out, err = run_cli(capsys, "sql", "SELECT count(*) AS n FROM runs", "--format", "csv")
    assert (code, out) == (0, "n\n1\n"), err


def test_sql_on_s3_stays_read_only(
    lakes: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The sandbox holds on a bucket's lake too: no file is written, none read outside it."""
    uri, _ = lakes
    code, _, err = run_cli(
        capsys, "sql", "COPY (SELECT 1) TO '/tmp/h10-s3-leak.csv'", "--data", uri
    )
    assert code == 2 and "read-only" in err
    assert not Path("/tmp/h10-s3-leak.csv").exists()
    con = connect(uri)
    with pytest.raises(Exception, match="disabled|Cannot access"):
        con.execute("SELECT * FROM read_csv('/etc/hostname')").fetchall()
    # --write lifts the sandbox; the bucket's files still reach DuckDB through pyarrow.
    writable = connect(uri, read_only=False)
    assert writable.execute("SELECT count(DISTINCT game) FROM stg_games").fetchall() == [(480,)]


# -- errors: one line naming the URI and what to fix ----------------------------------------------


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = run_cli(capsys, *argv)
    assert code != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_bucket_that_does_not_exist(capsys: pytest.CaptureFixture[str]) -> None:
    """Readers and a tournament (before Ray starts) name the bucket and the URI."""
    uri = "s3://no-such-bucket-here/lake"
    for argv in (
        ("sql", "SELECT 1", "--data", uri),
        ("report", "t", "--data", uri, "--no-file"),
        ("warehouse", "verify", "--data", uri),
        ("tournament", "list", "--data", uri),
        ("tournament", "run", "demo", "--scale", "0.001", "--data", uri, "--no-file"),
    ):
        line = error_line(capsys, *argv)
        assert "bucket 'no-such-bucket-here'" in line and "does not exist" in line, line
        assert uri in line


def test_an_endpoint_that_does_not_answer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.s3.server import free_port

    endpoint = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    for argv in (
        ("sql", "SELECT 1", "--data", "s3://lake-bucket/x"),
        ("tournament", "status", "t", "--data", "s3://lake-bucket/x"),
    ):
        line = error_line(capsys, *argv)
        assert "cannot reach" in line and endpoint in line and "s3://lake-bucket/x" in line


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A server that takes every connection and never answers (a hung S3 endpoint)."""
    from tests.security.helpers import hung_port

    with hung_port() as port:
        yield f"http://127.0.0.1:{port}"


def test_an_endpoint_that_takes_the_connection_and_never_answers(
    silent_endpoint: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A hung endpoint used to hold each command 102-116 s (and `tournament run` silent all
    along): now every command says it waits, then stops after FLIP7_STORE_TIMEOUT seconds
    (default 5) with the one line of an endpoint that does not answer (issue 32, item 16)."""
    from tests.pipeline.helpers import write_spec

    monkeypatch.setenv("AWS_ENDPOINT_URL", silent_endpoint)
    monkeypatch.setenv("FLIP7_STORE_TIMEOUT", "2")
    spec = write_spec(tmp_path / "t.toml")
    uri = "s3://lake-bucket/x"
    for argv in (
        ("sql", "SELECT 1", "--data", uri),
        ("tournament", "status", "t", "--data", uri),
        ("report", "t", "--data", uri, "--no-file"),
        ("tournament", "run", str(spec), "--data", uri, "--no-file"),
    ):
        code, _, err = run_cli(capsys, *argv)  # a hang would meet the per-test time limit
        lines = err.strip().splitlines()
        assert code != 0 and "Traceback" not in err, err
        assert len(lines) == 2, err
        assert lines[0] == (
            f"flip7: waiting for the store at {silent_endpoint} to answer (up to 2 s; "
            "FLIP7_STORE_TIMEOUT) ..."
        )
        assert "cannot reach" in lines[1] and silent_endpoint in lines[1] and uri in lines[1]


def test_the_store_wait_defaults_to_a_few_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default wait, and a bad setting refused in one line."""
    monkeypatch.delenv("FLIP7_STORE_TIMEOUT", raising=False)
    assert plake.store_timeout() == wlake.store_timeout() == 5.0
    monkeypatch.setenv("FLIP7_STORE_TIMEOUT", "soon")
    for module in (plake, wlake):
        with pytest.raises(ValueError, match="FLIP7_STORE_TIMEOUT='soon'"):
            module.store_timeout()


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> object:
    """A second server that checks credentials as AWS does."""
    server = S3Server(auth=True).start(tmp_path_factory.mktemp("moto-auth") / "moto.log")
    yield server
    server.stop()


def test_missing_credentials(
    auth_server: S3Server,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", auth_server.endpoint)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    line = error_line(capsys, "sql", "SELECT 1", "--data", "s3://lake-bucket/x")
    assert "no AWS credentials" in line and "AWS_ACCESS_KEY_ID" in line
    assert "s3://lake-bucket/x" in line


def test_wrong_credentials(
    auth_server: S3Server, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", auth_server.endpoint)
    line = error_line(capsys, "tournament", "list", "--data", "s3://lake-bucket/x")
    assert "denied" in line and "s3://lake-bucket/x" in line


def test_the_pipeline_and_the_warehouse_say_the_same() -> None:
    """Both packages word a store's errors alike (both through lakecontract.store)."""
    for text in (
        "AWS Error NETWORK_CONNECTION during HeadBucket operation: curlCode: 7",
        "NO_SUCH_BUCKET",
        "AWS Error ACCESS_DENIED during HeadBucket operation: No response body.",
        "something else",
    ):
        a = wlake.store_error("s3://b/x", OSError(text))
        b = plake.store_error("s3://b/x", OSError(text))
        assert str(a) == str(b)
    assert LakeUnreachable is plake.LakeUnreachable  # one class (lakecontract.store), one wording


def test_verify_on_s3_finds_damage(bucket: str) -> None:
    """verify of a bucket's lake checks what it reads: one shard's rounds file swapped for
    another's fails, named as on a local lake."""
    uri = f"s3://{bucket}/lake"
    run_inline(small_plan(), uri)
    shards = snapshot(uri).shards
    fs, _ = wlake.resolve(uri)
    a, b = [s for s in shards if s.players == shards[0].players][:2]
    fs.copy_file(b.files["rounds"], a.files["rounds"])
    result = verify(uri, keep_record=True)
    failed = {c.name for c in result.checks if c.failed}
    assert not result.ok and "assert_rounds_match_events" in failed, failed
    assert fs.get_file_info(f"{bucket}/lake/runs/t/verified.json").type == pafs.FileType.NotFound


def test_an_older_run_on_s3_is_upgraded_in_the_bucket(
    bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flip7 warehouse upgrade RUN --data s3://...` rewrites a v3 run in the bucket (each file
    via a temporary key, then renamed) and computes its rollups, after which the bucket reads and verifies."""
    fixture = Path(__file__).parents[1] / "warehouse" / "fixtures" / "lake-v3"
    uri = f"s3://{bucket}/lake"
    s3, base = pafs.FileSystem.from_uri(uri)
    pafs.copy_files(
        str(fixture), base, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=s3
    )
    assert main(["warehouse", "upgrade", "t2", "--data", uri]) == 0
    # the events, rounds and games files, and a new rollups file
    assert "v3 -> v7, 4 files rewritten" in capsys.readouterr().out
    with s3.open_input_stream(f"{base}/runs/t2/manifest.json") as f:
        assert json.loads(f.read())["schema_version"] == 7
    con = connect(uri, runs=["t2"])
    assert con.execute("SELECT count(*) FROM stg_events").fetchall() == [(4775,)]
    assert verify(uri, discover=False).ok
    listed = s3.get_file_info(pafs.FileSelector(base, recursive=True))
    assert not [i.path for i in listed if ".tmp-" in i.path]
