"""Schema evolution on read (reference_impl.hudi.internal_schema, the reader's by-id resolution, the writer's
ALTER TABLE, the validator's history checks): the InternalSchema JSON as hudi-spark 1.2 writes it (shapes measured
on Spark-written tables: underscore keys, meta columns numbered 0-4, a record's own fields numbered before their
children), the merge of a file's columns into the query schema by field id, each DDL kind written and read back,
the refusals with their rule ids, and one mutation per validator check."""

from __future__ import annotations

import glob
import json
import os

import pyarrow as pa
import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import internal_schema as IS
from reference_impl.hudi import table as H
from reference_impl.hudi import writer as W
from reference_impl.hudi.validate import CHECKS, validate_table

# A version as hudi-spark 1.2 prints it (the shape of the measured .schemacommit files), with every type.
SPARK_VERSION = (
    '{"max_column_id":17,"version_id":20261126173220175,"type":"record","fields":['
    '{"id":0,"name":"_hoodie_commit_time","optional":true,"type":"string","doc":""},'
    '{"id":1,"name":"id","optional":false,"type":"int"},'
    '{"id":2,"name":"d","optional":true,"type":"decimal(10, 2)"},'
    '{"id":3,"name":"f","optional":true,"type":"fixed[16]"},'
    '{"id":4,"name":"t","optional":true,"type":"timestamp"},'
    '{"id":5,"name":"tm","optional":true,"type":"timestamp_millis"},'
    '{"id":6,"name":"lt","optional":true,"type":"local_timestamp_micros"},'
    '{"id":7,"name":"s","optional":true,"type":{"type":"record","fields":['
    '{"id":10,"name":"a","optional":true,"type":"boolean"},{"id":11,"name":"b","optional":true,"type":"date"}]}},'
    '{"id":8,"name":"m","optional":true,"type":{"type":"map","key_id":12,"key":"string","value_id":13,"value":'
    '{"type":"record","fields":[{"id":15,"name":"x","optional":true,"type":"binary"}]},"value_optional":true}},'
    '{"id":9,"name":"arr","optional":true,"type":{"type":"array","element_id":14,"element":"double",'
    '"element_optional":true}},'
    '{"id":16,"name":"l","optional":true,"type":"long"},{"id":17,"name":"u","optional":true,"type":"uuid"}]}')


# ------------------------------------------------------------------ JSON


@pytest.mark.rule("HUDI-EVOLR-017")
def test_round_trip_is_byte_exact():
    v = IS.parse(SPARK_VERSION)
    assert IS.to_json(v) == SPARK_VERSION
    assert v.version_id == 20261126173220175 and v.max_column_id == 17
    history = IS.history_json([v, IS.InternalSchema(record=v.record, max_column_id=17, version_id=0)])
    assert history.startswith('{"schemas":[{"max_column_id":17,"version_id":20261126173220175,')
    assert [x.version_id for x in IS.parse_history(history)] == [0, 20261126173220175]  # oldest first


@pytest.mark.rule("HUDI-EVOLR-017")
def test_types_map_to_arrow():
    s = IS.arrow_schema(IS.parse(SPARK_VERSION))
    assert s.field("d").type == pa.decimal128(10, 2)
    assert s.field("f").type == pa.binary(16)
    assert s.field("t").type == pa.timestamp("us", tz="UTC")
    assert s.field("tm").type == pa.timestamp("ms", tz="UTC")
    assert s.field("lt").type == pa.timestamp("us")
    assert s.field("m").type.item_type == pa.struct([("x", pa.binary())])
    assert s.field("arr").type.value_type == pa.float64()
    assert s.field("u").type == pa.string()


@pytest.mark.rule("HUDI-EVOLR-017")
def test_old_hyphen_spelling_reads():
    old = SPARK_VERSION.replace('"version_id"', '"version-id"').replace('"key_id"', '"key-id"') \
        .replace('"value_id"', '"value-id"').replace('"element_id"', '"element-id"')
    assert IS.parse(old) == IS.parse(SPARK_VERSION)


@pytest.mark.rule("HUDI-EVOLR-017")
@pytest.mark.parametrize("text,fragment", [
    ("not json", "not JSON"),
    ('{"type":"record","fields":[{"id":0,"name":"a","optional":true,"type":"varchar"}]}', "unknown type"),
    ('{"type":"record","fields":[{"name":"a","optional":true,"type":"int"}]}', "int id"),
    ('{"type":"array"}', "record object"),
    ('{"type":"record","fields":[{"id":0,"name":"a","optional":true,"type":"decimal(2, 5)"}]}', "not a valid"),
])
def test_bad_json_is_invalid_table(text, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        IS.parse(text)
    with pytest.raises(InvalidTable):
        IS.parse_history('{"schemas":[' + text + "]}" if text.startswith("{") else text)


@pytest.mark.rule("HUDI-EVOLR-017")
def test_fresh_ids_follow_hudi_numbering():
    # Measured on a Spark table: record fields first (0..n-1), then each field's children in order; a map takes its
    # key and value ids before the value's fields; an array its element id.
    s = pa.schema([("id", pa.int32()), ("s", pa.struct([("a", pa.int32())])),
                   ("m", pa.map_(pa.string(), pa.struct([("x", pa.int32())]))),
                   ("arr", pa.list_(pa.struct([("e", pa.int32())])))])
    v = IS.from_arrow(s)
    assert {n: i for i, n, _f in IS.walk(v.record)} == {
        "id": 0, "s": 1, "m": 2, "arr": 3, "s.a": 4, "m.key": 5, "m.value": 6, "m.value.x": 7, "arr.element": 8,
        "arr.element.e": 9}
    assert v.max_column_id == 9


@pytest.mark.rule("HUDI-EVOLR-017")
def test_history_picks_the_version_of_an_instant():
    base = IS.from_arrow(pa.schema([("a", pa.int32())]))
    vs = tuple(IS.InternalSchema(record=base.record, max_column_id=0, version_id=t) for t in (0, 100, 200))
    h = IS.History(versions=vs)
    assert h.at("150").version_id == 100 and h.at("200").version_id == 200 and h.at("50").version_id == 0


# ------------------------------------------------------------------ merge by id


def _v(schema: pa.Schema) -> IS.InternalSchema:
    return IS.from_arrow(schema)


@pytest.mark.rule("HUDI-EVOLR-017", "HUDI-EVOLR-016", "HUDI-EVOLR-014", "HUDI-EVOLR-012", "HUDI-CHG-001")
def test_merge_by_id():
    file_v = _v(pa.schema([("id", pa.int32()), ("name", pa.string()), ("qty", pa.int32()),
                           ("s", pa.struct([("a", pa.int32()), ("b", pa.string())]))]))
    q = IS.rename_column(file_v, "name", "full_name")
    q = IS.add_column(q, "name", pa.string(), after="id")  # reuses the old name, a new id
    q = IS.update_type(q, "qty", pa.int64())
    q = IS.move_column(q, "qty", after="id")
    q = IS.drop_columns(q, ["s.b"])
    q = IS.rename_column(q, "s.a", "aa")
    data = pa.table({"id": pa.array([1], pa.int32()), "name": ["old"], "qty": pa.array([7], pa.int32()),
                     "s": pa.array([{"a": 5, "b": "x"}], pa.struct([("a", pa.int32()), ("b", pa.string())]))})
    target = IS.arrow_schema(q)
    out = IS.merge(data, file_v, q, target)
    assert out.column_names == ["id", "qty", "name", "full_name", "s"]
    assert out.to_pylist() == [{"id": 1, "qty": 7, "name": None, "full_name": "old", "s": {"aa": 5}}]
    assert out.schema.field("qty").type == pa.int64()


@pytest.mark.rule("HUDI-EVOLR-008", "HUDI-EVOLR-005", "HUDI-EVOLR-017")
def test_merge_nested_map_and_array():
    mv = pa.map_(pa.string(), pa.struct([("x", pa.int32())]))
    ar = pa.list_(pa.field("element", pa.struct([("e", pa.int32())])))
    file_v = _v(pa.schema([("m", mv), ("arr", ar)]))
    q = IS.add_column(file_v, "m.value.y", pa.string())
    q = IS.rename_column(q, "arr.element.e", "e2")
    data = pa.table({"m": pa.array([[("k", {"x": 1})]], mv), "arr": pa.array([[{"e": 3}]], ar)})
    out = IS.merge(data, file_v, q, IS.arrow_schema(q))
    assert out.to_pylist() == [{"m": [("k", {"x": 1, "y": None})], "arr": [{"e2": 3}]}]


# ------------------------------------------------------------------ DDL refusals


@pytest.mark.rule("HUDI-EVOLR-009", "HUDI-EVOLR-011", "HUDI-EVOLR-013", "HUDI-EVOLR-015", "HUDI-CHG-014",
                  "HUDI-CHG-006")
@pytest.mark.parametrize("change,rule", [
    (lambda v: IS.add_column(v, "z", pa.int32(), first=True), "HUDI-EVOLR-009"),
    (lambda v: IS.move_column(v, "qty", first=True), "HUDI-EVOLR-009"),
    (lambda v: IS.add_column(v, "m.key.q", pa.int32()), "HUDI-EVOLR-011"),
    (lambda v: IS.update_type(v, "s", pa.struct([("a", pa.int64())])), "HUDI-EVOLR-013"),
    (lambda v: IS.drop_columns(v, ["s.a"]), "HUDI-EVOLR-015"),
    (lambda v: IS.update_type(v, "big", pa.int32()), "HUDI-CHG-014"),
    (lambda v: IS.update_type(v, "qty", pa.date32()), "HUDI-CHG-006"),
])
def test_refusals(change, rule):
    v = _v(pa.schema([("qty", pa.int32()), ("big", pa.int64()), ("s", pa.struct([("a", pa.int32())])),
                      ("m", pa.map_(pa.string(), pa.int32()))]))
    with pytest.raises(Unsupported) as exc:
        change(v)
    assert exc.value.rule == rule


@pytest.mark.rule("HUDI-EVOLR-010", "HUDI-EVOLR-007")
def test_after_needs_a_sibling():
    v = _v(pa.schema([("a", pa.int32()), ("s", pa.struct([("x", pa.int32())]))]))
    with pytest.raises(Unsupported, match="same struct"):
        IS.add_column(v, "s.y", pa.int32(), after="a")
    with pytest.raises(InvalidTable, match="already exists"):
        IS.add_column(v, "a", pa.int32())
    assert [f.name for f in IS.add_column(v, "s.y", pa.int32(), first=True).find("s").type.fields] == ["y", "x"]


# ------------------------------------------------------------------ writer + reader


SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("name", pa.string()), ("qty", pa.int32()),
                    ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])), ("part", pa.string())])
ROWS = [{"id": "1", "ts": 1, "name": "one", "qty": 1, "s": {"a": 1, "b": "x"}, "part": "a"}]


def _table(tmp_path, kind="COPY_ON_WRITE", version=9, fmt="avro"):
    root = str(tmp_path / f"t_{kind}_{version}_{fmt}")
    W.create_table(root, SCHEMA, record_key=["id"], partition_fields=["part"], ordering_fields=["ts"],
                   table_type=kind, table_version=version, hive_style=True, log_block_format=fmt)
    W.insert(root, pa.Table.from_pylist(ROWS, schema=SCHEMA))
    return root


def _data_schema(root):
    return pa.schema([f for f in H.open_state(root).schema if not f.name.startswith("_hoodie")])


def _rows(root, **kw):
    return sorted(H.read_table(root, meta_columns=False, **kw).to_pylist(), key=lambda r: r["id"])


VARIANTS = [("COPY_ON_WRITE", 9, "avro"), ("MERGE_ON_READ", 9, "avro"), ("MERGE_ON_READ", 6, "avro"),
            ("MERGE_ON_READ", 9, "parquet"), ("COPY_ON_WRITE", 6, "avro")]


@pytest.mark.rule("HUDI-EVOLR-016", "HUDI-EVOLR-007", "HUDI-EVOLR-017", "HUDI-EVOLR-004")
@pytest.mark.parametrize("kind,version,fmt", VARIANTS)
def test_rename_then_add_old_name_reads_by_id(tmp_path, kind, version, fmt):
    root = _table(tmp_path, kind, version, fmt)
    W.rename_column(root, "name", "full_name")
    W.add_column_at(root, "name", pa.string(), after="id")
    s = _data_schema(root)
    assert s.names == ["id", "name", "ts", "full_name", "qty", "s", "part"]
    new = {"id": "2", "name": "n2", "ts": 2, "full_name": "two", "qty": 2, "s": {"a": 2, "b": "y"}, "part": "a"}
    W.upsert(root, pa.Table.from_pylist([new, {**ROWS[0], "name": "n1", "full_name": "one v2", "ts": 3}], schema=s))
    assert _rows(root) == [{**ROWS[0], "name": "n1", "full_name": "one v2", "ts": 3}, new]
    assert validate_table(root) == []
    history = sorted(glob.glob(os.path.join(root, ".hoodie/.schema/*.schemacommit")))
    assert history and json.loads(open(history[-1]).read())["schemas"][-1]["version_id"] == 0


@pytest.mark.rule("HUDI-EVOLR-014", "HUDI-EVOLR-012", "HUDI-EVOLR-008", "HUDI-CHG-001", "HUDI-EVOLR-017")
@pytest.mark.parametrize("kind,version,fmt", VARIANTS[:3])
def test_each_ddl_kind(tmp_path, kind, version, fmt):
    root = _table(tmp_path, kind, version, fmt)
    W.drop_columns(root, "s.b")
    W.rename_column(root, "s.a", "aa")
    W.add_column_at(root, "s.c", pa.int32(), first=True)
    W.alter_column_type(root, "qty", pa.int64())
    W.move_column(root, "qty", after="id")
    W.drop_columns(root, ["name"])
    s = _data_schema(root)
    assert s.names == ["id", "qty", "ts", "s", "part"]
    assert s.field("s").type == pa.struct([("c", pa.int32()), ("aa", pa.int32())])
    assert _rows(root) == [{"id": "1", "qty": 1, "ts": 1, "s": {"c": None, "aa": 1}, "part": "a"}]
    W.upsert(root, pa.Table.from_pylist([{"id": "1", "qty": 2**40, "ts": 2, "s": {"c": 3, "aa": 4}, "part": "a"}],
                                        schema=s))
    assert _rows(root) == [{"id": "1", "qty": 2**40, "ts": 2, "s": {"c": 3, "aa": 4}, "part": "a"}]
    if kind == "MERGE_ON_READ":  # the base file alone, resolved by id
        assert _rows(root, query="read_optimized") == [{"id": "1", "qty": 1, "ts": 1, "s": {"c": None, "aa": 1},
                                                        "part": "a"}]
    assert validate_table(root) == []


@pytest.mark.rule("HUDI-EVOLR-017", "HUDI-COMMIT-003")
def test_time_travel_reads_the_old_version(tmp_path):
    from reference_impl.hudi import versions as V

    root = _table(tmp_path)
    W.rename_column(root, "name", "full_name")
    first = V.point(root_storage(root), 1)
    old = H.read_table(root, meta_columns=False, **first.read_options())
    assert old.column_names == SCHEMA.names and old.to_pylist() == ROWS
    assert H.read_table(root, meta_columns=False).column_names[2] == "full_name"


def root_storage(root):
    from reference_impl.storage import open_storage

    return open_storage(root)


@pytest.mark.rule("HUDI-EVOLR-006", "HUDI-EVOLR-001")
def test_writer_refusals(tmp_path):
    root = _table(tmp_path)
    for call in (lambda: W.rename_column(root, "part", "p2"), lambda: W.drop_columns(root, "id"),
                 lambda: W.alter_column_type(root, "ts", pa.string())):
        with pytest.raises(Unsupported) as exc:
            call()
        assert exc.value.rule == "HUDI-EVOLR-006"
    with pytest.raises(Unsupported) as exc:
        W.rename_column(root, "name", "n", schema_on_read=False)
    assert exc.value.rule == "HUDI-EVOLR-001"
    assert not glob.glob(os.path.join(root, ".hoodie/.schema/*"))  # refused before anything was written


# ------------------------------------------------------------------ validator mutations


def _sor_table(tmp_path):
    root = _table(tmp_path)
    W.rename_column(root, "name", "full_name")
    return root


def _newest_history(root):
    return sorted(glob.glob(os.path.join(root, ".hoodie/.schema/*.schemacommit")))[-1]


def _edit_history(root, fn):
    path = _newest_history(root)
    node = json.loads(open(path).read())
    fn(node["schemas"])
    open(path, "w").write(json.dumps(node, separators=(",", ":")))


def _rules(root):
    return {v.rule for v in validate_table(root)}


def _set_type(schemas, name, t):
    for f in schemas[0]["fields"]:
        if f["name"] == name:
            f["type"] = t


@pytest.mark.rule("HUDI-EVOLR-017", "HUDI-EVOLR-006", "HUDI-EVOLR-009", "HUDI-EVOLR-013", "HUDI-EVOLR-015",
                  "HUDI-CHG-014")
@pytest.mark.parametrize("mutate,rule", [
    (lambda s: s[0]["fields"][7].__setitem__("id", 12), "HUDI-EVOLR-017"),  # full_name takes s.b's id
    (lambda s: s[0].__setitem__("max_column_id", 3), "HUDI-EVOLR-017"),  # ids above max_column_id
    (lambda s: s[0]["fields"][-1].__setitem__("name", "part2"), "HUDI-EVOLR-006"),  # partition renamed
    (lambda s: s[0]["fields"].insert(0, s[0]["fields"].pop(1)) or s[0]["fields"].__setitem__(
        0, {**s[0]["fields"][0], "id": 99}) or s[0].__setitem__("max_column_id", 99), "HUDI-EVOLR-009"),
    (lambda s: _set_type(s, "qty", {"type": "record", "fields": [{"id": 98, "name": "z", "optional": True,
                                                                 "type": "int"}]}), "HUDI-EVOLR-013"),
    (lambda s: _set_type(s, "s", {"type": "record", "fields": []}), "HUDI-EVOLR-015"),
    (lambda s: _set_type(s, "ts", "int"), "HUDI-CHG-014"),
])
def test_history_mutations(tmp_path, mutate, rule):
    root = _sor_table(tmp_path)
    assert validate_table(root) == []
    _edit_history(root, mutate)
    assert rule in _rules(root)
    assert _rules(root) <= {rule, "HUDI-EVOLR-017"}  # a bad history also misleads file resolution


@pytest.mark.rule("HUDI-EVOLR-017")
def test_unparseable_history(tmp_path):
    root = _sor_table(tmp_path)
    open(_newest_history(root), "w").write("{")
    assert _rules(root) == {"HUDI-EVOLR-017"}
    with pytest.raises(InvalidTable):
        H.read_table(root)


@pytest.mark.rule("HUDI-EVOLR-003")
def test_commit_without_latest_schema(tmp_path):
    from reference_impl.hudi import commit_metadata as CM

    root = _sor_table(tmp_path)
    W.insert(root, pa.Table.from_pylist([{**ROWS[0], "id": "9"}], schema=_data_schema(root)))
    newest = sorted(glob.glob(os.path.join(root, ".hoodie/timeline/*.commit")))[-1]
    data = open(newest, "rb").read()
    meta = CM.parse_commit_metadata(data)
    assert IS.LATEST_SCHEMA in meta.extra_metadata  # the writer keeps it going by itself
    # A commit written as if schema on read were off: latest_schema and its history file stripped.
    from reference_impl.hudi import writer_meta as WM

    instant = os.path.basename(newest).split("_")[0]
    for p in glob.glob(os.path.join(root, f".hoodie/.schema/{instant}*")):
        os.remove(p)
    stats = {}
    for st in meta.write_stats():
        stats.setdefault(st.partition_path, []).append({"fileId": st.file_id, "path": st.path, "prevCommit": "null",
                                                        "partitionPath": st.partition_path, "numWrites": 1,
                                                        "numInserts": 1, "totalWriteBytes": 1, "fileSizeInBytes": 1})
    open(newest, "wb").write(WM.encode_commit_metadata(stats, table_version=9, operation="INSERT",
                                                       schema=meta.extra_metadata["schema"]))
    assert "HUDI-EVOLR-003" in _rules(root)


def test_checks_are_registered():
    for rule in ("HUDI-EVOLR-003", "HUDI-EVOLR-006", "HUDI-EVOLR-009", "HUDI-EVOLR-011", "HUDI-EVOLR-013",
                 "HUDI-EVOLR-015", "HUDI-EVOLR-017", "HUDI-CHG-006", "HUDI-CHG-014"):
        assert rule in CHECKS, rule
