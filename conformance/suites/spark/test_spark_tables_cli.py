"""Spark's tables through the command line, addressed as Spark's users address them.

Spark writes an Iceberg table through a Hadoop catalog at its location (``v<N>.metadata.json`` and a
version hint) and a Delta table at a path, on local disk and on MinIO. ``lakeconf read`` on the
metadata file, on the directory, by snapshot id, tag and version must give what Spark itself reads
there; ``lakeconf validate`` judges each table, and every violation must be a writer-side finding of
the registry for this Spark line.
"""

from __future__ import annotations

import json
import uuid

import pyarrow as pa
import pytest

from conformance.model import Append, Create, CreateRef, Delete
from conformance.suites.clirun import same_rows
from conformance.writer_checks import explain_violation

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("part", pa.string())])
ROWS = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "part": ["a", "b", None, "a"]}, schema=SCHEMA)


def _unexplained(violations, fmt, spark_engine, store):
    return [v for v in violations if explain_violation(
        f"{fmt}/peer-table", spark_engine.name, v["rule"], v["message"], store=store.name,
        writer_version=spark_engine.version()) is None]


@pytest.mark.rule("ICEBERG-META-001", "ICEBERG-REF-001")
def test_spark_iceberg_table_by_metadata_file_directory_snapshot_id_and_tag(spark_engine, store, lakeconf):
    ref = store.table_ref("iceberg", f"cli-{uuid.uuid4().hex[:8]}")
    spark_engine.write(ref, [
        Create(schema=SCHEMA, properties={"format-version": "2"}),
        Append(rows=ROWS.slice(0, 2)),
        Append(rows=ROWS.slice(2, 2)),
        CreateRef(name="first", kind="tag", version=1),
        Delete(where="id = 2"),
    ])
    storage = store.storage(ref.uri)
    names = sorted(p.path.rsplit("/", 1)[-1] for p in storage.list("metadata") if p.path.endswith(".metadata.json"))
    latest = max(names, key=lambda n: int(n[1:].split(".")[0]))
    metadata_file = f"{ref.uri}/metadata/{latest}"
    rows, note = lakeconf.read(metadata_file)
    assert same_rows(rows, spark_engine.read(ref)) and note == ""
    rows, note = lakeconf.read(ref.uri)
    assert same_rows(rows, spark_engine.read(ref)) and note == ""  # the version hint names the file

    doc = json.loads(storage.read(f"metadata/{latest}"))
    first = min(doc["snapshots"], key=lambda s: s["sequence-number"])["snapshot-id"]
    rows, _ = lakeconf.read(metadata_file, "--snapshot-id", str(first))
    assert same_rows(rows, spark_engine.read(ref, at=1))
    rows, _ = lakeconf.read(ref.uri, "--ref", "first")
    assert same_rows(rows, spark_engine.read(ref, ref="first"))

    violations = lakeconf.validate(metadata_file)
    assert not _unexplained(violations, "iceberg", spark_engine, store), violations


@pytest.mark.rule("DELTA-LOG-001")
def test_spark_delta_table_at_each_version(spark_engine, store, lakeconf):
    ref = store.table_ref("delta", f"cli-{uuid.uuid4().hex[:8]}")
    spark_engine.write(ref, [Create(schema=SCHEMA, partition_by=("part",)), Append(rows=ROWS.slice(0, 3)),
                             Append(rows=ROWS.slice(3, 1)), Delete(where="id = 2")])
    for v in range(4):
        rows, _ = lakeconf.read(ref.uri, "--at", str(v))
        assert same_rows(rows, spark_engine.read(ref, at=v)), v
    violations = lakeconf.validate(ref.uri)
    assert not _unexplained(violations, "delta", spark_engine, store), violations


@pytest.mark.rule("PAIMON-LAYOUT-001", "PAIMON-SNAP-001")
def test_spark_paimon_table_by_directory_snapshot_id_and_tag(spark_engine, store, lakeconf):
    if "paimon" not in spark_engine.capabilities().write:
        pytest.skip(f"no Paimon runtime on this Spark line ({spark_engine.version()})")
    ref = store.table_ref("paimon", f"cli-{uuid.uuid4().hex[:8]}")
    spark_engine.write(ref, [
        Create(schema=SCHEMA, properties={"primary-key": "id", "bucket": "1"}),
        Append(rows=ROWS.slice(0, 2)),
        Append(rows=ROWS.slice(2, 2)),
        CreateRef(name="first", kind="tag", version=1),
        Delete(where="id = 2"),
    ])
    rows, note = lakeconf.read(ref.uri)
    assert same_rows(rows, spark_engine.read(ref)) and rows.num_rows == 3 and note == ""
    for sid in (1, 2, 3):
        rows, _ = lakeconf.read(ref.uri, "--snapshot-id", str(sid))
        assert same_rows(rows, spark_engine.read(ref, at=sid)), sid
    rows, _ = lakeconf.read(ref.uri, "--tag", "first")
    assert same_rows(rows, spark_engine.read(ref, ref="first")) and rows.num_rows == 2
    violations = lakeconf.validate(ref.uri)
    assert not _unexplained(violations, "paimon", spark_engine, store), violations
