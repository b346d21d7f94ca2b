"""Actions: parsing, validation and serialization of every log action."""

from __future__ import annotations

import json

import pytest

from reference_impl.delta import actions as A
from reference_impl.delta.actions import (
    AddCDCFile,
    AddFile,
    CheckpointMetadata,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    Sidecar,
    Txn,
    UnknownAction,
    action_to_wire,
    parse_action,
    parse_commit,
    serialize_commit,
)
from reference_impl.errors import InvalidTable

from . import SIMPLE_SCHEMA

ADD_EXAMPLE = {"add": {
    "path": "date=2017-12-10/part-000...c000.gz.parquet", "partitionValues": {"date": "2017-12-10"},
    "size": 841454, "modificationTime": 1512909768000, "dataChange": True, "baseRowId": 4071,
    "defaultRowCommitVersion": 41, "stats": "{\"numRecords\":1}", "clusteringProvider": "liquid"}}
REMOVE_EXAMPLE = {"remove": {"path": "part-00001-9.snappy.parquet", "deletionTimestamp": 1515488792485,
                             "baseRowId": 4071, "defaultRowCommitVersion": 41, "dataChange": True}}
METADATA_EXAMPLE = {"metaData": {"id": "af23c9d7-fff1-4a5a-a2c8-55c59bd782aa",
                                 "format": {"provider": "parquet", "options": {}}, "schemaString": SIMPLE_SCHEMA,
                                 "partitionColumns": [], "configuration": {"appendOnly": "true"}}}
DV = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 4, "sizeInBytes": 40,
      "cardinality": 6}


def roundtrip(obj: dict):
    action = parse_action(obj)
    assert parse_action(action_to_wire(action)) == action
    return action


@pytest.mark.rule("DELTA-ACTION-016")
def test_add_example_parses_and_roundtrips():
    a = roundtrip(ADD_EXAMPLE)
    assert isinstance(a, AddFile)
    assert a.size == 841454 and a.base_row_id == 4071 and a.default_row_commit_version == 41
    assert a.partition_values == {"date": "2017-12-10"} and a.clustering_provider == "liquid"
    assert a.key == (a.path, None) and a.dv_id is None


@pytest.mark.rule("DELTA-ACTION-020")
def test_remove_example_parses_and_roundtrips():
    r = roundtrip(REMOVE_EXAMPLE)
    assert isinstance(r, RemoveFile)
    assert r.deletion_timestamp == 1515488792485 and r.data_change is True and r.key == (r.path, None)


@pytest.mark.rule("DELTA-ACTION-004")
def test_metadata_example_parses_and_schema_is_parsed_once():
    m = roundtrip(METADATA_EXAMPLE)
    assert isinstance(m, Metadata)
    assert m.configuration == {"appendOnly": "true"} and m.format.provider == "parquet"
    assert m.schema.names == ["id", "name"]
    assert m.schema is m.schema  # cached per schema string


@pytest.mark.rule("DELTA-ACTION-025")
def test_protocol_examples():
    p = roundtrip({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                                "readerFeatures": ["columnMapping"],
                                "writerFeatures": ["columnMapping", "identityColumns"]}})
    assert p == Protocol(min_reader_version=3, min_writer_version=7, reader_features=frozenset({"columnMapping"}),
                         writer_features=frozenset({"columnMapping", "identityColumns"}))
    legacy = roundtrip({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
    assert legacy.reader_features is None and legacy.writer_features is None
    assert "readerFeatures" not in action_to_wire(legacy)["protocol"]


@pytest.mark.rule("DELTA-ACTION-023", "DELTA-DOMAIN-002", "DELTA-ACTION-028")
def test_other_actions_roundtrip():
    assert roundtrip({"txn": {"appId": "3ba13872", "version": 364475}}) == Txn(app_id="3ba13872", version=364475)
    assert roundtrip({"domainMetadata": {"domain": "delta.x", "configuration": "{}", "removed": False}}) == \
        DomainMetadata(domain="delta.x", configuration="{}", removed=False)
    cdc = roundtrip({"cdc": {"path": "_change_data/cdc-1.parquet", "partitionValues": {}, "size": 1213,
                             "dataChange": False}})
    assert isinstance(cdc, AddCDCFile) and cdc.size == 1213
    ci = roundtrip({"commitInfo": {"timestamp": 1, "operation": "WRITE", "nested": {"a": [1, {"b": None}]},
                                   "inCommitTimestamp": 1700000000000}})
    assert isinstance(ci, CommitInfo) and ci.in_commit_timestamp == 1700000000000
    assert roundtrip({"checkpointMetadata": {"version": 1, "tags": {}}}) == CheckpointMetadata(version=1, tags={})
    sc = roundtrip({"sidecar": {"path": "016ae953.parquet", "sizeInBytes": 2304522,
                                "modificationTime": 1512909768000, "tags": {}}})
    assert isinstance(sc, Sidecar) and sc.size_in_bytes == 2304522


@pytest.mark.rule("DELTA-ACTION-005", "DELTA-DV-011")
def test_add_with_deletion_vector_key_uses_unique_id():
    a = parse_action({"add": {**ADD_EXAMPLE["add"], "deletionVector": DV}})
    assert a.dv_id == "uab^-aqEH.-t@S}K{vb[*k^@4"
    assert a.key == (a.path, "uab^-aqEH.-t@S}K{vb[*k^@4")
    assert action_to_wire(a)["add"]["deletionVector"]["offset"] == 4


@pytest.mark.rule("DELTA-ACTION-027")
def test_unknown_fields_and_actions_are_tolerated():
    a = parse_action({"add": {**ADD_EXAMPLE["add"], "futureField": {"x": 1}}})
    assert isinstance(a, AddFile)
    u = parse_action({"futureAction": {"anything": [1, 2]}})
    assert u == UnknownAction(key="futureAction", value={"anything": [1, 2]})
    assert action_to_wire(u) == {"futureAction": {"anything": [1, 2]}}


@pytest.mark.rule("DELTA-ACTION-016")
@pytest.mark.parametrize("field", ["path", "partitionValues", "size", "modificationTime", "dataChange"])
def test_add_missing_required_field(field):
    body = dict(ADD_EXAMPLE["add"])
    del body[field]
    with pytest.raises(InvalidTable, match=f"required field '{field}' is missing") as exc:
        parse_action({"add": body}, version=3)
    assert exc.value.rule == "DELTA-ACTION-016" and exc.value.version == 3


@pytest.mark.rule("DELTA-ACTION-020", "DELTA-ACTION-023", "DELTA-ACTION-025", "DELTA-ACTION-004",
                  "DELTA-DOMAIN-002", "DELTA-CKPT-036")
@pytest.mark.parametrize("obj,field", [
    ({"remove": {"path": "a"}}, "dataChange"),
    ({"txn": {"appId": "a"}}, "version"),
    ({"protocol": {"minReaderVersion": 1}}, "minWriterVersion"),
    ({"metaData": {k: v for k, v in METADATA_EXAMPLE["metaData"].items() if k != "partitionColumns"}},
     "partitionColumns"),
    ({"metaData": {k: v for k, v in METADATA_EXAMPLE["metaData"].items() if k != "configuration"}},
     "configuration"),
    ({"domainMetadata": {"domain": "d", "removed": False}}, "configuration"),
    ({"sidecar": {"path": "x.parquet", "modificationTime": 1}}, "sizeInBytes"),
    ({"checkpointMetadata": {"tags": {}}}, "version"),
])
def test_missing_required_fields(obj, field):
    with pytest.raises(InvalidTable, match=f"'{field}' is missing"):
        parse_action(obj)


@pytest.mark.rule("DELTA-ACTION-016", "DELTA-ACTION-025")
@pytest.mark.parametrize("obj,fragment", [
    ({"add": {**ADD_EXAMPLE["add"], "size": "841454"}}, "'size' must be an integer"),
    ({"add": {**ADD_EXAMPLE["add"], "size": -1}}, "out of range"),
    ({"add": {**ADD_EXAMPLE["add"], "size": 2**63}}, "out of range"),
    ({"add": {**ADD_EXAMPLE["add"], "dataChange": "true"}}, "'dataChange' must be a boolean"),
    ({"add": {**ADD_EXAMPLE["add"], "partitionValues": {"date": 5}}}, "must map strings to strings"),
    ({"add": {**ADD_EXAMPLE["add"], "size": True}}, "'size' must be an integer"),
    ({"protocol": {"minReaderVersion": 2**31, "minWriterVersion": 2}}, "out of range"),
    ({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": "deletionVectors"}},
     "must be an array of strings"),
    ({"txn": {"appId": 5, "version": 1}}, "'appId' must be a string"),
])
def test_wrong_types_and_ranges(obj, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        parse_action(obj)


@pytest.mark.rule("DELTA-ACTION-022")
def test_empty_deletion_vector_object_is_invalid():
    with pytest.raises(InvalidTable, match="empty object") as exc:
        parse_action({"add": {**ADD_EXAMPLE["add"], "deletionVector": {}}})
    assert exc.value.rule == "DELTA-ACTION-022"
    assert parse_action({"add": {**ADD_EXAMPLE["add"], "deletionVector": None}}).deletion_vector is None


@pytest.mark.rule("DELTA-LOG-005")
def test_parse_commit_names_the_bad_line():
    good = json.dumps({"txn": {"appId": "a", "version": 1}})
    with pytest.raises(InvalidTable, match="line 2 is not a complete JSON object") as exc:
        parse_commit(f"{good}\n{{\"add\": \n".encode(), version=7, path="_delta_log/7.json")
    assert exc.value.version == 7 and exc.value.path == "_delta_log/7.json" and exc.value.rule == "DELTA-LOG-005"


@pytest.mark.rule("DELTA-LOG-005")
def test_pretty_printed_action_is_rejected():
    pretty = json.dumps({"txn": {"appId": "a", "version": 1}}, indent=2).encode()
    with pytest.raises(InvalidTable, match="line 1"):
        parse_commit(pretty)


@pytest.mark.rule("DELTA-LOG-005")
def test_two_actions_on_one_line_and_non_objects_are_rejected():
    with pytest.raises(InvalidTable, match="two actions"):
        parse_commit(json.dumps({"txn": {"appId": "a", "version": 1}, **REMOVE_EXAMPLE}).encode())
    with pytest.raises(InvalidTable, match="line 1: an action must be a JSON object"):
        parse_commit(b"[1, 2]\n")
    with pytest.raises(InvalidTable, match="not valid UTF-8"):
        parse_commit(b"\xff\xfe\n")


@pytest.mark.rule("DELTA-LOG-005")
def test_serialize_commit_is_one_compact_line_per_action():
    actions = [parse_action(METADATA_EXAMPLE), parse_action(ADD_EXAMPLE), parse_action(REMOVE_EXAMPLE)]
    data = serialize_commit(actions)
    assert data.endswith(b"\n")
    lines = data.decode().split("\n")[:-1]
    assert len(lines) == 3 and all(" " not in line.split('"schemaString"')[0] for line in lines)
    assert [json.loads(line) for line in lines][1] == ADD_EXAMPLE
    assert parse_commit(data) == actions
    assert parse_commit(data + b"\n\n") == actions  # blank lines are tolerated


@pytest.mark.rule("DELTA-ACTION-017")
def test_paths_are_kept_encoded_in_the_model():
    a = parse_action({"add": {**ADD_EXAMPLE["add"], "path": "p=a%20b/f.parquet"}})
    assert a.path == "p=a%20b/f.parquet"
    assert action_to_wire(a)["add"]["path"] == "p=a%20b/f.parquet"  # never double-encoded


def test_wire_keys_are_spelled_once():
    assert A.METADATA == "metaData" and A.DOMAIN_METADATA == "domainMetadata"
    assert A.PARTITION_VALUES_PARSED == "partitionValues_parsed" and A.STATS_PARSED == "stats_parsed"
