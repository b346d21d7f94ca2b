"""Delete Formats: position delete files, equality delete files and deletion vectors, checked on the files.

Position delete files have the reserved ``file_path``/``pos`` columns (and a required ``row``
struct when rows are kept), name data files by their exact manifest path and are sorted by path
then position. Equality delete files use the table's field ids and hold every column of
``equality_ids``, which must be primitive, outside lists and maps, and not floating point.
Deletion vectors are ``deletion-vector-v1`` blobs of a valid Puffin file at exactly the entry's
offset and size, with the blob properties and -1 ids Puffin v1 requires.
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from reference_impl.common.numbers import ascii_int
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import types as T
from reference_impl.iceberg.validate import puffin_blobs as PB
from reference_impl.iceberg.validate.checks_files import _parquet, arrow_fields, field_id, files
from reference_impl.iceberg.validate.context import MAGIC_PUFFIN, Context
from reference_impl.iceberg.validate.registry import V, Violation, at, check

FILE_PATH_ID, POS_ID, ROW_ID = 2147483546, 2147483545, 2147483544


@check("DELETE-003", "DELETE-005", "DELETE-006", "DELETE-008", "DELETE-009", "MANIFEST-039", "MANIFEST-021")
def position_delete_files(ctx: Context) -> Iterator[Violation]:
    """Position delete files: reserved columns with ids, exact data file paths, sorted rows, full ``row`` values."""
    known = ctx.known_data_paths
    for path, lm, e in files(ctx, (MF.POSITION_DELETES,)):
        d = e.data_file
        if d.file_format == "puffin":
            continue  # deletion vectors: see deletion_vectors
        b, pf = _parquet(ctx, path)
        table = ctx.table_of(b) if pf is not None else None
        if table is None:
            continue
        w = b.where
        if table.num_rows != d.record_count:
            yield V("MANIFEST-021", f"record_count {d.record_count} but the file has {table.num_rows} rows", w)
        id_less = [fpath for f, fpath, exempt in arrow_fields(table.schema) if field_id(f) is None and not exempt]
        for fpath in id_less:
            yield V("DELETE-003", f"column {fpath} of the delete file carries no field_id", w)
        if id_less:
            continue  # columns are found by id; without them the rest cannot be checked
        by_id = {field_id(f): (i, f) for i, f in enumerate(table.schema) if field_id(f) is not None}
        want = {FILE_PATH_ID: ("file_path", pa.types.is_string), POS_ID: ("pos", pa.types.is_int64)}
        ok = True
        for fid, (name, is_type) in want.items():
            if fid not in by_id:
                ok = False
                yield V("DELETE-005", f"position delete file lacks the {name} column (id {fid})", w)
            elif not (is_type(by_id[fid][1].type) or (fid == FILE_PATH_ID and pa.types.is_large_string(by_id[fid][1].type))):
                ok = False
                yield V("DELETE-005", f"{name} (id {fid}) has type {by_id[fid][1].type}", w)
        if ROW_ID in by_id:
            rf = by_id[ROW_ID][1]
            if not pa.types.is_struct(rf.type):
                yield V("DELETE-005", f"row (id {ROW_ID}) must be a struct, got {rf.type}", w)
            elif table.column(by_id[ROW_ID][0]).null_count:
                yield V("DELETE-008", "the row column is present but some delete entries leave it null", w)
            else:
                ids = {field_id(k) for k, _p, _x in arrow_fields(pa.schema([rf]))} - {ROW_ID, None}
                table_ids = {f.id for s in (ctx.md.schemas if ctx.md else ()) for f, _p, _a in T.walk_with_context(s)}
                if ctx.md is not None and not ids <= table_ids:
                    yield V("DELETE-008", f"row holds field ids {sorted(ids - table_ids)} that no table schema has", w)
        if not ok:
            continue
        paths = table.column(by_id[FILE_PATH_ID][0]).to_pylist()
        poss = table.column(by_id[POS_ID][0]).to_pylist()
        pairs = list(zip(paths, poss))
        if any(p is None or q is None for p, q in pairs):
            yield V("DELETE-005", "file_path and pos are required but some rows are null", w)
            continue
        if pairs != sorted(pairs, key=lambda pq: (pq[0].encode("utf-8"), pq[1])):
            yield V("DELETE-009", "rows are not sorted by file_path, then pos", w)
        for p in sorted(set(paths)):
            if p not in known:
                yield V("DELETE-006", f"file_path {p!r} is not the file_path of any data file in the table's manifests", w)
        if d.referenced_data_file is not None and set(paths) - {d.referenced_data_file}:
            yield V("MANIFEST-039", f"referenced_data_file is {d.referenced_data_file} but the file deletes from others too", w)


@check("DELETE-003", "DELETE-012", "DELETE-013", "MANIFEST-035")
def equality_delete_files(ctx: Context) -> Iterator[Violation]:
    """Equality delete files: table field ids on every column, every equality id present, equality columns of allowed types."""
    md = ctx.md
    for path, lm, e in files(ctx, (MF.EQUALITY_DELETES,)):
        d = e.data_file
        schema = lm.manifest.metadata.schema if lm.manifest is not None else None
        w = ctx.blob(path).where
        contexts = {f.id: (f, anc) for f, _p, anc in T.walk_with_context(schema)} if schema is not None else {}
        for fid in d.equality_ids or ():
            if fid not in contexts:
                continue
            f, anc = contexts[fid]
            if not T.is_primitive(f.type) or f.type in (T.FLOAT, T.DOUBLE) or any(isinstance(a.type, (T.ListType, T.MapType)) for a in anc):
                yield V("DELETE-013", f"equality field {f.name} (id {fid}, {f.type}) cannot be a delete column", w)
        if d.file_format != "parquet":
            continue
        b, pf = _parquet(ctx, path)
        if pf is None:
            continue
        have: set[int] = set()
        for f, fpath, exempt in arrow_fields(pf.schema_arrow):
            fid = field_id(f)
            if fid is None and not exempt:
                yield V("DELETE-003", f"column {fpath} of the delete file carries no field_id", w)
            elif fid is not None:
                have.add(fid)
        table_ids = {f.id for s in (md.schemas if md else ()) for f, _p, _a in T.walk_with_context(s)}
        if md is not None:
            for fid in sorted(have - table_ids):
                yield V("DELETE-012", f"column id {fid} of the delete file is not a field id of the table", w)
        for fid in d.equality_ids or ():
            if fid not in have:
                yield V("MANIFEST-035", f"equality id {fid} is not a column of the delete file", w)


@check("DV-002", "DV-004", "DV-005", "DV-006", "DV-007", "DV-008", "DV-014", "DV-015")
def deletion_vectors(ctx: Context) -> Iterator[Violation]:
    """Each DV entry points at a deletion-vector-v1 blob of a valid Puffin file, with matching offset, size, properties and cardinality."""
    footers: dict[str, PB.Footer] = {}
    seen: set[tuple[str, int | None]] = set()
    for lm, e in ((lm, e) for refs in ctx.referenced_files.values() for lm, e in refs):
        d = e.data_file
        if d.file_format != "puffin" or d.content != MF.POSITION_DELETES or (d.file_path, d.content_offset) in seen:
            continue
        seen.add((d.file_path, d.content_offset))
        b = ctx.blob(d.file_path)
        if b.data is None or b.data[:4] != MAGIC_PUFFIN:
            continue  # missing, or not Puffin by its magic: files_exist says so
        w = at(b.where, f"blob at {d.content_offset}")
        if b.uri not in footers:
            footers[b.uri] = PB.read_footer(b.data)
            for msg in footers[b.uri].container:
                yield V("DV-014", msg, b.where)
            for msg in footers[b.uri].payload:
                yield V("DV-015", msg, b.where)
        ft = footers[b.uri]
        if d.content_offset is None or d.content_size_in_bytes is None:
            continue  # validate_manifest names the missing fields (DV-008)
        blob = next((x for x in ft.blobs if x.get("offset") == d.content_offset), None)
        if blob is None:
            if not ft.container:
                yield V("DV-008", f"no blob of the Puffin footer starts at content_offset {d.content_offset}", w)
            continue
        if blob.get("length") != d.content_size_in_bytes:
            yield V("DV-008", f"content_size_in_bytes {d.content_size_in_bytes} but the blob's length is {blob.get('length')}", w)
        if blob.get("type") != PB.DV_TYPE:
            yield V("DV-002", f"blob type is {blob.get('type')!r}, not {PB.DV_TYPE}", w)
            continue
        props = blob.get("properties") if isinstance(blob.get("properties"), dict) else {}
        if props.get("referenced-data-file") != d.referenced_data_file:
            yield V("DV-006", f"blob property referenced-data-file {props.get('referenced-data-file')!r} is not the entry's {d.referenced_data_file!r}", w)
        if "compression-codec" in blob:
            yield V("DV-006", "a deletion-vector-v1 blob must not set compression-codec", w)
        if blob.get("snapshot-id") != -1 or blob.get("sequence-number") != -1:
            yield V("DV-007", f"blob snapshot-id/sequence-number are {blob.get('snapshot-id')}/{blob.get('sequence-number')}, not -1/-1", w)
        off, length = blob.get("offset"), blob.get("length")
        if not isinstance(off, int) or not isinstance(length, int) or off < 4 or off + length > len(b.data):
            yield V("DV-008", f"blob offset {off} and length {length} do not lie inside the file", w)
            continue
        dv = PB.decode_dv(b.data[off:off + length])
        for msg in dv.framing:
            yield V("DV-004", msg, w)
        for msg in dv.vector:
            yield V("DV-005", msg, w)
        if dv.cardinality is None:
            continue
        card = props.get("cardinality")
        if card is None or ascii_int(str(card)) != dv.cardinality:
            yield V("DV-006", f"blob property cardinality {card!r} but the vector holds {dv.cardinality} positions", w)
        if d.record_count != dv.cardinality:
            yield V("DV-008", f"record_count {d.record_count} but the vector holds {dv.cardinality} positions", w)
