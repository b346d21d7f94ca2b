"""Canonical comparison of two Arrow tables: what "the same rows" means across engines.

Engines return the same logical content in different physical shapes: ``string`` vs
``large_string`` vs ``string_view``, chunked vs contiguous, rows in any order, timestamps in ns
or us, dictionary-encoded columns. None of that is a conformance difference. What is one: a
different column set, a different logical type (int32 vs int64, tz-aware vs naive timestamp),
or different values. ``compare`` reports the first kind as equal and the others as a
``Comparison`` with a minimal human-readable diff.

Value rules: rows are a multiset (order-insensitive, duplicates counted); NaN equals NaN; null
equals only null; timestamps are compared as instants at microsecond precision; decimals by value
(``1.10 == 1.1``); structs by field name; maps as unordered key/value sets; lists in order.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

MAX_DIFF_ROWS = 5  # rows shown per side: enough to see the pattern, short enough to read


class _NaN:
    """The one NaN value: equal to itself (unlike float NaN), so rows holding NaN can match."""

    _instance: "_NaN | None" = None

    def __new__(cls) -> "_NaN":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NaN"


NAN = _NaN()
_EPOCH_AWARE = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_NAIVE = _dt.datetime(1970, 1, 1)
_US = _dt.timedelta(microseconds=1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """The outcome of comparing an actual table with the expected one."""

    equal: bool
    summary: str = ""  # one line: what differs
    diff: str = ""  # a few lines: the differing columns / rows
    missing: int = 0  # expected rows the actual lacks
    extra: int = 0  # actual rows the expected lacks
    type_differences: tuple[str, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return self.equal


# ----------------------------------------------------------------------------------------------
# Types
# ----------------------------------------------------------------------------------------------


def logical_type(t: pa.DataType) -> str:
    """A canonical name for an Arrow type that ignores physical variants but keeps meaning."""
    if isinstance(t, pa.BaseExtensionType):
        # arrow.uuid and friends: the meaning is in the storage (a UUID is 16 bytes, as in the
        # table formats' specs); the extension is a presentation choice of the engine.
        return logical_type(t.storage_type)
    if pa.types.is_dictionary(t):
        return logical_type(t.value_type)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is_view(t, "string"):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or _is_view(t, "binary"):
        return "binary"
    if pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_timestamp(t):
        # The unit is representation; whether the value is an instant (tz) or a wall clock is not.
        return "timestamp[tz]" if t.tz is not None else "timestamp[ntz]"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_time(t):
        return "time"
    if pa.types.is_decimal(t):
        return "decimal"
    if pa.types.is_map(t):
        return f"map<{logical_type(t.key_type)},{logical_type(t.item_type)}>"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or _is_view(t, "list"):
        return f"list<{logical_type(t.value_type)}>"
    if pa.types.is_struct(t):
        inner = ",".join(f"{t.field(i).name}:{logical_type(t.field(i).type)}" for i in range(t.num_fields))
        return f"struct<{inner}>"
    return str(t)


def _is_view(t: pa.DataType, kind: str) -> bool:
    checker = getattr(pa.types, f"is_{kind}_view", None)
    return bool(checker and checker(t))


# ----------------------------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------------------------


def canonical_value(value: Any, t: pa.DataType) -> Any:
    """A hashable, engine-independent form of one Python value of Arrow type ``t``."""
    if value is None:
        return None
    if pa.types.is_dictionary(t):
        return canonical_value(value, t.value_type)
    if pa.types.is_floating(t):
        if isinstance(value, float) and math.isnan(value):
            return NAN
        return float(value)
    if pa.types.is_timestamp(t):
        return _instant_us(value)
    if pa.types.is_decimal(t):
        return decimal.Decimal(value).normalize() if isinstance(value, decimal.Decimal) else value
    if pa.types.is_time(t):
        if isinstance(value, _dt.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return value
    if pa.types.is_date(t):
        return value.date() if isinstance(value, _dt.datetime) else value
    if pa.types.is_map(t):
        pairs = [(canonical_value(k, t.key_type), canonical_value(v, t.item_type)) for k, v in value]
        return ("map", tuple(sorted(pairs, key=repr)))
    if pa.types.is_struct(t):
        return (
            "struct",
            tuple(sorted((t.field(i).name, canonical_value(value.get(t.field(i).name), t.field(i).type)) for i in range(t.num_fields))),
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or _is_view(t, "list"):
        return ("list", tuple(canonical_value(v, t.value_type) for v in value))
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, uuid.UUID):  # arrow.uuid values: compared as their 16 bytes
        return value.bytes
    return value


class Micros(int):
    """Microseconds since the epoch; an int for equality, an ISO text in diffs."""

    def __repr__(self) -> str:
        try:
            return (_EPOCH_NAIVE + _dt.timedelta(microseconds=int(self))).isoformat()
        except OverflowError:
            return f"{int(self)}us"


def _instant_us(value: Any) -> Micros:
    """Microseconds since the epoch; aware values as UTC instants, naive ones as wall clock."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            return Micros((value - _EPOCH_AWARE) // _US)
        return Micros((value - _EPOCH_NAIVE) // _US)
    if hasattr(value, "value"):  # pandas.Timestamp (ns) from to_pylist on ns data with nanoseconds
        return Micros(int(value.value) // 1000)
    return Micros(int(value))


class Days(int):
    """Days since the epoch; an int for equality, an ISO date in diffs (a date outside Python's years
    1..9999, which a writer may produce, stays comparable and shows as a day count)."""

    def __repr__(self) -> str:
        try:
            return (_EPOCH_NAIVE.date() + _dt.timedelta(days=int(self))).isoformat()
        except OverflowError:
            return f"{int(self)}d"


class Nanos(int):
    """Nanoseconds since the epoch; an int for equality, an ISO text in diffs."""

    def __repr__(self) -> str:
        seconds, frac = divmod(int(self), 1_000_000_000)
        try:
            return f"{(_EPOCH_NAIVE + _dt.timedelta(seconds=seconds)).isoformat()}.{frac:09d}"
        except OverflowError:
            return f"{int(self)}ns"


def _normalise_timestamps(table: pa.Table, ns_columns: frozenset[str]) -> pa.Table:
    """Top-level timestamps as int64 instants: nanoseconds for ``ns_columns`` (the expected side
    declares nanosecond precision, so an engine that drops nanoseconds differs), else microseconds
    (engines' ns output of microsecond data compares with us); top-level dates as int32 days."""
    cols = []
    for i, f in enumerate(table.schema):
        col = table.column(i)
        if pa.types.is_timestamp(f.type):
            unit = "ns" if f.name in ns_columns else "us"
            col = pc.cast(col, pa.timestamp(unit, tz=f.type.tz), safe=False).cast(pa.int64())
        elif pa.types.is_date(f.type):
            col = col.cast(pa.date32()).cast(pa.int32())
        cols.append(col)
    return pa.Table.from_arrays(cols, names=table.column_names)


def canonical_rows(table: pa.Table, columns: list[str], ns_columns: frozenset[str] = frozenset()) -> Counter:
    """The multiset of rows of ``table`` over ``columns``, each row a tuple of canonical values."""
    src_types = {c: table.schema.field(c).type for c in columns}
    table = _normalise_timestamps(table.select(columns), ns_columns)
    wrap = [
        (Nanos if c in ns_columns else Micros) if pa.types.is_timestamp(src_types[c])
        else Days if pa.types.is_date(src_types[c]) else None
        for c in columns
    ]
    types = [table.schema.field(c).type for c in columns]
    pycols = [
        [None if v is None else w(v) for v in table.column(c).to_pylist()] if w else table.column(c).to_pylist()
        for c, w in zip(columns, wrap)
    ]
    return Counter(tuple(canonical_value(v, t) for v, t in zip(row, types)) for row in zip(*pycols))


# ----------------------------------------------------------------------------------------------
# Tables
# ----------------------------------------------------------------------------------------------


def compare(
    actual: pa.Table,
    expected: pa.Table,
    *,
    check_types: bool = True,
    max_rows: int = MAX_DIFF_ROWS,
) -> Comparison:
    """Compare ``actual`` with ``expected``: columns, logical types, then the row multisets."""
    exp_cols = list(expected.column_names)
    act_cols = list(actual.column_names)
    missing_cols = [c for c in exp_cols if c not in act_cols]
    extra_cols = [c for c in act_cols if c not in exp_cols]
    if missing_cols or extra_cols or len(set(act_cols)) != len(act_cols):
        parts = []
        if missing_cols:
            parts.append(f"missing columns {missing_cols}")
        if extra_cols:
            parts.append(f"unexpected columns {extra_cols}")
        if len(set(act_cols)) != len(act_cols):
            parts.append(f"duplicate column names in {act_cols}")
        summary = "; ".join(parts)
        return Comparison(equal=False, summary=summary, diff=f"{summary}\nexpected columns: {exp_cols}\nactual columns:   {act_cols}")

    actual = _maps_as_expected(actual, expected)
    type_diffs = []
    if check_types:
        for name in exp_cols:
            want = logical_type(expected.schema.field(name).type)
            got = logical_type(actual.schema.field(name).type)
            if want != got:
                type_diffs.append(f"column {name!r}: type {got}, expected {want}")

    ns_cols = frozenset(
        n for n in exp_cols if pa.types.is_timestamp(expected.schema.field(n).type) and expected.schema.field(n).type.unit == "ns"
    )
    exp_rows = canonical_rows(expected, exp_cols, ns_cols)
    act_rows = canonical_rows(actual, exp_cols, ns_cols)
    missing = exp_rows - act_rows
    extra = act_rows - exp_rows
    n_missing = sum(missing.values())
    n_extra = sum(extra.values())
    if not type_diffs and not n_missing and not n_extra:
        return Comparison(equal=True)

    parts = list(type_diffs)
    if n_missing or n_extra:
        parts.append(
            f"{n_missing} expected row(s) missing, {n_extra} unexpected row(s) "
            f"(got {actual.num_rows} rows, expected {expected.num_rows})"
        )
    lines = list(type_diffs)
    if n_missing or n_extra:
        lines.append("columns: (" + ", ".join(exp_cols) + ")")
        lines.extend(_row_lines("-", missing, max_rows))
        lines.extend(_row_lines("+", extra, max_rows))
    return Comparison(
        equal=False,
        summary="; ".join(parts),
        diff="\n".join(lines),
        missing=n_missing,
        extra=n_extra,
        type_differences=tuple(type_diffs),
    )


def _is_entry_list(t: pa.DataType) -> bool:
    """A list of ``struct<key, value>``: how engines without a map type (Polars) return maps."""
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return False
    v = t.value_type
    return pa.types.is_struct(v) and v.num_fields == 2 and [v.field(0).name, v.field(1).name] == ["key", "value"]


def _maps_as_expected(actual: pa.Table, expected: pa.Table) -> pa.Table:
    """Key/value-list columns (at any depth) turned into the maps the expected table declares.

    An engine whose type system has no map type (Polars) can only return a map as its entries;
    that is a representation, not a different answer, so the entries are compared as a map.
    """
    for name in expected.column_names:
        if name not in actual.column_names:
            continue
        want = expected.schema.field(name).type
        col = actual.column(name)
        if not _has_map(want) or _types_match_maps(col.type, want):
            continue
        try:
            aligned = _align(col.combine_chunks(), want)
        except (pa.ArrowException, ValueError, TypeError, KeyError):
            continue  # leave it: the type check reports the difference
        actual = actual.set_column(actual.column_names.index(name), name, aligned)
    return actual


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_map(t.value_type)
    return False


def _types_match_maps(got: pa.DataType, want: pa.DataType) -> bool:
    return logical_type(got) == logical_type(want)


def _align(arr: pa.Array, want: pa.DataType) -> pa.Array:
    """``arr`` with every entry list sitting where ``want`` has a map rebuilt as a map."""
    got = arr.type
    if pa.types.is_map(want) and _is_entry_list(got):
        if pa.types.is_large_list(got):
            arr = arr.cast(pa.list_(got.value_type))
        entries = arr.values
        keys = _align(entries.field("key"), want.key_type)
        items = _align(entries.field("value"), want.item_type)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_struct(want) and pa.types.is_struct(got):
        names = [got.field(i).name for i in range(got.num_fields)]
        children = []
        for name, child in zip(names, arr.flatten()):  # flatten() honours a slice offset
            j = want.get_field_index(name)
            children.append(_align(child, want.field(j).type) if j >= 0 else child)
        return pa.StructArray.from_arrays(children, names=names, mask=arr.is_null() if arr.null_count else None)
    if (pa.types.is_list(want) or pa.types.is_large_list(want)) and (pa.types.is_list(got) or pa.types.is_large_list(got)):
        if pa.types.is_large_list(got):
            arr = arr.cast(pa.list_(got.value_type))
        values = _align(arr.values, want.value_type)
        return pa.ListArray.from_arrays(arr.offsets, values, mask=arr.is_null() if arr.null_count else None)
    return arr


def _row_lines(sign: str, rows: Counter, max_rows: int) -> list[str]:
    """``- (1, 'a')`` lines for the first ``max_rows`` rows of a difference, stable order."""
    out = []
    items = sorted(rows.items(), key=lambda kv: repr(kv[0]))
    for row, count in items[:max_rows]:
        times = f"  (x{count})" if count > 1 else ""
        out.append(f"{sign} ({', '.join(_show(v) for v in row)}){times}")
    hidden = sum(c for _, c in items[max_rows:])
    if hidden:
        out.append(f"{sign} ... and {hidden} more row(s)")
    return out


def _show(value: Any) -> str:
    """A short text form of a canonical value for the diff."""
    if isinstance(value, tuple) and value and value[0] in ("struct", "map", "list"):
        kind, inner = value
        if kind == "struct":
            return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in inner) + "}"
        if kind == "map":
            return "map{" + ", ".join(f"{_show(k)}: {_show(v)}" for k, v in inner) + "}"
        return "[" + ", ".join(_show(v) for v in inner) + "]"
    if value is None:
        return "null"
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
