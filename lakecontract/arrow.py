"""Arrow arrays straight from numpy buffers, for the tables a shard writes.

`pa.array` and `pa.table` convert through pyarrow's Python-object path, whose first use in a
process imports pandas (about 0.2 CPU-seconds and 40 MB of memory in every worker, for a library
the pipeline never calls). These build the same arrays from the numpy buffers themselves (zero
copy for numbers, bit-packed for booleans), and a dictionary column's few strings from their
UTF-8 bytes, so a worker that plays and writes shards never imports pandas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa


def array(values: np.ndarray | pa.Array, kind: pa.DataType) -> pa.Array:
    """A non-null Arrow array of type `kind` (an integer, float or bool type, or a string
    dictionary) with the values of a 1-d numpy array; an Arrow array passes through."""
    if isinstance(values, pa.Array):
        return values
    n = int(values.shape[0])
    if pa.types.is_boolean(kind):
        bits = np.packbits(np.asarray(values, dtype=np.bool_), bitorder="little")
        return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(bits)])
    dtype = _dtype(kind)
    data = np.ascontiguousarray(values, dtype=dtype)
    if values.dtype != dtype and not np.can_cast(values.dtype, dtype, "safe"):
        if not np.array_equal(data, values):  # as pa.array refuses to overflow a narrower type
            raise ValueError(f"values out of range for an Arrow {kind} column")
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(data)])


def strings(names: Sequence[str]) -> pa.Array:
    """A string array of `names` (no nulls)."""
    encoded = [s.encode("utf-8") for s in names]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def dictionary(indices: np.ndarray, names: Sequence[str]) -> pa.DictionaryArray:
    """A dictionary<int32, string> column: `indices` into `names`."""
    return pa.DictionaryArray.from_arrays(array(indices, pa.int32()), strings(names))


def list_array(offsets: np.ndarray, values: np.ndarray, kind: pa.ListType) -> pa.Array:
    """A list column: row i holds values[offsets[i]:offsets[i + 1]] (int32 offsets)."""
    return pa.ListArray.from_arrays(
        array(offsets, pa.int32()), array(values, kind.value_type), type=kind
    )


def table(columns: Mapping[str, np.ndarray | pa.Array], schema: pa.Schema) -> pa.Table:
    """The table of `schema` with its columns, by name, from numpy arrays or Arrow arrays."""
    return pa.Table.from_arrays([array(columns[f.name], f.type) for f in schema], schema=schema)


def numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a non-null numeric or bool Arrow column as numpy (read from its buffers:
    `to_numpy` would import pandas)."""
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            return numpy(values.chunk(0))
        if values.num_chunks == 0:
            return np.zeros(0, dtype=_dtype(values.type))
        return np.concatenate([numpy(c) for c in values.chunks])
    if values.null_count:
        raise ValueError(f"a column of {values.type} with {values.null_count} nulls")
    n, start = len(values), values.offset
    data = values.buffers()[1]
    if pa.types.is_boolean(values.type):
        if n == 0:
            return np.zeros(0, dtype=np.bool_)
        bits = np.unpackbits(np.frombuffer(data, np.uint8), count=start + n, bitorder="little")
        return bits[start:].astype(np.bool_)
    dtype = _dtype(values.type)
    if n == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=n, offset=start * dtype.itemsize)


def dictionary_codes(values: pa.Array | pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """(the names, each row's index into them) of a string column, dictionary-encoded or not."""
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks > 1 and pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)  # chunks may hold other dictionaries
        values = values.combine_chunks()
    if not pa.types.is_dictionary(values.type):
        values = values.dictionary_encode()
    return [str(x) for x in values.dictionary.to_pylist()], numpy(values.indices)


def _dtype(kind: pa.DataType) -> np.dtype:
    if pa.types.is_boolean(kind):
        return np.dtype(np.bool_)
    return np.dtype(kind.to_pandas_dtype())
