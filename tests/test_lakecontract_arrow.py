"""lakecontract.arrow: Arrow columns from numpy buffers equal pyarrow's own conversion, and a worker
that plays and writes shards never imports pandas."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from lakecontract import arrow

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "kind", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()]
)
def test_arrays_equal_pyarrows_conversion(kind):
    rng = np.random.default_rng(7)
    values = rng.integers(-100, 100, size=37).astype(kind.to_pandas_dtype())
    if pa.types.is_boolean(kind):
        values = values > 0
    got = arrow.array(values, kind)
    assert got.equals(pa.array(values, type=kind))
    assert np.array_equal(arrow.numpy(got), values)
    # a slice starts inside a byte of a bool bitmap and at an offset of a numeric buffer
    assert np.array_equal(arrow.numpy(got.slice(3, 20)), values[3:23])
    chunked = pa.chunked_array([got.slice(0, 5), got.slice(5)])
    assert np.array_equal(arrow.numpy(chunked), values)


def test_a_narrower_column_refuses_values_out_of_its_range():
    assert arrow.array(np.array([1, -2, 300]), pa.int16()).to_pylist() == [1, -2, 300]
    with pytest.raises(ValueError, match="out of range for an Arrow int8 column"):
        arrow.array(np.array([1, 300]), pa.int8())


def test_dictionary_and_list_columns():
    names = ["ev", "sum:20", "dp:real", "é"]
    col = arrow.dictionary(np.array([2, 0, 0, 3, 1]), names)
    assert col.to_pylist() == ["dp:real", "ev", "ev", "é", "sum:20"]
    assert col.equals(
        pa.DictionaryArray.from_arrays(pa.array([2, 0, 0, 3, 1], pa.int32()), pa.array(names))
    )
    two = pa.chunked_array([col, arrow.dictionary(np.array([0, 0]), ["x"])])
    got_names, codes = arrow.dictionary_codes(two)
    assert [got_names[i] for i in codes] == col.to_pylist() + ["x", "x"]
    lists = arrow.list_array(np.array([0, 2, 2, 5]), np.arange(5), pa.list_(pa.int64()))
    assert lists.to_pylist() == [[0, 1], [], [2, 3, 4]]


@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_a_worker_writing_shards_never_imports_pandas(engine, tmp_path):
    """pyarrow's Python-object conversions import pandas on first use (0.2 CPU-s and 40 MB
    in every worker); the shard path builds and reads its columns from buffers instead."""
    script = textwrap.dedent(
        f"""
        import sys
        from pipeline.shard import ShardTask
        from pipeline.task import run_shard

        task = ShardTask("r", 0, 0, 0, ("sum:20", "ev", "sum:20"), "3.1", "classic", 5, True,
                         0, 0, 30, engine={engine!r}, compare=("sum:20", "ev"))
        result = run_shard(task, {str(tmp_path)!r})
        assert result["rows"]["games"] == 90 and result["compare"], result
        print("pandas" in sys.modules)
        """
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "False", out.stderr
