"""Delete Formats: position delete files, equality delete files and deletion vectors; writing them and reading them back.

* Position delete files (Parquet) hold ``file_path`` (id 2147483546) and ``pos`` (id 2147483545),
  sorted by path then position, optionally the deleted ``row`` (id 2147483544, never written here:
  Appendix F deprecates it). Readers find the columns by field id.
* Equality delete files hold any subset of table columns with the table's ids; the manifest's
  ``equality_ids`` name the columns a data row must equal, where a null equals a null
  (``col IS NULL``). ``equality_delete_mask`` does that comparison on Arrow columns.
* Deletion vectors are Puffin blobs of type ``deletion-vector-v1``: a 4-byte big-endian length of
  magic + vector, the magic ``D1 D3 39 64``, the vector as a portable 64-bit Roaring bitmap (an
  8-byte little-endian count of 32-bit bitmaps, then per key, ascending, the 4-byte little-endian
  key and a portable 32-bit Roaring bitmap), and a big-endian CRC-32 of magic + vector. That is
  the layout ``reference_impl.common.roaring`` decodes (the Puffin spec chose it so that Delta's
  vectors carry over), with Iceberg's framing and rule ids around it. The manifest
  entry points at the blob with ``content_offset``/``content_size_in_bytes``, which must equal
  the blob's footer entry.

Writers return the ``DataFile`` a delete manifest needs (content, format, counts, partition,
``referenced_data_file``, bounds; for DVs the blob's offset and size).
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reference_impl.common import roaring
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import puffin as PF
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V
from reference_impl.parquet_io import open_parquet, read_parquet
from reference_impl.storage import Storage

# Reserved field ids (Position Delete Files; Reserved Field IDs).
FILE_PATH_ID = 2147483546
POS_ID = 2147483545
ROW_ID = 2147483544
FILE_PATH = "file_path"
POS = "pos"
ROW = "row"
ROW_POSITION_ID = 2147483645  # _pos: the field a DV blob is computed for (what Java lists in "fields")

# deletion-vector-v1 blob (Puffin spec).
DV_MAGIC = b"\xd1\xd3\x39\x64"
PROP_REFERENCED_DATA_FILE = "referenced-data-file"
PROP_CARDINALITY = "cardinality"
MAX_POSITION = (1 << 63) - 1  # positions are non-negative longs: the key's top bit is clear

RULE_POS_SCHEMA = "ICEBERG-DELETE-005"
RULE_POS = "ICEBERG-DELETE-007"
RULE_EQ_COLUMNS = "ICEBERG-DELETE-013"
RULE_DV_FRAME = "ICEBERG-DV-004"
RULE_DV_BITMAP = "ICEBERG-DV-005"
RULE_DV_ENTRY = "ICEBERG-DV-008"


def position_delete_schema() -> T.Schema:
    """The ``file_position_delete`` struct without the optional ``row`` column."""
    return T.Schema(fields=(
        T.NestedField(id=FILE_PATH_ID, name=FILE_PATH, type=T.STRING, required=True),
        T.NestedField(id=POS_ID, name=POS, type=T.LONG, required=True),
    ))


def _positions_array(positions: Iterable[int], where: str) -> np.ndarray:
    """Sorted unique int64 positions; InvalidTable for negatives or non-integers."""
    arr = np.asarray(positions if isinstance(positions, np.ndarray) else list(positions))
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if arr.dtype == object or arr.dtype.kind not in "iu":
        if not all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in arr.ravel()):
            raise InvalidTable(f"row positions must be integers ({where})", rule=RULE_POS)
        if any(int(p) < 0 or int(p) > MAX_POSITION for p in arr.ravel()):
            raise InvalidTable(f"row positions must be in [0, 2^63) ({where})", rule=RULE_POS)
        arr = np.array([int(p) for p in arr.ravel()], dtype=np.int64)
    elif arr.dtype.kind == "u":
        if int(arr.max()) > MAX_POSITION:
            raise InvalidTable(f"row position {int(arr.max())} is beyond 2^63 - 1 ({where})", rule=RULE_POS)
        arr = arr.astype(np.int64)
    else:
        arr = arr.astype(np.int64)
        if int(arr.min()) < 0:
            raise InvalidTable(f"row position {int(arr.min())} is negative ({where})", rule=RULE_POS)
    return np.unique(arr)


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _put(storage: Storage, path: str, data: bytes) -> str:
    """Write a new (immutable) file and return its absolute URI, as manifests record it."""
    storage.put_if_absent(path, data)
    return storage.uri(path)


# ---------------------------------------------------------------------------------------------
# Position delete files


def write_position_deletes(storage: Storage, path: str, deletes: Mapping[str, Iterable[int]], *,
                           partition: Mapping[int, Any] | None = None) -> MF.DataFile:
    """Write a Parquet position delete file at ``path`` for {data file path: positions}; its DataFile (content 1).

    Rows are sorted by file path then position (DELETE-009). ``referenced_data_file`` is set when
    every delete is in one data file; ``file_path`` and ``pos`` bounds are always written, in full.
    """
    paths, poss = [], []
    for data_path in sorted(deletes):
        if not isinstance(data_path, str) or not data_path:
            raise InvalidTable(f"a position delete targets a data file path, got {data_path!r}", rule="ICEBERG-DELETE-006")
        ps = _positions_array(deletes[data_path], data_path)
        paths.extend([data_path] * len(ps))
        poss.append(ps)
    pos = np.concatenate(poss) if poss else np.empty(0, dtype=np.int64)
    arrow_schema = T.to_arrow_schema(position_delete_schema())
    table = pa.Table.from_arrays([pa.array(paths, pa.string()), pa.array(pos, pa.int64())], schema=arrow_schema)
    data = _parquet_bytes(table)
    uri = _put(storage, path, data)
    n = len(paths)
    targets = sorted(deletes)
    lower, upper = {}, {}
    if n:
        # Full (untruncated) path bounds, as Java writes them: readers may match files by them.
        lower = {FILE_PATH_ID: paths[0].encode("utf-8"), POS_ID: struct.pack("<q", int(pos.min()))}
        upper = {FILE_PATH_ID: paths[-1].encode("utf-8"), POS_ID: struct.pack("<q", int(pos.max()))}
    return MF.DataFile(
        content=MF.POSITION_DELETES, file_path=uri, file_format="parquet", record_count=n, file_size_in_bytes=len(data),
        partition=dict(partition or {}), value_counts={FILE_PATH_ID: n, POS_ID: n}, null_value_counts={FILE_PATH_ID: 0, POS_ID: 0},
        lower_bounds=lower, upper_bounds=upper,
        referenced_data_file=targets[0] if len(targets) == 1 else None,
    )


def _field_ids(schema: pa.Schema) -> dict[int, int]:
    """Top-level PARQUET:field_id -> column index."""
    out = {}
    for i, f in enumerate(schema):
        raw = (f.metadata or {}).get(T.PARQUET_FIELD_ID)
        if raw is not None:
            try:
                out[int(raw)] = i
            except ValueError:
                raise InvalidTable(f"column {f.name!r} has a bad field id {raw!r}", rule="ICEBERG-FMT-009") from None
    return out


def read_position_deletes(data: bytes, *, path: str | None = None) -> pa.Table:
    """A position delete file's ``file_path`` and ``pos`` columns (found by field id), checked for nulls and negatives."""
    pf = open_parquet(data)
    schema = pf.schema_arrow
    ids = _field_ids(schema)
    if ids:
        missing = [name for fid, name in ((FILE_PATH_ID, FILE_PATH), (POS_ID, POS)) if fid not in ids]
        if missing:
            raise InvalidTable(f"position delete file lacks {missing} (field ids {FILE_PATH_ID}, {POS_ID})", path=path, rule=RULE_POS_SCHEMA)
        names = [schema.field(ids[FILE_PATH_ID]).name, schema.field(ids[POS_ID]).name]
    elif FILE_PATH in schema.names and POS in schema.names:
        # A file without any field id: the reserved names are the only way left to find the columns.
        names = [FILE_PATH, POS]
    else:
        raise InvalidTable("position delete file has neither field ids nor file_path/pos columns", path=path, rule=RULE_POS_SCHEMA)
    t = read_parquet(pf, columns=names)
    fp, ps = t.column(0), t.column(1)
    if not (pa.types.is_string(fp.type) or pa.types.is_large_string(fp.type)) or not pa.types.is_integer(ps.type):
        raise InvalidTable(f"position delete columns must be string and long, got {fp.type} and {ps.type}", path=path, rule=RULE_POS_SCHEMA)
    if fp.null_count or ps.null_count:
        raise InvalidTable("position delete file has null file_path or pos values", path=path, rule=RULE_POS_SCHEMA)
    ps = ps.cast(pa.int64())
    if len(ps) and pc.min(ps).as_py() < 0:
        raise InvalidTable(f"position delete file holds a negative position {pc.min(ps).as_py()}", path=path, rule=RULE_POS)
    return pa.table({FILE_PATH: fp.cast(pa.string()), POS: ps})


def positions_for(deletes: pa.Table, data_file_path: str) -> np.ndarray:
    """The positions a position delete table holds for one data file (exact path match, DELETE-006)."""
    mask = pc.equal(deletes.column(FILE_PATH), pa.scalar(data_file_path, pa.string()))
    return np.asarray(deletes.column(POS).filter(mask).to_numpy(), dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# Deletion vectors


def serialize_dv(positions: Iterable[int]) -> bytes:
    """The ``deletion-vector-v1`` blob of a set of positions (length, magic, portable Roaring, CRC)."""
    pos = _positions_array(positions, "deletion vector")
    try:
        vector = DV_MAGIC + roaring.serialize64(roaring.sorted_unique_positions(pos))
    except roaring.RoaringError as exc:
        raise InvalidTable(f"cannot encode the deletion vector: {exc}", rule=RULE_DV_BITMAP) from None
    return struct.pack(">I", len(vector)) + vector + struct.pack(">I", zlib.crc32(vector) & 0xFFFFFFFF)


def deserialize_dv(blob: bytes, *, where: str = "deletion vector") -> np.ndarray:
    """The sorted positions (int64) of a ``deletion-vector-v1`` blob; InvalidTable on a bad length, magic, CRC or bitmap."""
    blob = bytes(blob)
    if len(blob) < 12:
        raise InvalidTable(f"{where} is {len(blob)} bytes: too short for length, magic and CRC", rule=RULE_DV_FRAME)
    (length,) = struct.unpack_from(">I", blob, 0)
    if length != len(blob) - 8:
        raise InvalidTable(f"{where} says magic + vector are {length} bytes, the blob holds {len(blob) - 8}", rule=RULE_DV_FRAME)
    body = blob[4 : 4 + length]
    if body[:4] != DV_MAGIC:
        raise InvalidTable(f"{where} magic is {body[:4].hex()}, expected d1d33964", rule=RULE_DV_FRAME)
    (crc,) = struct.unpack_from(">I", blob, 4 + length)
    if zlib.crc32(body) & 0xFFFFFFFF != crc:
        raise InvalidTable(f"{where} CRC-32 does not match its magic and vector", rule=RULE_DV_FRAME)
    try:
        decoded = roaring.decode64(body[4:])
    except roaring.RoaringError as exc:
        raise InvalidTable(f"{where} is not a portable 64-bit Roaring bitmap: {exc}", rule=RULE_DV_BITMAP) from None
    if decoded.problems:
        raise InvalidTable(f"{where} is not a portable 64-bit Roaring bitmap: {decoded.problems[0]}", rule=RULE_DV_BITMAP)
    return decoded.positions.astype(np.int64)


class DVBlob(NamedTuple):
    """Where a DV landed in its Puffin file: what ``content_offset``/``content_size_in_bytes``/``record_count`` take."""

    offset: int
    size: int
    cardinality: int


def dv_puffin_bytes(dvs: Mapping[str, Iterable[int]]) -> tuple[bytes, list[DVBlob]]:
    """A Puffin file holding one DV blob per data file (in the mapping's order), and where each blob is."""
    blobs = []
    cards = []
    for data_path, positions in dvs.items():
        if not isinstance(data_path, str) or not data_path:
            raise InvalidTable(f"a deletion vector references a data file path, got {data_path!r}", rule=RULE_DV_ENTRY)
        pos = _positions_array(positions, data_path)
        cards.append(len(pos))
        # snapshot-id and sequence-number are unknown when the file is written: -1 (DV-007); never compressed (DV-006).
        blobs.append(PF.Blob(type=PF.DELETION_VECTOR_V1, payload=serialize_dv(pos), fields=(ROW_POSITION_ID,),
                             properties={PROP_REFERENCED_DATA_FILE: data_path, PROP_CARDINALITY: str(len(pos))}))
    data, md = PF.write_puffin(blobs)
    return data, [DVBlob(b.offset, b.length, c) for b, c in zip(md.blobs, cards)]


def write_dv_puffin(storage: Storage, path: str, dvs: Mapping[str, Iterable[int]]) -> list[DVBlob]:
    """Write a Puffin file of DVs ({data file path: positions}) at ``path``; (offset, size, cardinality) per DV, in order."""
    data, refs = dv_puffin_bytes(dvs)
    _put(storage, path, data)
    return refs


def write_dvs(storage: Storage, path: str, dvs: Mapping[str, Iterable[int]], *,
              partitions: Mapping[str, Mapping[int, Any]] | None = None, partition: Mapping[int, Any] | None = None) -> list[MF.DataFile]:
    """Write a Puffin file of DVs and return one delete-manifest DataFile per DV (content 1, format puffin).

    Each DV's partition is its data file's: ``partitions[data path]``, else ``partition``.
    """
    data, refs = dv_puffin_bytes(dvs)
    uri = _put(storage, path, data)
    out = []
    for data_path, ref in zip(dvs, refs):
        part = (partitions or {}).get(data_path, partition or {})
        out.append(MF.DataFile(
            content=MF.POSITION_DELETES, file_path=uri, file_format="puffin", record_count=ref.cardinality,
            file_size_in_bytes=len(data), partition=dict(part), referenced_data_file=data_path,
            content_offset=ref.offset, content_size_in_bytes=ref.size,
        ))
    return out


def is_dv(f: MF.DataFile) -> bool:
    """Whether a delete file entry is a deletion vector (a position delete stored in Puffin)."""
    return f.content == MF.POSITION_DELETES and f.file_format == "puffin"


def read_dv(data: bytes, delete_file: MF.DataFile, *, footer: PF.FileMetadata | None = None) -> np.ndarray:
    """The positions of the DV a manifest entry points at, read by its offset and size and checked against the footer."""
    where = f"deletion vector for {delete_file.referenced_data_file} in {delete_file.file_path}"
    if delete_file.referenced_data_file is None or delete_file.content_offset is None or delete_file.content_size_in_bytes is None:
        raise InvalidTable(f"{where}: a DV entry needs referenced_data_file, content_offset and content_size_in_bytes",
                           path=delete_file.file_path, rule=RULE_DV_ENTRY)
    footer = footer if footer is not None else PF.read_footer(data, path=delete_file.file_path)
    off, size = delete_file.content_offset, delete_file.content_size_in_bytes
    blob = next((b for b in footer.blobs if b.offset == off), None)
    if blob is None or blob.length != size:
        raise InvalidTable(f"{where}: no Puffin blob at offset {off} with length {size} (the manifest must match the footer)",
                           path=delete_file.file_path, rule=RULE_DV_ENTRY)
    if blob.type != PF.DELETION_VECTOR_V1:
        raise InvalidTable(f"{where}: the blob at offset {off} is a {blob.type!r}, not {PF.DELETION_VECTOR_V1}", path=delete_file.file_path, rule=RULE_DV_ENTRY)
    if blob.compression_codec is not None:
        raise InvalidTable(f"{where}: deletion vectors are never compressed (codec {blob.compression_codec!r})",
                           path=delete_file.file_path, rule="ICEBERG-DV-006")
    ref = blob.properties.get(PROP_REFERENCED_DATA_FILE)
    if ref is not None and ref != delete_file.referenced_data_file:
        raise InvalidTable(f"{where}: the blob references {ref}, the manifest entry {delete_file.referenced_data_file}",
                           path=delete_file.file_path, rule=RULE_DV_ENTRY)
    return deserialize_dv(PF.read_blob(data, blob, path=delete_file.file_path), where=where)


# ---------------------------------------------------------------------------------------------
# Equality delete files


def check_equality_ids(equality_ids: Sequence[int], schema: T.Schema) -> None:
    """Refuse delete columns that are not primitive, sit in a list or map, or are float/double (DELETE-013)."""
    if not equality_ids:
        raise InvalidTable("an equality delete file needs equality_ids", rule="ICEBERG-MANIFEST-035")
    ctx = {f.id: (f, anc) for f, _path, anc in T.walk_with_context(schema)}
    for fid in equality_ids:
        if fid not in ctx:
            raise InvalidTable(f"equality id {fid} is not a field of the schema", rule="ICEBERG-DELETE-012")
        f, anc = ctx[fid]
        if not T.is_primitive(f.type) or f.type == T.UNKNOWN:
            raise InvalidTable(f"equality delete column {f.name} (id {fid}) must be primitive, not {f.type}", rule=RULE_EQ_COLUMNS)
        if f.type in (T.FLOAT, T.DOUBLE):
            raise InvalidTable(f"equality delete column {f.name} (id {fid}) must not be float or double", rule=RULE_EQ_COLUMNS)
        if any(not isinstance(a.type, T.StructType) for a in anc):
            raise InvalidTable(f"equality delete column {f.name} (id {fid}) must not be inside a list or map", rule=RULE_EQ_COLUMNS)


def _arrow_to_internal(v: Any, t: T.IcebergType) -> Any:
    if t in T.TIMESTAMP_TYPES or t in (T.DATE, T.TIME):
        return v  # already integers (cast to the storage integer below)
    return V.to_internal(v, t)


def _column_bounds(col: pa.ChunkedArray, t: T.IcebergType) -> tuple[bytes | None, bytes | None]:
    """Lower/upper single-value bounds of a primitive column (None where there is nothing to bound)."""
    if not T.is_primitive(t) or t in (T.UNKNOWN, T.FLOAT, T.DOUBLE, T.BOOLEAN) or isinstance(t, (T.GeometryType, T.GeographyType)):
        return None, None
    arr = col
    if t in T.TIMESTAMP_TYPES or t == T.TIME:
        arr = col.cast(pa.int64())
    elif t == T.DATE:
        arr = col.cast(pa.int32())
    try:
        mm = pc.min_max(arr)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        if lo is None:
            return None, None
        return V.to_bytes(_arrow_to_internal(lo, t), t), V.to_bytes(_arrow_to_internal(hi, t), t)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, InvalidTable, Unsupported, TypeError, ValueError):
        return None, None  # bounds are optional


def write_equality_deletes(storage: Storage, path: str, rows: pa.Table, equality_ids: Sequence[int], schema: T.Schema, *,
                           partition: Mapping[int, Any] | None = None) -> MF.DataFile:
    """Write a Parquet equality delete file of ``rows`` (columns named as top-level ``schema`` fields); its DataFile (content 2).

    The file stores the given columns with the table's field ids; every equality id must be among them.
    """
    check_equality_ids(equality_ids, schema)
    fields = []
    arrays = []
    for name in rows.column_names:
        f = schema.field_by_name(name)
        if f is None:
            raise InvalidTable(f"equality delete column {name!r} is not a top-level field of the schema", rule="ICEBERG-DELETE-012")
        af = T.to_arrow_field(f)
        try:
            arrays.append(rows.column(name).cast(af.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InvalidTable(f"equality delete column {name!r} cannot be stored as {f.type}: {exc}", rule="ICEBERG-DELETE-012") from None
        fields.append(pa.field(af.name, af.type, nullable=True, metadata=af.metadata))
    present = set()
    for f in fields:
        present |= T.field_ids_of_arrow(pa.schema([f]))
    missing = [fid for fid in equality_ids if fid not in present]
    if missing:
        raise InvalidTable(f"equality ids {missing} are not columns of the delete rows", rule="ICEBERG-MANIFEST-035")
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    data = _parquet_bytes(table)
    uri = _put(storage, path, data)
    n = table.num_rows
    value_counts, null_counts, lower, upper = {}, {}, {}, {}
    for f, col in zip(fields, table.columns):
        fid = int(f.metadata[T.PARQUET_FIELD_ID])
        t = schema.find_type(fid)
        if t is None or not T.is_primitive(t):
            continue
        value_counts[fid], null_counts[fid] = n, col.null_count
        lo, hi = _column_bounds(col, t)
        if lo is not None:
            lower[fid], upper[fid] = lo, hi
    return MF.DataFile(
        content=MF.EQUALITY_DELETES, file_path=uri, file_format="parquet", record_count=n, file_size_in_bytes=len(data),
        partition=dict(partition or {}), value_counts=value_counts, null_value_counts=null_counts,
        lower_bounds=lower, upper_bounds=upper, equality_ids=tuple(equality_ids),
    )


def _codes(col: pa.Array) -> np.ndarray:
    """Dense integer codes of a column's values; null gets its own code (so null matches null)."""
    enc = pc.dictionary_encode(col)
    idx = enc.indices.to_numpy(zero_copy_only=False)
    idx = np.where(enc.indices.is_null().to_numpy(zero_copy_only=False), -1, idx).astype(np.int64) if enc.null_count else idx.astype(np.int64)
    return idx + 1


def equality_delete_mask(data: pa.Table, deletes: pa.Table) -> np.ndarray:
    """True for each data row equal, on every column, to some delete row; null equals null (Equality Delete Files).

    ``data`` and ``deletes`` have the same columns in the same order and types (the delete columns).
    """
    n = data.num_rows
    if n == 0 or deletes.num_rows == 0:
        return np.zeros(n, dtype=bool)
    if data.num_columns != deletes.num_columns or data.num_columns == 0:
        raise InvalidTable("equality delete comparison needs the same delete columns on both sides")
    key = None
    for dcol, xcol in zip(data.columns, deletes.columns):
        both = pa.concat_arrays(dcol.chunks + xcol.cast(dcol.type).chunks) if (dcol.num_chunks or xcol.num_chunks) else pa.array([], dcol.type)
        codes = _codes(both)
        if key is None:
            key = codes
        else:
            # Combine column codes, then re-densify so the combined code never outgrows the row count.
            combined = key * (int(codes.max()) + 1) + codes
            _u, key = np.unique(combined, return_inverse=True)
            key = key.astype(np.int64)
    data_keys, delete_keys = key[:n], key[n:]
    return np.isin(data_keys, delete_keys)
