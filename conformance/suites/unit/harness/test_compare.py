"""compare.py: equal things compare equal across physical variants; different things never do."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

from conformance.compare import compare, logical_type

UTC = dt.timezone.utc


def t(**cols):
    return pa.table(cols)


# ---- true negatives: representation differences are not differences --------------------------


def test_row_order_and_chunking_are_ignored():
    a = t(x=pa.array([1, 2, 3]), s=pa.array(["a", "b", "c"]))
    b = pa.concat_tables([t(x=pa.array([3]), s=pa.array(["c"])), t(x=pa.array([2, 1]), s=pa.array(["b", "a"]))])
    assert compare(b, a).equal


def test_column_order_is_ignored():
    a = t(x=pa.array([1]), s=pa.array(["a"]))
    assert compare(a.select(["s", "x"]), a).equal


@pytest.mark.parametrize("variant", [pa.large_string(), pa.string_view()])
def test_string_variants_are_equal(variant):
    exp = t(s=pa.array(["a", None, "ü"]))
    act = t(s=pa.array(["ü", "a", None]).cast(variant))
    assert compare(act, exp).equal


def test_binary_variants_and_dictionary_are_equal():
    exp = t(b=pa.array([b"\x00", b"", None]), s=pa.array(["x", "y", "x"]))
    act = t(b=pa.array([b"\x00", b"", None], pa.large_binary()), s=pa.array(["x", "y", "x"]).dictionary_encode())
    assert compare(act, exp).equal


def test_timestamps_compare_as_instants_at_microseconds():
    exp = t(ts=pa.array([dt.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)], pa.timestamp("us", tz="UTC")))
    # same instant, ns unit (with sub-us digits truncated) and another zone name
    ns = pa.array([1704110400123456789], pa.timestamp("ns", tz="Etc/UTC"))
    assert compare(t(ts=ns), exp).equal
    ms_off = pa.array([dt.datetime(2024, 1, 1, 13, 0, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=1)))],
                      pa.timestamp("us", tz="+01:00"))
    assert compare(t(ts=ms_off), exp).equal


def test_decimals_by_value_and_nan_equals_nan():
    exp = t(d=pa.array([decimal.Decimal("1.10"), None], pa.decimal128(10, 2)), f=pa.array([float("nan"), 0.0]))
    act = t(d=pa.array([decimal.Decimal("1.1000"), None], pa.decimal128(20, 4)), f=pa.array([float("nan"), -0.0]))
    assert compare(act, exp).equal


def test_nested_struct_list_map_equal():
    st = pa.struct([("a", pa.int64()), ("b", pa.string())])
    exp = t(
        s=pa.array([{"a": 1, "b": "x"}, None], st),
        l=pa.array([[1, None], []], pa.list_(pa.int64())),
        m=pa.array([[("k", 1), ("j", 2)], None], pa.map_(pa.string(), pa.int64())),
    )
    act = t(
        s=pa.array([{"a": 1, "b": "x"}, None], pa.struct([("a", pa.int64()), ("b", pa.large_string())])),
        l=pa.array([[1, None], []], pa.large_list(pa.int64())),
        m=pa.array([[("j", 2), ("k", 1)], None], pa.map_(pa.large_string(), pa.int64())),
    )
    assert compare(act, exp).equal


def test_map_returned_as_entry_list_compares_as_map():
    exp = t(m=pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())))
    entries = pa.large_list(pa.struct([("key", pa.large_string()), ("value", pa.int64())]))
    act = t(m=pa.array([[{"key": "k", "value": 1}], None], entries))
    assert compare(act, exp).equal
    wrong = t(m=pa.array([[{"key": "k", "value": 2}], None], entries))
    assert not compare(wrong, exp).equal


def test_empty_tables_equal():
    exp = pa.table({"x": pa.array([], pa.int64())})
    assert compare(exp, exp).equal


# ---- true positives: real differences are reported, minimally --------------------------------


def test_missing_and_extra_rows_are_listed():
    exp = t(x=pa.array([1, 2, 3]))
    act = t(x=pa.array([1, 2, 4]))
    c = compare(act, exp)
    assert not c.equal and c.missing == 1 and c.extra == 1
    assert "- (3)" in c.diff and "+ (4)" in c.diff
    assert "1 expected row(s) missing, 1 unexpected row(s)" in c.summary


def test_duplicates_count():
    exp = t(x=pa.array([1, 1]))
    c = compare(t(x=pa.array([1])), exp)
    assert not c.equal and c.missing == 1 and c.extra == 0


def test_diff_is_minimal():
    exp = t(x=pa.array(list(range(100))))
    act = t(x=pa.array(list(range(50))))
    c = compare(act, exp, max_rows=5)
    lines = c.diff.splitlines()
    assert c.missing == 50
    assert len([l for l in lines if l.startswith("- (")]) == 5
    assert "- ... and 45 more row(s)" in lines


def test_null_is_not_empty_string_nor_nan():
    assert not compare(t(s=pa.array([""])), t(s=pa.array([None], pa.string()))).equal
    assert not compare(t(f=pa.array([float("nan")])), t(f=pa.array([None], pa.float64()))).equal


def test_column_set_differences():
    exp = t(x=pa.array([1]), y=pa.array([2]))
    c = compare(t(x=pa.array([1]), z=pa.array([2])), exp)
    assert not c.equal
    assert "missing columns ['y']" in c.summary and "unexpected columns ['z']" in c.summary


def test_logical_type_differences_fail():
    exp = t(x=pa.array([1], pa.int32()))
    c = compare(t(x=pa.array([1], pa.int64())), exp)
    assert not c.equal and c.type_differences
    assert "type int64, expected int32" in c.summary


def test_tz_aware_and_naive_are_distinct():
    aware = t(ts=pa.array([0], pa.timestamp("us", tz="UTC")))
    naive = t(ts=pa.array([0], pa.timestamp("us")))
    c = compare(naive, aware)
    assert not c.equal and "timestamp[ntz], expected timestamp[tz]" in c.summary


def test_timestamp_one_microsecond_off_fails_and_shows_iso():
    exp = t(ts=pa.array([dt.datetime(2022, 12, 31, 23, 59, 59)], pa.timestamp("us")))
    act = t(ts=pa.array([dt.datetime(2022, 12, 31, 23, 59, 58, 999999)], pa.timestamp("us")))
    c = compare(act, exp)
    assert not c.equal
    assert "2022-12-31T23:59:59" in c.diff and "2022-12-31T23:59:58.999999" in c.diff


def test_decimal_value_difference_fails():
    exp = t(d=pa.array([decimal.Decimal("1.10")], pa.decimal128(10, 2)))
    act = t(d=pa.array([decimal.Decimal("1.11")], pa.decimal128(10, 2)))
    assert not compare(act, exp).equal


def test_nested_difference_fails():
    st = pa.struct([("a", pa.int64())])
    exp = t(s=pa.array([{"a": 1}], st))
    act = t(s=pa.array([{"a": None}], st))
    c = compare(act, exp)
    assert not c.equal and "{a: null}" in c.diff


def test_map_value_difference_fails():
    m = pa.map_(pa.string(), pa.int64())
    assert not compare(t(m=pa.array([[("k", 2)]], m)), t(m=pa.array([[("k", 1)]], m))).equal


def test_logical_type_names():
    assert logical_type(pa.large_string()) == "string"
    assert logical_type(pa.timestamp("ns", tz="UTC")) == "timestamp[tz]"
    assert logical_type(pa.large_list(pa.string_view())) == "list<string>"


def test_nested_entry_lists_compare_as_maps():
    m = pa.map_(pa.string(), pa.int64())
    exp = t(s=pa.array([{"m": [("a", 1)], "n": 5}, None, {"m": None, "n": 6}], pa.struct([("m", m), ("n", pa.int64())])))
    entry = pa.struct([("key", pa.large_string()), ("value", pa.int64())])
    act_type = pa.struct([("m", pa.large_list(entry)), ("n", pa.int64())])
    act = t(s=pa.array([{"m": [{"key": "a", "value": 1}], "n": 5}, None, {"m": None, "n": 6}], act_type))
    assert compare(act, exp).equal, compare(act, exp).diff
    lm = pa.list_(m)
    exp2 = t(l=pa.array([[[("k", 1)], None], None], lm))
    act2 = t(l=pa.array([[[{"key": "k", "value": 1}], None], None], pa.large_list(pa.large_list(entry))))
    assert compare(act2, exp2).equal
    act3 = t(l=pa.array([[[{"key": "k", "value": 2}], None], None], pa.large_list(pa.large_list(entry))))
    assert not compare(act3, exp2).equal


def test_nanosecond_expectations_compare_at_nanoseconds():
    # An engine that drops the nanoseconds of a timestamp_ns column returns a different value.
    ns = pa.table({"t": pa.array([0, 1], pa.timestamp("ns"))})
    assert compare(ns, ns).equal
    lossy = pa.table({"t": pa.array([0, 0], pa.timestamp("ns"))})
    result = compare(lossy, ns)
    assert not result.equal and "1970-01-01T00:00:00.000000001" in result.diff
    # Microsecond expectations still accept nanosecond output of the same instants.
    us = pa.table({"t": pa.array([5], pa.timestamp("us"))})
    assert compare(pa.table({"t": pa.array([5000], pa.timestamp("ns"))}), us).equal


def test_uuid_extension_compares_as_its_sixteen_bytes():
    import uuid

    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    as_ext = pa.table({"u": pa.array([u.bytes], pa.uuid())})
    as_fixed = pa.table({"u": pa.array([u.bytes], pa.binary(16))})
    assert compare(as_ext, as_fixed).equal
    as_text = pa.table({"u": pa.array([str(u)])})
    assert not compare(as_text, as_fixed).equal  # a string is another logical type


def test_dates_outside_python_years_compare_without_crashing():
    """A writer may store a date Python cannot hold (year 0, as Spark's pre-1582 shift does): it is a
    plain difference, shown as a day count, not a crash of the comparison."""
    year0 = pa.table({"d": pa.array([-719164], pa.int32()).cast(pa.date32())})
    year1 = pa.table({"d": pa.array([dt.date(1, 1, 1)], pa.date32())})
    assert compare(year0, year0).equal
    diff = compare(year0, year1)
    assert not diff.equal and "-719164d" in diff.diff and "0001-01-01" in diff.diff
