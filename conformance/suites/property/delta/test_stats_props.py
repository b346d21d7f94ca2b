"""Property (5): per-file statistics are true of the rows they describe.

numRecords equals the row count; every collected min is <= every non-null value and every max is
>= it (allowing the truncations the spec permits: string prefixes, timestamps to milliseconds);
nullCount is exact; the stats JSON round-trips.
"""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given

from conformance.roundtrip import assert_roundtrip, nan_safe_equal
from conformance.formats.delta import strategies as sd
from reference_impl.delta import stats as ds
from reference_impl.delta.schema import DecimalType, PrimitiveType, StructType

STATS_SCHEMAS = sd.schemas(
    sd.data_types(sd.leaf_types(), names=sd.field_names("plain"), max_leaves=4), names=sd.field_names("plain"), metadata=False
)
TABLES = sd.tables(STATS_SCHEMAS, max_rows=10, nan=False)
UTC = dt.timezone.utc


def _bound(value, t):
    """A min/max stat as a comparable Python value of the column's type."""
    name = t.name if isinstance(t, PrimitiveType) else "decimal"
    if name == "date":
        return dt.date.fromisoformat(value)
    if name == "timestamp":
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    if name == "timestamp_ntz":
        return dt.datetime.fromisoformat(value)
    if name == "decimal":
        return decimal.Decimal(str(value))
    if name == "float":
        return float(np.float32(value))
    return value


def _floor_ms(v):
    return v - dt.timedelta(microseconds=v.microsecond % 1000)


def check_column(name, t, arr: pa.Array, stats: dict, path: str) -> None:
    """Check one column's nullCount/min/max against its values (recursing into structs)."""
    nulls, mins, maxs = (stats.get(k, {}) for k in ("nullCount", "minValues", "maxValues"))
    if isinstance(t, StructType):
        flat = arr.flatten()  # a child is null wherever its parent is
        for i, f in enumerate(t.fields):
            sub = {k: stats.get(k, {}).get(name, {}) for k in ("nullCount", "minValues", "maxValues")}
            check_column(f.name, f.type, flat[i], sub, f"{path}.{f.name}")
        return
    if name in nulls and not isinstance(nulls[name], dict):
        assert nulls[name] == arr.null_count, f"{path}: nullCount {nulls[name]} != {arr.null_count}"
    values = [v for v in arr.to_pylist() if v is not None]
    if name in mins or name in maxs:
        assert values, f"{path}: bounds for a column without values"
    if name in mins and mins[name] is not None:
        lo = _bound(mins[name], t)
        assert all(lo <= v for v in values), f"{path}: min {mins[name]!r} > {min(values)!r}"
    if name in maxs and maxs[name] is not None:
        hi = _bound(maxs[name], t)
        tname = getattr(t, "name", "decimal")
        for v in values:
            if tname in ("timestamp", "timestamp_ntz"):
                assert hi >= _floor_ms(v), f"{path}: max {maxs[name]!r} below {v!r} by more than 1 ms"
            elif tname == "string":
                assert hi >= v or v.startswith(hi), f"{path}: max {maxs[name]!r} < {v!r}"
            else:
                assert hi >= v, f"{path}: max {maxs[name]!r} < {v!r}"
        if isinstance(t, (DecimalType,)) or getattr(t, "name", "") in ("long", "integer", "short", "byte"):
            assert hi == max(values) and _bound(mins[name], t) == min(values), f"{path}: integral bounds not tight"


@pytest.mark.rule("DELTA-STATS-002", "DELTA-STATS-003", "DELTA-STATS-004", "DELTA-STATS-005", "DELTA-STATS-008")
@given(TABLES)
def test_stats_describe_the_rows(st_):
    schema, table = st_
    stats = ds.compute_stats(table, schema)
    assert stats["numRecords"] == table.num_rows
    for f in schema.fields:
        check_column(f.name, f.type, table.column(f.name).combine_chunks(), stats, f.name)


@pytest.mark.rule("DELTA-STATS-002")
@given(TABLES)
def test_stats_json_round_trip(st_):
    schema, table = st_
    stats = ds.compute_stats(table, schema)
    # exact=True keeps decimal bounds as Decimal (a float would lose digits of decimal(38, s)); bounds
    # of float columns are then turned back into floats, as a reader that knows the schema would
    assert_roundtrip(stats, ds.stats_to_json, lambda t: _like(ds.parse_stats(t, exact=True), stats),
                     equal=nan_safe_equal, label="stats json")


def _like(decoded, original):
    """``decoded`` with each Decimal turned into a float where ``original`` holds a float."""
    if isinstance(decoded, dict) and isinstance(original, dict):
        return {k: _like(v, original.get(k)) for k, v in decoded.items()}
    if isinstance(decoded, decimal.Decimal) and isinstance(original, float):
        return float(decoded)
    return decoded


@pytest.mark.rule("DELTA-STATS-004", "DELTA-STATS-005")
@given(sd.tables(STATS_SCHEMAS, max_rows=10, nan=True))
def test_stats_with_nan_and_infinities_never_break_bounds(st_):
    schema, table = st_
    stats = ds.compute_stats(table, schema)
    assert stats["numRecords"] == table.num_rows
    ds.parse_stats(ds.stats_to_json(stats))  # must serialize: non-finite bounds are left out, not written
