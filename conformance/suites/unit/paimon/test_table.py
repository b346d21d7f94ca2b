"""Whole-table reads (reference_impl.paimon.table) against pypaimon 2.1.0's own reads of tables it wrote.

Rows are compared as multisets. pypaimon writes level-0 files only (no compaction), so the tables
Java's batch scan reads nothing of until compaction (first-row, deletion vectors, postpone bucket)
read empty in both.
"""

from __future__ import annotations

import collections
import json

import pyarrow as pa
import pytest

from conformance.suites.unit.paimon import _pypaimon as PP
from reference_impl.errors import InvalidTable
from reference_impl.paimon import table as TB

pytest.importorskip("pypaimon")


_write = PP.write


_theirs = PP.read


def _rows(t: pa.Table) -> collections.Counter:
    return collections.Counter(tuple(sorted(r.items())) for r in t.to_pylist())


def _same(ours: pa.Table, theirs: pa.Table) -> None:
    assert ours.column_names == theirs.column_names
    assert _rows(ours) == _rows(theirs)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return PP.catalog(tmp_path_factory.mktemp("pp-table"))


_create = PP.create


APPEND = pa.schema([("id", pa.int32()), ("p", pa.string()), ("v", pa.string())])
PK = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string(), nullable=False),
                ("v", pa.string()), ("n", pa.int64()), ("op", pa.string())])


def _pk_batches():
    yield pa.table({"id": [1, 2, 3, 4], "p": ["x", "x", "a/b", "y"], "v": ["a", "b", "c", "d"], "n": [1, 2, 3, 4],
                    "op": ["+I"] * 4}, schema=PK)
    yield pa.table({"id": [2, 3, 5], "p": ["x", "a/b", "y"], "v": ["b2", None, "e"], "n": [20, None, 5],
                    "op": ["+U", "+U", "+I"]}, schema=PK)
    yield pa.table({"id": [1, 4, 6], "p": ["x", "y", "x"], "v": [None, "d3", "f"], "n": [None, 40, 6],
                    "op": ["-D", "+U", "+I"]}, schema=PK)


# ---------------------------------------------------------------------------------------------
# Append tables


@pytest.fixture(scope="module")
def append_table(catalog):
    table, path = _create(catalog, "append", APPEND, partition=["p"])
    _write(table, pa.table({"id": [1, 2, 3], "p": ["x", None, "a/b"], "v": ["a", "b", "c"]}, schema=APPEND))
    _write(table, pa.table({"id": [4, 5], "p": ["x", "y"], "v": [None, "e"]}, schema=APPEND))
    _write(table, pa.table({"id": [6], "p": [None], "v": ["f"]}, schema=APPEND))
    return table, path


@pytest.mark.rule("PAIMON-LAYOUT-009", "PAIMON-LAYOUT-012", "PAIMON-PART-001", "PAIMON-PART-002", "PAIMON-PART-005",
                  "PAIMON-DATA-005")
def test_append_partitioned_with_null_and_escaped_values(append_table):
    table, path = append_table
    ours = TB.read_table(path)
    _same(ours, _theirs(table))
    assert sorted(map(str, ours.column("p").to_pylist())) == ["None", "None", "a/b", "x", "x", "y"]
    assert ours.schema.field("id").type == pa.int32()


@pytest.mark.rule("PAIMON-PART-005")
def test_partition_values_come_from_the_partition_row(append_table):
    # the directory spells a null as __DEFAULT_PARTITION__; the value read is the null of _PARTITION
    _, path = append_table
    rows = TB.read_table(path).to_pylist()
    assert {r["id"] for r in rows if r["p"] is None} == {2, 6}


@pytest.mark.rule("PAIMON-SNAP-009")
def test_append_columns_and_time_travel(append_table):
    table, path = append_table
    ours = TB.read_table(path, columns=["v", "id"])
    assert ours.column_names == ["id", "v"]  # schema order
    _same(ours, _theirs(table).select(["id", "v"]))
    for sid in (1, 2, 3):
        _same(TB.read_table(path, snapshot_id=sid), _theirs(table, {"scan.snapshot-id": str(sid)}))
        _same(TB.read_table(path, version=sid), TB.read_table(path, snapshot_id=sid))
    assert TB.read_table(path, version=1).num_rows == 3
    empty = TB.read_table(path, version=0)
    assert empty.num_rows == 0 and empty.column_names == ["id", "p", "v"]


@pytest.mark.rule("PAIMON-SNAP-009")
def test_time_travel_by_tag_and_timestamp(append_table):
    table, path = append_table
    if "t2" not in (table.list_tags() if hasattr(table, "list_tags") else []):
        table.create_tag("t2", 2)
    _same(TB.read_table(path, tag="t2"), _theirs(table, {"scan.tag-name": "t2"}))
    assert TB.read_table(path, tag="t2").num_rows == 5
    times = {i: json.loads(open(f"{path}/snapshot/snapshot-{i}").read())["timeMillis"] for i in (1, 2, 3)}
    expected = max(i for i, ms in times.items() if ms <= times[2])  # two commits may share a millisecond
    _same(TB.read_table(path, timestamp=times[2]), TB.read_table(path, snapshot_id=expected))
    d = TB.describe(path, tag="t2")
    assert d["snapshot_id"] == 2 and d["commit_kind"] == "APPEND" and d["partition_keys"] == ["p"]


def test_selector_errors(append_table):
    _, path = append_table
    with pytest.raises(InvalidTable, match="at most one"):
        TB.read_table(path, snapshot_id=1, tag="t2")
    with pytest.raises(InvalidTable, match="unknown column"):
        TB.read_table(path, columns=["nope"])
    with pytest.raises(InvalidTable):
        TB.read_table(path, snapshot_id=99)


def test_empty_table(catalog):
    _, path = _create(catalog, "empty", APPEND)
    t = TB.read_table(path)
    assert t.num_rows == 0 and t.column_names == ["id", "p", "v"]
    d = TB.describe(path)
    assert d["snapshot_id"] is None and d["schema_id"] == 0 and d["bucket"] == -1


# ---------------------------------------------------------------------------------------------
# Primary-key tables


@pytest.mark.rule("PAIMON-DATA-001", "PAIMON-DATA-003", "PAIMON-DATA-004", "PAIMON-BUCKET-008", "PAIMON-PART-005")
@pytest.mark.parametrize("bucket", ["2", "-1"], ids=["fixed", "dynamic"])
def test_primary_key_upserts_and_delete(catalog, bucket):
    table, path = _create(catalog, f"pk_{bucket.replace('-', 'm')}", PK, pk=["id", "p"], partition=["p"],
                          options={"bucket": bucket, "rowkind.field": "op"})
    for batch in _pk_batches():
        _write(table, batch)
    ours = TB.read_table(path)
    _same(ours, _theirs(table))
    assert sorted(ours.column("id").to_pylist()) == [2, 3, 4, 5, 6]
    assert {r["id"]: r["v"] for r in ours.to_pylist()}[3] is None
    for sid in (1, 2):
        _same(TB.read_table(path, snapshot_id=sid), _theirs(table, {"scan.snapshot-id": str(sid)}))
    _same(TB.read_table(path, columns=["v", "id"]), _theirs(table).select(["id", "v"]))
    d = TB.describe(path)
    assert d["primary_keys"] == ["id", "p"] and d["bucket"] == int(bucket) and d["merge_engine"] == "deduplicate"


@pytest.mark.parametrize("engine,options", [
    ("partial-update", {}),
    ("aggregation", {"fields.n.aggregate-function": "sum", "fields.v.aggregate-function": "last_non_null_value"}),
])
def test_partial_update_and_aggregation(catalog, engine, options):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int64())])
    table, path = _create(catalog, engine.replace("-", "_"), schema, pk=["id"],
                          options={"bucket": "1", "merge-engine": engine, **options})
    _write(table, pa.table({"id": [1, 2], "v": ["a", None], "n": [1, 2]}, schema=schema))
    _write(table, pa.table({"id": [1, 2, 3], "v": [None, "b", "c"], "n": [10, None, 3]}, schema=schema))
    ours = TB.read_table(path)
    _same(ours, _theirs(table))
    by_id = {r["id"]: r for r in ours.to_pylist()}
    assert by_id[1]["v"] == "a" and by_id[2]["v"] == "b"
    assert by_id[1]["n"] == (11 if engine == "aggregation" else 10)


@pytest.mark.rule("PAIMON-MANIFEST-022")
@pytest.mark.parametrize("options", [
    {"merge-engine": "first-row", "bucket": "1"},
    {"deletion-vectors.enabled": "true", "bucket": "1"},
    {"bucket": "-2"},
], ids=["first-row", "deletion-vectors", "postpone"])
def test_level0_and_postpone_files_are_invisible_to_batch_reads(catalog, options):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    name = "invisible_" + "_".join(k.split(".")[0].replace("-", "") for k in options) + options["bucket"].replace("-", "m")
    table, path = _create(catalog, name, schema, pk=["id"], options=options)
    _write(table, pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    _write(table, pa.table({"id": [1, 3], "v": ["a2", "c"]}, schema=schema))
    ours, theirs = TB.read_table(path), _theirs(table)
    _same(ours, theirs)
    assert ours.num_rows == 0  # nothing compacted yet


def test_merge_on_read_deletion_vectors_read_level0(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    table, path = _create(catalog, "dv_mor", schema, pk=["id"],
                          options={"bucket": "1", "deletion-vectors.enabled": "true",
                                   "deletion-vectors.merge-on-read": "true"})
    _write(table, pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    _write(table, pa.table({"id": [1, 3], "v": ["a2", "c"]}, schema=schema))
    ours = TB.read_table(path)
    _same(ours, _theirs(table))
    assert ours.num_rows == 3


# ---------------------------------------------------------------------------------------------
# Schema evolution


@pytest.mark.rule("PAIMON-SCHEMA-007", "PAIMON-MANIFEST-021", "PAIMON-SCHEMA-015")
@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_old_files_read_with_the_evolved_schema(catalog, pk):
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    cat, _ = catalog
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int32())])
    name = f"evolve_{'pk' if pk else 'append'}"
    table, path = _create(catalog, name, schema, pk=["id"] if pk else None, options={"bucket": "1"} if pk else {})
    _write(table, pa.table({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]}, schema=schema))
    cat.alter_table(f"db.{name}", [SchemaChange.rename_column("v", "v2"), SchemaChange.add_column("w", AtomicType("STRING"))])
    table = cat.get_table(f"db.{name}")
    new = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v2", pa.string()), ("n", pa.int32()), ("w", pa.string())])
    _write(table, pa.table({"id": [2, 3], "v2": ["b2", "c"], "n": [20, 3], "w": ["x", "y"]}, schema=new))
    ours = TB.read_table(path)
    assert ours.column_names == ["id", "v2", "n", "w"]
    _same(ours, _theirs(table))
    by_id = {r["id"]: r for r in ours.to_pylist()}
    assert by_id[1] == {"id": 1, "v2": "a", "n": 1, "w": None}
    # the first snapshot reads with its own schema (schema 0)
    old = TB.read_table(path, snapshot_id=1)
    assert old.column_names == ["id", "v", "n"]
    _same(old, _theirs(table, {"scan.snapshot-id": "1"}))
    assert TB.describe(path)["schema_id"] == 1 and TB.describe(path, snapshot_id=1)["schema_id"] == 0


# ---------------------------------------------------------------------------------------------
# Partition directory names


@pytest.mark.rule("PAIMON-PART-001", "PAIMON-PART-004")
def test_partition_value_text():
    from reference_impl.paimon.types import parse_type
    import datetime as dt

    assert TB.escape_path_name("a/b=c%") == "a%2Fb%3Dc%25"
    assert TB.partition_value_text(dt.date(1970, 1, 11), parse_type("DATE"), legacy=True) == "10"
    assert TB.partition_value_text(dt.date(1970, 1, 11), parse_type("DATE"), legacy=False) == "1970-01-11"
    ts = parse_type("TIMESTAMP(6)")
    assert TB.partition_value_text(dt.datetime(2024, 1, 2, 3, 4), ts, legacy=True) == "2024-01-02T03:04"
    assert TB.partition_value_text(dt.datetime(2024, 1, 2, 3, 4, 5, 120000), ts, legacy=True) == "2024-01-02T03:04:05.120"
    assert TB.partition_value_text(True, parse_type("BOOLEAN"), legacy=True) == "true"
