"""Reading Parquet from bytes already in memory, safely.

Every Parquet read of the kit goes through here. pyarrow (19 and 21 measured) can abort the whole
process at interpreter exit when a read used its thread pools over a Python-owned buffer: a pool
thread releases the buffer during finalization, needs the GIL, and is torn down mid-destructor
("terminate called without an active exception", exit 134; about half the runs here). Reading
single-threaded from a file object, without pre-buffering, leaves no pool thread holding a
buffer, and costs nothing measurable for the file sizes of table metadata and test data.
"""

from __future__ import annotations

import io
from typing import Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq


def open_parquet(data: bytes) -> pq.ParquetFile:
    """A ParquetFile over in-memory bytes (footer, schema and metadata available)."""
    # Table formats keep timestamps in microseconds; INT96 (Spark's default timestamp encoding) read as pyarrow's
    # default nanoseconds overflows outside 1677..2262 and silently wraps years 0001 and 9999.
    return pq.ParquetFile(io.BytesIO(data), pre_buffer=False, coerce_int96_timestamp_unit="us")


def read_parquet(data: bytes | pq.ParquetFile, columns: Sequence[str] | None = None) -> pa.Table:
    """The whole file (or ``columns``) as an Arrow table, its content checked.

    Parquet decoding does not check that strings are UTF-8; a damaged file would surface later,
    as a UnicodeDecodeError wherever a value is first looked at. Full validation (fast, vectorised)
    raises ``ArrowInvalid`` here instead, where callers turn it into an invalid table.
    """
    pf = data if isinstance(data, pq.ParquetFile) else open_parquet(data)
    table = pf.read(columns=list(columns) if columns is not None else None, use_threads=False)
    table.validate(full=True)
    return table


def iter_parquet(pf: pq.ParquetFile, columns: Sequence[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
    """``columns`` of the file in record batches of at most ``batch_rows`` rows, each checked as ``read_parquet``
    checks a table; decoding batch by batch keeps fewer decompressed pages in memory at once."""
    for batch in pf.iter_batches(batch_size=batch_rows, columns=list(columns), use_threads=False):
        batch.validate(full=True)
        yield batch


def read_parquet_metadata(data: bytes) -> pq.FileMetaData:
    """The footer metadata only."""
    return open_parquet(data).metadata
