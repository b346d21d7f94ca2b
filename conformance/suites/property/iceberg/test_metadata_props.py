"""Table metadata JSON (Appendix C) per format version: generated metadata round-trips, and each version writes its fields only.

``conformance.formats.iceberg.strategies.table_metadata`` draws whole, consistent tables (schemas of every
type with their history, partition specs, sort orders, snapshots, refs, logs, statistics, v3 row
lineage and encryption keys); the reference writes them per version and parses them back.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from conformance.formats.iceberg import strategies as si
from conformance.suites.property.delta._support import examples
from reference_impl.errors import InvalidTable
from reference_impl.iceberg import metadata as M

# The spec's Table Metadata Fields / Snapshots tables, restated here (not taken from the reference):
# what a writer of each version may write; a blank cell means "leave it out".
ALL_KEYS = {
    "format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id", "schema", "schemas",
    "current-schema-id", "partition-spec", "partition-specs", "default-spec-id", "last-partition-id", "properties",
    "current-snapshot-id", "snapshots", "snapshot-log", "metadata-log", "sort-orders", "default-sort-order-id", "refs",
    "statistics", "partition-statistics", "next-row-id", "encryption-keys",
}
BLANK = {1: {"last-sequence-number", "refs", "next-row-id", "encryption-keys"},
         2: {"schema", "partition-spec", "next-row-id", "encryption-keys"},
         3: {"schema", "partition-spec"}}
REQUIRED = {1: {"format-version", "location", "last-updated-ms", "last-column-id", "schema", "partition-spec"},
            2: {"format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id", "schemas",
                "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id", "sort-orders", "default-sort-order-id"}}
REQUIRED[3] = REQUIRED[2] | {"next-row-id"}
SNAPSHOT_KEYS = {1: {"snapshot-id", "parent-snapshot-id", "timestamp-ms", "manifest-list", "manifests", "summary", "schema-id"},
                 2: {"snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list", "summary", "schema-id"}}
SNAPSHOT_KEYS[3] = SNAPSHOT_KEYS[2] | {"first-row-id", "added-rows", "key-id"}
SNAPSHOT_REQUIRED = {1: {"snapshot-id", "timestamp-ms"}, 2: {"snapshot-id", "sequence-number", "timestamp-ms", "manifest-list", "summary"}}
SNAPSHOT_REQUIRED[3] = SNAPSHOT_REQUIRED[2] | {"first-row-id", "added-rows"}

VERSIONS = [pytest.param(v, id=f"v{v}") for v in (1, 2, 3)]


@pytest.mark.rule("ICEBERG-META-001", "ICEBERG-SERDE-001", "ICEBERG-SERDE-002", "ICEBERG-SERDE-004", "ICEBERG-SERDE-005",
                  "ICEBERG-SERDE-006", "ICEBERG-SERDE-007", "ICEBERG-SERDE-024", "ICEBERG-SCHEMA-024", "ICEBERG-REF-001",
                  "ICEBERG-STATS-002", "ICEBERG-STATS-003", "ICEBERG-STATS-004", "ICEBERG-ENC-001", "ICEBERG-PART-037")
@pytest.mark.parametrize("version", VERSIONS)
@examples(1.0)
@given(data=si.st.data())
def test_metadata_json_round_trip(version, data):
    """TableMetadata -> JSON text (compact and indented) -> parse gives the same model back."""
    md = data.draw(si.table_metadata(version), label="metadata")
    text = M.metadata_to_json(md)
    assert M.parse_metadata(text) == md
    assert M.parse_metadata(json.loads(M.metadata_to_json(md, indent=2))) == md
    assert M.parse_metadata(text.encode("utf-8")) == md


@pytest.mark.rule("ICEBERG-GEN-001", "ICEBERG-GEN-002", "ICEBERG-GEN-003", "ICEBERG-META-018", "ICEBERG-COMPAT-001",
                  "ICEBERG-SNAP-005", "ICEBERG-META-042", "ICEBERG-META-045")
@pytest.mark.parametrize("version", VERSIONS)
@examples(1.0)
@given(data=si.st.data())
def test_each_version_writes_its_fields_only(version, data):
    """The JSON a version writes has every required key, no blank-cell key, and snapshots of the same shape."""
    md = data.draw(si.table_metadata(version), label="metadata")
    d = M.metadata_to_dict(md)
    assert set(d) <= ALL_KEYS - BLANK[version], set(d) & BLANK[version]
    assert REQUIRED[version] <= set(d), REQUIRED[version] - set(d)
    assert d.get("current-snapshot-id") != -1
    for s in d["snapshots"]:
        assert set(s) <= SNAPSHOT_KEYS[version], set(s) - SNAPSHOT_KEYS[version]
        assert SNAPSHOT_REQUIRED[version] <= set(s), SNAPSHOT_REQUIRED[version] - set(s)
        assert not ("manifest-list" in s and "manifests" in s)
    assert M.writer_violations(d) == [] or version == 1


@pytest.mark.rule("ICEBERG-META-016", "ICEBERG-META-027", "ICEBERG-META-029", "ICEBERG-META-030", "ICEBERG-META-011",
                  "ICEBERG-REF-006", "ICEBERG-SCHEMA-001", "ICEBERG-LINEAGE-012")
@examples(1.0)
@given(si.table_metadata())
def test_generated_metadata_is_valid(md):
    """The strategy only draws valid tables: the reference's validate_metadata finds nothing (self-test of the ladder's top)."""
    assert M.validate_metadata(md) == []


@pytest.mark.rule("ICEBERG-COMPAT-003", "ICEBERG-META-012", "ICEBERG-SEQ-011", "ICEBERG-LINEAGE-019")
@examples(0.5)
@given(si.table_metadata(1))
def test_upgrades_keep_the_table(md):
    """v1 -> v2 -> v3 keeps schemas, specs and snapshots, reads old sequence numbers as 0, starts row ids at 0, and stays valid."""
    v2 = M.upgrade(md, 2)
    v3 = M.upgrade(v2, 3)
    for up in (v2, v3):
        assert up.schemas == md.schemas and up.partition_specs == md.partition_specs and up.snapshots == md.snapshots
        assert up.last_sequence_number == 0 and all(s.sequence_number == 0 for s in up.snapshots)
        assert M.parse_metadata(M.metadata_to_json(up)) == up
    assert v3.next_row_id == 0 and all(s.first_row_id is None for s in v3.snapshots)
    if md.current_snapshot_id is not None:
        assert v2.refs["main"].snapshot_id == md.current_snapshot_id
    with pytest.raises(InvalidTable):
        M.upgrade(v3, 2)
