"""Checks of the files outside ``.hoodie/``: partitions and their metafiles (HUDI-LAYOUT), file names and file
groups (HUDI-FILE), log blocks (HUDI-LOG), meta columns (HUDI-META), table types (HUDI-TABLE), and that every
instant a file names was recorded (HUDI-TIMELINE-001)."""

from __future__ import annotations

from typing import Iterator

from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi import logfile as LF
from reference_impl.hudi import naming as N
from reference_impl.hudi import timeline as T
from reference_impl.hudi.avro_schema import META_COLUMNS
from reference_impl.hudi.validate.context import Context, DataFile
from reference_impl.hudi.validate.registry import V, at, check

STRING_TYPES = ("string", "large_string")


def _ok_instant(t: str) -> bool:
    try:
        T.check_instant_time(t)
        return len(t) != T.MDT_SUFFIXED_LEN
    except InvalidTable:
        return False


def _partition_path_ok(path: str, fields: tuple[str, ...], hive: bool, url: bool) -> str | None:
    """Why a partition directory does not spell the table's partition fields, or None when it does.

    Without URL encoding a value holding ``/`` spreads over several directory levels (Hudi writes it so), so
    only the order of the ``field=`` prefixes (hive style) or the least number of levels is certain then."""
    segments = path.split("/")
    if url:
        try:
            N.parse_partition_path(path, fields, hive_style=hive, url_encode=True)
            return None
        except InvalidTable as exc:
            return exc.message
    if len(segments) < len(fields):
        return f"{len(segments)} level(s) for {len(fields)} partition field(s)"
    if hive:
        i = 0
        for name in fields:
            while i < len(segments) and not segments[i].startswith(f"{name}="):
                if i == 0:
                    return f"does not start with {name}="
                i += 1
            if i == len(segments):
                return f"has no {name}= segment"
            i += 1
    return None


@check("LAYOUT-008", "LAYOUT-015")
def partition_layout(ctx: Context) -> Iterator[Violation]:
    """A non-partitioned table keeps its files in the base path; a partitioned table's files sit in partition
    directories spelled from its partition fields (``field=value`` when hive-style), each holding a
    ``.hoodie_partition_metadata`` with a valid ``commitTime``, so that readers find it."""
    cfg = ctx.config
    if cfg is None:
        return
    dirs = sorted({d.partition for d in ctx.data_files} | set(ctx.partitions))
    for d in dirs:
        where = d or "."
        if not cfg.is_partitioned:
            if d:
                yield V("LAYOUT-008", f"non-partitioned table has table files in {d}/", where)
            continue
        if d == "":
            yield V("LAYOUT-015", "partitioned table has table files in the base path", where)
            continue
        if d not in ctx.partitions:
            yield V("LAYOUT-015", f"{d}/ holds table files but no {N.PARTITION_METAFILE}: readers do not see it", where)
        why = _partition_path_ok(d, cfg.partition_fields, cfg.hive_style_partitioning, cfg.url_encode_partitioning)
        if why:
            yield V("LAYOUT-015", f"partition path {d!r} does not spell partition fields {list(cfg.partition_fields)}: {why}",
                    where)
    for d, meta in sorted(ctx.partitions.items()):
        if meta is not None and not _ok_instant(meta.commit_time):
            yield V("LAYOUT-015", f"partition metadata commitTime {meta.commit_time[:40]!r} is not an instant time",
                    at(f"{d}/{N.PARTITION_METAFILE}" if d else N.PARTITION_METAFILE, "commitTime"))


@check("LAYOUT-014")
def partition_columns_kept(ctx: Context) -> Iterator[Violation]:
    """Partition columns stay in the base files unless ``hoodie.datasource.write.drop.partition.columns``."""
    cfg = ctx.config
    if cfg is None or not cfg.is_partitioned or cfg.drop_partition_columns:
        return
    for rel, s in sorted(ctx.base_summaries.items()):
        names = {c for c, _ in s.columns}
        missing = [f for f in cfg.partition_fields if f not in names]
        if missing:
            yield V("LAYOUT-014", f"base file lacks partition column(s) {', '.join(missing)} though the table keeps them",
                    rel)


@check("FILE-001")
def file_ids(ctx: Context) -> Iterator[Violation]:
    """File ids are ``<prefix>-<n>`` and each belongs to one partition."""
    where_of: dict[str, str] = {}
    reported = set()
    for d in ctx.data_files:
        fid = d.file_id
        try:
            N.split_file_id(fid)
        except InvalidTable:
            if fid not in reported:
                reported.add(fid)
                yield V("FILE-001", f"file id {fid[:100]!r} does not end in -<number>", d.rel)
            continue
        first = where_of.setdefault(fid, d.partition)
        if first != d.partition and (fid, d.partition) not in reported:
            reported.add((fid, d.partition))
            yield V("FILE-001", f"file id {fid} is in partitions {first!r} and {d.partition!r}", d.rel)


@check("TIMELINE-001")
def file_instants_recorded(ctx: Context) -> Iterator[Violation]:
    """Every instant a base or log file name carries is on the timeline (any state), archived, rolled back, or
    older than the active timeline: no table change goes unrecorded."""
    for d in ctx.data_files:
        if not ctx.known_instant(d.instant):
            yield V("TIMELINE-001", f"{d.name} names instant {d.instant}, which no timeline records", d.rel)


@check("FILE-005")
def duplicate_attempts(ctx: Context) -> Iterator[Violation]:
    """When several base files share file id and instant (task retries), the commit names one of them."""
    groups: dict[tuple[str, str, str], list[DataFile]] = {}
    for d in ctx.base_files():
        groups.setdefault((d.partition, d.file_id, d.instant), []).append(d)
    for (part, fid, t), files in sorted(groups.items()):
        if len(files) < 2:
            continue
        done = [f for f in ctx.completed() if f.instant.requested_time == t]
        meta = ctx.metadata.get(done[0].name) if done else None
        if not isinstance(meta, CM.CommitMetadata):
            continue
        named = {s.path for s in meta.write_stats()}
        hits = [f for f in files if f.rel in named]
        if len(hits) != 1:
            yield V("FILE-005", f"{len(files)} attempts wrote file group {fid} at {t}; commit {t} names "
                                f"{len(hits)} of them, so readers cannot tell the valid one", files[0].rel)


@check("FILE-007")
def log_instants(ctx: Context) -> Iterator[Violation]:
    """From table version 8 a log file's instant is the requested time of the delta commit (or log compaction)
    that wrote it, and its data blocks carry that instant."""
    cfg = ctx.config
    if cfg is None or cfg.version < 8 or (cfg.initial_version is not None and cfg.initial_version < 8):
        return  # a table upgraded from version 6 keeps logs named by their base instant
    for d in ctx.log_files():
        if d.log is None or d.log.is_cdc:
            continue
        actions = {f.instant.action for f in ctx.files_of(d.instant)}
        if actions and not actions & {T.DELTA_COMMIT, T.LOG_COMPACTION}:
            yield V("FILE-007", f"log file instant {d.instant} is a {', '.join(sorted(actions))}, not a delta commit",
                    d.rel)
        summary = ctx.log_summaries.get(d.rel)
        for b in summary.blocks if summary else ():
            t = b.header.get(LF.HeaderKey.INSTANT_TIME)
            if b.block_type in (LF.BlockType.AVRO_DATA, LF.BlockType.PARQUET_DATA, LF.BlockType.DELETE) and t and t != d.instant:
                yield V("FILE-007", f"{b.block_type.name} block at offset {b.offset} was written by {t}, but a v8 log "
                                    f"file holds the writes of its name's instant {d.instant}", at(d.rel, f"offset {b.offset}"))


def _framing_rule(problem: str) -> str:
    """The rule a corrupt range breaks: its block size (HUDI-LOG-002) or its closing total length and the magic
    that must follow (HUDI-LOG-006). These are the ranges HUDI-LOG-007 has readers skip."""
    return "LOG-006" if ("reverse pointer" in problem or "neither the end" in problem) else "LOG-002"


@check("LOG-002", "LOG-006", "LOG-009", "LOG-011", "LOG-012")
def log_blocks(ctx: Context) -> Iterator[Violation]:
    """Every block frames correctly; command blocks are rollbacks naming a target instant and carry no content;
    data and delete blocks name the instant that wrote them, one the timeline knows; log-compacted blocks list
    instant times."""
    for rel, summary in sorted(ctx.log_summaries.items()):
        for b in summary.blocks:
            where = at(rel, f"offset {b.offset}")
            if b.block_type is LF.BlockType.CORRUPT:
                yield V(_framing_rule(b.problem), f"corrupt block: {b.problem}; readers skip it", where)
                continue
            h = b.header
            if b.block_type is LF.BlockType.COMMAND:
                kind = h.get(LF.HeaderKey.COMMAND_BLOCK_TYPE)
                target = h.get(LF.HeaderKey.TARGET_INSTANT_TIME)
                if kind != LF.ROLLBACK_COMMAND:
                    yield V("LOG-009", f"command block type {str(kind)[:20]!r}; the only command is rollback (0)", where)
                if target is None or not _ok_instant(target):
                    yield V("LOG-009", f"rollback block TARGET_INSTANT_TIME {str(target)[:40]!r} is not an instant time",
                            where)
                if b.content_length:
                    yield V("LOG-009", f"command block has {b.content_length} content bytes; it has none", where)
                continue
            if b.block_type in (LF.BlockType.AVRO_DATA, LF.BlockType.PARQUET_DATA, LF.BlockType.DELETE,
                                LF.BlockType.HFILE_DATA):
                t = h.get(LF.HeaderKey.INSTANT_TIME)
                if t is None or not _ok_instant(t):
                    yield V("LOG-011", f"{b.block_type.name} block INSTANT_TIME {str(t)[:40]!r} is not an instant time",
                            where)
                elif not ctx.known_instant(t):
                    yield V("LOG-011", f"{b.block_type.name} block was written by {t}, which no timeline records", where)
            compacted = h.get(LF.HeaderKey.COMPACTED_BLOCK_TIMES)
            if compacted is not None and not all(_ok_instant(x) for x in compacted.split(",") if x):
                yield V("LOG-012", f"COMPACTED_BLOCK_TIMES {compacted[:80]!r} is not a list of instant times", where)


@check("TABLE-001")
def copy_on_write_has_no_logs(ctx: Context) -> Iterator[Violation]:
    """A copy-on-write table writes base files with ``commit``: no data log files, no delta commits."""
    cfg = ctx.config
    if cfg is None or cfg.is_mor:
        return
    for d in ctx.log_files():
        if d.log is not None and not d.log.is_cdc:
            yield V("TABLE-001", f"copy-on-write table holds log file {d.name}", d.rel)
    for f in ctx.timeline:
        if f.instant.action in (T.DELTA_COMMIT, T.COMPACTION, T.LOG_COMPACTION):
            yield V("TABLE-001", f"copy-on-write table has a {f.instant.action} instant", f.rel)


@check("TABLE-002")
def merge_on_read_actions(ctx: Context) -> Iterator[Violation]:
    """A merge-on-read table writes with ``deltacommit``; a completed ``commit`` is a compaction's result."""
    cfg = ctx.config
    if cfg is None or not cfg.is_mor:
        return
    for f in ctx.completed():
        if f.instant.action != T.COMMIT or f.instant.requested_time in T.RESERVED_INSTANTS:
            continue
        if not any(x.instant.action == T.COMPACTION for x in ctx.files_of(f.instant.requested_time)):
            yield V("TABLE-002", f"merge-on-read table has commit {f.instant.requested_time} that is no compaction", f.rel)


@check("META-001")
def meta_columns(ctx: Context) -> Iterator[Violation]:
    """Base files and data blocks start with the five string meta columns, in order (when the table populates them)."""
    cfg = ctx.config
    if cfg is None or not cfg.populate_meta_fields:
        return
    for rel, s in sorted(ctx.base_summaries.items()):
        head = s.columns[:len(META_COLUMNS)]
        if [c for c, _ in head] != list(META_COLUMNS) or any(t not in STRING_TYPES for _, t in head):
            yield V("META-001", f"base file starts with {[f'{c}:{t}' for c, t in head]}, not the five string meta "
                                "columns", rel)
    for rel, summary in sorted(ctx.log_summaries.items()):
        for b in summary.blocks:
            if b.columns is not None and b.columns[:len(META_COLUMNS)] != list(META_COLUMNS):
                yield V("META-001", f"data block schema starts with {b.columns[:5]}, not the five meta columns",
                        at(rel, f"offset {b.offset}"))


@check("META-002", "META-003", "META-004", "META-005")
def meta_values(ctx: Context) -> Iterator[Violation]:
    """In a base file, ``_hoodie_commit_time`` is an instant the timeline knows, no later than the file's own;
    ``_hoodie_commit_seqno`` is unique; ``_hoodie_record_key`` is set; ``_hoodie_partition_path`` and
    ``_hoodie_file_name`` are the file's partition and name. A data block's records carry its instant."""
    cfg = ctx.config
    if cfg is None or not cfg.populate_meta_fields:
        return
    files = {d.rel: d for d in ctx.data_files}
    for rel, s in sorted(ctx.base_summaries.items()):
        d = files[rel]
        if s.rows == 0:
            continue
        names = {c for c, _ in s.columns}
        bad = sorted(str(t) for t in s.commit_times if not isinstance(t, str) or not _ok_instant(t)
                     or t > d.instant or not ctx.known_instant(t))
        if "_hoodie_commit_time" in names and bad:
            yield V("META-002", f"_hoodie_commit_time {', '.join(bad[:3])} is not a recorded instant at or before the "
                                f"file's {d.instant}", rel)
        if s.duplicate_seqno is not None:
            yield V("META-003", f"_hoodie_commit_seqno {s.duplicate_seqno!r} repeats in one file", rel)
        if "_hoodie_record_key" in names and s.empty_keys:
            yield V("META-004", f"{s.empty_keys} record(s) have no _hoodie_record_key", rel)
        if "_hoodie_partition_path" in names and s.partition_paths != {d.partition}:
            got = sorted(str(p) for p in s.partition_paths)[:3]
            yield V("META-005", f"_hoodie_partition_path is {got}, the file is in {d.partition!r}", rel)
        if "_hoodie_file_name" in names and s.file_names != {d.name}:
            got = sorted(str(p) for p in s.file_names)[:3]
            yield V("META-005", f"_hoodie_file_name is {got}, the file is {d.name}", rel)
    for rel, summary in sorted(ctx.log_summaries.items()):
        for b in summary.blocks:
            t = b.header.get(LF.HeaderKey.INSTANT_TIME)
            # A log-compacted block rewrites the records of the blocks it replaces, with their commit times.
            allowed = {t} | set((b.header.get(LF.HeaderKey.COMPACTED_BLOCK_TIMES) or "").split(","))
            wrong = sorted(str(x) for x in b.commit_times if x not in allowed)
            if t and wrong:
                yield V("META-002", f"records of the block written by {t} carry _hoodie_commit_time {', '.join(wrong[:3])}",
                        at(rel, f"offset {b.offset}"))
