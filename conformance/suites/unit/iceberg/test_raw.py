"""The raw metadata surgery behind the Iceberg corpus does what each case says it does.

A raw step that silently did nothing would turn a negative case into a trivially passing one,
so each helper is checked on a small table built with the reference writer: the new metadata
file exists, is current, and says exactly what the case relies on.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from conformance.formats.iceberg import raw

SCHEMA = pa.schema([("id", pa.int64()), ("value", pa.string())])


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "value": [f"v{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture()
def table(tmp_path):
    """A v2 table, partitioned by bucket(4, id), with three appends (sequence numbers 1, 2, 3)."""
    writer = pytest.importorskip("reference_impl.iceberg.writer")
    from reference_impl.storage import open_storage

    storage = open_storage(str(tmp_path / "t"))
    writer.create_table(storage, SCHEMA, partition_by=("bucket(4, id)",), properties={"format-version": "2"})
    for i in (1, 2, 3):
        writer.append(storage, _rows(i))
    return storage


def _versions(storage) -> list[int]:
    return [n for n, _kind, _path in raw.metadata_files(storage)]


@pytest.mark.rule("ICEBERG-META-001", "ICEBERG-META-035", "ICEBERG-COMMIT-008")
def test_commit_writes_the_next_file_and_logs_the_previous(table) -> None:
    """A new v<N+1>.metadata.json, the hint moved to it, earlier files untouched, metadata-log extended."""
    before = _versions(table)
    old_path = raw.current_metadata_path(table)
    old_bytes = table.read(old_path)
    raw.set_format_version(4)(table)
    after = _versions(table)
    assert after == before + [before[-1] + 1]
    assert table.read(raw.VERSION_HINT).decode().strip() == str(after[-1])
    assert table.read(old_path) == old_bytes
    doc = raw.read_metadata(table)
    assert doc["format-version"] == 4
    assert doc["metadata-log"][-1]["metadata-file"] == table.uri(old_path)


@pytest.mark.rule("ICEBERG-META-020")
def test_set_current_schema_id(table) -> None:
    raw.set_current_schema_id(99)(table)
    doc = raw.read_metadata(table)
    assert doc["current-schema-id"] == 99
    assert all(s["schema-id"] != 99 for s in doc["schemas"])


@pytest.mark.rule("ICEBERG-META-016")
def test_set_last_column_id_only_below_a_field_id(table) -> None:
    raw.set_last_column_id(1)(table)
    assert raw.read_metadata(table)["last-column-id"] == 1
    with pytest.raises(raw.RawStepError):
        raw.set_last_column_id(5)(table)


@pytest.mark.rule("ICEBERG-SCHEMA-001")
def test_duplicate_field_id(table) -> None:
    raw.duplicate_field_id("id", "value")(table)
    ids = [f["id"] for f in raw.current_schema(raw.read_metadata(table))["fields"]]
    assert ids == [ids[0], ids[0]]


@pytest.mark.rule("ICEBERG-SCHEMA-017", "ICEBERG-EVOL-009")
def test_add_fields_with_defaults_assigns_fresh_ids(table) -> None:
    fields = [
        {"name": "n", "required": False, "type": "int", "initial-default": 7, "write-default": 7},
        {"name": "pt", "required": False, "initial-default": {}, "write-default": {}, "type": {"type": "struct", "fields": [
            {"name": "x", "required": False, "type": "int", "initial-default": 1, "write-default": 1}]}},
    ]
    before = raw.read_metadata(table)
    raw.add_fields_with_defaults(fields)(table)
    doc = raw.read_metadata(table)
    schema = raw.current_schema(doc)
    assert doc["current-schema-id"] == max(s["schema-id"] for s in before["schemas"]) + 1
    new = {f["name"]: f for f in schema["fields"]}
    last = before["last-column-id"]
    assert new["n"]["id"] == last + 1 and new["pt"]["id"] == last + 2
    assert new["pt"]["type"]["fields"][0]["id"] == last + 3
    assert doc["last-column-id"] == last + 3
    assert new["n"]["initial-default"] == 7


@pytest.mark.rule("ICEBERG-SEQ-001")
def test_set_sequence_number_breaks_monotonicity(table) -> None:
    raw.set_sequence_number(3, 1)(table)
    doc = raw.read_metadata(table)
    chain = raw.main_ancestry(doc)
    assert [s["sequence-number"] for s in chain] == [1, 2, 1]
    assert doc["last-sequence-number"] == 3


@pytest.mark.rule("ICEBERG-SNAP-002")
def test_remove_snapshots_leaves_a_dangling_parent(table) -> None:
    doc = raw.read_metadata(table)
    root = raw.snapshot_for_version(doc, 1)
    raw.remove_snapshots([1], delete_manifest_lists=True)(table)
    doc = raw.read_metadata(table)
    assert int(root["snapshot-id"]) not in raw.snapshots_by_id(doc)
    child = raw.snapshot_for_version(doc, 2)
    assert child["parent-snapshot-id"] == root["snapshot-id"]
    assert not table.exists(table.resolve(root["manifest-list"]))
    assert all(e["snapshot-id"] != root["snapshot-id"] for e in doc["snapshot-log"])


@pytest.mark.rule("ICEBERG-META-029", "ICEBERG-META-045")
def test_set_current_snapshot(table) -> None:
    raw.set_current_snapshot(1234567890123)(table)
    doc = raw.read_metadata(table)
    assert doc["current-snapshot-id"] == 1234567890123 and doc["refs"]["main"]["snapshot-id"] == 1234567890123
    raw.set_current_snapshot(None, main_ref=False)(table)
    doc = raw.read_metadata(table)
    assert doc["current-snapshot-id"] == -1 and "main" not in doc["refs"]


@pytest.mark.rule("ICEBERG-META-040", "ICEBERG-SNAP-015")
def test_drop_refs_and_snapshot_log(table) -> None:
    raw.drop_refs()(table)
    raw.drop_snapshot_log()(table)
    doc = raw.read_metadata(table)
    assert "refs" not in doc and "snapshot-log" not in doc and doc["current-snapshot-id"] is not None


@pytest.mark.rule("ICEBERG-SNAP-015", "ICEBERG-META-033")
def test_pin_history_with_rollback(table) -> None:
    raw.pin_history(
        {1: "2020-01-01T00:00:00Z", 2: "2021-01-01T00:00:00Z", 3: "2022-01-01T00:00:00Z"},
        log=[(1, "2020-01-01T00:00:00Z"), (2, "2021-01-01T00:00:00Z"), (3, "2022-01-01T00:00:00Z"), (1, "2023-01-01T00:00:00Z")],
        current=1,
    )(table)
    doc = raw.read_metadata(table)
    by_id = raw.snapshots_by_id(doc)
    first = min(by_id.values(), key=lambda s: s["sequence-number"])
    assert doc["current-snapshot-id"] == first["snapshot-id"] == doc["refs"]["main"]["snapshot-id"]
    assert first["timestamp-ms"] == 1577836800000
    assert [e["timestamp-ms"] for e in doc["snapshot-log"]] == [1577836800000, 1609459200000, 1640995200000, 1672531200000]
    assert doc["snapshot-log"][-1]["snapshot-id"] == first["snapshot-id"]
    assert doc["last-updated-ms"] > 1672531200000


@pytest.mark.rule("ICEBERG-PART-006")
def test_add_unknown_transform_spec(table) -> None:
    raw.add_unknown_transform_spec("id", "lakeconf_future[3]")(table)
    doc = raw.read_metadata(table)
    spec = next(s for s in doc["partition-specs"] if s["spec-id"] == doc["default-spec-id"])
    assert spec["fields"][0]["transform"] == "lakeconf_future[3]"
    assert spec["fields"][0]["field-id"] == doc["last-partition-id"] > 1000
    assert len(doc["partition-specs"]) == 2


@pytest.mark.rule("ICEBERG-META-031")
def test_delete_manifest_list_and_data_files(table) -> None:
    doc = raw.read_metadata(table)
    current = raw.snapshots_by_id(doc)[raw.current_snapshot_id(doc)]
    raw.delete_manifest_list()(table)
    assert not table.exists(table.resolve(current["manifest-list"]))
    raw.delete_data_files()(table)
    assert not [i for i in table.walk(raw.DATA_DIR) if i.path.endswith(".parquet")]
    with pytest.raises(raw.RawStepError):
        raw.delete_data_files()(table)


@pytest.mark.rule("ICEBERG-META-035")
def test_delete_previous_metadata_files(table) -> None:
    current = raw.current_metadata_path(table)
    raw.delete_previous_metadata_files()(table)
    assert [p for _n, _k, p in raw.metadata_files(table)] == [current]
    assert json.loads(table.read(current))["metadata-log"]


def test_corpus_raw_steps_add_no_snapshots() -> None:
    """Every raw step of the corpus is metadata surgery: the declared versions need that."""
    from conformance.formats.iceberg.cases import cases
    from conformance.model import Raw

    for c in cases():
        for step in c.steps:
            if isinstance(step, Raw):
                assert getattr(step.fn, "new_snapshots", None) == 0, c.id
                assert c.writers == ("reference",), c.id
