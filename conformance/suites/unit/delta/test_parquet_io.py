"""reference_impl.parquet_io: Parquet from memory, INT96 timestamps read as microseconds."""

from __future__ import annotations

import datetime as dt
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.parquet_io import read_parquet


@pytest.mark.rule("DELTA-READER-002")
def test_int96_timestamps_outside_the_nanosecond_range_keep_their_value():
    # Spark writes timestamps as INT96 by default; years 0001 and 9999 do not fit 64-bit nanoseconds.
    values = [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(2024, 2, 29, 12)]
    table = pa.table({"ts": pa.array(values, pa.timestamp("us"))})
    sink = io.BytesIO()
    pq.write_table(table, sink, use_deprecated_int96_timestamps=True)
    data = sink.getvalue()
    assert pq.ParquetFile(io.BytesIO(data)).schema.column(0).physical_type == "INT96"
    got = read_parquet(data)
    assert got.schema.field("ts").type == pa.timestamp("us")
    assert got.column("ts").to_pylist() == values
