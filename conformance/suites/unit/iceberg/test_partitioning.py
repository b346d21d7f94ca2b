"""Partitioning, Sorting and their Appendix C JSON (reference_impl.iceberg.partitioning)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conformance.roundtrip import assert_roundtrip
from reference_impl.errors import InvalidTable
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T

SCHEMA = T.Schema(
    schema_id=0,
    fields=(
        T.NestedField(id=1, name="id", type=T.LONG, required=True),
        T.NestedField(id=2, name="data", type=T.STRING),
        T.NestedField(id=3, name="price", type=T.DecimalType(precision=9, scale=2)),
        T.NestedField(id=4, name="ts", type=T.TIMESTAMPTZ),
        T.NestedField(id=5, name="tags", type=T.ListType(element_id=6, element=T.STRING)),
        T.NestedField(id=7, name="s", type=T.StructType(fields=(T.NestedField(id=8, name="d", type=T.DATE),))),
        T.NestedField(id=9, name="f", type=T.DOUBLE),
    ),
)

# The Appendix C partition spec and sort order examples.
SPEC_EXAMPLE = {"spec-id": 0, "fields": [
    {"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"},
    {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"},
]}
ORDER_EXAMPLE = {"order-id": 1, "fields": [
    {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
    {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"},
]}


@pytest.mark.rule("ICEBERG-SERDE-005", "ICEBERG-PART-002", "ICEBERG-PART-035", "ICEBERG-PART-037")
@pytest.mark.parametrize("version", [2, 3])
def test_spec_example_round_trip(version):
    spec = P.parse_partition_spec(json.dumps(SPEC_EXAMPLE), format_version=version)
    assert spec.fields[1] == P.PartitionField(source_ids=(1,), field_id=1001, name="id_bucket", transform=X.BucketTransform(num_buckets=16))
    assert_roundtrip(SPEC_EXAMPLE, lambda o: P.partition_spec_to_dict(P.parse_partition_spec(o, format_version=version), format_version=version), lambda d: d)


@pytest.mark.rule("ICEBERG-PART-035", "ICEBERG-GEN-002", "ICEBERG-PART-032")
def test_v1_writes_omit_derivable_field_ids_but_keep_evolved_ones():
    spec = P.parse_partition_spec(SPEC_EXAMPLE, format_version=1)
    out = P.partition_spec_to_dict(spec, format_version=1)
    assert all("field-id" not in f for f in out["fields"])
    assert P.parse_partition_spec(out, format_version=1) == spec
    evolved = {"spec-id": 1, "fields": [dict(SPEC_EXAMPLE["fields"][1], **{"field-id": 1001})]}
    spec1 = P.parse_partition_spec(evolved, format_version=1)
    assert P.partition_spec_to_dict(spec1, format_version=1) == evolved


@pytest.mark.rule("ICEBERG-PART-032", "ICEBERG-SERDE-005")
def test_v1_bare_fields_without_ids_are_numbered_from_1000():
    raw = [{"source-id": 4, "name": "ts_day", "transform": "day"}, {"source-id": 1, "name": "b", "transform": "bucket[4]"}]
    spec = P.parse_partition_fields(raw, format_version=1)
    assert [f.field_id for f in spec.fields] == [1000, 1001]
    with pytest.raises(InvalidTable, match="field-id") as e:
        P.parse_partition_fields(raw, format_version=2)
    assert e.value.rule == "ICEBERG-PART-035"


@pytest.mark.rule("ICEBERG-PART-035", "ICEBERG-PART-036")
def test_source_ids_is_v3_only_and_written_for_multi_argument_transforms():
    raw = {"spec-id": 1, "fields": [{"source-ids": [1, 2], "field-id": 1000, "name": "z", "transform": "zorder"}]}
    with pytest.raises(InvalidTable, match="source-ids"):
        P.parse_partition_spec(raw, format_version=2)
    spec = P.parse_partition_spec(raw, format_version=3)
    assert spec.fields[0].source_ids == (1, 2)
    assert P.partition_spec_to_dict(spec, format_version=3) == raw
    single = P.parse_partition_spec({"spec-id": 0, "fields": [{"source-ids": [4], "field-id": 1000, "name": "d", "transform": "day"}]}, format_version=3)
    out = P.partition_spec_to_dict(single, format_version=3)["fields"][0]
    assert "source-id" in out and "source-ids" not in out


@pytest.mark.rule("ICEBERG-PART-035", "ICEBERG-SERDE-005")
@pytest.mark.parametrize(
    "obj,fragment",
    [
        ("[", "not valid JSON"),
        ([], '"spec-id" and "fields"'),
        ({"spec-id": 0, "fields": {}}, "JSON list"),
        ({"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "transform": "identity"}]}, "lacks name"),
        ({"spec-id": 0, "fields": [{"field-id": 1000, "name": "a", "transform": "identity"}]}, "source-id"),
        ({"spec-id": 0, "fields": [{"source-id": "1", "field-id": 1000, "name": "a", "transform": "identity"}]}, "JSON int"),
        ({"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "a", "transform": "bucket[-1]"}]}, "positive"),
    ],
)
def test_bad_spec_json(obj, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        P.parse_partition_spec(obj, format_version=2)


@pytest.mark.rule("ICEBERG-PART-014", "ICEBERG-PART-011", "ICEBERG-PART-016", "ICEBERG-PART-034")
def test_partition_type_from_spec_and_schema():
    spec = P.parse_partition_spec(
        {"spec-id": 2, "fields": [
            {"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"},
            {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"},
            {"source-id": 3, "field-id": 1002, "name": "p", "transform": "truncate[50]"},
            {"source-id": 8, "field-id": 1003, "name": "d_month", "transform": "month"},
            {"source-id": 2, "field-id": 1004, "name": "gone", "transform": "void"},
            {"source-id": 2, "field-id": 1005, "name": "mystery", "transform": "geohash[5]"},
        ]},
        format_version=2,
    )
    pt = P.partition_type(spec, SCHEMA)
    assert [(f.id, f.name, f.type, f.required) for f in pt.fields] == [
        (1000, "ts_day", T.DATE, False), (1001, "id_bucket", T.INT, False), (1002, "p", T.DecimalType(precision=9, scale=2), False),
        (1003, "d_month", T.INT, False), (1004, "gone", T.STRING, False), (1005, "mystery", T.STRING, False),
    ]
    assert spec.has_unknown_transform
    with pytest.raises(InvalidTable) as e:
        P.check_writable(spec)
    assert e.value.rule == "ICEBERG-PART-007"


@pytest.mark.rule("ICEBERG-PART-001", "ICEBERG-PART-017")
def test_partition_values_of_a_row():
    spec = P.parse_partition_spec(SPEC_EXAMPLE, format_version=2)
    ts = dt.datetime(2017, 11, 16, 22, 31, 8, tzinfo=dt.timezone.utc)
    assert P.partition_values(spec, SCHEMA, {4: ts, 1: 34}) == (17486, 2017239379 % 16)
    assert P.partition_values(spec, SCHEMA, {1: 34}) == (None, 2017239379 % 16)


@pytest.mark.rule("ICEBERG-PART-002", "ICEBERG-PART-003", "ICEBERG-PART-004", "ICEBERG-PART-010", "ICEBERG-PART-011", "ICEBERG-PART-012", "ICEBERG-PART-013")
def test_validate_partition_spec():
    def rules(fields, version=2):
        spec = P.parse_partition_spec({"spec-id": 0, "fields": fields}, format_version=version)
        return sorted(v.rule for v in P.validate_partition_spec(spec, SCHEMA, format_version=version))

    assert rules(SPEC_EXAMPLE["fields"]) == []
    assert rules([{"source-id": 99, "field-id": 1000, "name": "a", "transform": "identity"}]) == ["ICEBERG-PART-002"]
    assert rules([{"source-id": 6, "field-id": 1000, "name": "a", "transform": "identity"}]) == ["ICEBERG-PART-004"]
    assert rules([{"source-id": 7, "field-id": 1000, "name": "a", "transform": "identity"}]) == ["ICEBERG-PART-004", "ICEBERG-PART-010"]
    assert rules([{"source-id": 8, "field-id": 1000, "name": "a", "transform": "day"}]) == []  # nested in a struct: fine
    assert rules([{"source-id": 9, "field-id": 1000, "name": "a", "transform": "bucket[2]"}]) == ["ICEBERG-PART-011"]
    assert rules([{"source-id": 8, "field-id": 1000, "name": "a", "transform": "truncate[2]"}]) == ["ICEBERG-PART-012"]
    assert rules([{"source-id": 8, "field-id": 1000, "name": "a", "transform": "hour"}]) == ["ICEBERG-PART-013"]
    assert rules([{"source-id": 1, "field-id": 1000, "name": "a", "transform": "identity"}, {"source-id": 2, "field-id": 1000, "name": "b", "transform": "identity"}]) == ["ICEBERG-PART-003"]
    assert rules([{"source-id": 1, "field-id": 1000, "name": "a", "transform": "mystery"}]) == []  # readers tolerate unknown transforms


@pytest.mark.rule("ICEBERG-PART-008", "ICEBERG-PART-009", "ICEBERG-PART-031")
def test_equivalent_specs_and_field_id_reuse():
    a = P.parse_partition_spec(SPEC_EXAMPLE, format_version=2)
    b = P.PartitionSpec(spec_id=7, fields=tuple(P.PartitionField(source_ids=f.source_ids, field_id=f.field_id + 10, name=f.name, transform=f.transform) for f in a.fields))
    assert P.specs_equivalent(a, b) and P.find_equivalent_spec(b, [a]) is a
    assert not P.specs_equivalent(a, P.PartitionSpec(spec_id=0, fields=a.fields[:1]))
    new, last = P.assign_partition_field_ids(
        [((1,), "id_bucket", X.BucketTransform(num_buckets=16)), ((2,), "data", X.IdentityTransform())],
        existing=[a], last_partition_id=1001, spec_id=1,
    )
    assert [f.field_id for f in new.fields] == [1001, 1002] and last == 1002
    assert P.UNPARTITIONED.last_assigned_field_id == 999


@pytest.mark.rule("ICEBERG-SERDE-006", "ICEBERG-SORT-001", "ICEBERG-SORT-002", "ICEBERG-SORT-007")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_sort_order_example_round_trip(version):
    order = P.parse_sort_order(json.dumps(ORDER_EXAMPLE), format_version=version)
    assert order.fields[1] == P.SortField(source_ids=(3,), transform=X.BucketTransform(num_buckets=4), direction="desc", null_order="nulls-last")
    assert_roundtrip(ORDER_EXAMPLE, lambda o: P.sort_order_to_dict(P.parse_sort_order(o, format_version=version), format_version=version), lambda d: d)


@pytest.mark.rule("ICEBERG-SORT-002", "ICEBERG-SORT-007", "ICEBERG-SERDE-006")
@pytest.mark.parametrize(
    "field,fragment",
    [
        ({"transform": "identity", "source-id": 2, "direction": "up", "null-order": "nulls-first"}, "asc or desc"),
        ({"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "first"}, "nulls-first or nulls-last"),
        ({"source-id": 2, "direction": "asc", "null-order": "nulls-first"}, "lacks transform"),
        ({"transform": "identity", "direction": "asc", "null-order": "nulls-first"}, "source-id"),
    ],
)
def test_bad_sort_fields(field, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        P.parse_sort_order({"order-id": 1, "fields": [field]}, format_version=2)


@pytest.mark.rule("ICEBERG-SORT-003", "ICEBERG-SORT-008")
def test_sort_order_checks_and_unknown_transforms():
    order0 = P.parse_sort_order({"order-id": 0, "fields": ORDER_EXAMPLE["fields"]}, format_version=2)
    assert [v.rule for v in P.validate_sort_order(order0)] == ["ICEBERG-SORT-003"]
    assert P.validate_sort_order(P.UNSORTED) == []
    odd = P.parse_sort_order({"order-id": 2, "fields": [{"transform": "zorder", "source-ids": [1, 2], "direction": "asc", "null-order": "nulls-last"}]}, format_version=3)
    assert not odd.fields[0].transform.is_known
    assert P.validate_sort_order(odd, SCHEMA) == []
    assert P.sort_order_to_dict(odd, format_version=3)["fields"][0]["source-ids"] == [1, 2]


def test_sort_order_satisfaction():
    by_hour = P.SortOrder(order_id=1, fields=(P.SortField(source_ids=(4,), transform=X.HourTransform()), P.SortField(source_ids=(2,), transform=X.IdentityTransform())))
    by_day = P.SortOrder(order_id=2, fields=(P.SortField(source_ids=(4,), transform=X.DayTransform()),))
    assert P.sort_order_satisfies(by_hour, by_day, SCHEMA)
    assert not P.sort_order_satisfies(by_day, by_hour, SCHEMA)
    assert P.sort_order_satisfies(by_day, P.UNSORTED)


def test_partition_path_uses_human_strings_url_encoded():
    spec = P.parse_partition_spec({"spec-id": 0, "fields": [
        {"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"},
        {"source-id": 4, "field-id": 1001, "name": "ts_hour", "transform": "hour"},
        {"source-id": 2, "field-id": 1002, "name": "data", "transform": "identity"},
        {"source-id": 3, "field-id": 1003, "name": "p", "transform": "truncate[50]"},
    ]}, format_version=2)
    from decimal import Decimal

    assert P.partition_path(spec, SCHEMA, (-1, -1, "a b/c", Decimal("10.50"))) == "ts_day=1969-12-31/ts_hour=1969-12-31-23/data=a+b%2Fc/p=10.50"
    assert P.partition_path(spec, SCHEMA, (None, None, None, None)) == "ts_day=null/ts_hour=null/data=null/p=null"
    with pytest.raises(InvalidTable, match="4 fields"):
        P.partition_path(spec, SCHEMA, (1,))
