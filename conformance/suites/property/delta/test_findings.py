"""Minimal repros of defects the property suites found in other modules (kept until fixed)."""

from __future__ import annotations

import pytest

from reference_impl.errors import LakeconfError


@pytest.mark.rule("DELTA-SCHEMA-010")
def test_non_nullable_void_field_does_not_leak_a_raw_arrow_error():
    # A void column is all-null; a schema that says nullable=false for it must either map to a
    # nullable Arrow field or be refused with a kit error -- never a raw pyarrow ValueError.
    from reference_impl.delta import schema as ds

    s = ds.StructType(fields=(ds.StructField(name="v", type=ds.PrimitiveType(name="void"), nullable=False),))
    try:
        arrow = ds.to_arrow_schema(s)
    except LakeconfError:
        return
    assert arrow.field("v").nullable


@pytest.mark.rule("DELTA-PART-002", "DELTA-SCHEMA-006")
def test_decimal_partition_value_at_precision_38_serializes():
    # decimal(38, s) holds 38 digits; Decimal.quantize under the default 28-digit context fails.
    from decimal import Decimal

    from reference_impl.delta import partition as dp
    from reference_impl.delta.schema import DecimalType

    t = DecimalType(precision=38, scale=0)
    v = Decimal("9" * 38)
    assert dp.parse_partition_value(dp.serialize_partition_value(v, t), t) == v


def _tiny_table(d: str) -> None:
    import json
    import os

    os.makedirs(os.path.join(d, "_delta_log"))
    schema = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
    c0 = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
                      "partitionColumns": [], "configuration": {}, "createdTime": 1}},
        {"add": {"path": "a.parquet", "partitionValues": {}, "size": 1, "modificationTime": 1, "dataChange": True,
                 "stats": '{"numRecords":1,"minValues":{"id":5},"maxValues":{"id":5},"nullCount":{"id":0}}'}},
    ]
    with open(os.path.join(d, "_delta_log", f"{0:020d}.json"), "w") as fh:
        fh.write("\n".join(json.dumps(a) for a in c0) + "\n")
    with open(os.path.join(d, "_delta_log", f"{1:020d}.json"), "w") as fh:
        fh.write('{"commitInfo":{}}\n')


@pytest.mark.rule("DELTA-CKPT-023", "DELTA-CKPT-007")
def test_stats_survive_a_struct_only_checkpoint_followed_by_a_json_checkpoint(tmp_path):
    # stats read from stats_parsed (struct-only checkpoint) must be written again as the JSON
    # string by the next checkpoint: "stats exist" does not depend on which column held them.
    from reference_impl.delta.checkpoint import write_checkpoint
    from reference_impl.delta.log import build_segment
    from reference_impl.delta.replay import replay
    from reference_impl.storage import LocalStorage

    _tiny_table(str(tmp_path))
    s = LocalStorage(str(tmp_path))
    write_checkpoint(s, replay(s, build_segment(s, 0)), stats=("struct",))
    write_checkpoint(s, replay(s, build_segment(s, 1)), stats=("json",))
    (add,) = replay(s, build_segment(s, 1)).files.values()
    assert add.stats is not None or add.stats_parsed is not None


@pytest.mark.rule("DELTA-DV-010", "DELTA-DV-007")
def test_inline_dv_whose_bitmap_is_not_a_multiple_of_4_bytes_is_valid(tmp_path):
    # sizeInBytes is the raw bitmap size "before base85 encoding"; Z85 works on 4-byte groups, so
    # the text decodes to the bitmap plus zero padding (Delta Spark and delta-kernel trim it by
    # sizeInBytes). A validator must compare sizeInBytes with the unpadded bitmap, not the text.
    import json
    import os

    from reference_impl.delta.deletion_vector import inline_deletion_vector, serialize_bitmap
    from reference_impl.delta.validate import validate_table

    rows = [0]  # 34 bytes: a single-row bitmap is not a multiple of 4
    assert len(serialize_bitmap(rows)) % 4 != 0
    d = inline_deletion_vector(rows).to_wire()
    schema = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
    add = {"path": "a.parquet", "partitionValues": {}, "size": 1, "modificationTime": 1, "dataChange": True,
           "stats": '{"numRecords":10}'}
    c0 = [
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
                      "writerFeatures": ["deletionVectors"]}},
        {"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
                      "partitionColumns": [], "configuration": {"delta.enableDeletionVectors": "true"}, "createdTime": 1}},
        {"add": add},
    ]
    c1 = [{"remove": {"path": "a.parquet", "deletionTimestamp": 2, "dataChange": True}}, {"add": dict(add, deletionVector=d)}]
    os.makedirs(tmp_path / "_delta_log")
    for v, c in enumerate((c0, c1)):
        (tmp_path / "_delta_log" / f"{v:020d}.json").write_text("\n".join(json.dumps(a) for a in c) + "\n")
    flagged = [v for v in validate_table(str(tmp_path)) if v.rule == "DELTA-DV-010"]
    assert not flagged, flagged


@pytest.mark.rule("DELTA-LOG-003", "DELTA-WRITER-003")
def test_nul_character_is_escaped_in_partition_directories():
    # Hive escapes every character below 0x20, NUL included; an unescaped NUL makes the writer's
    # own data-file path invalid ("not relative to the table root") for a legal string value.
    from reference_impl.delta import partition as dp

    assert dp.escape_partition_path_component("\x00") == "%00"
    assert dp.unescape_partition_path_component(dp.escape_partition_path_component("a\x00b")) == "a\x00b"
