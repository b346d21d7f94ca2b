"""RowReader (the validator's column-wise Arrow to Python conversion) gives what to_pylist gives.

Random nested schemas (structs, lists, large lists, maps, with nulls at every level), tables in
several chunks and sliced, against ``Table.to_pylist`` with the map fields the reader was asked to
turn into dicts turned into dicts. Rows repeated within and across tables must come back as one
object, since the Delta validator caches per-row verdicts by identity.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from hypothesis import given, strategies as st

from reference_impl.common.arrow_rows import RowReader

DICT_MAPS = {"tags", "m"}

LEAVES = [
    (pa.int32(), st.integers(-2**31, 2**31 - 1)),
    (pa.int64(), st.integers(-2**63, 2**63 - 1)),
    (pa.bool_(), st.booleans()),
    (pa.float64(), st.floats(allow_nan=True)),
    (pa.string(), st.text(max_size=5)),
    (pa.binary(), st.binary(max_size=5)),
    (pa.decimal128(20, 3), st.decimals(min_value=-10**10, max_value=10**10, places=3)),
    (pa.timestamp("us", tz="UTC"), st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1),
                                                 timezones=st.just(dt.timezone.utc))),
    (pa.date32(), st.dates(min_value=dt.date(1, 1, 1))),
]
NAMES = st.sampled_from(["a", "b", "tags", "m", "path", "x"])


@st.composite
def typed(draw, depth: int = 0):
    """(arrow type, strategy of Python values of that type, nulls included)."""
    kinds = ["leaf"] if depth >= 3 else ["leaf", "struct", "list", "large_list", "map"]
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        t, values = draw(st.sampled_from(LEAVES))
    elif kind == "struct":
        names = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
        children = [draw(typed(depth + 1)) for _ in names]
        t = pa.struct([(n, c[0]) for n, c in zip(names, children)])
        values = st.fixed_dictionaries({n: c[1] for n, c in zip(names, children)})
    elif kind in ("list", "large_list"):
        et, ev = draw(typed(depth + 1))
        t = pa.list_(et) if kind == "list" else pa.large_list(et)
        values = st.lists(ev, max_size=3)
    else:
        vt, vv = draw(typed(depth + 1))
        t = pa.map_(pa.string(), vt)
        values = st.lists(st.tuples(st.text(max_size=2), vv), max_size=3)
    return t, st.one_of(st.none(), values)


@st.composite
def tables(draw):
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    cols = [draw(typed()) for _ in names]
    schema = pa.schema([(n, c[0]) for n, c in zip(names, cols)])
    chunks = []
    for _ in range(draw(st.integers(1, 3))):
        rows = draw(st.lists(st.fixed_dictionaries({n: c[1] for n, c in zip(names, cols)}), max_size=6))
        chunks.append(pa.Table.from_pylist(rows, schema=schema))
    table = pa.concat_tables(chunks)
    lo = draw(st.integers(0, table.num_rows))
    return table.slice(lo, draw(st.integers(0, table.num_rows - lo)))


def expected(v, t: pa.DataType, key=None):
    """to_pylist's value with the reader's dict maps made dicts (maps inside lists stay pairs); by the Arrow
    type, since an empty list and an empty map look alike in to_pylist's answer."""
    if v is None:
        return None
    if pa.types.is_struct(t):
        return {f.name: expected(v[f.name], f.type, f.name) for f in t}
    if pa.types.is_map(t) and key in DICT_MAPS:
        return {k: x for k, x in v}
    return v


@given(tables())
def test_rows_equal_to_pylist(table):
    got = RowReader(DICT_MAPS).rows(table)
    want = [{f.name: expected(r[f.name], f.type, f.name) for f in table.schema} for r in table.to_pylist()]
    # repr, because NaN is not equal to itself
    assert repr(got) == repr(want)


@given(tables())
def test_repeated_rows_are_one_object(table):
    reader = RowReader(DICT_MAPS)
    first = reader.rows(table)
    again = reader.rows(pa.concat_tables([table, table]))
    for i, row in enumerate(first):
        if "nan" in repr(row):
            continue  # NaN is not equal to itself, so such a row is never found again
        assert again[i] is row and again[i + len(first)] is row
