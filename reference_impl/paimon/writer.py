"""Writing Paimon tables (spec: all sections; Java ``SchemaManager``, ``FileStoreCommitImpl``, ``KeyValueFileWriterFactory``,
``ManifestFile``, ``ManifestList``, ``IndexManifestFile``, ``HashIndexFile``, ``DeletionVectorsIndexFile``, ``TagManager``,
``BranchManager``, ``SnapshotDeletion``): a compact writer whose tables read like Paimon Java 1.x / pypaimon 2.1 tables.

Every commit writes its data, index and manifest files under fresh names first, then claims
``snapshot-<latest+1>`` with a put-if-absent: nothing becomes visible before the snapshot, and a
concurrent commit that took the id makes this one start over (its files are deleted, the operation
is planned again on the new latest snapshot: a delete re-evaluates its predicate), a bounded number
of times. ``LATEST`` is refreshed afterwards (a hint: readers check it).

What is written (facts checked against pypaimon 2.1.0 output and the Java sources):

* schema files version 3; ``primary-key`` / ``partition`` options become the key lists (Java ``Schema``);
* data files ``data-<uuid>-<n>.<file.format>`` (zstd) in Parquet (Paimon field ids), ORC (``paimon.id`` type
  attributes as Java's ``OrcTypeUtil``, patched into the footer pyarrow writes: ``orc_footer``; TIME as INT
  millis; BINARY(n) refused as Java does) or Avro (``AvroSchemaConverter``'s schema: no field ids, nullable
  as ``["null", t]`` with default null, timestamps millis/micros, DECIMAL as unscaled bytes, non-string-key
  maps as arrays of key/value records; TIMESTAMP/TIME above precision 6/3 refused as Java does); primary-key files carry
  ``_KEY_<k>``, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND`` then every column, sorted by key then sequence;
  sequence numbers continue per (partition, bucket) from the live files' maximum; full compaction
  writes one file per bucket at level ``num-levels - 1`` (append tables: level 0);
* bucket-unaware append tables write ``bucket-0`` with ``_TOTAL_BUCKETS`` -1; fixed buckets hash the
  bucket key (``bucket.bucket``); dynamic-bucket primary-key tables (``bucket`` -1) keep key hash ->
  bucket in one HASH index file per (partition, bucket), rewritten whole when it grows;
* manifests and manifest lists in Avro (zstandard), base list = previous base + delta, ``_VALUE_STATS``
  of every column (``truncate(16)`` for strings, no bounds for binary and nested types), ``_KEY_STATS``,
  ``_MIN_KEY``/``_MAX_KEY``, partition stats and bucket/level ranges in the list;
* deletion vectors for append tables (``deletion-vectors.enabled``): one index file per (partition,
  bucket) holding every vector of the bucket, 32-bit Roaring unless ``deletion-vectors.bitmap64``;
* ``changelog-producer=input``: each new data file again as a ``changelog-`` file, in a changelog list;
* the postpone bucket (``bucket`` -2, pypaimon 2.1.0's layout): writes go to ``bucket-postpone`` (``_BUCKET``
  and ``_TOTAL_BUCKETS`` -2, level 0) as Avro whatever ``file.format`` says (Java; pypaimon keeps an explicit
  ``file.format``), the table's format when the row type has no Avro mapping,
  named ``<prefix>-u-<commitUser>-s-<writeId>-w-<uuid>-<n>``, rows in arrival order, sequence numbers from 0,
  no value stats (``metadata.stats-mode=none``, ``_VALUE_STATS_COLS`` empty), no changelog; batch reads skip
  them until ``compact`` replays them into real buckets (``postpone.default-bucket-num``, else Java's
  ``PostponeUtils`` estimate; partitions with real buckets keep their count).

Primary-key tables with deletion vectors or the first-row engine are written like the others, at level
0, which Java's batch reads skip: their rows show once ``compact`` has moved them up.

Not written: changelogs of the full-compaction and lookup producers, row tracking, data evolution,
Java's batch writes of postpone tables straight into fixed buckets (``postpone.batch-write-fixed-bucket``),
INSERT OVERWRITE of postpone tables, INT96 for TIMESTAMP(7..9) in Parquet (written as INT64 nanoseconds:
pyarrow's INT96 switch covers every timestamp column of a file), CHAR/VARCHAR(n) ORC types, field ids of
ARRAY/MAP elements in Parquet, manifest merging (the base list grows by one manifest per commit).
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import random
import re
import struct
import time
import uuid as uuidlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reference_impl.common import sql as SQL
from reference_impl.errors import CommitConflict, Internal, InvalidTable, Unsupported
from reference_impl.paimon import binary_row as BR
from reference_impl.paimon import bucket as BK
from reference_impl.paimon import datafiles as DF
from reference_impl.paimon import deletion_vectors as DV
from reference_impl.paimon import layout as L
from reference_impl.paimon import manifests as M
from reference_impl.paimon import merge as MG
from reference_impl.paimon import orc_footer as OF
from reference_impl.paimon import schema as SC
from reference_impl.paimon import snapshot as SN
from reference_impl.paimon import table as TB
from reference_impl.paimon.types import MAX_LENGTH, DataField, DataType, arrow_field, arrow_schema, to_arrow
from reference_impl.storage import Storage

MAX_LONG = (1 << 63) - 1
BATCH_COMMIT_IDENTIFIER = MAX_LONG  # BatchWriteBuilder.COMMIT_IDENTIFIER
MAX_COMMIT_ATTEMPTS = 10
AVRO_CODEC = "zstandard"  # manifest.compression=zstd
DEFAULT_NUM_LEVELS = 5
DEFAULT_TARGET_ROWS_PER_BUCKET = 2_000_000  # dynamic-bucket.target-row-num
STATS_TRUNCATE = 16  # metadata.stats-mode=truncate(16)
ROW_KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
HOW = (None, "copy-on-write", "deletion-vectors")
UNAWARE_BUCKET = 0


# ---------------------------------------------------------------------------------------------
# Arrow -> Paimon types


def paimon_type(t: pa.DataType, nullable: bool = True, ids: list[int] | None = None) -> DataType:
    """The Paimon type of an Arrow type (``ids``: a counter for nested ROW field ids)."""
    simple = {pa.bool_(): "BOOLEAN", pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INT", pa.int64(): "BIGINT",
              pa.float32(): "FLOAT", pa.float64(): "DOUBLE", pa.date32(): "DATE"}
    if t in simple:
        return DataType(simple[t], nullable)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return DataType("VARCHAR", nullable, (MAX_LENGTH,))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return DataType("VARBINARY", nullable, (MAX_LENGTH,))
    if pa.types.is_fixed_size_binary(t):
        return DataType("BINARY", nullable, (t.byte_width,))
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise Unsupported(f"decimal precision {t.precision} is above Paimon's 38", feature="decimal256")
        return DataType("DECIMAL", nullable, (t.precision, t.scale))
    if pa.types.is_time(t):
        return DataType("TIME", nullable, ({"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit],))
    if pa.types.is_timestamp(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        return DataType("TIMESTAMP_LTZ" if t.tz else "TIMESTAMP", nullable, (p,))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return DataType("ARRAY", nullable, element=paimon_type(t.value_type, t.value_field.nullable, ids))
    if pa.types.is_map(t):
        return DataType("MAP", nullable, key=paimon_type(t.key_type, False, ids),
                        value=paimon_type(t.item_type, t.item_field.nullable, ids))
    if pa.types.is_struct(t):
        fields = []
        for f in t:
            fid = _next_id(ids)
            fields.append(DataField(fid, f.name, paimon_type(f.type, f.nullable, ids)))
        return DataType("ROW", nullable, fields=tuple(fields))
    raise Unsupported(f"Arrow type {t} has no Paimon type in the reference writer", feature=f"arrow-type:{t}")


def _next_id(ids: list[int] | None) -> int:
    if ids is None:
        raise Internal("nested field ids need a counter")
    ids[0] += 1
    return ids[0]


# ---------------------------------------------------------------------------------------------
# Table state


def _now_ms() -> int:
    return int(time.time() * 1000)


def _wall_clock_ms() -> int:
    """The local wall clock as epoch millis (Java ``LocalDateTime.now()`` stored as a TIMESTAMP(3))."""
    now = dt.datetime.now()
    return int((now - dt.datetime(1970, 1, 1)).total_seconds() * 1000)


@dataclass
class _Ctx:
    """One attempt: the branch, its latest schema and snapshot, live files, files written so far."""

    storage: Storage
    layout: L.Layout
    schema: SC.TableSchema
    snapshot: SN.Snapshot | None
    live: list[M.ManifestEntry]
    index: list[M.IndexManifestEntry]
    written: list[str] = field(default_factory=list)
    uuid: str = field(default_factory=lambda: str(uuidlib.uuid4()))
    counters: dict[str, int] = field(default_factory=dict)
    commit_user: str = field(default_factory=lambda: str(uuidlib.uuid4()))
    write_id: int = field(default_factory=lambda: random.randint(0, (1 << 31) - 2))  # postpone file names

    @property
    def part_fields(self) -> list[DataField]:
        return [self.schema.get_field(k) for k in self.schema.partition_keys]

    @property
    def key_fields(self) -> list[DataField]:
        return [self.schema.get_field(k) for k in self.schema.trimmed_primary_keys]

    @property
    def is_pk(self) -> bool:
        return bool(self.schema.primary_keys)

    def name(self, prefix: str, suffix: str = "") -> str:
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        return f"{prefix}{self.uuid}-{n}{suffix}"

    def put(self, path: str, data: bytes) -> None:
        self.storage.put_if_absent(path, data)
        self.written.append(path)

    def partition_values(self, raw: bytes) -> tuple:
        return tuple(BR.deserialize_with_arity(raw, [f.type for f in self.part_fields])[0])

    def reader(self) -> TB._Reader:
        return TB._Reader(self.storage, self.layout, self.snapshot, self.schema)


def _layout(storage: Storage, branch: str | None) -> L.Layout:
    return L.MAIN if branch in (None, L.MAIN_BRANCH) else L.layout_for(storage, branch)


def _load(storage: Storage, branch: str | None) -> _Ctx:
    layout = _layout(storage, branch)
    schema = SC.latest_schema(storage, layout)
    if schema is None:
        raise InvalidTable(f"no Paimon table at {storage.uri(layout.schema_dir)}: create it first (writer.create_table)",
                           rule="PAIMON-LAYOUT-001")
    snapshot = SN.latest_snapshot(storage, layout)
    live = M.live_files(storage, snapshot) if snapshot else []
    index = M.live_index_files(storage, snapshot) if snapshot else []
    return _Ctx(storage, layout, schema, snapshot, live, index)


# ---------------------------------------------------------------------------------------------
# Schema files


def _schema_dict(schema: SC.TableSchema) -> bytes:
    return json.dumps(SC.schema_to_dict(schema), indent=2).encode()


def _write_schema(storage: Storage, layout: L.Layout, schema: SC.TableSchema) -> SC.TableSchema:
    try:
        storage.put_if_absent(layout.schema_path(schema.id), _schema_dict(schema))
    except CommitConflict:
        raise CommitConflict(f"schema-{schema.id} was created concurrently; re-read the table and retry",
                             rule="PAIMON-SCHEMA-014") from None
    return schema


def _check_options(schema: SC.TableSchema) -> None:
    problems = SC.validate_schema(schema)
    if problems:
        v = problems[0]
        raise InvalidTable(f"invalid table definition: {v.message}", rule=v.rule)
    if schema.bucket == L.POSTPONE_BUCKET and not schema.primary_keys:
        raise InvalidTable("bucket=-2 (postpone) needs a primary-key table", rule="PAIMON-BUCKET-001")
    if schema.bucket == L.POSTPONE_BUCKET and schema.deletion_vectors_enabled:
        raise Unsupported("deletion vectors on a postpone-bucket table are not written by the reference writer",
                          feature="postpone-bucket")
    if schema.file_format not in ("parquet", "orc", "avro"):
        raise Unsupported(f"file.format={schema.file_format}: the reference writer writes parquet, orc and avro",
                          feature="file-format")
    for key in (SC.DATA_EVOLUTION_ENABLED, SC.ROW_TRACKING_ENABLED, SC.DATA_FILE_THIN_MODE):
        if schema.bool_option(key):
            raise Unsupported(f"{key}=true is not written by the reference writer", feature=key)
    if schema.changelog_producer not in ("none", "input"):
        raise Unsupported(f"changelog-producer={schema.changelog_producer} is not written by the reference writer",
                          feature="changelog-producer")


def create_table(storage: Storage, schema: pa.Schema, *, partition_keys: Sequence[str] = (),
                 primary_keys: Sequence[str] = (), options: Mapping[str, str] = {}) -> SC.TableSchema:
    """Write ``schema/schema-0`` for a new table (no snapshot); InvalidTable if a schema exists already."""
    opts = {str(k): str(v) for k, v in options.items()}
    partition_keys, primary_keys = list(partition_keys), list(primary_keys)
    for opt, keys, what in (("partition", partition_keys, "partition_keys"), ("primary-key", primary_keys, "primary_keys")):
        if opt in opts:
            if keys:
                raise InvalidTable(f"both the {what} argument and the {opt!r} option define the keys: use one of them")
            keys.extend(k.strip() for k in opts.pop(opt).split(",") if k.strip())
    if SC.schema_ids(storage):
        raise InvalidTable(f"a Paimon table already exists at {storage.uri()}", hint="open it, or write elsewhere")
    names = schema.names
    for k in partition_keys + primary_keys:
        if k not in names:
            raise InvalidTable(f"key column {k!r} is not a column of the schema ({', '.join(names)})", rule="PAIMON-SCHEMA-002")
    ids = [-1]  # Java Schema.Builder: each column takes the next id, then its nested fields (depth first)
    fields = []
    for f in schema:
        fid = _next_id(ids)
        fields.append(DataField(fid, f.name, paimon_type(f.type, f.nullable and f.name not in primary_keys, ids)))
    ts = SC.TableSchema(version=SC.CURRENT_VERSION, id=0, fields=tuple(fields), highest_field_id=ids[0],
                        partition_keys=tuple(partition_keys), primary_keys=tuple(primary_keys), options=opts,
                        comment=None, time_millis=_now_ms())
    _check_options(ts)
    if ts.bucket > 0 and not primary_keys and not (opts.get(SC.BUCKET_KEY) or "").strip():
        raise InvalidTable(f"append table with bucket={ts.bucket} needs a 'bucket-key' option", rule="PAIMON-BUCKET-003")
    return _write_schema(storage, L.MAIN, ts)


def _evolve(storage: Storage, change: Callable[[SC.TableSchema], dict[str, Any]], branch: str | None = None) -> SC.TableSchema:
    layout = _layout(storage, branch)
    old = SC.latest_schema(storage, layout)
    if old is None:
        raise InvalidTable("no Paimon table to alter: create it first", rule="PAIMON-LAYOUT-001")
    new = replace(old, id=old.id + 1, time_millis=_now_ms(), version=SC.CURRENT_VERSION, **change(old))
    _check_options(new)
    return _write_schema(storage, layout, new)


def set_options(storage: Storage, options: Mapping[str, str]) -> SC.TableSchema:
    """ALTER TABLE SET: the next schema with these options set."""
    for k in options:
        if k in ("primary-key", "partition", SC.BUCKET_KEY, "merge-engine", "sequence.field", "rowkind.field"):
            raise Unsupported(f"option {k!r} cannot be changed on an existing table (Java SchemaManager refuses it)",
                              feature="immutable-option", rule="PAIMON-SCHEMA-009" if k == "primary-key" else None)

    def change(s: SC.TableSchema) -> dict[str, Any]:
        new_bucket = SC._java_int(str(options.get(SC.BUCKET, s.bucket)))
        if new_bucket is None:
            raise InvalidTable(f"bucket={options[SC.BUCKET]!r} is not an integer", rule="PAIMON-BUCKET-001")
        if new_bucket != s.bucket and (s.bucket < 0 or new_bucket < 0):
            raise Unsupported("bucket cannot change between dynamic/unaware and fixed (Java refuses it)", feature="bucket")
        return {"options": {**s.options, **{str(k): str(v) for k, v in options.items()}}}
    return _evolve(storage, change)


def _field_index(s: SC.TableSchema, name: str) -> int:
    for i, f in enumerate(s.fields):
        if f.name == name:
            return i
    raise InvalidTable(f"column {name!r} does not exist (columns: {', '.join(s.field_names)})")


def _refuse_keys(s: SC.TableSchema, name: str, what: str) -> None:
    if name in s.partition_keys:
        raise Unsupported(f"cannot {what} partition column {name!r}: partition keys are fixed", rule="PAIMON-SCHEMA-008",
                          feature="alter-partition-key")
    if name in s.primary_keys:
        raise Unsupported(f"cannot {what} primary key column {name!r}: primary keys are fixed", rule="PAIMON-SCHEMA-009",
                          feature="alter-primary-key")
    for opt in (SC.BUCKET_KEY, SC.SEQUENCE_FIELD, SC.ROWKIND_FIELD):
        if name in [x.strip() for x in (s.options.get(opt) or "").split(",")]:
            raise Unsupported(f"cannot {what} column {name!r}: option {opt} names it", feature="alter-key-column")


def add_column(storage: Storage, field_: pa.Field) -> SC.TableSchema:
    """ALTER TABLE ADD COLUMN (nullable, appended last; id = highestFieldId + 1)."""
    def change(s: SC.TableSchema) -> dict[str, Any]:
        if s.get_field(field_.name) is not None:
            raise InvalidTable(f"column {field_.name!r} already exists")
        if not field_.nullable:
            raise Unsupported(f"cannot add NOT NULL column {field_.name!r} to a table with data (Java refuses it)",
                              feature="add-not-null")
        ids = [s.highest_field_id + 1]
        t = paimon_type(field_.type, True, ids)
        return {"fields": s.fields + (DataField(s.highest_field_id + 1, field_.name, t),), "highest_field_id": ids[0]}
    return _evolve(storage, change)


def rename_column(storage: Storage, old: str, new: str) -> SC.TableSchema:
    """ALTER TABLE RENAME COLUMN (the field keeps its id)."""
    def change(s: SC.TableSchema) -> dict[str, Any]:
        i = _field_index(s, old)
        _refuse_keys(s, old, "rename")
        if s.get_field(new) is not None:
            raise InvalidTable(f"column {new!r} already exists")
        fields = list(s.fields)
        fields[i] = replace(fields[i], name=new)
        return {"fields": tuple(fields)}
    return _evolve(storage, change)


def drop_column(storage: Storage, name: str) -> SC.TableSchema:
    """ALTER TABLE DROP COLUMN (its id is never reused)."""
    def change(s: SC.TableSchema) -> dict[str, Any]:
        i = _field_index(s, name)
        _refuse_keys(s, name, "drop")
        if len(s.fields) == 1:
            raise InvalidTable("cannot drop the only column of a table")
        return {"fields": s.fields[:i] + s.fields[i + 1:]}
    return _evolve(storage, change)


_WIDEN = {"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4}


def _cast_allowed(src: DataType, dst: DataType) -> bool:
    """Type changes the reference writer allows: the widening ones old files read back unchanged by."""
    if src.root in _WIDEN and dst.root in _WIDEN:
        return _WIDEN[dst.root] >= _WIDEN[src.root]
    if src.root in _WIDEN and dst.root in ("FLOAT", "DOUBLE", "DECIMAL"):
        return dst.root == "DOUBLE" or (dst.root == "DECIMAL" and dst.precision - dst.scale >= 19)
    if src.root == "FLOAT" and dst.root == "DOUBLE":
        return True
    if src.root == "DECIMAL" and dst.root == "DECIMAL":
        return dst.scale >= src.scale and dst.precision - dst.scale >= src.precision - src.scale
    if src.root in ("VARCHAR", "CHAR") and dst.root == "VARCHAR":
        return dst.precision >= src.precision
    if src.root == "TIMESTAMP" and dst.root == "TIMESTAMP":
        return dst.precision >= src.precision
    return src.root == dst.root and src.params == dst.params


def change_column_type(storage: Storage, name: str, type_: pa.DataType) -> SC.TableSchema:
    """ALTER TABLE ALTER COLUMN TYPE: widening changes only (ints up, int/float to double, longer decimals and strings)."""
    def change(s: SC.TableSchema) -> dict[str, Any]:
        i = _field_index(s, name)
        old = s.fields[i]
        if name in s.partition_keys or name in s.primary_keys:
            _refuse_keys(s, name, "change the type of")
        new_t = paimon_type(type_, old.type.nullable, [s.highest_field_id])
        if new_t.root in ("ROW", "ARRAY", "MAP") or not _cast_allowed(old.type, new_t):
            raise Unsupported(f"column {name!r}: changing {old.type} to {new_t} is not allowed by the reference writer "
                              "(only widening changes that old files read back unchanged)", rule="PAIMON-SCHEMA-007",
                              feature="type-change")
        fields = list(s.fields)
        fields[i] = replace(old, type=new_t)
        return {"fields": tuple(fields)}
    return _evolve(storage, change)


def move_column(storage: Storage, name: str, after: str | None) -> SC.TableSchema:
    """ALTER TABLE ... FIRST / AFTER ``after`` (None: first)."""
    def change(s: SC.TableSchema) -> dict[str, Any]:
        f = s.fields[_field_index(s, name)]
        rest = [x for x in s.fields if x.name != name]
        pos = 0 if after is None else [x.name for x in rest].index(s.fields[_field_index(s, after)].name) + 1
        return {"fields": tuple(rest[:pos] + [f] + rest[pos:])}
    return _evolve(storage, change)


# ---------------------------------------------------------------------------------------------
# Records: avro dicts of manifest entries and index entries


def _stats_record(s: M.SimpleStats) -> dict[str, Any]:
    return {BR.MIN_VALUES: s.min_values, BR.MAX_VALUES: s.max_values,
            BR.NULL_COUNTS: None if s.null_counts is None else list(s.null_counts)}


def _file_record(f: M.DataFileMeta) -> dict[str, Any]:
    return {"_FILE_NAME": f.file_name, "_FILE_SIZE": f.file_size, "_ROW_COUNT": f.row_count, "_MIN_KEY": f.min_key,
            "_MAX_KEY": f.max_key, "_KEY_STATS": _stats_record(f.key_stats), "_VALUE_STATS": _stats_record(f.value_stats),
            "_MIN_SEQUENCE_NUMBER": f.min_sequence_number, "_MAX_SEQUENCE_NUMBER": f.max_sequence_number,
            "_SCHEMA_ID": f.schema_id, "_LEVEL": f.level, "_EXTRA_FILES": list(f.extra_files),
            "_CREATION_TIME": f.creation_time, "_DELETE_ROW_COUNT": f.delete_row_count,
            "_EMBEDDED_FILE_INDEX": f.embedded_index, "_FILE_SOURCE": f.file_source,
            "_VALUE_STATS_COLS": None if f.value_stats_cols is None else list(f.value_stats_cols),
            "_EXTERNAL_PATH": f.external_path, "_FIRST_ROW_ID": f.first_row_id,
            "_WRITE_COLS": None if f.write_cols is None else list(f.write_cols),
            "_WRITE_COLS_SEQUENCES": None if f.write_cols_sequences is None else list(f.write_cols_sequences)}


def _entry_record(kind: int, partition: bytes, bucket: int, total_buckets: int, file_rec: dict[str, Any]) -> dict[str, Any]:
    return {"_VERSION": M.MANIFEST_VERSION, "_KIND": kind, "_PARTITION": partition, "_BUCKET": bucket,
            "_TOTAL_BUCKETS": total_buckets, "_FILE": file_rec}


def _deleted(e: M.ManifestEntry) -> dict[str, Any]:
    return _entry_record(M.DELETE, e.partition, e.bucket, e.total_buckets, _file_record(e.file))


def _index_record(e: M.IndexManifestEntry) -> dict[str, Any]:
    f = e.index_file
    ranges = None if f.dv_ranges is None else [
        {"f0": r.data_file_name, "f1": r.offset, "f2": r.length, "_CARDINALITY": r.cardinality} for r in f.dv_ranges.values()]
    g = f.global_index
    return {"_VERSION": M.INDEX_MANIFEST_VERSION, "_KIND": e.kind, "_PARTITION": e.partition, "_BUCKET": e.bucket,
            "_INDEX_TYPE": f.index_type, "_FILE_NAME": f.file_name, "_FILE_SIZE": f.file_size, "_ROW_COUNT": f.row_count,
            "_DELETIONS_VECTORS_RANGES": ranges, "_EXTERNAL_PATH": f.external_path,
            "_GLOBAL_INDEX": None if g is None else {
                "_ROW_RANGE_START": g.row_range_start, "_ROW_RANGE_END": g.row_range_end, "_INDEX_FIELD_ID": g.index_field_id,
                "_EXTRA_FIELD_IDS": None if g.extra_field_ids is None else list(g.extra_field_ids),
                "_INDEX_META": g.index_meta, "_SOURCE_META": g.source_meta}}


def _avro(schema: Mapping[str, Any], records: list[dict[str, Any]]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(dict(schema)), records, codec=AVRO_CODEC)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# Stats


def _truncate_min(s: str) -> str:
    return s[:STATS_TRUNCATE]


def _truncate_max(s: str) -> str | None:
    """Java ``TruncateSimpleColStatsCollector.truncateMax``: the prefix with its last code point incremented."""
    if len(s) <= STATS_TRUNCATE:
        return s
    head = list(s[:STATS_TRUNCATE])
    for i in range(len(head) - 1, -1, -1):
        c = ord(head[i]) + 1
        if c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF:
            return "".join(head[:i]) + chr(c)
    return None


_PER_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _ts_value(v: int | None, unit: str) -> BR.Timestamp | None:
    """An Arrow timestamp's integer as a BinaryRow ``Timestamp`` (epoch millis, nano of milli)."""
    if v is None:
        return None
    millis, sub = divmod(v * _PER_NS[unit], 1_000_000)
    return BR.Timestamp(millis, sub)


def _ts_values(arr: pa.Array | pa.ChunkedArray) -> list:
    """A timestamp column as BinaryRow ``Timestamp`` values: Python's datetime stops at microseconds,
    and pyarrow needs pandas to hand out nanoseconds."""
    return [_ts_value(v, arr.type.unit) for v in arr.cast(pa.int64()).to_pylist()]


def _pylist(arr: pa.Array | pa.ChunkedArray) -> list:
    """Column values for BinaryRows and bucket keys (timestamps exact to the nanosecond)."""
    return _ts_values(arr) if pa.types.is_timestamp(arr.type) else arr.to_pylist()


def _column_stats(arr: pa.ChunkedArray | pa.Array, t: DataType) -> tuple[Any, Any, int]:
    nulls = arr.null_count
    if t.root in ("ROW", "ARRAY", "MAP", "MULTISET", "BINARY", "VARBINARY", "VARIANT", "BLOB") or len(arr) == nulls:
        return None, None, nulls
    if t.root in ("FLOAT", "DOUBLE"):
        arr = pc.drop_null(arr)
        arr = arr.filter(pc.invert(pc.is_nan(arr)))
        if len(arr) == 0:
            return None, None, nulls
    if pa.types.is_timestamp(arr.type):
        mm = pc.min_max(arr.cast(pa.int64()))
        lo, hi = _ts_value(mm["min"].as_py(), arr.type.unit), _ts_value(mm["max"].as_py(), arr.type.unit)
    else:
        mm = pc.min_max(arr)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if t.root in ("CHAR", "VARCHAR"):
        lo, hi = _truncate_min(lo), _truncate_max(hi)
    return lo, hi, nulls


def _stats(table: pa.Table, fields: Sequence[DataField]) -> dict[str, Any]:
    if not fields:
        return BR.encode_stats([], [], [], [])
    cols = [_column_stats(table.column(f.name), f.type) for f in fields]
    return BR.encode_stats([c[0] for c in cols], [c[1] for c in cols], [c[2] for c in cols], [f.type for f in fields])


def _partition_stats(partitions: list[tuple], fields: Sequence[DataField]) -> dict[str, Any]:
    if not fields:
        return BR.encode_stats([], [], [], [])
    mins, maxs, nulls = [], [], []
    for i, f in enumerate(fields):
        vals = [p[i] for p in partitions if p[i] is not None]
        nulls.append(len(partitions) - len(vals))
        mins.append(min(vals) if vals else None)
        maxs.append(max(vals) if vals else None)
    return BR.encode_stats(mins, maxs, nulls, [f.type for f in fields])


# ---------------------------------------------------------------------------------------------
# Data files


def _field_meta(f: pa.Field, fid: int) -> pa.Field:
    return f.with_metadata({DF.FIELD_ID_KEY: str(fid).encode()})


def _with_ids(f: pa.Field, t: DataType, fid: int) -> pa.Field:
    """An Arrow field carrying Paimon's field id (nested ROW fields too)."""
    if t.root == "ROW":
        children = [_with_ids(arrow_field(c.name, c.type, declared=True), c.type, c.id) for c in t.fields]
        f = f.with_type(pa.struct(children))
    return _field_meta(f, fid)


def _has_time(t: DataType) -> bool:
    return t.root == "TIME" or any(_has_time(c) for c in (t.element, t.key, t.value) if c is not None) or any(
        _has_time(f.type) for f in t.fields)


def _conform(rows: pa.Table, fields: Sequence[DataField]) -> pa.Table:
    """``rows`` as the table's columns and Arrow types; InvalidTable for a missing column or a null in a NOT NULL one."""
    missing = [f.name for f in fields if f.name not in rows.column_names]
    if missing:
        raise InvalidTable(f"rows lack column(s) {', '.join(missing)} of the table")
    out = []
    for f in fields:
        col = rows.column(f.name)
        if not f.type.nullable and col.null_count:
            raise InvalidTable(f"column {f.name!r} is NOT NULL (a primary key) but the rows hold {col.null_count} nulls")
        try:
            # a TIME of any precision holds milliseconds (types.to_arrow): finer input is truncated, as in Java
            out.append(col.cast(to_arrow(f.type, declared=True), safe=not _has_time(f.type)))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InvalidTable(f"column {f.name!r} cannot be written as {f.type}: {exc}") from None
    return pa.Table.from_arrays(out, schema=pa.schema([arrow_field(f.name, f.type, declared=True).with_nullable(True)
                                                       for f in fields]))


# ---------------------------------------------------------------------------------------------
# Data file formats (Parquet: ParquetSchemaConverter; ORC: OrcTypeUtil; Avro: AvroSchemaConverter)

AVRO_ROW_NAME = "org.apache.paimon.avro.generated.record"  # AvroSchemaConverter.convertToSchema
_AVRO_CODECS = {"zstd": "zstandard", "snappy": "snappy", "deflate": "deflate", "none": "null", "uncompressed": "null"}
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)
_INT32 = 1 << 32


def _java_int(v: int) -> int:
    v &= _INT32 - 1
    return v - _INT32 if v >= 1 << 31 else v


def _orc_ids(fid: int, t: DataType, own: int, depth: int, out: list[dict[str, str]]) -> None:
    """The ``paimon.id`` attribute of an ORC type and its children, in ORC column order (OrcTypeUtil.convertToOrcType)."""
    out.append({OF.FIELD_ID_ATTRIBUTE: str(own)})
    base, limit = ((1 << 31) - 1) // 4, 1 << 10  # SpecialFields.STRUCTURED_TYPE_FIELD_ID_BASE, _DEPTH_LIMIT (int arithmetic)
    if t.root == "ARRAY":
        _orc_ids(fid, t.element, _java_int(base + fid * limit + depth + 1), depth + 1, out)
    elif t.root == "MAP":
        _orc_ids(fid, t.key, _java_int(base - fid * limit - depth - 1), depth + 1, out)
        _orc_ids(fid, t.value, _java_int(base + fid * limit + depth + 1), depth + 1, out)
    elif t.root == "ROW":
        for c in t.fields:
            _orc_ids(c.id, c.type, c.id, 0, out)


def _check_orc_type(t: DataType, name: str) -> None:
    """Types Java's ORC writer refuses (OrcTypeUtil), and ones pyarrow cannot write as Java does."""
    if t.root in ("BINARY", "VARBINARY") and t.params[0] != MAX_LENGTH:
        raise Unsupported(f"column {name!r}: {t} in ORC (Java's OrcTypeUtil writes BYTES only)", feature="orc-type")
    if t.root in ("CHAR", "VARCHAR") and t.params[0] != MAX_LENGTH:
        raise Unsupported(f"column {name!r}: {t} needs ORC char/varchar types, which pyarrow does not write",
                          feature="orc-type")
    if t.root == "MULTISET":
        raise Unsupported(f"column {name!r}: MULTISET in ORC (Java's OrcTypeUtil has no mapping)", feature="orc-type")
    for child in (t.element, t.key, t.value):
        if child is not None:
            _check_orc_type(child, name)
    for f in t.fields:
        _check_orc_type(f.type, name)


def _orc_arrow(arr: pa.Array, t: DataType) -> pa.Array:
    """A column as pyarrow's ORC writer takes it: TIME as INT millis (OrcTypeUtil), nested types rebuilt."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    mask = arr.is_null() if arr.null_count else None
    if t.root == "TIME":
        return arr.cast(pa.time32("ms"), safe=False).cast(pa.int32())
    if t.root == "ROW":
        flat = arr.flatten()
        children = [_orc_arrow(flat[i], f.type) for i, f in enumerate(t.fields)]
        return pa.StructArray.from_arrays(children, fields=[pa.field(f.name, c.type) for f, c in zip(t.fields, children)],
                                          mask=mask)
    if t.root == "ARRAY":
        values = _orc_arrow(arr.values, t.element)
        return pa.ListArray.from_arrays(arr.offsets, values, mask=mask)
    if t.root == "MAP":
        keys, items = _orc_arrow(arr.keys, t.key), _orc_arrow(arr.items, t.value)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, mask=mask)
    return arr


def _encode_orc(columns: list[pa.Array], fields: Sequence[DataField], compression: str) -> bytes:
    for f in fields:
        _check_orc_type(f.type, f.name)
    arrays = [_orc_arrow(c, f.type) for c, f in zip(columns, fields)]
    table = pa.Table.from_arrays(arrays, names=[f.name for f in fields])
    import pyarrow.orc as orc

    buf = io.BytesIO()
    orc.write_table(table, buf, compression={"none": "uncompressed"}.get(compression, compression))
    attrs: list[dict[str, str]] = [{}]  # the root struct has no id
    for f in fields:
        _orc_ids(f.id, f.type, f.id, 0, attrs)
    return OF.with_type_attributes(buf.getvalue(), attrs)


def _avro_type(t: DataType, row_name: str) -> Any:
    """AvroSchemaConverter.convertToSchema (no field ids: Java adds them for Iceberg compatibility only)."""
    r = t.root
    s: Any
    if r == "BOOLEAN":
        s = "boolean"
    elif r in ("TINYINT", "SMALLINT", "INT"):
        s = "int"
    elif r in ("BIGINT", "FLOAT", "DOUBLE"):
        s = {"BIGINT": "long", "FLOAT": "float", "DOUBLE": "double"}[r]
    elif r in ("CHAR", "VARCHAR"):
        s = "string"
    elif r in ("BINARY", "VARBINARY"):
        s = "bytes"
    elif r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if t.precision > 6:
            raise Unsupported(f"{t} in Avro: Java's AvroSchemaConverter supports precision up to 6",
                              feature="avro-timestamp-precision")
        unit = "millis" if t.precision <= 3 else "micros"
        s = {"type": "long", "logicalType": f"{'local-' if r == 'TIMESTAMP_LTZ' else ''}timestamp-{unit}"}
    elif r == "DATE":
        s = {"type": "int", "logicalType": "date"}
    elif r == "TIME":
        if t.precision > 3:
            raise Unsupported(f"{t} in Avro: Java's AvroSchemaConverter supports TIME up to precision 3",
                              feature="avro-time-precision")
        s = {"type": "int", "logicalType": "time-millis"}
    elif r == "DECIMAL":
        s = {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    elif r == "ROW":
        fields = []
        for f in t.fields:
            node: dict[str, Any] = {"name": f.name, "type": _avro_type(f.type, f"{row_name}_{f.name}")}
            if f.type.nullable:
                node["default"] = None
            fields.append(node)
        s = {"type": "record", "name": row_name, "fields": fields}
    elif r in ("MAP", "MULTISET"):
        kt, vt = (t.key, t.value) if r == "MAP" else (t.element, DataType("INT"))
        if kt.root in ("VARCHAR", "CHAR"):
            s = {"type": "map", "values": _avro_type(vt, row_name)}
        else:  # an array of {key, value} records, marked as a map (Iceberg-compatible)
            value: dict[str, Any] = {"name": "value", "type": _avro_type(vt, f"{row_name}_value")}
            if vt.nullable:
                value["default"] = None
            s = {"type": "array", "logicalType": "map", "items": {"type": "record", "name": row_name, "fields": [
                {"name": "key", "type": _avro_type(kt, f"{row_name}_key")}, value]}}
    elif r == "ARRAY":
        s = {"type": "array", "items": _avro_type(t.element, row_name)}
    else:
        raise Unsupported(f"{t} columns are not written to Avro by the reference writer", feature=f"avro-type:{r}")
    return ["null", s] if t.nullable else s


def _unscaled_bytes(v: decimal.Decimal, scale: int) -> bytes:
    """BigInteger.toByteArray of the unscaled value (minimal big-endian two's complement)."""
    n = int(v.scaleb(scale, decimal.Context(prec=100)))
    bits = n.bit_length() if n >= 0 else (-n - 1).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def _avro_value(v: Any, t: DataType) -> Any:
    """A Python value (Arrow's ``as_py``) as the raw Avro datum Java writes (epoch numbers, unscaled bytes)."""
    if v is None:
        return None
    r = t.root
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        micros = (v - _EPOCH) // dt.timedelta(microseconds=1)
        return micros if t.precision > 3 else micros // 1000
    if r == "DATE":
        return (v - _EPOCH_DAY).days
    if r == "TIME":
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    if r == "DECIMAL":
        return _unscaled_bytes(v, t.scale)
    if r == "ROW":
        return {f.name: _avro_value(v.get(f.name), f.type) for f in t.fields}
    if r == "ARRAY":
        return [_avro_value(x, t.element) for x in v]
    if r in ("MAP", "MULTISET"):
        kt, vt = (t.key, t.value) if r == "MAP" else (t.element, DataType("INT"))
        pairs = [(_avro_value(k, kt), _avro_value(x, vt)) for k, x in v]
        return dict(pairs) if kt.root in ("VARCHAR", "CHAR") else [{"key": k, "value": x} for k, x in pairs]
    return v


def _encode_avro(columns: list[pa.Array], fields: Sequence[DataField], compression: str, level: int) -> bytes:
    schema = {"type": "record", "name": AVRO_ROW_NAME, "fields": []}
    for f in fields:
        node: dict[str, Any] = {"name": f.name, "type": _avro_type(f.type, f"{AVRO_ROW_NAME}_{f.name}")}
        if f.type.nullable:
            node["default"] = None
        schema["fields"].append(node)
    codec = _AVRO_CODECS.get(compression)
    if codec is None:
        raise Unsupported(f"file.compression={compression} has no Avro codec", feature="avro-compression")
    values = [c.to_pylist() for c in columns]
    records = [{f.name: _avro_value(col[i], f.type) for f, col in zip(fields, values)}
               for i in range(len(values[0]) if values else 0)]
    buf = io.BytesIO()
    kwargs = {"codec_compression_level": level} if codec == "zstandard" else {}
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec, **kwargs)
    return buf.getvalue()


def _encode(fmt: str, columns: list[pa.Array], fields: Sequence[DataField], schema: SC.TableSchema) -> bytes:
    """One data file's bytes: ``columns`` (one per field, in file order; system fields included)."""
    compression = (schema.option(SC.FILE_COMPRESSION) or "zstd").strip().lower()
    if fmt == "orc":
        return _encode_orc(columns, fields, compression)
    if fmt == "avro":
        return _encode_avro(columns, fields, compression,
                            int(schema.option("file.compression.zstd-level") or 1))
    afields = [_with_ids(arrow_field(f.name, f.type, declared=True), f.type, f.id) for f in fields]
    data_table = pa.Table.from_arrays([a.cast(af.type) for a, af in zip(columns, afields)], schema=pa.schema(afields))
    buf = io.BytesIO()
    pq.write_table(data_table, buf, compression=compression)
    return buf.getvalue()


def _postpone_format(schema: SC.TableSchema) -> str:
    """PostponeBucketFileStoreWrite: Avro whenever the row type converts to Avro, else the table's format."""
    try:
        for f in schema.fields:
            _avro_type(f.type, f.name)
    except Unsupported:
        return schema.file_format
    return "avro"


def _write_file(ctx: _Ctx, rows: pa.Table, *, partition: tuple, bucket: int, total_buckets: int, level: int,
                seq_start: int, kinds: np.ndarray | None, source: int, seqs: np.ndarray | None = None) -> dict[str, Any]:
    """Write one data file of ``rows`` (table columns), return its ADD manifest entry record.

    Postpone-bucket files (bucket -2) keep the rows in arrival order (no sort: compaction replays them),
    are Avro with ``metadata.stats-mode=none`` (no value stats) and are named
    ``<prefix>-u-<commitUser>-s-<writeId>-w-<uuid>-<n>`` (PostponeBucketFileStoreWrite)."""
    schema = ctx.schema
    fields = list(schema.fields)
    n = rows.num_rows
    postpone = bucket == L.POSTPONE_BUCKET
    if seqs is None:
        seqs = np.arange(seq_start, seq_start + n, dtype=np.int64)
    pfields = ctx.part_fields
    part_path = TB.partition_path(partition, pfields, schema)
    prefix = schema.option(SC.DATA_FILE_PREFIX) or "data-"
    fmt = schema.file_format
    if postpone:
        prefix = f"{prefix}-u-{ctx.commit_user}-s-{ctx.write_id}-w-"
        fmt = _postpone_format(schema)
    name = ctx.name(prefix, f".{fmt}")
    key_fields = ctx.key_fields
    file_fields: list[DataField] = []
    if ctx.is_pk:
        kinds = np.zeros(n, dtype=np.int8) if kinds is None else kinds.astype(np.int8)
        t = rows.append_column("__seq", pa.array(seqs, pa.int64())).append_column("__kind", pa.array(kinds, pa.int8()))
        if not postpone:
            order = pc.sort_indices(t, sort_keys=[(f.name, "ascending") for f in key_fields] + [("__seq", "ascending")])
            t = t.take(order)
        arrays = []
        for f in key_fields:
            kf = DF.key_field(f)
            arrays.append(t.column(f.name))
            file_fields.append(DataField(kf.id, kf.name, f.type.not_null()))
        for sf, col in ((DF.SEQUENCE_NUMBER, "__seq"), (DF.VALUE_KIND, "__kind")):
            arrays.append(t.column(col))
            file_fields.append(sf)
        rows = t.select([f.name for f in fields])
        seqs_sorted = t.column("__seq").to_numpy()
        kinds_sorted = t.column("__kind").to_numpy()
    else:
        arrays = []
        seqs_sorted, kinds_sorted = seqs, None
    for f in fields:
        arrays.append(rows.column(f.name))
        file_fields.append(f)
    data = _encode(fmt, arrays, file_fields, schema)
    ctx.put(DF.data_file_path(name, bucket=bucket, partition_path=part_path,
                              data_dir=schema.options.get(SC.DATA_FILE_PATH_DIRECTORY)), data)
    if ctx.is_pk:
        key_types = [f.type.not_null() for f in key_fields]
        # the first and the last key written (a sorted run: the smallest and largest; a postpone file: arrival order)
        first = [_pylist(rows.column(f.name).slice(0, 1))[0] for f in key_fields]
        last = [_pylist(rows.column(f.name).slice(n - 1, 1))[0] for f in key_fields]
        min_key, max_key = BR.serialize_with_arity(first, key_types), BR.serialize_with_arity(last, key_types)
        key_stats = _stats(rows, key_fields)
        deletes = int(np.isin(kinds_sorted, (1, 3)).sum())
    else:
        min_key = max_key = BR.EMPTY_ROW_SERIALIZED
        key_stats = BR.encode_stats([], [], [], [])
        deletes = 0
    value_stats = BR.encode_stats([], [], [], []) if postpone else _stats(rows, fields)
    rec = {"_FILE_NAME": name, "_FILE_SIZE": len(data), "_ROW_COUNT": n, "_MIN_KEY": min_key, "_MAX_KEY": max_key,
           "_KEY_STATS": key_stats, "_VALUE_STATS": value_stats,
           "_MIN_SEQUENCE_NUMBER": int(seqs_sorted.min()) if n else 0,
           "_MAX_SEQUENCE_NUMBER": int(seqs_sorted.max()) if n else 0, "_SCHEMA_ID": schema.id, "_LEVEL": level,
           "_EXTRA_FILES": [], "_CREATION_TIME": _wall_clock_ms(), "_DELETE_ROW_COUNT": deletes,
           "_EMBEDDED_FILE_INDEX": None, "_FILE_SOURCE": source, "_VALUE_STATS_COLS": [] if postpone else None,
           "_EXTERNAL_PATH": None, "_FIRST_ROW_ID": None, "_WRITE_COLS": None, "_WRITE_COLS_SEQUENCES": None}
    part_row = BR.serialize_with_arity(list(partition), [f.type for f in pfields])
    return _entry_record(M.ADD, part_row, bucket, total_buckets, rec)


def _max_sequence(ctx: _Ctx) -> dict[tuple[bytes, int], int]:
    out: dict[tuple[bytes, int], int] = {}
    for e in ctx.live:
        k = (e.partition, e.bucket)
        out[k] = max(out.get(k, -1), e.file.max_sequence_number)
    return out


# ---------------------------------------------------------------------------------------------
# Bucket assignment


def _key_hash(values: Sequence[Any], types: Sequence[DataType]) -> int:
    return BK.hash_code(BR.serialize(list(values), list(types)))


class _DynamicBuckets:
    """Dynamic-bucket assignment: key hash -> bucket from the live HASH index files, new keys to non-full buckets."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.target = int(ctx.schema.options.get("dynamic-bucket.target-row-num") or DEFAULT_TARGET_ROWS_PER_BUCKET)
        self.hashes: dict[tuple[bytes, int], list[int]] = {}
        self.lookup: dict[bytes, dict[int, int]] = {}
        self.changed: set[tuple[bytes, int]] = set()
        for e in ctx.index:
            if e.index_file.index_type != M.HASH_INDEX:
                continue
            data = ctx.storage.read(ctx.layout.index_path(e.index_file.file_name))
            hs = [h for (h,) in struct.iter_unpack(">i", data)]
            self.hashes.setdefault((e.partition, e.bucket), []).extend(hs)
            for h in hs:
                self.lookup.setdefault(e.partition, {})[h] = e.bucket

    def assign(self, partition: bytes, h: int) -> int:
        known = self.lookup.setdefault(partition, {})
        if h in known:
            return known[h]
        b = 0
        while len(self.hashes.get((partition, b), ())) >= self.target:
            b += 1
        self.hashes.setdefault((partition, b), []).append(h)
        known[h] = b
        self.changed.add((partition, b))
        return b

    def index_entries(self) -> tuple[list[M.IndexManifestEntry], set[tuple[bytes, int]]]:
        """New HASH index files for the buckets that grew, and which (partition, bucket)s they replace."""
        out = []
        for part, b in sorted(self.changed):
            hs = self.hashes[(part, b)]
            data = b"".join(struct.pack(">i", h) for h in hs)
            name = self.ctx.name(L.INDEX_FILE_PREFIX)
            self.ctx.put(self.ctx.layout.index_path(name), data)
            out.append(M.IndexManifestEntry(kind=M.ADD, partition=part, bucket=b, index_file=M.IndexFileMeta(
                index_type=M.HASH_INDEX, file_name=name, file_size=len(data), row_count=len(hs))))
        return out, set(self.changed)


def _assign(ctx: _Ctx, rows: pa.Table, dynamic: _DynamicBuckets | None) -> tuple[list[tuple], list[bytes], np.ndarray, int]:
    """Per row: partition tuple, partition row bytes, bucket; and the manifest's ``_TOTAL_BUCKETS``."""
    schema = ctx.schema
    pfields = ctx.part_fields
    ptypes = [f.type for f in pfields]
    pcols = [_pylist(rows.column(f.name)) for f in pfields]
    parts = [tuple(c[i] for c in pcols) for i in range(rows.num_rows)]
    cache: dict[tuple, bytes] = {}
    praw = []
    for p in parts:
        if p not in cache:
            cache[p] = BR.serialize_with_arity(list(p), ptypes)
        praw.append(cache[p])
    n = schema.bucket
    buckets = np.zeros(rows.num_rows, dtype=np.int64)
    if n == L.POSTPONE_BUCKET:  # every row to bucket-postpone; compaction assigns the real buckets
        return parts, praw, buckets + L.POSTPONE_BUCKET, L.POSTPONE_BUCKET
    if n > 0 or (ctx.is_pk and n == SC.DYNAMIC_BUCKET):
        keys = schema.bucket_keys if n > 0 else schema.trimmed_primary_keys
        kf = [schema.get_field(k) for k in keys]
        ktypes = [f.type for f in kf]
        kcols = [_pylist(rows.column(f.name)) for f in kf]
        fn = schema.option(SC.BUCKET_FUNCTION_TYPE) or "default"
        for i in range(rows.num_rows):
            values = [c[i] for c in kcols]
            if n > 0:
                buckets[i] = BK.bucket(values, ktypes, n, fn)
            else:
                buckets[i] = dynamic.assign(praw[i], _key_hash(values, [t.not_null() for t in ktypes]))
    return parts, praw, buckets, (n if n > 0 else -1)


def _write_rows(ctx: _Ctx, rows: pa.Table, kinds: np.ndarray | None, files: int, *, level: int = 0,
                dynamic: _DynamicBuckets | None = None, restart_sequence: bool = False) -> list[dict[str, Any]]:
    """Data files for ``rows`` grouped by partition and bucket (``files`` per group), as ADD entry records."""
    if rows.num_rows == 0:
        return []
    parts, praw, buckets, total = _assign(ctx, rows, dynamic)
    groups: dict[tuple[bytes, int], list[int]] = {}
    for i, (raw, b) in enumerate(zip(praw, buckets)):
        groups.setdefault((raw, int(b)), []).append(i)
    # postpone writers ignore previous files: each write's sequence numbers start at 0 (pypaimon; Java's are -1)
    seq = {} if restart_sequence or total == L.POSTPONE_BUCKET else _max_sequence(ctx)
    out = []
    for (raw, b), positions in groups.items():
        idx = np.asarray(positions)
        start = seq.get((raw, b), -1) + 1
        seqs = np.arange(start, start + len(idx), dtype=np.int64)  # input order within the bucket
        for run in _sorted_runs(ctx, rows, idx):
            for chunk in np.array_split(run, max(1, min(files, len(run)))):
                if not len(chunk):
                    continue
                out.append(_write_file(ctx, rows.take(pa.array(idx[chunk])), partition=parts[idx[chunk[0]]], bucket=b,
                                       total_buckets=total, level=level, seq_start=0, seqs=seqs[chunk],
                                       kinds=None if kinds is None else kinds[idx[chunk]], source=M.FILE_SOURCE_APPEND))
    return out


def _sorted_runs(ctx: _Ctx, rows: pa.Table, idx: np.ndarray) -> list[np.ndarray]:
    """Positions (into ``idx``) of the files one bucket's rows go to. A primary-key data file is a
    sorted run, each key at most once (Java merges its write buffer before a flush, and readers take a
    single-file split as already merged), so a key's k-th record of the commit goes to the k-th run;
    the sequence numbers keep the input order and readers merge the runs. Append tables: one run."""
    if not ctx.is_pk or ctx.schema.bucket == L.POSTPONE_BUCKET:  # postpone: arrival order, keys may repeat
        return [np.arange(len(idx))]
    keys = [_pylist(rows.column(f.name).take(pa.array(idx))) for f in ctx.key_fields]
    seen: dict[tuple, int] = {}
    runs: list[list[int]] = []
    for i, key in enumerate(zip(*keys)):
        k = seen.get(key, 0)
        seen[key] = k + 1
        if k == len(runs):
            runs.append([])
        runs[k].append(i)
    return [np.asarray(r) for r in runs]


# ---------------------------------------------------------------------------------------------
# Commit


@dataclass
class _Plan:
    kind: str  # APPEND / OVERWRITE / COMPACT
    entries: list[dict[str, Any]]  # delta entries (ADD and DELETE)
    index: list[M.IndexManifestEntry] | None = None  # the complete new index list; None: unchanged
    operation: str | None = None
    changelog: list[dict[str, Any]] = field(default_factory=list)  # ADD entries of changelog files


def _manifest_meta(ctx: _Ctx, records: list[dict[str, Any]]) -> dict[str, Any]:
    data = _avro(M.MANIFEST_ENTRY_SCHEMA, records)
    name = ctx.name(L.MANIFEST_PREFIX)
    ctx.put(ctx.layout.manifest_path(name), data)
    pfields = ctx.part_fields
    parts = [ctx.partition_values(r["_PARTITION"]) for r in records]
    totals = {r["_TOTAL_BUCKETS"] for r in records}
    total = totals.pop() if len(totals) == 1 else None
    return {"_VERSION": M.MANIFEST_LIST_VERSION, "_FILE_NAME": name, "_FILE_SIZE": len(data),
            "_NUM_ADDED_FILES": sum(1 for r in records if r["_KIND"] == M.ADD),
            "_NUM_DELETED_FILES": sum(1 for r in records if r["_KIND"] == M.DELETE),
            "_PARTITION_STATS": _partition_stats(parts, pfields), "_SCHEMA_ID": ctx.schema.id,
            "_MIN_BUCKET": min(r["_BUCKET"] for r in records), "_MAX_BUCKET": max(r["_BUCKET"] for r in records),
            "_MIN_LEVEL": min(r["_FILE"]["_LEVEL"] for r in records), "_MAX_LEVEL": max(r["_FILE"]["_LEVEL"] for r in records),
            "_MIN_ROW_ID": None, "_MAX_ROW_ID": None, "_TOTAL_BUCKETS": total if total is not None and total > 0 else None,
            "_EXTRA_FILES": None}


def _raw_list(ctx: _Ctx, name: str) -> list[dict[str, Any]]:
    """A manifest list's records as written (fields an older writer lacked as None)."""
    _schema, records = M.decode_avro(ctx.storage.read(ctx.layout.manifest_path(name)), what="manifest list",
                                     path=name, rule="PAIMON-MLIST-001")
    names = [f["name"] for f in M.MANIFEST_FILE_META_SCHEMA["fields"]]
    return [{k: r.get(k) for k in names} for r in records]


def _write_list(ctx: _Ctx, records: list[dict[str, Any]]) -> tuple[str, int]:
    data = _avro(M.MANIFEST_FILE_META_SCHEMA, records)
    name = ctx.name(L.MANIFEST_LIST_PREFIX)
    ctx.put(ctx.layout.manifest_path(name), data)
    return name, len(data)


def _commit(ctx: _Ctx, plan: _Plan) -> SN.Snapshot:
    """Write manifests, lists, index manifest, then claim the next snapshot id (CommitConflict if taken)."""
    prev = ctx.snapshot
    base = (_raw_list(ctx, prev.base_manifest_list) + _raw_list(ctx, prev.delta_manifest_list)) if prev else []
    base_name, base_size = _write_list(ctx, base)
    delta = [_manifest_meta(ctx, plan.entries)] if plan.entries else []
    delta_name, delta_size = _write_list(ctx, delta)
    changelog_name = changelog_size = changelog_rows = None
    if plan.changelog:
        changelog_name, changelog_size = _write_list(ctx, [_manifest_meta(ctx, plan.changelog)])
        changelog_rows = sum(r["_FILE"]["_ROW_COUNT"] for r in plan.changelog)
    index_manifest = prev.index_manifest if prev else None
    if plan.index is not None:
        if plan.index:
            data = _avro(M.INDEX_MANIFEST_ENTRY_SCHEMA, [_index_record(e) for e in plan.index])
            index_manifest = ctx.name(L.INDEX_MANIFEST_PREFIX)
            ctx.put(ctx.layout.manifest_path(index_manifest), data)
        else:
            index_manifest = None
    added = sum(r["_FILE"]["_ROW_COUNT"] for r in plan.entries if r["_KIND"] == M.ADD)
    removed = sum(r["_FILE"]["_ROW_COUNT"] for r in plan.entries if r["_KIND"] == M.DELETE)
    total = (prev.total_record_count or 0) + added - removed if prev else added - removed
    sid = prev.id + 1 if prev else SN.FIRST_SNAPSHOT_ID
    snap = SN.Snapshot(id=sid, schema_id=ctx.schema.id, base_manifest_list=base_name, base_manifest_list_size=base_size,
                       delta_manifest_list=delta_name, delta_manifest_list_size=delta_size, index_manifest=index_manifest,
                       changelog_manifest_list=changelog_name, changelog_manifest_list_size=changelog_size,
                       changelog_record_count=changelog_rows,
                       commit_user=ctx.commit_user, commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind=plan.kind,
                       time_millis=_now_ms(), total_record_count=total, delta_record_count=added - removed,
                       uuid=str(uuidlib.uuid4()), operation=plan.operation)
    body = json.dumps(SN.snapshot_to_dict(snap), indent=2).encode()
    ctx.storage.put_if_absent(ctx.layout.snapshot_path(sid), body)  # the commit point (PAIMON-SNAP-002)
    try:
        ctx.storage.write_atomic(ctx.layout.hint_path(L.LATEST), str(sid).encode())
    except OSError:
        pass  # a hint only (PAIMON-SNAP-003)
    return snap


def _run(storage: Storage, branch: str | None, plan_fn: Callable[[_Ctx], _Plan | None]) -> SN.Snapshot | None:
    """Plan and commit, starting over on the latest snapshot when a concurrent commit took the id."""
    for _attempt in range(MAX_COMMIT_ATTEMPTS):
        ctx = _load(storage, branch)
        try:
            plan = plan_fn(ctx)
            if plan is None:
                return None
            return _commit(ctx, plan)
        except CommitConflict:
            for path in ctx.written:  # unreferenced: no snapshot names them
                storage.delete(path)
        except BaseException:
            for path in ctx.written:
                storage.delete(path)
            raise
    raise CommitConflict(f"gave up after {MAX_COMMIT_ATTEMPTS} attempts: other writers keep committing to "
                         f"{storage.uri()}", hint="retry later, or serialise the writers")


# ---------------------------------------------------------------------------------------------
# Writes


def _kinds(kinds: Sequence[str] | None, n: int) -> np.ndarray | None:
    if kinds is None:
        return None
    if len(kinds) != n:
        raise InvalidTable(f"{len(kinds)} row kinds for {n} rows")
    try:
        return np.array([ROW_KINDS[k] for k in kinds], dtype=np.int8)
    except KeyError as exc:
        raise InvalidTable(f"row kind {exc.args[0]!r} is not one of +I, -U, +U, -D", rule="PAIMON-DATA-003") from None


def _rowkind_field_kinds(ctx: _Ctx, rows: pa.Table) -> np.ndarray | None:
    """``rowkind.field``: each record's kind is the column's value ('+I', '-U', '+U', '-D'), stored as its
    ``_VALUE_KIND`` the way Java's writer does (readers may trust ``_VALUE_KIND`` alone)."""
    name = ctx.schema.option("rowkind.field")
    if not ctx.is_pk or not name:
        return None
    values = rows.column(name).to_pylist()
    bad = sorted({str(v) for v in values if v not in ROW_KINDS})
    if bad:
        raise InvalidTable(f"rowkind.field {name!r} holds {', '.join(bad)}, not one of +I, -U, +U, -D",
                           rule="PAIMON-DATA-003")
    return np.array([ROW_KINDS[v] for v in values], dtype=np.int8)


def _ignores_retractions(ctx: _Ctx) -> bool:
    """``ignore-delete`` (or the engine's older spelling): Java's writer drops -U and -D records before they
    reach a file (its row-kind filter), so the table never holds them."""
    engine = ctx.schema.merge_engine
    return any((ctx.schema.option(k) or "").strip().lower() == "true" for k in ("ignore-delete", f"{engine}.ignore-delete"))


def _append_plan(ctx: _Ctx, rows: pa.Table, kinds: np.ndarray | None, files: int, operation: str = "WRITE") -> _Plan | None:
    table_rows = _conform(rows, ctx.schema.fields)
    if kinds is not None and not ctx.is_pk and bool((kinds != 0).any()):
        raise Unsupported("row kinds other than +I need a primary-key table (use delete/update on append tables)",
                          feature="append-row-kinds")
    from_field = _rowkind_field_kinds(ctx, table_rows)
    if from_field is not None:
        kinds = from_field
    if kinds is not None and ctx.is_pk and _ignores_retractions(ctx):
        keep = np.isin(kinds, (ROW_KINDS["+I"], ROW_KINDS["+U"]))
        table_rows, kinds = table_rows.filter(pa.array(keep)), kinds[keep]
    dynamic = _DynamicBuckets(ctx) if ctx.is_pk and ctx.schema.bucket == SC.DYNAMIC_BUCKET else None
    entries = _write_rows(ctx, table_rows, kinds, files, dynamic=dynamic)
    if not entries:
        return None
    index = None
    if dynamic is not None and dynamic.changed:
        new, replaced = dynamic.index_entries()
        index = [e for e in ctx.index if not (e.index_file.index_type == M.HASH_INDEX and (e.partition, e.bucket) in replaced)]
        index += new
    return _Plan("APPEND", entries, index, operation, _input_changelog(ctx, entries))


def _input_changelog(ctx: _Ctx, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``changelog-producer=input``: each new data file's records again, as a ``changelog-`` file beside it."""
    if not ctx.is_pk or ctx.schema.changelog_producer != "input":
        return []
    out = []
    prefix = ctx.schema.option(SC.CHANGELOG_FILE_PREFIX) or "changelog-"
    for rec in entries:
        if rec["_BUCKET"] == L.POSTPONE_BUCKET:
            continue  # postpone writers produce no changelog (pypaimon: ChangelogProducer.NONE)
        path = _entry_path(ctx, rec)
        name = ctx.name(prefix, "." + rec["_FILE"]["_FILE_NAME"].rsplit(".", 1)[-1])
        ctx.put(path.rsplit("/", 1)[0] + "/" + name, ctx.storage.read(path))
        out.append({**rec, "_FILE": {**rec["_FILE"], "_FILE_NAME": name}})
    return out


def _entry_path(ctx: _Ctx, rec: dict[str, Any]) -> str:
    values = ctx.partition_values(rec["_PARTITION"])
    return DF.data_file_path(rec["_FILE"]["_FILE_NAME"], bucket=rec["_BUCKET"],
                             partition_path=TB.partition_path(values, ctx.part_fields, ctx.schema),
                             data_dir=ctx.schema.options.get(SC.DATA_FILE_PATH_DIRECTORY))


def write(storage: Storage, rows: pa.Table, *, kinds: Sequence[str] | None = None, files: int = 1,
          branch: str | None = None) -> SN.Snapshot | None:
    """INSERT ``rows`` (with per-row ``kinds`` on primary-key tables) in one APPEND commit; None for no rows."""
    if files < 1:
        raise InvalidTable(f"files must be >= 1, got {files}")
    k = _kinds(kinds, rows.num_rows)
    return _run(storage, branch, lambda ctx: _append_plan(ctx, rows, k, files))


def overwrite(storage: Storage, rows: pa.Table, *, branch: str | None = None) -> SN.Snapshot:
    """INSERT OVERWRITE the whole table: DELETE every live file, ADD the new ones (commitKind OVERWRITE)."""
    def plan(ctx: _Ctx) -> _Plan:
        if ctx.schema.bucket == L.POSTPONE_BUCKET:
            raise Unsupported("INSERT OVERWRITE of a postpone-bucket table (Java writes fixed buckets of "
                              "postpone.default-bucket-num) is not written by the reference writer", feature="postpone-overwrite")
        old_index, ctx.index = ctx.index, []  # every index file goes with the files it indexed
        dynamic = _DynamicBuckets(ctx) if ctx.is_pk and ctx.schema.bucket == SC.DYNAMIC_BUCKET else None
        entries = [_deleted(e) for e in ctx.live]
        entries += _write_rows(ctx, _conform(rows, ctx.schema.fields), None, 1, dynamic=dynamic, restart_sequence=True)
        index = dynamic.index_entries()[0] if dynamic is not None else []
        return _Plan("OVERWRITE", entries, index if (index or old_index) else None, "OVERWRITE")
    return _run(storage, branch, plan)


# ---------------------------------------------------------------------------------------------
# Delete and update


def _current_rows(ctx: _Ctx) -> pa.Table:
    if ctx.snapshot is None:
        return arrow_schema(ctx.schema.fields).empty_table()
    return TB.read_table(ctx.storage, branch=None if ctx.layout.is_main else ctx.layout.branch)


def _file_rows(ctx: _Ctx, reader: TB._Reader, e: M.ManifestEntry) -> tuple[pa.Table, np.ndarray]:
    """A file's rows (current schema, no deletion vector applied) and the positions its live vector deletes."""
    dvs, reader.dvs = reader.dvs, {}
    try:
        t = reader.read(e, ctx.schema.fields, primary_key=False)
    finally:
        reader.dvs = dvs
    dv = dvs.get((e.partition, e.bucket, e.file.file_name))
    if dv is None:
        return t, np.zeros(0, dtype=np.int64)
    index_file, rng = dv
    positions = DV.load_vector(ctx.storage, ctx.layout.index_path(index_file.file_name), rng.offset, rng.length,
                               rng.cardinality, data_file=e.file.file_name, row_count=e.file.row_count)
    return t, np.asarray(positions, dtype=np.int64)


def _use_dv(ctx: _Ctx, how: str | None) -> bool:
    if how not in HOW:
        raise Unsupported(f"delete/update mode {how!r} is not one of copy-on-write, deletion-vectors", feature="row-level-mode")
    if how == "deletion-vectors" and not ctx.schema.deletion_vectors_enabled:
        # Java and pypaimon read deletion vectors only when the option is on: they would be ignored
        raise Unsupported("deletion vectors need the table option deletion-vectors.enabled=true "
                          "(set it with set_options first, or use copy-on-write)", feature="deletion-vectors")
    if how == "copy-on-write":
        return False
    return ctx.schema.deletion_vectors_enabled


def _pk_changes(ctx: _Ctx, where: str, set_: Mapping[str, str] | None) -> _Plan | None:
    current = _current_rows(ctx)
    hit = SQL.matching_positions(current, where)
    if not len(hit):
        return None
    old = current.take(pa.array(hit))
    if set_ is None:
        kinds = np.full(len(hit), ROW_KINDS["-D"], dtype=np.int8)
        return _append_plan(ctx, old, kinds, 1, "DELETE")
    new = _apply_set(ctx, old, set_)
    if ctx.schema.changelog_producer == "input":
        both = pa.concat_tables([old, new])
        kinds = np.concatenate([np.full(len(hit), 1, np.int8), np.full(len(hit), 2, np.int8)])
        return _append_plan(ctx, both, kinds, 1, "UPDATE")
    return _append_plan(ctx, new, np.full(len(hit), 2, np.int8), 1, "UPDATE")


def _apply_set(ctx: _Ctx, rows: pa.Table, set_: Mapping[str, str]) -> pa.Table:
    out = rows
    for col, expr in set_.items():
        f = ctx.schema.get_field(col)
        if f is None:
            raise InvalidTable(f"SET names column {col!r}, which the table does not have")
        if col in ctx.schema.primary_keys or col in ctx.schema.partition_keys:
            raise Unsupported(f"cannot SET key or partition column {col!r} (delete and insert instead)", feature="update-key")
        values = SQL.evaluate(rows, expr, what=f"SET {col}")
        try:
            values = values.cast(to_arrow(f.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InvalidTable(f"SET {col} = {expr}: the value cannot be stored as {f.type}: {exc}") from None
        out = out.set_column(out.schema.get_field_index(col), col, values)
    return out


def _append_changes(ctx: _Ctx, where: str, set_: Mapping[str, str] | None, how: str | None) -> _Plan | None:
    dv = _use_dv(ctx, how)
    reader = ctx.reader() if ctx.snapshot else None
    entries: list[dict[str, Any]] = []
    vectors: dict[tuple[bytes, int], dict[str, np.ndarray]] = {}
    changed_buckets: set[tuple[bytes, int]] = set()
    updated: list[pa.Table] = []
    any_hit = False
    for e in ctx.live:
        rows, deleted = _file_rows(ctx, reader, e)
        keep = np.ones(rows.num_rows, dtype=bool)
        keep[deleted] = False
        alive = np.nonzero(keep)[0]
        hit = SQL.matching_positions(rows.take(pa.array(alive)), where, alive) if len(alive) else np.zeros(0, np.int64)
        if len(deleted):
            vectors.setdefault((e.partition, e.bucket), {})[e.file.file_name] = deleted
        if not len(hit):
            continue
        any_hit = True
        if set_ is not None:
            updated.append(_apply_set(ctx, rows.take(pa.array(hit)), set_))
        if dv:
            vectors.setdefault((e.partition, e.bucket), {})[e.file.file_name] = np.union1d(deleted, hit)
            changed_buckets.add((e.partition, e.bucket))
            continue
        # copy-on-write: the file's surviving rows (and, for an update, all its rows updated) in a new file
        keep[hit] = False
        entries.append(_deleted(e))
        vectors.get((e.partition, e.bucket), {}).pop(e.file.file_name, None)
        changed_buckets.add((e.partition, e.bucket))
        rest = rows.take(pa.array(np.nonzero(keep)[0]))
        if set_ is not None:
            rest = pa.concat_tables([rest, updated.pop()])
        if rest.num_rows:
            entries.append(_write_file(ctx, rest, partition=ctx.partition_values(e.partition), bucket=e.bucket,
                                       total_buckets=e.total_buckets, level=0, seq_start=e.file.min_sequence_number,
                                       kinds=None, source=M.FILE_SOURCE_APPEND))
    if not any_hit:
        return None
    if updated:
        entries += _write_rows(ctx, pa.concat_tables(updated), None, 1)
    index = _dv_index(ctx, vectors, changed_buckets) if (changed_buckets & _dv_buckets(ctx) or dv) else None
    operation = "DELETE" if set_ is None else "UPDATE"
    return _Plan("APPEND" if dv else "OVERWRITE", entries, index, operation)


def _dv_buckets(ctx: _Ctx) -> set[tuple[bytes, int]]:
    return {(e.partition, e.bucket) for e in ctx.index if e.index_file.index_type == M.DELETION_VECTORS_INDEX}


def _dv_index(ctx: _Ctx, vectors: dict[tuple[bytes, int], dict[str, np.ndarray]],
              changed: set[tuple[bytes, int]]) -> list[M.IndexManifestEntry]:
    """The complete index list: unchanged entries, and one new DV index file per changed (partition, bucket)."""
    out = [e for e in ctx.index
           if not (e.index_file.index_type == M.DELETION_VECTORS_INDEX and (e.partition, e.bucket) in changed)]
    bitmap64 = ctx.schema.bool_option(SC.DELETION_VECTORS_BITMAP64)
    for part, b in sorted(changed):
        vecs = {name: pos for name, pos in vectors.get((part, b), {}).items() if len(pos)}
        if not vecs:
            continue
        data, ranges = DV.write_index_file(vecs, bitmap64=bitmap64)
        name = ctx.name(L.INDEX_FILE_PREFIX)
        ctx.put(ctx.layout.index_path(name), data)
        out.append(M.IndexManifestEntry(kind=M.ADD, partition=part, bucket=b, index_file=M.IndexFileMeta(
            index_type=M.DELETION_VECTORS_INDEX, file_name=name, file_size=len(data), row_count=len(ranges),
            dv_ranges={r.data_file: M.DeletionVectorMeta(data_file_name=r.data_file, offset=r.offset, length=r.length,
                                                         cardinality=r.cardinality) for r in ranges})))
    return out


def delete(storage: Storage, where: str, *, how: str | None = None, branch: str | None = None) -> SN.Snapshot | None:
    """DELETE FROM the table WHERE ``where`` (SQL): ``-D`` rows on primary-key tables, deletion vectors or
    copy-on-write on append tables; None when nothing matches (no commit)."""
    def plan(ctx: _Ctx) -> _Plan | None:
        if ctx.is_pk:
            if how not in (None,):
                raise Unsupported(f"delete mode {how!r} applies to append tables; primary-key tables write -D rows",
                                  feature="row-level-mode")
            return _pk_changes(ctx, where, None)
        return _append_changes(ctx, where, None, how)
    _use_dv_check(how)
    return _run(storage, branch, plan)


def _use_dv_check(how: str | None) -> None:
    if how not in HOW:
        raise Unsupported(f"delete/update mode {how!r} is not one of copy-on-write, deletion-vectors", feature="row-level-mode")


def update(storage: Storage, set: Mapping[str, str], where: str, *, how: str | None = None,  # noqa: A002 - the SQL word
           branch: str | None = None) -> SN.Snapshot | None:
    """UPDATE the table SET col = <SQL expr> WHERE ``where``; None when nothing matches."""
    _use_dv_check(how)
    if not set:
        raise InvalidTable("UPDATE needs at least one SET column")

    def plan(ctx: _Ctx) -> _Plan | None:
        if ctx.is_pk:
            return _pk_changes(ctx, where, set)
        return _append_changes(ctx, where, set, how)
    return _run(storage, branch, plan)


# ---------------------------------------------------------------------------------------------
# Compaction


def compact(storage: Storage, *, branch: str | None = None) -> SN.Snapshot | None:
    """Full compaction: each (partition, bucket) with more than one file (or deletes) becomes one file; COMPACT commit.

    Postpone-bucket tables: the ``bucket-postpone`` files are replayed (file by file in commit order, each in
    arrival order) into real buckets, hashed on the bucket key over the partition's bucket count (the count
    of its real buckets if it has any, else ``postpone.default-bucket-num``, else estimated from
    ``postpone.target-row-num-per-bucket`` or ``postpone.target-size-per-bucket`` as Java's
    ``PostponeUtils``), after the records already there; the postpone files are deleted."""
    def plan(ctx: _Ctx) -> _Plan | None:
        if not ctx.live:
            return None
        reader = ctx.reader()
        groups: dict[tuple[bytes, int], list[M.ManifestEntry]] = {}
        postponed: dict[tuple[bytes, int], pa.Table] = {}
        totals: dict[bytes, int] = {}
        entries: list[dict[str, Any]] = []
        post = [e for e in ctx.live if e.bucket == L.POSTPONE_BUCKET]
        for e in ctx.live:
            if e.bucket != L.POSTPONE_BUCKET:
                groups.setdefault((e.partition, e.bucket), []).append(e)
                totals.setdefault(e.partition, e.total_buckets)
        if post:
            entries += [_deleted(e) for e in post]
            for (part, b), records in _route_postponed(ctx, reader, post, totals).items():
                postponed[(part, b)] = records
                groups.setdefault((part, b), [])
        dv_files = {(e.partition, e.bucket, n) for e in ctx.index if e.index_file.dv_ranges
                    for n in e.index_file.dv_ranges}
        top = int(ctx.schema.options.get("num-levels") or DEFAULT_NUM_LEVELS) - 1 if ctx.is_pk else 0
        cleared: set[tuple[bytes, int]] = set()
        for (part, b), es in groups.items():
            extra = postponed.get((part, b))
            if ctx.is_pk:
                if extra is None and len(es) == 1 and es[0].file.level == top and not es[0].file.delete_row_count:
                    continue
                rows, seqs = _merged(ctx, reader, es, extra)
                kinds = np.zeros(rows.num_rows, dtype=np.int8)
            else:
                if len(es) == 1 and (part, b, es[0].file.file_name) not in dv_files:
                    continue
                rows = pa.concat_tables([reader.read(e, ctx.schema.fields, primary_key=False) for e in es])
                lo = min(e.file.min_sequence_number for e in es)
                seqs = np.arange(lo, lo + rows.num_rows, dtype=np.int64)
                kinds = None
            entries += [_deleted(e) for e in es]
            cleared.add((part, b))
            if rows.num_rows:
                total = es[0].total_buckets if es else totals[part]
                entries.append(_write_file(ctx, rows, partition=ctx.partition_values(part), bucket=b,
                                           total_buckets=total, level=top, seq_start=0, kinds=kinds,
                                           source=M.FILE_SOURCE_COMPACT, seqs=seqs))
        if not entries:
            return None
        index = None
        if cleared & _dv_buckets(ctx):
            index = [e for e in ctx.index if not (e.index_file.index_type == M.DELETION_VECTORS_INDEX
                                                  and (e.partition, e.bucket) in cleared)]
        return _Plan("COMPACT", entries, index, None)
    return _run(storage, branch, plan)


_MEMORY_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10, "m": 1 << 20,
                 "mb": 1 << 20, "mebibytes": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
                 "t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40}


def _memory_size(text: str, key: str) -> int:
    """Java ``MemorySize.parse``: a number and an optional binary unit."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if m is None or m.group(2).lower() not in _MEMORY_UNITS:
        raise InvalidTable(f"option {key}={text!r} is not a memory size")
    return int(m.group(1)) * _MEMORY_UNITS[m.group(2).lower()]


def _postpone_bucket_num(ctx: _Ctx, rows: int, size: int) -> int:
    """A partition's bucket count when its postpone files first get real buckets (PostponeUtils)."""
    opts = ctx.schema.options
    configured = (opts.get("postpone.default-bucket-num") or "").strip()
    if configured:
        n = SC._java_int(configured)
        if n is None or n <= 0:
            raise InvalidTable(f"postpone.default-bucket-num={configured!r} must be a positive int")
        return n
    by_rows = (opts.get("postpone.target-row-num-per-bucket") or "").strip()
    if by_rows:
        value, target, key = rows, int(by_rows), "postpone.target-row-num-per-bucket"
    else:
        key = "postpone.target-size-per-bucket"
        value, target = size, _memory_size(opts.get(key) or "1 gb", key)
    if target <= 0:
        raise InvalidTable(f"option {key} must be greater than 0")
    return 1 if value <= 0 else (value - 1) // target + 1


def _route_postponed(ctx: _Ctx, reader: TB._Reader, post: list[M.ManifestEntry],
                     totals: dict[bytes, int]) -> dict[tuple[bytes, int], pa.Table]:
    """The postpone files' records per (partition, real bucket), in replay order (commit order, then arrival
    order within a file); ``totals`` gains the bucket count of partitions that had no real bucket."""
    key_fields = ctx.key_fields
    by_part: dict[bytes, list[M.ManifestEntry]] = {}
    for e in post:
        by_part.setdefault(e.partition, []).append(e)
    schema = ctx.schema
    bucket_fields = [schema.get_field(k) for k in schema.bucket_keys]
    fn = schema.option(SC.BUCKET_FUNCTION_TYPE) or "default"
    out: dict[tuple[bytes, int], pa.Table] = {}
    for part, es in by_part.items():
        if part not in totals or totals[part] <= 0:
            totals[part] = _postpone_bucket_num(ctx, sum(e.file.row_count for e in es), sum(e.file.file_size for e in es))
        n = totals[part]
        pieces = [reader.read(e, schema.fields, primary_key=True, key_fields=key_fields) for e in es]
        records = pa.concat_tables([p.select(pieces[0].column_names) for p in pieces])
        cols = [_pylist(records.column(f.name)) for f in bucket_fields]
        types = [f.type for f in bucket_fields]
        buckets = np.array([BK.bucket([c[i] for c in cols], types, n, fn) for i in range(records.num_rows)], dtype=np.int64)
        for b in np.unique(buckets):
            out[(part, int(b))] = records.filter(pa.array(buckets == b))
    return out


def _merged(ctx: _Ctx, reader: TB._Reader, es: list[M.ManifestEntry],
            extra: pa.Table | None = None) -> tuple[pa.Table, np.ndarray]:
    """The merged rows of one bucket (merge engine, deletes dropped) and, per row, its key's largest sequence number.
    ``extra``: records (as read, with system columns) that come after the bucket's files, in order."""
    schema = ctx.schema
    key_fields = ctx.key_fields
    keys = [f.name for f in key_fields]
    spec = MG.MergeSpec.from_options(schema.options, schema.field_names, schema.primary_keys)  # see table.py
    full = arrow_schema(schema.fields)
    pieces = [reader.read(e, schema.fields, primary_key=True, key_fields=key_fields) for e in es]
    if extra is not None and extra.num_rows:
        start = max([e.file.max_sequence_number for e in es], default=-1) + 1
        seq = pa.array(np.arange(start, start + extra.num_rows, dtype=np.int64))
        pieces.append(extra.set_column(extra.schema.get_field_index(DF.SEQUENCE_NUMBER.name), DF.SEQUENCE_NUMBER.name, seq))
    records = TB._conform(pieces, pa.schema(list(full) + [pa.field(DF.SEQUENCE_NUMBER.name, pa.int64(), nullable=False),
                                                          pa.field(DF.VALUE_KIND.name, pa.int8(), nullable=False)]))
    rows = MG.merge(records, spec, full)
    if not rows.num_rows:
        return rows, np.zeros(0, np.int64)
    top = records.group_by(keys).aggregate([(DF.SEQUENCE_NUMBER.name, "max")])
    # join on the key columns alone (Arrow joins carry no nested non-key columns)
    joined = rows.select(keys).append_column("__pos", pa.array(np.arange(rows.num_rows), pa.int64())).join(
        top, keys, join_type="left outer").sort_by("__pos")
    return rows, joined.column(f"{DF.SEQUENCE_NUMBER.name}_max").to_numpy()


# ---------------------------------------------------------------------------------------------
# Tags, branches, expiration


def _java_local_datetime(now: dt.datetime) -> list[int]:
    """Jackson's LocalDateTime array (trailing zero seconds/nanos dropped as Jackson does)."""
    out = [now.year, now.month, now.day, now.hour, now.minute]
    nanos = now.microsecond * 1000
    if now.second or nanos:
        out.append(now.second)
        if nanos:
            out.append(nanos)
    return out


def create_tag(storage: Storage, name: str, snapshot_id: int | None = None, *, branch: str | None = None) -> SN.Tag:
    """``tag/tag-<name>``: the snapshot's JSON plus ``tagCreateTime``; InvalidTable if the tag exists."""
    layout = _layout(storage, branch)
    L.check_ref_name(name, "tag")
    snap = SN.load_snapshot(storage, snapshot_id, layout) if snapshot_id is not None else SN.latest_snapshot(storage, layout)
    if snap is None:
        raise InvalidTable("cannot tag a table without snapshots: commit first")
    node = SN.snapshot_to_dict(snap)
    node[SN.TAG_CREATE_TIME] = _java_local_datetime(dt.datetime.now())
    try:
        storage.put_if_absent(layout.tag_path(name), json.dumps(node, indent=2).encode())
    except CommitConflict:
        raise InvalidTable(f"tag {name!r} already exists", hint="delete it first or choose another name") from None
    return SN.load_tag(storage, name, layout)


def create_branch(storage: Storage, name: str, snapshot_id: int | None = None, *, tag: str | None = None) -> L.Layout:
    """``branch/branch-<name>/``: schemas up to the source snapshot's (Java copySchemasToBranch), and from a
    tag the tag and its snapshot file, from a snapshot id that snapshot file; empty source: the latest schema only."""
    L.check_ref_name(name, "branch")
    if name == L.MAIN_BRANCH or L.versioned_id(name, "") is not None:
        raise InvalidTable(f"branch name {name!r} is reserved or numeric (Java refuses it)")
    target = L.Layout(name)
    if storage.list(target.schema_dir) or storage.list(target.snapshot_dir):
        raise InvalidTable(f"branch {name!r} already exists")
    if tag is not None and snapshot_id is not None:
        raise InvalidTable("create a branch from a tag or from a snapshot id, not both")
    copies: list[tuple[str, bytes]] = []
    if tag is not None:
        t = SN.load_tag(storage, tag)
        schema_id, snap_id = t.schema_id, t.id
        copies.append((target.tag_path(tag), storage.read(L.MAIN.tag_path(tag))))
    elif snapshot_id is not None:
        snap = SN.load_snapshot(storage, snapshot_id)
        schema_id, snap_id = snap.schema_id, snap.id
    else:
        latest = SC.latest_schema(storage)
        if latest is None:
            raise InvalidTable("no Paimon table to branch: create it first")
        schema_id, snap_id = latest.id, None
    for sid in SC.schema_ids(storage):
        if sid <= schema_id:
            copies.insert(0, (target.schema_path(sid), storage.read(L.MAIN.schema_path(sid))))
    if snap_id is not None:  # last: the branch is readable once its snapshot appears
        copies.append((target.snapshot_path(snap_id), storage.read(L.MAIN.snapshot_path(snap_id))))
    for path, data in copies:
        storage.put_if_absent(path, data)
    return target


def _named_files(storage: Storage, snap: SN.Snapshot, layout: L.Layout) -> tuple[set[str], set[str]]:
    """(manifest-dir and index-dir files, data files) a snapshot needs, as root-relative paths."""
    meta: set[str] = set()
    for lst in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list):
        if lst is None:
            continue
        meta.add(layout.manifest_path(lst))
        for m in M.load_manifest_list(storage, lst):
            meta.add(layout.manifest_path(m.file_name))
    if snap.index_manifest:
        meta.add(layout.manifest_path(snap.index_manifest))
        for e in M.live_index_files(storage, snap):
            meta.add(layout.index_path(e.index_file.file_name))
    data: set[str] = set()
    schema = SC.load_schema(storage, snap.schema_id, layout)
    pfields = [schema.get_field(k) for k in schema.partition_keys]
    for e in M.live_files(storage, snap) + M.changelog_files(storage, snap):
        values = BR.deserialize_with_arity(e.partition, [f.type for f in pfields])[0]
        data.add(DF.data_file_path(e.file.file_name, bucket=e.bucket, partition_path=TB.partition_path(values, pfields, schema),
                                   data_dir=schema.options.get(SC.DATA_FILE_PATH_DIRECTORY)))
    return meta, data


def expire_snapshots(storage: Storage, retain_last: int) -> list[int]:
    """Delete all but the last ``retain_last`` snapshots of the main branch and the files only they needed
    (files of tags and branches are kept); refresh EARLIEST. Returns the expired ids."""
    if isinstance(retain_last, bool) or not isinstance(retain_last, int) or retain_last < 1:
        raise InvalidTable(f"retain_last must be >= 1 (Java snapshot.num-retained.min), got {retain_last!r}")
    ids = SN.snapshot_ids(storage)
    expired, kept = ids[:-retain_last], ids[-retain_last:]
    if not expired:
        return []
    keep_meta: set[str] = set()
    keep_data: set[str] = set()
    sources: list[tuple[SN.Snapshot, L.Layout]] = [(SN.load_snapshot(storage, i), L.MAIN) for i in kept]
    sources += [(SN.load_tag(storage, n), L.MAIN) for n in SN.tag_names(storage)]
    for b in L.list_branches(storage):
        bl = L.Layout(b)
        sources += [(s, bl) for s in SN.list_snapshots(storage, bl)]
        sources += [(SN.load_tag(storage, n, bl), bl) for n in SN.tag_names(storage, bl)]
    for s, layout in sources:
        meta, data = _named_files(storage, s, layout)
        keep_meta |= meta
        keep_data |= data
    drop: set[str] = set()
    for i in expired:
        meta, data = _named_files(storage, SN.load_snapshot(storage, i), L.MAIN)
        drop |= (meta - keep_meta) | (data - keep_data)
    # EARLIEST first, then the snapshot files oldest first: a reader never sees a gap below the hint.
    storage.write_atomic(L.MAIN.hint_path(L.EARLIEST), str(kept[0]).encode())
    for i in expired:
        storage.delete(L.MAIN.snapshot_path(i))
    for path in sorted(drop):
        storage.delete(path)
    return expired


__all__ = ["create_table", "write", "delete", "update", "overwrite", "compact", "set_options", "add_column",
           "rename_column", "drop_column", "change_column_type", "move_column", "create_tag", "create_branch",
           "expire_snapshots", "paimon_type"]
