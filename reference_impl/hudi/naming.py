"""File naming and partition paths (spec: File Layout Hierarchy, Base Files, Log Files; Java FSUtils, HoodieLogFile,
HoodieFileGroup, HoodiePartitionMetadata, PartitionPathEncodeUtils; hudi-rs file_group/{base_file,log_file}).

* Base file: ``<fileId>_<writeToken>_<instantTime>.<ext>`` with ext ``parquet``, ``orc``, ``hfile`` (metadata
  table) or ``lance`` (HUDI-FILE-004). Java splits the name on ``_``: the file id is everything before the first
  one, so a file id never contains ``_``. The instant is the requested time of the action that wrote the file.
* Log file: ``.<fileId>_<instant>.log.<version>_<writeToken>`` (HUDI-FILE-006). Java's pattern
  (``FSUtils.LOG_FILE_PATTERN``) also accepts names without the write token (before Hudi 0.10) and the ``archive``
  extension (v6 archived timeline, ``.commits_.archive.1_1-0-1``: an empty instant); CDC logs end in ``.cdc``
  (verified on Hudi 1.2.0 tables; the pattern, ``(.cdc)?``, takes any character before ``cdc``, and some notes
  say ``-cdc``). The version starts at 1 (HUDI-FILE-008). Verified: Hudi 1.2.0 writing a v6 table starts a new
  version for every write to a slice and keeps the first write's token (``log.2_0-20-25`` .. ``log.4_0-20-25``);
  0.15.0 gives each its own token, and puts a rollback command block in a log of its own with token ``1-0-1``.
* The log's instant is the slice's base instant in table versions up to 7: the log joins the slice keyed by it
  (HUDI-FILE-012). From version 8 it is the requested time of the delta commit that wrote the log; the log joins
  the slice with the greatest base instant at or before that delta commit's completion time (HUDI-FILE-007, 011).
* Write token: ``<taskPartitionId>-<stageId>-<taskAttemptId>``, decimal (HUDI-FILE-005).
* File id: ``<uuid>-<n>`` for data files (``FSUtils.createNewFileId``); the metadata table uses
  ``<partition>-<nnnn>-<n>`` (``files-0000-0``), so only "something, a dash, digits" is required.
* Partition path: per partition field the value, ``__HIVE_DEFAULT_PARTITION__`` for null or empty, escaped as Hive
  escapes path names when ``hoodie.datasource.write.partitionpath.urlencode`` is set, prefixed ``field=`` when
  ``hoodie.datasource.write.hive_style_partitioning`` is; segments joined by ``/`` (HUDI-LAYOUT-015). The empty
  string is the path of a non-partitioned table (HUDI-COMMIT-005).
* ``.hoodie_partition_metadata`` in every partition: a Java properties file with ``commitTime`` and
  ``partitionDepth``; with ``hoodie.partition.metafile.use.base.format`` it is ``.hoodie_partition_metadata.parquet``
  (or ``.orc``), a file of the base format carrying the two properties in its key/value metadata.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Mapping, Sequence

from reference_impl.errors import InvalidTable, Unsupported

LOG_FILE_PREFIX = "."
LOG_EXTENSION = "log"
ARCHIVE_EXTENSION = "archive"
CDC_SUFFIX = ".cdc"  # what Hudi 1.2.0 writes after the write token of a CDC log
BASE_FILE_EXTENSIONS = ("parquet", "orc", "hfile", "lance")
PARTITION_METAFILE = ".hoodie_partition_metadata"
PARTITION_METAFILE_FORMATS = ("parquet", "orc")
PARTITION_METAFILES = frozenset([PARTITION_METAFILE, *(f"{PARTITION_METAFILE}.{f}" for f in PARTITION_METAFILE_FORMATS)])
COMMIT_TIME_KEY = "commitTime"
PARTITION_DEPTH_KEY = "partitionDepth"
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
DEPRECATED_DEFAULT_PARTITION = "default"  # written for null values before Hudi 0.12; still read as null
NON_PARTITIONED = ""
MAX_NAME_LENGTH = 1024  # far above any name a writer makes

RULE_BASE = "HUDI-FILE-004"
RULE_TOKEN = "HUDI-FILE-005"
RULE_LOG = "HUDI-FILE-006"
RULE_LOG_VERSION = "HUDI-FILE-008"
RULE_FILE_ID = "HUDI-FILE-001"
RULE_PARTITION = "HUDI-LAYOUT-015"

_TOKEN = r"(\d+)-(\d+)-(\d+)"
# Instants: 17 digits (millis), 14 (seconds, legacy and the reserved 0000000000000x), more for the metadata
# table's suffixed compaction and clean instants. A base file always carries one.
_INSTANT = r"\d{14,}"
_INSTANT_RE = re.compile(_INSTANT)
_BASE_RE = re.compile(rf"([^_/]+)_({_TOKEN})_({_INSTANT})\.([A-Za-z0-9]+)\Z")
# FSUtils.LOG_FILE_PATTERN, anchored at both ends (Java uses find(), which ignores what follows).
_LOG_RE = re.compile(rf"\.(.+)_(.*)\.({LOG_EXTENSION}|{ARCHIVE_EXTENSION})\.(\d+)(?:_({_TOKEN})(.cdc)?)?\Z", re.S)
_FILE_ID_RE = re.compile(r"(.+)-(\d+)\Z", re.S)  # FSUtils.PREFIX_BY_FILE_ID_PATTERN
_UUID_FILE_ID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-\d+\Z")
_MAX_INT = (1 << 31) - 1
_MAX_LONG = (1 << 63) - 1


# ---------------------------------------------------------------------------------------------
# Write tokens and file ids


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteToken:
    """``FSUtils.makeWriteToken``: which task attempt wrote a file (retries differ in it)."""

    task_partition_id: int
    stage_id: int
    task_attempt_id: int

    def __str__(self) -> str:
        return f"{self.task_partition_id}-{self.stage_id}-{self.task_attempt_id}"


def _token(parts: Sequence[str], name: str) -> WriteToken:
    a, b, c = (int(p) for p in parts)
    if a > _MAX_INT or b > _MAX_INT or c > _MAX_LONG:
        raise InvalidTable(f"write token of {name!r} overflows Java's int-int-long", rule=RULE_TOKEN)
    return WriteToken(task_partition_id=a, stage_id=b, task_attempt_id=c)


@lru_cache(maxsize=4096)
def _shared_token(text: str) -> WriteToken | None:
    # Most files of a table share a handful of tokens: one (immutable) WriteToken per distinct token text spares a
    # listing of 30,000 files as many objects, and the garbage collector as many to pass over. None: an overflow.
    a, b, c = (int(p) for p in text.split("-"))
    if a > _MAX_INT or b > _MAX_INT or c > _MAX_LONG:
        return None
    return WriteToken(task_partition_id=a, stage_id=b, task_attempt_id=c)


def _name_token(text: str, name: str) -> WriteToken:
    """The write token of file ``name``, ``text`` having matched ``_TOKEN`` in it."""
    token = _shared_token(text)
    if token is None:
        raise InvalidTable(f"write token of {name!r} overflows Java's int-int-long", rule=RULE_TOKEN)
    return token


def parse_write_token(text: str) -> WriteToken:
    """The write token ``text`` spells (``1-0-1``); InvalidTable otherwise."""
    m = re.fullmatch(_TOKEN, text)
    if not m:
        raise InvalidTable(f"write token {text!r} is not <taskPartitionId>-<stageId>-<taskAttemptId>", rule=RULE_TOKEN)
    return _token(m.groups(), text)


def split_file_id(file_id: str) -> tuple[str, int]:
    """(prefix, index) of a file id ``<prefix>-<n>`` (``FSUtils.getFileIdPfxFromFileId``)."""
    m = _FILE_ID_RE.match(file_id)
    if not m:
        raise InvalidTable(f"file id {file_id!r} does not end in -<number>", rule=RULE_FILE_ID)
    return m.group(1), int(m.group(2))


def is_uuid_file_id(file_id: str) -> bool:
    """Whether ``file_id`` is the ``<uuid>-<n>`` a data-table writer makes (lowercase, as ``UUID.toString``)."""
    return bool(_UUID_FILE_ID_RE.match(file_id))


def format_file_id(prefix: str, index: int = 0) -> str:
    """``FSUtils.createNewFileId``: ``<prefix>-<index>``."""
    return f"{prefix}-{index}"


# ---------------------------------------------------------------------------------------------
# Base files


@dataclass(frozen=True, slots=True, kw_only=True)
class BaseFileName:
    """The parts of a base file name."""

    file_id: str
    write_token: WriteToken
    instant: str  # requested time of the commit (or compaction, clustering) that wrote it
    extension: str  # without the dot

    def __str__(self) -> str:
        return format_base_file_name(self.file_id, self.write_token, self.instant, self.extension)


def _check_name(name: str, what: str, rule: str) -> None:
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_LENGTH or "/" in name or "\x00" in name:
        raise InvalidTable(f"{what} {name!r:.80} is not a file name", rule=rule)


def parse_base_file_name(name: str) -> BaseFileName:
    """The parts of ``<fileId>_<writeToken>_<instant>.<ext>``; InvalidTable for any other name."""
    _check_name(name, "base file name", RULE_BASE)
    m = _BASE_RE.match(name)
    if not m:
        raise InvalidTable(f"base file name {name!r} is not <fileId>_<writeToken>_<instant>.<ext>", rule=RULE_BASE)
    file_id, token, _a, _b, _c, instant, ext = m.groups()
    if ext not in BASE_FILE_EXTENSIONS:
        raise Unsupported(f"base file {name!r} has extension .{ext}; known: {', '.join(BASE_FILE_EXTENSIONS)}",
                          feature=f"base-file-format:{ext}")
    return BaseFileName(file_id=file_id, write_token=_name_token(token, name), instant=instant, extension=ext)


def format_base_file_name(file_id: str, write_token: WriteToken | str, instant: str, extension: str = "parquet") -> str:
    """``FSUtils.makeBaseFileName``: ``<fileId>_<writeToken>_<instant>.<ext>``."""
    if "_" in file_id or not file_id:
        raise InvalidTable(f"file id {file_id!r} must be non-empty and free of '_' (Java splits names on it)",
                           rule=RULE_FILE_ID)
    return f"{file_id}_{write_token}_{instant}.{extension.lstrip('.')}"


# ---------------------------------------------------------------------------------------------
# Log files


@dataclass(frozen=True, slots=True, kw_only=True)
class LogFileName:
    """The parts of a log file name (``HoodieLogFile``)."""

    file_id: str
    instant: str  # v<=7: the slice's base instant; v>=8: the writing delta commit's requested time
    extension: str  # "log", or "archive" for the v6 archived timeline
    version: int
    write_token: WriteToken | None  # None in names written before Hudi 0.10
    cdc_suffix: str = ""  # ".cdc" for a CDC log (kept as written, to spell the name back)

    @property
    def is_cdc(self) -> bool:
        """Whether this log holds change data (CDC) blocks."""
        return bool(self.cdc_suffix)

    def __str__(self) -> str:
        return format_log_file_name(self.file_id, self.instant, self.version, self.write_token,
                                    extension=self.extension, cdc_suffix=self.cdc_suffix)


def is_log_file_name(name: str) -> bool:
    """Whether ``name`` is a log file's name (``FSUtils.isLogFile``, anchored)."""
    return isinstance(name, str) and len(name) <= MAX_NAME_LENGTH and bool(_LOG_RE.match(name))


def parse_log_file_name(name: str) -> LogFileName:
    """The parts of ``.<fileId>_<instant>.log.<version>[_<writeToken>][.cdc]``; InvalidTable for any other name."""
    _check_name(name, "log file name", RULE_LOG)
    log = listed_log_file_name(name)
    if log is None:
        raise InvalidTable(f"log file name {name!r} is not .<fileId>_<instant>.log.<version>_<writeToken>",
                           rule=RULE_LOG)
    return log


def listed_log_file_name(name: str) -> LogFileName | None:
    """``parse_log_file_name`` of a listed file's name when ``is_log_file_name`` holds, None when it does not: one
    match where a listing would take two. InvalidTable, as there, for a log name with a bad instant or version."""
    m = _LOG_RE.match(name) if len(name) <= MAX_NAME_LENGTH else None
    if m is None:
        return None
    _check_name(name, "log file name", RULE_LOG)
    file_id, instant, ext, version, token, _a, _b, _c, cdc = m.groups()
    if ext == LOG_EXTENSION and not _INSTANT_RE.fullmatch(instant):
        raise InvalidTable(f"log file name {name!r} carries {instant!r} where an instant time belongs", rule=RULE_LOG)
    v = int(version)
    if v < 1 or v > _MAX_INT:
        raise InvalidTable(f"log file {name!r} has version {v}; versions start at 1", rule=RULE_LOG_VERSION)
    return LogFileName(file_id=file_id, instant=instant, extension=ext, version=v,
                       write_token=_name_token(token, name) if token else None, cdc_suffix=cdc or "")


def format_log_file_name(file_id: str, instant: str, version: int = 1, write_token: WriteToken | str | None = None, *,
                         extension: str = LOG_EXTENSION, cdc: bool = False, cdc_suffix: str | None = None) -> str:
    """``FSUtils.makeLogFileName`` (+ the CDC suffix): ``.<fileId>_<instant>.log.<version>_<writeToken>``."""
    if version < 1:
        raise InvalidTable(f"log file version {version} is below 1", rule=RULE_LOG_VERSION)
    suffix = cdc_suffix if cdc_suffix is not None else (CDC_SUFFIX if cdc else "")
    if suffix and write_token is None:
        raise InvalidTable("a CDC log name needs a write token (the suffix follows it)", rule=RULE_LOG)
    token = "" if write_token is None else f"_{write_token}"
    return f"{LOG_FILE_PREFIX}{file_id}_{instant}.{extension}.{version}{token}{suffix}"


def log_sort_key(log: LogFileName, completion_time: str | None = None) -> tuple:
    """Order of logs within a slice: by completion time (v8+, when known), then instant, version and write token."""
    token = (log.write_token.task_partition_id, log.write_token.stage_id, log.write_token.task_attempt_id) \
        if log.write_token else (-1, -1, -1)
    return (completion_time or "", log.instant, log.version, token)


def slice_base_instant(log: LogFileName, table_version: int, base_instants: Iterable[str],
                       completion_time: Callable[[str], str | None] | None = None) -> str | None:
    """The base instant of the file slice a log joins, or None when its delta commit has not completed (v8+).

    Up to table version 7 the name carries the base instant itself (HUDI-FILE-012). From version 8 the name
    carries the delta commit's requested time: the log joins the slice whose base instant is the greatest at or
    before that commit's completion time, or starts its own slice (keyed by its instant) when none is
    (HUDI-FILE-011). ``completion_time`` maps a requested time to its completion time (None while pending).
    """
    if table_version <= 7:
        return log.instant
    if completion_time is None:
        raise InvalidTable("table version 8+ attaches logs by completion time; none was given", rule="HUDI-FILE-011")
    done = completion_time(log.instant)
    if done is None:
        return None
    candidates = [b for b in base_instants if b <= done]  # equal-length digit strings order as numbers
    return max(candidates) if candidates else log.instant


# ---------------------------------------------------------------------------------------------
# Partition paths (PartitionPathEncodeUtils, Hive's FileUtils.escapePathName)

_ESCAPED = frozenset(list(range(0x00, 0x20)) + [ord(c) for c in "\"#%'*/:=?\\\x7f{[]^"])


def escape_path_name(value: str) -> str:
    """``escapePathName``: each ASCII character of Hive's set as ``%XX`` (uppercase hex); others as they are."""
    return "".join(f"%{ord(c):02X}" if ord(c) in _ESCAPED else c for c in value)


def unescape_path_name(path: str) -> str:
    """``unescapePathName``, quirks included: ``%`` followed by two characters that Java's ``Integer.parseInt(s, 16)``
    takes is decoded, anything else is kept as written (``%zz``, a ``%`` in the last two positions).

    ``parseInt`` also takes a sign: ``%+F`` decodes to ``\\x0f`` and ``%-0`` to ``\\x00``, while ``%-1`` (negative)
    stays as it is.
    """
    out, i, n = [], 0, len(path)
    while i < n:
        c = path[i]
        if c == "%" and i + 2 < n:
            pair = path[i + 1:i + 3]
            if re.fullmatch(r"[+-]?[0-9A-Fa-f]+", pair) and int(pair, 16) >= 0:
                out.append(chr(int(pair, 16)))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def escape_partition_value(value: object, *, url_encode: bool = True) -> str:
    """A partition value as it appears in a path: the default partition for null or empty, escaped if asked."""
    if value is None or value == "":
        return DEFAULT_PARTITION
    text = value if isinstance(value, str) else str(value)
    return escape_path_name(text) if url_encode else text


def format_partition_path(values: Sequence[tuple[str, object]] | Mapping[str, object], *, hive_style: bool = False,
                          url_encode: bool = False) -> str:
    """The relative partition path of (field, value) pairs in partition-field order; "" when there are none."""
    pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
    segments = []
    for name, value in pairs:
        text = escape_partition_value(value, url_encode=url_encode)
        segments.append(f"{name}={text}" if hive_style else text)
    return "/".join(segments)


def parse_partition_path(path: str, fields: Sequence[str], *, hive_style: bool = False,
                         url_encode: bool = False) -> dict[str, str | None]:
    """The value of each partition field in a relative partition path (None for the default partition).

    Without URL encoding a value holding ``/`` spreads over several segments and cannot be told apart from two
    fields: such a path is refused.
    """
    if not fields:
        if path != NON_PARTITIONED:
            raise InvalidTable(f"non-partitioned table has partition path {path!r}", rule="HUDI-COMMIT-005")
        return {}
    segments = path.split("/") if path else []
    if len(segments) != len(fields):
        raise InvalidTable(f"partition path {path!r} has {len(segments)} segments for {len(fields)} partition fields",
                           rule=RULE_PARTITION)
    out: dict[str, str | None] = {}
    for name, segment in zip(fields, segments):
        if hive_style:
            prefix = f"{name}="
            if not segment.startswith(prefix):
                raise InvalidTable(f"partition path segment {segment!r} does not start with {prefix!r}",
                                   rule=RULE_PARTITION)
            segment = segment[len(prefix):]
        if segment in (DEFAULT_PARTITION, DEPRECATED_DEFAULT_PARTITION):
            out[name] = None
        else:
            out[name] = unescape_path_name(segment) if url_encode else segment
    return out


# ---------------------------------------------------------------------------------------------
# Partition metadata


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionMetadata:
    """``HoodiePartitionMetadata``: when the partition was created and how deep it is below the base path."""

    commit_time: str
    partition_depth: int


def partition_metafile_name(base_format: str | None = None) -> str:
    """``.hoodie_partition_metadata``, or with the base format's extension (``.parquet``, ``.orc``)."""
    if base_format is None:
        return PARTITION_METAFILE
    if base_format not in PARTITION_METAFILE_FORMATS:
        raise Unsupported(f"partition metadata in {base_format} format", feature=f"partition-metafile:{base_format}")
    return f"{PARTITION_METAFILE}.{base_format}"


def is_partition_metafile(name: str) -> bool:
    """Whether ``name`` is a partition metadata file in any of its formats."""
    return name in PARTITION_METAFILES


def _metadata_of(props: Mapping[str, str], depth: int | None, path: str | None) -> PartitionMetadata:
    commit, raw_depth = props.get(COMMIT_TIME_KEY), props.get(PARTITION_DEPTH_KEY)
    if commit is None or raw_depth is None:
        missing = [k for k in (COMMIT_TIME_KEY, PARTITION_DEPTH_KEY) if props.get(k) is None]
        raise InvalidTable(f"partition metadata lacks {', '.join(missing)}", path=path, rule=RULE_PARTITION)
    if not re.fullmatch(r"\d{1,9}", raw_depth.strip()):
        raise InvalidTable(f"partition metadata partitionDepth {raw_depth!r} is not a number", path=path,
                           rule=RULE_PARTITION)
    value = int(raw_depth.strip())
    if depth is not None and value != depth:
        raise InvalidTable(f"partition metadata says depth {value}, the partition is {depth} deep", path=path,
                           rule=RULE_PARTITION)
    return PartitionMetadata(commit_time=commit.strip(), partition_depth=value)


def parse_partition_metadata(data: bytes, name: str = PARTITION_METAFILE, *, path: str | None = None,
                             depth: int | None = None) -> PartitionMetadata:
    """The partition metadata in a metafile's bytes, by its name's format; ``depth`` (if known) is checked."""
    if name == PARTITION_METAFILE:
        from reference_impl.hudi.properties import parse_properties

        return _metadata_of(parse_properties(data, path=path), depth, path)
    fmt = name.rsplit(".", 1)[-1]
    if fmt == "parquet":
        import pyarrow as pa

        from reference_impl.parquet_io import read_parquet_metadata

        try:
            raw = read_parquet_metadata(data).metadata or {}
        except (pa.ArrowException, OSError) as exc:
            raise InvalidTable(f"partition metadata file is not Parquet: {exc}", path=path,
                               rule=RULE_PARTITION) from None
    elif fmt == "orc":
        import pyarrow as pa
        import pyarrow.orc as orc

        try:
            raw = orc.ORCFile(pa.BufferReader(data)).metadata or {}
        except (pa.ArrowException, OSError) as exc:
            raise InvalidTable(f"partition metadata file is not ORC: {exc}", path=path, rule=RULE_PARTITION) from None
    else:
        raise Unsupported(f"partition metadata file {name!r}", feature=f"partition-metafile:{fmt}", path=path)
    props = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in dict(raw).items()}
    return _metadata_of(props, depth, path)


def format_partition_metadata(meta: PartitionMetadata, *, date_comment: str | None = None) -> bytes:
    """The text metafile as ``Properties.store(out, "partition metadata")`` writes it.

    Java's second comment line is the time of writing (``Thu Nov 26 11:06:49 UTC 2026``); pass it to reproduce
    a file, leave it out to write one with just the first comment.
    """
    from reference_impl.hudi.properties import format_properties

    comments = ["partition metadata"] + ([date_comment] if date_comment is not None else [])
    return format_properties({COMMIT_TIME_KEY: meta.commit_time, PARTITION_DEPTH_KEY: str(meta.partition_depth)},
                             comments=comments)


__all__ = ["LOG_FILE_PREFIX", "LOG_EXTENSION", "CDC_SUFFIX", "BASE_FILE_EXTENSIONS", "PARTITION_METAFILE",
           "DEFAULT_PARTITION", "DEPRECATED_DEFAULT_PARTITION", "NON_PARTITIONED", "WriteToken", "BaseFileName",
           "LogFileName", "PartitionMetadata", "parse_write_token", "split_file_id", "is_uuid_file_id",
           "format_file_id", "parse_base_file_name", "format_base_file_name", "is_log_file_name",
           "parse_log_file_name", "listed_log_file_name", "format_log_file_name", "log_sort_key", "slice_base_instant",
           "escape_path_name", "unescape_path_name", "escape_partition_value", "format_partition_path",
           "parse_partition_path", "partition_metafile_name", "is_partition_metafile", "parse_partition_metadata",
           "format_partition_metadata"]
