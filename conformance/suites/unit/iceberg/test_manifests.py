"""Manifests and manifest lists in Avro, per format version (reference_impl.iceberg.manifests)."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import struct

import fastavro
import pytest

from reference_impl.common.bounded import write_long
from reference_impl.errors import InvalidTable
from reference_impl.iceberg import avro as A
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T

SCHEMA = T.Schema(schema_id=3, fields=(
    T.NestedField(id=1, name="id", type=T.LONG, required=True),
    T.NestedField(id=2, name="cat", type=T.STRING),
    T.NestedField(id=3, name="f", type=T.DOUBLE),
    T.NestedField(id=4, name="d", type=T.DecimalType(precision=9, scale=2)),
    T.NestedField(id=5, name="ts", type=T.TIMESTAMPTZ),
))
SPEC = P.PartitionSpec(spec_id=2, fields=(
    P.PartitionField(source_ids=(2,), field_id=1000, name="cat", transform=X.IdentityTransform()),
    P.PartitionField(source_ids=(3,), field_id=1001, name="f", transform=X.IdentityTransform()),
    P.PartitionField(source_ids=(5,), field_id=1002, name="ts_day", transform=X.DayTransform()),
    P.PartitionField(source_ids=(1,), field_id=1003, name="id_b", transform=X.BucketTransform(num_buckets=8)),
    P.PartitionField(source_ids=(4,), field_id=1004, name="d", transform=X.IdentityTransform()),
))
LOC = "s3://b/t/data/"


def data_file(name, *, part=None, rows=10, version=2, **kw):
    from decimal import Decimal
    base = dict(
        file_path=LOC + name, file_format="parquet", record_count=rows, file_size_in_bytes=1000 + rows,
        partition=part if part is not None else {1000: "a", 1001: 1.5, 1002: 19000, 1003: 3, 1004: Decimal("1.25")},
        column_sizes={1: 10, 2: 20}, value_counts={1: rows, 2: rows}, null_value_counts={2: 1}, nan_value_counts={3: 0},
        lower_bounds=MF.encode_bounds({1: -5, 2: "a", 4: Decimal("1.25")}, SCHEMA),
        upper_bounds=MF.encode_bounds({1: 500, 2: "zz", 4: Decimal("9.99")}, SCHEMA),
        key_metadata=b"\x01\x02", split_offsets=(4, 100), sort_order_id=0,
    )
    base.update(kw)
    return MF.DataFile(**base)


def entries(version):
    snap = 77 if version == 1 else None
    seq = {} if version == 1 else {"sequence_number": 4, "file_sequence_number": 5}
    return [
        MF.ManifestEntry(status=MF.ADDED, snapshot_id=snap, data_file=data_file("a.parquet")),
        MF.ManifestEntry(status=MF.EXISTING, snapshot_id=70, data_file=data_file("b.parquet", rows=3), **seq),
        MF.ManifestEntry(status=MF.DELETED, snapshot_id=77, data_file=data_file("c.parquet", part={1000: None, 1001: float("nan"), 1002: None, 1003: None, 1004: None}), **seq),
    ]


def avro_header(data: bytes) -> tuple[dict, dict]:
    r = fastavro.reader(io.BytesIO(data))
    meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in r.metadata.items()}
    return json.loads(meta["avro.schema"]), meta


def walk_ids(schema, path="$"):
    """Assert every record field, array and map in an Avro schema carries its Iceberg id; yield (path, id)."""
    if isinstance(schema, list):
        for b in schema:
            yield from walk_ids(b, path)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind == "record":
        for f in schema["fields"]:
            assert isinstance(f.get("field-id"), int), f"{path}.{f['name']} lacks field-id"
            yield f"{path}.{f['name']}", f["field-id"]
            yield from walk_ids(f["type"], f"{path}.{f['name']}")
    elif kind == "array":
        if schema.get("logicalType") == "map":
            yield from walk_ids(schema["items"], path + "[kv]")
        else:
            assert isinstance(schema.get("element-id"), int), f"{path} array lacks element-id"
            yield f"{path}[]", schema["element-id"]
            yield from walk_ids(schema["items"], path + "[]")
    elif kind == "map":
        assert isinstance(schema.get("key-id"), int) and isinstance(schema.get("value-id"), int), f"{path} map lacks ids"
        yield from walk_ids(schema["values"], path + "{}")
    elif isinstance(kind, (dict, list)):
        yield from walk_ids(kind, path)


def write(version, es=None, content=MF.MANIFEST_DATA, spec=SPEC, schema=SCHEMA):
    return MF.write_manifest(es if es is not None else entries(version), schema=schema, spec=spec, format_version=version, content=content)


# ---------------------------------------------------------------------------------------------
# Writing: schemas with ids, per-version fields, key-value metadata


@pytest.mark.rule("ICEBERG-MANIFEST-002", "ICEBERG-FMT-006", "ICEBERG-FMT-003", "ICEBERG-MANIFEST-020")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_manifest_avro_schema_has_ids_at_every_level(version):
    schema, _meta = avro_header(write(version))
    ids = dict(walk_ids(schema))
    assert ids["$.status"] == 0 and ids["$.data_file"] == 2
    assert ids["$.data_file.partition"] == 102
    assert [ids[f"$.data_file.partition.{n}"] for n in ("cat", "f", "ts_day", "id_b", "d")] == [1000, 1001, 1002, 1003, 1004]
    assert ids["$.data_file.lower_bounds[kv].key"] == 126 and ids["$.data_file.lower_bounds[kv].value"] == 127
    assert ids["$.data_file.split_offsets[]"] == 133
    assert ids["$.data_file.nan_value_counts"] == 137


@pytest.mark.rule("ICEBERG-MANIFEST-011", "ICEBERG-MANIFEST-012", "ICEBERG-MANIFEST-017", "ICEBERG-MANIFEST-023",
                  "ICEBERG-MANIFEST-028", "ICEBERG-MANIFEST-038", "ICEBERG-MANIFEST-039", "ICEBERG-MANIFEST-040",
                  "ICEBERG-MANIFEST-041", "ICEBERG-COMPAT-001", "ICEBERG-GEN-002")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_manifest_fields_per_version(version):
    schema, _meta = avro_header(write(version))
    top = {f["field-id"]: f for f in schema["fields"]}
    df = {f["field-id"] for f in top[2]["type"]["fields"]}
    assert (top[1]["type"] == "long") == (version == 1)  # snapshot_id required only in v1
    assert ({3, 4} <= set(top)) == (version >= 2)
    assert (105 in df) == (version == 1)
    assert (134 in df) == (version >= 2) and (135 in df) == (version >= 2) and (143 in df) == (version >= 2)
    assert ({142, 144, 145} <= df) == (version >= 3) and not ({142, 144, 145} & df and version < 3)
    assert not {106, 107, 111, 141} & df
    assert {100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 140} <= df


@pytest.mark.rule("ICEBERG-MANIFEST-004", "ICEBERG-MANIFEST-005", "ICEBERG-MANIFEST-006", "ICEBERG-MANIFEST-007",
                  "ICEBERG-MANIFEST-008", "ICEBERG-MANIFEST-009")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_manifest_key_value_metadata(version):
    _schema, meta = avro_header(write(version))
    assert T.parse_schema(meta["schema"]) == SCHEMA
    assert isinstance(json.loads(meta["partition-spec"]), list)
    assert P.parse_partition_fields(meta["partition-spec"], format_version=2, spec_id=2) == SPEC
    assert meta["partition-spec-id"] == "2" and meta["schema-id"] == "3" and meta["format-version"] == str(version)
    assert ("content" in meta) == (version >= 2)
    if version >= 2:
        assert meta["content"] == "data"
        dmeta = avro_header(write(version, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p.parquet", content=MF.POSITION_DELETES))], content=MF.MANIFEST_DELETES))[1]
        assert dmeta["content"] == "deletes"


@pytest.mark.rule("ICEBERG-MANIFEST-010", "ICEBERG-MANIFEST-013", "ICEBERG-MANIFEST-031", "ICEBERG-SERDE-014", "ICEBERG-SERDE-010")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_manifest_round_trip_without_inheritance(version):
    es = entries(version)
    m = MF.read_manifest(write(version, es))
    got = list(m.entries)
    assert len(got) == 3
    for want, have in zip(es, got):
        assert have.status == want.status and have.snapshot_id == want.snapshot_id
        assert have.sequence_number == want.sequence_number and have.file_sequence_number == want.file_sequence_number
        for f in dataclasses.fields(MF.DataFile):
            w, h = getattr(want.data_file, f.name), getattr(have.data_file, f.name)
            if f.name == "partition":
                assert set(w) == set(h) and all(w[k] == h[k] or (isinstance(w[k], float) and math.isnan(w[k]) and math.isnan(h[k])) for k in w)
            else:
                assert w == h, f.name
    assert m.metadata.spec == SPEC and m.metadata.schema == SCHEMA and m.metadata.format_version == version
    assert [f.id for f in m.partition_type.fields] == [1000, 1001, 1002, 1003, 1004]
    from decimal import Decimal
    assert MF.decode_bounds(got[0].data_file.lower_bounds, SCHEMA) == {1: -5, 2: "a", 4: Decimal("1.25")}
    assert got[0].data_file.lower_bounds[1] == struct.pack("<q", -5) and got[0].data_file.lower_bounds[4] == b"\x7d"


@pytest.mark.rule("ICEBERG-MANIFEST-020")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_unpartitioned_manifest_has_an_empty_partition_struct(version):
    es = [MF.ManifestEntry(status=MF.ADDED, snapshot_id=1, data_file=data_file("u.parquet", part={}))]
    data = write(version, es, spec=P.UNPARTITIONED)
    schema, _ = avro_header(data)
    assert [f for f in _df_fields(schema) if f["field-id"] == 102][0]["type"] == {"type": "record", "name": "r102", "fields": []}
    assert MF.read_manifest(data).entries[0].data_file.partition == {}


@pytest.mark.rule("ICEBERG-MANIFEST-001", "ICEBERG-MANIFEST-019", "ICEBERG-MANIFEST-034", "ICEBERG-MANIFEST-040", "ICEBERG-SEQ-006",
                  "ICEBERG-MANIFEST-011", "ICEBERG-LINEAGE-017", "ICEBERG-COMPAT-002", "ICEBERG-MANIFEST-005", "ICEBERG-MANIFEST-010")
@pytest.mark.parametrize("version,es,kw,rule", [
    (2, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p", content=MF.POSITION_DELETES))], {}, "ICEBERG-MANIFEST-001"),
    (2, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p"))], {"content": MF.MANIFEST_DELETES}, "ICEBERG-MANIFEST-001"),
    (2, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p", file_format="csv"))], {}, "ICEBERG-MANIFEST-019"),
    (2, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p", split_offsets=(9, 3)))], {}, "ICEBERG-MANIFEST-034"),
    (3, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p", content_offset=4))], {}, "ICEBERG-MANIFEST-040"),
    (2, [MF.ManifestEntry(status=MF.EXISTING, data_file=data_file("p"))], {}, "ICEBERG-SEQ-006"),
    (1, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p"))], {}, "ICEBERG-MANIFEST-011"),
    (3, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p", content=MF.POSITION_DELETES, first_row_id=3))], {"content": MF.MANIFEST_DELETES}, "ICEBERG-LINEAGE-017"),
    (1, [MF.ManifestEntry(status=MF.ADDED, snapshot_id=1, data_file=data_file("p", content=MF.EQUALITY_DELETES))], {}, "ICEBERG-COMPAT-002"),
    (2, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p", first_row_id=1))], {}, "ICEBERG-GEN-002"),
    (2, [MF.ManifestEntry(status=7, data_file=data_file("p"))], {}, "ICEBERG-MANIFEST-010"),
    (2, [], {"schema": dataclasses.replace(SCHEMA, schema_id=None)}, "ICEBERG-MANIFEST-005"),
])
def test_writer_refuses_what_the_spec_forbids(version, es, kw, rule):
    with pytest.raises(InvalidTable) as exc:
        write(version, es, **kw)
    assert exc.value.rule == rule


# ---------------------------------------------------------------------------------------------
# Inheritance


def mfile(version, **kw):
    base = dict(manifest_path="s3://b/t/metadata/m.avro", manifest_length=1, partition_spec_id=2, added_snapshot_id=99,
                sequence_number=0 if version == 1 else 9, min_sequence_number=0 if version == 1 else 4)
    base.update(kw)
    return MF.ManifestFile(**base)


@pytest.mark.rule("ICEBERG-SEQ-004", "ICEBERG-SEQ-005", "ICEBERG-SEQ-006", "ICEBERG-SEQ-014", "ICEBERG-MANIFEST-014")
def test_sequence_number_and_snapshot_id_inheritance_v2():
    m = MF.read_manifest(write(2), manifest_file=mfile(2))
    added, existing, deleted = m.entries
    assert (added.snapshot_id, added.sequence_number, added.file_sequence_number) == (99, 9, 9)
    assert (existing.snapshot_id, existing.sequence_number, existing.file_sequence_number) == (70, 4, 5)
    assert (deleted.snapshot_id, deleted.sequence_number) == (77, 4)


@pytest.mark.rule("ICEBERG-SEQ-009")
def test_explicit_older_data_sequence_number_on_added_entry_is_kept():
    es = [MF.ManifestEntry(status=MF.ADDED, sequence_number=2, data_file=data_file("x"))]
    e = MF.read_manifest(write(2, es), manifest_file=mfile(2)).entries[0]
    assert (e.sequence_number, e.file_sequence_number) == (2, 9)


@pytest.mark.rule("ICEBERG-SEQ-011", "ICEBERG-GEN-004", "ICEBERG-COMPAT-002")
def test_v1_manifest_reads_as_sequence_number_zero_and_data_content():
    m = MF.read_manifest(write(1), manifest_file=mfile(2, sequence_number=5))
    assert {(e.sequence_number, e.file_sequence_number) for e in m.entries} == {(0, 0)}
    assert {e.data_file.content for e in m.entries} == {MF.DATA}
    assert m.metadata.format_version == 1 and m.metadata.content == MF.MANIFEST_DATA


@pytest.mark.rule("ICEBERG-SEQ-006")
def test_existing_entry_without_sequence_numbers_is_invalid_on_read():
    ptype = P.partition_type(SPEC, SCHEMA)
    etype = MF.manifest_entry_type(ptype, 2)
    rec = {"status": MF.EXISTING, "snapshot_id": 1, "sequence_number": None, "file_sequence_number": None,
           "data_file": MF._data_file_record(data_file("x"), ptype, 2)}
    meta = {"schema": T.schema_to_json(SCHEMA), "schema-id": "3", "partition-spec": json.dumps(P.partition_fields_to_list(SPEC, format_version=2)),
            "partition-spec-id": "2", "format-version": "2", "content": "data"}
    data = MF._avro_bytes(etype, "manifest_entry", [rec], meta, "null")
    assert MF.read_manifest(data).entries[0].sequence_number is None  # no list entry: nothing inherited
    with pytest.raises(InvalidTable, match="explicit sequence numbers") as exc:
        MF.read_manifest(data, manifest_file=mfile(2), path="m.avro")
    assert exc.value.rule == "ICEBERG-SEQ-006" and exc.value.path == "m.avro"
    assert [v.rule for v in MF.validate_manifest(MF.read_manifest(data), mfile(2))] == ["ICEBERG-SEQ-006"]


@pytest.mark.rule("ICEBERG-LINEAGE-015", "ICEBERG-LINEAGE-014", "ICEBERG-LINEAGE-016", "ICEBERG-LINEAGE-017")
def test_first_row_id_inheritance_spec_example():
    # Row lineage example: data1 EXISTING 25 rows first_row_id 800; data2, data3 ADDED 50 rows each, null.
    es = [
        MF.ManifestEntry(status=MF.EXISTING, snapshot_id=1, sequence_number=1, file_sequence_number=1, data_file=data_file("data1", rows=25, first_row_id=800)),
        MF.ManifestEntry(status=MF.ADDED, data_file=data_file("data2", rows=50)),
        MF.ManifestEntry(status=MF.ADDED, data_file=data_file("data3", rows=50)),
    ]
    raw = MF.read_manifest(write(3, es))
    assert [e.data_file.first_row_id for e in raw.entries] == [800, None, None]
    got = MF.read_manifest(write(3, es), manifest_file=mfile(3, first_row_id=1000))
    assert [e.data_file.first_row_id for e in got.entries] == [800, 1000, 1050]
    # Without a manifest first_row_id (a snapshot from before the upgrade) files have no row ids at all.
    assert [e.data_file.first_row_id for e in MF.read_manifest(write(3, es), manifest_file=mfile(3)).entries] == [None, None, None]
    # A DELETED entry neither takes nor consumes ids.
    es2 = [MF.ManifestEntry(status=MF.DELETED, snapshot_id=1, sequence_number=1, file_sequence_number=1, data_file=data_file("gone", rows=40))] + es[1:]
    got2 = MF.read_manifest(write(3, es2), manifest_file=mfile(3, first_row_id=1000))
    assert [e.data_file.first_row_id for e in got2.entries] == [None, 1000, 1050]
    dels = [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("dv", content=MF.POSITION_DELETES, file_format="puffin",
                                                                   referenced_data_file=LOC + "data2", content_offset=4, content_size_in_bytes=40))]
    d = MF.read_manifest(write(3, dels, content=MF.MANIFEST_DELETES), manifest_file=mfile(3, content=1))
    assert d.entries[0].data_file.first_row_id is None and d.entries[0].data_file.content_offset == 4


# ---------------------------------------------------------------------------------------------
# Manifest lists


def mlist_entries(version):
    es = entries(version)
    m = MF.manifest_file_for(es, manifest_path="s3://b/t/metadata/m1.avro", manifest_length=4242, spec=SPEC, schema=SCHEMA,
                             added_snapshot_id=77, sequence_number=0 if version == 1 else 6, first_row_id=1000 if version == 3 else None)
    d = MF.ManifestFile(manifest_path="s3://b/t/metadata/d1.avro", manifest_length=99, partition_spec_id=0, added_snapshot_id=70,
                        content=MF.MANIFEST_DELETES, sequence_number=5, min_sequence_number=5, added_files_count=1, existing_files_count=0,
                        deleted_files_count=0, added_rows_count=2, existing_rows_count=0, deleted_rows_count=0, partitions=(), key_metadata=b"k")
    return [m] if version == 1 else [m, d]


@pytest.mark.rule("ICEBERG-MLIST-002", "ICEBERG-FMT-006", "ICEBERG-MLIST-003", "ICEBERG-MLIST-013", "ICEBERG-MLIST-019")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_manifest_list_round_trip_and_ids(version):
    ms = mlist_entries(version)
    data = MF.write_manifest_list(ms, format_version=version, snapshot_id=77, parent_snapshot_id=70, sequence_number=6, first_row_id=1000)
    assert MF.read_manifest_list(data) == tuple(ms)
    schema, meta = avro_header(data)
    ids = dict(walk_ids(schema))
    assert ids["$.manifest_path"] == 500 and ids["$.partitions[]"] == 508 and ids["$.partitions[].contains_null"] == 509
    assert ({517, 515, 516} <= set(ids.values())) == (version >= 2)
    assert (520 in ids.values()) == (version >= 3)
    req = {f["field-id"]: not isinstance(f["type"], list) for f in schema["fields"]}
    assert req[504] == req[512] == (version >= 2)
    assert meta["snapshot-id"] == "77" and meta["parent-snapshot-id"] == "70" and meta["format-version"] == str(version)
    assert ("first-row-id" in meta) == (version >= 3)


@pytest.mark.rule("ICEBERG-MLIST-006", "ICEBERG-MLIST-007", "ICEBERG-MLIST-008", "ICEBERG-MLIST-012", "ICEBERG-SEQ-011", "ICEBERG-LINEAGE-013")
def test_v1_manifest_list_defaults_and_null_counts():
    m = MF.ManifestFile(manifest_path="s3://b/m.avro", manifest_length=5, partition_spec_id=0, added_snapshot_id=1)
    got = MF.read_manifest_list(MF.write_manifest_list([m], format_version=1, snapshot_id=1))[0]
    assert (got.content, got.sequence_number, got.min_sequence_number) == (0, 0, 0)
    assert got.added_files_count is None and got.may_have(MF.ADDED) and got.may_have(MF.DELETED)
    with pytest.raises(InvalidTable) as exc:
        MF.write_manifest_list([m], format_version=2, snapshot_id=1)
    assert exc.value.rule == "ICEBERG-MLIST-010"
    dels = mlist_entries(3)[1]
    with pytest.raises(InvalidTable) as exc:
        MF.write_manifest_list([dataclasses.replace(dels, first_row_id=5)], format_version=3, snapshot_id=1)
    assert exc.value.rule == "ICEBERG-LINEAGE-013"
    with pytest.raises(InvalidTable) as exc:
        MF.write_manifest_list([dataclasses.replace(mlist_entries(3)[0], first_row_id=5)], format_version=2, snapshot_id=1)
    assert exc.value.rule == "ICEBERG-GEN-002"


@pytest.mark.rule("ICEBERG-SEQ-013", "ICEBERG-MLIST-010", "ICEBERG-MLIST-011", "ICEBERG-SEQ-012")
def test_manifest_file_for_counts_and_min_sequence_number():
    m = MF.manifest_file_for(entries(2), manifest_path="m", manifest_length=1, spec=SPEC, schema=SCHEMA, added_snapshot_id=77, sequence_number=6)
    assert (m.added_files_count, m.existing_files_count, m.deleted_files_count) == (1, 1, 1)
    assert (m.added_rows_count, m.existing_rows_count, m.deleted_rows_count) == (10, 3, 10)
    assert m.sequence_number == 6 and m.min_sequence_number == 4  # EXISTING seq 4 < inherited 6; DELETED not counted


@pytest.mark.rule("ICEBERG-MLIST-014", "ICEBERG-MLIST-015", "ICEBERG-MLIST-016", "ICEBERG-MLIST-017")
def test_partition_summaries_nulls_nans_and_signed_zeros():
    parts = [{1000: "b", 1001: 0.0, 1002: 5}, {1000: None, 1001: -0.0, 1002: 7}, {1000: "a", 1001: float("nan"), 1002: None}]
    s = MF.summarize_partitions(SPEC, SCHEMA, parts)
    assert s[0] == MF.FieldSummary(contains_null=True, contains_nan=None, lower_bound=b"a", upper_bound=b"b")
    assert s[1].contains_nan is True and s[1].contains_null is False
    assert s[1].lower_bound == struct.pack("<d", -0.0) and s[1].upper_bound == struct.pack("<d", 0.0)
    assert s[2].lower_bound == struct.pack("<i", 5) and s[2].upper_bound == struct.pack("<i", 7) and s[2].contains_null
    assert s[3] == MF.FieldSummary(contains_null=True, contains_nan=None)  # every value null -> no bounds
    only_nan = MF.summarize_partitions(SPEC, SCHEMA, [{1001: float("nan")}])[1]
    assert only_nan.lower_bound is None and only_nan.contains_nan


@pytest.mark.rule("ICEBERG-MANIFEST-032", "ICEBERG-SERDE-011")
def test_nan_is_never_a_bound_and_unencodable_values_are_kit_errors():
    with pytest.raises(InvalidTable) as exc:
        MF.encode_bounds({3: float("nan")}, SCHEMA)
    assert exc.value.rule == "ICEBERG-MANIFEST-032"
    f32 = T.Schema(schema_id=0, fields=(T.NestedField(id=1, name="x", type=T.FLOAT),))
    with pytest.raises(InvalidTable, match="32-bit float"):
        MF.encode_bounds({1: 3.4028235677973366e38}, f32)
    with pytest.raises(InvalidTable, match="bound for unknown field id 9"):
        MF.encode_bounds({9: 1}, SCHEMA)


@pytest.mark.rule("ICEBERG-EVOL-005", "ICEBERG-MANIFEST-031")
def test_bounds_written_before_a_promotion_decode_with_the_new_type():
    old = T.Schema(schema_id=0, fields=(T.NestedField(id=1, name="id", type=T.INT, required=True),))
    raw = MF.encode_bounds({1: 7}, old)
    assert len(raw[1]) == 4 and MF.decode_bounds(raw, SCHEMA) == {1: 7}
    assert MF.decode_bounds({99: b"x"}, SCHEMA) == {}  # dropped column: ignored


# ---------------------------------------------------------------------------------------------
# Reading by field id, and bad input


def _rename(data: bytes, renames: dict[int, str], drop: set[int] = frozenset(), strip_ids: bool = False, meta_update=None) -> bytes:
    """Rewrite an Avro file with top-level fields renamed/dropped (by id) or ids stripped."""
    r = fastavro.reader(io.BytesIO(data))
    meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in r.metadata.items() if not k.startswith("avro.")}
    schema = json.loads(r.metadata["avro.schema"])
    records = list(fastavro.reader(io.BytesIO(data), return_record_name=False))
    names = {f["field-id"]: f["name"] for f in schema["fields"]}
    new_fields = []
    for f in schema["fields"]:
        if f["field-id"] in drop:
            continue
        f = dict(f)
        if f["field-id"] in renames:
            f["name"] = renames[f["field-id"]]
        if strip_ids:
            f.pop("field-id")
        new_fields.append(f)
    schema["fields"] = new_fields
    out_records = [{(renames.get(fid, n)): rec[n] for fid, n in names.items() if fid not in drop} for rec in records]
    if meta_update:
        meta_update(meta)
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), out_records, metadata=meta)
    return buf.getvalue()


@pytest.mark.rule("ICEBERG-MLIST-002", "ICEBERG-FMT-006")
def test_manifest_list_is_read_by_field_id_not_name():
    # Java's v1 lists name field 504 "added_data_files_count"; ids are what count.
    ms = mlist_entries(2)
    data = MF.write_manifest_list(ms, format_version=2, snapshot_id=77)
    renamed = _rename(data, {504: "added_data_files_count", 500: "path_of_manifest"})
    assert MF.read_manifest_list(renamed) == tuple(ms)


@pytest.mark.rule("ICEBERG-GEN-005", "ICEBERG-MLIST-003", "ICEBERG-MLIST-009", "ICEBERG-FMT-006")
@pytest.mark.parametrize("mutation,rule", [
    (dict(drop={500}), "ICEBERG-MLIST-003"),
    (dict(drop={503}), "ICEBERG-MLIST-009"),
    (dict(drop={502}), "ICEBERG-MLIST-005"),
    (dict(strip_ids=True), "ICEBERG-FMT-006"),
])
def test_manifest_list_missing_required_field_is_invalid(mutation, rule):
    data = _rename(MF.write_manifest_list(mlist_entries(2), format_version=2, snapshot_id=77), {}, **mutation)
    with pytest.raises(InvalidTable) as exc:
        MF.read_manifest_list(data, path="snap.avro")
    assert exc.value.rule == rule and exc.value.path == "snap.avro"


@pytest.mark.rule("ICEBERG-MANIFEST-002", "ICEBERG-MLIST-002")
@pytest.mark.parametrize("cut", [0, 3, 20, 200, -30])
def test_truncated_or_garbage_avro_is_invalid(cut):
    data = write(2)
    bad = data[:cut] if cut >= 0 else data[:cut]
    with pytest.raises(InvalidTable, match="not a readable Avro file"):
        MF.read_manifest(bad, path="m.avro")
    with pytest.raises(InvalidTable, match="not a readable Avro file"):
        MF.read_manifest_list(bad)
    with pytest.raises(InvalidTable):
        MF.read_manifest(b"Obj\x01" + bytes(range(200)))


def _entry_file(rec_update=None, meta_update=None, version=2, schema_update=None):
    ptype = P.partition_type(SPEC, SCHEMA)
    etype = MF.manifest_entry_type(ptype, version)
    avro_schema = A.to_avro_schema(etype, record_name="manifest_entry")
    rec = {"status": MF.ADDED, "snapshot_id": 1, "sequence_number": None, "file_sequence_number": None,
           "data_file": MF._data_file_record(data_file("x"), ptype, version)}
    meta = {"schema": T.schema_to_json(SCHEMA), "schema-id": "3", "partition-spec": json.dumps(P.partition_fields_to_list(SPEC, format_version=2)),
            "partition-spec-id": "2", "format-version": str(version), "content": "data"}
    if rec_update:
        rec_update(rec)
    if meta_update:
        meta_update(meta)
    if schema_update:
        schema_update(avro_schema)
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(avro_schema), [rec], metadata=meta)
    return buf.getvalue()


def _df_fields(s):
    return [f for f in s["fields"] if f["field-id"] == 2][0]["type"]["fields"]


@pytest.mark.rule("ICEBERG-GEN-005", "ICEBERG-MANIFEST-004", "ICEBERG-MANIFEST-006", "ICEBERG-MANIFEST-007", "ICEBERG-MANIFEST-008",
                  "ICEBERG-MANIFEST-009", "ICEBERG-MANIFEST-018", "ICEBERG-MANIFEST-019", "ICEBERG-MANIFEST-020", "ICEBERG-MANIFEST-017",
                  "ICEBERG-FMT-006", "ICEBERG-MANIFEST-001", "ICEBERG-META-004")
@pytest.mark.parametrize("kw,rule,fragment", [
    (dict(meta_update=lambda m: m.pop("schema")), "ICEBERG-MANIFEST-004", "schema"),
    (dict(meta_update=lambda m: m.update({"schema": "{"})), "ICEBERG-MANIFEST-004", "schema"),
    (dict(meta_update=lambda m: m.pop("partition-spec")), "ICEBERG-MANIFEST-006", "partition-spec"),
    (dict(meta_update=lambda m: m.update({"partition-spec": json.dumps(P.partition_spec_to_dict(SPEC, format_version=2))})), "ICEBERG-MANIFEST-006", "bare fields list"),
    (dict(meta_update=lambda m: m.pop("partition-spec-id")), "ICEBERG-MANIFEST-007", "partition-spec-id"),
    (dict(meta_update=lambda m: m.update({"partition-spec-id": "two"})), "ICEBERG-MANIFEST-007", "partition-spec-id"),
    (dict(meta_update=lambda m: m.pop("content")), "ICEBERG-MANIFEST-009", "content"),
    (dict(meta_update=lambda m: m.update({"content": "rows"})), "ICEBERG-MANIFEST-009", "content"),
    (dict(meta_update=lambda m: m.update({"content": "deletes"})), "ICEBERG-MANIFEST-001", "content"),
    (dict(meta_update=lambda m: m.update({"format-version": "9"})), "ICEBERG-META-004", "format-version"),
    (dict(rec_update=lambda r: r["data_file"].update({"file_format": "CSV"})), "ICEBERG-MANIFEST-019", "file_format"),
    (dict(rec_update=lambda r: r["data_file"].update({"content": 5})), "ICEBERG-MANIFEST-017", "content"),
    (dict(rec_update=lambda r: r.update({"status": 5})), "ICEBERG-MANIFEST-010", "status"),
    (dict(schema_update=lambda s: _df_fields(s).pop(1)), "ICEBERG-MANIFEST-018", "100"),
    (dict(schema_update=lambda s: _df_fields(s).pop(4)), "ICEBERG-MANIFEST-021", "103"),
    (dict(schema_update=lambda s: _df_fields(s)[1].pop("field-id")), "ICEBERG-FMT-006", "field-id"),
    (dict(schema_update=lambda s: _df_fields(s)[4].update({"type": "string"}), rec_update=lambda r: r["data_file"].update({"record_count": "10"})),
     "ICEBERG-MANIFEST-021", "record_count"),
    (dict(schema_update=lambda s: s["fields"][0].update({"type": "string"}), rec_update=lambda r: r.update({"status": "1"})),
     "ICEBERG-MANIFEST-010", "status"),
    (dict(meta_update=lambda m: m.update({"partition-spec": "[]"})), "ICEBERG-MANIFEST-020", "do not match"),
])
def test_bad_manifests_are_invalid_with_context(kw, rule, fragment):
    from reference_impl.errors import LakeconfError
    data = _entry_file(**kw)
    with pytest.raises(LakeconfError) as exc:
        MF.read_manifest(data, path="s3://b/t/metadata/m.avro")
    assert exc.value.rule == rule and fragment in str(exc.value)
    assert exc.value.path == "s3://b/t/metadata/m.avro"


@pytest.mark.rule("ICEBERG-GEN-004", "ICEBERG-MANIFEST-005")
def test_v2_manifest_without_schema_id_is_read_like_java_writes_it():
    data = _entry_file(meta_update=lambda m: m.pop("schema-id"))
    m = MF.read_manifest(data)
    assert m.metadata.schema_id is None
    assert [v.rule for v in MF.validate_manifest(m)] == ["ICEBERG-MANIFEST-005"]


@pytest.mark.rule("ICEBERG-MANIFEST-034", "ICEBERG-MANIFEST-035", "ICEBERG-MLIST-010", "ICEBERG-MLIST-011", "ICEBERG-SEQ-013",
                  "ICEBERG-MLIST-013", "ICEBERG-MANIFEST-003", "ICEBERG-MLIST-006", "ICEBERG-DV-008", "ICEBERG-DV-001", "ICEBERG-MANIFEST-037")
def test_validate_manifest_against_its_list_entry():
    m = MF.read_manifest(write(2), manifest_file=mfile(2))
    good = MF.manifest_file_for(m.entries, manifest_path="m", manifest_length=1, spec=SPEC, schema=SCHEMA, added_snapshot_id=99, sequence_number=9)
    assert MF.validate_manifest(m, good) == []
    bad = dataclasses.replace(good, added_files_count=5, existing_rows_count=0, min_sequence_number=1, partitions=(), partition_spec_id=0, content=1)
    rules = {v.rule for v in MF.validate_manifest(m, bad)}
    assert {"ICEBERG-MLIST-010", "ICEBERG-MLIST-011", "ICEBERG-SEQ-013", "ICEBERG-MLIST-013", "ICEBERG-MANIFEST-003", "ICEBERG-MLIST-006"} <= rules
    eq = MF.read_manifest(write(3, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("e", content=MF.EQUALITY_DELETES)),
                                    MF.ManifestEntry(status=MF.ADDED, data_file=data_file("dv", content=MF.POSITION_DELETES, file_format="puffin"))],
                                content=MF.MANIFEST_DELETES))
    # The DV also keeps data_file()'s sort_order_id 0, which position deletes should leave null.
    assert {v.rule for v in MF.validate_manifest(eq)} == {"ICEBERG-MANIFEST-035", "ICEBERG-DV-008", "ICEBERG-MANIFEST-037"}
    v2dv = MF.read_manifest(write(2, [MF.ManifestEntry(status=MF.ADDED, data_file=data_file("dv", content=MF.POSITION_DELETES, file_format="puffin",
                                                                                           sort_order_id=None, referenced_data_file="s3://b/t/d"))],
                                  content=MF.MANIFEST_DELETES))
    assert {v.rule for v in MF.validate_manifest(v2dv)} == {"ICEBERG-DV-001", "ICEBERG-DV-008"}


@pytest.mark.rule("ICEBERG-MANIFEST-020", "ICEBERG-FMT-006")
def test_partition_names_are_made_avro_legal_and_read_back_by_id():
    schema = T.Schema(schema_id=0, fields=(T.NestedField(id=1, name="event date", type=T.DATE),))
    spec = P.PartitionSpec(spec_id=0, fields=(
        P.PartitionField(source_ids=(1,), field_id=1000, name="event-day", transform=X.IdentityTransform()),
        P.PartitionField(source_ids=(1,), field_id=1001, name="1st", transform=X.MonthTransform()),
    ))
    assert MF.avro_safe_name("event-day") == "event_x2Dday" and MF.avro_safe_name("1st") == "_1st" and MF.avro_safe_name("ok_1") == "ok_1"
    e = MF.ManifestEntry(status=MF.ADDED, data_file=data_file("p", part={1000: 19000, 1001: 624}))
    data = MF.write_manifest([e], schema=schema, spec=spec, format_version=2)
    pfields = [f for f in _df_fields(avro_header(data)[0]) if f["field-id"] == 102][0]["type"]["fields"]
    assert [(f["name"], f["field-id"]) for f in pfields] == [("event_x2Dday", 1000), ("_1st", 1001)]
    m = MF.read_manifest(data)
    assert m.entries[0].data_file.partition == {1000: 19000, 1001: 624}
    assert m.metadata.spec.fields[0].name == "event-day"


@pytest.mark.rule("ICEBERG-GEN-004", "ICEBERG-PART-032")
def test_v1_manifest_spec_without_field_ids_reads_in_a_v2_table():
    es = [MF.ManifestEntry(status=MF.ADDED, snapshot_id=1, data_file=data_file("p"))]
    data = MF.write_manifest(es, schema=SCHEMA, spec=dataclasses.replace(SPEC, spec_id=0), format_version=1)
    bare = _rename(data, {}, meta_update=lambda m: m.update({"partition-spec": json.dumps(
        [{k: v for k, v in f.items() if k != "field-id"} for f in json.loads(m["partition-spec"])])}))
    m = MF.read_manifest(bare, table_version=2, manifest_file=mfile(2, partition_spec_id=0, sequence_number=0))
    assert [f.field_id for f in m.metadata.spec.fields] == [1000, 1001, 1002, 1003, 1004]
    assert m.entries[0].sequence_number == 0
    with pytest.raises(InvalidTable, match="v3 manifest cannot belong to a v2 table"):
        MF.read_manifest(write(3), table_version=2)


@pytest.mark.rule("ICEBERG-MLIST-002", "ICEBERG-MANIFEST-002")
def test_a_damaged_item_count_is_refused_before_it_is_allocated():
    # One manifest_file record whose `partitions` array claims 2**40 items. Every item of a manifest
    # schema takes at least a byte, so decoding runs out of bytes after a few: refused, nothing large built.
    empty = MF.write_manifest_list([], format_version=1, snapshot_id=1, codec="null")
    sync = empty[-16:]
    payload = (write_long(len(b"m")) + b"m" + write_long(5) + write_long(0) + write_long(1)  # path, length, spec id, snapshot id
               + write_long(0) * 3 + write_long(0) * 3  # six null counts (union branch 0)
               + write_long(1) + write_long(2**40)  # partitions: non-null branch, then the huge count
               + write_long(0) * 2)
    data = empty + write_long(1) + write_long(len(payload)) + payload + sync
    with pytest.raises(InvalidTable, match="not a readable Avro file"):
        MF.read_manifest_list(data, path="snap.avro")
