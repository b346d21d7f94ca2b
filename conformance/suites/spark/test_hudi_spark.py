"""Spark (hudi-spark3.5-bundle 1.2.0 on Spark 3.5) as a Hudi writer and reader.

Spark writes copy-on-write and merge-on-read tables (table versions 6, 8 and 9) with the kit's steps (insert,
upsert, delete, update, compaction / clustering, insert overwrite) through the datasource API, and reads them
back; every version, the read-optimized query and incremental ranges are compared with the reference reader
(``reference_impl.hudi.table``). The 3.5 line only: no hudi-spark bundle for Spark 4.0 resolves.

Run: ``LAKECONF_SPARK_LINE=3.5 .cache/spark-3.5/bin/python -m pytest -m spark conformance/suites/spark/test_hudi_spark.py``.
The Hudi plugin is not registered yet, so the module registers it for its own SparkSession (and skips, naming
why, when another test of the process started the session without Hudi's runtime).
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from conformance.formats.hudi import facts as F
from conformance.formats.hudi import instants as I
from conformance.formats.hudi.steps import FailedWrite, Upsert
from conformance.model import Append, Create, Delete, Optimize, Overwrite, TableRef, Update
from reference_impl.errors import Unsupported

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("ts", pa.int64()),
                    pa.field("name", pa.string()), pa.field("part", pa.string())])


def rows(ids, ts, names, parts) -> pa.Table:
    return pa.table({"id": ids, "ts": ts, "name": names, "part": parts}, schema=SCHEMA)


def _required() -> bool:
    # as the Spark suites' conftest: only LAKECONF_REQUIRE_SPARK makes a missing Spark a failure (the unit
    # environment requires its engines but has no pyspark; the Spark environments set this one)
    return os.environ.get("LAKECONF_REQUIRE_SPARK", "") not in ("", "0", "false")


def _skip(reason: str):
    if _required():
        pytest.fail(f"LAKECONF_REQUIRE_SPARK is set but Hudi on Spark cannot run: {reason}")
    pytest.skip(reason)




@pytest.fixture(scope="module")
def engine():
    """A Spark engine of this interpreter's line whose session carries Hudi's runtime (skipped, naming why, when
    another test of the process started the session without Hudi)."""
    from conformance.engines.spark import lines, session
    from conformance.engines.spark.adapter import SparkEngine
    from conformance.formats.hudi.drivers import spark as driver

    eng = SparkEngine(os.environ.get("LAKECONF_SPARK_LINE") or None)
    reason = eng.available()
    if reason:
        _skip(f"Spark not available: {reason}")
    if eng.line.name not in driver.RUNTIMES:  # not a missing engine: Hudi has no runtime for the line
        pytest.skip(driver.available(eng) or f"no Hudi runtime for Spark {eng.line.name}")
    if "hudi" not in eng.formats():
        _skip(f"LAKECONF_SPARK_FORMATS leaves hudi out ({','.join(eng.formats())})")
    if session.stats()["formats"] and "hudi" not in session.started_formats():
        _skip("the process's SparkSession was started without Hudi's runtime (run this module on its own)")
    assert lines.line_for_pyspark(lines.installed_pyspark()) is eng.line
    eng.start()
    yield eng


def hudi(tmp_path, name: str) -> TableRef:
    return TableRef(format="hudi", uri=str(tmp_path / name))


def _key(r: dict) -> str:
    return json.dumps(r, sort_keys=True, default=str)


def same(got: pa.Table, want: pa.Table) -> None:
    """Same columns (Spark puts partition columns where its relation does: compared by name), same rows."""
    assert sorted(got.column_names) == sorted(want.column_names)
    got = got.select(want.column_names)
    assert sorted(got.to_pylist(), key=_key) == sorted(want.to_pylist(), key=_key)


def reference(table: TableRef, *, at=None, ref=None) -> pa.Table:
    from reference_impl.hudi import table as H
    from reference_impl.storage import LocalStorage

    storage = LocalStorage(table.uri)
    if ref is not None and ref.startswith(F.INCREMENTAL):
        _kind, a, b = F.parse_ref(ref)
        begin = I.point(storage, a) if a else None
        end = I.point(storage, b) if b is not None else None
        return H.read_table(table.uri, query="incremental", begin=begin.as_of if begin else None,
                            end=end.as_of if end else None, meta_columns=False)
    query = "read_optimized" if ref == F.READ_OPTIMIZED else "snapshot"
    if at == 0:
        return H.read_table(table.uri, query=query, meta_columns=False).slice(0, 0)
    point = I.point(storage, at)
    travel = {} if point is None or at is None else (
        {"as_of_completion": point.completion_time} if point.completion_time else {"as_of": point.requested_time})
    return H.read_table(table.uri, query=query, meta_columns=False, **travel)


def _props(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.recordkey.fields": "id", "hoodie.table.type": table_type,
            "hoodie.table.version": str(version), "hoodie.table.ordering.fields": "ts"}


STEPS = (
    rows([1, 2, 3], [1, 1, 1], ["a", "b", "c"], ["p1", "p2", "p1"]),  # Append (insert)
    rows([1, 4], [2, 2], ["a2", "d"], ["p1", "p2"]),  # Upsert
)


# Each table costs Spark about half a minute: one COW and one MOR table per table version worth it.
CELLS = [("COPY_ON_WRITE", 9), ("MERGE_ON_READ", 9), ("MERGE_ON_READ", 8), ("COPY_ON_WRITE", 6),
         ("MERGE_ON_READ", 6)]


@pytest.fixture(scope="module")
def written(engine, tmp_path_factory):
    """(table type, version) -> the table Spark wrote: insert, upsert, delete, update, compact/cluster, insert."""
    out = {}
    for table_type, version in CELLS:
        table = hudi(tmp_path_factory.mktemp("spark-hudi"), f"{table_type.lower()}_v{version}")
        engine.write(table, [
            Create(schema=SCHEMA, partition_by=("part",), properties=_props(table_type, version)),
            Append(rows=STEPS[0]),
            Upsert(rows=STEPS[1]),
            Delete(where="id = 2"),
            Update(set={"name": "'upd'"}, where="id = 3"),
            Optimize(),
            Append(rows=rows([5], [5], ["e"], ["p1"])),
        ])
        out[(table_type, version)] = table
    return out


@pytest.mark.parametrize("table_type,version", CELLS)
def test_spark_writes_what_the_steps_say(written, engine, table_type, version):
    table = written[(table_type, version)]
    got = engine.read(table)
    assert sorted((r["id"], r["ts"], r["name"], r["part"]) for r in got.to_pylist()) == [
        (1, 2, "a2", "p1"), (3, 1, "upd", "p1"), (4, 2, "d", "p2"), (5, 5, "e", "p1")]
    points = I.points(_storage(table))
    assert len(points) == 6  # insert, upsert, delete, update, compaction/clustering, insert
    assert points[4].action == ("commit" if table_type == "MERGE_ON_READ" else "replacecommit")
    config = _config(table)
    assert config["hoodie.table.version"] == str(version)
    assert config["hoodie.table.type"] == table_type
    assert not os.path.exists(os.path.join(table.uri, ".hoodie", "metadata")), "the metadata table is off"


def _storage(table: TableRef):
    from reference_impl.storage import LocalStorage

    return LocalStorage(table.uri)


def _config(table: TableRef) -> dict[str, str]:
    from reference_impl.hudi.properties import parse_properties

    with open(os.path.join(table.uri, ".hoodie", "hoodie.properties"), "rb") as fh:
        return dict(parse_properties(fh.read()))


@pytest.mark.parametrize("table_type,version", CELLS)
def test_every_version_spark_and_reference_agree(written, engine, table_type, version):
    table = written[(table_type, version)]
    same(engine.read(table), reference(table))
    for at in range(0, len(I.points(_storage(table))) + 1):
        same(engine.read(table, at=at), reference(table, at=at))


@pytest.mark.parametrize("table_type,version", CELLS)
def test_read_optimized_spark_and_reference_agree(written, engine, table_type, version):
    table = written[(table_type, version)]
    same(engine.read(table, ref="read_optimized"), reference(table, ref="read_optimized"))
    same(engine.read(table, at=3, ref="read_optimized"), reference(table, at=3, ref="read_optimized"))


@pytest.mark.parametrize("table_type,version", CELLS)
def test_incremental_spark_and_reference_agree(written, engine, table_type, version):
    table = written[(table_type, version)]
    for name in ("incremental:0:1", "incremental:1:2", "incremental:1:4", "incremental:3:", "incremental:0:"):
        same(engine.read(table, ref=name), reference(table, ref=name))


@pytest.mark.parametrize("table_type,version", CELLS)
def test_describe_spark_and_reference_agree(written, engine, table_type, version):
    from reference_impl.hudi import table as H

    table = written[(table_type, version)]
    got = engine.describe(table)
    want = H.describe(table.uri)
    assert got["table_type"] == table_type and got["table_version"] == version
    assert got["record_key_fields"] == ["id"] and got["partition_fields"] == ["part"]
    common = sorted(set(got) & set(want))
    assert {k: got[k] for k in common} == {k: want[k] for k in common}


def test_insert_overwrite_is_a_replacecommit(engine, tmp_path):
    table = hudi(tmp_path, "overwrite")
    engine.write(table, [Create(schema=SCHEMA, partition_by=("part",), properties=_props("COPY_ON_WRITE", 9)),
                         Append(rows=STEPS[0]),
                         Overwrite(rows=rows([9], [9], ["z"], ["p3"]))])
    assert [p.action for p in I.points(_storage(table))] == ["commit", "replacecommit"]
    same(engine.read(table), reference(table))
    assert [r["id"] for r in engine.read(table).to_pylist()] == [9]
    same(engine.read(table, at=1), reference(table, at=1))


def test_create_alone_is_version_zero(engine, tmp_path):
    table = hudi(tmp_path, "created")
    engine.write(table, [Create(schema=SCHEMA, partition_by=("part",), properties=_props("MERGE_ON_READ", 8))])
    assert I.points(_storage(table)) == []
    config = _config(table)
    assert config["hoodie.table.version"] == "8" and config["hoodie.table.type"] == "MERGE_ON_READ"
    assert reference(table).num_rows == 0
    assert engine.read(table, at=0).num_rows == 0


def test_failed_write_is_unsupported(engine, tmp_path):
    with pytest.raises(Unsupported, match="inflight"):
        engine.write(hudi(tmp_path, "failed"), [
            Create(schema=SCHEMA, properties=_props("MERGE_ON_READ", 9)), FailedWrite(rows=STEPS[0])])


def test_the_4_0_line_has_no_hudi_runtime():
    from types import SimpleNamespace

    from conformance.engines.spark import lines
    from conformance.formats.hudi.drivers import spark as driver

    assert driver.available(SimpleNamespace(line=lines.line("4.0"))) is not None
    assert "Spark 4.0" in driver.available(SimpleNamespace(line=lines.line("4.0")))
    assert driver.available(SimpleNamespace(line=lines.line("3.5"))) is None


@pytest.fixture(scope="module")
def event_time_mor(engine, tmp_path_factory) -> TableRef:
    """MOR ordered by event time: k1 (ts 5) and k2 (ts 5) inserted, then upserted with ts 3 and ts 9 (log)."""
    table = hudi(tmp_path_factory.mktemp("spark-hudi-et"), "event_time")
    engine.write(table, [
        Create(schema=SCHEMA, partition_by=("part",),
               properties={**_props("MERGE_ON_READ", 9), "hoodie.record.merge.mode": "EVENT_TIME_ORDERING"}),
        Append(rows=rows([1, 2], [5, 5], ["a", "b"], ["p1", "p1"])),
        Upsert(rows=rows([1, 2], [3, 9], ["lower", "higher"], ["p1", "p1"]))])
    return table


def test_incremental_returns_what_the_range_wrote(engine, event_time_mor):
    """Java's incremental relation merges only the files the range's commits wrote: the lower-ordered update of
    k1 (in the range's log file) is returned although the snapshot keeps the base record."""
    def triples(t):
        return sorted((r["id"], r["ts"], r["name"]) for r in t.to_pylist())

    assert triples(engine.read(event_time_mor)) == [(1, 5, "a"), (2, 9, "higher")]
    assert triples(engine.read(event_time_mor, ref="incremental:1:2")) == [(1, 3, "lower"), (2, 9, "higher")]


def test_incremental_spark_and_reference_agree_on_event_time_updates(engine, event_time_mor):
    same(engine.read(event_time_mor, ref="incremental:1:2"), reference(event_time_mor, ref="incremental:1:2"))


def test_on_minio(engine, tmp_path_factory):
    """A MOR table written and read on MinIO (s3a://), and the reference reading it there."""
    from conformance.storage.testing import store_or_skip
    from reference_impl.hudi import table as H

    with store_or_skip("minio", str(tmp_path_factory.mktemp("minio-hudi"))) as store:
        table = store.table_ref("hudi", "mor-on-minio")
        engine.write(table, [Create(schema=SCHEMA, partition_by=("part",), properties=_props("MERGE_ON_READ", 9)),
                             Append(rows=STEPS[0]), Upsert(rows=STEPS[1]), Delete(where="id = 2")])
        storage = store.storage(table.uri)
        want = H.read_table(storage, meta_columns=False)
        same(engine.read(table), want)
        assert sorted(r["id"] for r in want.to_pylist()) == [1, 3, 4]
        points = I.points(storage)
        assert len(points) == 3
        same(engine.read(table, at=1), H.read_table(storage, as_of_completion=points[0].completion_time,
                                                     meta_columns=False))
        assert engine.describe(table)["table_type"] == "MERGE_ON_READ"


def test_the_metadata_table_stays_when_the_create_asks_for_it(engine, tmp_path):
    table = hudi(tmp_path, "with_mdt")
    engine.write(table, [
        Create(schema=SCHEMA, partition_by=("part",),
               properties={**_props("MERGE_ON_READ", 9), "hoodie.metadata.enable": "true"}),
        Append(rows=STEPS[0]), Upsert(rows=STEPS[1]), Optimize()])
    assert os.path.isdir(os.path.join(table.uri, ".hoodie", "metadata"))
    assert "files" in _config(table)["hoodie.table.metadata.partitions"].split(",")
    same(engine.read(table), reference(table))
    for at in (1, 2, 3):
        same(engine.read(table, at=at), reference(table, at=at))
