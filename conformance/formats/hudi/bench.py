"""File-slice planning and merge-read benchmark: the reference's file system view against hudi-rs on one big Hudi table.

``build_table`` writes a MERGE_ON_READ table directly from bytes (no Hudi writer), table version 8 (or 9),
timeline layout 2, hive-style partitions ``part=pNNN`` of a record-keyed schema ``id STRING, ts LONG,
name STRING, part STRING`` (commit-time ordering, no metadata table):

* ``partitions`` insert deltacommits, one per partition, each writing ``groups_per_partition`` file
  groups: a real Parquet base file per group (the five ``_hoodie_*`` meta columns, then the data
  columns; ``rows_per_base`` records);
* ``commits`` upsert deltacommits, each appending one log file to each of ``logs_per_commit`` file
  groups (round-robin over every group, so each group gets ``commits x logs_per_commit / groups`` logs).
  A log file holds one Avro data block (``INSTANT_TIME`` and ``SCHEMA`` headers) updating
  ``rows_per_log - 1`` of the group's records with a later ``ts`` and inserting one new record. As
  table version 8+ names them, a log file carries its delta commit's requested time
  (``.<fileId>_<requested>.log.1_<token>``), and joins the slice whose base instant is the greatest at
  or before that commit's completion time;
* every ``compaction_every`` deltacommits, a compaction (``<t>.compaction.requested`` Avro plan,
  ``.inflight``, then ``<t>_<c>.commit``) of the groups the last few deltacommits touched: a new base
  file per group holding the merged records, keyed by the compaction's instant. Those groups have two
  slices; the latest is the compacted base plus the logs written after it, the older slice's logs
  must not be planned. That is the planning rule this benchmark checks at scale.

Every completed instant is ``<requested>_<completed>.<action>`` in ``.hoodie/timeline/`` with Avro commit
metadata (``HoodieCommitMetadata``: every write stat with its path, sizes and counts, the writer schema in
``extraMetadata``), after its empty ``.requested`` and ``.inflight`` files. Instants never overlap (each
completes before the next is requested), so commit order is unambiguous. Both engines list the file system:
hudi-rs lists partitions (leaf directories) and files, the reference walks the table (all but ``.hoodie/``) and
reads no delta commit's metadata to plan (only rollbacks, replace commits and compaction plans); the metadata is
there for readers and validators that want it (and the latest holds the schema a read uses).

The default table: 10 partitions x 1,000 groups = 10,000 file groups, 1,000 upsert deltacommits of 20
log files each (20,000 log files), a compaction of 100 groups every 100 deltacommits: 1,020 completed
instants. It builds in about 20 s (writing 11,000 small Parquet files is most of it).

Each engine then plans, ``repeat`` times, each in a fresh subprocess, interleaved (``conformance.bench``):
the reference ``fileslices.build_view(storage).latest_slices()`` (hoodie.properties, the active timeline,
the listing, the slices of every group, the latest slice per group) against hudi-rs
``HudiTableBuilder.from_base_uri(path).build().get_file_slices()`` (table construction included: it
loads the properties and the timeline, as the reference does). The digests of the planned
(partition, file id, base file name, sorted log file names) must agree, and match what the builder
expects; a mismatch is a finding and the run fails. ``--scale`` repeats that at several sizes (file
groups) and fits the growth exponent. ``--merge-read`` builds a smaller table with more records per
file and times full snapshot reads (reference ``table.read_table`` against hudi-rs ``HudiTable.read()``,
hudi-rs 0.5.0's snapshot read), comparing the sorted rows with each other and with what the builder wrote.

Run: ``lakeconf bench hudi [--partitions N --groups N --commits N --logs-per-commit N --repeat N]``;
``--partitions 2 --groups 20 --commits 10 --logs-per-commit 4`` is a smoke run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import shutil
import struct
import sys
import tempfile
import time
from typing import Any, Sequence

from reference_impl.hudi import avro_schema as AS
from conformance.bench import (
    aggregate, engine_line, interleaved, loadavg as _loadavg, maxrss_mb as _maxrss_mb, measure_in_child, profile_call, ratios,
    say as _say, scale_summary as shared_scale_summary, scaled, parse_sizes, timed, verdict_lines,
)

TARGET_RATIO = 1.0
MODULE = "conformance.formats.hudi.bench"
PEER = "hudi-rs"
INSTALL_HINT = "hudi-rs is not installed: pip install 'lakeconf[hudi]' (hudi==0.5.0)"
TOKEN = "0-1-0"  # write token: task partition id 0, stage 1, attempt 0
META = AS.META_COLUMNS
DATA_FIELDS = [{"name": "id", "type": ["null", "string"], "default": None},
               {"name": "ts", "type": ["null", "long"], "default": None},
               {"name": "name", "type": ["null", "string"], "default": None},
               {"name": "part", "type": ["null", "string"], "default": None}]
# The writer schema recorded in commit metadata (data fields) and in log block headers (meta fields first, as Java writes).
TABLE_SCHEMA = json.dumps({"type": "record", "name": "bench_record", "namespace": "hoodie.bench", "fields": DATA_FIELDS})
LOG_SCHEMA = json.dumps({"type": "record", "name": "bench_record", "namespace": "hoodie.bench", "fields":
                         [{"name": m, "type": ["null", "string"], "default": None} for m in META] + DATA_FIELDS})
COLUMNS = list(META) + ["id", "ts", "name", "part"]
_T0 = dt.datetime(2026, 1, 1)
_STEP_MS = 10_000  # instant k is requested at T0 + k * 10 s
_RUN_MS = 4_000  # and completes 4 s later, before the next one is requested

_STAT_FIELDS = (("fileId", "string"), ("path", "string"), ("prevCommit", "string"), ("numWrites", "long"),
                ("numDeletes", "long"), ("numUpdateWrites", "long"), ("numInserts", "long"), ("totalWriteBytes", "long"),
                ("totalWriteErrors", "long"), ("partitionPath", "string"), ("fileSizeInBytes", "long"),
                ("baseFile", "string"), ("logVersion", "int"))
WRITE_STAT_SCHEMA = {"type": "record", "name": "HoodieWriteStat", "namespace": "org.apache.hudi.avro.model", "fields": [
    *({"name": n, "type": ["null", t], "default": None} for n, t in _STAT_FIELDS),
    {"name": "logFiles", "type": ["null", {"type": "array", "items": "string"}], "default": None}]}
COMMIT_SCHEMA = {"type": "record", "name": "HoodieCommitMetadata", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "partitionToWriteStats", "type": ["null", {"type": "map", "values": {"type": "array", "items": WRITE_STAT_SCHEMA}}],
     "default": None},
    {"name": "compacted", "type": ["null", "boolean"], "default": None},
    {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "operationType", "type": ["null", "string"], "default": None}]}
COMPACTION_PLAN_SCHEMA = {"type": "record", "name": "HoodieCompactionPlan", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "operations", "type": ["null", {"type": "array", "items": {
        "type": "record", "name": "HoodieCompactionOperation", "fields": [
            {"name": "baseInstantTime", "type": ["null", "string"], "default": None},
            {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
            {"name": "dataFilePath", "type": ["null", "string"], "default": None},
            {"name": "fileId", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None}]}}], "default": None},
    {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1}]}


def instant_time(k: int, completed: bool = False) -> str:
    """The requested (or completion) time of the ``k``-th instant: ``yyyyMMddHHmmssSSS``, 17 digits."""
    from reference_impl.hudi.timeline import format_instant_time

    return format_instant_time(_T0 + dt.timedelta(milliseconds=k * _STEP_MS + (_RUN_MS if completed else 0)))


def file_id(g: int, salt: str) -> str:
    """A UUID-shaped file id with the ``-0`` suffix Java's writers add (``FSUtils.createNewFileIdPfx`` + index)."""
    return f"{g:08x}-{(g >> 32) & 0xFFFF:04x}-4{salt[:3]}-8{salt[3:6]}-{salt[6:18]}-0"


# --------------------------------------------------------------------------------------------
# Building the table
# --------------------------------------------------------------------------------------------


class _Builder:
    """The table being built: files, the timeline, and per file group what it holds (for compaction and checks).

    Records are kept per group as ``key -> (commit time, seqno, ts, name, file name)``, small enough at the sizes
    this benchmark builds; they make the compacted base files and the expected rows of a read.
    """

    def __init__(self, path: str, *, partitions: int, groups_per_partition: int, version: int, rows_per_base: int,
                 rows_per_log: int) -> None:
        import fastavro
        import pyarrow as pa

        from reference_impl.hudi import logfile as LF
        from reference_impl.hudi import naming as N
        from reference_impl.hudi.properties import write_properties

        self.pa, self.LF, self.N, self.fastavro = pa, LF, N, fastavro
        self.path, self.version = path, version
        self.rows_per_base, self.rows_per_log = rows_per_base, rows_per_log
        self.parts = [f"part=p{p:03d}" for p in range(partitions)]
        self.part_values = [f"p{p:03d}" for p in range(partitions)]
        salt = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()
        self.groups = [(p, file_id(p * groups_per_partition + i, salt)) for p in range(partitions)
                       for i in range(groups_per_partition)]
        self.base_of: list[str | None] = [None] * len(self.groups)  # latest base file name per group
        self.slice_logs: list[list[str]] = [[] for _ in self.groups]  # log file names of the latest slice
        self.records: list[dict[str, tuple]] = [{} for _ in self.groups]
        self.arrow_schema = pa.schema([pa.field(m, pa.string()) for m in META] + [
            pa.field("id", pa.string()), pa.field("ts", pa.int64()), pa.field("name", pa.string()), pa.field("part", pa.string())])
        self.log_schema = fastavro.parse_schema(json.loads(LOG_SCHEMA))
        self.commit_schema = fastavro.parse_schema(COMMIT_SCHEMA)
        self.plan_schema = fastavro.parse_schema(COMPACTION_PLAN_SCHEMA)
        self.block_header = LF.encode_metadata({LF.HeaderKey.INSTANT_TIME: "0" * 17, LF.HeaderKey.SCHEMA: LOG_SCHEMA})
        self.instants = 0
        self.k = 0  # instant counter (times)
        self.stats = {"base_files": 0, "log_files": 0, "bytes": 0, "compactions": 0, "compacted_groups": 0}
        self.timeline = os.path.join(path, ".hoodie", "timeline")
        os.makedirs(self.timeline, exist_ok=True)
        props = {"hoodie.table.name": "bench", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": str(version),
                 "hoodie.timeline.layout.version": "2", "hoodie.table.recordkey.fields": "id",
                 "hoodie.table.partition.fields": "part", "hoodie.datasource.write.hive_style_partitioning": "true",
                 "hoodie.table.base.file.format": "PARQUET", "hoodie.table.timeline.timezone": "UTC",
                 "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
                 ("hoodie.table.ordering.fields" if version >= 9 else "hoodie.table.precombine.field"): "ts"}
        self._put(".hoodie/hoodie.properties", write_properties(props))
        for part in self.parts:
            meta = N.format_partition_metadata(N.PartitionMetadata(commit_time=instant_time(0), partition_depth=1))
            self._put(f"{part}/{N.PARTITION_METAFILE}", meta)

    # -- files

    def _put(self, rel: str, data: bytes) -> int:
        full = os.path.join(self.path, rel)
        try:
            fh = open(full, "wb")
        except FileNotFoundError:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            fh = open(full, "wb")
        with fh:
            fh.write(data)
        self.stats["bytes"] += len(data)
        return len(data)

    def _tl(self, name: str, data: bytes = b"") -> None:
        with open(os.path.join(self.timeline, name), "wb") as fh:
            fh.write(data)

    def _avro_file(self, schema, record: dict) -> bytes:
        buf = io.BytesIO()
        self.fastavro.writer(buf, schema, [record])
        return buf.getvalue()

    def write_base(self, g: int, instant: str) -> tuple[str, int, int]:
        """The group's records as a Parquet base file of ``instant`` (name, size, rows)."""
        import pyarrow.parquet as pq

        p, fid = self.groups[g]
        name = self.N.format_base_file_name(fid, TOKEN, instant)
        recs = self.records[g]
        keys = sorted(recs)
        vals = [recs[k] for k in keys]
        n = len(keys)
        pa = self.pa
        cols = [pa.array([v[0] for v in vals], pa.string()), pa.array([v[1] for v in vals], pa.string()),
                pa.array(keys, pa.string()), pa.array([self.parts[p]] * n, pa.string()), pa.array([name] * n, pa.string()),
                pa.array(keys, pa.string()), pa.array([v[2] for v in vals], pa.int64()), pa.array([v[3] for v in vals], pa.string()),
                pa.array([self.part_values[p]] * n, pa.string())]
        buf = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_arrays(cols, schema=self.arrow_schema), buf)
        size = self._put(f"{self.parts[p]}/{name}", buf.getvalue().to_pybytes())
        self.records[g] = {k: v[:4] + (name,) for k, v in recs.items()}
        self.base_of[g] = name
        self.slice_logs[g] = []
        self.stats["base_files"] += 1
        return name, size, n

    def _data_block(self, instant: str, rows: list[dict]) -> bytes:
        """``logfile.avro_data_block(rows, LOG_SCHEMA, instant_time=instant)``, with the schema parsed once
        (checked byte-identical on the first block of a build)."""
        LF = self.LF
        parts = [struct.pack(">ii", LF.BLOCK_VERSION, len(rows))]
        for r in rows:
            buf = io.BytesIO()
            self.fastavro.schemaless_writer(buf, self.log_schema, r)
            raw = buf.getvalue()
            parts.append(struct.pack(">i", len(raw)))
            parts.append(raw)
        content = b"".join(parts)
        head = self.block_header.replace(b"0" * 17, instant.encode(), 1)
        body = struct.pack(">ii", LF.LOG_FORMAT_VERSION, int(LF.BlockType.AVRO_DATA)) + head + \
            struct.pack(">q", len(content)) + content + b"\x00\x00\x00\x00"
        return LF.MAGIC + struct.pack(">q", len(body) + 8) + body + struct.pack(">q", len(LF.MAGIC) + 8 + len(body))

    def write_log(self, g: int, instant: str, j: int) -> tuple[str, int, int, int]:
        """A log file of the delta commit ``instant`` (the ``j``-th upsert): updates of the group's records and
        one insert (name, size, updates, inserts)."""
        p, fid = self.groups[g]
        name = self.N.format_log_file_name(fid, instant, 1, TOKEN)
        recs = self.records[g]
        keys = sorted(recs)
        updates = [keys[(j * 7 + r) % len(keys)] for r in range(min(self.rows_per_log - 1, len(keys)))]
        updates = list(dict.fromkeys(updates))
        new_key = f"{fid[:8]}-n{j:06d}"
        rows = []
        for seq, key in enumerate(updates + [new_key]):
            row = {"_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_{p}_{seq}", "_hoodie_record_key": key,
                   "_hoodie_partition_path": self.parts[p], "_hoodie_file_name": name, "id": key, "ts": j + 1,
                   "name": f"u{j}", "part": self.part_values[p]}
            rows.append(row)
            recs[key] = (instant, row["_hoodie_commit_seqno"], j + 1, row["name"], name)
        data = self._data_block(instant, rows)
        if self.stats["log_files"] == 0 and data != self.LF.avro_data_block(rows, LOG_SCHEMA, instant_time=instant):
            raise AssertionError("the benchmark's Avro data block writer differs from logfile.avro_data_block")
        size = self._put(f"{self.parts[p]}/{name}", data)
        self.slice_logs[g].append(name)
        self.stats["log_files"] += 1
        return name, size, len(updates), 1

    # -- timeline

    def next_instant(self) -> tuple[str, str]:
        self.k += 1
        return instant_time(self.k), instant_time(self.k, completed=True)

    def complete(self, requested: str, completed: str, action: str, stats: list[dict], *, operation: str,
                 compacted: bool = False, requested_action: str | None = None) -> None:
        """Requested, inflight and completed files of a write with Avro ``HoodieCommitMetadata`` (v8+)."""
        by_part: dict[str, list[dict]] = {}
        for s in stats:
            by_part.setdefault(s["partitionPath"], []).append(s)
        meta = {"partitionToWriteStats": by_part, "compacted": compacted, "extraMetadata": {"schema": TABLE_SCHEMA},
                "version": 1, "operationType": operation}
        if requested_action is None:
            self._tl(f"{requested}.{action}.requested")
        self._tl(f"{requested}.{requested_action or action}.inflight")
        self._tl(f"{requested}_{completed}.{action}", self._avro_file(self.commit_schema, meta))
        self.instants += 1

    def stat(self, g: int, rel_name: str, size: int, *, prev: str, inserts: int, updates: int, base: str | None,
             logs: Sequence[str] = (), log_version: int | None = None) -> dict:
        p, fid = self.groups[g]
        return {"fileId": fid, "path": f"{self.parts[p]}/{rel_name}", "prevCommit": prev, "numWrites": inserts + updates,
                "numDeletes": 0, "numUpdateWrites": updates, "numInserts": inserts, "totalWriteBytes": size,
                "totalWriteErrors": 0, "partitionPath": self.parts[p], "fileSizeInBytes": size, "baseFile": base,
                "logVersion": log_version, "logFiles": list(logs)}

    def insert(self, p: int, groups: Sequence[int]) -> None:
        """An insert delta commit creating ``groups`` (base files only)."""
        req, done = self.next_instant()
        self._tl(f"{req}.deltacommit.requested")
        stats = []
        for g in groups:
            _p, fid = self.groups[g]
            self.records[g] = {f"{fid[:8]}-{i:05d}": (req, f"{req}_{p}_{i}", 0, "b", "") for i in range(self.rows_per_base)}
            name, size, n = self.write_base(g, req)
            stats.append(self.stat(g, name, size, prev="null", inserts=n, updates=0, base=name))
        self.complete(req, done, "deltacommit", stats, operation="INSERT", requested_action="deltacommit")

    def upsert(self, j: int, groups: Sequence[int]) -> None:
        """The ``j``-th upsert delta commit: a log file per group."""
        req, done = self.next_instant()
        self._tl(f"{req}.deltacommit.requested")
        stats = []
        for g in groups:
            name, size, ups, ins = self.write_log(g, req, j)
            base = self.base_of[g]
            stats.append(self.stat(g, name, size, prev=base.rsplit("_", 1)[-1].split(".")[0] if base else "null",
                                   inserts=ins, updates=ups, base=base, logs=[name], log_version=1))
        self.complete(req, done, "deltacommit", stats, operation="UPSERT", requested_action="deltacommit")

    def compact(self, groups: Sequence[int]) -> None:
        """A compaction of ``groups``: a plan, then a commit writing each group's merged records as a new base file."""
        req, done = self.next_instant()
        ops = []
        for g in groups:
            p, fid = self.groups[g]
            base = self.base_of[g]
            ops.append({"baseInstantTime": base.rsplit("_", 1)[-1].split(".")[0] if base else None,
                        "deltaFilePaths": [f"{self.parts[p]}/{n}" for n in self.slice_logs[g]],
                        "dataFilePath": f"{self.parts[p]}/{base}" if base else None, "fileId": fid,
                        "partitionPath": self.parts[p]})
        self._tl(f"{req}.compaction.requested", self._avro_file(self.plan_schema, {
            "operations": ops, "extraMetadata": None, "version": 2}))
        stats = []
        for g in groups:
            prev = self.base_of[g]
            name, size, n = self.write_base(g, req)
            stats.append(self.stat(g, name, size, prev=prev.rsplit("_", 1)[-1].split(".")[0] if prev else "null",
                                   inserts=0, updates=n, base=name))
        self.complete(req, done, "commit", stats, operation="COMPACT", compacted=True, requested_action="compaction")
        self.stats["compactions"] += 1
        self.stats["compacted_groups"] += len(groups)

    # -- expectations

    def expected_plan(self) -> list[tuple[str, str, str, tuple[str, ...]]]:
        return [(self.parts[p], fid, self.base_of[g] or "", tuple(sorted(self.slice_logs[g])))
                for g, (p, fid) in enumerate(self.groups)]

    def expected_rows(self) -> tuple[int, str]:
        rows = []
        for g, (p, _fid) in enumerate(self.groups):
            for key, (commit, seqno, ts, name, fname) in self.records[g].items():
                rows.append((commit, seqno, key, self.parts[p], fname, key, ts, name, self.part_values[p]))
        return _rows_digest_of(rows)


def build_table(path: str, *, partitions: int = 10, groups_per_partition: int = 1_000, commits: int = 1_000,
                logs_per_commit: int = 20, compaction_every: int = 100, compaction_groups: int = 100, rows_per_base: int = 2,
                rows_per_log: int = 2, version: int = 8, progress: bool = True) -> dict:
    """Write the benchmark table at ``path`` (module docstring); returns what was built, and the expected plan and rows."""
    if version not in (8, 9):
        raise ValueError("the benchmark builds table version 8 or 9 (timeline layout 2)")
    if partitions < 1 or groups_per_partition < 1 or rows_per_base < 1 or rows_per_log < 1:
        raise ValueError("partitions, groups, rows per base file and rows per log block must be positive")
    t0 = time.perf_counter()
    b = _Builder(path, partitions=partitions, groups_per_partition=groups_per_partition, version=version,
                 rows_per_base=rows_per_base, rows_per_log=rows_per_log)
    total = len(b.groups)
    for p in range(partitions):
        b.insert(p, range(p * groups_per_partition, (p + 1) * groups_per_partition))
        if progress and partitions >= 10 and (p + 1) % max(1, partitions // 5) == 0:
            _say(f"  inserted {p + 1}/{partitions} partitions ({(p + 1) * groups_per_partition:,} base files, "
                 f"{time.perf_counter() - t0:.1f}s)")
    per = min(logs_per_commit, total)
    cursor = 0
    touched: list[list[int]] = []
    for j in range(1, commits + 1):
        groups = [(cursor + i) % total for i in range(per)]
        cursor = (cursor + per) % total
        b.upsert(j, groups)
        touched.append(groups)
        if compaction_every and compaction_groups and j % compaction_every == 0:
            recent = list(dict.fromkeys(g for gs in reversed(touched) for g in gs))[:compaction_groups]
            b.compact(sorted(recent))
            touched = []
        if progress and commits >= 10 and j % max(1, commits // 10) == 0:
            _say(f"  built {j}/{commits} delta commits, {b.stats['log_files']:,} log files, {b.stats['compactions']} "
                 f"compactions ({time.perf_counter() - t0:.1f}s)")
    plan = b.expected_plan()
    rows, digest = b.expected_rows()
    return {"partitions": partitions, "groups_per_partition": groups_per_partition, "file_groups": total,
            "commits": commits, "logs_per_commit": per, "compaction_every": compaction_every,
            "compaction_groups": compaction_groups, "rows_per_base": rows_per_base, "rows_per_log": rows_per_log,
            "table_version": version, "completed_instants": b.instants, "base_files": b.stats["base_files"],
            "log_files": b.stats["log_files"], "compactions": b.stats["compactions"],
            "compacted_groups": b.stats["compacted_groups"], "bytes": b.stats["bytes"],
            "planned_logs": sum(len(x[3]) for x in plan), "plan_digest": _plan_digest(plan),
            "rows": rows, "rows_digest": digest, "build_seconds": round(time.perf_counter() - t0, 2)}


# --------------------------------------------------------------------------------------------
# Measuring (each call runs in its own subprocess)
# --------------------------------------------------------------------------------------------


def _plan_digest(plan: Sequence[tuple[str, str, str, Sequence[str]]]) -> str:
    h = hashlib.sha256()
    for part, fid, base, logs in sorted((p, f, b, tuple(sorted(lg))) for p, f, b, lg in plan):
        h.update(f"{part}\x00{fid}\x00{base}\x00{','.join(logs)}\n".encode())
    return h.hexdigest()[:16]


def _rows_digest_of(rows: list[tuple]) -> tuple[int, str]:
    h = hashlib.sha256()
    for row in sorted(rows, key=repr):
        h.update(repr(row).encode() + b"\n")
    return len(rows), h.hexdigest()[:16]


def _require_hudi_rs() -> None:
    import importlib

    try:
        importlib.import_module("hudi")
    except ImportError as exc:
        raise SystemExit(f"{INSTALL_HINT} ({exc})") from exc


def _plan_reference(path: str):
    from reference_impl.hudi import fileslices as FS
    from reference_impl.storage import LocalStorage

    return FS.build_view(LocalStorage(path)).latest_slices()


def _plan_hudi_rs(path: str):
    from hudi import HudiTableBuilder

    return HudiTableBuilder.from_base_uri(os.path.abspath(path)).build().get_file_slices()


def _as_plan(engine: str, out: Any) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(partition, file id, base file name, sorted log file names) per planned slice, whichever engine planned it."""
    if engine == "reference":
        return [(s.partition, s.file_id, s.base_file.path.rsplit("/", 1)[-1] if s.base_file is not None else "",
                 tuple(sorted(lg.path.rsplit("/", 1)[-1] for lg in s.log_files))) for s in out]
    return [(s.partition_path, s.file_id, s.base_file_name or "", tuple(sorted(s.log_file_names))) for s in out]


def _preload(*modules: str) -> None:
    """Import ``modules`` before the clock starts (imports are not what is measured)."""
    import importlib

    for m in modules:
        importlib.import_module(m)


# What planning imports (it imports nothing more while it runs); a read needs the read path too (pyarrow).
_PLAN_MODULES = ("reference_impl.hudi.fileslices", "reference_impl.storage", "fastavro")
_REFERENCE_MODULES = _PLAN_MODULES + ("reference_impl.hudi.table",)


def _measure(engine: str, path: str) -> dict:
    """One timed plan in this process (imports done first and not timed)."""
    if engine == "reference":
        _preload(*_PLAN_MODULES)
        fn = _plan_reference
    else:
        _require_hudi_rs()
        _preload("hudi", "pyarrow")
        fn = _plan_hudi_rs
    out, seconds, cpu, baseline = timed(lambda: fn(path))
    plan = _as_plan(engine, out)
    return {"engine": engine, "seconds": seconds, "cpu_seconds": cpu, "slices": len(plan),
            "distinct": len({(p, f) for p, f, _b, _l in plan}), "logs": sum(len(x[3]) for x in plan),
            "digest": _plan_digest(plan), "maxrss_mb": round(_maxrss_mb(), 1), "baseline_rss_mb": round(baseline, 1)}


def _read_reference(path: str):
    from reference_impl.hudi.table import read_table

    return read_table(path)


def _read_hudi_rs(path: str):
    import pyarrow as pa
    from hudi import HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(os.path.abspath(path)).build()
    # 0.5.0 reads a snapshot with read() (default options: snapshot at the latest commit); earlier releases
    # named it read_snapshot()
    read = getattr(table, "read_snapshot", None) or table.read
    return pa.Table.from_batches(read())


def _rows_digest(t) -> tuple[int, str]:
    t = t.select(COLUMNS)
    return _rows_digest_of(list(zip(*(t.column(c).to_pylist() for c in COLUMNS))))


def _preload_reference_read() -> None:
    _preload(*_REFERENCE_MODULES, "reference_impl.parquet_io")
    try:  # pyarrow's Table.to_pylist (read_slice) imports pandas on first use: 0.6 s of import, not of reading
        _preload("pandas")
    except ImportError:
        pass


def _measure_read(engine: str, path: str) -> dict:
    if engine == "reference":
        _preload_reference_read()
        fn = _read_reference
    else:
        _require_hudi_rs()
        _preload("hudi", "pyarrow")
        fn = _read_hudi_rs
    t, seconds, cpu, baseline = timed(lambda: fn(path))
    n, digest = _rows_digest(t)
    return {"engine": engine, "seconds": seconds, "cpu_seconds": cpu, "rows": n, "digest": digest,
            "maxrss_mb": round(_maxrss_mb(), 1), "baseline_rss_mb": round(baseline, 1)}


def _child(engine: str, path: str, *, profile: bool = False) -> dict:
    return measure_in_child(MODULE, engine, path, profile=profile)


def _profile_reference(path: str, read: bool = False) -> str:
    if read:  # before profiling starts
        _preload_reference_read()
    else:
        _preload(*_PLAN_MODULES)
    return profile_call(_read_reference if read else _plan_reference, path)


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


def _prepare(root: str, name: str, wanted: dict, reuse: bool, own: bool) -> tuple[str, dict]:
    path = os.path.join(root, name)
    stamp = os.path.join(root, f"bench_hudi_{name}.built.json")
    if reuse and os.path.exists(stamp) and os.path.isdir(path):
        with open(stamp, encoding="utf-8") as fh:
            old = json.load(fh)
        if old.get("wanted") == wanted and "built" in old:
            _say(f"reusing the table built earlier at {path}")
            return path, old["built"]
    if os.path.exists(stamp):
        os.remove(stamp)  # an interrupted build must not be reused
    if os.path.exists(path):
        shutil.rmtree(path)
    _say(f"building {wanted['partitions']} partitions x {wanted['groups_per_partition']:,} file groups, {wanted['commits']:,} "
         f"delta commits x {wanted['logs_per_commit']} log files at {path}")
    built = build_table(path, **wanted)
    if not own:
        with open(stamp, "w", encoding="utf-8") as fh:
            json.dump({"wanted": wanted, "built": built}, fh)
    return path, built


def _check_peer() -> str | None:
    """None when hudi-rs imports, else what to install (checked before building anything)."""
    import importlib

    try:
        importlib.import_module("hudi")
    except ImportError:
        return INSTALL_HINT
    return None


def run_hudi(partitions: int = 10, groups: int = 1_000, commits: int = 1_000, logs_per_commit: int = 20, repeat: int = 3,
             workdir: str | None = None, *, compaction_every: int = 100, compaction_groups: int = 100, version: int = 8,
             keep: bool = False, target: float = TARGET_RATIO, profile: bool = True, reuse: bool = False) -> dict:
    """Build the table, time both engines' file-slice planning ``repeat`` times each, return the figures."""
    own = workdir is None
    root = tempfile.mkdtemp(prefix="lakeconf-bench-hudi-") if own else workdir
    os.makedirs(root, exist_ok=True)
    wanted = {"partitions": partitions, "groups_per_partition": groups, "commits": commits, "logs_per_commit": logs_per_commit,
              "compaction_every": compaction_every, "compaction_groups": compaction_groups, "version": version}
    path, built = _prepare(root, "plan", wanted, reuse, own)
    load_before = _loadavg()
    _say(f"timing file-slice planning, load average {load_before}")
    runs = interleaved(("reference", PEER), repeat, lambda engine: _child(engine, path),
                       lambda r: f"{r['seconds']:.3f}s wall, {r['cpu_seconds']:.3f}s CPU, {r['slices']:,} slices, "
                                 f"{r['logs']:,} logs, peak {r['maxrss_mb']} MB")
    result: dict[str, Any] = {"table": path, "built": built, "repeat": repeat, "target_ratio": target, "findings": [],
                              "load_average": load_before, "cpus": os.cpu_count()}
    for engine, rs in runs.items():
        result[engine] = aggregate(rs, keep=("slices", "distinct", "logs", "digest"))
        if "error" in result[engine]:
            result["findings"].append(f"{engine} failed to plan the table: {result[engine]['error'][-500:]}")
    ref, peer = result.get("reference", {}), result.get(PEER, {})
    result.update(ratios(ref, peer))
    if "median_seconds" in ref and "median_seconds" in peer and (ref["slices"], ref["digest"]) != (peer["slices"], peer["digest"]):
        result["findings"].append(f"plans disagree: reference {ref['slices']:,} slices with {ref['logs']:,} logs (digest "
                                  f"{ref['digest']}), {PEER} {peer['slices']:,} slices with {peer['logs']:,} logs (digest "
                                  f"{peer['digest']})")
    for engine, r in ((e, result.get(e, {})) for e in ("reference", PEER)):
        if "digest" in r and (r["slices"], r["digest"]) != (built["file_groups"], built["plan_digest"]):
            result["findings"].append(f"{engine} plans {r['slices']:,} slices with {r['logs']:,} logs (digest {r['digest']}); the "
                                      f"builder expects {built['file_groups']:,} with {built['planned_logs']:,} logs (digest "
                                      f"{built['plan_digest']})")
    if profile and result.get("ratio") is not None and result["ratio"] > target:
        _say(f"reference is {result['ratio']}x {PEER} (target {target}x): profiling one reference plan")
        prof = _child("reference", path, profile=True)
        result["profile"] = prof.get("profile") or prof.get("error", "")
    if own and not keep:
        shutil.rmtree(root, ignore_errors=True)
        result["table"] += " (deleted)"
    return result


def summary(result: dict) -> str:
    """A printable summary of ``run_hudi``'s result."""
    b = result["built"]
    lines = [
        f"Hudi file-slice planning: reference fileslices.build_view().latest_slices() vs {PEER} get_file_slices()",
        f"  table: MERGE_ON_READ v{b['table_version']}, {b['partitions']} partitions x {b['groups_per_partition']:,} = "
        f"{b['file_groups']:,} file groups, {b['completed_instants']:,} completed instants ({b['commits']:,} upsert delta commits "
        f"x {b['logs_per_commit']} log files, {b['compactions']} compactions of {b['compacted_groups']:,} groups); "
        f"{b['base_files']:,} Parquet base files, {b['log_files']:,} log files (Avro data blocks), {b['bytes'] / 1e6:.1f} MB, "
        f"built in {b['build_seconds']}s",
        f"  expected plan: {b['file_groups']:,} slices with {b['planned_logs']:,} log files (digest {b['plan_digest']})",
        f"  each plan in a fresh subprocess, {result['repeat']} runs per engine, interleaved (first engine alternating); "
        f"{result.get('cpus')} CPUs, load average {result.get('load_average')} when timing began",
    ]
    for engine in ("reference", PEER):
        r = result.get(engine, {})
        if r:
            extra = "" if "error" in r else f", {r['slices']:,} slices, {r['logs']:,} logs, digest {r['digest']}"
            lines.append(engine_line(engine, r, extra))
    lines += verdict_lines(result, PEER, agree="both engines plan the same (partition, file id, base file, log files) slices, "
                                               "as the builder expects", work="plan")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Scaling: several sizes, the growth exponent
# --------------------------------------------------------------------------------------------


def run_scale(totals: Sequence[int], partitions: int = 10, commits: int = 1_000, logs_per_group: float = 2.0, repeat: int = 3,
              workdir: str | None = None, *, version: int = 8) -> dict:
    """``run_hudi`` at each file-group count (``partitions`` x total / partitions groups; log files per group kept
    at ``logs_per_group`` by scaling the log files per delta commit), then the fitted growth exponents of median wall
    time, CPU time and peak RSS above the post-import baseline, per engine."""

    def run_at(total: int) -> tuple[int, dict, dict]:
        groups = max(1, total // partitions)
        per = max(1, round(partitions * groups * logs_per_group / max(1, commits)))
        _say(f"  {partitions} partitions x {groups:,} groups, {commits:,} delta commits x {per} log files")
        wd = os.path.join(workdir, f"scale-{total}") if workdir else None
        r = run_hudi(partitions, groups, commits, per, repeat, wd, version=version, compaction_groups=max(1, groups // 10),
                     profile=False, reuse=wd is not None)
        return partitions * groups, r, {"log_files": r["built"]["log_files"]}

    return scaled(totals, run_at, ("reference", PEER), "file groups")


def scale_summary(out: dict) -> str:
    return shared_scale_summary(out, "Hudi file-slice planning", agree="both engines plan the same slices",
                                detail=lambda row: f" ({row['log_files']:,} logs)")


# --------------------------------------------------------------------------------------------
# Merge read: a smaller table with more records per file, read fully by both engines
# --------------------------------------------------------------------------------------------


def run_merge_read(partitions: int = 4, groups: int = 50, commits: int = 100, logs_per_commit: int = 10, rows_per_base: int = 200,
                   rows_per_log: int = 20, repeat: int = 3, workdir: str | None = None, *, version: int = 8,
                   compaction_every: int = 25, keep: bool = False, target: float = TARGET_RATIO, profile: bool = True) -> dict:
    """Build the merge table, time both engines' full snapshot reads ``repeat`` times each (fresh subprocesses), compare rows."""
    own = workdir is None
    root = tempfile.mkdtemp(prefix="lakeconf-bench-hudi-") if own else workdir
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, "merge_read")
    if os.path.exists(path):
        shutil.rmtree(path)
    _say(f"building a merge-read table: {partitions} partitions x {groups} groups of {rows_per_base} records, {commits} delta "
         f"commits x {logs_per_commit} log files of {rows_per_log} records at {path}")
    built = build_table(path, partitions=partitions, groups_per_partition=groups, commits=commits, logs_per_commit=logs_per_commit,
                        compaction_every=compaction_every, compaction_groups=max(1, partitions * groups // 10),
                        rows_per_base=rows_per_base, rows_per_log=rows_per_log, version=version)
    load_before = _loadavg()
    _say(f"timing snapshot reads, load average {load_before}")
    runs = interleaved(("reference", PEER), repeat, lambda engine: _child("read-" + engine, path),
                       lambda r: f"{r['seconds']:.3f}s wall, {r['cpu_seconds']:.3f}s CPU, {r['rows']:,} rows, peak {r['maxrss_mb']} MB")
    result: dict[str, Any] = {"table": path, "built": built, "repeat": repeat, "findings": [], "load_average": load_before,
                              "cpus": os.cpu_count(), "target_ratio": target}
    for engine, rs in runs.items():
        result[engine] = aggregate(rs, keep=("rows", "digest"))
        if "error" in result[engine]:
            result["findings"].append(f"{engine} failed to read the table: {result[engine]['error'][-500:]}")
    ref, peer = result.get("reference", {}), result.get(PEER, {})
    result.update(ratios(ref, peer))
    if "rows" in ref and "rows" in peer and (ref["rows"], ref["digest"]) != (peer["rows"], peer["digest"]):
        result["findings"].append(f"rows disagree: reference {ref['rows']:,} rows (digest {ref['digest']}), "
                                  f"{PEER} {peer['rows']:,} rows (digest {peer['digest']})")
    for engine, r in ((e, result.get(e, {})) for e in ("reference", PEER)):
        if "rows" in r and (r["rows"], r["digest"]) != (built["rows"], built["rows_digest"]):
            result["findings"].append(f"{engine} reads {r['rows']:,} rows (digest {r['digest']}); the builder wrote "
                                      f"{built['rows']:,} live records (digest {built['rows_digest']})")
    if profile and result.get("ratio") is not None and result["ratio"] > target:
        _say(f"reference is {result['ratio']}x {PEER} (target {target}x): profiling one reference read")
        prof = measure_in_child(MODULE, "read-reference", path, profile=True)
        result["profile"] = prof.get("profile") or prof.get("error", "")
    if own and not keep:
        shutil.rmtree(root, ignore_errors=True)
        result["table"] += " (deleted)"
    return result


def merge_summary(result: dict) -> str:
    b = result["built"]
    lines = [
        f"Hudi merge read: reference table.read_table vs {PEER} HudiTable.read() (snapshot), MERGE_ON_READ v{b['table_version']}",
        f"  table: {b['file_groups']:,} file groups of {b['rows_per_base']} records, {b['commits']} delta commits x "
        f"{b['logs_per_commit']} log files of {b['rows_per_log']} records (Avro data blocks), {b['compactions']} compactions; "
        f"{b['rows']:,} live records; built in {b['build_seconds']}s",
        f"  each read in a fresh subprocess, {result['repeat']} runs per engine, interleaved; {result.get('cpus')} CPUs, "
        f"load average {result.get('load_average')} when timing began",
    ]
    for engine in ("reference", PEER):
        r = result.get(engine, {})
        if r:
            lines.append(engine_line(engine, r, "" if "error" in r else f", {r['rows']:,} rows, digest {r['digest']}"))
    lines += verdict_lines(result, PEER, agree="both engines read the same rows, as the builder wrote them", work="read")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------



def _parse(argv: list[str]):
    import argparse

    p = argparse.ArgumentParser(prog="lakeconf bench hudi", description=f"Hudi file-slice planning and merge read: reference vs {PEER}.")
    p.add_argument("--partitions", type=int, default=10, help="partitions (default 10)")
    p.add_argument("--groups", type=int, default=1_000, help="file groups per partition (default 1000)")
    p.add_argument("--commits", type=int, default=1_000, help="upsert delta commits (default 1000)")
    p.add_argument("--logs-per-commit", type=int, default=20, help="log files each delta commit appends (default 20)")
    p.add_argument("--compaction-every", type=int, default=100, help="a compaction every N delta commits (default 100; 0: none)")
    p.add_argument("--compaction-groups", type=int, default=100, help="file groups per compaction (default 100)")
    p.add_argument("--table-version", type=int, default=8, choices=(8, 9), help="table version (default 8)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per engine (default 3)")
    p.add_argument("--workdir", default=None, help="where to build the table (kept); default: a temporary directory")
    p.add_argument("--reuse", action="store_true", help="with --workdir: reuse a table built there with the same sizes")
    p.add_argument("--target", type=float, default=TARGET_RATIO, help="profile the reference when slower than this ratio")
    p.add_argument("--no-profile", action="store_true", help="do not profile the reference when over the target")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--scale", default=None, metavar="N[,N...]",
                   help="instead: run at each file-group count (over --partitions) and fit the growth exponent")
    p.add_argument("--merge-read", action="store_true", help=f"instead: read a smaller table fully, reference vs {PEER}")
    p.add_argument("--merge-groups", type=int, default=50, help="with --merge-read: file groups per partition (default 50, "
                                                                "over 4 partitions)")
    p.add_argument("--merge-commits", type=int, default=100, help="with --merge-read: delta commits (default 100)")
    p.add_argument("--merge-rows", type=int, default=200, help="with --merge-read: records per base file (default 200)")
    return p.parse_args([a for a in argv if a != "--"])


def main(argv: list[str] | None = None) -> int:
    """``lakeconf bench hudi [options]``: exit 1 when the engines disagree (a finding), 2 when hudi-rs is missing, else 0."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_measure":  # internal: one timed plan (or read) in this (child) process
        engine, path = argv[1], argv[2]
        read = engine.startswith("read-")
        if "--profile" in argv:
            print(_profile_reference(path, read=read))
        print(json.dumps(_measure_read(engine[5:], path) if read else _measure(engine, path)))
        return 0
    args = _parse(argv)
    missing = _check_peer()
    if missing:
        print(f"lakeconf bench hudi: {missing}", file=sys.stderr)
        return 2
    if args.merge_read:
        mres = run_merge_read(groups=args.merge_groups, commits=args.merge_commits, rows_per_base=args.merge_rows, repeat=args.repeat,
                              workdir=args.workdir, version=args.table_version, target=args.target, profile=not args.no_profile)
        print(json.dumps(mres, indent=1) if args.json else merge_summary(mres))
        return 1 if mres["findings"] else 0
    if args.scale:
        logs_per_group = args.commits * args.logs_per_commit / max(1, args.partitions * args.groups)
        sres = run_scale(parse_sizes(args.scale), args.partitions, args.commits, logs_per_group, args.repeat, args.workdir,
                         version=args.table_version)
        print(json.dumps(sres, indent=1) if args.json else scale_summary(sres))
        return 1 if sres["findings"] else 0
    result = run_hudi(args.partitions, args.groups, args.commits, args.logs_per_commit, args.repeat, args.workdir,
                      compaction_every=args.compaction_every, compaction_groups=args.compaction_groups, version=args.table_version,
                      target=args.target, profile=not args.no_profile, reuse=args.reuse)
    print(json.dumps(result, indent=1) if args.json else summary(result))
    return 1 if result["findings"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
