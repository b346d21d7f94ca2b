"""Primary-key merging (reference_impl.paimon.merge): the merge engines on the docs' own examples."""

from __future__ import annotations

import pyarrow as pa
import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon.merge import MergeSpec, merge

I, UB, UA, D = 0, 1, 2, 3


def records(schema: pa.Schema, *rows: tuple) -> pa.Table:
    """Rows of (values..., sequence number, kind)."""
    names = [*schema.names, "_SEQUENCE_NUMBER", "_VALUE_KIND"]
    cols = list(zip(*rows)) if rows else [[] for _ in names]
    types = [*schema.types, pa.int64(), pa.int8()]
    return pa.table([pa.array(c, t) for c, t in zip(cols, types)], names=names)


def run(schema, options, *rows, key=("k",)):
    spec = MergeSpec.from_options(options, schema.names, key)
    return merge(records(schema, *rows), spec, schema).to_pylist()


KV = pa.schema([("k", pa.int32()), ("v", pa.string())])


@pytest.mark.rule("PAIMON-DATA-003", "PAIMON-DATA-004")
def test_deduplicate_keeps_the_record_with_the_largest_sequence_number():
    got = run(KV, {}, (1, "a", 5, I), (1, "b", 3, I), (2, "x", 1, I), (2, "y", 2, UB), (2, "z", 4, UA))
    assert got == [{"k": 1, "v": "a"}, {"k": 2, "v": "z"}]


@pytest.mark.rule("PAIMON-DATA-003")
def test_a_delete_last_removes_the_key_unless_deletes_are_ignored():
    rows = [(1, "a", 1, I), (1, None, 2, D), (2, "b", 1, I)]
    assert run(KV, {}, *rows) == [{"k": 2, "v": "b"}]
    assert run(KV, {"ignore-delete": "true"}, *rows) == [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}]
    assert run(KV, {"deduplicate.ignore-delete": "true"}, *rows)[0] == {"k": 1, "v": "a"}


def test_equal_sequence_numbers_keep_input_order():
    assert run(KV, {}, (1, "first", 7, I), (1, "second", 7, I)) == [{"k": 1, "v": "second"}]


def test_sequence_field_orders_before_the_sequence_number():
    s = pa.schema([("k", pa.int32()), ("v", pa.string()), ("ts", pa.int64())])
    rows = [(1, "new", 20, 1, I), (1, "old", 10, 2, I)]
    assert run(s, {"sequence.field": "ts"}, *rows) == [{"k": 1, "v": "new", "ts": 20}]
    assert run(s, {"sequence.field": "ts", "sequence.field.sort-order": "descending"}, *rows)[0]["v"] == "old"


def test_rowkind_field_gives_the_kind():
    s = pa.schema([("k", pa.int32()), ("v", pa.string()), ("op", pa.string())])
    got = run(s, {"rowkind.field": "op"}, (1, "a", "+I", 1, I), (1, "a", "-D", 2, I), (2, "b", "+U", 1, I))
    assert got == [{"k": 2, "v": "b", "op": "+U"}]
    with pytest.raises(InvalidTable, match="rowkind.field"):
        run(s, {"rowkind.field": "op"}, (1, "a", "??", 1, I))


def test_first_row_keeps_the_first_and_refuses_retractions():
    assert run(KV, {"merge-engine": "first-row"}, (1, "b", 2, I), (1, "a", 1, I)) == [{"k": 1, "v": "a"}]
    with pytest.raises(InvalidTable, match="first-row"):
        run(KV, {"merge-engine": "first-row"}, (1, "a", 1, I), (1, None, 2, D))
    assert run(KV, {"merge-engine": "first-row", "ignore-delete": "true"}, (1, "a", 1, I), (1, None, 2, D)) == [
        {"k": 1, "v": "a"}]
    with pytest.raises(InvalidTable, match="sequence.field"):
        MergeSpec.from_options({"merge-engine": "first-row", "sequence.field": "v"}, KV.names, ("k",))


def test_partial_update_the_docs_example():
    s = pa.schema([("k", pa.int32()), ("a", pa.float64()), ("b", pa.int32()), ("c", pa.string())])
    got = run(s, {"merge-engine": "partial-update"},
              (1, 23.0, 10, None, 1, I), (1, None, None, "This is a book", 2, I), (1, 25.2, None, None, 3, I))
    assert got == [{"k": 1, "a": 25.2, "b": 10, "c": "This is a book"}]


def test_partial_update_deletes_need_an_option():
    rows = [(1, "a", 1, I), (1, None, 2, D), (1, "b", 3, I)]
    with pytest.raises(InvalidTable, match="partial-update"):
        run(KV, {"merge-engine": "partial-update"}, *rows)
    assert run(KV, {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}, *rows) == [
        {"k": 1, "v": "b"}]
    assert run(KV, {"merge-engine": "partial-update", "ignore-delete": "true"}, *rows) == [{"k": 1, "v": "b"}]
    with pytest.raises(Unsupported):
        MergeSpec.from_options({"merge-engine": "partial-update", "fields.v.sequence-group": "x"}, KV.names, ("k",))


def test_aggregation_the_docs_example_and_defaults():
    s = pa.schema([("product_id", pa.int64()), ("price", pa.float64()), ("sales", pa.int64()), ("note", pa.string())])
    opts = {"merge-engine": "aggregation", "fields.price.aggregate-function": "max",
            "fields.sales.aggregate-function": "sum"}
    got = run(s, opts, (1, 23.0, 15, "x", 1, I), (1, 30.2, 20, None, 2, I), key=("product_id",))
    # note: the default last_non_null_value keeps 'x'
    assert got == [{"product_id": 1, "price": 30.2, "sales": 35, "note": "x"}]


def test_aggregation_retractions():
    s = pa.schema([("k", pa.int32()), ("n", pa.int64()), ("m", pa.int64())])
    opts = {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "fields.m.aggregate-function": "max"}
    with pytest.raises(InvalidTable, match="max"):
        run(s, opts, (1, 5, 5, 1, I), (1, 2, 2, 2, UB))
    got = run(s, {**opts, "fields.m.ignore-retract": "true"}, (1, 5, 5, 1, I), (1, 2, 2, 2, UB), (1, 4, 1, 3, UA))
    assert got == [{"k": 1, "n": 7, "m": 5}]
    removed = run(s, {**opts, "aggregation.remove-record-on-delete": "true"}, (1, 5, 5, 1, I), (1, None, None, 2, D))
    assert removed == []


@pytest.mark.rule("PAIMON-DATA-003", "PAIMON-DATA-004")
def test_a_record_after_a_removing_delete_starts_the_row_afresh():
    """remove-record-on-delete removes the whole row: nothing of the -D record (or of what it removed) carries
    into a later record of the key. Paimon 1.4.1+ builds on the -D's values (finding
    paimon-java-remove-record-on-delete-keeps-deleted-values): ('a', 10, None) and n=13 here."""
    s = pa.schema([("k", pa.int32()), ("a", pa.string()), ("b", pa.int64()), ("c", pa.float64())])
    pu = {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}
    got = run(s, pu, (1, "a", 1, None, 1, I), (1, "a", 1, None, 2, D), (1, None, 10, None, 3, I))
    assert got == [{"k": 1, "a": None, "b": 10, "c": None}]
    agg = pa.schema([("k", pa.int32()), ("n", pa.int64()), ("note", pa.string())])
    opts = {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "aggregation.remove-record-on-delete": "true"}
    got = run(agg, opts, (1, 10, "x", 1, I), (1, 10, "x", 2, D), (1, 3, None, 3, I))
    assert got == [{"k": 1, "n": 3, "note": None}]


@pytest.mark.rule("PAIMON-SCHEMA-010")
def test_aggregation_remove_record_on_delete_refuses_ignore_retract():
    """Paimon refuses aggregation.remove-record-on-delete with fields.<f>.ignore-retract on a column of the table
    (FieldAggregatorFactory: 'conflicting behavior'); on a column the table lacks it conflicts with nothing."""
    s = pa.schema([("k", pa.int32()), ("n", pa.int64()), ("m", pa.int64())])
    opts = {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "fields.m.aggregate-function": "max",
            "aggregation.remove-record-on-delete": "true"}
    with pytest.raises(InvalidTable, match="fields.m.ignore-retract") as exc:
        MergeSpec.from_options({**opts, "fields.m.ignore-retract": "true"}, s.names, ("k",))
    assert exc.value.rule == "PAIMON-SCHEMA-010"
    with pytest.raises(InvalidTable, match="fields.k.ignore-retract"):  # Java builds an aggregator for keys too
        MergeSpec.from_options({**opts, "fields.k.ignore-retract": "TRUE"}, s.names, ("k",))
    MergeSpec.from_options({**opts, "fields.gone.ignore-retract": "true"}, s.names, ("k",))
    MergeSpec.from_options({**opts, "aggregation.remove-record-on-delete": "false", "fields.m.ignore-retract": "true"},
                           s.names, ("k",))
    # partial-update does not read aggregation.remove-record-on-delete
    MergeSpec.from_options({"merge-engine": "partial-update", "aggregation.remove-record-on-delete": "true",
                            "fields.m.ignore-retract": "true"}, s.names, ("k",))


@pytest.mark.parametrize("fn, values, expected", [
    ("product", [2, 3, None], 6),
    ("min", [3, None, 1], 1),
    ("last_value", [1, 2, None], None),
    ("first_value", [None, 2], None),
    ("first_non_null_value", [None, 2, 3], 2),
    ("bool_and", [True, None, False], False),
    ("bool_or", [False, None, True], True),
])
def test_aggregate_functions(fn, values, expected):
    t = pa.bool_() if fn.startswith("bool") else pa.int64()
    s = pa.schema([("k", pa.int32()), ("x", t)])
    rows = [(1, v, i, I) for i, v in enumerate(values)]
    assert run(s, {"merge-engine": "aggregation", "fields.x.aggregate-function": fn}, *rows) == [{"k": 1, "x": expected}]


def test_listagg_collect_and_unknown_functions():
    s = pa.schema([("k", pa.int32()), ("x", pa.string())])
    opts = {"merge-engine": "aggregation", "fields.x.aggregate-function": "listagg", "fields.x.list-agg-delimiter": ";"}
    assert run(s, opts, (1, "a", 1, I), (1, None, 2, I), (1, "b", 3, I)) == [{"k": 1, "x": "a;b"}]
    assert run(s, {**opts, "fields.x.distinct": "true"}, (1, "a", 1, I), (1, "a;b", 2, I)) == [{"k": 1, "x": "a;b"}]
    arr = pa.schema([("k", pa.int32()), ("x", pa.list_(pa.int32()))])
    got = run(arr, {"merge-engine": "aggregation", "fields.x.aggregate-function": "collect", "fields.x.distinct": "true"},
              (1, [1, 2], 1, I), (1, [2, 3], 2, I))
    assert got == [{"k": 1, "x": [1, 2, 3]}]
    with pytest.raises(Unsupported, match="hll_sketch"):
        MergeSpec.from_options({"merge-engine": "aggregation", "fields.v.aggregate-function": "hll_sketch"}, KV.names, ("k",))
    with pytest.raises(Unsupported, match="merge-engine"):
        MergeSpec.from_options({"merge-engine": "bogus"}, KV.names, ("k",))
