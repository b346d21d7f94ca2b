"""Data files (Data File Fields, Writing data files, Appendix A Parquet): what a manifest entry says about its file, checked on the file.

Every data and delete file live in some listed snapshot must exist with the size the entry
gives and the format its magic bytes show. A Parquet data file carries an Iceberg field id on
every column, holds every column of the schema it was written with (never an ``unknown`` one),
has the entry's record count, column metrics that describe its values, and rows whose partition
values are the entry's tuple.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import LakeconfError
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as VAL
from reference_impl.iceberg.validate.context import (
    MAGIC_AVRO, MAGIC_ORC, MAGIC_PARQUET, MAGIC_PUFFIN, Blob, Context, ListedManifest,
)
from reference_impl.iceberg.validate.checks_manifests import impossible_value
from reference_impl.iceberg.validate.registry import V, Violation, at, check

FID = T.PARQUET_FIELD_ID
# Comparing bounds of these types is either undefined by the spec or ambiguous between implementations.
NO_ORDER = ("uuid", "unknown", "variant")


def files(ctx: Context, content: tuple[int, ...] | None = None) -> Iterator[tuple[str, ListedManifest, MF.ManifestEntry]]:
    """Each live data/delete file once, with the entry that added it (or the first that lists it)."""
    for path, refs in ctx.referenced_files.items():
        pick = next(((lm, e) for lm, e in refs if e.status == MF.ADDED and lm.mf.added_snapshot_id == lm.snapshot.snapshot_id), refs[0])
        if content is None or pick[1].data_file.content in content:
            yield path, pick[0], pick[1]


def field_id(f: pa.Field) -> int | None:
    """The Iceberg field id an Arrow field read from Parquet carries (None when absent or not a number)."""
    raw = (f.metadata or {}).get(FID)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def is_variant(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) and t.num_fields == 2 and {t.field(i).name for i in range(2)} == {"metadata", "value"}


def arrow_fields(schema: pa.Schema) -> Iterator[tuple[pa.Field, str, bool]]:
    """Every Arrow field at every depth: (field, dotted path, exempt from ids) -- a variant's metadata/value carry none."""
    def rec(f: pa.Field, path: str, exempt: bool) -> Iterator[tuple[pa.Field, str, bool]]:
        yield f, path, exempt
        t = f.type
        kids: list[pa.Field] = []
        if pa.types.is_struct(t):
            kids = [t.field(i) for i in range(t.num_fields)]
        elif pa.types.is_map(t):
            kids = [t.key_field, t.item_field]
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            kids = [t.value_field]
        child_exempt = is_variant(t) and all(field_id(k) is None for k in kids)
        for k in kids:
            yield from rec(k, f"{path}.{k.name}", child_exempt)

    for f in schema:
        yield from rec(f, f.name, False)


def top_column(table: pa.Table, fid: int) -> pa.ChunkedArray | None:
    """The top-level column carrying field id ``fid``."""
    for i, f in enumerate(table.schema):
        if field_id(f) == fid:
            return table.column(i)
    return None


def column_by_id(table: pa.Table, fid: int) -> pa.Array | None:
    """The column with field id ``fid``, top level or inside structs (a null parent makes the child null)."""
    def rec(arr: pa.Array, t: pa.DataType) -> pa.Array | None:
        for i in range(t.num_fields):
            f = t.field(i)
            child = arr.field(i)
            if arr.null_count:
                child = pc.if_else(arr.is_valid(), child, pa.nulls(len(child), child.type))
            if field_id(f) == fid:
                return child
            if pa.types.is_struct(f.type):
                found = rec(child, f.type)
                if found is not None:
                    return found
        return None

    for i, f in enumerate(table.schema):
        col = table.column(i).combine_chunks() if table.num_rows else pa.array([], f.type)
        if field_id(f) == fid:
            return col
        if pa.types.is_struct(f.type):
            found = rec(col, f.type)
            if found is not None:
                return found
    return None


@check("META-031", "META-009", "MANIFEST-022", "MANIFEST-019", "FMT-013")
def files_exist(ctx: Context) -> Iterator[Violation]:
    """Every file a listed snapshot references exists under the table, with the entry's size and format,
    and its content decodes (strings valid UTF-8, pages readable)."""
    for path, lm, e in files(ctx):
        d = e.data_file
        b = ctx.blob(path)
        w = b.where
        if b.rel is None:
            yield V("META-009", f"{b.error} (not under the table location)", w)
            continue
        if b.missing:
            yield V("META-031", f"file referenced by {lm.file.where} (snapshot {lm.snapshot.snapshot_id}) does not exist", w)
            continue
        if b.data is None:
            yield V("META-031", f"file {b.error}", w)
            continue
        if len(b.data) != d.file_size_in_bytes:
            yield V("MANIFEST-022", f"file_size_in_bytes {d.file_size_in_bytes} but the file has {len(b.data)} bytes", w)
        fmt = d.file_format
        ok = {
            "parquet": b.data[:4] == MAGIC_PARQUET and b.data[-4:] == MAGIC_PARQUET,
            "avro": b.data[:4] == MAGIC_AVRO,
            "orc": b.data[:3] == MAGIC_ORC,
            "puffin": b.data[:4] == MAGIC_PUFFIN,
        }.get(fmt, True)
        if not ok:
            yield V("MANIFEST-019", f"file_format is {fmt} but the file's magic bytes say otherwise", w)
        elif fmt == "parquet" and ctx.parquet(b) is None:
            yield V("MANIFEST-019", f"file_format is parquet but the footer does not read: {ctx.parquet_errors.get(b.uri)}", w)
        elif fmt == "parquet" and ctx.table_of(b) is None:
            error = ctx.parquet_errors.get(b.uri) or "unreadable"
            rule = "FMT-013" if "UTF8" in error or "UTF-8" in error else "MANIFEST-019"
            yield V(rule, f"the Parquet file's content does not decode: {error}", w)


@check("MANIFEST-034")
def split_offsets(ctx: Context) -> Iterator[Violation]:
    """split_offsets lie inside the file."""
    for path, _lm, e in files(ctx):
        d = e.data_file
        b = ctx.blob(path)
        size = len(b.data) if b.data is not None else d.file_size_in_bytes  # a wrong size is MANIFEST-022's
        if d.split_offsets and max(d.split_offsets) >= size:
            yield V("MANIFEST-034", f"split offset {max(d.split_offsets)} is not inside the file ({size} bytes)", b.where)


def _parquet(ctx: Context, path: str) -> tuple[Blob, Any]:
    b = ctx.blob(path)
    return b, ctx.parquet(b) if b.data is not None and b.data[:4] == MAGIC_PARQUET else None


@check("FMT-009", "GEN-008", "FMT-008", "MANIFEST-021")
def data_file_columns(ctx: Context) -> Iterator[Violation]:
    """A Parquet data file has an id on every column, every column of its schema but unknown ones, and the entry's record count."""
    for path, lm, e in files(ctx, (MF.DATA,)):
        b, pf = _parquet(ctx, path)
        if pf is None:
            continue
        w = b.where
        if pf.metadata.num_rows != e.data_file.record_count:
            yield V("MANIFEST-021", f"record_count {e.data_file.record_count} but the file has {pf.metadata.num_rows} rows", w)
        have: set[int] = set()
        id_less = False
        for f, fpath, exempt in arrow_fields(pf.schema_arrow):
            fid = field_id(f)
            if fid is None and not exempt:
                id_less = True
                yield V("FMT-009", f"column {fpath} carries no field_id", w)
            elif fid is not None:
                have.add(fid)
        schema = lm.manifest.metadata.schema if lm.manifest is not None else None
        if schema is None or id_less:
            continue  # without ids, which columns the file holds cannot be told
        written_now = e.status == MF.ADDED and lm.mf.added_snapshot_id == e.snapshot_id
        for f, fpath, anc in T.walk_with_context(schema):
            if f.type == T.UNKNOWN:
                if f.id in have:
                    yield V("FMT-008", f"column {'.'.join(fpath)} of type unknown is stored in the file", w)
            elif written_now and f.id not in have and not any(a.type == T.UNKNOWN or a.type == T.VARIANT for a in anc) and not any(
                    a.id not in have for a in anc):
                yield V("GEN-008", f"column {'.'.join(fpath)} (id {f.id}) of the schema it was written with is missing from the file", w)


def _compare_key(x: Any) -> Any:
    if isinstance(x, float):
        return (x, math.copysign(1.0, x))
    if isinstance(x, str):
        return x.encode("utf-8")
    return x


def _metrics_rules(content: int) -> dict[str, str]:
    """Data files: one rule per metric; delete files: 'metrics describe the deleted rows' for all (MANIFEST-042)."""
    if content == MF.DATA:
        return {"value": "MANIFEST-025", "null": "MANIFEST-026", "nan": "MANIFEST-027", "lower": "MANIFEST-029",
                "upper": "MANIFEST-030", "serde": "MANIFEST-031", "order": "MANIFEST-032"}
    return {k: "MANIFEST-042" for k in ("value", "null", "nan", "lower", "upper", "serde", "order")}


@check("MANIFEST-025", "MANIFEST-026", "MANIFEST-027", "MANIFEST-029", "MANIFEST-030", "MANIFEST-031", "MANIFEST-032", "MANIFEST-042")
def column_metrics(ctx: Context) -> Iterator[Violation]:
    """value/null/NaN counts and lower/upper bounds of top-level primitive columns describe the file's values."""
    for path, lm, e in files(ctx, (MF.DATA, MF.POSITION_DELETES, MF.EQUALITY_DELETES)):
        d = e.data_file
        if d.file_format != "parquet" or not any((d.value_counts, d.null_value_counts, d.nan_value_counts, d.lower_bounds, d.upper_bounds)):
            continue
        b, pf = _parquet(ctx, path)
        table = ctx.table_of(b) if pf is not None else None
        if table is None:
            continue
        schema = lm.manifest.metadata.schema if lm.manifest is not None else None
        rules = _metrics_rules(d.content)
        for i, af in enumerate(table.schema):
            fid = field_id(af)
            if fid is None:
                continue
            t = schema.find_type(fid) if schema is not None else None
            if t is None:
                t = {MF.POSITION_DELETES: {2147483546: T.STRING, 2147483545: T.LONG}}.get(d.content, {}).get(fid)
            if t is None or not T.is_primitive(t) or isinstance(t, (T.GeometryType, T.GeographyType)):
                continue
            w = at(b.where, f"column {af.name} (id {fid})")
            col = table.column(i)
            n, nulls = len(col), col.null_count
            is_float = t in (T.FLOAT, T.DOUBLE)
            nans = int(pc.sum(pc.is_nan(col)).as_py() or 0) if is_float and n else 0
            if d.value_counts and fid in d.value_counts and d.value_counts[fid] != n:
                yield V(rules["value"], f"value_counts says {d.value_counts[fid]}, the column holds {n} values", w)
            if d.null_value_counts and fid in d.null_value_counts and d.null_value_counts[fid] != nulls:
                yield V(rules["null"], f"null_value_counts says {d.null_value_counts[fid]}, the column holds {nulls} nulls", w)
            if d.nan_value_counts and fid in d.nan_value_counts and d.nan_value_counts[fid] != nans:
                yield V(rules["nan"], f"nan_value_counts says {d.nan_value_counts[fid]}, the column holds {nans} NaNs", w)
            if (t.name if isinstance(t, T.PrimitiveType) else "") in NO_ORDER:
                continue
            lower = (d.lower_bounds or {}).get(fid)
            upper = (d.upper_bounds or {}).get(fid)
            if lower is None and upper is None:
                continue
            try:
                vals = [x for x in X.arrow_to_internal(col, t) if x is not None and not (isinstance(x, float) and math.isnan(x))]
            except LakeconfError:
                continue
            for label, raw, pick in (("lower", lower, min), ("upper", upper, max)):
                if raw is None:
                    continue
                try:
                    bound = VAL.bound_from_bytes(raw, t)
                except LakeconfError as exc:
                    yield V(rules["serde"], f"{label} bound is not a {t} single value: {exc.message}", w)
                    continue
                if isinstance(bound, float) and math.isnan(bound):
                    yield V(rules["order"], f"{label} bound is NaN", w)
                    continue
                if not vals:
                    continue
                extreme = pick(vals, key=_compare_key)
                if isinstance(bound, float) and bound == 0.0 and extreme == 0.0 and _compare_key(bound) != _compare_key(extreme):
                    if (label == "lower" and _compare_key(bound) > _compare_key(extreme)) or (label == "upper" and _compare_key(bound) < _compare_key(extreme)):
                        yield V(rules["order"], f"{label} bound {bound!r} but {extreme!r} occurs (-0.0 precedes +0.0)", w)
                    continue
                if label == "lower" and _compare_key(bound) > _compare_key(extreme):
                    yield V(rules["lower"], f"lower bound {bound!r} is above the smallest value {extreme!r}", w)
                if label == "upper" and _compare_key(bound) < _compare_key(extreme):
                    yield V(rules["upper"], f"upper bound {bound!r} is below the largest value {extreme!r}", w)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@check("PART-001")
def partition_tuples(ctx: Context) -> Iterator[Violation]:
    """Every row of a data file has the partition values of its manifest entry."""
    for path, lm, e in files(ctx, (MF.DATA,)):
        man = lm.manifest
        if man is None or not man.metadata.spec.fields:
            continue
        b, pf = _parquet(ctx, path)
        table = ctx.table_of(b) if pf is not None else None
        if table is None or table.num_rows == 0:
            continue
        spec, schema = man.metadata.spec, man.metadata.schema
        for f in spec.fields:
            tr = f.transform
            if not tr.is_known or isinstance(tr, X.VoidTransform) or len(f.source_ids) != 1:
                continue
            src = schema.find_type(f.source_id)
            col = column_by_id(table, f.source_id)
            if src is None or col is None:
                continue
            try:
                values = X.arrow_to_internal(col, src)
                seen = {}
                for x in values:
                    k = repr(x)
                    if k not in seen:
                        seen[k] = tr.apply(x, src)
            except (LakeconfError, TypeError, ValueError, OverflowError):
                continue
            want = e.data_file.partition.get(f.field_id)
            if impossible_value(tr, src, want) is not None:
                continue  # the value itself is impossible: partition_values says so
            bad = next((got for got in seen.values() if not _same(got, want)), "\x00none")
            if bad != "\x00none":
                yield V("PART-001", f"a row has {f.name}={bad!r}, the entry's partition value is {want!r}", at(b.where, f"partition field {f.name}"))


@check("STATS-002", "STATS-004")
def statistics_files(ctx: Context) -> Iterator[Violation]:
    """Registered statistics files exist with the sizes metadata gives: Puffin table statistics (file and footer), partition statistics."""
    from reference_impl.iceberg.validate import puffin_blobs as PB

    md = ctx.md
    if md is None:
        return
    for s in md.statistics:
        b = ctx.blob(s.statistics_path)
        w = b.where
        if b.data is None:
            yield V("STATS-002", f"statistics file of snapshot {s.snapshot_id} {b.error}", w)
            continue
        if len(b.data) != s.file_size_in_bytes:
            yield V("STATS-002", f"file-size-in-bytes {s.file_size_in_bytes} but the file has {len(b.data)} bytes", w)
        footer = PB.read_footer(b.data)
        if footer.container:
            yield V("STATS-002", f"statistics file is not a Puffin file: {footer.container[0]}", w)
        elif footer.footer_size != s.file_footer_size_in_bytes:
            yield V("STATS-002", f"file-footer-size-in-bytes {s.file_footer_size_in_bytes} but the footer takes {footer.footer_size} bytes", w)
    for s in md.partition_statistics:
        b = ctx.blob(s.statistics_path)
        if b.data is None:
            yield V("STATS-004", f"partition statistics file of snapshot {s.snapshot_id} {b.error}", b.where)
        elif len(b.data) != s.file_size_in_bytes:
            yield V("STATS-004", f"file-size-in-bytes {s.file_size_in_bytes} but the file has {len(b.data)} bytes", b.where)
