"""Partition transforms (Appendix B hashing, truncate, time transforms) and single-value serialization (Appendix D).

Bucket hashes equal the spec's Appendix B vectors and land in [0, N); truncate is monotone and never
above its input, with negative numbers rounded towards negative infinity; year/month/day/hour are
monotone and agree with each other; every primitive's binary and JSON single values round-trip.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance.formats.iceberg import strategies as si
from conformance.suites.property.delta._support import examples
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V

UTC = dt.timezone.utc
PST = dt.timezone(dt.timedelta(hours=-8))

# Appendix B test values, as the spec's table states them.
VECTORS = [
    (T.INT, 34, 2017239379),
    (T.LONG, 34, 2017239379),
    (T.DecimalType(precision=4, scale=2), Decimal("14.20"), -500754589),
    (T.DATE, dt.date(2017, 11, 16), -653330422),
    (T.TIME, dt.time(22, 31, 8), -662762989),
    (T.TIMESTAMP, dt.datetime(2017, 11, 16, 22, 31, 8), -2047944441),
    (T.TIMESTAMP, dt.datetime(2017, 11, 16, 22, 31, 8, 1), -1207196810),
    (T.TIMESTAMPTZ, dt.datetime(2017, 11, 16, 14, 31, 8, tzinfo=PST), -2047944441),
    (T.TIMESTAMPTZ, dt.datetime(2017, 11, 16, 14, 31, 8, 1, tzinfo=PST), -1207196810),
    (T.TIMESTAMP_NS, 1510871468000000000, -2047944441),
    (T.TIMESTAMP_NS, 1510871468000001001, -1207196810),
    (T.TIMESTAMPTZ_NS, 1510871468000001001, -1207196810),
    (T.STRING, "iceberg", 1210000089),
    (T.UUID, uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340),
    (T.FixedType(length=4), bytes([0, 1, 2, 3]), -188683207),
    (T.BINARY, bytes([0, 1, 2, 3]), -188683207),
    # not valid bucket sources, but hashed like this if ever needed
    (T.BOOLEAN, True, 1392991556),
    (T.FLOAT, 1.0, -142385009), (T.FLOAT, 0.0, 1669671676), (T.FLOAT, -0.0, 1669671676),
    (T.DOUBLE, 1.0, -142385009), (T.DOUBLE, 0.0, 1669671676), (T.DOUBLE, -0.0, 1669671676),
]
BUCKET_SOURCES = [T.INT, T.LONG, T.DATE, T.TIME, T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMP_NS, T.TIMESTAMPTZ_NS, T.STRING,
                  T.UUID, T.BINARY, T.DecimalType(precision=10, scale=2), T.FixedType(length=5)]
TEMPORAL = [T.DATE, T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMP_NS, T.TIMESTAMPTZ_NS]
ALL_PRIMITIVES = [T.BOOLEAN, T.INT, T.LONG, T.FLOAT, T.DOUBLE, T.DATE, T.TIME, T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMP_NS,
                  T.TIMESTAMPTZ_NS, T.STRING, T.UUID, T.BINARY, T.FixedType(length=3), T.DecimalType(precision=9, scale=3),
                  T.DecimalType(precision=38, scale=0), T.DecimalType(precision=20, scale=20)]
WIDTH = {"boolean": 1, "int": 4, "date": 4, "float": 4, "long": 8, "time": 8, "double": 8, "timestamp": 8, "timestamptz": 8,
         "timestamp_ns": 8, "timestamptz_ns": 8, "uuid": 16}


def _ids(types):
    return [str(t) for t in types]


@pytest.mark.rule("ICEBERG-PART-018", "ICEBERG-PART-019", "ICEBERG-PART-020", "ICEBERG-PART-021", "ICEBERG-PART-022",
                  "ICEBERG-PART-023", "ICEBERG-PART-024")
@pytest.mark.parametrize("t,value,expected", VECTORS, ids=[f"{t}={v}" for t, v, _ in VECTORS])
def test_appendix_b_vectors(t, value, expected):
    """Each of Appendix B's test values hashes to the spec's number."""
    assert X.hash_value(value, t) == expected


@pytest.mark.rule("ICEBERG-PART-011", "ICEBERG-PART-018", "ICEBERG-PART-017")
@pytest.mark.parametrize("t", BUCKET_SOURCES, ids=_ids(BUCKET_SOURCES))
@examples(0.5)
@given(data=st.data(), n=st.one_of(st.sampled_from([1, 2, 16, 2**31 - 1]), st.integers(1, 2**31 - 1)))
def test_bucket_is_in_range(t, data, n):
    """bucket[N] of any value is (hash & INT_MAX) mod N, in [0, N); null stays null."""
    v = data.draw(si.values_for_type(t), label="value")
    b = X.bucket(v, t, n)
    assert 0 <= b < n and b == (X.hash_value(v, t) & 0x7FFFFFFF) % n
    assert X.bucket(None, t, n) is None


@pytest.mark.rule("ICEBERG-PART-019", "ICEBERG-EVOL-007")
@examples(0.5)
@given(si.values_for_type(T.INT), st.integers(1, 1000))
def test_int_and_long_bucket_alike(v, n):
    """Promoting int to long never moves a row to another bucket (ints are hashed as longs)."""
    assert X.bucket(v, T.INT, n) == X.bucket(v, T.LONG, n)


@pytest.mark.rule("ICEBERG-PART-020")
@examples(0.5)
@given(st.integers(-(10**18), 10**18), st.integers(0, 18))
def test_decimal_hash_ignores_scale(unscaled, scale):
    """A decimal hashes its unscaled value's minimal two's-complement bytes, whatever its scale."""
    a = Decimal(unscaled).scaleb(-scale)
    b = Decimal(unscaled).scaleb(-(scale + 1))
    assert X.hash_value(a, T.DecimalType(precision=38, scale=scale)) == X.hash_value(b, T.DecimalType(precision=38, scale=scale + 1))


@pytest.mark.rule("ICEBERG-PART-025")
@pytest.mark.parametrize("t", [T.INT, T.LONG], ids=["int", "long"])
@examples(0.5)
@given(data=st.data(), w=st.one_of(st.sampled_from([1, 3, 10, 2**31 - 1]), st.integers(1, 10**6)))
def test_truncate_numbers_is_monotone_and_floors(t, data, w):
    """truncate[W](v) <= v, v - truncate < W, a multiple of W, and a <= b implies truncate(a) <= truncate(b); -1 with W=10 is -10."""
    a = data.draw(si.values_for_type(t), label="a")
    b = data.draw(si.values_for_type(t), label="b")
    ta, tb = X.truncate(a, t, w), X.truncate(b, t, w)
    for v, tv in ((a, ta), (b, tb)):
        assert tv <= v and v - tv < w and tv % w == 0
    if a <= b:
        assert ta <= tb
    assert X.truncate(-1, t, 10) == -10 and X.truncate(-3, t, 3) == -3 and X.truncate(1, t, 10) == 0


@pytest.mark.rule("ICEBERG-PART-026")
@examples(0.5)
@given(data=st.data(), w=st.integers(1, 1000))
def test_truncate_decimal_uses_the_column_scale(data, w):
    """truncate[W] of a decimal works on the unscaled value at the column's scale (W=50, s=2: 10.65 -> 10.50)."""
    t = T.DecimalType(precision=12, scale=2)
    a, b = data.draw(si.values_for_type(t)), data.draw(si.values_for_type(t))
    ta, tb = X.truncate(a, t, w), X.truncate(b, t, w)
    assert ta <= a and V.unscaled(a) - V.unscaled(ta) < w and V.unscaled(ta) % w == 0
    if a <= b:
        assert ta <= tb
    assert X.truncate(Decimal("10.65"), t, 50) == Decimal("10.50")


@pytest.mark.rule("ICEBERG-PART-027", "ICEBERG-PART-028")
@examples(0.5)
@given(st.text(), st.text(), st.binary(), st.binary(), st.integers(1, 20))
def test_truncate_strings_and_binary(s1, s2, b1, b2, w):
    """Strings keep at most W code points (valid UTF-8, a prefix, order kept); binary keeps W bytes."""
    for s in (s1, s2):
        ts = X.truncate(s, T.STRING, w)
        assert s.startswith(ts) and len(ts) == min(len(s), w)
        ts.encode("utf-8")
    if s1.encode("utf-8") <= s2.encode("utf-8"):
        assert X.truncate(s1, T.STRING, w).encode("utf-8") <= X.truncate(s2, T.STRING, w).encode("utf-8")
    for b in (b1, b2):
        assert X.truncate(b, T.BINARY, w) == b[:w]
    if b1 <= b2:
        assert X.truncate(b1, T.BINARY, w) <= X.truncate(b2, T.BINARY, w)


@pytest.mark.rule("ICEBERG-PART-013", "ICEBERG-PART-014", "ICEBERG-EVOL-008")
@pytest.mark.parametrize("t", TEMPORAL, ids=_ids(TEMPORAL))
@examples(0.5)
@given(data=st.data())
def test_time_transforms_are_monotone_and_consistent(t, data):
    """year/month/day/hour are monotone, agree with each other (month // 12 == year, ...) and with the calendar."""
    a = data.draw(si.values_for_type(t), label="a")
    b = data.draw(si.values_for_type(t), label="b")
    lo, hi = min(a, b), max(a, b)
    transforms = [X.YearTransform(), X.MonthTransform(), X.DayTransform()] + ([X.HourTransform()] if t != T.DATE else [])
    for tr in transforms:
        assert tr.apply(lo, t) <= tr.apply(hi, t)
    y, m, d = (tr.apply(lo, t) for tr in transforms[:3])
    assert m // 12 == y
    date = dt.date(1970, 1, 1) + dt.timedelta(days=d)
    assert (date.year - 1970, (date.year - 1970) * 12 + date.month - 1) == (y, m)
    if t != T.DATE:
        assert transforms[3].apply(lo, t) // 24 == d
    assert all(tr.apply(None, t) is None for tr in transforms)


@pytest.mark.rule("ICEBERG-SERDE-009", "ICEBERG-SERDE-010", "ICEBERG-SERDE-011", "ICEBERG-SERDE-012", "ICEBERG-SERDE-013",
                  "ICEBERG-SERDE-014", "ICEBERG-TYPE-003", "ICEBERG-MANIFEST-031")
@pytest.mark.parametrize("t", ALL_PRIMITIVES, ids=_ids(ALL_PRIMITIVES))
@examples(0.5)
@given(data=st.data())
def test_binary_single_value_round_trip(t, data):
    """Every primitive's binary single value decodes to the same value and has the spec's width (decimals: fewest bytes)."""
    v = data.draw(si.values_for_type(t), label="value")
    raw = V.to_bytes(v, t)
    back = V.from_bytes(raw, t)
    if isinstance(v, float) and math.isnan(v):
        assert math.isnan(back)
    else:
        assert back == v and (not isinstance(v, float) or math.copysign(1, back) == math.copysign(1, v))
    name = t.name if isinstance(t, T.PrimitiveType) else None
    if name in WIDTH:
        assert len(raw) == WIDTH[name]
    if isinstance(t, T.DecimalType):
        n = V.unscaled(v)
        assert int.from_bytes(raw, "big", signed=True) == n
        assert len(raw) == 1 or int.from_bytes(raw[1:], "big", signed=True) != n or (raw[0] not in (0, 255))
    if isinstance(t, T.FixedType) or name in ("string", "binary"):
        assert raw == (v.encode("utf-8") if name == "string" else v)
    if name == "uuid":
        assert raw == v.bytes


@pytest.mark.rule("ICEBERG-SERDE-018", "ICEBERG-SERDE-019", "ICEBERG-SERDE-020", "ICEBERG-SERDE-021", "ICEBERG-SERDE-022")
@pytest.mark.parametrize("t", ALL_PRIMITIVES, ids=_ids(ALL_PRIMITIVES))
@examples(0.5)
@given(data=st.data())
def test_json_single_value_round_trip(t, data):
    """Every primitive's JSON single value parses back to the same value; uuids and hex are lower case, timestamptz ends in +00:00."""
    v = data.draw(si.values_for_type(t, nan=False), label="value")
    assume(not (isinstance(v, float) and math.isinf(v)))
    j = V.to_json(v, t)
    back = V.from_json(j, t)
    assert back == v
    if t == T.UUID or isinstance(t, T.FixedType) or t == T.BINARY:
        assert j == j.lower()
    if t in (T.TIMESTAMPTZ, T.TIMESTAMPTZ_NS):
        assert j.endswith("+00:00")
    if t in (T.TIMESTAMP, T.TIMESTAMP_NS):
        assert "+" not in j[10:] and not j.endswith("Z")
