"""Schema Serialization Format: parsing, printing and the Arrow mapping (reference_impl.delta.schema)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from reference_impl.delta import schema as S
from reference_impl.errors import InvalidTable, Unsupported

# The spec's "Schema Serialization Format > Example", verbatim.
SPEC_EXAMPLE = """
{
  "type" : "struct",
  "fields" : [ {
    "name" : "a", "type" : "integer", "nullable" : false, "metadata" : { }
  }, {
    "name" : "b",
    "type" : { "type" : "struct", "fields" : [ { "name" : "d", "type" : "integer", "nullable" : false, "metadata" : { } } ] },
    "nullable" : true, "metadata" : { }
  }, {
    "name" : "c",
    "type" : { "type" : "array", "elementType" : "integer", "containsNull" : false },
    "nullable" : true, "metadata" : { }
  }, {
    "name" : "e",
    "type" : {
      "type" : "array",
      "elementType" : { "type" : "struct", "fields" : [ { "name" : "d", "type" : "integer", "nullable" : false, "metadata" : { } } ] },
      "containsNull" : true
    },
    "nullable" : true, "metadata" : { }
  }, {
    "name" : "f",
    "type" : { "type" : "map", "keyType" : "string", "valueType" : "string", "valueContainsNull" : true },
    "nullable" : true, "metadata" : { }
  } ]
}
"""


def _field(name, type_, nullable=True, metadata=None):
    return {"name": name, "type": type_, "nullable": nullable, "metadata": metadata or {}}


def _schema(*fields):
    return json.dumps({"type": "struct", "fields": list(fields)})


@pytest.mark.rule("DELTA-SCHEMA-001", "DELTA-SCHEMA-003", "DELTA-SCHEMA-004")
def test_spec_example_parses_to_the_expected_tree():
    s = S.parse_schema(SPEC_EXAMPLE)
    assert s.names == ["a", "b", "c", "e", "f"]
    assert s.field("a") == S.StructField(name="a", type=S.INTEGER, nullable=False)
    assert s.field("b").type == S.StructType(fields=(S.StructField(name="d", type=S.INTEGER, nullable=False),))
    assert s.field("c").type == S.ArrayType(element_type=S.INTEGER, contains_null=False)
    e = s.field("e").type
    assert isinstance(e, S.ArrayType) and e.contains_null is True
    assert isinstance(e.element_type, S.StructType) and e.element_type.names == ["d"]
    assert s.field("f").type == S.MapType(key_type=S.STRING, value_type=S.STRING, value_contains_null=True)


@pytest.mark.rule("DELTA-SCHEMA-001")
def test_round_trip_is_compact_spark_layout_and_keeps_order_and_metadata():
    text = _schema(
        _field("z", "long", False, {"delta.columnMapping.id": 3, "comment": "x"}),
        _field("a", {"type": "map", "keyType": "string", "valueType": {"type": "array", "elementType": "date", "containsNull": True}, "valueContainsNull": False}),
        _field("m", "decimal(38,18)"),
    )
    s = S.parse_schema(text)
    out = S.schema_to_json(s)
    assert json.loads(out) == json.loads(text)
    assert " " not in out.replace('"comment":"x"', "")  # compact
    assert out.startswith('{"type":"struct","fields":[{"name":"z","type":"long","nullable":false,"metadata":')
    assert S.parse_schema(out) == s


@pytest.mark.rule("DELTA-SCHEMA-006")
@pytest.mark.parametrize(
    "name",
    ["string", "long", "integer", "short", "byte", "float", "double", "boolean", "binary", "date", "timestamp", "timestamp_ntz", "void", "variant"],
)
def test_every_primitive_name_parses_and_prints_back(name):
    s = S.parse_schema(_schema(_field("c", name)))
    assert s.field("c").type == S.PrimitiveType(name=name)
    assert json.loads(S.schema_to_json(s))["fields"][0]["type"] == name


@pytest.mark.rule("DELTA-SCHEMA-006")
@pytest.mark.parametrize("text,p,s", [("decimal(10,2)", 10, 2), ("decimal(38,38)", 38, 38), ("decimal( 5 , 0 )", 5, 0), ("decimal", 10, 0)])
def test_decimal_precision_and_scale(text, p, s):
    t = S.parse_schema(_schema(_field("d", text))).field("d").type
    assert t == S.DecimalType(precision=p, scale=s)
    assert S.type_to_wire(t) == f"decimal({p},{s})"
    assert S.to_arrow_type(t) == pa.decimal128(p, s)


@pytest.mark.rule("DELTA-SCHEMA-006")
@pytest.mark.parametrize("text", ["decimal(39,0)", "decimal(10,11)", "decimal(0,0)", "decimal(10,-1)", "decimal(a,b)"])
def test_decimal_out_of_range_is_invalid(text):
    with pytest.raises(InvalidTable) as e:
        S.parse_schema(_schema(_field("d", text)))
    assert "decimal" in str(e.value)


@pytest.mark.rule("DELTA-SCHEMA-006")
def test_unknown_type_name_is_unsupported_not_invalid():
    with pytest.raises(Unsupported) as e:
        S.parse_schema(_schema(_field("g", "geometry")))
    assert "unknown data type 'geometry'" in str(e.value)


@pytest.mark.rule("DELTA-SCHEMA-006")
def test_primitive_written_as_object_is_accepted():
    # The spec's variant example spells the element type as {"type": "variant"}.
    t = S.parse_type({"type": "array", "elementType": {"type": "variant"}, "containsNull": False})
    assert t == S.ArrayType(element_type=S.VARIANT, contains_null=False)


@pytest.mark.rule("DELTA-SCHEMA-002")
@pytest.mark.parametrize("missing", ["name", "type", "nullable"])
def test_field_missing_a_required_key_is_invalid(missing):
    f = _field("a", "integer")
    del f[missing]
    with pytest.raises(InvalidTable) as e:
        S.parse_schema(_schema(f))
    assert missing in str(e.value) and e.value.rule == "DELTA-SCHEMA-002"


@pytest.mark.rule("DELTA-SCHEMA-002")
def test_missing_metadata_defaults_to_empty():
    f = _field("a", "integer")
    del f["metadata"]
    assert S.parse_schema(_schema(f)).field("a").metadata == {}


@pytest.mark.rule("DELTA-SCHEMA-003", "DELTA-SCHEMA-004")
@pytest.mark.parametrize(
    "type_,rule",
    [
        ({"type": "array", "elementType": "integer"}, "DELTA-SCHEMA-003"),
        ({"type": "map", "keyType": "string", "valueType": "string"}, "DELTA-SCHEMA-004"),
        ({"type": "map", "keyType": "string", "valueType": "string", "valueContainsNull": "yes"}, "DELTA-SCHEMA-004"),
    ],
)
def test_malformed_array_and_map_are_invalid(type_, rule):
    with pytest.raises(InvalidTable) as e:
        S.parse_schema(_schema(_field("x", type_)))
    assert e.value.rule == rule


@pytest.mark.rule("DELTA-SCHEMA-001")
@pytest.mark.parametrize("text", ["not json", "[]", '{"type":"array"}', '{"type":"struct"}', '{"type":"struct","fields":[1]}'])
def test_bad_schema_strings_are_invalid_table(text):
    with pytest.raises(InvalidTable):
        S.parse_schema(text)


@pytest.mark.rule("DELTA-SCHEMA-005")
def test_names_must_be_unique_ignoring_case_at_every_level():
    with pytest.raises(InvalidTable) as e:
        S.parse_schema(_schema(_field("a", "integer"), _field("A", "long")))
    assert e.value.rule == "DELTA-SCHEMA-005" and "'a' and 'A'" in str(e.value)
    nested = _field("s", {"type": "array", "elementType": {"type": "struct", "fields": [_field("x", "integer"), _field("X", "integer")]}, "containsNull": True})
    with pytest.raises(InvalidTable):
        S.parse_schema(_schema(nested))
    # the check can be deferred (validators collect it themselves)
    assert S.parse_schema(_schema(_field("a", "integer"), _field("A", "long")), check_unique=False).names == ["a", "A"]


def test_field_lookup_errors_are_lakeconf_and_key_errors():
    s = S.parse_schema(SPEC_EXAMPLE)
    with pytest.raises(InvalidTable):
        s.field("nope")
    with pytest.raises(KeyError):
        s.field("nope")
    assert s.get("nope") is None


@pytest.mark.rule("DELTA-SCHEMA-007")
def test_arrow_mapping_of_timestamps_void_and_variant():
    s = S.parse_schema(_schema(_field("t", "timestamp"), _field("n", "timestamp_ntz"), _field("v", "void"), _field("x", "variant")))
    a = S.to_arrow_schema(s)
    assert a.field("t").type == pa.timestamp("us", tz="UTC")
    assert a.field("n").type == pa.timestamp("us")
    assert a.field("v").type == pa.null()
    assert a.field("x").type == pa.struct([pa.field("value", pa.binary(), False), pa.field("metadata", pa.binary(), False)])


def test_arrow_round_trip_of_the_spec_example():
    s = S.parse_schema(SPEC_EXAMPLE)
    a = S.to_arrow_schema(s)
    assert a.field("f").type == pa.map_(pa.string(), pa.string())
    assert a.field("c").type.value_field.nullable is False
    assert a.field("a").nullable is False
    assert S.from_arrow_schema(a) == s


@pytest.mark.parametrize(
    "arrow,delta",
    [
        (pa.timestamp("ns", tz="Europe/Paris"), S.TIMESTAMP),
        (pa.timestamp("ms"), S.TIMESTAMP_NTZ),
        (pa.large_string(), S.STRING),
        (pa.dictionary(pa.int32(), pa.string()), S.STRING),
        (pa.large_binary(), S.BINARY),
        (pa.uint16(), S.INTEGER),
        (pa.date64(), S.DATE),
        (pa.null(), S.VOID),
        (pa.large_list(pa.int8()), S.ArrayType(element_type=S.BYTE, contains_null=True)),
    ],
)
def test_from_arrow_type_normalises(arrow, delta):
    assert S.from_arrow_type(arrow) == delta


@pytest.mark.parametrize("arrow", [pa.uint64(), pa.float16(), pa.time64("us"), pa.decimal256(40, 2), pa.duration("s")])
def test_from_arrow_type_refuses_what_delta_cannot_store(arrow):
    with pytest.raises(Unsupported):
        S.from_arrow_type(arrow)


def test_walk_fields_reaches_every_nested_struct_field():
    s = S.parse_schema(SPEC_EXAMPLE)
    paths = [p for p, _ in S.walk_fields(s)]
    assert ("e", "element", "d") in paths and ("b", "d") in paths and len(paths) == 7
