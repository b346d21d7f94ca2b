"""Spark and delta-rs on each other's Delta tables, on local disk and on MinIO.

Spark writes a small partitioned table and reads it back (latest, by version, by timestamp),
deltalake reads Spark's table, Spark reads a deltalake-written table; then the remaining write
steps (DML, schema changes under column mapping, OPTIMIZE, checkpoints) as a Spark user runs them.
"""

from __future__ import annotations

import time
import uuid

import pyarrow as pa
import pytest

from conformance.engines.spark import session as se
from conformance.model import (
    AddColumn,
    AddConstraint,
    Append,
    Create,
    Delete,
    DropColumn,
    Optimize,
    Overwrite,
    RenameColumn,
    SetProperties,
    Update,
)
from conformance.formats.delta.steps import Checkpoint
from reference_impl.errors import InvalidTable, LakeconfError, Unsupported

deltalake = pytest.importorskip("deltalake")

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("part", pa.string()),
        pa.field("amount", pa.float64()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
    ]
)
ROWS = pa.table(
    {
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "part": ["a", "b", "a", None],
        "amount": [1.5, 2.5, None, 4.0],
        "ts": pa.array([0, 1_000_000, 2_000_000, 3_000_000], pa.timestamp("us", tz="UTC")),
    },
    schema=SCHEMA,
)


def _rows(table: pa.Table, columns=("id", "part", "amount")) -> list[tuple]:
    data = table.select(list(columns)).to_pylist()
    return sorted((tuple(r[c] for c in columns) for r in data), key=lambda r: r[0])


def _ref(store, name: str):
    return store.table_ref("delta", f"{name}-{uuid.uuid4().hex[:8]}")


def _dl(ref):
    return deltalake.DeltaTable(ref.uri, storage_options=dict(ref.storage_options) or None)


def test_session_is_started_once_and_reused(spark_engine):
    first = se.get()
    again = se.get()
    assert first is again
    stats = se.stats()
    assert stats["first_start_s"] is not None and stats["uses"] >= 2 and stats["line"] == spark_engine.line.name
    assert first.conf.get("spark.ui.enabled") == "false"


def test_spark_writes_partitioned_and_reads_back(spark_engine, store):
    ref = _ref(store, "spark-written")
    spark_engine.write(ref, [Create(schema=SCHEMA, partition_by=("part",)), Append(rows=ROWS, files=2)])
    got = spark_engine.read(ref)
    assert _rows(got) == _rows(ROWS)
    assert got.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert _rows(got, ("id", "ts")) == _rows(ROWS, ("id", "ts"))
    assert spark_engine.read(ref, at=0).num_rows == 0  # CREATE is its own commit
    assert spark_engine.read(ref, columns=["id"]).column_names == ["id"]
    detail = spark_engine.describe(ref)
    assert detail["partition_columns"] == ["part"] and detail["version"] == 1

    # delta-rs reads Spark's table: same rows, same partitioning, same version history.
    dt = _dl(ref)
    assert dt.version() == 1
    assert dt.metadata().partition_columns == ["part"]
    assert _rows(dt.to_pyarrow_table()) == _rows(ROWS)
    assert len(dt.file_uris()) >= 2  # files=2 spread the rows over several files


def test_spark_time_travel_by_timestamp(spark_engine, store):
    ref = _ref(store, "tt")
    spark_engine.write(ref, [Create(schema=SCHEMA), Append(rows=ROWS.slice(0, 2))])
    time.sleep(1.1)  # commit timestamps have millisecond resolution; keep the versions apart
    cut = time.time()
    time.sleep(1.1)
    spark_engine.write(ref, [Append(rows=ROWS.slice(2, 2))])
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(cut)) + "Z"
    assert _rows(spark_engine.read(ref, timestamp=stamp)) == _rows(ROWS.slice(0, 2))
    assert _rows(spark_engine.read(ref, at=2)) == _rows(ROWS)


def test_spark_reads_deltalake_table(spark_engine, store):
    ref = _ref(store, "dl-written")
    opts = dict(ref.storage_options) or None
    deltalake.write_deltalake(ref.uri, ROWS, partition_by=["part"], storage_options=opts)
    deltalake.write_deltalake(ref.uri, ROWS.slice(0, 1), mode="append", storage_options=opts)
    assert _rows(spark_engine.read(ref, at=0)) == _rows(ROWS)
    latest = spark_engine.read(ref)
    assert latest.num_rows == 5 and sorted(latest.column("id").to_pylist()) == [1, 1, 2, 3, 4]


def test_dml_and_properties(spark_engine, store):
    ref = _ref(store, "dml")
    spark_engine.write(
        ref,
        [
            Create(schema=SCHEMA, partition_by=("part",), features=("deletionVectors",)),
            Append(rows=ROWS),
            Delete(where="id = 2"),
            Update(set={"amount": "amount * 10"}, where="part = 'a'"),
            SetProperties(properties={"delta.logRetentionDuration": "interval 60 days"}),
            AddConstraint(name="positive_id", expression="id > 0"),
        ],
    )
    got = _rows(spark_engine.read(ref))
    assert got == [(1, "a", 15.0), (3, "a", None), (4, None, 4.0)]
    dt = _dl(ref)
    config = dt.metadata().configuration
    assert config["delta.logRetentionDuration"] == "interval 60 days"
    assert config["delta.constraints.positive_id"] == "id > 0"
    assert "deletionVectors" in (dt.protocol().reader_features or [])
    with pytest.raises(LakeconfError):  # the CHECK constraint is enforced
        spark_engine.write(ref, [Append(rows=pa.table({"id": pa.array([-1], pa.int64())}))])


def test_schema_changes_under_column_mapping(spark_engine, store):
    ref = _ref(store, "colmap")
    spark_engine.write(
        ref,
        [
            Create(schema=SCHEMA, features=("columnMapping",)),
            Append(rows=ROWS),
            AddColumn(field=pa.field("note", pa.string())),
            RenameColumn(old="amount", new="value"),
            DropColumn(name="ts"),
        ],
    )
    got = spark_engine.read(ref)
    assert got.column_names == ["id", "part", "value", "note"]
    assert _rows(got, ("id", "value")) == _rows(ROWS, ("id", "amount"))
    assert got.column("note").null_count == 4
    assert _dl(ref).metadata().configuration["delta.columnMapping.mode"] == "name"


def test_overwrite_with_new_schema_keeps_partitioning(spark_engine, store):
    ref = _ref(store, "overwrite")
    spark_engine.write(ref, [Create(schema=SCHEMA, partition_by=("part",)), Append(rows=ROWS)])
    new = pa.table({"id": pa.array([9], pa.int64()), "part": ["z"], "extra": ["x"]})
    spark_engine.write(ref, [Overwrite(rows=new)])
    got = spark_engine.read(ref)
    assert got.to_pylist() == [{"id": 9, "part": "z", "extra": "x"}]
    assert _dl(ref).metadata().partition_columns == ["part"]


def test_optimize_and_checkpoints(spark_engine, store):
    ref = _ref(store, "optimize")
    spark_engine.write(
        ref,
        [
            Create(schema=SCHEMA),
            Append(rows=ROWS.slice(0, 2), files=2),
            Append(rows=ROWS.slice(2, 2), files=2),
            Optimize(),
            Checkpoint(),
        ],
    )
    dt = _dl(ref)
    assert len(dt.file_uris()) == 1  # OPTIMIZE compacted four files into one
    assert _rows(dt.to_pyarrow_table()) == _rows(ROWS)
    log = [f.path for f in store.storage(ref.uri).list("_delta_log")]
    assert f"_delta_log/{dt.version():020d}.checkpoint.parquet" in log

    spark_engine.write(ref, [Append(rows=ROWS.slice(0, 1), files=1), Append(rows=ROWS.slice(1, 1)), Checkpoint(kind="multipart", parts=2)])
    log = [f.path for f in store.storage(ref.uri).list("_delta_log")]
    version = _dl(ref).version()
    parts = [p for p in log if p.startswith(f"_delta_log/{version:020d}.checkpoint.") and ".0000000002." in p]
    assert len(parts) == 2, log
    assert _rows(spark_engine.read(ref), ("id",)) == sorted([(1,), (2,), (3,), (4,), (1,), (2,)])

    with pytest.raises(Unsupported, match="delta.checkpointPolicy=v2"):
        spark_engine.write(ref, [Checkpoint(kind="v2")])


def test_missing_table_is_invalid(spark_engine, store):
    ref = _ref(store, "missing")
    with pytest.raises(InvalidTable):
        spark_engine.read(ref)


def test_reference_reads_spark_table(spark_engine, store):
    """The reference reader agrees with Spark on a Spark table with DVs, column mapping, a checkpoint."""
    table_mod = pytest.importorskip("reference_impl.delta.table")
    ref = _ref(store, "for-reference")
    spark_engine.write(
        ref,
        [
            Create(schema=SCHEMA, partition_by=("part",), features=("deletionVectors", "columnMapping")),
            Append(rows=ROWS, files=2),
            Delete(where="id = 3"),
            RenameColumn(old="amount", new="value"),
            Checkpoint(),
        ],
    )
    expected = _rows(spark_engine.read(ref), ("id", "part", "value"))
    assert expected == [(1, "a", 1.5), (2, "b", 2.5), (4, None, 4.0)]
    got = table_mod.read_table(store.storage(ref.uri))
    assert _rows(got, ("id", "part", "value")) == expected



def test_two_reads_at_once_in_one_jvm_read_an_id_mapped_table(tmp_path):
    """A line's engine reads two tables at once in its JVM, each call in a thread of its own there;
    delta-spark looks the session up in that thread (Spark 3.5 refused an id-mapped table from the
    thread that had not built the session: "spark.sql.parquet.fieldId.read.enabled must be enabled")."""
    import os
    import threading

    from conformance.cases.registry import get_case
    from conformance.engines.reference import ReferenceEngine
    from conformance.engines.spark import engine
    from conformance.model import TableRef

    from .conftest import usable

    spark = usable(engine(os.environ.get("LAKECONF_SPARK_LINE") or None))
    case = get_case("delta/column-mapping-id")
    latest = next(e for e in case.expected if e.version is None and e.timestamp is None)
    tables = [TableRef(format="delta", uri=str(tmp_path / f"t{i}")) for i in range(2)]
    for table in tables:
        ReferenceEngine().write(table, case.steps)
    got: list = []

    def read(table: TableRef) -> None:
        for _ in range(3):
            try:
                got.append(spark.read(table).num_rows)
            except Exception as exc:  # noqa: BLE001 - the assertion shows it
                got.append(exc)

    try:
        assert spark.concurrency >= 2
        spark.start()
        threads = [threading.Thread(target=read, args=(t,)) for t in tables]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        spark.close()
    assert got == [latest.rows.num_rows] * 6
