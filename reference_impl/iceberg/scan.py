"""Scan Planning: the data files of a snapshot and, for each, the delete files that apply to it.

A scan reads the snapshot's manifests and ignores DELETED entries. A delete file applies to a data
file as the spec's scope rules say, on *data* sequence numbers (file sequence numbers never
decide) and on partitions compared as (spec id, partition values), float values by their bits
with NaN normalised and unknown transforms included:

* a deletion vector applies when its ``referenced_data_file`` is the data file's path and its
  sequence number is >= the data file's;
* a position delete file applies when its ``referenced_data_file`` (if set) is the data file's
  path, its sequence number is >= the data file's, the partitions are equal, and no DV applies
  (a DV holds every earlier position delete of its file, so readers skip the files);
* an equality delete file applies when its sequence number is strictly greater and the
  partitions are equal, or its spec is unpartitioned (a global delete; a spec of only ``void``
  fields is unpartitioned too, as Java decides).

A delete that names the data file's path but sits in another partition or spec contradicts the
data file's own entry: the metadata is corrupt and planning says so (``InvalidTable``) rather
than guess, as Java does since apache/iceberg#16957. Two DVs for one data file break "at most one
DV per data file" (DV-009) and are refused too.

Manifests are read through ``read_live_entries``: the same result as ``manifests.read_manifest``
followed by inheritance and dropping DELETED entries, decoded in one pass over fastavro's records
for speed on big snapshots. It handles the ordinary shape only; anything unusual (a damaged or
odd schema, a value of the wrong type, a missing required field) goes to ``read_manifest``, which
reports it with the rule it breaks. A scan returns data files without their column stats unless
asked (as Java's scans do); big manifests of such a scan are decoded by Polars' Avro reader, whose
records are turned into entries by the same code.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import functools
import io
import json
import math
import os
import struct
from dataclasses import dataclass
from typing import Any, Callable

import fastavro

from reference_impl.common import bounded
from reference_impl.common.gcpause import gc_paused
from reference_impl.errors import InvalidTable
from reference_impl.iceberg import avro as A
from reference_impl.iceberg import deletes as D
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import types as T
from reference_impl.storage import Storage


@dataclass(frozen=True, slots=True, kw_only=True)
class FileScanTask:
    """One data file to read, the spec its manifest was written with, its data sequence number, and the deletes that apply."""

    data_file: MF.DataFile
    spec_id: int
    data_sequence_number: int
    deletes: tuple[MF.DataFile, ...] = ()


# ---------------------------------------------------------------------------------------------
# Reading manifests for planning


class _Fallback(Exception):
    """The fast path met something it does not handle: read the manifest the canonical way."""


_FIXED_WIDTH = {"null": 0, "boolean": 1, "int": 1, "long": 1, "float": 4, "double": 8, "bytes": 1, "string": 1, "enum": 1}


def _min_width(schema: Any, named: dict[str, Any], depth: int = 0) -> int:
    """The fewest bytes one value of an Avro schema takes; raises _Fallback for an array or map of 0-byte items.

    fastavro reads arrays item by item and stops at the end of the block, so a damaged count can
    never make it allocate more items than there are bytes, unless an item can take no bytes at all.
    """
    if depth > 64:
        raise _Fallback("schema nests too deeply")
    if isinstance(schema, str):
        if schema in _FIXED_WIDTH:
            return _FIXED_WIDTH[schema]
        if schema in named:
            return _min_width(named[schema], named, depth + 1)
        raise _Fallback(f"unknown Avro type {schema!r}")
    if isinstance(schema, list):
        for branch in schema:
            _min_width(branch, named, depth + 1)
        return 1  # the branch index
    if not isinstance(schema, dict):
        raise _Fallback("bad Avro schema node")
    kind = schema.get("type")
    if isinstance(schema.get("name"), str) and kind in ("record", "fixed", "enum"):
        named[schema["name"]] = schema
    if kind == "record":
        fields = schema.get("fields")
        if not isinstance(fields, list):
            raise _Fallback("record without fields")
        return sum(_min_width(f.get("type") if isinstance(f, dict) else None, named, depth + 1) for f in fields)
    if kind == "fixed":
        size = schema.get("size")
        return size if isinstance(size, int) and size >= 0 else 0
    if kind in ("array", "map"):
        item = schema.get("items" if kind == "array" else "values")
        if _min_width(item, named, depth + 1) == 0 and kind == "array":
            raise _Fallback("an array of items that take no bytes")
        return 1
    if kind == "enum":
        return 1
    return _min_width(kind, named, depth + 1)


_SIMPLE_PARTITION_TYPES = (T.STRING, T.INT, T.LONG, T.BOOLEAN, T.BINARY)


class _ManifestShape:
    """What one manifest schema (Avro header + key-value metadata) tells the decoder, computed once per distinct shape."""

    def __init__(self, schema: dict, meta: dict[str, str], table_version: int | None, path: str | None) -> None:
        _min_width(schema, {})
        self.schema = schema
        self.mmeta = MF.parse_manifest_metadata(meta, path=path, table_version=table_version)
        ef = MF._Fields(schema, "manifest_entry", path, "ICEBERG-GEN-005")
        if not (ef.has(MF.ID_STATUS) and ef.has(MF.ID_DATA_FILE)):
            raise _Fallback("manifest_entry lacks status or data_file")
        dschema = ef.sub(MF.ID_DATA_FILE)
        if not isinstance(dschema, dict):
            raise _Fallback("data_file is not a record")
        df = MF._Fields(dschema, "data_file", path, "ICEBERG-GEN-005")
        for fid in (MF.ID_FILE_PATH, MF.ID_FILE_FORMAT, MF.ID_PARTITION, MF.ID_RECORD_COUNT, MF.ID_FILE_SIZE):
            if not df.has(fid):
                raise _Fallback(f"data_file lacks field {fid}")
        pschema = df.sub(MF.ID_PARTITION)
        file_ptype = A.from_avro_schema(pschema) if isinstance(pschema, dict) else T.StructType()
        if [f.id for f in file_ptype.fields] != [f.field_id for f in self.mmeta.spec.fields]:
            raise _Fallback("partition struct ids do not match the spec")
        try:
            ptype = P.partition_type(self.mmeta.spec, self.mmeta.schema)
        except InvalidTable:
            raise _Fallback("partition type from the manifest schema") from None
        names = {f.id: f.name for f in file_ptype.fields}
        self.partition = [(f.id, names[f.id], None if f.type in _SIMPLE_PARTITION_TYPES else f.type) for f in ptype.fields]

        def name(fields: MF._Fields, fid: int) -> str | None:
            return fields.by_id[fid]["name"] if fields.has(fid) else None

        self.status, self.snapshot_id = name(ef, MF.ID_STATUS), name(ef, MF.ID_SNAPSHOT_ID)
        self.seq, self.fseq, self.data_file = name(ef, MF.ID_SEQUENCE_NUMBER), name(ef, MF.ID_FILE_SEQUENCE_NUMBER), name(ef, MF.ID_DATA_FILE)
        self.columnar = True  # False once Polars' types for this shape proved to differ from fastavro's values
        self.d = {fid: name(df, fid) for fid in (
            MF.ID_CONTENT, MF.ID_FILE_PATH, MF.ID_FILE_FORMAT, MF.ID_PARTITION, MF.ID_RECORD_COUNT, MF.ID_FILE_SIZE,
            MF.ID_COLUMN_SIZES, MF.ID_VALUE_COUNTS, MF.ID_NULL_VALUE_COUNTS, MF.ID_NAN_VALUE_COUNTS, MF.ID_LOWER_BOUNDS,
            MF.ID_UPPER_BOUNDS, MF.ID_KEY_METADATA, MF.ID_SPLIT_OFFSETS, MF.ID_EQUALITY_IDS, MF.ID_SORT_ORDER_ID,
            MF.ID_FIRST_ROW_ID, MF.ID_REFERENCED_DATA_FILE, MF.ID_CONTENT_OFFSET, MF.ID_CONTENT_SIZE)}

    @functools.cached_property
    def stats_free_schema(self) -> dict | None:
        """The writer schema with the data file's column stats left out, parsed for fastavro (None: keep every field).

        fastavro then skips the stats' bytes instead of building ~25 dicts per entry: the stats are
        most of a manifest and are not needed when a scan neither prunes by them nor returns them.
        """
        schema = copy.deepcopy(self.schema)
        try:
            for f in schema["fields"]:
                if f.get("name") == self.data_file and isinstance(f.get("type"), dict):
                    f["type"]["fields"] = [x for x in f["type"]["fields"] if x.get("field-id") not in _STATS_IDS]
            return fastavro.parse_schema(schema)
        except Exception:  # noqa: BLE001 - e.g. a named type defined inside a stats field and used elsewhere
            return None


# The column metrics a scan drops unless asked (Java's copyWithoutStats); distinct_counts is never read.
_STATS_IDS = frozenset((MF.ID_COLUMN_SIZES, MF.ID_VALUE_COUNTS, MF.ID_NULL_VALUE_COUNTS, MF.ID_NAN_VALUE_COUNTS,
                        MF.ID_DISTINCT_COUNTS, MF.ID_LOWER_BOUNDS, MF.ID_UPPER_BOUNDS))


def _int_map(v: Any) -> dict | None:
    if v is None:
        return None
    if type(v) is list:
        return {e["key"]: e["value"] for e in v}
    return {int(k): x for k, x in v.items()}


def _int_tuple(v: Any) -> tuple | None:
    if v is None:
        return None
    out = tuple(v)
    for x in out:
        if type(x) is not int:
            raise _Fallback("a list of longs holds a non-integer")
    return out


# Spellings seen on the wire -> the one shared lower-case string (Java writes the enum name, e.g. PARQUET).
_FORMAT_NAMES = {**{f: f for f in MF.FILE_FORMATS}, **{f.upper(): f for f in MF.FILE_FORMATS}}


_ABSENT = "\x00absent"  # a field name no record has: ``rec.get(_ABSENT)`` is None, like an absent optional field


def _decode_live(records: list[dict], shape: _ManifestShape, mf: MF.ManifestFile) -> list[MF.ManifestEntry]:
    """The live entries of a manifest's records with inheritance applied (mirrors read_manifest + inherit_entries).

    Written for speed on big snapshots: names bound once, optional fields read through ``_ABSENT``.
    """
    mmeta = shape.mmeta
    v1_file = mmeta.format_version == 1
    v1_like = v1_file or mf.sequence_number == 0
    delete_manifest = mmeta.content == MF.MANIFEST_DELETES
    name = lambda x: x or _ABSENT  # noqa: E731
    n_status, n_snap, n_seq, n_fseq, n_df = shape.status, name(shape.snapshot_id), name(shape.seq), name(shape.fseq), shape.data_file
    d = {k: name(v) for k, v in shape.d.items()}
    n_content, n_path, n_fmt, n_part, n_rc, n_size = (d[MF.ID_CONTENT], d[MF.ID_FILE_PATH], d[MF.ID_FILE_FORMAT],
                                                      d[MF.ID_PARTITION], d[MF.ID_RECORD_COUNT], d[MF.ID_FILE_SIZE])
    n_cs, n_vc, n_nc, n_nan, n_lb, n_ub = (d[MF.ID_COLUMN_SIZES], d[MF.ID_VALUE_COUNTS], d[MF.ID_NULL_VALUE_COUNTS],
                                           d[MF.ID_NAN_VALUE_COUNTS], d[MF.ID_LOWER_BOUNDS], d[MF.ID_UPPER_BOUNDS])
    n_km, n_so, n_eq, n_sort, n_frid, n_ref, n_off, n_csz = (d[MF.ID_KEY_METADATA], d[MF.ID_SPLIT_OFFSETS], d[MF.ID_EQUALITY_IDS],
                                                             d[MF.ID_SORT_ORDER_ID], d[MF.ID_FIRST_ROW_ID], d[MF.ID_REFERENCED_DATA_FILE],
                                                             d[MF.ID_CONTENT_OFFSET], d[MF.ID_CONTENT_SIZE])
    partition_fields = shape.partition
    next_row_id = mf.first_row_id
    mseq = mf.sequence_number
    added_snapshot = mf.added_snapshot_id
    DataFile, ManifestEntry = MF.DataFile, MF.ManifestEntry
    ADDED, DELETED, DATA = MF.ADDED, MF.DELETED, MF.DATA
    statuses, contents, formats = frozenset(MF.STATUSES), frozenset((MF.DATA, MF.POSITION_DELETES, MF.EQUALITY_DELETES)), _FORMAT_NAMES
    parts: dict[tuple, dict] = {}
    from_avro = A.from_avro_value
    out = []
    append = out.append
    for rec in records:
        status = rec.get(n_status)
        if type(status) is not int or status not in statuses:
            raise _Fallback("bad status")
        snap, seq, fseq = rec.get(n_snap), rec.get(n_seq), rec.get(n_fseq)
        if v1_file and snap is None:
            raise _Fallback("v1 entry without snapshot_id")
        if (snap is not None and type(snap) is not int) or (seq is not None and type(seq) is not int) \
                or (fseq is not None and type(fseq) is not int):
            raise _Fallback("a snapshot id or sequence number is not an integer")
        if v1_like:
            seq = 0 if seq is None else seq
            fseq = 0 if fseq is None else fseq
        elif status == ADDED:
            seq = mseq if seq is None else seq
            fseq = mseq if fseq is None else fseq
        elif seq is None or fseq is None:
            raise _Fallback("EXISTING/DELETED entry without sequence numbers")
        if status == DELETED:
            continue
        df = rec.get(n_df)
        if type(df) is not dict:
            raise _Fallback("data_file is not a record")
        g = df.get
        content = g(n_content)
        if content is None:
            content = DATA
        if type(content) is not int or content not in contents or (content != DATA) != delete_manifest:
            raise _Fallback("bad content")
        path, fmt, rc, size = g(n_path), g(n_fmt), g(n_rc), g(n_size)
        if type(path) is not str or type(fmt) is not str or type(rc) is not int or type(size) is not int:
            raise _Fallback("bad required data_file field")
        fmt = formats.get(fmt)
        if fmt is None:
            raise _Fallback("bad file_format")
        raw_part = g(n_part)
        if type(raw_part) is not dict:
            raise _Fallback("partition is not a record")
        # Files of one partition share one (read-only) partition dict: less memory and time on big manifests.
        pkey = tuple(raw_part.get(fname) for _fid, fname, _t in partition_fields)
        part = parts.get(pkey)
        if part is None:
            part = {}
            for (fid, _fname, ftype), pv in zip(partition_fields, pkey):
                part[fid] = pv if ftype is None or pv is None else from_avro(pv, ftype)
            try:
                parts[pkey] = part
            except TypeError:  # an unhashable raw value: do not share
                pass
        first_row_id = g(n_frid)
        if next_row_id is None:
            first_row_id = None  # listed without first_row_id: a snapshot from before v3 has no row ids
        elif content == DATA and first_row_id is None:
            first_row_id = next_row_id
            next_row_id += rc
        cs, vc, nc, nan, lb, ub = g(n_cs), g(n_vc), g(n_nc), g(n_nan), g(n_lb), g(n_ub)
        so, eq, sort, off, csz = g(n_so), g(n_eq), g(n_sort), g(n_off), g(n_csz)
        if (first_row_id is not None and type(first_row_id) is not int) or (sort is not None and type(sort) is not int) \
                or (off is not None and type(off) is not int) or (csz is not None and type(csz) is not int):
            raise _Fallback("an integer field holds a non-integer")
        dfile = DataFile(
            content=content, file_path=path, file_format=fmt, partition=part, record_count=rc, file_size_in_bytes=size,
            column_sizes=None if cs is None else {e["key"]: e["value"] for e in cs} if type(cs) is list else _int_map(cs),
            value_counts=None if vc is None else {e["key"]: e["value"] for e in vc} if type(vc) is list else _int_map(vc),
            null_value_counts=None if nc is None else {e["key"]: e["value"] for e in nc} if type(nc) is list else _int_map(nc),
            nan_value_counts=None if nan is None else {e["key"]: e["value"] for e in nan} if type(nan) is list else _int_map(nan),
            lower_bounds=None if lb is None else {e["key"]: e["value"] for e in lb} if type(lb) is list else _int_map(lb),
            upper_bounds=None if ub is None else {e["key"]: e["value"] for e in ub} if type(ub) is list else _int_map(ub),
            key_metadata=g(n_km),
            split_offsets=None if so is None else _int_tuple(so),
            equality_ids=None if eq is None else _int_tuple(eq),
            sort_order_id=sort, first_row_id=first_row_id, referenced_data_file=g(n_ref),
            content_offset=off, content_size_in_bytes=csz,
        )
        append(ManifestEntry(status=status, data_file=dfile, snapshot_id=added_snapshot if snap is None else snap,
                             sequence_number=seq, file_sequence_number=fseq))
    return out


class ManifestReader:
    """Reads manifests for planning, remembering each distinct manifest shape (schema + metadata) once."""

    def __init__(self, table_version: int | None) -> None:
        self.table_version = table_version
        self._shapes: dict[tuple, _ManifestShape] = {}
        self.fallbacks = 0  # manifests read the canonical way (diagnostics and tests)

    def live_entries(self, data: bytes, mf: MF.ManifestFile, *, stats: bool = True) -> list[MF.ManifestEntry]:
        """ADDED and EXISTING entries of a manifest, inherited from its list entry ``mf`` (``stats=False``: data
        files without their column stats)."""
        path = mf.manifest_path
        try:
            bounded.check_avro_container(data, what="manifest", path=path)
            reader = fastavro.reader(io.BytesIO(data))
            meta = {k: (v.decode("utf-8", "replace") if isinstance(v, bytes) else v) for k, v in reader.metadata.items()}
            key = tuple(sorted(meta.items()))
            shape = self._shapes.get(key)
            if shape is None:
                schema = json.loads(meta["avro.schema"])
                if not isinstance(schema, dict) or schema.get("type") != "record":
                    raise _Fallback("schema is not a record")
                shape = _ManifestShape(schema, meta, self.table_version, path)
                self._shapes[key] = shape
            records = None
            if not stats and len(data) >= _polars_min_bytes():
                records = _polars_records(data, shape)
            if records is None:
                projected = None if stats else shape.stats_free_schema
                if projected is not None:
                    reader = fastavro.reader(io.BytesIO(data), reader_schema=projected)
                records = list(reader)
            return _decode_live(records, shape, mf)
        except Exception:  # noqa: BLE001 - any surprise goes to the canonical reader, which explains it
            self.fallbacks += 1
            manifest = MF.read_manifest(data, manifest_file=mf, path=path, table_version=self.table_version)
            live = [e for e in manifest.entries if e.is_live]
            return live if stats else [dataclasses.replace(e, data_file=without_stats(e.data_file)) for e in live]


def without_stats(f: MF.DataFile) -> MF.DataFile:
    """``f`` without its column stats (counts, sizes and bounds per column), as a scan returns it by default."""
    return dataclasses.replace(f, column_sizes=None, value_counts=None, null_value_counts=None, nan_value_counts=None,
                               lower_bounds=None, upper_bounds=None)


# Manifests at least this big (compressed) are decoded by Polars' Avro reader when a scan needs no
# column stats: it skips them about ten times faster than fastavro, which spends two thirds of its
# time on them. Below this, its fixed cost per call is not worth it. The environment variable
# overrides it (0: every manifest; the hostile-input campaign sends its mutants through Polars so).
POLARS_MIN_BYTES = 16 << 10
POLARS_MIN_BYTES_ENV = "LAKECONF_ICEBERG_POLARS_MIN_BYTES"


def _polars_min_bytes() -> int:
    raw = os.environ.get(POLARS_MIN_BYTES_ENV)
    return int(raw) if raw is not None and raw.strip().isdigit() else POLARS_MIN_BYTES


def _polars_records(data: bytes, shape: _ManifestShape) -> list[dict] | None:
    """The manifest's records as fastavro gives them, data files without column stats, decoded by Polars (None: read
    them with fastavro instead: Polars missing, or a field of a type whose Python value would differ from fastavro's).

    Called only after ``check_avro_container`` bounded every block, and ``_ManifestShape`` refused arrays of
    zero-byte items: Polars then reads array items one by one within a block, as fastavro does.
    """
    if not shape.columnar or any(ftype is not None for _fid, _name, ftype in shape.partition):
        return None
    try:
        import polars as pl
        from polars.exceptions import PanicException
    except ImportError:
        shape.columnar = False
        return None
    try:
        df = pl.read_avro(io.BytesIO(data))
        top = [n for n in (shape.status, shape.snapshot_id, shape.seq, shape.fseq) if n is not None and n in df.schema]
        dtype = df.schema.get(shape.data_file)
        wanted = {v for k, v in shape.d.items() if v is not None and k not in _STATS_IDS}
        sub = [f for f in dtype.fields if f.name in wanted] if isinstance(dtype, pl.Struct) else []
        if not sub or not all(_plain(f.dtype, pl) for f in sub) or not all(_plain(df.schema[n], pl) for n in top):
            shape.columnar = False  # a matter of the schema: the shape's other manifests go to fastavro directly
            return None
        df = df.select(*top, pl.struct(pl.col(shape.data_file).struct.field(*(f.name for f in sub))).alias(shape.data_file))
        return df.rows(named=True)
    except (Exception, PanicException):  # noqa: BLE001 - fastavro reads it, and the canonical reader explains a damage
        return None


def _plain(dtype: Any, pl: Any, depth: int = 0) -> bool:
    """Whether Polars gives a value of ``dtype`` as fastavro does (numbers, strings, bytes, lists and records of them)."""
    if dtype in (pl.Int32, pl.Int64, pl.String, pl.Binary, pl.Boolean, pl.Null):
        return True
    if depth < 2 and isinstance(dtype, pl.List):
        return _plain(dtype.inner, pl, depth + 1)
    if depth < 2 and isinstance(dtype, pl.Struct):
        return all(_plain(f.dtype, pl, depth + 1) for f in dtype.fields)
    return False


def read_live_entries(data: bytes, mf: MF.ManifestFile, *, table_version: int | None = None) -> list[MF.ManifestEntry]:
    """The live entries of one manifest (equal to ``read_manifest`` + inheritance, DELETED entries dropped)."""
    return ManifestReader(table_version).live_entries(data, mf)


# ---------------------------------------------------------------------------------------------
# Partition equality (Scan Planning notes 3 and 4)


_CANONICAL_NAN = struct.pack(">d", math.nan)


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        # Equal when the IEEE-754 bits are equal after NaN normalisation: -0.0 != 0.0, every NaN == NaN.
        return ("f", _CANONICAL_NAN if math.isnan(v) else struct.pack(">d", v))
    return v


def partition_key(spec: P.PartitionSpec, partition: dict[int, Any]) -> tuple:
    """(spec id, values): two files are in the same partition when their keys are equal."""
    return (spec.spec_id, tuple(_norm(partition.get(f.field_id)) for f in spec.fields))


# ---------------------------------------------------------------------------------------------
# The delete file index


class _BySeq:
    """Delete files sorted by data sequence number, for "seq >= n" / "seq > n" lookups."""

    __slots__ = ("items", "seqs", "_sorted")

    def __init__(self) -> None:
        self.items: list[tuple[int, MF.DataFile, tuple]] = []
        self.seqs: list[int] = []
        self._sorted = False

    def add(self, seq: int, f: MF.DataFile, key: tuple) -> None:
        self.items.append((seq, f, key))
        self._sorted = False

    def _sort(self) -> None:
        if not self._sorted:
            self.items.sort(key=lambda x: x[0])
            self.seqs = [x[0] for x in self.items]
            self._sorted = True

    def at_least(self, seq: int) -> list[tuple[int, MF.DataFile, tuple]]:
        self._sort()
        return self.items[bisect.bisect_left(self.seqs, seq):]

    def above(self, seq: int) -> list[tuple[int, MF.DataFile, tuple]]:
        self._sort()
        return self.items[bisect.bisect_right(self.seqs, seq):]


def _path_bounds_allow(f: MF.DataFile, path: bytes) -> bool:
    """Whether a position delete file's ``file_path`` bounds can contain ``path`` (no bounds: it can)."""
    lo = (f.lower_bounds or {}).get(D.FILE_PATH_ID)
    hi = (f.upper_bounds or {}).get(D.FILE_PATH_ID)
    return (lo is None or lo <= path) and (hi is None or path <= hi)


class DeleteIndex:
    """Delete files of a snapshot, indexed the way the scope rules look them up."""

    def __init__(self, md: M.TableMetadata) -> None:
        self.md = md
        self.dv_by_path: dict[str, tuple[int, MF.DataFile, tuple]] = {}
        self.pos_by_path: dict[str, _BySeq] = {}
        self.pos_by_partition: dict[tuple, _BySeq] = {}
        self.eq_by_partition: dict[tuple, _BySeq] = {}
        self.eq_global = _BySeq()
        self.size = 0

    def add(self, entry: MF.ManifestEntry, spec: P.PartitionSpec) -> None:
        """Index one live delete entry of a manifest written with ``spec``."""
        f, seq = entry.data_file, entry.sequence_number
        key = partition_key(spec, f.partition)
        self.size += 1
        if f.content == MF.EQUALITY_DELETES:
            if not f.equality_ids:
                raise InvalidTable(f"equality delete file {f.file_path} has no equality_ids", rule="ICEBERG-MANIFEST-035")
            if spec.is_unpartitioned:
                self.eq_global.add(seq, f, key)
            else:
                self.eq_by_partition.setdefault(key, _BySeq()).add(seq, f, key)
        elif D.is_dv(f):
            if f.referenced_data_file is None:
                raise InvalidTable(f"deletion vector in {f.file_path} has no referenced_data_file", rule="ICEBERG-DV-008")
            old = self.dv_by_path.get(f.referenced_data_file)
            if old is not None:
                raise InvalidTable(f"two deletion vectors for {f.referenced_data_file} (in {old[1].file_path} at {old[1].content_offset} "
                                   f"and {f.file_path} at {f.content_offset}): at most one DV may apply to a data file", rule="ICEBERG-DV-009")
            self.dv_by_path[f.referenced_data_file] = (seq, f, key)
        elif f.referenced_data_file is not None:
            self.pos_by_path.setdefault(f.referenced_data_file, _BySeq()).add(seq, f, key)
        else:
            self.pos_by_partition.setdefault(key, _BySeq()).add(seq, f, key)

    def for_data_file(self, f: MF.DataFile, seq: int, spec: P.PartitionSpec) -> tuple[MF.DataFile, ...]:
        """The delete files that apply to data file ``f`` (data sequence number ``seq``, written with ``spec``)."""
        if not self.size:
            return ()
        out: list[MF.DataFile] = []
        key = None  # the partition key is built only when a lookup needs it
        dv = self.dv_by_path.get(f.file_path)
        if dv is not None and dv[0] >= seq:
            key = partition_key(spec, f.partition)
            _check_same_partition(dv, f, key)
            out.append(dv[1])
        else:
            by_path = self.pos_by_path.get(f.file_path)
            if by_path is not None:
                key = partition_key(spec, f.partition)
                for item in by_path.at_least(seq):
                    _check_same_partition(item, f, key)
                    out.append(item[1])
            if self.pos_by_partition:
                key = key or partition_key(spec, f.partition)
                by_part = self.pos_by_partition.get(key)
                if by_part is not None:
                    raw = f.file_path.encode("utf-8")
                    out.extend(x[1] for x in by_part.at_least(seq) if _path_bounds_allow(x[1], raw))
        if self.eq_by_partition:
            by_part = self.eq_by_partition.get(key or partition_key(spec, f.partition))
            if by_part is not None:
                out.extend(x[1] for x in by_part.above(seq))
        if self.eq_global.items:
            out.extend(x[1] for x in self.eq_global.above(seq))
        return tuple(out)


def _check_same_partition(item: tuple[int, MF.DataFile, tuple], f: MF.DataFile, key: tuple) -> None:
    if item[2] != key:
        d = item[1]
        kind = "deletion vector" if D.is_dv(d) else "position delete file"
        raise InvalidTable(f"{kind} {d.file_path} references {f.file_path} but records spec/partition {item[2]}, "
                           f"while the data file has {key}: the metadata is corrupt",
                           rule="ICEBERG-DV-012" if D.is_dv(d) else "ICEBERG-DELETE-010")


# ---------------------------------------------------------------------------------------------
# Planning


FileFilter = Callable[[MF.DataFile, P.PartitionSpec], bool]


def plan_files(storage: Storage, md: M.TableMetadata, snapshot: M.Snapshot | None, *,
               filter: FileFilter | None = None, include_column_stats: bool = False) -> list[FileScanTask]:  # noqa: A002
    """The scan tasks of a snapshot (None: the empty table): live data files with the deletes that apply.

    ``filter``, when given, is an inclusive pruning predicate over data files: it is called with a
    data file (stats included) and its spec and must return True for every file that may hold a
    matching row. As Java's scans do unless ``includeColumnStats()``, a task's data file comes
    without its column stats unless ``include_column_stats``: they serve pruning, and keeping them
    for every file of a big snapshot would take most of the plan's memory (2.7 GB instead of
    about 0.7 GB for a million files). Delete files keep theirs (position deletes are matched by
    their ``file_path`` bounds).
    """
    if snapshot is None:
        return []
    with gc_paused():
        return _plan(storage, md, snapshot, filter, include_column_stats)


def _plan(storage: Storage, md: M.TableMetadata, snapshot: M.Snapshot, filter: FileFilter | None,  # noqa: A002
          include_column_stats: bool) -> list[FileScanTask]:
    mfs = S.snapshot_manifests(storage, snapshot)
    specs = []
    for mf in mfs:
        spec = md.spec_by_id(mf.partition_spec_id)
        if spec is None:
            raise InvalidTable(f"manifest {mf.manifest_path} uses spec {mf.partition_spec_id}, which the table does not list",
                               path=mf.manifest_path, rule="ICEBERG-MLIST-005")
        specs.append(spec)
    reader = ManifestReader(md.format_version)
    # Delete manifests first, so that each data file's task is complete when its manifest is read
    # and no manifest's entries are held beyond it.
    index = DeleteIndex(md)
    for mf, spec in zip(mfs, specs):
        if mf.content != MF.MANIFEST_DATA:
            for e in reader.live_entries(_read(storage, mf.manifest_path), mf):
                if e.data_file.content == MF.DATA:
                    raise InvalidTable(f"delete manifest {mf.manifest_path} lists data file {e.data_file.file_path}",
                                       path=mf.manifest_path, rule="ICEBERG-DELETE-004")
                index.add(e, spec)
    stats = include_column_stats or filter is not None
    strip = filter is not None and not include_column_stats
    deletes_for = index.for_data_file
    seen: dict[str, str] = {}
    tasks: list[FileScanTask] = []
    append = tasks.append
    for mf, spec in zip(mfs, specs):
        if mf.content != MF.MANIFEST_DATA:
            continue
        mpath = mf.manifest_path
        for e in reader.live_entries(_read(storage, mpath), mf, stats=stats):
            f = e.data_file
            if f.content != MF.DATA:
                raise InvalidTable(f"data manifest {mpath} lists delete file {f.file_path}", path=mpath, rule="ICEBERG-DELETE-004")
            p = f.file_path
            if p in seen:
                raise InvalidTable(f"data file {p} is live twice in snapshot {snapshot.snapshot_id} ({seen[p]} and {mpath})",
                                   path=mpath, rule="ICEBERG-SNAP-013")
            seen[p] = mpath
            if filter is not None and not filter(f, spec):
                continue
            seq = e.sequence_number
            append(FileScanTask(data_file=without_stats(f) if strip else f, spec_id=spec.spec_id, data_sequence_number=seq,
                                deletes=deletes_for(f, seq, spec)))
    return tasks


def _read(storage: Storage, location: str) -> bytes:
    try:
        return storage.read(S.resolve_location(storage, location))
    except FileNotFoundError:
        raise InvalidTable(f"manifest {location} does not exist", path=location, rule="ICEBERG-META-031") from None
