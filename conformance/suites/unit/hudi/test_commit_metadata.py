"""Commit metadata (reference_impl.hudi.commit_metadata): JSON (v6) and Avro (v8+) metadata of completed instants.

JSON files are written here in the shape Hudi 1.2.0 wrote for a version-6 table; Avro files are
written with fastavro under schemas that carry the field names of Hudi's own records
(HoodieCommitMetadata, HoodieWriteStat, HoodieReplaceCommitMetadata, HoodieCleanMetadata,
HoodieRollbackMetadata), unions and nullable fields as the real ones spell them.
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from conformance.suites.unit._errors import raises
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import commit_metadata as M
from reference_impl.hudi import timeline as T
from reference_impl.storage import LocalStorage

SCHEMA = '{"type":"record","name":"t_record","namespace":"hoodie.t","fields":[{"name":"id","type":["null","int"]}]}'
FILE = "21e2eb50-d715-4913-a290-4a5b0d3220c1-0"
BASE = f"p=y 2/{FILE}_0-169-149_20261126110729843.parquet"

STR = ["null", "string"]
LONG = ["null", "long"]
WRITE_STAT = {"type": "record", "name": "HoodieWriteStat", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "fileId", "type": STR, "default": None},
    {"name": "path", "type": STR, "default": None},
    {"name": "prevCommit", "type": STR, "default": None},
    {"name": "numWrites", "type": LONG, "default": None},
    {"name": "numDeletes", "type": LONG, "default": None},
    {"name": "numUpdateWrites", "type": LONG, "default": None},
    {"name": "totalWriteBytes", "type": LONG, "default": None},
    {"name": "totalWriteErrors", "type": LONG, "default": None},
    {"name": "partitionPath", "type": STR, "default": None},
    {"name": "numInserts", "type": LONG, "default": None},
    {"name": "fileSizeInBytes", "type": LONG, "default": None},
    {"name": "logVersion", "type": ["null", "int"], "default": None},
    {"name": "baseFile", "type": STR, "default": None},
    {"name": "logFiles", "type": ["null", {"type": "array", "items": "string"}], "default": None},
    {"name": "prevBaseFile", "type": STR, "default": None},
]}
COMMON = [
    {"name": "compacted", "type": ["null", "boolean"], "default": None},
    {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "operationType", "type": STR, "default": None},
]
COMMIT_SCHEMA = {"type": "record", "name": "HoodieCommitMetadata", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "partitionToWriteStats", "type": ["null", {"type": "map", "values": {"type": "array", "items": WRITE_STAT}}],
     "default": None}, *COMMON]}
REPLACE_SCHEMA = {"type": "record", "name": "HoodieReplaceCommitMetadata", "namespace": "org.apache.hudi.avro.model",
                  "fields": [*COMMIT_SCHEMA["fields"],
                             {"name": "partitionToReplaceFileIds",
                              "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}],
                              "default": None}]}
STRINGS = {"type": "array", "items": "string"}
CLEAN_SCHEMA = {"type": "record", "name": "HoodieCleanMetadata", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "startCleanTime", "type": "string"},
    {"name": "timeTakenInMillis", "type": "long"},
    {"name": "totalFilesDeleted", "type": "int"},
    {"name": "earliestCommitToRetain", "type": "string"},
    {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
    {"name": "partitionMetadata", "type": {"type": "map", "values": {
        "type": "record", "name": "HoodieCleanPartitionMetadata", "fields": [
            {"name": "partitionPath", "type": "string"}, {"name": "policy", "type": "string"},
            {"name": "deletePathPatterns", "type": STRINGS}, {"name": "successDeleteFiles", "type": STRINGS},
            {"name": "failedDeleteFiles", "type": STRINGS},
            {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None}]}}},
    {"name": "version", "type": ["int", "null"], "default": 1},
]}
ROLLBACK_SCHEMA = {"type": "record", "name": "HoodieRollbackMetadata", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "startRollbackTime", "type": "string"},
    {"name": "timeTakenInMillis", "type": "long"},
    {"name": "totalFilesDeleted", "type": "int"},
    {"name": "commitsRollback", "type": STRINGS},
    {"name": "partitionMetadata", "type": {"type": "map", "values": {
        "type": "record", "name": "HoodieRollbackPartitionMetadata", "fields": [
            {"name": "partitionPath", "type": "string"}, {"name": "successDeleteFiles", "type": STRINGS},
            {"name": "failedDeleteFiles", "type": STRINGS},
            {"name": "rollbackLogFiles", "type": ["null", {"type": "map", "values": "long"}], "default": None},
            {"name": "logFilesFromFailedCommit", "type": ["null", {"type": "map", "values": "long"}], "default": None}]}}},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "instantsRollback", "default": [], "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieInstantInfo",
        "fields": [{"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}]}}},
]}


def stat(**kw):
    out = {"fileId": FILE, "path": BASE, "prevCommit": "20261126110725862", "numWrites": 4, "numDeletes": 0,
           "numUpdateWrites": 0, "totalWriteBytes": 4413, "totalWriteErrors": 0, "partitionPath": "p=y 2",
           "numInserts": 1, "fileSizeInBytes": 4413, "logVersion": None, "baseFile": None, "logFiles": None,
           "prevBaseFile": f"{FILE}_0-136-118_20261126110725862.parquet"}
    out.update(kw)
    return out


def commit(stats=None, **kw):
    out = {"partitionToWriteStats": {"p=y 2": [stats or stat()]}, "compacted": False,
           "extraMetadata": {"schema": SCHEMA}, "version": None, "operationType": "UPSERT"}
    out.update(kw)
    return out


def avro(schema, *records, codec="null"):
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), list(records), codec=codec)
    return buf.getvalue()


def as_json(record):
    """The JSON text Jackson writes for a v6 commit (extra counters included, null fields kept)."""
    node = json.loads(json.dumps(record))
    for stats in (node.get("partitionToWriteStats") or {}).values():
        for s in stats:
            s.update({"totalLogRecords": 0, "totalLogBlocks": 0, "cdcStats": None, "tempPath": None,
                      "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 177, "totalCreateTime": 0}})
    return json.dumps(node, indent=2).encode()


# --- commit metadata ----------------------------------------------------------------------------

@pytest.mark.rule("HUDI-TIMELINE-018", "HUDI-COMMIT-001", "HUDI-COMMIT-002", "HUDI-COMMIT-003")
@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_commit_in_both_encodings(encoding):
    record = commit()
    data = as_json(record) if encoding == "json" else avro(COMMIT_SCHEMA, record)
    m = M.parse_commit_metadata(data)
    assert m.encoding == encoding and m.operation_type == "UPSERT" and not m.compacted and m.schema == SCHEMA
    (s,) = m.partition_to_write_stats["p=y 2"]
    assert (s.file_id, s.path, s.prev_commit, s.num_writes, s.num_inserts, s.total_write_bytes) == (
        FILE, BASE, "20261126110725862", 4, 1, 4413)
    assert s.prev_base_file.endswith("20261126110725862.parquet") and s.log_files == ()
    assert m.write_stats() == (s,) and m.replaced_file_ids() == frozenset()
    assert s.fields["numUpdateWrites"] == 0


@pytest.mark.rule("HUDI-TIMELINE-018")
def test_avro_with_deflate_codec():
    m = M.parse_commit_metadata(avro(COMMIT_SCHEMA, commit(), codec="deflate"))
    assert m.encoding == "avro" and len(m.write_stats()) == 1


@pytest.mark.rule("HUDI-COMMIT-002")
def test_new_file_group_and_log_files():
    s = stat(prevCommit="null", path=None, baseFile="b.parquet", logFiles=[".f_1.log.1_0-1-1", ".f_1.log.2_0-1-1"],
             logVersion=2)
    (got,) = M.parse_commit_metadata(avro(COMMIT_SCHEMA, commit(s))).write_stats()
    assert got.prev_commit is None and got.path is None and got.base_file == "b.parquet"
    assert got.log_files == (".f_1.log.1_0-1-1", ".f_1.log.2_0-1-1") and got.log_version == 2


@pytest.mark.rule("HUDI-COMMIT-005")
def test_non_partitioned_uses_empty_partition_path():
    m = M.parse_commit_metadata(as_json(commit(partitionToWriteStats={"": [stat(path=f"{FILE}_0-1-1_1.parquet",
                                                                                 partitionPath="")]})))
    assert list(m.partition_to_write_stats) == [""]


@pytest.mark.rule("HUDI-COMMIT-004")
@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_replace_commit_file_ids(encoding):
    record = commit(operationType="INSERT_OVERWRITE", partitionToReplaceFileIds={"p=x/1": ["a-0", "b-0"], "p=y 2": []})
    data = as_json(record) if encoding == "json" else avro(REPLACE_SCHEMA, record)
    m = M.parse_instant_metadata(data, "replacecommit")
    assert m.replaced_file_ids() == {("p=x/1", "a-0"), ("p=x/1", "b-0")}
    assert m.partition_to_replace_file_ids["p=y 2"] == ()


@pytest.mark.rule("HUDI-COMMIT-001")
def test_compaction_commit_and_empty_file():
    m = M.parse_commit_metadata(avro(COMMIT_SCHEMA, commit(compacted=True, operationType="COMPACT")))
    assert m.compacted and m.operation_type == "COMPACT"
    empty = M.parse_commit_metadata(b"")  # Java reads an empty commit file as empty metadata
    assert empty.write_stats() == () and empty.schema is None and empty.encoding == "empty"


@pytest.mark.rule("HUDI-COMMIT-001")
@pytest.mark.parametrize("node,fragment", [
    ([1, 2], "JSON object"),
    ({"partitionToWriteStats": []}, "partitionToWriteStats"),
    ({"partitionToWriteStats": {"p": {"fileId": "x"}}}, "partitionToWriteStats"),
    ({"compacted": "yes"}, "compacted"),
    ({"extraMetadata": {"schema": 1}}, "extraMetadata"),
    ({"partitionToReplaceFileIds": {"p": "a"}}, "partitionToReplaceFileIds"),
])
def test_bad_commit_shapes(node, fragment):
    raises(InvalidTable, "HUDI-COMMIT-001", fragment, M.parse_commit_metadata, json.dumps(node).encode())


@pytest.mark.rule("HUDI-COMMIT-002")
@pytest.mark.parametrize("bad,fragment", [
    ({"fileId": None}, "lacks 'fileId'"),
    ({"path": "../../etc/passwd"}, "not inside the table"),
    ({"path": "/abs/file.parquet"}, "not inside the table"),
    ({"numWrites": "4"}, "numWrites"),
    ({"numWrites": True}, "numWrites"),
    ({"logFiles": "x"}, "logFiles"),
])
def test_bad_write_stats(bad, fragment):
    raises(InvalidTable, "HUDI-COMMIT-002", fragment, M.parse_commit_metadata, as_json(commit(stat(**bad))))


@pytest.mark.rule("HUDI-TIMELINE-018")
def test_damaged_files():
    good = avro(COMMIT_SCHEMA, commit())
    raises(InvalidTable, "HUDI-TIMELINE-018", "neither Avro nor JSON", M.parse_commit_metadata, b"\x00\x01garbage")
    raises(InvalidTable, "HUDI-TIMELINE-018", "exactly one record", M.parse_commit_metadata,
           avro(COMMIT_SCHEMA, commit(), commit()))
    raises(InvalidTable, "HUDI-TIMELINE-018", "declares", M.parse_commit_metadata, good[:-30])
    # A block that claims a billion records in a few bytes is refused before decoding.
    sync = good[-16:]
    blocks = good.index(sync) + 16  # the header ends with the sync marker
    bomb = good[:blocks] + b"\x80\xa8\xd6\xb9\x07" + b"\x02" + b"\x00" + sync  # 10^9 records, 1 byte
    raises(InvalidTable, "HUDI-TIMELINE-018", "claims 1,000,000,000 records", M.parse_commit_metadata, bomb)


# --- clean and rollback -------------------------------------------------------------------------

CLEAN = {"startCleanTime": "20261126110731551", "timeTakenInMillis": 144, "totalFilesDeleted": 1,
         "earliestCommitToRetain": "20261126110729843", "lastCompletedCommitTimestamp": "20261126110729843",
         "partitionMetadata": {"p=x/1": {"partitionPath": "p=x/1", "policy": "KEEP_LATEST_COMMITS",
                                         "deletePathPatterns": ["a_0-55-47_20261126110714264.parquet"],
                                         "successDeleteFiles": ["a_0-55-47_20261126110714264.parquet"],
                                         "failedDeleteFiles": [], "isPartitionDeleted": False}},
         "version": 2}
ROLLBACK = {"startRollbackTime": "20261126110725284", "timeTakenInMillis": 185, "totalFilesDeleted": 1,
            "commitsRollback": ["20261126110723603"],
            "partitionMetadata": {"p=y 2": {"partitionPath": "p=y 2", "successDeleteFiles": ["f_1-0-1_20261126110723603.parquet"],
                                            "failedDeleteFiles": [], "rollbackLogFiles": {".f_1.log.1_0-1-1": 120},
                                            "logFilesFromFailedCommit": None}},
            "version": 1, "instantsRollback": [{"commitTime": "20261126110723603", "action": "commit"}]}


@pytest.mark.rule("HUDI-TIMELINE-017")
def test_clean_metadata():
    m = M.parse_instant_metadata(avro(CLEAN_SCHEMA, CLEAN), "clean")
    assert isinstance(m, M.CleanMetadata) and m.earliest_commit_to_retain == "20261126110729843"
    assert m.deleted_files() == (("p=x/1", "a_0-55-47_20261126110714264.parquet"),)
    assert m.partition_metadata["p=x/1"].policy == "KEEP_LATEST_COMMITS" and m.version == 2
    raises(InvalidTable, "HUDI-TIMELINE-017", "must be an Avro", M.parse_clean_metadata, json.dumps(CLEAN).encode())
    raises(InvalidTable, "HUDI-TIMELINE-017", "lacks 'startCleanTime'", M.parse_clean_metadata,
           avro({**CLEAN_SCHEMA, "fields": [{"name": "x", "type": "int"}]}, {"x": 1}))


@pytest.mark.rule("HUDI-TIMELINE-017", "HUDI-TIMELINE-020")
def test_rollback_metadata():
    m = M.parse_instant_metadata(avro(ROLLBACK_SCHEMA, ROLLBACK), "rollback")
    assert isinstance(m, M.RollbackMetadata) and m.rolled_back == ("20261126110723603",)
    assert m.instants_rollback == (("20261126110723603", "commit"),)
    p = m.partition_metadata["p=y 2"]
    assert p.success_delete_files == ("f_1-0-1_20261126110723603.parquet",) and p.rollback_log_files == {".f_1.log.1_0-1-1": 120}
    # Writers before instantsRollback existed list only commitsRollback.
    old = M.parse_rollback_metadata(avro(ROLLBACK_SCHEMA, {**ROLLBACK, "instantsRollback": [], "commitsRollback": ["1", "2"]}))
    assert old.rolled_back == ("1", "2")
    # instantsRollback, when present, is what names the instants (it also carries their actions).
    new = M.parse_rollback_metadata(avro(ROLLBACK_SCHEMA, {**ROLLBACK, "commitsRollback": []}))
    assert new.rolled_back == ("20261126110723603",)


@pytest.mark.rule("HUDI-TIMELINE-017")
def test_dispatch_by_action():
    other = M.parse_instant_metadata(avro({"type": "record", "name": "HoodieSavepointMetadata",
                                           "fields": [{"name": "savepointedBy", "type": "string"}]},
                                          {"savepointedBy": "me"}), "savepoint")
    assert isinstance(other, M.OtherMetadata) and other.record["savepointedBy"] == "me"
    assert isinstance(M.parse_instant_metadata(as_json(commit()), "deltacommit"), M.CommitMetadata)
    raises(Unsupported, "HUDI-TIMELINE-017", "no metadata parser", M.parse_instant_metadata, b"", "compaction")


# --- from a table -------------------------------------------------------------------------------

@pytest.mark.rule("HUDI-COMMIT-003", "HUDI-TIMELINE-015")
def test_latest_schema_follows_commit_order(tmp_path):
    st = LocalStorage(str(tmp_path))
    later = SCHEMA.replace('"int"', '"long"')
    d = ".hoodie/timeline"
    # Requested first, completed last: its schema is the latest.
    st.write_atomic(f"{d}/20260101000000000_20260101000009000.commit", avro(COMMIT_SCHEMA, commit(
        extraMetadata={"schema": later})))
    st.write_atomic(f"{d}/20260101000001000_20260101000002000.commit", avro(COMMIT_SCHEMA, commit()))
    st.write_atomic(f"{d}/20260101000003000_20260101000010000.deltacommit", avro(COMMIT_SCHEMA, commit(extraMetadata=None)))
    st.write_atomic(f"{d}/20260101000004000_20260101000011000.clean", avro(CLEAN_SCHEMA, CLEAN))
    tl = T.build_timeline([i.path.rsplit("/", 1)[-1] for i in st.list(d)], 2, directory=d)
    assert M.latest_schema(st, tl) == later
    assert isinstance(M.read_instant_metadata(st, tl, tl.instants[-1]), M.CleanMetadata)
    with pytest.raises(ValueError):
        M.read_instant_metadata(st, tl, T.Instant(requested_time="1" * 17, action="commit", state="REQUESTED"))


@pytest.mark.rule("HUDI-TIMELINE-023")
def test_archived_row_metadata():
    row = T.ArchivedInstant(requested_time="20260101000000000", completion_time="20260101000001000", action="commit",
                            metadata=avro(COMMIT_SCHEMA, commit()), plan=None, version=1)
    assert M.read_archived_metadata(row).operation_type == "UPSERT"
    assert M.read_archived_metadata(T.ArchivedInstant(requested_time="20260101000000000", completion_time=None,
                                                      action="clean", metadata=None, plan=None, version=1)) is None


# --- pending files ------------------------------------------------------------------------------

CLEANER_PLAN = {"type": "record", "name": "HoodieCleanerPlan", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "earliestInstantToRetain", "type": ["null", {"type": "record", "name": "HoodieActionInstant", "fields": [
        {"name": "timestamp", "type": "string"}, {"name": "action", "type": "string"}, {"name": "state", "type": "string"}]}],
     "default": None},
    {"name": "policy", "type": "string"},
    {"name": "filePathsToBeDeletedPerPartition", "default": None,
     "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}]},
    {"name": "version", "type": ["int", "null"], "default": 1},
]}


@pytest.mark.rule("HUDI-TIMELINE-016")
def test_pending_files():
    plan = M.parse_pending(avro(CLEANER_PLAN, {"earliestInstantToRetain": {"timestamp": "1" * 17, "action": "commit",
                                                                           "state": "COMPLETED"},
                                               "policy": "KEEP_LATEST_COMMITS",
                                               "filePathsToBeDeletedPerPartition": {"p": ["a.parquet"]}}),
                           "clean", "REQUESTED")
    assert plan.record["policy"] == "KEEP_LATEST_COMMITS" and plan.commit is None
    assert M.parse_pending(b"", "deltacommit", "REQUESTED").record is None  # what Hudi writes for every request
    assert M.parse_pending(b"", "clean", "INFLIGHT") == M.Plan(action="clean", state="INFLIGHT")
    # An inflight commit holds the commit metadata so far: JSON in v6, Avro in v8+.
    assert M.parse_pending(as_json(commit()), "commit", "INFLIGHT").commit.encoding == "json"
    assert M.parse_pending(avro(COMMIT_SCHEMA, commit()), "deltacommit", "INFLIGHT").commit.operation_type == "UPSERT"
    raises(InvalidTable, "HUDI-TIMELINE-016", "carries no plan", M.parse_pending, avro(COMMIT_SCHEMA, commit()),
           "commit", "REQUESTED")
    raises(InvalidTable, "HUDI-TIMELINE-016", "must be empty or an Avro", M.parse_pending, b"{}", "compaction",
           "REQUESTED")
    with pytest.raises(ValueError):
        M.parse_pending(b"", "commit", "COMPLETED")


@pytest.mark.rule("HUDI-TIMELINE-016")
def test_read_pending_from_a_table(tmp_path):
    st = LocalStorage(str(tmp_path))
    t = "20260101000000000"
    st.write_atomic(f".hoodie/{t}.commit.requested", b"")
    st.write_atomic(f".hoodie/{t}.inflight", as_json(commit()))
    tl = T.build_timeline([i.path.rsplit("/", 1)[-1] for i in st.list(".hoodie")], 1, directory=".hoodie")
    requested, inflight = tl.files
    assert M.read_pending(st, tl, requested).commit is None
    assert M.read_pending(st, tl, inflight).commit.write_stats()[0].file_id == FILE
    with pytest.raises(ValueError):
        M.read_pending(st, tl, T.Instant(requested_time=t, action="commit", state="COMPLETED", file_name=f"{t}.commit"))
