"""File groups and file slices (spec: File Layout Hierarchy, File Slicing, Reader Expectations; Java
AbstractTableFileSystemView, HoodieFileGroup, FileSlice, CompletionTimeQueryViewV1/V2; hudi-rs file_group, table/fs_view).

The file system view of a table, as a reader builds it without the metadata table:

* Partitions are the directories holding a ``.hoodie_partition_metadata`` file (any depth: a partition value
  holding ``/`` without URL encoding spreads over several levels); a non-partitioned table has it at the root.
* In each partition, base files (``<fileId>_<token>_<instant>.<ext>``, the table's base format) and log files
  (``.<fileId>_<instant>.log.<n>_<token>``; CDC logs are not data) group by file id (HUDI-FILE-001).
* Which instants count: completed write instants of the active timeline; before the active timeline starts,
  the archived timeline (LSM history, v8+) and, as Java's ``containsOrBeforeTimelineStarts`` does, any older
  instant not named by a rollback. Files of requested, inflight, failed and rolled-back instants never count
  (HUDI-TIMELINE-019/020, HUDI-FILE-010/015). v6 has no completion times: the requested time stands in
  (``CompletionTimeQueryViewV1``, HUDI-TIMELINE-014).
* Slices (HUDI-FILE-003), built from the current state of the timeline as Java builds them: a slice per
  committed base file's instant, then a (base-less) slice per pending compaction of the group, then the
  logs in Java's log order (name instant, version, write token):

  - table version <= 7: a log joins the slice keyed by the instant in its name (the base instant, HUDI-FILE-012);
  - version >= 8: the name carries the delta commit's requested time; the log joins the slice with the
    greatest key at or before that delta commit's *completion* time, or, when there is none (or the group
    has no slice yet), a new slice keyed by its own instant (``HoodieFileGroup.getBaseInstantTime``,
    HUDI-FILE-011). A log whose delta commit has not completed joins nothing.

* A read point: the latest state, a requested time (time travel: completed instants requested at or before
  it) or, in v8+, a completion time (instants completed at or before it). Per file group not replaced at the
  read point (a visible replacecommit's ``partitionToReplaceFileIds``, HUDI-COMMIT-004) the reader takes the
  latest slice whose key is at or before the read point and is either visible or a compaction still pending
  there; its base file only if its instant is visible, its logs only if (v8+) their delta commit is
  (HUDI-FILE-013). When that slice is a pending compaction's, it is merged with the slice before it: the
  older base file and the logs of both (``fetchMergedFileSlice``, HUDI-FILE-014). The read-optimized view
  takes the latest visible base file of each group, never one of a pending compaction (HUDI-TABLE-004).
* Cleaning deletes old slices' files; they are simply absent from the listing and never needed for the
  latest state. A time-travel read whose slice has lost its files reads what remains (Java does the same).
"""

from __future__ import annotations

from bisect import bisect_right, insort
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Callable, Iterable, Mapping, Sequence

from reference_impl.common.gcpause import gc_paused
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi import naming as N
from reference_impl.hudi import properties as P
from reference_impl.hudi import timeline as T
from reference_impl.storage import FileInfo, Storage

META_DIR = ".hoodie"


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(frozen=True, slots=True, kw_only=True)
class BaseFile:
    """A base file: its root-relative path, partition and parsed name."""

    path: str
    partition: str
    name: N.BaseFileName
    size: int = 0

    @property
    def instant(self) -> str:
        return self.name.instant


@dataclass(frozen=True, slots=True, kw_only=True)
class LogFile:
    """A log file: its root-relative path, partition, parsed name and its delta commit's completion time (v8+)."""

    path: str
    partition: str
    name: N.LogFileName
    size: int = 0
    completion_time: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileSlice:
    """At most one base file and the ordered log files written on top of it (HUDI-FILE-003)."""

    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()

    @property
    def is_empty(self) -> bool:
        return self.base_file is None and not self.log_files


@dataclass(frozen=True, slots=True, kw_only=True)
class FileGroup:
    """The slices of one file id in one partition, oldest first."""

    partition: str
    file_id: str
    slices: tuple[FileSlice, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadPoint:
    """Which instants a read sees: all completed (both None), those requested at or before ``as_of``, or (v8+)
    those completed at or before ``as_of_completion``."""

    as_of: str | None = None
    as_of_completion: str | None = None


LATEST = ReadPoint()


# ---------------------------------------------------------------------------------------------
# Instants: what is committed, when it completed, which compactions are pending


@dataclass(slots=True, kw_only=True)
class InstantIndex:
    """Completion times of write instants, compactions and rollbacks of one table (current state)."""

    storage: Storage
    config: P.TableConfig
    timeline: T.Timeline
    completion: dict[str, str] = field(default_factory=dict)  # requested -> completion (active completed writes)
    pending: set[str] = field(default_factory=set)  # requested times of pending instants (any action)
    compactions: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)  # instant -> (partition, fileId)
    rolled_back: set[str] = field(default_factory=set)
    replaced: dict[tuple[str, str], str] = field(default_factory=dict)  # (partition, fileId) -> replace instant
    first_active: str | None = None
    _archived: dict[str, str] | None = None

    @classmethod
    def load(cls, storage: Storage, config: P.TableConfig, timeline: T.Timeline) -> "InstantIndex":
        """Index the active timeline (rollback and replace metadata, compaction plans read once)."""
        idx = cls(storage=storage, config=config, timeline=timeline)
        # Java's containsOrBeforeTimelineStarts looks at the write timeline (completed writes and pending
        # compactions): an instant older than its first one was archived, and counts as committed.
        starts = [i.requested_time for i in timeline.instants if i.action in T.WRITE_ACTIONS
                  and (i.is_completed or i.action in (T.COMPACTION, T.LOG_COMPACTION))]
        idx.first_active = min(starts) if starts else None
        for inst in timeline.instants:
            if not inst.is_completed:
                idx.pending.add(inst.requested_time)
            elif inst.action in T.WRITE_ACTIONS:
                idx.completion[inst.requested_time] = inst.completion_time or inst.requested_time
            if inst.is_completed and inst.action == T.ROLLBACK:
                meta = CM.read_instant_metadata(storage, timeline, inst)
                if isinstance(meta, CM.RollbackMetadata):
                    idx.rolled_back.update(meta.rolled_back)
        for inst in timeline.instants:
            if inst.is_completed and inst.action == T.REPLACE_COMMIT and inst.requested_time not in idx.rolled_back:
                meta = CM.read_instant_metadata(storage, timeline, inst)
                if isinstance(meta, CM.CommitMetadata):
                    for key in meta.replaced_file_ids():
                        prev = idx.replaced.get(key)
                        # Two replacements of one group (concurrent insert_overwrite): the later instant counts.
                        if prev is None or prev < inst.requested_time:
                            idx.replaced[key] = inst.requested_time
            compaction = _compaction_plan(storage, timeline, inst)
            if compaction is not None:
                idx.compactions[inst.requested_time] = compaction
        return idx

    def _archive(self) -> dict[str, str]:
        if self._archived is None:
            self._archived = {}
            if self.config.timeline_layout_version >= 2:
                for row in T.read_lsm_timeline(self.storage, self.config):
                    if row.action in T.WRITE_ACTIONS:
                        self._archived[row.requested_time] = row.completion_time or row.requested_time
        return self._archived

    def completion_time(self, instant: str) -> str | None:
        """When the write requested at ``instant`` completed; None while it is pending, failed or rolled back."""
        done = self.completion.get(instant)
        if done is not None:
            return done
        if instant in self.pending or instant in self.rolled_back:
            return None
        if self.first_active is not None and instant >= self.first_active:
            return None  # on the active timeline's span but not completed there: never committed
        if instant in T.RESERVED_INSTANTS:
            return instant
        # Older than the active timeline: archived (or cleaned away from the archive too).
        return self._archive().get(instant, instant)

    def is_compaction(self, instant: str) -> bool:
        return instant in self.compactions


def _compaction_plan(storage: Storage, timeline: T.Timeline, inst: T.Instant) -> frozenset[tuple[str, str]] | None:
    """The file groups a compaction (pending, or completed as ``commit``) works on; None for other instants."""
    files = timeline.files_of(inst.requested_time)
    requested = [f for f in files if f.action == T.COMPACTION and f.state == T.REQUESTED]
    if not requested and not any(f.action == T.COMPACTION for f in files):
        return None
    if not requested:
        return frozenset()
    plan = CM.read_pending(storage, timeline, requested[0])
    ops = (plan.record or {}).get("operations") or []
    out = set()
    for op in ops:
        if isinstance(op, Mapping) and isinstance(op.get("fileId"), str):
            out.add((op.get("partitionPath") or "", op["fileId"]))
    return frozenset(out)


# ---------------------------------------------------------------------------------------------
# Listing


def list_partitions(listing: Sequence[FileInfo]) -> tuple[str, ...]:
    """Relative paths of the partitions: directories holding a partition metafile, outside ``.hoodie``."""
    out = set()
    metafiles = N.PARTITION_METAFILES
    for info in listing:
        directory, _, name = info.path.rpartition("/")
        if name in metafiles and not info.path.startswith(META_DIR + "/"):
            out.add(directory)
    return tuple(sorted(out))


def _files_by_partition(listing: Sequence[FileInfo], partitions: Iterable[str], base_format: str,
                        completion: Callable[[str], str | None] | None = None
                        ) -> dict[str, tuple[list[BaseFile], list[LogFile]]]:
    """The base and log files of each partition; ``completion`` (v8+) stamps each log with its delta commit's
    completion time, so that slicing need not make every log a second time."""
    out: dict[str, tuple[list[BaseFile], list[LogFile]]] = {p: ([], []) for p in partitions}
    suffix = "." + base_format.lower()
    metafiles = N.PARTITION_METAFILES
    for info in listing:
        path = info.path
        directory, _, name = path.rpartition("/")
        files = out.get(directory)
        if files is None or name.endswith(".crc"):
            continue
        if name.startswith(N.LOG_FILE_PREFIX):
            log = N.listed_log_file_name(name)
            if log is not None and log.extension == N.LOG_EXTENSION and not log.is_cdc:
                done = completion(log.instant) if completion is not None else None
                files[1].append(LogFile(path=path, partition=directory, name=log, size=info.size, completion_time=done))
            continue
        if not name.endswith(suffix) or name in metafiles:
            continue
        try:
            base = N.parse_base_file_name(name)
        except (InvalidTable, Unsupported):
            continue  # a stray file beside the table's files is not one of them
        files[0].append(BaseFile(path=path, partition=directory, name=base, size=info.size))
    return out


_path = attrgetter("path")


def _log_order(log: LogFile) -> tuple:
    # HoodieLogFile.getLogFileComparator: the name's instant, then version, then write token.
    return N.log_sort_key(log.name)


def _completion_order(log: LogFile) -> tuple:
    # v8+ within a slice: completion time first, then Java's log order (HUDI-FILE-011)
    return N.log_sort_key(log.name, log.completion_time)


def build_file_groups(index: InstantIndex, partition: str, bases: Sequence[BaseFile],
                      logs: Sequence[LogFile]) -> list[FileGroup]:
    """The file groups of one partition, slices built as Java builds them (module docstring)."""
    v8 = index.config.version >= 8
    completion_time = index.completion_time
    # grouped once by file id (and pending compactions by group), so a partition costs its files, not files x groups
    bases_of: dict[str, list[BaseFile]] = {}
    for b in bases:
        bases_of.setdefault(b.name.file_id, []).append(b)
    logs_of: dict[str, list[LogFile]] = {}
    for lg in logs:
        logs_of.setdefault(lg.name.file_id, []).append(lg)
    pending_of: dict[str, list[str]] = {}
    for instant, fgs in index.compactions.items():
        if completion_time(instant) is None:
            for part, fid in fgs:
                if part == partition:
                    pending_of.setdefault(fid, []).append(instant)
    groups = []
    for fid in sorted(bases_of.keys() | logs_of.keys()):
        slices: dict[str, list] = {}  # base instant -> [base file or None, its logs]
        group_bases = bases_of.get(fid, ())
        for b in sorted(group_bases, key=_path) if len(group_bases) > 1 else group_bases:
            instant = b.name.instant
            committed = completion_time(instant) is not None
            if not committed and not index.is_compaction(instant):
                continue  # written by an instant that is not (yet) committed: HUDI-FILE-010
            slot = slices.setdefault(instant, [None, []])
            if committed:
                slot[0] = b
        for instant in pending_of.get(fid, ()):
            slices.setdefault(instant, [None, []])
        group_logs = logs_of.get(fid, ())
        if len(group_logs) > 1:
            group_logs = sorted(group_logs, key=_log_order)
        if v8:
            keys = sorted(slices)
            for lg in group_logs:
                done = completion_time(lg.name.instant)
                if done is None:
                    continue  # its delta commit is pending, failed or rolled back: HUDI-FILE-010
                if lg.completion_time != done:
                    lg = LogFile(path=lg.path, partition=lg.partition, name=lg.name, size=lg.size, completion_time=done)
                at = bisect_right(keys, done)  # the greatest slice key at or before the completion time
                if at:
                    key = keys[at - 1]
                else:
                    key = lg.name.instant
                    if key not in slices:
                        insort(keys, key)
                        slices[key] = [None, []]
                slices[key][1].append(lg)
        else:
            for lg in group_logs:
                slices.setdefault(lg.name.instant, [None, []])[1].append(lg)
        built = []
        for key in sorted(slices):
            base, logs_in = slices[key]
            if v8 and len(logs_in) > 1:  # within a slice, logs apply in completion order (HUDI-FILE-011)
                logs_in.sort(key=_completion_order)
            built.append(FileSlice(partition=partition, file_id=fid, base_instant=key, base_file=base,
                                   log_files=tuple(logs_in)))
        groups.append(FileGroup(partition=partition, file_id=fid, slices=tuple(built)))
    return groups


# ---------------------------------------------------------------------------------------------
# The view


@dataclass(frozen=True, slots=True, kw_only=True)
class FileSystemView:
    """The partitions and file groups of a table, and what a read at ``point`` sees of them."""

    config: P.TableConfig
    timeline: T.Timeline
    index: InstantIndex = field(hash=False)
    point: ReadPoint
    partitions: tuple[str, ...]
    file_groups: tuple[FileGroup, ...]

    # -- visibility --------------------------------------------------------------------------

    def visible(self, instant: str) -> bool:
        """Whether a read at this view's point sees the write requested at ``instant``."""
        done = self.index.completion_time(instant)
        if done is None:
            return False
        if self.point.as_of is not None and instant > self.point.as_of:
            return False
        if self.point.as_of_completion is not None and done > self.point.as_of_completion:
            return False
        return True

    def pending_compaction(self, instant: str) -> bool:
        """Whether ``instant`` is a compaction requested before the read point but not visible at it."""
        if not self.index.is_compaction(instant) or self.visible(instant) or instant in self.index.rolled_back:
            return False
        bound = self.point.as_of or self.point.as_of_completion
        return bound is None or instant <= bound

    def is_replaced(self, group: FileGroup) -> bool:
        """Whether a replacecommit visible at the read point retired ``group`` (HUDI-COMMIT-004)."""
        by = self.index.replaced.get((group.partition, group.file_id))
        return by is not None and self.visible(by)

    def visible_groups(self) -> list[FileGroup]:
        """File groups not replaced at the read point."""
        if not self.index.replaced:
            return list(self.file_groups)
        return [g for g in self.file_groups if not self.is_replaced(g)]

    # -- slices ------------------------------------------------------------------------------

    def _committed_slices(self, group: FileGroup) -> list[FileSlice]:
        bound = self.point.as_of
        return [s for s in group.slices
                if (bound is None or s.base_instant <= bound)
                and (self.visible(s.base_instant) or self.pending_compaction(s.base_instant))]

    def _filtered(self, s: FileSlice) -> FileSlice:
        base = s.base_file if s.base_file is not None and self.visible(s.base_file.instant) else None
        logs = s.log_files
        if self.config.version >= 8:
            logs = tuple(lg for lg in logs if self.visible(lg.name.instant))
        if base is s.base_file and len(logs) == len(s.log_files):
            return s  # all of it is visible (the latest state): the slice as built
        return FileSlice(partition=s.partition, file_id=s.file_id, base_instant=s.base_instant, base_file=base,
                         log_files=logs)

    def latest_slice(self, group: FileGroup) -> FileSlice | None:
        """The slice a snapshot read merges for ``group``: latest committed, merged across a pending compaction."""
        committed = self._committed_slices(group)
        if not committed:
            return None
        latest = self._filtered(committed[-1])
        if self.pending_compaction(latest.base_instant) and len(committed) > 1:
            prev = self._filtered(committed[-2])
            latest = FileSlice(partition=latest.partition, file_id=latest.file_id, base_instant=prev.base_instant,
                               base_file=prev.base_file, log_files=prev.log_files + latest.log_files)
        return None if latest.is_empty else latest

    def latest_slices(self) -> list[FileSlice]:
        """Per visible file group, its merged latest slice (snapshot and time-travel reads)."""
        out = []
        with gc_paused():  # a merged slice per group, beside every group of the view
            for g in self.visible_groups():
                s = self.latest_slice(g)
                if s is not None:
                    out.append(s)
        return out

    def latest_base_files(self) -> list[BaseFile]:
        """Per visible file group, its latest visible base file (read-optimized reads, HUDI-TABLE-004)."""
        out = []
        for g in self.visible_groups():
            bases = [s.base_file for s in g.slices if s.base_file is not None and self.visible(s.base_file.instant)]
            if bases:
                out.append(bases[-1])
        return out


def build_view(storage: Storage, config: P.TableConfig | None = None, timeline: T.Timeline | None = None, *,
               point: ReadPoint = LATEST, listing: Sequence[FileInfo] | None = None) -> FileSystemView:
    """The file system view of the table at ``storage``'s root, as seen at ``point`` (module docstring)."""
    config = config or P.read_table_config(storage)
    timeline = timeline or T.load_active_timeline(storage, config)
    if point.as_of is not None and point.as_of_completion is not None:
        raise InvalidTable("choose the read point by requested time or by completion time, not both")
    if point.as_of_completion is not None and config.version < 8:
        raise Unsupported("time travel by completion time needs table version 8 or later (v6 records none)",
                          feature="hudi-completion-time-travel", rule="HUDI-TIMELINE-014")
    for t in (point.as_of, point.as_of_completion):
        if t is not None:
            T.check_instant_time(t, "read instant")
    with gc_paused():  # an object per listed file, per slice, per group: none holds a cycle
        index = InstantIndex.load(storage, config, timeline)
        if listing is None:
            # nothing under .hoodie is a data file (list_partitions passes over it), and it can hold more files than
            # the data: the timeline (listed by itself above), the archive, the metadata table
            listing = storage.walk_pruned("", (META_DIR,))
        partitions = list_partitions(listing)
        groups: list[FileGroup] = []
        files = _files_by_partition(listing, partitions, config.base_file_format,
                                    index.completion_time if config.version >= 8 else None)
        del listing  # a FileInfo per file, not needed past here
        for partition, (bases, logs) in sorted(files.items()):
            groups.extend(build_file_groups(index, partition, bases, logs))
    return FileSystemView(config=config, timeline=timeline, index=index, point=point, partitions=partitions,
                          file_groups=tuple(groups))


__all__ = ["BaseFile", "LogFile", "FileSlice", "FileGroup", "ReadPoint", "LATEST", "InstantIndex", "FileSystemView",
           "list_partitions", "build_file_groups", "build_view"]
