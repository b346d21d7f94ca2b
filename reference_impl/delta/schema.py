"""Schema Serialization Format: the Spark-style JSON schema in metaData.schemaString, and Arrow.

The model is a small tree of frozen dataclasses (``StructType`` > ``StructField`` > ``DataType``)
that mirrors the wire layout one to one, so that ``schema_to_json(parse_schema(s))`` keeps every
field, its order and its metadata. Arrow is the in-memory form the reader and writer use; the
mapping is fixed here once (timestamp -> UTC microseconds, timestamp_ntz -> zone-less
microseconds, void -> null, variant -> the unshredded ``struct<value, metadata>``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Union

import pyarrow as pa

from reference_impl.errors import InvalidTable, Unsupported

# Wire keys, spelled as the spec spells them.
TYPE = "type"
FIELDS = "fields"
NAME = "name"
NULLABLE = "nullable"
METADATA = "metadata"
ELEMENT_TYPE = "elementType"
CONTAINS_NULL = "containsNull"
KEY_TYPE = "keyType"
VALUE_TYPE = "valueType"
VALUE_CONTAINS_NULL = "valueContainsNull"
STRUCT = "struct"
ARRAY = "array"
MAP = "map"
DECIMAL = "decimal"

PRIMITIVE_NAMES = frozenset(
    {
        "string",
        "long",
        "integer",
        "short",
        "byte",
        "float",
        "double",
        "boolean",
        "binary",
        "date",
        "timestamp",
        "timestamp_ntz",
        "void",
        "variant",
    }
)
MAX_DECIMAL_PRECISION = 38
# Spark's default when a schema says just "decimal".
DEFAULT_DECIMAL = (10, 0)
_DECIMAL_RE = re.compile(r"^decimal\(\s*(-?\d{1,40})\s*,\s*(-?\d{1,40})\s*\)$", re.ASCII)

# The unshredded Parquet layout of a variant ("Variant data in Parquet").
VARIANT_VALUE = "value"
VARIANT_METADATA = "metadata"

RULE_SHAPE = "DELTA-SCHEMA-001"
RULE_FIELD = "DELTA-SCHEMA-002"
RULE_ARRAY = "DELTA-SCHEMA-003"
RULE_MAP = "DELTA-SCHEMA-004"
RULE_UNIQUE = "DELTA-SCHEMA-005"
RULE_PRIMITIVE = "DELTA-SCHEMA-006"


@dataclass(frozen=True, slots=True, kw_only=True)
class PrimitiveType:
    """A named primitive type (see PRIMITIVE_NAMES); decimals are ``DecimalType``."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class DecimalType:
    """decimal(precision, scale); the wire form is the string "decimal(p,s)"."""

    precision: int
    scale: int

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayType:
    """A variable-length list of elements of one type."""

    element_type: "DataType"
    contains_null: bool = True

    def __str__(self) -> str:
        return f"array<{self.element_type}>"


@dataclass(frozen=True, slots=True, kw_only=True)
class MapType:
    """Key/value pairs; keys are never null."""

    key_type: "DataType"
    value_type: "DataType"
    value_contains_null: bool = True

    def __str__(self) -> str:
        return f"map<{self.key_type},{self.value_type}>"


@dataclass(frozen=True, slots=True, kw_only=True)
class StructField:
    """One (possibly nested) column: name, type, nullability and the column metadata."""

    name: str
    type: "DataType"
    nullable: bool = True
    # Excluded from the hash (dicts are unhashable) but kept in equality.
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)


class FieldNotFound(InvalidTable, KeyError):
    """A column name that the struct does not have (also a KeyError for dict-like callers)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StructType:
    """An ordered tuple of fields: the table schema itself or a struct column."""

    fields: tuple[StructField, ...] = ()

    @property
    def names(self) -> list[str]:
        """Field names in order."""
        return [f.name for f in self.fields]

    def get(self, name: str) -> StructField | None:
        """The field called ``name`` (exact match), or None."""
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def field(self, name: str) -> StructField:
        """The field called ``name``; ``FieldNotFound`` (an InvalidTable and a KeyError) if absent."""
        f = self.get(name)
        if f is None:
            raise FieldNotFound(f"no column {name!r} in schema (columns: {', '.join(self.names)})")
        return f

    def __str__(self) -> str:
        return "struct<" + ",".join(f"{f.name}:{f.type}" for f in self.fields) + ">"


DataType = Union[PrimitiveType, DecimalType, ArrayType, MapType, StructType]

# Shared instances: cheap to compare and to spell in other modules.
STRING = PrimitiveType(name="string")
LONG = PrimitiveType(name="long")
INTEGER = PrimitiveType(name="integer")
SHORT = PrimitiveType(name="short")
BYTE = PrimitiveType(name="byte")
FLOAT = PrimitiveType(name="float")
DOUBLE = PrimitiveType(name="double")
BOOLEAN = PrimitiveType(name="boolean")
BINARY = PrimitiveType(name="binary")
DATE = PrimitiveType(name="date")
TIMESTAMP = PrimitiveType(name="timestamp")
TIMESTAMP_NTZ = PrimitiveType(name="timestamp_ntz")
VOID = PrimitiveType(name="void")
VARIANT = PrimitiveType(name="variant")


def is_primitive(t: DataType, *names: str) -> bool:
    """Whether ``t`` is a primitive type, optionally one of ``names``."""
    return isinstance(t, PrimitiveType) and (not names or t.name in names)


# ---------------------------------------------------------------------------------------------
# JSON -> model


def parse_schema(schema_string: str, *, check_unique: bool = True) -> StructType:
    """Parse metaData.schemaString; InvalidTable on bad JSON or shape, Unsupported on unknown types."""
    if not isinstance(schema_string, str):
        raise InvalidTable(f"schemaString must be a JSON string, got {type(schema_string).__name__}", rule=RULE_SHAPE)
    try:
        obj = json.loads(schema_string)
    except (ValueError, RecursionError) as exc:
        raise InvalidTable(f"schemaString is not valid JSON: {exc}", rule=RULE_SHAPE) from None
    if not isinstance(obj, dict) or obj.get(TYPE) != STRUCT:
        raise InvalidTable('schemaString must be a JSON object with "type": "struct"', rule=RULE_SHAPE)
    schema = parse_type(obj)
    assert isinstance(schema, StructType)
    if check_unique:
        check_unique_names(schema)
    return schema


def parse_type(obj: Any, *, where: str = "schema") -> DataType:
    """Parse one wire type: a primitive name string or a struct/array/map object."""
    if isinstance(obj, str):
        return _parse_type_name(obj, where)
    if not isinstance(obj, dict):
        raise InvalidTable(f"{where}: a type must be a string or an object, got {_jtype(obj)}", rule=RULE_SHAPE)
    kind = obj.get(TYPE)
    if kind == STRUCT:
        raw_fields = obj.get(FIELDS)
        if not isinstance(raw_fields, list):
            raise InvalidTable(f"{where}: struct needs a list of fields", rule=RULE_SHAPE)
        return StructType(fields=tuple(_parse_field(f, where) for f in raw_fields))
    if kind == ARRAY:
        _require(obj, (ELEMENT_TYPE, CONTAINS_NULL), where, RULE_ARRAY)
        return ArrayType(
            element_type=parse_type(obj[ELEMENT_TYPE], where=f"{where}.element"),
            contains_null=_bool(obj, CONTAINS_NULL, where, RULE_ARRAY),
        )
    if kind == MAP:
        _require(obj, (KEY_TYPE, VALUE_TYPE, VALUE_CONTAINS_NULL), where, RULE_MAP)
        return MapType(
            key_type=parse_type(obj[KEY_TYPE], where=f"{where}.key"),
            value_type=parse_type(obj[VALUE_TYPE], where=f"{where}.value"),
            value_contains_null=_bool(obj, VALUE_CONTAINS_NULL, where, RULE_MAP),
        )
    if isinstance(kind, str) and set(obj) == {TYPE}:
        # A primitive spelled as an object, as the spec's variant example does: {"type": "variant"}.
        return _parse_type_name(kind, where)
    raise InvalidTable(f"{where}: unknown complex type {kind!r}", rule=RULE_SHAPE)


def _parse_field(obj: Any, where: str) -> StructField:
    if not isinstance(obj, dict):
        raise InvalidTable(f"{where}: a struct field must be an object, got {_jtype(obj)}", rule=RULE_FIELD)
    _require(obj, (NAME, TYPE, NULLABLE), where, RULE_FIELD)
    name = obj[NAME]
    if not isinstance(name, str):
        raise InvalidTable(f"{where}: field name must be a string, got {_jtype(name)}", rule=RULE_FIELD)
    path = f"{where}.{name}" if where != "schema" else name
    metadata = obj.get(METADATA, {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise InvalidTable(f"{path}: field metadata must be an object", rule=RULE_FIELD)
    return StructField(
        name=name,
        type=parse_type(obj[TYPE], where=path),
        nullable=_bool(obj, NULLABLE, path, RULE_FIELD),
        metadata=metadata,
    )


def _parse_type_name(name: str, where: str) -> DataType:
    if name in PRIMITIVE_NAMES:
        return PrimitiveType(name=name)
    if name == DECIMAL:
        return DecimalType(precision=DEFAULT_DECIMAL[0], scale=DEFAULT_DECIMAL[1])
    m = _DECIMAL_RE.match(name)
    if m:
        precision, scale = int(m.group(1)), int(m.group(2))
        if not (1 <= precision <= MAX_DECIMAL_PRECISION) or not (0 <= scale <= precision):
            raise InvalidTable(
                f"{where}: {name} is out of range (1 <= precision <= 38, 0 <= scale <= precision)",
                rule=RULE_PRIMITIVE,
            )
        return DecimalType(precision=precision, scale=scale)
    if name.startswith(DECIMAL):
        raise InvalidTable(f"{where}: malformed decimal type {name!r}", rule=RULE_PRIMITIVE)
    raise Unsupported(f"{where}: unknown data type {name!r}", feature=f"type:{name}", rule=RULE_PRIMITIVE)


def _require(obj: dict, keys: tuple[str, ...], where: str, rule: str) -> None:
    missing = [k for k in keys if k not in obj]
    if missing:
        raise InvalidTable(f"{where}: missing required key(s) {', '.join(missing)}", rule=rule)


def _bool(obj: dict, key: str, where: str, rule: str) -> bool:
    value = obj[key]
    if not isinstance(value, bool):
        raise InvalidTable(f"{where}: {key} must be a boolean, got {_jtype(value)}", rule=rule)
    return value


def _jtype(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def check_unique_names(schema: StructType, *, where: str = "schema") -> None:
    """InvalidTable if two fields of any struct differ only by case (DELTA-SCHEMA-005)."""
    for path, struct in _structs(schema, where):
        seen: dict[str, str] = {}
        for f in struct.fields:
            folded = f.name.lower()
            if folded in seen:
                raise InvalidTable(
                    f"{path}: column names {seen[folded]!r} and {f.name!r} clash (names must be unique ignoring case)",
                    rule=RULE_UNIQUE,
                )
            seen[folded] = f.name


def _structs(t: DataType, path: str) -> Iterator[tuple[str, StructType]]:
    if isinstance(t, StructType):
        yield path, t
        for f in t.fields:
            yield from _structs(f.type, f"{path}.{f.name}" if path != "schema" else f.name)
    elif isinstance(t, ArrayType):
        yield from _structs(t.element_type, f"{path}.element")
    elif isinstance(t, MapType):
        yield from _structs(t.key_type, f"{path}.key")
        yield from _structs(t.value_type, f"{path}.value")


def walk_fields(schema: StructType, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], StructField]]:
    """Every struct field at every level with its field path (arrays/maps add element/key/value)."""
    for f in schema.fields:
        path = prefix + (f.name,)
        yield path, f
        yield from _walk_type(f.type, path)


def _walk_type(t: DataType, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], StructField]]:
    if isinstance(t, StructType):
        yield from walk_fields(t, path)
    elif isinstance(t, ArrayType):
        yield from _walk_type(t.element_type, path + ("element",))
    elif isinstance(t, MapType):
        yield from _walk_type(t.key_type, path + ("key",))
        yield from _walk_type(t.value_type, path + ("value",))


# ---------------------------------------------------------------------------------------------
# model -> JSON


def type_to_wire(t: DataType) -> Any:
    """The JSON value of a type (string for primitives and decimals, object otherwise)."""
    if isinstance(t, PrimitiveType):
        return t.name
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, ArrayType):
        return {TYPE: ARRAY, ELEMENT_TYPE: type_to_wire(t.element_type), CONTAINS_NULL: t.contains_null}
    if isinstance(t, MapType):
        return {
            TYPE: MAP,
            KEY_TYPE: type_to_wire(t.key_type),
            VALUE_TYPE: type_to_wire(t.value_type),
            VALUE_CONTAINS_NULL: t.value_contains_null,
        }
    if isinstance(t, StructType):
        return {
            TYPE: STRUCT,
            FIELDS: [
                {NAME: f.name, TYPE: type_to_wire(f.type), NULLABLE: f.nullable, METADATA: dict(f.metadata)}
                for f in t.fields
            ],
        }
    raise InvalidTable(f"not a Delta data type: {t!r}")


def schema_to_json(schema: StructType) -> str:
    """Compact JSON in Spark's layout (type, fields; name, type, nullable, metadata), order kept."""
    return json.dumps(type_to_wire(schema), separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Arrow

_PRIMITIVE_TO_ARROW: dict[str, pa.DataType] = {
    "string": pa.string(),
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "float": pa.float32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
    "void": pa.null(),
    "variant": pa.struct(
        [pa.field(VARIANT_VALUE, pa.binary(), nullable=False), pa.field(VARIANT_METADATA, pa.binary(), nullable=False)]
    ),
}


def to_arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type readers return for a Delta type (logical names for nested fields)."""
    if isinstance(t, PrimitiveType):
        try:
            return _PRIMITIVE_TO_ARROW[t.name]
        except KeyError:
            raise Unsupported(f"unknown data type {t.name!r}", feature=f"type:{t.name}") from None
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, ArrayType):
        return pa.list_(_arrow_field("element", t.element_type, t.contains_null))
    if isinstance(t, MapType):
        return pa.map_(_arrow_field("key", t.key_type, False), _arrow_field("value", t.value_type, t.value_contains_null))
    if isinstance(t, StructType):
        return pa.struct([to_arrow_field(f) for f in t.fields])
    raise InvalidTable(f"not a Delta data type: {t!r}")


def to_arrow_field(f: StructField) -> pa.Field:
    """One struct field as an Arrow field (logical name, no metadata)."""
    return _arrow_field(f.name, f.type, f.nullable)


def _arrow_field(name: str, t: DataType, nullable: bool) -> pa.Field:
    arrow = to_arrow_type(t)
    # A void column holds only nulls, and Arrow refuses a non-nullable null-typed field.
    return pa.field(name, arrow, nullable=nullable or pa.types.is_null(arrow))


def to_arrow_schema(schema: StructType) -> pa.Schema:
    """The logical Arrow schema of a table."""
    return pa.schema([to_arrow_field(f) for f in schema.fields])


def from_arrow_type(t: pa.DataType) -> DataType:
    """The Delta type for an Arrow type; Unsupported for types Delta cannot store."""
    if pa.types.is_dictionary(t):
        return from_arrow_type(t.value_type)
    if pa.types.is_int8(t):
        return BYTE
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return SHORT
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return INTEGER
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return LONG
    if pa.types.is_float32(t):
        return FLOAT
    if pa.types.is_float64(t):
        return DOUBLE
    if pa.types.is_boolean(t):
        return BOOLEAN
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is(t, "is_string_view"):
        return STRING
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or _is(t, "is_binary_view"):
        return BINARY
    if pa.types.is_date(t):
        return DATE
    if pa.types.is_timestamp(t):
        return TIMESTAMP if t.tz is not None else TIMESTAMP_NTZ
    if pa.types.is_null(t):
        return VOID
    if pa.types.is_decimal(t):
        if t.precision > MAX_DECIMAL_PRECISION:
            raise Unsupported(f"{t} exceeds Delta's maximum decimal precision 38", feature="type:decimal", rule=RULE_PRIMITIVE)
        return DecimalType(precision=t.precision, scale=t.scale)
    if pa.types.is_map(t):
        return MapType(
            key_type=from_arrow_type(t.key_type),
            value_type=from_arrow_type(t.item_type),
            value_contains_null=t.item_field.nullable,
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or _is(t, "is_list_view"):
        return ArrayType(element_type=from_arrow_type(t.value_type), contains_null=t.value_field.nullable)
    if pa.types.is_struct(t):
        return StructType(
            fields=tuple(
                StructField(name=t.field(i).name, type=from_arrow_type(t.field(i).type), nullable=t.field(i).nullable)
                for i in range(t.num_fields)
            )
        )
    raise Unsupported(f"Arrow type {t} has no Delta equivalent", feature=f"arrow:{t}")


def _is(t: pa.DataType, predicate: str) -> bool:
    fn = getattr(pa.types, predicate, None)
    return bool(fn and fn(t))


def from_arrow_schema(schema: pa.Schema) -> StructType:
    """The Delta schema of an Arrow schema (names, nullability; no metadata)."""
    return StructType(
        fields=tuple(StructField(name=f.name, type=from_arrow_type(f.type), nullable=f.nullable) for f in schema)
    )
