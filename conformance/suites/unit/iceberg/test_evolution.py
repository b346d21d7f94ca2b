"""Schema Evolution checks by field id (reference_impl.iceberg.evolution)."""

from __future__ import annotations

import pytest

from reference_impl.iceberg import evolution as E
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import types as T


def F(id, name, type, required=False, **kw):
    return T.NestedField(id=id, name=name, type=type, required=required, **kw)


def S(*fields):
    return T.Schema(fields=tuple(fields), schema_id=0)


BASE = S(
    F(1, "id", T.INT, True),
    F(2, "x", T.FLOAT),
    F(3, "d", T.DecimalType(precision=9, scale=2)),
    F(4, "day", T.DATE),
    F(5, "loc", T.StructType(fields=(F(6, "lat", T.DOUBLE), F(7, "lon", T.DOUBLE)))),
    F(8, "tags", T.MapType(key_id=9, key=T.STRING, value_id=10, value=T.INT)),
)


def rules(new, version=2, **kw):
    return sorted(v.rule for v in E.check_schema_evolution(BASE, new, format_version=version, **kw))


@pytest.mark.rule("ICEBERG-EVOL-002", "ICEBERG-EVOL-003", "ICEBERG-EVOL-004", "ICEBERG-EVOL-006")
@pytest.mark.parametrize(
    "old,new,v12,v3",
    [
        (T.INT, T.LONG, True, True),
        (T.FLOAT, T.DOUBLE, True, True),
        (T.DecimalType(precision=9, scale=2), T.DecimalType(precision=12, scale=2), True, True),
        (T.DecimalType(precision=9, scale=2), T.DecimalType(precision=9, scale=2), True, True),
        (T.DecimalType(precision=10, scale=2), T.DecimalType(precision=12, scale=3), False, False),
        (T.DecimalType(precision=12, scale=2), T.DecimalType(precision=10, scale=2), False, False),
        (T.UNKNOWN, T.STRING, False, True),
        (T.DATE, T.TIMESTAMP, False, True),
        (T.DATE, T.TIMESTAMP_NS, False, True),
        (T.DATE, T.TIMESTAMPTZ, False, False),
        (T.DATE, T.TIMESTAMPTZ_NS, False, False),
        (T.LONG, T.INT, False, False),
        (T.INT, T.STRING, False, False),
        (T.DOUBLE, T.FLOAT, False, False),
        (T.TIMESTAMP, T.TIMESTAMP_NS, False, False),
    ],
)
def test_promotion_table(old, new, v12, v3):
    assert E.is_promotion_allowed(old, new, 1) is v12
    assert E.is_promotion_allowed(old, new, 2) is v12
    assert E.is_promotion_allowed(old, new, 3) is v3


@pytest.mark.rule("ICEBERG-EVOL-010", "ICEBERG-EVOL-011", "ICEBERG-EVOL-009")
def test_rename_reorder_drop_add_and_promote_are_allowed():
    new = S(
        F(8, "tags", T.MapType(key_id=9, key=T.STRING, value_id=10, value=T.LONG)),
        F(1, "key", T.LONG, True),
        F(2, "x", T.DOUBLE),
        F(5, "location", T.StructType(fields=(F(7, "longitude", T.DOUBLE), F(6, "lat", T.DOUBLE), F(11, "alt", T.FLOAT)))),
        F(12, "note", T.StructType(fields=(F(13, "t", T.STRING, True),))),
    )
    assert rules(new) == []
    ch = E.changes(BASE, new)
    assert ch["added"] == [11, 12, 13] and ch["dropped"] == [3, 4] and ch["renamed"] == [1, 5, 7] and ch["promoted"] == [1, 2, 10]


@pytest.mark.rule("ICEBERG-EVOL-009")
def test_new_ids_must_be_above_last_column_id():
    new = S(*BASE.fields, F(11, "y", T.INT))
    assert rules(new, last_column_id=10) == []
    assert rules(new, last_column_id=20) == ["ICEBERG-EVOL-009"]  # id 11 was used by a dropped column


@pytest.mark.rule("ICEBERG-EVOL-002", "ICEBERG-EVOL-003", "ICEBERG-EVOL-004", "ICEBERG-EVOL-006")
def test_bad_promotions_are_reported():
    swap = lambda i, t: S(*(F(f.id, f.name, t, f.required) if f.id == i else f for f in BASE.fields))
    assert rules(swap(1, T.STRING)) == ["ICEBERG-EVOL-002"]
    assert rules(swap(3, T.DecimalType(precision=12, scale=3))) == ["ICEBERG-EVOL-006"]
    assert rules(swap(4, T.TIMESTAMP)) == ["ICEBERG-EVOL-003"]
    assert rules(swap(4, T.TIMESTAMP), version=3) == []
    assert rules(swap(4, T.TIMESTAMPTZ), version=3) == ["ICEBERG-EVOL-004"]


@pytest.mark.rule("ICEBERG-EVOL-013")
def test_structural_changes_are_not_allowed():
    # struct<a, b, c> -> struct<a, struct<b, c>>: fields 6 and 7 change parent.
    moved = S(*BASE.fields[:4], F(5, "loc", T.StructType(fields=())), F(8, "tags", BASE.fields[5].type), F(11, "n", T.StructType(fields=(F(6, "lat", T.DOUBLE), F(7, "lon", T.DOUBLE)))))
    assert set(rules(moved)) == {"ICEBERG-EVOL-013"}
    # primitive -> struct, and a map value int -> struct<int>.
    prim = S(F(1, "id", T.StructType(fields=(F(11, "v", T.INT, True),)), True), *BASE.fields[1:])
    assert rules(prim) == ["ICEBERG-EVOL-013"]
    mv = S(*BASE.fields[:5], F(8, "tags", T.MapType(key_id=9, key=T.STRING, value_id=10, value=T.StructType(fields=(F(11, "i", T.INT),)))))
    assert rules(mv) == ["ICEBERG-EVOL-013"]


@pytest.mark.rule("ICEBERG-SCHEMA-022", "ICEBERG-SCHEMA-014", "ICEBERG-SCHEMA-002")
def test_required_additions_defaults_and_nullability():
    req = S(*BASE.fields, F(11, "r", T.INT, True))
    assert rules(req, version=2) == ["ICEBERG-SCHEMA-022"]
    assert rules(req, version=3) == ["ICEBERG-SCHEMA-022"]
    ok = S(*BASE.fields, F(11, "r", T.INT, True, initial_default=0, write_default=1))
    assert rules(ok, version=3) == []
    tightened = S(*BASE.fields[:1], F(2, "x", T.FLOAT, True), *BASE.fields[2:])
    assert rules(tightened) == ["ICEBERG-SCHEMA-002"]
    v3_old = S(*BASE.fields, F(11, "r", T.INT, initial_default=0, write_default=0))
    v3_new = S(*BASE.fields, F(11, "r", T.INT, initial_default=5, write_default=7))
    assert [v.rule for v in E.check_schema_evolution(v3_old, v3_new, format_version=3)] == ["ICEBERG-SCHEMA-014"]
    changed_write = S(*BASE.fields, F(11, "r", T.INT, initial_default=0, write_default=9))
    assert E.check_schema_evolution(v3_old, changed_write, format_version=3) == []


@pytest.mark.rule("ICEBERG-EVOL-008")
def test_partition_source_promotion_that_changes_the_transform_output():
    promoted = S(*(F(f.id, f.name, T.TIMESTAMP, f.required) if f.id == 4 else f for f in BASE.fields))
    bucket = P.parse_partition_spec({"spec-id": 0, "fields": [{"source-id": 4, "field-id": 1000, "name": "b", "transform": "bucket[8]"}]}, format_version=3)
    day = P.parse_partition_spec({"spec-id": 1, "fields": [{"source-id": 4, "field-id": 1001, "name": "d", "transform": "day"}]}, format_version=3)
    assert rules(promoted, version=3, partition_specs=[bucket]) == ["ICEBERG-EVOL-008"]
    assert rules(promoted, version=3, partition_specs=[day]) == []
    widened = S(*(F(f.id, f.name, T.LONG, f.required) if f.id == 1 else f for f in BASE.fields))
    by_id = P.parse_partition_spec({"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "b", "transform": "bucket[8]"}]}, format_version=2)
    assert rules(widened, partition_specs=[by_id]) == []


@pytest.mark.rule("ICEBERG-TYPE-001")
def test_new_schema_is_also_validated_for_its_version():
    assert rules(S(*BASE.fields, F(11, "t", T.TIMESTAMP_NS)), version=2) == ["ICEBERG-TYPE-001"]


@pytest.mark.rule("ICEBERG-EVOL-003")
def test_unknown_may_become_any_type_in_v3_only():
    old = S(*BASE.fields, F(11, "u", T.UNKNOWN))
    nested = S(*BASE.fields, F(11, "u", T.StructType(fields=(F(12, "a", T.INT),))))
    assert E.check_schema_evolution(old, nested, format_version=3, last_column_id=11) == []
    assert "ICEBERG-EVOL-013" in [v.rule for v in E.check_schema_evolution(old, nested, format_version=2, last_column_id=11)]
