"""Table properties (spec: Table Properties; Java HoodieTableConfig, java.util.Properties): ``.hoodie/hoodie.properties``.

The file is written by ``java.util.Properties.store(OutputStream)`` and read by
``Properties.load(InputStream)``, so its syntax is Java's, in full: ISO-8859-1 bytes; ``#`` and
``!`` comment lines; key and value separated by ``=``, ``:`` or whitespace; a line ending in an odd
number of backslashes continues on the next (whose leading whitespace is dropped); ``\\t \\n \\r
\\f``, ``\\uXXXX`` and ``\\<any>`` escapes; the last of duplicate keys wins. Real files escape
``:`` and ``=`` in values (``hoodie.table.create.schema``, paths), so a reader splitting on the
first ``=`` misreads them.

``hoodie.table.checksum`` is the CRC-32 of the UTF-8 bytes of ``<database>.<table>`` (no database:
``.<table>``), in decimal (``HoodieTableConfig.generateChecksum``): it covers only the names, and
exists to catch a file cut short by a crash, since Java writes it last. Java's reader falls back
to ``hoodie.properties.backup`` (written during an update) when the file is missing or its checksum
does not match; ``read_table_config`` does the same.

Typed access (``TableConfig``) keeps Java's defaults. Readers support table versions 6, 8 and 9
(0.14/0.15, 1.0, 1.1+); others are ``Unsupported``. The timeline layout version must agree with
the table version (1 for <= 7, 2 for >= 8). Writers differ in which keys they spell: Hudi 1.2
writes ``hoodie.table.ordering.fields`` even for a version-6 table, where 0.x wrote
``hoodie.table.precombine.field``; both are read, the newer first.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable, Mapping

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.storage import Storage

META_DIR = ".hoodie"
PROPERTIES_FILE = "hoodie.properties"
BACKUP_FILE = "hoodie.properties.backup"
MAX_PROPERTIES_BYTES = 16 << 20  # a real file is a few KiB even with a create schema in it

# Keys (HoodieTableConfig, KeyGeneratorOptions), spelled once.
NAME = "hoodie.table.name"
DATABASE = "hoodie.database.name"
TYPE = "hoodie.table.type"
VERSION = "hoodie.table.version"
INITIAL_VERSION = "hoodie.table.initial.version"
TIMELINE_LAYOUT_VERSION = "hoodie.timeline.layout.version"
CHECKSUM = "hoodie.table.checksum"
RECORDKEY_FIELDS = "hoodie.table.recordkey.fields"
PARTITION_FIELDS = "hoodie.table.partition.fields"
PRECOMBINE_FIELD = "hoodie.table.precombine.field"
ORDERING_FIELDS = "hoodie.table.ordering.fields"
KEYGEN_CLASS = "hoodie.table.keygenerator.class"
KEYGEN_TYPE = "hoodie.table.keygenerator.type"
HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_PARTITIONING = "hoodie.datasource.write.partitionpath.urlencode"
DROP_PARTITION_COLUMNS = "hoodie.datasource.write.drop.partition.columns"
BASE_FILE_FORMAT = "hoodie.table.base.file.format"
BASE_FILE_FORMAT_OLD = "hoodie.table.ro.file.format"  # Java's alternative key
LOG_FILE_FORMAT = "hoodie.table.log.file.format"
TIMELINE_PATH = "hoodie.timeline.path"
TIMELINE_HISTORY_PATH = "hoodie.timeline.history.path"
ARCHIVELOG_FOLDER = "hoodie.archivelog.folder"
METADATA_PARTITIONS = "hoodie.table.metadata.partitions"
METADATA_PARTITIONS_INFLIGHT = "hoodie.table.metadata.partitions.inflight"
TIMELINE_TIMEZONE = "hoodie.table.timeline.timezone"
PAYLOAD_CLASS = "hoodie.compaction.payload.class"
RECORD_MERGE_MODE = "hoodie.record.merge.mode"
RECORD_MERGE_STRATEGY_ID = "hoodie.record.merge.strategy.id"
RECORD_MERGE_STRATEGY_ID_OLD = "hoodie.compaction.record.merger.strategy"  # Java's alternative key
POPULATE_META_FIELDS = "hoodie.populate.meta.fields"
CDC_ENABLED = "hoodie.table.cdc.enabled"
TABLE_FORMAT = "hoodie.table.format"
CREATE_SCHEMA = "hoodie.table.create.schema"
BOOTSTRAP_BASE_PATH = "hoodie.bootstrap.base.path"

# Values.
COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"
TABLE_TYPES = (COPY_ON_WRITE, MERGE_ON_READ)
SUPPORTED_VERSIONS = (6, 8, 9)
KNOWN_VERSIONS = tuple(range(10))  # HoodieTableVersion ZERO..NINE
VERSION_RELEASES = MappingProxyType({6: "0.14/0.15", 7: "0.16", 8: "1.0", 9: "1.1+"})
BASE_FILE_FORMATS = ("PARQUET", "ORC", "HFILE", "LANCE")  # HoodieFileFormat, less HOODIE_LOG
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
CUSTOM = "CUSTOM"
MERGE_MODES = (COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING, CUSTOM)
TIMEZONES = ("LOCAL", "UTC")  # HoodieTimelineTimeZone
# HoodieRecordMerger strategy ids.
EVENT_TIME_STRATEGY_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
CUSTOM_STRATEGY_ID = "1897ef5f-18bc-4557-939c-9d6a8afd1519"
PAYLOAD_STRATEGY_ID = "00000000-0000-0000-0000-000000000000"
# Payload classes whose merge mode Java infers (HoodieTableConfig.inferRecordMergeModeFromPayloadClass).
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
# KeyGeneratorType -> class: Java resolves the class from the type when only the type is stored (v8+).
KEYGEN_CLASSES = MappingProxyType({
    "SIMPLE": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "SIMPLE_AVRO": "org.apache.hudi.keygen.SimpleAvroKeyGenerator",
    "COMPLEX": "org.apache.hudi.keygen.ComplexKeyGenerator",
    "COMPLEX_AVRO": "org.apache.hudi.keygen.ComplexAvroKeyGenerator",
    "TIMESTAMP": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    "TIMESTAMP_AVRO": "org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator",
    "CUSTOM": "org.apache.hudi.keygen.CustomKeyGenerator",
    "CUSTOM_AVRO": "org.apache.hudi.keygen.CustomAvroKeyGenerator",
    "NON_PARTITION": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    "NON_PARTITION_AVRO": "org.apache.hudi.keygen.NonpartitionedAvroKeyGenerator",
    "GLOBAL_DELETE": "org.apache.hudi.keygen.GlobalDeleteKeyGenerator",
    "GLOBAL_DELETE_AVRO": "org.apache.hudi.keygen.GlobalAvroDeleteKeyGenerator",
    "AUTO_RECORD": "org.apache.hudi.keygen.AutoRecordGenWrapperKeyGenerator",
    "AUTO_RECORD_AVRO": "org.apache.hudi.keygen.AutoRecordGenWrapperAvroKeyGenerator",
    "SPARK_SQL": "org.apache.spark.sql.hudi.command.SqlKeyGenerator",
})

DEFAULTS: Mapping[str, str] = MappingProxyType({
    BASE_FILE_FORMAT: "PARQUET",
    LOG_FILE_FORMAT: "HOODIE_LOG",
    HIVE_STYLE_PARTITIONING: "false",
    URL_ENCODE_PARTITIONING: "false",
    DROP_PARTITION_COLUMNS: "false",
    TIMELINE_PATH: "timeline",
    TIMELINE_HISTORY_PATH: "history",
    ARCHIVELOG_FOLDER: "archived",
    TIMELINE_TIMEZONE: "LOCAL",  # Java; hudi-rs assumes UTC (HUDI-LAYOUT-013)
    POPULATE_META_FIELDS: "true",
    CDC_ENABLED: "false",
    TABLE_FORMAT: "native",
})


# ----------------------------------------------------------------------------------------------
# java.util.Properties syntax
# ----------------------------------------------------------------------------------------------

_WS = " \t\f"
_HEX = "0123456789abcdefABCDEF"


def _logical_lines(text: str) -> Iterable[str]:
    """The logical lines of ``text`` as Java's ``Properties.LineReader`` builds them (escapes still in)."""
    i, n = 0, len(text)
    while i < n:
        # Leading whitespace and blank lines.
        while i < n and text[i] in _WS + "\r\n":
            i += 1
        if i >= n:
            return
        if text[i] in "#!":  # a comment runs to the end of its natural line and never continues
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        buf: list[str] = []
        while True:
            start = i
            while i < n and text[i] not in "\r\n":
                i += 1
            segment = text[start:i]
            trailing = len(segment) - len(segment.rstrip("\\"))
            if trailing % 2 == 1 and i < n:
                buf.append(segment[:-1])  # the odd backslash joins the next natural line
                i += 2 if text.startswith("\r\n", i) else 1
                while i < n and text[i] in _WS:
                    i += 1
                continue
            if trailing % 2 == 1:  # a lone backslash at the end of the input is dropped, as Java does
                segment = segment[:-1]
            buf.append(segment)
            break
        yield "".join(buf)


def _unescape(raw: str, what: str, path: str | None) -> str:
    """``Properties.loadConvert``: backslash escapes and ``\\uXXXX`` (UTF-16 units joined into characters)."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        i += 1
        if c != "\\" or i >= n:
            out.append(c)
            continue
        c = raw[i]
        i += 1
        if c == "u":
            digits = raw[i:i + 4]
            if len(digits) < 4 or any(d not in _HEX for d in digits):
                raise InvalidTable(f"{what} has a malformed \\uxxxx escape: {raw[max(0, i - 2):i + 4]!r}",
                                   path=path, rule="HUDI-LAYOUT-002",
                                   hint="java.util.Properties refuses the whole file for this")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(c, c))
    text = "".join(out)
    # Java strings are UTF-16: a \\uD83D\\uDE00 pair is one character; an unpaired half stays as it is.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _split(line: str) -> tuple[str, str]:
    """Key and value text of one logical line (``Properties.load0``), escapes still in."""
    key_end, value_start, has_sep, backslash = len(line), len(line), False, False
    for j, c in enumerate(line):
        if not backslash and c in "=:":
            key_end, value_start, has_sep = j, j + 1, True
            break
        if not backslash and c in _WS:
            key_end, value_start = j, j + 1
            break
        backslash = (not backslash) if c == "\\" else False
    j = value_start
    while j < len(line):
        c = line[j]
        if c not in _WS:
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        j += 1
    return line[:key_end], line[j:]


def parse_properties(data: bytes, *, path: str | None = None) -> dict[str, str]:
    """The key/value pairs of a Java properties file, as ``Properties.load(InputStream)`` reads them."""
    if len(data) > MAX_PROPERTIES_BYTES:
        raise InvalidTable(f"{PROPERTIES_FILE} is {len(data):,} bytes, more than the {MAX_PROPERTIES_BYTES:,} "
                           "a table config can need", path=path, rule="HUDI-LAYOUT-002")
    text = data.decode("latin-1")  # load(InputStream) is ISO-8859-1; other characters come as \\uXXXX
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        props[_unescape(key, "a key", path)] = _unescape(value, f"the value of {key!r}", path)
    return props


def _escape(text: str, *, is_key: bool) -> str:
    """``Properties.saveConvert`` with ``escUnicode``: what ``store(OutputStream)`` writes."""
    out: list[str] = []
    units = text.encode("utf-16-le", "surrogatepass")
    for k in range(0, len(units), 2):
        code = int.from_bytes(units[k:k + 2], "little")
        c = chr(code)
        if 61 < code < 127:
            out.append("\\\\" if c == "\\" else c)
        elif c == " ":
            out.append("\\ " if is_key or k == 0 else " ")
        elif c in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif code < 0x20 or code > 0x7E:
            out.append(f"\\u{code:04X}")
        else:
            out.append(c)
    return "".join(out)


def format_properties(props: Mapping[str, str], *, comments: Iterable[str] = ()) -> bytes:
    """A properties file Java reads back to ``props`` (keys in the given order, ``#`` comment lines first)."""
    lines = []
    for comment in comments:
        if any(c in comment for c in "\r\n"):
            raise ValueError("a comment must be one line")
        lines.append("#" + "".join(c if ord(c) <= 0xFF else f"\\u{ord(c):04X}" for c in comment))
    for key, value in props.items():
        lines.append(f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}")
    return ("\n".join(lines) + "\n").encode("latin-1")


# ----------------------------------------------------------------------------------------------
# Checksum
# ----------------------------------------------------------------------------------------------


def table_checksum(name: str, database: str = "") -> int:
    """``HoodieTableConfig.generateChecksum``: CRC-32 of the UTF-8 ``<database>.<table>`` (HUDI-LAYOUT-005)."""
    return zlib.crc32(f"{database}.{name}".encode("utf-8", "surrogatepass"))


def checksum_matches(props: Mapping[str, str]) -> bool | None:
    """Whether the stored checksum is right; None when there is none (tables before 0.11 have none)."""
    stored = props.get(CHECKSUM)
    if stored is None:
        return None
    name = props.get(NAME)
    if name is None:
        return False
    text = stored.strip()
    # Long.parseLong: an optional sign, then ASCII digits.
    if not text or not (text.lstrip("+-").isascii() and text.lstrip("+-").isdigit()) or text.count("-") + text.count("+") > 1:
        return False
    return int(text) == table_checksum(name, props.get(DATABASE, ""))


def with_checksum(props: Mapping[str, str]) -> dict[str, str]:
    """``props`` with ``hoodie.table.checksum`` recomputed and placed last, as Java stores it."""
    if NAME not in props:
        raise ValueError(f"{NAME} is required to compute the checksum")
    out = {k: v for k, v in props.items() if k != CHECKSUM}
    out[CHECKSUM] = str(table_checksum(props[NAME], props.get(DATABASE, "")))
    return out


def write_properties(props: Mapping[str, str], *, comment: str = "Properties saved by lakeconf") -> bytes:
    """The bytes of a ``hoodie.properties`` for ``props``, with its checksum (the writer side of HUDI-LAYOUT-002/005)."""
    return format_properties(with_checksum(props), comments=(comment,))


# ----------------------------------------------------------------------------------------------
# Typed table config
# ----------------------------------------------------------------------------------------------


def _fields(value: str | None) -> tuple[str, ...] | None:
    """A comma-separated field list, empty entries dropped (Java splits on "," and filters empties)."""
    if value is None:
        return None
    return tuple(f for f in value.split(",") if f)


def _bool(value: str) -> bool:
    """``Boolean.parseBoolean``: true only for "true" in any case."""
    return value.lower() == "true"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableConfig:
    """``hoodie.properties`` read with Java's defaults. ``properties`` keeps every key as written."""

    properties: Mapping[str, str] = field(hash=False)
    name: str
    database: str | None
    table_type: str
    version: int
    initial_version: int | None
    timeline_layout_version: int
    record_key_fields: tuple[str, ...] | None  # None: key-less table (HUDI-LAYOUT-007)
    partition_fields: tuple[str, ...]  # () = non-partitioned; custom key generator types (":simple") stripped
    ordering_fields: tuple[str, ...]  # v9 ordering.fields, else precombine.field; () = none
    key_generator_class: str | None
    key_generator_type: str | None
    hive_style_partitioning: bool
    url_encode_partitioning: bool
    drop_partition_columns: bool
    base_file_format: str
    timeline_path: str  # under .hoodie/, layout 2 only
    timeline_history_path: str  # under the timeline directory, layout 2 only
    archivelog_folder: str  # under .hoodie/, layout 1 only
    metadata_partitions: frozenset[str]
    metadata_partitions_inflight: frozenset[str]
    timeline_timezone: str
    payload_class: str | None
    record_merge_mode: str | None  # as stored (v8+); see ``merge_mode`` for the effective one
    record_merge_strategy_id: str | None
    populate_meta_fields: bool
    cdc_enabled: bool
    table_format: str
    checksum_ok: bool | None

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def timeline_dir(self) -> str:
        """The active timeline, relative to the table root: ``.hoodie`` (layout 1) or ``.hoodie/<timeline.path>``."""
        return META_DIR if self.timeline_layout_version < 2 else f"{META_DIR}/{self.timeline_path}"

    @property
    def history_dir(self) -> str:
        """Where archived instants go: ``.hoodie/<archivelog.folder>`` (v6) or the LSM history (v8+) (HUDI-LAYOUT-012)."""
        if self.timeline_layout_version < 2:
            return f"{META_DIR}/{self.archivelog_folder}"
        return f"{self.timeline_dir}/{self.timeline_history_path}"

    @property
    def merge_mode(self) -> str:
        """The effective record merge mode (``HoodieTableConfig.inferCorrectMergingBehavior``).

        Stored mode wins; else it follows the payload class or strategy id; with neither, an ordering
        field means event-time ordering and none means commit-time ordering. A v6 table has no mode
        key and its payload class decides (0.x default ``DefaultHoodieRecordPayload``: event time).
        """
        if self.record_merge_mode is not None:
            return self.record_merge_mode
        payload = self.payload_class or (DEFAULT_PAYLOAD if self.version < 8 else None)
        strategy = self.record_merge_strategy_id
        by_payload = _mode_of_payload(payload)
        by_strategy = _mode_of_strategy(strategy)
        if by_payload is None and by_strategy is None:
            return EVENT_TIME_ORDERING if self.ordering_fields else COMMIT_TIME_ORDERING
        if self.version == 8:
            return by_strategy or by_payload  # type: ignore[return-value]
        return by_payload or by_strategy  # type: ignore[return-value]


def _mode_of_payload(payload: str | None) -> str | None:
    if not payload:
        return None
    if payload in (DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD):
        return EVENT_TIME_ORDERING
    return COMMIT_TIME_ORDERING if payload == OVERWRITE_PAYLOAD else CUSTOM


def _mode_of_strategy(strategy: str | None) -> str | None:
    if not strategy:
        return None
    return {EVENT_TIME_STRATEGY_ID: EVENT_TIME_ORDERING, COMMIT_TIME_STRATEGY_ID: COMMIT_TIME_ORDERING}.get(strategy, CUSTOM)


def _int(props: Mapping[str, str], key: str, rule: str, path: str | None) -> int | None:
    raw = props.get(key)
    if raw is None:
        return None
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise InvalidTable(f"{key} must be a non-negative integer, got {raw[:50]!r}", path=path, rule=rule)
    return int(text)


def layout_version_of(table_version: int) -> int:
    """The timeline layout a table version uses (HoodieTableVersion.getTimelineLayoutVersion): 1 up to 7, 2 from 8."""
    return 2 if table_version >= 8 else 1


def parse_table_config(props: Mapping[str, str], *, path: str | None = None) -> TableConfig:
    """The typed config of a parsed ``hoodie.properties``; InvalidTable or Unsupported for what a reader cannot use."""
    for key in (NAME, TYPE, VERSION):
        if key not in props:
            raise InvalidTable(f"{PROPERTIES_FILE} lacks {key}", path=path, rule="HUDI-LAYOUT-003",
                               hint="a table records its name, type and version")
    table_type = props[TYPE].strip()
    if table_type not in TABLE_TYPES:
        raise InvalidTable(f"{TYPE} must be COPY_ON_WRITE or MERGE_ON_READ, got {props[TYPE][:50]!r}",
                           path=path, rule="HUDI-LAYOUT-003")
    version = _int(props, VERSION, "HUDI-LAYOUT-003", path)
    assert version is not None
    if version not in SUPPORTED_VERSIONS:
        known = f"table version {version} (Hudi {VERSION_RELEASES[version]})" if version in VERSION_RELEASES else \
            (f"table version {version}" if version in KNOWN_VERSIONS else f"table version {version}, newer than any known")
        raise Unsupported(f"{known} is not read; versions 6, 8 and 9 are", feature=f"hudi-table-version:{version}",
                          path=path, rule="HUDI-LAYOUT-006")
    layout = _int(props, TIMELINE_LAYOUT_VERSION, "HUDI-LAYOUT-004", path)
    expected = layout_version_of(version)
    if layout is None:
        layout = expected  # Java derives it from the table version when the key is absent
    elif layout != expected:
        raise InvalidTable(f"table version {version} uses timeline layout {expected}, but {TIMELINE_LAYOUT_VERSION}={layout}",
                           path=path, rule="HUDI-LAYOUT-004")
    base_format = props.get(BASE_FILE_FORMAT, props.get(BASE_FILE_FORMAT_OLD, DEFAULTS[BASE_FILE_FORMAT])).strip()
    if base_format not in BASE_FILE_FORMATS:
        raise InvalidTable(f"{BASE_FILE_FORMAT} must be one of {', '.join(BASE_FILE_FORMATS)}, got {base_format[:50]!r}",
                           path=path, rule="HUDI-LAYOUT-010")
    timezone = props.get(TIMELINE_TIMEZONE, DEFAULTS[TIMELINE_TIMEZONE]).strip()
    if timezone not in TIMEZONES:
        raise InvalidTable(f"{TIMELINE_TIMEZONE} must be LOCAL or UTC, got {timezone[:50]!r}", path=path,
                           rule="HUDI-LAYOUT-013")
    mode = props.get(RECORD_MERGE_MODE)
    if mode is not None and mode.strip() not in MERGE_MODES:
        raise InvalidTable(f"{RECORD_MERGE_MODE} must be one of {', '.join(MERGE_MODES)}, got {mode[:50]!r}",
                           path=path, rule="HUDI-LAYOUT-009")
    for key in (TIMELINE_PATH, TIMELINE_HISTORY_PATH, ARCHIVELOG_FOLDER):
        value = props.get(key)
        if value is not None and (not value or value in (".", "..") or any(c in value for c in "/\\\x00")):
            raise InvalidTable(f"{key} must name one directory, got {value[:100]!r}", path=path, rule="HUDI-LAYOUT-012",
                               hint="the timeline directories sit directly under .hoodie/")
    keygen_type = props.get(KEYGEN_TYPE)
    keygen_class = props.get(KEYGEN_CLASS) or (KEYGEN_CLASSES.get(keygen_type) if keygen_type else None)
    ordering = _fields(props.get(ORDERING_FIELDS))
    if ordering is None:
        ordering = _fields(props.get(PRECOMBINE_FIELD))
    partitions = _fields(props.get(PARTITION_FIELDS)) or ()
    return TableConfig(
        properties=MappingProxyType(dict(props)),
        name=props[NAME],
        database=props.get(DATABASE),
        table_type=table_type,
        version=version,
        initial_version=_int(props, INITIAL_VERSION, "HUDI-LAYOUT-003", path),
        timeline_layout_version=layout,
        record_key_fields=_fields(props.get(RECORDKEY_FIELDS)),
        # CustomKeyGenerator spells "field:type" (v8+ stores it so); the field is what precedes the colon.
        partition_fields=tuple(p.split(":", 1)[0] for p in partitions),
        ordering_fields=ordering or (),
        key_generator_class=keygen_class,
        key_generator_type=keygen_type,
        hive_style_partitioning=_bool(props.get(HIVE_STYLE_PARTITIONING, DEFAULTS[HIVE_STYLE_PARTITIONING])),
        url_encode_partitioning=_bool(props.get(URL_ENCODE_PARTITIONING, DEFAULTS[URL_ENCODE_PARTITIONING])),
        drop_partition_columns=_bool(props.get(DROP_PARTITION_COLUMNS, DEFAULTS[DROP_PARTITION_COLUMNS])),
        base_file_format=base_format,
        timeline_path=props.get(TIMELINE_PATH, DEFAULTS[TIMELINE_PATH]),
        timeline_history_path=props.get(TIMELINE_HISTORY_PATH, DEFAULTS[TIMELINE_HISTORY_PATH]),
        archivelog_folder=props.get(ARCHIVELOG_FOLDER, DEFAULTS[ARCHIVELOG_FOLDER]),
        metadata_partitions=frozenset(_fields(props.get(METADATA_PARTITIONS)) or ()),
        metadata_partitions_inflight=frozenset(_fields(props.get(METADATA_PARTITIONS_INFLIGHT)) or ()),
        timeline_timezone=timezone,
        payload_class=props.get(PAYLOAD_CLASS) or None,
        record_merge_mode=mode.strip() if mode is not None else None,
        record_merge_strategy_id=props.get(RECORD_MERGE_STRATEGY_ID, props.get(RECORD_MERGE_STRATEGY_ID_OLD)) or None,
        populate_meta_fields=_bool(props.get(POPULATE_META_FIELDS, DEFAULTS[POPULATE_META_FIELDS])),
        cdc_enabled=_bool(props.get(CDC_ENABLED, DEFAULTS[CDC_ENABLED])),
        table_format=props.get(TABLE_FORMAT, DEFAULTS[TABLE_FORMAT]),
        checksum_ok=checksum_matches(props),
    )


def read_table_config(storage: Storage) -> TableConfig:
    """The table config of the table at ``storage``'s root, from ``hoodie.properties`` or its backup.

    Like Java's ``ConfigUtils.fetchConfigs``, a missing file or one whose checksum does not match
    (a write cut short) gives way to ``hoodie.properties.backup``.
    """
    main = f"{META_DIR}/{PROPERTIES_FILE}"
    backup = f"{META_DIR}/{BACKUP_FILE}"
    bad_checksum: str | None = None
    for rel in (main, backup):
        try:
            data = storage.read(rel)
        except FileNotFoundError:
            continue
        props = parse_properties(data, path=storage.uri(rel))
        if checksum_matches(props) is False:
            bad_checksum = bad_checksum or rel
            continue
        return parse_table_config(props, path=storage.uri(rel))
    if bad_checksum is not None:
        raise InvalidTable(f"{CHECKSUM} does not match the table name, and there is no good backup",
                           path=storage.uri(bad_checksum), rule="HUDI-LAYOUT-005",
                           hint="the checksum is CRC-32 of '<database>.<table>'; the file may have been cut short")
    raise InvalidTable(f"no {META_DIR}/{PROPERTIES_FILE}: not a Hudi table", path=storage.uri(main), rule="HUDI-LAYOUT-002")


__all__ = ["TableConfig", "parse_properties", "format_properties", "write_properties", "table_checksum",
           "checksum_matches", "with_checksum", "parse_table_config", "read_table_config", "layout_version_of",
           "DEFAULTS", "SUPPORTED_VERSIONS"]
