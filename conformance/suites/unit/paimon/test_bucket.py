"""Bucket functions (reference_impl.paimon.bucket): Appendix B vectors, Java semantics, pypaimon agreement."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import binary_row as B
from reference_impl.paimon import bucket as K
from reference_impl.paimon.types import parse_type, sql_string

P = parse_type
INT, BIGINT, STRING = P("INT"), P("BIGINT"), P("STRING")
KEY_TYPES = [INT, STRING, INT]
KEY = [5, "abc", None]


@pytest.mark.rule("PAIMON-ROW-034", "PAIMON-BUCKET-002")
def test_appendix_b_hash():
    """(5, 'abc', NULL) hashes to 1911836951 (INT or BIGINT third field: a null slot is zero either way)."""
    assert K.hash_code(B.serialize(KEY, KEY_TYPES)) == 1911836951
    assert K.hash_code(B.serialize(KEY, [INT, STRING, BIGINT])) == 1911836951


@pytest.mark.rule("PAIMON-BUCKET-002")
@pytest.mark.parametrize("n,expected", [(2, 1), (4, 3), (5, 1), (10, 1), (16, 7)])
def test_appendix_b_buckets(n, expected):
    assert K.bucket(KEY, KEY_TYPES, n) == expected
    assert K.bucket(KEY, KEY_TYPES, n, "DEFAULT") == expected  # the option value is case-insensitive


@pytest.mark.rule("PAIMON-ROW-004", "PAIMON-BUCKET-002")
def test_bucket_rows_have_header_insert():
    """The bucket is taken over the key row with RowKind INSERT: the same key as -U/+U/-D would hash elsewhere."""
    h0 = K.hash_code(B.serialize(KEY, KEY_TYPES, 0))
    assert all(K.hash_code(B.serialize(KEY, KEY_TYPES, kind)) != h0 for kind in (1, 2, 3))
    assert all(K.bucket(KEY, KEY_TYPES, n) == K.bucket_of_hash(h0, n) for n in range(1, 40))


@pytest.mark.rule("PAIMON-BUCKET-002")
@pytest.mark.parametrize("a,n,rem", [(7, 3, 1), (-7, 3, -1), (7, -3, 1), (-7, -3, -1), (-(2**31), 7, -2), (0, 5, 0)])
def test_java_remainder(a, n, rem):
    """Java's % keeps the dividend's sign (Python's % would give 2 for -7 % 3)."""
    assert K.java_rem(a, n) == rem


@pytest.mark.rule("PAIMON-BUCKET-002", "PAIMON-ROW-034")
def test_negative_hash_uses_abs_of_java_remainder():
    """A key with a negative hash: abs(h % n) with Java's %, not Python's floor modulo."""
    key = next([i] for i in range(100) if K.hash_code(B.serialize([i], [INT])) < 0
               and K.hash_code(B.serialize([i], [INT])) % 7 != abs(K.hash_code(B.serialize([i], [INT]))) % 7)
    h = K.hash_code(B.serialize(key, [INT]))
    assert h < 0 and K.bucket(key, [INT], 7) == (-h) % 7 != h % 7
    assert K.bucket_of_hash(-(2**31), 10) == 8  # Math.abs(Integer.MIN_VALUE % 10) = 8


@pytest.mark.rule("PAIMON-ROW-034")
def test_hash_code_shape():
    assert K.hash_code(B.EMPTY_ROW) == K.hash_code(bytes(8))
    assert -(2**31) <= K.hash_code(bytes(range(64))) < 2**31
    with pytest.raises(InvalidTable) as info:
        K.hash_code(bytes(6))
    assert info.value.rule == "PAIMON-ROW-032"


@pytest.mark.rule("PAIMON-ROW-038", "PAIMON-BUCKET-002")
def test_timestamp_precision_changes_the_bucket_hash():
    """The same instant in a TIMESTAMP(3) and a TIMESTAMP(6) key gives other bytes, so another hash (paimon #9216)."""
    instant = dt.datetime(2024, 5, 14, 12, 0, 0)
    h3 = K.hash_code(B.serialize([instant], [P("TIMESTAMP(3)")]))
    h6 = K.hash_code(B.serialize([instant], [P("TIMESTAMP(6)")]))
    assert h3 != h6


@pytest.mark.rule("PAIMON-BUCKET-005")
@pytest.mark.parametrize("value,t,n,expected", [(-1, INT, 4, 3), (17, INT, 5, 2), (-3, INT, 5, 2), (5, INT, 5, 0),
                                                (-(2**63), BIGINT, 7, 6), (2**63 - 1, BIGINT, 10, 7), (None, INT, 3, 0)])
def test_mod_bucket_function(value, t, n, expected):
    """bucket-function.type=mod: Math.floorMod(key, n); a null key reads its zeroed slot (0)."""
    assert K.bucket([value], [t], n, "mod") == expected


@pytest.mark.rule("PAIMON-BUCKET-005")
@pytest.mark.parametrize("types", [[STRING], [INT, INT], [P("SMALLINT")], []])
def test_mod_needs_one_int_or_bigint(types):
    with pytest.raises(InvalidTable) as info:
        K.bucket([None] * len(types), types, 4, "mod")
    assert info.value.rule == "PAIMON-BUCKET-005" and "exactly one INT or BIGINT" in info.value.message


def _java_int(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - 2**32 if x >> 31 else x


def _java_hash_bytes(data: bytes) -> int:
    h = 0
    for b in data:
        h = _java_int(h * 31 + (b - 256 if b > 127 else b))
    return h


@pytest.mark.rule("PAIMON-BUCKET-005")
def test_hive_bucket_function_java_vector():
    """HiveBucketFunctionTest: (7, 'hello', [1,2,3], 12.3400) -> 31-fold hash with BigDecimal('12.34').hashCode()."""
    types = [INT, STRING, P("BYTES"), P("DECIMAL(10, 4)")]
    expected = _java_int(31 * _java_int(31 * _java_int(31 * 7 + _java_hash_bytes(b"hello")) + _java_hash_bytes(b"\x01\x02\x03"))
                         + 31 * 1234 + 2)
    assert expected == 805989529
    assert K.bucket([7, "hello", b"\x01\x02\x03", Decimal("12.3400")], types, 8, "hive") == (expected & 0x7FFFFFFF) % 8 == 1
    assert K.bucket([None, None], [INT, STRING], 4, "hive") == 0


@pytest.mark.rule("PAIMON-BUCKET-005")
def test_hive_hash_details():
    """Decimals are normalised (trailing zeros, scale), -0.0 == 0.0, negative bytes are signed, longs fold."""
    d = lambda v, t: K.bucket([v], [P(t)], 2**31 - 1, "hive")  # noqa: E731 - the hash itself, & MAX_INT
    assert d(Decimal("12.3400"), "DECIMAL(10, 4)") == d(Decimal("12.34"), "DECIMAL(10, 2)") == 31 * 1234 + 2
    assert d(Decimal("100"), "DECIMAL(10, 0)") == 31 * 100  # stripTrailingZeros then setScale(0)
    assert d(Decimal("-1.5"), "DECIMAL(30, 5)") == _java_int(31 * -15 + 1) & 0x7FFFFFFF
    assert d(Decimal(2**40), "DECIMAL(20, 0)") == _java_int(31 * (31 * 256 + 0)) & 0x7FFFFFFF  # BigInteger words [256, 0]
    assert d(Decimal(0), "DECIMAL(20, 5)") == 0
    assert d(-0.0, "DOUBLE") == d(0.0, "DOUBLE") == 0 and d(-0.0, "FLOAT") == 0
    assert d(1.0, "FLOAT") == 0x3F800000 and d(1.0, "DOUBLE") == 0x3FF00000
    assert d(float("nan"), "FLOAT") == 0x7FC00000
    assert d(b"\xfe", "BYTES") == d(-2, "INT") == d(-2, "TINYINT") == 2**31 - 2  # signed bytes, & MAX_INT
    assert d(-1, "BIGINT") == 0 and d(2**32, "BIGINT") == 1  # Long.hashCode
    assert d(True, "BOOLEAN") == 1 and d(dt.date(1970, 1, 3), "DATE") == 2 and d(dt.time(0, 0, 1), "TIME") == 1000


@pytest.mark.rule("PAIMON-BUCKET-005")
def test_hive_rejects_timestamps_only_when_present():
    """Java: a null TIMESTAMP key hashes to 0; a non-null one is 'Unsupported type as bucket key type'."""
    t = P("TIMESTAMP(3)")
    assert K.bucket([None], [t], 4, "hive") == 0
    with pytest.raises(Unsupported, match="cannot hash TIMESTAMP"):
        K.bucket([dt.datetime(1970, 1, 1)], [t], 4, "hive")


@pytest.mark.rule("PAIMON-BUCKET-001", "PAIMON-BUCKET-005")
def test_bad_bucket_arguments():
    for n in (0, -1, True, 2**31, "4"):
        with pytest.raises(InvalidTable, match="positive int"):
            K.bucket(KEY, KEY_TYPES, n)
    with pytest.raises(InvalidTable, match="unknown bucket-function.type 'range'"):
        K.bucket(KEY, KEY_TYPES, 4, "range")
    with pytest.raises(InvalidTable) as info:
        K.bucket(["x"], [INT], 4)
    assert info.value.rule == "PAIMON-ROW-012"


# --- pypaimon ----------------------------------------------------------------------------------

pytest.importorskip("pypaimon")
from pypaimon.schema.data_types import DataField, DataTypeParser  # noqa: E402
from pypaimon.write.row_key_extractor import RowKeyExtractor, _bucket_from_hash, _hash_bytes_by_words  # noqa: E402


def py_bucket(values, types, n):
    fields = [DataField(i, f"f{i}", DataTypeParser.parse_data_type(sql_string(t))) for i, t in enumerate(types)]
    return _bucket_from_hash(RowKeyExtractor._binary_row_hash_code(tuple(values), fields), n)


@pytest.mark.rule("PAIMON-BUCKET-002", "PAIMON-ROW-034")
@pytest.mark.parametrize("values,types", [
    (KEY, KEY_TYPES),
    ([7], [INT]),
    (["a longer string key"], [STRING]),
    ([Decimal("123.45"), dt.date(2024, 5, 14)], [P("DECIMAL(38, 2)"), P("DATE")]),
    ([dt.datetime(2024, 5, 14, 1, 2, 3, 4)], [P("TIMESTAMP(6)")]),
    ([None, -5], [P("DECIMAL(10, 0)"), BIGINT]),
])
@pytest.mark.parametrize("n", [1, 2, 3, 16, 1000])
def test_pypaimon_bucket_agrees(values, types, n):
    """pypaimon's fixed-bucket extractor puts these keys where Java (and the reference) puts them."""
    assert py_bucket(values, types, n) == K.bucket(values, types, n)
    row = B.serialize(values, types)
    assert _hash_bytes_by_words(row) & 0xFFFFFFFF == K.hash_code(row) & 0xFFFFFFFF


@pytest.mark.rule("PAIMON-BUCKET-002", "PAIMON-ROW-019", "PAIMON-ROW-016")
def test_pypaimon_disagrees_bucket_of_null_non_compact_key():
    """Finding: a null TIMESTAMP(6) (or DECIMAL(p>18)) bucket-key field makes pypaimon hash a shorter row
    (no reserved var area), so pypaimon 2.1.0 writes such records to another bucket than Java does."""
    types = [P("TIMESTAMP(6)"), INT]
    assert K.bucket([None, 1], types, 4) == 0
    assert py_bucket([None, 1], types, 4) == 1
    assert K.hash_code(B.serialize([None, 1], types)) != RowKeyExtractor._binary_row_hash_code(
        (None, 1), [DataField(0, "a", DataTypeParser.parse_data_type("TIMESTAMP(6)")),
                    DataField(1, "b", DataTypeParser.parse_data_type("INT"))])


@pytest.mark.rule("PAIMON-BUCKET-002", "PAIMON-ROW-015")
def test_pypaimon_disagrees_bucket_of_negative_power_of_two_decimal_key():
    """Finding: a DECIMAL(20, 2) key of -1.28 (unscaled -128) is one byte longer in pypaimon's row, so it
    hashes elsewhere: with 4 buckets Java (and the reference) say bucket 1, pypaimon 2.1.0 says 2."""
    t = P("DECIMAL(20, 2)")
    assert K.bucket([Decimal("-1.28")], [t], 4) == 1
    assert py_bucket([Decimal("-1.28")], [t], 4) == 2
