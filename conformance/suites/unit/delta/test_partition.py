"""Partition Value Serialization (reference_impl.delta.partition)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from reference_impl.delta import partition as P
from reference_impl.delta import schema as S
from reference_impl.errors import InvalidTable

UTC = dt.timezone.utc


def dec(p, s):
    return S.DecimalType(precision=p, scale=s)


@pytest.mark.rule("DELTA-PART-001")
@pytest.mark.parametrize("dtype", [S.STRING, S.INTEGER, S.LONG, S.DOUBLE, S.BOOLEAN, S.DATE, S.TIMESTAMP, S.TIMESTAMP_NTZ, S.BINARY, dec(10, 2)])
def test_empty_string_and_null_are_null_for_every_type(dtype):
    assert P.parse_partition_value("", dtype) is None
    assert P.parse_partition_value(None, dtype) is None
    assert P.serialize_partition_value(None, dtype) is None


@pytest.mark.rule("DELTA-PART-001", "DELTA-PART-002", "DELTA-PART-003", "DELTA-PART-007", "DELTA-PART-008")
@pytest.mark.parametrize(
    "value,dtype,text",
    [
        ("hello wörld", S.STRING, "hello wörld"),
        (-128, S.BYTE, "-128"),
        (32767, S.SHORT, "32767"),
        (-2147483648, S.INTEGER, "-2147483648"),
        (9223372036854775807, S.LONG, "9223372036854775807"),
        (1.5, S.DOUBLE, "1.5"),
        (0.1, S.FLOAT, "0.1"),
        (Decimal("1.5"), dec(10, 2), "1.50"),
        (Decimal("-0.01"), dec(3, 2), "-0.01"),
        (Decimal("12345678901234567890123456789012345678"), dec(38, 0), "12345678901234567890123456789012345678"),
        (True, S.BOOLEAN, "true"),
        (False, S.BOOLEAN, "false"),
        (dt.date(1970, 1, 1), S.DATE, "1970-01-01"),
        (dt.date(2024, 2, 29), S.DATE, "2024-02-29"),
        (dt.datetime(1970, 1, 1, 0, 0, 0, 123456, tzinfo=UTC), S.TIMESTAMP, "1970-01-01T00:00:00.123456Z"),
        (dt.datetime(2021, 6, 1, 12, 0), S.TIMESTAMP_NTZ, "2021-06-01 12:00:00"),
        (dt.datetime(2021, 6, 1, 12, 0, 0, 5), S.TIMESTAMP_NTZ, "2021-06-01 12:00:00.000005"),
        (b"\x01\x02\x03", S.BINARY, "\u0001\u0002\u0003"),
    ],
)
def test_canonical_text_and_round_trip(value, dtype, text):
    assert P.serialize_partition_value(value, dtype) == text
    back = P.parse_partition_value(text, dtype)
    assert back == value
    if isinstance(value, Decimal):
        assert str(back) == text  # scale kept


@pytest.mark.rule("DELTA-PART-002")
@pytest.mark.parametrize("v,text", [(float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity")])
def test_non_finite_doubles_use_java_spelling(v, text):
    assert P.serialize_partition_value(v, S.DOUBLE) == text
    back = P.parse_partition_value(text, S.DOUBLE)
    assert (back != back) if v != v else back == v


@pytest.mark.rule("DELTA-PART-002")
@pytest.mark.parametrize("text,dtype", [("1e3", S.INTEGER), ("1.0", S.LONG), ("0x10", S.INTEGER), ("128", S.BYTE), ("abc", S.DOUBLE), ("1.234", dec(5, 2)), ("1234.5", dec(4, 1))])
def test_bad_numbers_are_invalid(text, dtype):
    with pytest.raises(InvalidTable) as e:
        P.parse_partition_value(text, dtype)
    assert e.value.rule == "DELTA-PART-002"


@pytest.mark.rule("DELTA-PART-002")
def test_decimal_accepts_java_bigdecimal_exponent_form():
    # Java's BigDecimal.toString writes small values as 1E-10.
    assert P.parse_partition_value("1E-10", dec(12, 10)) == Decimal("1E-10")
    assert P.parse_partition_value("2", dec(5, 2)) == Decimal("2.00")


@pytest.mark.rule("DELTA-PART-007")
@pytest.mark.parametrize("text", ["TRUE", "1", "True", "yes"])
def test_boolean_only_lowercase_words(text):
    with pytest.raises(InvalidTable) as e:
        P.parse_partition_value(text, S.BOOLEAN)
    assert '"true" or "false"' in str(e.value)


@pytest.mark.rule("DELTA-PART-003")
@pytest.mark.parametrize("text", ["2021-13-01", "2021/01/01", "01-01-2021", "2021-02-30"])
def test_bad_dates_are_invalid(text):
    with pytest.raises(InvalidTable) as e:
        P.parse_partition_value(text, S.DATE)
    assert e.value.rule == "DELTA-PART-003"


@pytest.mark.rule("DELTA-PART-004", "DELTA-PART-005")
@pytest.mark.parametrize(
    "text,expected",
    [
        ("1970-01-01 00:00:00", dt.datetime(1970, 1, 1, tzinfo=UTC)),
        ("1970-01-01 00:00:00.123456", dt.datetime(1970, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)),
        ("1970-01-01 00:00:00.1", dt.datetime(1970, 1, 1, 0, 0, 0, 100000, tzinfo=UTC)),
        ("1970-01-01T00:00:00.123456Z", dt.datetime(1970, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)),
        ("1970-01-01T00:00:00Z", dt.datetime(1970, 1, 1, tzinfo=UTC)),
        ("2021-06-01T02:00:00.000+02:00", dt.datetime(2021, 6, 1, 0, 0, tzinfo=UTC)),
        ("2021-06-01 12:30:45.123456789", dt.datetime(2021, 6, 1, 12, 30, 45, 123456, tzinfo=UTC)),
    ],
)
def test_every_timestamp_form_readers_must_accept(text, expected):
    got = P.parse_partition_value(text, S.TIMESTAMP)
    assert got == expected and got.tzinfo is not None


@pytest.mark.rule("DELTA-PART-005")
def test_writers_emit_utc_iso_8601_from_any_zone():
    paris = dt.timezone(dt.timedelta(hours=2))
    assert P.serialize_partition_value(dt.datetime(2021, 6, 1, 2, 0, tzinfo=paris), S.TIMESTAMP) == "2021-06-01T00:00:00.000000Z"
    assert P.serialize_partition_value(0, S.TIMESTAMP) == "1970-01-01T00:00:00.000000Z"


@pytest.mark.rule("DELTA-PART-006")
def test_timestamp_ntz_forms_and_zone_rejected():
    assert P.parse_partition_value("2021-06-01 12:00:00", S.TIMESTAMP_NTZ) == dt.datetime(2021, 6, 1, 12)
    assert P.parse_partition_value("2021-06-01 12:00:00.5", S.TIMESTAMP_NTZ) == dt.datetime(2021, 6, 1, 12, 0, 0, 500000)
    with pytest.raises(InvalidTable) as e:
        P.parse_partition_value("2021-06-01T12:00:00Z", S.TIMESTAMP_NTZ)
    assert e.value.rule == "DELTA-PART-006" and "time zone" in str(e.value)


@pytest.mark.rule("DELTA-PART-004")
@pytest.mark.parametrize("text", ["1970-01-01", "yesterday", "1970-01-01 25:00:00", "1970-01-01T00:00:00.Z"])
def test_bad_timestamps_are_invalid(text):
    with pytest.raises(InvalidTable):
        P.parse_partition_value(text, S.TIMESTAMP)


@pytest.mark.rule("DELTA-PART-008")
def test_binary_reads_spark_utf8_and_delta_rs_literal_escapes():
    assert P.parse_partition_value("\u0001\u0002", S.BINARY) == b"\x01\x02"  # JSON "\u0001\u0002"
    assert P.parse_partition_value("\\u0001\\u0002", S.BINARY) == b"\x01\x02"  # delta-rs text
    assert P.parse_partition_value("é", S.BINARY) == "é".encode()


@pytest.mark.rule("DELTA-PART-008")
@pytest.mark.parametrize("raw", [b"\xff\x00\x80", b"\\u0041", b"", b"plain"])
def test_binary_round_trips_any_bytes(raw):
    text = P.serialize_partition_value(raw, S.BINARY)
    assert P.parse_partition_value(text, S.BINARY) == (raw if raw else None)


def test_complex_types_cannot_be_partition_columns():
    with pytest.raises(InvalidTable):
        P.parse_partition_value("x", S.ArrayType(element_type=S.INTEGER))
    with pytest.raises(InvalidTable):
        P.serialize_partition_value(1, S.VARIANT)


@pytest.mark.parametrize("value,dtype", [(10**18, S.TIMESTAMP), ("1", S.INTEGER), (True, S.INTEGER), (1, S.STRING), (Decimal("1.234"), dec(5, 2)), (300, S.BYTE), (dt.datetime(2020, 1, 1), S.DATE)])
def test_serialize_rejects_values_of_the_wrong_kind(value, dtype):
    with pytest.raises(InvalidTable):
        P.serialize_partition_value(value, dtype)


@pytest.mark.rule("DELTA-PART-004")
def test_partition_values_to_arrow_broadcast_and_per_row():
    a = P.partition_values_to_arrow(["2021-01-01T00:00:00.000001Z"], S.TIMESTAMP, 3)
    assert a.type == pa.timestamp("us", tz="UTC") and len(a) == 3 and a[2].value == 1609459200000001
    nulls = P.partition_values_to_arrow([""], S.INTEGER, 2)
    assert nulls.type == pa.int32() and nulls.null_count == 2
    rows = P.partition_values_to_arrow(["1.50", None, "2"], dec(5, 2), 3)
    assert rows.to_pylist() == [Decimal("1.50"), None, Decimal("2.00")]
    with pytest.raises(InvalidTable):
        P.partition_values_to_arrow(["1", "2"], S.INTEGER, 3)


def test_hive_escaping_matches_spark_set():
    assert P.escape_partition_path_component("a b/c=d%e:f") == "a b%2Fc%3Dd%25e%3Af"
    assert P.escape_partition_path_component('x"#\'*?\\{[]^\x01\x7f') == "x%22%23%27%2A%3F%5C%7B%5B%5D%5E%01%7F"
    assert P.escape_partition_path_component("héllo-_.~") == "héllo-_.~"  # non-ASCII and safe marks stay


@pytest.mark.parametrize("s", ["a b/c=d%e:f", "100%", "%%41", "2021-01-01T00:00:00.000000Z", "é/ü", "\x01\x1f"])
def test_hive_unescape_inverts_escape(s):
    assert P.unescape_partition_path_component(P.escape_partition_path_component(s)) == s


def test_unescape_decodes_utf8_sequences_and_leaves_stray_percent():
    assert P.unescape_partition_path_component("%C3%A9t%C3%A9") == "été"
    assert P.unescape_partition_path_component("50%") == "50%"
    assert P.unescape_partition_path_component("%zz") == "%zz"


@pytest.mark.rule("DELTA-PART-001")
def test_partition_directory_and_its_inverse():
    d = P.partition_directory([("a", "1"), ("b", None), ("c", ""), ("d=x", "2021-01-01 00:00:00")])
    assert d == "a=1/b=__HIVE_DEFAULT_PARTITION__/c=__HIVE_DEFAULT_PARTITION__/d%3Dx=2021-01-01 00%3A00%3A00"
    assert P.parse_partition_directory(d + "/part-0.parquet") == [("a", "1"), ("b", None), ("c", None), ("d=x", "2021-01-01 00:00:00")]
