"""Every Paimon type the writer takes survives a data-file round trip (reference_impl.paimon.writer / table, pypaimon).

Types come from the BinaryRow suite's ladder (``atomic_types`` -> ``nested_types``, pypaimon-readable
subset) through the writer's Arrow API: a column of type ``t`` is written as ``to_arrow(t)``, which the
writer maps back to a Paimon type (CHAR/VARCHAR(n) -> STRING, BINARY(n) -> BYTES, TIME/TIMESTAMP to
precision 3, 6 or 9, MULTISET -> MAP). Generated values, as Arrow holds them, come back unchanged
from the reference reader and from pypaimon, in an append table and as the value columns of a
primary-key table (two commits, the second one wins), and also when the generated type is the
primary key itself (``_KEY_`` columns, bucket hashing of the key).
"""

from __future__ import annotations

import datetime as dt
import tempfile

import pyarrow as pa
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

from conformance.roundtrip import nan_safe_equal
from conformance.suites.property.delta._support import examples
from conformance.suites.property.paimon._support import pypaimon_read, violations

pytest.importorskip("pypaimon")

from conformance.suites.property.paimon.test_binary_row_props import atomic_types, values_for  # noqa: E402
from reference_impl.paimon.types import DataField, DataType  # noqa: E402

RULES = ("PAIMON-SCHEMA-017", "PAIMON-SCHEMA-018", "PAIMON-SCHEMA-019", "PAIMON-DATA-001", "PAIMON-DATA-005",
         "PAIMON-BUCKET-002")


def writable(t):
    """The Paimon type the writer gives a column of ``to_arrow(t)`` (and that Arrow type)."""
    from reference_impl.paimon.types import to_arrow
    from reference_impl.paimon.writer import paimon_type

    arrow = to_arrow(t, declared=True)
    return paimon_type(arrow, True, [100]), arrow


@st.composite
def columns(draw, types: st.SearchStrategy, min_size: int = 1, max_size: int = 4, rows: int = 4):
    """[(Paimon type as written, Arrow type, Arrow array of generated values)] for 1..max_size columns."""
    out = []
    for t in draw(st.lists(types, min_size=min_size, max_size=max_size), label="types"):
        w, arrow = writable(t)
        # Paimon holds TIME as milliseconds of the day: values are drawn at that precision
        values = draw(st.lists(values_for(w, for_pypaimon=True).map(to_millis), min_size=rows, max_size=rows),
                      label=str(w))
        try:
            arr = pa.array(values, type=arrow)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            assume(False)  # e.g. a year outside what nanosecond timestamps hold
        out.append((w, arrow, arr))
    return out


LEAVES = atomic_types(for_pypaimon=True)


def nested(leaves: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
    """ARRAY / MAP / ROW around pypaimon-readable types, a few levels deep (``nested_types`` draws map keys of
    any atomic type, VARIANT and BLOB included, which neither the writer's Arrow API nor pypaimon takes)."""
    def extend(inner: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
        fields = st.lists(inner, min_size=1, max_size=3).map(
            lambda ts: tuple(DataField(i, f"f{i}", t) for i, t in enumerate(ts)))
        return st.one_of(
            st.builds(lambda e, n: DataType("ARRAY", n, element=e), inner, st.booleans()),
            st.builds(lambda k, v, n: DataType("MAP", n, key=k, value=v), LEAVES, inner, st.booleans()),
            st.builds(lambda fs, n: DataType("ROW", n, fields=fs), fields, st.booleans()),
        )
    return st.recursive(leaves, extend, max_leaves=5)


TYPES = nested(LEAVES)


def to_millis(v):
    """``v`` with every TIME truncated to milliseconds (what Paimon holds of a TIME of any precision)."""
    if isinstance(v, dt.time):
        return v.replace(microsecond=v.microsecond // 1000 * 1000)
    if isinstance(v, list):
        return [to_millis(x) for x in v]
    if isinstance(v, tuple):
        return tuple(to_millis(x) for x in v)
    if isinstance(v, dict):
        return {k: to_millis(x) for k, x in v.items()}
    return v


def _same(got: pa.Table, want: pa.Table, who: str) -> None:
    for name in want.column_names:
        g, w = got.column(name).to_pylist(), want.column(name).to_pylist()
        assert nan_safe_equal(g, w), f"{who}: column {name}:\n got {g}\nwant {w}"


def _create(path: str, schema: pa.Schema, **kw) -> None:
    from reference_impl.paimon import writer as W
    from reference_impl.storage import open_storage

    W.create_table(open_storage(path), schema, **kw)


@pytest.mark.rule(*RULES)
@examples(0.5)
@given(columns(TYPES))
def test_append_table_round_trips_every_type(cols):
    """Append table: reference and pypaimon read back exactly the written values of every column."""
    from reference_impl.paimon import writer as W
    from reference_impl.paimon.table import read_table
    from reference_impl.storage import open_storage

    data = pa.table({f"c{i}": arr for i, (_w, _a, arr) in enumerate(cols)})
    note(f"types={[str(w) for w, _a, _arr in cols]}")
    with tempfile.TemporaryDirectory() as d:
        _create(d, data.schema)
        W.write(open_storage(d), data)
        _same(read_table(d), data, "reference")
        _same(pypaimon_read(d), data, "pypaimon")
        assert violations(d) == []


@pytest.mark.rule(*RULES, "PAIMON-DATA-004")
@examples(0.3)
@given(columns(TYPES, rows=3), st.data())
def test_primary_key_values_round_trip(cols, data):
    """Primary-key table, INT key: a second commit over some keys wins; every value column reads back as written."""
    from reference_impl.paimon import writer as W
    from reference_impl.paimon.table import read_table
    from reference_impl.storage import open_storage

    first = pa.table({"k": pa.array([0, 1, 2], pa.int32()), **{f"c{i}": arr for i, (_w, _a, arr) in enumerate(cols)}})
    keep = data.draw(st.lists(st.booleans(), min_size=3, max_size=3), label="rewritten keys")
    second = pa.table({"k": pa.array([0, 1, 2], pa.int32()),
                       **{f"c{i}": arr[::-1] for i, (_w, _a, arr) in enumerate(cols)}}).filter(pa.array(keep))
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False)] + list(first.schema)[1:])
    want = pa.concat_tables([second, first.filter(pa.array([not x for x in keep]))]).sort_by("k")
    with tempfile.TemporaryDirectory() as d:
        _create(d, schema, primary_keys=["k"], options={"bucket": data.draw(st.sampled_from(["1", "2", "-1"]))})
        storage = open_storage(d)
        W.write(storage, first.cast(schema))
        if second.num_rows:
            W.write(storage, second.cast(schema))
        _same(read_table(d).sort_by("k"), want, "reference")
        _same(pypaimon_read(d).sort_by("k"), want, "pypaimon")
        assert violations(d) == []


KEY_TYPES = atomic_types(for_pypaimon=True).filter(lambda t: t.root not in ("FLOAT", "DOUBLE"))


@pytest.mark.rule("PAIMON-DATA-001", "PAIMON-BUCKET-002", "PAIMON-BUCKET-003", "PAIMON-DATA-004")
@examples(0.3)
@given(KEY_TYPES, st.data())
def test_any_atomic_primary_key_round_trips(t, data):
    """A primary key of any atomic type (FLOAT/DOUBLE aside): distinct keys read back once each, with their values."""
    from reference_impl.paimon import writer as W
    from reference_impl.paimon.table import read_table
    from reference_impl.storage import open_storage

    w, arrow = writable(t.not_null())
    keys = data.draw(st.lists(values_for(w.not_null(), for_pypaimon=True).map(to_millis), min_size=1, max_size=5),
                     label="keys")
    try:
        karr = pa.array(keys, type=arrow)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        assume(False)
    distinct: dict = {}
    for i, k in enumerate(karr.to_pylist()):
        distinct[k] = i  # the last write of a key wins
    rows = pa.table({"key": karr, "v": pa.array(range(len(keys)), pa.int64())})
    schema = pa.schema([pa.field("key", arrow, nullable=False), pa.field("v", pa.int64())])
    want = sorted(distinct.items(), key=lambda kv: kv[1])
    with tempfile.TemporaryDirectory() as d:
        _create(d, schema, primary_keys=["key"], options={"bucket": "2"})
        W.write(open_storage(d), rows.cast(schema))
        pairs = sorted(zip(read_table(d).column("key").to_pylist(), read_table(d).column("v").to_pylist()),
                       key=lambda kv: kv[1])
        assert pairs == want, f"reference ({w}):\n got {pairs}\nwant {want}"
        py = pypaimon_read(d)
        theirs = sorted(zip(py.column("key").to_pylist(), py.column("v").to_pylist()), key=lambda kv: kv[1])
        assert theirs == want, f"pypaimon ({w}):\n got {theirs}\nwant {want}"
        assert violations(d) == []


@given(TYPES)
def test_strategy_types_have_a_written_type(t):
    """Self-test: every generated type maps to an Arrow type the writer accepts, and back to itself."""
    from reference_impl.paimon.types import to_arrow

    w, arrow = writable(t)
    assert to_arrow(w, declared=True) == arrow


# --- disagreements the properties found, fixed in the reference: regression tests ---------------------

@pytest.mark.rule("PAIMON-SCHEMA-019", "PAIMON-DATA-005")
def test_null_row_with_a_required_field():
    """ops: create(c0 ROW<f0 BOOLEAN NOT NULL>); write [NULL, {f0: true}]: a null row's required field is null
    with it (the reference once failed casting it to a non-nullable Arrow child)."""
    from reference_impl.paimon import writer as W
    from reference_impl.paimon.table import read_table
    from reference_impl.storage import open_storage

    t = pa.struct([pa.field("f0", pa.bool_(), nullable=False)])
    data = pa.table({"c0": pa.array([None, {"f0": True}], type=t)})
    with tempfile.TemporaryDirectory() as d:
        _create(d, data.schema)
        W.write(open_storage(d), data)
        assert pypaimon_read(d).to_pylist() == data.to_pylist()  # pypaimon reads it
        assert violations(d) == []
        _same(read_table(d), data, "reference")


@pytest.mark.rule("PAIMON-SCHEMA-017")
def test_time_is_held_in_milliseconds():
    """ops: create(t TIME(6)) via Arrow time64[us]; write [00:00:00.000001, 12:34:56.789999]: the reference,
    like Java and pypaimon, keeps milliseconds of the day."""
    from reference_impl.paimon import writer as W
    from reference_impl.paimon.table import read_table
    from reference_impl.storage import open_storage

    data = pa.table({"t": pa.array([dt.time(0, 0, 0, 1), dt.time(12, 34, 56, 789999)], pa.time64("us"))})
    with tempfile.TemporaryDirectory() as d:
        _create(d, data.schema)
        W.write(open_storage(d), data)
        want = [dt.time(0, 0, 0), dt.time(12, 34, 56, 789000)]
        assert read_table(d).column("t").to_pylist() == want
        assert pypaimon_read(d).column("t").to_pylist() == want
