"""Hudi schema evolution in the reference (reference_impl.hudi.evolution and the writer/reader using it): every
cell of the seed page's on-write type promotion table (HUDI-PROMO-001..036, end to end through the writer and
the reader, COW and MOR), every cell of the ALTER COLUMN TYPE matrix (HUDI-CHG-001..051), and the on-write
evolution rows (HUDI-EVOL-*) the writer can show. Tables the reference writes for PROMO cells are also read with
hudi-rs (``hudi`` 0.5.0) when importable; its disagreements are strict xfails (``HUDI_RS_DISAGREES``)."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import evolution as EV
from reference_impl.hudi import properties as P
from reference_impl.hudi import table as H
from reference_impl.hudi import timeline as T
from reference_impl.hudi import writer as W
from reference_impl.storage import LocalStorage

try:
    import hudi as HRS
except ImportError:  # pragma: no cover - depends on the environment
    HRS = None

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
TYPES = {"int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
         "string": pa.string(), "bytes": pa.binary(), "decimal": pa.decimal128(10, 2), "date": pa.date32()}
DEC = pa.decimal128(20, 4)  # the ALTER target decimal: wide enough for every source value but 1e300

# ---------------------------------------------------------------------------------------------
# Helpers


def _schema(vtype: pa.DataType) -> pa.Schema:
    return pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", vtype)])


def _rows(vtype: pa.DataType, items) -> pa.Table:
    return pa.Table.from_pylist([{"id": k, "ts": t, "v": v} for k, t, v in items], schema=_schema(vtype))


def _create(root: str, vtype: pa.DataType, table_type: str = COW, version: int = 9) -> str:
    W.create_table(root, _schema(vtype), record_key="id", ordering_fields="ts", table_type=table_type,
                   table_version=version)
    return root


def _completed(root: str) -> list[str]:
    st = LocalStorage(root)
    return [i.requested_time for i in T.load_active_timeline(st, P.read_table_config(st)).completed()]


def _timeline_files(root: str) -> list[str]:
    """Every file of the table (timeline and data): a refused write leaves them as they were."""
    return sorted(f.path for f in LocalStorage(root).walk(""))


def _read(root: str, col: str = "v") -> tuple[pa.DataType, dict]:
    t = H.read_table(root, meta_columns=False)
    return t.schema.field(col).type, {r["id"]: r[col] for r in t.to_pylist()}


def _f32(x: float) -> float:
    return float(np.float32(x))


# ---------------------------------------------------------------------------------------------
# HUDI-PROMO: the on-write promotion table, cell by cell

KINDS = ("int", "long", "float", "double", "string", "bytes")
# The seed page's "Type Promotions" chart, row = incoming, column = table; X = rejected.
SEED_PROMOTIONS = """
int     int     long    float   double  string  X
long    long    long    float   double  string  X
float   float   float   float   double  string  X
double  double  double  double  double  string  X
string  string  string  string  string  string  bytes
bytes   X       X       X       X       string  bytes
"""
PROMO = {}
for _r, _line in enumerate(SEED_PROMOTIONS.split("\n")[1:-1]):
    _cells = _line.split()
    for _c, _res in enumerate(_cells[1:]):
        PROMO[(_cells[0], KINDS[_c])] = (f"HUDI-PROMO-{_r * 6 + _c + 1:03d}", None if _res == "X" else _res)

# Values: the table's old rows (k1 later updated, k2 kept) and the incoming batch's value (k1 update, k3 new).
OLD = {"int": [7, -7], "long": [-3, 2**40 + 1], "float": [1.5, 1.1], "double": [0.1, 1e300], "string": ["x", "12"],
       "bytes": [b"ab", b"cd"]}
NEW = {"int": 42, "long": 2**41 + 1, "float": 2.2, "double": 1e-5, "string": "y", "bytes": b"zz"}
# What Java's HoodieAvroUtils.rewritePrimaryTypeWithDiffSchemaType makes of these values.
JAVA_TEXT = {1.5: "1.5", 1.1: "1.1", 2.2: "2.2", 1e300: "1.0E300", 0.1: "0.1", 1e-5: "1.0E-5"}  # Arrow: 1e+300


def expected_value(value, src: str, dst: str):
    """A value of kind ``src`` converted to kind ``dst`` (independent of the module under test)."""
    if src == dst:
        return _f32(value) if src == "float" else value
    if dst == "string":
        if src == "bytes":
            return value.decode()
        return JAVA_TEXT[value] if src in ("float", "double") else str(value)
    if dst == "bytes":
        return value.encode()
    if dst == "float":
        return _f32(value)
    if dst == "double":
        return float(JAVA_TEXT[value]) if src == "float" else float(value)  # float -> double via Float.toString
    if dst == "long":
        return value
    raise AssertionError(f"no conversion {src} -> {dst}")


# Cells where hudi-rs 0.5.0 reads the reference's table differently: (rule, table type) -> reason.
# Filled from runs of test_promo_hudi_rs_reads_the_same; each is a strict xfail.
HUDI_RS_DISAGREES: dict[tuple[str, str], str] = {}

_built: dict[tuple[str, str, str], tuple[str, str | None, list[str]]] = {}


def _build_promo(base, inc: str, tab: str, table_type: str):
    """The PROMO table for (incoming, table) kinds: created with two rows of the table type, then an upsert of the
    incoming type (k1 updated, k3 new). Returns (root, error message or None, completed instants before)."""
    key = (inc, tab, table_type)
    if key not in _built:
        root = _create(str(base / f"{inc}-into-{tab}-{table_type[0]}"), TYPES[tab], table_type)
        # Two inserts: k2 in a file group of its own that the later upsert leaves alone (COW and MOR), so that
        # its value is read from a file of the old type, converted on read.
        W.insert(root, _rows(TYPES[tab], [("k1", 1, OLD[tab][0])]))
        W.insert(root, _rows(TYPES[tab], [("k2", 1, OLD[tab][1])]))
        before = _completed(root)
        files_before = _timeline_files(root)
        error = None
        try:
            W.upsert(root, _rows(TYPES[inc], [("k1", 2, NEW[inc]), ("k3", 2, NEW[inc])]))
        except Unsupported as exc:
            error = (str(exc), exc.rule)
            assert _timeline_files(root) == files_before  # nothing left behind
        _built[key] = (root, error, before)
    return _built[key]


def _promo_params(with_types: bool):
    out = []
    for (inc, tab), (rule, res) in PROMO.items():
        for tt in (COW, MOR) if with_types else (COW,):
            marks = [pytest.mark.rule(rule)]
            if res is not None:
                marks += [pytest.mark.rule("HUDI-EVOL-006")]
                marks += [pytest.mark.rule("HUDI-EVOL-015" if res != tab else "HUDI-EVOL-016")] if res != inc or \
                    inc != tab else []
            out.append(pytest.param(inc, tab, tt, res, id=f"{rule}-{inc}-into-{tab}-{tt[0]}", marks=marks))
    return out


@pytest.fixture(scope="module")
def promo_base(tmp_path_factory):
    return tmp_path_factory.mktemp("promo")


@pytest.mark.parametrize("inc,tab,table_type,result", _promo_params(True))
def test_promotion_cell(promo_base, inc, tab, table_type, result):
    expect = EV.on_write_type(TYPES[inc], TYPES[tab])
    assert expect == (None if result is None else TYPES[result])
    root, error, before = _build_promo(promo_base, inc, tab, table_type)
    vtype, got = _read(root)
    if result is None:
        assert error is not None and error[1] == PROMO[(inc, tab)][0], error
        assert _completed(root) == before  # no new completed instant
        assert vtype == TYPES[tab]
        assert got == {"k1": expected_value(OLD[tab][0], tab, tab), "k2": expected_value(OLD[tab][1], tab, tab)}
        return
    assert error is None
    assert len(_completed(root)) == len(before) + 1
    assert vtype == TYPES[result]  # the table's column after the write (promoted, or unchanged)
    assert got == {"k1": expected_value(NEW[inc], inc, result), "k2": expected_value(OLD[tab][1], tab, result),
                   "k3": expected_value(NEW[inc], inc, result)}


def _hudi_rs_params():
    out = []
    for p in _promo_params(True):
        inc, tab, tt, res = p.values
        if res is None:
            continue
        rule = PROMO[(inc, tab)][0]
        marks = list(p.marks)
        reason = HUDI_RS_DISAGREES.get((rule, tt))
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(inc, tab, tt, res, id=p.id, marks=marks))
    return out


@pytest.mark.parametrize("inc,tab,table_type,result", _hudi_rs_params())
def test_promo_hudi_rs_reads_the_same(promo_base, inc, tab, table_type, result):
    if HRS is None:
        if os.environ.get("LAKECONF_REQUIRE_ENGINES"):
            pytest.fail("hudi-rs (pip package hudi) is required (LAKECONF_REQUIRE_ENGINES is set) but not importable")
        pytest.skip("hudi-rs not importable (pip install hudi==0.5.0)")
    root, _, _ = _build_promo(promo_base, inc, tab, table_type)
    ref = H.read_table(root, meta_columns=False)
    batches = HRS.HudiTable(root).read(HRS.HudiReadOptions())
    got = pa.Table.from_batches(batches)
    assert got.schema.field("v").type == ref.schema.field("v").type
    assert sorted((r["id"], r["v"]) for r in got.to_pylist()) == sorted((r["id"], r["v"]) for r in ref.to_pylist())


# ---------------------------------------------------------------------------------------------
# HUDI-CHG: the ALTER COLUMN TYPE matrix, cell by cell

CHG_ROWS = ("int", "long", "float", "double", "decimal", "string", "date")
CHG_COLS = ("long", "float", "double", "string", "decimal", "date", "int")
SEED_CHANGES = """
int     Y Y Y Y Y N Y
long    Y Y Y Y Y N N
float   N Y Y Y Y N N
double  N N Y Y Y N N
decimal N N N Y Y N N
string  N N N Y Y Y N
date    N N N Y N Y N
"""
CHG = {}
for _r, _line in enumerate(SEED_CHANGES.split("\n")[1:-1]):
    _cells = _line.split()
    for _c, _yn in enumerate(_cells[1:]):
        CHG[(_cells[0], CHG_COLS[_c])] = (f"HUDI-CHG-{_r * 7 + _c + 1:03d}", _yn == "Y")

CHG_OLD = {"int": [7, -7], "long": [2**40, -3], "float": [1.5, 1.1], "double": [2.5, 1e300],
           "decimal": [Decimal("1.50"), Decimal("-0.25")], "string": ["2024-01-02", "12.345", "x"],
           "date": [dt.date(2024, 1, 2), dt.date(1999, 12, 31)], "bytes": [b"ab", b"cd"]}
CHG_NEW = {"int": 5, "long": 6, "float": 0.5, "double": 0.25, "string": "s", "decimal": Decimal("3.1416"),
           "date": dt.date(2000, 2, 29), "bytes": b"b"}
# Old rows read after ALTER (Java's conversions; DEC = decimal(20, 4) as the decimal target).
CHG_EXPECT = {
    ("int", "long"): [7, -7], ("int", "float"): [7.0, -7.0], ("int", "double"): [7.0, -7.0],
    ("int", "string"): ["7", "-7"], ("int", "decimal"): [Decimal("7.0000"), Decimal("-7.0000")],
    ("long", "float"): [_f32(2**40), -3.0], ("long", "double"): [float(2**40), -3.0],
    ("long", "string"): [str(2**40), "-3"], ("long", "decimal"): [Decimal(2**40), Decimal(-3)],
    ("float", "double"): [1.5, 1.1], ("float", "string"): ["1.5", "1.1"],
    ("float", "decimal"): [Decimal("1.5"), Decimal("1.1")],
    ("double", "string"): ["2.5", "1.0E300"], ("double", "decimal"): [Decimal("2.5"), None],  # 1e300: too wide
    ("decimal", "string"): ["1.50", "-0.25"], ("decimal", "decimal"): [Decimal("1.50"), Decimal("-0.25")],
    ("string", "decimal"): [None, Decimal("12.345"), None], ("string", "date"): [dt.date(2024, 1, 2), None, None],
    ("date", "string"): ["2024-01-02", "1999-12-31"],
    ("string", "bytes"): [b"2024-01-02", b"12.345", b"x"], ("bytes", "string"): ["ab", "cd"],
}


def _target(kind: str) -> pa.DataType:
    return DEC if kind == "decimal" else TYPES[kind]


def _check_alter(tmp_path, src: pa.DataType, dst: pa.DataType, allowed: bool, rule: str, old, new, expect):
    root = _create(str(tmp_path / "t"), src)
    W.insert(root, _rows(src, [(f"k{i}", 1, v) for i, v in enumerate(old)]))
    before = _completed(root)
    if src == dst:
        # A no-op ALTER: the reference's change_column_type refuses it as such (nothing to record); the data stays.
        with pytest.raises(InvalidTable, match="already"):
            W.change_column_type(root, "v", dst)
    elif not allowed:
        with pytest.raises(Unsupported, match="not a promotion") as err:
            W.change_column_type(root, "v", dst)
        assert err.value.rule == rule
    else:
        W.change_column_type(root, "v", dst)
        W.insert(root, _rows(dst, [("new", 2, new)]))
    vtype, got = _read(root)
    if src == dst or not allowed:
        assert _completed(root) == before and vtype == src
        assert got == {f"k{i}": (_f32(v) if pa.types.is_float32(src) else v) for i, v in enumerate(old)}
        return
    assert vtype == dst
    assert got == {**{f"k{i}": v for i, v in enumerate(expect)}, "new": new}


def _chg_params():
    out = []
    for (src, dst), (rule, yn) in CHG.items():
        out.append(pytest.param(src, dst, yn, id=f"{rule}-{src}-to-{dst}",
                                marks=[pytest.mark.rule(rule), pytest.mark.rule("HUDI-EVOLR-012")]))
    return out


@pytest.mark.parametrize("src,dst,allowed", _chg_params())
def test_alter_type_cell(tmp_path, src, dst, allowed):
    rule = CHG[(src, dst)][0]
    s, d = TYPES[src], _target(dst)
    if src == dst == "decimal":
        d = DEC  # decimal(10,2) -> decimal(20,4): a widening (HUDI-CHG-033)
    assert EV.alter_type_allowed(s, d) is allowed
    assert EV.alter_rule(s, d) == rule
    new = CHG_NEW[dst] if dst != "float" else _f32(CHG_NEW[dst])
    _check_alter(tmp_path, s, d if src != dst or src == "decimal" else s, allowed, rule, CHG_OLD[src], new,
                 CHG_EXPECT.get((src, dst)))


@pytest.mark.rule("HUDI-CHG-033")
@pytest.mark.parametrize("p2,s2,ok", [(12, 2, True), (12, 4, True), (10, 2, True), (11, 3, True), (20, 4, True),
                                      (9, 2, False), (12, 1, False), (10, 3, False), (8, 1, False)])
def test_decimal_widening(tmp_path, p2, s2, ok):
    src, dst = pa.decimal128(10, 2), pa.decimal128(p2, s2)
    assert EV.alter_type_allowed(src, dst) is ok
    assert EV.decimal_wider_than(p2, s2, 10, 2) is (p2 - s2 >= 8 and s2 > 2)
    if (p2, s2) in ((12, 4), (9, 2)):  # one accepted and one refused change end to end; old values exact
        old = [Decimal("12345678.90"), Decimal("-0.01")]
        _check_alter(tmp_path, src, dst, ok, "HUDI-CHG-033", old, Decimal("1.2345"), old)


@pytest.mark.rule("HUDI-CHG-050")
@pytest.mark.parametrize("src,dst", [("string", "bytes"), ("bytes", "string")])
def test_binary_string_changes(tmp_path, src, dst):
    """Not in the page's matrix; Hudi 1.x's SchemaChangeUtils allows both, and so does the reference."""
    assert EV.alter_type_allowed(TYPES[src], TYPES[dst]) is True
    assert EV.alter_rule(TYPES[src], TYPES[dst]) == "HUDI-CHG-050"
    _check_alter(tmp_path, TYPES[src], TYPES[dst], True, "HUDI-CHG-050", CHG_OLD[src], CHG_NEW[dst],
                 CHG_EXPECT[(src, dst)])


@pytest.mark.rule("HUDI-CHG-051")
@pytest.mark.rule("HUDI-EVOLR-013")
def test_nested_types_do_not_change_type(tmp_path):
    st = pa.struct([("a", pa.int32())])
    for cur, tgt in [(st, pa.struct([("a", pa.int64())])), (pa.list_(pa.int32()), pa.list_(pa.int64())),
                     (pa.map_(pa.string(), pa.int32()), pa.map_(pa.string(), pa.int64())), (st, pa.string()),
                     (pa.string(), st)]:
        assert EV.alter_type_allowed(cur, tgt) is False
        assert EV.alter_rule(cur, tgt) == "HUDI-CHG-051"
    root = _create(str(tmp_path / "t"), st)
    W.insert(root, _rows(st, [("k1", 1, {"a": 1})]))
    before = _completed(root)
    with pytest.raises(Unsupported, match="not a promotion") as err:
        W.change_column_type(root, "v", pa.struct([("a", pa.binary())]))  # no leaf change Hudi allows
    assert err.value.rule == "HUDI-CHG-051"
    with pytest.raises(Unsupported):
        W.change_column_type(root, "v", pa.string())
    assert _completed(root) == before


# ---------------------------------------------------------------------------------------------
# Java spellings and conversions


@pytest.mark.rule("HUDI-PROMO-017")
@pytest.mark.rule("HUDI-PROMO-023")
@pytest.mark.parametrize("value,double,float_", [
    (1.5, "1.5", "1.5"), (100.0, "100.0", "100.0"), (1e300, "1.0E300", "Infinity"), (1e7, "1.0E7", "1.0E7"),
    (9999999.0, "9999999.0", "9999999.0"), (12345678.0, "1.2345678E7", "1.2345678E7"), (1e-3, "0.001", "0.001"), (1e-4, "1.0E-4", "1.0E-4"), (0.1, "0.1", "0.1"),
    (-2.5e-10, "-2.5E-10", "-2.5E-10"), (123456.789, "123456.789", "123456.79"), (0.0, "0.0", "0.0"),
    (-0.0, "-0.0", "-0.0"), (float("nan"), "NaN", "NaN"), (float("-inf"), "-Infinity", "-Infinity"),
    (1.1, "1.1", "1.1"), (2.0**60, "1.152921504606847E18", "1.1529215E18"),
])
def test_java_spelling_of_floats(value, double, float_):
    assert EV.java_double_to_string(value) == double
    assert EV.java_float_to_string(value) == float_


@pytest.mark.rule("HUDI-CHG-041")
@pytest.mark.rule("HUDI-CHG-040")
def test_string_conversions_read_unparseable_text_as_null():
    got = EV.convert(pa.array(["2024-1-2", " 2024-02-29 ", "2023-02-29", "x", None, "2024-01-02T00:00"]), pa.date32())
    assert got.to_pylist() == [dt.date(2024, 1, 2), dt.date(2024, 2, 29), None, None, None, None]
    got = EV.convert(pa.array(["1.005", "-2", "1e2", "abc", "123456789012"]), pa.decimal128(10, 2))
    assert got.to_pylist() == [Decimal("1.01"), Decimal("-2.00"), Decimal("100.00"), None, None]


@pytest.mark.rule("HUDI-EVOL-017")
def test_convert_nested_values():
    arr = pa.array([[1, None], None, []], pa.list_(pa.int32())).slice(0, 3)
    assert EV.convert(arr, pa.list_(pa.string())).to_pylist() == [["1", None], None, []]
    m = pa.array([[("a", 1.5)], None], pa.map_(pa.string(), pa.float32()))
    assert EV.convert(m, pa.map_(pa.string(), pa.string())).to_pylist() == [[("a", "1.5")], None]
    s = pa.array([{"a": 1}, None], pa.struct([("a", pa.int32())]))
    out = EV.convert(s, pa.struct([("a", pa.int64()), ("b", pa.string())]))
    assert out.to_pylist() == [{"a": 1, "b": None}, None]
    with pytest.raises(InvalidTable):
        EV.convert(pa.array([b"\xff"]), pa.string())  # bytes that are not UTF-8


# ---------------------------------------------------------------------------------------------
# HUDI-EVOL: on-write evolution through the writer


@pytest.mark.rule("HUDI-EVOL-001")
@pytest.mark.parametrize("table_type", (COW, MOR))
def test_add_nullable_column_last(tmp_path, table_type):
    root = _create(str(tmp_path / "t"), pa.int32(), table_type)
    W.insert(root, _rows(pa.int32(), [("k1", 1, 1)]))
    W.add_column(root, pa.field("extra", pa.string()))
    W.upsert(root, pa.table({"id": ["k2"], "ts": [2], "v": pa.array([2], pa.int32()), "extra": ["e"]}))
    t = H.read_table(root, meta_columns=False)
    assert t.column_names == ["id", "ts", "v", "extra"]
    assert sorted(t.select(["id", "extra"]).to_pylist(), key=lambda r: r["id"]) == \
        [{"id": "k1", "extra": None}, {"id": "k2", "extra": "e"}]


@pytest.mark.rule("HUDI-EVOL-002")
@pytest.mark.rule("HUDI-EVOL-007")
@pytest.mark.parametrize("table_type", (COW, MOR))
def test_struct_field_appended_and_promoted_by_a_write(tmp_path, table_type):
    old = pa.struct([("a", pa.int32())])
    new = pa.struct([("a", pa.int64()), ("b", pa.string())])
    assert EV.on_write_type(new, old) == new
    root = _create(str(tmp_path / "t"), old, table_type)
    W.insert(root, _rows(old, [("k1", 1, {"a": 1}), ("k2", 1, {"a": 2})]))
    W.upsert(root, _rows(new, [("k1", 2, {"a": 2**40, "b": "x"}), ("k3", 2, {"a": 3, "b": None})]))
    vtype, got = _read(root)
    assert vtype == new
    assert got == {"k1": {"a": 2**40, "b": "x"}, "k2": {"a": 2, "b": None}, "k3": {"a": 3, "b": None}}


@pytest.mark.rule("HUDI-EVOL-003")
def test_add_complex_column(tmp_path):
    root = _create(str(tmp_path / "t"), pa.int32())
    W.insert(root, _rows(pa.int32(), [("k1", 1, 1)]))
    W.add_column(root, pa.field("m", pa.map_(pa.string(), pa.int32())))
    W.add_column(root, pa.field("xs", pa.list_(pa.int32())))
    t = H.read_table(root, meta_columns=False)
    assert t.to_pylist() == [{"id": "k1", "ts": 1, "v": 1, "m": None, "xs": None}]


@pytest.mark.rule("HUDI-EVOL-004")
def test_new_struct_field_before_existing_ones_is_refused(tmp_path):
    old = pa.struct([("a", pa.int32()), ("b", pa.int32())])
    reordered = pa.struct([("a", pa.int32()), ("new", pa.string()), ("b", pa.int32())])
    assert EV.on_write_type(reordered, old) is None
    root = _create(str(tmp_path / "t"), old)
    W.insert(root, _rows(old, [("k1", 1, {"a": 1, "b": 2})]))
    files = _timeline_files(root)
    with pytest.raises(Unsupported) as err:
        W.upsert(root, _rows(reordered, [("k1", 2, {"a": 1, "new": "x", "b": 2})]))
    assert err.value.rule == "HUDI-EVOL-004" and _timeline_files(root) == files


@pytest.mark.rule("HUDI-EVOL-005")
@pytest.mark.parametrize("table_type", (COW, MOR))
def test_meta_prefixed_column(tmp_path, table_type):
    root = _create(str(tmp_path / "t"), pa.int32(), table_type)
    W.insert(root, _rows(pa.int32(), [("k1", 1, 1)]))
    W.add_column(root, pa.field("_hoodie_meta_col", pa.string()))
    W.upsert(root, pa.table({"id": ["k1", "k2"], "ts": [2, 2], "v": pa.array([1, 2], pa.int32()),
                             "_hoodie_meta_col": ["m", None]}))
    _, got = _read(root, "_hoodie_meta_col")
    assert got == {"k1": "m", "k2": None}


@pytest.mark.rule("HUDI-EVOL-008")
@pytest.mark.rule("HUDI-EVOL-017")
@pytest.mark.rule("HUDI-EVOL-013")
@pytest.mark.parametrize("table_type", (COW, MOR))
def test_promotions_inside_arrays_and_maps(tmp_path, table_type):
    # array<int> table, array<long> batch: promoted (EVOL-008/015)
    root = _create(str(tmp_path / "a"), pa.list_(pa.int32()), table_type)
    W.insert(root, _rows(pa.list_(pa.int32()), [("k1", 1, [1, None]), ("k2", 1, None)]))
    W.upsert(root, _rows(pa.list_(pa.int64()), [("k3", 2, [2**40])]))
    vtype, got = _read(root)
    assert EV.normalized(vtype) == pa.list_(pa.int64())
    assert got == {"k1": [1, None], "k2": None, "k3": [2**40]}
    # map<string,long> table, map<string,int> batch: the value type stays long (EVOL-013/016)
    mt = pa.map_(pa.string(), pa.int64())
    root = _create(str(tmp_path / "m"), mt, table_type)
    W.insert(root, _rows(mt, [("k1", 1, [("a", 2**40)])]))
    W.upsert(root, _rows(pa.map_(pa.string(), pa.int32()), [("k2", 2, [("b", 1)])]))
    vtype, got = _read(root)
    assert EV.normalized(vtype) == EV.normalized(mt)
    assert got == {"k1": [("a", 2**40)], "k2": [("b", 1)]}
    # array<float> table, array<bytes> batch: an X cell inside the array
    ft = pa.list_(pa.float32())
    root = _create(str(tmp_path / "x"), ft, table_type)
    W.insert(root, _rows(ft, [("k1", 1, [1.5])]))
    with pytest.raises(Unsupported) as err:
        W.upsert(root, _rows(pa.list_(pa.binary()), [("k2", 2, [b"x"])]))
    assert err.value.rule == "HUDI-PROMO-033"


@pytest.mark.rule("HUDI-EVOL-009")
@pytest.mark.rule("HUDI-EVOL-010")
def test_non_nullable_additions_are_refused(tmp_path):
    old = pa.struct([("a", pa.int32())])
    required = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string(), nullable=False)])
    assert EV.on_write_type(required, old) is None
    root = _create(str(tmp_path / "t"), old)
    W.insert(root, _rows(old, [("k1", 1, {"a": 1})]))
    files = _timeline_files(root)
    with pytest.raises(Unsupported, match="non-nullable") as err:
        W.upsert(root, _rows(required, [("k1", 2, {"a": 1, "b": "x"})]))
    assert err.value.rule == "HUDI-EVOL-010"
    with pytest.raises(Unsupported, match="non-nullable") as err:
        W.add_column(root, pa.field("req", pa.int32(), nullable=False))
    assert err.value.rule == "HUDI-EVOL-009"
    assert _timeline_files(root) == files


@pytest.mark.rule("HUDI-EVOL-011")
@pytest.mark.rule("HUDI-EVOL-012")
@pytest.mark.rule("HUDI-EVOL-016")
@pytest.mark.parametrize("vtype,narrow,value", [
    (pa.int64(), pa.int32(), 5),
    (pa.struct([("a", pa.int64())]), pa.struct([("a", pa.int32())]), {"a": 5}),
    (pa.list_(pa.int64()), pa.list_(pa.int32()), [5]),
], ids=["root", "struct-field", "array-element"])
def test_demotion_never_happens(tmp_path, vtype, narrow, value):
    root = _create(str(tmp_path / "t"), vtype)
    W.insert(root, _rows(vtype, [("k1", 1, value)]))
    W.upsert(root, _rows(narrow, [("k2", 2, value)]))  # a narrower batch: converted, the table stays wide
    got_type, got = _read(root)
    assert EV.normalized(got_type) == EV.normalized(vtype) and got == {"k1": value, "k2": value}
    before = _completed(root)
    with pytest.raises(Unsupported, match="not a promotion"):
        W.change_column_type(root, "v", narrow)  # forcing the demotion
    assert _completed(root) == before


@pytest.mark.rule("HUDI-EVOL-014")
def test_missing_columns_are_refused(tmp_path):
    st = pa.struct([("a", pa.int32()), ("b", pa.int32())])
    root = _create(str(tmp_path / "t"), st)
    W.insert(root, _rows(st, [("k1", 1, {"a": 1, "b": 2})]))
    with pytest.raises(InvalidTable, match="lack"):
        W.upsert(root, pa.table({"id": ["k1"], "ts": [2]}))
    with pytest.raises(Unsupported, match="lacks field") as err:
        W.upsert(root, _rows(pa.struct([("a", pa.int32())]), [("k1", 2, {"a": 1})]))
    assert err.value.rule == "HUDI-EVOL-014"
    assert len(_completed(root)) == 1


@pytest.mark.rule("HUDI-EVOL-018")
def test_no_rename_and_no_nested_meta_fields_on_write(tmp_path):
    st = pa.struct([("a", pa.int32())])
    root = _create(str(tmp_path / "t"), st)
    W.insert(root, _rows(st, [("k1", 1, {"a": 1})]))
    renamed = pa.table({"id": ["k1"], "ts": [2], "w": pa.array([{"a": 1}], st)})
    with pytest.raises(InvalidTable):
        W.upsert(root, renamed)  # "v" renamed to "w": not a rename, refused (no implicit drop + add)
    meta = pa.struct([("a", pa.int32()), ("_hoodie_x", pa.string())])
    with pytest.raises(Unsupported) as err:
        W.upsert(root, _rows(meta, [("k1", 2, {"a": 1, "_hoodie_x": "m"})]))
    assert err.value.rule == "HUDI-EVOL-018"
    assert len(_completed(root)) == 1


@pytest.mark.rule("HUDI-EVOL-015")
@pytest.mark.parametrize("version", (6, 8))
def test_promotion_recorded_in_the_commit_schema_of_older_versions(tmp_path, version):
    root = _create(str(tmp_path / "t"), pa.int32(), MOR, version)
    W.insert(root, _rows(pa.int32(), [("k1", 1, 1), ("k2", 1, 2)]))
    W.upsert(root, _rows(pa.float64(), [("k1", 2, 0.5)]))
    vtype, got = _read(root)
    assert vtype == pa.float64() and got == {"k1": 0.5, "k2": 2.0}


def test_key_and_ordering_columns_keep_their_type(tmp_path):
    root = _create(str(tmp_path / "t"), pa.int32())
    W.insert(root, _rows(pa.int32(), [("k1", 1, 1)]))
    W.upsert(root, pa.table({"id": ["k2"], "ts": pa.array([2], pa.int32()), "v": pa.array([2], pa.int32())}))
    assert H.read_table(root, meta_columns=False).schema.field("ts").type == pa.int64()
    with pytest.raises(InvalidTable, match="does not convert"):
        W.upsert(root, pa.table({"id": ["k3"], "ts": ["x"], "v": pa.array([3], pa.int32())}))


@pytest.mark.rule("HUDI-EVOL-015")
@pytest.mark.parametrize("block_format", ("avro", "parquet"))
def test_promotion_over_older_mor_log_blocks(tmp_path, block_format):
    """MOR log blocks keep the type they were written with; Avro and Parquet blocks both read converted to the
    promoted type (each block read by its own writer schema, then conformed to the table's)."""
    root = str(tmp_path / "t")
    W.create_table(root, _schema(pa.int32()), record_key="id", ordering_fields="ts", table_type=MOR,
                   log_block_format=block_format)
    W.insert(root, _rows(pa.int32(), [("k1", 1, 1)]))
    W.upsert(root, _rows(pa.int32(), [("k1", 2, 2)]))  # a log block of int values
    W.upsert(root, _rows(pa.string(), [("k2", 3, "s")]))
    assert _read(root) == (pa.string(), {"k1": "2", "k2": "s"})
