"""Hudi log files (reference_impl.hudi.logfile): block framing from the spec's facts, Java's golden bytes, content of
Avro, Parquet, delete and command blocks, corrupt-block recovery as HoodieLogFileReader does it, and bounded reads."""

from __future__ import annotations

import decimal
import hashlib
import json
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.errors import Internal, InvalidTable, Unsupported
from reference_impl.hudi import logfile as L

H = L.HeaderKey

# apache/hudi-rs crates/core/tests/data/log_files/valid_log_rollback/.0712b9f9-..._20250126040823628.log.2_1-0-1
# (written by Java): one rollback command block, header in Java's HashMap order INSTANT_TIME, COMMAND_BLOCK_TYPE,
# TARGET_INSTANT_TIME.
JAVA_ROLLBACK_LOG = bytes.fromhex(
    "234855444923000000000000005b00000001000000000000000300000000000000113230323530313236303430393336353738"
    "000000030000000130000000010000001132303235303132363034303832363837380000000000000000000000000000000000"
    "000061")
# The content of a delete block Hudi 1.2.0 wrote (table version 6, `_hoodie_is_deleted` upsert of key k2 with
# ts = 1234567890123): version 3, length 22, HoodieDeleteRecordList with one record, orderingVal a LongWrapper.
JAVA_DELETE_CONTENT = bytes.fromhex("00000003000000160202046b32020e706172743d7031069693d89fee4700")
# apache/hudi-rs#663: the delete records of table_delete_ord_long, keys "4" and "3", empty partition paths,
# ordering values 4000 and 3000 as LongWrapper (union branch 3).
HUDI_RS_663_RECORDS = bytes.fromhex("04020234020006c03e02023302000 6f02e00".replace(" ", ""))

# The Avro data block Hudi 1.2.0 wrote for an upsert of k1 (table version 6, a file of its own: 966 bytes): its
# header is SCHEMA then INSTANT_TIME, its content the hex below, and the whole file hashes to JAVA_AVRO_SHA256.
JAVA_AVRO_SCHEMA = ('{"type":"record","name":"v6_avro_record","namespace":"hoodie.v6_avro","fields":['
                    + ",".join('{"name":"%s","type":["null","string"],"doc":"","default":null}' % n for n in (
                        "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                        "_hoodie_file_name"))
                    + ',{"name":"id","type":["null","string"],"default":null}'
                    + ',{"name":"ts","type":["null","long"],"default":null}'
                    + ',{"name":"name","type":["null","string"],"default":null}'
                    + ',{"name":"price","type":["null","double"],"default":null}'
                    + ',{"name":"part","type":["null","string"],"default":null}]}')
JAVA_AVRO_CONTENT = bytes.fromhex(
    "00000003000000010000007602223230323631313236313130383136313636022a32303236313132363131303831363136365f305f33"
    "02046b31020e706172743d7031024c33303666323365352d343562302d343430312d383331342d3461656633633433646230652d3002"
    "046b3102080204613402000000000000fc3f02047031")
JAVA_AVRO_SHA256 = "15298e4bcf540aaf34663baa1af7f56968bb20f5d233bb35d32f29128d9657c7"
JAVA_AVRO_RECORD = {"_hoodie_commit_time": "20261126110816166", "_hoodie_commit_seqno": "20261126110816166_0_3",
                    "_hoodie_record_key": "k1", "_hoodie_partition_path": "part=p1",
                    "_hoodie_file_name": "306f23e5-45b0-4401-8314-4aef3c43db0e-0", "id": "k1", "ts": 4, "name": "a4",
                    "price": 1.75, "part": "p1"}

SCHEMA = json.dumps({"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "", "default": None},
    {"name": "_hoodie_record_key", "type": ["null", "string"], "doc": "", "default": None},
    {"name": "id", "type": "string"},
    {"name": "ts", "type": ["null", "long"], "default": None},
    {"name": "price", "type": ["null", "double"], "default": None},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
]}, separators=(",", ":"))
ROWS = [
    {"_hoodie_commit_time": "20261126110808854", "_hoodie_record_key": "k1", "id": "k1", "ts": 2, "price": 1.5,
     "tags": ["a", "b"]},
    {"_hoodie_commit_time": None, "_hoodie_record_key": "k3", "id": "k3", "ts": None, "price": None, "tags": []},
]


def avro_block(instant: str = "20261126110808854", rows=ROWS) -> bytes:
    return L.avro_data_block(rows, SCHEMA, instant_time=instant)


def three_blocks() -> tuple[bytes, list[int]]:
    """An Avro block, a delete block and a rollback block, and where each starts."""
    parts = [avro_block("001"), L.delete_block([L.DeleteRecord(record_key="k1", partition_path="p", ordering_value=5,
                                                              ordering_type="long")], instant_time="002",
                                               schema_json=SCHEMA),
             L.rollback_block(instant_time="003", target_instant_time="001")]
    starts, pos = [], 0
    for p in parts:
        starts.append(pos)
        pos += len(p)
    return b"".join(parts), starts


# ---------------------------------------------------------------------------------------------
# Java's bytes


@pytest.mark.rule("HUDI-LOG-001", "HUDI-LOG-002", "HUDI-LOG-003", "HUDI-LOG-004", "HUDI-LOG-005", "HUDI-LOG-006",
                  "HUDI-LOG-009", "HUDI-LOG-013")
def test_reads_and_rewrites_a_java_rollback_block():
    (block,) = L.read_log_file(JAVA_ROLLBACK_LOG)
    assert block.block_type is L.BlockType.COMMAND and block.format_version == 1
    assert list(block.header) == [H.INSTANT_TIME, H.COMMAND_BLOCK_TYPE, H.TARGET_INSTANT_TIME]
    assert block.instant_time == "20250126040936578" and block.target_instant_time == "20250126040826878"
    assert block.is_rollback and block.content == b"" and block.footer == {}
    assert block.length == len(JAVA_ROLLBACK_LOG)
    # the header order is the file's; written back in that order the bytes are Java's
    assert L.reencode_block(block) == JAVA_ROLLBACK_LOG
    assert L.rollback_block(instant_time=block.instant_time, target_instant_time=block.target_instant_time,
                            header=block.header) == JAVA_ROLLBACK_LOG
    # the default order (ordinal order of a fresh writer) differs only in the header's order
    fresh = L.rollback_block(instant_time="20250126040936578", target_instant_time="20250126040826878")
    assert len(fresh) == len(JAVA_ROLLBACK_LOG) and fresh != JAVA_ROLLBACK_LOG


@pytest.mark.rule("HUDI-LOG-005", "HUDI-LOG-006", "HUDI-LOG-008")
def test_writer_reproduces_a_java_avro_data_block():
    assert L.decode_avro_content(JAVA_AVRO_CONTENT, JAVA_AVRO_SCHEMA) == [JAVA_AVRO_RECORD]
    assert L.encode_avro_content([JAVA_AVRO_RECORD], JAVA_AVRO_SCHEMA) == JAVA_AVRO_CONTENT
    header = {H.SCHEMA: JAVA_AVRO_SCHEMA, H.INSTANT_TIME: "20261126110816166"}
    data = L.avro_data_block([JAVA_AVRO_RECORD], JAVA_AVRO_SCHEMA, instant_time="20261126110816166", header=header)
    assert len(data) == 966 and hashlib.sha256(data).hexdigest() == JAVA_AVRO_SHA256
    (block,) = L.read_log_file(data)
    assert block.records == [JAVA_AVRO_RECORD] and list(block.header) == [H.SCHEMA, H.INSTANT_TIME]


@pytest.mark.rule("HUDI-LOG-010")
def test_delete_content_of_java_bytes_round_trips():
    records = L.decode_delete_content(JAVA_DELETE_CONTENT)
    assert records == [L.DeleteRecord(record_key="k2", partition_path="part=p1", ordering_value=1234567890123,
                                      ordering_type="long")]
    assert L.encode_delete_content(records) == JAVA_DELETE_CONTENT


@pytest.mark.rule("HUDI-LOG-010")
def test_delete_ordering_value_is_a_union_of_wrappers_not_of_primitives():
    # hudi-rs 0.5 read branch 3 as float (a union of primitives); Hudi writes LongWrapper there.
    content = struct.pack(">ii", 3, len(HUDI_RS_663_RECORDS)) + HUDI_RS_663_RECORDS
    records = L.decode_delete_content(content)
    assert [(r.record_key, r.partition_path, r.ordering_value, r.ordering_type) for r in records] == [
        ("4", "", 4000, "long"), ("3", "", 3000, "long")]
    assert L.encode_delete_content(records) == content


# ---------------------------------------------------------------------------------------------
# Framing from the spec's facts


@pytest.mark.rule("HUDI-LOG-001", "HUDI-LOG-002", "HUDI-LOG-003", "HUDI-LOG-004", "HUDI-LOG-005", "HUDI-LOG-006",
                  "HUDI-LOG-013")
def test_block_layout_field_by_field():
    data = L.encode_block(L.BlockType.AVRO_DATA, {H.INSTANT_TIME: "001", H.SCHEMA: "{}"}, b"xyz")
    assert data[:6] == b"#HUDI#"
    (size,) = struct.unpack_from(">q", data, 6)
    assert size == len(data) - 14  # everything after the size field
    assert struct.unpack_from(">ii", data, 14) == (1, 3)  # format version 1, AVRO_DATA is ordinal 3
    # header: count, then (ordinal, length, UTF-8 bytes) per entry, no 8-byte header length before it
    assert data[22:26] == struct.pack(">i", 2)
    assert data[26:37] == struct.pack(">ii", 0, 3) + b"001"
    assert data[37:47] == struct.pack(">ii", 2, 2) + b"{}"
    assert data[47:55] == struct.pack(">q", 3) and data[55:58] == b"xyz"
    assert data[58:62] == struct.pack(">i", 0)  # empty footer
    assert struct.unpack_from(">q", data, 62) == (len(data) - 8,) == (size + 6,)  # the reverse pointer
    assert len(data) == 70


@pytest.mark.rule("HUDI-LOG-004", "HUDI-LOG-005")
def test_enum_ordinals_are_the_java_ones():
    assert [t.name for t in sorted(L.BlockType)] == ["COMMAND", "DELETE", "CORRUPT", "AVRO_DATA", "HFILE_DATA",
                                                     "PARQUET_DATA", "CDC_DATA"]
    assert [int(t) for t in sorted(L.BlockType)] == list(range(7))
    assert [k.name for k in sorted(H)] == ["INSTANT_TIME", "TARGET_INSTANT_TIME", "SCHEMA", "COMMAND_BLOCK_TYPE",
                                           "COMPACTED_BLOCK_TIMES", "RECORD_POSITIONS", "BLOCK_IDENTIFIER",
                                           "IS_PARTIAL", "BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS"]
    assert [int(k) for k in sorted(H)] == list(range(9))


@pytest.mark.rule("HUDI-LOG-005")
def test_header_values_are_utf8_and_keep_their_order():
    header = {H.SCHEMA: "{\"doc\":\"é\"}", H.INSTANT_TIME: "001", H.IS_PARTIAL: "true"}
    data = L.encode_block(L.BlockType.COMMAND, header, b"")
    (block,) = L.read_log_file(data, decode=False)
    assert list(block.header.items()) == list(header.items())
    assert struct.pack(">ii", 2, len("{\"doc\":\"é\"}".encode())) in data


# ---------------------------------------------------------------------------------------------
# Content


@pytest.mark.rule("HUDI-LOG-008")
def test_avro_data_block_round_trips_and_has_four_byte_lengths():
    data = avro_block()
    (block,) = L.read_log_file(data)
    assert block.block_type is L.BlockType.AVRO_DATA and block.schema == SCHEMA
    assert block.records == ROWS
    assert struct.unpack_from(">ii", block.content, 0) == (3, 2)  # block version 3, two records
    (first,) = struct.unpack_from(">i", block.content, 8)
    (second,) = struct.unpack_from(">i", block.content, 12 + first)
    assert 12 + first + 4 + second == len(block.content)  # 4-byte lengths, nothing after the last record
    assert L.encode_avro_content(block.records, block.schema) == block.content


@pytest.mark.rule("HUDI-LOG-004", "HUDI-LOG-008")
def test_cdc_block_content_is_avro():
    content = L.encode_avro_content(ROWS, SCHEMA)
    data = L.encode_block(L.BlockType.CDC_DATA, {H.INSTANT_TIME: "1", H.SCHEMA: SCHEMA}, content)
    (block,) = L.read_log_file(data)
    assert block.block_type is L.BlockType.CDC_DATA and block.records == ROWS


@pytest.mark.rule("HUDI-LOG-004")
def test_parquet_data_block_holds_a_parquet_file(monkeypatch):
    table = pa.table({"id": ["k1", "k2"], "ts": [1, 2]})
    parquet = L.encode_parquet_content(table)
    data = L.parquet_data_block(parquet, SCHEMA, instant_time="001")
    (block,) = L.read_log_file(data)
    assert block.block_type is L.BlockType.PARQUET_DATA and block.content == parquet
    assert block.records.equals(table)
    assert L.reencode_block(block) == data
    monkeypatch.setenv("LAKECONF_MAX_INFLATE_BYTES", "16")
    with pytest.raises(InvalidTable, match="inflates"):
        L.read_log_file(data)
    bad = L.encode_block(L.BlockType.PARQUET_DATA, {H.INSTANT_TIME: "1"}, b"PAR1 not parquet PAR1")
    with pytest.raises(InvalidTable, match="Parquet"):
        L.read_log_file(bad)


@pytest.mark.rule("HUDI-LOG-010")
@pytest.mark.parametrize("kind, value", [
    ("boolean", True), ("int", -7), ("long", 1 << 40), ("float", 1.5), ("double", -2.25), ("bytes", b"\x00\xff"),
    ("string", "zürich"), ("date", 19000), ("decimal", decimal.Decimal("-12.345")), ("time_micros", 3600000000),
    ("timestamp_micros", 1764154000000000), (None, None)])
def test_delete_ordering_values_of_every_wrapper_round_trip(kind, value):
    rec = L.DeleteRecord(record_key="k", partition_path=None, ordering_value=value, ordering_type=kind)
    content = L.encode_delete_content([rec])
    (back,) = L.decode_delete_content(content)
    assert back.ordering_type == kind and back.partition_path is None
    assert back.ordering_value == value
    assert L.encode_delete_content([back]) == content
    # the union branch is the wrapper's place after null: boolean 1 ... timestamp-micros 11
    branch = 0 if kind is None else L.ORDERING_TYPES.index(kind) + 1
    assert content[8 + 1 + 1 + 1 + 1 + 1] == branch * 2  # count, key branch+len+"k", null partition, then branch


@pytest.mark.rule("HUDI-LOG-010")
def test_decimal_ordering_value_is_scale_15_minimal_twos_complement():
    rec = L.DeleteRecord(record_key=None, partition_path=None, ordering_value=decimal.Decimal("1"),
                         ordering_type="decimal")
    content = L.encode_delete_content([rec])
    # 10^15 = 0x038d7ea4c68000: 7 bytes (the top bit is clear, no sign byte needed)
    assert content.endswith(bytes([2 * 9, 2 * 7]) + bytes.fromhex("038d7ea4c68000") + b"\x00")


@pytest.mark.rule("HUDI-LOG-010")
def test_empty_delete_list_and_trailing_bytes():
    assert L.encode_delete_content([]) == struct.pack(">ii", 3, 1) + b"\x00"
    assert L.decode_delete_content(L.encode_delete_content([])) == []
    with pytest.raises(InvalidTable, match="follow the record list"):
        L.decode_delete_content(struct.pack(">ii", 3, 2) + b"\x00\x00")


@pytest.mark.rule("HUDI-LOG-010")
def test_kryo_delete_blocks_are_unsupported_with_a_reason():
    for version in (1, 2):
        with pytest.raises(Unsupported, match="Kryo") as exc:
            L.decode_delete_content(struct.pack(">ii", version, 4) + b"\xac\xed\x00\x05")
        assert exc.value.feature == "delete-block-kryo"


@pytest.mark.rule("HUDI-LOG-009")
def test_command_block_has_no_content():
    data = L.encode_block(L.BlockType.COMMAND, {H.INSTANT_TIME: "1", H.COMMAND_BLOCK_TYPE: "0",
                                                H.TARGET_INSTANT_TIME: "0"}, b"x")
    with pytest.raises(InvalidTable, match="content bytes") as exc:
        L.read_log_file(data)
    assert exc.value.rule == "HUDI-LOG-009"


@pytest.mark.rule("HUDI-LOG-009", "HUDI-LOG-007")
def test_valid_blocks_drops_rolled_back_and_corrupt_blocks():
    data, _ = three_blocks()
    blocks = L.read_log_file(data + b"#HUDI#" + b"\x00" * 5)  # a torn block at the end
    assert [b.block_type for b in blocks] == [L.BlockType.AVRO_DATA, L.BlockType.DELETE, L.BlockType.COMMAND,
                                              L.BlockType.CORRUPT]
    kept = L.valid_blocks(blocks)
    assert [(b.block_type, b.instant_time) for b in kept] == [(L.BlockType.DELETE, "002")]
    weird = L.encode_block(L.BlockType.COMMAND, {H.INSTANT_TIME: "9", H.COMMAND_BLOCK_TYPE: "1"}, b"")
    with pytest.raises(Unsupported, match="rollback"):
        L.valid_blocks(L.read_log_file(weird))
    no_target = L.encode_block(L.BlockType.COMMAND, {H.INSTANT_TIME: "9", H.COMMAND_BLOCK_TYPE: "0"}, b"")
    with pytest.raises(InvalidTable, match="TARGET_INSTANT_TIME"):
        L.valid_blocks(L.read_log_file(no_target))


@pytest.mark.rule("HUDI-LOG-011")
def test_valid_blocks_skips_blocks_of_instants_that_did_not_complete():
    data, _ = three_blocks()
    blocks = L.read_log_file(data + avro_block("004"))
    kept = L.valid_blocks(blocks, committed={"001", "002"}.__contains__)
    # 001 is rolled back, 004 never completed; the rollback (instant 003) needs no completed instant of its own
    assert [b.instant_time for b in kept] == ["002"]
    assert [b.instant_time for b in L.valid_blocks(blocks)] == ["002", "004"]
    with pytest.raises(InvalidTable, match="no INSTANT_TIME"):
        L.valid_blocks(L.read_log_file(L.encode_block(L.BlockType.DELETE, {}, L.encode_delete_content([]))))


@pytest.mark.rule("HUDI-LOG-012")
def test_valid_blocks_drops_what_a_log_compacted_block_replaces():
    compacted = L.encode_block(L.BlockType.AVRO_DATA, {H.INSTANT_TIME: "005", H.SCHEMA: SCHEMA,
                                                      H.COMPACTED_BLOCK_TIMES: "001,004"},
                               L.encode_avro_content(ROWS, SCHEMA))
    blocks = L.read_log_file(avro_block("001") + avro_block("002") + avro_block("004") + compacted)
    assert [b.instant_time for b in L.valid_blocks(blocks)] == ["002", "005"]


# ---------------------------------------------------------------------------------------------
# Corrupt blocks (HoodieLogFileReader.isBlockCorrupt / createCorruptBlock)


@pytest.mark.rule("HUDI-LOG-007")
def test_truncated_last_block_is_corrupt_and_earlier_blocks_read():
    data, starts = three_blocks()
    cut = data[:-10]
    blocks = L.read_log_file(cut)
    assert [b.block_type for b in blocks] == [L.BlockType.AVRO_DATA, L.BlockType.DELETE, L.BlockType.CORRUPT]
    corrupt = blocks[-1]
    assert corrupt.offset == starts[2] and corrupt.offset + corrupt.length == len(cut)
    assert corrupt.content == cut[starts[2] + 6:]  # from after its magic to the end of the file
    assert blocks[0].records == ROWS


@pytest.mark.rule("HUDI-LOG-007")
def test_bad_magic_mid_file_makes_the_block_before_it_corrupt():
    data, starts = three_blocks()
    broken = bytearray(data)
    broken[starts[1]:starts[1] + 6] = b"#HUDX#"
    blocks = L.read_log_file(bytes(broken))
    # Java accepts a block only when a magic (or the end) follows it: block 1 and the garbled block 2 become
    # one corrupt range, reading resumes at block 3's magic.
    assert [b.block_type for b in blocks] == [L.BlockType.CORRUPT, L.BlockType.COMMAND]
    assert blocks[0].offset == 0 and blocks[0].length == starts[2]
    assert "nor a magic follows" in blocks[0].problem
    assert blocks[1].offset == starts[2] and blocks[1].target_instant_time == "001"


@pytest.mark.rule("HUDI-LOG-002", "HUDI-LOG-007")
@pytest.mark.parametrize("size", [1 << 62, (1 << 31) + 5, -1, -(1 << 63), 0, 31])
def test_size_past_end_or_impossible_is_corrupt_and_reading_resumes(size):
    data, starts = three_blocks()
    broken = bytearray(data)
    broken[6:14] = struct.pack(">q", size)
    blocks = L.read_log_file(bytes(broken))
    assert [b.block_type for b in blocks] == [L.BlockType.CORRUPT, L.BlockType.DELETE, L.BlockType.COMMAND]
    assert blocks[0].length == starts[1]
    assert ("too small" if 0 <= size < 32 or size < 0 else "runs past the end") in blocks[0].problem


@pytest.mark.rule("HUDI-LOG-006", "HUDI-LOG-007")
def test_reverse_pointer_disagreeing_with_size_is_corrupt():
    data, starts = three_blocks()
    broken = bytearray(data)
    end = starts[1]
    broken[end - 8:end] = struct.pack(">q", end - 7)  # one more than size + 6
    blocks = L.read_log_file(bytes(broken))
    assert [b.block_type for b in blocks] == [L.BlockType.CORRUPT, L.BlockType.DELETE, L.BlockType.COMMAND]
    assert "reverse pointer" in blocks[0].problem


@pytest.mark.rule("HUDI-LOG-007")
def test_torn_size_and_trailing_bytes():
    data, _ = three_blocks()
    blocks = L.read_log_file(data + b"#HUDI#\x00\x00")  # magic, then a cut-off size
    assert blocks[-1].is_corrupt and blocks[-1].content == b"\x00\x00"
    assert len(L.read_log_file(data + b"#HUD")) == 3  # fewer than six bytes: Java's magic read meets the end
    blocks = L.read_log_file(data + b"garbage!")  # six or more that are no magic: the last block is corrupt
    assert [b.block_type for b in blocks][-1] is L.BlockType.CORRUPT and len(blocks) == 3


@pytest.mark.rule("HUDI-LOG-001")
def test_file_not_starting_with_the_magic_is_invalid():
    data, _ = three_blocks()
    with pytest.raises(InvalidTable, match="magic") as exc:
        L.read_log_file(b"\x00" + data)
    assert exc.value.rule == "HUDI-LOG-001"
    assert L.read_log_file(b"") == [] and L.read_log_file(b"#HU") == []


# ---------------------------------------------------------------------------------------------
# Declared lengths inside well-framed blocks are bounded by the block


def framed(body_after_type: bytes, block_type: int = 3, version: int = 1) -> bytes:
    """A block whose size and reverse pointer are right around an arbitrary inside."""
    body = struct.pack(">ii", version, block_type) + body_after_type
    size = len(body) + 8
    return b"#HUDI#" + struct.pack(">q", size) + body + struct.pack(">q", size + 6)


@pytest.mark.rule("HUDI-LOG-005")
def test_huge_header_lengths_and_counts_are_invalid():
    with pytest.raises(InvalidTable, match="entries") as exc:
        L.read_log_file(framed(struct.pack(">i", 1 << 30) + b"\x00" * 20))
    assert exc.value.rule == "HUDI-LOG-005"
    with pytest.raises(InvalidTable, match="declares 2,147,483,647 bytes"):
        L.read_log_file(framed(struct.pack(">iii", 1, 0, (1 << 31) - 1) + b"\x00" * 20))
    with pytest.raises(InvalidTable, match="repeats"):
        L.read_log_file(framed(struct.pack(">iiibiib", 2, 0, 1, 0x31, 0, 1, 0x32) + struct.pack(">qi", 0, 0)))
    with pytest.raises(InvalidTable, match="UTF-8"):
        L.read_log_file(framed(struct.pack(">iii", 1, 0, 1) + b"\xff" + struct.pack(">qi", 0, 0)))


@pytest.mark.rule("HUDI-LOG-006")
def test_huge_or_inconsistent_content_length_is_invalid():
    with pytest.raises(InvalidTable, match="content bytes") as exc:
        L.read_log_file(framed(struct.pack(">iq", 0, 1 << 60) + b"\x00" * 8))
    assert exc.value.rule == "HUDI-LOG-006"
    with pytest.raises(InvalidTable, match="before the reverse pointer"):
        L.read_log_file(framed(struct.pack(">iq", 0, 0) + struct.pack(">i", 0) + b"\x00\x00", block_type=0))


@pytest.mark.rule("HUDI-LOG-008")
def test_huge_record_count_and_length_are_invalid():
    header = struct.pack(">iii", 1, 2, len(SCHEMA)) + SCHEMA.encode()  # one entry: SCHEMA
    one = L.encode_avro_content(ROWS[1:], SCHEMA)[12:]  # a single encoded record
    for content, message in [(struct.pack(">ii", 3, (1 << 31) - 1), "claims 2,147,483,647 records"),
                             (struct.pack(">iii", 3, 1, 1 << 30) + b"\x00" * 4, "declares 1,073,741,824 bytes"),
                             (struct.pack(">iii", 3, 1, 1) + b"\x02", "does not decode"),  # ends inside a field
                             (struct.pack(">iii", 3, 1, len(one) + 1) + one + b"\x00", "decodes in"),  # a gap after it
                             (struct.pack(">ii", 3, 0) + b"\x00", "follow the last record"),
                             (struct.pack(">i", 3), "too short")]:
        data = framed(header + struct.pack(">q", len(content)) + content + struct.pack(">i", 0))
        with pytest.raises(InvalidTable, match=message) as exc:
            L.read_log_file(data)
        assert exc.value.rule == "HUDI-LOG-008"


@pytest.mark.rule("HUDI-LOG-010")
def test_huge_delete_lengths_are_invalid():
    with pytest.raises(InvalidTable, match="declares"):
        L.decode_delete_content(struct.pack(">ii", 3, 1 << 30) + b"\x00")
    with pytest.raises(InvalidTable, match="claims"):  # an Avro array block of 2^40 records in 3 bytes
        L.decode_delete_content(struct.pack(">ii", 3, 7) + b"\x80\x80\x80\x80\x80\x20\x00")
    with pytest.raises(InvalidTable, match="declares"):  # a record key claiming 2^20 bytes
        L.decode_delete_content(struct.pack(">ii", 3, 8) + b"\x02\x02\x80\x80\x80\x01\x00\x00")
    with pytest.raises(InvalidTable, match="branch 12"):
        L.decode_delete_content(struct.pack(">ii", 3, 5) + b"\x02\x00\x00\x18\x00")


@pytest.mark.rule("HUDI-LOG-008")
def test_array_of_zero_width_values_is_refused_before_decoding():
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "array",
                                                                                          "items": "null"}}]})
    content = struct.pack(">iii", 3, 1, 6) + b"\xfe\xff\xff\xff\x0f\x00"  # 2^31 - 1 nulls in six bytes
    with pytest.raises(Unsupported, match="take no bytes"):
        L.decode_avro_content(content, schema)


# ---------------------------------------------------------------------------------------------
# What this reader does not read, and what no writer writes


@pytest.mark.rule("HUDI-LOG-003", "HUDI-LOG-004", "HUDI-LOG-005")
def test_unknown_versions_types_and_keys_are_unsupported():
    empty = struct.pack(">iqi", 0, 0, 0)
    with pytest.raises(Unsupported, match="block type 7") as exc:
        L.read_log_file(framed(empty, block_type=7))
    assert exc.value.feature == "log-block-type:7"
    with pytest.raises(Unsupported, match="format version 2"):
        L.read_log_file(framed(empty, version=2))
    with pytest.raises(Unsupported, match="key ordinal 9"):
        L.read_log_file(framed(struct.pack(">iii", 1, 9, 0) + struct.pack(">qi", 0, 0), block_type=0))
    with pytest.raises(InvalidTable, match="CORRUPT type"):
        L.read_log_file(framed(empty, block_type=2))
    with pytest.raises(Internal):
        L.encode_block(L.BlockType.CORRUPT, {}, b"")
    hfile = L.encode_block(L.BlockType.HFILE_DATA, {H.INSTANT_TIME: "1"}, b"HFILE...")
    (block,) = L.read_log_file(hfile)
    assert block.block_type is L.BlockType.HFILE_DATA and block.records is None and block.content == b"HFILE..."


@pytest.mark.rule("HUDI-LOG-008")
def test_old_avro_block_versions_are_unsupported():
    with pytest.raises(Unsupported, match="block version 2"):
        L.decode_avro_content(struct.pack(">ii", 2, 0), SCHEMA)


# ---------------------------------------------------------------------------------------------
# Round trip of whole files

_headers = st.dictionaries(st.sampled_from(list(H)), st.text(max_size=20), max_size=4)
_block = st.tuples(st.sampled_from([L.BlockType.COMMAND, L.BlockType.DELETE, L.BlockType.AVRO_DATA,
                                    L.BlockType.HFILE_DATA, L.BlockType.PARQUET_DATA]),
                   _headers, st.binary(max_size=64), _headers)


@pytest.mark.rule("HUDI-LOG-002", "HUDI-LOG-005", "HUDI-LOG-006")
@settings(max_examples=60, deadline=None)
@given(st.lists(_block, max_size=5))
def test_any_sequence_of_blocks_frames_back_to_its_bytes(blocks):
    parts = [L.encode_block(t, h, c, f) for t, h, c, f in blocks]
    data = b"".join(parts)
    read = L.read_log_file(data, decode=False)
    # a content may itself hold the magic; framing still finds each block by its size
    assert [b.block_type for b in read] == [t for t, _, _, _ in blocks]
    assert [(b.header, b.content, b.footer) for b in read] == [(h, c, f) for _, h, c, f in blocks]
    assert b"".join(L.reencode_block(b) for b in read) == data


# ---------------------------------------------------------------------------------------------
# RECORD_POSITIONS (table version 8+ data and delete blocks)


@pytest.mark.rule("HUDI-LOG-005")
def test_record_positions_header_as_hudi_writes_it():
    # the header of the delete block of key k2 (row 1 of its base file), Hudi 1.2.0, table version 9
    text = "AQAAAAAAAAAAAAAAOjAAAAEAAAAAAAAAEAAAAAEA"
    block = L.LogBlock(offset=0, length=0, block_type=L.BlockType.DELETE, format_version=1,
                       header={H.RECORD_POSITIONS: text})
    assert L.record_positions(block) == [1]
    assert L.encode_record_positions([1]) == text
    wide = [0, 5, 70000, (3 << 32) + 9, (1 << 62)]
    back = L.LogBlock(offset=0, length=0, block_type=L.BlockType.AVRO_DATA, format_version=1,
                      header={H.RECORD_POSITIONS: L.encode_record_positions(reversed(wide))})
    assert L.record_positions(back) == wide
    assert L.record_positions(L.LogBlock(offset=0, length=0, block_type=L.BlockType.AVRO_DATA,
                                         format_version=1)) is None


@pytest.mark.rule("HUDI-LOG-005")
def test_bad_record_positions_are_invalid():
    import base64

    def positions(raw: bytes, **kw):
        return L.record_positions(L.LogBlock(offset=0, length=0, block_type=L.BlockType.DELETE, format_version=1,
                                             header={H.RECORD_POSITIONS: base64.b64encode(raw).decode()}), **kw)

    with pytest.raises(InvalidTable, match="base64"):
        L.record_positions(L.LogBlock(offset=0, length=0, block_type=L.BlockType.DELETE, format_version=1,
                                      header={H.RECORD_POSITIONS: "not base64!"}))
    with pytest.raises(InvalidTable, match="claims"):
        positions(struct.pack("<Q", 1 << 40) + b"\x00" * 12)
    many = L.encode_record_positions(range(1000))
    with pytest.raises(InvalidTable, match="more than 10 positions"):
        positions(base64.b64decode(many), limit=10)
    with pytest.raises(InvalidTable, match="follow the last bitmap"):
        positions(base64.b64decode(many) + b"\x00")


_int32 = st.integers(-(1 << 31), (1 << 31) - 1)
_int64 = st.integers(-(1 << 63), (1 << 63) - 1)
_ordering = st.one_of(
    st.just((None, None)),
    st.tuples(st.just("boolean"), st.booleans()),
    st.tuples(st.just("int"), _int32), st.tuples(st.just("date"), _int32),
    st.tuples(st.just("long"), _int64), st.tuples(st.just("time_micros"), _int64),
    st.tuples(st.just("timestamp_micros"), _int64),
    st.tuples(st.just("float"), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just("double"), st.floats(allow_nan=False)),
    st.tuples(st.just("bytes"), st.binary(max_size=8)), st.tuples(st.just("string"), st.text(max_size=8)),
    st.tuples(st.just("decimal"), st.integers(-(10 ** 30) + 1, 10 ** 30 - 1).map(
        lambda n: decimal.Decimal(n).scaleb(-15))))
_delete_record = st.builds(lambda k, p, o: L.DeleteRecord(record_key=k, partition_path=p, ordering_value=o[1],
                                                           ordering_type=o[0]),
                           st.none() | st.text(max_size=12), st.none() | st.text(max_size=12), _ordering)


@pytest.mark.rule("HUDI-LOG-010")
@settings(max_examples=100, deadline=None)
@given(st.lists(_delete_record, max_size=6))
def test_any_delete_records_round_trip_through_a_delete_block(records):
    data = L.delete_block(records, instant_time="20261126110816166", schema_json=SCHEMA)
    (block,) = L.read_log_file(data)
    assert block.block_type is L.BlockType.DELETE and block.records == records
    assert L.encode_delete_content(block.records) == block.content
