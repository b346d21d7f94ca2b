"""Per-file Statistics: the add.stats JSON (numRecords, minValues, maxValues, nullCount, tightBounds).

What we write, and why (following Delta/Spark where the spec leaves room):
* Columns: the first ``num_indexed_cols`` leaf columns of the data schema (partition columns
  excluded, a struct counts its leaves, an array or map counts one), or exactly the columns
  named by ``stats_columns`` (delta.dataSkippingStatsColumns) when given; -1 means all.
* min/max only for numbers, decimals, dates, timestamps and strings (Spark's skipping-eligible
  types); nullCount for every non-struct column, nested like the schema, keyed by physical names.
* Strings are cut to ``string_prefix_length`` characters (32); a cut max gets a tie-breaker
  character appended (U+007F or U+10FFFF) so it still bounds every value from above.
* Timestamps are ISO-8601 strings truncated down to milliseconds (``…T00:00:00.123Z``;
  timestamp_ntz without the ``Z``); readers must widen the max by 1 ms (DELTA-STATS-008).
* Float columns holding NaN or infinities get no min/max: JSON cannot carry them portably and a
  bound that ignores NaN would let a reader prune wrongly. nullCount is still written.
* Decimals are JSON numbers with their exact digits.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.delta.column_mapping import physical_name
from reference_impl.delta.schema import (
    ArrayType,
    DataType,
    DecimalType,
    MapType,
    PrimitiveType,
    StructField,
    StructType,
    to_arrow_type,
)
from reference_impl.errors import InvalidTable

NUM_RECORDS = "numRecords"
MIN_VALUES = "minValues"
MAX_VALUES = "maxValues"
NULL_COUNT = "nullCount"
TIGHT_BOUNDS = "tightBounds"

NUM_INDEXED_COLS_KEY = "delta.dataSkippingNumIndexedCols"
STATS_COLUMNS_KEY = "delta.dataSkippingStatsColumns"
STRING_PREFIX_KEY = "delta.dataSkippingStringPrefixLength"
DEFAULT_NUM_INDEXED_COLS = 32
DEFAULT_STRING_PREFIX = 32

ASCII_MAX_CHARACTER = "\x7f"
UTF8_MAX_CHARACTER = "\U0010ffff"

RULE_FORMAT = "DELTA-STATS-002"

_MIN_MAX_TYPES = frozenset(
    {"byte", "short", "integer", "long", "float", "double", "date", "timestamp", "timestamp_ntz", "string"}
)


def _eligible(t: DataType) -> bool:
    return isinstance(t, DecimalType) or (isinstance(t, PrimitiveType) and t.name in _MIN_MAX_TYPES)


# ---------------------------------------------------------------------------------------------
# which columns


def _split_column_name(name: str) -> tuple[str, ...]:
    """``a.`b.c`.d`` -> ("a", "b.c", "d"): dots separate, backticks quote (`` doubles a backtick)."""
    parts: list[str] = []
    cur: list[str] = []
    i, quoted = 0, False
    while i < len(name):
        c = name[i]
        if quoted:
            if c == "`":
                if i + 1 < len(name) and name[i + 1] == "`":
                    cur.append("`")
                    i += 1
                else:
                    quoted = False
            else:
                cur.append(c)
        elif c == "`":
            quoted = True
        elif c == ".":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return tuple(p.strip() for p in parts)


def stats_schema(
    schema: StructType,
    num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS,
    stats_columns: Iterable[str] | None = None,
    partition_columns: Iterable[str] = (),
) -> StructType:
    """The logical sub-schema whose columns get statistics (see the module docstring)."""
    parts = set(partition_columns)
    data = StructType(fields=tuple(f for f in schema.fields if f.name not in parts))
    if stats_columns is not None:
        paths = [tuple(p.lower() for p in _split_column_name(c)) for c in stats_columns if c.strip()]
        return _filter_paths(data, paths)
    if num_indexed_cols < 0:
        return data
    return _truncate(data, num_indexed_cols)[0]


def _truncate(schema: StructType, budget: int) -> tuple[StructType, int]:
    used = 0
    kept: list[StructField] = []
    for f in schema.fields:
        if used >= budget:
            break
        if isinstance(f.type, StructType):
            sub, n = _truncate(f.type, budget - used)
            used += n
            if sub.fields:
                kept.append(StructField(name=f.name, type=sub, nullable=f.nullable, metadata=f.metadata))
        else:
            used += 1
            kept.append(f)
    return StructType(fields=tuple(kept)), used


def _filter_paths(schema: StructType, paths: list[tuple[str, ...]]) -> StructType:
    kept: list[StructField] = []
    for f in schema.fields:
        key = f.name.lower()
        if any(p == (key,) for p in paths):
            kept.append(f)
            continue
        below = [p[1:] for p in paths if len(p) > 1 and p[0] == key]
        if below and isinstance(f.type, StructType):
            sub = _filter_paths(f.type, below)
            if sub.fields:
                kept.append(StructField(name=f.name, type=sub, nullable=f.nullable, metadata=f.metadata))
    return StructType(fields=tuple(kept))


# ---------------------------------------------------------------------------------------------
# computing


def compute_stats(
    table: pa.Table,
    schema: StructType,
    mode: str = "none",
    num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS,
    stats_columns: list[str] | None = None,
    *,
    partition_columns: Iterable[str] = (),
    string_prefix_length: int = DEFAULT_STRING_PREFIX,
    tight_bounds: bool | None = True,
) -> dict:
    """Statistics of one data file's rows (columns found by display or physical name)."""
    selected = stats_schema(schema, num_indexed_cols, stats_columns, partition_columns)
    n = table.num_rows
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, Any] = {}
    by_name = {name: i for i, name in enumerate(table.column_names)}
    for f in selected.fields:
        pos = by_name.get(f.name)
        if pos is None:
            pos = by_name.get(physical_name(f, mode))
        arr = None if pos is None else table.column(pos).combine_chunks()
        _collect(f, arr, n, mode, string_prefix_length, mins, maxs, nulls)
    stats: dict[str, Any] = {NUM_RECORDS: n, MIN_VALUES: mins, MAX_VALUES: maxs, NULL_COUNT: nulls}
    if tight_bounds is not None:
        stats[TIGHT_BOUNDS] = tight_bounds
    return stats


def _collect(
    f: StructField,
    arr: pa.Array | None,
    n: int,
    mode: str,
    prefix: int,
    mins: dict,
    maxs: dict,
    nulls: dict,
) -> None:
    key = physical_name(f, mode)
    if arr is not None and pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if isinstance(f.type, StructType):
        sub_min: dict = {}
        sub_max: dict = {}
        sub_null: dict = {}
        kids: list[pa.Array | None]
        if arr is None or not pa.types.is_struct(arr.type):
            kids = [None] * len(f.type.fields)
        else:
            # flatten() makes a child null wherever its parent struct is null, as readers see it.
            flat = arr.flatten()
            names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
            kids = []
            for sub in f.type.fields:
                name = sub.name if sub.name in names else physical_name(sub, mode)
                kids.append(flat[names.index(name)] if name in names else None)
        for sub, kid in zip(f.type.fields, kids):
            _collect(sub, kid, n, mode, prefix, sub_min, sub_max, sub_null)
        if sub_min:
            mins[key] = sub_min
        if sub_max:
            maxs[key] = sub_max
        if sub_null:
            nulls[key] = sub_null
        return
    if arr is None:
        nulls[key] = n  # a column the file lacks reads as all-null
        return
    nulls[key] = arr.null_count
    if not _eligible(f.type) or arr.null_count == len(arr):
        return
    bounds = _min_max(arr, f.type, prefix)
    if bounds is not None:
        mins[key], maxs[key] = bounds


def _min_max(arr: pa.Array, t: DataType, prefix: int) -> tuple[Any, Any] | None:
    target = to_arrow_type(t)
    if arr.type != target:
        try:
            arr = arr.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            if pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(target):
                arr = arr.cast(target, safe=False)
            else:
                return None
    name = t.name if isinstance(t, PrimitiveType) else "decimal"
    if name in ("float", "double"):
        finite = pc.is_finite(arr)
        if pc.any(pc.and_(pc.invert(finite), arr.is_valid())).as_py():
            return None
    mm = pc.min_max(arr)
    lo, hi = mm["min"], mm["max"]
    if not lo.is_valid:
        return None
    try:
        return _bounds(lo, hi, name, prefix)
    except (OverflowError, ValueError):
        return None  # beyond Python's datetime range: no bound is always a safe answer


def _bounds(lo: pa.Scalar, hi: pa.Scalar, name: str, prefix: int) -> tuple[Any, Any]:
    if name == "string":
        return truncate_min_string(lo.as_py(), prefix), truncate_max_string(hi.as_py(), prefix)
    if name in ("timestamp", "timestamp_ntz"):
        return _ts_text(lo.value, name), _ts_text(hi.value, name)
    if name == "date":
        return lo.as_py().isoformat(), hi.as_py().isoformat()
    if name == "float":
        return _f32(lo.as_py()), _f32(hi.as_py())
    return lo.as_py(), hi.as_py()


def _f32(v: float) -> float:
    # The shortest decimal that reads back as the same float32 (0.1, not 0.10000000149011612).
    return float(str(np.float32(v)))


def _ts_text(micros: int, name: str) -> str:
    millis = micros - micros % 1000  # floor, also before 1970
    value = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=millis)
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond // 1000:03d}"
    return text + "Z" if name == "timestamp" else text


def truncate_min_string(value: str | None, prefix: int = DEFAULT_STRING_PREFIX) -> str | None:
    """A prefix of at most ``prefix`` characters: still a lower bound."""
    if value is None or len(value) <= prefix:
        return value
    if prefix <= 0:
        return None
    return value[:prefix]


def truncate_max_string(value: str | None, prefix: int = DEFAULT_STRING_PREFIX) -> str | None:
    """A short upper bound: a prefix plus a tie-breaker that sorts after the cut character.

    Like Spark, extend the prefix past U+10FFFF characters (nothing sorts after them) up to twice
    the prefix length; None (no bound) if that is not enough.
    """
    if value is None or len(value) <= prefix:
        return value
    if prefix <= 0:
        return None
    cut = prefix
    while cut <= 2 * prefix:
        if cut >= len(value):
            return value
        nxt = value[cut]
        if nxt == UTF8_MAX_CHARACTER:
            cut += 1
        elif nxt < ASCII_MAX_CHARACTER:
            return value[:cut] + ASCII_MAX_CHARACTER
        else:
            return value[:cut] + UTF8_MAX_CHARACTER
    return None


# ---------------------------------------------------------------------------------------------
# JSON


def stats_to_json(stats: dict) -> str:
    """Compact JSON; decimals keep their exact digits, non-finite floats are refused."""
    return _dump(stats)


def _dump(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise InvalidTable(f"statistics cannot carry the non-finite number {v}", rule=RULE_FORMAT)
        return repr(float(v))
    if isinstance(v, Decimal):
        if not v.is_finite():
            raise InvalidTable(f"statistics cannot carry the decimal {v}", rule=RULE_FORMAT)
        return format(v, "f")
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (dt.datetime, dt.date)):
        return json.dumps(v.isoformat())
    if isinstance(v, Mapping):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{_dump(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_dump(x) for x in v) + "]"
    raise InvalidTable(f"statistics cannot carry a {type(v).__name__}", rule=RULE_FORMAT)


def parse_stats(text: str | None, *, exact: bool = False) -> dict | None:
    """The stats object of add.stats (None when absent); InvalidTable on bad JSON or shape.

    ``exact`` reads fractional numbers as Decimal (decimal columns keep every digit).
    """
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        raise InvalidTable(f"stats must be a JSON string, got {type(text).__name__}", rule=RULE_FORMAT)
    try:
        obj = json.loads(text, parse_float=Decimal if exact else float)
    except (ValueError, RecursionError) as exc:
        raise InvalidTable(f"stats is not valid JSON: {exc}", rule=RULE_FORMAT) from None
    if not isinstance(obj, dict):
        raise InvalidTable(f"stats must be a JSON object, got {type(obj).__name__}", rule=RULE_FORMAT)
    n = obj.get(NUM_RECORDS)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
        raise InvalidTable(f"stats.numRecords must be a non-negative integer, got {n!r}", rule=RULE_FORMAT)
    for key in (MIN_VALUES, MAX_VALUES, NULL_COUNT):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            raise InvalidTable(f"stats.{key} must be an object", rule=RULE_FORMAT)
    return obj


# ---------------------------------------------------------------------------------------------
# checkpoint form: stats_parsed


def _physical_struct(t: StructType, mode: str, leaf) -> pa.DataType | None:
    fields = []
    for f in t.fields:
        if isinstance(f.type, StructType):
            sub = _physical_struct(f.type, mode, leaf)
            if sub is not None:
                fields.append(pa.field(physical_name(f, mode), sub))
        else:
            lt = leaf(f.type)
            if lt is not None:
                fields.append(pa.field(physical_name(f, mode), lt))
    return pa.struct(fields) if fields else None


def stats_struct_type(
    schema: StructType,
    mode: str,
    num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS,
    *,
    stats_columns: list[str] | None = None,
    partition_columns: Iterable[str] = (),
) -> pa.DataType:
    """The Arrow type of add.stats_parsed in checkpoints (empty sub-structs left out)."""
    selected = stats_schema(schema, num_indexed_cols, stats_columns, partition_columns)
    fields = [pa.field(NUM_RECORDS, pa.int64())]
    bounds = _physical_struct(selected, mode, lambda t: to_arrow_type(t) if _eligible(t) else None)
    if bounds is not None:
        fields += [pa.field(MIN_VALUES, bounds), pa.field(MAX_VALUES, bounds)]
    counts = _physical_struct(selected, mode, lambda t: pa.int64())
    if counts is not None:
        fields.append(pa.field(NULL_COUNT, counts))
    fields.append(pa.field(TIGHT_BOUNDS, pa.bool_()))
    return pa.struct(fields)


def stats_to_struct(
    stats_list: list[dict | None],
    schema: StructType,
    mode: str,
    num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS,
    *,
    stats_columns: list[str] | None = None,
    partition_columns: Iterable[str] = (),
) -> pa.Array:
    """One stats_parsed value per add (null where stats are absent); values that do not fit drop to null."""
    target = stats_struct_type(
        schema, mode, num_indexed_cols, stats_columns=stats_columns, partition_columns=partition_columns
    )
    rows = [None if s is None else _conform(s, target) for s in stats_list]
    return pa.array(rows, type=target)


def _conform(value: Any, t: pa.DataType) -> Any:
    """``value`` (from JSON) as a Python value of Arrow type ``t``, or None when it does not fit."""
    if value is None:
        return None
    try:
        if pa.types.is_struct(t):
            if not isinstance(value, Mapping):
                return None
            return {t.field(i).name: _conform(value.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields)}
        if pa.types.is_boolean(t):
            return value if isinstance(value, bool) else None
        if pa.types.is_integer(t):
            if isinstance(value, bool) or not isinstance(value, (int, Decimal, float)) or value != int(value):
                return None
            return int(value)
        if pa.types.is_floating(t):
            if isinstance(value, str):
                return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(value)
            return None if isinstance(value, bool) else float(value)
        if pa.types.is_decimal(t):
            if isinstance(value, bool):
                return None
            with decimal.localcontext(decimal.Context(prec=100)):
                d = Decimal(str(value)).quantize(Decimal(1).scaleb(-t.scale))
            return d if len(d.as_tuple().digits) <= t.precision else None
        if pa.types.is_string(t):
            return value if isinstance(value, str) else None
        if pa.types.is_date(t):
            return dt.date.fromisoformat(value) if isinstance(value, str) else None
        if pa.types.is_timestamp(t):
            if not isinstance(value, str):
                return None
            parsed = dt.datetime.fromisoformat(value.replace(" ", "T"))
            if t.tz is None:
                return parsed.replace(tzinfo=None) if parsed.tzinfo is None else None
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.timezone.utc)
    except (ValueError, TypeError, ArithmeticError, InvalidOperation, OverflowError):
        return None
    return None


def stats_from_struct(value: Mapping[str, Any] | None) -> dict | None:
    """The add.stats object for one stats_parsed value (as read from a checkpoint); None stays None.

    Nulls are dropped (absent, not null, in JSON) and temporal values are written back in the
    JSON forms above, so that ``stats_to_json(stats_from_struct(row))`` can fill add.stats.
    """
    if value is None:
        return None
    out = _plain(value)
    return out if isinstance(out, dict) else None


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        items = {str(k): _plain(x) for k, x in v.items()}
        return {k: x for k, x in items.items() if x is not None and x != {}}
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            return _ts_text(_micros(v, dt.datetime(1970, 1, 1)), "timestamp_ntz")
        return _ts_text(_micros(v, dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)), "timestamp")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON cannot carry it; an absent bound is always safe
    return v


def _micros(v: dt.datetime, epoch: dt.datetime) -> int:
    delta = v - epoch
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
