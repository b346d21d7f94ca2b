"""Table Features and Protocol Evolution."""

from __future__ import annotations

import json

import pytest

from reference_impl.delta import protocol as P
from reference_impl.delta.protocol import (
    check_readable,
    check_type_changes,
    check_writable,
    is_feature_active,
    is_feature_supported,
    is_supported_widening,
    protocol_for_features,
)
from reference_impl.errors import InvalidTable, LakeconfError, Unsupported

from . import metadata, protocol


@pytest.mark.rule("DELTA-ACTION-026")
def test_reader_version_above_3_is_unsupported_with_upgrade_hint():
    with pytest.raises(Unsupported, match="reader version 4") as exc:
        check_readable(protocol(4, 7, rf=[], wf=[]))
    assert exc.value.feature == "readerVersion4" and "upgrade" in str(exc.value)


@pytest.mark.rule("DELTA-FEATURE-004")
@pytest.mark.parametrize("feature", ["fancyNewThing", "catalogManaged", "variantShredding"])
def test_unknown_or_unimplemented_reader_feature_is_named(feature):
    with pytest.raises(Unsupported, match=f"reader feature '{feature}'") as exc:
        check_readable(protocol(3, 7, rf=[feature], wf=[feature]))
    assert exc.value.feature == feature


@pytest.mark.rule("DELTA-FEATURE-004", "DELTA-VACUUM-003", "DELTA-FEATURE-013")
def readable(p) -> None:
    """check_readable accepts ``p`` (it raises Unsupported or InvalidTable for what it refuses)."""
    try:
        check_readable(p)
    except LakeconfError as exc:
        pytest.fail(f"refused a readable protocol: {exc}")


def test_supported_reader_features_and_legacy_versions_are_readable():
    readable(protocol(3, 7, rf=["columnMapping", "deletionVectors", "timestampNtz", "v2Checkpoint",
                                      "vacuumProtocolCheck", "typeWidening", "variantType"],
                            wf=["columnMapping", "deletionVectors", "timestampNtz", "v2Checkpoint",
                                "vacuumProtocolCheck", "typeWidening", "variantType", "rowTracking",
                                "domainMetadata", "inCommitTimestamp"]))
    readable(protocol(1, 2))
    readable(protocol(2, 5))
    # Writer-only features never stop a reader.
    readable(protocol(1, 7, wf=["someFutureWriterFeature"]))


@pytest.mark.rule("DELTA-FEATURE-002", "DELTA-FEATURE-003")
def test_malformed_feature_protocols_are_invalid():
    with pytest.raises(InvalidTable, match="readerFeatures") as exc:
        check_readable(protocol(3, 7, wf=[]))
    assert exc.value.rule == "DELTA-FEATURE-002"
    with pytest.raises(InvalidTable, match="writerFeatures"):
        check_readable(protocol(1, 7))
    with pytest.raises(InvalidTable, match="requires writer version 7") as exc:
        check_readable(protocol(3, 5, rf=[]))
    assert exc.value.rule == "DELTA-FEATURE-003"
    with pytest.raises(InvalidTable, match=">= 1"):
        check_readable(protocol(0, 2))


@pytest.mark.rule("DELTA-FEATURE-012", "DELTA-FEATURE-013", "DELTA-COLMAP-002")
def test_legacy_versions_imply_features():
    assert is_feature_supported(protocol(1, 2), "appendOnly")
    assert is_feature_supported(protocol(1, 2), "invariants")
    assert not is_feature_supported(protocol(1, 2), "checkConstraints")
    assert is_feature_supported(protocol(1, 4), "changeDataFeed") and is_feature_supported(protocol(1, 4),
                                                                                            "generatedColumns")
    assert is_feature_supported(protocol(2, 5), "columnMapping")
    assert not is_feature_supported(protocol(1, 5), "columnMapping")  # readers need version 2
    assert is_feature_supported(protocol(1, 6), "identityColumns")
    assert not is_feature_supported(protocol(1, 6), "deletionVectors")
    # At writer 7 the lists govern; reader 2 still means column mapping for readers.
    assert is_feature_supported(protocol(2, 7, wf=["columnMapping"]), "columnMapping")
    assert not is_feature_supported(protocol(1, 7, wf=["changeDataFeed"]), "appendOnly")
    assert is_feature_supported(protocol(3, 7, rf=["deletionVectors"], wf=["deletionVectors"]), "deletionVectors")
    assert not is_feature_supported(protocol(3, 7, rf=[], wf=["deletionVectors"]), "deletionVectors")


@pytest.mark.rule("DELTA-FEATURE-011", "DELTA-WRITER-004", "DELTA-ICT-001", "DELTA-DV-002")
def test_active_needs_support_and_metadata_condition():
    p7 = protocol(3, 7, rf=["deletionVectors"], wf=["appendOnly", "deletionVectors", "inCommitTimestamp",
                                                     "checkConstraints"])
    assert not is_feature_active(p7, metadata(), "appendOnly")
    assert is_feature_active(p7, metadata(configuration={"delta.appendOnly": "true"}), "appendOnly")
    assert is_feature_active(p7, metadata(configuration={"delta.enableDeletionVectors": "TRUE"}), "deletionVectors")
    assert is_feature_active(p7, metadata(configuration={"delta.enableInCommitTimestamps": "true"}),
                             "inCommitTimestamp")
    assert is_feature_active(p7, metadata(configuration={"delta.constraints.c": "id > 0"}), "checkConstraints")
    # The property alone does not activate an unsupported feature.
    assert not is_feature_active(protocol(1, 7, wf=[]), metadata(configuration={"delta.appendOnly": "true"}),
                                 "appendOnly")
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "x", "type": "integer", "nullable": True,
         "metadata": {"delta.invariants": "{\"expression\": {\"expression\": \"x > 3\"}}"}}]})
    assert is_feature_active(protocol(1, 2), metadata(schema=schema), "invariants")
    assert not is_feature_active(protocol(1, 2), metadata(), "invariants")


@pytest.mark.rule("DELTA-FEATURE-005", "DELTA-ACTION-026")
def test_check_writable():
    check_writable(protocol(1, 2), metadata())
    check_writable(protocol(3, 7, rf=["deletionVectors"], wf=["deletionVectors", "appendOnly"]), metadata())
    check_writable(protocol(1, 7, wf=["domainMetadata", "rowTracking"]), metadata())
    with pytest.raises(Unsupported, match="writer feature 'clustering'") as exc:
        check_writable(protocol(1, 7, wf=["domainMetadata", "clustering"]), metadata())
    assert exc.value.feature == "clustering"
    with pytest.raises(Unsupported, match="writer version 8"):
        check_writable(protocol(1, 8), metadata())
    # Legacy writer 6 implies identity columns, which the reference writes.
    check_writable(protocol(2, 6), metadata())
    ident = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {"delta.identity.start": 1,
                                                                      "delta.identity.step": 1}}]})
    check_writable(protocol(2, 6), metadata(schema=ident))


@pytest.mark.rule("DELTA-FEATURE-006", "DELTA-FEATURE-007", "DELTA-FEATURE-009", "DELTA-FEATURE-010",
                  "DELTA-ROWTRACK-001", "DELTA-CLUSTER-001")
def test_protocol_for_features():
    assert protocol_for_features([]) == protocol(1, 2)
    assert protocol_for_features([], legacy=(1, 4)) == protocol(1, 4)
    assert protocol_for_features(["changeDataFeed"], legacy=(1, 4)) == protocol(1, 4)
    writer_only = protocol_for_features(["appendOnly", "changeDataFeed"])
    assert writer_only == protocol(1, 7, wf=["appendOnly", "changeDataFeed"])
    dv = protocol_for_features(["deletionVectors", "appendOnly"])
    assert dv == protocol(3, 7, rf=["deletionVectors"], wf=["deletionVectors", "appendOnly"])
    assert dv.reader_features <= dv.writer_features  # never only in readerFeatures
    assert protocol_for_features(["columnMapping"]) == protocol(2, 7, wf=["columnMapping"])
    # Upgrading from legacy keeps every implied feature.
    up = protocol_for_features(["deletionVectors"], legacy=(1, 4))
    assert up.writer_features == {"deletionVectors", "appendOnly", "invariants", "checkConstraints",
                                  "changeDataFeed", "generatedColumns"}
    assert up.reader_features == {"deletionVectors"}
    assert protocol_for_features(["rowTracking"]).writer_features == {"rowTracking", "domainMetadata"}
    assert protocol_for_features(["clustering"]).writer_features == {"clustering", "domainMetadata"}
    with pytest.raises(Unsupported, match="unknown table feature 'nope'"):
        protocol_for_features(["nope"])


@pytest.mark.rule("DELTA-TYPEWIDEN-002")
@pytest.mark.parametrize("src,dst,ok", [
    ("byte", "short", True), ("short", "integer", True), ("integer", "long", True), ("long", "integer", False),
    ("float", "double", True), ("integer", "double", True), ("long", "double", False),
    ("date", "timestamp_ntz", True), ("date", "timestamp", False),
    ("decimal(6,2)", "decimal(10,4)", True), ("decimal(6,2)", "decimal(7,4)", False),
    ("integer", "decimal(10,0)", True), ("integer", "decimal(9,0)", False), ("long", "decimal(20,0)", True),
    ("long", "decimal(21,2)", False), ("string", "binary", False),
])
def test_supported_widenings(src, dst, ok):
    assert is_supported_widening(src, dst) is ok


@pytest.mark.rule("DELTA-TYPEWIDEN-012", "DELTA-TYPEWIDEN-005")
def test_type_changes_are_checked():
    def md(changes):
        return metadata(schema=json.dumps({"type": "struct", "fields": [
            {"name": "e", "type": "long", "nullable": True, "metadata": {"delta.typeChanges": changes}}]}))

    check_type_changes(md([{"fromType": "short", "toType": "integer"}, {"fromType": "integer", "toType": "long"}]))
    with pytest.raises(Unsupported, match="string -> long") as exc:
        check_type_changes(md([{"fromType": "string", "toType": "long"}]))
    assert exc.value.feature == P.TYPE_WIDENING
    with pytest.raises(InvalidTable, match="typeChanges"):
        check_type_changes(md([{"from": "short"}]))
