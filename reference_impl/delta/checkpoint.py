"""Checkpoints: reading and writing classic, multi-part and V2 (UUID-named, sidecar) checkpoints.

Parquet checkpoints hold one action per row, each action type in its own struct column
(Checkpoint Schema); a column that is missing reads as all-null (DELTA-CKPT-010). V2-spec
checkpoints carry exactly one checkpointMetadata action and may move their file actions into
sidecar files under ``_delta_log/_sidecars``. Reading is column-at-a-time through pyarrow so
that a checkpoint of 100,000 files costs little Python per file.
"""

from __future__ import annotations

import io
import json
import re
import time
from typing import Any, Iterable
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from reference_impl.common.arrays import numpy_of
from reference_impl.delta import actions as A
from reference_impl.delta.actions import (
    Action,
    AddFile,
    CheckpointMetadata,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    Sidecar,
    Txn,
    action_to_wire,
    parse_commit,
)
from reference_impl.delta.log import (
    CKPT_CLASSIC,
    CKPT_MULTIPART,
    CKPT_V2,
    LC_NUM_OF_ADD_FILES,
    LC_PARTS,
    LC_SIZE,
    LC_SIZE_IN_BYTES,
    LC_VERSION,
    SIDECAR_DIR,
    CheckpointInstance,
    classic_checkpoint_path,
    commit_path,
    multipart_checkpoint_path,
    read_last_checkpoint,
    sidecar_path,
    v2_checkpoint_path,
    write_last_checkpoint,
)
from reference_impl.errors import InvalidTable, LakeconfError
from reference_impl.storage import FileInfo, Storage, new_uuid
from reference_impl.parquet_io import iter_parquet, open_parquet

# Columns a checkpoint may hold; anything else (commitInfo, cdc, unknown) is ignored on read.
_READ_COLUMNS = (A.PROTOCOL, A.METADATA, A.TXN, A.ADD, A.REMOVE, A.DOMAIN_METADATA, A.CHECKPOINT_METADATA,
                 A.SIDECAR)
_FILE_COLUMNS = (A.ADD, A.REMOVE)

PROP_WRITE_STATS_AS_JSON = "delta.checkpoint.writeStatsAsJson"
PROP_WRITE_STATS_AS_STRUCT = "delta.checkpoint.writeStatsAsStruct"
PROP_RETENTION = "delta.deletedFileRetentionDuration"
PROP_COMPRESSION = "delta.parquet.compression.codec"
PROP_PARQUET_FORMAT = "delta.parquet.format.version"
PROP_NUM_INDEXED_COLS = "delta.dataSkippingNumIndexedCols"
DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000


# --- reading -----------------------------------------------------------------------------


def _fail(message: str, path: str, version: int, rule: str | None = None) -> InvalidTable:
    return InvalidTable(message, path=path, version=version, rule=rule)


def _read_bytes(storage: Storage, path: str, version: int) -> bytes:
    try:
        return storage.read(path)
    except FileNotFoundError:
        raise _fail("checkpoint file is missing", path, version, "DELTA-CKPT-014") from None


def _column_rows(arr: pa.StructArray, skip: tuple[str, ...] = ()) -> tuple[list[str], list[list]]:
    """Child names and their Python values, one list per child (maps become dicts)."""
    names, values = [], []
    for i in range(arr.type.num_fields):
        f = arr.type.field(i)
        if f.name in skip:
            continue
        child = arr.field(i)
        vals = child.to_pylist()
        if pa.types.is_map(f.type):
            vals = [None if v is None else dict(v) for v in vals]
        names.append(f.name)
        values.append(vals)
    return names, values


def _struct_dicts(arr: pa.StructArray, skip: tuple[str, ...] = ()) -> list[dict]:
    names, values = _column_rows(arr, skip)
    return [dict(zip(names, row)) for row in zip(*values)] if names else [{} for _ in range(len(arr))]


def _clean_dv(d: dict) -> None:
    dv = d.get(A.DELETION_VECTOR)
    # Arrow writers may store an all-null struct instead of a null one: both mean "no DV".
    if isinstance(dv, dict) and dv.get("storageType") is None:
        d[A.DELETION_VECTOR] = None


def _strip_nulls(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _strip_nulls(x) for k, x in v.items() if x is not None}
    return v


def stats_json_from_parsed(parsed: Any) -> str | None:
    """The JSON ``stats`` string equivalent of a ``stats_parsed`` struct (None when not expressible)."""
    if not isinstance(parsed, dict):
        return None
    from reference_impl.delta.stats import stats_to_json

    try:
        return stats_to_json(_strip_nulls(parsed))
    except (LakeconfError, TypeError, ValueError):
        return None  # e.g. NaN bounds, which JSON cannot carry: stats_parsed alone keeps them


# --- fast columnar path for file actions (most of a checkpoint) ----------------------------

_NEW = object.__new__


def _setters(cls, names):
    return [cls.__dict__[n].__set__ for n in names]


(_r_path, _r_ts, _r_dc, _r_ext, _r_pv, _r_size, _r_stats, _r_tags, _r_dv, _r_brid, _r_drcv) = _setters(
    RemoveFile, ["path", "deletion_timestamp", "data_change", "extended_file_metadata", "partition_values", "size",
                 "stats", "tags", "deletion_vector", "base_row_id", "default_row_commit_version"])


_make_add = A.new_add


def _make_remove(path, ts, dc, ext, pv, size, stats, tags, dv, brid, drcv):
    # Same object the dataclass __init__ builds, without its per-field frozen-setattr overhead;
    # the column types were checked up front, so per-row validation would only repeat that.
    o = _NEW(RemoveFile)
    _r_path(o, path), _r_ts(o, ts), _r_dc(o, dc), _r_ext(o, ext), _r_pv(o, pv), _r_size(o, size)
    _r_stats(o, stats), _r_tags(o, tags), _r_dv(o, dv), _r_brid(o, brid), _r_drcv(o, drcv)
    return o


def _shared_maps(m: pa.Array, offs, counts, lo: int, hi: int) -> list | None:
    """Maps with one key layout (partitionValues of a partitioned table): build each distinct
    map once and copy it per row, instead of converting every key and value."""
    n = len(counts)
    k = int(counts[0])
    if k == 0 or not (counts == k).all() or n < 64:
        return None
    keys = m.keys.slice(lo, hi - lo)
    first = keys.slice(0, k).to_pylist()
    if k == 1:
        if pa.compute.count_distinct(keys).as_py() != 1:
            return None
    else:
        tiled = pa.array(first * n, keys.type)
        if not pa.compute.all(pa.compute.equal(keys, tiled)).as_py():
            return None
    # A null value is an entry of the dictionary (its indices then hold no nulls).
    items = m.items.slice(lo, hi - lo).dictionary_encode(null_encoding="encode")
    codes = numpy_of(items.indices)
    values = items.dictionary.to_pylist()
    if k == 1:
        protos = [{first[0]: v} for v in values]
        return [protos[c].copy() for c in codes.tolist()]
    rows = codes.reshape(n, k)
    uniq, inverse = np.unique(rows, axis=0, return_inverse=True)
    protos = [dict(zip(first, (values[c] for c in row))) for row in uniq.tolist()]
    return [protos[i].copy() for i in inverse.reshape(-1).tolist()]


def _map_values(m: pa.Array) -> list:
    """A map<string,string> column as dicts (None for null rows), without per-row Arrow calls."""
    n = len(m)
    if n == 0:
        return []
    if m.null_count == n:
        return [None] * n
    offs = numpy_of(m.offsets)
    lo, hi = int(offs[0]), int(offs[-1])
    counts = np.diff(offs)
    shared = _shared_maps(m, offs, counts, lo, hi) if m.null_count == 0 else None
    if shared is not None:
        return shared
    keys = m.keys.slice(lo, hi - lo).to_pylist()
    items = m.items.slice(lo, hi - lo).to_pylist()
    k = int(counts[0])
    if (counts == k).all():
        if k == 0:
            out = [{} for _ in range(n)]
        elif k == 1:
            out = [{a: b} for a, b in zip(keys, items)]
        else:
            out = [dict(zip(keys[i:i + k], items[i:i + k])) for i in range(0, hi - lo, k)]
    else:
        rel = (offs - lo).tolist()
        out = [dict(zip(keys[rel[i]:rel[i + 1]], items[rel[i]:rel[i + 1]])) for i in range(n)]
    if m.null_count:
        for i in np.flatnonzero(~m.is_valid().to_numpy(zero_copy_only=False)).tolist():
            out[i] = None
    return out


_FAST_TYPES = {
    A.PATH: pa.string(), A.SIZE: pa.int64(), A.MODIFICATION_TIME: pa.int64(), A.DATA_CHANGE: pa.bool_(),
    A.STATS: pa.string(), A.DELETION_TIMESTAMP: pa.int64(), A.EXTENDED_FILE_METADATA: pa.bool_(),
    A.BASE_ROW_ID: pa.int64(), A.DEFAULT_ROW_COMMIT_VERSION: pa.int64(), A.CLUSTERING_PROVIDER: pa.string(),
}
_STR_MAP_TYPE = pa.map_(pa.string(), pa.string())
_REQUIRED = {A.ADD: (A.PATH, A.PARTITION_VALUES, A.SIZE, A.MODIFICATION_TIME, A.DATA_CHANGE),
             A.REMOVE: (A.PATH, A.DATA_CHANGE)}


def _fast_file_actions(kind: str, arr: pa.StructArray, version: int, path: str,
                       paths: list[str] | None = None) -> list | None:
    """add/remove rows built column-wise; None when the column layout is unusual (slow path)."""
    typ = arr.type
    n = len(arr)
    cols: dict[str, list] = {}
    for i in range(typ.num_fields):
        f = typ.field(i)
        name = f.name
        if name in _FAST_TYPES:
            if f.type != _FAST_TYPES[name]:
                return None
        elif name in (A.PARTITION_VALUES, A.TAGS):
            if not pa.types.is_map(f.type) or f.type.key_type != pa.string() or f.type.item_type != pa.string():
                return None
        elif name != A.DELETION_VECTOR:
            continue  # stats_parsed, partitionValues_parsed, unknown fields
        child = arr.field(i)
        if name in _REQUIRED[kind] and child.null_count:
            raise _fail(f"checkpoint {kind} action: required field {name!r} is null", path, version,
                        "DELTA-ACTION-016" if kind == A.ADD else "DELTA-ACTION-020")
        if name == A.PATH and paths is not None:
            cols[name] = paths  # already converted by AddBatch
        elif child.null_count == n:
            cols[name] = [None] * n
        elif name in (A.PARTITION_VALUES, A.TAGS):
            cols[name] = _map_values(child)
        elif name == A.DELETION_VECTOR:
            cols[name] = _dv_values(child, kind, version, path)
        else:
            cols[name] = child.to_pylist()
    for name in _REQUIRED[kind]:
        if name not in cols:
            raise _fail(f"checkpoint {kind} action: required field {name!r} is missing", path, version,
                        "DELTA-ACTION-016" if kind == A.ADD else "DELTA-ACTION-020")
    none = [None] * n
    get = lambda key: cols.get(key, none)  # noqa: E731
    sizes = [v for v in cols.get(A.SIZE, ()) if v is not None]
    if sizes and min(sizes) < 0:
        raise _fail(f"checkpoint {kind} action: field 'size' is negative", path, version)
    if kind == A.ADD:
        stats = get(A.STATS)
        sp = none
        if typ.get_field_index(A.STATS_PARSED) >= 0 and (A.STATS not in cols or None in stats):
            sp = arr.field(A.STATS_PARSED).to_pylist()
        if sp is not none:
            # Only the struct form was written: keep it, and give consumers the JSON form too.
            sp = [p if s is None else None for p, s in zip(sp, stats)]
            stats = [s if s is not None else stats_json_from_parsed(p) for s, p in zip(stats, sp)]
        return list(map(_make_add, cols[A.PATH], cols[A.PARTITION_VALUES], cols[A.SIZE],
                        cols[A.MODIFICATION_TIME], cols[A.DATA_CHANGE], stats, get(A.TAGS),
                        get(A.DELETION_VECTOR), get(A.BASE_ROW_ID), get(A.DEFAULT_ROW_COMMIT_VERSION),
                        get(A.CLUSTERING_PROVIDER), sp))
    return list(map(_make_remove, cols[A.PATH], get(A.DELETION_TIMESTAMP), cols[A.DATA_CHANGE],
                    get(A.EXTENDED_FILE_METADATA), get(A.PARTITION_VALUES), get(A.SIZE), get(A.STATS),
                    get(A.TAGS), get(A.DELETION_VECTOR), get(A.BASE_ROW_ID), get(A.DEFAULT_ROW_COMMIT_VERSION)))


class AddBatch:
    """The add rows of one checkpoint file, kept columnar until someone needs AddFile objects.

    Loading a snapshot then costs one pass over the path column; ``replay.FileMap`` builds the
    objects in bulk (or one at a time) only when files are looked at.
    """

    __slots__ = ("arr", "version", "path", "keys", "_rows")

    def __init__(self, arr: pa.StructArray, version: int, path: str) -> None:
        self.arr = arr
        self.version = version
        self.path = path
        self.keys = [(p, None) for p in arr.field(A.PATH).to_pylist()]
        self._rows: list | None = None

    def rows(self) -> list[AddFile]:
        """Every add of the batch, built once."""
        if self._rows is None:
            paths = [k[0] for k in self.keys]
            self._rows = _fast_file_actions(A.ADD, self.arr, self.version, self.path, paths)
        return self._rows

    def row(self, i: int) -> AddFile:
        """One add, without building the others."""
        if self._rows is not None:
            return self._rows[i]
        return _fast_file_actions(A.ADD, self.arr.slice(i, 1), self.version, self.path)[0]


def _lazy_adds(arr: pa.StructArray, version: int, path: str) -> AddBatch | None:
    """An AddBatch when the columns are the usual ones and carry no deletion vectors."""
    typ = arr.type
    for i in range(typ.num_fields):
        f = typ.field(i)
        if f.name in _FAST_TYPES and f.type != _FAST_TYPES[f.name]:
            return None
        if f.name in (A.PARTITION_VALUES, A.TAGS) and f.type != _STR_MAP_TYPE and not (
                pa.types.is_map(f.type) and f.type.key_type == pa.string() and f.type.item_type == pa.string()):
            return None
        if f.name == A.DELETION_VECTOR and arr.field(i).null_count != len(arr):
            # DVs change keys; all-null-struct DVs are rare: build these eagerly.
            dv = arr.field(i)
            if pa.types.is_struct(dv.type) and dv.type.get_field_index("storageType") >= 0 and \
                    dv.field("storageType").null_count == len(arr):
                continue
            return None
    for name in _REQUIRED[A.ADD]:
        idx = typ.get_field_index(name)
        if idx < 0 or arr.field(idx).null_count:
            return None  # the eager path reports the problem precisely
    size = arr.field(A.SIZE)
    if len(size) and pa.compute.min(size).as_py() < 0:
        return None
    return AddBatch(arr, version, path)


def _dv_values(child: pa.Array, kind: str, version: int, path: str) -> list:
    from reference_impl.delta.deletion_vector import DeletionVectorDescriptor

    out = []
    for d in child.to_pylist():
        if d is None or d.get("storageType") is None:
            out.append(None)  # an all-null struct also means "no DV"
            continue
        try:
            out.append(DeletionVectorDescriptor.from_wire(d))
        except LakeconfError as exc:
            raise _fail(f"checkpoint {kind} action: bad deletionVector: {exc.message}", path, version,
                        exc.rule or "DELTA-ACTION-022") from None
    return out


def _parse_rows(kind: str, arr: pa.StructArray, version: int, path: str) -> list[Action]:
    if kind in _FILE_COLUMNS:
        fast = _fast_file_actions(kind, arr, version, path)
        if fast is not None:
            return fast
    parser = A._PARSERS[kind]
    ctx = A._Ctx(kind, version)
    skip = (A.STATS_PARSED, A.PARTITION_VALUES_PARSED) if kind == A.ADD else ()
    rows = _struct_dicts(arr, skip)
    stats_parsed = None
    if kind == A.ADD and A.STATS_PARSED in [arr.type.field(i).name for i in range(arr.type.num_fields)]:
        stats_col = arr.field(A.STATS) if arr.type.get_field_index(A.STATS) >= 0 else None
        if stats_col is None or stats_col.null_count > 0:
            stats_parsed = arr.field(A.STATS_PARSED).to_pylist()
    out: list[Action] = []
    try:
        for i, d in enumerate(rows):
            if kind in _FILE_COLUMNS:
                _clean_dv(d)
                if stats_parsed is not None and d.get(A.STATS) is None:
                    d[A.STATS_PARSED] = stats_parsed[i]
                    d[A.STATS] = stats_json_from_parsed(stats_parsed[i])
            out.append(parser(d, ctx))
    except InvalidTable as exc:
        raise _fail(f"checkpoint {exc.message}", path, version, exc.rule) from None
    return out


# Rows decoded at a time: decoding a whole checkpoint at once held its decompressed pages and growing
# string buffers beside the result (+79 MB of RSS for 41 MB of columns at 90,000 adds; +60 in batches).
_BATCH_ROWS = 8192


def _read_parquet_actions(data: bytes, path: str, version: int, allowed: tuple[str, ...],
                          lazy: bool = False) -> dict[str, list]:
    """Actions of a parquet checkpoint or sidecar, grouped by action type (adds maybe as AddBatch)."""
    try:
        pf = open_parquet(data)
        schema = pf.schema_arrow
        present = [n for n in schema.names if n in _READ_COLUMNS]
        batches = iter_parquet(pf, present, _BATCH_ROWS)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _fail(f"checkpoint file is not readable parquet: {exc}", path, version, "DELTA-CKPT-009") from None
    for name in present:
        if not pa.types.is_struct(schema.field(name).type):
            raise _fail(f"checkpoint column {name!r} is not a struct", path, version, "DELTA-CKPT-009")
    out: dict[str, list] = {}
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise _fail(f"checkpoint file is not readable parquet: {exc}", path, version, "DELTA-CKPT-009") from None
        if batch is None:
            return out
        for name in present:
            arr = batch.column(name)
            if arr.null_count == len(arr):
                continue
            if name not in allowed:
                raise _fail(f"{name} actions are not allowed in this file", path, version,
                            "DELTA-CKPT-019" if A.PROTOCOL in allowed else "DELTA-CKPT-035")
            if arr.null_count:
                arr = _valid_rows(arr)
            try:
                if lazy and name == A.ADD:
                    add_batch = _lazy_adds(arr, version, path)
                    if add_batch is not None:
                        out.setdefault(_ADD_BATCHES, []).append(add_batch)
                        continue
                out.setdefault(name, []).extend(_parse_rows(name, arr, version, path))
            except (pa.ArrowException, TypeError, ValueError) as exc:
                raise _fail(f"checkpoint column {name!r} has an unexpected shape: {exc}", path, version,
                            "DELTA-CKPT-009") from None


def _valid_rows(arr: pa.StructArray) -> pa.StructArray:
    """The non-null rows of an action column: a zero-copy slice when they form one run, else a filtered copy.

    A checkpoint holds one action per row, and writers that group rows by action (the reference,
    delta-rs) leave each column's rows in one run; slicing then spares a copy of the add column,
    which was the largest allocation of a snapshot load.
    """
    valid = arr.is_valid()
    idx = pa.compute.indices_nonzero(valid)
    if len(idx):
        first, last = idx[0].as_py(), idx[len(idx) - 1].as_py()
        if last - first + 1 == len(idx):
            return arr.slice(first, len(idx))
    return arr.filter(valid)


_TYPE_KEY = {Protocol: A.PROTOCOL, Metadata: A.METADATA, Txn: A.TXN, AddFile: A.ADD, RemoveFile: A.REMOVE,
             DomainMetadata: A.DOMAIN_METADATA, CheckpointMetadata: A.CHECKPOINT_METADATA, Sidecar: A.SIDECAR}


def _read_json_actions(data: bytes, path: str, version: int) -> dict[str, list]:
    out: dict[str, list] = {}
    for a in parse_commit(data, version=version, path=path):
        key = _TYPE_KEY.get(type(a))  # commitInfo, cdc and unknown actions are not checkpoint state
        if key is not None:
            out.setdefault(key, []).append(a)
    return out


def _sidecar_location(storage: Storage, sc: Sidecar, version: int, path: str) -> str:
    raw = unquote(sc.path)
    try:
        if urlparse(raw).scheme and len(urlparse(raw).scheme) > 1 or raw.startswith("/"):
            return storage.resolve(raw)
        return sidecar_path(raw) if "/" not in raw else storage.resolve(f"{SIDECAR_DIR}/{raw}")
    except InvalidTable as exc:
        raise _fail(f"sidecar path {sc.path!r}: {exc.message}", path, version, "DELTA-CKPT-036") from None


def _ordered(groups: dict[str, list]) -> list[Action]:
    order = (A.PROTOCOL, A.METADATA, A.TXN, A.DOMAIN_METADATA, A.CHECKPOINT_METADATA, A.SIDECAR, A.ADD, A.REMOVE)
    out: list[Action] = []
    for k in order:
        out.extend(groups.get(k, ()))
    return out


_ADD_BATCHES = "_addBatches"


def read_checkpoint(storage: Storage, instance: CheckpointInstance) -> list[Action]:
    """All actions of a checkpoint (sidecars included); InvalidTable with path/version on bad input."""
    actions, batches = read_checkpoint_lazy(storage, instance)
    for b in batches:
        actions.extend(b.rows())
    return actions


def read_checkpoint_lazy(storage: Storage, instance: CheckpointInstance,
                         lazy: bool = True) -> tuple[list[Action], list[AddBatch]]:
    """The checkpoint's actions, with large add columns left as ``AddBatch`` (see replay.FileMap)."""
    version = instance.version
    groups: dict[str, list] = {}
    for info in instance.files:
        data = _read_bytes(storage, info.path, version)
        if info.path.endswith(".json"):
            part = _read_json_actions(data, info.path, version)
        else:
            allowed = _READ_COLUMNS if instance.kind != CKPT_MULTIPART else _READ_COLUMNS[:6]
            part = _read_parquet_actions(data, info.path, version, allowed, lazy)
        for k, v in part.items():
            groups.setdefault(k, []).extend(v)
    main_path = instance.files[0].path
    meta = groups.get(A.CHECKPOINT_METADATA, [])
    sidecars = groups.get(A.SIDECAR, [])
    if instance.kind == CKPT_V2 and len(meta) != 1:
        raise _fail(f"a V2 checkpoint must hold exactly one checkpointMetadata action, found {len(meta)}",
                    main_path, version, "DELTA-CKPT-031")
    if len(meta) > 1:
        raise _fail(f"checkpoint holds {len(meta)} checkpointMetadata actions", main_path, version, "DELTA-CKPT-031")
    if meta and meta[0].version != version:
        raise _fail(f"checkpointMetadata.version is {meta[0].version}, expected {version}", main_path, version,
                    "DELTA-CKPT-031")
    if sidecars and not meta:
        raise _fail("sidecar actions in a V1-spec checkpoint (no checkpointMetadata)", main_path, version,
                    "DELTA-CKPT-038")
    if sidecars and (groups.get(A.ADD) or groups.get(A.REMOVE) or groups.get(_ADD_BATCHES)):
        raise _fail("checkpoint mixes inline file actions with sidecar files", main_path, version,
                    "DELTA-CKPT-033")
    for sc in sidecars:
        loc = _sidecar_location(storage, sc, version, main_path)
        try:
            data = storage.read(loc)
        except FileNotFoundError:
            raise _fail(f"sidecar file {sc.path!r} referenced by the checkpoint is missing", loc, version,
                        "DELTA-CKPT-034") from None
        part = _read_parquet_actions(data, loc, version, _FILE_COLUMNS, lazy)
        for k in (*_FILE_COLUMNS, _ADD_BATCHES):
            groups.setdefault(k, []).extend(part.get(k, ()))
    return _ordered(groups), groups.get(_ADD_BATCHES, [])


# --- writing: Arrow schema of checkpoint rows --------------------------------------------

_STR_MAP = pa.map_(pa.string(), pa.string())
_DV_TYPE = pa.struct([
    ("storageType", pa.string()),
    ("pathOrInlineDv", pa.string()),
    ("offset", pa.int32()),
    ("sizeInBytes", pa.int32()),
    ("cardinality", pa.int64()),
])
PROTOCOL_TYPE = pa.struct([
    (A.MIN_READER_VERSION, pa.int32()),
    (A.MIN_WRITER_VERSION, pa.int32()),
    (A.READER_FEATURES, pa.list_(pa.string())),
    (A.WRITER_FEATURES, pa.list_(pa.string())),
])
METADATA_TYPE = pa.struct([
    (A.ID, pa.string()),
    (A.NAME, pa.string()),
    (A.DESCRIPTION, pa.string()),
    (A.FORMAT, pa.struct([(A.PROVIDER, pa.string()), (A.OPTIONS, _STR_MAP)])),
    (A.SCHEMA_STRING, pa.string()),
    (A.PARTITION_COLUMNS, pa.list_(pa.string())),
    (A.CONFIGURATION, _STR_MAP),
    (A.CREATED_TIME, pa.int64()),
])
TXN_TYPE = pa.struct([(A.APP_ID, pa.string()), (A.VERSION, pa.int64()), (A.LAST_UPDATED, pa.int64())])
DOMAIN_TYPE = pa.struct([(A.DOMAIN, pa.string()), (A.CONFIGURATION, pa.string()), (A.REMOVED, pa.bool_())])
CHECKPOINT_METADATA_TYPE = pa.struct([(A.VERSION, pa.int64()), (A.TAGS, _STR_MAP)])
SIDECAR_TYPE = pa.struct([(A.PATH, pa.string()), (A.SIZE_IN_BYTES, pa.int64()), (A.MODIFICATION_TIME, pa.int64()),
                          (A.TAGS, _STR_MAP)])
REMOVE_TYPE = pa.struct([
    (A.PATH, pa.string()),
    (A.DELETION_TIMESTAMP, pa.int64()),
    (A.DATA_CHANGE, pa.bool_()),
    (A.EXTENDED_FILE_METADATA, pa.bool_()),
    (A.PARTITION_VALUES, _STR_MAP),
    (A.SIZE, pa.int64()),
    (A.DELETION_VECTOR, _DV_TYPE),
    (A.BASE_ROW_ID, pa.int64()),
    (A.DEFAULT_ROW_COMMIT_VERSION, pa.int64()),
])
_ADD_BASE_FIELDS = [
    (A.PATH, pa.string()),
    (A.PARTITION_VALUES, _STR_MAP),
    (A.SIZE, pa.int64()),
    (A.MODIFICATION_TIME, pa.int64()),
    (A.DATA_CHANGE, pa.bool_()),
    (A.TAGS, _STR_MAP),
    (A.DELETION_VECTOR, _DV_TYPE),
    (A.BASE_ROW_ID, pa.int64()),
    (A.DEFAULT_ROW_COMMIT_VERSION, pa.int64()),
    (A.CLUSTERING_PROVIDER, pa.string()),
]


def _dv_dict(dv: Any) -> dict | None:
    if dv is None:
        return None
    return {"storageType": dv.storage_type, "pathOrInlineDv": dv.path_or_inline_dv, "offset": dv.offset,
            "sizeInBytes": dv.size_in_bytes, "cardinality": dv.cardinality}


def _map_items(m: Any) -> dict | list | None:
    # pyarrow takes plain dicts for map columns directly; other Mappings become pair lists
    return m if m is None or type(m) is dict else list(m.items())


def _protocol_row(p: Protocol) -> dict:
    # DELTA-CKPT-026: feature lists are non-null exactly at reader 3 / writer 7.
    return {A.MIN_READER_VERSION: p.min_reader_version, A.MIN_WRITER_VERSION: p.min_writer_version,
            A.READER_FEATURES: sorted(p.reader_features or ()) if p.min_reader_version == 3 else None,
            A.WRITER_FEATURES: sorted(p.writer_features or ()) if p.min_writer_version == 7 else None}


def _metadata_row(m: Metadata) -> dict:
    return {A.ID: m.id, A.NAME: m.name, A.DESCRIPTION: m.description,
            A.FORMAT: {A.PROVIDER: m.format.provider, A.OPTIONS: _map_items(m.format.options)},
            A.SCHEMA_STRING: m.schema_string, A.PARTITION_COLUMNS: list(m.partition_columns),
            A.CONFIGURATION: _map_items(m.configuration), A.CREATED_TIME: m.created_time}


def _remove_row(r: RemoveFile) -> dict:
    # Checkpoint removes are bare VACUUM tombstones: no stats, no tags (DELTA-CKPT-025).
    return {A.PATH: r.path, A.DELETION_TIMESTAMP: r.deletion_timestamp, A.DATA_CHANGE: r.data_change,
            A.EXTENDED_FILE_METADATA: r.extended_file_metadata, A.PARTITION_VALUES: _map_items(r.partition_values),
            A.SIZE: r.size, A.DELETION_VECTOR: _dv_dict(r.deletion_vector), A.BASE_ROW_ID: r.base_row_id,
            A.DEFAULT_ROW_COMMIT_VERSION: r.default_row_commit_version}


class _StatsPlan:
    """Which stats forms to write, and the pieces needed for the struct forms."""

    def __init__(self, state, stats: Iterable[str] | None) -> None:
        conf = state.metadata.configuration
        forms = set(("json",) if stats is None else stats)
        unknown = forms - {"json", "struct"}
        if unknown:
            raise InvalidTable(f"unknown stats form(s) {sorted(unknown)}; use 'json' and/or 'struct'")
        # Writer version >= 3 must enforce these properties (Writer Version Requirements).
        if conf.get(PROP_WRITE_STATS_AS_STRUCT, "").lower() == "true":
            forms.add("struct")
        if conf.get(PROP_WRITE_STATS_AS_JSON, "").lower() == "false":
            forms.discard("json")
        self.json = "json" in forms
        self.struct = "struct" in forms
        # Column stats cover data columns only (Checkpoint Schema example): partition columns out.
        from reference_impl.delta.schema import StructType

        full = state.metadata.schema
        parts = set(state.metadata.partition_columns)
        self.schema = StructType(fields=tuple(f for f in full.fields if f.name not in parts))
        from reference_impl.delta.column_mapping import mapping_mode

        self.mode = mapping_mode(conf, state.protocol)
        try:
            self.num_indexed = int(conf.get(PROP_NUM_INDEXED_COLS, "32"))
        except ValueError:
            self.num_indexed = 32
        self.partition_fields = []
        if self.struct and state.metadata.partition_columns:
            from reference_impl.delta.column_mapping import physical_name

            for name in state.metadata.partition_columns:
                f = full.get(name)
                if f is None:
                    raise InvalidTable(f"partition column {name!r} is not in the schema")
                self.partition_fields.append((physical_name(f, self.mode), f.type))

    def add_type(self) -> pa.DataType:
        fields = list(_ADD_BASE_FIELDS)
        if self.json:
            fields.insert(5, (A.STATS, pa.string()))
        if self.struct:
            from reference_impl.delta import stats as st
            from reference_impl.delta.schema import to_arrow_type

            if self.partition_fields:
                fields.append((A.PARTITION_VALUES_PARSED,
                               pa.struct([(n, to_arrow_type(t)) for n, t in self.partition_fields])))
            fields.append((A.STATS_PARSED, st.stats_struct_type(self.schema, self.mode, self.num_indexed)))
        return pa.struct(fields)

    def add_array(self, adds: list[AddFile]) -> pa.StructArray:
        typ = self.add_type()
        base = [
            pa.array([a.path for a in adds], pa.string()),
            pa.array([_map_items(a.partition_values) for a in adds], _STR_MAP),
            pa.array([a.size for a in adds], pa.int64()),
            pa.array([a.modification_time for a in adds], pa.int64()),
            pa.array([a.data_change for a in adds], pa.bool_()),
            pa.array([_map_items(a.tags) for a in adds], _STR_MAP),
            pa.array([_dv_dict(a.deletion_vector) for a in adds], _DV_TYPE),
            pa.array([a.base_row_id for a in adds], pa.int64()),
            pa.array([a.default_row_commit_version for a in adds], pa.int64()),
            pa.array([a.clustering_provider for a in adds], pa.string()),
        ]
        if self.json:
            base.insert(5, pa.array([a.stats if a.stats is not None or a.stats_parsed is None
                                     else stats_json_from_parsed(a.stats_parsed) for a in adds], pa.string()))
        if self.struct:
            from reference_impl.delta import stats as st
            from reference_impl.delta.partition import parse_partition_value
            from reference_impl.delta.schema import to_arrow_type

            if self.partition_fields:
                children = []
                for pname, ptype in self.partition_fields:
                    vals = [parse_partition_value(a.partition_values.get(pname), ptype) for a in adds]
                    children.append(pa.array(vals, to_arrow_type(ptype)))
                pv_type = typ.field(A.PARTITION_VALUES_PARSED).type
                base.append(pa.StructArray.from_arrays(children, fields=list(pv_type)) if adds
                            else pa.array([], pv_type))
            parsed = [a.stats_parsed if a.stats is None and a.stats_parsed is not None else st.parse_stats(a.stats)
                      for a in adds]
            sp = st.stats_to_struct(parsed, self.schema, self.mode, self.num_indexed)
            base.append(sp.cast(typ.field(A.STATS_PARSED).type) if sp.type != typ.field(A.STATS_PARSED).type
                        else sp)
        return pa.StructArray.from_arrays(base, fields=list(typ))


def _column(rows: list, start: int, total: int, typ: pa.DataType) -> pa.Array:
    """A checkpoint column: ``rows`` at [start, start+len), null elsewhere (one action per row)."""
    return pa.array([None] * start + rows + [None] * (total - start - len(rows)), type=typ)


def _pad_array(arr: pa.Array, start: int, total: int) -> pa.Array:
    before = pa.nulls(start, arr.type)
    after = pa.nulls(total - start - len(arr), arr.type)
    return pa.concat_arrays([before, arr, after])


def _table(plan: _StatsPlan, *, protocol: Protocol | None = None, metadata: Metadata | None = None,
           txns: list[Txn] = (), domains: list[DomainMetadata] = (), adds: list[AddFile] = (),
           removes: list[RemoveFile] = (), checkpoint_metadata: CheckpointMetadata | None = None,
           sidecars: list[Sidecar] = (), v2: bool = False, file_actions_only: bool = False) -> pa.Table:
    """One checkpoint (or sidecar) table, rows in a stable order."""
    parts: list[tuple[str, pa.DataType, list]] = []
    if not file_actions_only:
        parts.append((A.PROTOCOL, PROTOCOL_TYPE, [_protocol_row(protocol)] if protocol else []))
        parts.append((A.METADATA, METADATA_TYPE, [_metadata_row(metadata)] if metadata else []))
        parts.append((A.TXN, TXN_TYPE, [{A.APP_ID: t.app_id, A.VERSION: t.version, A.LAST_UPDATED: t.last_updated}
                                        for t in txns]))
        parts.append((A.DOMAIN_METADATA, DOMAIN_TYPE,
                      [{A.DOMAIN: d.domain, A.CONFIGURATION: d.configuration, A.REMOVED: d.removed} for d in domains]))
        if v2:
            parts.append((A.CHECKPOINT_METADATA, CHECKPOINT_METADATA_TYPE,
                          [{A.VERSION: checkpoint_metadata.version, A.TAGS: _map_items(checkpoint_metadata.tags)}]
                          if checkpoint_metadata else []))
            parts.append((A.SIDECAR, SIDECAR_TYPE,
                          [{A.PATH: s.path, A.SIZE_IN_BYTES: s.size_in_bytes, A.MODIFICATION_TIME: s.modification_time,
                            A.TAGS: _map_items(s.tags)} for s in sidecars]))
    total = sum(len(rows) for _, _, rows in parts) + len(adds) + len(removes)
    names, arrays = [], []
    pos = 0
    for name, typ, rows in parts:
        names.append(name)
        arrays.append(_column(rows, pos, total, typ))
        pos += len(rows)
    names.append(A.ADD)
    arrays.append(_pad_array(plan.add_array(list(adds)), pos, total))
    pos += len(adds)
    names.append(A.REMOVE)
    arrays.append(_column([_remove_row(r) for r in removes], pos, total, REMOVE_TYPE))
    return pa.Table.from_arrays(arrays, names=names)


_CODECS = {"uncompressed": "none", "none": "none", "snappy": "snappy", "gzip": "gzip", "zstd": "zstd",
           "lz4_raw": "lz4", "lz4": "lz4", "brotli": "brotli"}


def _parquet_bytes(table: pa.Table, conf) -> bytes:
    codec = _CODECS.get(str(conf.get(PROP_COMPRESSION, "zstd")).lower(), "zstd")  # DELTA-PROPS-001 fallback
    page = "2.0" if str(conf.get(PROP_PARQUET_FORMAT, "1.0.0")).startswith("2.") else "1.0"
    buf = io.BytesIO()
    pq.write_table(table, buf, compression=codec, data_page_version=page)
    return buf.getvalue()


# --- writing: tombstone expiry, multi-part hashing ---------------------------------------

_INTERVAL_UNITS = {
    "microsecond": 0.001, "millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000,
    "day": 86_400_000, "week": 7 * 86_400_000,
}


def parse_interval_ms(text: str | None) -> int | None:
    """A Spark-style interval (``interval 1 week``, ``7 days``) in ms; None when not understood."""
    if text is None:
        return None
    words = text.strip().lower().split()
    if words and words[0] == "interval":
        words = words[1:]
    if not words or len(words) % 2:
        return None
    total = 0.0
    for num, unit in zip(words[::2], words[1::2]):
        unit = unit.rstrip("s") if unit not in ("s",) else unit
        if unit not in _INTERVAL_UNITS or not re.fullmatch(r"-?\d+", num):
            return None
        total += int(num) * _INTERVAL_UNITS[unit]
    return int(total)


def live_tombstones(state, now_ms: int | None = None) -> list[RemoveFile]:
    """Removes not yet expired (DELTA-ACTION-007); kept when the retention is not understood."""
    retention = parse_interval_ms(state.metadata.configuration.get(PROP_RETENTION, "interval 1 week"))
    removes = list(state.tombstones.values())
    if retention is None:
        return removes
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = now_ms - retention
    return [r for r in removes if r.deletion_timestamp is None or r.deletion_timestamp > cutoff]


_M = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M


def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & _M
    k1 = _rotl(k1, 15)
    return (k1 * 0x1B873593) & _M


def _mix_h1(h1: int, k1: int) -> int:
    h1 ^= k1
    h1 = _rotl(h1, 13)
    return (h1 * 5 + 0xE6546B64) & _M


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _M
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _M
    h1 ^= h1 >> 16
    return h1


def spark_murmur3_bytes(data: bytes, seed: int) -> int:
    """Spark's Murmur3_x86_32.hashUnsafeBytes (tail bytes mixed one signed byte at a time), as int32."""
    h1 = seed & _M
    n = len(data)
    aligned = n - n % 4
    for i in range(0, aligned, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[i:i + 4], "little")))
    for i in range(aligned, n):
        b = data[i]
        h1 = _mix_h1(h1, _mix_k1((b - 256 if b > 127 else b) & _M))
    h = _fmix(h1, n)
    return h - (1 << 32) if h & 0x80000000 else h


def spark_hash_partition(values: Iterable[str | None], num_parts: int) -> int:
    """Spark's ``HashPartitioning``: pmod(murmur3 over the key columns, seed 42, nulls skipped)."""
    h = 42
    for v in values:
        if v is not None:
            h = spark_murmur3_bytes(v.encode("utf-8"), h)
    return h % num_parts  # Python's % is already a non-negative modulus


# --- writing: the checkpoint itself ------------------------------------------------------


def _sorted_files(state) -> tuple[list[AddFile], list[RemoveFile]]:
    adds = sorted(state.files.values(), key=lambda a: (a.path, a.dv_id or ""))
    removes = sorted(live_tombstones(state), key=lambda r: (r.path, r.dv_id or ""))
    return adds, removes


def _now_ms() -> int:
    return int(time.time() * 1000)


def write_checkpoint(storage: Storage, state, *, kind: str = "classic", parts: int = 1, sidecars: int = 0,
                     stats: Iterable[str] | None = ("json",), v2_format: str = "parquet") -> CheckpointInstance:
    """Write a checkpoint of ``state``, then ``_last_checkpoint``; returns what was written.

    ``kind``: classic (V1 spec; V2 spec when ``sidecars`` > 0), multipart (``parts`` > 1, V1
    spec), v2 (UUID-named, ``v2_format`` json or parquet, file actions in ``sidecars`` files or
    inline when 0). ``stats``: "json" and/or "struct" (stats_parsed + partitionValues_parsed);
    the table properties delta.checkpoint.writeStatsAsJson/Struct override it.
    """
    from reference_impl.delta.protocol import V2_CHECKPOINT, is_feature_supported, DELETION_VECTORS

    version = state.version
    if not storage.exists(commit_path(version)):
        raise InvalidTable(f"cannot checkpoint version {version}: its commit file does not exist",
                           version=version, rule="DELTA-CKPT-006")
    v2_ok = is_feature_supported(state.protocol, V2_CHECKPOINT)
    if kind not in (CKPT_CLASSIC, CKPT_MULTIPART, CKPT_V2):
        raise InvalidTable(f"unknown checkpoint kind {kind!r}; use classic, multipart or v2")
    if kind == CKPT_MULTIPART and v2_ok:
        raise InvalidTable("multi-part checkpoints are forbidden on tables that support v2Checkpoint",
                           version=version, rule="DELTA-CKPT-017")
    if kind == CKPT_MULTIPART and parts < 2:
        raise InvalidTable(f"a multi-part checkpoint needs at least 2 parts, got {parts}", rule="DELTA-CKPT-012")
    use_v2 = kind == CKPT_V2 or (kind == CKPT_CLASSIC and sidecars > 0)
    if use_v2 and not v2_ok:
        raise InvalidTable("V2-spec checkpoints need the v2Checkpoint table feature", version=version,
                           rule="DELTA-CKPT-019")
    if v2_format not in ("json", "parquet"):
        raise InvalidTable(f"unknown V2 checkpoint format {v2_format!r}; use json or parquet")
    if sidecars < 0:
        raise InvalidTable(f"sidecars must be >= 0, got {sidecars}")
    plan = _StatsPlan(state, stats)
    conf = state.metadata.configuration
    adds, removes = _sorted_files(state)
    txns = sorted(state.txns.values(), key=lambda t: t.app_id)
    domains = sorted((d for d in state.domains.values() if not d.removed), key=lambda d: d.domain)
    common = dict(protocol=state.protocol, metadata=state.metadata, txns=txns, domains=domains)
    written: list[FileInfo] = []
    total_actions = 2 + len(txns) + len(domains) + len(adds) + len(removes)

    if kind == CKPT_MULTIPART:
        with_dv = is_feature_supported(state.protocol, DELETION_VECTORS)
        buckets_a: list[list[AddFile]] = [[] for _ in range(parts)]
        buckets_r: list[list[RemoveFile]] = [[] for _ in range(parts)]
        for a in adds:
            buckets_a[spark_hash_partition((a.path, a.dv_id if with_dv else None), parts)].append(a)
        for r in removes:
            buckets_r[spark_hash_partition((r.path, r.dv_id if with_dv else None), parts)].append(r)
        # Non-file actions have a null key, which Spark hashes to the seed alone.
        meta_part = spark_hash_partition((), parts)
        for i in range(parts):
            extra = common if i == meta_part else {}
            table = _table(plan, adds=buckets_a[i], removes=buckets_r[i], **extra)
            data = _parquet_bytes(table, conf)
            path = multipart_checkpoint_path(version, i + 1, parts)
            storage.write_atomic(path, data)
            written.append(FileInfo(path=path, size=len(data), modification_time=_now_ms()))
        instance = CheckpointInstance(version=version, kind=CKPT_MULTIPART, files=tuple(written), num_parts=parts)
    elif not use_v2:
        data = _parquet_bytes(_table(plan, adds=adds, removes=removes, **common), conf)
        path = classic_checkpoint_path(version)
        storage.write_atomic(path, data)  # racing classic writers write the same content (DELTA-CKPT-021)
        written.append(FileInfo(path=path, size=len(data), modification_time=_now_ms()))
        instance = CheckpointInstance(version=version, kind=CKPT_CLASSIC, files=tuple(written))
    else:
        sidecar_actions: list[Sidecar] = []
        if sidecars > 0:
            n = sidecars
            for i in range(n):
                chunk_a = adds[i * len(adds) // n:(i + 1) * len(adds) // n]
                chunk_r = removes[i * len(removes) // n:(i + 1) * len(removes) // n]
                data = _parquet_bytes(_table(plan, adds=chunk_a, removes=chunk_r, file_actions_only=True), conf)
                name = f"{new_uuid()}.parquet"
                storage.put_if_absent(sidecar_path(name), data)
                sidecar_actions.append(Sidecar(path=name, size_in_bytes=len(data), modification_time=_now_ms()))
            inline_adds, inline_removes = [], []
        else:
            inline_adds, inline_removes = adds, removes
        cm = CheckpointMetadata(version=version, tags={})
        total_actions += 1 + len(sidecar_actions)
        uuid = new_uuid()
        if kind == CKPT_CLASSIC:
            path = classic_checkpoint_path(version)
        else:
            path = v2_checkpoint_path(version, uuid, v2_format)
        if v2_format == "json" and kind == CKPT_V2:
            lines = [cm, state.protocol, state.metadata, *txns, *domains, *sidecar_actions, *inline_adds,
                     *inline_removes]
            data = b"".join(json.dumps(action_to_wire(a), separators=(",", ":")).encode() + b"\n" for a in lines)
        else:
            data = _parquet_bytes(_table(plan, adds=inline_adds, removes=inline_removes, checkpoint_metadata=cm,
                                         sidecars=sidecar_actions, v2=True, **common), conf)
        if kind == CKPT_CLASSIC:
            storage.write_atomic(path, data)
        else:
            storage.put_if_absent(path, data)
        written.append(FileInfo(path=path, size=len(data), modification_time=_now_ms()))
        instance = CheckpointInstance(version=version, kind=kind, files=tuple(written),
                                      uuid=None if kind == CKPT_CLASSIC else uuid)

    info = {LC_VERSION: version, LC_SIZE: total_actions, LC_SIZE_IN_BYTES: sum(f.size for f in written),
            LC_NUM_OF_ADD_FILES: len(adds)}
    if kind == CKPT_MULTIPART:
        info[LC_PARTS] = parts
    previous = read_last_checkpoint(storage)
    if previous is None or previous.get(LC_VERSION, -1) <= version:  # never move the hint backwards
        write_last_checkpoint(storage, info)
    return instance
