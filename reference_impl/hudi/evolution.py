"""Hudi schema evolution: the on-write type promotion table, the ``ALTER COLUMN ... TYPE`` matrix and the value
conversions both need (rules HUDI-EVOL-*, HUDI-PROMO-*, HUDI-EVOLR-013, HUDI-CHG-*).

Sources: the schema evolution page (seed 003: "Type Promotions" and "column type change" tables), Java
``SchemaChangeUtils.isTypeUpdateAllow`` / ``Types.DecimalBase.isWiderThan`` (1.x) and
``HoodieAvroUtils.rewritePrimaryTypeWithDiffSchemaType`` (how a value of the old type becomes one of the new).

Arrow types stand for Avro ones: int32 int, int64 long, float32 float, float64 double, string (and large_string)
string, binary (and large_binary) bytes, decimal128/256 decimal, date32 date.

On write (``on_write_type``; row = incoming batch type, column = table type; the cell is the table's type after
the write, X = rejected)::

                  int     long    float   double  string  bytes
    int           int     long    float   double  string  X
    long          long    long    float   double  string  X
    float         float   float   float   double  string  X
    double        double  double  double  double  string  X
    string        string  string  string  string  string  bytes
    bytes         X       X       X       X       string  bytes

A result equal to the table type means the incoming values are converted (HUDI-EVOL-016); a result equal to the
incoming type means the table is promoted in that commit and older files are read converted (HUDI-EVOL-015).
Recursion (HUDI-EVOL-007/008/017): array elements and map values by the same table (map keys must match: Avro
keys are always strings); struct fields by name, fields the table lacks appended at the end only if nullable
(HUDI-EVOL-002/010) and only after every existing field (HUDI-EVOL-004: a reordering is refused), never named
with the ``_hoodie`` prefix inside a struct (HUDI-EVOL-018); struct fields missing from the batch refused
(HUDI-EVOL-014: this writer has no ``hoodie.write.set.null.for.missing.columns``). Pairs outside the seed's
matrix (dates, decimals, timestamps...) are not promotions: the write converts to the table type (the writer
uses Arrow's cast, as it did before this module) — ``on_write_type`` returns the table type for them when Arrow
can cast, None otherwise.

ALTER COLUMN TYPE (``alter_type_allowed``; row = current, column = target)::

                  long  float  double  string  decimal  date  int  bytes
    int           Y     Y      Y       Y       Y        N     Y    N
    long          Y     Y      Y       Y       Y        N     N    N
    float         N     Y      Y       Y       Y        N     N    N
    double        N     N      Y       Y       Y        N     N    N
    decimal       N     N      N       Y       widen    N     N    N
    string        N     N      N       Y       Y        Y     N    Y (CHG-050)
    date          N     N      N       Y       N        Y     N    N
    bytes         N     N      N       Y (CHG-050)  N    N     N    Y

decimal(p1,s1) -> decimal(p2,s2) (HUDI-CHG-033): ``isWiderThan`` (p2-s2 >= p1-s1 and s2 > s1) or the same scale
with p2 >= p1. int/long/float/double/string -> decimal carries no precision check (Java has none; a value that
does not fit reads as null, Spark's non-ANSI cast). bytes <-> string (HUDI-CHG-050): not in the page's matrix but
allowed by Hudi 1.x's ``isTypeUpdateAllowInternal`` (BINARY -> STRING, STRING -> BINARY) and by the on-write table;
the reference allows both. Nested types (struct/array/map) themselves never change type (HUDI-EVOLR-013,
HUDI-CHG-051: Java throws "only support update primitive type").

Value conversion (``convert``), as Java's ``rewritePrimaryTypeWithDiffSchemaType`` does it:

* int/long -> float/double: the nearest value (Java's widening; Arrow's "safe" check for lost integer
  precision is off);
* float -> double: ``Double.valueOf(Float.toString(f))``, so 1.1f reads as 1.1, not 1.100000023841858;
* numbers -> string: ``String.valueOf``: ints in decimal; float/double in Java's ``Float.toString`` /
  ``Double.toString`` spelling: shortest digits that round-trip (JDK 19+), plain notation with at least one
  fractional digit for 1e-3 <= |x| < 1e7 (``1.5``, ``100.0``), else ``<d>.<ddd>E<exp>`` (``1.0E300``,
  ``1.0E-5``); ``NaN``, ``Infinity``, ``-Infinity``, ``-0.0``;
* decimal -> string: ``BigDecimal.toString`` (Python's ``str(Decimal)`` follows the same rules: ``1E-8``);
* date -> string: ``yyyy-MM-dd``;
* string <-> bytes: UTF-8 (bytes that are not UTF-8 are refused);
* int/long -> decimal exact (null when the value has too many digits); float/double -> decimal through their Java spelling (``new BigDecimal(toString)``),
  rounded HALF_UP to the scale; string -> decimal parsed, HALF_UP; unparseable or too wide -> null;
* string -> date: ``java.sql.Date.valueOf`` form ``yyyy-[m]m-[d]d``; an unparseable string reads as null
  (HUDI-CHG-041: engine cast rules; Spark's non-ANSI cast gives null).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from typing import Any

import numpy as np
import pyarrow as pa

from reference_impl.errors import InvalidTable, Unsupported

META_PREFIX = "_hoodie"

# ---------------------------------------------------------------------------------------------
# Type kinds

_ON_WRITE_KINDS = ("int", "long", "float", "double", "string", "bytes")


def kind(t: pa.DataType) -> str | None:
    """The Avro primitive a type stands for, or None (nested, or no kind these matrices know)."""
    if pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_decimal(t):
        return "decimal"
    if pa.types.is_date32(t):
        return "date"
    return None


def is_nested(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)


def in_promotion_matrix(t: pa.DataType) -> bool:
    """Whether ``t`` is a row/column of the seed's promotion table, or a nested type (recursed into)."""
    return kind(t) in _ON_WRITE_KINDS or is_nested(t)


# The seed page's table, row = incoming kind, value = result per table kind (None = X).
_I, _L, _F, _D, _S, _B = _ON_WRITE_KINDS
PROMOTION_TABLE: dict[str, dict[str, str | None]] = {
    _I: {_I: _I, _L: _L, _F: _F, _D: _D, _S: _S, _B: None},
    _L: {_I: _L, _L: _L, _F: _F, _D: _D, _S: _S, _B: None},
    _F: {_I: _F, _L: _F, _F: _F, _D: _D, _S: _S, _B: None},
    _D: {_I: _D, _L: _D, _F: _D, _D: _D, _S: _S, _B: None},
    _S: {_I: _S, _L: _S, _F: _S, _D: _S, _S: _S, _B: _B},
    _B: {_I: None, _L: None, _F: None, _D: None, _S: _S, _B: _B},
}


class _Reject(Exception):
    def __init__(self, rule: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.rule, self.message, self.hint = rule, message, hint


def _canonical(k: str) -> pa.DataType:
    return {"int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
            "string": pa.string(), "bytes": pa.binary()}[k]


def _arrow_casts(src: pa.DataType, dst: pa.DataType) -> bool:
    try:
        pa.array([], type=src).cast(dst)
        return True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False


def _write_type(incoming: pa.DataType, table: pa.DataType, path: str) -> pa.DataType:
    if incoming == table:
        return table
    ki, kt = kind(incoming), kind(table)
    if ki in _ON_WRITE_KINDS and kt in _ON_WRITE_KINDS:
        res = PROMOTION_TABLE[ki][kt]
        if res is None:
            raise _Reject(_promo_rule(ki, kt), f"{path}: an incoming {ki} does not write into a {kt} column "
                          "(X in Hudi's type promotion table)", "write the column as the table's type or as string")
        # Keep the table's own type object when it wins (large_string stays what the table has).
        return table if res == kt else _canonical(res)
    if (pa.types.is_list(incoming) or pa.types.is_large_list(incoming)) and \
            (pa.types.is_list(table) or pa.types.is_large_list(table)):
        elem = _write_type(incoming.value_type, table.value_type, f"{path}.element")
        return table if elem == table.value_type else pa.list_(table.value_field.with_type(elem))
    if pa.types.is_map(incoming) and pa.types.is_map(table):
        if incoming.key_type != table.key_type and _write_type(incoming.key_type, table.key_type,
                                                               f"{path}.key") != table.key_type:
            raise _Reject("HUDI-EVOL-017", f"{path}: map keys change type ({table.key_type} -> {incoming.key_type})",
                          "map keys are strings in Avro and never change type")
        item = _write_type(incoming.item_type, table.item_type, f"{path}.value")
        return table if item == table.item_type else pa.map_(table.key_field, table.item_field.with_type(item))
    if pa.types.is_struct(incoming) and pa.types.is_struct(table):
        return _struct_write_type(incoming, table, path)
    if in_promotion_matrix(incoming) and in_promotion_matrix(table):
        raise _Reject("HUDI-EVOL-011" if "." not in path else "HUDI-EVOL-012",
                      f"{path}: an incoming {incoming} does not write into a {table} column",
                      "nested and primitive types do not convert into each other")
    if _arrow_casts(incoming, table):
        return table  # outside the seed's matrix: converted to the table type, never promoted
    raise _Reject("HUDI-EVOL-011", f"{path}: an incoming {incoming} does not convert to the table's {table}",
                  "write the column as the table's type")


def _struct_write_type(incoming: pa.StructType, table: pa.StructType, path: str) -> pa.DataType:
    inc = {incoming.field(i).name: i for i in range(incoming.num_fields)}
    tab_names = [table.field(i).name for i in range(table.num_fields)]
    missing = [n for n in tab_names if n not in inc]
    if missing:
        raise _Reject("HUDI-EVOL-014", f"{path}: the incoming struct lacks field(s) {missing}",
                      "pass every field of the struct (null where unknown)")
    fields = []
    for i in range(table.num_fields):
        tf = table.field(i)
        fields.append(tf.with_type(_write_type(incoming.field(inc[tf.name]).type, tf.type, f"{path}.{tf.name}")))
    last_existing = max(inc[n] for n in tab_names) if tab_names else -1
    for j in range(incoming.num_fields):
        f = incoming.field(j)
        if f.name in tab_names:
            continue
        if j < last_existing:
            raise _Reject("HUDI-EVOL-004", f"{path}: new field {f.name!r} is not after the struct's existing fields",
                          "add nested fields at the end of the struct; reordering needs schema-on-read")
        if f.name.startswith(META_PREFIX):
            raise _Reject("HUDI-EVOL-018", f"{path}: meta-prefixed field {f.name!r} inside a struct",
                          "meta-named columns can be added at the root only")
        if not f.nullable:
            raise _Reject("HUDI-EVOL-010", f"{path}: new non-nullable field {f.name!r}",
                          "make the new field nullable: older records have no value for it")
        fields.append(f)
    out = pa.struct(fields)
    return table if out == table else out


def _promo_rule(ki: str, kt: str) -> str:
    return f"HUDI-PROMO-{_ON_WRITE_KINDS.index(ki) * 6 + _ON_WRITE_KINDS.index(kt) + 1:03d}"


def on_write_type(incoming: pa.DataType, table: pa.DataType) -> pa.DataType | None:
    """The table column's type after writing a batch whose column is ``incoming`` (module docstring), or None
    when the write must be rejected."""
    try:
        return _write_type(incoming, table, "column")
    except _Reject:
        return None


def write_type(incoming: pa.DataType, table: pa.DataType, column: str) -> pa.DataType:
    """``on_write_type`` for the writer: a rejection raises Unsupported carrying the rule id and a hint."""
    try:
        return _write_type(incoming, table, column)
    except _Reject as r:
        raise Unsupported(f"schema evolution on write: {r.message}", feature="hudi-schema-evolution",
                          rule=r.rule, hint=r.hint) from None


# ---------------------------------------------------------------------------------------------
# ALTER COLUMN TYPE

_ALTER = {
    "int": {"long", "float", "double", "string", "decimal"},
    "long": {"float", "double", "string", "decimal"},
    "float": {"double", "string", "decimal"},
    "double": {"string", "decimal"},
    "decimal": {"string"},  # decimal -> decimal: _decimal_widens
    "string": {"date", "decimal", "bytes"},  # string -> bytes: HUDI-CHG-050
    "date": {"string"},
    "bytes": {"string"},  # HUDI-CHG-050
}


def decimal_wider_than(p2: int, s2: int, p1: int, s1: int) -> bool:
    """Java ``DecimalBase.isWiderThan``: decimal(p2,s2) holds every decimal(p1,s1) with more fractional digits."""
    return (p2 - s2) >= (p1 - s1) and s2 > s1


def _decimal_widens(src: pa.DataType, dst: pa.DataType) -> bool:
    # SchemaChangeUtils.isDecimalUpdateAllowInternalBase (HUDI-CHG-033).
    return decimal_wider_than(dst.precision, dst.scale, src.precision, src.scale) or \
        (dst.precision >= src.precision and dst.scale == src.scale)


def alter_type_allowed(current: pa.DataType, target: pa.DataType) -> bool:
    """Whether ``ALTER COLUMN c TYPE target`` is accepted on a column of type ``current`` (module docstring)."""
    if is_nested(current) or is_nested(target):
        return False  # HUDI-EVOLR-013 / HUDI-CHG-051: only primitive types change
    if current == target:
        return True
    kc, kt = kind(current), kind(target)
    if kc is None or kt is None:
        return False
    if kc == kt == "decimal":
        return _decimal_widens(current, target)
    if kc == kt:
        return True  # string vs large_string and the like: the same Avro type
    return kt in _ALTER.get(kc, set())


# ---------------------------------------------------------------------------------------------
# Java spellings


def _java_digits(dec: decimal.Decimal, negative: bool) -> str:
    digits = "".join(map(str, dec.as_tuple().digits)).rstrip("0") or "0"
    exp10 = dec.adjusted()  # position of the first digit
    sign = "-" if negative else ""
    if -3 <= exp10 < 7:
        plain = format(abs(dec), "f")
        if "." not in plain:
            plain += ".0"
        return sign + plain
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp10}"


def java_double_to_string(x: float) -> str:
    """Java ``Double.toString`` (shortest round-trip digits, as JDK 19+)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return _java_digits(decimal.Decimal(repr(abs(x))), x < 0)


def java_float_to_string(x: float) -> str:
    """Java ``Float.toString``: the shortest digits that identify the float32 value."""
    with np.errstate(over="ignore"):  # a double beyond float32's range is Infinity, as Java's (float) cast
        f = np.float32(x)
    if np.isnan(f):
        return "NaN"
    if np.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if f == 0:
        return "-0.0" if np.signbit(f) else "0.0"
    text = np.format_float_scientific(abs(f), unique=True, trim="-")
    return _java_digits(decimal.Decimal(text), bool(f < 0))


_DATE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")


def parse_date(text: str | None) -> dt.date | None:
    """``java.sql.Date.valueOf``'s form yyyy-[m]m-[d]d; anything else (or an impossible date) is None."""
    if text is None:
        return None
    m = _DATE.match(text)
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def _to_decimal(value: Any, t: pa.DataType, src_kind: str) -> decimal.Decimal | None:
    if value is None:
        return None
    if src_kind == "float":
        text = java_float_to_string(value)
    elif src_kind == "double":
        text = java_double_to_string(value)
    else:
        text = str(value).strip()
    try:
        d = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return None
    if not d.is_finite():
        return None
    if d.adjusted() >= t.precision - t.scale:
        return None  # more integer digits than the type holds: null, as Spark's non-ANSI cast
    ctx = decimal.Context(prec=t.precision + 2, rounding=decimal.ROUND_HALF_UP)
    try:
        q = d.quantize(decimal.Decimal(1).scaleb(-t.scale), context=ctx)
    except decimal.InvalidOperation:
        return None
    if len(q.as_tuple().digits) > t.precision and q != 0:
        return None  # does not fit: null, as Spark's non-ANSI cast
    return q


# ---------------------------------------------------------------------------------------------
# Value conversion


def _values(arr: pa.Array) -> list:
    return arr.to_pylist()


def convert(array: pa.Array | pa.ChunkedArray, to_type: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``array``'s values as ``to_type`` (module docstring), nested types recursively. Raises InvalidTable when a
    value cannot convert (bytes that are not UTF-8, an integer overflowing a decimal's digits...)."""
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([convert(c, to_type) for c in array.chunks], type=to_type)
    src = array.type
    if src == to_type:
        return array
    if isinstance(array, pa.ExtensionArray):
        array = array.storage
        src = array.type
    if pa.types.is_struct(src) and pa.types.is_struct(to_type):
        children, names = [], {src.field(i).name: i for i in range(src.num_fields)}
        for i in range(to_type.num_fields):
            f = to_type.field(i)
            if f.name in names:
                children.append(convert(array.field(names[f.name]), f.type))
            else:
                children.append(pa.nulls(len(array), f.type))
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(to_type), mask=mask)
    if (pa.types.is_list(src) or pa.types.is_large_list(src)) and pa.types.is_list(to_type):
        array = array.cast(pa.list_(src.value_field)) if pa.types.is_large_list(src) else array
        values = convert(array.values, to_type.value_type)
        offsets = array.offsets  # index into the whole values buffer (.values), sliced or not
        mask = array.is_null() if array.null_count else None
        return pa.ListArray.from_arrays(offsets, values, type=to_type, mask=mask)
    if pa.types.is_map(src) and pa.types.is_map(to_type):
        keys = convert(array.keys, to_type.key_type)
        items = convert(array.items, to_type.item_type)
        mask = array.is_null() if array.null_count else None
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=to_type, mask=mask)
    ks, kt = kind(src), kind(to_type)
    try:
        if kt == "string" and ks == "float":
            return pa.array([None if v is None else java_float_to_string(v) for v in _values(array)], to_type)
        if kt == "string" and ks == "double":
            return pa.array([None if v is None else java_double_to_string(v) for v in _values(array)], to_type)
        if kt == "string" and ks == "decimal":
            return pa.array([None if v is None else str(v) for v in _values(array)], to_type)
        if kt == "double" and ks == "float":
            return pa.array([None if v is None else float(java_float_to_string(v).replace("Infinity", "inf"))
                             for v in _values(array)], to_type)
        if kt == "decimal" and ks in ("int", "long", "float", "double", "string"):
            # Not Arrow's cast: it wants room for every int64 (precision >= 19 + scale), Java only for the value.
            return pa.array([_to_decimal(v, to_type, ks) for v in _values(array)], to_type)
        if kt == "date" and ks == "string":
            return pa.array([parse_date(v) for v in _values(array)], to_type)
        if ks in ("int", "long") and kt in ("float", "double"):
            return array.cast(to_type, safe=False)  # Java's widening rounds to the nearest value
        return array.cast(to_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise InvalidTable(f"values of type {src} do not convert to {to_type}: {exc}",
                           rule="HUDI-EVOL-016") from None




_CHG_ROWS = ("int", "long", "float", "double", "decimal", "string", "date")
_CHG_COLS = ("long", "float", "double", "string", "decimal", "date", "int")


def alter_rule(current: pa.DataType, target: pa.DataType) -> str:
    """The HUDI-CHG rule id of the matrix cell (current, target); CHG-050 for bytes, CHG-051 for nested types."""
    if is_nested(current) or is_nested(target):
        return "HUDI-CHG-051"
    kc, kt = kind(current), kind(target)
    if kc in _CHG_ROWS and kt in _CHG_COLS:
        return f"HUDI-CHG-{_CHG_ROWS.index(kc) * 7 + _CHG_COLS.index(kt) + 1:03d}"
    if "bytes" in (kc, kt):
        return "HUDI-CHG-050"
    return "HUDI-EVOLR-012"


def normalized(t: pa.DataType) -> pa.DataType:
    """``t`` with list/map child names made Arrow's defaults: the names Avro does not keep do not tell types
    apart."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field("item", normalized(t.value_type), t.value_field.nullable))
    if pa.types.is_map(t):
        return pa.map_(normalized(t.key_type), pa.field("value", normalized(t.item_type), t.item_field.nullable))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(normalized(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    return t


__all__ = ["PROMOTION_TABLE", "kind", "is_nested", "in_promotion_matrix", "on_write_type", "write_type",
           "alter_type_allowed", "decimal_wider_than", "java_double_to_string", "java_float_to_string",
           "parse_date", "convert", "alter_rule", "normalized"]
