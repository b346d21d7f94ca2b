"""One-line self-tests of every strategy: each draws what it promises (DESIGN.md convention 7)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from conformance.strategies import arrow as sa
from conformance.formats.delta import strategies as sd
from reference_impl.delta.schema import ArrayType, DecimalType, MapType, PrimitiveType, StructType

# ---- arrow leaves ---------------------------------------------------------------------------


@given(sa.leaf_arrow_types())
def test_leaf_arrow_types_self(t):
    assert isinstance(t, pa.DataType) and not pa.types.is_nested(t)


@given(sa.decimal_arrow_types())
def test_decimal_arrow_types_self(t):
    assert 1 <= t.precision <= 38 and 0 <= t.scale <= t.precision


@given(st.sampled_from([8, 16, 32, 64]).flatmap(lambda b: st.tuples(st.just(b), sa.int_values(b))))
def test_int_values_self(bv):
    assert -(2 ** (bv[0] - 1)) <= bv[1] < 2 ** (bv[0] - 1)


@given(sa.float_values(32))
def test_float_values_self(v):
    assert isinstance(v, float) and pa.array([v], pa.float32()).type == pa.float32()


@given(sa.text_values())
def test_text_values_self(v):
    assert isinstance(v, str) and v.encode("utf-8") is not None


@given(sa.binary_values())
def test_binary_values_self(v):
    assert isinstance(v, bytes)


@given(sa.date_values())
def test_date_values_self(v):
    assert isinstance(v, dt.date) and 1 <= v.year <= 9999


@given(sa.naive_datetime_values("engines"))
def test_naive_datetime_values_self(v):
    assert v.tzinfo is None and 1678 <= v.year <= 2261


@given(sa.utc_datetime_values())
def test_utc_datetime_values_self(v):
    assert v.utcoffset() == dt.timedelta(0)


@given(sa.decimal_arrow_types().flatmap(lambda t: st.tuples(st.just(t), sa.decimal_values(t.precision, t.scale))))
def test_decimal_values_self(tv):
    assert pa.array([tv[1]], type=tv[0])[0].as_py() == tv[1]


@given(sa.leaf_arrow_types().flatmap(lambda t: sa.arrow_arrays(t)))
def test_arrow_arrays_self(arr):
    assert isinstance(arr, pa.Array)


# ---- delta types ---------------------------------------------------------------------------


@given(sd.primitive_types())
def test_primitive_types_self(t):
    assert isinstance(t, PrimitiveType) and t.name in sd.PRIMITIVE_NAMES


@given(sd.decimal_types())
def test_decimal_types_self(t):
    assert isinstance(t, DecimalType) and t.scale <= t.precision <= 38


@given(sd.leaf_types(void=True))
def test_leaf_types_self(t):
    assert isinstance(t, (PrimitiveType, DecimalType))


@given(sd.field_names())
def test_field_names_self(n):
    assert isinstance(n, str) and n


@given(sd.field_metadata())
def test_field_metadata_self(md):
    assert all(not k.startswith("delta") for k in md)


@given(sd.array_types(sd.leaf_types()))
def test_array_types_self(t):
    assert isinstance(t, ArrayType)


@given(sd.map_types(sd.leaf_types(), sd.leaf_types()))
def test_map_types_self(t):
    assert isinstance(t, MapType)


@given(sd.struct_types(sd.leaf_types()))
def test_struct_types_self(t):
    names = [f.name.lower() for f in t.fields]
    assert isinstance(t, StructType) and len(set(names)) == len(names)


@given(sd.data_types())
def test_data_types_self(t):
    assert isinstance(t, (PrimitiveType, DecimalType, ArrayType, MapType, StructType))


@given(sd.schemas())
def test_schemas_self(s):
    assert isinstance(s, StructType) and s.fields


@given(sd.engine_schemas())
def test_engine_schemas_self(s):
    assert all(f.name.isidentifier() for f in s.fields)


@given(sd.data_types().flatmap(lambda t: st.tuples(st.just(t), sd.values_for_type(t))))
def test_values_for_type_self(tv):
    assert pa.array([tv[1]], type=sd.arrow_type_of(tv[0])).type == sd.arrow_type_of(tv[0])


@given(sd.tables())
def test_tables_self(st_):
    schema, table = st_
    assert table.schema == sd.arrow_schema_of(schema)


@given(sd.partition_values())
def test_partition_values_self(tv):
    t, v = tv
    assert v is None or pa.array([v], type=sd.arrow_type_of(t)).null_count == 0


@given(sd.row_index_sets())
def test_row_index_sets_self(rows):
    assert rows == sorted(set(rows)) and all(0 <= r <= sd.DV_MAX_ROW for r in rows)


@given(sd.action_logs())
def test_action_logs_self(log):
    assert log.commits and any("metaData" in a for a in log.commits[0]) and len(log.live_by_version) == len(log.commits)


@given(sd.table_histories())
def test_table_histories_self(h):
    assert len(h.expected) == sum(1 for s in h.steps if type(s).__name__ != "Checkpoint")


@given(sa.utc_datetime_values())
def test_timestamp_partition_forms_self(v):
    assert all(f[:4].isdigit() for f in sd.timestamp_partition_forms(v))



@given(sd.mutated_logs())
def test_mutated_logs_self(case):
    log, mutation, files = case
    assert mutation in sd.MUTATIONS and files != sd.log_files(log)


@given(st.sampled_from(sd.MUTATIONS).flatmap(lambda m: m.logs()))
def test_mutation_logs_self(log):
    assert isinstance(log, sd.GeneratedLog)
