"""Data types and fields (spec: Schema > DataField; Java ``DataTypeJsonParser``, ``DataTypes``).

A schema file spells atomic types as SQL-like strings (``"BIGINT NOT NULL"``, ``"DECIMAL(38, 10)"``,
``"TIMESTAMP(3) WITH LOCAL TIME ZONE"``) and nested types as JSON objects whose ``type`` carries
the nullability (``{"type": "ARRAY NOT NULL", "element": "INT"}``, ``{"type": "MAP", "key":
"STRING NOT NULL", "value": "INT"}``, ``{"type": "ROW", "fields": [<DataField>...]}``,
``{"type": "MULTISET", "element": ...}``). ``parse_type`` reads every spelling Java's parser
accepts (case-insensitive, synonyms ``INTEGER``, ``NUMERIC``/``DEC``, ``TIMESTAMP_LTZ(p)``,
defaults for omitted lengths and precisions); ``to_json`` writes the canonical spelling Java
writes (``STRING`` for ``VARCHAR(2147483647)``, ``BYTES`` for ``VARBINARY(2147483647)``).

``to_arrow`` maps a type to Arrow the way the kit compares rows: timestamps of precision <= 3 in
milliseconds, <= 6 in microseconds, above in nanoseconds (``TIMESTAMP(p) WITH LOCAL TIME ZONE``
with time zone UTC); CHAR and VARCHAR as strings, BINARY and VARBINARY as binary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

from reference_impl.errors import InvalidTable, Unsupported

MAX_LENGTH = 2147483647  # VARCHAR/VARBINARY length of STRING/BYTES
MAX_DECIMAL_PRECISION = 38
MAX_TIMESTAMP_PRECISION = 9
# Java's TimestampType / TimeType / DecimalType defaults for a type written without parameters
DEFAULT_TIMESTAMP_PRECISION = 6
DEFAULT_TIME_PRECISION = 0

ATOMIC = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "CHAR", "VARCHAR",
          "BINARY", "VARBINARY", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "VARIANT", "BLOB")
NESTED = ("ARRAY", "MAP", "MULTISET", "ROW")
_SYNONYMS = {"INTEGER": "INT", "NUMERIC": "DECIMAL", "DEC": "DECIMAL"}


@dataclass(frozen=True, slots=True)
class DataType:
    """One Paimon type. ``params``: (length,) for CHAR/VARCHAR/BINARY/VARBINARY, (precision, scale)
    for DECIMAL, (precision,) for TIME/TIMESTAMP/TIMESTAMP_LTZ; empty otherwise."""

    root: str
    nullable: bool = True
    params: tuple[int, ...] = ()
    element: "DataType | None" = None  # ARRAY, MULTISET
    key: "DataType | None" = None  # MAP
    value: "DataType | None" = None  # MAP
    fields: tuple["DataField", ...] = ()  # ROW

    @property
    def precision(self) -> int:
        return self.params[0]

    @property
    def scale(self) -> int:
        return self.params[1]

    def not_null(self) -> "DataType":
        return _replace(self, nullable=False)

    def nullable_copy(self) -> "DataType":
        return _replace(self, nullable=True)

    def __str__(self) -> str:
        return sql_string(self)


@dataclass(frozen=True, slots=True)
class DataField:
    """A column (or a ROW's field): its id (unique in the whole nested schema), name and type."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None


def _replace(t: DataType, **changes: Any) -> DataType:
    values = {f: getattr(t, f) for f in ("root", "nullable", "params", "element", "key", "value", "fields")}
    values.update(changes)
    return DataType(**values)


# ----------------------------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------------------------

_ATOMIC_RE = re.compile(
    r"^\s*(?P<root>[A-Za-z_]+)\s*(?:\(\s*(?P<p1>\d{1,10})\s*(?:,\s*(?P<p2>\d{1,10})\s*)?\))?"
    r"(?P<rest>(?:\s+[A-Za-z]+)*)\s*$"
)


def _nullability(words: list[str], where: str) -> tuple[bool, list[str]]:
    """(nullable, the words before the trailing ``NOT NULL`` / ``NULL``)."""
    if words[-2:] == ["NOT", "NULL"]:
        return False, words[:-2]
    if words[-1:] == ["NULL"]:
        return True, words[:-1]
    return True, words


def parse_atomic(text: str) -> DataType:
    """An atomic type from its SQL-like string; ``InvalidTable`` naming what is wrong."""
    if not isinstance(text, str):
        raise InvalidTable(f"a type must be a string or an object, not {type(text).__name__}", rule="PAIMON-SCHEMA-017")
    m = _ATOMIC_RE.match(text)
    if not m:
        raise InvalidTable(f"unparsable type {text!r}", rule="PAIMON-SCHEMA-017")
    root = m.group("root").upper()
    root = _SYNONYMS.get(root, root)
    words = m.group("rest").upper().split()
    nullable, words = _nullability(words, text)
    p1, p2 = m.group("p1"), m.group("p2")
    params = tuple(int(p) for p in (p1, p2) if p is not None)
    if root == "TIMESTAMP" and words[:4] == ["WITH", "LOCAL", "TIME", "ZONE"]:
        root, words = "TIMESTAMP_LTZ", words[4:]
    elif root == "TIMESTAMP" and words[:3] == ["WITHOUT", "TIME", "ZONE"]:
        words = words[3:]
    elif root == "TIME" and words[:3] == ["WITHOUT", "TIME", "ZONE"]:
        words = words[3:]
    elif root == "STRING":
        root, params = "VARCHAR", (MAX_LENGTH,) if not params else params
    elif root == "BYTES":
        root, params = "VARBINARY", (MAX_LENGTH,) if not params else params
    if words:
        raise InvalidTable(f"unparsable type {text!r} (unexpected {' '.join(words)!r})", rule="PAIMON-SCHEMA-017")
    if root in NESTED:
        raise InvalidTable(f"type {text!r}: {root} is written as a JSON object, not a string", rule="PAIMON-SCHEMA-019")
    if root not in ATOMIC:
        raise Unsupported(f"unknown Paimon type {text!r}", rule="PAIMON-SCHEMA-017")
    return DataType(root, nullable, _params(root, params, text))


def _params(root: str, params: tuple[int, ...], text: str) -> tuple[int, ...]:
    """The type's parameters with Java's defaults filled in and bounds checked."""
    def bad(why: str) -> InvalidTable:
        return InvalidTable(f"type {text!r}: {why}", rule="PAIMON-SCHEMA-017")

    if root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        if len(params) > 1:
            raise bad("takes one length")
        length = params[0] if params else 1
        if not 1 <= length <= MAX_LENGTH:
            raise bad(f"length {length} is outside 1..{MAX_LENGTH}")
        return (length,)
    if root == "DECIMAL":
        precision, scale = (params + (None, None))[:2] if params else (10, 0)
        scale = 0 if scale is None else scale
        if not 1 <= precision <= MAX_DECIMAL_PRECISION:
            raise bad(f"precision {precision} is outside 1..{MAX_DECIMAL_PRECISION}")
        if not 0 <= scale <= precision:
            raise bad(f"scale {scale} is outside 0..{precision}")
        return (precision, scale)
    if root in ("TIME", "TIMESTAMP", "TIMESTAMP_LTZ"):
        if len(params) > 1:
            raise bad("takes one precision")
        default = DEFAULT_TIME_PRECISION if root == "TIME" else DEFAULT_TIMESTAMP_PRECISION
        precision = params[0] if params else default
        if not 0 <= precision <= MAX_TIMESTAMP_PRECISION:
            raise bad(f"precision {precision} is outside 0..{MAX_TIMESTAMP_PRECISION}")
        return (precision,)
    if params:
        raise bad(f"{root} takes no parameters")
    return ()


def parse_type(node: Any) -> DataType:
    """A type from its schema-file JSON: a string (atomic) or an object (ARRAY, MAP, MULTISET, ROW)."""
    if isinstance(node, str):
        return parse_atomic(node)
    if not isinstance(node, dict):
        raise InvalidTable(f"a type must be a string or an object, not {type(node).__name__}", rule="PAIMON-SCHEMA-017")
    head = node.get("type")
    if not isinstance(head, str):
        raise InvalidTable(f"a nested type object needs a string 'type' (got {head!r})", rule="PAIMON-SCHEMA-019")
    words = head.upper().split()
    if not words:
        raise InvalidTable("a nested type object has an empty 'type'", rule="PAIMON-SCHEMA-019")
    nullable, rest = _nullability(words, head)
    root = rest[0] if rest else ""
    if len(rest) != 1 or root not in NESTED:
        raise (Unsupported if root.isalpha() and root not in ATOMIC else InvalidTable)(
            f"unknown nested type {head!r} (ARRAY, MAP, MULTISET or ROW)", rule="PAIMON-SCHEMA-019")
    if root in ("ARRAY", "MULTISET"):
        if "element" not in node:
            raise InvalidTable(f"{root} type without 'element'", rule="PAIMON-SCHEMA-019")
        return DataType(root, nullable, element=parse_type(node["element"]))
    if root == "MAP":
        if "key" not in node or "value" not in node:
            raise InvalidTable("MAP type without 'key' or 'value'", rule="PAIMON-SCHEMA-018")
        return DataType(root, nullable, key=parse_type(node["key"]), value=parse_type(node["value"]))
    fields = node.get("fields")
    if not isinstance(fields, list):
        raise InvalidTable("ROW type without a 'fields' list", rule="PAIMON-SCHEMA-019")
    return DataType(root, nullable, fields=tuple(parse_field(f) for f in fields))


def parse_field(node: Any) -> DataField:
    """A DataField object: ``id``, ``name``, ``type``, optional ``description`` and ``defaultValue``."""
    if not isinstance(node, dict):
        raise InvalidTable(f"a field must be an object, not {type(node).__name__}", rule="PAIMON-SCHEMA-004")
    fid, name = node.get("id"), node.get("name")
    if not isinstance(fid, int) or isinstance(fid, bool) or not isinstance(name, str):
        raise InvalidTable(f"a field needs an int 'id' and a string 'name' (got {fid!r}, {name!r})", rule="PAIMON-SCHEMA-004")
    if "type" not in node:
        raise InvalidTable(f"field {name!r} has no 'type'", rule="PAIMON-SCHEMA-004")
    desc, default = node.get("description"), node.get("defaultValue")
    for key, value in (("description", desc), ("defaultValue", default)):
        if value is not None and not isinstance(value, str):
            raise InvalidTable(f"field {name!r}: {key} must be a string", rule="PAIMON-SCHEMA-005")
    return DataField(fid, name, parse_type(node["type"]), desc, default)


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def sql_string(t: DataType) -> str:
    """The SQL-like spelling Java writes (nested types as ``ARRAY<INT>`` etc.)."""
    suffix = "" if t.nullable else " NOT NULL"
    r = t.root
    if r == "VARCHAR" and t.params == (MAX_LENGTH,):
        base = "STRING"
    elif r == "VARBINARY" and t.params == (MAX_LENGTH,):
        base = "BYTES"
    elif r == "TIMESTAMP_LTZ":
        base = f"TIMESTAMP({t.precision}) WITH LOCAL TIME ZONE"
    elif r == "DECIMAL":
        base = f"DECIMAL({t.precision}, {t.scale})"
    elif t.params:
        base = f"{r}({', '.join(map(str, t.params))})"
    elif r in ("ARRAY", "MULTISET"):
        base = f"{r}<{sql_string(t.element)}>"
    elif r == "MAP":
        base = f"MAP<{sql_string(t.key)}, {sql_string(t.value)}>"
    elif r == "ROW":
        base = "ROW<" + ", ".join(f"`{f.name}` {sql_string(f.type)}" for f in t.fields) + ">"
    else:
        base = r
    return base + suffix


def to_json(t: DataType) -> Any:
    """The schema-file JSON of a type (what Java's ``serializeJson`` writes)."""
    suffix = "" if t.nullable else " NOT NULL"
    if t.root in ("ARRAY", "MULTISET"):
        return {"type": t.root + suffix, "element": to_json(t.element)}
    if t.root == "MAP":
        return {"type": "MAP" + suffix, "key": to_json(t.key), "value": to_json(t.value)}
    if t.root == "ROW":
        return {"type": "ROW" + suffix, "fields": [field_json(f) for f in t.fields]}
    return sql_string(t)


def field_json(f: DataField) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f.id, "name": f.name, "type": to_json(f.type)}
    if f.description is not None:
        out["description"] = f.description
    if f.default_value is not None:
        out["defaultValue"] = f.default_value
    return out


# ----------------------------------------------------------------------------------------------
# Walking and Arrow
# ----------------------------------------------------------------------------------------------


def walk(fields: tuple[DataField, ...] | list[DataField]) -> Iterator[DataField]:
    """Every field, nested ROW fields included (in ARRAY/MAP/MULTISET too), depth first."""
    for f in fields:
        yield f
        yield from walk(nested_fields(f.type))


def nested_fields(t: DataType) -> tuple[DataField, ...]:
    if t.root == "ROW":
        return t.fields
    out: tuple[DataField, ...] = ()
    for child in (t.element, t.key, t.value):
        if child is not None:
            out += nested_fields(child)
    return out


def to_arrow(t: DataType, *, declared: bool = False) -> Any:
    """The Arrow type the kit reads a Paimon type as.

    A NOT NULL field of a nullable ROW is nullable in Arrow: when the row is null its fields are too
    (Arrow, unlike Paimon, checks a child's nulls without its parent's). ``declared``: every field as
    the schema declares it (what a writer puts in a file: Parquet's required field in an optional group)."""
    import pyarrow as pa

    r = t.root
    simple = {"BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
              "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "CHAR": pa.string(),
              "VARCHAR": pa.string(), "BINARY": pa.binary(), "VARBINARY": pa.binary(), "DATE": pa.date32()}
    if r in simple:
        return simple[r]
    if r == "DECIMAL":
        return pa.decimal128(t.precision, t.scale)
    if r == "TIME":
        # Paimon holds a TIME of any precision as milliseconds of the day (Java's internal int; Parquet
        # INT32 TIME_MILLIS, ORC INT, BinaryRow 4 bytes): the precision is declared, never stored.
        return pa.time32("ms")
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        unit = "ms" if t.precision <= 3 else "us" if t.precision <= 6 else "ns"
        return pa.timestamp(unit, tz="UTC" if r == "TIMESTAMP_LTZ" else None)
    if r == "ARRAY":
        return pa.list_(arrow_field("element", t.element, declared=declared))
    if r == "MULTISET":
        # Java and Arrow: a map from element to its count
        return pa.map_(arrow_field("key", t.element.not_null(), declared=declared),
                       arrow_field("value", DataType("INT", False)))
    if r == "MAP":
        return pa.map_(arrow_field("key", t.key.not_null(), declared=declared),
                       arrow_field("value", t.value, declared=declared))
    if r == "ROW":
        relax = t.nullable and not declared
        return pa.struct([arrow_field(f.name, f.type.nullable_copy() if relax else f.type, declared=declared)
                          for f in t.fields])
    raise Unsupported(f"the reference does not read {r} columns yet")


def arrow_field(name: str, t: DataType, *, declared: bool = False) -> Any:
    import pyarrow as pa

    return pa.field(name, to_arrow(t, declared=declared), nullable=t.nullable)


def arrow_schema(fields: tuple[DataField, ...] | list[DataField]) -> Any:
    import pyarrow as pa

    return pa.schema([arrow_field(f.name, f.type) for f in fields])


__all__ = ["DataType", "DataField", "parse_type", "parse_atomic", "parse_field", "to_json", "field_json", "sql_string",
           "walk", "nested_fields", "to_arrow", "arrow_field", "arrow_schema", "ATOMIC", "NESTED", "MAX_LENGTH"]
