"""Schema files (reference_impl.paimon.schema): pypaimon-written schemas, the compatibility rules, options, checks.

pypaimon 2.1.0 creates and alters real tables; every ``schema-N`` must read to what pypaimon's
SchemaManager reports. Hand-written JSON covers the old versions (no ``version``, v1 without
``bucket``, v1/v2 without ``file.format``) and what the validator must report.
"""

from __future__ import annotations

import json

import pytest

from conformance.roundtrip import assert_roundtrip
from conformance.suites.unit._errors import raises
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import layout as L
from reference_impl.paimon import schema as SC
from reference_impl.paimon.types import field_json
from reference_impl.storage import LocalStorage

BASE = {"version": 3, "id": 0, "fields": [{"id": 0, "name": "k", "type": "BIGINT NOT NULL"}, {"id": 1, "name": "dt", "type": "STRING"},
                                          {"id": 2, "name": "v", "type": "INT"}],
        "highestFieldId": 2, "partitionKeys": ["dt"], "primaryKeys": ["k", "dt"], "options": {"bucket": "4"},
        "timeMillis": 1720496663041}


def schema(**changes):
    node = json.loads(json.dumps(BASE))
    for key, value in changes.items():
        if value is ...:
            node.pop(key, None)
        else:
            node[key] = value
    return node


def rules(violations):
    return sorted(v.rule for v in violations)


# --- pypaimon-written schemas -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """db.pk (nested types, partitioned, bucket 2, altered three times) and db.ap (append, no options)."""
    pytest.importorskip("pypaimon")
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    root = tmp_path_factory.mktemp("paimon-schema")
    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("db", True)
    nested = pa.schema([
        pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
        pa.field("s", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.list_(pa.float64()))])),
        pa.field("m", pa.map_(pa.string(), pa.struct([pa.field("x", pa.bool_())]))),
        pa.field("d", pa.decimal128(20, 4)), pa.field("ts", pa.timestamp("us")), pa.field("bin", pa.binary()),
    ])
    cat.create_table("db.pk", Schema.from_pyarrow_schema(nested, partition_keys=["dt"], primary_keys=["id", "dt"],
                                                         options={"bucket": "2", "merge-engine": "partial-update"},
                                                         comment="a table"), False)
    cat.alter_table("db.pk", [SchemaChange.add_column("extra", AtomicType("INT"))])
    cat.alter_table("db.pk", [SchemaChange.set_option("snapshot.num-retained.max", "7")])
    cat.alter_table("db.pk", [SchemaChange.rename_column("extra", "extra2")])
    cat.create_table("db.ap", Schema.from_pyarrow_schema(pa.schema([pa.field("x", pa.int32())])), False)
    return cat, root / "db.db"


def without_nullable_key(node):
    """pypaimon's type JSON minus the ``nullable`` key it adds to nested types (Java writes only the NOT NULL suffix)."""
    if isinstance(node, dict):
        if "nullable" in node:
            assert node["nullable"] == (not node["type"].endswith(" NOT NULL")), node  # redundant, but consistent
        return {k: without_nullable_key(v) for k, v in node.items() if k != "nullable"}
    if isinstance(node, list):
        return [without_nullable_key(v) for v in node]
    return node


def assert_same_as_pypaimon(ours: SC.TableSchema, theirs) -> None:
    assert ours.id == theirs.id and ours.version == theirs.version
    assert [field_json(f) for f in ours.fields] == [without_nullable_key(f.to_dict()) for f in theirs.fields]
    assert ours.highest_field_id == theirs.highest_field_id
    assert list(ours.partition_keys) == theirs.partition_keys and list(ours.primary_keys) == theirs.primary_keys
    assert dict(ours.options) == theirs.options
    assert ours.comment == theirs.comment and ours.time_millis == theirs.time_millis


@pytest.mark.rule("PAIMON-SCHEMA-001", "PAIMON-SCHEMA-002", "PAIMON-SCHEMA-003", "PAIMON-SCHEMA-004", "PAIMON-SCHEMA-017",
                  "PAIMON-SCHEMA-018", "PAIMON-SCHEMA-019", "PAIMON-LAYOUT-003")
def test_pypaimon_schemas_read_exactly(tables):
    """schema-0..3 of an altered table read to what pypaimon's SchemaManager reads, nested types included."""
    cat, root = tables
    table = cat.get_table("db.pk")
    st = LocalStorage(str(root / "pk"))
    assert SC.schema_ids(st) == [0, 1, 2, 3]
    ours = SC.list_schemas(st)
    theirs = table.schema_manager.list_all()
    assert len(ours) == len(theirs) == 4
    for o, t in zip(ours, theirs):
        assert_same_as_pypaimon(o, t)
        assert SC.validate_schema(o) == []
        assert o.version == SC.CURRENT_VERSION
    assert SC.check_schema_history(ours) == []
    assert ours[1].field_names[-1] == "extra" and ours[3].field_names[-1] == "extra2"
    assert ours[3].get_field("extra2").id == ours[1].get_field("extra").id == ours[3].highest_field_id
    assert ours[2].options["snapshot.num-retained.max"] == "7"
    assert SC.latest_schema(st).id == 3
    assert SC.load_schema(st, 1) == ours[1]


@pytest.mark.rule("PAIMON-SCHEMA-010", "PAIMON-BUCKET-001", "PAIMON-BUCKET-003")
def test_pypaimon_options_and_defaults(tables):
    """Options read with Java's defaults: PK table bucket key = trimmed PK; append table bucket -1, parquet."""
    _cat, root = tables
    pk = SC.latest_schema(LocalStorage(str(root / "pk")))
    assert pk.bucket == 2 and pk.bucket_keys == ("id",) and pk.trimmed_primary_keys == ("id",)
    assert pk.merge_engine == "partial-update" and pk.file_format == "parquet" and pk.is_primary_key_table
    ap = SC.latest_schema(LocalStorage(str(root / "ap")))
    assert ap.options == {} and ap.bucket == SC.DYNAMIC_BUCKET and ap.bucket_keys == ()
    assert (ap.file_format, ap.merge_engine, ap.changelog_producer, ap.deletion_vectors_enabled) == (
        "parquet", "deduplicate", "none", False)
    assert ap.option("file.compression") == "zstd" and ap.option("no.such.option") is None


@pytest.mark.rule("PAIMON-SCHEMA-002")
def test_schema_roundtrip(tables):
    """parse -> to_dict -> parse is the identity; to_dict is what Java writes (comment only when set)."""
    _cat, root = tables
    for s in SC.list_schemas(LocalStorage(str(root / "pk"))):
        assert_roundtrip(s, SC.schema_to_dict, SC.parse_schema, label=f"schema-{s.id}")
    assert "comment" not in SC.schema_to_dict(SC.parse_schema(schema()))


@pytest.mark.rule("PAIMON-SCHEMA-019")
def test_pypaimon_writes_an_extra_nullable_key(tables):
    """Finding: pypaimon 2.1.0 adds ``"nullable": true`` to nested type objects; Java writes (and reads) only the
    ``type`` string's NOT NULL suffix. The reference ignores the key and takes nullability from the suffix."""
    _cat, root = tables
    raw = json.loads((root / "pk" / "schema" / "schema-0").read_text())
    row = next(f for f in raw["fields"] if f["name"] == "s")["type"]
    assert row["type"] == "ROW" and row["nullable"] is True
    ours = SC.load_schema(LocalStorage(str(root / "pk")), 0).get_field("s")
    assert "nullable" not in field_json(ours)["type"] and ours.type.nullable


@pytest.mark.rule("PAIMON-SCHEMA-002")
def test_pypaimon_writes_comment_null(tables):
    """pypaimon writes ``"comment": null`` where Java omits the key (Java would read the text "null"); we read None."""
    _cat, root = tables
    raw = json.loads((root / "ap" / "schema" / "schema-0").read_text())
    assert "comment" in raw and raw["comment"] is None
    assert SC.load_schema(LocalStorage(str(root / "ap")), 0).comment is None


# --- compatibility rules (hand-written JSON, checked against pypaimon's reader too) ----------


def pypaimon_reads(node):
    pytest.importorskip("pypaimon")
    from pypaimon.schema.table_schema import TableSchema

    return TableSchema.from_json(json.dumps(node))


@pytest.mark.rule("PAIMON-SCHEMA-011", "PAIMON-SCHEMA-012", "PAIMON-SCHEMA-013")
def test_no_version_is_version_1():
    """No ``version``: version 1, so bucket=1 and file.format=orc when absent."""
    s = SC.parse_schema(schema(version=..., options={}))
    assert s.version == 1 and s.bucket == 1 and s.file_format == "orc"
    assert dict(s.options) == pypaimon_reads(schema(version=..., options={})).options == {"bucket": "1", "file.format": "orc"}


@pytest.mark.rule("PAIMON-SCHEMA-011", "PAIMON-SCHEMA-013")
@pytest.mark.parametrize("version, options, expected", [
    (1, {}, {"bucket": "1", "file.format": "orc"}),
    (1, {"bucket": "3"}, {"bucket": "3", "file.format": "orc"}),
    (1, {"file.format": "avro"}, {"bucket": "1", "file.format": "avro"}),
    (2, {}, {"file.format": "orc"}),
    (2, {"file.format": "parquet"}, {"file.format": "parquet"}),
    (3, {}, {}),
])
def test_compatibility_defaults(version, options, expected):
    """v1 without bucket -> 1; v1/v2 without file.format -> orc; v3 gets nothing (CoreOptions defaults apply)."""
    s = SC.parse_schema(schema(version=version, options=options))
    assert dict(s.options) == expected == pypaimon_reads(schema(version=version, options=options)).options
    assert s.bucket == int(expected.get("bucket", -1))
    assert s.file_format == expected.get("file.format", "parquet")


@pytest.mark.rule("PAIMON-SCHEMA-021", "PAIMON-SCHEMA-005")
def test_missing_time_millis_and_tolerated_keys():
    """Missing timeMillis reads 0; unknown keys are ignored; description and defaultValue read."""
    fields = [{"id": 0, "name": "k", "type": "INT NOT NULL", "description": "key", "defaultValue": "0", "x-extra": 1}]
    s = SC.parse_schema(schema(timeMillis=..., fields=fields, highestFieldId=0, partitionKeys=[], primaryKeys=["k"],
                               futureKey={"a": [1]}))
    assert s.time_millis == 0 and s.comment is None
    assert (s.fields[0].description, s.fields[0].default_value) == ("key", "0")
    assert SC.parse_schema(schema(timeMillis=None)).time_millis == 0


@pytest.mark.rule("PAIMON-SCHEMA-003")
def test_newer_schema_version_is_unsupported():
    raises(Unsupported, "PAIMON-SCHEMA-003", "version 4", SC.parse_schema, schema(version=4))


@pytest.mark.rule("PAIMON-SCHEMA-002", "PAIMON-SCHEMA-010")
@pytest.mark.parametrize("changes, rule, fragment", [
    ({"id": ...}, "PAIMON-SCHEMA-002", "'id'"), ({"id": "0"}, "PAIMON-SCHEMA-002", "'id'"), ({"id": -1}, "PAIMON-SCHEMA-002", "'id'"),
    ({"fields": {}}, "PAIMON-SCHEMA-002", "fields"), ({"highestFieldId": ...}, "PAIMON-SCHEMA-002", "highestFieldId"),
    ({"partitionKeys": "dt"}, "PAIMON-SCHEMA-002", "partitionKeys"), ({"primaryKeys": [1]}, "PAIMON-SCHEMA-002", "primaryKeys"),
    ({"options": []}, "PAIMON-SCHEMA-010", "options"), ({"options": {"a": None}}, "PAIMON-SCHEMA-010", "'a'"),
    ({"options": {"a": 1.5}}, "PAIMON-SCHEMA-010", "'a'"), ({"comment": 5}, "PAIMON-SCHEMA-002", "comment"),
    ({"version": "3"}, "PAIMON-SCHEMA-003", "version"), ({"timeMillis": "x"}, "PAIMON-SCHEMA-021", "timeMillis"),
    ({"fields": [{"id": 0, "name": "k"}]}, "PAIMON-SCHEMA-004", "no 'type'"),
    ({"fields": [{"id": 0, "name": "k", "type": "NOPE"}]}, "PAIMON-SCHEMA-017", "NOPE"),
])
def test_unreadable_schemas_name_key_and_rule(changes, rule, fragment):
    try:
        SC.parse_schema(schema(**changes))
    except (InvalidTable, Unsupported) as exc:
        assert exc.rule == rule, exc
        assert fragment in str(exc)
    else:
        pytest.fail(f"{changes} was accepted")


@pytest.mark.rule("PAIMON-SCHEMA-002")
@pytest.mark.parametrize("data", [b"", b"{", b"[]", b"\xff\xfe", b"[" * 50_000 + b"]" * 50_000])
def test_not_a_schema_file(data):
    raises(InvalidTable, "PAIMON-SCHEMA-002", "schema", SC.parse_schema, data)


@pytest.mark.rule("PAIMON-LAYOUT-003", "PAIMON-SNAP-008")
def test_schema_files_of_a_table(tmp_path):
    """load_schema checks the id inside; a missing id names the ids that exist; strays are ignored."""
    st = LocalStorage(str(tmp_path))
    for i in (0, 1, 3):
        st.write_atomic(L.MAIN.schema_path(i), json.dumps(schema(id=i)).encode())
    st.write_atomic("schema/schema-02", b"{}")
    st.write_atomic("schema/.schema-4.tmp", b"{}")
    assert SC.schema_ids(st) == [0, 1, 3]
    assert SC.latest_schema(st).id == 3
    raises(InvalidTable, "PAIMON-SNAP-008", "schemas: 0..1, 3", SC.load_schema, st, 2)
    st.write_atomic(L.MAIN.schema_path(5), json.dumps(schema(id=4)).encode())
    raises(InvalidTable, "PAIMON-LAYOUT-003", "schema-5 holds schema id 4", SC.load_schema, st, 5)
    assert SC.latest_schema(LocalStorage(str(tmp_path / "empty"))) is None


# --- options helpers ------------------------------------------------------------------------------


@pytest.mark.rule("PAIMON-BUCKET-003", "PAIMON-BUCKET-004")
def test_bucket_keys():
    """Explicit bucket-key split on ',' as Java does (no trimming); else the trimmed primary key; none for append tables."""
    assert SC.parse_schema(schema()).bucket_keys == ("k",)
    assert SC.parse_schema(schema(options={"bucket-key": "k"})).bucket_keys == ("k",)
    assert SC.parse_schema(schema(options={"bucket-key": "k, v"})).bucket_keys == ("k", " v")
    assert SC.parse_schema(schema(options={"bucket-key": "  "})).bucket_keys == ("k",)
    assert SC.parse_schema(schema(primaryKeys=[])).bucket_keys == ()


@pytest.mark.rule("PAIMON-SCHEMA-010")
def test_enum_and_boolean_options():
    """Enums and booleans compare case-insensitively (OptionsUtils); an unknown value is an error naming the choices."""
    s = SC.parse_schema(schema(options={"merge-engine": "FIRST-ROW", "changelog-producer": "Lookup",
                                        "deletion-vectors.enabled": "TRUE", "sequence.field": "a, b ,c"}))
    assert (s.merge_engine, s.changelog_producer, s.deletion_vectors_enabled) == ("first-row", "lookup", True)
    assert s.sequence_fields == ("a", "b", "c")
    raises(InvalidTable, "PAIMON-SCHEMA-010", "deduplicate, partial-update", lambda: SC.parse_schema(
        schema(options={"merge-engine": "dedupe"})).merge_engine)
    raises(InvalidTable, "PAIMON-SCHEMA-010", "not a boolean", lambda: SC.parse_schema(
        schema(options={"deletion-vectors.enabled": "yes"})).deletion_vectors_enabled)
    raises(InvalidTable, "PAIMON-BUCKET-001", "not an integer", lambda: SC.parse_schema(schema(options={"bucket": "two"})).bucket)
    assert SC.parse_schema(schema(options={"bucket": "+3"})).bucket == 3  # Integer.parseInt accepts a sign


# --- validation helpers ---------------------------------------------------------------------------


def nested(*fields, highest):
    return schema(fields=list(fields), highestFieldId=highest, partitionKeys=[], primaryKeys=[], options={})


@pytest.mark.rule("PAIMON-SCHEMA-006")
def test_field_ids_unique_across_nesting():
    row = {"type": "ROW", "fields": [{"id": 0, "name": "a", "type": "INT"}]}
    s = SC.parse_schema(nested({"id": 0, "name": "x", "type": "INT"}, {"id": 1, "name": "r", "type": row}, highest=1))
    assert rules(SC.check_field_ids(s)) == ["PAIMON-SCHEMA-006"]
    s = SC.parse_schema(nested({"id": 0, "name": "x", "type": "INT"}, {"id": 5, "name": "y", "type": "INT"}, highest=4))
    assert rules(SC.check_field_ids(s)) == ["PAIMON-SCHEMA-006"]
    arr = {"type": "ARRAY", "element": {"type": "ROW", "fields": [{"id": 3, "name": "e", "type": "INT"}]}}
    s = SC.parse_schema(nested({"id": 0, "name": "x", "type": "INT"}, {"id": 1, "name": "a", "type": arr}, highest=2))
    assert "id 3, above highestFieldId 2" in SC.check_field_ids(s)[0].message
    assert SC.check_field_ids(SC.parse_schema(schema())) == []


@pytest.mark.rule("PAIMON-SCHEMA-004")
def test_field_names_unique():
    s = SC.parse_schema(nested({"id": 0, "name": "x", "type": "INT"}, {"id": 1, "name": "x", "type": "INT"}, highest=1))
    assert rules(SC.check_field_names(s)) == ["PAIMON-SCHEMA-004"]
    row = {"type": "ROW", "fields": [{"id": 1, "name": "a", "type": "INT"}, {"id": 2, "name": "a", "type": "INT"}]}
    s = SC.parse_schema(nested({"id": 0, "name": "r", "type": row}, highest=2))
    assert "ROW 'r'" in SC.check_field_names(s)[0].message


@pytest.mark.rule("PAIMON-SCHEMA-002", "PAIMON-SCHEMA-022")
def test_keys():
    assert SC.check_keys(SC.parse_schema(schema())) == []
    assert rules(SC.check_keys(SC.parse_schema(schema(primaryKeys=["dt"])))) == ["PAIMON-SCHEMA-022"]
    assert rules(SC.check_keys(SC.parse_schema(schema(partitionKeys=["nope"], primaryKeys=["k"])))) == ["PAIMON-SCHEMA-002"]
    assert rules(SC.check_keys(SC.parse_schema(schema(primaryKeys=["k", "zz"])))) == ["PAIMON-SCHEMA-002"]


@pytest.mark.rule("PAIMON-SCHEMA-020")
def test_map_keys_not_null():
    """The seed's example: MAP<TINYINT NOT NULL, SMALLINT> is valid, MAP<TINYINT, SMALLINT> is reported, also nested."""
    ok = {"type": "MAP", "key": "TINYINT NOT NULL", "value": "SMALLINT"}
    bad = {"type": "MAP", "key": "TINYINT", "value": "SMALLINT"}
    assert SC.check_map_keys(SC.parse_schema(nested({"id": 0, "name": "m", "type": ok}, highest=0))) == []
    assert rules(SC.check_map_keys(SC.parse_schema(nested({"id": 0, "name": "m", "type": bad}, highest=0)))) == ["PAIMON-SCHEMA-020"]
    deep = {"type": "ARRAY", "element": {"type": "ROW", "fields": [{"id": 1, "name": "in", "type": bad}]}}
    assert rules(SC.check_map_keys(SC.parse_schema(nested({"id": 0, "name": "a", "type": deep}, highest=1)))) == ["PAIMON-SCHEMA-020"]


@pytest.mark.rule("PAIMON-BUCKET-001", "PAIMON-BUCKET-003", "PAIMON-BUCKET-004")
@pytest.mark.parametrize("changes, expected", [
    ({}, []), ({"options": {"bucket": "-2"}}, []), ({"options": {"bucket": "0"}}, ["PAIMON-BUCKET-001"]),
    ({"options": {"bucket": "-3"}}, ["PAIMON-BUCKET-001"]), ({"options": {"bucket": "x"}}, ["PAIMON-BUCKET-001"]),
    ({"options": {"bucket": "4", "bucket-key": "dt"}}, ["PAIMON-BUCKET-004"]),
    ({"options": {"bucket": "4", "bucket-key": "v"}}, ["PAIMON-BUCKET-004"]),
    ({"options": {"bucket": "4", "bucket-key": "nope"}}, ["PAIMON-BUCKET-004"]),
    ({"primaryKeys": [], "options": {"bucket": "4"}}, ["PAIMON-BUCKET-003"]),
    ({"primaryKeys": [], "options": {"bucket": "4", "bucket-key": "v"}}, []),
    ({"primaryKeys": [], "options": {}}, []),
])
def test_bucket_checks(changes, expected):
    assert rules(SC.check_bucket(SC.parse_schema(schema(**changes)))) == expected


@pytest.mark.rule("PAIMON-SCHEMA-010")
def test_non_string_option_values_are_read_and_reported():
    """Java's asText() reads 4 as "4" and true as "true"; the writer still broke the rule."""
    s = SC.parse_schema(schema(options={"bucket": 4, "deletion-vectors.enabled": True}))
    assert s.bucket == 4 and s.deletion_vectors_enabled
    assert rules(SC.check_options(s)) == ["PAIMON-SCHEMA-010", "PAIMON-SCHEMA-010"]
    assert rules(SC.validate_schema(s)) == ["PAIMON-SCHEMA-010", "PAIMON-SCHEMA-010"]


@pytest.mark.rule("PAIMON-SCHEMA-006", "PAIMON-SCHEMA-008", "PAIMON-SCHEMA-009")
def test_schema_history():
    s0 = SC.parse_schema(schema())
    s1 = SC.parse_schema(schema(id=1, partitionKeys=[], primaryKeys=["k"], highestFieldId=1))
    assert rules(SC.check_schema_history([s0, s1])) == ["PAIMON-SCHEMA-006", "PAIMON-SCHEMA-008", "PAIMON-SCHEMA-009"]
    assert SC.check_schema_history([s0, SC.parse_schema(schema(id=1, highestFieldId=5))]) == []


@pytest.mark.rule("PAIMON-SCHEMA-010")
@pytest.mark.parametrize("key, value, ok", [
    ("merge-engine", "bogus", False), ("merge-engine", "First-Row", True), ("changelog-producer", "sometimes", False),
    ("bucket-function.type", "hive", True), ("sequence.field.sort-order", "sideways", False),
])
def test_enumerated_option_values_are_checked(key, value, ok):
    """An enumerated option outside its values is a SCHEMA-010 violation (the read refuses it the same way)."""
    s = SC.parse_schema(schema(options={key: value}))
    flagged = [v for v in SC.check_options(s) if v.rule == "PAIMON-SCHEMA-010"]
    assert (not flagged) == ok
    if not ok:
        assert value in flagged[0].message
