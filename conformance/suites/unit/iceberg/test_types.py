"""Schemas and Data Types, Appendix C schema JSON, Parquet field ids, name mapping (reference_impl.iceberg.types)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.roundtrip import assert_roundtrip
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import types as T

# The struct example of Appendix C, with the elided list filled in from the list example.
SPEC_STRUCT = {
    "type": "struct",
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "uuid",
         "initial-default": "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb", "write-default": "ec5911be-b0a7-458c-8438-c9a3e53cffae"},
        {"id": 2, "name": "data", "required": False, "type": {"type": "list", "element-id": 3, "element-required": True, "element": "string"}},
    ],
}

RICH = {
    "type": "struct",
    "schema-id": 3,
    "identifier-field-ids": [1],
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long", "doc": "the key"},
        {"id": 2, "name": "props", "required": False, "type": {"type": "map", "key-id": 4, "key": "string", "value-id": 5, "value-required": False, "value": "double"}},
        {"id": 3, "name": "loc", "required": False, "type": {"type": "struct", "fields": [
            {"id": 6, "name": "lat", "required": True, "type": "float", "initial-default": 0.0, "write-default": 1.5},
            {"id": 7, "name": "long", "required": False, "type": "decimal(9,2)", "initial-default": "14.20"},
        ]}, "initial-default": {}, "write-default": None},
        {"id": 8, "name": "ts", "required": False, "type": "timestamptz_ns"},
        {"id": 9, "name": "g", "required": False, "type": "geography(srid:4326, karney)"},
        {"id": 10, "name": "f", "required": False, "type": "fixed[16]"},
        {"id": 11, "name": "v", "required": False, "type": "variant"},
        {"id": 12, "name": "u", "required": False, "type": "unknown", "initial-default": None, "write-default": None},
    ],
}


def _rt(obj):
    return assert_roundtrip(obj, lambda o: T.schema_to_dict(T.parse_schema(o)), lambda d: d, label="schema")


@pytest.mark.rule("ICEBERG-SERDE-001", "ICEBERG-SERDE-004", "ICEBERG-SCHEMA-013", "ICEBERG-SCHEMA-024")
@pytest.mark.parametrize("obj", [SPEC_STRUCT, RICH], ids=["spec-example", "rich"])
def test_schema_json_round_trip(obj):
    assert T.schema_to_dict(T.parse_schema(json.dumps(obj))) == obj
    s = T.parse_schema(obj)
    assert T.parse_schema(T.schema_to_json(s)) == s


@pytest.mark.rule("ICEBERG-SERDE-002")
@pytest.mark.parametrize(
    "text,expected",
    [
        ("decimal(9,2)", T.DecimalType(precision=9, scale=2)),
        ("fixed[16]", T.FixedType(length=16)),
        ("geometry", T.GeometryType()),
        ("geometry(srid:4326)", T.GeometryType(crs="srid:4326")),
        ("geography", T.GeographyType()),
        ("geography(srid:4326, spherical)", T.GeographyType(crs="srid:4326")),
        ("timestamp_ns", T.TIMESTAMP_NS),
        ("unknown", T.UNKNOWN),
        ("variant", T.VARIANT),
    ],
)
def test_type_strings(text, expected):
    t = T.parse_type(text)
    assert t == expected
    assert T.parse_type(T.type_to_json(t)) == t


@pytest.mark.rule("ICEBERG-SERDE-003")
@pytest.mark.parametrize("text,expected", [("decimal(9, 2)", T.DecimalType(precision=9, scale=2)), (" decimal ( 9 ,2 ) ", T.DecimalType(precision=9, scale=2)), ("fixed[ 16 ]", T.FixedType(length=16)), ("geography( OGC:CRS84 , vincenty )", T.GeographyType(algorithm="vincenty"))])
def test_whitespace_in_parameterized_types(text, expected):
    assert T.parse_type(text) == expected
    assert T.type_to_json(T.parse_type(text)) == str(expected)


@pytest.mark.rule("ICEBERG-TYPE-012", "ICEBERG-TYPE-013", "ICEBERG-TYPE-014", "ICEBERG-TYPE-004")
def test_type_parameter_rules():
    assert T.parse_type("geometry").crs == "OGC:CRS84"
    g = T.parse_type("geography")
    assert (g.crs, g.algorithm) == ("OGC:CRS84", "spherical")
    with pytest.raises(InvalidTable) as e:
        T.parse_type("geography(OGC:CRS84, foo)")
    assert e.value.rule == "ICEBERG-TYPE-013"
    with pytest.raises(InvalidTable) as e:
        T.parse_type('geometry({"type": "GeographicCRS"})')
    assert e.value.rule == "ICEBERG-TYPE-014"
    with pytest.raises(InvalidTable) as e:
        T.parse_type("decimal(39,0)")
    assert e.value.rule == "ICEBERG-TYPE-004"


@pytest.mark.rule("ICEBERG-SERDE-001", "ICEBERG-SERDE-002", "ICEBERG-SERDE-004")
@pytest.mark.parametrize(
    "obj,kind,fragment",
    [
        ("{", InvalidTable, "not valid JSON"),
        ({"type": "list"}, InvalidTable, '"type": "struct"'),
        ({"type": "struct"}, InvalidTable, "fields"),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"}]}, InvalidTable, "required"),
        ({"type": "struct", "fields": [{"id": "1", "name": "a", "required": True, "type": "int"}]}, InvalidTable, "JSON int"),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": "yes", "type": "int"}]}, InvalidTable, "boolean"),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "int128"}]}, Unsupported, "unknown Iceberg type"),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": {"type": "list", "element": "int"}}]}, InvalidTable, "element-id"),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": {"type": "set"}}]}, InvalidTable, "unknown nested type"),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "int", "initial-default": "x"}]}, InvalidTable, "integer"),
        ({"type": "struct", "schema-id": "0", "fields": []}, InvalidTable, "schema-id"),
    ],
)
def test_bad_schema_json(obj, kind, fragment):
    with pytest.raises(kind, match=fragment):
        T.parse_schema(obj)


@pytest.mark.rule("ICEBERG-SCHEMA-020", "ICEBERG-SCHEMA-021")
def test_default_restrictions_when_parsing():
    base = {"type": "struct", "fields": [{"id": 1, "name": "a", "required": False}]}
    for typ, default in (("variant", "x"), ("unknown", 1), ("geometry", "POINT (1 2)")):
        obj = json.loads(json.dumps(base))
        obj["fields"][0].update(type=typ, **{"write-default": default})
        with pytest.raises(InvalidTable) as e:
            T.parse_schema(obj)
        assert e.value.rule == "ICEBERG-SCHEMA-020"
    obj = json.loads(json.dumps(base))
    obj["fields"][0].update(type={"type": "struct", "fields": [{"id": 2, "name": "x", "required": False, "type": "int"}]}, **{"initial-default": {"2": 0}})
    with pytest.raises(InvalidTable) as e:
        T.parse_schema(obj)
    assert e.value.rule == "ICEBERG-SCHEMA-021"


def _schema(*fields, ids=None):
    return T.Schema(fields=tuple(fields), schema_id=0, identifier_field_ids=ids)


@pytest.mark.rule("ICEBERG-SCHEMA-001", "ICEBERG-SCHEMA-008", "ICEBERG-TYPE-001", "ICEBERG-SCHEMA-005", "ICEBERG-TYPE-002", "ICEBERG-SCHEMA-013")
def test_validate_schema_rules():
    dup = _schema(T.NestedField(id=1, name="a", type=T.INT), T.NestedField(id=2, name="l", type=T.ListType(element_id=1, element=T.INT)))
    assert [v.rule for v in T.validate_schema(dup, 2)] == ["ICEBERG-SCHEMA-001"]
    big = _schema(T.NestedField(id=2147483500, name="a", type=T.INT))
    assert [v.rule for v in T.validate_schema(big, 2)] == ["ICEBERG-SCHEMA-008"]
    v3 = _schema(T.NestedField(id=1, name="a", type=T.TIMESTAMP_NS), T.NestedField(id=2, name="v", type=T.VARIANT), T.NestedField(id=3, name="g", type=T.GeometryType()))
    assert [v.rule for v in T.validate_schema(v3, 2)] == ["ICEBERG-TYPE-001", "ICEBERG-SCHEMA-005", "ICEBERG-TYPE-001"]
    assert T.validate_schema(v3, 3) == []
    unk = _schema(T.NestedField(id=1, name="u", type=T.UNKNOWN, required=True))
    assert "ICEBERG-TYPE-002" in [v.rule for v in T.validate_schema(unk, 3)]
    dflt = _schema(T.NestedField(id=1, name="a", type=T.INT, initial_default=1, write_default=1))
    assert [v.rule for v in T.validate_schema(dflt, 2)] == ["ICEBERG-SCHEMA-013"]
    assert T.validate_schema(dflt, 3) == []


@pytest.mark.rule("ICEBERG-SCHEMA-006", "ICEBERG-SCHEMA-007")
def test_identifier_field_rules():
    inner = T.StructType(fields=(T.NestedField(id=3, name="x", type=T.INT, required=True),))
    fields = (
        T.NestedField(id=1, name="id", type=T.LONG, required=True),
        T.NestedField(id=2, name="s", type=inner, required=False),
        T.NestedField(id=4, name="f", type=T.DOUBLE, required=True),
        T.NestedField(id=5, name="l", type=T.ListType(element_id=6, element=T.INT, element_required=True), required=True),
        T.NestedField(id=7, name="o", type=T.STRING, required=False),
    )
    assert T.validate_schema(_schema(*fields, ids=(1,)), 2) == []
    rules = lambda ids: sorted(v.rule for v in T.validate_schema(_schema(*fields, ids=ids), 2))
    assert rules((3,)) == ["ICEBERG-SCHEMA-007"]  # under an optional struct
    assert rules((4,)) == ["ICEBERG-SCHEMA-007"]  # double
    assert rules((6,)) == ["ICEBERG-SCHEMA-006"]  # inside a list
    assert rules((7,)) == ["ICEBERG-SCHEMA-007"]  # optional
    assert rules((2,)) == ["ICEBERG-SCHEMA-006", "ICEBERG-SCHEMA-007"]  # a struct, and optional
    assert rules((99,)) == ["ICEBERG-SCHEMA-006"]


@pytest.mark.rule("ICEBERG-FMT-009", "ICEBERG-FMT-010", "ICEBERG-FMT-012", "ICEBERG-FMT-008")
def test_arrow_schema_carries_field_ids_into_parquet(tmp_path):
    s = T.parse_schema(RICH)
    arrow = T.to_arrow_schema(s, include_unknown=False)
    assert "u" not in arrow.names
    assert arrow.field("ts").type == pa.timestamp("ns", tz="UTC")
    assert arrow.field("id").metadata[T.PARQUET_FIELD_ID] == b"1"
    assert arrow.field("props").type.key_field.metadata[T.PARQUET_FIELD_ID] == b"4"
    variant = arrow.field("v").type
    assert [variant.field(i).metadata for i in range(2)] == [None, None]  # no ids on metadata/value
    table = pa.Table.from_pylist([], schema=arrow)
    pq.write_table(table, tmp_path / "f.parquet")
    back = pq.read_schema(tmp_path / "f.parquet")
    assert T.field_ids_of_arrow(back) == {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
    fields = {f.name: f for f in T.from_arrow_schema(back).fields}
    assert fields["loc"].type.fields[0] == T.NestedField(id=6, name="lat", type=T.FLOAT, required=True)
    assert fields["props"].type == T.MapType(key_id=4, key=T.STRING, value_id=5, value=T.DOUBLE)
    assert fields["v"].type == T.VARIANT


@pytest.mark.rule("ICEBERG-FMT-009")
def test_from_arrow_without_ids_is_invalid_table():
    with pytest.raises(InvalidTable, match="PARQUET:field_id") as e:
        T.from_arrow_schema(pa.schema([pa.field("a", pa.int32())]))
    assert e.value.rule == "ICEBERG-FMT-009"


@pytest.mark.rule("ICEBERG-SERDE-008", "ICEBERG-EVOL-017")
def test_name_mapping_spec_example():
    text = """[ { "field-id": 1, "names": ["id", "record_id"] },
       { "field-id": 2, "names": ["data"] },
       { "field-id": 3, "names": ["location"], "fields": [
           { "field-id": 4, "names": ["latitude", "lat"] },
           { "field-id": 5, "names": ["longitude", "long"] } ] } ]"""
    m = T.parse_name_mapping(text)
    assert m[2].fields[1] == T.MappedField(names=("longitude", "long"), field_id=5)
    assert T.parse_name_mapping(T.name_mapping_to_json(m)) == m
    assert T.parse_name_mapping('[{"names": []}]') == (T.MappedField(names=()),)
    with pytest.raises(InvalidTable, match="names"):
        T.parse_name_mapping('[{"field-id": 1}]')
    with pytest.raises(InvalidTable, match="JSON list"):
        T.parse_name_mapping('{"names": []}')


@pytest.mark.rule("ICEBERG-EVOL-016", "ICEBERG-EVOL-018", "ICEBERG-EVOL-019", "ICEBERG-EVOL-020")
def test_apply_name_mapping_to_an_id_less_file_schema():
    mapping = T.parse_name_mapping(
        '[{"field-id": 1, "names": ["a.b"]}, {"field-id": 2, "names": ["rec", "record"], "fields": [{"field-id": 3, "names": ["x"]}]},'
        ' {"field-id": 4, "names": ["l"], "fields": [{"field-id": 5, "names": ["element"]}]},'
        ' {"field-id": 6, "names": ["m"], "fields": [{"field-id": 7, "names": ["key"]}, {"field-id": 8, "names": ["value"]}]}]'
    )
    file_schema = pa.schema([
        pa.field("a.b", pa.int32()), pa.field("a", pa.struct([pa.field("b", pa.int32())])),
        pa.field("record", pa.struct([pa.field("x", pa.int64()), pa.field("y", pa.int64())])),
        pa.field("l", pa.list_(pa.string())), pa.field("m", pa.map_(pa.string(), pa.int32())),
    ])
    out = T.apply_name_mapping(file_schema, mapping)
    ids = lambda f: (f.metadata or {}).get(T.PARQUET_FIELD_ID)
    assert ids(out.field("a.b")) == b"1"
    assert ids(out.field("a")) is None  # "a.b" is a literal name, not a path
    rec = out.field("record").type
    assert ids(out.field("record")) == b"2" and ids(rec.field("x")) == b"3" and ids(rec.field("y")) is None
    assert ids(out.field("l").type.value_field) == b"5"
    assert ids(out.field("m").type.key_field) == b"7" and ids(out.field("m").type.item_field) == b"8"
    assert T.field_ids_of_arrow(out) == {1, 2, 3, 4, 5, 6, 7, 8}


def test_name_mapping_from_schema_and_indexes():
    s = T.parse_schema(RICH)
    m = T.name_mapping_from_schema(s)
    assert m[1].fields == (T.MappedField(names=("key",), field_id=4), T.MappedField(names=("value",), field_id=5))
    assert T.index_by_path(s)["loc.lat"] == 6
    assert T.index_parents(s)[6] == 3 and T.index_parents(s)[1] is None
    assert s.highest_field_id == 12
    assert s.find_type(5) == T.DOUBLE


@pytest.mark.rule("ICEBERG-SCHEMA-009", "ICEBERG-SCHEMA-010", "ICEBERG-SCHEMA-011", "ICEBERG-SCHEMA-012")
def test_reserved_metadata_column_ids():
    assert T.METADATA_COLUMNS["_file"] == (2147483646, "string")
    assert T.METADATA_COLUMNS["pos"] == (2147483545, "long")
    assert T.METADATA_COLUMNS["_last_updated_sequence_number"] == (2147483539, "long")
    assert all(fid > T.MAX_USER_FIELD_ID for fid, _ in T.METADATA_COLUMNS.values())


POINT_X = T.NestedField(id=2, name="x", type=T.INT, initial_default=0, write_default=0)
POINT_Y = T.NestedField(id=3, name="y", type=T.INT, initial_default=0, write_default=0)


@pytest.mark.rule("ICEBERG-SCHEMA-021", "ICEBERG-SCHEMA-016", "ICEBERG-SCHEMA-017")
@pytest.mark.parametrize(
    "point_default,data,result",
    [
        (None, None, None),  # (missing) with a null struct default
        (None, {2: 3}, {2: 3, 3: 0}),
        ({}, None, {2: 0, 3: 0}),
        ({}, {3: -1}, {2: 0, 3: -1}),
    ],
)
def test_spec_point_default_table(point_default, data, result):
    point = T.NestedField(id=1, name="point", type=T.StructType(fields=(POINT_X, POINT_Y)), initial_default=point_default, write_default=point_default)
    if data is None:
        assert T.effective_default(point) == result
    else:
        assert T.fill_struct_defaults(point.type, data) == result


@pytest.mark.rule("ICEBERG-SCHEMA-016")
def test_optional_field_without_default_defaults_to_null():
    assert T.effective_default(T.NestedField(id=1, name="a", type=T.INT)) is None
    assert T.effective_default(T.NestedField(id=1, name="a", type=T.INT, initial_default=1, write_default=2), which="write") == 2


@pytest.mark.rule("ICEBERG-EVOL-009", "ICEBERG-SCHEMA-001")
def test_fresh_ids_struct_fields_first_then_children():
    arrow = pa.schema([
        pa.field("a", pa.int32(), nullable=False),
        pa.field("s", pa.struct([pa.field("x", pa.list_(pa.string()))])),
        pa.field("m", pa.map_(pa.string(), pa.struct([pa.field("q", pa.int64())]))),
    ])
    s, last = T.arrow_to_schema_with_fresh_ids(arrow)
    assert last == 8 and T.index_by_path(s) == {"a": 1, "s": 2, "m": 3, "s.x": 4, "s.x.element": 5, "m.key": 6, "m.value": 7, "m.value.q": 8}
    assert s.fields[0].required
    again, last2 = T.assign_fresh_ids(T.Schema(fields=s.fields, identifier_field_ids=(1,)), last_column_id=100)
    assert last2 == 108 and again.identifier_field_ids == (101,) and again.find_type(105) == T.STRING
    assert T.validate_schema(again, 2) == []
