"""HFile (version 3) as Hudi writes it: the base-file format of the metadata table and the content of HFile data
blocks in its log files (HUDI-LAYOUT-010, HUDI-LAYOUT-016).

Sources: apache/hudi ``hudi-io`` ``org.apache.hudi.io.hfile`` (HFileReaderImpl, HFileTrailer, HFileBlock,
HFileBlockType, HFileDataBlock, HFileRootIndexBlock, HFileFileInfoBlock, HFileInfo, HFileCompressionCodec,
HFileWriterImpl, ``HFile.proto``); hudi-rs ``crates/core/src/hfile``; checked against the metadata tables Spark 3.5
wrote with Hudi 1.2.0 (table versions 9 and 6; Hudi's own writer) and Hudi 0.15.0 (version 6; HBase's writer, which
Hudi 1.x's reader also reads). Every integer is big-endian.

Layout of a file, front to back:

* the "scanned block section": data blocks (``DATABLK*``) and, in files HBase wrote with a multi-level index or
  compound Bloom filters, leaf-index (``IDXLEAF2``) and Bloom-chunk (``BLMFBLK2``) blocks between them;
* the "non-scanned" section: meta blocks (``METABLKc``; Hudi's Bloom filter is the meta block ``bloomFilter``),
  intermediate index blocks;
* the "load-on-open" section, starting at the trailer's ``load_on_open_data_offset``: the root data index
  (``IDXROOT2``), the meta index (another ``IDXROOT2``) and the file info (``FILEINF2``), in that order;
* the fixed 4096-byte trailer: magic ``TRABLK"$``, a varint-length-delimited ``TrailerProto`` (protobuf 2) and, in
  the last four bytes, the minor version (1 byte; Hudi 1.2 writes 0, HBase 3) and the major version (3 bytes, 3);
  the rest is zero.

Every block has a 33-byte header: magic (8), on-disk size without header (4; compressed payload plus checksum
bytes), uncompressed size without header (4), previous block offset (8; -1 in every file seen), checksum type (1;
0 NULL, 1 CRC32, 2 CRC32C), bytes per checksum (4; 16384), on-disk data size with header (4; header plus compressed
payload). The payload (compressed as a whole with the trailer's codec) follows, then the checksum bytes: 4 per
``bytes_per_checksum`` chunk of header plus payload. Hudi 1.2 writes checksum type NULL and still leaves those 4
zero bytes per chunk; Hudi 0.15 (HBase) wrote CRC32C (both verified). Checksums are not verified here (nor by
Hudi's reader).

Codecs (``TrailerProto.compression_codec``, the ordinal of ``HFileCompressionCodec``): 0 LZO, 1 GZIP, 2 NONE,
3 SNAPPY, 4 LZ4, 5 BZIP2, 6 ZSTD. The metadata tables of Hudi 1.2.0 and 0.15.0 are GZIP (verified); GZIP and NONE
are read here, BZIP2 and ZSTD too (one stream per block), the Hadoop block-framed codecs (LZO, SNAPPY, LZ4) are
reported as unsupported.

A data block's payload is a run of cells: key length (4), value length (4), the key, the value, then the MVCC
timestamp as a Hadoop ``WritableUtils`` vlong (always 0, one byte; a file whose file info declares non-zero MVCC
timestamps is refused by Hudi and here), plus a 2-byte tags length and the tags when the file info has
``hfile.MAX_TAGS_LEN`` (HBase with tags; never in Hudi's files). A key is the HBase KeyValue key: row length (2),
the row (Hudi's record key: a partition path or ``__all_partitions__`` in the files partition), family length (1,
0), the qualifier (none), timestamp (8; ``LATEST_TIMESTAMP``) and key type (1; 4, Put). Cells are sorted by key;
this reader insists on non-decreasing rows.

A root index block holds ``count`` (from the trailer) entries: block offset (8), on-disk size with header (4), key
length as a Hadoop vint, and the key. In the data index the key is the block's first row with its 2-byte length
(Hudi 1.2) or the whole KeyValue key (HBase); both start with the row length and the row. In the meta index it is
the block's name.

The file info block holds ``PBUF`` and a varint-delimited ``InfoProto`` (repeated ``BytesBytesPair``): HFile's keys
(``hfile.LASTKEY`` in the data index's key form, ``hfile.AVG_KEY_LEN``, ``hfile.AVG_VALUE_LEN``,
``hfile.CREATE_TIME_TS``, ``KEY_VALUE_VERSION``, ``MAX_MEMSTORE_TS_KEY``) and Hudi's (``schema``, the Avro schema
of the values; in base files ``minRecordKey``, ``maxRecordKey``, ``bloomFilterTypeCode``). Hudi 1.2 writes them in
``java.util.HashMap`` order, which the writer here reproduces.

Reading is bounded: nothing is read outside the given bytes, every offset and size is checked against what the
file holds before it is used, a block inflates to at most its declared uncompressed size (itself bounded by
``LAKECONF_MAX_INFLATE_BYTES``), and counts are checked against the bytes that could hold them. Malformed input
raises ``InvalidTable`` (rule HUDI-LAYOUT-016) naming the offset where it went wrong; a valid file using what this
reader does not decode (LZO/SNAPPY/LZ4, encoded data blocks, MVCC timestamps) raises ``Unsupported``.

The writer (``write_hfile``) makes test inputs laid out as Hudi 1.2 lays them out; given the cells, file info and
meta blocks of the 210 HFiles (base files and log blocks) in the metadata tables Spark wrote with Hudi 1.2.0, it
wrote each of them again byte for byte (HBase-written files differ: checksums, index keys, file info).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping

from reference_impl.common.bounded import inflate, max_inflate
from reference_impl.errors import InvalidTable, Unsupported

RULE = "HUDI-LAYOUT-016"

TRAILER_SIZE = 4096
HEADER_SIZE = 33  # magic 8, two sizes 4+4, previous offset 8, checksum type 1, bytes per checksum 4, data size 4
MAGIC_LENGTH = 8
TRAILER_MAGIC = b'TRABLK"$'
DATA_MAGIC = b"DATABLK*"
ENCODED_DATA_MAGIC = b"DATABLKE"
LEAF_INDEX_MAGIC = b"IDXLEAF2"
BLOOM_CHUNK_MAGIC = b"BLMFBLK2"
META_MAGIC = b"METABLKc"
INTERMEDIATE_INDEX_MAGIC = b"IDXINTE2"
ROOT_INDEX_MAGIC = b"IDXROOT2"
FILE_INFO_MAGIC = b"FILEINF2"
BLOCK_MAGICS = frozenset({DATA_MAGIC, ENCODED_DATA_MAGIC, LEAF_INDEX_MAGIC, BLOOM_CHUNK_MAGIC, META_MAGIC,
                          INTERMEDIATE_INDEX_MAGIC, ROOT_INDEX_MAGIC, FILE_INFO_MAGIC, b"BLMFMET2", b"DFBLMET2"})
PB_MAGIC = b"PBUF"
MAJOR_VERSION = 3
DEFAULT_BYTES_PER_CHECKSUM = 16 * 1024
CHECKSUM_SIZE = 4

CODECS = {0: "lzo", 1: "gzip", 2: "none", 3: "snappy", 4: "lz4", 5: "bzip2", 6: "zstd"}
CODEC_IDS = {name: i for i, name in CODECS.items()}
_READABLE_CODECS = frozenset({"gzip", "none", "bzip2", "zstd"})

# What Hudi 1.x's metadata-table writer puts in the trailer (HoodieHBaseKVComparator kept for HBase readers).
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
LAST_KEY = "hfile.LASTKEY"
MAX_MEMSTORE_TS_KEY = "MAX_MEMSTORE_TS_KEY"
KEY_VALUE_VERSION = "KEY_VALUE_VERSION"
MAX_TAGS_LEN = "hfile.MAX_TAGS_LEN"
SCHEMA_KEY = "schema"  # HoodieAvroHFileReader's file-info key for the values' Avro schema
BLOOM_FILTER_BLOCK = "bloomFilter"  # HoodieAvroHFileWriter's meta block with the serialized Bloom filter

_KEY_FIXED = 2 + 1 + 8 + 1  # row length, family length, timestamp, key type: a key without its row


def _bad(message: str, path: str | None) -> InvalidTable:
    return InvalidTable(f"HFile: {message}", path=path, rule=RULE)


# ---------------------------------------------------------------------------------------------
# Small codecs: protobuf 2 (trailer, file info) and Hadoop WritableUtils vlong (index keys, MVCC)


def _pb_varint(data: bytes, pos: int, end: int, what: str, path: str | None) -> tuple[int, int]:
    value = shift = 0
    for i in range(10):
        if pos + i >= end:
            raise _bad(f"{what} ends inside a varint (offset {pos})", path)
        b = data[pos + i]
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos + i + 1
        shift += 7
    raise _bad(f"{what} has a varint longer than 10 bytes (offset {pos})", path)


def _pb_fields(data: bytes, pos: int, end: int, what: str, path: str | None) -> Iterator[tuple[int, int, object]]:
    """(field number, wire type, value) of a protobuf message in ``data[pos:end]``; lengths checked against ``end``."""
    while pos < end:
        tag, pos = _pb_varint(data, pos, end, what, path)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise _bad(f"{what} has field number 0 (offset {pos})", path)
        if wire == 0:
            value, pos = _pb_varint(data, pos, end, what, path)
        elif wire == 2:
            n, pos = _pb_varint(data, pos, end, what, path)
            if n > end - pos:
                raise _bad(f"{what} has a field of {n:,} bytes where {end - pos:,} remain", path)
            value, pos = data[pos:pos + n], pos + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            if n > end - pos:
                raise _bad(f"{what} ends inside a fixed-size field", path)
            value, pos = data[pos:pos + n], pos + n
        else:
            raise _bad(f"{what} uses protobuf wire type {wire}, which it never holds (offset {pos})", path)
        yield number, wire, value


def _pb_put_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def _pb_put(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return _pb_put_varint(number << 3) + _pb_put_varint(value)
    return _pb_put_varint(number << 3 | 2) + _pb_put_varint(len(value)) + value


def read_vlong(data: bytes, pos: int, end: int, what: str, path: str | None = None) -> tuple[int, int]:
    """A Hadoop ``WritableUtils`` vlong at ``pos`` and the position after it (1 to 9 bytes)."""
    if pos >= end:
        raise _bad(f"{what} ends inside a variable-length number (offset {pos})", path)
    first = data[pos] - 256 if data[pos] > 127 else data[pos]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)  # bytes including the first
    if pos + size > end:
        raise _bad(f"{what} ends inside a variable-length number (offset {pos})", path)
    value = int.from_bytes(data[pos + 1:pos + size], "big")
    return (~value if negative else value), pos + size


def write_vlong(n: int) -> bytes:
    """The Hadoop ``WritableUtils.writeVLong`` encoding of ``n``."""
    if -112 <= n <= 127:
        return bytes([n & 0xFF])
    marker = -112
    if n < 0:
        n, marker = ~n, -120
    size = (n.bit_length() + 7) // 8
    return bytes([(marker - size) & 0xFF]) + n.to_bytes(size, "big")


# ---------------------------------------------------------------------------------------------
# Reader


@dataclass(frozen=True, slots=True)
class Trailer:
    """The fixed trailer (``TrailerProto`` plus the version word); absent proto fields take Java's defaults."""

    major_version: int
    minor_version: int
    file_info_offset: int = 0
    load_on_open_data_offset: int = 0
    uncompressed_data_index_size: int = 0
    total_uncompressed_bytes: int = 0
    data_index_count: int = 0
    meta_index_count: int = 0
    entry_count: int = 0
    num_data_index_levels: int = 1
    first_data_block_offset: int = 0
    last_data_block_offset: int = 0
    comparator_class_name: str = ""
    compression_codec: int = 2  # NONE when absent (HFileTrailer.deserialize)
    encryption_key: bytes = b""

    @property
    def codec(self) -> str:
        return CODECS.get(self.compression_codec, f"#{self.compression_codec}")


@dataclass(frozen=True, slots=True)
class BlockHeader:
    offset: int
    magic: bytes
    on_disk_size_without_header: int
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size(self) -> int:
        """Bytes of the whole block on disk: header, payload, checksums."""
        return HEADER_SIZE + self.on_disk_size_without_header


@dataclass(frozen=True, slots=True)
class IndexEntry:
    offset: int
    size: int  # on-disk size of the block with its header
    key: bytes  # the data index: an HBase KeyValue key; the meta index: the block's name


@dataclass(frozen=True, slots=True)
class Cell:
    key: bytes  # the row: Hudi's record key (or partition path in the files partition)
    value: bytes
    timestamp: int = 0
    key_type: int = 0


def row_of_key(key: bytes, what: str = "key", path: str | None = None) -> bytes:
    """The row of an HBase KeyValue key (row length, row, family length, family, qualifier, timestamp, type)."""
    if len(key) < 2:
        raise _bad(f"{what} of {len(key)} bytes has no row length", path)
    n = struct.unpack_from(">H", key, 0)[0]
    if 2 + n > len(key):
        raise _bad(f"{what} declares a row of {n:,} bytes in a key of {len(key):,}", path)
    return key[2:2 + n]


LATEST_TIMESTAMP = (1 << 63) - 1  # HConstants.LATEST_TIMESTAMP: the timestamp Hudi's writer gives every cell
KEY_TYPE_PUT = 4  # KeyValue.Type.Put


def make_key(row: bytes, *, timestamp: int = LATEST_TIMESTAMP, key_type: int = KEY_TYPE_PUT) -> bytes:
    """The KeyValue key Hudi's writer makes: row length, row, empty family, no qualifier, timestamp, type."""
    if len(row) > 0x7FFF:
        raise ValueError(f"an HFile row key is at most 32767 bytes, not {len(row):,}")
    return struct.pack(">H", len(row)) + row + b"\x00" + struct.pack(">qB", timestamp, key_type)


def short_key(row: bytes) -> bytes:
    """The row with its 2-byte length: what Hudi's writer puts in the data index and in ``hfile.LASTKEY``."""
    return struct.pack(">H", len(row)) + row


class HFile:
    """One HFile held in memory as bytes; parsed lazily block by block.

    ``HFile(data)`` reads the trailer and the load-on-open section (indexes and file info) and checks them;
    iterating yields the cells of every data block in file order, inflating one block at a time.
    """

    def __init__(self, data: bytes, *, path: str | None = None, max_block_bytes: int | None = None) -> None:
        self.data = memoryview(data).toreadonly() if not isinstance(data, bytes) else data
        self.path = path
        self.max_block_bytes = max_inflate() if max_block_bytes is None else max_block_bytes
        self.trailer = self._read_trailer()
        t = self.trailer
        if t.compression_codec not in CODECS:
            raise _bad(f"the trailer names compression codec {t.compression_codec}, which HFile does not have "
                       f"(0 to {max(CODECS)})", path)
        if t.codec not in _READABLE_CODECS:
            raise Unsupported(f"HFile blocks are compressed with {t.codec.upper()}, which this reader does not "
                              f"decode (GZIP, NONE, BZIP2 and ZSTD are)", feature=f"hfile-codec:{t.codec}", path=path)
        end = self.section_end
        if not 0 <= t.load_on_open_data_offset < end:
            raise _bad(f"the load-on-open offset {t.load_on_open_data_offset:,} is outside the {end:,} bytes "
                       f"before the trailer", path)
        pos = t.load_on_open_data_offset
        header, payload = self._block(pos, ROOT_INDEX_MAGIC, "root data index", end)
        self.data_index = self._root_index(payload, t.data_index_count, "root data index", header.offset)
        pos += header.on_disk_size
        header, payload = self._block(pos, ROOT_INDEX_MAGIC, "meta index", end)
        self.meta_index = self._root_index(payload, t.meta_index_count, "meta index", header.offset)
        pos += header.on_disk_size
        header, payload = self._block(pos, FILE_INFO_MAGIC, "file info", end)
        self.file_info = self._file_info(payload, header.offset)
        self._check_mvcc()
        self.has_tags = MAX_TAGS_LEN in self.file_info
        self._check_index()

    # -- structure

    @property
    def section_end(self) -> int:
        """Where the trailer starts: no block may reach past it."""
        return len(self.data) - TRAILER_SIZE

    def _read_trailer(self) -> Trailer:
        n, path = len(self.data), self.path
        if n < TRAILER_SIZE:
            raise _bad(f"the file has {n:,} bytes, fewer than the {TRAILER_SIZE:,}-byte trailer", path)
        start = n - TRAILER_SIZE
        if bytes(self.data[start:start + MAGIC_LENGTH]) != TRAILER_MAGIC:
            raise _bad(f"no trailer magic {TRAILER_MAGIC!r} {TRAILER_SIZE:,} bytes before the end "
                       f"(found {bytes(self.data[start:start + MAGIC_LENGTH])!r})", path)
        minor = self.data[n - 4]
        major = int.from_bytes(self.data[n - 3:n], "big")
        if major != MAJOR_VERSION:
            raise _bad(f"major version {major} (minor {minor}); only HFile version {MAJOR_VERSION} is read", path)
        body_end = n - 4
        length, pos = _pb_varint(self.data, start + MAGIC_LENGTH, body_end, "the trailer", path)
        if length > body_end - pos:
            raise _bad(f"the trailer's protobuf declares {length:,} bytes where {body_end - pos:,} remain", path)
        ints = {1: "file_info_offset", 2: "load_on_open_data_offset", 3: "uncompressed_data_index_size",
                4: "total_uncompressed_bytes", 5: "data_index_count", 6: "meta_index_count", 7: "entry_count",
                8: "num_data_index_levels", 9: "first_data_block_offset", 10: "last_data_block_offset",
                12: "compression_codec"}
        values: dict[str, object] = {}
        for number, wire, value in _pb_fields(self.data, pos, pos + length, "the trailer", path):
            if number in ints:
                if wire != 0:
                    raise _bad(f"trailer field {ints[number]} has wire type {wire}, not a varint", path)
                values[ints[number]] = value
            elif number in (11, 13):
                if wire != 2:
                    raise _bad(f"trailer field {number} has wire type {wire}, not length-delimited", path)
                if number == 11:
                    try:
                        values["comparator_class_name"] = bytes(value).decode("utf-8")
                    except UnicodeDecodeError:
                        raise _bad("the trailer's comparator class name is not UTF-8", path) from None
                else:
                    values["encryption_key"] = bytes(value)
            # unknown fields are skipped, as protobuf does
        return Trailer(major_version=major, minor_version=minor, **values)

    def read_header(self, offset: int, end: int | None = None) -> BlockHeader:
        """The header of the block at ``offset``, its sizes checked against ``end`` (default: the trailer)."""
        end = self.section_end if end is None else end
        path = self.path
        if offset < 0 or offset + HEADER_SIZE > end:
            raise _bad(f"a block header at offset {offset:,} would run past byte {end:,}", path)
        magic = bytes(self.data[offset:offset + MAGIC_LENGTH])
        if magic not in BLOCK_MAGICS:
            raise _bad(f"unknown block magic {magic!r} at offset {offset:,}", path)
        on_disk, uncompressed, prev, ctype, per_checksum, data_size = struct.unpack_from(
            ">iiqBii", self.data, offset + MAGIC_LENGTH)
        h = BlockHeader(offset, magic, on_disk, uncompressed, prev, ctype, per_checksum, data_size)
        if on_disk < 0 or offset + h.on_disk_size > end:
            raise _bad(f"the {magic.decode('latin-1')} block at offset {offset:,} declares {on_disk:,} bytes on disk, "
                       f"past byte {end:,}", path)
        if not HEADER_SIZE <= data_size <= h.on_disk_size:
            raise _bad(f"the {magic.decode('latin-1')} block at offset {offset:,} declares {data_size:,} bytes of "
                       f"header and data, outside its {h.on_disk_size:,} bytes on disk", path)
        if uncompressed < 0 or uncompressed > self.max_block_bytes:
            raise _bad(f"the {magic.decode('latin-1')} block at offset {offset:,} declares {uncompressed:,} "
                       f"uncompressed bytes (at most {self.max_block_bytes:,} are allowed)", path)
        if per_checksum <= 0:
            raise _bad(f"the block at offset {offset:,} declares {per_checksum} bytes per checksum", path)
        return h

    def _payload(self, h: BlockHeader) -> bytes:
        """A block's uncompressed payload: inflated to exactly its declared size, never more."""
        raw = bytes(self.data[h.offset + HEADER_SIZE:h.offset + h.on_disk_data_size_with_header])
        what = f"the {h.magic.decode('latin-1')} block at offset {h.offset:,}"
        codec = self.trailer.codec
        if codec == "none":
            if len(raw) != h.uncompressed_size_without_header:
                raise _bad(f"{what} is uncompressed but holds {len(raw):,} bytes, not the "
                           f"{h.uncompressed_size_without_header:,} it declares", self.path)
            return raw
        out = inflate(codec, raw, what=what, path=self.path, rule=RULE, limit=h.uncompressed_size_without_header)
        if len(out) != h.uncompressed_size_without_header:
            raise _bad(f"{what} inflates to {len(out):,} bytes, not the {h.uncompressed_size_without_header:,} "
                       f"it declares", self.path)
        return out

    def _block(self, offset: int, magic: bytes, what: str, end: int | None = None) -> tuple[BlockHeader, bytes]:
        h = self.read_header(offset, end)
        if h.magic != magic:
            raise _bad(f"expected the {what} ({magic.decode('latin-1')}) at offset {offset:,}, found "
                       f"{h.magic.decode('latin-1')}", self.path)
        return h, self._payload(h)

    def _root_index(self, payload: bytes, count: int, what: str, offset: int) -> list[IndexEntry]:
        # each entry takes at least 13 bytes (offset, size, a one-byte key length): a count the payload cannot
        # hold is refused before any list grows
        if count < 0 or count * 13 > len(payload):
            raise _bad(f"the {what} at offset {offset:,} is said to hold {count:,} entries in "
                       f"{len(payload):,} bytes", self.path)
        entries, pos, n = [], 0, len(payload)
        for i in range(count):
            if pos + 12 > n:
                raise _bad(f"the {what} at offset {offset:,} ends inside entry {i}", self.path)
            block_offset, size = struct.unpack_from(">qi", payload, pos)
            klen, pos = read_vlong(payload, pos + 12, n, f"the {what}", self.path)
            if klen < 0 or klen > n - pos:
                raise _bad(f"entry {i} of the {what} at offset {offset:,} declares a key of {klen:,} bytes where "
                           f"{n - pos:,} remain", self.path)
            entries.append(IndexEntry(block_offset, size, payload[pos:pos + klen]))
            pos += klen
        return entries

    def _file_info(self, payload: bytes, offset: int) -> dict[str, bytes]:
        if payload[:4] != PB_MAGIC:
            raise _bad(f"the file info at offset {offset:,} does not start with {PB_MAGIC!r}", self.path)
        length, pos = _pb_varint(payload, 4, len(payload), "the file info", self.path)
        if length > len(payload) - pos:
            raise _bad(f"the file info declares {length:,} bytes where {len(payload) - pos:,} remain", self.path)
        info: dict[str, bytes] = {}
        for number, wire, entry in _pb_fields(payload, pos, pos + length, "the file info", self.path):
            if number != 1 or wire != 2:
                continue
            pair = {k: bytes(v) for k, w, v in _pb_fields(entry, 0, len(entry), "a file info entry", self.path)
                    if w == 2}
            if 1 not in pair or 2 not in pair:
                raise _bad("a file info entry lacks its name or its value", self.path)
            try:
                info[pair[1].decode("utf-8")] = pair[2]
            except UnicodeDecodeError:
                raise _bad(f"a file info name is not UTF-8: {pair[1][:40]!r}", self.path) from None
        return info

    def _check_mvcc(self) -> None:
        # HFileInfo: KEY_VALUE_VERSION 1 means cells carry MVCC timestamps; a maximum above 0 means some are
        # non-zero, which Hudi never writes and its reader refuses
        version = self.file_info.get(KEY_VALUE_VERSION)
        if version is not None and len(version) >= 4 and struct.unpack_from(">i", version)[0] == 1:
            ts = self.file_info.get(MAX_MEMSTORE_TS_KEY, b"")
            if len(ts) < 8:
                raise _bad(f"the file info's {MAX_MEMSTORE_TS_KEY} is {len(ts)} bytes, not 8", self.path)
            if struct.unpack_from(">q", ts)[0] > 0:
                raise Unsupported("HFile cells carry MVCC timestamps, which Hudi never writes",
                                  feature="hfile-mvcc", path=self.path)

    def _check_index(self) -> None:
        t, end = self.trailer, self.section_end
        if t.entry_count < 0 or t.num_data_index_levels < 1:
            raise _bad(f"the trailer declares {t.entry_count} entries and {t.num_data_index_levels} index levels",
                       self.path)
        for what, entries in (("data", self.data_index), ("meta", self.meta_index)):
            for e in entries:
                if e.offset < 0 or e.size < HEADER_SIZE or e.offset + e.size > end:
                    raise _bad(f"the {what} index points at {e.size:,} bytes at offset {e.offset:,}, outside the "
                               f"{end:,} bytes before the trailer", self.path)
        if t.entry_count and not self.data_index:
            raise _bad(f"the trailer declares {t.entry_count:,} cells but the data index is empty", self.path)

    # -- content

    def data_block_headers(self) -> Iterator[BlockHeader]:
        """Headers of the data blocks in file order.

        With a one-level index the root index lists them; with more levels (HBase) the scanned section is walked
        from the first data block to the last, skipping leaf-index and Bloom-chunk blocks between them.
        """
        t = self.trailer
        if t.entry_count == 0:
            return
        if t.num_data_index_levels == 1:
            previous = -1
            for e in self.data_index:
                if e.offset <= previous:
                    raise _bad(f"the data index is not in file order (offset {e.offset:,} after {previous:,})",
                               self.path)
                h = self.read_header(e.offset)
                if h.magic != DATA_MAGIC:
                    self._not_data(h)
                if h.on_disk_size != e.size:
                    raise _bad(f"the data index gives {e.size:,} bytes for the block at offset {e.offset:,}, "
                               f"its header {h.on_disk_size:,}", self.path)
                previous = e.offset
                yield h
            return
        pos, last = t.first_data_block_offset, t.last_data_block_offset
        if not 0 <= pos <= last < self.section_end:
            raise _bad(f"the first and last data block offsets {pos:,} and {last:,} are outside the file", self.path)
        while pos <= last:
            h = self.read_header(pos, t.load_on_open_data_offset)
            if h.magic == DATA_MAGIC:
                yield h
            elif h.magic not in (LEAF_INDEX_MAGIC, BLOOM_CHUNK_MAGIC):
                self._not_data(h)
            pos += h.on_disk_size

    def _not_data(self, h: BlockHeader) -> None:
        if h.magic == ENCODED_DATA_MAGIC:
            raise Unsupported(f"the data block at offset {h.offset:,} is encoded (DATABLKE), which Hudi never writes",
                              feature="hfile-data-block-encoding", path=self.path)
        raise _bad(f"expected a data block at offset {h.offset:,}, found {h.magic.decode('latin-1')}", self.path)

    def _cells(self, h: BlockHeader) -> Iterator[Cell]:
        payload = self._payload(h)
        pos, n, path = 0, len(payload), self.path
        while pos < n:
            if pos + 8 > n:
                raise _bad(f"the data block at offset {h.offset:,} ends inside a cell's lengths", path)
            klen, vlen = struct.unpack_from(">ii", payload, pos)
            pos += 8
            if klen < _KEY_FIXED or vlen < 0 or klen + vlen > n - pos:
                raise _bad(f"a cell in the data block at offset {h.offset:,} declares a {klen:,}-byte key and a "
                           f"{vlen:,}-byte value where {n - pos:,} bytes remain", path)
            key = payload[pos:pos + klen]
            row = row_of_key(key, "a cell key", path)
            if 2 + len(row) + 1 > klen - 9:
                raise _bad(f"a cell key in the data block at offset {h.offset:,} is too short for its row", path)
            family = key[2 + len(row)]
            if 2 + len(row) + 1 + family + 9 > klen:
                raise _bad(f"a cell key in the data block at offset {h.offset:,} is too short for its family", path)
            timestamp, key_type = struct.unpack_from(">qB", key, klen - 9)
            value = payload[pos + klen:pos + klen + vlen]
            pos += klen + vlen
            if self.has_tags:
                if pos + 2 > n:
                    raise _bad(f"the data block at offset {h.offset:,} ends inside a cell's tags length", path)
                tlen = struct.unpack_from(">H", payload, pos)[0]
                if tlen > n - pos - 2:
                    raise _bad(f"a cell's tags run past the data block at offset {h.offset:,}", path)
                pos += 2 + tlen
            _mvcc, pos = read_vlong(payload, pos, n, f"the data block at offset {h.offset:,}", path)
            yield Cell(row, value, timestamp, key_type)

    def __iter__(self) -> Iterator[Cell]:
        """Every cell, in key order; checks the order and the trailer's cell count as it goes."""
        count, previous = 0, None
        for h in self.data_block_headers():
            for cell in self._cells(h):
                if previous is not None and cell.key < previous:
                    raise _bad(f"keys are out of order: {cell.key[:60]!r} after {previous[:60]!r}", self.path)
                previous = cell.key
                count += 1
                if count > self.trailer.entry_count:
                    raise _bad(f"the data blocks hold more than the {self.trailer.entry_count:,} cells the trailer "
                               f"declares", self.path)
                yield cell
        if count != self.trailer.entry_count:
            raise _bad(f"the data blocks hold {count:,} cells, the trailer declares {self.trailer.entry_count:,}",
                       self.path)

    def items(self) -> list[tuple[bytes, bytes]]:
        """(row key, value) of every cell."""
        return [(c.key, c.value) for c in self]

    def meta_block(self, name: str) -> bytes | None:
        """The uncompressed content of the named meta block (e.g. ``bloomFilter``), None when there is none."""
        wanted = name.encode("utf-8")
        for e in self.meta_index:
            if e.key == wanted:
                h, payload = self._block(e.offset, META_MAGIC, f"meta block {name!r}")
                if h.on_disk_size != e.size:
                    raise _bad(f"the meta index gives {e.size:,} bytes for {name!r}, its header {h.on_disk_size:,}",
                               self.path)
                return payload
        return None

    @property
    def meta_block_names(self) -> list[str]:
        return [e.key.decode("utf-8", "replace") for e in self.meta_index]

    @property
    def last_key(self) -> bytes | None:
        """The row of ``hfile.LASTKEY``."""
        raw = self.file_info.get(LAST_KEY)
        return None if raw is None else row_of_key(raw, LAST_KEY, self.path)

    @property
    def schema(self) -> str | None:
        """The Avro schema (JSON text) Hudi's writer records for the values, if any."""
        raw = self.file_info.get(SCHEMA_KEY)
        if raw is None:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _bad("the file info's schema is not UTF-8", self.path) from None


def read_hfile(data: bytes, *, path: str | None = None) -> list[tuple[bytes, bytes]]:
    """Every (row key, value) of an HFile, in key order."""
    return HFile(data, path=path).items()


# ---------------------------------------------------------------------------------------------
# Writer (test inputs): the layout of Hudi 1.2's HFileWriterImpl, as its files show it


def _gzip(payload: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = bytearray(c.compress(payload) + c.flush())
    out[9] = 0xFF  # the GZIP header's OS byte: java.util.zip writes "unknown", zlib its own platform
    return bytes(out)


def _compress(payload: bytes, codec: str) -> bytes:
    if codec == "gzip":
        return _gzip(payload)
    if codec == "none":
        return payload
    if codec == "bzip2":
        import bz2
        return bz2.compress(payload)
    if codec == "zstd":
        import zstandard
        return zstandard.ZstdCompressor().compress(payload)
    raise ValueError(f"the HFile writer does not compress with {codec!r}")


def encode_block(magic: bytes, payload: bytes, codec: str = "gzip", *, checksum_bytes: bool = True) -> bytes:
    """One block: header, compressed payload, checksum bytes (zeros with checksum type NULL, as Hudi 1.2 writes)."""
    body = _compress(payload, codec)
    data_size = HEADER_SIZE + len(body)
    chunks = -(-data_size // DEFAULT_BYTES_PER_CHECKSUM) if checksum_bytes else 0
    checksums = b"\x00" * (CHECKSUM_SIZE * chunks)
    header = magic + struct.pack(">iiqBii", len(body) + len(checksums), len(payload), -1, 0,
                                 DEFAULT_BYTES_PER_CHECKSUM, data_size)
    return header + body + checksums


def _root_index_payload(entries: Iterable[IndexEntry]) -> bytes:
    out = bytearray()
    for e in entries:
        out += struct.pack(">qi", e.offset, e.size) + write_vlong(len(e.key)) + e.key
    return bytes(out)


def _java_string_hash(text: str) -> int:
    h = 0
    for unit in struct.unpack(f">{len(text.encode('utf-16-be')) // 2}H", text.encode("utf-16-be")):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h


def java_hash_map_order(keys: Iterable[str]) -> list[str]:
    """``keys`` (in insertion order) in the order a ``java.util.HashMap<String, ...>`` iterates them.

    Hudi's writer keeps the file info in a HashMap, so its entries come out by hash bucket (verified on Hudi 1.2
    files); matching that order makes this writer's file info byte-identical to Hudi's.
    """
    keys = list(keys)
    capacity = 16
    while len(keys) > capacity * 3 // 4:  # HashMap resizes past a 0.75 load factor
        capacity *= 2

    def bucket(k: str) -> int:
        h = _java_string_hash(k)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # stable: a bucket's keys stay in insertion order


def encode_file_info(info: Mapping[str, bytes]) -> bytes:
    """The file info payload: ``PBUF`` and a varint-delimited ``InfoProto``."""
    pairs = b"".join(_pb_put(1, _pb_put(1, k.encode("utf-8")) + _pb_put(2, bytes(v))) for k, v in info.items())
    return PB_MAGIC + _pb_put_varint(len(pairs)) + pairs


def write_hfile(cells: Iterable[tuple[bytes, bytes]], *, compression: str = "gzip", block_size: int = 64 * 1024,
                file_info: Mapping[str, bytes] | None = None, meta_blocks: Mapping[str, bytes] | None = None,
                comparator: str = HUDI_COMPARATOR, checksum_bytes: bool = True, create_time_ms: int = 0,
                with_tags: bool = False) -> bytes:
    """An HFile v3 of ``cells`` (row key, value), laid out as Hudi 1.2's writer lays out the metadata table's files.

    Cells must come sorted by key (Hudi sorts before writing). As Hudi's writer does, a data block is closed
    before a cell whose row and value (plus 9) would take the block's running total past ``block_size``. Keys
    get timestamp ``LATEST_TIMESTAMP`` and type Put; the data index and ``hfile.LASTKEY`` hold the row with its
    length. ``meta_blocks`` (e.g. ``bloomFilter``) go after the data blocks; ``file_info`` adds to the file info
    (e.g. ``schema``) and may override the entries the writer always makes. ``with_tags`` writes cells as HBase
    does with tags on (an empty tags length after each value; Hudi never does), for readers to be tested on.
    """
    if compression not in CODEC_IDS:
        raise ValueError(f"unknown HFile codec {compression!r}")
    out = bytearray()
    index: list[IndexEntry] = []
    block = bytearray()
    first_row: bytes | None = None
    last_row = b""
    count = data_bytes = running = key_total = value_total = 0
    previous: bytes | None = None

    def flush() -> None:
        nonlocal block, first_row, running
        if not block:
            return
        encoded = encode_block(DATA_MAGIC, bytes(block), compression, checksum_bytes=checksum_bytes)
        index.append(IndexEntry(len(out), len(encoded), short_key(first_row or b"")))
        out.extend(encoded)
        block, first_row, running = bytearray(), None, 0

    for row, value in cells:
        row, value = bytes(row), bytes(value)
        if previous is not None and row < previous:
            raise ValueError(f"HFile cells must be sorted by key: {row!r} after {previous!r}")
        previous = row
        if block and running + len(row) + len(value) + 9 > block_size:
            flush()
        key = make_key(row)
        tags = b"\x00\x00" if with_tags else b""
        cell = struct.pack(">ii", len(key), len(value)) + key + value + tags + b"\x00"  # MVCC timestamp 0
        if first_row is None:
            first_row = row
        block += cell
        running += len(row) + len(value) + 9
        last_row = row
        count += 1
        data_bytes += len(cell)
        key_total += len(row)
        value_total += len(value)
    flush()

    meta_index: list[IndexEntry] = []
    for name in sorted(meta_blocks or {}):  # the meta index is searched as a sorted map
        encoded = encode_block(META_MAGIC, bytes(meta_blocks[name]), compression, checksum_bytes=checksum_bytes)
        meta_index.append(IndexEntry(len(out), len(encoded), name.encode("utf-8")))
        out.extend(encoded)

    load_on_open = len(out)
    out += encode_block(ROOT_INDEX_MAGIC, _root_index_payload(index), compression, checksum_bytes=checksum_bytes)
    out += encode_block(ROOT_INDEX_MAGIC, _root_index_payload(meta_index), compression,
                        checksum_bytes=checksum_bytes)
    info = dict(file_info or {})
    if with_tags:
        info.setdefault(MAX_TAGS_LEN, struct.pack(">i", 0))
    # the caller's entries first (Hudi adds its own before the writer's) and winning
    for k, v in {
        LAST_KEY: short_key(last_row),
        "hfile.AVG_KEY_LEN": struct.pack(">i", key_total // count if count else 0),
        "hfile.AVG_VALUE_LEN": struct.pack(">i", value_total // count if count else 0),
        KEY_VALUE_VERSION: struct.pack(">i", 1),
        MAX_MEMSTORE_TS_KEY: struct.pack(">q", 0),
        "hfile.CREATE_TIME_TS": struct.pack(">q", create_time_ms),
    }.items():
        info.setdefault(k, v)
    info = {k: info[k] for k in java_hash_map_order(info)}
    file_info_offset = len(out)
    out += encode_block(FILE_INFO_MAGIC, encode_file_info(info), compression, checksum_bytes=checksum_bytes)

    # field order and presence as in Hudi 1.2's files: no total_uncompressed_bytes (4), no encryption key (13)
    proto = b"".join([
        _pb_put(1, file_info_offset), _pb_put(2, load_on_open), _pb_put(3, data_bytes),
        _pb_put(5, len(index)), _pb_put(6, len(meta_index)), _pb_put(7, count), _pb_put(8, 1),
        _pb_put(9, index[0].offset if index else 0), _pb_put(10, index[-1].offset if index else 0),
        _pb_put(11, comparator.encode("utf-8")), _pb_put(12, CODEC_IDS[compression]),
    ])
    trailer = bytearray(TRAILER_SIZE)
    body = TRAILER_MAGIC + _pb_put_varint(len(proto)) + proto
    if len(body) > TRAILER_SIZE - 4:
        raise ValueError("the HFile trailer does not fit in 4096 bytes")
    trailer[:len(body)] = body
    trailer[-4:] = bytes([0]) + MAJOR_VERSION.to_bytes(3, "big")  # minor 0, major 3
    out += trailer
    return bytes(out)
