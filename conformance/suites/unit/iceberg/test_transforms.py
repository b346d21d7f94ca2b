"""Partition Transforms and Appendix B hashing (reference_impl.iceberg.transforms)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V

UTC = dt.timezone.utc
PST = dt.timezone(dt.timedelta(hours=-8))


# Appendix B test values, copied from the spec's table (format/spec.md at 7f879b1).
@pytest.mark.rule("ICEBERG-PART-018", "ICEBERG-PART-019", "ICEBERG-PART-020", "ICEBERG-PART-021", "ICEBERG-PART-022", "ICEBERG-PART-023")
@pytest.mark.parametrize(
    "value,t,expected",
    [
        (34, T.INT, 2017239379),
        (34, T.LONG, 2017239379),
        (Decimal("14.20"), T.DecimalType(precision=9, scale=2), -500754589),
        (dt.date(2017, 11, 16), T.DATE, -653330422),
        (dt.time(22, 31, 8), T.TIME, -662762989),
        (dt.datetime(2017, 11, 16, 22, 31, 8), T.TIMESTAMP, -2047944441),
        (dt.datetime(2017, 11, 16, 22, 31, 8, 1), T.TIMESTAMP, -1207196810),
        (dt.datetime(2017, 11, 16, 14, 31, 8, tzinfo=PST), T.TIMESTAMPTZ, -2047944441),
        (dt.datetime(2017, 11, 16, 14, 31, 8, 1, tzinfo=PST), T.TIMESTAMPTZ, -1207196810),
        (dt.datetime(2017, 11, 16, 22, 31, 8), T.TIMESTAMP_NS, -2047944441),
        ("2017-11-16T22:31:08.000001001", T.TIMESTAMP_NS, -1207196810),
        (dt.datetime(2017, 11, 16, 14, 31, 8, tzinfo=PST), T.TIMESTAMPTZ_NS, -2047944441),
        ("2017-11-16T22:31:08.000001001+00:00", T.TIMESTAMPTZ_NS, -1207196810),
        ("iceberg", T.STRING, 1210000089),
        ("f79c3e09-677c-4bbd-a479-3f349cb785e7", T.UUID, 1488055340),
        (bytes([0, 1, 2, 3]), T.FixedType(length=4), -188683207),
        (bytes([0, 1, 2, 3]), T.BINARY, -188683207),
    ],
)
def test_appendix_b_hash_test_values(value, t, expected):
    if isinstance(value, str) and t in T.NANO_TYPES:
        value = V.from_json(value, t)
    assert X.hash_value(value, t) == expected


@pytest.mark.rule("ICEBERG-PART-024")
@pytest.mark.parametrize(
    "value,t,expected",
    [
        (True, T.BOOLEAN, 1392991556),
        (1.0, T.FLOAT, -142385009),
        (0.0, T.FLOAT, 1669671676),
        (-0.0, T.FLOAT, 1669671676),
        (1.0, T.DOUBLE, -142385009),
        (0.0, T.DOUBLE, 1669671676),
        (-0.0, T.DOUBLE, 1669671676),
    ],
)
def test_appendix_b_hashes_for_types_not_valid_for_bucketing(value, t, expected):
    assert X.hash_value(value, t) == expected


@pytest.mark.rule("ICEBERG-PART-024")
def test_every_nan_hashes_like_the_canonical_nan_and_unknown_hashes_to_null():
    import struct

    other_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000001))[0]
    assert X.hash_value(other_nan, T.DOUBLE) == X.hash_value(float("nan"), T.DOUBLE) == X.hash_long(0x7FF8000000000000)
    assert X.hash_value(None, T.UNKNOWN) is None
    with pytest.raises(Unsupported, match="no 32-bit hash"):
        X.hash_value(b"\x01", T.VARIANT)


@pytest.mark.rule("ICEBERG-EVOL-008")
def test_spec_example_int_and_string_34_hash_differently():
    assert X.hash_value(34, T.INT) == 2017239379
    assert X.hash_value("34", T.STRING) == -427558391


@pytest.mark.rule("ICEBERG-PART-018", "ICEBERG-PART-011")
def test_bucket_discards_sign_bit_then_mods():
    # iceberg hashes to 1210000089 (positive); -188683207 is negative: sign bit dropped first.
    assert X.bucket("iceberg", T.STRING, 16) == 1210000089 % 16
    assert X.bucket(bytes([0, 1, 2, 3]), T.BINARY, 100) == (-188683207 & 0x7FFFFFFF) % 100
    assert X.bucket(34, T.INT, 16) == X.bucket(34, T.LONG, 16)
    for v in range(-50, 50):
        assert 0 <= X.bucket(v, T.LONG, 7) < 7


@pytest.mark.rule("ICEBERG-PART-011")
@pytest.mark.parametrize("t", [T.FLOAT, T.DOUBLE, T.BOOLEAN, T.VARIANT, T.UNKNOWN, T.GeometryType()])
def test_bucket_rejects_sources_outside_the_table(t):
    assert not X.BucketTransform(num_buckets=4).can_transform(t)
    with pytest.raises(InvalidTable, match="cannot be applied") as e:
        X.BucketTransform(num_buckets=4).result_type(t)
    assert e.value.rule == "ICEBERG-PART-011"


@pytest.mark.rule("ICEBERG-PART-025")
@pytest.mark.parametrize(
    "v,w,t,expected",
    [(1, 10, T.INT, 0), (-1, 10, T.INT, -10), (1, 10, T.LONG, 0), (-1, 10, T.LONG, -10), (-3, 3, T.INT, -3), (10, 10, T.INT, 10), (-10, 10, T.LONG, -10), (-11, 10, T.LONG, -20), (-2**63, 7, T.LONG, -2**63 - ((-2**63) % 7))],
)
def test_truncate_integers_remainder_never_negative(v, w, t, expected):
    assert X.truncate(v, t, w) == expected


@pytest.mark.rule("ICEBERG-PART-026")
def test_truncate_decimal_uses_column_scale():
    d = T.DecimalType(precision=9, scale=2)
    out = X.truncate(Decimal("10.65"), d, 50)
    assert out == Decimal("10.50") and str(out) == "10.50"
    assert X.truncate(Decimal("-0.05"), d, 10) == Decimal("-0.10")
    assert X.truncate(Decimal("12.34"), T.DecimalType(precision=9, scale=2), 1) == Decimal("12.34")


@pytest.mark.rule("ICEBERG-PART-027", "ICEBERG-PART-028")
def test_truncate_strings_by_code_point_and_binary_by_byte():
    assert X.truncate("iceberg", T.STRING, 3) == "ice"
    assert X.truncate("ab\U0001F600cd", T.STRING, 3) == "ab\U0001F600"  # a surrogate pair in UTF-16, one code point
    assert X.truncate("€uro", T.STRING, 1).encode() == "€".encode("utf-8")
    assert X.truncate(b"\x01\x02\x03\x04\x05", T.BINARY, 3) == b"\x01\x02\x03"
    assert X.truncate("ab", T.STRING, 5) == "ab"


@pytest.mark.rule("ICEBERG-PART-012")
@pytest.mark.parametrize("t", [T.DATE, T.TIMESTAMP, T.FLOAT, T.UUID, T.FixedType(length=2), T.BOOLEAN])
def test_truncate_rejects_other_sources(t):
    with pytest.raises(InvalidTable) as e:
        X.TruncateTransform(width=3).apply(None, t)
    assert e.value.rule == "ICEBERG-PART-012"


@pytest.mark.rule("ICEBERG-PART-014")
@pytest.mark.parametrize(
    "value,t,year,month,day",
    [
        (dt.date(1970, 1, 1), T.DATE, 0, 0, 0),
        (dt.date(1969, 12, 31), T.DATE, -1, -1, -1),
        (dt.date(2017, 11, 16), T.DATE, 47, 47 * 12 + 10, 17486),
        (dt.date(1968, 2, 29), T.DATE, -2, -23, -672),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999999), T.TIMESTAMP, -1, -1, -1),
        (dt.datetime(1970, 1, 1, 0, 0, 0), T.TIMESTAMP, 0, 0, 0),
        (dt.datetime(1969, 12, 31, 23, 0, tzinfo=UTC), T.TIMESTAMPTZ, -1, -1, -1),
        (-1, T.TIMESTAMP_NS, -1, -1, -1),  # one nanosecond before the epoch
        (0, T.TIMESTAMPTZ_NS, 0, 0, 0),
        (-719163, T.DATE, -1970, -1970 * 12 + 11, -719163),  # 0000-12-31, beyond Python's date
        (2932897, T.DATE, 8030, 8030 * 12, 2932897),  # 10000-01-01
    ],
)
def test_year_month_day_around_the_epoch(value, t, year, month, day):
    assert X.YearTransform().apply(value, t) == year
    assert X.MonthTransform().apply(value, t) == month
    assert X.DayTransform().apply(value, t) == day


@pytest.mark.rule("ICEBERG-PART-014", "ICEBERG-PART-013")
def test_hour_floors_before_the_epoch_and_rejects_dates():
    assert X.HourTransform().apply(dt.datetime(1969, 12, 31, 23, 59), T.TIMESTAMP) == -1
    assert X.HourTransform().apply(dt.datetime(1970, 1, 1, 1, 0), T.TIMESTAMP) == 1
    assert X.HourTransform().apply(-1, T.TIMESTAMP_NS) == -1
    assert X.HourTransform().apply(3_600_000_000_000, T.TIMESTAMPTZ_NS) == 1
    with pytest.raises(InvalidTable) as e:
        X.HourTransform().apply(dt.date(2020, 1, 1), T.DATE)
    assert e.value.rule == "ICEBERG-PART-013"


@pytest.mark.rule("ICEBERG-PART-014", "ICEBERG-PART-011", "ICEBERG-PART-016")
def test_result_types():
    assert X.DayTransform().result_type(T.TIMESTAMP) == T.DATE
    for tr in (X.YearTransform(), X.MonthTransform(), X.HourTransform(), X.BucketTransform(num_buckets=3)):
        assert tr.result_type(T.TIMESTAMPTZ) == T.INT
    d = T.DecimalType(precision=10, scale=3)
    assert X.TruncateTransform(width=3).result_type(d) == d
    assert X.IdentityTransform().result_type(T.UUID) == T.UUID
    assert X.VoidTransform().result_type(T.STRING) == T.STRING


@pytest.mark.rule("ICEBERG-PART-010")
def test_identity_accepts_primitives_but_not_geo_or_nested():
    idt = X.IdentityTransform()
    assert idt.can_transform(T.TIMESTAMP_NS) and idt.can_transform(T.FixedType(length=3))
    for t in (T.GeometryType(), T.GeographyType(), T.VARIANT, T.StructType(fields=())):
        assert not idt.can_transform(t)


@pytest.mark.rule("ICEBERG-PART-017", "ICEBERG-PART-016")
@pytest.mark.parametrize("text,t", [("identity", T.STRING), ("bucket[4]", T.LONG), ("truncate[2]", T.STRING), ("year", T.DATE), ("month", T.TIMESTAMP), ("day", T.TIMESTAMPTZ), ("hour", T.TIMESTAMP_NS), ("void", T.DOUBLE)])
def test_null_in_null_out(text, t):
    assert X.parse_transform(text).apply(None, t) is None
    assert X.VoidTransform().apply(5 if t != T.STRING else "x", t) is None


@pytest.mark.rule("ICEBERG-PART-037", "ICEBERG-PART-005", "ICEBERG-PART-006")
def test_parse_and_print_transform_strings():
    for s in ["identity", "bucket[16]", "truncate[20]", "year", "month", "day", "hour", "void"]:
        assert str(X.parse_transform(s)) == s
    assert X.parse_transform("bucket[ 16 ]") == X.BucketTransform(num_buckets=16)
    u = X.parse_transform("zorder[3]")
    assert isinstance(u, X.UnknownTransform) and not u.is_known and str(u) == "zorder[3]"
    with pytest.raises(InvalidTable, match="positive"):
        X.parse_transform("bucket[0]")
    with pytest.raises(InvalidTable, match="JSON string"):
        X.parse_transform(16)
    with pytest.raises(Unsupported) as e:
        u.apply(1, T.INT)
    assert e.value.rule == "ICEBERG-PART-007"


@pytest.mark.rule("ICEBERG-PART-018", "ICEBERG-PART-025", "ICEBERG-PART-014")
@pytest.mark.parametrize(
    "text,t,arr",
    [
        ("bucket[16]", T.INT, pa.array([34, None, -7], pa.int32())),
        ("bucket[16]", T.STRING, pa.array(["iceberg", None, "€"])),
        ("bucket[5]", T.UUID, pa.array([bytes(range(16)), None], pa.binary(16))),
        ("truncate[10]", T.LONG, pa.array([-1, 1, None, 25], pa.int64())),
        ("truncate[50]", T.DecimalType(precision=9, scale=2), pa.array([Decimal("10.65"), None], pa.decimal128(9, 2))),
        ("truncate[3]", T.STRING, pa.array(["iceberg", "a", None])),
        ("day", T.TIMESTAMP, pa.array([-1, 0, None], pa.timestamp("us"))),
        ("hour", T.TIMESTAMPTZ_NS, pa.array([-1, 3_600_000_000_000, None], pa.timestamp("ns", tz="UTC"))),
        ("month", T.DATE, pa.array([-1, 0, None], pa.date32())),
        ("year", T.TIMESTAMP, pa.chunked_array([pa.array([0, None], pa.timestamp("us"))])),
        ("identity", T.DATE, pa.array([3, None], pa.date32())),
        ("void", T.LONG, pa.array([3, None], pa.int64())),
    ],
)
def test_arrow_application_matches_scalar_application(text, t, arr):
    tr = X.parse_transform(text)
    out = tr.apply_arrow(arr, t)
    assert out.type == T.to_arrow_type(tr.result_type(t))
    scalar = [tr.apply(v, t) for v in X.arrow_to_internal(arr, t)]
    assert X.arrow_to_internal(out, tr.result_type(t)) == scalar


@pytest.mark.rule("ICEBERG-PART-013")
def test_arrow_column_of_the_wrong_type_is_invalid_table():
    with pytest.raises(InvalidTable, match="cannot hold"):
        X.DayTransform().apply_arrow(pa.array(["x"]), T.TIMESTAMP)


def test_order_preservation_and_satisfaction():
    assert X.IdentityTransform().preserves_order and X.TruncateTransform(width=2).preserves_order
    assert not X.BucketTransform(num_buckets=2).preserves_order and not X.VoidTransform().preserves_order
    assert X.HourTransform().satisfies_order_of(X.DayTransform())
    assert X.DayTransform().satisfies_order_of(X.YearTransform())
    assert not X.YearTransform().satisfies_order_of(X.MonthTransform())
    assert X.IdentityTransform().satisfies_order_of(X.DayTransform())
    assert not X.IdentityTransform().satisfies_order_of(X.BucketTransform(num_buckets=2))
    assert X.TruncateTransform(width=5).satisfies_order_of(X.TruncateTransform(width=3), T.STRING)
    assert not X.TruncateTransform(width=3).satisfies_order_of(X.TruncateTransform(width=5), T.STRING)
    assert X.TruncateTransform(width=5).satisfies_order_of(X.TruncateTransform(width=10), T.INT)
    assert not X.TruncateTransform(width=10).satisfies_order_of(X.TruncateTransform(width=5), T.INT)


def test_human_strings():
    assert X.human_string(-1, X.DayTransform(), T.DATE) == "1969-12-31"
    assert X.human_string(-1, X.MonthTransform(), T.DATE) == "1969-12"
    assert X.human_string(-1, X.HourTransform(), T.TIMESTAMP) == "1969-12-31-23"
    assert X.human_string(47, X.YearTransform(), T.DATE) == "2017"
    assert X.human_string(None, X.YearTransform(), T.DATE) == "null"
