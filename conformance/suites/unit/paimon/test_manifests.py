"""Manifest lists, data manifests, index manifests and replay (reference_impl.paimon.manifests).

pypaimon 2.1.0 writes real tables (partitioned PK table with an overwrite, append table,
dynamic-bucket table with a HASH index, data-evolution table with a deletion vector); every
Avro file must read to what pypaimon's own readers report, and the live files must be the files
pypaimon plans. Older layouts are written with fastavro from older writer schemas (fields only
ever appended), and hostile files must fail with the rule they break.
"""

from __future__ import annotations

import copy
import io
import json

import fastavro
import pytest

from conformance.suites.unit._errors import raises
from reference_impl.common import bounded
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import layout as L
from reference_impl.paimon import manifests as M
from reference_impl.paimon import snapshot as S
from reference_impl.storage import LocalStorage

EMPTY_ROW = bytes(12)  # the serialized empty BinaryRow (PAIMON-ROW-036)
U = "51c16f7b-421c-4bc0-80a0-17677f343358"


# --- pypaimon-written tables --------------------------------------------------------------------


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """db.pk (partitioned, bucket 2, 3 commits + overwrite of dt=a), db.ap (append), db.dyn (dynamic bucket), db.de (DV)."""
    pytest.importorskip("pypaimon")
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema

    root = tmp_path_factory.mktemp("paimon-manifests")
    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("db", True)
    s3 = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), pa.field("v", pa.string())])
    s2 = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])

    def commit(table, data, overwrite=None):
        wb = table.new_batch_write_builder()
        if overwrite is not None:
            wb.overwrite(overwrite)
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(data)
        c.commit(w.prepare_commit())
        w.close()
        c.close()

    cat.create_table("db.pk", Schema.from_pyarrow_schema(s3, partition_keys=["dt"], primary_keys=["id", "dt"],
                                                         options={"bucket": "2"}), False)
    cat.create_table("db.ap", Schema.from_pyarrow_schema(s3, partition_keys=["dt"]), False)
    for name in ("db.pk", "db.ap"):
        t = cat.get_table(name)
        for i in range(3):
            commit(t, pa.table({"id": [i, i + 10], "dt": ["a", "b"], "v": [f"x{i}", None]}, schema=s3))
        commit(t, pa.table({"id": [7], "dt": ["a"], "v": ["o"]}, schema=s3), overwrite={"dt": "a"})
    cat.create_table("db.dyn", Schema.from_pyarrow_schema(s2, primary_keys=["id"]), False)
    for i in range(2):
        commit(cat.get_table("db.dyn"), pa.table({"id": [1, 2, 3 + i], "v": ["a", "b", "c"]}, schema=s2))
    cat.create_table("db.de", Schema.from_pyarrow_schema(s2, options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true", "deletion-vectors.enabled": "true"}), False)
    de = cat.get_table("db.de")
    commit(de, pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=s2))
    wb = de.new_batch_write_builder()
    c = wb.new_commit()
    c.commit(wb.new_update().delete_by_row_id([1]))
    c.close()
    return cat, root / "db.db"


def size(st, path):
    """The byte size of a file of the table, from its directory listing."""
    return next(f.size for f in st.list(path.rsplit("/", 1)[0]) if f.path == path)


def open_table(tables, name):
    cat, root = tables
    return cat.get_table(f"db.{name}"), LocalStorage(str(root / name))


def all_snapshots(st):
    return S.list_snapshots(st)


@pytest.mark.rule("PAIMON-MLIST-001", "PAIMON-MLIST-002", "PAIMON-MLIST-003", "PAIMON-MLIST-004", "PAIMON-MLIST-013",
                  "PAIMON-MLIST-007", "PAIMON-LAYOUT-004")
@pytest.mark.parametrize("name", ["pk", "ap", "dyn", "de"])
def test_manifest_lists_read_like_pypaimon(tables, name):
    """Every manifest list of every snapshot reads to what pypaimon's ManifestListManager reads."""
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table, st = open_table(tables, name)
    reader = ManifestListManager(table)
    for snap in all_snapshots(st):
        for list_name in (snap.base_manifest_list, snap.delta_manifest_list):
            assert L.name_matches("manifest-list", list_name)
            ours, theirs = M.load_manifest_list(st, list_name), reader.read(list_name)
            assert len(ours) == len(theirs)
            for o, t in zip(ours, theirs):
                assert (o.file_name, o.file_size, o.num_added_files, o.num_deleted_files, o.schema_id) == (
                    t.file_name, t.file_size, t.num_added_files, t.num_deleted_files, t.schema_id)
                assert (o.min_bucket, o.max_bucket, o.min_level, o.max_level, o.min_row_id, o.max_row_id, o.total_buckets) == (
                    t.min_bucket, t.max_bucket, t.min_level, t.max_level, t.min_row_id, t.max_row_id, t.total_buckets)
                assert o.extra_files == (None if t.extra_files is None else tuple(t.extra_files))
                assert o.partition_stats.null_counts == tuple(t.partition_stats.null_counts)
                assert o.file_size == size(st, f"manifest/{o.file_name}")  # PAIMON-MLIST-006
                assert M.check_manifest_counts(o, M.load_manifest(st, o.file_name)) == []


def partition_values(table, raw: bytes):
    from pypaimon.table.row.generic_row import GenericRowDeserializer

    return GenericRowDeserializer.from_bytes(raw, table.partition_keys_fields).values


@pytest.mark.rule("PAIMON-MANIFEST-001", "PAIMON-MANIFEST-002", "PAIMON-MANIFEST-003", "PAIMON-MANIFEST-004",
                  "PAIMON-MANIFEST-006", "PAIMON-MANIFEST-007", "PAIMON-MANIFEST-008", "PAIMON-MANIFEST-014",
                  "PAIMON-MANIFEST-016", "PAIMON-MANIFEST-020", "PAIMON-MANIFEST-022", "PAIMON-MANIFEST-024",
                  "PAIMON-MANIFEST-028", "PAIMON-MANIFEST-029", "PAIMON-LAYOUT-005")
@pytest.mark.parametrize("name", ["pk", "ap", "dyn", "de"])
def test_manifests_read_like_pypaimon(tables, name):
    """Every data manifest reads to what pypaimon's ManifestFileManager reads, field by field."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.table.row.generic_row import GenericRowDeserializer

    table, st = open_table(tables, name)
    reader = ManifestFileManager(table)
    seen = set()
    for snap in all_snapshots(st):
        for meta in M.data_manifests(st, snap):
            if meta.file_name in seen:
                continue
            seen.add(meta.file_name)
            assert L.name_matches("manifest", meta.file_name)
            ours, theirs = M.load_manifest(st, meta.file_name), reader.read(meta.file_name, drop_stats=False)
            assert len(ours) == len(theirs) > 0
            for o, t in zip(ours, theirs):
                assert (o.kind, o.bucket, o.total_buckets) == (t.kind, t.bucket, t.total_buckets)
                assert partition_values(table, o.partition) == t.partition.values
                f, g = o.file, t.file
                assert (f.file_name, f.file_size, f.row_count, f.min_sequence_number, f.max_sequence_number, f.schema_id,
                        f.level, list(f.extra_files), f.delete_row_count, f.embedded_index, f.file_source, f.external_path,
                        f.first_row_id) == (
                    g.file_name, g.file_size, g.row_count, g.min_sequence_number, g.max_sequence_number, g.schema_id,
                    g.level, g.extra_files, g.delete_row_count, g.embedded_index, g.file_source, g.external_path,
                    g.first_row_id)
                assert f.value_stats_cols == (None if g.value_stats_cols is None else tuple(g.value_stats_cols))
                assert f.write_cols == (None if g.write_cols is None else tuple(g.write_cols))
                assert f.creation_time == g.creation_time.get_millisecond()
                keys = table.trimmed_primary_keys_fields
                assert GenericRowDeserializer.from_bytes(f.min_key, keys).values == g.min_key.values
                assert GenericRowDeserializer.from_bytes(f.max_key, keys).values == g.max_key.values
                assert f.key_stats.null_counts == tuple(g.key_stats.null_counts)
                assert f.value_stats.null_counts == tuple(g.value_stats.null_counts)
    assert seen


@pytest.mark.rule("PAIMON-SNAP-009", "PAIMON-SNAP-015", "PAIMON-MANIFEST-010", "PAIMON-MANIFEST-011", "PAIMON-MLIST-011",
                  "PAIMON-LAYOUT-009")
@pytest.mark.parametrize("name", ["pk", "ap", "dyn", "de"])
def test_live_files_are_what_pypaimon_plans(tables, name):
    """Replaying base + delta gives the files pypaimon's scan plans, and the snapshot's totalRecordCount."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager

    table, st = open_table(tables, name)
    for snap in all_snapshots(st):
        live = M.live_files(st, snap)
        assert sum(e.file.row_count for e in live) == snap.total_record_count
        theirs = ManifestFileManager(table).read_entries_parallel(M.data_manifests(st, snap))
        assert sorted(e.file.file_name for e in live) == sorted(e.file.file_name for e in theirs)
    latest = S.latest_snapshot(st)
    planned = {f.file_name for split in table.new_read_builder().new_scan().plan().splits() for f in split.files}
    assert {e.file.file_name for e in M.live_files(st, latest)} == planned


@pytest.mark.rule("PAIMON-MANIFEST-004", "PAIMON-MANIFEST-010", "PAIMON-MANIFEST-011")
def test_overwrite_deletes_by_identity(tables):
    """The overwrite of dt=a deletes the three files of dt=a (same identity), keeps dt=b's, adds one."""
    table, st = open_table(tables, "ap")
    snap = S.latest_snapshot(st)
    assert snap.commit_kind == "OVERWRITE"
    delta = M.delta_entries(st, snap)
    assert sorted(e.kind for e in delta) == [M.ADD, M.DELETE, M.DELETE, M.DELETE]
    before = {e.identifier for e in M.live_files(st, S.load_snapshot(st, snap.id - 1))}
    assert {e.identifier for e in delta if e.kind == M.DELETE} <= before
    live = M.live_files(st, snap)
    assert len(live) == 4 and [partition_values(table, e.partition) for e in live].count(["a"]) == 1


@pytest.mark.rule("PAIMON-IDXMAN-001", "PAIMON-IDXMAN-002", "PAIMON-IDXMAN-003", "PAIMON-IDXMAN-004", "PAIMON-IDXMAN-005",
                  "PAIMON-SNAP-011", "PAIMON-BUCKET-007")
@pytest.mark.parametrize("name, index_type", [("dyn", M.HASH_INDEX), ("de", M.DELETION_VECTORS_INDEX)])
def test_index_manifests_read_like_pypaimon(tables, name, index_type):
    """Index manifests read to what pypaimon's IndexManifestFile reads; DV ranges point inside the index file."""
    from pypaimon.manifest.index_manifest_file import IndexManifestFile

    table, st = open_table(tables, name)
    snap = S.latest_snapshot(st)
    ours, theirs = M.load_index_manifest(st, snap.index_manifest), IndexManifestFile(table).read(snap.index_manifest)
    assert len(ours) == len(theirs) == 1
    assert M.check_index_manifest_kinds(ours) == []
    for o, t in zip(ours, theirs):
        f, g = o.index_file, t.index_file
        assert (o.kind, o.bucket, f.index_type, f.file_name, f.file_size, f.row_count, f.external_path) == (
            t.kind, t.bucket, g.index_type, g.file_name, g.file_size, g.row_count, g.external_path) == (
            M.ADD, 0, index_type, g.file_name, g.file_size, g.row_count, None)
        assert o.partition == EMPTY_ROW and size(st, f"index/{f.file_name}") == f.file_size
        if index_type == M.HASH_INDEX:
            assert f.dv_ranges is None and f.file_size == 4 * f.row_count  # PAIMON-INDEX-001: 4-byte hashes
        else:
            assert {k: (v.offset, v.length, v.cardinality) for k, v in f.dv_ranges.items()} == {
                k: (v.offset, v.length, v.cardinality) for k, v in g.dv_ranges.items()}
            assert len(f.dv_ranges) == f.row_count
            dv = next(iter(f.dv_ranges.values()))
            assert dv.offset + 4 + dv.length + 4 <= f.file_size and dv.cardinality == 1
    live = M.live_index_files(st, snap)
    assert [e.index_file.file_name for e in live] == [e.index_file.file_name for e in ours]
    dvs = M.deletion_vectors(live)
    if index_type == M.DELETION_VECTORS_INDEX:
        (part, bucket, data_file), = dvs
        assert data_file in {e.file.file_name for e in M.live_files(st, snap)}
    else:
        assert dvs == {}


@pytest.mark.rule("PAIMON-LAYOUT-006")
def test_pypaimon_index_manifest_names_lack_the_counter(tables):
    """Finding: pypaimon 2.1.0 names index manifests ``index-manifest-<uuid>`` (Java: ``index-manifest-<uuid>-<n>``).
    Readers resolve them by the recorded name, so they read; a layout check reports the spelling."""
    _table, st = open_table(tables, "dyn")
    name = S.latest_snapshot(st).index_manifest
    assert name.startswith("index-manifest-") and not L.name_matches("index-manifest", name)
    assert M.load_index_manifest(st, name)


# --- older (and newer) writer schemas -------------------------------------------------------------


def without(schema: dict, *names: str, nested: str | None = None) -> dict:
    """``schema`` with the named fields dropped (from the record ``nested`` names, else the top level)."""
    out = copy.deepcopy(schema)
    record = out
    if nested:
        field = next(f for f in out["fields"] if f["name"] == nested)
        record = field["type"] if isinstance(field["type"], dict) else next(t for t in field["type"] if isinstance(t, dict))
        if record.get("type") == "array":
            record = record["items"]
    record["fields"] = [f for f in record["fields"] if f["name"] not in names]
    return out


def stats(n=0):
    return {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW, "_NULL_COUNTS": [0] * n}


def file_record(name="data-1.parquet", level=0, **extra):
    rec = {"_FILE_NAME": name, "_FILE_SIZE": 100, "_ROW_COUNT": 3, "_MIN_KEY": EMPTY_ROW, "_MAX_KEY": EMPTY_ROW,
           "_KEY_STATS": stats(), "_VALUE_STATS": stats(2), "_MIN_SEQUENCE_NUMBER": 0, "_MAX_SEQUENCE_NUMBER": 2,
           "_SCHEMA_ID": 0, "_LEVEL": level, "_EXTRA_FILES": [], "_CREATION_TIME": 1_700_000_000_123}
    rec.update(extra)
    return rec


def entry_record(kind=M.ADD, bucket=0, **file_fields):
    return {"_VERSION": 2, "_KIND": kind, "_PARTITION": EMPTY_ROW, "_BUCKET": bucket, "_TOTAL_BUCKETS": 1,
            "_FILE": file_record(**file_fields)}


def list_record(name, added=1, deleted=0, **extra):
    rec = {"_VERSION": 2, "_FILE_NAME": name, "_FILE_SIZE": 10, "_NUM_ADDED_FILES": added, "_NUM_DELETED_FILES": deleted,
           "_PARTITION_STATS": stats(), "_SCHEMA_ID": 0}
    rec.update(extra)
    return rec


# _FILE as Paimon 0.7 wrote it (up to _CREATION_TIME) and 0.8 (+ _DELETE_ROW_COUNT, _EMBEDDED_FILE_INDEX).
FILE_07 = ("_DELETE_ROW_COUNT", "_EMBEDDED_FILE_INDEX", "_FILE_SOURCE", "_VALUE_STATS_COLS", "_EXTERNAL_PATH", "_FIRST_ROW_ID",
           "_WRITE_COLS", "_WRITE_COLS_SEQUENCES")
FILE_08 = FILE_07[2:]
FILE_09 = FILE_07[3:]
FILE_10 = FILE_07[5:]


@pytest.mark.rule("PAIMON-MANIFEST-035", "PAIMON-MANIFEST-025", "PAIMON-MANIFEST-026", "PAIMON-MANIFEST-027")
@pytest.mark.parametrize("dropped, codec", [(FILE_07, "null"), (FILE_08, "deflate"), (FILE_09, "null"), (FILE_10, "zstandard"),
                                            ((), "null")])
def test_old_data_manifest_layouts_read(dropped, codec):
    """Manifests whose _FILE lacks the fields added since 0.7/0.8/1.0 read, the missing fields as None."""
    schema = without(M.MANIFEST_ENTRY_SCHEMA, *dropped, nested="_FILE")
    present = {"_DELETE_ROW_COUNT": 1, "_EMBEDDED_FILE_INDEX": b"idx", "_FILE_SOURCE": 1, "_VALUE_STATS_COLS": ["a", "b"],
               "_EXTERNAL_PATH": "s3://b/x.parquet", "_FIRST_ROW_ID": 10, "_WRITE_COLS": ["a"], "_WRITE_COLS_SEQUENCES": [4]}
    extra = {k: v for k, v in present.items() if k not in dropped}
    (e,) = M.read_manifest(M.encode_avro(schema, [entry_record(**extra)], codec=codec))
    f = e.file
    got = {"_DELETE_ROW_COUNT": f.delete_row_count, "_EMBEDDED_FILE_INDEX": f.embedded_index, "_FILE_SOURCE": f.file_source,
           "_VALUE_STATS_COLS": f.value_stats_cols, "_EXTERNAL_PATH": f.external_path, "_FIRST_ROW_ID": f.first_row_id,
           "_WRITE_COLS": f.write_cols, "_WRITE_COLS_SEQUENCES": f.write_cols_sequences}
    expected = {k: (tuple(v) if isinstance(v, list) else v) if k in extra else None for k, v in present.items()}
    assert got == expected
    assert (f.file_name, f.row_count, f.level, f.creation_time, f.extra_files) == ("data-1.parquet", 3, 0, 1_700_000_000_123, ())


@pytest.mark.rule("PAIMON-MANIFEST-035")
@pytest.mark.parametrize("dropped", [FILE_07, FILE_08, FILE_09], ids=["0.7", "0.8", "0.9"])
def test_pypaimon_cannot_read_manifests_from_before_1_0(tables, dropped):
    """Finding: pypaimon 2.1.0 indexes _FILE fields added in 0.8/0.9/1.0 with [] (``_VALUE_STATS_COLS`` first) and
    fails with KeyError on any manifest written before Paimon 1.0; the reference reads them (tests above)."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager

    table, st = open_table(tables, "ap")
    name = f"manifest-{U}-99"
    st.write_atomic(f"manifest/{name}", M.encode_avro(without(M.MANIFEST_ENTRY_SCHEMA, *dropped, nested="_FILE"), [entry_record()]))
    try:
        assert M.load_manifest(st, name)[0].file.value_stats_cols is None
        with pytest.raises(KeyError, match="_VALUE_STATS_COLS"):
            ManifestFileManager(table).read(name, drop_stats=False)
    finally:
        st.delete(f"manifest/{name}")


@pytest.mark.rule("PAIMON-MANIFEST-035")
def test_newer_writer_with_unknown_trailing_fields_reads():
    """A _FILE (or list record) with a field this reader does not know still reads; the field is ignored."""
    schema = copy.deepcopy(M.MANIFEST_ENTRY_SCHEMA)
    schema["fields"][5]["type"]["fields"].append({"name": "_FUTURE", "type": ["null", "long"], "default": None})
    (e,) = M.read_manifest(M.encode_avro(schema, [entry_record(_FUTURE=5)]))
    assert e.file.file_name == "data-1.parquet"
    ls = copy.deepcopy(M.MANIFEST_FILE_META_SCHEMA)
    ls["fields"].append({"name": "_FUTURE", "type": "string"})
    assert M.read_manifest_list(M.encode_avro(ls, [list_record("m", _FUTURE="x")]))[0].file_name == "m"


@pytest.mark.rule("PAIMON-MLIST-004", "PAIMON-MLIST-013")
@pytest.mark.parametrize("dropped", [
    ("_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL", "_MAX_LEVEL", "_MIN_ROW_ID", "_MAX_ROW_ID", "_TOTAL_BUCKETS", "_EXTRA_FILES"),
    ("_MIN_ROW_ID", "_MAX_ROW_ID", "_TOTAL_BUCKETS", "_EXTRA_FILES"), ("_TOTAL_BUCKETS", "_EXTRA_FILES"), ()])
def test_old_manifest_list_layouts_read(dropped):
    """Lists from before 1.1 (no bucket/level bounds), 1.4 (no row ids) and the newest fields read; missing = None."""
    extra = {"_MIN_BUCKET": 0, "_MAX_BUCKET": 3, "_MIN_LEVEL": 0, "_MAX_LEVEL": 5, "_MIN_ROW_ID": 0, "_MAX_ROW_ID": 9,
             "_TOTAL_BUCKETS": 4, "_EXTRA_FILES": ["m.avro.sidecar"]}
    (m,) = M.read_manifest_list(M.encode_avro(without(M.MANIFEST_FILE_META_SCHEMA, *dropped),
                                              [list_record("m", **{k: v for k, v in extra.items() if k not in dropped})]))
    got = {"_MIN_BUCKET": m.min_bucket, "_MAX_BUCKET": m.max_bucket, "_MIN_LEVEL": m.min_level, "_MAX_LEVEL": m.max_level,
           "_MIN_ROW_ID": m.min_row_id, "_MAX_ROW_ID": m.max_row_id, "_TOTAL_BUCKETS": m.total_buckets,
           "_EXTRA_FILES": m.extra_files}
    assert got == {k: (tuple(v) if isinstance(v, list) else v) if k not in dropped else None for k, v in extra.items()}


@pytest.mark.rule("PAIMON-IDXMAN-002", "PAIMON-IDXMAN-004", "PAIMON-IDXMAN-006")
def test_old_and_new_index_manifest_layouts_read():
    """Index manifests from before 1.0 (no _CARDINALITY, _EXTERNAL_PATH, _GLOBAL_INDEX) and with a global index read."""
    old = without(without(M.INDEX_MANIFEST_ENTRY_SCHEMA, "_EXTERNAL_PATH", "_GLOBAL_INDEX"), "_CARDINALITY",
                  nested="_DELETIONS_VECTORS_RANGES")
    rec = {"_VERSION": 1, "_KIND": 0, "_PARTITION": EMPTY_ROW, "_BUCKET": 1, "_INDEX_TYPE": "DELETION_VECTORS",
           "_FILE_NAME": f"index-{U}-0", "_FILE_SIZE": 40, "_ROW_COUNT": 2,
           "_DELETIONS_VECTORS_RANGES": [{"f0": "data-a.orc", "f1": 1, "f2": 10}, {"f0": "data-b.orc", "f1": 19, "f2": 10}]}
    (e,) = M.read_index_manifest(M.encode_avro(old, [rec]))
    assert [(d.data_file_name, d.offset, d.length, d.cardinality) for d in e.index_file.dv_ranges.values()] == [
        ("data-a.orc", 1, 10, None), ("data-b.orc", 19, 10, None)]
    assert e.index_file.external_path is None and e.index_file.global_index is None
    new = dict(rec, _INDEX_TYPE="btree", _DELETIONS_VECTORS_RANGES=None, _GLOBAL_INDEX={
        "_ROW_RANGE_START": 0, "_ROW_RANGE_END": 99, "_INDEX_FIELD_ID": 3, "_EXTRA_FIELD_IDS": [4], "_INDEX_META": b"m",
        "_SOURCE_META": None})
    (g,) = M.read_index_manifest(M.encode_avro(M.INDEX_MANIFEST_ENTRY_SCHEMA, [new]))
    assert g.index_file.global_index == M.GlobalIndexMeta(row_range_start=0, row_range_end=99, index_field_id=3,
                                                          extra_field_ids=(4,), index_meta=b"m", source_meta=None)


# --- replay on hand-made tables -------------------------------------------------------------------


class Table:
    """A hand-made table: each commit is a list of entry records; snapshot N = base (all earlier) + delta (this one)."""

    def __init__(self, root):
        self.st = LocalStorage(str(root))
        self.history: list[str] = []  # every manifest so far: the next snapshot's base list
        self.n = self.snapshots = 0

    def manifest(self, records, name=None):
        self.n += 1
        name = name or f"manifest-{U}-{self.n}"
        self.st.write_atomic(f"manifest/{name}", M.encode_avro(M.MANIFEST_ENTRY_SCHEMA, records))
        return name

    def mlist(self, names):
        self.n += 1
        name = f"manifest-list-{U}-{self.n}"
        recs = [list_record(m) for m in names]
        self.st.write_atomic(f"manifest/{name}", M.encode_avro(M.MANIFEST_FILE_META_SCHEMA, recs))
        return name

    def commit(self, *manifests_records, index=None):
        names = [self.manifest(r) for r in manifests_records]
        self.snapshots += 1
        snap = {"version": 3, "id": self.snapshots, "schemaId": 0, "baseManifestList": self.mlist(self.history),
                "deltaManifestList": self.mlist(names), "commitUser": "u", "commitIdentifier": 1, "commitKind": "APPEND",
                "timeMillis": 1}
        if index is not None:
            snap["indexManifest"] = index
        self.history += names
        self.st.write_atomic(L.MAIN.snapshot_path(self.snapshots), json.dumps(snap).encode())
        return S.load_snapshot(self.st, self.snapshots)

    def live(self, snap):
        return [(e.file.file_name, e.file.level) for e in M.live_files(self.st, snap)]


@pytest.mark.rule("PAIMON-MANIFEST-010", "PAIMON-MLIST-011", "PAIMON-SNAP-009")
def test_replay_in_order(tmp_path):
    """ADD a, ADD b; then DELETE a (compaction) and ADD c at level 1; then a is re-added: the last action wins."""
    t = Table(tmp_path)
    s1 = t.commit([entry_record(name="a"), entry_record(name="b")])
    s2 = t.commit([entry_record(M.DELETE, name="a"), entry_record(name="c", level=1)])
    s3 = t.commit([entry_record(name="a")])
    assert t.live(s1) == [("a", 0), ("b", 0)]
    assert t.live(s2) == [("b", 0), ("c", 1)]
    assert t.live(s3) == [("b", 0), ("c", 1), ("a", 0)]
    assert M.delta_entries(t.st, s2)[0].kind == M.DELETE


@pytest.mark.rule("PAIMON-MANIFEST-010")
def test_pypaimon_drops_a_re_added_file(tables):
    """Finding: ADD a, DELETE a, ADD a. The spec ("the same file may be added or deleted multiple times, the last
    version should be read") and in-order replay keep a live; pypaimon's read_entries_parallel (like Java's
    AbstractFileStoreScan.readAndMergeFileEntries) drops every ADD whose identity is deleted anywhere."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table, st = open_table(tables, "ap")
    names = [f"manifest-{U[:-1]}{i}-0" for i in range(3)]
    lst = f"manifest-list-{U}-77"
    try:
        part = bytes.fromhex("00000001" "0000000000000000" "6100000000000081")  # (dt='a'), the table's partition row
        for n, kind in zip(names, (M.ADD, M.DELETE, M.ADD)):
            st.write_atomic(f"manifest/{n}", manifest_bytes([dict(entry_record(kind, name="a"), _PARTITION=part)]))
        pstats = {"_MIN_VALUES": part, "_MAX_VALUES": part, "_NULL_COUNTS": [0]}
        st.write_atomic(f"manifest/{lst}", M.encode_avro(M.MANIFEST_FILE_META_SCHEMA,
                                                         [list_record(n, _PARTITION_STATS=pstats) for n in names]))
        state: dict = {}
        for meta in M.load_manifest_list(st, lst):
            M.merge_entries(M.load_manifest(st, meta.file_name), state)
        assert [e.file.file_name for e in state.values()] == ["a"]
        theirs = ManifestFileManager(table).read_entries_parallel(ManifestListManager(table).read(lst))
        assert theirs == []
    finally:
        for n in names + [lst]:
            st.delete(f"manifest/{n}")


@pytest.mark.rule("PAIMON-MANIFEST-011")
@pytest.mark.parametrize("field, value", [("level", 1), ("bucket", 1), ("external_path", "s3://x/a"), ("extra_files", ["a.index"])])
def test_delete_must_match_the_whole_identity(tmp_path, field, value):
    """A DELETE differing from the ADD in level, bucket, external path or extra files deletes nothing: invalid."""
    t = Table(tmp_path)
    t.commit([entry_record(name="a")])
    kw = {"bucket": value} if field == "bucket" else {{"level": "level", "external_path": "_EXTERNAL_PATH",
                                                       "extra_files": "_EXTRA_FILES"}[field]: value}
    s2 = t.commit([entry_record(M.DELETE, name="a", **kw)])
    raises(InvalidTable, "PAIMON-MANIFEST-011", "deletes 1 file(s) no manifest of it adds: a", M.live_files, t.st, s2)


@pytest.mark.rule("PAIMON-MANIFEST-011", "PAIMON-MLIST-011")
def test_delete_before_add_is_invalid(tmp_path):
    """Order matters: a DELETE replayed before its ADD leaves the ADD live twice-over -> refused."""
    t = Table(tmp_path)
    s1 = t.commit([entry_record(M.DELETE, name="a"), entry_record(name="a")])
    raises(InvalidTable, "PAIMON-MANIFEST-012", "is added while already deleted earlier", M.live_files, t.st, s1)


@pytest.mark.rule("PAIMON-MANIFEST-012")
def test_duplicate_add_is_invalid(tmp_path):
    t = Table(tmp_path)
    t.commit([entry_record(name="a")])
    s2 = t.commit([entry_record(name="a")])
    raises(InvalidTable, "PAIMON-MANIFEST-012", "file a (bucket 0, level 0) is added while already live", M.live_files, t.st, s2)
    # The same name at another level is another identity (Java FileEntry.Identifier): both live.
    t2 = Table(tmp_path / "2")
    s = t2.commit([entry_record(name="a"), entry_record(name="a", level=2)])
    assert t2.live(s) == [("a", 0), ("a", 2)]


@pytest.mark.rule("PAIMON-MANIFEST-010")
def test_merge_entries_keeps_unmatched_deletes_for_partial_ranges():
    """Over part of the history (Java's mergeEntries), a DELETE without its ADD is kept, not an error."""
    recs = M.read_manifest(M.encode_avro(M.MANIFEST_ENTRY_SCHEMA, [entry_record(M.DELETE, name="old"), entry_record(name="new")]))
    state = M.merge_entries(recs)
    assert sorted((e.kind, e.file.file_name) for e in state.values()) == [(M.ADD, "new"), (M.DELETE, "old")]


def index_record(kind=M.ADD, name=f"index-{U}-0", index_type="DELETION_VECTORS", bucket=0, ranges=None):
    return {"_VERSION": 1, "_KIND": kind, "_PARTITION": EMPTY_ROW, "_BUCKET": bucket, "_INDEX_TYPE": index_type,
            "_FILE_NAME": name, "_FILE_SIZE": 30, "_ROW_COUNT": 1,
            "_DELETIONS_VECTORS_RANGES": ranges if ranges is not None else (
                [{"f0": "data-1.parquet", "f1": 1, "f2": 20, "_CARDINALITY": 2}] if index_type == "DELETION_VECTORS" else None)}


@pytest.mark.rule("PAIMON-IDXMAN-007", "PAIMON-INDEX-008")
@pytest.mark.parametrize("records, rule, fragment", [
    ([index_record(), index_record()], "PAIMON-IDXMAN-007", "added twice"),
    ([index_record(M.DELETE)], "PAIMON-IDXMAN-007", "which it does not add"),
    ([index_record(), index_record(name=f"index-{U}-1")], "PAIMON-INDEX-008", "has deletion vectors in both"),
])
def test_index_replay_errors(tmp_path, records, rule, fragment):
    t = Table(tmp_path)
    t.st.write_atomic("manifest/index-manifest-x", M.encode_avro(M.INDEX_MANIFEST_ENTRY_SCHEMA, records))
    snap = t.commit([entry_record()], index="index-manifest-x")
    raises(InvalidTable, rule, fragment, lambda: M.deletion_vectors(M.live_index_files(t.st, snap)))


@pytest.mark.rule("PAIMON-IDXMAN-007")
def test_index_replay_add_then_delete(tmp_path):
    t = Table(tmp_path)
    recs = [index_record(index_type="HASH", name="h0"), index_record(index_type="HASH", name="h1"),
            index_record(M.DELETE, index_type="HASH", name="h0")]
    t.st.write_atomic("manifest/index-manifest-x", M.encode_avro(M.INDEX_MANIFEST_ENTRY_SCHEMA, recs))
    snap = t.commit([entry_record()], index="index-manifest-x")
    assert [e.index_file.file_name for e in M.live_index_files(t.st, snap)] == ["h1"]
    assert [v.rule for v in M.check_index_manifest_kinds(M.load_index_manifest(t.st, "index-manifest-x"))] == ["PAIMON-SNAP-011"]
    assert M.live_index_files(t.st, t.commit([entry_record(name="b")])) == []


@pytest.mark.rule("PAIMON-MANIFEST-013", "PAIMON-SNAP-010")
def test_changelog_files(tmp_path):
    """A changelog manifest list holds manifests of the data-manifest layout; no list, no changelog."""
    t = Table(tmp_path)
    snap = t.commit([entry_record(name="a")])
    assert M.changelog_files(t.st, snap) == []
    listed = t.mlist([t.manifest([entry_record(name="changelog-1.parquet")])])
    with_log = S.parse_snapshot(dict(S.snapshot_to_dict(snap), changelogManifestList=listed))
    assert [e.file.file_name for e in M.changelog_files(t.st, with_log)] == ["changelog-1.parquet"]


# --- hostile files ----------------------------------------------------------------------------------


def manifest_bytes(records=None, schema=None, codec="null"):
    return M.encode_avro(schema or M.MANIFEST_ENTRY_SCHEMA, records or [entry_record()], codec=codec)


@pytest.mark.rule("PAIMON-MANIFEST-001", "PAIMON-MLIST-001", "PAIMON-IDXMAN-001")
@pytest.mark.parametrize("damage", ["truncate", "garbage", "sync", "count", "empty", "no-schema"])
def test_damaged_avro(damage):
    data = bytearray(manifest_bytes([entry_record(), entry_record(name="b")]))
    if damage == "truncate":
        data = data[:-25]
    elif damage == "garbage":
        data = bytearray(b"Obj\x01" + bytes(range(256)) * 4)
    elif damage == "sync":
        data[-1] ^= 0xFF
    elif damage == "count":
        _meta, _sync, start = bounded.read_avro_header(bytes(data), what="m")
        data[start] = 2 * 3  # zig-zag 3: one more record than the block holds
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(data.replace(b"avro.schema", b"avro.schemX"))
    for reader, rule in ((M.read_manifest, "PAIMON-MANIFEST-001"), (M.read_manifest_list, "PAIMON-MLIST-001"),
                         (M.read_index_manifest, "PAIMON-IDXMAN-001")):
        raises(InvalidTable, rule, "not a readable Avro file", reader, bytes(data), path="x")


@pytest.mark.rule("PAIMON-MANIFEST-001")
def test_inflation_is_bounded(monkeypatch):
    data = manifest_bytes([entry_record(name="x" * 5000)] * 50, codec="deflate")
    monkeypatch.setenv("LAKECONF_MAX_INFLATE_BYTES", "100000")
    raises(InvalidTable, "PAIMON-MANIFEST-001", "inflates to more than", M.read_manifest, data)


@pytest.mark.rule("PAIMON-MANIFEST-015", "PAIMON-MANIFEST-022", "PAIMON-MANIFEST-023", "PAIMON-MANIFEST-017",
                  "PAIMON-MLIST-002", "PAIMON-IDXMAN-004")
def test_wrong_types_in_fields():
    """A writer schema that declares a field with another type: the value is refused with the field's rule."""
    def retype(schema, name, t, nested=None):
        out = copy.deepcopy(schema)
        rec = out["fields"][5]["type"] if nested else out
        for f in rec["fields"]:
            if f["name"] == name:
                f["type"] = t
        return out

    cases = [("_FILE_SIZE", "string", "100", "PAIMON-MANIFEST-015"), ("_LEVEL", "string", "0", "PAIMON-MANIFEST-022"),
             ("_EXTRA_FILES", {"type": "array", "items": "long"}, [1], "PAIMON-MANIFEST-023"),
             ("_MIN_KEY", "string", "k", "PAIMON-MANIFEST-017"), ("_LEVEL", "long", 1 << 40, "PAIMON-MANIFEST-022")]
    for name, t, value, rule in cases:
        schema = retype(M.MANIFEST_ENTRY_SCHEMA, name, t, nested=True)
        raises(InvalidTable, rule, name, M.read_manifest, manifest_bytes([entry_record(**{name: value})], schema))
    ls = retype(M.MANIFEST_FILE_META_SCHEMA, "_SCHEMA_ID", "string")
    raises(InvalidTable, "PAIMON-MLIST-002", "_SCHEMA_ID", M.read_manifest_list,
           M.encode_avro(ls, [list_record("m", _SCHEMA_ID="0")]))
    ix = copy.deepcopy(M.INDEX_MANIFEST_ENTRY_SCHEMA)
    ix["fields"][8]["type"][1]["items"]["fields"][1]["type"] = "string"
    raises(InvalidTable, "PAIMON-IDXMAN-004", "f1", M.read_index_manifest, M.encode_avro(
        ix, [index_record(ranges=[{"f0": "d", "f1": "1", "f2": 3}])]))


@pytest.mark.rule("PAIMON-MANIFEST-002", "PAIMON-MANIFEST-009")
def test_top_level_layout_is_fixed():
    """Java refuses a manifest whose top level is not _VERSION,_KIND,_PARTITION,_BUCKET,_TOTAL_BUCKETS,_FILE (paimon-rust #741, #743)."""
    moved = copy.deepcopy(M.MANIFEST_ENTRY_SCHEMA)
    moved["fields"].append(moved["fields"].pop(0))  # _VERSION last
    raises(InvalidTable, "PAIMON-MANIFEST-002", "in that order", M.read_manifest, manifest_bytes(schema=moved))
    union = copy.deepcopy(M.MANIFEST_ENTRY_SCHEMA)
    union["fields"][5]["type"] = ["null", union["fields"][5]["type"]]
    raises(InvalidTable, "PAIMON-MANIFEST-009", "_FILE", M.read_manifest, manifest_bytes(schema=union))
    long_kind = copy.deepcopy(M.MANIFEST_ENTRY_SCHEMA)
    long_kind["fields"][1]["type"] = "long"
    raises(InvalidTable, "PAIMON-MANIFEST-002", "_KIND", M.read_manifest, manifest_bytes(schema=long_kind))
    no_total = without(M.MANIFEST_ENTRY_SCHEMA, "_TOTAL_BUCKETS")
    raises(InvalidTable, "PAIMON-MANIFEST-002", "expected", M.read_manifest,
           M.encode_avro(no_total, [{k: v for k, v in entry_record().items() if k != "_TOTAL_BUCKETS"}]))


@pytest.mark.rule("PAIMON-MANIFEST-003", "PAIMON-MLIST-003", "PAIMON-IDXMAN-002")
def test_format_identifiers():
    """_VERSION is a permanent identifier: other values are formats this reader does not know."""
    raises(Unsupported, "PAIMON-MANIFEST-003", "_VERSION 3", M.read_manifest, manifest_bytes([dict(entry_record(), _VERSION=3)]))
    raises(Unsupported, "PAIMON-MANIFEST-003", "pre-0.5 format", M.read_manifest, manifest_bytes([dict(entry_record(), _VERSION=1)]))
    raises(Unsupported, "PAIMON-MANIFEST-003", "_VERSION 0", M.read_manifest, manifest_bytes([dict(entry_record(), _VERSION=0)]))
    raises(Unsupported, "PAIMON-MLIST-003", "recreate", M.read_manifest_list,
           M.encode_avro(M.MANIFEST_FILE_META_SCHEMA, [list_record("m", _VERSION=1)]))
    raises(Unsupported, "PAIMON-IDXMAN-002", "_VERSION 2", M.read_index_manifest,
           M.encode_avro(M.INDEX_MANIFEST_ENTRY_SCHEMA, [dict(index_record(), _VERSION=2)]))
    nover = without(M.MANIFEST_FILE_META_SCHEMA, "_VERSION")
    raises(InvalidTable, "PAIMON-MLIST-003", "lacks _VERSION", M.read_manifest_list,
           M.encode_avro(nover, [{k: v for k, v in list_record("m").items() if k != "_VERSION"}]))


@pytest.mark.rule("PAIMON-MANIFEST-005", "PAIMON-MANIFEST-028", "PAIMON-IDXMAN-004")
def test_enumerations():
    raises(InvalidTable, "PAIMON-MANIFEST-005", "_KIND 2", M.read_manifest, manifest_bytes([entry_record(kind=2)]))
    raises(InvalidTable, "PAIMON-MANIFEST-028", "_FILE_SOURCE 7", M.read_manifest, manifest_bytes([entry_record(_FILE_SOURCE=7)]))
    raises(InvalidTable, "PAIMON-IDXMAN-004", "of type HASH has deletion vector ranges", M.read_index_manifest,
           M.encode_avro(M.INDEX_MANIFEST_ENTRY_SCHEMA, [index_record(index_type="HASH", ranges=[{"f0": "d", "f1": 1, "f2": 2}])]))
    raises(InvalidTable, "PAIMON-IDXMAN-004", "two deletion vectors", M.read_index_manifest, M.encode_avro(
        M.INDEX_MANIFEST_ENTRY_SCHEMA, [index_record(ranges=[{"f0": "d", "f1": 1, "f2": 2}, {"f0": "d", "f1": 9, "f2": 2}])]))


@pytest.mark.rule("PAIMON-MLIST-005", "PAIMON-MANIFEST-014", "PAIMON-MANIFEST-023", "PAIMON-LAYOUT-004")
def test_names_escaping_their_directory(tmp_path):
    """Names recorded in metadata are bare: a manifest list, manifest, data or extra file name with a path is refused."""
    raises(InvalidTable, "PAIMON-MLIST-005", "'../../secret'", M.read_manifest_list,
           M.encode_avro(M.MANIFEST_FILE_META_SCHEMA, [list_record("../../secret")]))
    raises(InvalidTable, "PAIMON-MANIFEST-014", "'../dt=a/x.parquet'", M.read_manifest, manifest_bytes([entry_record(name="../dt=a/x.parquet")]))
    raises(InvalidTable, "PAIMON-MANIFEST-023", "'/etc/passwd'", M.read_manifest, manifest_bytes([entry_record(_EXTRA_FILES=["/etc/passwd"])]))
    t = Table(tmp_path)
    snap = t.commit([entry_record()])
    bad = S.parse_snapshot(dict(S.snapshot_to_dict(snap), baseManifestList="../snapshot/snapshot-1"))
    raises(InvalidTable, "PAIMON-LAYOUT-004", "not a bare file name", M.live_files, t.st, bad)
    gone = S.parse_snapshot(dict(S.snapshot_to_dict(snap), deltaManifestList=f"manifest-list-{U}-404"))
    raises(InvalidTable, "PAIMON-LAYOUT-004", "does not exist", M.live_files, t.st, gone)


@pytest.mark.rule("PAIMON-MLIST-007")
def test_manifest_counts_are_checked():
    entries = M.read_manifest(manifest_bytes([entry_record(), entry_record(M.DELETE, name="z")]))
    meta = M.read_manifest_list(M.encode_avro(M.MANIFEST_FILE_META_SCHEMA, [list_record("m", added=2, deleted=0)]))[0]
    assert [v.rule for v in M.check_manifest_counts(meta, entries)] == ["PAIMON-MLIST-007"]


@pytest.mark.rule("PAIMON-MANIFEST-024")
def test_creation_time_is_the_raw_long():
    """timestamp-millis stays the long on disk (no time zone applied), even far outside datetime's range."""
    (e,) = M.read_manifest(manifest_bytes([entry_record(_CREATION_TIME=-(1 << 62))]))
    assert e.file.creation_time == -(1 << 62)
    raw = fastavro.reader(io.BytesIO(manifest_bytes([entry_record()])))
    assert raw.writer_schema["fields"][5]["type"]["fields"][12]["type"][1]["logicalType"] == "timestamp-millis"
