"""Checks of the JSON metadata: schema files, snapshots, tags and hints."""

from __future__ import annotations

from typing import Iterator

from reference_impl.common.validation import Violation
from reference_impl.paimon import layout as L
from reference_impl.paimon import merge as MG
from reference_impl.paimon import schema as SC
from reference_impl.paimon import snapshot as SN
from reference_impl.paimon.validate.context import Context
from reference_impl.paimon.validate.registry import V, check


@check(relay=True)
def unreadable_files(ctx: Context) -> Iterator[Violation]:
    """What the strict parsers refused, at the file they refused (the rule they name)."""
    yield from ctx.errors


@check("SCHEMA-002", "SCHEMA-004", "SCHEMA-006", "SCHEMA-010", "SCHEMA-020", "SCHEMA-022",
       "BUCKET-001", "BUCKET-003", "BUCKET-004")
def schema_files(ctx: Context) -> Iterator[Violation]:
    """Each schema file on its own: field ids and names, keys, MAP keys, bucket options, option values."""
    for i, s in sorted(ctx.schemas.items()):
        for v in SC.validate_schema(s, ctx.layout.schema_path(i)):
            yield v


@check("SCHEMA-010")
def merge_options(ctx: Context) -> Iterator[Violation]:
    """Each schema's merge options are ones Paimon accepts together: an aggregation table does not set
    ``aggregation.remove-record-on-delete`` with ``fields.<f>.ignore-retract`` on one of its columns (Java's
    FieldAggregatorFactory refuses the pair, so no Paimon engine reads or writes the table)."""
    for i, s in sorted(ctx.schemas.items()):
        if str(s.options.get("merge-engine", "")).strip().lower() != "aggregation" or not s.primary_keys:
            continue
        for message in MG.conflicting_options(s.options, s.field_names):
            yield V("SCHEMA-010", f"{message}: Paimon refuses the pair (conflicting behavior)", ctx.layout.schema_path(i))


@check("SCHEMA-006", "SCHEMA-008", "SCHEMA-009")
def schema_history(ctx: Context) -> Iterator[Violation]:
    """Across versions: partition and primary keys fixed, ``highestFieldId`` never lower."""
    ordered = [s for _, s in sorted(ctx.schemas.items())]
    for v in SC.check_schema_history(ordered):
        yield Violation(v.rule, v.message, ctx.layout.schema_dir)


@check("SCHEMA-001", "LAYOUT-003")
def schema_ids(ctx: Context) -> Iterator[Violation]:
    """Schema ids start at 0 and every version is kept; a schema file's ``id`` is the one in its name."""
    ids = ctx.schema_files
    if ids and (ids[0] != 0 or ids[-1] - ids[0] + 1 != len(ids)):
        yield V("SCHEMA-001", f"schema ids are {SC.id_ranges(ids)}: they start at 0 and every version is kept",
                ctx.layout.schema_dir)
    for i, s in sorted(ctx.schemas.items()):
        if s.id != i:
            yield V("LAYOUT-003", f"schema file schema-{i} holds schema id {s.id}", ctx.layout.schema_path(i))


@check("SNAP-001")
def snapshot_ids(ctx: Context) -> Iterator[Violation]:
    """Snapshot ids between the earliest and latest kept snapshot form a contiguous range."""
    ids = ctx.snapshot_files
    if ids and ids[-1] - ids[0] + 1 != len(ids):
        have = set(ids)
        gaps = [n for n in range(ids[0], ids[-1] + 1) if n not in have]
        yield V("SNAP-001", f"snapshot ids {SC.id_ranges(ids)} have gaps (missing {SC.id_ranges(gaps[:50])})",
                ctx.layout.snapshot_dir)


@check("SNAP-003")
def hints(ctx: Context) -> Iterator[Violation]:
    """EARLIEST / LATEST, when present, hold a decimal snapshot id (they may be stale, not garbage)."""
    for hint in (L.EARLIEST, L.LATEST):
        rel = ctx.layout.hint_path(hint)
        if ctx.storage.exists(rel) and SN.read_hint(ctx.storage, hint, ctx.layout) is None:
            yield V("SNAP-003", f"hint file {hint} does not hold a decimal snapshot id", rel)


@check("LAYOUT-002")
def snapshot_dir_names(ctx: Context) -> Iterator[Violation]:
    """``snapshot/`` holds ``snapshot-<id>`` files (no padding) and the hint files, nothing else."""
    for info in ctx.storage.list(ctx.layout.snapshot_dir):
        name = info.path.rsplit("/", 1)[-1]
        if name in (L.EARLIEST, L.LATEST) or L.versioned_id(name, L.SNAPSHOT_PREFIX) is not None:
            continue
        if name.startswith(".") or name.endswith((".tmp", ".crc")) or "tmp" in name:
            continue  # a writer's temporary or checksum file
        yield V("LAYOUT-002", f"{name!r} in snapshot/ is neither snapshot-<id> nor a hint file", info.path)


@check("SNAP-007")
def snapshot_id_matches_name(ctx: Context) -> Iterator[Violation]:
    """A snapshot's ``id`` is the number in its file name."""
    for i, s in sorted(ctx.snapshots.items()):
        if s.id != i:
            yield V("SNAP-007", f"snapshot file snapshot-{i} holds id {s.id}", ctx.layout.snapshot_path(i))


@check("SNAP-008")
def snapshot_schema_exists(ctx: Context) -> Iterator[Violation]:
    """Every snapshot's and tag's ``schemaId`` names an existing ``schema-<id>`` file."""
    have = set(ctx.schema_files)
    for rel, s in ctx.sources():
        if s.schema_id not in have:
            yield V("SNAP-008", f"schemaId {s.schema_id} has no schema file (schemas: {SC.id_ranges(sorted(have))})", rel)
