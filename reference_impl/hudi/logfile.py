"""Log file format (spec: Log File Format / Log Blocks; Java HoodieLogFormatWriter, HoodieLogFileReader, HoodieLogBlock,
HoodieAvroDataBlock, HoodieParquetDataBlock, HoodieDeleteBlock, HoodieCommandBlock, HoodieCDCDataBlock; hudi-rs
crates/core/src/file_group/log_file/).

A log file is a sequence of blocks. Each block, as Java's ``HoodieLogFormatWriter`` writes it (every integer
big-endian, HUDI-LOG-013):

* the magic ``#HUDI#`` (6 bytes);
* the block size (8 bytes): the number of bytes that follow it, through the reverse pointer;
* the log format version (4 bytes, 1);
* the block type (4 bytes, the Java enum ordinal: 0 command, 1 delete, 2 corrupt, 3 Avro data, 4 HFile data,
  5 Parquet data, 6 CDC data; the tech spec's table numbers them from 1, HUDI-LOG-004);
* the header: an entry count (4 bytes), then per entry the key's ordinal (4 bytes), the value's length (4 bytes)
  and the value's UTF-8 bytes (HUDI-LOG-005; the spec's extra 8-byte header length is not written);
* the content length (8 bytes) and the content;
* the footer, encoded like the header (Java writes an empty one: four zero bytes);
* the reverse pointer (8 bytes): the number of bytes of the block before it, magic included; it equals the block
  size + 6, which is what Java checks (HUDI-LOG-006).

Java writes header entries in the iteration order of a ``HashMap`` keyed by an enum, which follows identity hash
codes and so changes from one JVM to the next (verified: ``SCHEMA, INSTANT_TIME`` and ``INSTANT_TIME, SCHEMA`` from
the same Hudi); a header is kept here in file order and written back in that order. Data and delete blocks carry
``INSTANT_TIME`` and ``SCHEMA``; from table version 8 also ``RECORD_POSITIONS`` (see ``record_positions``) and
``BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS``; a rollback block ``INSTANT_TIME`` (the rollback's),
``TARGET_INSTANT_TIME`` and ``COMMAND_BLOCK_TYPE``. The footer was empty in every file seen.

Corrupt blocks (HUDI-LOG-007), as ``HoodieLogFileReader`` finds them: after a magic, the block is corrupt when its
size cannot be read, when the block would run past the end of the file, when the reverse pointer at its declared
end is not size + 6, or when what follows its end is neither the end of the file nor another magic. The corrupt
block is then everything from just after its magic up to the next magic (or the end of the file); a reader skips it
and carries on there. A file that does not start with the magic is unreadable (Java throws), and fewer than six
trailing bytes are ignored (Java's magic read meets the end of the file). A block that frames correctly but whose
inside does not add up (header, content length, footer) is an invalid table: Java would fail on it too.

Content by block type:

* Avro data and CDC data: the block version (4 bytes, 3), the record count (4 bytes), then per record its length
  (4 bytes) and the record in Avro binary encoding by the writer schema in the ``SCHEMA`` header (HUDI-LOG-008;
  the tech spec says 8-byte lengths).
* Parquet data: a whole Parquet file.
* Delete: the block version (4 bytes), the length of the serialized records (4 bytes), the serialized records.
  Version 3 (Hudi 0.14 and later) serializes an Avro ``HoodieDeleteRecordList``: an array of records
  ``recordKey`` (nullable string), ``partitionPath`` (nullable string) and ``orderingVal``, a union of null and
  eleven one-field wrapper records (``BooleanWrapper`` .. ``TimestampMicrosWrapper``; verified: Hudi 0.15.0 and
  1.2.0 write ``IntWrapper`` 0 for a plain delete and ``LongWrapper`` ts for ``_hoodie_is_deleted``). hudi-rs 0.5
  declares that union as bare primitives, which shifts every branch from long on (apache/hudi-rs#663). Versions 1
  and 2 are Java-serialized object arrays (Kryo through ``SerializationUtils``): not decoded here.
* Command: empty content; header ``COMMAND_BLOCK_TYPE`` ``0`` (rollback) and ``TARGET_INSTANT_TIME``.
* HFile data: an HFile (the metadata table's log blocks); framed, not decoded here.
"""

from __future__ import annotations

import base64
import decimal
import io
import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable, Iterable, Iterator, Mapping

from reference_impl.common.bounded import read_long as avro_read_long
from reference_impl.common.bounded import write_long as avro_write_long
from reference_impl.errors import Internal, InvalidTable, Unsupported
from reference_impl.storage import Storage
from reference_impl.common.jsontext import loads as json_loads  # deep nesting: a ValueError, not a RecursionError

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1  # HoodieLogFormat.CURRENT_VERSION; 0 had no type, header or footer
BLOCK_VERSION = 3  # HoodieLogBlock.version: content version of data and delete blocks since Hudi 0.14
ROLLBACK_COMMAND = "0"  # HoodieCommandBlock.HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK ordinal, as a string

# Fixed part of a version-1 block after the size: version, type, header count, content length, footer count,
# reverse pointer. A declared size below this cannot be a block.
_MIN_BLOCK_SIZE = 4 + 4 + 4 + 8 + 4 + 8
_MAX_JAVA_INT = (1 << 31) - 1

RULE_MAGIC = "HUDI-LOG-001"
RULE_VERSION = "HUDI-LOG-003"
RULE_TYPE = "HUDI-LOG-004"
RULE_HEADER = "HUDI-LOG-005"
RULE_FRAME = "HUDI-LOG-006"
RULE_CORRUPT = "HUDI-LOG-007"  # a corrupt range is no error: readers skip it; validators report it with this id
RULE_AVRO = "HUDI-LOG-008"
RULE_COMMAND = "HUDI-LOG-009"
RULE_DELETE = "HUDI-LOG-010"


class BlockType(IntEnum):
    """``HoodieLogBlock.HoodieLogBlockType``, written as its ordinal (new types are only ever appended)."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2  # never written: what a reader makes of bytes that do not frame as a block
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    """``HoodieLogBlock.HeaderMetadataType`` (header and footer keys), written as its ordinal."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


DATA_BLOCK_TYPES = frozenset({BlockType.AVRO_DATA, BlockType.HFILE_DATA, BlockType.PARQUET_DATA, BlockType.CDC_DATA})


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecord:
    """One tombstone of a delete block (Java ``DeleteRecord``); ``ordering_type`` names the wrapper it came in."""

    record_key: str | None
    partition_path: str | None
    ordering_value: Any = None
    ordering_type: str | None = None  # one of ORDERING_TYPES, None when the value is null


@dataclass(frozen=True, slots=True, kw_only=True)
class LogBlock:
    """One block of a log file: its framing, its raw content and (when decoded) its records."""

    offset: int  # where the block's magic starts
    length: int  # bytes from the magic through the reverse pointer (through the corrupt range for CORRUPT)
    block_type: BlockType
    format_version: int | None  # None for a corrupt block
    header: dict[HeaderKey, str] = field(default_factory=dict)  # in file order
    footer: dict[HeaderKey, str] = field(default_factory=dict)
    content: bytes = b""
    # list[dict] (Avro/CDC), pyarrow.Table (Parquet), list[DeleteRecord] (delete), None (command, corrupt, HFile)
    records: Any = None
    problem: str = ""  # why a CORRUPT block is one (HUDI-LOG-002/006/007), for validators to report

    @property
    def instant_time(self) -> str | None:
        """The ``INSTANT_TIME`` header: the instant that wrote the block."""
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """The ``SCHEMA`` header: the writer's Avro schema as JSON text."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def target_instant_time(self) -> str | None:
        """The ``TARGET_INSTANT_TIME`` header of a command block: the instant it rolls back."""
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def is_rollback(self) -> bool:
        """A command block of type rollback."""
        return (self.block_type is BlockType.COMMAND
                and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND)

    @property
    def is_corrupt(self) -> bool:
        """Bytes a reader skips: not a well-framed block."""
        return self.block_type is BlockType.CORRUPT


# ---------------------------------------------------------------------------------------------
# Framing


def _int(data: bytes, pos: int) -> int:
    return struct.unpack_from(">i", data, pos)[0]


def _long(data: bytes, pos: int) -> int:
    return struct.unpack_from(">q", data, pos)[0]


def _frame_ok(data: bytes, start: int) -> tuple[int | None, str]:
    """(declared size, "") of the block whose size field starts at ``start``, or (None, why Java calls it corrupt)."""
    n = len(data)
    if start + 8 > n:
        return None, "the file ends inside the block size"
    size = _long(data, start)
    end = start + 8 + size  # one past the reverse pointer
    if size < _MIN_BLOCK_SIZE:
        return None, f"block size {size} is too small for a block"
    if end > n:
        return None, f"block size {size:,} runs past the end of the file ({n - start - 8:,} bytes follow it)"
    pointer = _long(data, end - 8)
    if pointer != size + len(MAGIC):
        return None, f"the reverse pointer says {pointer:,}, the block size {size:,} (it should be size + 6)"
    if n - end >= len(MAGIC) and data[end:end + len(MAGIC)] != MAGIC:
        return None, "neither the end of the file nor a magic follows the block"
    return size, ""


def _metadata(data: bytes, pos: int, end: int, what: str, path: str | None) -> tuple[dict[HeaderKey, str], int]:
    """A header or footer map starting at ``pos`` that must end by ``end``; returns it and the position after it."""
    if pos + 4 > end:
        raise InvalidTable(f"{what} count runs past the block", path=path, rule=RULE_HEADER)
    count = _int(data, pos)
    pos += 4
    if count < 0 or count * 8 > end - pos:  # every entry takes at least its key and its length
        raise InvalidTable(f"{what} claims {count:,} entries in {end - pos:,} bytes", path=path, rule=RULE_HEADER)
    out: dict[HeaderKey, str] = {}
    for _ in range(count):
        if pos + 8 > end:
            raise InvalidTable(f"{what} entry runs past the block", path=path, rule=RULE_HEADER)
        ordinal, length = _int(data, pos), _int(data, pos + 4)
        pos += 8
        if length < 0 or length > end - pos:
            raise InvalidTable(f"{what} value declares {length:,} bytes where {end - pos:,} remain", path=path,
                               rule=RULE_HEADER)
        try:
            key = HeaderKey(ordinal)
        except ValueError:
            raise Unsupported(f"{what} key ordinal {ordinal} is not one this reader knows (0..{max(HeaderKey)})",
                              feature=f"log-header-key:{ordinal}", path=path) from None
        if key in out:
            raise InvalidTable(f"{what} repeats key {key.name}", path=path, rule=RULE_HEADER)
        try:
            out[key] = data[pos:pos + length].decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidTable(f"{what} value of {key.name} is not UTF-8", path=path, rule=RULE_HEADER) from None
        pos += length
    return out, pos


def _parse_block(data: bytes, offset: int, size: int, path: str | None) -> LogBlock:
    """The block whose magic is at ``offset`` and whose (already checked) size is ``size``."""
    pos = offset + len(MAGIC) + 8
    end = offset + len(MAGIC) + 8 + size - 8  # where the reverse pointer starts
    where = f"log block at offset {offset}"
    version = _int(data, pos)
    if version != LOG_FORMAT_VERSION:
        raise Unsupported(f"{where} has log format version {version}; only version {LOG_FORMAT_VERSION} is read",
                          feature=f"log-format-version:{version}", path=path, rule=RULE_VERSION)
    raw_type = _int(data, pos + 4)
    pos += 8
    try:
        block_type = BlockType(raw_type)
    except ValueError:
        raise Unsupported(f"{where} has block type {raw_type}, not one of 0..{max(BlockType)}",
                          feature=f"log-block-type:{raw_type}", path=path, rule=RULE_TYPE) from None
    if block_type is BlockType.CORRUPT:
        raise InvalidTable(f"{where} is written with the CORRUPT type, which only a reader assigns", path=path,
                           rule=RULE_TYPE)
    header, pos = _metadata(data, pos, end, f"{where} header", path)
    if pos + 8 > end:
        raise InvalidTable(f"{where}: the content length runs past the block", path=path, rule=RULE_FRAME)
    content_length = _long(data, pos)
    pos += 8
    if content_length < 0 or content_length > end - pos:
        raise InvalidTable(f"{where} declares {content_length:,} content bytes where {end - pos:,} remain",
                           path=path, rule=RULE_FRAME)
    content = data[pos:pos + content_length]
    pos += content_length
    footer, pos = _metadata(data, pos, end, f"{where} footer", path)
    if pos != end:
        raise InvalidTable(f"{where}: header, content and footer end {end - pos:+,} bytes before the reverse pointer",
                           path=path, rule=RULE_FRAME)
    return LogBlock(offset=offset, length=len(MAGIC) + 8 + size, block_type=block_type, format_version=version,
                    header=header, footer=footer, content=content)


def iter_blocks(data: bytes, *, path: str | None = None, decode: bool = True) -> Iterator[LogBlock]:
    """The blocks of a log file in order, corrupt ranges included as CORRUPT blocks; records decoded if ``decode``."""
    data = bytes(data)
    n = len(data)
    if n >= len(MAGIC) and data[:len(MAGIC)] != MAGIC:
        raise InvalidTable("log file does not start with the magic #HUDI#", path=path, rule=RULE_MAGIC)
    pos = 0
    while n - pos >= len(MAGIC):
        # Every position reached here holds a magic: the first by the check above, later ones because a good
        # block is only accepted when a magic (or the end) follows it, and a corrupt range stops at one.
        start = pos + len(MAGIC)
        size, problem = _frame_ok(data, start)
        if size is None:
            nxt = data.find(MAGIC, start)
            stop = n if nxt < 0 else nxt
            yield LogBlock(offset=pos, length=stop - pos, block_type=BlockType.CORRUPT, format_version=None,
                           content=data[start:stop], problem=problem)
            pos = stop
            continue
        block = _parse_block(data, pos, size, path)
        if decode:
            block = decode_block(block, path=path)
        yield block
        pos += block.length


def read_log_file(data: bytes, *, path: str | None = None, decode: bool = True) -> list[LogBlock]:
    """Every block of a log file (see ``iter_blocks``)."""
    return list(iter_blocks(data, path=path, decode=decode))


def load_log_file(storage: Storage, path: str, *, decode: bool = True) -> list[LogBlock]:
    """The blocks of the log file at root-relative ``path`` (a missing file is an invalid table)."""
    try:
        data = storage.read(path)
    except FileNotFoundError:
        raise InvalidTable(f"log file {path} does not exist", path=path, rule="HUDI-FILE-006") from None
    return read_log_file(data, path=path, decode=decode)


def valid_blocks(blocks: Iterable[LogBlock], *, committed: Callable[[str], bool] | None = None) -> list[LogBlock]:
    """The blocks a reader merges, in order, from the blocks of one file slice's log files (in log order).

    Dropped, as Java's log record reader drops them: corrupt ranges (HUDI-LOG-007); data and delete blocks whose
    ``INSTANT_TIME`` is not a completed instant, when ``committed`` tells (HUDI-LOG-011; command blocks carry the
    rollback's own instant and are not checked); every earlier block written by the ``TARGET_INSTANT_TIME`` of a
    rollback command block, and the command block itself (HUDI-LOG-009); every block whose instant a log-compacted
    block lists in ``COMPACTED_BLOCK_TIMES`` (comma-separated; HUDI-LOG-012).
    """
    kept: list[LogBlock] = []
    for block in blocks:
        if block.is_corrupt:
            continue
        if block.block_type is BlockType.COMMAND:
            if not block.is_rollback:
                raise Unsupported(f"command block at offset {block.offset} has command type "
                                  f"{block.header.get(HeaderKey.COMMAND_BLOCK_TYPE)!r}; only rollback (0) exists",
                                  feature="log-command-type", rule=RULE_COMMAND)
            target = block.target_instant_time
            if target is None:
                raise InvalidTable(f"rollback block at offset {block.offset} names no TARGET_INSTANT_TIME",
                                   rule=RULE_COMMAND)
            kept = [b for b in kept if b.instant_time != target]
            continue
        if block.instant_time is None:
            raise InvalidTable(f"{block.block_type.name} block at offset {block.offset} has no INSTANT_TIME header",
                               rule="HUDI-LOG-011")
        if committed is not None and not committed(block.instant_time):
            continue
        kept.append(block)
    replaced = {t for b in kept for t in (b.header.get(HeaderKey.COMPACTED_BLOCK_TIMES) or "").split(",") if t}
    return [b for b in kept if b.instant_time not in replaced]


# ---------------------------------------------------------------------------------------------
# Content decoding


def decode_block(block: LogBlock, *, path: str | None = None) -> LogBlock:
    """``block`` with its records decoded by its type (a new object; the framing is unchanged)."""
    decoder = _DECODERS.get(block.block_type)
    if decoder is None:
        return block
    return LogBlock(offset=block.offset, length=block.length, block_type=block.block_type,
                    format_version=block.format_version, header=block.header, footer=block.footer,
                    content=block.content, records=decoder(block, path))


def _avro_records(block: LogBlock, path: str | None) -> list[dict]:
    if block.schema is None:
        raise InvalidTable(f"data block at offset {block.offset} has no SCHEMA header", path=path, rule=RULE_AVRO)
    return decode_avro_content(block.content, block.schema, where=f"Avro data block at offset {block.offset}",
                               path=path)


def _parquet_records(block: LogBlock, path: str | None):
    return decode_parquet_content(block.content, where=f"Parquet data block at offset {block.offset}", path=path)


def _delete_records(block: LogBlock, path: str | None) -> list[DeleteRecord]:
    return decode_delete_content(block.content, where=f"delete block at offset {block.offset}", path=path)


def _command_records(block: LogBlock, path: str | None) -> None:
    if block.content:
        raise InvalidTable(f"command block at offset {block.offset} has {len(block.content)} content bytes; "
                           f"Java writes none", path=path, rule=RULE_COMMAND)
    return None


_DECODERS = {
    BlockType.AVRO_DATA: _avro_records,
    BlockType.CDC_DATA: _avro_records,  # HoodieCDCDataBlock is an Avro data block with the CDC schema
    BlockType.PARQUET_DATA: _parquet_records,
    BlockType.DELETE: _delete_records,
    BlockType.COMMAND: _command_records,
}


def _zero_width(schema: Any, seen: set[str] | None = None) -> bool:
    """Whether a value of ``schema`` can take no bytes at all (then an array of them could claim 2^63 items)."""
    seen = set() if seen is None else seen
    if isinstance(schema, str):
        return schema == "null"
    if isinstance(schema, list):
        return len(schema) == 1 and _zero_width(schema[0], seen)  # a union spends at least its branch index
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "record":
            name = schema.get("name", "")
            if name in seen:
                return False
            seen.add(name)
            return all(_zero_width(f.get("type"), seen) for f in schema.get("fields", []))
        if kind == "fixed":
            return schema.get("size") == 0
        if kind in ("array", "map"):
            return False
        return _zero_width(kind, seen)
    return False


def _check_bounded_schema(schema: Any, where: str, path: str | None) -> None:
    """Refuse schemas with arrays or maps of values that take no bytes: their counts are unbounded by the data."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in ("array", "map"):
                inner = node.get("items") if kind == "array" else node.get("values")
                if _zero_width(inner):
                    raise Unsupported(f"{where}: its schema has an {kind} of values that take no bytes, whose "
                                      f"length the data cannot bound", feature="avro-zero-width-collection",
                                      path=path)
                stack.append(inner)
            elif kind == "record":
                stack.extend(f.get("type") for f in node.get("fields", []))
            elif isinstance(kind, (dict, list)):
                stack.append(kind)


def _parse_schema(schema_json: str, where: str, path: str | None):
    import fastavro

    try:
        schema = json_loads(schema_json)
    except ValueError as exc:
        raise InvalidTable(f"{where}: SCHEMA header is not JSON: {exc}", path=path, rule=RULE_AVRO) from None
    _check_bounded_schema(schema, where, path)
    try:
        return fastavro.parse_schema(schema)
    except Exception as exc:  # fastavro raises several unrelated types for a bad schema
        raise InvalidTable(f"{where}: SCHEMA header is not an Avro schema: {exc}", path=path, rule=RULE_AVRO) from None


def decode_avro_content(content: bytes, schema_json: str, *, where: str = "Avro data block",
                        path: str | None = None) -> list[dict]:
    """The records of an Avro (or CDC) data block's content, as dicts by the writer schema."""
    import fastavro

    n = len(content)
    if n < 8:
        raise InvalidTable(f"{where} content is {n} bytes, too short for its version and record count", path=path,
                           rule=RULE_AVRO)
    version, count = _int(content, 0), _int(content, 4)
    if version != BLOCK_VERSION:
        # Versions 1 and 2 lay the records out the same way (HoodieAvroDataBlockVersion: every version has a
        # count) but no writer since 0.14 makes them; hudi-rs reads 3 only.
        raise Unsupported(f"{where} has block version {version}; only {BLOCK_VERSION} is read",
                          feature=f"avro-block-version:{version}", path=path, rule=RULE_AVRO)
    if count < 0 or count * 4 > n - 8:  # every record takes at least its length
        raise InvalidTable(f"{where} claims {count:,} records in {n - 8:,} bytes", path=path, rule=RULE_AVRO)
    schema = _parse_schema(schema_json, where, path)
    records, pos = [], 8
    for i in range(count):
        if pos + 4 > n:
            raise InvalidTable(f"{where} ends before record {i}'s length", path=path, rule=RULE_AVRO)
        length = _int(content, pos)
        pos += 4
        if length < 0 or length > n - pos:
            raise InvalidTable(f"{where} record {i} declares {length:,} bytes where {n - pos:,} remain", path=path,
                               rule=RULE_AVRO)
        buf = io.BytesIO(content[pos:pos + length])
        try:
            records.append(fastavro.schemaless_reader(buf, schema, None))
        except Exception as exc:  # EOFError, ValueError, ... from a record that does not match its schema
            raise InvalidTable(f"{where} record {i} does not decode by the block's schema: {exc!r}", path=path,
                               rule=RULE_AVRO) from None
        if buf.tell() != length:
            # Java skips to the declared end whatever the decoder used; a writer never leaves a gap.
            raise InvalidTable(f"{where} record {i} decodes in {buf.tell()} of its {length} bytes", path=path,
                               rule=RULE_AVRO)
        pos += length
    if pos != n:
        raise InvalidTable(f"{where}: {n - pos} bytes follow the last record", path=path, rule=RULE_AVRO)
    return records


def decode_parquet_content(content: bytes, *, where: str = "Parquet data block", path: str | None = None):
    """The rows of a Parquet data block's content (an embedded Parquet file) as a pyarrow Table.

    What the file's pages inflate to (the column chunks' uncompressed sizes) is bounded by ``max_inflate`` before
    anything is decoded.
    """
    import pyarrow as pa

    from reference_impl.common.bounded import max_inflate
    from reference_impl.parquet_io import open_parquet, read_parquet

    if len(content) < 12 or content[:4] != b"PAR1" or content[-4:] != b"PAR1":
        raise InvalidTable(f"{where} does not hold a Parquet file", path=path, rule=RULE_FRAME)
    try:
        pf = open_parquet(content)
        meta, limit = pf.metadata, max_inflate()
        inflated = sum(meta.row_group(i).column(j).total_uncompressed_size
                       for i in range(meta.num_row_groups) for j in range(meta.num_columns))
        if inflated > limit:
            raise InvalidTable(f"{where} inflates to {inflated:,} bytes, more than {limit:,}", path=path,
                               rule=RULE_FRAME, hint="if the table is genuine, raise LAKECONF_MAX_INFLATE_BYTES")
        return read_parquet(pf)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidTable(f"{where}: its Parquet file does not read: {exc}", path=path, rule=RULE_FRAME) from None


# Delete records: HoodieDeleteRecordList (block version 3). ``orderingVal`` is a union of null and these
# wrapper records, each with the one field ``value`` (HoodieAvroWrapperUtils.wrapValueIntoAvro picks the branch).
ORDERING_TYPES = ("boolean", "int", "long", "float", "double", "bytes", "string", "date", "decimal", "time_micros",
                  "timestamp_micros")
DECIMAL_SCALE = 15  # DecimalWrapper: bytes, decimal(30, 15)
DECIMAL_PRECISION = 30


def _avro_bytes(data: bytes, pos: int, end: int, what: str, path: str | None) -> tuple[bytes, int]:
    length, pos = avro_read_long(data, pos, what, path=path, rule=RULE_DELETE)
    if length < 0 or length > end - pos:
        raise InvalidTable(f"{what} declares {length:,} bytes where {end - pos:,} remain", path=path, rule=RULE_DELETE)
    return data[pos:pos + length], pos + length


def _avro_string(data: bytes, pos: int, end: int, what: str, path: str | None) -> tuple[str, int]:
    raw, pos = _avro_bytes(data, pos, end, what, path)
    try:
        return raw.decode("utf-8"), pos
    except UnicodeDecodeError:
        raise InvalidTable(f"{what} is not UTF-8", path=path, rule=RULE_DELETE) from None


def _union_index(data: bytes, pos: int, branches: int, what: str, path: str | None) -> tuple[int, int]:
    index, pos = avro_read_long(data, pos, what, path=path, rule=RULE_DELETE)
    if not 0 <= index < branches:
        raise InvalidTable(f"{what} has union branch {index} of {branches}", path=path, rule=RULE_DELETE)
    return index, pos


def _nullable_string(data: bytes, pos: int, end: int, what: str, path: str | None) -> tuple[str | None, int]:
    index, pos = _union_index(data, pos, 2, what, path)
    return (None, pos) if index == 0 else _avro_string(data, pos, end, what, path)


def _ordering_value(data: bytes, pos: int, end: int, what: str, path: str | None) -> tuple[Any, str | None, int]:
    index, pos = _union_index(data, pos, 1 + len(ORDERING_TYPES), what, path)
    if index == 0:
        return None, None, pos
    kind = ORDERING_TYPES[index - 1]
    if kind == "boolean":
        if pos >= end or data[pos] not in (0, 1):
            raise InvalidTable(f"{what} is not an Avro boolean", path=path, rule=RULE_DELETE)
        return bool(data[pos]), kind, pos + 1
    if kind in ("int", "long", "date", "time_micros", "timestamp_micros"):
        value, pos = avro_read_long(data, pos, what, path=path, rule=RULE_DELETE)
        if kind in ("int", "date") and not -(1 << 31) <= value < (1 << 31):
            raise InvalidTable(f"{what}: {value} does not fit an Avro int", path=path, rule=RULE_DELETE)
        return value, kind, pos
    if kind in ("float", "double"):
        width, fmt = (4, "<f") if kind == "float" else (8, "<d")
        if pos + width > end:
            raise InvalidTable(f"{what} ends inside a {kind}", path=path, rule=RULE_DELETE)
        return struct.unpack_from(fmt, data, pos)[0], kind, pos + width
    if kind == "bytes":
        raw, pos = _avro_bytes(data, pos, end, what, path)
        return raw, kind, pos
    if kind == "string":
        text, pos = _avro_string(data, pos, end, what, path)
        return text, kind, pos
    raw, pos = _avro_bytes(data, pos, end, what, path)  # decimal: big-endian two's complement, scale 15
    unscaled = int.from_bytes(raw, "big", signed=True) if raw else 0
    return decimal.Decimal(unscaled).scaleb(-DECIMAL_SCALE), kind, pos


def decode_delete_content(content: bytes, *, where: str = "delete block",
                          path: str | None = None) -> list[DeleteRecord]:
    """The tombstones of a delete block's content (block version 3: Avro ``HoodieDeleteRecordList``)."""
    n = len(content)
    if n < 8:
        raise InvalidTable(f"{where} content is {n} bytes, too short for its version and length", path=path,
                           rule=RULE_DELETE)
    version, length = _int(content, 0), _int(content, 4)
    if version in (1, 2):
        raise Unsupported(f"{where} has block version {version}: its records are a Java-serialized (Kryo) "
                          f"array, which only a JVM with Hudi's classes can read", feature="delete-block-kryo",
                          path=path, rule=RULE_DELETE)
    if version != BLOCK_VERSION:
        raise Unsupported(f"{where} has block version {version}; only {BLOCK_VERSION} is read",
                          feature=f"delete-block-version:{version}", path=path, rule=RULE_DELETE)
    if length < 0 or length != n - 8:
        raise InvalidTable(f"{where} declares {length:,} bytes of records, the content holds {n - 8:,}", path=path,
                           rule=RULE_DELETE)
    data, pos, end = content, 8, n
    records: list[DeleteRecord] = []
    # An Avro array: blocks of (count, items), a negative count followed by the block's byte size, 0 ends it.
    while True:
        count, pos = avro_read_long(data, pos, f"{where} array", path=path, rule=RULE_DELETE)
        if count == 0:
            break
        if count < 0:
            _size, pos = avro_read_long(data, pos, f"{where} array", path=path, rule=RULE_DELETE)
            count = -count
        if count * 3 > end - pos:  # a record takes at least three union indexes
            raise InvalidTable(f"{where} claims {count:,} records in {end - pos:,} bytes", path=path, rule=RULE_DELETE)
        for _ in range(count):
            what = f"{where} record {len(records)}"
            key, pos = _nullable_string(data, pos, end, f"{what} recordKey", path)
            part, pos = _nullable_string(data, pos, end, f"{what} partitionPath", path)
            value, kind, pos = _ordering_value(data, pos, end, f"{what} orderingVal", path)
            records.append(DeleteRecord(record_key=key, partition_path=part, ordering_value=value, ordering_type=kind))
    if pos != end:
        raise InvalidTable(f"{where}: {end - pos} bytes follow the record list", path=path, rule=RULE_DELETE)
    return records


# ---------------------------------------------------------------------------------------------
# Writing (byte for byte what HoodieLogFormatWriter writes)


def encode_metadata(entries: Mapping[HeaderKey, str] | None) -> bytes:
    """A header or footer map: count, then per entry key ordinal, value length and UTF-8 value, in the given order."""
    entries = entries or {}
    out = [struct.pack(">i", len(entries))]
    for key, value in entries.items():
        raw = str(value).encode("utf-8")
        out.append(struct.pack(">ii", int(HeaderKey(key)), len(raw)))
        out.append(raw)
    return b"".join(out)


def encode_block(block_type: BlockType, header: Mapping[HeaderKey, str] | None, content: bytes,
                 footer: Mapping[HeaderKey, str] | None = None) -> bytes:
    """One framed block: magic, size, version, type, header, content length, content, footer, reverse pointer."""
    block_type = BlockType(block_type)
    if block_type is BlockType.CORRUPT:
        raise Internal("a CORRUPT block is what a reader makes of bad bytes; it is never written")
    head, foot = encode_metadata(header), encode_metadata(footer)
    # Java reads the size and the content length as longs and then casts them to int.
    if len(content) > _MAX_JAVA_INT - _MIN_BLOCK_SIZE - len(head) - len(foot):
        raise Unsupported(f"a block of {len(content):,} content bytes is beyond what Java reads (2 GiB)",
                          feature="log-block-size")
    body = (struct.pack(">ii", LOG_FORMAT_VERSION, int(block_type)) + head + struct.pack(">q", len(content)) + content
            + foot)
    size = len(body) + 8
    return MAGIC + struct.pack(">q", size) + body + struct.pack(">q", len(MAGIC) + 8 + len(body))


def reencode_block(block: LogBlock) -> bytes:
    """The bytes of a block read from a file, written again from its parts (not for CORRUPT blocks)."""
    return encode_block(block.block_type, block.header, block.content, block.footer)


def encode_avro_content(records: Iterable[Mapping[str, Any]], schema_json: str) -> bytes:
    """An Avro data block's content: version 3, record count, then length-prefixed Avro binary records."""
    import fastavro

    schema = _parse_schema(schema_json, "Avro data block", None)
    parts = []
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, record)
        raw = buf.getvalue()
        parts.append(struct.pack(">i", len(raw)) + raw)
    return struct.pack(">ii", BLOCK_VERSION, len(parts)) + b"".join(parts)


def _encode_ordering(value: Any, kind: str | None) -> bytes:
    if kind is None or value is None:
        return avro_write_long(0)
    if kind not in ORDERING_TYPES:
        raise Internal(f"unknown ordering value type {kind!r}; expected one of {ORDERING_TYPES}")
    branch = avro_write_long(ORDERING_TYPES.index(kind) + 1)
    if kind == "boolean":
        return branch + bytes([1 if value else 0])
    if kind in ("int", "long", "date", "time_micros", "timestamp_micros"):
        return branch + avro_write_long(int(value))
    if kind == "float":
        return branch + struct.pack("<f", value)
    if kind == "double":
        return branch + struct.pack("<d", value)
    if kind == "bytes":
        raw = bytes(value)
        return branch + avro_write_long(len(raw)) + raw
    if kind == "string":
        raw = str(value).encode("utf-8")
        return branch + avro_write_long(len(raw)) + raw
    # decimal: the unscaled value at scale 15 as Java's BigInteger.toByteArray (minimal two's complement)
    unscaled = int(decimal.Decimal(value).scaleb(DECIMAL_SCALE).to_integral_value(rounding=decimal.ROUND_HALF_UP))
    raw = unscaled.to_bytes(max(1, (unscaled + (unscaled < 0)).bit_length() // 8 + 1), "big", signed=True)
    return branch + avro_write_long(len(raw)) + raw


def _encode_nullable_string(value: str | None) -> bytes:
    if value is None:
        return avro_write_long(0)
    raw = value.encode("utf-8")
    return avro_write_long(1) + avro_write_long(len(raw)) + raw


def encode_delete_content(records: Iterable[DeleteRecord]) -> bytes:
    """A delete block's content: version 3, length, then the Avro ``HoodieDeleteRecordList`` (one array block)."""
    records = list(records)
    body = bytearray()
    if records:  # Java's encoder writes one block of all items, then the terminating 0
        body += avro_write_long(len(records))
        for r in records:
            body += _encode_nullable_string(r.record_key)
            body += _encode_nullable_string(r.partition_path)
            body += _encode_ordering(r.ordering_value, r.ordering_type)
    body += avro_write_long(0)
    return struct.pack(">ii", BLOCK_VERSION, len(body)) + bytes(body)


def _header(instant_time: str, extra: Mapping[HeaderKey, str] | None, first: Mapping[HeaderKey, str]) -> dict:
    """A header with INSTANT_TIME first, then ``first``, then ``extra`` (their order is the order written)."""
    out = {HeaderKey.INSTANT_TIME: instant_time}
    out.update(first)
    out.update(extra or {})
    return out


def avro_data_block(records: Iterable[Mapping[str, Any]], schema_json: str, *, instant_time: str,
                    header: Mapping[HeaderKey, str] | None = None) -> bytes:
    """A framed Avro data block of ``records`` (``header`` given in full replaces the default order)."""
    head = dict(header) if header is not None else _header(instant_time, None, {HeaderKey.SCHEMA: schema_json})
    return encode_block(BlockType.AVRO_DATA, head, encode_avro_content(records, schema_json))


def parquet_data_block(parquet_file: bytes, schema_json: str, *, instant_time: str,
                       header: Mapping[HeaderKey, str] | None = None) -> bytes:
    """A framed Parquet data block around the bytes of a Parquet file (see ``encode_parquet_content``)."""
    head = dict(header) if header is not None else _header(instant_time, None, {HeaderKey.SCHEMA: schema_json})
    return encode_block(BlockType.PARQUET_DATA, head, bytes(parquet_file))


def encode_parquet_content(table, *, compression: str = "gzip") -> bytes:
    """A Parquet file of ``table`` written by pyarrow (Java's parquet-mr bytes differ; readers must not care)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue().to_pybytes()


def delete_block(records: Iterable[DeleteRecord], *, instant_time: str, schema_json: str | None = None,
                 header: Mapping[HeaderKey, str] | None = None) -> bytes:
    """A framed delete block of ``records`` (Java also puts the table schema in its header)."""
    first = {HeaderKey.SCHEMA: schema_json} if schema_json is not None else {}
    head = dict(header) if header is not None else _header(instant_time, None, first)
    return encode_block(BlockType.DELETE, head, encode_delete_content(records))


def rollback_block(*, instant_time: str, target_instant_time: str,
                   header: Mapping[HeaderKey, str] | None = None) -> bytes:
    """A framed command block rolling back the blocks ``target_instant_time`` wrote (written by ``instant_time``)."""
    head = dict(header) if header is not None else {HeaderKey.INSTANT_TIME: instant_time,
                                                     HeaderKey.TARGET_INSTANT_TIME: target_instant_time,
                                                     HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND}
    return encode_block(BlockType.COMMAND, head, b"")


MAX_RECORD_POSITIONS = 1 << 27  # a few KiB of run containers can claim billions of positions; refused past this


def record_positions(block: LogBlock, *, limit: int = MAX_RECORD_POSITIONS) -> list[int] | None:
    """The base-file row positions in a block's ``RECORD_POSITIONS`` header, or None without one.

    Java (``LogReaderUtils.encodePositions``) writes a run-optimized ``Roaring64NavigableMap`` in the portable
    64-bit layout, base64-encoded: the bucket count (8 bytes LE), then per bucket its key (4 bytes LE) and a
    portable 32-bit bitmap. The positions are counted before any are materialised (at most ``limit``).
    """
    from pyroaring import BitMap

    from reference_impl.common import roaring

    text = block.header.get(HeaderKey.RECORD_POSITIONS)
    if text is None:
        return None
    where = f"RECORD_POSITIONS header of the block at offset {block.offset}"
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise InvalidTable(f"{where} is not base64", rule=RULE_HEADER) from None
    if len(raw) < 8:
        raise InvalidTable(f"{where} is {len(raw)} bytes, too short for its bucket count", rule=RULE_HEADER)
    (buckets,) = struct.unpack_from("<Q", raw, 0)
    if buckets > (len(raw) - 8) // 12:  # a key and at least an 8-byte bitmap each
        raise InvalidTable(f"{where} claims {buckets:,} buckets in {len(raw)} bytes", rule=RULE_HEADER)
    pos, last, bitmaps, total = 8, -1, [], 0
    for _ in range(buckets):
        if pos + 4 > len(raw):
            raise InvalidTable(f"{where} is truncated", rule=RULE_HEADER)
        (key,) = struct.unpack_from("<I", raw, pos)
        if key <= last or key & 0x80000000:
            raise InvalidTable(f"{where}: bucket key {key} after {last} (keys ascend, positions stay below 2^63)",
                               rule=RULE_HEADER)
        try:
            size = roaring.roaring32_size(raw, pos + 4)
            bitmap = BitMap.deserialize(raw[pos + 4:pos + 4 + size])
        except (roaring.RoaringError, ValueError, RuntimeError) as exc:
            raise InvalidTable(f"{where}: bucket {key} is not a portable Roaring bitmap: {exc}",
                               rule=RULE_HEADER) from None
        total += len(bitmap)
        if total > limit:
            raise InvalidTable(f"{where} holds more than {limit:,} positions", rule=RULE_HEADER)
        bitmaps.append((key, bitmap))
        pos, last = pos + 4 + size, key
    if pos != len(raw):
        raise InvalidTable(f"{where}: {len(raw) - pos} bytes follow the last bitmap", rule=RULE_HEADER)
    return [(key << 32) | low for key, bitmap in bitmaps for low in bitmap]


def encode_record_positions(positions: Iterable[int]) -> str:
    """A ``RECORD_POSITIONS`` header value: the positions as Java encodes them (run-optimized, portable, base64)."""
    from reference_impl.common import roaring

    try:
        values = roaring.sorted_unique_positions(positions)
        return base64.b64encode(roaring.serialize64(values)).decode("ascii")
    except roaring.RoaringError as exc:
        raise InvalidTable(f"cannot encode record positions: {exc}", rule=RULE_HEADER) from None


__all__ = ["MAGIC", "LOG_FORMAT_VERSION", "BLOCK_VERSION", "ROLLBACK_COMMAND", "BlockType", "HeaderKey",
           "DATA_BLOCK_TYPES", "ORDERING_TYPES", "DeleteRecord", "LogBlock", "iter_blocks", "read_log_file",
           "load_log_file", "valid_blocks", "decode_block", "decode_avro_content", "decode_parquet_content",
           "decode_delete_content", "encode_metadata", "encode_block", "reencode_block", "encode_avro_content",
           "encode_delete_content", "encode_parquet_content", "avro_data_block", "parquet_data_block",
           "delete_block", "rollback_block", "record_positions", "encode_record_positions"]
