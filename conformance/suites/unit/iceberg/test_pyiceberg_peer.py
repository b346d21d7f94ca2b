"""Peer check against PyIceberg (skipped unless pyiceberg is importable; the spec is the authority).

PyIceberg is not a dependency of the kit; to run this module, install pyiceberg into a separate
environment that also has this repository's requirements and run pytest on this file there.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pyiceberg = pytest.importorskip("pyiceberg")

from pyiceberg import conversions as pc  # noqa: E402
from pyiceberg import transforms as pt  # noqa: E402
from pyiceberg import types as pty  # noqa: E402
from pyiceberg.partitioning import PartitionSpec as PySpec  # noqa: E402
from pyiceberg.schema import Schema as PySchema  # noqa: E402
from pyiceberg.table.sorting import SortOrder as PySortOrder  # noqa: E402

from reference_impl.iceberg import partitioning as P  # noqa: E402
from reference_impl.iceberg import transforms as X  # noqa: E402
from reference_impl.iceberg import types as T  # noqa: E402
from reference_impl.iceberg import values as V  # noqa: E402

PAIRS = [
    (T.INT, pty.IntegerType()),
    (T.LONG, pty.LongType()),
    (T.DATE, pty.DateType()),
    (T.TIME, pty.TimeType()),
    (T.TIMESTAMP, pty.TimestampType()),
    (T.TIMESTAMPTZ, pty.TimestamptzType()),
    (T.STRING, pty.StringType()),
    (T.UUID, pty.UUIDType()),
    (T.BINARY, pty.BinaryType()),
    (T.FixedType(length=3), pty.FixedType(3)),
    (T.DecimalType(precision=18, scale=3), pty.DecimalType(18, 3)),
]


def _strategy(t):
    if t == T.INT:
        return st.integers(-(2**31), 2**31 - 1)
    if t == T.DATE:
        return st.integers(-719_162, 2_932_896)  # PyIceberg goes through datetime.date: years 1..9999
    if t == T.TIME:
        return st.integers(0, V.MICROS_PER_DAY - 1)
    if t in (T.LONG,):
        return st.integers(-(2**63), 2**63 - 1)
    if t in (T.TIMESTAMP, T.TIMESTAMPTZ):
        return st.integers(-(60 * 10**15), 250 * 10**15)
    if t == T.STRING:
        return st.text()
    if t == T.UUID:
        return st.uuids()
    if t == T.BINARY:
        return st.binary()
    if isinstance(t, T.FixedType):
        return st.binary(min_size=3, max_size=3)
    return st.integers(-(10**18) + 1, 10**18 - 1).map(lambda n: Decimal(n).scaleb(-3))


@pytest.mark.rule("ICEBERG-PART-018", "ICEBERG-PART-025", "ICEBERG-PART-014", "ICEBERG-SERDE-010")
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_transforms_and_bytes_agree_with_pyiceberg(data):
    ours_t, py_t = data.draw(st.sampled_from(PAIRS))
    v = data.draw(_strategy(ours_t))
    n = data.draw(st.integers(1, 1000))
    assert X.BucketTransform(num_buckets=n).apply(v, ours_t) == pt.BucketTransform(n).transform(py_t)(v)
    trunc = X.TruncateTransform(width=n)
    if trunc.can_transform(ours_t):
        assert trunc.apply(v, ours_t) == pt.TruncateTransform(n).transform(py_t)(v)
    for ours, theirs in ((X.YearTransform(), pt.YearTransform()), (X.MonthTransform(), pt.MonthTransform()), (X.DayTransform(), pt.DayTransform()), (X.HourTransform(), pt.HourTransform())):
        if ours.can_transform(ours_t):
            assert ours.apply(v, ours_t) == theirs.transform(py_t)(v), (ours, ours_t, v)
    assert V.to_bytes(v, ours_t) == pc.to_bytes(py_t, v)


SCHEMA_JSON = {
    "type": "struct", "schema-id": 1, "identifier-field-ids": [1],
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": {"type": "list", "element-id": 3, "element-required": True, "element": "string"}},
        {"id": 4, "name": "m", "required": False, "type": {"type": "map", "key-id": 5, "key": "string", "value-id": 6, "value-required": False, "value": "decimal(9,2)"}},
        {"id": 7, "name": "s", "required": False, "type": {"type": "struct", "fields": [{"id": 8, "name": "t", "required": True, "type": "timestamptz"}]}},
        {"id": 9, "name": "f", "required": False, "type": "fixed[16]"},
        {"id": 10, "name": "u", "required": False, "type": "uuid"},
    ],
}


@pytest.mark.rule("ICEBERG-SERDE-001", "ICEBERG-SERDE-004")
def test_schema_json_agrees_with_pyiceberg():
    ours = T.parse_schema(SCHEMA_JSON)
    theirs = PySchema.model_validate_json(json.dumps(SCHEMA_JSON))
    assert T.parse_schema(theirs.model_dump_json()) == ours
    assert PySchema.model_validate_json(T.schema_to_json(ours)) == theirs


@pytest.mark.rule("ICEBERG-FMT-009")
def test_arrow_field_ids_agree_with_pyiceberg():
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    ours = T.to_arrow_schema(T.parse_schema(SCHEMA_JSON))
    theirs = schema_to_pyarrow(PySchema.model_validate_json(json.dumps(SCHEMA_JSON)))
    assert T.field_ids_of_arrow(ours) == T.field_ids_of_arrow(theirs)
    assert [f.name for f in ours] == [f.name for f in theirs]


@pytest.mark.rule("ICEBERG-SERDE-005", "ICEBERG-SERDE-006")
def test_spec_and_sort_order_json_agree_with_pyiceberg():
    spec = {"spec-id": 0, "fields": [{"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"}, {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"}]}
    theirs = json.loads(PySpec.model_validate_json(json.dumps(spec)).model_dump_json())
    assert P.partition_spec_to_dict(P.parse_partition_spec(theirs, format_version=2), format_version=2) == spec
    order = {"order-id": 1, "fields": [{"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"}, {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"}]}
    theirs = json.loads(PySortOrder.model_validate_json(json.dumps(order)).model_dump_json())
    assert P.sort_order_to_dict(P.parse_sort_order(theirs, format_version=2), format_version=2) == order


@pytest.mark.rule("ICEBERG-SERDE-018", "ICEBERG-SERDE-020", "ICEBERG-SERDE-021", "ICEBERG-SERDE-022")
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_json_single_values_agree_with_pyiceberg(data):
    ours_t, py_t = data.draw(st.sampled_from(PAIRS))
    v = data.draw(_strategy(ours_t))
    theirs = pc.to_json(py_t, v)
    ours = V.to_json(v, ours_t)
    if ours_t in (T.TIME, T.TIMESTAMP, T.TIMESTAMPTZ):
        # PyIceberg drops a zero fraction ("00:00:00"); the spec's form has microseconds. We read theirs.
        assert V.from_json(theirs, ours_t) == V.to_internal(v, ours_t)
        if "." in theirs:
            assert ours == theirs
    else:
        assert ours == (str(theirs) if ours_t == T.UUID else theirs)
    assert V.from_json(ours, ours_t) == V.to_internal(v, ours_t)


@pytest.mark.rule("ICEBERG-FMT-006", "ICEBERG-FMT-003", "ICEBERG-FMT-004")
def test_avro_schema_agrees_with_pyiceberg():
    from pyiceberg.utils.schema_conversion import AvroSchemaConversion

    from reference_impl.iceberg import avro as A

    py_schema = PySchema.model_validate_json(json.dumps(SCHEMA_JSON))
    ours = T.parse_schema(SCHEMA_JSON)
    theirs_avro = AvroSchemaConversion().iceberg_to_avro(py_schema)
    read = A.from_avro_schema(theirs_avro)
    # PyIceberg 0.12 writes the optional map value (id 6) without the [null, T] union that
    # Appendix A requires, so it reads back as required; everything else agrees.
    m = read.field_by_id(4).type
    assert m.value_required is True
    fixed = T.NestedField(id=4, name="m", type=T.MapType(key_id=m.key_id, key=m.key, value_id=m.value_id, value=m.value, value_required=False))
    assert T.StructType(fields=tuple(fixed if f.id == 4 else f for f in read.fields)) == ours.as_struct
    back = AvroSchemaConversion().avro_to_iceberg(A.to_avro_schema(ours))
    assert T.parse_schema(back.model_dump_json()).fields == ours.fields


def test_fresh_ids_and_partition_paths_agree_with_pyiceberg():
    from pyiceberg.schema import assign_fresh_schema_ids

    py_schema = PySchema.model_validate_json(json.dumps(SCHEMA_JSON))
    theirs = assign_fresh_schema_ids(py_schema)
    ours, _ = T.assign_fresh_ids(T.parse_schema(SCHEMA_JSON))
    assert T.index_by_path(T.parse_schema(theirs.model_dump_json())) == T.index_by_path(ours)

    spec_json = {"spec-id": 0, "fields": [
        {"source-id": 8, "field-id": 1000, "name": "t_day", "transform": "day"},
        {"source-id": 8, "field-id": 1001, "name": "t_hour", "transform": "hour"},
        {"source-id": 1, "field-id": 1002, "name": "id_b", "transform": "bucket[4]"},
    ]}
    from pyiceberg.typedef import Record

    py_spec = PySpec.model_validate_json(json.dumps(spec_json))
    values = (-1, -1, 3)
    theirs_path = py_spec.partition_to_path(Record(*values), py_schema)
    assert P.partition_path(P.parse_partition_spec(spec_json, format_version=2), T.parse_schema(SCHEMA_JSON), values) == theirs_path
