"""Appendix A: Format-specific Requirements, Avro: type mapping and field-id annotations.

``to_avro_schema`` turns an Iceberg struct into an Avro record schema carrying the ids the spec
requires (``field-id`` on record fields, ``element-id`` on arrays, ``key-id``/``value-id`` on
string-keyed maps, ``field-id`` on the key/value fields of maps stored as arrays of records
with ``logicalType: map``); ``from_avro_schema`` is its inverse and rejects a schema that lost
its ids. Record and fixed names follow Java's convention (``r<id>``, ``k<id>_v<id>``,
``fixed_<L>``, ``decimal_<P>_<S>``, ``uuid_fixed``): names are not part of the spec.
``to_avro_value`` / ``from_avro_value`` convert between internal values and what fastavro
writes and returns.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid as uuid_mod
from decimal import Decimal
from typing import Any

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V

# Avro attribute names used by Iceberg.
FIELD_ID = "field-id"
ELEMENT_ID = "element-id"
KEY_ID = "key-id"
VALUE_ID = "value-id"
ADJUST_TO_UTC = "adjust-to-utc"
LOGICAL_TYPE = "logicalType"
LT_MAP = "map"


def min_bytes_for_precision(precision: int) -> int:
    """The fewest bytes whose two's-complement range holds every unscaled value of ``precision`` digits."""
    n = 1
    while 2 ** (8 * n - 1) - 1 < 10**precision - 1:
        n += 1
    return n


class _Names:
    """Avro named types must be defined once; later uses refer to the name."""

    def __init__(self) -> None:
        self.defined: set[str] = set()

    def named(self, name: str, schema: dict) -> Any:
        if name in self.defined:
            return name
        self.defined.add(name)
        return schema


def _avro_default(value: Any, t: T.IcebergType) -> Any:
    """An Iceberg default as an Avro JSON default (bytes-like values as ISO-8859-1 strings)."""
    if isinstance(t, T.StructType):
        return {c.name: _avro_default(T.effective_default(c), c.type) for c in t.fields}
    if isinstance(t, T.ListType):
        return [_avro_default(x, t.element) for x in value]
    if isinstance(t, T.MapType):
        if t.key == T.STRING:
            return {k: _avro_default(x, t.value) for k, x in value.items()}
        return [{"key": _avro_default(k, t.key), "value": _avro_default(x, t.value)} for k, x in value.items()]
    if isinstance(t, T.DecimalType):
        return V.min_bytes_twos_complement(V.unscaled(value)).rjust(min_bytes_for_precision(t.precision), b"\xff" if value < 0 else b"\x00").decode("latin-1")
    if t == T.UUID:
        return value.bytes.decode("latin-1")
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def _type(t: T.IcebergType, names: _Names, owner_id: int) -> Any:
    if isinstance(t, T.PrimitiveType):
        simple = {"boolean": "boolean", "int": "int", "long": "long", "float": "float", "double": "double", "string": "string", "binary": "bytes", "unknown": "null"}
        if t.name in simple:
            return simple[t.name]
        if t == T.DATE:
            return {"type": "int", LOGICAL_TYPE: "date"}
        if t == T.TIME:
            return {"type": "long", LOGICAL_TYPE: "time-micros"}
        if t in T.TIMESTAMP_TYPES:
            lt = "timestamp-nanos" if t in T.NANO_TYPES else "timestamp-micros"
            return {"type": "long", LOGICAL_TYPE: lt, ADJUST_TO_UTC: t in (T.TIMESTAMPTZ, T.TIMESTAMPTZ_NS)}
        if t == T.UUID:
            return names.named("uuid_fixed", {"type": "fixed", "name": "uuid_fixed", "size": 16, LOGICAL_TYPE: "uuid"})
        if t == T.VARIANT:
            # metadata and value get no field ids (Appendix A).
            return names.named(f"r{owner_id}", {"type": "record", "name": f"r{owner_id}", "fields": [{"name": "metadata", "type": "bytes"}, {"name": "value", "type": "bytes"}]})
        raise Unsupported(f"no Avro mapping for {t}", feature=f"avro:{t}")
    if isinstance(t, T.DecimalType):
        name = f"decimal_{t.precision}_{t.scale}"
        return names.named(name, {"type": "fixed", "name": name, "size": min_bytes_for_precision(t.precision), LOGICAL_TYPE: "decimal", "precision": t.precision, "scale": t.scale})
    if isinstance(t, T.FixedType):
        return names.named(f"fixed_{t.length}", {"type": "fixed", "name": f"fixed_{t.length}", "size": t.length})
    if isinstance(t, (T.GeometryType, T.GeographyType)):
        return "bytes"  # WKB
    if isinstance(t, T.StructType):
        return _record(t, f"r{owner_id}", names)
    if isinstance(t, T.ListType):
        return {"type": "array", "items": _maybe_optional(_type(t.element, names, t.element_id), not t.element_required), ELEMENT_ID: t.element_id}
    if isinstance(t, T.MapType):
        value = _maybe_optional(_type(t.value, names, t.value_id), not t.value_required)
        if t.key == T.STRING:
            return {"type": "map", "values": value, KEY_ID: t.key_id, VALUE_ID: t.value_id}
        name = f"k{t.key_id}_v{t.value_id}"
        return {
            "type": "array",
            LOGICAL_TYPE: LT_MAP,
            "items": {"type": "record", "name": name, "fields": [
                {"name": "key", "type": _type(t.key, names, t.key_id), FIELD_ID: t.key_id},
                {"name": "value", "type": value, FIELD_ID: t.value_id},
            ]},
        }
    raise Unsupported(f"no Avro mapping for {t!r}", feature="avro")


def _maybe_optional(avro_type: Any, optional: bool) -> Any:
    return ["null", avro_type] if optional else avro_type


def _record(t: T.StructType, name: str, names: _Names) -> dict:
    fields = []
    for f in t.fields:
        at = _type(f.type, names, f.id)
        entry: dict[str, Any] = {"name": f.name}
        default = f.initial_default
        if f.required:
            entry["type"] = at
            if default not in (T.NO_DEFAULT, None):
                entry["default"] = _avro_default(default, f.type)
        elif default in (T.NO_DEFAULT, None):
            entry["type"] = ["null", at] if at != "null" else "null"
            entry["default"] = None
        else:
            # Avro checks a default against the first union branch, so the value type goes first.
            entry["type"] = [at, "null"]
            entry["default"] = _avro_default(default, f.type)
        if f.doc is not None:
            entry["doc"] = f.doc
        entry[FIELD_ID] = f.id
        fields.append(entry)
    return {"type": "record", "name": name, "fields": fields}


def to_avro_schema(schema: T.Schema | T.StructType, *, record_name: str = "table") -> dict:
    """The Avro record schema (JSON-ready dict) of an Iceberg schema or struct, ids included."""
    return _record(schema.as_struct if isinstance(schema, T.Schema) else schema, record_name, _Names())


# ---------------------------------------------------------------------------------------------
# Avro schema -> Iceberg


def _id(obj: dict, key: str, where: str) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise InvalidTable(f"Avro schema lacks the integer {key} at {where}", rule="ICEBERG-FMT-006")
    return v


def _strip_null(avro_type: Any, where: str) -> tuple[Any, bool]:
    if isinstance(avro_type, list):
        branches = [b for b in avro_type if b != "null"]
        if len(branches) != 1 or len(avro_type) != 2:
            raise InvalidTable(f"only [null, T] unions are allowed, got {avro_type!r} at {where}", rule="ICEBERG-FMT-001")
        return branches[0], True
    return avro_type, False


def _from_type(a: Any, where: str, named: dict[str, dict]) -> T.IcebergType:
    if isinstance(a, str):
        if a in named:
            a = named[a]
        else:
            prim = {"boolean": T.BOOLEAN, "int": T.INT, "long": T.LONG, "float": T.FLOAT, "double": T.DOUBLE, "string": T.STRING, "bytes": T.BINARY, "null": T.UNKNOWN}
            if a not in prim:
                raise Unsupported(f"Avro type {a!r} has no Iceberg mapping at {where}", feature=f"avro:{a}")
            return prim[a]
    if not isinstance(a, dict):
        raise InvalidTable(f"bad Avro type {a!r} at {where}", rule="ICEBERG-FMT-004")
    kind, lt = a.get("type"), a.get(LOGICAL_TYPE)
    if isinstance(a.get("name"), str) and kind in ("record", "fixed"):
        named[a["name"]] = a
    if kind == "int":
        return T.DATE if lt == "date" else T.INT
    if kind == "long":
        if lt == "time-micros":
            return T.TIME
        if lt in ("timestamp-micros", "timestamp-nanos"):
            utc = a.get(ADJUST_TO_UTC, False) is True  # absent means false (Appendix A note 1)
            if lt == "timestamp-nanos":
                return T.TIMESTAMPTZ_NS if utc else T.TIMESTAMP_NS
            return T.TIMESTAMPTZ if utc else T.TIMESTAMP
        return T.LONG
    if kind == "fixed":
        if lt == "decimal":
            return T.DecimalType(precision=a.get("precision"), scale=a.get("scale", 0))
        if lt == "uuid":
            return T.UUID
        return T.FixedType(length=a.get("size"))
    if kind == "bytes" and lt == "decimal":
        return T.DecimalType(precision=a.get("precision"), scale=a.get("scale", 0))
    if kind == "string" and lt == "uuid":
        return T.UUID
    if kind in ("boolean", "float", "double", "string", "bytes", "null"):
        return _from_type(kind, where, named)
    if kind == "record":
        fs = a.get("fields")
        if isinstance(fs, list) and {f.get("name") for f in fs if isinstance(f, dict)} == {"metadata", "value"} and all(FIELD_ID not in f for f in fs):
            return T.VARIANT
        return _from_record(a, where, named)
    if kind == "array":
        if lt == LT_MAP:
            rec = a.get("items")
            if isinstance(rec, str):
                rec = named.get(rec)
            if not isinstance(rec, dict) or not isinstance(rec.get("fields"), list) or len(rec["fields"]) != 2:
                raise InvalidTable(f"a map stored as an array needs 2-field records at {where}", rule="ICEBERG-FMT-003")
            kf, vf = rec["fields"]
            vt, vopt = _strip_null(vf.get("type"), where)
            return T.MapType(key_id=_id(kf, FIELD_ID, f"{where}.key"), key=_from_type(kf.get("type"), f"{where}.key", named),
                             value_id=_id(vf, FIELD_ID, f"{where}.value"), value=_from_type(vt, f"{where}.value", named), value_required=not vopt)
        et, eopt = _strip_null(a.get("items"), where)
        return T.ListType(element_id=_id(a, ELEMENT_ID, where), element=_from_type(et, f"{where}.element", named), element_required=not eopt)
    if kind == "map":
        vt, vopt = _strip_null(a.get("values"), where)
        return T.MapType(key_id=_id(a, KEY_ID, where), key=T.STRING, value_id=_id(a, VALUE_ID, where), value=_from_type(vt, f"{where}.value", named), value_required=not vopt)
    if isinstance(kind, (dict, list)):
        return _from_type(kind, where, named)
    raise Unsupported(f"Avro type {kind!r} has no Iceberg mapping at {where}", feature=f"avro:{kind}")


def _from_record(a: dict, where: str, named: dict[str, dict]) -> T.StructType:
    fs = a.get("fields")
    if not isinstance(fs, list):
        raise InvalidTable(f"Avro record without fields at {where}", rule="ICEBERG-FMT-006")
    out = []
    for f in fs:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            raise InvalidTable(f"bad Avro record field at {where}", rule="ICEBERG-FMT-006")
        fw = f"{where}.{f['name']}" if where else f["name"]
        at, opt = _strip_null(f.get("type"), fw)
        ft = _from_type(at, fw, named)
        out.append(T.NestedField(id=_id(f, FIELD_ID, fw), name=f["name"], type=ft, required=not opt and ft != T.UNKNOWN, doc=f.get("doc")))
    return T.StructType(fields=tuple(out))


def from_avro_schema(avro: dict) -> T.StructType:
    """The Iceberg struct of an Avro record schema; InvalidTable when ids are missing, Unsupported for unmapped types."""
    if not isinstance(avro, dict) or avro.get("type") != "record":
        raise InvalidTable("an Iceberg Avro schema is a record", rule="ICEBERG-FMT-006")
    try:
        return _from_record(avro, "", {})
    except (TypeError, AttributeError, RecursionError) as exc:
        raise InvalidTable(f"malformed Avro schema: {exc}", rule="ICEBERG-FMT-006") from None


# ---------------------------------------------------------------------------------------------
# Values: internal <-> what fastavro writes/returns


def to_avro_value(value: Any, t: T.IcebergType) -> Any:
    """An internal value in the shape fastavro writes for ``to_avro_schema`` (structs keyed by name)."""
    if value is None:
        return None
    if isinstance(t, T.StructType):
        return {f.name: to_avro_value(value.get(f.id), f.type) for f in t.fields}
    if isinstance(t, T.ListType):
        return [to_avro_value(x, t.element) for x in value]
    if isinstance(t, T.MapType):
        items = value.items() if isinstance(value, dict) else value
        if t.key == T.STRING:
            return {k: to_avro_value(x, t.value) for k, x in items}
        return [{"key": to_avro_value(k, t.key), "value": to_avro_value(x, t.value)} for k, x in items]
    v = V.to_internal(value, t)
    if t == T.UUID:
        return v.bytes
    return v


def from_avro_value(value: Any, t: T.IcebergType) -> Any:
    """The internal value of what fastavro returned for type ``t`` (logical types decoded or not)."""
    if value is None:
        return None
    if isinstance(t, T.StructType):
        return {f.id: from_avro_value(value.get(f.name), f.type) for f in t.fields}
    if isinstance(t, T.ListType):
        return [from_avro_value(x, t.element) for x in value]
    if isinstance(t, T.MapType):
        if isinstance(value, dict):
            return {from_avro_value(k, t.key): from_avro_value(x, t.value) for k, x in value.items()}
        return {from_avro_value(e["key"], t.key): from_avro_value(e["value"], t.value) for e in value}
    if t in (T.TIMESTAMP, T.TIMESTAMP_NS) and isinstance(value, dt.datetime) and value.tzinfo is not None:
        # fastavro returns UTC-aware datetimes even without adjust-to-utc; the wall clock is the value.
        value = value.replace(tzinfo=None)
    if isinstance(value, str) and (t in (T.BINARY, T.UUID) or isinstance(t, (T.FixedType, T.DecimalType))):
        # Avro JSON defaults of bytes/fixed come back as ISO-8859-1 text; a uuid may be canonical text.
        try:
            value = uuid_mod.UUID(value) if t == T.UUID and len(value) == 36 else value.encode("latin-1")
        except (ValueError, UnicodeEncodeError):
            raise InvalidTable(f"bad Avro value {value!r} for {t}", rule="ICEBERG-FMT-004") from None
    if isinstance(t, T.DecimalType) and isinstance(value, (bytes, bytearray)):
        value = Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-t.scale, context=V._DEC)
    if t in (T.FLOAT, T.DOUBLE) and isinstance(value, float) and math.isnan(value):
        return value
    return V.to_internal(value, t)
