"""Manifests and manifest lists in Avro: written by the reference, read back by the reference and by plain fastavro.

Plain fastavro sees what any Avro library sees: the header schema must carry the spec's field id on
every field (the ids below are restated from the spec's tables, not taken from the reference), the
per-version required fields as non-null types, element/key/value ids on collections, the partition
struct keyed by partition field ids, and the key-value metadata a manifest must have.
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.formats.iceberg import strategies as si
from conformance.suites.property.delta._support import examples
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import types as T

# Field id -> (name, versions where required, versions where written) from the spec's tables.
ENTRY = {0: ("status", {1, 2, 3}, {1, 2, 3}), 1: ("snapshot_id", {1}, {1, 2, 3}), 3: ("sequence_number", set(), {2, 3}),
         4: ("file_sequence_number", set(), {2, 3}), 2: ("data_file", {1, 2, 3}, {1, 2, 3})}
DATA_FILE = {
    134: ("content", {2, 3}, {2, 3}), 100: ("file_path", {1, 2, 3}, {1, 2, 3}), 101: ("file_format", {1, 2, 3}, {1, 2, 3}),
    102: ("partition", {1, 2, 3}, {1, 2, 3}), 103: ("record_count", {1, 2, 3}, {1, 2, 3}),
    104: ("file_size_in_bytes", {1, 2, 3}, {1, 2, 3}), 105: ("block_size_in_bytes", {1}, {1}),
    108: ("column_sizes", set(), {1, 2, 3}), 109: ("value_counts", set(), {1, 2, 3}), 110: ("null_value_counts", set(), {1, 2, 3}),
    137: ("nan_value_counts", set(), {1, 2, 3}), 125: ("lower_bounds", set(), {1, 2, 3}), 128: ("upper_bounds", set(), {1, 2, 3}),
    131: ("key_metadata", set(), {1, 2, 3}), 132: ("split_offsets", set(), {1, 2, 3}), 135: ("equality_ids", set(), {2, 3}),
    140: ("sort_order_id", set(), {1, 2, 3}), 142: ("first_row_id", set(), {3}), 143: ("referenced_data_file", set(), {2, 3}),
    144: ("content_offset", set(), {3}), 145: ("content_size_in_bytes", set(), {3}),
}
# Ids of the collections' children: maps (key, value) and lists (element).
CHILD_IDS = {108: (117, 118), 109: (119, 120), 110: (121, 122), 137: (138, 139), 125: (126, 127), 128: (129, 130), 132: (133,), 135: (136,)}
MANIFEST_FILE = {
    500: ("manifest_path", {1, 2, 3}, {1, 2, 3}), 501: ("manifest_length", {1, 2, 3}, {1, 2, 3}),
    502: ("partition_spec_id", {1, 2, 3}, {1, 2, 3}), 517: ("content", {2, 3}, {2, 3}), 515: ("sequence_number", {2, 3}, {2, 3}),
    516: ("min_sequence_number", {2, 3}, {2, 3}), 503: ("added_snapshot_id", {1, 2, 3}, {1, 2, 3}),
    504: ("added_files_count", {2, 3}, {1, 2, 3}), 505: ("existing_files_count", {2, 3}, {1, 2, 3}),
    506: ("deleted_files_count", {2, 3}, {1, 2, 3}), 512: ("added_rows_count", {2, 3}, {1, 2, 3}),
    513: ("existing_rows_count", {2, 3}, {1, 2, 3}), 514: ("deleted_rows_count", {2, 3}, {1, 2, 3}),
    507: ("partitions", set(), {1, 2, 3}), 519: ("key_metadata", set(), {1, 2, 3}), 520: ("first_row_id", set(), {3}),
}
FIELD_SUMMARY = {509: ("contains_null", {1, 2, 3}), 518: ("contains_nan", set()), 510: ("lower_bound", set()), 511: ("upper_bound", set())}

VERSIONS = [pytest.param(v, id=f"v{v}") for v in (1, 2, 3)]


def _plain(data: bytes) -> tuple[dict, dict[str, str], list[dict]]:
    """What any Avro reader sees: the header schema JSON, the key-value metadata, the records."""
    r = fastavro.reader(io.BytesIO(data))
    records = list(r)
    meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in r.metadata.items()}
    return json.loads(meta["avro.schema"]), meta, records


def _optional(t) -> tuple[object, bool]:
    if isinstance(t, list):
        rest = [b for b in t if b != "null"]
        assert len(rest) == 1 and "null" in t and len(t) == 2, f"union {t} is not [null, T]"
        return rest[0], True
    return t, False


def _check_record(rec: dict, table: dict, version: int, what: str) -> dict[int, dict]:
    """Every field has an int field-id from the table, written in this version, required exactly where the spec says."""
    by_id = {}
    for f in rec["fields"]:
        fid = f.get("field-id")
        assert isinstance(fid, int) and not isinstance(fid, bool), f"{what}.{f['name']} has no int field-id"
        assert fid in table, f"{what} writes unknown field {fid} ({f['name']})"
        name, required, written = table[fid][0], table[fid][1], table[fid][2] if len(table[fid]) > 2 else {1, 2, 3}
        assert f["name"] == name and version in written, (fid, f["name"], version)
        _t, optional = _optional(f["type"])
        assert optional != (version in required), f"{what}.{name} required={version in required} but optional={optional}"
        if optional:
            assert "default" in f and f["default"] is None, f"{what}.{name} is optional without a null default"
        by_id[fid] = f
    missing = {fid for fid, row in table.items() if version in row[1]} - set(by_id)
    assert not missing, f"{what} lacks required fields {missing}"
    return by_id


def _check_children(f: dict, ids: tuple[int, ...]) -> None:
    t, _ = _optional(f["type"])
    if len(ids) == 1:
        assert t["type"] == "array" and t.get("element-id") == ids[0], (f["name"], t)
    else:
        # int-keyed maps: an array of key/value records with logicalType map, ids on the record fields (FMT-003)
        assert t["type"] == "array" and t.get("logicalType") == "map", (f["name"], t)
        kv = t["items"]["fields"]
        assert [x["name"] for x in kv] == ["key", "value"] and (kv[0]["field-id"], kv[1]["field-id"]) == ids


@st.composite
def manifests(draw, version: int):
    md = draw(si.table_metadata(version, max_snapshots=0))
    schema = md.schema()
    spec = md.spec()
    content = draw(st.sampled_from([MF.MANIFEST_DATA, MF.MANIFEST_DELETES])) if version >= 2 else MF.MANIFEST_DATA
    entries = draw(si.manifest_entries(spec, schema, version, content))
    return schema, spec, content, entries


@pytest.mark.rule("ICEBERG-MANIFEST-002", "ICEBERG-MANIFEST-004", "ICEBERG-MANIFEST-005", "ICEBERG-MANIFEST-006",
                  "ICEBERG-MANIFEST-007", "ICEBERG-MANIFEST-008", "ICEBERG-MANIFEST-009", "ICEBERG-MANIFEST-010",
                  "ICEBERG-MANIFEST-011", "ICEBERG-MANIFEST-013", "ICEBERG-MANIFEST-017", "ICEBERG-MANIFEST-020",
                  "ICEBERG-MANIFEST-023", "ICEBERG-MANIFEST-028", "ICEBERG-MANIFEST-041", "ICEBERG-PART-034",
                  "ICEBERG-FMT-001", "ICEBERG-FMT-002", "ICEBERG-FMT-003", "ICEBERG-FMT-006", "ICEBERG-SERDE-005")
@pytest.mark.parametrize("version", VERSIONS)
@examples(0.5)
@given(data=st.data())
def test_manifest_round_trip_and_plain_avro(version, data):
    """A manifest the reference writes reads back equal, and plain fastavro finds the spec's ids and metadata in it."""
    schema, spec, content, entries = data.draw(manifests(version), label="manifest")
    raw = MF.write_manifest(entries, schema=schema, spec=spec, format_version=version, content=content)
    back = MF.read_manifest(raw, inherit=False)
    assert list(back.entries) == [e for e in entries]
    assert back.metadata.spec == spec and back.metadata.content == content and back.metadata.format_version == version

    avro, meta, records = _plain(raw)
    assert T.parse_schema(meta["schema"]).fields == schema.fields
    assert json.loads(meta["partition-spec"]) == P.partition_fields_to_list(spec, format_version=max(version, 2))
    if version >= 2:
        assert meta["partition-spec-id"] == str(spec.spec_id) and meta["format-version"] == str(version)
        assert meta["schema-id"] == str(schema.schema_id)
        assert meta["content"] == ("deletes" if content == MF.MANIFEST_DELETES else "data")
    entry = _check_record(avro, ENTRY, version, "manifest_entry")
    data_rec, _ = _optional(entry[2]["type"])
    data_fields = _check_record(data_rec, DATA_FILE, version, "data_file")
    for fid, ids in CHILD_IDS.items():
        if fid in data_fields:
            _check_children(data_fields[fid], ids)
    part, _ = _optional(data_fields[102]["type"])
    assert [f["field-id"] for f in part["fields"]] == [f.field_id for f in spec.fields]
    assert len(records) == len(entries)


@pytest.mark.rule("ICEBERG-MLIST-002", "ICEBERG-MLIST-003", "ICEBERG-MLIST-004", "ICEBERG-MLIST-005", "ICEBERG-MLIST-006",
                  "ICEBERG-MLIST-007", "ICEBERG-MLIST-008", "ICEBERG-MLIST-009", "ICEBERG-MLIST-010", "ICEBERG-MLIST-011",
                  "ICEBERG-MLIST-013", "ICEBERG-MLIST-014", "ICEBERG-MLIST-018", "ICEBERG-MLIST-019", "ICEBERG-COMPAT-001")
@pytest.mark.parametrize("version", VERSIONS)
@examples(0.5)
@given(data=st.data())
def test_manifest_list_round_trip_and_plain_avro(version, data):
    """A manifest list the reference writes reads back equal; plain fastavro finds fields 500-520 per version."""
    mfs = data.draw(si.manifest_list_entries(version), label="manifest files")
    raw = MF.write_manifest_list(mfs, format_version=version, snapshot_id=7, parent_snapshot_id=None,
                                 sequence_number=3 if version >= 2 else None)
    assert list(MF.read_manifest_list(raw)) == mfs
    avro, meta, records = _plain(raw)
    assert meta["format-version"] == str(version)
    fields = _check_record(avro, MANIFEST_FILE, version, "manifest_file")
    parts, _ = _optional(fields[507]["type"])
    assert parts["type"] == "array" and parts["element-id"] == 508
    summary = parts["items"]
    for f in summary["fields"]:
        name, required = FIELD_SUMMARY[f["field-id"]]
        assert f["name"] == name and _optional(f["type"])[1] != (version in required)
    assert len(records) == len(mfs)


@pytest.mark.rule("ICEBERG-MANIFEST-002", "ICEBERG-FMT-004")
def test_partition_fields_sharing_a_named_type_read_back():
    """Two partition fields of one decimal type (named once, then referenced) read back when the first value is null."""
    from decimal import Decimal

    from reference_impl.iceberg import transforms as X

    schema = T.Schema(schema_id=0, fields=(T.NestedField(id=1, name="d", type=T.DecimalType(precision=9, scale=2)),))
    spec = P.PartitionSpec(spec_id=0, fields=(
        P.PartitionField(source_ids=(1,), field_id=1000, name="d_void", transform=X.VoidTransform()),
        P.PartitionField(source_ids=(1,), field_id=1001, name="d", transform=X.IdentityTransform())))
    df = MF.DataFile(file_path="s3://b/t/data/x.parquet", file_format="parquet", record_count=1, file_size_in_bytes=10,
                     partition={1000: None, 1001: Decimal("1.25")})
    raw = MF.write_manifest([MF.ManifestEntry(status=MF.ADDED, data_file=df)], schema=schema, spec=spec, format_version=2)
    assert MF.read_manifest(raw, inherit=False).entries[0].data_file.partition[1001] == Decimal("1.25")
