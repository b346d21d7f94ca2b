"""Encoders the Hudi writer needs for metadata: the table's Avro schema, commit metadata, plans, rollback metadata.

* ``arrow_to_avro_schema``: the Avro schema Spark + Hudi record for a table (``<name>_record`` in namespace
  ``hoodie.<name>``, every field a ``["null", T]`` union with default null, as Spark's ``SchemaConverters`` makes
  nullable columns), with or without the five ``_hoodie_*`` meta fields (log block ``SCHEMA`` headers and the
  base files' ``parquet.avro.schema`` carry them; commit metadata does not).
* ``encode_commit_metadata``: ``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata`` as table version 6
  writes it (Jackson JSON) or as version 8+ writes it (an Avro object container of one record). The Avro schemas
  below carry the field names, order and types of the records Hudi 1.2.0 wrote into the scratch tables (read
  from those files' writer schemas); the code that fills them is ours.
* ``encode_avro_record``: any of the plan / rollback records (Avro in every table version).
"""

from __future__ import annotations

import io
import json
from typing import Any, Mapping, Sequence

import pyarrow as pa

from reference_impl.errors import Unsupported
from reference_impl.hudi import avro_schema as AS

_S = {"type": "string", "avro.java.string": "String"}
_NS = ["null", _S]


def _opt(name: str, t: Any) -> dict:
    return {"name": name, "type": ["null", t], "default": None}


# HoodieWriteStat (Hudi 1.2.0, as recorded in the scratch tables' commit files).
WRITE_STAT = {"type": "record", "name": "HoodieWriteStat", "namespace": "org.apache.hudi.avro.model", "fields": [
    _opt("fileId", _S), _opt("path", _S), _opt("prevCommit", _S), _opt("numWrites", "long"),
    _opt("numDeletes", "long"), _opt("numUpdateWrites", "long"), _opt("totalWriteBytes", "long"),
    _opt("totalWriteErrors", "long"), _opt("partitionPath", _S), _opt("totalLogRecords", "long"),
    _opt("totalLogFiles", "long"), _opt("totalUpdatedRecordsCompacted", "long"), _opt("numInserts", "long"),
    _opt("totalLogBlocks", "long"), _opt("totalCorruptLogBlock", "long"), _opt("totalRollbackBlocks", "long"),
    _opt("fileSizeInBytes", "long"), _opt("logVersion", "int"), _opt("logOffset", "long"), _opt("baseFile", _S),
    {"name": "logFiles", "type": ["null", {"type": "array", "items": _S, "default": None}], "default": None},
    {"name": "cdcStats", "type": ["null", {"type": "map", "values": "long", "avro.java.string": "String",
                                           "default": None}], "default": None},
    _opt("prevBaseFile", _S), _opt("minEventTime", "long"), _opt("maxEventTime", "long"),
    _opt("runtimeStats", {"type": "record", "name": "HoodieRuntimeStats", "fields": [
        _opt("totalScanTime", "long"), _opt("totalCreateTime", "long"), _opt("totalUpsertTime", "long")]}),
    _opt("totalLogFilesCompacted", "long"), _opt("totalLogReadTimeMs", "long"), _opt("totalLogSizeCompacted", "long"),
    _opt("tempPath", _S), _opt("numUpdates", "long")]}

_COMMIT_FIELDS = [
    {"name": "partitionToWriteStats", "type": ["null", {"type": "map", "avro.java.string": "String",
                                                        "values": {"type": "array", "items": WRITE_STAT}}],
     "default": None},
    _opt("compacted", "boolean"),
    {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S, "avro.java.string": "String",
                                                "default": None}], "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1},
    _opt("operationType", _S),
]
COMMIT_METADATA = {"type": "record", "name": "HoodieCommitMetadata", "namespace": "org.apache.hudi.avro.model",
                   "fields": _COMMIT_FIELDS}
REPLACE_COMMIT_METADATA = {
    "type": "record", "name": "HoodieReplaceCommitMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": _COMMIT_FIELDS + [{"name": "partitionToReplaceFileIds", "default": None, "type": [
        "null", {"type": "map", "avro.java.string": "String", "values": {"type": "array", "items": _S}}]}]}

_STRMAP = {"type": "map", "values": _S, "avro.java.string": "String"}

COMPACTION_PLAN = {"type": "record", "name": "HoodieCompactionPlan", "namespace": "org.apache.hudi.avro.model",
                   "fields": [
    {"name": "operations", "default": None, "type": ["null", {"type": "array", "items": {
        "type": "record", "name": "HoodieCompactionOperation", "fields": [
            {"name": "baseInstantTime", "type": _NS},
            {"name": "deltaFilePaths", "default": None, "type": ["null", {"type": "array", "items": _S}]},
            _opt("dataFilePath", _S),
            {"name": "fileId", "type": _NS},
            _opt("partitionPath", _S),
            _opt("metrics", {"type": "map", "values": "double", "avro.java.string": "String"}),
            _opt("bootstrapFilePath", _S)]}}]},
    _opt("extraMetadata", _STRMAP),
    {"name": "version", "type": ["int", "null"], "default": 1},
    _opt("strategy", {"type": "record", "name": "HoodieCompactionStrategy", "fields": [
        _opt("compactorClassName", _S), _opt("strategyParams", _STRMAP),
        {"name": "version", "type": ["int", "null"], "default": 1}]}),
    {"name": "preserveHoodieMetadata", "type": ["boolean", "null"], "default": False},
    {"name": "missingSchedulePartitions", "default": None, "type": ["null", {"type": "array", "items": _S}]}]}

REQUESTED_REPLACE = {"type": "record", "name": "HoodieRequestedReplaceMetadata",
                     "namespace": "org.apache.hudi.avro.model", "fields": [
    _opt("operationType", _S),
    _opt("clusteringPlan", {"type": "record", "name": "HoodieClusteringPlan", "fields": [
        {"name": "inputGroups", "default": None, "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieClusteringGroup", "fields": [
                {"name": "slices", "default": None, "type": ["null", {"type": "array", "items": {
                    "type": "record", "name": "HoodieSliceInfo", "fields": [
                        _opt("dataFilePath", _S),
                        {"name": "deltaFilePaths", "default": None, "type": ["null", {"type": "array", "items": _S}]},
                        {"name": "fileId", "type": _NS}, _opt("partitionPath", _S), _opt("bootstrapFilePath", _S),
                        {"name": "version", "type": ["int", "null"], "default": 1}]}}]},
                _opt("metrics", {"type": "map", "values": "double", "avro.java.string": "String"}),
                {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                _opt("extraMetadata", _STRMAP),
                {"name": "version", "type": ["int", "null"], "default": 1}]}}]},
        _opt("strategy", {"type": "record", "name": "HoodieClusteringStrategy", "fields": [
            _opt("strategyClassName", _S), _opt("strategyParams", _STRMAP),
            {"name": "version", "type": ["int", "null"], "default": 1}]}),
        _opt("extraMetadata", _STRMAP),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt("preserveHoodieMetadata", "boolean"),
        {"name": "missingSchedulePartitions", "default": None, "type": ["null", {"type": "array", "items": _S}]}]}),
    _opt("extraMetadata", _STRMAP),
    {"name": "version", "type": ["int", "null"], "default": 1}]}

_INSTANT_INFO = {"type": "record", "name": "HoodieInstantInfo", "fields": [{"name": "commitTime", "type": _S},
                                                                          {"name": "action", "type": _S}]}
ROLLBACK_PLAN = {"type": "record", "name": "HoodieRollbackPlan", "namespace": "org.apache.hudi.avro.model", "fields": [
    _opt("instantToRollback", _INSTANT_INFO),
    {"name": "RollbackRequests", "default": None, "type": ["null", {"type": "array", "items": {
        "type": "record", "name": "HoodieRollbackRequest", "fields": [
            {"name": "partitionPath", "type": _S}, _opt("fileId", _S), _opt("latestBaseInstant", _S),
            {"name": "filesToBeDeleted", "type": {"type": "array", "items": _S, "default": []}, "default": []},
            _opt("logBlocksToBeDeleted", {"type": "map", "values": "long", "avro.java.string": "String"})]}}]},
    {"name": "version", "type": ["int", "null"], "default": 1}]}

ROLLBACK_METADATA = {"type": "record", "name": "HoodieRollbackMetadata", "namespace": "org.apache.hudi.avro.model",
                     "fields": [
    {"name": "startRollbackTime", "type": _S}, {"name": "timeTakenInMillis", "type": "long"},
    {"name": "totalFilesDeleted", "type": "int"},
    {"name": "commitsRollback", "type": {"type": "array", "items": _S}},
    {"name": "partitionMetadata", "type": {"type": "map", "avro.java.string": "String", "values": {
        "type": "record", "name": "HoodieRollbackPartitionMetadata", "fields": [
            {"name": "partitionPath", "type": _S},
            {"name": "successDeleteFiles", "type": {"type": "array", "items": _S}},
            {"name": "failedDeleteFiles", "type": {"type": "array", "items": _S}},
            _opt("rollbackLogFiles", {"type": "map", "values": "long", "avro.java.string": "String"}),
            _opt("logFilesFromFailedCommit", {"type": "map", "values": "long", "avro.java.string": "String"})]}}},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "instantsRollback", "default": [], "type": {"type": "array", "items": _INSTANT_INFO, "default": []}}]}


def encode_avro_record(schema: Mapping[str, Any], record: Mapping[str, Any]) -> bytes:
    """An Avro object container holding one record (no codec, as ``TimelineMetadataUtils`` writes it)."""
    import fastavro

    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(json.loads(json.dumps(schema))), [dict(record)])
    return buf.getvalue()


_STAT_DEFAULTS = {"numWrites": 0, "numDeletes": 0, "numUpdateWrites": 0, "totalWriteBytes": 0, "totalWriteErrors": 0,
                  "totalLogRecords": 0, "totalUpdatedRecordsCompacted": 0, "numInserts": 0, "totalLogBlocks": 0,
                  "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": 0,
                  "totalLogFilesCompacted": 0, "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0, "numUpdates": 0}


def full_stat(stat: Mapping[str, Any]) -> dict:
    """A write stat with Java's zero counters filled in (what both encodings carry)."""
    out = dict(_STAT_DEFAULTS)
    out.update({"prevCommit": "null", "runtimeStats": {"totalScanTime": 0, "totalCreateTime": 0,
                                                       "totalUpsertTime": 0}})
    out.update(stat)
    return out


def encode_commit_metadata(stats: Mapping[str, Sequence[Mapping[str, Any]]], *, table_version: int,
                           operation: str, schema: str | None, compacted: bool = False,
                           replaced: Mapping[str, Sequence[str]] | None = None,
                           extra: Mapping[str, str] | None = None) -> bytes:
    """Commit (or, with ``replaced``, replace commit) metadata: JSON for table version 6, Avro from version 8.

    ``extra``: more ``extraMetadata`` entries after ``schema`` (a schema-on-read table's ``latest_schema``)."""
    node: dict[str, Any] = {
        "partitionToWriteStats": {p: [full_stat(s) for s in ss] for p, ss in stats.items()},
        "compacted": compacted,
        "extraMetadata": ({"schema": schema} if schema else {}) | dict(extra or {}),
        "operationType": operation,
    }
    if replaced is not None:
        node["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in replaced.items()}
    if table_version < 8:
        # Jackson (HoodieCommitMetadata.toJsonString): pretty-printed, camelCase, no "version" key.
        return json.dumps(node, indent=2).encode("utf-8")
    node["version"] = None
    if replaced is not None:
        return encode_avro_record(REPLACE_COMMIT_METADATA, node)
    return encode_avro_record(COMMIT_METADATA, node)


# ---------------------------------------------------------------------------------------------
# Arrow -> Avro table schema


def _avro_type(t: pa.DataType, name: str, ns: str, internal: bool = False) -> Any:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_decimal(t):
        return {"type": "fixed", "name": "fixed", "namespace": f"{ns}.{name}",
                "size": _decimal_size(t.precision), "logicalType": "decimal",
                "precision": t.precision, "scale": t.scale}
    if pa.types.is_timestamp(t):
        if t.unit not in ("ms", "us"):
            raise Unsupported(f"column {name!r}: timestamp[{t.unit}] has no Avro type Hudi writes; use ms or us",
                              feature="hudi-write-type:timestamp-" + t.unit)
        unit = "millis" if t.unit == "ms" else "micros"
        return {"type": "long", "logicalType": f"timestamp-{unit}" if t.tz else f"local-timestamp-{unit}"}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if internal:  # AvroInternalSchemaConverter: an element record is named after its column
            return {"type": "array", "items": ["null", _avro_type(t.value_type, name, ns, internal)]}
        return {"type": "array", "items": ["null", _avro_type(t.value_type, "array", f"{ns}.{name}")]}
    if pa.types.is_map(t):
        if not pa.types.is_string(t.key_type):
            raise Unsupported(f"column {name!r}: map keys must be strings in Avro", feature="hudi-write-type:map-key")
        if internal:
            return {"type": "map", "values": ["null", _avro_type(t.item_type, name, ns, internal)]}
        return {"type": "map", "values": ["null", _avro_type(t.item_type, "value", f"{ns}.{name}")]}
    if pa.types.is_struct(t):
        sub = f"{ns}.{name}"
        return {"type": "record", "name": name, "namespace": sub.rsplit(".", 1)[0], "fields": [
            {"name": t.field(i).name, "type": ["null", _avro_type(t.field(i).type, t.field(i).name, sub, internal)],
             "default": None} for i in range(t.num_fields)]}
    raise Unsupported(f"column {name!r} of type {t} has no Avro type in the writer", feature=f"hudi-write-type:{t}")


def _decimal_size(precision: int) -> int:
    """Spark's ``minBytesForPrecision``: the fewest bytes whose two's complement holds 10^precision - 1."""
    n = 1
    while 2 ** (8 * n - 1) < 10 ** precision:
        n += 1
    return n


def arrow_to_avro_schema(schema: pa.Schema, table_name: str, *, with_meta: bool = False, internal: bool = False) -> str:
    """The table's Avro schema text (``<name>_record``, namespace ``hoodie.<name>``, nullable fields).

    ``internal``: as Hudi converts an InternalSchema back to Avro (a schema-on-read table's commits): the record of
    an array element or map value is named after its column, in the column's namespace."""
    ns = f"hoodie.{table_name}"
    rec = f"{table_name}_record"
    fields = []
    if with_meta:
        fields += [{"name": m, "type": ["null", "string"], "doc": "", "default": None} for m in AS.META_COLUMNS]
    for f in schema:
        fields.append({"name": f.name, "type": ["null", _avro_type(f.type, f.name, f"{ns}.{rec}", internal)],
                       "default": None})
    return json.dumps({"type": "record", "name": rec, "namespace": ns, "fields": fields}, separators=(",", ":"))


def avro_with_meta(avro_text: str) -> str:
    """``avro_text`` (a table schema without meta fields) with the five meta fields first."""
    node = json.loads(avro_text)
    names = {f["name"] for f in node["fields"]}
    meta = [{"name": m, "type": ["null", "string"], "doc": "", "default": None} for m in AS.META_COLUMNS
            if m not in names]
    node["fields"] = meta + node["fields"]
    return json.dumps(node, separators=(",", ":"))


__all__ = ["encode_commit_metadata", "encode_avro_record", "full_stat", "arrow_to_avro_schema", "avro_with_meta",
           "COMMIT_METADATA", "REPLACE_COMMIT_METADATA", "COMPACTION_PLAN", "REQUESTED_REPLACE", "ROLLBACK_PLAN",
           "ROLLBACK_METADATA", "WRITE_STAT"]
