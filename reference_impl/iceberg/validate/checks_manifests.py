"""Manifests and Manifest Lists: the Avro files of every listed snapshot, their key-value metadata and entries.

Structure first (ids, required and retired fields, per the file's own format version), then the
reference's ``snapshots.validate_snapshot`` and ``manifests.validate_manifest`` per snapshot and
manifest, then what they leave out: partition values against their transforms, partition summaries
against the entries, operations against what a snapshot changed, sequence numbers and row ids
that must never change, and the one-DV-per-data-file rule.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import replace
from typing import Any, Iterator

from reference_impl.common.numbers import ascii_int
from reference_impl.errors import LakeconfError
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as VAL
from reference_impl.iceberg.validate import avro_schema as AS
from reference_impl.iceberg.validate.checks_metadata import URI_SCHEME
from reference_impl.iceberg.validate.context import AvroFile, Context, ListedManifest, manifest_refs
from reference_impl.iceberg.validate.registry import V, Violation, at, check, rid


def _kv_version(af: AvroFile) -> int | None:
    fv = af.meta.get(MF.KV_FORMAT_VERSION) if af.meta else None
    n = ascii_int(fv)
    return n if n is not None and 1 <= n <= 3 else None


def _shape_version(af: AvroFile, table_version: int) -> int:
    """The version a file without a usable format-version key was written under, judged by its fields."""
    have = AS.fields_by_id(af.schema)
    if af.kind == "manifest list":
        if MF.ML_FIRST_ROW_ID in have:
            return 3
        return min(2, table_version) if MF.ML_SEQUENCE_NUMBER in have else 1
    data = AS.fields_by_id(AS.record_of(have.get(MF.ID_DATA_FILE)))
    if MF.ID_FIRST_ROW_ID in data or MF.ID_CONTENT_OFFSET in data:
        return 3
    if MF.ID_CONTENT in data or MF.ID_SEQUENCE_NUMBER in have:
        return min(2, table_version)
    return 1


def file_version(af: AvroFile, table_version: int) -> int:
    """The format version a manifest or manifest list was written under."""
    return _kv_version(af) or _shape_version(af, table_version)


def _lists(ctx: Context) -> Iterator[tuple[M.Snapshot, AvroFile]]:
    for s in ctx.snapshots():
        af = ctx.manifest_list(s)
        if af is not None:
            yield s, af


# ------------------------------------------------------------------------------------------ readability


@check("META-031", "MLIST-002", "MANIFEST-002", "MANIFEST-001", "META-009", blocker=True, relay=True)
def avro_files_readable(ctx: Context) -> Iterator[Violation]:
    """Every listed manifest list and manifest exists, is Avro, and the reference reader accepts it; else what blocked it."""
    files = [af for _s, af in _lists(ctx)] + [af for _s, _mf, af in manifest_refs(ctx)]
    seen: set[str] = set()
    for af in files:
        if af.blob.uri in seen:
            continue
        seen.add(af.blob.uri)
        rule = "MLIST-002" if af.kind == "manifest list" else "MANIFEST-002"
        if af.blob.rel is None:
            yield V("META-009", f"{af.kind} {af.blob.error} (it is not under the table location)", af.where)
        elif af.blob.missing:
            yield V("META-031", f"{af.kind} does not exist", af.where)
        elif af.blob.data is None:
            yield V("META-031", f"{af.kind} {af.blob.error}", af.where)
        elif af.avro_error is not None:
            yield V(rule, af.avro_error.message, af.where)
        elif af.parse_error is not None:
            exc = af.parse_error
            yield Violation(rule=exc.rule or rid(rule), message=f"{af.kind} does not read: {exc.message}", where=af.where)


# ------------------------------------------------------------------------------------------ Avro structure


STRUCTURE_RULES = ("MLIST-002", "MANIFEST-002", "FMT-006", "FMT-001", "FMT-002", "FMT-003", "GEN-001", "GEN-002",
                   "COMPAT-001", "MLIST-003", "MLIST-004", "MLIST-005", "MLIST-006", "MLIST-007", "MLIST-008",
                   "MLIST-009", "MLIST-010", "MLIST-011", "MLIST-014", "MANIFEST-010", "MANIFEST-011", "MANIFEST-013",
                   "MANIFEST-017", "MANIFEST-018", "MANIFEST-019", "MANIFEST-020", "MANIFEST-021", "MANIFEST-022",
                   "MANIFEST-023", "MANIFEST-028", "MANIFEST-041")


@check(*STRUCTURE_RULES)
def avro_schemas(ctx: Context) -> Iterator[Violation]:
    """Manifest list and manifest schemas carry every id as a JSON int, only [null, T] unions, and their version's fields."""
    if ctx.md is None:
        return
    tv = ctx.md.format_version
    done: set[str] = set()
    # Files written alike share their schema text: judge each distinct schema once (linear in history).
    judged: dict[tuple, list] = {}
    items = [(af, "MLIST-002") for _s, af in _lists(ctx)] + [(af, "MANIFEST-002") for _s, _mf, af in manifest_refs(ctx)]
    for af, missing in items:
        if af.schema is None or af.blob.uri in done:
            continue
        done.add(af.blob.uri)
        v = file_version(af, tv)
        key = (af.meta.get("avro.schema"), af.kind, v, missing)
        problems = judged.get(key)
        if problems is None:
            problems = list(AS.walk_ids(af.schema, missing))
            problems += list(AS.manifest_list_problems(af.schema, v) if af.kind == "manifest list" else AS.manifest_problems(af.schema, v))
            judged[key] = problems
        for p in problems:
            yield V(p.rule, p.message, at(af.where, p.path))


@check("MANIFEST-004", "MANIFEST-005", "MANIFEST-006", "MANIFEST-007", "MANIFEST-008", "MANIFEST-009", "MANIFEST-003")
def manifest_key_value_metadata(ctx: Context) -> Iterator[Violation]:
    """A manifest's key-value metadata: schema, schema-id, partition-spec (the bare fields), its id, format-version, content."""
    md = ctx.md
    if md is None:
        return
    for _s, mf, af in manifest_refs(ctx):
        if af.schema is None:
            continue
        meta, w = af.meta, af.where
        v = file_version(af, md.format_version)
        if MF.KV_SCHEMA not in meta:
            yield V("MANIFEST-004", "manifest metadata lacks 'schema'", at(w, MF.KV_SCHEMA))
        else:
            try:
                T.parse_schema(meta[MF.KV_SCHEMA])
            except LakeconfError as exc:
                yield V("MANIFEST-004", f"manifest 'schema' is not a schema: {exc.message}", at(w, MF.KV_SCHEMA))
        if v >= 2:
            sid = meta.get(MF.KV_SCHEMA_ID)
            if sid is None:
                yield V("MANIFEST-005", "v2+ manifest metadata lacks 'schema-id'", at(w, MF.KV_SCHEMA_ID))
            elif ascii_int(sid, signed=True) is None or md.schema_by_id(int(sid)) is None:
                yield V("MANIFEST-005", f"manifest schema-id {sid!r} names no schema of the table", at(w, MF.KV_SCHEMA_ID))
        raw_spec = meta.get(MF.KV_PARTITION_SPEC)
        fields = None
        if raw_spec is None:
            yield V("MANIFEST-006", "manifest metadata lacks 'partition-spec'", at(w, MF.KV_PARTITION_SPEC))
        else:
            try:
                fields = json.loads(raw_spec)
            except ValueError:
                fields = None
            if not isinstance(fields, list):
                yield V("MANIFEST-006", "manifest 'partition-spec' must be the JSON array of partition fields", at(w, MF.KV_PARTITION_SPEC))
                fields = None
        spec_id = meta.get(MF.KV_PARTITION_SPEC_ID)
        if spec_id is None:
            if v >= 2:
                yield V("MANIFEST-007", "v2+ manifest metadata lacks 'partition-spec-id'", at(w, MF.KV_PARTITION_SPEC_ID))
        elif ascii_int(spec_id, signed=True) is None:
            yield V("MANIFEST-007", f"partition-spec-id {spec_id!r} is not an integer string", at(w, MF.KV_PARTITION_SPEC_ID))
        fv = meta.get(MF.KV_FORMAT_VERSION)
        if fv is None and v >= 2:
            yield V("MANIFEST-008", "v2+ manifest metadata lacks 'format-version'", at(w, MF.KV_FORMAT_VERSION))
        elif fv is not None and _kv_version(af) is None:
            yield V("MANIFEST-008", f"format-version {fv!r} is not 1, 2 or 3", at(w, MF.KV_FORMAT_VERSION))
        content = meta.get(MF.KV_CONTENT)
        if v >= 2 and content not in (MF.CONTENT_DATA_NAME, MF.CONTENT_DELETES_NAME):
            yield V("MANIFEST-009", f"manifest content must be 'data' or 'deletes', got {content!r}", at(w, MF.KV_CONTENT))
        # The spec the manifest says it was written with is the table's spec of that id.
        sid_int = ascii_int(spec_id, signed=True) if spec_id is not None else (0 if v == 1 else None)
        table_spec = md.spec_by_id(sid_int) if sid_int is not None else None
        if fields is not None and table_spec is not None:
            try:
                mine = P.parse_partition_fields(fields, format_version=v, spec_id=sid_int)
            except LakeconfError:
                continue
            if [(f.field_id, f.source_ids, str(f.transform)) for f in mine.fields] != [(f.field_id, f.source_ids, str(f.transform)) for f in table_spec.fields]:
                yield V("MANIFEST-003", f"the manifest's partition-spec differs from the table's spec {sid_int}", at(w, MF.KV_PARTITION_SPEC))


# ------------------------------------------------------------------------------------------ the reference's validators


SNAPSHOT_RULES = tuple(rid(r) for r in ("MLIST-005", "SEQ-012", "LINEAGE-013", "LINEAGE-020", "LINEAGE-011", "MLIST-004", "SNAP-013"))


def _where(ctx: Context, where: str, fallback: str) -> str:
    """validate_snapshot names a manifest by its URI or the snapshot by id: make it a table path."""
    if where.startswith("snapshot "):
        return at(fallback, where)
    if "://" in where or where.startswith("/"):
        return ctx.blob(where, read=False).where
    return at(fallback, where)


@check(*SNAPSHOT_RULES)
def snapshot_manifests(ctx: Context) -> Iterator[Violation]:
    """snapshots.validate_snapshot per snapshot: specs exist, sequence numbers and row ids of added manifests, lengths, duplicate live files."""
    md = ctx.md
    if md is None:
        return
    doc = ctx.current.doc if isinstance(ctx.current.doc, dict) else {}
    snaps = doc.get(M.SNAPSHOTS) if isinstance(doc.get(M.SNAPSHOTS), list) else []
    raw = {s.get(M.SNAPSHOT_ID): s for s in snaps if isinstance(s, dict)}
    for s in md.snapshots:
        af = ctx.manifest_list(s)
        if af is None or af.parsed is None:
            continue  # unreadable: avro_files_readable says why
        no_seq = md.format_version >= 2 and M.SEQUENCE_NUMBER not in raw.get(s.snapshot_id, {M.SEQUENCE_NUMBER: 0})
        def opened(uri: str) -> tuple | None:
            m = ctx.avro(uri, "manifest")
            return (m.schema, m.meta, m.records) if m.schema is not None else None

        for v in S.validate_snapshot(ctx.storage, md, s, manifest_files=af.parsed, opened=opened):
            if v.rule not in SNAPSHOT_RULES or (no_seq and v.rule == rid("SEQ-012")):
                continue  # read errors are avro_files_readable's; a missing sequence-number is SEQ-001's
            yield replace(v, where=_where(ctx, v.where, ctx.current.where))


MANIFEST_RULES = tuple(rid(r) for r in ("MANIFEST-005", "MANIFEST-034", "MANIFEST-035", "MANIFEST-040", "DV-008", "LINEAGE-017",
                                        "MANIFEST-037", "SEQ-006", "MLIST-010", "MLIST-011", "SEQ-013", "MLIST-013",
                                        "MANIFEST-003", "MLIST-006"))


@check(*MANIFEST_RULES, relay=True)
def manifest_entries(ctx: Context) -> Iterator[Violation]:
    """manifests.validate_manifest per manifest and its list entry: counts, sequence numbers, delete-file fields."""
    for lm in ctx.distinct_manifests():
        if lm.manifest is None:
            continue
        for v in MF.validate_manifest(lm.manifest, lm.mf):
            where = lm.file.where if v.where in (lm.mf.manifest_path, "") else at(lm.file.where, v.where)
            yield replace(v, where=where)


# ------------------------------------------------------------------------------------------ locations


@check("GEN-010")
def file_locations_are_uris(ctx: Context) -> Iterator[Violation]:
    """manifest_path, file_path and referenced_data_file are URIs with a scheme (Paths in Metadata)."""
    seen: set[tuple[str, str]] = set()
    for s, af in _lists(ctx):
        for mf in af.parsed or () if isinstance(af.parsed, tuple) else ():
            if not URI_SCHEME.match(mf.manifest_path) and (af.where, mf.manifest_path) not in seen:
                seen.add((af.where, mf.manifest_path))
                yield V("GEN-010", f"manifest_path {mf.manifest_path!r} is not a URI with a scheme", af.where)
    for lm in ctx.distinct_manifests():
        for e in lm.entries:
            d = e.data_file
            for what, loc in (("file_path", d.file_path), ("referenced_data_file", d.referenced_data_file)):
                if isinstance(loc, str) and not URI_SCHEME.match(loc):
                    yield V("GEN-010", f"{what} {loc!r} is not a URI with a scheme", at(lm.file.where, ctx.rel(d.file_path)))


# ------------------------------------------------------------------------------------------ partition values


def _ptype(lm: ListedManifest) -> T.StructType | None:
    man = lm.manifest
    try:
        return P.partition_type(man.metadata.spec, man.metadata.schema)
    except LakeconfError:
        return None


def _is_nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def impossible_value(transform: X.Transform, src: T.IcebergType | None, x: Any) -> str | None:
    """Why ``x`` cannot be an output of ``transform`` over ``src`` (short rule id and message), or None."""
    if x is None:
        return None
    if isinstance(transform, X.VoidTransform):
        return "PART-016", f"void holds {x!r}"
    if isinstance(transform, X.BucketTransform) and isinstance(x, int) and not 0 <= x < transform.num_buckets:
        return "PART-011", f"bucket[{transform.num_buckets}] holds {x}, outside [0, {transform.num_buckets})"
    if isinstance(transform, X.TruncateTransform) and src is not None:
        w = transform.width
        if src in (T.INT, T.LONG) and isinstance(x, int) and not isinstance(x, bool) and x % w != 0:
            return "PART-025", f"truncate[{w}] holds {x}, not a multiple of {w}"
        if isinstance(src, T.DecimalType) and hasattr(x, "scaleb") and VAL.unscaled(x) % w != 0:
            return "PART-025", f"truncate[{w}] holds {x}, whose unscaled value is not a multiple of {w}"
        if src == T.STRING and isinstance(x, str) and len(x) > w:
            return "PART-027", f"truncate[{w}] holds {len(x)} code points"
        if src == T.BINARY and isinstance(x, (bytes, bytearray)) and len(x) > w:
            return "PART-028", f"truncate[{w}] holds {len(x)} bytes"
    return None


@check("PART-011", "PART-016", "PART-025", "PART-027", "PART-007", relay=True)
def partition_values(ctx: Context) -> Iterator[Violation]:
    """Each entry's partition value is something its transform can produce; no data is added under an unknown transform."""
    for lm in ctx.distinct_manifests():
        man = lm.manifest
        spec, schema = man.metadata.spec, man.metadata.schema
        if spec.has_unknown_transform and any(e.status == MF.ADDED for e in lm.entries):
            names = [str(f.transform) for f in spec.fields if not f.transform.is_known]
            yield V("PART-007", f"files were added under spec {spec.spec_id}, whose transforms {names} are unknown", lm.file.where)
        for e in lm.entries:
            w = at(lm.file.where, ctx.rel(e.data_file.file_path))
            for f in spec.fields:
                bad = impossible_value(f.transform, schema.find_type(f.source_id), e.data_file.partition.get(f.field_id))
                if bad is not None:
                    yield V(bad[0], f"partition field {f.name!r}: {bad[1]}", w)


def _key(x: Any) -> Any:
    if isinstance(x, float):
        return (x, math.copysign(1.0, x))  # IEEE totalOrder for the zeros
    if isinstance(x, str):
        return x.encode("utf-8")
    return x


@check("MLIST-014", "MLIST-015", "MLIST-016", relay=True)
def partition_summaries(ctx: Context) -> Iterator[Violation]:
    """A manifest list entry's partition summaries agree with the manifest's entries (nulls, NaNs, bounds)."""
    seen: set[tuple[str, str]] = set()
    for lm in ctx.all_listed():
        mf = lm.mf
        if mf.partitions is None or lm.manifest is None or len(mf.partitions) != len(lm.manifest.metadata.spec.fields):
            continue  # a length mismatch is MLIST-013's
        ptype = _ptype(lm)
        if ptype is None:
            continue
        ml = ctx.manifest_list(lm.snapshot)
        key = (ml.where if ml is not None else "", mf.manifest_path)
        if key in seen:
            continue
        seen.add(key)
        w = at(key[0], f"manifest {lm.file.where}")
        for f, summ in zip(ptype.fields, mf.partitions):
            vals = [e.data_file.partition.get(f.id) for e in lm.entries]
            has_null = any(x is None for x in vals)
            if summ.contains_null != has_null:
                yield V("MLIST-014", f"contains_null is {summ.contains_null} for field {f.name!r} but entries {'do' if has_null else 'do not'} hold null", w)
            has_nan = any(_is_nan(x) for x in vals)
            if summ.contains_nan is False and has_nan:
                yield V("MLIST-015", f"contains_nan is false for field {f.name!r} but an entry holds NaN", w)
            if summ.contains_nan is True and not has_nan:
                yield V("MLIST-015", f"contains_nan is true for field {f.name!r} but no entry holds NaN", w)
            real = [x for x in vals if x is not None and not _is_nan(x)]
            if not T.is_primitive(f.type) or f.type == T.UNKNOWN or f.type == T.UUID:
                continue
            for label, raw, pick in (("lower_bound", summ.lower_bound, min), ("upper_bound", summ.upper_bound, max)):
                if raw is None:
                    continue
                if not real:
                    yield V("MLIST-016", f"{label} of field {f.name!r} is set though every value is null or NaN", w)
                    continue
                try:
                    b = VAL.from_bytes(raw, f.type)
                except LakeconfError as exc:
                    yield V("MLIST-016", f"{label} of field {f.name!r} is not a {f.type} single value: {exc.message}", w)
                    continue
                extreme = pick(real, key=_key)
                if _is_nan(b):
                    yield V("MLIST-016", f"{label} of field {f.name!r} is NaN", w)
                elif isinstance(b, float) and b == 0.0 and extreme == 0.0 and math.copysign(1.0, b) != math.copysign(1.0, extreme):
                    yield V("MLIST-017", f"{label} of field {f.name!r} is {b!r} but {extreme!r} occurs", w)
                elif (label == "lower_bound" and _key(b) > _key(extreme)) or (label == "upper_bound" and _key(b) < _key(extreme)):
                    yield V("MLIST-016", f"{label} {b!r} of field {f.name!r} does not bound the value {extreme!r}", w)


# ------------------------------------------------------------------------------------------ what snapshots did


@check("SNAP-008")
def operations_match_changes(ctx: Context) -> Iterator[Violation]:
    """append only adds data files; delete adds no data files (Snapshots, operation)."""
    for s in ctx.snapshots():
        op = s.operation
        if op not in ("append", "delete"):
            continue
        w = at(ctx.current.where, f"snapshot {s.snapshot_id}")
        for lm in ctx.listed_manifests(s):
            for e in lm.entries:
                if e.snapshot_id != s.snapshot_id:
                    continue
                d = e.data_file
                if op == "append" and e.status == MF.DELETED:
                    yield V("SNAP-008", f"an append snapshot removes {d.file_path}", w)
                elif op == "append" and e.status == MF.ADDED and d.content != MF.DATA:
                    yield V("SNAP-008", f"an append snapshot adds the delete file {d.file_path}", w)
                elif op == "delete" and e.status == MF.ADDED and d.content == MF.DATA:
                    yield V("SNAP-008", f"a delete snapshot adds the data file {d.file_path}", w)


@check("MLIST-001")
def one_manifest_list_per_snapshot(ctx: Context) -> Iterator[Violation]:
    """Each snapshot has its own manifest list."""
    owner: dict[str, int] = {}
    for s in ctx.snapshots():
        if s.manifest_list is None:
            continue
        if s.manifest_list in owner:
            yield V("MLIST-001", f"snapshot {s.snapshot_id} reuses the manifest list of snapshot {owner[s.manifest_list]}",
                    at(ctx.current.where, f"snapshot {s.snapshot_id}"))
        owner.setdefault(s.manifest_list, s.snapshot_id)


@check("SEQ-007", "SEQ-008", "SEQ-009", "SEQ-013")
def sequence_numbers(ctx: Context) -> Iterator[Violation]:
    """A file's data and file sequence numbers never change; ADDED files carry the committing snapshot's file sequence number; min_sequence_number is the live minimum."""
    md = ctx.md
    if md is None or md.format_version < 2:
        return
    data_seq: dict[tuple[int, str], dict[int, str]] = defaultdict(dict)
    file_seq: dict[tuple[int, str], dict[int, str]] = defaultdict(dict)
    for lm in ctx.distinct_manifests():
        mf, w = lm.mf, lm.file.where
        if mf.sequence_number <= 0:
            continue  # written before sequence numbers (v1): everything reads as 0
        live = []
        for e in lm.entries:
            d = e.data_file
            k = (0 if d.content == MF.DATA else 1, d.file_path + (f"#{d.content_offset}" if d.content_offset is not None else ""))
            if e.sequence_number is not None:
                data_seq[k].setdefault(e.sequence_number, w)
                if e.is_live:
                    live.append(e.sequence_number)
            if e.file_sequence_number is not None:
                file_seq[k].setdefault(e.file_sequence_number, w)
            if e.status == MF.ADDED and mf.added_snapshot_id == e.snapshot_id:
                if e.file_sequence_number is not None and e.file_sequence_number != mf.sequence_number:
                    yield V("SEQ-009", f"added file {d.file_path} has file sequence number {e.file_sequence_number}, not its snapshot's {mf.sequence_number}", at(w, ctx.rel(d.file_path)))
                elif e.sequence_number is not None and e.file_sequence_number is not None and e.sequence_number > e.file_sequence_number:
                    yield V("SEQ-009", f"added file {d.file_path} has data sequence number {e.sequence_number} above its file sequence number {e.file_sequence_number}", at(w, ctx.rel(d.file_path)))
        if live and mf.min_sequence_number != min(live):
            yield V("SEQ-013", f"min_sequence_number {mf.min_sequence_number} but the smallest live data sequence number is {min(live)}", w)
    for table, rule, what in ((data_seq, "SEQ-007", "data"), (file_seq, "SEQ-008", "file")):
        for (_c, path), seqs in sorted(table.items()):
            if len(seqs) > 1:
                yield V(rule, f"{path} has {what} sequence numbers {sorted(seqs)} in different manifests ({sorted(set(seqs.values()))})",
                        at(sorted(set(seqs.values()))[-1], ctx.rel(path)))


@check("SORT-005")
def sort_order_ids(ctx: Context) -> Iterator[Violation]:
    """Every sort_order_id a data or equality-delete file carries is declared in sort-orders."""
    md = ctx.md
    if md is None or md.format_version < 2:
        return
    orders = {o.order_id for o in md.sort_orders}
    for lm in ctx.distinct_manifests():
        for e in lm.entries:
            d = e.data_file
            if d.sort_order_id is not None and d.content != MF.POSITION_DELETES and d.sort_order_id not in orders:
                yield V("SORT-005", f"sort_order_id {d.sort_order_id} is not in sort-orders {sorted(orders)}", at(lm.file.where, ctx.rel(d.file_path)))


@check("DELETE-001", "DELETE-002")
def delete_files_per_version(ctx: Context) -> Iterator[Violation]:
    """v1 tables hold no delete files; v3 snapshots add no new position delete files (deletion vectors instead)."""
    md = ctx.md
    if md is None:
        return
    if md.format_version == 1:
        for s, af in _lists(ctx):
            for mf in af.parsed if isinstance(af.parsed, tuple) else ():
                if mf.content != MF.MANIFEST_DATA:
                    yield V("DELETE-001", "a v1 table lists a delete manifest", at(af.where, ctx.rel(mf.manifest_path)))
        for lm in ctx.distinct_manifests():
            for e in lm.entries:
                if e.data_file.content != MF.DATA:
                    yield V("DELETE-001", "a v1 table tracks a delete file", at(lm.file.where, ctx.rel(e.data_file.file_path)))
        return
    if md.format_version >= 3:
        lineage = {s.snapshot_id for s in md.snapshots if s.first_row_id is not None}
        for lm in ctx.distinct_manifests():
            for e in lm.entries:
                d = e.data_file
                if e.status == MF.ADDED and d.content == MF.POSITION_DELETES and d.file_format != "puffin" and e.snapshot_id in lineage:
                    yield V("DELETE-002", "a v3 snapshot adds a position delete file (v3 writes deletion vectors)", at(lm.file.where, ctx.rel(d.file_path)))


@check("DV-009", "DV-011")
def deletion_vectors_per_data_file(ctx: Context) -> Iterator[Violation]:
    """In each snapshot at most one DV applies to a data file, and every live DV's data file is live."""
    for s in ctx.snapshots():
        data, deletes = ctx.live(s)
        live_paths = {e.data_file.file_path for _lm, e in data}
        by_target: dict[str, list[str]] = defaultdict(list)
        for lm, e in deletes:
            d = e.data_file
            if d.file_format != "puffin" or d.content != MF.POSITION_DELETES or d.referenced_data_file is None:
                continue
            by_target[d.referenced_data_file].append(lm.file.where)
            if d.referenced_data_file not in live_paths:
                yield V("DV-011", f"a live deletion vector references {d.referenced_data_file}, which is not live in snapshot {s.snapshot_id}",
                        at(lm.file.where, ctx.rel(d.file_path)))
        for target, where in sorted(by_target.items()):
            if len(where) > 1:
                yield V("DV-009", f"{len(where)} deletion vectors apply to {target} in snapshot {s.snapshot_id}", at(sorted(where)[-1], ctx.rel(target)))


@check("LINEAGE-014", "LINEAGE-016")
def row_ids_in_manifests(ctx: Context) -> Iterator[Violation]:
    """New data files leave first_row_id null (inherited); rewritten entries write the inherited first_row_id explicitly and keep it."""
    md = ctx.md
    if md is None or md.format_version < 3:
        return
    assigned: dict[str, int] = {}
    for lm in ctx.distinct_manifests():
        if lm.mf.added_snapshot_id != lm.snapshot.snapshot_id or lm.mf.first_row_id is None:
            continue
        for e in lm.entries:
            if e.status == MF.ADDED and e.data_file.content == MF.DATA and e.data_file.first_row_id is not None:
                assigned.setdefault(e.data_file.file_path, e.data_file.first_row_id)
    for lm in ctx.distinct_manifests():
        man = lm.manifest
        for raw, e in zip(man.entries, lm.entries):
            d = raw.data_file
            if d.content != MF.DATA:
                continue
            w = at(lm.file.where, ctx.rel(d.file_path))
            if raw.status == MF.ADDED and d.first_row_id is not None and raw.snapshot_id in (None, lm.mf.added_snapshot_id) and man.metadata.format_version >= 3:
                if raw.snapshot_id is None or raw.snapshot_id == lm.mf.added_snapshot_id:
                    yield V("LINEAGE-014", f"new data file written with first_row_id {d.first_row_id} instead of null", w)
            elif raw.status != MF.ADDED and d.file_path in assigned:
                if d.first_row_id is None:
                    yield V("LINEAGE-016", f"rewritten entry drops the inherited first_row_id {assigned[d.file_path]}", w)
                elif d.first_row_id != assigned[d.file_path]:
                    yield V("LINEAGE-016", f"rewritten entry changes first_row_id from {assigned[d.file_path]} to {d.first_row_id}", w)
