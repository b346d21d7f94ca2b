"""Reference writer: log entries, data files, operations, conflicts; every table read back by the
reference reader AND by real peers (delta-rs through ``deltalake``, delta-kernel through DuckDB)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.delta import writer as W
from reference_impl.delta.actions import AddFile, Metadata, Protocol, parse_commit, serialize_commit
from reference_impl.delta.table import Snapshot, read_table
from reference_impl.errors import CommitConflict, InvalidTable, Unsupported
from reference_impl.storage import LocalStorage

# --------------------------------------------------------------------------------------------
# helpers (peers load offline: no extension downloads)


def _duckdb_ext() -> str | None:
    try:
        import duckdb_extension_delta
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(duckdb_extension_delta.__file__), "extensions", "v1.5.5", "delta.duckdb_extension")
    return path if os.path.exists(path) else None


def duckdb_read(location: str) -> pa.Table:
    """The table as DuckDB's delta extension (delta-kernel) reads it."""
    duckdb = pytest.importorskip("duckdb")
    ext = _duckdb_ext()
    if ext is None:
        pytest.skip("duckdb delta extension not installed")
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"LOAD '{ext}'")
        return con.execute("SELECT * FROM delta_scan(?)", [location]).to_arrow_table()
    finally:
        con.close()


def deltalake_read(location: str) -> pa.Table:
    """The table as delta-rs reads it (DataFusion scan: column mapping and DVs supported)."""
    deltalake = pytest.importorskip("deltalake")
    qb = deltalake.QueryBuilder().register("t", deltalake.DeltaTable(location))
    return pa.table(qb.execute("SELECT * FROM t").read_all())


def deltalake_read_pyarrow(location: str) -> pa.Table:
    """delta-rs's plain pyarrow reader (no DVs, no column mapping)."""
    deltalake = pytest.importorskip("deltalake")
    return pa.table(deltalake.DeltaTable(location).to_pyarrow_table())


def canon(table: pa.Table, columns: list[str] | None = None) -> list[tuple]:
    """Rows as sorted tuples of Python values (engines differ in Arrow types, not values)."""
    columns = columns or table.column_names
    data = [table.column(c).to_pylist() for c in columns]
    return sorted(zip(*data), key=lambda r: tuple((v is None, str(v)) for v in r))


def assert_all_read(location: str, expected: pa.Table | list[tuple], columns: list[str], *, peers=("reference", "deltalake", "duckdb")) -> None:
    """Every reader returns exactly ``expected`` (as a multiset of rows over ``columns``)."""
    want = canon(expected, columns) if isinstance(expected, pa.Table) else sorted(expected, key=lambda r: tuple((v is None, str(v)) for v in r))
    readers = {"reference": read_table, "deltalake": deltalake_read, "deltalake-pyarrow": deltalake_read_pyarrow, "duckdb": duckdb_read}
    for name in peers:
        got = canon(readers[name](location), columns)
        assert got == want, f"{name} read {got}, expected {want}"


def log(location: str, version: int) -> list[dict]:
    """The raw JSON objects of one commit file."""
    with open(os.path.join(location, "_delta_log", f"{version:020d}.json"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh.read().splitlines() if line]


def actions_of(location: str, version: int, kind: str) -> list[dict]:
    """The bodies of one kind of action in a commit."""
    return [a[kind] for a in log(location, version) if kind in a]


def versions(location: str) -> list[int]:
    """Commit versions present in the log."""
    return sorted(int(n[:20]) for n in os.listdir(os.path.join(location, "_delta_log")) if re.fullmatch(r"\d{20}\.json", n))


SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("v", pa.float64())])


def rows(ids, name="x") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{name}{i}" for i in ids], "v": [float(i) for i in ids]})


@pytest.fixture
def table(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA)
    return location


# --------------------------------------------------------------------------------------------
# creation and log entries


@pytest.mark.rule("DELTA-ACTION-001", "DELTA-LOG-004", "DELTA-LOG-005", "DELTA-LOG-007", "DELTA-ACTION-003", "DELTA-ACTION-004")
def test_create_table_writes_version_zero(tmp_path):
    location = str(tmp_path / "t")
    assert W.create_table(location, SCHEMA) == 0
    names = os.listdir(os.path.join(location, "_delta_log"))
    assert [n for n in names if not n.startswith(".")] == ["00000000000000000000.json"]
    lines = open(os.path.join(location, "_delta_log", names[0]), encoding="utf-8").read().splitlines()
    objs = [json.loads(line) for line in lines]
    assert [next(iter(o)) for o in objs] == ["commitInfo", "protocol", "metaData"]
    assert objs[1]["protocol"] == {"minReaderVersion": 1, "minWriterVersion": 2}
    md = objs[2]["metaData"]
    for key in ("id", "format", "schemaString", "partitionColumns", "configuration"):
        assert key in md
    assert json.loads(md["schemaString"])["fields"][0] == {"name": "id", "type": "long", "nullable": True, "metadata": {}}
    assert_all_read(location, [], ["id", "name", "v"])


@pytest.mark.rule("DELTA-LOG-010")
def test_create_table_refuses_existing_table(table):
    before = open(os.path.join(table, "_delta_log", f"{0:020d}.json"), "rb").read()
    with pytest.raises(CommitConflict, match="already exists") as err:
        W.create_table(table, SCHEMA)
    assert err.value.kind == "conflict"
    assert open(os.path.join(table, "_delta_log", f"{0:020d}.json"), "rb").read() == before


@pytest.mark.rule("DELTA-SCHEMA-005")
def test_create_table_refuses_case_insensitive_duplicates(tmp_path):
    with pytest.raises(InvalidTable, match="duplicate column name"):
        W.create_table(str(tmp_path / "t"), pa.schema([("a", pa.int32()), ("A", pa.int32())]))
    assert not os.path.exists(tmp_path / "t" / "_delta_log")


def test_create_table_refuses_unknown_partition_column(tmp_path):
    with pytest.raises(InvalidTable, match="partition column 'nope'"):
        W.create_table(str(tmp_path / "t"), SCHEMA, partition_by=["nope"])


@pytest.mark.rule("DELTA-ACTION-016", "DELTA-ACTION-018", "DELTA-ACTION-019", "DELTA-LOG-002", "DELTA-WRITER-001", "DELTA-STATS-004")
def test_append_writes_complete_add_actions(table):
    assert W.append(table, rows([1, 2, 3]), files=2) == 1
    adds = actions_of(table, 1, "add")
    assert len(adds) == 2
    assert len({a["path"] for a in adds}) == 2
    total = 0
    for add in adds:
        assert not add["path"].startswith("_") and "/" not in add["path"]
        assert add["size"] == os.path.getsize(os.path.join(table, add["path"]))
        assert add["dataChange"] is True
        assert add["partitionValues"] == {}
        assert 1_500_000_000_000 < add["modificationTime"] < 4_000_000_000_000  # milliseconds
        stats = json.loads(add["stats"])
        assert stats["numRecords"] == pq.ParquetFile(os.path.join(table, add["path"])).metadata.num_rows
        total += stats["numRecords"]
    assert total == 3
    assert_all_read(table, rows([1, 2, 3]), ["id", "name", "v"], peers=("reference", "deltalake", "deltalake-pyarrow", "duckdb"))


def test_append_empty_rows_commits_no_file(table):
    assert W.append(table, rows([])) == 1
    assert actions_of(table, 1, "add") == []


def test_append_fills_missing_nullable_columns_and_refuses_unknown_ones(table):
    W.append(table, pa.table({"id": pa.array([7], pa.int64())}))
    assert read_table(table).to_pylist() == [{"id": 7, "name": None, "v": None}]
    with pytest.raises(InvalidTable, match=r"columns \['extra'\] are not in the table schema"):
        W.append(table, pa.table({"id": [1], "extra": [1]}))
    assert versions(table) == [0, 1]


@pytest.mark.rule("DELTA-WRITER-002")
def test_append_refuses_values_that_do_not_fit_the_type(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("i", pa.int32())]))
    with pytest.raises(InvalidTable, match="cannot be written as int32"):
        W.append(location, pa.table({"i": pa.array([2**40], pa.int64())}))
    W.append(location, pa.table({"i": pa.array([5], pa.int64())}))  # fits: cast
    assert pq.ParquetFile(os.path.join(location, actions_of(location, 1, "add")[0]["path"])).schema_arrow.field("i").type == pa.int32()


@pytest.mark.rule("DELTA-WRITER-003", "DELTA-ACTION-017", "DELTA-PART-001", "DELTA-LOG-003")
def test_partitioned_append_escapes_directories_and_encodes_paths(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("id", pa.int64()), ("p", pa.string()), ("d", pa.date32())]), partition_by=["p", "d"])
    import datetime as dt

    values = ["a b", "x/y", "c:d", "100%", "ü", None]
    data = pa.table(
        {
            "id": pa.array(range(len(values)), pa.int64()),
            "p": values,
            "d": [dt.date(2024, 1, 2)] * (len(values) - 1) + [None],
        }
    )
    W.append(location, data)
    adds = actions_of(location, 1, "add")
    assert len(adds) == len(values)
    for add in adds:
        assert set(add["partitionValues"]) == {"p", "d"}
        from urllib.parse import unquote

        disk = os.path.join(location, unquote(add["path"]))
        assert os.path.exists(disk), add["path"]
    by_value = {a["partitionValues"]["p"]: a for a in adds}
    assert by_value["a b"]["path"].startswith("p=a%20b/")
    assert by_value["x/y"]["path"].startswith("p=x%252Fy/")  # Hive %2F, then URI-encoded
    assert by_value[None]["path"].startswith("p=__HIVE_DEFAULT_PARTITION__/d=__HIVE_DEFAULT_PARTITION__/")
    assert by_value[None]["partitionValues"] == {"p": None, "d": None}
    assert by_value["a b"]["partitionValues"]["d"] == "2024-01-02"
    assert_all_read(location, data, ["id", "p", "d"], peers=("reference", "deltalake", "deltalake-pyarrow", "duckdb"))


# --------------------------------------------------------------------------------------------
# overwrite, delete, update, optimize


@pytest.mark.rule("DELTA-ACTION-002")
def test_overwrite_same_schema_and_new_schema(table):
    W.append(table, rows([1, 2]))
    v = W.overwrite(table, rows([3]))
    removes = actions_of(table, v, "remove")
    assert len(removes) == 1 and removes[0]["dataChange"] is True
    assert actions_of(table, v, "metaData") == []
    assert_all_read(table, rows([3]), ["id", "name", "v"])
    new = pa.table({"id": pa.array([9], pa.int64()), "w": ["new"]})
    v = W.overwrite(table, new)
    md = actions_of(table, v, "metaData")[0]
    assert [f["name"] for f in json.loads(md["schemaString"])["fields"]] == ["id", "w"]
    assert_all_read(table, new, ["id", "w"])


@pytest.mark.rule("DELTA-DV-002", "DELTA-LOG-009", "DELTA-ACTION-013")
def test_delete_copy_on_write_without_deletion_vectors(table):
    W.append(table, rows([1, 2, 3, 4]))
    v = W.delete(table, "id % 2 = 0")
    removes, adds = actions_of(table, v, "remove"), actions_of(table, v, "add")
    assert len(removes) == 1 and len(adds) == 1
    assert removes[0]["path"] != adds[0]["path"]
    assert "deletionVector" not in adds[0]
    assert removes[0]["dataChange"] is True and adds[0]["dataChange"] is True
    assert removes[0]["extendedFileMetadata"] is True and removes[0]["size"] > 0
    assert_all_read(table, rows([1, 3]), ["id", "name", "v"], peers=("reference", "deltalake", "deltalake-pyarrow", "duckdb"))


def test_delete_whole_file_only_removes(table):
    W.append(table, rows([1, 2]))
    W.append(table, rows([3]))
    v = W.delete(table, "id >= 3")
    assert len(actions_of(table, v, "remove")) == 1 and actions_of(table, v, "add") == []
    assert_all_read(table, rows([1, 2]), ["id", "name", "v"])


def test_delete_with_bad_predicate_names_the_problem(table):
    W.append(table, rows([1]))
    with pytest.raises(InvalidTable, match="DELETE predicate: cannot evaluate"):
        W.delete(table, "nope = 1")
    with pytest.raises(InvalidTable, match="not boolean"):
        W.delete(table, "id + 1")
    assert versions(table) == [0, 1]


@pytest.mark.rule("DELTA-DV-001", "DELTA-DV-016", "DELTA-ACTION-009", "DELTA-REPLAY-008", "DELTA-DV-015", "DELTA-FEATURE-006")
def test_delete_with_deletion_vectors(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.enableDeletionVectors": "true"})
    proto = actions_of(location, 0, "protocol")[0]
    assert proto == {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}
    W.append(location, rows([0, 1, 2, 3, 4]))
    path = actions_of(location, 1, "add")[0]["path"]
    v = W.delete(location, "id = 1")
    (remove,), (add,) = actions_of(location, v, "remove"), actions_of(location, v, "add")
    assert remove["path"] == add["path"] == path
    assert "deletionVector" not in remove
    assert add["deletionVector"]["storageType"] == "u" and add["deletionVector"]["cardinality"] == 1
    assert json.loads(add["stats"])["numRecords"] == 5  # physical rows, not survivors
    # A second delete replaces the DV: old (path, dvA) removed, (path, dvB) added, same commit.
    v2 = W.delete(location, "id IN (3, 4)")
    (remove2,), (add2,) = actions_of(location, v2, "remove"), actions_of(location, v2, "add")
    assert remove2["deletionVector"] == add["deletionVector"]
    assert add2["deletionVector"]["cardinality"] == 3
    snap = Snapshot.load(location)
    assert len(snap.files) == 1 and any(k[0] == path for k in snap.state.tombstones)
    assert_all_read(location, rows([0, 2]), ["id", "name", "v"])


@pytest.mark.rule("DELTA-DV-002")
def test_deletion_vector_property_false_rewrites_files(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.enableDeletionVectors": "true"})
    W.append(location, rows([1, 2, 3]))
    W.set_properties(location, {"delta.enableDeletionVectors": "false"})
    v = W.delete(location, "id = 2")
    (add,) = actions_of(location, v, "add")
    assert "deletionVector" not in add and json.loads(add["stats"])["numRecords"] == 2
    assert_all_read(location, rows([1, 3]), ["id", "name", "v"])


def test_update_copy_on_write(table):
    W.append(table, rows([1, 2, 3]))
    v = W.update(table, {"v": "v * 10", "name": "upper(name)"}, "id >= 2")
    assert len(actions_of(table, v, "remove")) == 1
    expected = [(1, "x1", 1.0), (2, "X2", 20.0), (3, "X3", 30.0)]
    assert_all_read(table, expected, ["id", "name", "v"], peers=("reference", "deltalake", "deltalake-pyarrow", "duckdb"))


def test_update_with_deletion_vectors_moves_partitions(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(
        location,
        pa.schema([("id", pa.int64()), ("p", pa.int32())]),
        partition_by=["p"],
        properties={"delta.enableDeletionVectors": "true"},
    )
    W.append(location, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "p": pa.array([1, 1, 1], pa.int32())}))
    v = W.update(location, {"p": "2"}, "id = 3")
    adds = actions_of(location, v, "add")
    assert {a["partitionValues"]["p"] for a in adds} == {"1", "2"}
    assert sum(1 for a in adds if "deletionVector" in a) == 1
    assert_all_read(location, [(1, 1), (2, 1), (3, 2)], ["id", "p"], peers=("reference", "deltalake", "duckdb"))


def test_update_refuses_unknown_column(table):
    with pytest.raises(InvalidTable, match="UPDATE sets unknown column 'zz'"):
        W.update(table, {"zz": "1"}, "true")


@pytest.mark.rule("DELTA-ACTION-013", "DELTA-ACTION-014", "DELTA-ACTION-015")
def test_optimize_compacts_with_data_change_false(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.enableDeletionVectors": "true"})
    W.append(location, rows([1, 2]))
    W.append(location, rows([3, 4]))
    W.delete(location, "id = 4")
    v = W.optimize(location)
    removes, adds = actions_of(location, v, "remove"), actions_of(location, v, "add")
    assert len(removes) == 2 and len(adds) == 1
    assert all(a["dataChange"] is False for a in removes + adds)
    assert json.loads(adds[0]["stats"])["numRecords"] == 3
    assert_all_read(location, rows([1, 2, 3]), ["id", "name", "v"])
    assert W.optimize(location) == v  # nothing left to compact: no commit


# --------------------------------------------------------------------------------------------
# append-only


@pytest.mark.rule("DELTA-WRITER-004", "DELTA-WRITER-005", "DELTA-WRITER-006", "DELTA-WRITER-007", "DELTA-FEATURE-011")
def test_append_only_tables(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.appendOnly": "true"})
    W.append(location, rows([1]))
    W.append(location, rows([2]))
    for op in (lambda: W.delete(location, "id = 1"), lambda: W.update(location, {"v": "0"}, "true"), lambda: W.overwrite(location, rows([5]))):
        with pytest.raises(InvalidTable, match="append-only") as err:
            op()
        assert err.value.rule == "DELTA-WRITER-005"
    assert versions(location) == [0, 1, 2]
    v = W.optimize(location)  # rearranging is allowed
    assert v == 3
    W.set_properties(location, {"delta.appendOnly": "false"})
    W.delete(location, "id = 1")
    assert_all_read(location, rows([2]), ["id", "name", "v"])


@pytest.mark.rule("DELTA-WRITER-004", "DELTA-FEATURE-011")
def test_append_only_feature_supported_but_inactive_allows_delete(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, features=["appendOnly"])
    proto = actions_of(location, 0, "protocol")[0]
    assert proto == {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["appendOnly"]}
    W.append(location, rows([1, 2]))
    W.delete(location, "id = 1")
    assert_all_read(location, rows([2]), ["id", "name", "v"])


# --------------------------------------------------------------------------------------------
# column mapping


def _footer(location: str, rel_path: str) -> pq.ParquetSchema:
    from urllib.parse import unquote

    return pq.ParquetFile(os.path.join(location, unquote(rel_path))).schema


@pytest.mark.rule("DELTA-COLMAP-003", "DELTA-COLMAP-006", "DELTA-COLMAP-007", "DELTA-COLMAP-008", "DELTA-COLMAP-009", "DELTA-STATS-003")
def test_column_mapping_name_mode_writes_physical_names_and_ids(tmp_path):
    location = str(tmp_path / "t")
    schema = pa.schema([("id", pa.int64()), ("p", pa.string()), ("s", pa.struct([("x", pa.int32())]))])
    W.create_table(location, schema, partition_by=["p"], properties={"delta.columnMapping.mode": "name"})
    assert actions_of(location, 0, "protocol")[0] == {"minReaderVersion": 2, "minWriterVersion": 5}
    md = actions_of(location, 0, "metaData")[0]
    fields = json.loads(md["schemaString"])["fields"]
    phys = {f["name"]: f["metadata"]["delta.columnMapping.physicalName"] for f in fields}
    ids = {f["name"]: f["metadata"]["delta.columnMapping.id"] for f in fields}
    nested = fields[2]["type"]["fields"][0]["metadata"]
    assert md["configuration"]["delta.columnMapping.maxColumnId"] == "4"
    assert sorted(list(ids.values()) + [nested["delta.columnMapping.id"]]) == [1, 2, 3, 4]
    data = pa.table({"id": pa.array([1, 2], pa.int64()), "p": ["a", "b"], "s": [{"x": 1}, {"x": 2}]})
    W.append(location, data)
    for add in actions_of(location, 1, "add"):
        assert list(add["partitionValues"]) == [phys["p"]]
        stats = json.loads(add["stats"])
        assert set(stats["minValues"]) == {phys["id"], phys["s"]}
        assert stats["minValues"][phys["s"]] == {nested["delta.columnMapping.physicalName"]: stats["minValues"][phys["s"]][nested["delta.columnMapping.physicalName"]]}
        footer = _footer(location, add["path"])
        arrow = footer.to_arrow_schema()
        assert arrow.names == [phys["id"], phys["s"]]
        assert arrow.field(phys["id"]).metadata[b"PARQUET:field_id"] == str(ids["id"]).encode()
        assert arrow.field(phys["s"]).type.field(0).name == nested["delta.columnMapping.physicalName"]
    # delta-kernel via DuckDB 1.5.5 loses partition values of mapped partition columns; delta-rs does not.
    assert_all_read(location, data, ["id", "p", "s"], peers=("reference", "deltalake"))
    assert_all_read(location, data, ["id", "s"], peers=("duckdb",))


@pytest.mark.rule("DELTA-COLMAP-009", "DELTA-COLMAP-004", "DELTA-READER-001")
def test_rename_add_drop_columns_under_mapping(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("id", pa.int64()), ("a", pa.string())]), properties={"delta.columnMapping.mode": "id"})
    W.append(location, pa.table({"id": pa.array([1], pa.int64()), "a": ["one"]}))
    W.rename_column(location, "a", "b")
    v = W.add_column(location, pa.field("c", pa.int32()))
    md = actions_of(location, v, "metaData")[0]
    fields = json.loads(md["schemaString"])["fields"]
    assert fields[2]["metadata"]["delta.columnMapping.id"] == 3
    assert md["configuration"]["delta.columnMapping.maxColumnId"] == "3"
    W.append(location, pa.table({"id": pa.array([2], pa.int64()), "b": ["two"], "c": pa.array([7], pa.int32())}))
    assert_all_read(location, [(1, "one", None), (2, "two", 7)], ["id", "b", "c"], peers=("reference", "deltalake", "duckdb"))
    W.drop_column(location, "b")
    # Re-adding a column named like the dropped one gets a fresh id and physical name.
    v = W.add_column(location, pa.field("b", pa.string()))
    fields = json.loads(actions_of(location, v, "metaData")[0]["schemaString"])["fields"]
    assert fields[-1]["metadata"]["delta.columnMapping.id"] == 4
    assert actions_of(location, v, "metaData")[0]["configuration"]["delta.columnMapping.maxColumnId"] == "4"
    assert_all_read(location, [(1, None, None), (2, 7, None)], ["id", "c", "b"], peers=("reference", "deltalake", "duckdb"))


@pytest.mark.rule("DELTA-COLMAP-005")
def test_rename_and_drop_need_column_mapping(table):
    with pytest.raises(InvalidTable, match="needs column mapping") as err:
        W.rename_column(table, "name", "n2")
    assert err.value.rule == "DELTA-COLMAP-005"
    with pytest.raises(InvalidTable, match="needs column mapping"):
        W.drop_column(table, "name")


@pytest.mark.rule("DELTA-COLMAP-005", "DELTA-FEATURE-007", "DELTA-FEATURE-008")
def test_enable_name_mapping_on_existing_table(table):
    W.append(table, rows([1, 2]))
    v = W.set_properties(table, {"delta.columnMapping.mode": "name"})
    proto = actions_of(table, v, "protocol")[0]
    assert proto["minReaderVersion"] == 2 and proto["minWriterVersion"] == 5
    fields = json.loads(actions_of(table, v, "metaData")[0]["schemaString"])["fields"]
    # Existing columns keep their names as physical names: old files resolve unchanged.
    assert [f["metadata"]["delta.columnMapping.physicalName"] for f in fields] == ["id", "name", "v"]
    W.rename_column(table, "name", "label")
    W.append(table, pa.table({"id": pa.array([3], pa.int64()), "label": ["y3"], "v": [3.0]}))
    assert_all_read(table, [(1, "x1"), (2, "x2"), (3, "y3")], ["id", "label"], peers=("reference", "deltalake", "duckdb"))


def test_mapping_mode_change_with_data_is_unsupported(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.columnMapping.mode": "name"})
    W.append(location, rows([1]))
    with pytest.raises(Unsupported, match="changing column mapping mode"):
        W.set_properties(location, {"delta.columnMapping.mode": "id"})


@pytest.mark.rule("DELTA-COLMAP-009")
def test_users_cannot_set_max_column_id(table):
    with pytest.raises(InvalidTable, match="maxColumnId is maintained by the writer") as err:
        W.set_properties(table, {"delta.columnMapping.maxColumnId": "99"})
    assert err.value.rule == "DELTA-COLMAP-009"


# --------------------------------------------------------------------------------------------
# table features and protocol


@pytest.mark.rule("DELTA-FEATURE-006", "DELTA-FEATURE-002")
def test_new_table_feature_lists_follow_reader_version(tmp_path):
    a = str(tmp_path / "a")
    W.create_table(a, SCHEMA, protocol=(1, 7), properties={"delta.appendOnly": "true"})
    assert actions_of(a, 0, "protocol")[0] == {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["appendOnly"]}
    b = str(tmp_path / "b")
    W.create_table(b, SCHEMA, protocol=(3, 7))
    assert actions_of(b, 0, "protocol")[0] == {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": [], "writerFeatures": []}
    with pytest.raises(InvalidTable, match="reader version 3 needs writer version 7"):
        W.create_table(str(tmp_path / "c"), SCHEMA, protocol=(3, 5))
    with pytest.raises(InvalidTable, match="cannot support reader features"):
        W.create_table(str(tmp_path / "d"), SCHEMA, protocol=(1, 7), properties={"delta.enableDeletionVectors": "true"})
    with pytest.raises(InvalidTable, match=r"does not support \['changeDataFeed'\]"):
        W.create_table(str(tmp_path / "e"), SCHEMA, protocol=(1, 3), properties={"delta.enableChangeDataFeed": "true"})
    for loc in (a, b):
        W.append(loc, rows([1]))
        assert_all_read(loc, rows([1]), ["id", "name", "v"])


@pytest.mark.rule("DELTA-FEATURE-005", "DELTA-ACTION-026")
def test_writer_refuses_unknown_writer_feature(tmp_path):
    location = str(tmp_path / "t")
    storage = LocalStorage(location)
    md = Metadata(id="x", schema_string='{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}')
    proto = Protocol(min_reader_version=1, min_writer_version=7, writer_features=frozenset({"bogusFeature"}))
    storage.put_if_absent("_delta_log/00000000000000000000.json", serialize_commit([proto, md]))
    assert read_table(location).num_rows == 0  # reads still work
    with pytest.raises(Unsupported, match="bogusFeature") as err:
        W.append(location, pa.table({"a": [1]}))
    assert err.value.feature == "bogusFeature"
    assert versions(location) == [0]
    with pytest.raises(Unsupported, match="typeWidening"):
        W.create_table(str(tmp_path / "u"), SCHEMA, features=("typeWidening",))


@pytest.mark.rule("DELTA-FEATURE-007")
def test_legacy_table_upgrade_keeps_implied_features(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, protocol=(1, 4))
    v = W.set_properties(location, {"delta.enableDeletionVectors": "true"})
    proto = actions_of(location, v, "protocol")[0]
    assert proto["minReaderVersion"] == 3 and proto["minWriterVersion"] == 7
    assert set(proto["writerFeatures"]) >= {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "deletionVectors"}
    assert proto["readerFeatures"] == ["deletionVectors"]


# --------------------------------------------------------------------------------------------
# table properties for data files


@pytest.mark.rule("DELTA-PROPS-001")
def test_compression_codec_property(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA)
    W.append(location, rows([1]))
    path = actions_of(location, 1, "add")[0]["path"]
    assert pq.ParquetFile(os.path.join(location, path)).metadata.row_group(0).column(0).compression == "ZSTD"
    W.set_properties(location, {"delta.parquet.compression.codec": "snappy"})
    W.append(location, rows([2]))
    path = actions_of(location, 3, "add")[0]["path"]
    assert path.endswith(".snappy.parquet")
    assert pq.ParquetFile(os.path.join(location, path)).metadata.row_group(0).column(0).compression == "SNAPPY"
    W.set_properties(location, {"delta.parquet.compression.codec": "brotli-9000"})
    with pytest.raises(Unsupported, match="brotli-9000"):
        W.append(location, rows([3]))
    assert_all_read(location, rows([1, 2]), ["id", "name", "v"])


@pytest.mark.rule("DELTA-PROPS-003")
def test_parquet_format_version_property(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.parquet.format.version": "2.12.0"})
    W.append(location, rows([1, 2]))
    path = actions_of(location, 1, "add")[0]["path"]
    raw = open(os.path.join(location, path), "rb").read()
    # A DataPageV2 header carries page type 3 (thrift field 1, i32 zigzag 6 => bytes 0x15 0x06).
    assert b"\x15\x06" in raw
    assert_all_read(location, rows([1, 2]), ["id", "name", "v"])
    W.set_properties(location, {"delta.parquet.format.version": "3.0"})
    with pytest.raises(InvalidTable, match="neither 1.0.0 nor 2.MINOR.PATCH") as err:
        W.append(location, rows([3]))
    assert err.value.rule == "DELTA-PROPS-003"


@pytest.mark.rule("DELTA-SCHEMA-010", "DELTA-SCHEMA-011")
def test_void_columns_are_not_written(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("id", pa.int64()), ("nothing", pa.null())]))
    W.append(location, pa.table({"id": pa.array([1], pa.int64())}))
    path = actions_of(location, 1, "add")[0]["path"]
    assert pq.ParquetFile(os.path.join(location, path)).schema_arrow.names == ["id"]
    assert read_table(location).to_pylist() == [{"id": 1, "nothing": None}]
    only_void = str(tmp_path / "v")
    W.create_table(only_void, pa.schema([("nothing", pa.null())]))
    with pytest.raises(InvalidTable) as err:
        W.append(only_void, pa.table({"nothing": pa.nulls(1)}))
    assert err.value.rule == "DELTA-SCHEMA-011"


# --------------------------------------------------------------------------------------------
# in-commit timestamps


@pytest.mark.rule("DELTA-ICT-001", "DELTA-ICT-002", "DELTA-ICT-003")
def test_in_commit_timestamps_first_action_and_increasing(tmp_path, monkeypatch):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.enableInCommitTimestamps": "true"})
    assert actions_of(location, 0, "protocol")[0] == {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["inCommitTimestamp"]}
    W.append(location, rows([1]))
    # A clock that jumped backwards: the timestamp is still previous + 1.
    previous = log(location, 1)[0]["commitInfo"]["inCommitTimestamp"]
    monkeypatch.setattr(W, "_now_ms", lambda: 1_000)
    W.append(location, rows([2]))
    monkeypatch.undo()
    icts = []
    for v in versions(location):
        first = log(location, v)[0]
        assert "commitInfo" in first
        icts.append(first["commitInfo"]["inCommitTimestamp"])
    assert icts[2] == previous + 1
    assert icts == sorted(icts) and len(set(icts)) == len(icts)
    assert_all_read(location, rows([1, 2]), ["id", "name", "v"])


@pytest.mark.rule("DELTA-ICT-004", "DELTA-ICT-005")
def test_enabling_in_commit_timestamps_records_enablement(table):
    W.append(table, rows([1]))
    v = W.set_properties(table, {"delta.enableInCommitTimestamps": "true"})
    ci = log(table, v)[0]["commitInfo"]
    config = actions_of(table, v, "metaData")[0]["configuration"]
    assert config["delta.inCommitTimestampEnablementVersion"] == str(v)
    assert config["delta.inCommitTimestampEnablementTimestamp"] == str(ci["inCommitTimestamp"])
    mtime = int(os.path.getmtime(os.path.join(table, "_delta_log", f"{v - 1:020d}.json")) * 1000)
    assert ci["inCommitTimestamp"] > mtime
    with pytest.raises(InvalidTable, match="maintained by the writer"):
        W.set_properties(table, {"delta.inCommitTimestampEnablementVersion": "0"})


# --------------------------------------------------------------------------------------------
# transactions: commit atomicity, conflicts, concurrency


@pytest.mark.rule("DELTA-LOG-006")
def test_writer_killed_before_commit_leaves_previous_version(table, monkeypatch):
    W.append(table, rows([1]))
    real = LocalStorage.put_if_absent

    def crash(self, path, data):
        if path.startswith("_delta_log/"):
            raise KeyboardInterrupt("killed")
        return real(self, path, data)

    monkeypatch.setattr(LocalStorage, "put_if_absent", crash)
    with pytest.raises(KeyboardInterrupt):
        W.append(table, rows([2]))
    monkeypatch.undo()
    assert versions(table) == [0, 1]
    parquet_files = [n for n in os.listdir(table) if n.endswith(".parquet")]
    assert len(parquet_files) == 2  # the orphan was fully written, but never committed
    assert not [n for n in os.listdir(os.path.join(table, "_delta_log")) if n.startswith(".tmp")]
    assert_all_read(table, rows([1]), ["id", "name", "v"])


@pytest.mark.rule("DELTA-LOG-007", "DELTA-LOG-008", "DELTA-LOG-009", "DELTA-ACTION-008", "DELTA-ACTION-011")
def test_commit_refuses_invalid_action_sets(table):
    W.append(table, rows([1]))
    live = Snapshot.load(table).files[0]
    t = W.Transaction(table, operation="TEST")
    t.set_txn("app", 1)
    with pytest.raises(InvalidTable, match="txn appId 'app' twice") as err:
        t.set_txn("app", 2)
    assert err.value.rule == "DELTA-LOG-008"
    t = W.Transaction(table, operation="TEST")
    t.remove_file(live)
    t.add_file(live)
    with pytest.raises(InvalidTable, match="add and remove of the same logical file") as err:
        t.commit()
    assert err.value.rule == "DELTA-LOG-009"
    t = W.Transaction(table, operation="TEST")
    t.add_file(live)
    t.add_file(live)
    with pytest.raises(InvalidTable, match="added twice") as err:
        t.commit()
    assert err.value.rule == "DELTA-ACTION-008"
    from reference_impl.delta.deletion_vector import inline_deletion_vector

    t = W.Transaction(table, operation="TEST")
    t.add_file(dataclasses.replace(live, deletion_vector=inline_deletion_vector([0])))
    with pytest.raises(InvalidTable, match="must remove the live one") as err:
        t.commit()
    assert err.value.rule == "DELTA-ACTION-011"
    assert versions(table) == [0, 1]
    # One protocol and one metaData at most (DELTA-LOG-007, DELTA-ACTION-003).
    v = W.set_properties(table, {"delta.enableChangeDataFeed": "true"})
    kinds = [next(iter(a)) for a in log(table, v)]
    assert kinds.count("protocol") == 1 and kinds.count("metaData") == 1


@pytest.mark.rule("DELTA-LOG-010", "DELTA-LOG-011")
def test_blind_appends_rebase_over_a_winner(table):
    a = W.Transaction(table, operation="WRITE")
    b = W.Transaction(table, operation="WRITE")
    a.write_rows(rows([1]))
    b.write_rows(rows([2]))
    assert a.commit() == 1
    first = open(os.path.join(table, "_delta_log", f"{1:020d}.json"), "rb").read()
    assert b.commit() == 2 and b.attempts == 2
    assert open(os.path.join(table, "_delta_log", f"{1:020d}.json"), "rb").read() == first
    assert_all_read(table, rows([1, 2]), ["id", "name", "v"])


@pytest.mark.rule("DELTA-LOG-010")
def test_conflicting_deletes_of_the_same_file(table):
    W.append(table, rows([1, 2, 3]))
    live = Snapshot.load(table).files[0]
    a = W.Transaction(table, operation="DELETE")
    b = W.Transaction(table, operation="DELETE")
    a.remove_file(live)
    b.remove_file(live)
    a.commit()
    with pytest.raises(CommitConflict, match="removed .* which this transaction also removes") as err:
        b.commit()
    assert err.value.kind == "conflict"
    assert versions(table) == [0, 1, 2]


@pytest.mark.rule("DELTA-DOMAIN-006", "DELTA-ACTION-023")
def test_conflicts_on_txn_app_id_domain_and_metadata(table):
    a, b = W.Transaction(table, operation="WRITE"), W.Transaction(table, operation="WRITE")
    a.set_txn("stream-1", 1)
    b.set_txn("stream-1", 2)
    a.commit()
    with pytest.raises(CommitConflict, match="txn appId 'stream-1'"):
        b.commit()
    W.set_domain(table, "com.example.other", "{}")  # the domainMetadata feature is now supported
    a, b = W.Transaction(table, operation="WRITE"), W.Transaction(table, operation="WRITE")
    a.set_domain("com.example.x", "{}")
    b.set_domain("com.example.x", '{"a":1}')
    a.commit()
    with pytest.raises(CommitConflict, match="changed domain 'com.example.x' too"):
        b.commit()
    c = W.Transaction(table, operation="WRITE")
    c.set_domain("com.example.y", "{}")  # a different domain: rebases
    W.set_domain(table, "com.example.z", "{}")
    assert c.commit() == c.read_version + 2
    a, b = W.Transaction(table, operation="WRITE"), W.Transaction(table, operation="WRITE")
    a.update_metadata(dataclasses.replace(a.metadata, configuration={"k": "v"}))
    b.write_rows(rows([5]))
    a.commit()
    with pytest.raises(CommitConflict, match="changed the table metadata"):
        b.commit()
    assert Snapshot.load(table).state.txns["stream-1"].version == 1


@pytest.mark.rule("DELTA-DOMAIN-003", "DELTA-DOMAIN-001", "DELTA-DOMAIN-007")
def test_user_domains(table):
    v = W.set_domain(table, "com.example.tags", '{"x":1}')
    proto = actions_of(table, v, "protocol")[0]
    assert "domainMetadata" in proto["writerFeatures"]
    assert Snapshot.load(table).state.domains["com.example.tags"].configuration == '{"x":1}'
    with pytest.raises(InvalidTable, match="reserved") as err:
        W.set_domain(table, "delta.rowTracking", "{}")
    assert err.value.rule == "DELTA-DOMAIN-003"
    v = W.set_domain(table, "com.example.tags", None)
    (dm,) = actions_of(table, v, "domainMetadata")
    assert dm == {"domain": "com.example.tags", "configuration": '{"x":1}', "removed": True}
    assert "com.example.tags" not in Snapshot.load(table).state.domains


def test_serializable_delete_conflicts_with_concurrent_append(table):
    W.append(table, rows([1, 2]))
    storage = LocalStorage(table)
    # Build the delete at the current version, let an append win, then commit the delete.
    t = W.Transaction(table, operation="DELETE", isolation="serializable")
    files = t.files
    t.read_files(files)
    t.remove_file(files[0])
    W.append(table, rows([3]))
    with pytest.raises(CommitConflict, match="serializable"):
        t.commit()
    t2 = W.Transaction(storage, operation="DELETE")  # write_serializable (the default) rebases
    t2.read_files(t2.files)
    t2.remove_file(t2.files[0])
    W.append(table, rows([4]))
    assert t2.commit() == 4


@pytest.mark.rule("DELTA-LOG-010", "DELTA-LOG-011", "DELTA-LOG-001")
def test_eight_threads_twenty_commits_each(table):
    errors: list[BaseException] = []
    counts: list[int] = []

    def worker(thread: int) -> None:
        for i in range(20):
            try:
                t = W.Transaction(table, operation="WRITE")
                t.write_rows(pa.table({"id": pa.array([thread * 100 + i], pa.int64())}))
                t.commit()
                counts.append(t.attempts)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]
    assert versions(table) == list(range(161))  # nothing lost, nothing duplicated, no gap
    seen = []
    for v in range(1, 161):
        actions = parse_commit(open(os.path.join(table, "_delta_log", f"{v:020d}.json"), "rb").read(), version=v)  # none torn
        adds = [a for a in actions if isinstance(a, AddFile)]
        assert len(adds) == 1
        seen.append(adds[0].path)
    assert len(set(seen)) == 160
    expected = [(t * 100 + i,) for t in range(8) for i in range(20)]
    assert_all_read(table, expected, ["id"])
    assert max(counts) > 1  # the race really happened


# --------------------------------------------------------------------------------------------
# checkpoints and txn


@pytest.mark.rule("DELTA-REPLAY-003")
def test_append_with_txn_and_checkpoint(table):
    W.append(table, rows([1]), txn=("app-1", 5))
    W.append(table, rows([2]), txn=("app-1", 6))
    assert Snapshot.load(table).state.txns["app-1"].version == 6
    v = W.checkpoint(table)
    assert v == 2
    assert os.path.exists(os.path.join(table, "_delta_log", f"{2:020d}.checkpoint.parquet"))
    W.append(table, rows([3]))
    assert_all_read(table, rows([1, 2, 3]), ["id", "name", "v"])


def test_checkpoint_v2_needs_the_feature(table):
    with pytest.raises(InvalidTable, match="v2Checkpoint"):
        W.checkpoint(table, kind="v2")


@pytest.mark.rule("DELTA-DV-004")
def test_reference_reader_and_peers_agree_after_mixed_history(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("id", pa.int64()), ("p", pa.int32()), ("s", pa.string())]), partition_by=["p"], properties={"delta.enableDeletionVectors": "true"})
    W.append(location, pa.table({"id": pa.array(range(10), pa.int64()), "p": pa.array([i % 2 for i in range(10)], pa.int32()), "s": [str(i) for i in range(10)]}), files=2)
    W.delete(location, "id % 3 = 0")
    W.update(location, {"s": "s || '!'"}, "id > 6")
    W.checkpoint(location)
    W.append(location, pa.table({"id": pa.array([100], pa.int64()), "p": pa.array([1], pa.int32()), "s": ["new"]}))
    expected = [(i, i % 2, str(i) + ("!" if i > 6 else "")) for i in range(10) if i % 3] + [(100, 1, "new")]
    assert_all_read(location, expected, ["id", "p", "s"], peers=("reference", "deltalake", "duckdb"))


# --------------------------------------------------------------------------------------------
# row tracking (the reference's protocol.py does not list it as written; the writer implements
# the assignment rules, checked here with the feature switched on)


@pytest.mark.rule("DELTA-ROWTRACK-001", "DELTA-ROWTRACK-003", "DELTA-ROWTRACK-004", "DELTA-ROWTRACK-005", "DELTA-ROWTRACK-006", "DELTA-ROWTRACK-007", "DELTA-ROWTRACK-009")
def test_row_tracking_assigns_row_ids_across_rebases(tmp_path, monkeypatch):
    from reference_impl.delta import protocol as P

    monkeypatch.setattr(P, "WRITER_FEATURES_SUPPORTED", P.WRITER_FEATURES_SUPPORTED | {"rowTracking"})
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.enableRowTracking": "true", "delta.enableDeletionVectors": "true"})
    proto = actions_of(location, 0, "protocol")[0]
    assert {"rowTracking", "domainMetadata"} <= set(proto["writerFeatures"])
    config = actions_of(location, 0, "metaData")[0]["configuration"]
    assert config["delta.rowTracking.materializedRowIdColumnName"].startswith("_row-id-col-")
    W.append(location, rows([1, 2, 3]))
    loser = W.Transaction(location, operation="WRITE")
    loser.write_rows(rows([4, 5]))
    W.append(location, rows([6]))
    v = loser.commit()
    ranges = []
    for version in (1, 2, 3):
        (add,) = actions_of(location, version, "add")
        assert add["defaultRowCommitVersion"] == version
        n = json.loads(add["stats"])["numRecords"]
        ranges.append((add["baseRowId"], add["baseRowId"] + n - 1))
        (dm,) = actions_of(location, version, "domainMetadata")
        assert dm["domain"] == "delta.rowTracking"
        assert json.loads(dm["configuration"])["rowIdHighWaterMark"] == ranges[-1][1]
    assert v == 3 and ranges == [(0, 2), (3, 3), (4, 5)]
    # A DV rewrite re-adds the same path: its row ids and commit version are kept.
    v = W.delete(location, "id = 1")
    (add,) = actions_of(location, v, "add")
    (remove,) = actions_of(location, v, "remove")
    assert add["baseRowId"] == remove["baseRowId"] == 0 and add["defaultRowCommitVersion"] == 1
    assert_all_read(location, rows([2, 3, 4, 5, 6]), ["id", "name", "v"], peers=("reference", "duckdb"))
