"""Appendix D single-value serialization (reference_impl.iceberg.values)."""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.roundtrip import assert_roundtrip, nan_safe_equal
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V

DEC = T.DecimalType(precision=9, scale=2)
UUID_TEXT = "f79c3e09-677c-4bbd-a479-3f349cb785e7"


@pytest.mark.rule("ICEBERG-SERDE-009", "ICEBERG-SERDE-010", "ICEBERG-SERDE-011", "ICEBERG-SERDE-012", "ICEBERG-SERDE-013", "ICEBERG-SERDE-014")
@pytest.mark.parametrize(
    "value,t,hexbytes",
    [
        (True, T.BOOLEAN, "01"),
        (False, T.BOOLEAN, "00"),
        (34, T.INT, "22000000"),
        (-1, T.INT, "ffffffff"),
        (34, T.LONG, "2200000000000000"),
        (1.0, T.FLOAT, "0000803f"),
        (1.0, T.DOUBLE, "000000000000f03f"),
        (dt.date(1970, 1, 2), T.DATE, "01000000"),
        (dt.date(1969, 12, 31), T.DATE, "ffffffff"),
        (1, T.TIME, "0100000000000000"),
        (1, T.TIMESTAMP, "0100000000000000"),
        (1, T.TIMESTAMPTZ_NS, "0100000000000000"),
        ("iceberg", T.STRING, "69636562657267"),
        ("€", T.STRING, "e282ac"),
        (UUID_TEXT, T.UUID, "f79c3e09677c4bbda4793f349cb785e7"),
        (b"\x00\x01\x02\x03", T.FixedType(length=4), "00010203"),
        (b"", T.BINARY, ""),
        (Decimal("14.20"), DEC, "058c"),
        (Decimal("0.00"), DEC, "00"),
        (Decimal("-0.01"), DEC, "ff"),
        (Decimal("1.28"), DEC, "0080"),
        (Decimal("-1.28"), DEC, "80"),
        (Decimal("-1.29"), DEC, "ff7f"),
    ],
)
def test_binary_single_values(value, t, hexbytes):
    b = V.to_bytes(value, t)
    assert b.hex() == hexbytes
    assert V.from_bytes(b, t) == V.to_internal(value, t)


@pytest.mark.rule("ICEBERG-SERDE-009")
def test_boolean_true_is_any_nonzero_byte():
    assert V.from_bytes(b"\x02", T.BOOLEAN) is True


@pytest.mark.rule("ICEBERG-SERDE-010", "ICEBERG-SERDE-013")
@pytest.mark.parametrize("data,t", [(b"\x01" * 8, T.INT), (b"\x01" * 4, T.TIMESTAMPTZ), (b"\x00\x00", T.BOOLEAN), (b"\x01" * 15, T.UUID), (b"", DEC), (b"\x01\x02", T.FixedType(length=3))])
def test_wrong_widths_are_invalid_table(data, t):
    with pytest.raises(InvalidTable, match="bytes|empty"):
        V.from_bytes(data, t)


@pytest.mark.rule("ICEBERG-SERDE-015")
@pytest.mark.parametrize("t", [T.UNKNOWN, T.VARIANT, T.StructType(fields=()), T.ListType(element_id=1, element=T.INT)])
def test_types_without_binary_form(t):
    with pytest.raises(Unsupported, match="no binary single-value"):
        V.to_bytes(1, t)
    with pytest.raises(Unsupported):
        V.from_bytes(b"\x00", t)


@pytest.mark.rule("ICEBERG-EVOL-007", "ICEBERG-EVOL-005")
def test_bounds_written_before_promotion_are_decoded_by_length():
    assert V.bound_from_bytes(V.to_bytes(-5, T.INT), T.LONG) == -5
    assert V.bound_from_bytes(V.to_bytes(1.5, T.FLOAT), T.DOUBLE) == 1.5
    day = V.to_bytes(dt.date(1970, 1, 2), T.DATE)
    assert V.bound_from_bytes(day, T.TIMESTAMP) == 86_400_000_000
    assert V.bound_from_bytes(day, T.TIMESTAMP_NS) == 86_400_000_000_000
    assert V.bound_from_bytes(V.to_bytes(7, T.LONG), T.LONG) == 7
    far = V.to_bytes(dt.date(3000, 1, 1), T.DATE)  # beyond 2262-04-11, the last timestamp_ns
    with pytest.raises(InvalidTable) as e:
        V.bound_from_bytes(far, T.TIMESTAMP_NS)
    assert e.value.rule == "ICEBERG-EVOL-005"
    assert V.bound_from_bytes(far, T.TIMESTAMP) == V.to_internal(dt.datetime(3000, 1, 1), T.TIMESTAMP)
    narrow = V.to_bytes(Decimal("14.20"), T.DecimalType(precision=4, scale=2))
    assert V.bound_from_bytes(narrow, T.DecimalType(precision=20, scale=2)) == Decimal("14.20")


@pytest.mark.rule("ICEBERG-SERDE-016")
@pytest.mark.parametrize(
    "p,n",
    [(V.GeoPoint(x=1.0, y=2.0), 16), (V.GeoPoint(x=1.0, y=2.0, z=3.0), 24), (V.GeoPoint(x=1.0, y=2.0, m=4.0), 32), (V.GeoPoint(x=-180.0, y=-90.0, z=0.0, m=1.0), 32)],
)
def test_geo_bound_points(p, n):
    b = V.geo_bound_to_bytes(p)
    assert len(b) == n
    assert V.geo_bound_from_bytes(b) == p
    if p.m is not None and p.z is None:
        assert math.isnan(__import__("struct").unpack("<4d", b)[2])


@pytest.mark.rule("ICEBERG-SERDE-016")
def test_geo_bound_bad_length():
    with pytest.raises(InvalidTable, match="16, 24 or 32"):
        V.geo_bound_from_bytes(b"\x00" * 8)


# JSON single values: the examples of the spec's Appendix D table.
@pytest.mark.rule("ICEBERG-SERDE-018", "ICEBERG-SERDE-019", "ICEBERG-SERDE-020", "ICEBERG-SERDE-021", "ICEBERG-SERDE-022")
@pytest.mark.parametrize(
    "t,text",
    [
        (T.BOOLEAN, True),
        (T.INT, 34),
        (T.LONG, 34),
        (T.FLOAT, 1.0),
        (T.DOUBLE, 1.0),
        (T.DecimalType(precision=4, scale=2), "14.20"),
        (T.DecimalType(precision=1, scale=-20), "2E+20"),
        (T.DecimalType(precision=3, scale=-2), "123E+2"),
        (T.DecimalType(precision=5, scale=0), "-12345"),
        (T.DecimalType(precision=3, scale=3), "-0.005"),
        (T.DATE, "2017-11-16"),
        (T.DATE, "1969-12-31"),
        (T.TIME, "22:31:08.123456"),
        (T.TIMESTAMP, "2017-11-16T22:31:08.123456"),
        (T.TIMESTAMP, "1969-12-31T23:59:59.999999"),
        (T.TIMESTAMPTZ, "2017-11-16T22:31:08.123456+00:00"),
        (T.TIMESTAMP_NS, "2017-11-16T22:31:08.123456789"),
        (T.TIMESTAMPTZ_NS, "2017-11-16T22:31:08.123456789+00:00"),
        (T.TIMESTAMP_NS, "1969-12-31T23:59:59.999999999"),
        (T.STRING, "iceberg"),
        (T.UUID, UUID_TEXT),
        (T.FixedType(length=4), "000102ff"),
        (T.BINARY, "000102ff"),
    ],
)
def test_json_single_values_round_trip_canonically(t, text):
    assert_roundtrip(text, lambda s: V.from_json(s, t), lambda v: V.to_json(v, t), label=str(t))


@pytest.mark.rule("ICEBERG-SERDE-020", "ICEBERG-TYPE-005")
@pytest.mark.parametrize("days,text", [(-719162, "0001-01-01"), (-719163, "0000-12-31"), (-719528, "0000-01-01"), (-719893, "-0001-01-01"), (2932897, "+10000-01-01"), (0, "1970-01-01"), (-1, "1969-12-31"), (11016, "2000-02-29")])
def test_dates_outside_pythons_range_use_java_spelling(days, text):
    assert V.to_json(days, T.DATE) == text
    assert V.from_json(text, T.DATE) == days
    assert V.days_from_civil(*V.civil_from_days(days)) == days


@pytest.mark.rule("ICEBERG-SERDE-020")
@pytest.mark.parametrize("text", ["2017-02-29", "2017-13-01", "2017-00-10", "17-01-01", "2017-1-1"])
def test_bad_dates(text):
    with pytest.raises(InvalidTable) as e:
        V.from_json(text, T.DATE)
    assert e.value.rule == "ICEBERG-SERDE-020"


@pytest.mark.rule("ICEBERG-SERDE-019")
def test_negative_scale_decimal_json_accepts_the_java_spelling():
    # We write the exponent as -scale (the spec's wording); Java's BigDecimal.toString (and
    # PyIceberg) write "1.23E+4" for the same value. Both carry scale -2, so both are read.
    t = T.DecimalType(precision=3, scale=-2)
    assert V.to_json(Decimal("12300"), t) == "123E+2"
    assert V.from_json("1.23E+4", t) == V.from_json("123E+2", t) == Decimal("123E+2")
    with pytest.raises(InvalidTable, match="scale"):
        V.from_json("12300", t)


@pytest.mark.rule("ICEBERG-SERDE-021")
def test_json_timestamp_values():
    assert V.from_json("2017-11-16T22:31:08.123456", T.TIMESTAMP) == V.to_internal(dt.datetime(2017, 11, 16, 22, 31, 8, 123456), T.TIMESTAMP)
    assert V.to_json(0, T.TIMESTAMP) == "1970-01-01T00:00:00.000000"
    assert V.to_json(-1, T.TIMESTAMP_NS) == "1969-12-31T23:59:59.999999999"
    assert V.from_json("2017-11-16T22:31:08", T.TIMESTAMP) == V.from_json("2017-11-16T22:31:08.000000", T.TIMESTAMP)


@pytest.mark.rule("ICEBERG-SERDE-021")
@pytest.mark.parametrize(
    "t,text",
    [
        (T.TIMESTAMPTZ, "2017-11-16T22:31:08.123456Z"),
        (T.TIMESTAMPTZ, "2017-11-16T22:31:08.123456+01:00"),
        (T.TIMESTAMPTZ, "2017-11-16T22:31:08.123456"),
        (T.TIMESTAMP, "2017-11-16T22:31:08.123456+00:00"),
        (T.TIMESTAMP, "2017-11-16T22:31:08.123456789"),
        (T.TIMESTAMP_NS, "2017-11-16 22:31:08"),
        (T.TIMESTAMP, "2017-02-30T00:00:00"),
    ],
)
def test_json_timestamps_with_wrong_offsets_or_precision_are_rejected(t, text):
    with pytest.raises(InvalidTable) as e:
        V.from_json(text, t)
    assert e.value.rule == "ICEBERG-SERDE-021"


@pytest.mark.rule("ICEBERG-SERDE-019", "ICEBERG-SERDE-018", "ICEBERG-SERDE-022")
@pytest.mark.parametrize(
    "obj,t,fragment",
    [
        ("14.2", T.DecimalType(precision=4, scale=2), "scale"),
        (14.2, T.DecimalType(precision=4, scale=2), "must be a string"),
        ("1234.56", T.DecimalType(precision=4, scale=2), "digits"),
        ("NaN", T.DecimalType(precision=4, scale=2), "scale"),
        ("x", T.DecimalType(precision=4, scale=2), "bad decimal"),
        (True, T.INT, "integer"),
        (2**31, T.INT, "out of range"),
        ("1", T.LONG, "integer"),
        ("zz", T.BINARY, "hexadecimal"),
        ("0001", T.FixedType(length=3), "bytes"),
        ("not-a-uuid", T.UUID, "uuid"),
        (1, T.STRING, "string"),
        ("24:00:00", T.TIME, "range"),
    ],
)
def test_bad_json_values_are_invalid_table(obj, t, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        V.from_json(obj, t)


@pytest.mark.rule("ICEBERG-SERDE-022")
def test_uuid_json_is_lowercase():
    assert V.to_json(UUID_TEXT.upper(), T.UUID) == UUID_TEXT
    assert V.to_json(b"\xAB", T.BINARY) == "ab"


@pytest.mark.rule("ICEBERG-SERDE-023")
def test_nested_json_values():
    st_t = T.StructType(fields=(T.NestedField(id=1, name="a", type=T.INT), T.NestedField(id=2, name="b", type=T.STRING)))
    assert_roundtrip({"1": 1, "2": "bar"}, lambda o: V.from_json(o, st_t), lambda v: V.to_json(v, st_t))
    lt = T.ListType(element_id=3, element=T.INT)
    assert_roundtrip([1, 2, 3], lambda o: V.from_json(o, lt), lambda v: V.to_json(v, lt))
    mt = T.MapType(key_id=4, key=T.STRING, value_id=5, value=T.INT)
    assert_roundtrip({"keys": ["a", "b"], "values": [1, 2]}, lambda o: V.from_json(o, mt), lambda v: V.to_json(v, mt))
    with pytest.raises(InvalidTable, match="different lengths"):
        V.from_json({"keys": ["a"], "values": []}, mt)
    with pytest.raises(InvalidTable, match="no field id"):
        V.from_json({"9": 1}, st_t)


@pytest.mark.rule("ICEBERG-SERDE-024", "ICEBERG-TYPE-018")
def test_geo_json_is_wkt_and_binary_is_wkb():
    wkb = V.from_json("POINT (30 10)", T.GeometryType())
    assert wkb == bytes.fromhex("01" "01000000") + struct.pack("<2d", 30.0, 10.0)
    assert V.to_bytes(wkb, T.GeographyType()) == wkb  # the binary single value is the WKB itself
    assert V.to_json(wkb, T.GeometryType()) == "POINT (30 10)"


@pytest.mark.rule("ICEBERG-TYPE-003", "ICEBERG-TYPE-008", "ICEBERG-TYPE-009", "ICEBERG-TYPE-011", "ICEBERG-TYPE-007")
def test_to_internal_edges():
    assert V.to_internal(2**31 - 1, T.INT) == 2**31 - 1
    with pytest.raises(InvalidTable, match="out of range"):
        V.to_internal(2**63, T.LONG)
    with pytest.raises(InvalidTable, match="zone-aware"):
        V.to_internal(dt.datetime(2020, 1, 1), T.TIMESTAMPTZ)
    with pytest.raises(InvalidTable, match="zone-less"):
        V.to_internal(dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), T.TIMESTAMP)
    # TYPE-007: an instant with an offset is stored as UTC.
    pst = dt.timezone(dt.timedelta(hours=-8))
    assert V.to_internal(dt.datetime(2017, 11, 16, 17, 10, 34, tzinfo=pst), T.TIMESTAMPTZ) == V.from_json("2017-11-17T01:10:34.000000+00:00", T.TIMESTAMPTZ)
    assert V.to_internal(dt.datetime(1970, 1, 1, 0, 0, 0, 1), T.TIMESTAMP_NS) == 1000
    with pytest.raises(InvalidTable, match="surrogate") as e:
        V.to_bytes("a\ud800", T.STRING)
    assert e.value.rule == "ICEBERG-TYPE-009"
    with pytest.raises(InvalidTable, match="UTF-8"):
        V.from_bytes(b"\xff", T.STRING)
    with pytest.raises(InvalidTable, match="7 bytes"):
        V.to_internal(b"\x00" * 7, T.FixedType(length=8))


_PRIMS = [T.BOOLEAN, T.INT, T.LONG, T.FLOAT, T.DOUBLE, T.DATE, T.TIME, T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMP_NS, T.TIMESTAMPTZ_NS, T.STRING, T.UUID, T.BINARY, T.FixedType(length=3), T.DecimalType(precision=38, scale=10), T.DecimalType(precision=5, scale=-3)]


def _values_for(t):
    if t == T.BOOLEAN:
        return st.booleans()
    if t in (T.INT, T.DATE):
        return st.integers(V.INT_MIN, V.INT_MAX) if t == T.INT else st.integers(-700_000, 2_900_000)
    if t == T.TIME:
        return st.integers(0, V.MICROS_PER_DAY - 1)
    if t in T.TIMESTAMP_TYPES:
        return st.integers(-(2**62), 2**62) if t in T.NANO_TYPES else st.integers(-(60 * 10**15), 250 * 10**15)
    if t == T.LONG:
        return st.integers(V.LONG_MIN, V.LONG_MAX)
    if t == T.FLOAT:
        return st.floats(width=32, allow_nan=False, allow_infinity=False)
    if t == T.DOUBLE:
        return st.floats(allow_nan=False, allow_infinity=False)
    if t == T.STRING:
        return st.text()
    if t == T.UUID:
        return st.uuids()
    if t == T.BINARY:
        return st.binary()
    if isinstance(t, T.FixedType):
        return st.binary(min_size=t.length, max_size=t.length)
    return st.integers(-(10**t.precision) + 1, 10**t.precision - 1).map(lambda n: Decimal(n).scaleb(-t.scale, context=V._DEC))


@pytest.mark.rule("ICEBERG-SERDE-010", "ICEBERG-SERDE-014", "ICEBERG-SERDE-018", "ICEBERG-SERDE-019", "ICEBERG-SERDE-020", "ICEBERG-SERDE-021")
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_property_binary_and_json_round_trips(data):
    t = data.draw(st.sampled_from(_PRIMS))
    v = data.draw(_values_for(t))
    assert_roundtrip(v, lambda x: V.to_bytes(x, t), lambda b: V.from_bytes(b, t), normalize=lambda x: V.to_internal(x, t), equal=nan_safe_equal, label=str(t))
    j = V.to_json(v, t)
    assert json.loads(json.dumps(j)) == j
    assert nan_safe_equal(V.from_json(j, t), V.to_internal(v, t))
