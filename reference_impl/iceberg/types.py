"""Schemas and Data Types: the type model, schema JSON (Appendix C), Arrow/Parquet ids, name mapping.

The model mirrors the spec: primitive types (incl. the v3 ``unknown``, ``timestamp_ns``,
``timestamptz_ns``, ``geometry(C)``, ``geography(C, A)``), the semi-structured ``variant``, and
the nested ``struct``/``list``/``map`` whose fields, elements, keys and values all carry ids.
Default values (v3 ``initial-default`` / ``write-default``) are held as internal values (see
``values``) and converted with the JSON single-value serialization of Appendix D.

Arrow is the in-memory form: every Arrow field carries its Iceberg id in the field metadata
``PARQUET:field_id`` (Appendix A, Parquet), which pyarrow writes as the Parquet field_id.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Union

import pyarrow as pa

from reference_impl.common import validation as _validation
from reference_impl.errors import Internal, InvalidTable, Unsupported

# Appendix C wire keys, spelled as the spec spells them.
TYPE = "type"
FIELDS = "fields"
ID = "id"
NAME = "name"
REQUIRED = "required"
DOC = "doc"
INITIAL_DEFAULT = "initial-default"
WRITE_DEFAULT = "write-default"
SCHEMA_ID = "schema-id"
IDENTIFIER_FIELD_IDS = "identifier-field-ids"
STRUCT = "struct"
LIST = "list"
MAP = "map"
ELEMENT_ID = "element-id"
ELEMENT_REQUIRED = "element-required"
ELEMENT = "element"
KEY_ID = "key-id"
KEY = "key"
VALUE_ID = "value-id"
VALUE_REQUIRED = "value-required"
VALUE = "value"
# Name mapping (Appendix C, Name Mapping Serialization).
NM_NAMES = "names"
NM_FIELD_ID = "field-id"
NM_FIELDS = "fields"
NAME_MAPPING_PROPERTY = "schema.name-mapping.default"

# Appendix A, Parquet: the Arrow field-metadata key pyarrow maps to the Parquet field_id.
PARQUET_FIELD_ID = b"PARQUET:field_id"
VARIANT_METADATA = "metadata"
VARIANT_VALUE = "value"

PRIMITIVE_NAMES = frozenset(
    {
        "boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
        "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "unknown",
    }
)
V3_PRIMITIVES = frozenset({"unknown", "timestamp_ns", "timestamptz_ns"})
MAX_DECIMAL_PRECISION = 38
DEFAULT_CRS = "OGC:CRS84"
DEFAULT_ALGORITHM = "spherical"
EDGE_ALGORITHMS = frozenset({"spherical", "vincenty", "thomas", "andoyer", "karney"})
# Reserved Field IDs: user schemas must stay at or below Integer.MAX_VALUE - 200.
MAX_USER_FIELD_ID = 2147483447
METADATA_COLUMNS = {
    "_file": (2147483646, "string"),
    "_pos": (2147483645, "long"),
    "_deleted": (2147483644, "boolean"),
    "_spec_id": (2147483643, "int"),
    "_partition": (2147483642, "struct"),
    "file_path": (2147483546, "string"),
    "pos": (2147483545, "long"),
    "row": (2147483544, "struct"),
    "_change_type": (2147483543, "string"),
    "_change_ordinal": (2147483542, "int"),
    "_commit_snapshot_id": (2147483541, "long"),
    "_row_id": (2147483540, "long"),
    "_last_updated_sequence_number": (2147483539, "long"),
}

_DECIMAL_RE = re.compile(r"^\s*decimal\s*\(\s*(-?\d{1,40})\s*,\s*(-?\d{1,40})\s*\)\s*$", re.ASCII)
_FIXED_RE = re.compile(r"^\s*fixed\s*\[\s*(\d{1,40})\s*\]\s*$", re.ASCII)
_GEOMETRY_RE = re.compile(r"^\s*geometry\s*(?:\(\s*(.*?)\s*\))?\s*$", re.S)
_GEOGRAPHY_RE = re.compile(r"^\s*geography\s*(?:\(\s*(.*?)\s*\))?\s*$", re.S)


class _Missing:
    """Marks a default that the schema JSON does not carry (distinct from an explicit null)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __bool__(self) -> bool:
        return False


NO_DEFAULT: Any = _Missing()


# One violation type for every format (the shared validation framework).
Violation = _validation.Violation


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(frozen=True, slots=True, kw_only=True)
class PrimitiveType:
    """A primitive (or ``variant``) type named by its canonical string; see PRIMITIVE_NAMES."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class DecimalType:
    """decimal(P,S): precision at most 38, scale fixed by the type."""

    precision: int
    scale: int

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"


@dataclass(frozen=True, slots=True, kw_only=True)
class FixedType:
    """fixed[L]: exactly L bytes."""

    length: int

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


@dataclass(frozen=True, slots=True, kw_only=True)
class GeometryType:
    """geometry(C) (v3): WKB values, planar edges; CRS defaults to OGC:CRS84."""

    crs: str = DEFAULT_CRS

    def __str__(self) -> str:
        return "geometry" if self.crs == DEFAULT_CRS else f"geometry({self.crs})"


@dataclass(frozen=True, slots=True, kw_only=True)
class GeographyType:
    """geography(C, A) (v3): WKB values; defaults OGC:CRS84 and spherical edges."""

    crs: str = DEFAULT_CRS
    algorithm: str = DEFAULT_ALGORITHM

    def __str__(self) -> str:
        if self.crs == DEFAULT_CRS and self.algorithm == DEFAULT_ALGORITHM:
            return "geography"
        if self.algorithm == DEFAULT_ALGORITHM:
            return f"geography({self.crs})"
        return f"geography({self.crs}, {self.algorithm})"


@dataclass(frozen=True, slots=True, kw_only=True)
class NestedField:
    """A struct field: id, name, required flag, type, doc and the v3 defaults (internal values)."""

    id: int
    name: str
    type: "IcebergType"
    required: bool = False
    doc: str | None = None
    initial_default: Any = field(default=NO_DEFAULT, hash=False)
    write_default: Any = field(default=NO_DEFAULT, hash=False)

    @property
    def optional(self) -> bool:
        """Whether the field may hold null."""
        return not self.required


@dataclass(frozen=True, slots=True, kw_only=True)
class StructType:
    """A tuple of named, id-carrying fields; also the shape of a table schema."""

    fields: tuple[NestedField, ...] = ()

    def field_by_name(self, name: str) -> NestedField | None:
        """The direct child named ``name`` (exact match), or None."""
        return next((f for f in self.fields if f.name == name), None)

    def field_by_id(self, field_id: int) -> NestedField | None:
        """The direct child with id ``field_id``, or None."""
        return next((f for f in self.fields if f.id == field_id), None)

    def __str__(self) -> str:
        return "struct<" + ", ".join(f"{f.id}: {f.name}: {'required' if f.required else 'optional'} {f.type}" for f in self.fields) + ">"


@dataclass(frozen=True, slots=True, kw_only=True)
class ListType:
    """list<element>: the element has its own id and required flag."""

    element_id: int
    element: "IcebergType"
    element_required: bool = False

    @property
    def element_field(self) -> NestedField:
        """The element as a field named "element" (the name used in Parquet and name mappings)."""
        return NestedField(id=self.element_id, name=ELEMENT, type=self.element, required=self.element_required)

    def __str__(self) -> str:
        return f"list<{self.element}>"


@dataclass(frozen=True, slots=True, kw_only=True)
class MapType:
    """map<key, value>: keys are always required; key and value have their own ids."""

    key_id: int
    key: "IcebergType"
    value_id: int
    value: "IcebergType"
    value_required: bool = False

    @property
    def key_field(self) -> NestedField:
        """The key as a required field named "key"."""
        return NestedField(id=self.key_id, name=KEY, type=self.key, required=True)

    @property
    def value_field(self) -> NestedField:
        """The value as a field named "value"."""
        return NestedField(id=self.value_id, name=VALUE, type=self.value, required=self.value_required)

    def __str__(self) -> str:
        return f"map<{self.key}, {self.value}>"


IcebergType = Union[PrimitiveType, DecimalType, FixedType, GeometryType, GeographyType, StructType, ListType, MapType]
NestedType = (StructType, ListType, MapType)

BOOLEAN = PrimitiveType(name="boolean")
INT = PrimitiveType(name="int")
LONG = PrimitiveType(name="long")
FLOAT = PrimitiveType(name="float")
DOUBLE = PrimitiveType(name="double")
DATE = PrimitiveType(name="date")
TIME = PrimitiveType(name="time")
TIMESTAMP = PrimitiveType(name="timestamp")
TIMESTAMPTZ = PrimitiveType(name="timestamptz")
TIMESTAMP_NS = PrimitiveType(name="timestamp_ns")
TIMESTAMPTZ_NS = PrimitiveType(name="timestamptz_ns")
STRING = PrimitiveType(name="string")
UUID = PrimitiveType(name="uuid")
BINARY = PrimitiveType(name="binary")
UNKNOWN = PrimitiveType(name="unknown")
VARIANT = PrimitiveType(name="variant")

TIMESTAMP_TYPES = frozenset({TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS, TIMESTAMPTZ_NS})
NANO_TYPES = frozenset({TIMESTAMP_NS, TIMESTAMPTZ_NS})


def is_primitive(t: IcebergType) -> bool:
    """Whether ``t`` is a primitive type (variant is semi-structured, so not primitive)."""
    return not isinstance(t, NestedType) and t != VARIANT


def is_nested(t: IcebergType) -> bool:
    """Whether ``t`` is a struct, list or map."""
    return isinstance(t, NestedType)


def min_format_version(t: IcebergType) -> int:
    """The first format version in which type ``t`` (a single node, not its children) is allowed."""
    if isinstance(t, (GeometryType, GeographyType)) or t == VARIANT:
        return 3
    if isinstance(t, PrimitiveType) and t.name in V3_PRIMITIVES:
        return 3
    return 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Schema:
    """A table schema: a struct plus its schema-id and optional identifier field ids."""

    fields: tuple[NestedField, ...] = ()
    schema_id: int | None = None
    identifier_field_ids: tuple[int, ...] | None = None

    @property
    def as_struct(self) -> StructType:
        """The schema's fields as a struct type."""
        return StructType(fields=self.fields)

    def find_field(self, field_id: int) -> NestedField | None:
        """The field (at any depth; list elements and map keys/values included) with this id."""
        return index_by_id(self).get(field_id)

    def find_type(self, field_id: int) -> IcebergType | None:
        """The type of the field with this id, or None."""
        f = self.find_field(field_id)
        return f.type if f else None

    def field_by_name(self, name: str) -> NestedField | None:
        """A top-level field by exact name."""
        return next((f for f in self.fields if f.name == name), None)

    @property
    def highest_field_id(self) -> int:
        """The largest id in the schema (0 when empty)."""
        return max((i for i, _ in walk_fields(self)), default=0)


def _children(t: IcebergType) -> Iterable[NestedField]:
    if isinstance(t, StructType):
        return t.fields
    if isinstance(t, ListType):
        return (t.element_field,)
    if isinstance(t, MapType):
        return (t.key_field, t.value_field)
    return ()


def walk_fields(schema: Schema | StructType, *, path: tuple[str, ...] = ()) -> Iterator[tuple[int, NestedField]]:
    """Every field at every depth (list elements and map keys/values as fields), depth first."""
    stack = list(reversed([(f, path + (f.name,)) for f in schema.fields]))
    while stack:
        f, p = stack.pop()
        yield f.id, f
        stack.extend(reversed([(c, p + (c.name,)) for c in _children(f.type)]))


def walk_with_context(
    schema: Schema | StructType,
) -> Iterator[tuple[NestedField, tuple[str, ...], tuple[NestedField, ...]]]:
    """Every field with its dotted path and the chain of ancestor fields (outermost first)."""

    def rec(fields, path, ancestors):
        for f in fields:
            yield f, path + (f.name,), ancestors
            yield from rec(_children(f.type), path + (f.name,), ancestors + (f,))

    yield from rec(schema.fields, (), ())


def index_by_id(schema: Schema | StructType) -> dict[int, NestedField]:
    """Field id -> field, at every depth (first occurrence wins when ids repeat)."""
    out: dict[int, NestedField] = {}
    for fid, f in walk_fields(schema):
        out.setdefault(fid, f)
    return out


def index_parents(schema: Schema | StructType) -> dict[int, int | None]:
    """Field id -> id of the enclosing field (None for top-level fields)."""
    out: dict[int, int | None] = {}
    for f, _path, ancestors in walk_with_context(schema):
        out.setdefault(f.id, ancestors[-1].id if ancestors else None)
    return out


def index_by_path(schema: Schema | StructType) -> dict[str, int]:
    """Dotted path ("a.b", "l.element", "m.key") -> field id."""
    return {".".join(path): f.id for f, path, _ in walk_with_context(schema)}


# ---------------------------------------------------------------------------------------------
# JSON -> model


def _ctx(where: str) -> str:
    return f" at {where}" if where else ""


def parse_type(obj: Any, *, where: str = "") -> IcebergType:
    """One type from its Appendix C JSON form; InvalidTable on a bad shape, Unsupported on an unknown name."""
    if isinstance(obj, str):
        return _parse_type_string(obj, where)
    if not isinstance(obj, dict):
        raise InvalidTable(f"type must be a string or an object, got {type(obj).__name__}{_ctx(where)}", rule="ICEBERG-SERDE-002")
    kind = obj.get(TYPE)
    if kind == STRUCT:
        return StructType(fields=_parse_fields(obj, where))
    if kind == LIST:
        _need(obj, (ELEMENT_ID, ELEMENT, ELEMENT_REQUIRED), "list", where)
        return ListType(
            element_id=_int(obj[ELEMENT_ID], ELEMENT_ID, where),
            element=parse_type(obj[ELEMENT], where=f"{where}.element"),
            element_required=_bool(obj[ELEMENT_REQUIRED], ELEMENT_REQUIRED, where),
        )
    if kind == MAP:
        _need(obj, (KEY_ID, KEY, VALUE_ID, VALUE, VALUE_REQUIRED), "map", where)
        return MapType(
            key_id=_int(obj[KEY_ID], KEY_ID, where),
            key=parse_type(obj[KEY], where=f"{where}.key"),
            value_id=_int(obj[VALUE_ID], VALUE_ID, where),
            value=parse_type(obj[VALUE], where=f"{where}.value"),
            value_required=_bool(obj[VALUE_REQUIRED], VALUE_REQUIRED, where),
        )
    raise InvalidTable(f"unknown nested type {kind!r}{_ctx(where)}", rule="ICEBERG-SERDE-004")


def _parse_type_string(text: str, where: str) -> IcebergType:
    name = text.strip()
    if name in PRIMITIVE_NAMES or name == "variant":
        return PrimitiveType(name=name)
    m = _DECIMAL_RE.match(text)
    if m:
        p, s = int(m.group(1)), int(m.group(2))
        if not 1 <= p <= MAX_DECIMAL_PRECISION:
            raise InvalidTable(f"decimal precision must be 1..38, got {p}{_ctx(where)}", rule="ICEBERG-TYPE-004")
        return DecimalType(precision=p, scale=s)
    m = _FIXED_RE.match(text)
    if m:
        length = int(m.group(1))
        if length < 1:
            raise InvalidTable(f"fixed length must be positive{_ctx(where)}", rule="ICEBERG-TYPE-011")
        return FixedType(length=length)
    m = _GEOMETRY_RE.match(text)
    if m:
        crs = m.group(1)
        return GeometryType(crs=_check_crs(crs, where) if crs else DEFAULT_CRS)
    m = _GEOGRAPHY_RE.match(text)
    if m:
        params = m.group(1)
        if not params:
            return GeographyType()
        crs, _, algo = params.partition(",")
        algo = algo.strip() or DEFAULT_ALGORITHM
        if algo not in EDGE_ALGORITHMS:
            raise InvalidTable(f"unknown edge-interpolation algorithm {algo!r}{_ctx(where)}", rule="ICEBERG-TYPE-013")
        return GeographyType(crs=_check_crs(crs.strip(), where) if crs.strip() else DEFAULT_CRS, algorithm=algo)
    raise Unsupported(f"unknown Iceberg type {text!r}{_ctx(where)}", feature=f"type:{text}", rule="ICEBERG-SERDE-002")


def _check_crs(crs: str, where: str) -> str:
    # A CRS is an identifier; inline PROJJSON is forbidden (it belongs in a table property).
    if "{" in crs or "}" in crs:
        raise InvalidTable(f"CRS must not inline PROJJSON; use projjson:<property>{_ctx(where)}", rule="ICEBERG-TYPE-014")
    return crs


def _need(obj: dict, keys: Iterable[str], what: str, where: str) -> None:
    missing = [k for k in keys if k not in obj]
    if missing:
        raise InvalidTable(f"{what} JSON lacks {', '.join(missing)}{_ctx(where)}", rule="ICEBERG-SERDE-004" if what in ("list", "map") else "ICEBERG-SERDE-001")


def _int(v: Any, key: str, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise InvalidTable(f"{key} must be a JSON int, got {v!r}{_ctx(where)}", rule="ICEBERG-SERDE-001")
    return v


def _bool(v: Any, key: str, where: str) -> bool:
    if not isinstance(v, bool):
        raise InvalidTable(f"{key} must be a JSON boolean, got {v!r}{_ctx(where)}", rule="ICEBERG-SERDE-001")
    return v


def _parse_fields(obj: dict, where: str) -> tuple[NestedField, ...]:
    from reference_impl.iceberg import values  # values depends on this module's types

    raw = obj.get(FIELDS)
    if not isinstance(raw, list):
        raise InvalidTable(f"struct JSON needs a 'fields' list{_ctx(where)}", rule="ICEBERG-SERDE-001")
    out = []
    for i, f in enumerate(raw):
        fw = f"{where}.fields[{i}]" if where else f"fields[{i}]"
        if not isinstance(f, dict):
            raise InvalidTable(f"struct field must be an object{_ctx(fw)}", rule="ICEBERG-SERDE-001")
        _need(f, (ID, NAME, REQUIRED, TYPE), "struct field", fw)
        name = f[NAME]
        if not isinstance(name, str):
            raise InvalidTable(f"field name must be a string{_ctx(fw)}", rule="ICEBERG-SERDE-001")
        fw = f"{where}.{name}" if where else name
        ftype = parse_type(f[TYPE], where=fw)
        doc = f.get(DOC)
        if doc is not None and not isinstance(doc, str):
            raise InvalidTable(f"doc must be a string{_ctx(fw)}", rule="ICEBERG-SERDE-001")
        defaults = {}
        for key in (INITIAL_DEFAULT, WRITE_DEFAULT):
            if key in f:
                defaults[key] = values.default_from_json(f[key], ftype, where=f"{fw} {key}")
        out.append(
            NestedField(
                id=_int(f[ID], ID, fw),
                name=name,
                type=ftype,
                required=_bool(f[REQUIRED], REQUIRED, fw),
                doc=doc,
                initial_default=defaults.get(INITIAL_DEFAULT, NO_DEFAULT),
                write_default=defaults.get(WRITE_DEFAULT, NO_DEFAULT),
            )
        )
    return tuple(out)


def parse_schema(obj: Any) -> Schema:
    """A schema from its JSON (text or decoded object); InvalidTable on a bad shape, never a raw error."""
    if isinstance(obj, (str, bytes)):
        return _schema_from_text(obj)
    return _schema_from_json(obj)


@functools.lru_cache(maxsize=64)
def _schema_from_text(text: str | bytes) -> Schema:
    # Every manifest carries its schema as text, and a table's manifests share a few: parse each once.
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidTable(f"schema is not valid JSON: {exc}", rule="ICEBERG-SERDE-001") from None
    return _schema_from_json(obj)


def _schema_from_json(obj: Any) -> Schema:
    if not isinstance(obj, dict) or obj.get(TYPE) != STRUCT:
        raise InvalidTable('schema must be a JSON object with "type": "struct"', rule="ICEBERG-SERDE-001")
    try:
        fields = _parse_fields(obj, "")
    except RecursionError:
        raise InvalidTable("schema nests too deeply", rule="ICEBERG-SERDE-001") from None
    sid = obj.get(SCHEMA_ID)
    if sid is not None:
        sid = _int(sid, SCHEMA_ID, "schema")
    ids = obj.get(IDENTIFIER_FIELD_IDS)
    if ids is not None:
        if not isinstance(ids, list):
            raise InvalidTable("identifier-field-ids must be a JSON list of ints", rule="ICEBERG-SERDE-001")
        ids = tuple(_int(i, IDENTIFIER_FIELD_IDS, "schema") for i in ids)
    return Schema(fields=fields, schema_id=sid, identifier_field_ids=ids)


# ---------------------------------------------------------------------------------------------
# model -> JSON


def type_to_json(t: IcebergType) -> Any:
    """The Appendix C JSON form of a type (canonical strings for primitives)."""
    if isinstance(t, StructType):
        return {TYPE: STRUCT, FIELDS: [_field_to_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {TYPE: LIST, ELEMENT_ID: t.element_id, ELEMENT: type_to_json(t.element), ELEMENT_REQUIRED: t.element_required}
    if isinstance(t, MapType):
        return {
            TYPE: MAP, KEY_ID: t.key_id, KEY: type_to_json(t.key),
            VALUE_ID: t.value_id, VALUE: type_to_json(t.value), VALUE_REQUIRED: t.value_required,
        }
    return str(t)


def _field_to_json(f: NestedField) -> dict:
    from reference_impl.iceberg import values

    out: dict[str, Any] = {ID: f.id, NAME: f.name, REQUIRED: f.required, TYPE: type_to_json(f.type)}
    if f.doc is not None:
        out[DOC] = f.doc
    if f.initial_default is not NO_DEFAULT:
        out[INITIAL_DEFAULT] = values.default_to_json(f.initial_default, f.type)
    if f.write_default is not NO_DEFAULT:
        out[WRITE_DEFAULT] = values.default_to_json(f.write_default, f.type)
    return out


def schema_to_dict(schema: Schema) -> dict:
    """The schema as a JSON-ready dict (type, schema-id, identifier-field-ids, fields)."""
    out: dict[str, Any] = {TYPE: STRUCT}
    if schema.schema_id is not None:
        out[SCHEMA_ID] = schema.schema_id
    if schema.identifier_field_ids is not None:
        out[IDENTIFIER_FIELD_IDS] = list(schema.identifier_field_ids)
    out[FIELDS] = [_field_to_json(f) for f in schema.fields]
    return out


def schema_to_json(schema: Schema) -> str:
    """Compact schema JSON, field order kept."""
    return json.dumps(schema_to_dict(schema), separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Validation (pure, one pass, never raises for a merely invalid schema)


def validate_schema(schema: Schema, format_version: int) -> list[Violation]:
    """Every broken schema rule: unique/reserved ids, version-gated types, defaults, identifier fields."""
    out: list[Violation] = []
    seen: dict[int, str] = {}
    for f, path, ancestors in walk_with_context(schema):
        where = ".".join(path)
        if f.id in seen:
            out.append(Violation(rule="ICEBERG-SCHEMA-001", message=f"field id {f.id} used by {seen[f.id]} and {where}", where=where))
        else:
            seen[f.id] = where
        if f.id > MAX_USER_FIELD_ID:
            out.append(Violation(rule="ICEBERG-SCHEMA-008", message=f"field id {f.id} is in the reserved range (> {MAX_USER_FIELD_ID})", where=where))
        t = f.type
        if format_version < min_format_version(t):
            rule = "ICEBERG-SCHEMA-005" if t == VARIANT else "ICEBERG-TYPE-001"
            out.append(Violation(rule=rule, message=f"type {t} needs format version 3, table is v{format_version}", where=where))
        if isinstance(t, DecimalType) and not 1 <= t.precision <= MAX_DECIMAL_PRECISION:
            out.append(Violation(rule="ICEBERG-TYPE-004", message=f"decimal precision {t.precision} out of 1..38", where=where))
        if t == UNKNOWN and f.required:
            out.append(Violation(rule="ICEBERG-TYPE-002", message="an unknown-typed field must be optional", where=where))
        has_default = f.initial_default is not NO_DEFAULT or f.write_default is not NO_DEFAULT
        if has_default and format_version < 3:
            out.append(Violation(rule="ICEBERG-SCHEMA-013", message="default values need format version 3", where=where))
        for label, d in (("initial-default", f.initial_default), ("write-default", f.write_default)):
            if d is NO_DEFAULT or d is None:
                continue
            if t in (UNKNOWN, VARIANT) or isinstance(t, (GeometryType, GeographyType)):
                out.append(Violation(rule="ICEBERG-SCHEMA-020", message=f"{label} of a {t} field must be null", where=where))
            if isinstance(t, StructType) and d != {}:
                out.append(Violation(rule="ICEBERG-SCHEMA-021", message=f"{label} of a struct field must be null or {{}}", where=where))
    # Map keys: the model makes them required by construction; nothing to check here.
    ids = schema.identifier_field_ids or ()
    contexts = {f.id: (f, path, anc) for f, path, anc in walk_with_context(schema)}
    for fid in ids:
        if fid not in contexts:
            out.append(Violation(rule="ICEBERG-SCHEMA-006", message=f"identifier field id {fid} is not in the schema", where=str(fid)))
            continue
        f, path, anc = contexts[fid]
        where = ".".join(path)
        if not is_primitive(f.type):
            out.append(Violation(rule="ICEBERG-SCHEMA-006", message=f"identifier field {where} must be primitive", where=where))
        if any(isinstance(a.type, (ListType, MapType)) for a in anc):
            out.append(Violation(rule="ICEBERG-SCHEMA-006", message=f"identifier field {where} is inside a list or map", where=where))
        if not f.required:
            out.append(Violation(rule="ICEBERG-SCHEMA-007", message=f"identifier field {where} must be required", where=where))
        if f.type in (FLOAT, DOUBLE):
            out.append(Violation(rule="ICEBERG-SCHEMA-007", message=f"identifier field {where} must not be float or double", where=where))
        if any(not a.required for a in anc):
            out.append(Violation(rule="ICEBERG-SCHEMA-007", message=f"identifier field {where} is nested in an optional struct", where=where))
    return out


# ---------------------------------------------------------------------------------------------
# Arrow (Appendix A, Parquet: ids as PARQUET:field_id)


def _fid_meta(field_id: int) -> dict[bytes, bytes]:
    return {PARQUET_FIELD_ID: str(field_id).encode()}


def to_arrow_type(t: IcebergType) -> pa.DataType:
    """The Arrow type used in memory and for Parquet (nested children carry their field ids)."""
    if isinstance(t, PrimitiveType):
        mapping = {
            "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
            "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
            "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
            "timestamp_ns": pa.timestamp("ns"), "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
            "string": pa.string(), "uuid": pa.binary(16), "binary": pa.binary(), "unknown": pa.null(),
        }
        if t.name in mapping:
            return mapping[t.name]
        if t == VARIANT:
            # Unshredded variant: metadata and value get no field ids (Appendix A).
            return pa.struct([pa.field(VARIANT_METADATA, pa.binary(), nullable=False), pa.field(VARIANT_VALUE, pa.binary(), nullable=False)])
        raise Unsupported(f"no Arrow mapping for {t}", feature=f"type:{t}")
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    if isinstance(t, (GeometryType, GeographyType)):
        return pa.binary()  # WKB
    if isinstance(t, StructType):
        return pa.struct([to_arrow_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(to_arrow_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(to_arrow_field(t.key_field), to_arrow_field(t.value_field))
    raise Unsupported(f"no Arrow mapping for {t!r}", feature="type")


def to_arrow_field(f: NestedField) -> pa.Field:
    """One field with its id in the metadata key PARQUET:field_id."""
    return pa.field(f.name, to_arrow_type(f.type), nullable=not f.required, metadata=_fid_meta(f.id))


def to_arrow_schema(schema: Schema, *, include_unknown: bool = True) -> pa.Schema:
    """The Arrow schema; ``include_unknown=False`` drops unknown-typed fields (never stored in data files)."""
    fields = [f for f in schema.fields if include_unknown or f.type != UNKNOWN]
    return pa.schema([to_arrow_field(f) for f in fields])


def _field_id_of(f: pa.Field, where: str) -> int:
    meta = f.metadata or {}
    raw = meta.get(PARQUET_FIELD_ID)
    if raw is None:
        raise InvalidTable(f"Arrow field {where} carries no {PARQUET_FIELD_ID.decode()}", rule="ICEBERG-FMT-009")
    try:
        return int(raw)
    except ValueError:
        raise InvalidTable(f"Arrow field {where} has a bad field id {raw!r}", rule="ICEBERG-FMT-009") from None


def _is_variant_struct(t: pa.DataType) -> bool:
    return (
        pa.types.is_struct(t) and t.num_fields == 2
        and {t.field(i).name for i in range(2)} == {VARIANT_METADATA, VARIANT_VALUE}
        and all(not (t.field(i).metadata or {}).get(PARQUET_FIELD_ID) for i in range(2))
    )


def from_arrow_type(t: pa.DataType, *, where: str = "") -> IcebergType:
    """The Iceberg type for an Arrow type (nested children need PARQUET:field_id)."""
    # pyarrow's built-in uuid type is a BaseExtensionType, not a (Python) ExtensionType.
    if isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.uuid":
        return UUID
    if pa.types.is_boolean(t):
        return BOOLEAN
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return INT
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return LONG
    if pa.types.is_float32(t):
        return FLOAT
    if pa.types.is_float64(t):
        return DOUBLE
    if pa.types.is_decimal(t):
        return DecimalType(precision=t.precision, scale=t.scale)
    if pa.types.is_date(t):
        return DATE
    if pa.types.is_time(t):
        return TIME
    if pa.types.is_timestamp(t):
        nano = t.unit == "ns"
        if t.tz is None:
            return TIMESTAMP_NS if nano else TIMESTAMP
        return TIMESTAMPTZ_NS if nano else TIMESTAMPTZ
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return STRING
    if pa.types.is_fixed_size_binary(t):
        return FixedType(length=t.byte_width)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return BINARY
    if pa.types.is_null(t):
        return UNKNOWN
    if _is_variant_struct(t):
        return VARIANT
    if pa.types.is_struct(t):
        return StructType(fields=tuple(from_arrow_field(t.field(i), where=where) for i in range(t.num_fields)))
    if pa.types.is_map(t):
        k, v = t.key_field, t.item_field
        return MapType(
            key_id=_field_id_of(k, f"{where}.key"), key=from_arrow_type(k.type, where=f"{where}.key"),
            value_id=_field_id_of(v, f"{where}.value"), value=from_arrow_type(v.type, where=f"{where}.value"),
            value_required=not v.nullable,
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        e = t.value_field
        return ListType(element_id=_field_id_of(e, f"{where}.element"), element=from_arrow_type(e.type, where=f"{where}.element"), element_required=not e.nullable)
    raise Unsupported(f"no Iceberg type for Arrow {t}{_ctx(where)}", feature=f"arrow:{t}")


def from_arrow_field(f: pa.Field, *, where: str = "") -> NestedField:
    """A field from an Arrow field carrying PARQUET:field_id; InvalidTable when the id is missing."""
    path = f"{where}.{f.name}" if where else f.name
    return NestedField(id=_field_id_of(f, path), name=f.name, type=from_arrow_type(f.type, where=path), required=not f.nullable)


def from_arrow_schema(schema: pa.Schema, *, schema_id: int | None = None) -> Schema:
    """The inverse of ``to_arrow_schema``: every field (nested too) must carry PARQUET:field_id."""
    return Schema(fields=tuple(from_arrow_field(f) for f in schema), schema_id=schema_id)


# ---------------------------------------------------------------------------------------------
# Name mapping (Column Projection; Appendix C, Name Mapping Serialization)


@dataclass(frozen=True, slots=True, kw_only=True)
class MappedField:
    """One name-mapping entry: names (possibly empty), optional field id, optional child mappings."""

    names: tuple[str, ...]
    field_id: int | None = None
    fields: tuple["MappedField", ...] = ()


def parse_name_mapping(obj: Any) -> tuple[MappedField, ...]:
    """A name mapping from its JSON (text or decoded list); InvalidTable on a bad shape."""
    if isinstance(obj, (str, bytes)):
        try:
            obj = json.loads(obj)
        except (ValueError, RecursionError) as exc:
            raise InvalidTable(f"name mapping is not valid JSON: {exc}", rule="ICEBERG-SERDE-008") from None

    def rec(items: Any, where: str) -> tuple[MappedField, ...]:
        if not isinstance(items, list):
            raise InvalidTable(f"name mapping must be a JSON list{_ctx(where)}", rule="ICEBERG-SERDE-008")
        out = []
        for i, item in enumerate(items):
            w = f"{where}[{i}]"
            if not isinstance(item, dict) or NM_NAMES not in item:
                raise InvalidTable(f"field mapping needs a 'names' list{_ctx(w)}", rule="ICEBERG-EVOL-017")
            names = item[NM_NAMES]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise InvalidTable(f"'names' must be a list of strings{_ctx(w)}", rule="ICEBERG-EVOL-017")
            fid = item.get(NM_FIELD_ID)
            if fid is not None:
                fid = _int(fid, NM_FIELD_ID, w)
            children = rec(item[NM_FIELDS], f"{w}.fields") if item.get(NM_FIELDS) is not None else ()
            out.append(MappedField(names=tuple(names), field_id=fid, fields=children))
        return tuple(out)

    try:
        return rec(obj, "mapping")
    except RecursionError:
        raise InvalidTable("name mapping nests too deeply", rule="ICEBERG-SERDE-008") from None


def name_mapping_to_json(mapping: Iterable[MappedField]) -> str:
    """Compact JSON of a name mapping (field-id omitted when absent, fields when empty)."""

    def rec(m: MappedField) -> dict:
        out: dict[str, Any] = {}
        if m.field_id is not None:
            out[NM_FIELD_ID] = m.field_id
        out[NM_NAMES] = list(m.names)
        if m.fields:
            out[NM_FIELDS] = [rec(c) for c in m.fields]
        return out

    return json.dumps([rec(m) for m in mapping], separators=(",", ":"), ensure_ascii=False)


def name_mapping_from_schema(schema: Schema) -> tuple[MappedField, ...]:
    """The mapping a writer derives from a schema: each field under its current name."""

    def rec(fields: Iterable[NestedField]) -> tuple[MappedField, ...]:
        return tuple(MappedField(names=(f.name,), field_id=f.id, fields=rec(_children(f.type))) for f in fields)

    return rec(schema.fields)


def apply_name_mapping(schema: pa.Schema, mapping: Iterable[MappedField]) -> pa.Schema:
    """Give an id-less Arrow schema the ids of a name mapping; unmapped fields keep no id (readers skip them)."""

    def lookup(ms: tuple[MappedField, ...], name: str) -> MappedField | None:
        # Names are literal: "a.b" is a field called "a.b", never a path.
        return next((m for m in ms if name in m.names), None)

    def fix_type(t: pa.DataType, m: MappedField | None) -> pa.DataType:
        kids = m.fields if m else ()
        if pa.types.is_struct(t):
            return pa.struct([fix_field(t.field(i), kids) for i in range(t.num_fields)])
        if pa.types.is_map(t):
            return pa.map_(fix_field(t.key_field, kids, KEY), fix_field(t.item_field, kids, VALUE))
        if pa.types.is_large_list(t):
            return pa.large_list(fix_field(t.value_field, kids, ELEMENT))
        if pa.types.is_list(t):
            return pa.list_(fix_field(t.value_field, kids, ELEMENT))
        return t

    def fix_field(f: pa.Field, ms: tuple[MappedField, ...], as_name: str | None = None) -> pa.Field:
        m = lookup(ms, as_name or f.name)
        meta = {k: v for k, v in (f.metadata or {}).items() if k != PARQUET_FIELD_ID}
        if m is not None and m.field_id is not None:
            meta[PARQUET_FIELD_ID] = str(m.field_id).encode()
        return pa.field(f.name, fix_type(f.type, m), nullable=f.nullable, metadata=meta or None)

    ms = tuple(mapping)
    return pa.schema([fix_field(f, ms) for f in schema], metadata=schema.metadata)


def field_ids_of_arrow(schema: pa.Schema) -> set[int]:
    """Every PARQUET:field_id present at any depth of an Arrow schema."""
    out: set[int] = set()

    def rec(f: pa.Field) -> None:
        raw = (f.metadata or {}).get(PARQUET_FIELD_ID)
        if raw is not None:
            try:
                out.add(int(raw))
            except ValueError:
                pass
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                rec(t.field(i))
        elif pa.types.is_map(t):
            rec(t.key_field)
            rec(t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            rec(t.value_field)

    for f in schema:
        rec(f)
    return out


# ---------------------------------------------------------------------------------------------
# Default values (Default values; Schema Evolution)


def effective_default(f: NestedField, *, which: str = "initial") -> Any:
    """The value a reader (``initial``) or writer (``write``) fills in for a missing ``f``: a {} struct default is expanded from each child's own default."""
    if which not in ("initial", "write"):
        raise Internal(f"which must be initial or write, got {which!r}")
    d = f.initial_default if which == "initial" else f.write_default
    if d is NO_DEFAULT or d is None:
        return None  # an optional field without a default defaults to null
    if isinstance(f.type, StructType):
        return {c.id: effective_default(c, which=which) for c in f.type.fields}
    return d


def fill_struct_defaults(t: StructType, value: dict[int, Any] | None, *, which: str = "initial") -> dict[int, Any] | None:
    """Complete a struct value read from a file: children absent from ``value`` take their own default."""
    if value is None:
        return None
    return {c.id: (value[c.id] if c.id in value else effective_default(c, which=which)) for c in t.fields}


# ---------------------------------------------------------------------------------------------
# Fresh ids (for new tables and added columns: Schema Evolution, "Adding a new field assigns a new ID")


def assign_fresh_ids(schema: Schema | StructType, *, last_column_id: int = 0) -> tuple[Schema, int]:
    """Re-number every field above ``last_column_id``: a struct's own fields first, then their children (Java's order); returns (schema, new last id)."""
    counter = [last_column_id]
    old_to_new: dict[int, int] = {}

    def nxt(old: int) -> int:
        counter[0] += 1
        old_to_new[old] = counter[0]
        return counter[0]

    def struct(t: StructType) -> StructType:
        ids = [nxt(f.id) for f in t.fields]
        return StructType(fields=tuple(
            NestedField(id=i, name=f.name, type=typ(f.type), required=f.required, doc=f.doc, initial_default=f.initial_default, write_default=f.write_default)
            for i, f in zip(ids, t.fields)
        ))

    def typ(t: IcebergType) -> IcebergType:
        if isinstance(t, StructType):
            return struct(t)
        if isinstance(t, ListType):
            eid = nxt(t.element_id)
            return ListType(element_id=eid, element=typ(t.element), element_required=t.element_required)
        if isinstance(t, MapType):
            kid, vid = nxt(t.key_id), nxt(t.value_id)
            return MapType(key_id=kid, key=typ(t.key), value_id=vid, value=typ(t.value), value_required=t.value_required)
        return t

    fields = struct(StructType(fields=schema.fields)).fields
    sid = schema.schema_id if isinstance(schema, Schema) else None
    idents = schema.identifier_field_ids if isinstance(schema, Schema) else None
    if idents is not None:
        idents = tuple(old_to_new[i] for i in idents if i in old_to_new)
    return Schema(fields=fields, schema_id=sid, identifier_field_ids=idents), counter[0]


def arrow_to_schema_with_fresh_ids(schema: pa.Schema, *, schema_id: int = 0) -> tuple[Schema, int]:
    """An Iceberg schema for an Arrow schema with or without PARQUET:field_id: ids are assigned 1, 2, ... (Java's order)."""

    def strip(t: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([_with_id(t.field(i)) for i in range(t.num_fields)]) if not _is_variant_struct(t) else t
        if pa.types.is_map(t):
            return pa.map_(_with_id(t.key_field), _with_id(t.item_field))
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return pa.list_(_with_id(t.value_field))
        return t

    def _with_id(f: pa.Field) -> pa.Field:
        # Placeholder ids: only their presence matters, assign_fresh_ids renumbers them.
        return pa.field(f.name, strip(f.type), nullable=f.nullable, metadata={PARQUET_FIELD_ID: b"0"})

    placeholder = from_arrow_schema(pa.schema([_with_id(f) for f in schema]), schema_id=schema_id)
    return assign_fresh_ids(placeholder)
