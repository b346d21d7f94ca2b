"""Table Metadata JSON per format version (reference_impl.iceberg.metadata)."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
from types import MappingProxyType

import pytest

from conformance.roundtrip import assert_roundtrip
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T

UUID = "fb072c92-a02b-11e9-ae9c-1bb7bc9eca94"  # Appendix C example values from here on
LOCATION = "s3://b/wh/data.db/table"
SCHEMA_JSON = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "data", "required": False, "type": "string"},
    {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
]}
SCHEMA_1_JSON = {"type": "struct", "schema-id": 1, "fields": SCHEMA_JSON["fields"] + [
    {"id": 4, "name": "tags", "required": False, "type": {"type": "list", "element-id": 5, "element": "string", "element-required": False}},
]}
SPEC_JSON = {"spec-id": 0, "fields": [{"source-id": 3, "field-id": 1000, "name": "ts_day", "transform": "day"}]}
ORDER_JSON = {"order-id": 1, "fields": [{"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"}]}
S1, S2 = 3051729675574597004, 3055729675574597004


def v2_doc() -> dict:
    """A v2 document assembled from the spec's Appendix C examples (two snapshots, a tag, both logs)."""
    return copy.deepcopy({
        "format-version": 2,
        "table-uuid": UUID,
        "location": LOCATION,
        "last-sequence-number": 2,
        "last-updated-ms": 1515100955770,
        "last-column-id": 22,
        "schemas": [SCHEMA_JSON, SCHEMA_1_JSON],
        "current-schema-id": 1,
        "partition-specs": [SPEC_JSON],
        "default-spec-id": 0,
        "last-partition-id": 1000,
        "properties": {"write.format.default": "avro", "commit.retry.num-retries": "4"},
        "current-snapshot-id": S2,
        "snapshots": [
            {"snapshot-id": S1, "sequence-number": 1, "timestamp-ms": 1515100955770, "summary": {"operation": "append"},
             "manifest-list": "s3://b/wh/data.db/table/metadata/s1.avro", "schema-id": 0},
            {"snapshot-id": S2, "parent-snapshot-id": S1, "sequence-number": 2, "timestamp-ms": 1515100955770,
             "summary": {"operation": "overwrite", "added-data-files": "4"},
             "manifest-list": "s3://b/wh/data.db/table/metadata/s2.avro", "schema-id": 1},
        ],
        "snapshot-log": [{"snapshot-id": S1, "timestamp-ms": 1515100955770}, {"snapshot-id": S2, "timestamp-ms": 1515100955770}],
        "metadata-log": [{"metadata-file": "s3://bucket/.../v1.json", "timestamp-ms": 1515100955000}],
        "sort-orders": [{"order-id": 0, "fields": []}, ORDER_JSON],
        "default-sort-order-id": 1,
        "refs": {"main": {"snapshot-id": S2, "type": "branch", "min-snapshots-to-keep": 2, "max-snapshot-age-ms": 86400000},
                 "test": {"snapshot-id": S1, "type": "tag", "max-ref-age-ms": 10000000}},
        "statistics": [{"snapshot-id": S1, "statistics-path": "s3://b/wh/data.db/table/metadata/stats.puffin",
                        "file-size-in-bytes": 413, "file-footer-size-in-bytes": 42,
                        "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": S1, "sequence-number": 1,
                                           "fields": [1], "properties": {"ndv": "3"}}]}],
        "partition-statistics": [{"snapshot-id": S1, "statistics-path": "s3://b/wh/data.db/table/metadata/ps.parquet", "file-size-in-bytes": 43}],
    })


def v3_doc() -> dict:
    d = v2_doc()
    d["format-version"] = 3
    d["next-row-id"] = 300
    d["snapshots"][0].update({"first-row-id": 0, "added-rows": 100})
    d["snapshots"][1].update({"first-row-id": 100, "added-rows": 200, "key-id": "5f819b"})
    d["encryption-keys"] = [{"key-id": "5f819b", "encrypted-key-metadata": "aWNlYmVyZwo=", "properties": {"kms": "local"}},
                            {"key-id": "k2", "encrypted-key-metadata": "AAAA", "encrypted-by-id": "5f819b"}]
    return d


def v1_doc() -> dict:
    return copy.deepcopy({
        "format-version": 1,
        "table-uuid": UUID,
        "location": LOCATION,
        "last-updated-ms": 1515100955770,
        "last-column-id": 3,
        "schema": SCHEMA_JSON,
        "partition-spec": [{"source-id": 3, "name": "ts_day", "transform": "day"}],
        "properties": {},
        "current-snapshot-id": S1,
        "snapshots": [{"snapshot-id": S1, "timestamp-ms": 1515100955770, "summary": {"operation": "append"},
                       "manifest-list": "s3://b/wh/data.db/table/metadata/s1.avro"}],
        "snapshot-log": [{"snapshot-id": S1, "timestamp-ms": 1515100955770}],
    })


DOCS = {1: v1_doc, 2: v2_doc, 3: v3_doc}


# ---------------------------------------------------------------------------------------------
# Parsing the spec's examples


@pytest.mark.rule("ICEBERG-SERDE-007", "ICEBERG-SERDE-025", "ICEBERG-META-039", "ICEBERG-META-041", "ICEBERG-STATS-002", "ICEBERG-STATS-003", "ICEBERG-STATS-004")
def test_appendix_c_example_v2_parses_into_the_model():
    md = M.parse_metadata(v2_doc())
    assert md.format_version == 2 and md.table_uuid == UUID and md.location == LOCATION
    assert md.schema().schema_id == 1 and md.schema().find_field(5).type == T.STRING
    assert md.spec().fields[0] == P.PartitionField(source_ids=(3,), field_id=1000, name="ts_day", transform=X.DayTransform())
    assert md.sort_order().order_id == 1
    assert md.properties["commit.retry.num-retries"] == "4"
    assert md.refs["test"] == M.SnapshotRef(snapshot_id=S1, type="tag", max_ref_age_ms=10000000)
    assert md.refs["main"].min_snapshots_to_keep == 2 and md.refs["main"].is_branch
    assert md.snapshot_by_id(S2).parent_snapshot_id == S1 and md.snapshot_by_id(S2).operation == "overwrite"
    assert md.snapshot_log[0] == M.SnapshotLogEntry(snapshot_id=S1, timestamp_ms=1515100955770)
    assert md.metadata_log[0].metadata_file == "s3://bucket/.../v1.json"
    assert md.statistics[0].blob_metadata[0].fields == (1,) and md.statistics[0].file_footer_size_in_bytes == 42
    assert md.partition_statistics[0].file_size_in_bytes == 43
    assert M.validate_metadata(md) == []


@pytest.mark.rule("ICEBERG-META-042", "ICEBERG-META-043", "ICEBERG-SNAP-010", "ICEBERG-SNAP-011", "ICEBERG-ENC-001")
def test_v3_fields_parse():
    md = M.parse_metadata(v3_doc())
    assert md.next_row_id == 300
    assert md.snapshot_by_id(S2).first_row_id == 100 and md.snapshot_by_id(S2).added_rows == 200 and md.snapshot_by_id(S2).key_id == "5f819b"
    assert md.encryption_keys[1] == M.EncryptionKey(key_id="k2", encrypted_key_metadata="AAAA", encrypted_by_id="5f819b")
    assert M.validate_metadata(md) == []


@pytest.mark.rule("ICEBERG-ENC-001")
def test_appendix_c_encryption_key_example_uses_a_key_the_field_table_does_not_name():
    # Appendix C shows {"key-id", "key-metadata"}; the Encryption Keys table requires "encrypted-key-metadata".
    d = v3_doc()
    d["encryption-keys"] = [{"key-id": "5f819b", "key-metadata": "aWNlYmVyZwo="}]
    with pytest.raises(InvalidTable, match="encrypted-key-metadata") as exc:
        M.parse_metadata(d)
    assert exc.value.rule == "ICEBERG-ENC-001"


@pytest.mark.rule("ICEBERG-META-017", "ICEBERG-META-022", "ICEBERG-META-012", "ICEBERG-SEQ-011", "ICEBERG-PART-032")
def test_v1_singular_schema_and_spec_and_defaults():
    md = M.parse_metadata(v1_doc())
    assert md.schemas == (T.parse_schema(SCHEMA_JSON),) and md.current_schema_id == 0
    assert md.partition_specs[0].fields[0].field_id == 1000 and md.default_spec_id == 0
    assert md.last_partition_id == 1000  # derived when a v1 file leaves it out
    assert md.last_sequence_number == 0 and md.snapshots[0].sequence_number == 0
    assert md.sort_orders == (P.UNSORTED,) and md.default_sort_order_id == 0
    assert md.effective_refs()["main"] == M.SnapshotRef(snapshot_id=S1, type="branch")


@pytest.mark.rule("ICEBERG-META-018", "ICEBERG-META-019")
def test_v1_prefers_schemas_list_over_the_deprecated_schema():
    d = v1_doc()
    d["schemas"] = [SCHEMA_JSON, SCHEMA_1_JSON]
    d["current-schema-id"] = 1
    d["partition-specs"] = [SPEC_JSON]
    d["default-spec-id"] = 0
    md = M.parse_metadata(d)
    assert md.schema().schema_id == 1 and len(md.schemas) == 2


@pytest.mark.rule("ICEBERG-META-045")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_current_snapshot_minus_one_means_none(version):
    d = DOCS[version]()
    d["current-snapshot-id"] = -1
    d.pop("refs", None)
    d["snapshot-log"] = []
    md = M.parse_metadata(d)
    assert md.current_snapshot_id is None and "main" not in md.effective_refs()
    assert "current-snapshot-id" not in M.metadata_to_dict(md)


@pytest.mark.rule("ICEBERG-META-044")
def test_gzip_metadata_is_read():
    data = gzip.compress(json.dumps(v2_doc()).encode())
    assert M.read_metadata_file(data) == M.parse_metadata(v2_doc())
    with pytest.raises(InvalidTable, match="GZIP"):
        M.read_metadata_file(data[:20])


# ---------------------------------------------------------------------------------------------
# Round trips and the Writer requirements


@pytest.mark.rule("ICEBERG-GEN-001", "ICEBERG-GEN-002", "ICEBERG-SERDE-007", "ICEBERG-SERDE-025")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_round_trip_per_version(version):
    md = M.parse_metadata(DOCS[version]())
    assert_roundtrip(md, M.metadata_to_dict, M.parse_metadata)
    assert M.parse_metadata(M.metadata_to_json(md)) == md


@pytest.mark.rule("ICEBERG-GEN-001", "ICEBERG-GEN-002", "ICEBERG-GEN-003", "ICEBERG-META-018", "ICEBERG-COMPAT-001", "ICEBERG-SNAP-005")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_serialized_keys_follow_the_writer_requirements(version):
    out = M.metadata_to_dict(M.parse_metadata(DOCS[version]()))
    for key in M.REQUIRED_KEYS[version]:
        assert key in out, key
    for key in M.OMITTED_KEYS[version]:
        assert key not in out, key
    for s in out["snapshots"]:
        assert ("sequence-number" in s) == (version >= 2)
        assert "manifests" not in s
        assert ("first-row-id" in s) == (version >= 3)
    assert M.writer_violations(out) == []


@pytest.mark.rule("ICEBERG-GEN-002")
def test_v1_write_drops_refs_and_v3_only_fields():
    md = M.parse_metadata(v1_doc())
    md = dataclasses.replace(md, refs=MappingProxyType({"t": M.SnapshotRef(snapshot_id=S1, type="tag")}))
    out = M.metadata_to_dict(md)
    assert "refs" not in out and "last-sequence-number" not in out and "next-row-id" not in out


@pytest.mark.rule("ICEBERG-GEN-001", "ICEBERG-GEN-002", "ICEBERG-META-045")
def test_writer_violations_flag_missing_and_blank_cell_fields():
    d = v1_doc()
    d["refs"] = {}
    d["last-sequence-number"] = 0
    rules = [(v.rule, v.where) for v in M.writer_violations(d)]
    assert ("ICEBERG-GEN-002", "refs") in rules and ("ICEBERG-GEN-002", "last-sequence-number") in rules
    d = v2_doc()
    del d["last-partition-id"]
    d["schema"] = SCHEMA_JSON
    d["snapshots"][1]["manifests"] = ["m.avro"]
    rules = [(v.rule, v.where) for v in M.writer_violations(d)]
    assert ("ICEBERG-GEN-001", "last-partition-id") in rules and ("ICEBERG-GEN-002", "schema") in rules
    assert ("ICEBERG-GEN-002", "snapshots[1]") in rules
    d = v3_doc()
    d["current-snapshot-id"] = -1
    del d["snapshots"][1]["added-rows"]
    rules = [(v.rule, v.where) for v in M.writer_violations(d)]
    assert ("ICEBERG-META-045", "current-snapshot-id") in rules and ("ICEBERG-GEN-001", "snapshots[1]") in rules


@pytest.mark.rule("ICEBERG-GEN-001")
def test_metadata_cannot_be_written_as_another_version():
    md = M.parse_metadata(v2_doc())
    with pytest.raises(InvalidTable, match="upgrade"):
        M.metadata_to_dict(md, format_version=3)
    with pytest.raises(InvalidTable, match="next-row-id"):
        M.metadata_to_dict(dataclasses.replace(md, format_version=3))


# ---------------------------------------------------------------------------------------------
# Bad input -> InvalidTable naming the field and the rule


@pytest.mark.rule("ICEBERG-GEN-001", "ICEBERG-GEN-007", "ICEBERG-META-003", "ICEBERG-META-005", "ICEBERG-META-008", "ICEBERG-META-010",
                  "ICEBERG-META-013", "ICEBERG-META-015", "ICEBERG-META-019", "ICEBERG-META-020", "ICEBERG-META-023",
                  "ICEBERG-META-024", "ICEBERG-META-026", "ICEBERG-META-037", "ICEBERG-META-038", "ICEBERG-META-042")
@pytest.mark.parametrize("version,key", [(v, k) for v in (1, 2, 3) for k in M.REQUIRED_KEYS[v]])
def test_missing_required_field_is_invalid(version, key):
    d = DOCS[version]()
    d.pop(key, None)
    with pytest.raises(InvalidTable) as exc:
        M.parse_metadata(d, path="s3://b/t/metadata/v3.metadata.json")
    assert key in str(exc.value) and exc.value.rule and exc.value.rule.startswith("ICEBERG-")
    assert exc.value.path == "s3://b/t/metadata/v3.metadata.json"


@pytest.mark.rule("ICEBERG-SERDE-025", "ICEBERG-META-028", "ICEBERG-SNAP-006", "ICEBERG-REF-001", "ICEBERG-STATS-003", "ICEBERG-SNAP-004")
@pytest.mark.parametrize("mutate,fragment", [
    (lambda d: d.update({"last-column-id": "22"}), "last-column-id"),
    (lambda d: d.update({"last-updated-ms": 1.5}), "last-updated-ms"),
    (lambda d: d.update({"current-schema-id": True}), "current-schema-id"),
    (lambda d: d.update({"location": 5}), "location"),
    (lambda d: d.update({"table-uuid": "not-a-uuid"}), "table-uuid"),
    (lambda d: d.update({"properties": {"x": 4}}), "properties"),
    (lambda d: d.update({"schemas": {}}), "schemas"),
    (lambda d: d.update({"snapshots": [5]}), "snapshots[0]"),
    (lambda d: d["snapshots"][0].pop("timestamp-ms"), "timestamp-ms"),
    (lambda d: d["snapshots"][0].pop("manifest-list"), "manifest-list"),
    (lambda d: d["snapshots"][0].update({"summary": {"added-data-files": "1"}}), "operation"),
    (lambda d: d["snapshots"][0].update({"summary": {"operation": "append", "n": 1}}), "summary"),
    (lambda d: d["refs"]["test"].update({"type": "label"}), "branch"),
    (lambda d: d["refs"]["test"].pop("snapshot-id"), "snapshot-id"),
    (lambda d: d["statistics"][0]["blob-metadata"][0].update({"fields": ["1"]}), "fields"),
    (lambda d: d["statistics"][0].pop("file-footer-size-in-bytes"), "file-footer-size-in-bytes"),
    (lambda d: d["snapshot-log"][0].pop("snapshot-id"), "snapshot-log"),
    (lambda d: d["metadata-log"][0].update({"metadata-file": None}), "metadata-file"),
    (lambda d: d["schemas"][0]["fields"][0].pop("type"), "schemas[0]"),
    (lambda d: d["partition-specs"][0]["fields"][0].pop("field-id"), "field-id"),
    (lambda d: d["sort-orders"][1]["fields"][0].update({"direction": "up"}), "direction"),
])
def test_wrong_types_and_shapes_are_invalid_with_context(mutate, fragment):
    d = v2_doc()
    mutate(d)
    with pytest.raises(InvalidTable) as exc:
        M.parse_metadata(d, path="m.json")
    assert fragment in str(exc.value) and exc.value.rule
    assert exc.value.version == 2


@pytest.mark.rule("ICEBERG-META-004", "ICEBERG-META-003")
def test_unsupported_and_bad_format_versions():
    d = v3_doc()
    d["format-version"] = 4
    with pytest.raises(Unsupported) as exc:
        M.parse_metadata(d)
    assert exc.value.rule == "ICEBERG-META-004" and "4" in exc.value.feature
    for bad in (0, "2", None):
        d["format-version"] = bad
        with pytest.raises(InvalidTable, match="format-version"):
            M.parse_metadata(d)


@pytest.mark.rule("ICEBERG-META-001")
@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"\xff\xfe", "null", b'{"format-version": 2'])
def test_garbage_is_invalid_not_a_raw_error(raw):
    with pytest.raises(InvalidTable):
        M.parse_metadata(raw)


# ---------------------------------------------------------------------------------------------
# Upgrades (Appendix E)


@pytest.mark.rule("ICEBERG-COMPAT-003", "ICEBERG-META-006", "ICEBERG-META-012", "ICEBERG-LINEAGE-019", "ICEBERG-META-040")
def test_upgrade_v1_to_v2_to_v3_keeps_the_table_and_its_snapshots():
    v1 = M.parse_metadata(v1_doc())
    v2 = M.upgrade(v1, 2)
    assert v2.format_version == 2 and v2.table_uuid == UUID and v2.last_sequence_number == 0
    assert v2.refs["main"] == M.SnapshotRef(snapshot_id=S1, type="branch")
    assert v2.snapshots == v1.snapshots
    out2 = M.metadata_to_dict(v2)
    assert "schema" not in out2 and "partition-spec" not in out2 and out2["partition-specs"][0]["fields"][0]["field-id"] == 1000
    assert M.parse_metadata(out2) == v2 and M.validate_metadata(v2) == []
    v3 = M.upgrade(v2, 3)
    assert v3.next_row_id == 0 and v3.snapshots[0].first_row_id is None
    out3 = M.metadata_to_dict(v3)
    assert "first-row-id" not in out3["snapshots"][0] and out3["next-row-id"] == 0
    assert M.parse_metadata(out3) == v3 and M.validate_metadata(v3) == [] and M.writer_violations(out3) == []
    assert M.upgrade(v1, 3) == v3


@pytest.mark.rule("ICEBERG-META-005", "ICEBERG-COMPAT-003")
def test_upgrade_assigns_a_uuid_when_v1_had_none_and_refuses_downgrades():
    d = v1_doc()
    del d["table-uuid"]
    v2 = M.upgrade(M.parse_metadata(d), 2)
    assert v2.table_uuid and len(v2.table_uuid) == 36
    assert M.upgrade(M.parse_metadata(d), 2, table_uuid=UUID).table_uuid == UUID
    with pytest.raises(InvalidTable, match="downgrade"):
        M.upgrade(v2, 1)
    with pytest.raises(Unsupported):
        M.upgrade(v2, 4)


@pytest.mark.rule("ICEBERG-GEN-004", "ICEBERG-SEQ-011", "ICEBERG-LINEAGE-019")
def test_snapshots_from_before_an_upgrade_are_read_leniently():
    d = v3_doc()
    for s in d["snapshots"]:
        for k in ("first-row-id", "added-rows", "key-id"):
            s.pop(k, None)
    d["snapshots"][0].pop("sequence-number")
    d["snapshots"][0].pop("summary")
    md = M.parse_metadata(d)
    assert md.snapshots[0].sequence_number == 0 and md.snapshots[0].summary is None and md.snapshots[1].first_row_id is None
    assert M.validate_metadata(md) == []


# ---------------------------------------------------------------------------------------------
# validate_metadata: one mutation per rule


def _md(version=2, **changes):
    md = M.parse_metadata(DOCS[version]())
    return dataclasses.replace(md, **changes)


def _snap(md, sid, **changes):
    return tuple(dataclasses.replace(s, **changes) if s.snapshot_id == sid else s for s in md.snapshots)


def _schema_with(fields_json, sid=1):
    return T.parse_schema({"type": "struct", "schema-id": sid, "fields": fields_json})


BASE2 = M.parse_metadata(v2_doc())
BASE3 = M.parse_metadata(v3_doc())

MUTATIONS = [
    ("ICEBERG-META-020", lambda: _md(current_schema_id=7)),
    ("ICEBERG-META-021", lambda: _md(schemas=BASE2.schemas + (BASE2.schemas[0],))),
    ("ICEBERG-META-016", lambda: _md(last_column_id=4)),
    ("ICEBERG-SCHEMA-001", lambda: _md(schemas=(BASE2.schemas[0], _schema_with(SCHEMA_JSON["fields"] + [{"id": 2, "name": "dup", "required": False, "type": "int"}])))),
    ("ICEBERG-META-024", lambda: _md(default_spec_id=3)),
    ("ICEBERG-META-027", lambda: _md(last_partition_id=999)),
    ("ICEBERG-PART-035", lambda: _md(partition_specs=BASE2.partition_specs * 2)),
    ("ICEBERG-META-038", lambda: _md(default_sort_order_id=9)),
    ("ICEBERG-SORT-007", lambda: _md(sort_orders=BASE2.sort_orders + (BASE2.sort_orders[1],))),
    ("ICEBERG-SNAP-001", lambda: _md(snapshots=BASE2.snapshots + (BASE2.snapshots[0],))),
    ("ICEBERG-META-011", lambda: _md(last_sequence_number=1)),
    ("ICEBERG-SEQ-002", lambda: _md(snapshots=_snap(BASE2, S2, sequence_number=1), last_sequence_number=2)),
    ("ICEBERG-SNAP-002", lambda: _md(snapshots=_snap(BASE2, S1, parent_snapshot_id=S1))),
    ("ICEBERG-SNAP-005", lambda: _md(snapshots=_snap(BASE2, S1, manifests=("m.avro",)))),
    ("ICEBERG-SNAP-007", lambda: _md(snapshots=_snap(BASE2, S1, summary={"operation": "upsert"}))),
    ("ICEBERG-SNAP-006", lambda: _md(snapshots=_snap(BASE2, S1, summary=None))),
    ("ICEBERG-SNAP-004", lambda: _md(snapshots=_snap(BASE2, S1, manifest_list=None, manifests=("m.avro",)))),
    ("ICEBERG-SNAP-009", lambda: _md(snapshots=_snap(BASE2, S1, schema_id=42))),
    ("ICEBERG-META-029", lambda: _md(current_snapshot_id=1, refs=MappingProxyType({}), snapshot_log=())),
    ("ICEBERG-META-030", lambda: _md(current_snapshot_id=S1, snapshot_log=BASE2.snapshot_log[:1])),
    ("ICEBERG-REF-006", lambda: _md(refs=MappingProxyType({**BASE2.refs, "x": M.SnapshotRef(snapshot_id=5, type="tag")}))),
    ("ICEBERG-REF-005", lambda: _md(refs=MappingProxyType({**BASE2.refs, "main": M.SnapshotRef(snapshot_id=S2, type="tag")}))),
    ("ICEBERG-REF-004", lambda: _md(refs=MappingProxyType({**BASE2.refs, "main": M.SnapshotRef(snapshot_id=S2, type="branch", max_ref_age_ms=5)}))),
    ("ICEBERG-REF-004", lambda: _md(refs=MappingProxyType({**BASE2.refs, "t": M.SnapshotRef(snapshot_id=S1, type="tag", max_ref_age_ms=0)}))),
    ("ICEBERG-REF-002", lambda: _md(refs=MappingProxyType({**BASE2.refs, "t": M.SnapshotRef(snapshot_id=S1, type="tag", min_snapshots_to_keep=1)}))),
    ("ICEBERG-REF-002", lambda: _md(refs=MappingProxyType({**BASE2.refs, "b": M.SnapshotRef(snapshot_id=S1, type="branch", min_snapshots_to_keep=0)}))),
    ("ICEBERG-REF-003", lambda: _md(refs=MappingProxyType({**BASE2.refs, "t": M.SnapshotRef(snapshot_id=S1, type="tag", max_snapshot_age_ms=1)}))),
    ("ICEBERG-META-033", lambda: _md(snapshot_log=tuple(reversed(BASE2.snapshot_log)))),
    ("ICEBERG-META-033", lambda: _md(snapshot_log=(M.SnapshotLogEntry(snapshot_id=S2, timestamp_ms=10), M.SnapshotLogEntry(snapshot_id=S1, timestamp_ms=5)))),
    ("ICEBERG-META-034", lambda: _md(snapshot_log=(M.SnapshotLogEntry(snapshot_id=77, timestamp_ms=1),) + BASE2.snapshot_log)),
    ("ICEBERG-META-014", lambda: _md(last_updated_ms=1)),
    ("ICEBERG-META-035", lambda: _md(metadata_log=(M.MetadataLogEntry(metadata_file="b", timestamp_ms=5), M.MetadataLogEntry(metadata_file="a", timestamp_ms=1)))),
    ("ICEBERG-STATS-005", lambda: _md(partition_statistics=BASE2.partition_statistics * 2)),
    ("ICEBERG-LINEAGE-012", lambda: _md(3, next_row_id=250)),
    ("ICEBERG-LINEAGE-010", lambda: _md(3, snapshots=_snap(BASE3, S2, first_row_id=50))),
    ("ICEBERG-SNAP-010", lambda: _md(3, snapshots=_snap(BASE3, S2, added_rows=None))),
    ("ICEBERG-ENC-002", lambda: _md(3, snapshots=_snap(BASE3, S2, key_id="nope"))),
    ("ICEBERG-LINEAGE-020", lambda: _md(3, snapshots=_snap(BASE3, S2, first_row_id=None, added_rows=None))),
    ("ICEBERG-ENC-001", lambda: _md(3, encryption_keys=(dataclasses.replace(BASE3.encryption_keys[0], encrypted_key_metadata="not base64!"),))),
    ("ICEBERG-ENC-001", lambda: _md(3, encryption_keys=BASE3.encryption_keys + BASE3.encryption_keys[:1])),
    ("ICEBERG-STATS-002", lambda: _md(statistics=(dataclasses.replace(BASE2.statistics[0], key_metadata="%%"),))),
    ("ICEBERG-STATS-002", lambda: _md(statistics=BASE2.statistics * 2)),
    ("ICEBERG-SCHEMA-005", lambda: _md(schemas=(BASE2.schemas[0], _schema_with(SCHEMA_JSON["fields"] + [{"id": 4, "name": "v", "required": False, "type": "variant"}])))),
]


@pytest.mark.parametrize("rule,build", MUTATIONS, ids=[f"{r}-{i}" for i, (r, _b) in enumerate(MUTATIONS)])
def test_each_validation_rule_fires_on_its_mutation(rule, build, request):
    request.node.add_marker(pytest.mark.rule(rule))
    assert M.validate_metadata(BASE2) == [] and M.validate_metadata(BASE3) == []
    violations = M.validate_metadata(build())
    assert rule in {v.rule for v in violations}, violations
    assert all(v.message and v.where for v in violations)


@pytest.mark.rule("ICEBERG-SNAP-002")
def test_expired_parents_are_normal_unless_lineage_is_strict():
    md = _md(snapshots=BASE2.snapshots[1:], refs=MappingProxyType({"main": BASE2.refs["main"]}), snapshot_log=BASE2.snapshot_log[1:])
    assert M.validate_metadata(md) == []
    assert [v.rule for v in M.validate_metadata(md, strict_lineage=True)] == ["ICEBERG-SNAP-002"]


@pytest.mark.rule("ICEBERG-META-020", "ICEBERG-META-024", "ICEBERG-META-038")
def test_accessors_raise_invalid_table_for_dangling_ids():
    with pytest.raises(InvalidTable, match="current-schema-id"):
        _md(current_schema_id=7).schema()
    with pytest.raises(InvalidTable, match="default-spec-id"):
        _md(default_spec_id=7).spec()
    with pytest.raises(InvalidTable, match="default-sort-order-id"):
        _md(default_sort_order_id=7).sort_order()


def test_model_is_frozen_and_docs_are_not_shared():
    md = M.parse_metadata(v2_doc())
    with pytest.raises(dataclasses.FrozenInstanceError):
        md.location = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        md.properties["x"] = "y"  # type: ignore[index]
    d = v2_doc()
    before = copy.deepcopy(d)
    M.parse_metadata(d)
    assert d == before


# ---------------------------------------------------------------------------------------------
# Property: any model a writer can produce survives serialize -> parse, per version

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_longs = st.integers(min_value=1, max_value=2**63 - 1)
_names = st.text(alphabet="abcdefghij-_/.", min_size=1, max_size=8)
_strmaps = st.dictionaries(_names, st.text(max_size=6), max_size=3)


@st.composite
def metadata_models(draw, version):
    n = draw(st.integers(0, 4))
    ids = draw(st.lists(_longs, min_size=n, max_size=n, unique=True))
    snaps, ts, parent, row = [], draw(st.integers(0, 2**40)), None, 0
    upgraded_at = draw(st.integers(0, n))  # snapshots before this index predate the v3 upgrade
    for i, sid in enumerate(ids):
        ts += draw(st.integers(0, 1000))
        summary = dict(draw(_strmaps), operation=draw(st.sampled_from(M.OPERATIONS)))
        added = draw(st.integers(0, 1000))
        lineage = version >= 3 and i >= upgraded_at
        snaps.append(M.Snapshot(
            snapshot_id=sid, timestamp_ms=ts, parent_snapshot_id=parent, sequence_number=i + 1 if version >= 2 else 0,
            manifest_list=f"s3://b/t/metadata/snap-{sid}.avro", summary=MappingProxyType(summary),
            schema_id=draw(st.none() | st.just(0)),
            first_row_id=row if lineage else None, added_rows=added if lineage else None,
            key_id=draw(st.none() | st.just("k1")) if version >= 3 else None))
        row += added if lineage else 0
        parent = sid if draw(st.booleans()) else None
    refs = {}
    if version >= 2 and ids:
        refs["main"] = M.SnapshotRef(snapshot_id=ids[-1], type="branch", min_snapshots_to_keep=draw(st.none() | st.integers(1, 9)))
        for name in draw(st.lists(_names.filter(lambda x: x != "main"), max_size=2, unique=True)):
            kind = draw(st.sampled_from(["tag", "branch"]))
            refs[name] = M.SnapshotRef(snapshot_id=draw(st.sampled_from(ids)), type=kind, max_ref_age_ms=draw(st.none() | _longs),
                                       max_snapshot_age_ms=draw(st.none() | _longs) if kind == "branch" else None)
    md = M.parse_metadata(DOCS[version]())
    return dataclasses.replace(
        md, snapshots=tuple(snaps), current_snapshot_id=ids[-1] if ids else None, refs=MappingProxyType(refs),
        snapshot_log=tuple(M.SnapshotLogEntry(snapshot_id=s.snapshot_id, timestamp_ms=s.timestamp_ms) for s in snaps),
        last_sequence_number=len(ids) if version >= 2 else 0, last_updated_ms=ts + 1,
        properties=MappingProxyType(draw(_strmaps)), statistics=(), partition_statistics=(), metadata_log=(),
        next_row_id=row + draw(st.integers(0, 5)) if version >= 3 else None,
        encryption_keys=(M.EncryptionKey(key_id="k1", encrypted_key_metadata="AA=="),) if version >= 3 else ())


@pytest.mark.rule("ICEBERG-GEN-001", "ICEBERG-GEN-002", "ICEBERG-SERDE-007")
@pytest.mark.parametrize("version", [1, 2, 3])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_property_round_trip_and_validity(version, data):
    md = data.draw(metadata_models(version))
    assert_roundtrip(md, M.metadata_to_dict, M.parse_metadata)
    assert M.writer_violations(M.metadata_to_dict(md)) == []
    assert M.validate_metadata(md) == []
