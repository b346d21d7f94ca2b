"""Column Mapping (reference_impl.delta.column_mapping): ids, physical names, projection of data files."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.parquet_io import read_parquet
from reference_impl.delta import column_mapping as CM
from reference_impl.delta import schema as S
from reference_impl.errors import InvalidTable

# A name-mode data file laid out the way Spark writes one: physical column names and a parquet
# field_id on every column (Spark writes ids in name mode too); the partition column is absent.
def _spark_like_name_mode_file() -> bytes:
    ids = {"col-9f0743fd-a52e-44a7-92e0-72a3d34231b1": b"2", "col-ae46e8ed-607b-4b7c-8a13-44991fe0a2e4": b"3"}
    schema = pa.schema([
        pa.field("col-9f0743fd-a52e-44a7-92e0-72a3d34231b1", pa.int32(), metadata={b"PARQUET:field_id": ids["col-9f0743fd-a52e-44a7-92e0-72a3d34231b1"]}),
        pa.field("col-ae46e8ed-607b-4b7c-8a13-44991fe0a2e4", pa.string(), metadata={b"PARQUET:field_id": ids["col-ae46e8ed-607b-4b7c-8a13-44991fe0a2e4"]}),
    ])
    table = pa.table([pa.array([1, 11, 21], pa.int32()), pa.array(["foo1"] * 3)], schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


SPARK_NAME_MODE_PARQUET = _spark_like_name_mode_file()
SPARK_SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "part", "type": "integer", "nullable": True, "metadata": {"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-60c949ca-b8bc-4330-b931-b73fb4c60037"}},
    {"name": "col1", "type": "integer", "nullable": True, "metadata": {"delta.columnMapping.id": 2, "delta.columnMapping.physicalName": "col-9f0743fd-a52e-44a7-92e0-72a3d34231b1"}},
    {"name": "col2", "type": "string", "nullable": True, "metadata": {"delta.columnMapping.id": 3, "delta.columnMapping.physicalName": "col-ae46e8ed-607b-4b7c-8a13-44991fe0a2e4"}},
]})
SPARK_ROWS = [{"col1": 1, "col2": "foo1"}, {"col1": 11, "col2": "foo1"}, {"col1": 21, "col2": "foo1"}]

NESTED = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": False, "metadata": {}},
    {"name": "s", "type": {"type": "struct", "fields": [
        {"name": "x", "type": "integer", "nullable": False, "metadata": {}},
        {"name": "y", "type": "string", "nullable": True, "metadata": {}}]}, "nullable": True, "metadata": {}},
    {"name": "arr", "type": {"type": "array", "elementType": {"type": "struct", "fields": [
        {"name": "d", "type": "integer", "nullable": True, "metadata": {}}]}, "containsNull": True}, "nullable": True, "metadata": {}},
    {"name": "m", "type": {"type": "map", "keyType": "string", "valueType": {"type": "struct", "fields": [
        {"name": "v", "type": "double", "nullable": True, "metadata": {}}]}, "valueContainsNull": True}, "nullable": True, "metadata": {}},
    {"name": "gone", "type": "void", "nullable": True, "metadata": {}},
]})
NESTED_ROWS = [
    {"id": 1, "s": {"x": 1, "y": "a"}, "arr": [{"d": 1}, None, {"d": None}], "m": {"k": {"v": 1.5}, "n": None}, "gone": None},
    {"id": 2, "s": None, "arr": None, "m": None, "gone": None},
    {"id": 3, "s": {"x": 3, "y": None}, "arr": [], "m": {}, "gone": None},
]


def mapped_nested(nested_ids: bool = False) -> S.StructType:
    schema, _ = CM.assign_column_mapping(S.parse_schema(NESTED), 0, nested_ids=nested_ids)
    return schema


def write_read(table: pa.Table) -> pa.Table:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return read_parquet(buf.getvalue())


@pytest.mark.rule("DELTA-COLMAP-001")
@pytest.mark.parametrize("conf,mode", [({}, "none"), ({CM.MODE_KEY: "none"}, "none"), ({CM.MODE_KEY: "id"}, "id"), ({CM.MODE_KEY: "Name"}, "name")])
def test_mapping_mode(conf, mode):
    assert CM.mapping_mode(conf) == mode


@pytest.mark.rule("DELTA-COLMAP-001")
def test_unknown_mapping_mode_is_invalid():
    with pytest.raises(InvalidTable) as e:
        CM.mapping_mode({CM.MODE_KEY: "foo"})
    assert e.value.rule == "DELTA-COLMAP-001" and "'foo'" in str(e.value)


class _Proto:
    def __init__(self, r, features=None):
        self.min_reader_version, self.reader_features = r, features


@pytest.mark.rule("DELTA-COLMAP-002")
def test_mode_is_honoured_only_when_the_protocol_supports_it():
    conf = {CM.MODE_KEY: "name"}
    assert CM.mapping_mode(conf, _Proto(1)) == "none"
    assert CM.mapping_mode(conf, _Proto(2)) == "name"
    assert CM.mapping_mode(conf, _Proto(3, frozenset())) == "none"
    assert CM.mapping_mode(conf, _Proto(3, frozenset({"columnMapping"}))) == "name"


@pytest.mark.rule("DELTA-COLMAP-003", "DELTA-COLMAP-009")
def test_assign_reaches_every_level_and_tracks_max_id():
    schema, max_id = CM.assign_column_mapping(S.parse_schema(NESTED), 0)
    fields = [f for _, f in S.walk_fields(schema)]
    ids = [f.metadata[CM.ID_KEY] for f in fields]
    assert len(fields) == 9 and sorted(ids) == list(range(1, 10)) and max_id == 9
    assert all(f.metadata[CM.PHYSICAL_NAME_KEY].startswith("col-") for f in fields)
    assert CM.column_mapping_problems(schema, "name", max_id) == []
    # idempotent, and a new column continues from the max
    again, same = CM.assign_column_mapping(schema, max_id)
    assert again == schema and same == max_id
    grown = S.StructType(fields=schema.fields + (S.StructField(name="new", type=S.LONG),))
    grown, new_max = CM.assign_column_mapping(grown, max_id)
    assert grown.field("new").metadata[CM.ID_KEY] == 10 and new_max == 10


@pytest.mark.rule("DELTA-COLMAP-009")
def test_assign_never_goes_below_existing_ids():
    s = S.StructType(fields=(S.StructField(name="a", type=S.LONG, metadata={CM.ID_KEY: 7, CM.PHYSICAL_NAME_KEY: "p"}), S.StructField(name="b", type=S.LONG)))
    out, max_id = CM.assign_column_mapping(s, 3)
    assert out.field("b").metadata[CM.ID_KEY] == 8 and max_id == 8
    assert out.field("a").metadata[CM.PHYSICAL_NAME_KEY] == "p"


@pytest.mark.rule("DELTA-COLMAP-007")
def test_nested_ids_follow_the_iceberg_compat_v2_key_scheme():
    s = S.parse_schema(json.dumps({"type": "struct", "fields": [
        {"name": "col2", "type": {"type": "map", "keyType": "integer", "valueType": {"type": "array", "elementType": "integer", "containsNull": True}, "valueContainsNull": True}, "nullable": True, "metadata": {}}]}))
    out, max_id = CM.assign_column_mapping(s, 0, nested_ids=True)
    md = out.field("col2").metadata
    p = md[CM.PHYSICAL_NAME_KEY]
    assert md[CM.NESTED_IDS_KEY] == {f"{p}.key": 2, f"{p}.value": 3, f"{p}.value.element": 4} and max_id == 4
    arrow = CM.physical_arrow_schema(out, "id").field(p)
    assert arrow.metadata[CM.FIELD_ID_KEY] == b"1"
    assert arrow.type.key_field.metadata[CM.FIELD_ID_KEY] == b"2"
    assert arrow.type.item_field.metadata[CM.FIELD_ID_KEY] == b"3"
    assert arrow.type.item_type.value_field.metadata[CM.FIELD_ID_KEY] == b"4"


@pytest.mark.rule("DELTA-COLMAP-003")
def test_problems_name_missing_annotations_and_duplicate_ids():
    s = S.parse_schema(json.dumps({"type": "struct", "fields": [
        {"name": "a", "type": "long", "nullable": True, "metadata": {CM.ID_KEY: 1, CM.PHYSICAL_NAME_KEY: "pa"}},
        {"name": "b", "type": {"type": "struct", "fields": [{"name": "c", "type": "long", "nullable": True, "metadata": {CM.ID_KEY: 1}}]}, "nullable": True, "metadata": {CM.ID_KEY: 2, CM.PHYSICAL_NAME_KEY: "pa"}}]}))
    problems = CM.column_mapping_problems(s, "name", 2)
    assert any("b.c: missing delta.columnMapping.physicalName" in p for p in problems)
    assert any("is also used by a" in p for p in problems)
    assert any("physical name 'pa'" in p for p in problems)
    with pytest.raises(InvalidTable) as e:
        CM.validate_column_mapping(s, "name")
    assert e.value.rule == "DELTA-COLMAP-003"
    assert CM.column_mapping_problems(s, "none") == []


@pytest.mark.rule("DELTA-COLMAP-009")
def test_id_above_max_column_id_is_a_problem():
    s, _ = CM.assign_column_mapping(S.parse_schema(NESTED), 0)
    with pytest.raises(InvalidTable) as e:
        CM.validate_column_mapping(s, "id", 5)
    assert e.value.rule == "DELTA-COLMAP-009"


@pytest.mark.rule("DELTA-COLMAP-003")
def test_physical_name_requires_annotation_in_mapped_modes():
    f = S.StructField(name="a", type=S.LONG)
    assert CM.physical_name(f, "none") == "a"
    with pytest.raises(InvalidTable) as e:
        CM.physical_name(f, "name")
    assert e.value.rule == "DELTA-COLMAP-003"


@pytest.mark.rule("DELTA-COLMAP-006", "DELTA-COLMAP-007", "DELTA-SCHEMA-010")
def test_physical_arrow_schema_uses_physical_names_and_field_ids_at_every_level():
    schema = mapped_nested()
    phys = CM.physical_arrow_schema(schema, "name")
    s = schema.field("s")
    assert phys.names == [CM.physical_name(schema.field(n), "name") for n in ("id", "s", "arr", "m")]  # void left out
    ps = phys.field(CM.physical_name(s, "name"))
    assert ps.metadata[CM.FIELD_ID_KEY] == str(s.metadata[CM.ID_KEY]).encode()
    x = s.type.field("x")
    assert ps.type.field(0).name == x.metadata[CM.PHYSICAL_NAME_KEY]
    assert ps.type.field(0).metadata[CM.FIELD_ID_KEY] == str(x.metadata[CM.ID_KEY]).encode()
    d = schema.field("arr").type.element_type.field("d")
    elem = phys.field(2).type.value_type
    assert elem.field(0).name == d.metadata[CM.PHYSICAL_NAME_KEY]
    v = schema.field("m").type.value_type.field("v")
    assert phys.field(3).type.item_type.field(0).metadata[CM.FIELD_ID_KEY] == str(v.metadata[CM.ID_KEY]).encode()
    assert CM.physical_arrow_schema(S.parse_schema(NESTED), "none").names == ["id", "s", "arr", "m"]


@pytest.mark.rule("DELTA-SCHEMA-011")
@pytest.mark.parametrize("type_", [
    {"type": "array", "elementType": "void", "containsNull": True},
    {"type": "struct", "fields": [{"name": "v", "type": "void", "nullable": True, "metadata": {}}]},
])
def test_void_shapes_block_data_file_writes(type_):
    s = S.parse_schema(json.dumps({"type": "struct", "fields": [
        {"name": "a", "type": "long", "nullable": True, "metadata": {}},
        {"name": "b", "type": type_, "nullable": True, "metadata": {}}]}))
    assert CM.void_write_blockers(s)
    with pytest.raises(InvalidTable) as e:
        CM.physical_arrow_schema(s, "none")
    assert e.value.rule == "DELTA-SCHEMA-011"
    only_void = S.parse_schema(json.dumps({"type": "struct", "fields": [{"name": "v", "type": "void", "nullable": True, "metadata": {}}]}))
    assert CM.void_write_blockers(only_void) == ["every column of the table is void"]


@pytest.mark.rule("DELTA-COLMAP-006", "DELTA-COLMAP-007", "DELTA-COLMAP-011", "DELTA-COLMAP-013", "DELTA-SCHEMA-010")
@pytest.mark.parametrize("mode", ["name", "id"])
def test_nested_round_trip_through_parquet(mode):
    schema = mapped_nested(nested_ids=True)
    logical = pa.Table.from_pylist(NESTED_ROWS, schema=S.to_arrow_schema(schema))
    phys = write_read(CM.to_physical_table(logical, schema, mode))
    assert "gone" not in phys.column_names
    out = CM.read_file_columns(phys, schema, mode)
    assert out.schema == S.to_arrow_schema(schema)
    assert out.to_pylist() == logical.to_pylist()
    # slices keep their offsets right at every level
    assert CM.read_file_columns(phys.slice(1, 2), schema, mode).to_pylist() == logical.slice(1, 2).to_pylist()


@pytest.mark.rule("DELTA-COLMAP-011")
def test_id_mode_follows_ids_across_a_logical_rename_and_nulls_unknown_ids():
    schema = mapped_nested()
    phys = write_read(CM.to_physical_table(pa.Table.from_pylist(NESTED_ROWS, schema=S.to_arrow_schema(schema)), schema, "id"))
    # rename "s" and its child "x" logically, and give "y" a physical name the file does not use
    s = schema.field("s")
    x, y = s.type.fields
    renamed_struct = S.StructType(fields=(
        S.StructField(name="x_renamed", type=x.type, nullable=x.nullable, metadata=x.metadata),
        S.StructField(name="y", type=y.type, nullable=y.nullable, metadata={**y.metadata, CM.PHYSICAL_NAME_KEY: "col-other"}),
    ))
    new_field = S.StructField(name="s_renamed", type=renamed_struct, nullable=True, metadata=s.metadata)
    added = S.StructField(name="added", type=S.LONG, metadata={CM.ID_KEY: 99, CM.PHYSICAL_NAME_KEY: "col-added"})
    renamed = S.StructType(fields=(schema.field("id"), new_field, added))
    by_id = CM.read_file_columns(phys, renamed, "id").to_pylist()
    assert by_id[0] == {"id": 1, "s_renamed": {"x_renamed": 1, "y": "a"}, "added": None}
    by_name = CM.read_file_columns(phys, renamed, "name").to_pylist()
    assert by_name[0] == {"id": 1, "s_renamed": {"x_renamed": 1, "y": None}, "added": None}  # name mode ignores ids


@pytest.mark.rule("DELTA-COLMAP-012")
def test_id_mode_refuses_files_without_field_ids():
    schema = mapped_nested()
    plain = write_read(pa.table({"id": pa.array([1], pa.int64())}))
    with pytest.raises(InvalidTable) as e:
        CM.read_file_columns(plain, schema, "id")
    assert e.value.rule == "DELTA-COLMAP-012" and "no Parquet field ids" in str(e.value)


@pytest.mark.rule("DELTA-COLMAP-010")
def test_none_mode_matches_display_names_casts_and_fills_missing_with_null():
    schema = S.parse_schema(NESTED)
    file = pa.table({"id": pa.array([5], pa.int32()), "s": pa.array([{"y": "q"}])})  # int32 widened, s.x missing
    out = CM.read_file_columns(file, schema, "none")
    assert out.schema == S.to_arrow_schema(schema)
    assert out.to_pylist() == [{"id": 5, "s": {"x": None, "y": "q"}, "arr": None, "m": None, "gone": None}]
    assert CM.read_file_columns(file, schema, "none", columns=["s", "id"]).column_names == ["id", "s"]


def test_unknown_requested_column_and_incompatible_types_are_invalid():
    schema = S.parse_schema(NESTED)
    file = pa.table({"id": pa.array(["not a number"])})
    with pytest.raises(InvalidTable) as e:
        CM.read_file_columns(file, schema, "none")
    assert "column id" in str(e.value)
    with pytest.raises(InvalidTable):
        CM.read_file_columns(file, schema, "none", columns=["nope"])
    with pytest.raises(InvalidTable):
        CM.read_file_columns(pa.table({"s": pa.array([1])}), schema, "none")


def test_timestamps_from_int96_nanoseconds_are_truncated_to_micros():
    schema = S.parse_schema(json.dumps({"type": "struct", "fields": [{"name": "t", "type": "timestamp", "nullable": True, "metadata": {}}]}))
    file = pa.table({"t": pa.array([1_000_001_999], pa.timestamp("ns"))})
    out = CM.read_file_columns(file, schema, "none")
    assert out.schema.field("t").type == pa.timestamp("us", tz="UTC") and out.column("t")[0].value == 1_000_001


@pytest.mark.rule("DELTA-COLMAP-013", "DELTA-COLMAP-011", "DELTA-COLMAP-014")
@pytest.mark.parametrize("mode", ["name", "id"])
def test_reads_a_spark_layout_name_mode_file(mode):
    schema = S.parse_schema(SPARK_SCHEMA)
    file = read_parquet(SPARK_NAME_MODE_PARQUET)
    assert file.schema.field(0).metadata[CM.FIELD_ID_KEY] == b"2"  # Spark writes field ids in name mode too
    out = CM.read_file_columns(file, schema, mode, columns=["col1", "col2"])
    assert out.to_pylist() == SPARK_ROWS
    # the partition column is not in the file: null here, the reader fills it from partitionValues
    assert CM.read_file_columns(file, schema, mode).column("part").null_count == 3
    assert CM.logical_to_physical_top(schema, mode)["part"] == "col-60c949ca-b8bc-4330-b931-b73fb4c60037"


@pytest.mark.rule("DELTA-COLMAP-006", "DELTA-SCHEMA-010")
def test_to_physical_table_matches_children_by_name_and_skips_nested_void():
    schema, _ = CM.assign_column_mapping(S.parse_schema(json.dumps({"type": "struct", "fields": [
        {"name": "s", "type": {"type": "struct", "fields": [
            {"name": "x", "type": "integer", "nullable": True, "metadata": {}},
            {"name": "v", "type": "void", "nullable": True, "metadata": {}},
            {"name": "y", "type": "string", "nullable": True, "metadata": {}}]}, "nullable": True, "metadata": {}},
        {"name": "id", "type": "long", "nullable": False, "metadata": {}}]})), 0)
    rows = pa.table({"id": pa.array([7], pa.int32()), "s": pa.array([{"y": "b", "x": 1}])})  # other order, no v
    phys = write_read(CM.to_physical_table(rows, schema, "name"))
    inner = phys.schema.field(0).type
    assert inner.num_fields == 2  # void child not written
    assert CM.read_file_columns(phys, schema, "id").to_pylist() == [{"s": {"x": 1, "v": None, "y": "b"}, "id": 7}]
    with pytest.raises(InvalidTable, match="not nullable"):
        CM.to_physical_table(pa.table({"s": pa.array([{"x": 1}])}), schema, "name")
