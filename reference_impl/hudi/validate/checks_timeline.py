"""Checks of the timeline (HUDI-TIMELINE): instant names, states and times, the plans and metadata the files
hold, savepoints; and of commit metadata (HUDI-COMMIT)."""

from __future__ import annotations

from typing import Iterator

from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi import naming as N
from reference_impl.hudi import timeline as T
from reference_impl.hudi.validate.context import Context, TimelineFile
from reference_impl.hudi.validate.registry import V, at, check
from reference_impl.common.jsontext import loads as json_loads  # deep nesting: a ValueError, not a RecursionError

COMMIT_KINDS = (T.COMMIT, T.DELTA_COMMIT, T.REPLACE_COMMIT)
# The Avro record a completed file holds (HUDI-TIMELINE-017; replacecommit in v6 is JSON, in v8 this record).
COMPLETED_RECORDS = {T.COMMIT: "HoodieCommitMetadata", T.DELTA_COMMIT: "HoodieCommitMetadata",
                     T.REPLACE_COMMIT: "HoodieReplaceCommitMetadata", T.CLEAN: "HoodieCleanMetadata",
                     T.ROLLBACK: "HoodieRollbackMetadata", T.SAVEPOINT: "HoodieSavepointMetadata",
                     T.RESTORE: "HoodieRestoreMetadata", T.INDEXING: "HoodieIndexCommitMetadata"}
# Requested files that must hold a plan: without one the action cannot run (commit kinds' requests may be empty).
PLAN_REQUIRED = (T.CLEAN, T.COMPACTION, T.LOG_COMPACTION, T.CLUSTERING)
REQUIRED_STAT_KEYS = (CM.FILE_ID, CM.PATH, CM.PREV_COMMIT, CM.NUM_WRITES, CM.NUM_DELETES, CM.NUM_UPDATE_WRITES,
                      CM.NUM_INSERTS, CM.TOTAL_WRITE_BYTES, CM.TOTAL_WRITE_ERRORS)


def _where(f: TimelineFile, detail: str = "") -> str:
    return at(f.rel, detail)


@check("TIMELINE-005", "TIMELINE-011", "TIMELINE-013")
def instant_groups(ctx: Context) -> Iterator[Violation]:
    """The files of one requested time are one action's states: one action (a compaction completes as a commit,
    a log compaction as a delta commit, a clustering as a replace commit), completed at most once, and never
    before it was requested."""
    for t, files in sorted(ctx.instants().items()):
        kinds = {T.COMPLETES_AS.get(f.instant.action, f.instant.action) for f in files}
        pending = {f.instant.action for f in files if not f.instant.is_completed}
        done = [f for f in files if f.instant.is_completed]
        if len(kinds) > 1:
            planned = pending & set(T.COMPLETES_AS)
            if planned and done:
                p = sorted(planned)[0]
                yield V("TIMELINE-013", f"{p} {t} completes as {done[0].instant.action}, not {T.COMPLETES_AS[p]}",
                        _where(done[0]))
            else:
                yield V("TIMELINE-005", f"requested time {t} is used by several actions "
                                        f"({', '.join(sorted(f.name for f in files))}): instant times identify one action",
                        _where(files[0]))
        if len(done) > 1:
            yield V("TIMELINE-011", f"instant {t} is completed {len(done)} times ({', '.join(f.name for f in done)})",
                    _where(done[1]))
        for f in done:
            c = f.instant.completion_time
            if c is not None and len(c) == len(t) and c < t:
                yield V("TIMELINE-005", f"instant {t} completed at {c}, before it was requested", _where(f))


@check("TIMELINE-006", "TIMELINE-007")
def instant_times(ctx: Context) -> Iterator[Violation]:
    """Requested and completion times are real clock times ``yyyyMMddHHmmss[SSS]`` (the 20-digit form is the
    metadata table's only) or one of the reserved init/bootstrap times."""
    for f in ctx.timeline:
        for what, t in (("requested", f.instant.requested_time), ("completion", f.instant.completion_time)):
            if t is None:
                continue
            if len(t) == T.MDT_SUFFIXED_LEN:
                yield V("TIMELINE-006", f"{what} time {t} has the metadata table's 20 digits", _where(f))
                continue
            if t in T.RESERVED_INSTANTS:
                if what == "completion":
                    yield V("TIMELINE-007", f"completion time {t} is a reserved instant, not a clock time", _where(f))
                continue
            try:
                T.parse_instant_time(t)
            except InvalidTable as exc:
                yield V(exc.rule if exc.rule in ("HUDI-TIMELINE-006", "HUDI-TIMELINE-007") else "TIMELINE-006",
                        f"{what} time: {exc.message}", _where(f))


@check("TIMELINE-003")
def state_transitions(ctx: Context) -> Iterator[Violation]:
    """An instant reaches COMPLETED through INFLIGHT, and INFLIGHT through REQUESTED (a savepoint has no requested
    state). All of an instant's files leave the active timeline together, so the active timeline shows them all."""
    for t, files in sorted(ctx.instants().items()):
        states = {f.instant.state for f in files}
        top = max(files, key=lambda f: f.instant.sort_key)
        if T.COMPLETED in states and T.INFLIGHT not in states:
            yield V("TIMELINE-003", f"instant {t} ({top.instant.action}) is completed without an inflight file", _where(top))
        elif T.INFLIGHT in states and T.REQUESTED not in states and top.instant.action != T.SAVEPOINT:
            yield V("TIMELINE-003", f"instant {t} ({top.instant.action}) is inflight without a requested file",
                    _where(top))


@check("TIMELINE-010")
def inflight_commit_name(ctx: Context) -> Iterator[Violation]:
    """An inflight commit is ``<T>.inflight``, never ``<T>.commit.inflight``."""
    for f in ctx.timeline:
        if f.instant.action == T.COMMIT and f.instant.state == T.INFLIGHT and f.name.endswith(".commit.inflight"):
            yield V("TIMELINE-010", f"inflight commit is named {f.name}; Hudi names it {f.instant.requested_time}.inflight",
                    _where(f))


@check("TIMELINE-011")
def completion_times_named(ctx: Context) -> Iterator[Violation]:
    """In timeline layout 2 a completed instant is ``<requested>_<completion>.<action>``; only a table upgraded from
    version 7 or below (``hoodie.table.initial.version``) may keep older names."""
    cfg = ctx.config
    if cfg is None or cfg.timeline_layout_version < 2 or (cfg.initial_version is not None and cfg.initial_version < 8):
        return
    for f in ctx.completed():
        if f.instant.completion_time is None:
            yield V("TIMELINE-011", f"completed instant {f.name} has no completion time in its name", _where(f))


@check("TIMELINE-016")
def requested_plans(ctx: Context) -> Iterator[Violation]:
    """Requested clean, compaction, log compaction and clustering files hold their plan; every Avro plan is the
    record its action calls for."""
    for f in ctx.timeline:
        inst = f.instant
        if inst.state != T.REQUESTED:
            continue
        if inst.action in PLAN_REQUIRED and f.size == 0:
            yield V("TIMELINE-016", f"requested {inst.action} {f.name} is empty: it must hold a "
                                    f"{CM.PLAN_RECORDS[inst.action]}", _where(f))
        want = CM.PLAN_RECORDS.get(inst.action)
        got = ctx.record_names.get(f.name)
        if want and got and got != want:
            yield V("TIMELINE-016", f"requested {inst.action} holds a {got}, not a {want}", _where(f))


@check("TIMELINE-017")
def completed_records(ctx: Context) -> Iterator[Violation]:
    """A completed file's Avro record is the one its action writes (HoodieCommitMetadata, HoodieCleanMetadata, ...)."""
    for f in ctx.completed():
        want = COMPLETED_RECORDS.get(f.instant.action)
        got = ctx.record_names.get(f.name)
        if want and got and got != want and not (f.instant.action == T.REPLACE_COMMIT and got == "HoodieCommitMetadata"):
            yield V("TIMELINE-017", f"completed {f.instant.action} holds a {got}, not a {want}", _where(f))


@check("TIMELINE-018")
def commit_encoding(ctx: Context) -> Iterator[Violation]:
    """Commit metadata is JSON in table versions up to 7 and Avro from 8 (a v8 name with a completion time was
    written by a v8 writer, or rewritten by the upgrade)."""
    for f in ctx.completed():
        meta = ctx.metadata.get(f.name)
        if not isinstance(meta, CM.CommitMetadata) or meta.encoding == "empty":
            continue
        if ctx.layout < 2 and meta.encoding == "avro":
            yield V("TIMELINE-018", f"table version {ctx.version} commit metadata is Avro; versions up to 7 write JSON",
                    _where(f))
        elif ctx.layout >= 2 and f.instant.completion_time is not None and meta.encoding == "json":
            yield V("TIMELINE-018", f"table version {ctx.version} commit metadata is JSON; versions 8+ write Avro",
                    _where(f))


def _deleted_names(ctx: Context) -> set[str]:
    """Names of files cleans and rollbacks on the active timeline deleted."""
    out: set[str] = set()
    for meta in ctx.metadata.values():
        if isinstance(meta, CM.CleanMetadata):
            out.update(n.rsplit("/", 1)[-1] for _, n in meta.deleted_files())
        elif isinstance(meta, CM.RollbackMetadata):
            for p in meta.partition_metadata.values():
                out.update(n.rsplit("/", 1)[-1] for n in p.success_delete_files)
    return out


@check("TIMELINE-025")
def savepointed_files(ctx: Context) -> Iterator[Violation]:
    """Every file a completed savepoint holds on to still exists (the cleaner must not delete it)."""
    for f in ctx.completed():
        meta = ctx.metadata.get(f.name)
        if not isinstance(meta, CM.OtherMetadata) or meta.action != T.SAVEPOINT:
            continue
        parts = meta.record.get("partitionMetadata")
        if not isinstance(parts, dict):
            continue
        for key, p in sorted(parts.items()):
            if not isinstance(p, dict):
                continue
            part = p.get("partitionPath") if isinstance(p.get("partitionPath"), str) else key
            for name in p.get("savepointDataFile") or ():
                if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
                    continue
                rel = f"{part}/{name}" if part else name
                if rel not in ctx.sizes:
                    yield V("TIMELINE-025", f"savepoint {f.instant.requested_time} keeps {rel}, which is gone", _where(f))


# ---------------------------------------------------------------------------------------------- commit metadata


def _commits(ctx: Context) -> Iterator[tuple[TimelineFile, CM.CommitMetadata]]:
    for f in ctx.completed():
        meta = ctx.metadata.get(f.name)
        if isinstance(meta, CM.CommitMetadata):
            yield f, meta


@check("COMMIT-001")
def commit_fields(ctx: Context) -> Iterator[Violation]:
    """``operationType`` is one of Hudi's write operations; ``compacted`` is set on compactions only;
    ``partitionToReplaceFileIds`` belongs to replace commits."""
    for f, meta in _commits(ctx):
        op = meta.operation_type
        if op is not None and op not in CM.OPERATION_TYPES:
            yield V("COMMIT-001", f"operationType {op[:50]!r} is not one of Hudi's operations", _where(f, "operationType"))
        is_compaction = any(x.instant.action in (T.COMPACTION, T.LOG_COMPACTION) for x in ctx.files_of(f.instant.requested_time))
        if meta.compacted and not is_compaction:
            yield V("COMMIT-001", "compacted is true on an instant that is no compaction", _where(f, "compacted"))
        if meta.partition_to_replace_file_ids and f.instant.action != T.REPLACE_COMMIT \
                and any(meta.partition_to_replace_file_ids.values()):
            yield V("COMMIT-001", f"a {f.instant.action} lists partitionToReplaceFileIds; only replace commits retire "
                                  "file groups", _where(f, "partitionToReplaceFileIds"))


@check("COMMIT-002")
def write_stats(ctx: Context) -> Iterator[Violation]:
    """Each write stat carries the counters and names of HoodieWriteStat; its ``prevCommit`` is "null" or a
    recorded instant; its ``path`` lies in its partition, names its file group and (for a base file) the
    commit's instant, and exists unless a clean or rollback deleted it since."""
    deleted = _deleted_names(ctx)
    for f, meta in _commits(ctx):
        t = f.instant.requested_time
        later_archived_clean = any(a == T.CLEAN and r > t for r, a in ctx.archived.items())
        for partition, stats in sorted(meta.partition_to_write_stats.items()):
            for i, s in enumerate(stats):
                where = _where(f, f"partitionToWriteStats[{partition!r}][{i}]")
                missing = [k for k in REQUIRED_STAT_KEYS if k not in s.fields]
                if missing and meta.encoding == "json":
                    yield V("COMMIT-002", f"write stat lacks {', '.join(missing)}", where)
                if s.prev_commit is not None and not ctx.known_instant(s.prev_commit):
                    yield V("COMMIT-002", f"write stat prevCommit {s.prev_commit[:40]!r} is no instant the timeline "
                                          "records", where)
                if s.partition_path is not None and s.partition_path != partition:
                    yield V("COMMIT-002", f"write stat partitionPath {s.partition_path!r} is not its key {partition!r}",
                            where)
                if not s.path:
                    if meta.encoding == "json":
                        yield V("COMMIT-002", "write stat has no path", where)
                    continue
                directory, _, name = s.path.rpartition("/")
                if directory != partition:
                    yield V("COMMIT-002", f"write stat path {s.path[:200]!r} is not in partition {partition!r}", where)
                parsed_id, base_instant = None, None
                try:
                    if name.startswith(N.LOG_FILE_PREFIX):
                        parsed_id = N.parse_log_file_name(name).file_id
                    else:
                        b = N.parse_base_file_name(name)
                        parsed_id, base_instant = b.file_id, b.instant
                except (InvalidTable, Exception):  # noqa: BLE001 - a misnamed file: the file checks name it
                    pass
                if parsed_id is not None and parsed_id != s.file_id:
                    yield V("COMMIT-002", f"write stat of file group {s.file_id} names a file of {parsed_id}", where)
                if base_instant is not None and base_instant != t:
                    yield V("COMMIT-002", f"commit {t} lists base file {name} of instant {base_instant}", where)
                if s.path not in ctx.sizes and name not in deleted and not later_archived_clean:
                    yield V("COMMIT-002", f"write stat path {s.path[:200]} does not exist and no clean or rollback "
                                          "deleted it", where)


@check("COMMIT-003")
def commit_schemas(ctx: Context) -> Iterator[Violation]:
    """``extraMetadata.schema``, when recorded, is an Avro record schema in JSON."""
    for f, meta in _commits(ctx):
        text = meta.schema
        if text is None:
            continue
        try:
            node = json_loads(text)
        except ValueError as exc:
            yield V("COMMIT-003", f"extraMetadata.schema is not JSON: {exc}", _where(f, "extraMetadata.schema"))
            continue
        if not isinstance(node, dict) or node.get("type") != "record" or not isinstance(node.get("fields"), list):
            yield V("COMMIT-003", "extraMetadata.schema is not an Avro record schema", _where(f, "extraMetadata.schema"))


@check("COMMIT-004")
def replaced_groups_stay_retired(ctx: Context) -> Iterator[Violation]:
    """A file group a replace commit retired receives no later write (its id is never reused)."""
    replaced: dict[tuple[str, str], str] = {}
    for f, meta in _commits(ctx):
        if f.instant.action != T.REPLACE_COMMIT or f.instant.requested_time in ctx.rolled_back:
            continue
        for key in meta.replaced_file_ids():
            replaced[key] = min(replaced.get(key, f.instant.requested_time), f.instant.requested_time)
    if not replaced:
        return
    for d in ctx.data_files:
        by = replaced.get((d.partition, d.file_id))
        if by is None or d.instant <= by or d.instant in ctx.rolled_back:
            continue
        if ctx.completed_action(d.instant) is None:
            continue  # a pending or failed write's leftover: not part of the table
        yield V("COMMIT-004", f"file group {d.file_id} was replaced at {by}, yet instant {d.instant} wrote {d.name}", d.rel)


@check("COMMIT-005")
def partition_keys(ctx: Context) -> Iterator[Violation]:
    """A non-partitioned table's commits use the empty partition path; a partitioned table's never do."""
    cfg = ctx.config
    if cfg is None:
        return
    for f, meta in _commits(ctx):
        for partition in meta.partition_to_write_stats:
            if not cfg.is_partitioned and partition != "":
                yield V("COMMIT-005", f"non-partitioned table commit uses partition path {partition[:100]!r}, not \"\"",
                        _where(f, "partitionToWriteStats"))
            elif cfg.is_partitioned and partition == "":
                yield V("COMMIT-005", "partitioned table commit writes to the empty partition path",
                        _where(f, "partitionToWriteStats"))
