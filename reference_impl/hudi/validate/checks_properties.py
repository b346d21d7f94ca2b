"""Checks of ``hoodie.properties`` and the layout it sets (HUDI-LAYOUT), and the relay of parse errors."""

from __future__ import annotations

from typing import Iterator

from reference_impl.common.validation import Violation
from reference_impl.hudi import properties as P
from reference_impl.hudi.validate.context import METADATA_TABLE_DIR, Context
from reference_impl.hudi.validate.registry import V, at, check
from reference_impl.common.jsontext import loads as json_loads  # deep nesting: a ValueError, not a RecursionError

@check("LAYOUT-001", "LAYOUT-006", relay=True)
def table_root(ctx: Context) -> Iterator[Violation]:
    """The location holds a Hudi table: a ``.hoodie/`` directory with a readable ``hoodie.properties`` naming the
    table, its type and a table version some Hudi release writes. When it does not, this is the one violation
    reported (it may carry LAYOUT-002/003, whichever made the table unreadable)."""
    if ctx.fatal is not None:
        yield ctx.fatal


def _int_value(props, key) -> int | None:
    raw = props.get(key)
    if raw is None:
        return None
    text = raw.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else -1


@check("LAYOUT-003")
def required_properties(ctx: Context) -> Iterator[Violation]:
    """``hoodie.table.name``, ``.type`` (COPY_ON_WRITE or MERGE_ON_READ) and ``.version`` are present and valid,
    and so is ``hoodie.table.initial.version`` when written."""
    p, where = ctx.props, ctx.props_rel
    if P.NAME in p and not p[P.NAME].strip():
        yield V("LAYOUT-003", f"{P.NAME} is empty", at(where, P.NAME))
    initial = _int_value(p, P.INITIAL_VERSION)
    if initial is not None and (initial < 0 or initial > ctx.version):
        yield V("LAYOUT-003", f"{P.INITIAL_VERSION}={p[P.INITIAL_VERSION][:20]!r} is not a table version at or "
                              f"below {P.VERSION}={ctx.version}", at(where, P.INITIAL_VERSION))


@check("LAYOUT-004")
def layout_version(ctx: Context) -> Iterator[Violation]:
    """``hoodie.timeline.layout.version`` is 1 for table versions up to 7 and 2 from 8."""
    layout = _int_value(ctx.props, P.TIMELINE_LAYOUT_VERSION)
    expected = P.layout_version_of(ctx.version)
    if layout is not None and layout != expected:
        yield V("LAYOUT-004", f"table version {ctx.version} uses timeline layout {expected}, but "
                              f"{P.TIMELINE_LAYOUT_VERSION}={ctx.props[P.TIMELINE_LAYOUT_VERSION][:20]!r}",
                at(ctx.props_rel, P.TIMELINE_LAYOUT_VERSION))


@check("LAYOUT-005")
def checksum(ctx: Context) -> Iterator[Violation]:
    """``hoodie.table.checksum`` is present (every writer of table version 6+ stores it) and is the CRC-32 of
    ``<database>.<table>``."""
    ok = P.checksum_matches(ctx.props)
    where = at(ctx.props_rel, P.CHECKSUM)
    if ok is None:
        yield V("LAYOUT-005", f"{P.CHECKSUM} is missing: a cut-short properties file cannot be told from a whole one",
                where)
    elif not ok:
        want = P.table_checksum(ctx.props.get(P.NAME, ""), ctx.props.get(P.DATABASE, ""))
        yield V("LAYOUT-005", f"{P.CHECKSUM}={ctx.props[P.CHECKSUM][:30]!r}, the CRC-32 of the table name is {want}",
                where)


@check("LAYOUT-009")
def merge_properties(ctx: Context) -> Iterator[Violation]:
    """``hoodie.record.merge.mode`` is one of Hudi's modes."""
    mode = ctx.props.get(P.RECORD_MERGE_MODE)
    if mode is not None and mode.strip() not in P.MERGE_MODES:
        yield V("LAYOUT-009", f"{P.RECORD_MERGE_MODE}={mode[:50]!r} is not one of {', '.join(P.MERGE_MODES)}",
                at(ctx.props_rel, P.RECORD_MERGE_MODE))


@check("LAYOUT-009")
def ordering_fields(ctx: Context) -> Iterator[Violation]:
    """The ordering fields a table names exist in the schema its latest write recorded (else event-time merging
    has nothing to compare)."""
    from reference_impl.hudi import commit_metadata as CM

    cfg = ctx.config
    if cfg is None or not cfg.ordering_fields:
        return
    latest = None
    for f in ctx.completed():
        meta = ctx.metadata.get(f.name)
        if isinstance(meta, CM.CommitMetadata) and meta.schema and f.instant.requested_time not in ctx.rolled_back:
            if latest is None or (f.instant.ordering_time, f.instant.requested_time) > latest[0]:
                latest = ((f.instant.ordering_time, f.instant.requested_time), f, meta.schema)
    if latest is None:
        return
    try:
        node = json_loads(latest[2])
        names = {fld.get("name") for fld in node.get("fields") or () if isinstance(fld, dict)}
    except (ValueError, AttributeError):
        return  # COMMIT-003 reports an unreadable schema
    for name in cfg.ordering_fields:
        top = name.split(".", 1)[0]  # a nested ordering field: its top-level struct must exist
        if top not in names:
            yield V("LAYOUT-009", f"ordering field {name!r} is not a column of the latest schema", at(ctx.props_rel,
                    P.ORDERING_FIELDS if P.ORDERING_FIELDS in ctx.props else P.PRECOMBINE_FIELD))


# Boolean keys whose value Java reads with Boolean.parseBoolean, which takes anything but "true" as false, so
# a misspelt value silently changes how paths or files are read; with the rule each key serves.
BOOLEAN_KEYS = {P.HIVE_STYLE_PARTITIONING: "LAYOUT-015", P.URL_ENCODE_PARTITIONING: "LAYOUT-015",
                P.DROP_PARTITION_COLUMNS: "LAYOUT-014"}


@check("LAYOUT-014", "LAYOUT-015")
def boolean_properties(ctx: Context) -> Iterator[Violation]:
    """The partition-layout switches are ``true`` or ``false``."""
    for key, rule in BOOLEAN_KEYS.items():
        value = ctx.props.get(key)
        if value is not None and value.strip().lower() not in ("true", "false"):
            yield V(rule, f"{key}={value[:40]!r} is neither true nor false (Java would read false)", at(ctx.props_rel, key))


@check("LAYOUT-010")
def base_file_format(ctx: Context) -> Iterator[Violation]:
    """The base file format is PARQUET, ORC, HFILE or LANCE, and HFILE only for the metadata table."""
    p = ctx.props
    key = P.BASE_FILE_FORMAT if P.BASE_FILE_FORMAT in p else P.BASE_FILE_FORMAT_OLD
    value = p.get(key)
    if value is None:
        return
    fmt = value.strip()
    if fmt not in P.BASE_FILE_FORMATS:
        yield V("LAYOUT-010", f"{key}={value[:50]!r} is not one of {', '.join(P.BASE_FILE_FORMATS)}", at(ctx.props_rel, key))
    elif fmt == "HFILE":
        yield V("LAYOUT-010", "a data table's base files cannot be HFILE (the metadata table's format)",
                at(ctx.props_rel, key))


@check("LAYOUT-011")
def metadata_partitions(ctx: Context) -> Iterator[Violation]:
    """Every metadata-table partition listed as complete exists under ``.hoodie/metadata`` and is not also
    listed as inflight."""
    cfg = ctx.config
    if cfg is None or not cfg.metadata_partitions:
        return
    where = at(ctx.props_rel, P.METADATA_PARTITIONS)
    both = cfg.metadata_partitions & cfg.metadata_partitions_inflight
    if both:
        yield V("LAYOUT-011", f"partition(s) {', '.join(sorted(both))} are listed both complete and inflight", where)
    if ctx.mdt_props is None:
        yield V("LAYOUT-011", f"{P.METADATA_PARTITIONS} lists {', '.join(sorted(cfg.metadata_partitions))}, but there "
                              f"is no metadata table at {METADATA_TABLE_DIR}", where)
        return
    for part in sorted(cfg.metadata_partitions):
        if not ctx.storage.list(f"{METADATA_TABLE_DIR}/{part}"):
            yield V("LAYOUT-011", f"metadata partition {part!r} is listed complete but {METADATA_TABLE_DIR}/{part} "
                                  "holds no file", where)


@check("LAYOUT-012")
def timeline_directories(ctx: Context) -> Iterator[Violation]:
    """The timeline directories are single names under ``.hoodie/``; a layout-2 table keeps no instant files in
    ``.hoodie/`` itself (its active timeline is ``.hoodie/<hoodie.timeline.path>``)."""
    for key in (P.TIMELINE_PATH, P.TIMELINE_HISTORY_PATH, P.ARCHIVELOG_FOLDER):
        value = ctx.props.get(key)
        if value is not None and (not value or value in (".", "..") or any(c in value for c in "/\\\x00")):
            yield V("LAYOUT-012", f"{key}={value[:100]!r} must name one directory", at(ctx.props_rel, key))
    for rel in ctx.stray_meta_root[:20]:
        yield V("LAYOUT-012", f"timeline file in {P.META_DIR}/ of a table version {ctx.version} table, whose active "
                              f"timeline is {ctx.timeline_dir}/", rel)


@check("LAYOUT-013")
def timeline_timezone(ctx: Context) -> Iterator[Violation]:
    """``hoodie.table.timeline.timezone`` is LOCAL or UTC, and is written (readers disagree on its default)."""
    value = ctx.props.get(P.TIMELINE_TIMEZONE)
    where = at(ctx.props_rel, P.TIMELINE_TIMEZONE)
    if value is None:
        yield V("LAYOUT-013", f"{P.TIMELINE_TIMEZONE} is not written: Java reads instants as LOCAL, hudi-rs as UTC",
                where)
    elif value.strip() not in P.TIMEZONES:
        yield V("LAYOUT-013", f"{P.TIMELINE_TIMEZONE}={value[:50]!r} is not LOCAL or UTC", where)


@check("LAYOUT-016")
def metadata_table(ctx: Context) -> Iterator[Violation]:
    """The metadata table under ``.hoodie/metadata`` is a MERGE_ON_READ table with HFile base files."""
    p = ctx.mdt_props
    if p is None:
        return
    where = f"{METADATA_TABLE_DIR}/{P.META_DIR}/{P.PROPERTIES_FILE}"
    if p.get(P.TYPE, "").strip() != P.MERGE_ON_READ:
        yield V("LAYOUT-016", f"the metadata table is {p.get(P.TYPE, 'untyped')[:30]}, not MERGE_ON_READ", at(where, P.TYPE))
    fmt = p.get(P.BASE_FILE_FORMAT, p.get(P.BASE_FILE_FORMAT_OLD))
    if fmt is not None and fmt.strip() != "HFILE":
        yield V("LAYOUT-016", f"the metadata table's base files are {fmt[:30]}, not HFILE", at(where, P.BASE_FILE_FORMAT))
