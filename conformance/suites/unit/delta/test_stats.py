"""Per-file Statistics (reference_impl.delta.stats)."""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.suites.unit.delta.test_column_mapping import SPARK_NAME_MODE_PARQUET, SPARK_SCHEMA
from reference_impl.parquet_io import read_parquet
from reference_impl.delta import column_mapping as CM
from reference_impl.delta import schema as S
from reference_impl.delta import stats as ST
from reference_impl.errors import InvalidTable

UTC = dt.timezone.utc


def schema_of(*fields) -> S.StructType:
    return S.parse_schema(json.dumps({"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": md} for n, t, md in ((f + ({},))[:3] for f in fields)]}))


@pytest.mark.rule("DELTA-STATS-002", "DELTA-STATS-003", "DELTA-STATS-004", "DELTA-STATS-005", "DELTA-COLMAP-008")
def test_matches_spark_stats_for_a_spark_layout_file():
    # The stats Spark writes for these rows (physical-name keys, partition column left out).
    spark = {"numRecords": 3,
             "minValues": {"col-9f0743fd-a52e-44a7-92e0-72a3d34231b1": 1, "col-ae46e8ed-607b-4b7c-8a13-44991fe0a2e4": "foo1"},
             "maxValues": {"col-9f0743fd-a52e-44a7-92e0-72a3d34231b1": 21, "col-ae46e8ed-607b-4b7c-8a13-44991fe0a2e4": "foo1"},
             "nullCount": {"col-9f0743fd-a52e-44a7-92e0-72a3d34231b1": 0, "col-ae46e8ed-607b-4b7c-8a13-44991fe0a2e4": 0},
             "tightBounds": True}
    file = read_parquet(SPARK_NAME_MODE_PARQUET)  # physical names
    ours = ST.compute_stats(file, S.parse_schema(SPARK_SCHEMA), "name", partition_columns=["part"])
    assert ours == spark
    assert json.loads(ST.stats_to_json(ours)) == spark


@pytest.mark.rule("DELTA-STATS-003", "DELTA-STATS-005")
def test_nested_struct_stats_mirror_the_schema_and_count_parent_nulls():
    schema = schema_of(("a", {"type": "struct", "fields": [
        {"name": "b", "type": {"type": "struct", "fields": [{"name": "c", "type": "long", "nullable": True, "metadata": {}}]}, "nullable": True, "metadata": {}}]}),
        ("l", {"type": "array", "elementType": "integer", "containsNull": True}),
        ("flag", "boolean"), ("raw", "binary"))
    rows = [{"a": {"b": {"c": 5}}, "l": [1], "flag": True, "raw": b"x"},
            {"a": None, "l": None, "flag": None, "raw": None},
            {"a": {"b": None}, "l": [], "flag": False, "raw": b"y"},
            {"a": {"b": {"c": -2}}, "l": [2, None], "flag": True, "raw": b"z"}]
    st = ST.compute_stats(pa.Table.from_pylist(rows, schema=S.to_arrow_schema(schema)), schema)
    assert st["minValues"] == {"a": {"b": {"c": -2}}}
    assert st["maxValues"] == {"a": {"b": {"c": 5}}}
    assert st["nullCount"] == {"a": {"b": {"c": 2}}, "l": 1, "flag": 1, "raw": 1}
    assert st["numRecords"] == 4 and st["tightBounds"] is True


@pytest.mark.rule("DELTA-STATS-003", "DELTA-COLMAP-008")
def test_keys_are_physical_names_at_every_level():
    schema, _ = CM.assign_column_mapping(schema_of(("s", {"type": "struct", "fields": [{"name": "x", "type": "integer", "nullable": True, "metadata": {}}]})), 0)
    s = schema.field("s")
    ps, px = s.metadata[CM.PHYSICAL_NAME_KEY], s.type.field("x").metadata[CM.PHYSICAL_NAME_KEY]
    logical = pa.Table.from_pylist([{"s": {"x": 3}}], schema=S.to_arrow_schema(schema))
    for table in (logical, CM.to_physical_table(logical, schema, "name")):
        st = ST.compute_stats(table, schema, "name")
        assert st["minValues"] == {ps: {px: 3}} and st["nullCount"] == {ps: {px: 0}}


@pytest.mark.rule("DELTA-STATS-008")
def test_strings_are_truncated_with_a_tie_breaker_on_max():
    schema = schema_of(("s", "string"))
    long_a, long_b = "a" * 40, "b" * 31 + "é" + "x" * 10
    st = ST.compute_stats(pa.table({"s": [long_a, long_b]}), schema)
    assert st["minValues"]["s"] == "a" * 32
    assert st["maxValues"]["s"] == "b" * 31 + "é" + "\x7f"
    assert st["maxValues"]["s"] > long_b and st["minValues"]["s"] <= long_a
    assert ST.truncate_max_string("b" * 32 + "é", 32) == "b" * 32 + "\U0010ffff"
    assert ST.truncate_max_string("ab", 32) == "ab"
    assert ST.truncate_max_string("z" * 40, 0) is None


@pytest.mark.rule("DELTA-STATS-008")
def test_timestamps_are_iso_strings_truncated_to_milliseconds():
    schema = schema_of(("t", "timestamp"), ("n", "timestamp_ntz"), ("d", "date"))
    t = pa.table({
        "t": pa.array([1_000_123_456_789, -1], pa.timestamp("us", tz="UTC")),
        "n": pa.array([1_000_123_456_789, 0], pa.timestamp("us")),
        "d": pa.array([dt.date(2020, 2, 29), dt.date(1969, 12, 31)]),
    })
    st = ST.compute_stats(t, schema)
    assert st["minValues"]["t"] == "1969-12-31T23:59:59.999Z"  # floor, not toward zero
    assert st["maxValues"]["t"] == "1970-01-12T13:48:43.456Z"
    assert st["maxValues"]["n"] == "1970-01-12T13:48:43.456" and st["minValues"]["n"] == "1970-01-01T00:00:00.000"
    assert st["minValues"]["d"] == "1969-12-31" and st["maxValues"]["d"] == "2020-02-29"


@pytest.mark.rule("DELTA-STATS-005")
def test_nan_and_infinity_suppress_min_max_but_not_null_count():
    schema = schema_of(("x", "double"), ("y", "float"))
    st = ST.compute_stats(pa.table({"x": [1.0, float("nan"), None], "y": pa.array([0.1, 2.5, float("inf")], pa.float32())}), schema)
    assert "x" not in st["minValues"] and "y" not in st["maxValues"]
    assert st["nullCount"] == {"x": 1, "y": 0}
    ok = ST.compute_stats(pa.table({"y": pa.array([0.1, 2.5], pa.float32())}), schema_of(("y", "float")))
    assert ok["minValues"]["y"] == 0.1  # shortest float32 text, not 0.10000000149011612


@pytest.mark.rule("DELTA-STATS-005", "DELTA-STATS-009")
def test_all_null_and_empty_columns_have_counts_only():
    schema = schema_of(("a", "long"), ("b", "string"))
    st = ST.compute_stats(pa.table({"a": pa.array([None, None], pa.int64()), "b": ["x", None]}), schema)
    assert st["minValues"] == {"b": "x"} and st["nullCount"] == {"a": 2, "b": 1}
    empty = ST.compute_stats(pa.table({"a": pa.array([], pa.int64())}), schema)
    assert empty["numRecords"] == 0 and empty["nullCount"] == {"a": 0, "b": 0} and empty["minValues"] == {}


@pytest.mark.rule("DELTA-STATS-005")
def test_decimals_keep_every_digit_in_json():
    schema = schema_of(("d", "decimal(38,10)"))
    big = Decimal("1234567890123456789012345678.0123456789")
    st = ST.compute_stats(pa.table({"d": pa.array([big, Decimal("-1.5")], pa.decimal128(38, 10))}), schema)
    text = ST.stats_to_json(st)
    assert '"maxValues":{"d":1234567890123456789012345678.0123456789}' in text
    assert ST.parse_stats(text, exact=True)["maxValues"]["d"] == big


def test_num_indexed_cols_counts_leaves_and_excludes_partitions():
    schema = schema_of(("p", "integer"), ("a", "integer"), ("s", {"type": "struct", "fields": [
        {"name": "x", "type": "integer", "nullable": True, "metadata": {}}, {"name": "y", "type": "integer", "nullable": True, "metadata": {}}]}), ("z", "integer"))
    picked = ST.stats_schema(schema, 2, partition_columns=["p"])
    assert picked.names == ["a", "s"] and picked.field("s").type.names == ["x"]
    assert ST.stats_schema(schema, -1).names == ["p", "a", "s", "z"]
    assert ST.stats_schema(schema, 0).names == []
    by_name = ST.stats_schema(schema, 32, stats_columns=["Z", "s.y"])
    assert by_name.names == ["s", "z"] and by_name.field("s").type.names == ["y"]
    assert ST.stats_schema(schema_of(("a.b", "integer")), stats_columns=["`a.b`"]).names == ["a.b"]


@pytest.mark.rule("DELTA-STATS-002")
@pytest.mark.parametrize("text", ["{", "[1]", '{"numRecords": -1}', '{"numRecords": "3"}', '{"minValues": 3}'])
def test_parse_stats_rejects_bad_input(text):
    with pytest.raises(InvalidTable) as e:
        ST.parse_stats(text)
    assert e.value.rule == "DELTA-STATS-002"


@pytest.mark.rule("DELTA-STATS-001")
def test_parse_stats_absent_and_valid():
    assert ST.parse_stats(None) is None and ST.parse_stats("") is None
    assert ST.parse_stats('{"numRecords":3,"nullCounts":{}}')["nullCounts"] == {}  # kept, validators flag it


def test_stats_to_json_refuses_non_finite_numbers():
    with pytest.raises(InvalidTable):
        ST.stats_to_json({"minValues": {"x": float("nan")}})


def test_stats_struct_type_and_values_for_checkpoints():
    schema = schema_of(("i", "long"), ("t", "timestamp"), ("d", "decimal(10,2)"), ("b", "binary"),
                       ("s", {"type": "struct", "fields": [{"name": "n", "type": "timestamp_ntz", "nullable": True, "metadata": {}}]}))
    t = ST.stats_struct_type(schema, "none")
    bounds = pa.struct([("i", pa.int64()), ("t", pa.timestamp("us", tz="UTC")), ("d", pa.decimal128(10, 2)), ("s", pa.struct([("n", pa.timestamp("us"))]))])
    assert t == pa.struct([("numRecords", pa.int64()), ("minValues", bounds), ("maxValues", bounds),
                           ("nullCount", pa.struct([("i", pa.int64()), ("t", pa.int64()), ("d", pa.int64()), ("b", pa.int64()), ("s", pa.struct([("n", pa.int64())]))])),
                           ("tightBounds", pa.bool_())])
    stats = ST.parse_stats('{"numRecords":2,"minValues":{"i":1,"t":"2021-01-01T00:00:00.123Z","d":1.5,"s":{"n":"2021-01-01T00:00:00.000"},"extra":1},'
                           '"maxValues":{"i":"oops"},"nullCount":{"i":0,"b":2}}')
    arr = ST.stats_to_struct([stats, None], schema, "none")
    assert arr.type == t and arr[1].as_py() is None
    row = arr[0].as_py()
    assert row["minValues"]["t"] == dt.datetime(2021, 1, 1, 0, 0, 0, 123000, tzinfo=UTC)
    assert row["minValues"]["d"] == Decimal("1.50") and row["minValues"]["s"]["n"] == dt.datetime(2021, 1, 1)
    assert row["maxValues"]["i"] is None  # a value that does not fit drops to null
    assert row["nullCount"]["b"] == 2 and row["tightBounds"] is None


def test_stats_struct_type_without_eligible_columns_has_no_bounds():
    t = ST.stats_struct_type(schema_of(("b", "binary")), "none")
    assert [t.field(i).name for i in range(t.num_fields)] == ["numRecords", "nullCount", "tightBounds"]


@pytest.mark.rule("DELTA-STATS-002")
def test_stats_from_struct_inverts_stats_to_struct():
    schema = schema_of(("i", "long"), ("t", "timestamp"), ("n", "timestamp_ntz"), ("d", "date"), ("x", "decimal(10,2)"), ("s", "string"))
    text = ('{"numRecords":2,"minValues":{"i":1,"t":"2021-01-01T00:00:00.123Z","n":"1969-12-31T23:59:59.999","d":"2020-02-29","x":1.50,"s":"a"},'
            '"maxValues":{"i":9},"nullCount":{"i":0,"t":1,"n":0,"d":0,"x":0,"s":2}}')
    original = ST.parse_stats(text, exact=True)
    row = ST.stats_to_struct([original], schema, "none")[0].as_py()
    back = ST.stats_from_struct(row)
    assert back == original
    assert json.loads(ST.stats_to_json(back)) == json.loads(text)
    assert ST.stats_from_struct(None) is None


def test_timestamps_beyond_python_range_get_no_bounds_instead_of_an_error():
    schema = schema_of(("t", "timestamp"))
    far = 200_000 * 365 * 86400 * 1_000_000  # about year 201900
    st = ST.compute_stats(pa.table({"t": pa.array([far], pa.timestamp("us", tz="UTC"))}), schema)
    assert st["minValues"] == {} and st["nullCount"] == {"t": 0}
