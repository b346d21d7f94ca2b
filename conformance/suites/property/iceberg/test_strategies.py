"""One-line self-tests of every Iceberg strategy: each draws what it promises (DESIGN.md convention 7)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from conformance.formats.iceberg import strategies as si
from conformance.suites.property.delta._support import examples
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V


@given(st.sampled_from([1, 2, 3]).flatmap(lambda v: st.tuples(st.just(v), si.primitive_types(v))))
def test_primitive_types_self(vt):
    assert T.min_format_version(vt[1]) <= vt[0]


@given(si.decimal_types())
def test_decimal_types_self(t):
    assert 1 <= t.precision <= 38 and 0 <= t.scale <= t.precision


@given(si.fixed_types())
def test_fixed_types_self(t):
    assert t.length >= 1


@given(si.field_names())
def test_field_names_self(n):
    assert isinstance(n, str) and n


@given(si.struct_types(si.primitive_types()))
def test_struct_types_self(t):
    assert len({f.name for f in t.fields}) == len(t.fields)


@given(si.list_types(si.primitive_types()))
def test_list_types_self(t):
    assert isinstance(t, T.ListType)


@given(si.map_types(si.primitive_types(names=("int", "string")), si.primitive_types()))
def test_map_types_self(t):
    assert isinstance(t, T.MapType) and t.key in (T.INT, T.STRING)


@given(st.sampled_from([T.INT, T.LONG, T.DATE, T.TIMESTAMP, T.STRING, T.UUID, T.DecimalType(precision=5, scale=2)]).flatmap(
    lambda t: st.tuples(st.just(t), si.values_for_type(t))))
def test_values_for_type_self(tv):
    assert V.from_bytes(V.to_bytes(tv[1], tv[0]), tv[0]) == tv[1]


@given(si.iceberg_types(3))
def test_iceberg_types_self(t):
    assert T.is_primitive(t) or T.is_nested(t) or t == T.VARIANT


@given(si.schemas(2))
@examples(0.25)
def test_schemas_self(s):
    assert T.validate_schema(s, 2) == []


@given(si.schemas(2).flatmap(lambda s: st.tuples(st.just(s), si.partition_specs(s, 2))))
@examples(0.25)
def test_partition_specs_self(ss):
    assert P.validate_partition_spec(ss[1], ss[0], format_version=2) == []


@given(si.schemas(2).flatmap(lambda s: st.tuples(st.just(s), si.sort_orders(s))))
@examples(0.25)
def test_sort_orders_self(so):
    assert P.validate_sort_order(so[1], so[0]) == []


@given(si.table_metadata())
@examples(0.25)
def test_table_metadata_self(md):
    assert M.validate_metadata(md) == []


@given(si.mutated_metadata())
@examples(0.25)
def test_mutated_metadata_self(case):
    _md, doc, m = case
    assert m.rule.startswith("ICEBERG-") and isinstance(doc, dict)


@given(si.schemas(2).flatmap(lambda s: st.tuples(st.just(s), si.partition_specs(s, 2))).flatmap(
    lambda ss: st.tuples(st.just(ss), si.manifest_entries(ss[1], ss[0], 2))))
@examples(0.25)
def test_manifest_entries_self(case):
    (_schema, spec), entries = case
    assert all({f.field_id for f in spec.fields} == set(e.data_file.partition) for e in entries)


@given(si.manifest_list_entries(2))
def test_manifest_list_entries_self(mfs):
    assert all(m.added_files_count is not None for m in mfs)


@given(si.table_histories())
@examples(0.25)
def test_table_histories_self(h):
    assert len(h.steps) >= 2 and {r["id"] for r in h.final} <= set(range(10**6))
