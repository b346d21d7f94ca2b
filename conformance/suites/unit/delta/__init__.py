"""Unit tests of the Delta reference implementation, with a tiny hand-made-table builder.

``LogBuilder`` writes commit files and parquet data files directly, so tests can build any log
(including invalid ones) without going through a writer.
"""

from __future__ import annotations

import io
import json
import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from reference_impl.delta.actions import AddFile, Format, Metadata, Protocol, RemoveFile, serialize_commit
from reference_impl.delta.log import commit_path
from reference_impl.storage import LocalStorage

SIMPLE_SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "name", "type": "string", "nullable": True, "metadata": {}},
]})


def protocol(r: int = 1, w: int = 2, rf=None, wf=None) -> Protocol:
    """A protocol action."""
    return Protocol(min_reader_version=r, min_writer_version=w,
                    reader_features=None if rf is None else frozenset(rf),
                    writer_features=None if wf is None else frozenset(wf))


def metadata(schema: str = SIMPLE_SCHEMA, partition_columns=(), configuration=None, id="t-1") -> Metadata:
    """A metaData action."""
    return Metadata(id=id, format=Format(), schema_string=schema, partition_columns=tuple(partition_columns),
                    configuration=dict(configuration or {}), created_time=0)


def add(path: str, partition_values=None, size: int = 1, stats=None, dv=None, mtime: int = 0) -> AddFile:
    """An add action."""
    return AddFile(path=path, partition_values=dict(partition_values or {}), size=size, modification_time=mtime,
                   data_change=True, stats=stats, deletion_vector=dv)


def remove(path: str, ts: int | None = None, dv=None) -> RemoveFile:
    """A remove action."""
    return RemoveFile(path=path, deletion_timestamp=ts, data_change=True, deletion_vector=dv)


class LogBuilder:
    """Write a table by hand: commits from action lists, raw lines, and parquet data files."""

    def __init__(self, root) -> None:
        self.root = str(root)
        os.makedirs(os.path.join(self.root, "_delta_log"), exist_ok=True)
        self.storage = LocalStorage(self.root)

    def commit(self, version: int, actions) -> str:
        """Write ``actions`` as commit ``version``."""
        path = commit_path(version)
        self.storage.write_atomic(path, serialize_commit(actions))
        return path

    def raw(self, version: int, text: str | bytes) -> str:
        """Write raw bytes as commit ``version``."""
        path = commit_path(version)
        self.storage.write_atomic(path, text.encode() if isinstance(text, str) else text)
        return path

    def data_file(self, table: pa.Table, rel: str | None = None) -> AddFile:
        """Write a parquet file (relative path ``rel`` on disk, unencoded) and return its add."""
        rel = rel or f"part-{uuid.uuid4()}.parquet"
        buf = io.BytesIO()
        pq.write_table(table, buf)
        data = buf.getvalue()
        self.storage.write_atomic(rel, data)
        return add(rel, size=len(data), stats=json.dumps({"numRecords": table.num_rows}))

    def set_mtime(self, version: int, ms: int) -> None:
        """Set a commit file's modification time (ms)."""
        p = os.path.join(self.root, commit_path(version))
        os.utime(p, ns=(ms * 1_000_000, ms * 1_000_000))
