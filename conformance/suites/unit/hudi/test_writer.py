"""The Hudi writer (reference_impl.hudi.writer): every operation x table version (6, 8, 9) x table type, rows
checked through the reference reader and, when importable, hudi-rs (``hudi`` 0.5.0); layouts checked against what
Spark + Hudi 1.2 writes (file names, timeline files, properties, metadata encodings)."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from reference_impl.errors import CommitConflict, InvalidTable, Unsupported
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi import logfile as LF
from reference_impl.hudi import naming as N
from reference_impl.hudi import properties as P
from reference_impl.hudi import table as H
from reference_impl.hudi import timeline as T
from reference_impl.hudi import writer as W
from reference_impl.storage import LocalStorage

try:
    import hudi as HRS
except ImportError:  # pragma: no cover - depends on the environment
    HRS = None

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string())])
VERSIONS = (6, 8, 9)
TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
ALL = [(v, t) for v in VERSIONS for t in TYPES]
COLS = ("id", "ts", "name", "part")


def rows(*items) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(COLS, r)) for r in items], schema=SCHEMA)


def make(tmp_path, version=9, table_type="COPY_ON_WRITE", **kw) -> str:
    root = str(tmp_path / f"t{version}{table_type[0]}")
    args = dict(record_key=["id"], partition_fields=["part"], ordering_fields=["ts"], table_type=table_type,
                table_version=version, hive_style=True)
    args.update(kw)
    W.create_table(root, SCHEMA, **args)
    return root


def ref(root, cols=COLS, **kw) -> list[tuple]:
    t = H.read_table(root, meta_columns=False, **kw)
    return sorted(tuple(r[c] for c in cols) for r in t.to_pylist())


def engine_rows(root, cols=COLS, *, read_optimized=False, as_of=None, begin=None, end=None) -> list[tuple] | None:
    """Rows hudi-rs reads, or None (the caller skips) when it is not importable."""
    if HRS is None:
        if os.environ.get("LAKECONF_REQUIRE_ENGINES"):
            pytest.fail("hudi-rs (pip package hudi) is required (LAKECONF_REQUIRE_ENGINES is set) but not importable")
        return None
    opts = HRS.HudiReadOptions()
    if read_optimized:
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    if begin is not None or end is not None:
        opts = opts.with_query_type(HRS.HudiQueryType.Incremental)
        if begin is not None:
            opts = opts.with_start_timestamp(begin)
        if end is not None:
            opts = opts.with_end_timestamp(end)
    batches = HRS.HudiTable(root).read(opts)
    t = pa.Table.from_batches(batches) if batches else pa.table({})
    return sorted(tuple(r.get(c) for c in cols) for r in t.to_pylist())


def check(root, expected, cols=COLS, **kw) -> None:
    """The reference reader and hudi-rs both read ``expected`` (hudi-rs part skipped when not importable)."""
    assert ref(root, cols, **_ref_kw(kw)) == sorted(expected)
    got = engine_rows(root, cols, **kw)
    if got is None:
        pytest.skip("hudi-rs not importable (pip install hudi==0.5.0); reference rows checked")
    assert got == sorted(expected)


def _ref_kw(kw):
    out = {}
    if kw.get("read_optimized"):
        out["query"] = H.READ_OPTIMIZED
    if kw.get("as_of"):
        out["as_of"] = kw["as_of"]
    if kw.get("begin") is not None or kw.get("end") is not None:
        out.update(query=H.INCREMENTAL, begin=kw.get("begin"), end=kw.get("end"))
    return out


def timeline(root) -> T.Timeline:
    st = LocalStorage(root)
    return T.load_active_timeline(st, P.read_table_config(st))


def data_files(root) -> list[str]:
    return sorted(f.path for f in LocalStorage(root).walk("") if not f.path.startswith(".hoodie")
                  and not f.path.rsplit("/", 1)[-1].startswith(".hoodie_partition"))


def metadata(root, instant) -> CM.CommitMetadata:
    tl = timeline(root)
    inst = tl.instant(instant)
    return CM.read_instant_metadata(LocalStorage(root), tl, inst)


# ---------------------------------------------------------------------------------------------
# create_table


@pytest.mark.rule("HUDI-LAYOUT-002")
@pytest.mark.rule("HUDI-LAYOUT-005")
@pytest.mark.parametrize("version", VERSIONS)
def test_create_table_writes_properties_of_the_version(tmp_path, version):
    root = make(tmp_path, version, "MERGE_ON_READ")
    raw = open(os.path.join(root, ".hoodie", "hoodie.properties"), "rb").read()
    props = P.parse_properties(raw)
    cfg = P.read_table_config(LocalStorage(root))
    assert cfg.checksum_ok is True and list(props)[-1] == P.CHECKSUM
    assert cfg.version == version and cfg.timeline_layout_version == (1 if version == 6 else 2)
    assert cfg.record_key_fields == ("id",) and cfg.partition_fields == ("part",) and cfg.ordering_fields == ("ts",)
    assert cfg.merge_mode == P.EVENT_TIME_ORDERING and cfg.hive_style_partitioning
    if version == 6:
        assert props[P.PRECOMBINE_FIELD] == "ts" and P.ORDERING_FIELDS not in props
        assert props[P.PAYLOAD_CLASS] == P.DEFAULT_PAYLOAD and P.RECORD_MERGE_MODE not in props
        assert props[P.KEYGEN_CLASS] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    else:
        assert props[P.RECORD_MERGE_MODE] == P.EVENT_TIME_ORDERING and props[P.METADATA_PARTITIONS] == ""
        assert props[P.KEYGEN_TYPE] == "SIMPLE" and props[P.TIMELINE_PATH] == "timeline"
        if version == 8:
            assert props[P.PRECOMBINE_FIELD] == "ts" and props[P.RECORD_MERGE_STRATEGY_ID] == P.EVENT_TIME_STRATEGY_ID
        else:
            assert props[P.ORDERING_FIELDS] == "ts" and P.PRECOMBINE_FIELD not in props
    assert os.path.isdir(os.path.join(root, cfg.timeline_dir))
    assert H.read_table(root).num_rows == 0
    with pytest.raises(InvalidTable, match="already exists"):
        make(tmp_path, version, "MERGE_ON_READ")


@pytest.mark.rule("HUDI-LAYOUT-009")
def test_create_table_without_ordering_is_commit_time_ordered(tmp_path):
    root = make(tmp_path, 9, "MERGE_ON_READ", ordering_fields=())
    assert P.read_table_config(LocalStorage(root)).merge_mode == P.COMMIT_TIME_ORDERING
    root6 = make(tmp_path, 6, ordering_fields=())
    assert P.read_table_config(LocalStorage(root6)).payload_class == P.OVERWRITE_PAYLOAD


@pytest.mark.parametrize("kw,match", [
    (dict(record_key=["nope"]), "record key field"),
    (dict(record_key=[]), "at least one"),
    (dict(partition_fields=["x"]), "partition field"),
    (dict(table_version=7), "table version 7"),
    (dict(table_type="COW"), "COPY_ON_WRITE"),
    (dict(merge_mode="CUSTOM"), "CUSTOM"),
    (dict(ordering_fields=(), merge_mode="EVENT_TIME_ORDERING"), "needs ordering"),
    (dict(key_generator="NON_PARTITIONED"), "no partition fields"),
    (dict(log_block_format="hfile"), "log_block_format"),
])
def test_create_table_refuses_bad_arguments(tmp_path, kw, match):
    with pytest.raises((InvalidTable, Unsupported), match=match):
        make(tmp_path, **kw)


# ---------------------------------------------------------------------------------------------
# insert / upsert / delete


@pytest.mark.rule("HUDI-TABLE-003")
@pytest.mark.rule("HUDI-META-001")
@pytest.mark.rule("HUDI-TIMELINE-002")
@pytest.mark.parametrize("version,table_type", ALL)
def test_insert_upsert_delete(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    t1 = W.insert(root, rows(("k1", 1, "a", "p1"), ("k2", 1, "b", "p2")))
    t2 = W.upsert(root, rows(("k1", 2, "a2", "p1"), ("k3", 1, "c", "p1")))
    t3 = W.delete(root, pa.table({"id": ["k2"], "part": ["p2"]}))
    assert t1 < t2 < t3
    out = H.read_table(root)
    assert out.column_names[:5] == list(("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                         "_hoodie_partition_path", "_hoodie_file_name"))
    meta = {r["id"]: r for r in out.to_pylist()}
    assert meta["k1"]["_hoodie_commit_time"] == t2 and meta["k3"]["_hoodie_partition_path"] == "part=p1"
    assert meta["k1"]["_hoodie_commit_seqno"].startswith(t2 + "_")
    tl = timeline(root)
    action = "deltacommit" if table_type == "MERGE_ON_READ" else "commit"
    for t in (t1, t2, t3):
        states = {f.state for f in tl.files_of(t)}
        assert states == {T.REQUESTED, T.INFLIGHT, T.COMPLETED} and tl.instant(t).action == action
        if version >= 8:
            assert tl.instant(t).completion_time > t
    files = data_files(root)
    logs = [N.parse_log_file_name(f.rsplit("/", 1)[-1]) for f in files if "/." in f]
    if table_type == "MERGE_ON_READ":
        # Upserts of existing keys and deletes are log files; v6 names them by base instant, v8+ by delta commit.
        assert len(logs) == 2
        assert {lg.instant for lg in logs} == ({t1} if version == 6 else {t2, t3})
    else:
        assert not logs
    assert T.transition_violations(tl) == []
    encoding = metadata(root, t2).encoding
    assert encoding == ("json" if version == 6 else "avro")
    check(root, [("k1", 2, "a2", "p1"), ("k3", 1, "c", "p1")])


@pytest.mark.rule("HUDI-LAYOUT-009")
@pytest.mark.parametrize("version,table_type", ALL)
def test_event_time_ordering_keeps_the_higher_ordering_value(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 5, "a", "p1"), ("k2", 5, "b", "p1")))
    W.upsert(root, rows(("k1", 3, "older", "p1"), ("k2", 5, "tie", "p1")))
    check(root, [("k1", 5, "a", "p1"), ("k2", 5, "tie", "p1")])


@pytest.mark.rule("HUDI-LAYOUT-009")
@pytest.mark.parametrize("version,table_type", ALL)
def test_commit_time_ordering_takes_the_later_write(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type, merge_mode="COMMIT_TIME_ORDERING")
    W.insert(root, rows(("k1", 5, "a", "p1")))
    W.upsert(root, rows(("k1", 3, "later", "p1")))
    check(root, [("k1", 3, "later", "p1")])


@pytest.mark.rule("HUDI-LOG-010")
@pytest.mark.parametrize("version,table_type", ALL)
def test_delete_with_ordering_values(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 5, "a", "p1"), ("k2", 5, "b", "p1")))
    # k1: a delete with a lower ordering value loses under event-time ordering; k2: a higher one wins.
    W.delete(root, pa.table({"id": ["k1", "k2"], "part": ["p1", "p1"], "ts": [3, 9]}))
    assert ref(root) == [("k1", 5, "a", "p1")]
    if table_type == "MERGE_ON_READ":
        st = LocalStorage(root)
        log = [f for f in data_files(root) if "/." in f][0]
        block = LF.load_log_file(st, log)[0]
        assert block.block_type is LF.BlockType.DELETE
        assert sorted((r.record_key, r.ordering_value, r.ordering_type) for r in block.records) == \
            [("k1", 3, "long"), ("k2", 9, "long")]
    check(root, [("k1", 5, "a", "p1")])


def test_delete_of_absent_keys_commits_nothing(tmp_path):
    root = make(tmp_path)
    W.insert(root, rows(("k1", 1, "a", "p1")))
    before = len(timeline(root).files)
    assert W.delete(root, pa.table({"id": ["zz", "k1"], "part": ["p1", "p2"]})) is None
    assert len(timeline(root).files) == before


def test_insert_refuses_an_existing_key(tmp_path):
    root = make(tmp_path)
    W.insert(root, rows(("k1", 1, "a", "p1")))
    with pytest.raises(InvalidTable, match="already exists"):
        W.insert(root, rows(("k1", 2, "b", "p1")))
    assert len(timeline(root).completed()) == 1 and not timeline(root).pending()
    W.insert(root, rows(("k1", 2, "b", "p2")))  # another partition: another record (non-global index)
    assert ref(root) == [("k1", 1, "a", "p1"), ("k1", 2, "b", "p2")]


def test_batch_is_precombined_by_ordering(tmp_path):
    root = make(tmp_path, 9, "MERGE_ON_READ")
    W.upsert(root, rows(("k1", 5, "high", "p1"), ("k1", 2, "low", "p1")))
    check(root, [("k1", 5, "high", "p1")])


@pytest.mark.rule("HUDI-TABLE-003")
@pytest.mark.parametrize("version,table_type", ALL)
def test_delete_where_and_update_where(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 1, "a", "p1"), ("k2", 2, "b", "p1"), ("k3", 3, "c", "p2")))
    assert W.update_where(root, {"name": "upper(name) || '!'"}, "ts >= 2") is not None
    assert W.delete_where(root, "id = 'k1'") is not None
    assert W.delete_where(root, "id = 'nope'") is None
    assert W.update_where(root, {"name": "'x'"}, "false") is None
    check(root, [("k2", 2, "B!", "p1"), ("k3", 3, "C!", "p2")])
    with pytest.raises(Unsupported, match="record key or partition"):
        W.update_where(root, {"part": "'p9'"}, "true")
    with pytest.raises(InvalidTable, match="cannot evaluate"):
        W.delete_where(root, "no_such_column = 1")


# ---------------------------------------------------------------------------------------------
# Replace, compaction, clustering


@pytest.mark.rule("HUDI-COMMIT-004")
@pytest.mark.parametrize("version,table_type", ALL)
def test_insert_overwrite_table(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 1, "a", "p1"), ("k2", 1, "b", "p2")))
    W.upsert(root, rows(("k1", 2, "a2", "p1")))
    t = W.insert_overwrite_table(root, rows(("k9", 1, "z", "p3")))
    inst = timeline(root).instant(t)
    assert inst.action == "replacecommit"
    meta = metadata(root, t)
    assert meta.operation_type == "INSERT_OVERWRITE_TABLE"
    assert set(meta.partition_to_replace_file_ids) == {"part=p1", "part=p2"}
    check(root, [("k9", 1, "z", "p3")])


@pytest.mark.rule("HUDI-TABLE-004")
@pytest.mark.rule("HUDI-TIMELINE-013")
@pytest.mark.parametrize("version", VERSIONS)
def test_compaction(tmp_path, version):
    root = make(tmp_path, version, "MERGE_ON_READ")
    W.insert(root, rows(("k1", 1, "a", "p1"), ("k2", 1, "b", "p1")))
    W.upsert(root, rows(("k1", 2, "a2", "p1")))
    W.delete(root, pa.table({"id": ["k2"], "part": ["p1"]}))
    assert ref(root, query=H.READ_OPTIMIZED) == [("k1", 1, "a", "p1"), ("k2", 1, "b", "p1")]
    logs = [N.parse_log_file_name(f.rsplit("/", 1)[-1]) for f in data_files(root) if "/." in f]
    # One file group: v6 appends versions 1, 2 of the base instant's log; v8+ a log per delta commit.
    assert sorted(lg.version for lg in logs) == ([1, 2] if version == 6 else [1, 1])
    t = W.compact(root)
    tl = timeline(root)
    assert tl.instant(t).action == "commit"
    assert {(f.action, f.state) for f in tl.files_of(t)} == {("compaction", T.REQUESTED), ("compaction", T.INFLIGHT),
                                                             ("commit", T.COMPLETED)}
    meta = metadata(root, t)
    assert meta.compacted and meta.operation_type == "COMPACT"
    assert W.compact(root) is None
    W.upsert(root, rows(("k1", 3, "a3", "p1")))  # a log on the compacted slice
    check(root, [("k1", 3, "a3", "p1")])
    check(root, [("k1", 2, "a2", "p1")], read_optimized=True)


def test_compaction_refused_on_cow(tmp_path):
    with pytest.raises(InvalidTable, match="MERGE_ON_READ"):
        W.compact(make(tmp_path))


@pytest.mark.rule("HUDI-COMMIT-004")
@pytest.mark.rule("HUDI-TIMELINE-013")
@pytest.mark.parametrize("version,table_type", ALL)
def test_clustering(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 1, "a", "p1")))
    t2 = W.insert(root, rows(("k2", 1, "b", "p1"), ("k3", 1, "c", "p2")))
    W.upsert(root, rows(("k1", 2, "a2", "p1")))
    t = W.cluster(root)
    tl = timeline(root)
    assert tl.instant(t).action == "replacecommit"
    planned = {f.action for f in tl.files_of(t) if f.state == T.REQUESTED}
    assert planned == ({"clustering"} if version >= 8 else {"replacecommit"})
    meta = metadata(root, t)
    assert meta.operation_type == "CLUSTER" and len(meta.partition_to_replace_file_ids["part=p1"]) == 2
    out = {r["id"]: r for r in H.read_table(root).to_pylist()}
    assert out["k2"]["_hoodie_commit_time"] == t2  # clustering keeps the records' meta columns
    assert len({r["_hoodie_file_name"] for r in out.values() if r["part"] == "p1"}) == 1
    assert W.cluster(root) is None
    check(root, [("k1", 2, "a2", "p1"), ("k2", 1, "b", "p1"), ("k3", 1, "c", "p2")])


# ---------------------------------------------------------------------------------------------
# Failed writes and rollback


@pytest.mark.rule("HUDI-TIMELINE-019")
@pytest.mark.rule("HUDI-TIMELINE-020")
@pytest.mark.rule("HUDI-FILE-010")
@pytest.mark.parametrize("version,table_type", ALL)
@pytest.mark.parametrize("rollback", [False, True])
def test_failed_write(tmp_path, version, table_type, rollback):
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 1, "a", "p1")))
    before = data_files(root)
    failed = W.failed_write(root, rows(("k1", 2, "failed", "p1"), ("k2", 2, "failed", "p1")), rollback=rollback)
    tl = timeline(root)
    if rollback:
        assert data_files(root) == before
        assert tl.instant(failed) is None  # Java removes the rolled-back instant's files
        rb = [i for i in tl.completed() if i.action == "rollback"]
        assert len(rb) == 1
        meta = CM.read_instant_metadata(LocalStorage(root), tl, rb[0])
        assert meta.rolled_back == (failed,) and meta.total_files_deleted == 2
    else:
        assert len(data_files(root)) == len(before) + 2
        assert tl.instant(failed).state == T.INFLIGHT
    check(root, [("k1", 1, "a", "p1")])
    W.upsert(root, rows(("k1", 3, "after", "p1")))
    assert ref(root) == [("k1", 3, "after", "p1")]


# ---------------------------------------------------------------------------------------------
# Schema evolution


@pytest.mark.rule("HUDI-EVOL-001")
@pytest.mark.rule("HUDI-COMMIT-003")
@pytest.mark.parametrize("version,table_type", ALL)
def test_add_column(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 1, "a", "p1"), ("k2", 1, "b", "p1")))
    t = W.add_column(root, pa.field("extra", pa.int32()))
    assert metadata(root, t).operation_type == "ALTER_SCHEMA"
    assert "extra" in json.dumps(json.loads(metadata(root, t).schema))
    new = pa.schema(list(SCHEMA) + [pa.field("extra", pa.int32())])
    W.upsert(root, pa.Table.from_pylist([dict(id="k1", ts=2, name="a2", part="p1", extra=7)], schema=new))
    check(root, [("k1", 2, "a2", "p1", 7), ("k2", 1, "b", "p1", None)], cols=COLS + ("extra",))
    with pytest.raises(InvalidTable, match="already exists"):
        W.add_column(root, pa.field("extra", pa.int64()))
    with pytest.raises(Unsupported, match="non-nullable"):
        W.add_column(root, pa.field("required", pa.int64(), nullable=False))


@pytest.mark.rule("HUDI-EVOL-006")
@pytest.mark.rule("HUDI-EVOL-015")
@pytest.mark.parametrize("version,table_type", ALL)
def test_change_column_type_promotes_on_write(tmp_path, version, table_type):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int32()), ("part", pa.string())])
    root = str(tmp_path / "t")
    W.create_table(root, schema, record_key=["id"], partition_fields=["part"], ordering_fields=["ts"],
                   table_type=table_type, table_version=version)
    W.insert(root, pa.Table.from_pylist([dict(id="k1", ts=1, v=1, part="p"), dict(id="k2", ts=1, v=2, part="p")],
                                        schema=schema))
    t = W.change_column_type(root, "v", pa.int64())
    assert json.loads(metadata(root, t).schema)["fields"][2]["type"] == ["null", "long"]
    W.upsert(root, pa.table({"id": ["k1"], "ts": [2], "v": [1 << 40], "part": ["p"]}))
    out = H.read_table(root, meta_columns=False)
    assert out.schema.field("v").type == pa.int64()
    check(root, [("k1", 1 << 40), ("k2", 2)], cols=("id", "v"))
    with pytest.raises(Unsupported, match="not a promotion"):
        W.change_column_type(root, "v", pa.int32())


# ---------------------------------------------------------------------------------------------
# Time travel and incremental reads of written tables


@pytest.mark.rule("HUDI-TABLE-005")
@pytest.mark.rule("HUDI-TIMELINE-015")
@pytest.mark.parametrize("version,table_type", ALL)
def test_time_travel_and_incremental(tmp_path, version, table_type):
    root = make(tmp_path, version, table_type)
    t1 = W.insert(root, rows(("k1", 1, "a", "p1"), ("k2", 1, "b", "p2")))
    t2 = W.upsert(root, rows(("k1", 2, "a2", "p1")))
    t3 = W.upsert(root, rows(("k3", 3, "c", "p2")))
    check(root, [("k1", 1, "a", "p1"), ("k2", 1, "b", "p2")], as_of=t1)
    check(root, [("k1", 2, "a2", "p1"), ("k2", 1, "b", "p2")], as_of=t2)
    tl = timeline(root)
    ct = {i.requested_time: i.ordering_time for i in tl.completed()}
    # (t1, end]: what t2 and t3 wrote, in its latest state.
    check(root, [("k1", 2, "a2", "p1"), ("k3", 3, "c", "p2")], begin=ct[t1], end=ct[t3])


# ---------------------------------------------------------------------------------------------
# Log block formats, key generators, partition paths


@pytest.mark.rule("HUDI-FILE-004")
@pytest.mark.rule("HUDI-LOG-005")
@pytest.mark.parametrize("version", (6, 9))
def test_base_file_footer_and_log_headers(tmp_path, version):
    import pyarrow.parquet as pq

    root = make(tmp_path, version, "MERGE_ON_READ")
    t1 = W.insert(root, rows(("k2", 1, "b", "p1"), ("k1", 1, "a", "p1")))
    t2 = W.upsert(root, rows(("k1", 2, "a2", "p1")))
    base = [f for f in data_files(root) if f.endswith(".parquet")][0]
    name = N.parse_base_file_name(base.rsplit("/", 1)[-1])
    assert name.instant == t1 and N.is_uuid_file_id(name.file_id)
    pf = pq.ParquetFile(os.path.join(root, base))
    footer = pf.metadata.metadata
    assert footer[b"hoodie_min_record_key"] == b"k1" and footer[b"hoodie_max_record_key"] == b"k2"
    assert json.loads(footer[b"parquet.avro.schema"])["fields"][0]["name"] == "_hoodie_commit_time"
    got = pf.read().to_pylist()
    assert [r["_hoodie_record_key"] for r in got] == ["k1", "k2"]
    assert {r["_hoodie_file_name"] for r in got} == {base.rsplit("/", 1)[-1]}
    assert sorted(r["_hoodie_commit_seqno"] for r in got) == [f"{t1}_0_0", f"{t1}_0_1"]
    log = [f for f in data_files(root) if "/." in f][0]
    block = LF.load_log_file(LocalStorage(root), log)[0]
    assert block.instant_time == t2 and list(block.header)[:2] == [LF.HeaderKey.INSTANT_TIME, LF.HeaderKey.SCHEMA]
    assert block.records[0]["_hoodie_file_name"] == name.file_id  # log records name their file group
    assert json.loads(block.schema)["fields"][0]["name"] == "_hoodie_commit_time"


@pytest.mark.rule("HUDI-LOG-004")
@pytest.mark.parametrize("version", VERSIONS)
def test_parquet_log_blocks(tmp_path, version):
    root = make(tmp_path, version, "MERGE_ON_READ", log_block_format="parquet")
    W.insert(root, rows(("k1", 1, "a", "p1")))
    W.upsert(root, rows(("k1", 2, "a2", "p1")))
    log = [f for f in data_files(root) if "/." in f][0]
    assert LF.load_log_file(LocalStorage(root), log)[0].block_type is LF.BlockType.PARQUET_DATA
    check(root, [("k1", 2, "a2", "p1")])


@pytest.mark.rule("HUDI-LAYOUT-015")
@pytest.mark.rule("HUDI-COMMIT-005")
@pytest.mark.parametrize("version", (6, 9))
@pytest.mark.parametrize("keygen,parts,hive,url,expect_path,expect_key", [
    ("COMPLEX", ["part", "id"], False, False, "p1/k1", "id:k1,ts:1"),
    ("NON_PARTITIONED", [], False, False, "", "k1"),
    ("SIMPLE", ["part"], True, True, "part=a%2Fb", "k1"),
    ("TIMESTAMP", ["ts"], False, False, "1970-01-01", "k1"),
])
def test_key_generators_and_partition_paths(tmp_path, version, keygen, parts, hive, url, expect_path, expect_key):
    rk = ["id", "ts"] if keygen == "COMPLEX" else ["id"]
    root = make(tmp_path, version, "MERGE_ON_READ", key_generator=keygen, partition_fields=parts, hive_style=hive,
                url_encode=url, record_key=rk)
    part = "a/b" if url else "p1"
    W.insert(root, rows(("k1", 1, "a", part)))
    W.upsert(root, rows(("k1", 1, "a2", part)))
    out = H.read_table(root).to_pylist()
    assert [(r["_hoodie_partition_path"], r["_hoodie_record_key"], r["name"]) for r in out] == \
        [(expect_path, expect_key, "a2")]
    meta_file = os.path.join(root, expect_path, ".hoodie_partition_metadata")
    pm = N.parse_partition_metadata(open(meta_file, "rb").read())
    assert pm.partition_depth == (len(expect_path.split("/")) if expect_path else 0)
    check(root, [("k1", 1, "a2", part)])


TYPED = pa.schema([("id", pa.string()), ("b", pa.bool_()), ("i", pa.int32()), ("d", pa.float64()),
                   ("dec", pa.decimal128(10, 2)), ("day", pa.date32()), ("ts", pa.timestamp("us", tz="UTC")),
                   ("bin", pa.binary()), ("arr", pa.list_(pa.int32())),
                   ("st", pa.struct([("x", pa.int64()), ("y", pa.string())])), ("m", pa.map_(pa.string(), pa.int32()))])


def _typed(key: str, n: int) -> dict:
    import datetime as dt
    import decimal

    return dict(id=key, b=n % 2 == 0, i=n, d=n / 3, dec=decimal.Decimal(f"{n}.25"), day=dt.date(2026, 1, n),
                ts=dt.datetime(2026, 1, n, 1, 2, 3, 4000, tzinfo=dt.timezone.utc), bin=bytes([n]), arr=[n, n + 1],
                st={"x": n, "y": str(n)}, m=[("a", n)])


@pytest.mark.rule("HUDI-LOG-008")
@pytest.mark.parametrize("version", (6, 9))
@pytest.mark.parametrize("fmt", ("avro", "parquet"))
def test_column_types_round_trip_through_base_files_and_log_blocks(tmp_path, version, fmt):
    root = str(tmp_path / "t")
    W.create_table(root, TYPED, record_key=["id"], table_type="MERGE_ON_READ", table_version=version,
                   log_block_format=fmt)
    W.insert(root, pa.Table.from_pylist([_typed("k1", 1), _typed("k2", 2)], schema=TYPED))
    W.upsert(root, pa.Table.from_pylist([_typed("k1", 3)], schema=TYPED))
    want = [tuple(r.values()) for r in (_typed("k1", 3), _typed("k2", 2))]
    assert sorted(tuple(r.values()) for r in H.read_table(root, meta_columns=False).to_pylist()) == want
    got = engine_rows(root, tuple(TYPED.names))
    if got is None:
        pytest.skip("hudi-rs not importable; reference rows checked")
    assert got == want


# ---------------------------------------------------------------------------------------------
# Concurrency and bad input


class _RacingStorage(LocalStorage):
    """A storage where another writer creates each completed instant file just before this one does."""

    def put_if_absent(self, path: str, data: bytes) -> None:
        name = path.rsplit("/", 1)[-1]
        if path.startswith(".hoodie") and name[0].isdigit() and not name.endswith((".requested", ".inflight")):
            super().put_if_absent(path, b"")
        super().put_if_absent(path, data)


@pytest.mark.rule("HUDI-TIMELINE-004")
@pytest.mark.parametrize("version", VERSIONS)
def test_completed_instant_already_present_is_a_commit_conflict(tmp_path, version):
    root = make(tmp_path, version)
    with pytest.raises(CommitConflict, match="already exists"):
        W.insert(_RacingStorage(root), rows(("k1", 1, "a", "p1")))
    # The instant stays inflight (a failed write) in its requested/inflight files; nothing else changed.
    assert any(f.state == T.INFLIGHT for f in timeline(root).files)


class _TakenTimeStorage(LocalStorage):
    """A storage where another writer claims the first requested time this writer tries."""

    taken: list[str] = []

    def put_if_absent(self, path: str, data: bytes) -> None:
        if path.endswith(".requested") and not self.taken:
            self.taken.append(path)
            super().put_if_absent(path, b"")  # the other writer's requested file
        super().put_if_absent(path, data)


@pytest.mark.rule("HUDI-TIMELINE-005")
def test_a_requested_time_taken_by_another_writer_is_retried_later(tmp_path):
    root = make(tmp_path, 9)
    st = _TakenTimeStorage(root)
    st.taken = []
    t = W.insert(st, rows(("k1", 1, "a", "p1")))
    other = st.taken[0].rsplit("/", 1)[-1].split(".", 1)[0]
    assert t > other and timeline(root).instant(t).is_completed
    assert timeline(root).instant(other).state == T.REQUESTED  # the other writer's, untouched
    assert ref(root) == [("k1", 1, "a", "p1")]


@pytest.mark.rule("HUDI-TIMELINE-005")
def test_concurrent_write_to_the_same_file_group_conflicts(tmp_path, monkeypatch):
    root = make(tmp_path, 9, "MERGE_ON_READ")
    W.insert(root, rows(("k1", 1, "a", "p1")))
    real = W._write_records

    def racing(ctx, instant, plan, **kw):
        out = real(ctx, instant, plan, **kw)
        monkeypatch.setattr(W, "_write_records", real)
        W.upsert(root, rows(("k1", 5, "other", "p1")))  # another writer completes first, same file group
        return out
    monkeypatch.setattr(W, "_write_records", racing)
    with pytest.raises(CommitConflict, match="same file group"):
        W.upsert(root, rows(("k1", 2, "mine", "p1")))
    assert ref(root) == [("k1", 5, "other", "p1")]


def test_instant_times_increase_even_when_the_clock_does_not(tmp_path, monkeypatch):
    import datetime as dt

    root = make(tmp_path, 9)
    monkeypatch.setattr(W, "_now", lambda zone: dt.datetime(2026, 1, 1, 0, 0, 0, 999000))
    a = W.insert(root, rows(("k1", 1, "a", "p1")))
    b = W.upsert(root, rows(("k2", 1, "b", "p1")))
    c = W.upsert(root, rows(("k3", 1, "c", "p1")))
    tl = timeline(root)
    done = [tl.instant(x).completion_time for x in (a, b, c)]
    assert a < done[0] < b < done[1] < c < done[2]


@pytest.mark.parametrize("table,match", [
    (pa.table({"ts": [1], "name": ["a"], "part": ["p"]}), "lack record key column"),
    (pa.table({"id": ["k"], "ts": [1], "part": ["p"]}), r"lack column\(s\) \['name'\]"),
    (pa.table({"id": ["k"], "ts": [1], "name": ["a"], "part": ["p"], "x": [1]}), "does not have"),
    (pa.table({"id": [None], "ts": [1], "name": ["a"], "part": ["p"]}, schema=SCHEMA), "null or empty"),
    (pa.table({"id": ["k"], "ts": ["x"], "name": ["a"], "part": ["p"]}), "does not convert"),
    ({"id": "k"}, "pyarrow.Table"),
])
def test_bad_rows_are_clear_errors(tmp_path, table, match):
    root = make(tmp_path)
    with pytest.raises(InvalidTable, match=match):
        W.upsert(root, table)
    assert not timeline(root).files  # nothing left behind
    with pytest.raises(InvalidTable, match="delete keys lack"):
        W.delete(root, pa.table({"name": ["a"]}))


@pytest.mark.parametrize("call,match", [
    (lambda r: W.update_where(r, ["name"], "true"), "set must map"),
    (lambda r: W.delete_where(r, 5), "where must be"),
    (lambda r: W.change_column_type(r, "ts", "double"), "pyarrow.DataType"),
    (lambda r: W.change_column_type(r, "nope", pa.int64()), "no column"),
    (lambda r: W.add_column(r, "x"), "pyarrow.Field"),
    (lambda r: W.add_column(r, pa.field("x", pa.duration("s"))), "no Avro type"),
    (lambda r: W.upsert(str(r) + "-missing", rows(("k", 1, "a", "p"))), "not a Hudi table"),
])
def test_bad_arguments_are_clear_errors(tmp_path, call, match):
    root = make(tmp_path)
    W.insert(root, rows(("k1", 1, "a", "p1")))
    with pytest.raises((InvalidTable, Unsupported), match=match):
        call(root)


def test_a_lone_field_name_is_one_field(tmp_path):
    root = str(tmp_path / "t")
    W.create_table(root, SCHEMA, record_key="id", partition_fields="part", ordering_fields="ts")
    cfg = P.read_table_config(LocalStorage(root))
    assert (cfg.record_key_fields, cfg.partition_fields, cfg.ordering_fields) == (("id",), ("part",), ("ts",))


@pytest.mark.parametrize("version,table_type", [(6, "MERGE_ON_READ"), (8, "COPY_ON_WRITE"), (9, "MERGE_ON_READ")])
def test_written_tables_pass_the_validator(tmp_path, version, table_type):
    validate = pytest.importorskip("reference_impl.hudi.validate")
    root = make(tmp_path, version, table_type)
    W.insert(root, rows(("k1", 1, "a", "p1"), ("k2", 1, "b", "p2")))
    W.upsert(root, rows(("k1", 2, "a2", "p1")))
    W.delete(root, pa.table({"id": ["k2"], "part": ["p2"]}))
    W.failed_write(root, rows(("k1", 9, "x", "p1")), rollback=True)
    if table_type == "MERGE_ON_READ":
        W.compact(root)
    W.insert(root, rows(("k3", 1, "c", "p1")))
    W.cluster(root)
    W.add_column(root, pa.field("extra", pa.int32()))
    W.failed_write(root, pa.table({"id": ["k4"], "ts": [1], "name": ["d"], "part": ["p1"], "extra": [1]}))
    assert [str(v) for v in validate.validate_table(root)] == []
