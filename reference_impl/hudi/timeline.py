"""Timeline (spec: Timeline, LSM Timeline; Java HoodieTimeline, InstantGeneratorV1/V2, InstantFileNameGeneratorV2, LSMTimeline).

Every change to a table is an *instant*: a requested time, an action and a state (REQUESTED <
INFLIGHT < COMPLETED), each state published as one file.

* Layout 1 (table version <= 7): the files sit in ``.hoodie/``: ``<T>.<action>`` when completed,
  ``<T>.<action>.requested`` / ``<T>.<action>.inflight`` while pending, and ``<T>.inflight`` for an
  inflight ``commit`` (a name kept for backward compatibility, in both layouts).
* Layout 2 (table version >= 8): the files sit in ``.hoodie/timeline/`` (``hoodie.timeline.path``):
  ``<T>_<C>.<action>`` when completed, where C is the completion time; pending files as in layout 1.
  A completed name without ``_<C>`` is a *legacy* file (from an upgraded v6 table): Java takes its
  modification time as completion time; here it has none, and readers fall back to T.

Some actions complete under another name: a ``compaction`` as ``commit``, a ``logcompaction`` as
``deltacommit``, and (layout 2) a ``clustering`` as ``replacecommit``. The files of one requested
time are one instant; its state is the highest state with a file (HUDI-TIMELINE-002).

Instant times are ``yyyyMMddHHmmssSSS``; tables from before 0.9 have ``yyyyMMddHHmmss``, and the
metadata table appends a 3-digit suffix (20 digits). Java compares them as strings, and so does
this module. They are wall-clock times in ``hoodie.table.timeline.timezone`` (LOCAL by default).

Completion times: layout 2 names carry them, and the commit order a reader must use is their order
(HUDI-TIMELINE-015). Layout 1 has none: Java's ``CompletionTimeQueryViewV1`` treats the requested
time as the completion time, so a v6 reader orders and slices by requested time and must not use
file modification times (copying a table changes them) (HUDI-TIMELINE-014).

Archived instants: v6 keeps them in ``.hoodie/<hoodie.archivelog.folder>/`` (default ``archived``;
Hudi 1.2 writing a v6 table sets it to ``history``) as Hudi log files ``.commits_.archive.N_<token>``
of ``HoodieArchivedMetaEntry`` Avro blocks, one entry per state of each instant (decoded with
``reference_impl.hudi.logfile``). v8+ keeps an LSM tree in ``.hoodie/timeline/history/``:
``_version_`` names the current ``manifest_<N>`` (JSON ``{"files":[{"fileName","fileLen"}]}``),
which lists the live ``<min>_<max>_<level>.parquet`` files (min and max are requested times; files
of older versions stay beside them until cleaned and are not read); their rows are
``HoodieLSMTimelineInstant`` records whose ``metadata`` holds the completed file's bytes.
Files a writer leaves beside the timeline (``hoodie.properties``, ``.aux/``, ``.temp/``, ``.crc``
files, temp files) are not instants and are passed over; a name shaped like an instant with an
action this module does not know is Unsupported (a newer writer), one with a bad state InvalidTable.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from reference_impl.common.jsontext import loads
from reference_impl.common.validation import Violation, at
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi.properties import TableConfig
from reference_impl.storage import FileInfo, Storage

# Actions (HoodieTimeline.*_ACTION).
COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
RESTORE = "restore"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
CLUSTERING = "clustering"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"
ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLEAN, ROLLBACK, SAVEPOINT, RESTORE, COMPACTION, LOG_COMPACTION,
           CLUSTERING, INDEXING, SCHEMA_COMMIT)
# The action a pending instant's completed file is named after (HUDI-TIMELINE-013).
COMPLETES_AS: Mapping[str, str] = MappingProxyType({COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT,
                                                    CLUSTERING: REPLACE_COMMIT})
# Actions that write data files: what a snapshot is built from.
WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLUSTERING)

# States, in order (HoodieInstant.State).
REQUESTED = "REQUESTED"
INFLIGHT = "INFLIGHT"
COMPLETED = "COMPLETED"
STATES = (REQUESTED, INFLIGHT, COMPLETED)
_STATE_RANK = {s: i for i, s in enumerate(STATES)}
REQUESTED_SUFFIX = "requested"
INFLIGHT_SUFFIX = "inflight"

# Reserved instant times (HoodieTimeline).
INIT_INSTANT = "00000000000000"
METADATA_BOOTSTRAP_INSTANT = "00000000000001"
FULL_BOOTSTRAP_INSTANT = "00000000000002"
RESERVED_INSTANTS = (INIT_INSTANT, METADATA_BOOTSTRAP_INSTANT, FULL_BOOTSTRAP_INSTANT)
MILLIS_FORMAT_LEN = 17
SECS_FORMAT_LEN = 14
MDT_SUFFIXED_LEN = 20  # metadata-table instants: a 17-digit time and a 3-digit suffix ("001", "010", ...)
INSTANT_LENGTHS = (SECS_FORMAT_LEN, MILLIS_FORMAT_LEN, MDT_SUFFIXED_LEN)

# LSM history (LSMTimeline).
VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_MANIFEST_RE = re.compile(r"manifest_(0|[1-9][0-9]{0,8})\Z")
_LSM_FILE_RE = re.compile(r"([0-9]+)_([0-9]+)_([0-9])\.parquet\Z")  # Java: one digit of level
LSM_COLUMNS = ("instantTime", "completionTime", "action", "metadata", "plan", "version")
MAX_MANIFEST_BYTES = 64 << 20
# v6 archive (HoodieArchivedTimeline): Hudi log files of file id "commits" and empty instant.
_ARCHIVE_V1_RE = re.compile(r"\.commits_\.archive\.([0-9]+)(?:_([0-9A-Za-z-]+))?\Z")

_NAME_RE = re.compile(r"([0-9]+)(?:_([0-9]+))?\.([A-Za-z]+)(?:\.([A-Za-z]+))?\Z")


@dataclass(frozen=True, slots=True, kw_only=True)
class Instant:
    """One instant at one state, as one timeline file names it."""

    requested_time: str
    action: str  # as the file names it: a completed compaction is a "commit"
    state: str
    completion_time: str | None = None  # layout 2 completed (and LSM-archived) instants only
    file_name: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state == COMPLETED

    @property
    def ordering_time(self) -> str:
        """The time that orders completed instants for a reader: completion time, else requested time (v6)."""
        return self.completion_time or self.requested_time

    @property
    def sort_key(self) -> tuple[str, str, int]:
        """Java's comparator: requested time, then the comparable action, then the state (HUDI-TIMELINE-015)."""
        return self.requested_time, COMPLETES_AS.get(self.action, self.action), _STATE_RANK[self.state]


# ----------------------------------------------------------------------------------------------
# Instant times
# ----------------------------------------------------------------------------------------------


def check_instant_time(text: str, what: str = "instant time", *, path: str | None = None) -> str:
    """``text`` if it is an instant time of 14, 17 or 20 ASCII digits; InvalidTable otherwise (HUDI-TIMELINE-006/007)."""
    if not (text.isascii() and text.isdigit()) or len(text) not in INSTANT_LENGTHS:
        raise InvalidTable(f"{what} {text[:40]!r} is not yyyyMMddHHmmssSSS (or legacy yyyyMMddHHmmss)", path=path,
                           rule="HUDI-TIMELINE-006")
    if text.strip("0") == "":
        if text != INIT_INSTANT:
            raise InvalidTable(f"{what} {text!r} is all zeros, which no writer issues", path=path, rule="HUDI-TIMELINE-007")
    return text


def parse_instant_time(text: str, *, tz: dt.tzinfo | None = None, path: str | None = None) -> dt.datetime:
    """The wall-clock time an instant time spells (``tz`` attached when given); reserved times are refused."""
    check_instant_time(text, path=path)
    if text in RESERVED_INSTANTS:
        raise InvalidTable(f"instant time {text} is reserved (table init or bootstrap), not a clock time", path=path,
                           rule="HUDI-TIMELINE-007")
    millis = int(text[14:17]) if len(text) >= MILLIS_FORMAT_LEN else 0
    try:
        value = dt.datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(microsecond=millis * 1000)
    except ValueError:
        raise InvalidTable(f"instant time {text} is not a valid date and time", path=path, rule="HUDI-TIMELINE-006") from None
    return value.replace(tzinfo=tz) if tz is not None else value


def instant_zone(config: TableConfig) -> dt.tzinfo | None:
    """The zone instant times are written in: UTC, or None for LOCAL (the writer's JVM zone, unknowable from the
    table; Java assumes the reader's own, hudi-rs assumes UTC: HUDI-LAYOUT-013)."""
    return dt.timezone.utc if config.timeline_timezone == "UTC" else None


def format_instant_time(value: dt.datetime) -> str:
    """``yyyyMMddHHmmssSSS`` of a wall-clock time (HoodieInstantTimeGenerator.formatDate)."""
    return value.strftime("%Y%m%d%H%M%S") + f"{value.microsecond // 1000:03d}"


# ----------------------------------------------------------------------------------------------
# File names
# ----------------------------------------------------------------------------------------------


def looks_like_instant(name: str) -> bool:
    """Whether a file name has an instant's shape (digits, a dot, a word); everything else is a stray file."""
    return bool(_NAME_RE.match(name))


def parse_instant_file(name: str, layout: int, *, path: str | None = None) -> Instant | None:
    """The instant a timeline file name spells, None for a name that is not shaped like one.

    Unsupported for an action this module does not know (a newer writer); InvalidTable for a known
    action with a bad state, ``_<completion>`` on a pending file, or a bad instant time.
    """
    m = _NAME_RE.match(name)
    if not m:
        return None
    requested, completion, action, suffix = m.groups()
    where = path or name
    if action == INFLIGHT_SUFFIX and suffix is None:
        action, state = COMMIT, INFLIGHT  # "<T>.inflight": commit, for backward compatibility (HUDI-TIMELINE-010)
    elif action not in ACTIONS:
        if action in (REQUESTED_SUFFIX, "completed"):
            raise InvalidTable(f"timeline file {name!r} has a state but no action", path=where, rule="HUDI-TIMELINE-009")
        raise Unsupported(f"timeline file {name!r} has action {action!r}, which is not one of Hudi's actions "
                          f"({', '.join(ACTIONS)})", feature=f"hudi-action:{action}", path=where, rule="HUDI-TIMELINE-008",
                          hint="a newer Hudi writer may have added it")
    elif suffix is None:
        state = COMPLETED
    elif suffix == REQUESTED_SUFFIX:
        state = REQUESTED
    elif suffix == INFLIGHT_SUFFIX:
        state = INFLIGHT
    else:
        raise InvalidTable(f"timeline file {name!r} has state {suffix!r}; states are .requested and .inflight "
                           "(completed files have no state suffix)", path=where,
                           rule="HUDI-TIMELINE-011" if layout >= 2 else "HUDI-TIMELINE-009")
    check_instant_time(requested, "requested time", path=where)
    if completion is not None:
        if layout < 2:
            raise InvalidTable(f"timeline file {name!r} has a completion time, which layout 1 (table version <= 7) "
                               "never writes", path=where, rule="HUDI-TIMELINE-009")
        if state != COMPLETED:
            raise InvalidTable(f"timeline file {name!r} is {state.lower()} but carries a completion time", path=where,
                               rule="HUDI-TIMELINE-012")
        check_instant_time(completion, "completion time", path=where)
    if state == COMPLETED and action in COMPLETES_AS:
        raise InvalidTable(f"timeline file {name!r}: a completed {action} is named {COMPLETES_AS[action]}", path=where,
                           rule="HUDI-TIMELINE-013")
    if action == CLUSTERING and layout < 2:
        raise InvalidTable(f"timeline file {name!r}: layout 1 plans clustering as a replacecommit", path=where,
                           rule="HUDI-TIMELINE-013")
    if action == SAVEPOINT and state == REQUESTED:
        raise InvalidTable(f"timeline file {name!r}: a savepoint has no requested state", path=where,
                           rule="HUDI-TIMELINE-003")
    return Instant(requested_time=requested, action=action, state=state, completion_time=completion, file_name=name)


def instant_file_name(instant: Instant, layout: int) -> str:
    """The timeline file name of ``instant`` in ``layout`` (InstantFileNameGeneratorV1/V2)."""
    t, action = instant.requested_time, instant.action
    if instant.state == COMPLETED:
        action = COMPLETES_AS.get(action, action)
        if layout >= 2:
            if not instant.completion_time:
                raise ValueError("a completed layout-2 instant needs a completion time")
            return f"{t}_{instant.completion_time}.{action}"
        return f"{t}.{action}"
    if action == COMMIT and instant.state == INFLIGHT:
        return f"{t}.{INFLIGHT_SUFFIX}"
    if action == SAVEPOINT and instant.state == REQUESTED:
        raise ValueError("a savepoint has no requested state")
    if action == CLUSTERING and layout < 2:
        action = REPLACE_COMMIT
    return f"{t}.{action}.{REQUESTED_SUFFIX if instant.state == REQUESTED else INFLIGHT_SUFFIX}"


# ----------------------------------------------------------------------------------------------
# Active timeline
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeline:
    """The active timeline: every instant file, and each instant at its current state, in Java's order."""

    layout: int
    directory: str
    files: tuple[Instant, ...]  # every timeline file, sorted by ``sort_key``
    instants: tuple[Instant, ...]  # one per requested time: its highest state
    modification_times: Mapping[str, int] = field(default_factory=dict, hash=False)  # file name -> mtime ms
    # requested time -> (its files, its current state): built once, so lookups per instant stay linear overall
    _by_time: Mapping[str, tuple[tuple[Instant, ...], Instant | None]] = field(
        init=False, default_factory=dict, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        files: dict[str, list[Instant]] = {}
        for f in self.files:
            files.setdefault(f.requested_time, []).append(f)
        current = {i.requested_time: i for i in self.instants}
        object.__setattr__(self, "_by_time", {t: (tuple(fs), current.get(t)) for t, fs in files.items()}
                           | {t: ((), i) for t, i in current.items() if t not in files})

    def completed(self) -> tuple[Instant, ...]:
        """Completed instants in requested-time order (HUDI-TIMELINE-019)."""
        return tuple(i for i in self.instants if i.is_completed)

    def pending(self) -> tuple[Instant, ...]:
        """Requested and inflight instants."""
        return tuple(i for i in self.instants if not i.is_completed)

    def completed_in_commit_order(self) -> tuple[Instant, ...]:
        """Completed instants in the order a reader applies them: by completion time (v8+), else requested time."""
        return tuple(sorted(self.completed(), key=lambda i: (i.ordering_time, i.requested_time)))

    def completed_writes(self) -> tuple[Instant, ...]:
        """Completed commits, delta commits and replace commits (what holds data files)."""
        return tuple(i for i in self.completed() if i.action in WRITE_ACTIONS)

    def instant(self, requested_time: str) -> Instant | None:
        """The current state of the instant requested at ``requested_time``."""
        found = self._by_time.get(requested_time)
        return found[1] if found is not None else None

    def files_of(self, requested_time: str) -> tuple[Instant, ...]:
        """Every file of one instant, lowest state first."""
        found = self._by_time.get(requested_time)
        return found[0] if found is not None else ()


def _same_instant(a: Instant, b: Instant) -> bool:
    return COMPLETES_AS.get(a.action, a.action) == COMPLETES_AS.get(b.action, b.action)


def build_timeline(names: Iterable[str], layout: int, *, directory: str = "",
                   modification_times: Mapping[str, int] | None = None) -> Timeline:
    """The timeline of the given file names of one directory (strays passed over)."""
    files = []
    for name in names:
        inst = parse_instant_file(name, layout, path=f"{directory}/{name}" if directory else name)
        if inst is not None:
            files.append(inst)
    files.sort(key=lambda i: (i.sort_key, i.file_name or ""))
    current: dict[str, Instant] = {}
    for f in files:
        prev = current.get(f.requested_time)
        if prev is not None:
            if not _same_instant(prev, f):
                raise InvalidTable(f"requested time {f.requested_time} is used by both {prev.file_name!r} and "
                                   f"{f.file_name!r}: instant times identify one action", path=directory or None,
                                   rule="HUDI-TIMELINE-005")
            if prev.state == f.state == COMPLETED:
                raise InvalidTable(f"instant {f.requested_time} completed twice ({prev.file_name!r}, {f.file_name!r})",
                                   path=directory or None, rule="HUDI-TIMELINE-011")
            if _STATE_RANK[f.state] < _STATE_RANK[prev.state]:
                continue
        current[f.requested_time] = f
    instants = tuple(sorted(current.values(), key=lambda i: i.sort_key))
    return Timeline(layout=layout, directory=directory, files=tuple(files), instants=instants,
                    modification_times=MappingProxyType(dict(modification_times or {})))


def load_active_timeline(storage: Storage, config: TableConfig) -> Timeline:
    """The active timeline of a table (``.hoodie/`` or ``.hoodie/<timeline.path>/``, not recursive)."""
    directory = config.timeline_dir
    listing: Sequence[FileInfo] = storage.list(directory)
    names = [info.path.rsplit("/", 1)[-1] for info in listing]
    mtimes = dict(zip(names, [info.modification_time for info in listing]))
    return build_timeline(names, config.timeline_layout_version, directory=directory, modification_times=mtimes)


def transition_violations(timeline: Timeline) -> list[Violation]:
    """Instants whose files skip a state (HUDI-TIMELINE-003): a completed file with no inflight file beside it.

    Only meaningful while all of an instant's files are on the active timeline (archival moves
    them together); a savepoint has no requested file, and a table's very first requested file
    may be alone.
    """
    out = []
    for inst in timeline.completed():
        states = {f.state for f in timeline.files_of(inst.requested_time)}
        if INFLIGHT not in states:
            out.append(Violation("HUDI-TIMELINE-003", f"instant {inst.requested_time} ({inst.action}) is completed "
                                 "without an inflight file", at(f"{timeline.directory}/{inst.file_name}")))
    return out


# ----------------------------------------------------------------------------------------------
# Archived timeline
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveLogFile:
    """One v6 archive file ``.commits_.archive.<version>_<writeToken>``."""

    path: str
    version: int
    write_token: str | None
    size: int


def list_archive_v1(storage: Storage, config: TableConfig) -> tuple[ArchiveLogFile, ...]:
    """The archive log files of a layout-1 table, by version (other files in the folder passed over)."""
    out = []
    for info in storage.list(config.history_dir):
        m = _ARCHIVE_V1_RE.match(info.path.rsplit("/", 1)[-1])
        if m:
            out.append(ArchiveLogFile(path=info.path, version=int(m.group(1)), write_token=m.group(2), size=info.size))
    return tuple(sorted(out, key=lambda f: (f.version, f.path)))


# HoodieArchivedMetaEntry: the field that holds each action's metadata (completed) or plan (pending).
ARCHIVED_V1_FIELDS: Mapping[str, str] = MappingProxyType({
    COMMIT: "hoodieCommitMetadata", DELTA_COMMIT: "hoodieCommitMetadata", REPLACE_COMMIT: "hoodieReplaceCommitMetadata",
    CLEAN: "hoodieCleanMetadata", ROLLBACK: "hoodieRollbackMetadata", SAVEPOINT: "hoodieSavePointMetadata",
    INDEXING: "hoodieIndexCommitMetadata",
})
ARCHIVED_V1_PLAN_FIELDS: Mapping[str, str] = MappingProxyType({
    CLEAN: "hoodieCleanerPlan", COMPACTION: "hoodieCompactionPlan", REPLACE_COMMIT: "hoodieRequestedReplaceMetadata",
})


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchivedEntryV1:
    """One HoodieArchivedMetaEntry of a v6 archive: one state of one instant, with that state's metadata."""

    requested_time: str
    action: str
    state: str
    state_transition_time: str | None  # when the state was reached (absent from old writers)
    record: Mapping[str, Any] = field(hash=False)
    source: str = ""  # the archive file it came from

    @property
    def metadata_record(self) -> Mapping[str, Any] | None:
        """The decoded metadata of a completed entry (HoodieCommitMetadata, HoodieCleanMetadata, ...), or None."""
        key = ARCHIVED_V1_FIELDS.get(self.action)
        value = self.record.get(key) if key and self.state == COMPLETED else None
        return value if isinstance(value, dict) else None

    def as_instant(self) -> Instant:
        """The entry as an instant; like the active v6 timeline it has no completion time (HUDI-TIMELINE-014)."""
        return Instant(requested_time=self.requested_time, action=self.action, state=self.state)


def read_archive_v1(storage: Storage, config: TableConfig) -> tuple[ArchivedEntryV1, ...]:
    """Every entry of a v6 archive, file by file, in file order (HUDI-TIMELINE-021).

    The archive files are Hudi log files whose Avro data blocks hold ``HoodieArchivedMetaEntry``
    records (decoded by ``reference_impl.hudi.logfile`` with each block's own schema); a corrupt
    block (a write cut short) is skipped, as Java's log reader skips it. Java writes one entry per
    state of each archived instant, so a completed instant appears with its requested and inflight
    entries.
    """
    from reference_impl.hudi import logfile  # the log-file format is its own module; only the v6 archive needs it

    out: list[ArchivedEntryV1] = []
    for f in list_archive_v1(storage, config):
        uri = storage.uri(f.path)
        for block in logfile.load_log_file(storage, f.path):
            if block.is_corrupt:
                continue
            if block.block_type is not logfile.BlockType.AVRO_DATA:
                raise InvalidTable(f"archive file holds a {block.block_type.name} block; archives hold Avro data blocks",
                                   path=uri, rule="HUDI-TIMELINE-021")
            for rec in block.records or ():
                if not isinstance(rec, dict):
                    raise InvalidTable("archived entry is not a record", path=uri, rule="HUDI-TIMELINE-021")
                requested, action, state = rec.get("commitTime"), rec.get("actionType"), rec.get("actionState")
                if not isinstance(requested, str) or not isinstance(action, str):
                    raise InvalidTable("archived entry lacks commitTime or actionType", path=uri, rule="HUDI-TIMELINE-021")
                check_instant_time(requested, "archived instant time", path=uri)
                if state is None:
                    state = COMPLETED  # writers before 0.11 archived completed instants only, without a state
                if state not in STATES:
                    raise InvalidTable(f"archived entry {requested} has state {str(state)[:40]!r}", path=uri,
                                       rule="HUDI-TIMELINE-021")
                moved = rec.get("stateTransitionTime")
                out.append(ArchivedEntryV1(requested_time=requested, action=action, state=state,
                                           state_transition_time=moved if isinstance(moved, str) else None,
                                           record=MappingProxyType(rec), source=f.path))
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class LsmFile:
    """One entry of an LSM manifest: a ``<min>_<max>_<level>.parquet`` file and its length."""

    file_name: str
    file_len: int
    min_time: str
    max_time: str
    level: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LsmManifest:
    """The live files of one version of the LSM history."""

    version: int
    files: tuple[LsmFile, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchivedInstant:
    """One row of an LSM history file (HoodieLSMTimelineInstant): a completed instant and its metadata bytes."""

    requested_time: str
    completion_time: str | None
    action: str
    metadata: bytes | None
    plan: bytes | None
    version: int | None

    def as_instant(self) -> Instant:
        return Instant(requested_time=self.requested_time, action=self.action, state=COMPLETED,
                       completion_time=self.completion_time)


def parse_lsm_file_name(name: str, *, path: str | None = None) -> tuple[str, str, int]:
    """``(min, max, level)`` of ``<min>_<max>_<level>.parquet``; InvalidTable otherwise (HUDI-TIMELINE-022)."""
    m = _LSM_FILE_RE.match(name)
    if not m:
        raise InvalidTable(f"LSM history file {name[:100]!r} is not named <min>_<max>_<level>.parquet", path=path,
                           rule="HUDI-TIMELINE-022")
    lo, hi, level = m.group(1), m.group(2), int(m.group(3))
    check_instant_time(lo, "LSM file min time", path=path)
    check_instant_time(hi, "LSM file max time", path=path)
    if hi < lo:
        raise InvalidTable(f"LSM history file {name!r} has max time before min time", path=path, rule="HUDI-TIMELINE-022")
    return lo, hi, level


def parse_lsm_manifest(data: bytes, version: int, *, path: str | None = None) -> LsmManifest:
    """A ``manifest_<N>`` file: ``{"files": [{"fileName": ..., "fileLen": ...}, ...]}`` (HoodieLSMTimelineManifest)."""
    if len(data) > MAX_MANIFEST_BYTES:
        raise InvalidTable(f"LSM manifest is {len(data):,} bytes, over {MAX_MANIFEST_BYTES:,}", path=path,
                           rule="HUDI-TIMELINE-022")
    try:
        node = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidTable(f"LSM manifest is not JSON: {exc}", path=path, rule="HUDI-TIMELINE-022") from None
    entries = node.get("files") if isinstance(node, dict) else None
    if not isinstance(entries, list):
        raise InvalidTable("LSM manifest must be an object with a 'files' list", path=path, rule="HUDI-TIMELINE-022")
    files = []
    seen = set()
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("fileName"), str):
            raise InvalidTable(f"LSM manifest entry {str(e)[:100]} lacks a string 'fileName'", path=path,
                               rule="HUDI-TIMELINE-022")
        name, length = e["fileName"], e.get("fileLen")
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise InvalidTable(f"LSM manifest entry {name[:100]!r} has fileLen {length!r}, not a byte count", path=path,
                               rule="HUDI-TIMELINE-022")
        lo, hi, level = parse_lsm_file_name(name, path=path)  # also keeps names inside the directory
        if name in seen:
            raise InvalidTable(f"LSM manifest lists {name!r} twice", path=path, rule="HUDI-TIMELINE-022")
        seen.add(name)
        files.append(LsmFile(file_name=name, file_len=length, min_time=lo, max_time=hi, level=level))
    return LsmManifest(version=version, files=tuple(sorted(files, key=lambda f: (f.min_time, f.level, f.file_name))))


def lsm_version(storage: Storage, history_dir: str) -> int | None:
    """The current LSM version: ``_version_`` if readable, else the highest ``manifest_<N>`` (Java's fallback); None if none."""
    try:
        text = storage.read(f"{history_dir}/{VERSION_FILE}")[:32].decode("utf-8", "replace").strip()
        if text.isascii() and text.isdigit():
            return int(text)
    except FileNotFoundError:
        pass
    versions = [int(m.group(1)) for info in storage.list(history_dir)
                if (m := _MANIFEST_RE.match(info.path.rsplit("/", 1)[-1]))]
    return max(versions) if versions else None


def read_lsm_manifest(storage: Storage, config: TableConfig) -> LsmManifest | None:
    """The current manifest of a layout-2 table's LSM history; None when nothing was archived yet."""
    history = config.history_dir
    version = lsm_version(storage, history)
    if version is None:
        return None
    rel = f"{history}/{MANIFEST_PREFIX}{version}"
    try:
        data = storage.read(rel)
    except FileNotFoundError:
        raise InvalidTable(f"{VERSION_FILE} names version {version}, but {MANIFEST_PREFIX}{version} does not exist",
                           path=storage.uri(rel), rule="HUDI-TIMELINE-022") from None
    return parse_lsm_manifest(data, version, path=storage.uri(rel))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def parse_lsm_parquet(data: bytes, *, path: str | None = None) -> tuple[ArchivedInstant, ...]:
    """The rows of one LSM history parquet file (HUDI-TIMELINE-023)."""
    import pyarrow as pa

    from reference_impl.parquet_io import open_parquet, read_parquet

    try:
        pf = open_parquet(data)
        names = set(pf.schema_arrow.names)
        missing = [c for c in ("instantTime", "action") if c not in names]
        if missing:
            raise InvalidTable(f"LSM history file lacks column(s) {', '.join(missing)}", path=path, rule="HUDI-TIMELINE-023")
        table = read_parquet(pf, [c for c in LSM_COLUMNS if c in names])
    except (pa.ArrowException, OSError) as exc:
        raise InvalidTable(f"LSM history file is not readable Parquet: {exc}", path=path, rule="HUDI-TIMELINE-023") from None
    out = []
    for row in table.to_pylist():
        requested, action = _text(row.get("instantTime")), _text(row.get("action"))
        if requested is None or action is None:
            raise InvalidTable("LSM history row without instantTime or action", path=path, rule="HUDI-TIMELINE-023")
        check_instant_time(requested, "archived instant time", path=path)
        completion = _text(row.get("completionTime"))
        if completion is not None:
            check_instant_time(completion, "archived completion time", path=path)
        meta, plan = row.get("metadata"), row.get("plan")
        version = row.get("version")
        out.append(ArchivedInstant(requested_time=requested, completion_time=completion, action=action,
                                   metadata=meta if isinstance(meta, bytes) else None,
                                   plan=plan if isinstance(plan, bytes) else None,
                                   version=version if isinstance(version, int) else None))
    return tuple(out)


def read_lsm_timeline(storage: Storage, config: TableConfig) -> tuple[ArchivedInstant, ...]:
    """Every archived instant of a layout-2 table, by requested time; () when nothing was archived."""
    if config.timeline_layout_version < 2:
        raise ValueError("the LSM history exists only in layout 2 (table version >= 8)")
    manifest = read_lsm_manifest(storage, config)
    if manifest is None:
        return ()
    rows: list[ArchivedInstant] = []
    for f in manifest.files:
        rel = f"{config.history_dir}/{f.file_name}"
        try:
            data = storage.read(rel)
        except FileNotFoundError:
            raise InvalidTable(f"LSM manifest {manifest.version} lists {f.file_name}, which does not exist",
                               path=storage.uri(rel), rule="HUDI-TIMELINE-022") from None
        if len(data) != f.file_len:
            raise InvalidTable(f"{f.file_name} is {len(data):,} bytes, the manifest says {f.file_len:,}",
                               path=storage.uri(rel), rule="HUDI-TIMELINE-022")
        for row in parse_lsm_parquet(data, path=storage.uri(rel)):
            if not f.min_time <= row.requested_time <= f.max_time:
                raise InvalidTable(f"{f.file_name} holds instant {row.requested_time}, outside its name's range",
                                   path=storage.uri(rel), rule="HUDI-TIMELINE-022")
            rows.append(row)
    rows.sort(key=lambda r: (r.requested_time, r.action))
    return tuple(rows)


__all__ = ["Instant", "Timeline", "ArchivedInstant", "ArchiveLogFile", "LsmFile", "LsmManifest", "ACTIONS", "STATES",
           "COMPLETES_AS", "check_instant_time", "parse_instant_time", "instant_zone", "format_instant_time", "looks_like_instant",
           "parse_instant_file", "instant_file_name", "build_timeline", "load_active_timeline", "transition_violations",
           "list_archive_v1", "read_archive_v1", "ArchivedEntryV1", "parse_lsm_file_name", "parse_lsm_manifest", "lsm_version",
           "read_lsm_manifest", "parse_lsm_parquet", "read_lsm_timeline"]
