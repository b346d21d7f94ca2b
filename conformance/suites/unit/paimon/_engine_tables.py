"""Schemas and checks shared by the tests of the Python Paimon engines (pypaimon, pypaimon-rust)."""

from __future__ import annotations

import pyarrow as pa

from conformance.compare import compare
from conformance.model import TableRef

KEYED = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string()), pa.field("op", pa.string())])
PLAIN = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
PARTED = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string()), pa.field("d", pa.string())])


def ref(path) -> TableRef:
    return TableRef(format="paimon", uri=str(path))


def same(got: pa.Table, want: pa.Table) -> None:
    c = compare(got, want)
    assert c.equal, c.diff


def plain(ids, vs) -> pa.Table:
    return pa.table({"id": ids, "v": vs}, schema=PLAIN)
