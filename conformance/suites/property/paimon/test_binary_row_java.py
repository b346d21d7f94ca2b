"""BinaryRow bytes: the reference (reference_impl.paimon.binary_row / bucket) against Paimon's own Java core.

Paimon's bytes are defined by its Java classes, so here the reference must write what
paimon-bundle 1.4.2 writes, byte for byte, for random row types and values. Java produces each row
through two separate paths (the ``binaryrow`` command of ``LakeconfPaimon.java``):
``InternalRowSerializer.toBinaryRow`` (RowHelper: stats, key/value serialization) and the
code-generated projection (``CodeGenUtils.newProjection``: partitions and bucket keys); the
reference must equal both, and its hash and buckets (default, mod and hive bucket functions) must
be Java's. A batch of rows of one row type costs one JVM round trip.

Where Java cannot run here the tests skip with the reason (a failure when LAKECONF_REQUIRE_ENGINES
says every engine must run).
"""

from __future__ import annotations

import base64
import os
import struct
from decimal import ROUND_HALF_UP, Context, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.suites.property.delta._support import examples
from reference_impl.errors import LakeconfError
from reference_impl.paimon import binary_row as B
from reference_impl.paimon import bucket as K
from reference_impl.paimon.types import MAX_LENGTH, DataField, DataType, sql_string, to_json

KINDS = B.ROW_KINDS  # "+I", "-U", "+U", "-D": the header byte is the index
BUCKET_COUNTS = [1, 2, 3, 4, 5, 7, 16, 100, 2**31 - 1]
_DEC = Context(prec=100)

# ROW-008: Java's writers are reused across the rows of a batch, as Paimon reuses them
ROW_RULES = ("PAIMON-ROW-001", "PAIMON-ROW-002", "PAIMON-ROW-003", "PAIMON-ROW-004", "PAIMON-ROW-005", "PAIMON-ROW-006",
             "PAIMON-ROW-007", "PAIMON-ROW-008", "PAIMON-ROW-009", "PAIMON-ROW-010", "PAIMON-ROW-011", "PAIMON-ROW-012", "PAIMON-ROW-013",
             "PAIMON-ROW-014", "PAIMON-ROW-015", "PAIMON-ROW-016", "PAIMON-ROW-017", "PAIMON-ROW-018",
             "PAIMON-ROW-019", "PAIMON-ROW-020", "PAIMON-ROW-021", "PAIMON-ROW-022", "PAIMON-ROW-023",
             "PAIMON-ROW-024", "PAIMON-ROW-026", "PAIMON-ROW-027", "PAIMON-ROW-028", "PAIMON-ROW-029",
             "PAIMON-ROW-030", "PAIMON-ROW-031", "PAIMON-ROW-032", "PAIMON-ROW-033", "PAIMON-ROW-034", "PAIMON-ROW-035",
             "PAIMON-ROW-038")
BUCKET_RULES = ("PAIMON-ROW-034", "PAIMON-BUCKET-002", "PAIMON-BUCKET-005")


@pytest.fixture(scope="module")
def java():
    """The process's one Paimon Java engine (one JVM), or a skip (a failure under LAKECONF_REQUIRE_ENGINES)."""
    from conformance.suites.property.paimon._support import java_engine

    engine, reason = java_engine()
    if engine is None:
        if os.environ.get("LAKECONF_REQUIRE_ENGINES", "") not in ("", "0", "false"):
            pytest.fail(f"paimon-java cannot run, and every engine must: {reason}")
        pytest.skip(f"paimon-java cannot run here, so BinaryRow bytes are not compared with Java's: {reason}")
    return engine


# --- the read encoding of LakeconfPaimon.java (what its decode() takes) -------------------------------


def to_java(v, t: DataType):
    """A reference value of type ``t`` in the Java side's JSON encoding: timestamps, dates and times through the
    reference's own conversions (the generated values are already what the layout stores), decimals as given
    (both sides round them to the scale themselves)."""
    if v is None:
        return None
    r = t.root
    if r == "FLOAT":
        return struct.unpack("<i", struct.pack("<f", v))[0]  # IEEE bits: lossless, NaN payloads included
    if r == "DOUBLE":
        return struct.unpack("<q", struct.pack("<d", v))[0]
    if r == "DECIMAL":  # the value as given: Java's Decimal.fromBigDecimal rounds it to the scale itself
        return format(Decimal(v), "f")
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return list(B.to_timestamp(v, t))
    if r == "DATE":
        return B.date_days(v, t)
    if r == "TIME":
        return B.time_millis(v, t)
    if r in ("BINARY", "VARBINARY", "BLOB"):
        return _b64(v)
    if r == "VARIANT":
        return [_b64(v[0]), _b64(v[1])]
    if r == "ARRAY":
        return [to_java(x, t.element) for x in v]
    if r == "MAP":
        return [[to_java(k, t.key), to_java(x, t.value)] for k, x in v.items()]
    if r == "MULTISET":
        return [[to_java(k, t.element), n] for k, n in v.items()]
    if r == "ROW":
        return [to_java(x, f.type) for x, f in zip(v, t.fields)]
    return v  # BOOLEAN, integers, CHAR/VARCHAR


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# --- strategies -----------------------------------------------------------------------------------

ATOMIC_ROOTS = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME", "DECIMAL",
                "CHAR", "VARCHAR", "BINARY", "VARBINARY", "TIMESTAMP", "TIMESTAMP_LTZ", "VARIANT", "BLOB")


@st.composite
def atomic_types(draw, nullable: bool | None = None) -> DataType:
    root = draw(st.sampled_from(ATOMIC_ROOTS))
    if root == "DECIMAL":  # the compact boundary (18 | 19) and both ends weighted
        p = draw(st.sampled_from([1, 9, 18, 19, 20, 38]) | st.integers(1, 38))
        params = (p, draw(st.sampled_from([0, p]) | st.integers(0, p)))
    elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        params = (draw(st.sampled_from([0, 3, 4, 6, 9]) | st.integers(0, 9)),)
    elif root == "TIME":
        params = (draw(st.integers(0, 9)),)
    elif root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        params = (draw(st.sampled_from([1, 7, 8, 255]) | st.just(MAX_LENGTH)) if root.startswith("VAR")
                  else draw(st.sampled_from([1, 7, 8, 255])),)
    else:
        params = ()
    return DataType(root, draw(st.booleans()) if nullable is None else nullable, params)


def nested_types() -> st.SearchStrategy[DataType]:
    """Atomic types, and ARRAY / MAP (atomic non-null keys) / MULTISET / ROW around them, a level or two deep."""
    def extend(inner):
        fields = st.lists(inner, min_size=1, max_size=3).map(
            lambda ts: tuple(DataField(i, f"n{i}", t) for i, t in enumerate(ts)))
        return st.one_of(
            st.builds(lambda e, n: DataType("ARRAY", n, element=e), inner, st.booleans()),
            st.builds(lambda k, v, n: DataType("MAP", n, key=k, value=v), atomic_types(False), inner, st.booleans()),
            st.builds(lambda e, n: DataType("MULTISET", n, element=e), atomic_types(False), st.booleans()),
            st.builds(lambda fs, n: DataType("ROW", n, fields=fs), fields, st.booleans()),
        )
    return st.recursive(atomic_types(), extend, max_leaves=5)


def _inline_edge():
    """ASCII text of 6..9 bytes: both sides of the 7-byte inline limit."""
    return st.text(st.characters(codec="ascii"), min_size=6, max_size=9)


def _decimals(p: int, s: int, *, rounded: bool = True) -> st.SearchStrategy[Decimal]:
    top = 10**p - 1
    # -2**(8k-1) and 2**(8k-1)-1: BigInteger.toByteArray's length steps (a pinned pypaimon disagreement)
    steps = [v for k in range(1, 17) for v in (-(2 ** (8 * k - 1)), 2 ** (8 * k - 1) - 1, -(2 ** (8 * k - 1)) - 1)
             if -top <= v <= top]
    unscaled = st.integers(-top, top) | st.sampled_from([0, 1, -1, top, -top] + steps)
    exact = unscaled.map(lambda u: Decimal(u).scaleb(-s, context=_DEC))
    # up to 3 digits more than the scale: both sides round HALF_UP (ties included), unless that overflows
    extra = st.builds(lambda u, e: Decimal(u).scaleb(-(s + e), context=_DEC),
                      st.integers(-top, top) | st.sampled_from([5, -5, 15, -15, top, -top]), st.integers(1, 3))
    fits = extra.filter(lambda d: abs(d.scaleb(s, context=_DEC).to_integral_value(ROUND_HALF_UP, context=_DEC)) <= top)
    return exact | fits if rounded else exact


def values_for(t: DataType) -> st.SearchStrategy:
    """Reference values of type ``t``, stored values only (what Java is handed is the same value, not a
    rounded one), null included when the type is nullable."""
    r = t.root
    if r in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[r]
        base = st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    elif r == "DECIMAL":
        base = _decimals(t.precision, t.scale)
    elif r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        millis = st.integers(-(2**63), 2**63 - 1) | st.integers(-10**13, 10**13)
        base = st.builds(B.Timestamp, millis, st.integers(0, 999_999) | st.just(0))
    elif r in ("CHAR", "VARCHAR"):
        base = st.text(max_size=12) | _inline_edge()
    elif r in ("BINARY", "VARBINARY"):
        base = st.binary(max_size=24) | st.binary(min_size=6, max_size=9)
    elif r == "ARRAY":
        base = st.lists(st.deferred(lambda: values_for(t.element)), max_size=4)
    elif r == "MAP":
        base = st.dictionaries(_keys(t.key), st.deferred(lambda: values_for(t.value)), max_size=3)
    elif r == "MULTISET":
        base = st.dictionaries(_keys(t.element), st.integers(0, 2**31 - 1), max_size=3)
    elif r == "ROW":
        base = st.tuples(*(st.deferred(lambda f=f: values_for(f.type)) for f in t.fields))
    else:
        base = {
            "BOOLEAN": st.booleans(),
            "FLOAT": st.floats(width=32),  # float32 values only: Java is handed exactly what the reference stores
            "DOUBLE": st.floats(),
            "DATE": st.integers(-(2**31), 2**31 - 1),
            "TIME": st.integers(0, B.MILLIS_PER_DAY - 1),  # millis of day: the stored TIME at every precision
            "VARIANT": VARIANTS,
            "BLOB": st.binary(max_size=12),
        }[r]
    return st.none() | base if t.nullable else base


# (value, metadata) bytes of well-formed variants (Java's GenericVariant checks them; the reference stores any
# bytes): an empty dictionary, and a null, a boolean, an int8/16/32 or a short string value
_EMPTY_METADATA = b"\x01\x00\x00"
VARIANTS = st.tuples(
    st.sampled_from([b"\x00", b"\x04", b"\x08"])
    | st.builds(lambda n: b"\x0c" + n.to_bytes(1, "little", signed=True), st.integers(-128, 127))
    | st.builds(lambda n: b"\x10" + n.to_bytes(2, "little", signed=True), st.integers(-(2**15), 2**15 - 1))
    | st.builds(lambda n: b"\x14" + n.to_bytes(4, "little", signed=True), st.integers(-(2**31), 2**31 - 1))
    | st.builds(lambda b: bytes([len(b) << 2 | 1]) + b, st.text(st.characters(codec="ascii"), max_size=20).map(str.encode)),
    st.just(_EMPTY_METADATA))


def _keys(t: DataType) -> st.SearchStrategy:
    """Map keys distinct in Java too (no NaN; float32 values so two Python floats are never one Java float;
    decimals at their scale, so two keys never round to one)."""
    if t.root == "DECIMAL":
        return _decimals(t.precision, t.scale, rounded=False)
    return values_for(DataType(t.root, False, t.params)).filter(lambda k: k == k)


@st.composite
def batches(draw, types: st.SearchStrategy[DataType], *, max_fields: int = 6, max_rows: int = 6, kinds: bool = True):
    """(row types, [(kind index, values), ...]): several rows of one row type, for one Java round trip."""
    ts = draw(st.lists(types, max_size=max_fields), label="types")
    rows = draw(st.lists(st.tuples(st.integers(0, 3) if kinds else st.just(0),
                                   st.tuples(*(values_for(t) for t in ts)).map(list)), min_size=1, max_size=max_rows))
    return ts, rows


# --- comparing -------------------------------------------------------------------------------------


def _describe(types, values, kind) -> str:
    return f"{KINDS[kind]} ({', '.join(map(sql_string, types))}) = {values!r:.600}"


def _has(t: DataType, roots) -> bool:
    return t.root in roots or any(_has(x, roots) for x in (t.element, t.key, t.value) if x is not None) \
        or any(_has(f.type, roots) for f in t.fields)


def java_rows(java, types, rows, buckets=()):
    return java.binary_rows([to_json(t) for t in types], [[KINDS[k], *(to_java(v, t) for v, t in zip(vs, types))]
                                                         for k, vs in rows], buckets)


def assert_same_bytes(java, types, rows):
    """The reference's bytes == Java's, per row, on both Java paths; the row (types, values, both hex strings)
    in the message otherwise."""
    answers = java_rows(java, types, rows)
    assert len(answers) == len(rows)
    for (kind, values), got in zip(rows, answers):
        ours = B.serialize(values, types, kind)
        what = _describe(types, values, kind)
        assert ours == got["bytes"], f"{what}\n reference {ours.hex()}\n java      {got['bytes'].hex()}"
        # the projection writes an INSERT row (partition / bucket-key rows never carry a kind)
        ours0 = B.serialize(values, types, 0)
        if got["projected"] is None:  # Java's code generator takes no VARIANT / BLOB (never partition or bucket keys)
            assert any(_has(t, ("VARIANT", "BLOB")) for t in types), f"{what}: no projection from Java"
        else:
            assert ours0 == got["projected"], f"{what} (projection)\n reference {ours0.hex()}\n java      {got['projected'].hex()}"
        assert B.serialize_with_arity(values, types, kind) == got["serialized"], what
        assert K.hash_code(ours) == got["hash"], what
    return answers


# --- properties -----------------------------------------------------------------------------------


@pytest.mark.rule(*ROW_RULES)
@examples(1.0)
@given(batches(atomic_types()))
def test_atomic_rows_are_javas_bytes(java, batch):
    """Rows of every primitive type (nulls, inline and out-of-line var-length, compact and non-compact
    decimals and timestamps, every row kind): the reference's bytes are Java's."""
    assert_same_bytes(java, *batch)


@pytest.mark.rule(*ROW_RULES)
@examples(0.5)
@given(batches(nested_types(), max_fields=4, max_rows=4))
def test_nested_rows_are_javas_bytes(java, batch):
    """ARRAY / MAP / MULTISET / ROW fields (BinaryArray, BinaryMap, nested BinaryRow sections) too."""
    assert_same_bytes(java, *batch)


@pytest.mark.rule(*BUCKET_RULES)
@examples(0.5)
@given(batches(atomic_types(), max_fields=3, kinds=False)
       # one INT / BIGINT key: what the mod function takes (a random key list rarely is)
       | batches(st.builds(DataType, st.sampled_from(["INT", "BIGINT"]), st.booleans()), max_fields=1, kinds=False))
def test_buckets_are_javas(java, batch):
    """Bucket-key rows: Java's BucketFunction (default, mod, hive) picks the reference's bucket for every
    bucket count, and refuses exactly the keys the reference refuses."""
    types, rows = batch
    answers = java_rows(java, types, rows, BUCKET_COUNTS)
    for (_, values), got in zip(rows, answers):
        what = _describe(types, values, 0)
        for fn, theirs in got["buckets"].items():
            try:
                ours = [K.bucket(values, types, n, fn) for n in BUCKET_COUNTS]
            except LakeconfError as exc:
                assert isinstance(theirs, str), f"{what}: {fn}: the reference refuses ({exc}), Java gives {theirs}"
                continue
            assert ours == theirs, f"{what}: {fn} buckets for {BUCKET_COUNTS}"


# --- fixed rows at the layout's edges (one round trip per row type) ------------------------------------

D = DataType
STRING, BYTES = D("VARCHAR", True, (MAX_LENGTH,)), D("VARBINARY", True, (MAX_LENGTH,))
EDGES = [
    # inline (<= 7 bytes, 0x80 | len in slot byte 7) vs out of line, counted in UTF-8 bytes
    pytest.param([STRING, D("CHAR", True, (3,)), BYTES], [["", "abc", b""], ["abcdefg", "é", b"\x00" * 7], ["abcdefgh", "ééé", b"\xff" * 8],
                                             ["éééé", "€€", b"\x01" * 9], [None, None, None]], id="var-length"),
    # compact decimal (<= 18) vs 16 reserved bytes (> 18), nulls of both, BigInteger.toByteArray lengths
    pytest.param([D("DECIMAL", True, (18, 0)), D("DECIMAL", True, (19, 0)), D("DECIMAL", True, (38, 10))],
     [[Decimal(10**18 - 1), Decimal(10**19 - 1), Decimal("-1.5")], [None, None, None],
      [Decimal(-(2**31)), Decimal(-(2**63)), Decimal(-(2**119)).scaleb(-10, context=_DEC)],
      [Decimal(127), Decimal(-128), Decimal(-(2**39)).scaleb(-10, context=_DEC)], [Decimal(0), Decimal(0), Decimal(0)]],
     id="decimal"),
    # the two pinned pypaimon findings (unit/paimon/test_binary_row.py), here against Java itself: a null
    # DECIMAL(p > 18) / TIMESTAMP(p > 3) keeps its reserved area; unscaled -2**(8k-1) takes k bytes, not k + 1
    pytest.param([D("DECIMAL", True, (20, 2)), D("TIMESTAMP", True, (6,))],
                 [[None, None], [Decimal("-1.28"), None], [Decimal("-327.68"), None], [Decimal("-83886.08"), None]],
                 id="pypaimon-findings"),
    # TIMESTAMP(3) keeps millis in the slot; (4..9) 8 reserved bytes + nano-of-milli in the slot, nulls too
    pytest.param([D("TIMESTAMP", True, (3,)), D("TIMESTAMP", True, (6,)), D("TIMESTAMP_LTZ", True, (9,)), D("TIMESTAMP_LTZ", True, (3,))],
     [[B.Timestamp(1, 500_000)] * 4, [None] * 4, [B.Timestamp(-(2**63), 999_999)] * 4, [B.Timestamp(2**63 - 1, 0)] * 4,
      [B.Timestamp(-1, 1)] * 4], id="timestamp"),
    # every fixed-width primitive at its extremes
    pytest.param([D("BOOLEAN"), D("TINYINT"), D("SMALLINT"), D("INT"), D("BIGINT"), D("FLOAT"), D("DOUBLE"), D("DATE"), D("TIME", True, (0,))],
     [[True, -128, -32768, -(2**31), -(2**63), float("-inf"), float("nan"), -(2**31), 0],
      [False, 127, 32767, 2**31 - 1, 2**63 - 1, -0.0, 5e-324, 2**31 - 1, B.MILLIS_PER_DAY - 1], [None] * 9], id="primitives"),
    # null bit set widths: arity 56 -> 8 bytes, 57 -> 16, 120 -> 16, 121 -> 24
    *[pytest.param([D("INT")] * n, [[None] * n, list(range(n)), [None if i % 3 else i for i in range(n)]], id=f"arity-{n}")
      for n in (0, 56, 57, 120, 121)],
    # nested sections (never inline), element widths 1/2/4/8, map key + value arrays
    pytest.param([D("ARRAY", True, element=D("BOOLEAN")), D("ARRAY", True, element=D("SMALLINT")), D("ARRAY", True, element=STRING),
      D("MAP", True, key=D("INT", False), value=D("DECIMAL", True, (20, 2))),
      D("ROW", True, fields=(DataField(0, "a", D("INT")), DataField(1, "b", D("TIMESTAMP", True, (6,))))),
      D("MULTISET", True, element=D("VARCHAR", False, (MAX_LENGTH,)))],
     [[[True, None, False], [1, None, -1], ["a", None, "abcdefghij"], {1: Decimal("1.50"), 2: None}, (7, None), {"x": 2}],
      [[], [], [], {}, (None, B.Timestamp(0, 1)), {}], [None] * 6], id="nested"),
]


@pytest.mark.rule(*ROW_RULES, "PAIMON-ROW-036")
@pytest.mark.parametrize("types, values", EDGES)
def test_edge_rows_are_javas_bytes(java, types, values):
    """Rows at the layout's edges (each row type in one round trip, the rows cycling through the row kinds)."""
    rows = [(k % 4, v) for k, v in enumerate(values)]
    assert_same_bytes(java, types, rows)

