"""The metadata table's ``files`` partition: what Hudi's metadata table says the data table's partitions and files
are (spec: Metadata; Java HoodieBackedTableMetadata, HoodieMetadataPayload, HoodieTableMetadataUtil; hudi-rs
``metadata/table``; rules HUDI-LAYOUT-011, HUDI-LAYOUT-016).

The metadata table lives at ``<base>/.hoodie/metadata`` and is itself a MERGE_ON_READ Hudi table of the same table
version (its own ``.hoodie/hoodie.properties`` with base format HFILE, record key ``key``, payload
``HoodieMetadataPayload``, meta fields off; its own timeline of delta commits and compactions). Its partitions
(``files``, ``column_stats``, ``partition_stats``, ``record_index``, ...) hold file groups like any MOR table's:
HFile base files (``files-0000-0_<token>_<instant>.hfile``) and log files whose data blocks are HFile data blocks
(an embedded HFile, ``hfile.py``) or Avro data blocks, plus delete blocks and rollback command blocks.

A reader trusts the metadata table only when it is there and the data table's ``hoodie.table.metadata.partitions``
lists the partition (HUDI-LAYOUT-011); it never needs it: the file listing is always the fallback.

The ``files`` partition holds Avro ``HoodieMetadataRecord``s, keyed (the HFile cell key; the ``key`` field itself is
blank in HFiles since meta fields are off) by a data partition's relative path (``.`` for a non-partitioned table)
or ``__all_partitions__``; ``type`` 1 is the list of partitions, 2 a partition's file list; ``filesystemMetadata``
maps a name to ``{size, isDeleted}``. Records merge as ``HoodieMetadataPayload`` merges them: the newer map's
entries override, a tombstone (``isDeleted``) removes the name, sizes take the larger of the two (files only
grow), and what is left marked deleted at the end is not listed. A delete block removes a key outright.

Which writes count: the metadata table is written *before* the data table's commit completes, so a metadata
delta commit may be complete while its data instant failed. As ``HoodieTableMetadataUtil.getValidInstantTimestamps``
decides, a block counts when its instant is completed on the data table's timeline (any action: commits, cleans,
rollbacks ...), or is an instant a completed data rollback rolled back (its metadata records are negated by the
rollback's own), or is the metadata table's own completed initialization (``00000000000000...``), compaction,
log compaction, rollback or restore. Instants older than the data table's active timeline count too (they were
archived; Java's set holds active instants only, but by then the metadata table has compacted them into a base
file). The block's delta commit must also have completed on the metadata table's own timeline, and which file
slice and base file count is decided there too (``fileslices``; the metadata table's archived LSM history is not
consulted, see ``_latest_files_slices``). Checked on metadata tables Spark wrote with Hudi 1.2.0 (versions 9 and 6)
and 0.15.0 (version 6), each also copied at the moment a data commit had failed after its metadata delta commit
completed: trusting the metadata timeline alone would list the failed write's file there; this reading agrees with
the listing in every one.

``listing_disagreements`` compares the result with the file listing: the data table's partitions (directories with
a partition metafile) and, in them, the base and log files of completed instants (``fileslices``; table version 6
log names carry the base instant, so a v6 log counts when one of its blocks was written by a completed instant).
"""

from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import fileslices as FS
from reference_impl.hudi import logfile as L
from reference_impl.hudi import properties as P
from reference_impl.hudi import timeline as T
from reference_impl.hudi.hfile import HFile
from reference_impl.storage import FileInfo, Storage

RULE = "HUDI-LAYOUT-016"
RULE_PARTITIONS = "HUDI-LAYOUT-011"
METADATA_DIR = ".hoodie/metadata"
FILES_PARTITION = "files"
ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."  # the key of a non-partitioned table's only partition
TYPE_PARTITION_LIST = 1  # HoodieMetadataPayload.METADATA_TYPE_PARTITION_LIST
TYPE_FILE_LIST = 2  # METADATA_TYPE_FILE_LIST


class PrefixStorage(Storage):
    """A read-only view of ``base`` rooted at ``prefix``: the metadata table as a table of its own."""

    def __init__(self, base: Storage, prefix: str) -> None:
        self.base = base
        self.prefix = prefix.strip("/")
        self.root = base.uri(self.prefix)

    def _full(self, path: str) -> str:
        return f"{self.prefix}/{path}" if path else self.prefix

    def _strip(self, infos: Iterable[FileInfo]) -> list[FileInfo]:
        cut = len(self.prefix) + 1
        return [FileInfo(path=i.path[cut:], size=i.size, modification_time=i.modification_time)
                for i in infos if i.path.startswith(self.prefix + "/")]

    def read(self, path: str) -> bytes:
        return self.base.read(self._full(path))

    def list(self, prefix: str) -> list[FileInfo]:
        return self._strip(self.base.list(self._full(prefix)))

    def walk(self, prefix: str = "") -> list[FileInfo]:
        return self._strip(self.base.walk(self._full(prefix)))

    def exists(self, path: str) -> bool:
        return self.base.exists(self._full(path))

    def _read_only(self, *_: Any) -> None:
        raise Unsupported("the metadata table is read here, never written", feature="hudi-metadata-write")

    put_if_absent = write_atomic = delete = _read_only


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataTable:
    """The metadata table opened as a Hudi table, with the data table's context."""

    storage: Storage  # rooted at .hoodie/metadata
    config: P.TableConfig
    timeline: T.Timeline
    data_config: P.TableConfig
    data_timeline: T.Timeline


def metadata_table_present(storage: Storage) -> bool:
    return storage.exists(f"{METADATA_DIR}/.hoodie/hoodie.properties")


def open_metadata_table(storage: Storage, config: P.TableConfig | None = None,
                        data_timeline: T.Timeline | None = None) -> MetadataTable | None:
    """The metadata table of the table at ``storage``, or None when it has none."""
    config = config or P.read_table_config(storage)
    if not metadata_table_present(storage):
        return None
    sub = PrefixStorage(storage, METADATA_DIR)
    mconfig = P.read_table_config(sub)
    if not mconfig.is_mor:
        raise InvalidTable(f"the metadata table is {mconfig.table_type}, not MERGE_ON_READ", path=METADATA_DIR,
                           rule=RULE)
    if mconfig.base_file_format != "HFILE":
        # Java's metadata table writes HFile base files only; another format would not be read by Hudi either
        raise InvalidTable(f"the metadata table's base file format is {mconfig.base_file_format}, not HFILE",
                           path=METADATA_DIR, rule=RULE)
    if mconfig.version != config.version:
        raise InvalidTable(f"the metadata table is at table version {mconfig.version}, its data table at "
                           f"{config.version}", path=METADATA_DIR, rule=RULE)
    return MetadataTable(storage=sub, config=mconfig, timeline=load_metadata_timeline(sub, mconfig),
                         data_config=config, data_timeline=data_timeline or T.load_active_timeline(storage, config))


_MILLIS_INIT = T.INIT_INSTANT + "000"  # "00000000000000000"


def load_metadata_timeline(storage: Storage, config: P.TableConfig) -> T.Timeline:
    """The metadata table's active timeline.

    Hudi 1.x initializes the metadata table's first partition at ``00000000000000000``, the init instant at
    millisecond precision (then ``...001``, ``...002`` for the next partitions). The timeline module refuses an
    all-zero 17-digit time, rightly for a data table; here it is read as the 14-digit init instant and given its
    own name back afterwards.
    """
    listing = storage.list(config.timeline_dir)
    names, mtimes = [], {}
    for info in listing:
        name = info.path.rsplit("/", 1)[-1]
        mtimes[name] = info.modification_time
        if name.startswith(_MILLIS_INIT) and name[len(_MILLIS_INIT):len(_MILLIS_INIT) + 1] in (".", "_"):
            name = T.INIT_INSTANT + name[len(_MILLIS_INIT):]
        names.append(name)
    if any(n.startswith(T.INIT_INSTANT + ".") or n.startswith(T.INIT_INSTANT + "_") for n in mtimes):
        # a real 14-digit init instant beside the 17-digit one would merge with it: take the timeline as it is
        return T.load_active_timeline(storage, config)
    tl = T.build_timeline(names, config.timeline_layout_version, directory=config.timeline_dir)

    def back(i: T.Instant) -> T.Instant:
        if i.requested_time != T.INIT_INSTANT:
            return i
        name = _MILLIS_INIT + (i.file_name or "")[len(T.INIT_INSTANT):]
        return dataclasses.replace(i, requested_time=_MILLIS_INIT, file_name=name)

    return dataclasses.replace(tl, files=tuple(back(i) for i in tl.files), instants=tuple(back(i) for i in tl.instants),
                               modification_times=MappingProxyType(mtimes))


def valid_instant(mdt: MetadataTable, data_index: FS.InstantIndex | None = None):
    """Whether a metadata block written at an instant counts (module docstring); a predicate.

    Two timelines decide: the metadata table's own (the block's delta commit must have completed there, as the log
    record reader over the metadata table requires) and the data table's (the write it records must have completed
    there, or be one of the metadata table's own instants).
    """
    data_completed = {i.requested_time for i in mdt.data_timeline.instants if i.is_completed}
    data_pending = {i.requested_time for i in mdt.data_timeline.instants if not i.is_completed}
    data_start = min((i.requested_time for i in mdt.data_timeline.instants), default=None)
    rolled_back = set(data_index.rolled_back) if data_index is not None else set()
    mdt_completed = {i.requested_time for i in mdt.timeline.instants if i.is_completed}
    mdt_pending = {i.requested_time for i in mdt.timeline.instants if not i.is_completed}
    mdt_start = min((i.requested_time for i in mdt.timeline.instants), default=None)
    own = set()
    for i in mdt.timeline.instants:
        if not i.is_completed:
            continue
        if i.requested_time.startswith(T.INIT_INSTANT):  # initialization of a metadata partition
            own.add(i.requested_time)
        elif i.action in (T.COMMIT, T.COMPACTION, T.LOG_COMPACTION, T.ROLLBACK, T.RESTORE):
            own.add(i.requested_time)

    def ok(instant: str) -> bool:
        if instant not in mdt_completed and (instant in mdt_pending or mdt_start is None or instant >= mdt_start):
            return False  # not (yet) written to the metadata table, or failed there
        if instant in data_completed or instant in own or instant in rolled_back:
            return True
        if instant in data_pending:
            return False
        return data_start is not None and instant < data_start  # archived from the data table's active timeline

    return ok


# ---------------------------------------------------------------------------------------------
# Records


def _schema(text: str | None, where: str, path: str | None):
    if text is None:
        raise InvalidTable(f"{where} has no Avro schema for its values", path=path, rule=RULE)
    return L._parse_schema(text, where, path)  # the log reader's bounded schema parsing


def _decode_value(value: bytes, schema: Any, where: str, path: str | None) -> dict:
    import fastavro

    buf = io.BytesIO(value)
    try:
        record = fastavro.schemaless_reader(buf, schema, None)
    except Exception as exc:  # EOFError, ValueError, ... from bytes that do not match the schema
        raise InvalidTable(f"{where}: a value does not decode by its schema: {exc!r}", path=path, rule=RULE) from None
    if buf.tell() != len(value) or not isinstance(record, dict):
        raise InvalidTable(f"{where}: a value decodes in {buf.tell()} of its {len(value)} bytes", path=path,
                           rule=RULE)
    return record


def hfile_records(data: bytes, schema_json: str | None = None, *, where: str = "HFile",
                  path: str | None = None) -> Iterator[tuple[str, dict]]:
    """(key, HoodieMetadataRecord) of every cell of an HFile; the schema is the file's own unless given."""
    hf = HFile(data, path=path)
    schema = _schema(schema_json if schema_json is not None else hf.schema, where, path)
    for cell in hf:
        try:
            key = cell.key.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidTable(f"{where}: key {cell.key[:60]!r} is not UTF-8", path=path, rule=RULE) from None
        yield key, _decode_value(cell.value, schema, where, path)


def _block_records(block: L.LogBlock, path: str) -> Iterator[tuple[str, dict | None]]:
    """(key, record) of a data block, (key, None) of a delete block's keys."""
    where = f"{block.block_type.name} block at offset {block.offset}"
    if block.block_type is L.BlockType.HFILE_DATA:
        yield from hfile_records(block.content, block.schema, where=where, path=path)
    elif block.block_type is L.BlockType.AVRO_DATA:
        for record in L.decode_avro_content(block.content, block.schema or "", where=where, path=path):
            key = record.get("key")
            if not isinstance(key, str):
                raise InvalidTable(f"{where}: a record has no string key", path=path, rule=RULE)
            yield key, record
    elif block.block_type is L.BlockType.DELETE:
        for rec in L.decode_delete_content(block.content, where=where, path=path):
            if rec.record_key is None:
                raise InvalidTable(f"{where}: a delete names no record key", path=path, rule=RULE)
            yield rec.record_key, None
    else:
        raise Unsupported(f"{where}: a metadata table log holds {block.block_type.name} blocks, which Hudi's "
                          f"metadata writer never makes", feature="hudi-metadata-block-type", path=path)


def _file_map(record: Mapping[str, Any], key: str, where: str, path: str | None) -> dict[str, tuple[int, bool]]:
    kind = record.get("type")
    want = TYPE_PARTITION_LIST if key == ALL_PARTITIONS_KEY else TYPE_FILE_LIST
    if kind != want:
        raise InvalidTable(f"{where}: record {key!r} of the files partition has type {kind!r}, not {want}",
                           path=path, rule=RULE)
    raw = record.get("filesystemMetadata")
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InvalidTable(f"{where}: record {key!r} has a filesystemMetadata that is not a map", path=path, rule=RULE)
    out = {}
    for name, info in raw.items():
        size = info.get("size") if isinstance(info, Mapping) else None
        deleted = info.get("isDeleted") if isinstance(info, Mapping) else None
        if not isinstance(size, int) or isinstance(size, bool) or not isinstance(deleted, bool):
            raise InvalidTable(f"{where}: entry {name!r} of record {key!r} is not {{size, isDeleted}}", path=path,
                               rule=RULE)
        out[name] = (size, deleted)
    return out


def merge_file_maps(older: Mapping[str, tuple[int, bool]], newer: Mapping[str, tuple[int, bool]]
                    ) -> dict[str, tuple[int, bool]]:
    """``HoodieMetadataPayload.combineFileSystemMetadata``: newer entries win, a tombstone removes a listed name
    (and stays when the name was not listed, for a later merge with the base file), sizes take the maximum."""
    out = dict(older)
    for name, (size, deleted) in newer.items():
        prev = out.get(name)
        if prev is None:
            out[name] = (size, deleted)
        elif deleted:
            if prev[1]:
                out[name] = (size, deleted)  # deleted twice: Java warns and keeps the tombstone
            else:
                del out[name]
        else:
            out[name] = (max(size, prev[0]), False)
    return out


# ---------------------------------------------------------------------------------------------
# The files partition


def _latest_files_slices(mdt: MetadataTable) -> list[FS.FileSlice]:
    # build_view's steps, with one difference: the metadata table's archived timeline (LSM history, v8+) is not
    # consulted. Its file names start at 00000000000000000, which the timeline module refuses for data tables, and
    # an archived metadata instant's files are compacted and cleaned by then; an instant older than the active
    # timeline counts as completed at its requested time (Java's containsOrBeforeTimelineStarts).
    index = FS.InstantIndex.load(mdt.storage, mdt.config, mdt.timeline)
    index._archived = {}
    # only the files partition is listed: column_stats, record_index ... can be large and are not read here
    listing = mdt.storage.walk(FILES_PARTITION)
    partitions = tuple(p for p in FS.list_partitions(listing) if p == FILES_PARTITION)
    groups: list[FS.FileGroup] = []
    for partition, (bases, logs) in sorted(FS._files_by_partition(listing, partitions,
                                                                  mdt.config.base_file_format).items()):
        groups.extend(FS.build_file_groups(index, partition, bases, logs))
    view = FS.FileSystemView(config=mdt.config, timeline=mdt.timeline, index=index, point=FS.LATEST,
                             partitions=partitions, file_groups=tuple(groups))
    return view.latest_slices()


def read_files_records(mdt: MetadataTable, data_index: FS.InstantIndex | None = None
                       ) -> dict[str, dict[str, tuple[int, bool]]]:
    """Merged ``files`` partition: key -> name -> (size, isDeleted), tombstones kept."""
    counts = valid_instant(mdt, data_index)
    merged: dict[str, dict[str, tuple[int, bool]]] = {}
    for s in _latest_files_slices(mdt):
        if s.base_file is not None:
            path = s.base_file.path
            if not s.base_file.name.extension == "hfile":
                raise InvalidTable(f"metadata base file {path} is not an HFile", path=path, rule=RULE)
            for key, record in hfile_records(mdt.storage.read(path), where=f"base file {path}", path=path):
                merged[key] = merge_file_maps(merged.get(key, {}), _file_map(record, key, "base file", path))
        blocks: list[tuple[L.LogBlock, str]] = []
        for lg in s.log_files:
            for b in L.load_log_file(mdt.storage, lg.path, decode=False):
                blocks.append((b, lg.path))
        # rollbacks and log compaction act across the slice's log files, in log order
        kept = {id(b) for b in L.valid_blocks([b for b, _ in blocks], committed=counts)}
        for b, path in blocks:
            if id(b) not in kept:
                continue
            for key, record in _block_records(b, path):
                if record is None:
                    merged.pop(key, None)
                else:
                    merged[key] = merge_file_maps(merged.get(key, {}),
                                                  _file_map(record, key, f"log {path}", path))
    return merged


def _partition_name(key: str) -> str:
    return "" if key == NON_PARTITIONED_NAME else key


def read_files_partition(storage: Storage, config: P.TableConfig | None = None
                         ) -> dict[str, dict[str, int]] | None:
    """Partition -> file name -> size, as the metadata table's ``files`` partition says at its latest completed
    instant (counting only writes the data table committed); None when there is no metadata table or
    ``hoodie.table.metadata.partitions`` does not list ``files`` (HUDI-LAYOUT-011). A non-partitioned table's
    partition is ``""``, as in the file system view."""
    config = config or P.read_table_config(storage)
    if FILES_PARTITION not in config.metadata_partitions:
        return None
    data_timeline = T.load_active_timeline(storage, config)
    mdt = open_metadata_table(storage, config, data_timeline)
    if mdt is None:
        return None
    data_index = FS.InstantIndex.load(storage, config, data_timeline)
    merged = read_files_records(mdt, data_index)
    listed = {name for name, (_, deleted) in merged.get(ALL_PARTITIONS_KEY, {}).items() if not deleted}
    out: dict[str, dict[str, int]] = {}
    for key in sorted(listed):
        files = merged.get(key, {})
        out[_partition_name(key)] = {name: size for name, (size, deleted) in sorted(files.items()) if not deleted}
    return out


# ---------------------------------------------------------------------------------------------
# Agreement with the listing


def _log_committed(storage: Storage, path: str, index: FS.InstantIndex, completed: set[str]) -> bool:
    """v6: whether any block of a log file was written by a committed instant (the name carries the base
    instant, not the writer's); a rollback's command block counts when the rollback completed."""
    for b in L.load_log_file(storage, path, decode=False):
        if b.instant_time is None or b.is_corrupt:
            continue
        if b.block_type is L.BlockType.COMMAND:
            if b.instant_time in completed:
                return True
        elif index.completion_time(b.instant_time) is not None:
            return True
    return False


def listed_files(storage: Storage, config: P.TableConfig | None = None) -> dict[str, dict[str, int]]:
    """Partition -> file name -> size of the data files the listing shows for completed instants."""
    config = config or P.read_table_config(storage)
    view = FS.build_view(storage, config)
    completed = {i.requested_time for i in view.timeline.instants if i.is_completed}
    out: dict[str, dict[str, int]] = {p: {} for p in view.partitions}
    for g in view.file_groups:
        for s in g.slices:
            if s.base_file is not None and view.index.completion_time(s.base_file.instant) is not None:
                out.setdefault(g.partition, {})[s.base_file.path.rsplit("/", 1)[-1]] = s.base_file.size
            for lg in s.log_files:
                if config.version < 8 and not _log_committed(storage, lg.path, view.index, completed):
                    continue
                out.setdefault(g.partition, {})[lg.path.rsplit("/", 1)[-1]] = lg.size
    return out


def listing_disagreements(storage: Storage) -> list[str]:
    """Where the metadata table's ``files`` partition and the file listing disagree (empty when they agree or
    there is nothing to compare): partitions one side has and the other lacks, files of completed instants
    missing from either side, sizes that differ."""
    config = P.read_table_config(storage)
    mdt = read_files_partition(storage, config)
    if mdt is None:
        return []
    listing = listed_files(storage, config)
    out = []

    def show(p: str) -> str:
        return repr(p) if p else "the table root (non-partitioned)"

    for p in sorted(set(mdt) - set(listing)):
        out.append(f"partition {show(p)} is in the metadata table but not in the listing")
    for p in sorted(set(listing) - set(mdt)):
        if listing[p]:
            out.append(f"partition {show(p)} is in the listing ({len(listing[p])} files) but not in the metadata table")
    for p in sorted(set(mdt) & set(listing)):
        have, said = listing[p], mdt[p]
        for name in sorted(set(said) - set(have)):
            out.append(f"{show(p)}: the metadata table lists {name} ({said[name]:,} bytes), the listing has no "
                       f"such file of a completed instant")
        for name in sorted(set(have) - set(said)):
            out.append(f"{show(p)}: the listing has {name} ({have[name]:,} bytes), the metadata table does not "
                       f"list it")
        for name in sorted(set(have) & set(said)):
            if have[name] != said[name]:
                out.append(f"{show(p)}: {name} is {have[name]:,} bytes, the metadata table says {said[name]:,}")
    return out


__all__ = ["METADATA_DIR", "FILES_PARTITION", "ALL_PARTITIONS_KEY", "PrefixStorage", "MetadataTable",
           "open_metadata_table", "metadata_table_present", "valid_instant", "hfile_records", "merge_file_maps",
           "read_files_records", "read_files_partition", "listed_files", "listing_disagreements"]
