"""Table Metadata: each metadata JSON file of the history, field by field (Appendix C) and as a model.

The raw checks read the JSON document itself, so that one broken field does not hide the others
(the strict parser stops at the first). The model checks relay ``metadata.validate_metadata`` per
area (schemas, specs, sort orders, snapshots, refs, logs) and add what it leaves out: every
schema against its predecessor (``evolution.check_schema_evolution``), every partition spec and
sort order (not only the defaults), spec equivalence and partition field ids across specs.
"""

from __future__ import annotations

import re
import uuid as uuid_mod
from dataclasses import replace
from typing import Any, Iterator

from reference_impl.common.numbers import ascii_int
from reference_impl.iceberg import evolution as E
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import types as T
from reference_impl.iceberg.validate.context import Context, MetaFile
from reference_impl.iceberg.validate.registry import V, Violation, at, check, rid

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")

# Required keys of the metadata JSON per version, each with the rule that names it (Table Metadata Fields).
REQUIRED = {
    1: {M.FORMAT_VERSION: "META-003", M.LOCATION: "META-008", M.LAST_UPDATED_MS: "META-013",
        M.LAST_COLUMN_ID: "META-015", M.SCHEMA: "META-017", M.PARTITION_SPEC: "META-022"},
    2: {M.FORMAT_VERSION: "META-003", M.TABLE_UUID: "META-005", M.LOCATION: "META-008",
        M.LAST_SEQUENCE_NUMBER: "META-010", M.LAST_UPDATED_MS: "META-013", M.LAST_COLUMN_ID: "META-015",
        M.SCHEMAS: "META-019", M.CURRENT_SCHEMA_ID: "META-020", M.PARTITION_SPECS: "META-023",
        M.DEFAULT_SPEC_ID: "META-024", M.LAST_PARTITION_ID: "META-026", M.SORT_ORDERS: "META-037",
        M.DEFAULT_SORT_ORDER_ID: "META-038"},
}
REQUIRED[3] = {**REQUIRED[2], M.NEXT_ROW_ID: "META-042"}
# Keys whose cell is blank for a version (writers should leave them out), with the rule that says so.
OMITTED = {
    1: {M.LAST_SEQUENCE_NUMBER: "COMPAT-001", M.REFS: "GEN-002", M.NEXT_ROW_ID: "GEN-002", M.ENCRYPTION_KEYS: "GEN-002"},
    2: {M.SCHEMA: "META-018", M.PARTITION_SPEC: "META-018", M.NEXT_ROW_ID: "GEN-002", M.ENCRYPTION_KEYS: "GEN-002"},
    3: {M.SCHEMA: "META-018", M.PARTITION_SPEC: "META-018"},
}
# JSON types of the top-level scalars (Appendix C, Table Metadata): int = 32-bit, long = 64-bit.
INT_KEYS = (M.FORMAT_VERSION, M.LAST_COLUMN_ID, M.CURRENT_SCHEMA_ID, M.DEFAULT_SPEC_ID, M.LAST_PARTITION_ID, M.DEFAULT_SORT_ORDER_ID)
LONG_KEYS = (M.LAST_UPDATED_MS, M.CURRENT_SNAPSHOT_ID, M.LAST_SEQUENCE_NUMBER, M.NEXT_ROW_ID)
STRING_KEYS = (M.TABLE_UUID, M.LOCATION)
# Snapshot keys per the version the snapshot was written under (Snapshots).
SNAP_REQUIRED = {
    1: {M.SNAPSHOT_ID: "SNAP-001", M.TIMESTAMP_MS: "SNAP-003"},
    2: {M.SNAPSHOT_ID: "SNAP-001", M.SEQUENCE_NUMBER: "SEQ-001", M.TIMESTAMP_MS: "SNAP-003",
        M.MANIFEST_LIST: "SNAP-004", M.SUMMARY: "SNAP-006"},
}
SNAP_REQUIRED[3] = {**SNAP_REQUIRED[2], M.FIRST_ROW_ID: "SNAP-010", M.ADDED_ROWS: "SNAP-010"}
SNAP_OMITTED = {
    1: {M.SEQUENCE_NUMBER: "COMPAT-001", M.FIRST_ROW_ID: "GEN-002", M.ADDED_ROWS: "GEN-002", M.KEY_ID: "GEN-002"},
    2: {M.FIRST_ROW_ID: "GEN-002", M.ADDED_ROWS: "GEN-002", M.KEY_ID: "GEN-002"},
    3: {},
}


def _lst(v: Any) -> list:
    """A JSON list, or nothing (a wrongly typed one is another check's finding)."""
    return v if isinstance(v, list) else []


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _docs(ctx: Context) -> Iterator[tuple[MetaFile, dict, int]]:
    """Every metadata file of the chain whose document is an object with a supported format-version."""
    for mf in ctx.chain:
        d = mf.doc
        if isinstance(d, dict) and mf.version in (1, 2, 3):
            yield mf, d, mf.version


def _models(ctx: Context) -> Iterator[MetaFile]:
    for mf in ctx.chain:
        if mf.md is not None:
            yield mf


# ------------------------------------------------------------------------------------------ the file itself


@check("META-001", "META-003", "META-004", blocker=True, relay=True)
def metadata_readable(ctx: Context) -> Iterator[Violation]:
    """A metadata file is a JSON object (maybe GZIP'd) that the reference parser accepts; else why not."""
    for mf in ctx.chain:
        w = mf.where
        if mf.blob.data is None:
            yield V("META-001", f"metadata file {mf.blob.error}", w)
        elif mf.json_error is not None:
            yield V("META-001", f"metadata file is {mf.json_error}", w)
        elif not isinstance(mf.doc, dict):
            yield V("META-001", "metadata file is not a JSON object", w)
        elif mf.parse_error is not None:
            exc = mf.parse_error
            yield Violation(rule=exc.rule or rid("META-001"), message=f"metadata does not parse: {exc.message}", where=w)


@check("META-003", "META-005", "META-008", "META-010", "META-013", "META-015", "META-017", "META-019", "META-020",
       "META-022", "META-023", "META-024", "META-026", "META-037", "META-038", "META-042")
def metadata_required_fields(ctx: Context) -> Iterator[Violation]:
    """Every field the version's column marks required is written (Table Metadata Fields)."""
    for mf in ctx.chain:
        d = mf.doc
        if not isinstance(d, dict):
            continue
        v = d.get(M.FORMAT_VERSION)
        if v is None:
            yield V("META-003", "format-version is missing", at(mf.where, M.FORMAT_VERSION))
            continue
        if not _is_int(v) or v < 1:
            continue  # a wrongly typed version is SERDE-025's; a version < 1 makes the parser say why
        for key, rule in REQUIRED.get(v, {}).items():
            if d.get(key) is None and key != M.FORMAT_VERSION:
                yield V(rule, f"v{v} metadata must write {key!r}", at(mf.where, key))


@check("META-018", "COMPAT-001", "GEN-002", "META-045")
def metadata_omitted_fields(ctx: Context) -> Iterator[Violation]:
    """Fields whose cell is blank for the version are left out; v3 writes no current-snapshot-id -1 (Appendix F)."""
    for mf, d, v in _docs(ctx):
        for key, rule in OMITTED[v].items():
            if key in d:
                yield V(rule, f"v{v} metadata should not write {key!r}", at(mf.where, key))
        if v >= 3 and d.get(M.CURRENT_SNAPSHOT_ID) == M.NO_SNAPSHOT_ID:
            yield V("META-045", "v3 writers leave current-snapshot-id null or absent instead of -1", at(mf.where, M.CURRENT_SNAPSHOT_ID))


@check("SERDE-025", "META-005", "META-028")
def metadata_json_types(ctx: Context) -> Iterator[Violation]:
    """Top-level scalars have their JSON types and ranges; table-uuid is a UUID; properties map strings to strings."""
    for mf in ctx.chain:
        d = mf.doc
        if not isinstance(d, dict):
            continue
        for keys, (lo, hi), kind in ((INT_KEYS, INT32, "int"), (LONG_KEYS, INT64, "long")):
            for key in keys:
                x = d.get(key)
                if x is not None and (not _is_int(x) or not lo <= x <= hi):
                    yield V("SERDE-025", f"{key} must be a JSON {kind}, got {x!r}", at(mf.where, key))
        for key in STRING_KEYS:
            x = d.get(key)
            if x is not None and not isinstance(x, str):
                yield V("SERDE-025", f"{key} must be a JSON string, got {x!r}", at(mf.where, key))
        u = d.get(M.TABLE_UUID)
        if isinstance(u, str):
            try:
                uuid_mod.UUID(u)
            except ValueError:
                yield V("META-005", f"table-uuid {u!r} is not a UUID", at(mf.where, M.TABLE_UUID))
        props = d.get(M.PROPERTIES)
        if props is not None:
            if not isinstance(props, dict):
                yield V("META-028", "properties must be a JSON object", at(mf.where, M.PROPERTIES))
            else:
                for k, x in props.items():
                    if not isinstance(x, str):
                        yield V("META-028", f"property {k!r} must be a string (numbers are written as strings), got {x!r}",
                                at(mf.where, f"properties.{k}"))


def _snapshot_written_as(ctx: Context, s: dict, table_version: int) -> int:
    """The format version a snapshot was written under: its manifest list says so; else what it carries."""
    loc = s.get(M.MANIFEST_LIST)
    if isinstance(loc, str):
        af = ctx.avro(loc, "manifest list")
        fv = af.meta.get("format-version") if af.meta else None
        if (n := ascii_int(fv)) is not None and 1 <= n <= table_version:
            return int(fv)
    if s.get(M.FIRST_ROW_ID) is not None and table_version >= 3:
        return 3
    if s.get(M.SEQUENCE_NUMBER) is not None and table_version >= 2:
        return 2
    return 1


@check("SEQ-001", "SNAP-004", "SNAP-006", "SNAP-010", "SNAP-005", "GEN-002", "COMPAT-001")
def snapshot_fields(ctx: Context) -> Iterator[Violation]:
    """Each snapshot writes the fields its version requires and none of the blank ones (Snapshots)."""
    for mf, d, v in _docs(ctx):
        for i, s in enumerate(_lst(d.get(M.SNAPSHOTS))):
            if not isinstance(s, dict):
                continue
            sid = s.get(M.SNAPSHOT_ID)
            w = at(mf.where, f"snapshot {sid if sid is not None else f'[{i}]'}")
            written = _snapshot_written_as(ctx, s, v)
            for key, rule in SNAP_REQUIRED[written].items():
                if s.get(key) is None and key not in (M.SNAPSHOT_ID, M.TIMESTAMP_MS):
                    if key == M.MANIFEST_LIST and s.get(M.MANIFESTS) is None:
                        continue  # neither key: the parser says so (SNAP-004)
                    yield V(rule, f"a snapshot written as v{written} must write {key!r}", w)
            for key, rule in SNAP_OMITTED[v].items():
                if key in s:
                    yield V(rule, f"a v{v} snapshot should not write {key!r}", w)
            if M.MANIFESTS in s and (v >= 2 and written >= 2):
                yield V("SNAP-005", "a snapshot written as v2+ should not write 'manifests'", w)


@check("GEN-010")
def metadata_locations_are_uris(ctx: Context) -> Iterator[Violation]:
    """Every location in metadata is a fully qualified URI with a scheme (Paths in Metadata)."""
    for mf, d, _v in _docs(ctx):
        locs: list[tuple[str, Any]] = [(M.LOCATION, d.get(M.LOCATION))]
        for s in _lst(d.get(M.SNAPSHOTS)):
            if isinstance(s, dict):
                locs.append((f"snapshot {s.get(M.SNAPSHOT_ID)} manifest-list", s.get(M.MANIFEST_LIST)))
                for m in _lst(s.get(M.MANIFESTS)):
                    locs.append((f"snapshot {s.get(M.SNAPSHOT_ID)} manifests", m))
        for e in _lst(d.get(M.METADATA_LOG)):
            if isinstance(e, dict):
                locs.append(("metadata-log", e.get(M.METADATA_FILE)))
        for key in (M.STATISTICS, M.PARTITION_STATISTICS):
            for e in _lst(d.get(key)):
                if isinstance(e, dict):
                    locs.append((key, e.get(M.STATISTICS_PATH)))
        for what, loc in locs:
            if isinstance(loc, str) and not URI_SCHEME.match(loc):
                yield V("GEN-010", f"{what} {loc!r} is not a URI with a scheme", at(mf.where, what))


@check("PART-036")
def partition_field_source_keys(ctx: Context) -> Iterator[Violation]:
    """A v3 partition or sort field writes exactly one of source-id (one argument) and source-ids (several)."""
    for mf, d, v in _docs(ctx):
        if v < 3:
            continue
        specs = d.get(M.PARTITION_SPECS)
        for sp in specs if isinstance(specs, list) else []:
            fields = sp.get(P.FIELDS) if isinstance(sp, dict) else None
            for f in fields if isinstance(fields, list) else []:
                if not isinstance(f, dict):
                    continue
                if P.SOURCE_ID in f and P.SOURCE_IDS in f:
                    yield V("PART-036", f"partition field {f.get(P.NAME)!r} writes both source-id and source-ids",
                            at(mf.where, f"spec {sp.get(P.SPEC_ID)}"))
                elif isinstance(f.get(P.SOURCE_IDS), list) and len(f[P.SOURCE_IDS]) == 1:
                    yield V("PART-036", f"partition field {f.get(P.NAME)!r} writes a one-argument transform with source-ids",
                            at(mf.where, f"spec {sp.get(P.SPEC_ID)}"))


# ------------------------------------------------------------------------------------------ the model


def _validate(ctx: Context, mf: MetaFile) -> list[Violation]:
    cache = ctx.__dict__.setdefault("_md_violations", {})
    if mf.blob.uri not in cache:
        out = []
        for v in M.validate_metadata(mf.md):
            rule = v.rule
            if rule == "ICEBERG-PART-035" and "used twice" in v.message:
                rule = "ICEBERG-PART-029"  # a duplicate spec-id breaks "new specs get a unique spec-id"
            if rule == "ICEBERG-SORT-007" and "used twice" in v.message:
                rule = "ICEBERG-SORT-001"  # a duplicate order-id, not a missing sort-field key
            out.append(replace(v, rule=rule, where=at(mf.where, v.where)))
        cache[mf.blob.uri] = out
    return cache[mf.blob.uri]


AREAS: dict[str, tuple[str, ...]] = {}


def _relay(area: str, *rules: str):
    """A check that passes on validate_metadata's findings for ``rules`` (one area of the model)."""
    ids = tuple(rid(r) for r in rules)
    AREAS[area] = ids

    def fn(ctx: Context) -> Iterator[Violation]:
        for mf in _models(ctx):
            for v in _validate(ctx, mf):
                if v.rule in ids:
                    yield v

    fn.__name__ = f"metadata_{area}"
    fn.__doc__ = f"validate_metadata's {area} rules, on every metadata file of the history."
    return check(*rules)(fn)


_relay("schemas", "META-016", "META-020", "META-021", "SCHEMA-001", "SCHEMA-005", "SCHEMA-006", "SCHEMA-007",
       "SCHEMA-008", "SCHEMA-013", "SCHEMA-020", "SCHEMA-021", "TYPE-001", "TYPE-002", "TYPE-004")
_relay("partition_specs", "META-024", "META-027", "PART-002", "PART-003", "PART-004", "PART-010", "PART-011",
       "PART-012", "PART-013", "PART-029", "PART-035")
_relay("sort_orders", "META-038", "SORT-001")
_relay("snapshots", "SNAP-001", "SNAP-002", "SNAP-007", "SNAP-009", "META-011", "META-029", "SEQ-002", "ENC-002",
       "LINEAGE-010", "LINEAGE-011", "LINEAGE-012", "LINEAGE-020")
_relay("refs", "META-030", "REF-002", "REF-003", "REF-004", "REF-005", "REF-006")
_relay("logs", "META-014", "META-033", "META-034", "META-035")
_relay("statistics", "STATS-002", "STATS-005", "ENC-001")


@check(relay=True)
def metadata_other(ctx: Context) -> Iterator[Violation]:
    """validate_metadata's findings that no area check claims (never lost, even if not counted)."""
    claimed = {r for ids in AREAS.values() for r in ids}
    for mf in _models(ctx):
        for v in _validate(ctx, mf):
            if v.rule not in claimed:
                yield v


@check("SORT-002", "SORT-003")
def sort_orders(ctx: Context) -> Iterator[Violation]:
    """Every sort order (not only the default): order 0 is empty, transforms fit their sources."""
    for mf in _models(ctx):
        md = mf.md
        schema = md.schema_by_id(md.current_schema_id)
        for o in md.sort_orders:
            for v in P.validate_sort_order(o, schema):
                yield replace(v, where=at(mf.where, v.where))


def _schema_with(md: M.TableMetadata, ids: tuple[int, ...]) -> T.Schema | None:
    """The newest schema that has every id (an old spec's sources may be gone from the current schema)."""
    for s in reversed(md.schemas):
        if all(s.find_field(i) is not None for i in ids):
            return s
    return None


@check("PART-002", "PART-003", "PART-004", "PART-010", "PART-011", "PART-012", "PART-013", "PART-008", "PART-009", "PART-031")
def partition_specs(ctx: Context) -> Iterator[Violation]:
    """Every spec against a schema holding its sources; ids mean one field across specs; no two equivalent specs."""
    for mf in _models(ctx):
        md, v = mf.md, mf.md.format_version
        for sp in md.partition_specs:
            if sp.spec_id == md.default_spec_id:
                continue  # validate_metadata checks the default spec against the current schema
            ids = tuple(i for f in sp.fields for i in f.source_ids)
            schema = _schema_with(md, ids)
            if schema is None:
                yield V("PART-002", f"spec {sp.spec_id} refers to a source id no schema has", at(mf.where, f"spec {sp.spec_id}"))
                continue
            for x in P.validate_partition_spec(sp, schema, format_version=v):
                yield replace(x, where=at(mf.where, x.where))
        specs = md.partition_specs
        for i, a in enumerate(specs):
            for b in specs[i + 1:]:
                if a.spec_id != b.spec_id and P.specs_equivalent(a, b):
                    yield V("PART-008", f"specs {a.spec_id} and {b.spec_id} are equivalent; the existing one must be reused",
                            at(mf.where, f"spec {b.spec_id}"))
        if v < 2:
            continue
        by_id: dict[int, tuple] = {}
        by_field: dict[tuple, int] = {}
        highest = P.UNPARTITIONED_LAST_PARTITION_ID
        for sp in specs:
            new_high = highest
            for f in sp.fields:
                key = (f.source_ids, str(f.transform))
                w = at(mf.where, f"spec {sp.spec_id} field {f.name}")
                if f.field_id in by_id and by_id[f.field_id] != key:
                    yield V("PART-003", f"partition field id {f.field_id} means {by_id[f.field_id]} in one spec and {key} in another", w)
                elif key in by_field and by_field[key] != f.field_id:
                    yield V("PART-009", f"field {f.name!r} repeats an existing partition field under a new id {f.field_id} (was {by_field[key]})", w)
                elif f.field_id not in by_id and f.field_id <= highest:
                    yield V("PART-031", f"new partition field id {f.field_id} is not above the ids already assigned ({highest})", w)
                by_id.setdefault(f.field_id, key)
                by_field.setdefault(key, f.field_id)
                new_high = max(new_high, f.field_id)
            highest = new_high


EVOLUTION_RULES = tuple(rid(r) for r in ("EVOL-002", "EVOL-003", "EVOL-004", "EVOL-006", "EVOL-008", "EVOL-009",
                                          "EVOL-013", "SCHEMA-002", "SCHEMA-014", "SCHEMA-022"))


@check(*EVOLUTION_RULES)
def schema_evolution(ctx: Context) -> Iterator[Violation]:
    """Each schema against the one before it: ids never reused, allowed promotions only, defaults kept (Schema Evolution)."""
    for mf in _models(ctx):
        md = mf.md
        highest = 0
        for old, new in zip(md.schemas, md.schemas[1:]):
            highest = max(highest, old.highest_field_id)
            for x in E.check_schema_evolution(old, new, format_version=md.format_version, last_column_id=highest,
                                              partition_specs=md.partition_specs):
                if x.rule in EVOLUTION_RULES:
                    yield replace(x, where=at(mf.where, f"schema {new.schema_id}: {x.where}"))


def _chain_fates(snapshots) -> dict[int, int | None]:
    """Per snapshot id, the first snapshot its parent chain visits twice (None: the chain ends).

    Linear in the number of snapshots (each chain is walked once, then remembered): on a chain
    that joins a loop every snapshot gets the loop's entry; on the loop each snapshot gets itself.
    """
    by_id: dict[int, Any] = {}
    for s in snapshots:
        by_id.setdefault(s.snapshot_id, s)
    fates: dict[int, int | None] = {}
    for start in by_id:
        path: list[int] = []
        on_path: dict[int, int] = {}
        cur: int | None = start
        while cur is not None and cur not in fates and cur not in on_path:
            on_path[cur] = len(path)
            path.append(cur)
            parent = by_id[cur].parent_snapshot_id
            cur = parent if parent in by_id else None
        if cur is None or cur in fates:
            fate = None if cur is None else fates[cur]
            for sid in path:
                fates[sid] = fate
        else:  # cur closes a loop: the loop's snapshots reach themselves first, those before it reach cur
            entry = on_path[cur]
            for sid in path[entry:]:
                fates[sid] = sid
            for sid in path[:entry]:
                fates[sid] = cur
    return fates


@check("SNAP-002", relay=True)
def snapshot_lineage(ctx: Context) -> Iterator[Violation]:
    """Parent chains end (no cycles); snapshot ids are positive (Appendix F, SNAP-014: a SHOULD, reported, not claimed)."""
    for mf in _models(ctx):
        md = mf.md
        fates = _chain_fates(md.snapshots)
        for s in md.snapshots:
            w = at(mf.where, f"snapshot {s.snapshot_id}")
            if s.snapshot_id <= 0:
                yield V("SNAP-014", f"snapshot id {s.snapshot_id} is not positive", w)
            loop = fates.get(s.snapshot_id)
            if loop is not None and s.parent_snapshot_id != s.snapshot_id:  # a self-parent is SNAP-002's other check
                yield V("SNAP-002", f"the parent chain of snapshot {s.snapshot_id} loops back to {loop}", w)
