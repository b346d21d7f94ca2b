"""Small Hudi tables built from bytes for the reader tests: hoodie.properties, timeline files, Parquet base files with
meta columns (pyarrow), log files (``reference_impl.hudi.logfile``'s writer), commit / rollback / compaction metadata."""

from __future__ import annotations

import io
import json
import os
from typing import Any, Iterable, Mapping, Sequence

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from reference_impl.hudi import logfile as LF
from reference_impl.hudi import naming as N
from reference_impl.hudi.properties import write_properties
from reference_impl.storage import LocalStorage

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")
DATA_FIELDS = [{"name": "id", "type": ["null", "string"], "default": None},
               {"name": "ts", "type": ["null", "long"], "default": None},
               {"name": "name", "type": ["null", "string"], "default": None},
               {"name": "part", "type": ["null", "string"], "default": None}]
TABLE_SCHEMA = json.dumps({"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": DATA_FIELDS})
LOG_SCHEMA = json.dumps({"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields":
                         [{"name": m, "type": ["null", "string"], "default": None} for m in META] + DATA_FIELDS})
ARROW = pa.schema([pa.field(m, pa.string()) for m in META] + [pa.field("id", pa.string()), pa.field("ts", pa.int64()),
                                                                  pa.field("name", pa.string()),
                                                                  pa.field("part", pa.string())])
TOKEN = "0-1-1"
P1 = "part=p1"


def fid(n: int) -> str:
    return f"0000000{n}-aaaa-bbbb-cccc-dddddddddddd-0"


class Table:
    """A table under construction in a temporary directory."""

    def __init__(self, root: str, *, version: int = 8, table_type: str = "MERGE_ON_READ", ordering: str | None = "ts",
                 merge_mode: str | None = None, payload: str | None = None, extra: Mapping[str, str] | None = None):
        self.root, self.version = str(root), version
        self.storage = LocalStorage(self.root)
        props = {"hoodie.table.name": "t", "hoodie.table.type": table_type, "hoodie.table.version": str(version),
                 "hoodie.timeline.layout.version": "2" if version >= 8 else "1",
                 "hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "part",
                 "hoodie.datasource.write.hive_style_partitioning": "true"}
        if ordering:
            props["hoodie.table.ordering.fields" if version >= 9 else "hoodie.table.precombine.field"] = ordering
        if merge_mode:
            props["hoodie.record.merge.mode"] = merge_mode
        if payload:
            props["hoodie.compaction.payload.class"] = payload
        props.update(extra or {})
        self.timeline_dir = os.path.join(self.root, ".hoodie", "timeline" if version >= 8 else "")
        os.makedirs(self.timeline_dir, exist_ok=True)
        self.put(".hoodie/hoodie.properties", write_properties(props))
        self.partitions: set[str] = set()

    # -- files ---------------------------------------------------------------------------------

    def put(self, rel: str, data: bytes) -> str:
        if rel.startswith("/"):  # os.path.join would drop the root and write at the file system's top
            raise ValueError(f"a table-relative path, not {rel!r}")
        full = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(data)
        return rel

    def partition(self, part: str) -> None:
        if part not in self.partitions:
            self.partitions.add(part)
            self.put(f"{part}/.hoodie_partition_metadata" if part else ".hoodie_partition_metadata",
                     N.format_partition_metadata(N.PartitionMetadata(commit_time="20260101000000000",
                                                                     partition_depth=part.count("/") + 1)))

    @staticmethod
    def row(key: str, ts: int | None, name: str, commit: str, *, part: str = "p1", file_name: str = "",
            seq: int = 0) -> dict:
        return {"_hoodie_commit_time": commit, "_hoodie_commit_seqno": f"{commit}_0_{seq}", "_hoodie_record_key": key,
                "_hoodie_partition_path": f"part={part}", "_hoodie_file_name": file_name, "id": key, "ts": ts,
                "name": name, "part": part}

    def base(self, part: str, file_id: str, instant: str, rows: Sequence[Mapping[str, Any]]) -> str:
        """A Parquet base file with meta columns."""
        self.partition(part)
        name = N.format_base_file_name(file_id, TOKEN, instant)
        rows = [dict(r, _hoodie_file_name=name) for r in rows]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=ARROW), buf)
        return self.put(f"{part}/{name}" if part else name, buf.getvalue())  # "": a non-partitioned table

    def log(self, part: str, file_id: str, instant: str, blocks: Iterable[bytes], *, version: int = 1,
            token: str = TOKEN) -> str:
        """A log file of framed blocks."""
        self.partition(part)
        name = N.format_log_file_name(file_id, instant, version, token)
        return self.put(f"{part}/{name}" if part else name, b"".join(blocks))

    @staticmethod
    def data_block(instant: str, rows: Sequence[Mapping[str, Any]]) -> bytes:
        return LF.avro_data_block(rows, LOG_SCHEMA, instant_time=instant)

    @staticmethod
    def parquet_block(instant: str, rows: Sequence[Mapping[str, Any]]) -> bytes:
        content = LF.encode_parquet_content(pa.Table.from_pylist(list(rows), schema=ARROW))
        return LF.parquet_data_block(content, LOG_SCHEMA, instant_time=instant)

    @staticmethod
    def delete_block(instant: str, keys: Sequence[tuple[str, Any, str | None]], part: str = P1) -> bytes:
        recs = [LF.DeleteRecord(record_key=k, partition_path=part, ordering_value=v, ordering_type=t)
                for k, v, t in keys]
        return LF.delete_block(recs, instant_time=instant, schema_json=LOG_SCHEMA)

    # -- timeline ------------------------------------------------------------------------------

    def _name(self, instant: str, action: str, state: str, completion: str | None) -> str:
        if state == "requested":
            return f"{instant}.{action}.requested"
        if state == "inflight":
            return f"{instant}.inflight" if action == "commit" else f"{instant}.{action}.inflight"
        return f"{instant}_{completion}.{action}" if self.version >= 8 else f"{instant}.{action}"

    def _tl(self, name: str, data: bytes = b"") -> None:
        with open(os.path.join(self.timeline_dir, name), "wb") as fh:
            fh.write(data)

    def pending(self, instant: str, action: str = "deltacommit", *, inflight: bool = True,
                plan: bytes = b"") -> None:
        """A requested (and inflight) instant."""
        self._tl(self._name(instant, action, "requested", None), plan)
        if inflight:
            self._tl(self._name(instant, action, "inflight", None))

    def commit(self, instant: str, completion: str | None = None, *, action: str | None = None,
               files: Sequence[tuple[str, str, str]] = (), replaced: Mapping[str, Sequence[str]] | None = None,
               schema: str | None = TABLE_SCHEMA, requested_as: str | None = None) -> None:
        """A completed write with JSON commit metadata; ``files`` = (partition, fileId, path) write stats."""
        action = action or ("deltacommit" if "MERGE_ON_READ" in self._props() else "commit")
        stats: dict[str, list] = {}
        for part, f, path in files:
            stats.setdefault(part, []).append({"fileId": f, "path": path, "prevCommit": "null", "numWrites": 1,
                                               "partitionPath": part})
        meta: dict[str, Any] = {"partitionToWriteStats": stats, "compacted": False,
                                "extraMetadata": {"schema": schema} if schema else {}, "operationType": "UPSERT"}
        if replaced is not None:
            meta["partitionToReplaceFileIds"] = {k: list(v) for k, v in replaced.items()}
        self._tl(self._name(instant, requested_as or action, "requested", None))
        self._tl(self._name(instant, requested_as or action, "inflight", None))
        self._tl(self._name(instant, action, "completed", completion or instant), json.dumps(meta).encode())

    def _props(self) -> str:
        with open(os.path.join(self.root, ".hoodie", "hoodie.properties")) as fh:
            return fh.read()

    def rollback(self, instant: str, completion: str | None, target: str, target_action: str = "deltacommit") -> None:
        """A completed rollback of ``target`` (Avro HoodieRollbackMetadata, the fields a reader uses)."""
        schema = {"type": "record", "name": "HoodieRollbackMetadata", "fields": [
            {"name": "startRollbackTime", "type": "string"},
            {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
            {"name": "totalFilesDeleted", "type": "int"},
            {"name": "partitionMetadata", "type": {"type": "map", "values": {
                "type": "record", "name": "P", "fields": [{"name": "partitionPath", "type": "string"}]}}},
            {"name": "instantsRollback", "type": {"type": "array", "items": {
                "type": "record", "name": "I", "fields": [{"name": "commitTime", "type": "string"},
                                                          {"name": "action", "type": "string"}]}}}]}
        rec = {"startRollbackTime": instant, "commitsRollback": [target], "totalFilesDeleted": 0,
               "partitionMetadata": {}, "instantsRollback": [{"commitTime": target, "action": target_action}]}
        self._tl(self._name(instant, "rollback", "requested", None))
        self._tl(self._name(instant, "rollback", "inflight", None))
        self._tl(self._name(instant, "rollback", "completed", completion or instant), avro_file(schema, rec))

    def compaction_plan(self, instant: str, groups: Sequence[tuple[str, str]], *, complete: str | None = None,
                        files: Sequence[tuple[str, str, str]] = ()) -> None:
        """A compaction of ``groups`` ((partition, fileId)): pending, or completed as ``commit`` at ``complete``
        with ``files`` ((partition, fileId, path) of the base files it wrote) as its write stats."""
        schema = {"type": "record", "name": "HoodieCompactionPlan", "fields": [
            {"name": "operations", "type": {"type": "array", "items": {
                "type": "record", "name": "Op", "fields": [{"name": "fileId", "type": "string"},
                                                           {"name": "partitionPath", "type": "string"}]}}}]}
        self._tl(f"{instant}.compaction.requested",
                 avro_file(schema, {"operations": [{"fileId": f, "partitionPath": p} for p, f in groups]}))
        self._tl(f"{instant}.compaction.inflight")
        if complete is not None:
            stats: dict[str, list] = {}
            for part, f, path in files:
                stats.setdefault(part, []).append({"fileId": f, "path": path, "prevCommit": "null", "numWrites": 1,
                                                   "partitionPath": part})
            meta = {"partitionToWriteStats": stats, "compacted": True, "extraMetadata": {"schema": TABLE_SCHEMA},
                    "operationType": "COMPACT"}
            self._tl(self._name(instant, "commit", "completed", complete), json.dumps(meta).encode())

    def clean(self, instant: str, completion: str | None, earliest_to_retain: str) -> None:
        schema = {"type": "record", "name": "HoodieCleanMetadata", "fields": [
            {"name": "startCleanTime", "type": "string"}, {"name": "timeTakenInMillis", "type": "long"},
            {"name": "totalFilesDeleted", "type": "int"}, {"name": "earliestCommitToRetain", "type": "string"},
            {"name": "partitionMetadata", "type": {"type": "map", "values": "string"}}]}
        rec = {"startCleanTime": instant, "timeTakenInMillis": 1, "totalFilesDeleted": 0,
               "earliestCommitToRetain": earliest_to_retain, "partitionMetadata": {}}
        self._tl(self._name(instant, "clean", "requested", None))
        self._tl(self._name(instant, "clean", "inflight", None))
        self._tl(self._name(instant, "clean", "completed", completion or instant), avro_file(schema, rec))


def avro_file(schema: Mapping[str, Any], record: Mapping[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(dict(schema)), [dict(record)])
    return buf.getvalue()


def t(n: int) -> str:
    """Instant time number ``n`` (17 digits)."""
    return f"202601010000{n:05d}"


# ----------------------------------------------------------------------------------------------
# Appended for the validator tests (conformance/suites/unit/hudi/test_validate*.py): commits whose metadata
# is complete (every HoodieWriteStat counter, Avro from table version 8), and whole small tables that break
# no rule, for mutations to break one at a time.

WRITE_STAT_AVRO = {"type": "record", "name": "HoodieWriteStat", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": n, "type": ["null", t], "default": None} for n, t in (
        ("fileId", "string"), ("path", "string"), ("prevCommit", "string"), ("numWrites", "long"),
        ("numDeletes", "long"), ("numUpdateWrites", "long"), ("numInserts", "long"), ("totalWriteBytes", "long"),
        ("totalWriteErrors", "long"), ("partitionPath", "string"), ("fileSizeInBytes", "long"))]}


def commit_metadata_schema(record: str = "HoodieCommitMetadata") -> dict:
    """A HoodieCommitMetadata-shaped Avro schema (the fields readers use), named ``record``."""
    return {"type": "record", "name": record, "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "partitionToWriteStats", "type": ["null", {"type": "map", "values": {
            "type": "array", "items": WRITE_STAT_AVRO}}], "default": None},
        {"name": "partitionToReplaceFileIds", "type": ["null", {"type": "map", "values": {
            "type": "array", "items": "string"}}], "default": None},
        {"name": "compacted", "type": ["null", "boolean"], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], "default": None}]}


def write_stat(part: str, file_id: str, path: str, *, size: int | None = None, writes: int = 1) -> dict:
    """A write stat with every counter HoodieWriteStat carries."""
    return {"fileId": file_id, "path": path, "prevCommit": "null", "numWrites": writes, "numDeletes": 0,
            "numUpdateWrites": 0, "numInserts": writes, "totalWriteBytes": size or 0, "totalWriteErrors": 0,
            "partitionPath": part, "fileSizeInBytes": size}


def commit_metadata_bytes(meta: Mapping[str, Any], *, avro: bool, record: str = "HoodieCommitMetadata") -> bytes:
    """Commit metadata as table version 6 (JSON) or 8+ (Avro object container) writes it."""
    if not avro:
        return json.dumps(meta).encode()
    return avro_file(commit_metadata_schema(record), dict(meta, version=1))


def full_commit(table: Table, instant: str, completion: str | None, *, action: str,
                stats: Sequence[Mapping[str, Any]] = (), replaced: Mapping[str, Sequence[str]] | None = None,
                operation: str = "UPSERT", requested_as: str | None = None, compacted: bool = False) -> None:
    """A completed write with complete metadata in the table version's encoding (requested, inflight, completed)."""
    by_part: dict[str, list] = {}
    for s in stats:
        by_part.setdefault(s["partitionPath"], []).append(dict(s))
    meta: dict[str, Any] = {"partitionToWriteStats": by_part, "compacted": compacted,
                            "extraMetadata": {"schema": TABLE_SCHEMA}, "operationType": operation}
    record = "HoodieCommitMetadata"
    if replaced is not None:
        meta["partitionToReplaceFileIds"] = {k: list(v) for k, v in replaced.items()}
        record = "HoodieReplaceCommitMetadata"
    avro = table.version >= 8
    req = requested_as or action
    if req not in ("compaction", "logcompaction"):
        table._tl(table._name(instant, req, "requested", None))
    table._tl(table._name(instant, req, "inflight", None))
    table._tl(table._name(instant, action, "completed", completion or instant),
              commit_metadata_bytes(meta, avro=avro, record=record))


def valid_table(root: str, *, version: int = 8, table_type: str = "MERGE_ON_READ") -> Table:
    """A small table that breaks no rule: two partitions, a base file per partition, a second write (a new
    base file version on copy-on-write; a log file with an Avro data block, then a delete block on
    merge-on-read), with complete commit metadata and a persisted timeline timezone."""
    tb = Table(root, version=version, table_type=table_type, extra={"hoodie.table.timeline.timezone": "UTC"})
    mor = table_type == "MERGE_ON_READ"
    write = "deltacommit" if mor else "commit"
    done = (lambda n: t(n + 1)) if version >= 8 else (lambda n: None)

    def size(rel: str) -> int:
        return os.path.getsize(os.path.join(tb.root, rel))

    b1 = tb.base("part=p1", fid(1), t(1), [Table.row("k1", 1, "a", t(1), seq=0), Table.row("k2", 1, "b", t(1), seq=1)])
    b2 = tb.base("part=p2", fid(2), t(1), [Table.row("k3", 1, "c", t(1), part="p2", seq=2)])
    full_commit(tb, t(1), done(1), action=write, operation="INSERT",
                stats=[write_stat("part=p1", fid(1), b1, size=size(b1), writes=2),
                       write_stat("part=p2", fid(2), b2, size=size(b2))])
    if not mor:
        b3 = tb.base("part=p1", fid(1), t(3), [Table.row("k1", 2, "a2", t(3), seq=0), Table.row("k2", 1, "b", t(1), seq=1)])
        full_commit(tb, t(3), done(3), action="commit", stats=[write_stat("part=p1", fid(1), b3, size=size(b3), writes=2)])
        return tb
    name = os.path.basename(b1)
    upd = [Table.row("k1", 2, "a2", t(3), seq=0, file_name=name)]
    log1 = tb.log("part=p1", fid(1), t(3) if version >= 8 else t(1), [Table.data_block(t(3), upd)])
    full_commit(tb, t(3), done(3), action="deltacommit", stats=[write_stat("part=p1", fid(1), log1, size=size(log1))])
    dele = [Table.delete_block(t(5), [("k2", 0, "int")])]
    log2 = tb.log("part=p1", fid(1), t(5), dele) if version >= 8 else tb.log("part=p1", fid(1), t(1), dele, version=2)
    full_commit(tb, t(5), done(5), action="deltacommit", operation="DELETE",
                stats=[write_stat("part=p1", fid(1), log2, size=size(log2))])
    return tb


# ----------------------------------------------------------------------------------------------
# Appended for the metadata-table tests (conformance/suites/unit/hudi/test_metadata_table.py): a metadata table
# (``.hoodie/metadata``) built from bytes: its hoodie.properties and timeline, HFile base files and log files whose
# HFile data blocks carry HoodieMetadataRecords of the ``files`` partition.

MDT_FILE_INFO = {"type": "record", "name": "HoodieMetadataFileInfo", "fields": [
    {"name": "size", "type": "long", "doc": "Size of the file"},
    {"name": "isDeleted", "type": "boolean", "doc": "True if this file has been deleted"}]}
MDT_SCHEMA = json.dumps({
    "type": "record", "name": "HoodieMetadataRecord", "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "key", "type": {"type": "string", "avro.java.string": "String"}},
        {"name": "type", "type": "int"},
        {"name": "filesystemMetadata", "type": ["null", {"type": "map", "values": MDT_FILE_INFO,
                                                          "avro.java.string": "String"}], "default": None}]})
MDT_FILE_ID = "files-0000-0"


def mdt_init_instant(version: int) -> str:
    """The metadata table's initialization instant of the files partition, as Hudi 1.2 writes it."""
    return "00000000000000000" if version >= 8 else "00000000000000010"


def mdt_record(key: str, files: Mapping[str, int | None], *, blank_key: bool = True) -> dict:
    """A files-partition record: ``files`` name -> size, None for a tombstone (isDeleted)."""
    kind = 1 if key == "__all_partitions__" else 2
    fsm = {name: {"size": 0 if size is None else size, "isDeleted": size is None} for name, size in files.items()}
    # in HFiles the key lives in the cell key and the Avro field is blank (meta fields off), as Hudi writes it
    return {"key": "" if blank_key else key, "type": kind, "filesystemMetadata": fsm}


def mdt_hfile(records: Mapping[str, Mapping[str, int | None]], *, compression: str = "gzip",
              schema: str = MDT_SCHEMA) -> bytes:
    """An HFile of files-partition records (key -> files), keys sorted, the schema in the file info."""
    from reference_impl.hudi.hfile import write_hfile

    parsed = fastavro.parse_schema(json.loads(schema))
    cells = []
    for key in sorted(records):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, mdt_record(key, records[key]))
        cells.append((key.encode(), buf.getvalue()))
    return write_hfile(cells, compression=compression, file_info={"schema": schema.encode()})


def mdt_hfile_block(instant: str, records: Mapping[str, Mapping[str, int | None]]) -> bytes:
    """A log block of type HFile data carrying ``records``."""
    return LF.encode_block(LF.BlockType.HFILE_DATA, {LF.HeaderKey.INSTANT_TIME: instant,
                                                     LF.HeaderKey.SCHEMA: MDT_SCHEMA}, mdt_hfile(records))


def mdt_avro_block(instant: str, records: Mapping[str, Mapping[str, int | None]]) -> bytes:
    """A log block of type Avro data carrying ``records`` (the key in the record, as Avro blocks keep it)."""
    return LF.avro_data_block([mdt_record(k, v, blank_key=False) for k, v in sorted(records.items())], MDT_SCHEMA,
                              instant_time=instant)


def mdt_delete_block(instant: str, keys: Sequence[str]) -> bytes:
    """A delete block removing whole records (e.g. a dropped partition)."""
    return LF.delete_block([LF.DeleteRecord(record_key=k, partition_path="files", ordering_value=0,
                                            ordering_type="int") for k in keys], instant_time=instant)


class MetadataTable(Table):
    """The metadata table of ``data`` (a Table): a MERGE_ON_READ table of HFile base files at .hoodie/metadata."""

    def __init__(self, data: Table):
        super().__init__(os.path.join(data.root, ".hoodie", "metadata"), version=data.version,
                         table_type="MERGE_ON_READ", ordering=None,
                         extra={"hoodie.table.recordkey.fields": "key", "hoodie.table.partition.fields": "",
                                "hoodie.table.base.file.format": "HFILE",
                                "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
                                "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
                                "hoodie.populate.meta.fields": "false",
                                "hoodie.datasource.write.hive_style_partitioning": "false"})
        self.partition("files")

    def base_hfile(self, instant: str, records: Mapping[str, Mapping[str, int | None]], *,
                   compression: str = "gzip") -> str:
        name = N.format_base_file_name(MDT_FILE_ID, TOKEN, instant, "hfile")
        return self.put(f"files/{name}", mdt_hfile(records, compression=compression))

    def files_log(self, instant: str, blocks: Iterable[bytes], *, version: int = 1, token: str = TOKEN) -> str:
        return self.log("files", MDT_FILE_ID, instant, blocks, version=version, token=token)

    def delta(self, instant: str, completion: str | None = None) -> None:
        """A completed delta commit of the metadata table."""
        self.commit(instant, completion, action="deltacommit", schema=None)


def data_size(table: Table, rel: str) -> int:
    return os.path.getsize(os.path.join(table.root, rel))
