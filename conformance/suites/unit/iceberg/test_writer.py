"""The reference Iceberg writer: every operation's metadata, manifests and files, commit retries, and every table
read back by the reference reader, by PyIceberg (StaticTable) where it reads the feature, and checked by the validator."""

from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pytest

from reference_impl.errors import CommitConflict, InvalidTable, Unsupported
from reference_impl.iceberg import catalog as C
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import writer as W
from reference_impl.iceberg.table import read_table
from reference_impl.iceberg.validate import validate_table
from reference_impl.storage import LocalStorage

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()), pa.field("d", pa.date32())])


def rows(ids, day=None) -> pa.Table:
    return pa.table({"id": list(ids), "name": [f"n{i}" for i in ids],
                     "d": [day or dt.date(2024, 1, 1 + i % 3) for i in ids]}, schema=SCHEMA)


def ids_of(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def current_uri(storage) -> str:
    return C.FileSystemCatalog().load(storage).uri


def pyiceberg_rows(storage) -> pa.Table:
    """The table as PyIceberg 0.12 reads it from the current metadata file."""
    static = pytest.importorskip("pyiceberg.table").StaticTable
    return static.from_metadata(current_uri(storage)).scan().to_arrow()


_DUCKDB: list = []


def duckdb_ids(storage) -> list[int]:
    """The ids as DuckDB's iceberg extension (loaded offline from its wheel, once per module) reads the table."""
    if not _DUCKDB:
        duckdb = pytest.importorskip("duckdb")
        con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
        for name in ("duckdb_extension_avro", "duckdb_extension_iceberg"):
            mod = pytest.importorskip(name)
            found = [os.path.join(r, f) for r, _, fs in os.walk(os.path.dirname(mod.__file__)) for f in fs if f.endswith(".duckdb_extension")]
            if not found:
                pytest.skip(f"{name} ships no extension file")
            con.execute(f"LOAD '{found[0]}'")
        _DUCKDB.append(con)
    return sorted(r[0] for r in _DUCKDB[0].execute("SELECT id FROM iceberg_scan(?)", [current_uri(storage)]).fetchall())


def check(storage, expected_ids, *, pyiceberg: bool = True) -> None:
    """Reference reader, PyIceberg and the validator agree with the expected rows."""
    assert ids_of(read_table(storage)) == sorted(expected_ids)
    if pyiceberg:
        assert ids_of(pyiceberg_rows(storage)) == sorted(expected_ids)
    assert validate_table(storage) == []


def live(storage) -> S.LiveFiles:
    md = W.load(storage)
    return S.live_files(storage, md)


@pytest.fixture
def table(tmp_path):
    return LocalStorage(str(tmp_path / "t"))


# ---------------------------------------------------------------------------------------------
# Creating tables


@pytest.mark.rule("ICEBERG-GEN-001", "ICEBERG-GEN-002", "ICEBERG-GEN-003", "ICEBERG-META-042", "ICEBERG-META-045", "ICEBERG-GEN-010")
@pytest.mark.parametrize("fv", [1, 2, 3])
def test_create_table_writes_each_versions_fields(table, fv):
    r = W.create_table(table, SCHEMA, partition_by=["bucket(4, id)"] if fv > 1 else [], properties={"format-version": str(fv), "k": 1})
    raw = table.read("metadata/v1.metadata.json")
    assert M.writer_violations(raw) == []
    md = M.parse_metadata(raw)
    assert md.format_version == fv and dict(md.properties) == {"k": "1"}  # format-version is a request, not stored
    assert md.location.startswith("file:///") and md.current_snapshot_id is None and b'"current-snapshot-id"' not in raw
    assert [f.id for f in md.schema().fields] == [1, 2, 3] and md.last_column_id == 3 and md.schema().fields[0].required
    assert (md.next_row_id == 0) if fv == 3 else md.next_row_id is None
    assert r.metadata_version == 1
    check(table, [], pyiceberg=True)


@pytest.mark.rule("ICEBERG-PART-031", "ICEBERG-PART-037", "ICEBERG-PART-013")
def test_partition_expressions(table):
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("ts", pa.timestamp("us")), pa.field("s", pa.string()),
                        pa.field("st", pa.struct([pa.field("x", pa.int32())]))])
    md = W.create_table(table, schema, partition_by=["bucket(16, id)", "day(ts)", "truncate(3, s)", "s", "void(id)", "st.x"]).metadata
    spec = md.spec()
    assert [(f.name, str(f.transform), f.field_id) for f in spec.fields] == [
        ("id_bucket", "bucket[16]", 1000), ("ts_day", "day", 1001), ("s_trunc", "truncate[3]", 1002),
        ("s", "identity", 1003), ("id_null", "void", 1004), ("st_x", "identity", 1005)]
    assert md.last_partition_id == 1005
    with pytest.raises(InvalidTable, match="malformed"):
        W.parse_partition_expr("bucket(16 id")
    with pytest.raises(InvalidTable, match="needs a parameter"):
        W.parse_partition_expr("bucket(id)")
    with pytest.raises(InvalidTable) as exc:
        W.create_table(LocalStorage(str(table.base) + "2"), schema, partition_by=["hour(s)"])
    assert exc.value.rule == "ICEBERG-PART-013"
    with pytest.raises(InvalidTable, match="not in the schema"):
        W.create_table(LocalStorage(str(table.base) + "3"), schema, partition_by=["nope"])
    with pytest.raises(Unsupported):
        W.create_table(LocalStorage(str(table.base) + "4"), schema, format_version=4)


# ---------------------------------------------------------------------------------------------
# Appends: snapshots, sequence numbers, logs, summaries, manifests


@pytest.mark.rule("ICEBERG-SEQ-001", "ICEBERG-SEQ-002", "ICEBERG-SEQ-004", "ICEBERG-SEQ-012", "ICEBERG-SNAP-002", "ICEBERG-SNAP-006",
                  "ICEBERG-SNAP-012", "ICEBERG-SNAP-014", "ICEBERG-META-011", "ICEBERG-META-014", "ICEBERG-META-033", "ICEBERG-META-035",
                  "ICEBERG-META-030", "ICEBERG-COMMIT-003")
def test_appends_make_sequenced_snapshots(table):
    W.create_table(table, SCHEMA, partition_by=["d"])
    a = W.append(table, rows(range(3)), files=2)
    b = W.append(table, rows(range(3, 5)))
    md = b.metadata
    s1, s2 = md.snapshots
    assert (a.sequence_number, b.sequence_number, md.last_sequence_number) == (1, 2, 2)
    assert s2.parent_snapshot_id == s1.snapshot_id and s1.parent_snapshot_id is None and s1.snapshot_id > 0
    assert s1.timestamp_ms < s2.timestamp_ms <= md.last_updated_ms
    assert [(e.snapshot_id, e.timestamp_ms) for e in md.snapshot_log] == [(s1.snapshot_id, s1.timestamp_ms), (s2.snapshot_id, s2.timestamp_ms)]
    assert [e.metadata_file for e in md.metadata_log] == [table.uri("metadata/v1.metadata.json"), table.uri("metadata/v2.metadata.json")]
    assert md.refs["main"].snapshot_id == md.current_snapshot_id == s2.snapshot_id
    assert dict(s2.summary) | {"engine-name": "x"} == {
        "operation": "append", "added-data-files": "2", "added-records": "2", "added-files-size": s2.summary["added-files-size"],
        "changed-partition-count": "2", "total-records": "5", "total-data-files": "5", "total-delete-files": "0",
        "total-files-size": s2.summary["total-files-size"], "total-position-deletes": "0", "total-equality-deletes": "0",
        "engine-name": "x"}
    assert int(s2.summary["total-files-size"]) == sum(e.data_file.file_size_in_bytes for e in live(table).data_files)
    mfs = S.snapshot_manifests(table, s2)
    assert [(m.added_snapshot_id, m.sequence_number, m.min_sequence_number) for m in mfs] == [(s2.snapshot_id, 2, 2), (s1.snapshot_id, 1, 1)]
    raw = MF.read_manifest(table.read(table.resolve(mfs[0].manifest_path)), inherit=False)
    # New entries leave sequence numbers and snapshot id null: they are inherited (SEQ-004).
    assert {(e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number) for e in raw.entries} == {(MF.ADDED, None, None, None)}
    assert raw.metadata.schema_id == 0 and raw.metadata.spec.spec_id == 0
    check(table, range(5))


@pytest.mark.rule("ICEBERG-GEN-002", "ICEBERG-MANIFEST-011", "ICEBERG-MANIFEST-023")
def test_v1_appends(table):
    W.create_table(table, SCHEMA, format_version=1)
    W.append(table, rows(range(2)))
    r = W.append(table, rows(range(2, 4)))
    raw = table.read(table.resolve(r.metadata_location))
    assert M.writer_violations(raw) == [] and b"sequence-number" not in raw and b'"refs"' not in raw
    mf = S.snapshot_manifests(table, r.metadata.snapshots[-1])[0]
    m = MF.read_manifest(table.read(table.resolve(mf.manifest_path)), inherit=False)
    assert m.metadata.format_version == 1 and {e.snapshot_id for e in m.entries} == {r.snapshot_id}  # explicit in v1
    check(table, range(4))


@pytest.mark.rule("ICEBERG-LINEAGE-001", "ICEBERG-LINEAGE-010", "ICEBERG-LINEAGE-011", "ICEBERG-LINEAGE-013", "ICEBERG-LINEAGE-014",
                  "ICEBERG-LINEAGE-004", "ICEBERG-SNAP-010")
def test_row_lineage_on_appends(table):
    W.create_table(table, SCHEMA, format_version=3)
    a = W.append(table, rows(range(3)), files=2)
    b = W.append(table, rows(range(3, 7)))
    s1, s2 = b.metadata.snapshots
    assert (s1.first_row_id, s1.added_rows, s2.first_row_id, s2.added_rows, b.metadata.next_row_id) == (0, 3, 3, 4, 7)
    mfs = S.snapshot_manifests(table, s2)
    assert [(m.first_row_id, m.added_rows_count) for m in mfs] == [(3, 4), (0, 3)]
    raw = MF.read_manifest(table.read(table.resolve(mfs[1].manifest_path)), inherit=False)
    assert {e.data_file.first_row_id for e in raw.entries} == {None}  # assigned by inheritance (LINEAGE-014)
    got = read_table(table, columns=["id", "_row_id", "_last_updated_sequence_number"])
    assert sorted(got.column("_row_id").to_pylist()) == list(range(7))
    assert dict(zip(got.column("id").to_pylist(), got.column("_last_updated_sequence_number").to_pylist()))[5] == 2
    assert a.metadata.next_row_id == 3
    check(table, range(7))


# ---------------------------------------------------------------------------------------------
# Branches and tags


@pytest.mark.rule("ICEBERG-REF-001", "ICEBERG-REF-006", "ICEBERG-REF-007", "ICEBERG-LINEAGE-012", "ICEBERG-META-030")
def test_branches_and_tags(table):
    W.create_table(table, SCHEMA, format_version=3)
    W.append(table, rows([1]))
    W.create_ref(table, "audit", "branch", version=1)
    W.create_ref(table, "v1", "tag")
    main = W.append(table, rows([2]))
    br = W.append(table, rows([3]), branch="audit")
    md = br.metadata
    assert md.current_snapshot_id == main.snapshot_id and md.refs["main"].snapshot_id == main.snapshot_id
    assert md.refs["audit"].snapshot_id == br.snapshot_id and md.refs["v1"].type == "tag"
    assert md.snapshot_log[-1].snapshot_id == main.snapshot_id  # a branch commit does not change the current snapshot
    assert md.snapshot_by_id(br.snapshot_id).first_row_id == 2 and md.next_row_id == 3  # row ids advance on every branch
    assert ids_of(read_table(table, ref="audit")) == [1, 3] and ids_of(read_table(table, ref="v1")) == [1]
    new = W.append(table, rows([4]), branch="fresh")  # a new branch starts from main's head, as Java does
    assert ids_of(read_table(table, ref="fresh")) == [1, 2, 4] and new.metadata.refs["fresh"].type == "branch"
    with pytest.raises(InvalidTable, match="is a tag"):
        W.append(table, rows([5]), branch="v1")
    with pytest.raises(InvalidTable, match="already exists"):
        W.create_ref(table, "audit", "tag")
    with pytest.raises(InvalidTable, match="does not exist"):
        W.create_ref(table, "later", "tag", version=9)
    check(table, [1, 2])
    v1 = LocalStorage(str(table.base) + "-v1")
    W.create_table(v1, SCHEMA, format_version=1)
    W.append(v1, rows([1]))
    with pytest.raises(Unsupported):
        W.create_ref(v1, "b", "branch")
    with pytest.raises(Unsupported):
        W.append(v1, rows([1]), branch="b")


# ---------------------------------------------------------------------------------------------
# Overwrites


@pytest.mark.rule("ICEBERG-SNAP-008", "ICEBERG-EVOL-001", "ICEBERG-EVOL-009")
def test_overwrite_replaces_rows_and_schema(table):
    W.create_table(table, SCHEMA, partition_by=["d"])
    W.append(table, rows(range(4)))
    r = W.overwrite(table, rows([9]))
    s = r.metadata.snapshots[-1].summary
    assert (s["operation"], s["deleted-data-files"], s["added-data-files"], s["total-records"]) == ("overwrite", "3", "1", "1")
    assert r.metadata.current_schema_id == 0
    check(table, [9])
    other = pa.schema([pa.field("id", pa.int64()), pa.field("extra", pa.string()), pa.field("d", pa.string())])
    r = W.overwrite(table, pa.table({"id": [1], "extra": ["x"], "d": ["not a date"]}, schema=other))
    schema = r.metadata.schema()
    assert r.metadata.current_schema_id == 1 and [f.name for f in schema.fields] == ["id", "extra", "d"]
    assert schema.field_by_name("id").id == 1 and schema.field_by_name("extra").id == 4 and schema.field_by_name("d").id == 5
    assert not schema.field_by_name("id").required  # incoming nullable relaxes it (never the reverse)
    assert r.metadata.spec().fields == () and r.metadata.default_spec_id == 1  # the partition source d (id 3) is gone
    check(table, [1])
    assert read_table(table).column("d").to_pylist() == ["not a date"]


# ---------------------------------------------------------------------------------------------
# Deletes


def _delete_files(storage) -> list[MF.DataFile]:
    return [e.data_file for e in live(storage).delete_files]


CASES = [  # (format version, how, expected delete-file kind)
    (1, None, None), (2, None, None), (2, "position-deletes", "position"), (2, "equality-deletes", "equality"),
    (3, None, "dv"), (3, "copy-on-write", None), (3, "equality-deletes", "equality"),
]


@pytest.mark.rule("ICEBERG-DELETE-003", "ICEBERG-DELETE-004", "ICEBERG-DELETE-006", "ICEBERG-DELETE-009", "ICEBERG-DELETE-012",
                  "ICEBERG-DV-006", "ICEBERG-DV-008", "ICEBERG-LINEAGE-017", "ICEBERG-SNAP-008", "ICEBERG-MANIFEST-035",
                  "ICEBERG-MANIFEST-039")
@pytest.mark.parametrize("fv,how,kind", CASES, ids=[f"v{c[0]}-{c[1]}" for c in CASES])
def test_delete_mechanisms(tmp_path, fv, how, kind):
    table = LocalStorage(str(tmp_path / "t"))
    W.create_table(table, SCHEMA, partition_by=["d"] if fv > 1 else [], format_version=fv)
    W.append(table, rows(range(12)), files=2)
    r = W.delete(table, "id % 4 = 1", how=how)
    snap = r.metadata.snapshots[-1]
    deletes = _delete_files(table)
    if kind is None:
        assert deletes == [] and snap.operation == "overwrite" and snap.summary["deleted-data-files"] != "0"
    else:
        assert snap.operation == "delete" and "deleted-data-files" not in snap.summary
        assert {d.content for d in deletes} == {MF.EQUALITY_DELETES if kind == "equality" else MF.POSITION_DELETES}
        assert all(d.first_row_id is None for d in deletes)
        if kind == "position":
            assert all(d.file_format == "parquet" and d.referenced_data_file for d in deletes)
            assert snap.summary["added-position-delete-files"] == str(len(deletes)) and snap.summary["added-position-deletes"] == "3"
        elif kind == "dv":
            assert all(d.file_format == "puffin" and d.content_offset is not None and d.content_size_in_bytes for d in deletes)
            assert len({d.file_path for d in deletes}) == 1  # one Puffin file for the commit's DVs (DV-013)
            assert snap.summary["added-dvs"] == str(len(deletes)) and snap.summary["total-position-deletes"] == "3"
        else:
            assert all(d.equality_ids == (1, 2, 3) for d in deletes) and snap.summary["added-equality-deletes"] == "3"
    expected = [i for i in range(12) if i % 4 != 1]
    check(table, expected, pyiceberg=kind != "equality")  # PyIceberg 0.12 reads no equality deletes
    r = W.delete(table, "name = 'n6'", how=how)
    expected.remove(6)
    check(table, expected, pyiceberg=kind != "equality")
    assert duckdb_ids(table) == expected


@pytest.mark.rule("ICEBERG-DELETE-001", "ICEBERG-DELETE-002", "ICEBERG-DV-001")
def test_delete_mechanisms_a_version_cannot_take(tmp_path):
    for fv, how, rule in ((1, "position-deletes", "ICEBERG-DELETE-001"), (1, "deletion-vectors", "ICEBERG-DELETE-001"),
                          (1, "equality-deletes", "ICEBERG-DELETE-001"), (3, "position-deletes", "ICEBERG-DELETE-002"),
                          (2, "deletion-vectors", "ICEBERG-DV-001")):
        table = LocalStorage(str(tmp_path / f"v{fv}-{how}"))
        W.create_table(table, SCHEMA, format_version=fv)
        W.append(table, rows(range(3)))
        before = {f.path for f in table.walk()}
        with pytest.raises(Unsupported) as exc:
            W.delete(table, "id = 1", how=how)
        assert exc.value.rule == rule
        assert {f.path for f in table.walk()} == before  # refused before anything was written
        check(table, range(3))
    with pytest.raises(InvalidTable, match="unknown delete mechanism"):
        W.delete(table, "id = 1", how="magic")
    with pytest.raises(InvalidTable):
        W.delete(table, "no_such_column = 1")


@pytest.mark.rule("ICEBERG-DV-009", "ICEBERG-DV-010", "ICEBERG-DV-011", "ICEBERG-DELETE-017")
def test_deletion_vectors_are_merged_and_leave_with_their_file(table):
    W.create_table(table, SCHEMA, format_version=2)
    W.append(table, rows(range(10)))
    W.delete(table, "id = 1", how="position-deletes")
    W.set_properties(table, {"format-version": "3"})
    W.delete(table, "id = 2")  # v3 default: a DV holding the old position delete too (DV-010)
    (dv,) = _delete_files(table)
    assert dv.file_format == "puffin" and dv.record_count == 2  # the single-file position delete left (DELETE-017)
    r = W.delete(table, "id in (3, 4)")
    (dv2,) = _delete_files(table)
    assert dv2.record_count == 4 and r.metadata.snapshots[-1].summary["removed-dvs"] == "1"  # one DV per data file (DV-009)
    check(table, [0, 5, 6, 7, 8, 9])
    r = W.delete(table, "id >= 0", how="copy-on-write")  # the data file goes, and its DV with it (DV-011)
    assert _delete_files(table) == [] and live(table).data_files == ()
    assert r.metadata.snapshots[-1].operation == "delete"
    check(table, [])


@pytest.mark.rule("ICEBERG-DELETE-013")
def test_equality_deletes_use_identifier_fields_and_refuse_inexact_deletes(tmp_path):
    table = LocalStorage(str(tmp_path / "ident"))
    W.create_table(table, SCHEMA, identifier_fields=["id"])
    W.append(table, rows(range(4)))
    W.delete(table, "name = 'n2'", how="equality-deletes")
    (eq,) = _delete_files(table)
    assert eq.equality_ids == (1,)
    check(table, [0, 1, 3], pyiceberg=False)
    floats = LocalStorage(str(tmp_path / "floats"))
    schema = pa.schema([pa.field("k", pa.int64()), pa.field("x", pa.float64())])
    W.create_table(floats, schema)
    W.append(floats, pa.table({"k": [1, 1, 2], "x": [1.0, 2.0, 3.0]}, schema=schema))
    with pytest.raises(Unsupported, match="would also delete 1 row"):
        W.delete(floats, "x = 1.0", how="equality-deletes")  # x cannot be a delete column; k = 1 matches two rows
    assert read_table(floats).num_rows == 3


# ---------------------------------------------------------------------------------------------
# Updates and compaction


@pytest.mark.rule("ICEBERG-LINEAGE-008", "ICEBERG-LINEAGE-002", "ICEBERG-LINEAGE-005")
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_update_keeps_row_ids(tmp_path, mode):
    table = LocalStorage(str(tmp_path / "t"))
    W.create_table(table, SCHEMA, format_version=3, properties={W.UPDATE_MODE: mode})
    W.append(table, rows(range(5)))
    r = W.update(table, {"name": "upper(name)", "id": "id + 100"}, "id >= 3")
    assert r.metadata.snapshots[-1].operation == "overwrite"
    assert bool(_delete_files(table)) == (mode == "merge-on-read")
    got = read_table(table, columns=["id", "name", "_row_id", "_last_updated_sequence_number"]).to_pylist()
    by_id = {g["id"]: g for g in got}
    assert sorted(by_id) == [0, 1, 2, 103, 104] and by_id[103]["name"] == "N3"
    assert {g["id"]: g["_row_id"] for g in got} == {0: 0, 1: 1, 2: 2, 103: 3, 104: 4}  # ids survive the move
    assert {g["id"]: g["_last_updated_sequence_number"] for g in got} == {0: 1, 1: 1, 2: 1, 103: 2, 104: 2}
    check(table, [0, 1, 2, 103, 104])
    with pytest.raises(InvalidTable, match="unknown column"):
        W.update(table, {"nope": "1"}, "true")
    with pytest.raises(InvalidTable, match="holds 1 null"):
        W.update(table, {"id": "NULL"}, "id = 0")


@pytest.mark.rule("ICEBERG-SNAP-008", "ICEBERG-LINEAGE-008", "ICEBERG-SEQ-006", "ICEBERG-LINEAGE-016")
def test_optimize_compacts_with_deletes_applied(table):
    W.create_table(table, SCHEMA, partition_by=["d"], format_version=3)
    W.append(table, rows(range(6)))
    W.append(table, rows(range(6, 12)))
    W.delete(table, "id = 4")
    lineage = ["id", "_row_id", "_last_updated_sequence_number"]
    before = {g["id"]: (g["_row_id"], g["_last_updated_sequence_number"]) for g in read_table(table, columns=lineage).to_pylist()}
    assert len({r for r, _ in before.values()}) == 11 and {r for r, _ in before.values()} <= set(range(12))
    r = W.optimize(table)
    snap = r.metadata.snapshots[-1]
    assert snap.operation == "replace" and snap.summary["total-data-files"] == "3" and _delete_files(table) == []
    assert snap.summary["added-records"] == "11"
    after = {g["id"]: (g["_row_id"], g["_last_updated_sequence_number"]) for g in read_table(table, columns=lineage).to_pylist()}
    assert after == before and {s for _, s in after.values()} == {1, 2}  # unchanged rows keep both (LINEAGE-008)
    assert W.optimize(table).committed is False  # nothing left to compact
    check(table, [i for i in range(12) if i != 4])


# ---------------------------------------------------------------------------------------------
# Schema evolution and partition evolution


@pytest.mark.rule("ICEBERG-EVOL-001", "ICEBERG-EVOL-009", "ICEBERG-EVOL-010", "ICEBERG-EVOL-011", "ICEBERG-EVOL-012", "ICEBERG-SCHEMA-023")
def test_schema_evolution(table):
    W.create_table(table, SCHEMA, format_version=3)
    W.append(table, rows([1]))
    md = W.add_column(table, pa.field("score", pa.float64())).metadata
    score = md.schema().field_by_name("score")
    assert (score.id, md.last_column_id, md.current_schema_id) == (4, 4, 1)
    assert score.initial_default is None and score.write_default is None  # written out as null (SCHEMA-023)
    W.append(table, pa.table({"id": [2], "score": [0.5]}))
    md = W.rename_column(table, "score", "points").metadata
    assert md.schema().field_by_name("points").id == 4
    md = W.move_column(table, "points", after=None).metadata
    assert [f.name for f in md.schema().fields] == ["points", "id", "name", "d"]
    md = W.move_column(table, "points", after="name").metadata
    assert [f.name for f in md.schema().fields] == ["id", "name", "points", "d"]
    md = W.drop_column(table, "points").metadata
    assert md.schema().field_by_name("points") is None and any(s.find_field(4) for s in md.schemas)  # older schemas keep it
    md = W.add_column(table, pa.field("points", pa.float64())).metadata
    assert md.schema().field_by_name("points").id == 5  # never reused (EVOL-009)
    assert len({s.schema_id for s in md.schemas}) == len(md.schemas)
    got = read_table(table)
    assert got.column("points").to_pylist() == [None, None]
    check(table, [1, 2])
    with pytest.raises(InvalidTable, match="already exists"):
        W.add_column(table, pa.field("id", pa.int64()))
    with pytest.raises(InvalidTable, match="required column"):
        W.add_column(table, pa.field("req", pa.int64(), nullable=False))
    with pytest.raises(InvalidTable, match="no column"):
        W.rename_column(table, "nope", "x")
    with pytest.raises(InvalidTable, match="already exists"):
        W.rename_column(table, "id", "name")


@pytest.mark.rule("ICEBERG-EVOL-002", "ICEBERG-EVOL-003", "ICEBERG-EVOL-004", "ICEBERG-EVOL-006", "ICEBERG-EVOL-008")
def test_type_promotion(tmp_path):
    schema = pa.schema([pa.field("i", pa.int32()), pa.field("f", pa.float32()), pa.field("dec", pa.decimal128(5, 2)),
                        pa.field("day", pa.date32()), pa.field("b", pa.date32())])
    v2 = LocalStorage(str(tmp_path / "v2"))
    W.create_table(v2, schema, format_version=2)
    W.append(v2, pa.table({"i": [1], "f": [1.5], "dec": pa.array([1], pa.decimal128(5, 2)), "day": [dt.date(2024, 1, 1)],
                           "b": [dt.date(2024, 1, 1)]}, schema=schema))
    W.change_column_type(v2, "i", pa.int64())
    W.change_column_type(v2, "f", pa.float64())
    W.change_column_type(v2, "dec", "decimal(9, 2)")
    assert [str(f.type) for f in W.load(v2).schema().fields][:3] == ["long", "double", "decimal(9,2)"]
    for name, to, rule in (("i", pa.int32(), "ICEBERG-EVOL-002"), ("dec", "decimal(12, 3)", "ICEBERG-EVOL-006"),
                           ("day", pa.timestamp("us"), "ICEBERG-EVOL-003"), ("f", pa.string(), "ICEBERG-EVOL-002")):
        with pytest.raises(InvalidTable) as exc:
            W.change_column_type(v2, name, to)
        assert exc.value.rule == rule, (name, exc.value)
    assert read_table(v2).column("i").type == pa.int64()
    assert pyiceberg_rows(v2).column("dec").to_pylist()[0] == 1
    v3 = LocalStorage(str(tmp_path / "v3"))
    W.create_table(v3, schema, format_version=3, partition_by=["day(day)", "bucket(4, b)"])
    W.change_column_type(v3, "day", pa.timestamp("us"))  # a day() source keeps its partition values
    with pytest.raises(InvalidTable) as exc:
        W.change_column_type(v3, "b", pa.timestamp("us"))  # bucket of days vs microseconds differs
    assert exc.value.rule == "ICEBERG-EVOL-008"
    with pytest.raises(InvalidTable) as exc:
        W.change_column_type(v3, "b", pa.timestamp("us", tz="UTC"))
    assert exc.value.rule in ("ICEBERG-EVOL-004", "ICEBERG-EVOL-008")


@pytest.mark.rule("ICEBERG-PART-008", "ICEBERG-PART-009", "ICEBERG-PART-029", "ICEBERG-PART-030", "ICEBERG-PART-031")
def test_partition_evolution(table):
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("ts", pa.timestamp("us"))])
    W.create_table(table, schema, partition_by=["day(ts)"])
    t = [dt.datetime(2024, 1, 1, h) for h in (1, 2)]
    W.append(table, pa.table({"id": [1, 2], "ts": t}, schema=schema))
    md = W.set_partitioning(table, ["day(ts)", "bucket(8, id)"]).metadata
    assert md.default_spec_id == 1 and [f.field_id for f in md.spec().fields] == [1000, 1001] and md.last_partition_id == 1001
    W.append(table, pa.table({"id": [3], "ts": [t[0]]}, schema=schema))
    md = W.set_partitioning(table, ["bucket(8, id)"]).metadata
    assert md.default_spec_id == 2 and [f.field_id for f in md.spec().fields] == [1001]
    md = W.set_partitioning(table, ["day(ts)"]).metadata  # equivalent to spec 0: reused, no new spec
    assert md.default_spec_id == 0 and len(md.partition_specs) == 3
    assert W.set_partitioning(table, ["day(ts)"]).committed is False
    W.append(table, pa.table({"id": [4], "ts": [t[1]]}, schema=schema))
    assert sorted({sid for sid in live(table).spec_ids}) == [0, 1]
    check(table, [1, 2, 3, 4])


@pytest.mark.rule("ICEBERG-PART-033", "ICEBERG-PART-032")
def test_v1_partition_evolution_keeps_positions(table):
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("c", pa.string())])
    W.create_table(table, schema, partition_by=["c"], format_version=1)
    W.append(table, pa.table({"id": [1], "c": ["x"]}))
    md = W.set_partitioning(table, ["bucket(2, id)"]).metadata
    assert [(f.field_id, str(f.transform)) for f in md.spec().fields] == [(1000, "void"), (1001, "bucket[2]")]
    W.append(table, pa.table({"id": [2], "c": ["y"]}))
    assert ids_of(read_table(table)) == [1, 2] and validate_table(table) == []


# ---------------------------------------------------------------------------------------------
# Properties, upgrades, expiry


def test_properties_and_upgrades(table):
    W.create_table(table, SCHEMA, format_version=1)
    W.append(table, rows([1]))
    md = W.set_properties(table, {"a": "1", "b": 2}).metadata
    assert dict(md.properties) == {"a": "1", "b": "2"}
    md = W.set_properties(table, {"a": None, "format-version": "2"}).metadata
    assert dict(md.properties) == {"b": "2"} and md.format_version == 2 and md.refs["main"].snapshot_id == md.current_snapshot_id
    W.append(table, rows([2]))
    md = W.set_properties(table, {"format-version": 3}).metadata
    W.append(table, rows([3]))
    md = W.load(table)
    assert md.format_version == 3 and md.snapshots[-1].first_row_id == 0 and md.next_row_id == 3  # every old file got ids
    with pytest.raises(InvalidTable) as exc:
        W.set_properties(table, {"format-version": "2"})
    assert exc.value.rule == "ICEBERG-COMPAT-003"
    check(table, [1, 2, 3])


@pytest.mark.rule("ICEBERG-META-036")
def test_metadata_log_is_trimmed(table):
    W.create_table(table, SCHEMA, properties={W.METADATA_PREVIOUS_VERSIONS_MAX: "2"})
    for i in range(4):
        r = W.append(table, rows([i]))
    assert [e.metadata_file.rsplit("/", 1)[-1] for e in r.metadata.metadata_log] == ["v3.metadata.json", "v4.metadata.json"]


@pytest.mark.rule("ICEBERG-META-032", "ICEBERG-META-034", "ICEBERG-REF-008", "ICEBERG-META-031")
def test_expire_snapshots(table):
    W.create_table(table, SCHEMA)
    for i in range(4):
        W.append(table, rows([i]))
    W.create_ref(table, "keep", "tag", version=1)
    W.overwrite(table, rows([9]))
    W.append(table, rows([10]))
    before = {f.path for f in table.walk()}
    md = W.expire_snapshots(table, retain_last=2).metadata
    assert sorted(s.sequence_number for s in md.snapshots) == [1, 5, 6]  # tag "keep" holds snapshot 1
    assert [e.snapshot_id for e in md.snapshot_log] == [s.snapshot_id for s in md.snapshots if s.sequence_number >= 5]
    assert set(md.refs) == {"main", "keep"}
    gone = before - {f.path for f in table.walk()}
    assert gone and all(p.startswith("data/") or p.startswith("metadata/snap-") or p.endswith(".avro") for p in gone)
    with pytest.raises(InvalidTable):
        read_table(table, version=3)
    assert ids_of(read_table(table, ref="keep")) == [0] and ids_of(read_table(table, version=5)) == [9]
    assert W.expire_snapshots(table, retain_last=2).committed is False
    check(table, [9, 10])
    with pytest.raises(InvalidTable):
        W.expire_snapshots(table, retain_last=0)


# ---------------------------------------------------------------------------------------------
# Commit conflicts and retries


class RacingCatalog(C.FileSystemCatalog):
    """A file-system catalog where another writer commits right before this writer's first swap."""

    def __init__(self, race) -> None:
        self.race = race
        self.raced = False

    def commit(self, storage, base, md):
        if not self.raced:
            self.raced = True
            self.race(storage)
        return super().commit(storage, base, md)


@pytest.mark.rule("ICEBERG-COMMIT-002", "ICEBERG-COMMIT-003", "ICEBERG-SEQ-003", "ICEBERG-LINEAGE-010", "ICEBERG-COMMIT-001")
def test_append_retries_on_a_new_base(table):
    W.create_table(table, SCHEMA, format_version=3)
    W.append(table, rows([1]))
    cat = RacingCatalog(lambda s: W.append(s, rows([2, 3])))
    r = W.append(table, rows([4]), catalog=cat)
    md = r.metadata
    assert r.attempts == 2 and r.sequence_number == 3 and r.metadata_version == 4
    snap = md.snapshot_by_id(r.snapshot_id)
    winner = md.snapshots[-2]
    assert snap.parent_snapshot_id == winner.snapshot_id and snap.first_row_id == winner.first_row_id + winner.added_rows
    # The failed attempt's manifest list is gone; its data file and manifest were reused by the retry.
    assert {table.uri(f.path) for f in table.list("metadata") if f.path.endswith(".avro")} <= _referenced(table)
    assert {table.uri(f.path) for f in table.walk("data")} <= _referenced(table)
    check(table, [1, 2, 3, 4])


@pytest.mark.rule("ICEBERG-COMMIT-006")
def test_schema_change_fails_when_the_schema_changed_meanwhile(table):
    W.create_table(table, SCHEMA)
    cat = RacingCatalog(lambda s: W.add_column(s, pa.field("x", pa.int32())))
    with pytest.raises(CommitConflict) as exc:
        W.rename_column(table, "name", "label", catalog=cat)
    assert exc.value.rule == "ICEBERG-COMMIT-006"
    assert [f.name for f in W.load(table).schema().fields] == ["id", "name", "d", "x"]
    cat = RacingCatalog(lambda s: W.set_properties(s, {"p": "1"}))
    W.rename_column(table, "name", "label", catalog=cat)  # only properties changed: re-applied
    assert W.load(table).schema().field_by_name("label").id == 2


@pytest.mark.rule("ICEBERG-COMMIT-004", "ICEBERG-COMMIT-005")
def test_row_level_changes_replan_on_a_new_base(table):
    W.create_table(table, SCHEMA, format_version=3)
    W.append(table, rows(range(4)))
    W.append(table, rows(range(4, 8)))
    # A concurrent delete removes rows the compaction would have rewritten: the compaction re-plans, nothing comes back.
    cat = RacingCatalog(lambda s: W.delete(s, "id in (1, 6)", how="copy-on-write"))
    r = W.optimize(table, catalog=cat)
    assert r.attempts == 2 and r.metadata.snapshots[-1].operation == "replace"
    check(table, [0, 2, 3, 4, 5, 7])
    # An expression delete re-applies to rows appended meanwhile.
    cat = RacingCatalog(lambda s: W.append(s, rows([20, 21])))
    W.delete(table, "id >= 20 or id = 0", catalog=cat)
    check(table, [2, 3, 4, 5, 7])
    # What the discarded plans and failed attempts wrote is gone: every file on disk belongs to some snapshot.
    assert {table.uri(f.path) for f in table.walk("data")} <= _referenced(table)
    assert {table.uri(f.path) for f in table.list("metadata") if f.path.endswith(".avro")} <= _referenced(table)


def _referenced(storage) -> set[str]:
    """Every manifest list, manifest and data/delete file some listed snapshot names."""
    out = set()
    for s in W.load(storage).snapshots:
        out.add(s.manifest_list)
        for mf in S.snapshot_manifests(storage, s):
            out.add(mf.manifest_path)
            for e in MF.read_manifest(storage.read(storage.resolve(mf.manifest_path))).entries:
                out.add(e.data_file.file_path)
    return out


def test_writer_killed_files_do_not_count(table):
    """Files written for an attempt that never commits (the process died) are not part of any version."""
    W.create_table(table, SCHEMA)
    W.append(table, rows([1]))
    from reference_impl.iceberg import datafiles as D

    md = W.load(table)
    D.write_data_files(table, rows([2]), schema=md.schema(), spec=md.spec())  # staged, never committed
    assert ids_of(read_table(table)) == [1] and ids_of(pyiceberg_rows(table)) == [1]
    assert W.append(table, rows([3])).metadata_version == 3
    check(table, [1, 3])


def test_minio_round_trip(tmp_path_factory):
    """The writer on S3: put-if-absent commits, Puffin DVs, reads by the reference and PyIceberg (S3 FileIO)."""
    from conformance.storage import open_store
    from conformance.storage.testing import skip_without_minio

    skip_without_minio()
    store = open_store("minio", str(tmp_path_factory.mktemp("writer-minio")))
    try:
        storage = store.storage(store.table_uri("iceberg", "round-trip"))
        W.create_table(storage, SCHEMA, partition_by=["d"], format_version=3)
        W.append(storage, rows(range(6)))
        W.delete(storage, "id = 2")
        W.update(storage, {"name": "'z'"}, "id = 3")
        assert ids_of(read_table(storage)) == [0, 1, 3, 4, 5] and validate_table(storage) == []
        static = pytest.importorskip("pyiceberg.table").StaticTable
        cfg = store.s3_config
        props = {"s3.endpoint": cfg.endpoint_url, "s3.access-key-id": cfg.access_key_id, "s3.secret-access-key": cfg.secret_access_key,
                 "s3.region": cfg.region}
        got = static.from_metadata(current_uri(storage), properties=props).scan().to_arrow()
        assert ids_of(got) == [0, 1, 3, 4, 5]
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------
# The reference engine's Iceberg side


def test_reference_engine_runs_every_step(tmp_path):
    from conformance import model
    from conformance.engines.reference import ReferenceEngine

    E = ReferenceEngine()

    ref = model.TableRef(format="iceberg", uri=str(tmp_path / "engine"))
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.int32()), pa.field("ts", pa.timestamp("us"))])
    data = pa.table({"id": [1, 2, 3], "v": [10, 20, 30], "ts": [dt.datetime(2024, 1, 1)] * 3}, schema=schema)
    steps = [
        model.Create(schema=schema, partition_by=("bucket(4, id)", "day(ts)"), properties={"format-version": "3"}),
        model.Append(rows=data, files=2),                                   # version 1
        model.CreateRef(name="first", kind="tag", version=1),
        model.Append(rows=data.slice(0, 1), branch="side"),
        model.Delete(where="id = 2", how="deletion-vectors"),               # version 3 (2 went to the branch)
        model.Update(set={"v": "v + 1"}, where="id = 3"),                   # version 4
        model.AddColumn(field=pa.field("note", pa.string())),
        model.RenameColumn(old="note", new="comment"),
        model.ChangeColumnType(name="v", type=pa.int64()),
        model.MoveColumn(name="ts", after=None),
        model.SetPartitioning(partition_by=("id",)),
        model.Append(rows=pa.table({"id": [4], "v": [40]})),                # version 5
        model.SetProperties(properties={"owner": "kit"}),
        model.DropColumn(name="comment"),
        model.Overwrite(rows=pa.table({"id": [7], "v": pa.array([70], pa.int64()), "ts": [dt.datetime(2024, 2, 1)]})),  # 6
        model.Append(rows=pa.table({"id": [7]})),                           # version 7: a second file in partition id=7
        model.Optimize(),                                                   # version 8
        model.ExpireSnapshots(retain_last=2),
        model.Raw(fn=lambda storage: storage.write_atomic("notes.txt", b"raw steps get the Storage"), description="a note"),
    ]
    assert {type(s).__name__ for s in steps} == E.capabilities().write_steps["iceberg"]
    E.write(ref, steps)
    assert ids_of(E.read(ref)) == [7, 7] and E.read(ref, columns=["id"]).column_names == ["id"]
    assert ids_of(E.read(ref, ref="first")) == [1, 2, 3] and ids_of(E.read(ref, ref="side")) == [1, 1, 2, 3]
    facts = E.describe(ref)
    assert facts["format_version"] == 3 and facts["partition_spec"] == ["id"] and facts["operation"] == "replace"
    assert facts["properties"] == {"owner": "kit"} and facts["refs"] == {"main": "branch", "first": "tag", "side": "branch"}
    assert ids_of(E.read(ref, at=7)) == [7, 7] and E.read(ref, at=0).num_rows == 0
    with pytest.raises(InvalidTable):
        E.read(ref, at=4)  # expired
    with pytest.raises(Unsupported):
        E.write(ref, [model.AddConstraint(name="c", expression="id > 0")])
    with pytest.raises(Unsupported):
        E.write(model.TableRef(format="iceberg", uri=str(tmp_path / "x")), [model.Create(schema=schema, features=("deletionVectors",))])
    assert validate_table(str(tmp_path / "engine")) == []
