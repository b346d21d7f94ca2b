"""What the Hudi validator reads, once: ``hoodie.properties``, every file of the active timeline and
what it holds, the archive (v6 archived log files, v8+ LSM history), and every file outside
``.hoodie/`` that a reader would take for a partition metafile, a base file or a log file.

Nothing here raises for a damaged file: a file that cannot be read or parsed becomes a
``Violation`` at that file (``Context.errors``, the rule the strict parser names, else the rule of
that kind of file) and stays out of the parsed maps, so the checks see only what was read. Only a
location that cannot be examined at all becomes ``Context.fatal`` (one violation, nothing else is
checked): no ``.hoodie/``, no readable ``hoodie.properties``, no table name/type/version.

Memory stays bounded by the largest single file read (capped at ``bounded.max_inflate()``; bigger
files are listed and named but not opened): a base file's meta columns and a log file's blocks are
reduced to a small summary (``BaseSummary``, ``LogSummary``) before the next file is read.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass, field
from typing import Any, Callable

from reference_impl.common import bounded
from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable, LakeconfError, Unsupported
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi import logfile as LF
from reference_impl.hudi import naming as N
from reference_impl.hudi import properties as P
from reference_impl.hudi import timeline as T
from reference_impl.hudi.avro_schema import META_COLUMNS
from reference_impl.storage import FileInfo, Storage, open_storage
from reference_impl.common.jsontext import loads as json_loads  # deep nesting: a ValueError, not a RecursionError

META_DIR = P.META_DIR
PROPS_REL = f"{META_DIR}/{P.PROPERTIES_FILE}"
BACKUP_REL = f"{META_DIR}/{P.BACKUP_FILE}"
METADATA_TABLE_DIR = f"{META_DIR}/metadata"
# Errors a decoder raises on bytes that are not what they claim; with LakeconfError, all "this file is bad".
DECODE_ERRORS = (LakeconfError, ValueError, TypeError, KeyError, IndexError, EOFError, UnicodeError, OverflowError,
                 AssertionError, struct.error, RecursionError)
MAX_DISTINCT = 64  # distinct values kept per meta column of a file: enough to tell "one value" from "several"
MAX_ARCHIVE_BYTES = 64 << 20  # the archive is read only when it is this small ("where cheap")


@dataclass(frozen=True, slots=True, kw_only=True)
class TimelineFile:
    """One file of the active timeline whose name parsed as an instant."""

    rel: str
    instant: T.Instant
    size: int

    @property
    def name(self) -> str:
        return self.instant.file_name or ""


@dataclass(slots=True, kw_only=True)
class BaseSummary:
    """What a base file's footer and meta columns say, reduced to what the checks need."""

    columns: list[tuple[str, str]]  # (name, arrow type) of every top-level column, in order
    rows: int = 0
    partition_paths: set = field(default_factory=set)  # distinct _hoodie_partition_path (at most MAX_DISTINCT)
    file_names: set = field(default_factory=set)
    commit_times: set = field(default_factory=set)
    duplicate_seqno: str | None = None
    empty_keys: int = 0


@dataclass(slots=True, kw_only=True)
class BlockSummary:
    offset: int
    block_type: LF.BlockType
    header: dict
    problem: str = ""
    content_length: int = 0
    commit_times: set = field(default_factory=set)  # distinct _hoodie_commit_time of a data block's records
    columns: list[str] | None = None  # record field names of a data block (from its SCHEMA header)


@dataclass(slots=True, kw_only=True)
class LogSummary:
    blocks: list[BlockSummary] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFile:
    rel: str
    partition: str  # its directory, root-relative ("" at the root)
    size: int
    base: N.BaseFileName | None = None
    log: N.LogFileName | None = None

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]

    @property
    def file_id(self) -> str:
        return self.base.file_id if self.base else self.log.file_id  # type: ignore[union-attr]

    @property
    def instant(self) -> str:
        return self.base.instant if self.base else self.log.instant  # type: ignore[union-attr]


@dataclass
class Context:
    storage: Storage
    fatal: Violation | None = None
    props: dict[str, str] = field(default_factory=dict)
    props_rel: str = PROPS_REL
    config: P.TableConfig | None = None
    timeline_dir: str = META_DIR
    timeline: list[TimelineFile] = field(default_factory=list)  # sorted by (requested time, state)
    stray_meta_root: list[str] = field(default_factory=list)  # instant-shaped names in .hoodie/ of a layout-2 table
    metadata: dict[str, Any] = field(default_factory=dict)  # completed file name -> parsed metadata
    plans: dict[str, CM.Plan] = field(default_factory=dict)  # pending file name -> parsed content
    record_names: dict[str, str] = field(default_factory=dict)  # file name -> Avro record name (Avro files)
    rolled_back: set[str] = field(default_factory=set)
    archived: dict[str, str] = field(default_factory=dict)  # archived completed requested time -> action
    archive_read: bool = False  # whether the archive was read (else older instants are taken on trust)
    partitions: dict[str, N.PartitionMetadata | None] = field(default_factory=dict)  # dir -> metafile (None: unreadable)
    data_files: list[DataFile] = field(default_factory=list)
    base_summaries: dict[str, BaseSummary] = field(default_factory=dict)
    log_summaries: dict[str, LogSummary] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)  # root-relative path -> size, of every file outside .hoodie
    mdt_props: dict[str, str] | None = None
    errors: list[tuple[str, Violation]] = field(default_factory=list)  # (kind of file, what its parser refused)

    # ---- what the checks ask for

    @property
    def version(self) -> int:
        return self.config.version if self.config else 0

    @property
    def layout(self) -> int:
        return self.config.timeline_layout_version if self.config else 1

    def files_of(self, requested_time: str) -> list[TimelineFile]:
        return [f for f in self.timeline if f.instant.requested_time == requested_time]

    def instants(self) -> dict[str, list[TimelineFile]]:
        """Timeline files grouped by requested time."""
        out: dict[str, list[TimelineFile]] = {}
        for f in self.timeline:
            out.setdefault(f.instant.requested_time, []).append(f)
        return out

    def completed(self) -> list[TimelineFile]:
        return [f for f in self.timeline if f.instant.is_completed]

    def completed_action(self, requested_time: str) -> str | None:
        for f in self.timeline:
            if f.instant.requested_time == requested_time and f.instant.is_completed:
                return f.instant.action
        return None

    @property
    def first_active(self) -> str | None:
        """The oldest requested time on the active timeline: older instants were archived."""
        return self.timeline[0].instant.requested_time if self.timeline else None

    def known_instant(self, t: str) -> bool:
        """Whether ``t`` is an instant a table may name: on the active timeline (any state), archived, rolled
        back, reserved, or older than the active timeline when the archive was not read (or was cleaned)."""
        if t in T.RESERVED_INSTANTS or t in self.rolled_back or t in self.archived:
            return True
        if t in self._requested_times():
            return True
        first = self.first_active
        if first is None or t < first:
            # Older than the active timeline: archived, unless a read archive positively lacks it. Archives
            # are themselves trimmed, so only a time inside the archive's span can be missing from it.
            return not self.archive_read or not self.archived or t < min(self.archived)
        return False

    def _requested_times(self) -> frozenset[str]:
        cached = self.__dict__.get("_requested")
        if cached is None or len(cached[0]) != len(self.timeline):
            cached = (list(self.timeline), frozenset(f.instant.requested_time for f in self.timeline))
            self.__dict__["_requested"] = cached
        return cached[1]

    def base_files(self) -> list[DataFile]:
        return [d for d in self.data_files if d.base is not None]

    def log_files(self) -> list[DataFile]:
        return [d for d in self.data_files if d.log is not None]


# The kind of file a parse error is about, by the rule its kind of file defaults to (one relay check per kind).
KINDS = {"HUDI-LAYOUT-001": "properties", "HUDI-LAYOUT-002": "properties", "HUDI-LAYOUT-016": "properties",
         "HUDI-TIMELINE-009": "timeline-name", "HUDI-TIMELINE-011": "timeline-name",
         "HUDI-TIMELINE-016": "timeline-content", "HUDI-TIMELINE-017": "timeline-content",
         "HUDI-TIMELINE-021": "archive", "HUDI-TIMELINE-022": "archive",
         "HUDI-FILE-004": "file-name", "HUDI-FILE-006": "file-name", "HUDI-LAYOUT-015": "partition-metafile",
         "HUDI-LAYOUT-010": "base-file", "HUDI-LOG-001": "log-file", "HUDI-LOG-006": "log-file"}


def _note(ctx: Context, default_rule: str, v: Violation) -> None:
    ctx.errors.append((KINDS[default_rule], v))


def _err(ctx: Context, rel: str, exc: BaseException, default_rule: str, what: str) -> None:
    rule = getattr(exc, "rule", None) or default_rule
    msg = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    _note(ctx, default_rule, Violation(rule, f"{what}: {msg}"[:500], rel))


def _read(ctx: Context, rel: str, default_rule: str, what: str, *, limit: int | None = None) -> bytes | None:
    """The bytes at ``rel``, or None (a violation recorded unless the file is just too big to check)."""
    if limit is not None and ctx.sizes.get(rel, 0) > limit:
        return None
    try:
        return ctx.storage.read(rel)
    except FileNotFoundError:
        _note(ctx, default_rule, Violation(default_rule, f"{what} vanished while the table was read", rel))
    except LakeconfError as exc:  # a link out of the root, a directory where a file belongs, no permission
        _err(ctx, rel, exc, default_rule, what)
    return None


def _parse(ctx: Context, rel: str, default_rule: str, what: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except DECODE_ERRORS as exc:
        _err(ctx, rel, exc, default_rule, what)
        return None


def _avro_name(data: bytes) -> str | None:
    """The record name of an Avro object container's writer schema (header only)."""
    import fastavro

    try:
        schema = fastavro.reader(io.BytesIO(data)).writer_schema
    except Exception:  # noqa: BLE001 - the full decode already reported what is wrong
        return None
    name = schema.get("name") if isinstance(schema, dict) else None
    return name.rsplit(".", 1)[-1] if isinstance(name, str) else None


# Keys whose bad value ``parse_table_config`` refuses; the properties checks report them from the raw map,
# so the context drops them and carries on with Java's defaults.
_DROP_ON = {"HUDI-LAYOUT-004": (P.TIMELINE_LAYOUT_VERSION,), "HUDI-LAYOUT-010": (P.BASE_FILE_FORMAT, P.BASE_FILE_FORMAT_OLD),
            "HUDI-LAYOUT-013": (P.TIMELINE_TIMEZONE,), "HUDI-LAYOUT-009": (P.RECORD_MERGE_MODE,),
            "HUDI-LAYOUT-012": (P.TIMELINE_PATH, P.TIMELINE_HISTORY_PATH, P.ARCHIVELOG_FOLDER)}


def _config(ctx: Context) -> None:
    props = dict(ctx.props)
    for _ in range(len(_DROP_ON) + 2):
        try:
            ctx.config = P.parse_table_config(props, path=ctx.props_rel)
            return
        except Unsupported as exc:
            version = props.get(P.VERSION, "").strip()
            if version.isdigit() and int(version) in P.KNOWN_VERSIONS:
                raise  # a real Hudi version this kit does not validate: say so, do not call the table broken
            ctx.fatal = Violation("HUDI-LAYOUT-006", f"{exc.message}: no Hudi release writes it", ctx.props_rel)
            return
        except InvalidTable as exc:
            keys = _DROP_ON.get(exc.rule or "")
            if keys is None or not any(k in props for k in keys):
                ctx.fatal = Violation(exc.rule or "HUDI-LAYOUT-003", exc.message, ctx.props_rel)
                return
            for k in keys:
                props.pop(k, None)


def _load_properties(ctx: Context) -> None:
    s = ctx.storage
    listing = s.list(META_DIR)
    names = {i.path.rsplit("/", 1)[-1] for i in listing}
    if not listing and not s.list(f"{META_DIR}/timeline"):
        ctx.fatal = Violation("HUDI-LAYOUT-001", f"no {META_DIR}/ directory: not a Hudi table", META_DIR)
        return
    rel = PROPS_REL if P.PROPERTIES_FILE in names else (BACKUP_REL if P.BACKUP_FILE in names else None)
    if rel is None:
        ctx.fatal = Violation("HUDI-LAYOUT-002", f"no {PROPS_REL} (nor its backup)", PROPS_REL)
        return
    if rel == BACKUP_REL:  # Java reads the backup then, but a table without its properties file is damaged
        _note(ctx, "HUDI-LAYOUT-002", Violation("HUDI-LAYOUT-002", f"{PROPS_REL} is missing; only its backup exists",
                                                PROPS_REL))
    ctx.props_rel = rel
    try:
        ctx.props = P.parse_properties(s.read(rel), path=rel)
    except (LakeconfError, FileNotFoundError) as exc:
        ctx.fatal = Violation(getattr(exc, "rule", None) or "HUDI-LAYOUT-002",
                              f"{rel} cannot be read: {getattr(exc, 'message', exc)}", rel)
        return
    _config(ctx)


def _load_timeline(ctx: Context) -> None:
    cfg = ctx.config
    assert cfg is not None
    ctx.timeline_dir = cfg.timeline_dir
    layout = cfg.timeline_layout_version
    files = []
    for info in ctx.storage.list(ctx.timeline_dir):
        name = info.path.rsplit("/", 1)[-1]
        if name.startswith(".") or not T.looks_like_instant(name):
            continue  # .crc files, hoodie.properties, temp files: not instants
        try:
            inst = T.parse_instant_file(name, layout, path=info.path)
        except LakeconfError as exc:
            _err(ctx, info.path, exc, "HUDI-TIMELINE-009" if layout < 2 else "HUDI-TIMELINE-011", "timeline file name")
            continue
        if inst is not None:
            files.append(TimelineFile(rel=info.path, instant=inst, size=info.size))
    files.sort(key=lambda f: (f.instant.sort_key, f.name))
    ctx.timeline = files
    if layout >= 2:
        ctx.stray_meta_root = sorted(i.path for i in ctx.storage.list(META_DIR)
                                     if T.looks_like_instant(i.path.rsplit("/", 1)[-1]))
    limit = bounded.max_inflate()
    for f in files:
        inst = f.instant
        if f.size > limit:
            rule = "HUDI-TIMELINE-017" if inst.is_completed else "HUDI-TIMELINE-016"
            _note(ctx, rule, Violation(rule, f"timeline file is {f.size:,} bytes, over the {limit:,} a validator reads",
                                       f.rel))
            continue
        data = _read(ctx, f.rel, "HUDI-TIMELINE-017", "timeline file")
        if data is None:
            continue
        if data.startswith(CM.AVRO_MAGIC):
            name = _avro_name(data)
            if name:
                ctx.record_names[f.name] = name
        if inst.is_completed:
            meta = _parse(ctx, f.rel, "HUDI-TIMELINE-017", f"completed {inst.action}",
                          lambda d=data, a=inst.action, r=f.rel: CM.parse_instant_metadata(d, a, path=r))
            if meta is not None:
                ctx.metadata[f.name] = meta
                if isinstance(meta, CM.RollbackMetadata):
                    ctx.rolled_back.update(meta.rolled_back)
        else:
            plan = _parse(ctx, f.rel, "HUDI-TIMELINE-016", f"{inst.state.lower()} {inst.action}",
                          lambda d=data, i=inst, r=f.rel: CM.parse_pending(d, i.action, i.state, path=r))
            if plan is not None:
                ctx.plans[f.name] = plan


def _load_archive(ctx: Context) -> None:
    cfg = ctx.config
    assert cfg is not None
    s = ctx.storage
    if cfg.timeline_layout_version < 2:
        files = T.list_archive_v1(s, cfg)
        if sum(f.size for f in files) > MAX_ARCHIVE_BYTES:
            return
        try:
            entries = T.read_archive_v1(s, cfg)
        except DECODE_ERRORS as exc:
            _err(ctx, cfg.history_dir, exc, "HUDI-TIMELINE-021", "archived timeline")
            return
        ctx.archive_read = bool(files)
        for e in entries:
            if e.state == T.COMPLETED:
                ctx.archived[e.requested_time] = e.action
                # Archived metadata must still decode (HUDI-TIMELINE-021); a rollback's says what it undid,
                # which may still lie on storage.
                meta = _parse(ctx, e.source, "HUDI-TIMELINE-021", f"archived {e.action} {e.requested_time}",
                              lambda e=e: CM.archived_v1_metadata(e))
                if isinstance(meta, CM.RollbackMetadata):
                    ctx.rolled_back.update(meta.rolled_back)
        return
    history = cfg.history_dir
    listing = s.list(history)
    if sum(i.size for i in listing) > MAX_ARCHIVE_BYTES:
        return
    try:
        rows = T.read_lsm_timeline(s, cfg)
    except DECODE_ERRORS as exc:
        where = getattr(exc, "path", None) or history
        root = ctx.storage.uri("").rstrip("/") + "/"
        _err(ctx, where[len(root):] if where.startswith(root) else history, exc, "HUDI-TIMELINE-022", "LSM history")
        return
    ctx.archive_read = bool(rows)
    for r in rows:
        ctx.archived[r.requested_time] = r.action
        # Each row's metadata is the completed file's bytes and must decode as one (HUDI-TIMELINE-023); a
        # rollback's says what it undid, which may still lie on storage.
        meta = _parse(ctx, history, "HUDI-TIMELINE-022", f"archived {r.action} {r.requested_time} metadata",
                      lambda r=r: _lsm_metadata(r))
        if isinstance(meta, CM.RollbackMetadata):
            ctx.rolled_back.update(meta.rolled_back)


def _lsm_metadata(row: T.ArchivedInstant) -> Any:
    try:
        return CM.read_archived_metadata(row)
    except LakeconfError as exc:
        raise InvalidTable(exc.message, rule="HUDI-TIMELINE-023") from None


def _load_files(ctx: Context, listing: list[FileInfo]) -> None:
    for info in listing:
        ctx.sizes[info.path] = info.size
    for info in listing:
        directory, _, name = info.path.rpartition("/")
        if name.endswith(".crc") or name.startswith(".."):
            continue  # Hadoop checksum files beside every file
        if any(seg.startswith(".") for seg in directory.split("/") if seg):
            continue  # hidden directories are no partitions (Hudi writes none; tools keep scratch there)
        if N.is_partition_metafile(name):
            ctx.partitions[directory] = None
            continue
        if name.startswith(N.LOG_FILE_PREFIX):
            if ".log." not in name:
                continue  # some other hidden file (a writer's temp file): not the table's
            try:
                log = N.parse_log_file_name(name)
            except LakeconfError as exc:
                _err(ctx, info.path, exc, "HUDI-FILE-006", "log file name")
                continue
            ctx.data_files.append(DataFile(rel=info.path, partition=directory, size=info.size, log=log))
            continue
        ext = name.rsplit(".", 1)[-1] if "." in name else ""
        if ext not in N.BASE_FILE_EXTENSIONS:
            continue  # _SUCCESS and the like: no reader takes them for table files
        try:
            base = N.parse_base_file_name(name)
        except LakeconfError as exc:
            _err(ctx, info.path, exc, "HUDI-FILE-004", "base file name")
            continue
        ctx.data_files.append(DataFile(rel=info.path, partition=directory, size=info.size, base=base))
    for directory in sorted(ctx.partitions):
        name = N.PARTITION_METAFILE
        for candidate in [N.PARTITION_METAFILE] + [f"{N.PARTITION_METAFILE}.{f}" for f in N.PARTITION_METAFILE_FORMATS]:
            if (f"{directory}/{candidate}" if directory else candidate) in ctx.sizes:
                name = candidate
                break
        rel = f"{directory}/{name}" if directory else name
        depth = directory.count("/") + 1 if directory else 0
        data = _read(ctx, rel, "HUDI-LAYOUT-015", "partition metadata", limit=1 << 20)
        if data is not None:
            ctx.partitions[directory] = _parse(ctx, rel, "HUDI-LAYOUT-015", "partition metadata",
                                               lambda d=data, n=name, r=rel, k=depth: N.parse_partition_metadata(
                                                   d, n, path=r, depth=k if k else None))


def _summarize_base(ctx: Context, f: DataFile) -> None:
    if f.base is None or f.base.extension != "parquet":
        return  # ORC, HFile and Lance base files are named and listed, not opened
    data = _read(ctx, f.rel, "HUDI-LAYOUT-010", "base file", limit=bounded.max_inflate())
    if data is None:
        return
    import pyarrow as pa

    from reference_impl.parquet_io import open_parquet, read_parquet

    try:
        pf = open_parquet(data)
        schema = pf.schema_arrow
        summary = BaseSummary(columns=[(fld.name, str(fld.type)) for fld in schema], rows=pf.metadata.num_rows)
        present = [c for c in META_COLUMNS if c in schema.names]
        table = read_parquet(pf, present) if present else None
    except (pa.ArrowException, OSError, *DECODE_ERRORS) as exc:
        _err(ctx, f.rel, exc, "HUDI-LAYOUT-010", "base file is not readable Parquet")
        return
    del data
    if table is not None:
        import pyarrow.compute as pc

        # Arrow's own kernels, not Python lists: a file's columns stay in Arrow memory, one file at a time.
        def strings(name: str):
            if name not in present:
                return None
            col = table.column(name)
            return col if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) else None

        for key, target in (("_hoodie_partition_path", summary.partition_paths), ("_hoodie_file_name", summary.file_names),
                            ("_hoodie_commit_time", summary.commit_times)):
            col = strings(key)
            if col is not None:
                target.update(pc.unique(col).slice(0, MAX_DISTINCT).to_pylist())
        seq = strings("_hoodie_commit_seqno")
        if seq is not None and pc.count_distinct(seq).as_py() < len(seq) - seq.null_count:
            counts = pc.value_counts(seq)
            repeated = counts.filter(pc.greater(counts.field("counts"), 1))
            summary.duplicate_seqno = repeated.field("values")[0].as_py() if len(repeated) else None
        key = strings("_hoodie_record_key")
        if key is not None:
            summary.empty_keys = key.null_count + (pc.sum(pc.equal(key, "")).as_py() or 0)
    ctx.base_summaries[f.rel] = summary


def _block_summary(block: LF.LogBlock) -> BlockSummary:
    b = BlockSummary(offset=block.offset, block_type=block.block_type, header=dict(block.header), problem=block.problem,
                     content_length=len(block.content))
    recs = block.records
    if block.block_type is LF.BlockType.AVRO_DATA and isinstance(recs, list):
        for r in recs:
            if isinstance(r, dict) and len(b.commit_times) < MAX_DISTINCT:
                b.commit_times.add(r.get("_hoodie_commit_time"))
    elif block.block_type is LF.BlockType.PARQUET_DATA and recs is not None and "_hoodie_commit_time" in recs.column_names:
        for v in recs.column("_hoodie_commit_time").unique().to_pylist()[:MAX_DISTINCT]:
            b.commit_times.add(v)
    if block.block_type in (LF.BlockType.AVRO_DATA, LF.BlockType.PARQUET_DATA) and block.schema:
        try:
            node = json_loads(block.schema)
            b.columns = [fld.get("name") for fld in node.get("fields", [])] if isinstance(node, dict) else None
        except ValueError:
            b.columns = None
    return b


def _summarize_log(ctx: Context, f: DataFile) -> None:
    data = _read(ctx, f.rel, "HUDI-LOG-001", "log file", limit=bounded.max_inflate())
    if data is None:
        return
    summary = LogSummary()
    ctx.log_summaries[f.rel] = summary
    try:
        for block in LF.iter_blocks(data, path=f.rel, decode=not (f.log and f.log.is_cdc)):
            summary.blocks.append(_block_summary(block))
    except DECODE_ERRORS as exc:
        _err(ctx, f.rel, exc, "HUDI-LOG-006", "log file")


def _load_metadata_table(ctx: Context) -> None:
    rel = f"{METADATA_TABLE_DIR}/{PROPS_REL}"
    try:
        data = ctx.storage.read(rel)
    except FileNotFoundError:
        return
    except LakeconfError as exc:
        _err(ctx, rel, exc, "HUDI-LAYOUT-016", "metadata table properties")
        return
    ctx.mdt_props = _parse(ctx, rel, "HUDI-LAYOUT-016", "metadata table properties",
                           lambda: P.parse_properties(data, path=rel))


def open_table(location: Any) -> Context:
    """Read everything the checks look at; never raises for a damaged table (see the module docstring)."""
    storage = location if isinstance(location, Storage) else open_storage(location)
    ctx = Context(storage)
    _load_properties(ctx)
    if ctx.fatal is not None or ctx.config is None:
        return ctx
    _load_timeline(ctx)
    _load_archive(ctx)
    listing = [i for i in storage.walk("") if not (i.path == META_DIR or i.path.startswith(META_DIR + "/"))]
    _load_files(ctx, listing)
    for f in ctx.data_files:
        if f.base is not None:
            _summarize_base(ctx, f)
        else:
            _summarize_log(ctx, f)
    _load_metadata_table(ctx)
    return ctx
