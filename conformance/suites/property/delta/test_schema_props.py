"""Property (3): schema JSON round trip and Arrow round trip over generated nested schemas."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.roundtrip import assert_roundtrip
from conformance.formats.delta import strategies as sd
from reference_impl.delta import schema as ds

ALL_SCHEMAS = sd.schemas(sd.data_types(sd.leaf_types(void=True)), metadata=True)


def strip_metadata(t):
    """The same type with every field's metadata emptied (Arrow carries no Delta field metadata)."""
    if isinstance(t, ds.StructType):
        return ds.StructType(fields=tuple(ds.StructField(name=f.name, type=strip_metadata(f.type), nullable=f.nullable) for f in t.fields))
    if isinstance(t, ds.ArrayType):
        return ds.ArrayType(element_type=strip_metadata(t.element_type), contains_null=t.contains_null)
    if isinstance(t, ds.MapType):
        return ds.MapType(key_type=strip_metadata(t.key_type), value_type=strip_metadata(t.value_type), value_contains_null=t.value_contains_null)
    return t


@pytest.mark.rule("DELTA-SCHEMA-001", "DELTA-SCHEMA-002", "DELTA-SCHEMA-003", "DELTA-SCHEMA-004", "DELTA-SCHEMA-006")
@given(ALL_SCHEMAS)
def test_schema_json_round_trip(schema):
    text = assert_roundtrip(schema, ds.schema_to_json, ds.parse_schema, label="schema json")
    wire = json.loads(text)
    assert wire["type"] == "struct" and [f["name"] for f in wire["fields"]] == schema.names


@pytest.mark.rule("DELTA-SCHEMA-002")
@given(ALL_SCHEMAS)
def test_schema_json_fields_have_all_four_keys(schema):
    def fields(obj):
        if isinstance(obj, dict):
            if obj.get("type") == "struct":
                for f in obj["fields"]:
                    yield f
                    yield from fields(f["type"])
            for key in ("elementType", "keyType", "valueType"):
                if key in obj:
                    yield from fields(obj[key])

    for f in fields(json.loads(ds.schema_to_json(schema))):
        assert set(f) == {"name", "type", "nullable", "metadata"}


@pytest.mark.rule("DELTA-SCHEMA-006", "DELTA-SCHEMA-010")
@given(ALL_SCHEMAS)
def test_schema_arrow_round_trip(schema):
    bare = strip_metadata(schema)
    arrow = assert_roundtrip(bare, ds.to_arrow_schema, ds.from_arrow_schema, label="schema arrow")
    # the mapping the contract states, restated independently in the strategies
    assert arrow.equals(sd.arrow_schema_of(bare)), f"{arrow} != {sd.arrow_schema_of(bare)}"


@pytest.mark.rule("DELTA-SCHEMA-005")
@given(sd.schemas(sd.leaf_types(), names=sd.field_names("plain"), min_fields=1, max_fields=3, metadata=False), st.data())
def test_schema_case_insensitive_duplicate_rejected(schema, data):
    from reference_impl.errors import InvalidTable

    victim = data.draw(st.sampled_from(schema.fields))
    dup = ds.StructField(name=victim.name.upper(), type=victim.type, nullable=True, metadata={})
    bad = ds.StructType(fields=schema.fields + (dup,))
    with pytest.raises(InvalidTable):
        ds.parse_schema(ds.schema_to_json(bad))
