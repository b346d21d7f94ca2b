"""Appendix A Avro type mapping and field ids (reference_impl.iceberg.avro)."""

from __future__ import annotations

import io
import uuid
from decimal import Decimal

import fastavro
import pytest

from reference_impl.errors import InvalidTable
from reference_impl.iceberg import avro as A
from reference_impl.iceberg import types as T


def F(id, name, type, required=False, **kw):
    return T.NestedField(id=id, name=name, type=type, required=required, **kw)


SCHEMA = T.Schema(schema_id=0, fields=(
    F(1, "id", T.LONG, True),
    F(2, "d", T.DecimalType(precision=9, scale=2)),
    F(3, "day", T.DATE),
    F(4, "t", T.TIME),
    F(5, "ts", T.TIMESTAMP),
    F(6, "tstz", T.TIMESTAMPTZ),
    F(7, "u", T.UUID),
    F(8, "fx", T.FixedType(length=3)),
    F(9, "b", T.BINARY),
    F(10, "tags", T.ListType(element_id=11, element=T.STRING, element_required=False)),
    F(12, "props", T.MapType(key_id=13, key=T.STRING, value_id=14, value=T.INT, value_required=True)),
    F(15, "counts", T.MapType(key_id=16, key=T.INT, value_id=17, value=T.LONG)),
    F(18, "s", T.StructType(fields=(F(19, "x", T.DOUBLE, True), F(20, "d2", T.DecimalType(precision=9, scale=2))))),
    F(21, "ns", T.TIMESTAMPTZ_NS),
))


@pytest.mark.rule("ICEBERG-FMT-006", "ICEBERG-FMT-003", "ICEBERG-FMT-004", "ICEBERG-FMT-001")
def test_avro_schema_carries_every_id_and_round_trips():
    a = A.to_avro_schema(SCHEMA)
    fields = {f["name"]: f for f in a["fields"]}
    assert fields["id"] == {"name": "id", "type": "long", "field-id": 1}
    assert fields["d"]["type"] == ["null", {"type": "fixed", "name": "decimal_9_2", "size": 4, "logicalType": "decimal", "precision": 9, "scale": 2}]
    assert fields["ts"]["type"][1] == {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False}
    assert fields["tstz"]["type"][1]["adjust-to-utc"] is True
    assert fields["tags"]["type"][1]["element-id"] == 11
    assert fields["props"]["type"][1] == {"type": "map", "values": "int", "key-id": 13, "value-id": 14}
    counts = fields["counts"]["type"][1]
    assert counts["logicalType"] == "map" and counts["items"]["name"] == "k16_v17"
    assert [f["field-id"] for f in counts["items"]["fields"]] == [16, 17]
    assert fields["s"]["type"][1]["fields"][1]["type"] == ["null", "decimal_9_2"]  # a named type is defined once
    assert all(f["default"] is None for f in a["fields"] if isinstance(f["type"], list))
    fastavro.parse_schema(a)  # valid Avro
    assert A.from_avro_schema(a) == SCHEMA.as_struct


@pytest.mark.rule("ICEBERG-FMT-004", "ICEBERG-FMT-006")
def test_values_survive_a_fastavro_file_with_ids_kept():
    st = SCHEMA.as_struct
    row = {1: 7, 2: Decimal("-14.20"), 3: -1, 4: 5, 5: -1, 6: 1_510_871_468_000_001, 7: uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
           8: b"abc", 9: b"", 10: ["a", None], 11: None, 12: {"k": 1}, 15: {1: 2, -3: None}, 18: {19: 1.5, 20: None}, 21: -1}
    row = {k: v for k, v in row.items() if k in {f.id for f in st.fields}}
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(A.to_avro_schema(SCHEMA)), [A.to_avro_value(row, st)])
    buf.seek(0)
    reader = fastavro.reader(buf)
    assert A.from_avro_schema(reader.writer_schema) == st  # the ids survived the file header
    back = A.from_avro_value(next(iter(reader)), st)
    expected = dict(row)
    for f in st.fields:
        expected.setdefault(f.id, None)
    assert back == expected


@pytest.mark.rule("ICEBERG-FMT-002")
def test_defaults_become_avro_defaults():
    st = T.StructType(fields=(
        F(1, "a", T.INT, True, initial_default=3, write_default=3),
        F(2, "b", T.STRING, False, initial_default="x", write_default="x"),
        F(3, "c", T.DecimalType(precision=4, scale=2), False, initial_default=Decimal("-0.01"), write_default=None),
    ))
    a = A.to_avro_schema(st)
    assert a["fields"][0]["default"] == 3
    assert a["fields"][1]["type"] == ["string", "null"] and a["fields"][1]["default"] == "x"
    assert a["fields"][2]["default"] == "\xff\xff"
    fastavro.parse_schema(a)
    # An old file without the fields reads the defaults through Avro schema resolution.
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema({"type": "record", "name": "table", "fields": []}), [{}])
    buf.seek(0)
    got = next(iter(fastavro.reader(buf, reader_schema=fastavro.parse_schema(a))))
    assert A.from_avro_value(got, st) == {1: 3, 2: "x", 3: Decimal("-0.01")}


@pytest.mark.rule("ICEBERG-FMT-005")
def test_missing_adjust_to_utc_means_without_zone():
    a = {"type": "record", "name": "r", "fields": [{"name": "t", "type": {"type": "long", "logicalType": "timestamp-micros"}, "field-id": 1}]}
    assert A.from_avro_schema(a).fields[0].type == T.TIMESTAMP


@pytest.mark.rule("ICEBERG-FMT-006", "ICEBERG-FMT-001")
@pytest.mark.parametrize(
    "avro,fragment",
    [
        ({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]}, "field-id"),
        ({"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "array", "items": "int"}, "field-id": 1}]}, "element-id"),
        ({"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "map", "values": "int", "key-id": 2}, "field-id": 1}]}, "value-id"),
        ({"type": "record", "name": "r", "fields": [{"name": "a", "type": ["int", "string"], "field-id": 1}]}, "unions"),
        ({"type": "enum"}, "record"),
    ],
)
def test_avro_schemas_without_ids_are_invalid(avro, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        A.from_avro_schema(avro)


@pytest.mark.rule("ICEBERG-FMT-007")
def test_variant_record_has_no_ids():
    st = T.StructType(fields=(F(1, "v", T.VARIANT),))
    a = A.to_avro_schema(st)
    rec = a["fields"][0]["type"][1]
    assert [f for f in rec["fields"] if "field-id" in f] == []
    assert A.from_avro_schema(a) == st


def test_min_bytes_for_precision():
    assert [A.min_bytes_for_precision(p) for p in (1, 2, 3, 9, 10, 18, 19, 38)] == [1, 1, 2, 4, 5, 8, 9, 16]


@pytest.mark.rule("ICEBERG-PART-015", "ICEBERG-PART-014")
@pytest.mark.parametrize("day_type", [{"type": "int", "logicalType": "date"}, "int"])
def test_day_partition_values_read_as_int_or_date(day_type):
    # Writers disagree on whether the day result carries the Avro date annotation; read both.
    avro = {"type": "record", "name": "r102", "fields": [{"name": "ts_day", "type": ["null", day_type], "default": None, "field-id": 1000}]}
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(avro), [{"ts_day": 17486}])
    buf.seek(0)
    reader = fastavro.reader(buf)
    file_type = A.from_avro_schema(reader.writer_schema).fields[0].type
    assert A.from_avro_value(next(iter(reader))["ts_day"], T.DATE) == 17486
    assert file_type in (T.DATE, T.INT)
