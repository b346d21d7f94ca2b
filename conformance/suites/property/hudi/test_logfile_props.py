"""Hudi log blocks (reference_impl.hudi.logfile): encode/decode round trips and the corrupt-block guarantee.

* Any block the encoders make (Avro data blocks of records over int/long/double/string/boolean fields, each
  nullable; Parquet data blocks; delete blocks whose ordering values span every wrapper type and null; rollback
  command blocks; any header map) reads back to the same type, header (in file order), footer and records.
* Blocks written one after another read back in the same order, at the offsets where they were written,
  tiling the file.
* One byte changed inside block i of a file of several blocks (HUDI-LOG-007). The reader has no checksum, so
  what it guarantees is about framing, not content:
  - blocks before the damaged range and after block i read exactly as before, at their old offsets;
  - the damaged range (block i, and block i-1 too when the byte is in block i's magic: a block is only
    accepted when a magic or the end of the file follows it) reads as CORRUPT ranges covering exactly those
    bytes, or, when the byte is in block i's body and the framing (size, reverse pointer, following magic)
    still holds, as one block at block i's offset and length whose header/content may differ, or as a whole-file
    InvalidTable/Unsupported for a body that no longer adds up (header count, content length, version, type:
    Java fails on such a block too);
  - a byte in the first block's magic makes the file unreadable (HUDI-LOG-001);
  - the blocks read always tile the file (offset + length of one is the offset of the next).
"""

from __future__ import annotations

import decimal
import json
import math

import pyarrow as pa
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from conformance.suites.property.delta._support import examples
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import logfile as LF

# --- strategies -----------------------------------------------------------------------------------------

_AVRO_TYPES = {
    "int": st.integers(-(1 << 31), (1 << 31) - 1),
    "long": st.integers(-(1 << 63), (1 << 63) - 1),
    "double": st.floats(allow_nan=False),  # NaN != NaN would fail equality without saying anything about Hudi
    "string": st.text(max_size=8),
    "boolean": st.booleans(),
}
INSTANTS = st.from_regex(r"20[0-9]{15}", fullmatch=True)


@st.composite
def avro_schemas(draw) -> tuple[str, list[tuple[str, str, bool]]]:
    """A record schema of 1-4 fields (type, nullable), as the JSON text Hudi puts in the SCHEMA header."""
    fields = [(f"f{i}", draw(st.sampled_from(sorted(_AVRO_TYPES))), draw(st.booleans()))
              for i in range(draw(st.integers(1, 4)))]
    schema = {"type": "record", "name": "r", "namespace": "hoodie.t", "fields": [
        {"name": n, "type": ["null", t] if nullable else t, **({"default": None} if nullable else {})}
        for n, t, nullable in fields]}
    return json.dumps(schema), fields


@st.composite
def avro_records(draw, fields) -> dict:
    return {n: draw(st.none() | _AVRO_TYPES[t] if nullable else _AVRO_TYPES[t]) for n, t, nullable in fields}


# ordering value strategies per DeleteRecord wrapper type; the encoder writes what the decoder returns
_ORDERING = {
    "boolean": st.booleans(), "int": st.integers(-(1 << 31), (1 << 31) - 1), "date": st.integers(-(1 << 31), (1 << 31) - 1),
    "long": st.integers(-(1 << 63), (1 << 63) - 1), "time_micros": st.integers(0, 86_400_000_000 - 1),
    "timestamp_micros": st.integers(-(1 << 63), (1 << 63) - 1),
    "float": st.floats(width=32, allow_nan=False), "double": st.floats(allow_nan=False),
    "bytes": st.binary(max_size=6), "string": st.text(max_size=6),
    # DecimalWrapper is decimal(30, 15): values with at most 15 fraction and 15 integer digits survive exactly
    "decimal": st.decimals(min_value=-(10 ** 14), max_value=10 ** 14, places=15, allow_nan=False, allow_infinity=False),
}
assert set(_ORDERING) == set(LF.ORDERING_TYPES)


@st.composite
def delete_records(draw) -> LF.DeleteRecord:
    kind = draw(st.none() | st.sampled_from(LF.ORDERING_TYPES))
    return LF.DeleteRecord(record_key=draw(st.none() | st.text(max_size=6)),
                           partition_path=draw(st.none() | st.sampled_from(["", "p=0", "a/b"])),
                           ordering_value=None if kind is None else draw(_ORDERING[kind]), ordering_type=kind)


@st.composite
def headers(draw, required: dict) -> dict:
    """``required`` plus random other entries, in a random order (the order is part of the file)."""
    extra = draw(st.dictionaries(st.sampled_from([k for k in LF.HeaderKey if k not in required]),
                                 st.text(max_size=10), max_size=3))
    items = list({**required, **extra}.items())
    return dict(draw(st.permutations(items)))


@st.composite
def blocks(draw) -> tuple[bytes, str, dict, object]:
    """(encoded bytes, kind, header, expected records) of one random block."""
    kind = draw(st.sampled_from(["avro", "parquet", "delete", "rollback"]))
    instant = draw(INSTANTS)
    if kind == "rollback":
        head = draw(headers({LF.HeaderKey.INSTANT_TIME: instant, LF.HeaderKey.TARGET_INSTANT_TIME: draw(INSTANTS),
                             LF.HeaderKey.COMMAND_BLOCK_TYPE: LF.ROLLBACK_COMMAND}))
        return LF.rollback_block(instant_time=instant, target_instant_time="", header=head), kind, head, None
    if kind == "delete":
        recs = draw(st.lists(delete_records(), max_size=4))
        head = draw(headers({LF.HeaderKey.INSTANT_TIME: instant}))
        return LF.delete_block(recs, instant_time=instant, header=head), kind, head, recs
    schema, fields = draw(avro_schemas())
    head = draw(headers({LF.HeaderKey.INSTANT_TIME: instant, LF.HeaderKey.SCHEMA: schema}))
    recs = draw(st.lists(avro_records(fields), max_size=4))
    if kind == "avro":
        return LF.avro_data_block(recs, schema, instant_time=instant, header=head), kind, head, recs
    arrow = {"int": pa.int32(), "long": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_()}
    table = pa.Table.from_pylist(recs, schema=pa.schema([pa.field(n, arrow[t], nullable=nb) for n, t, nb in fields]))
    return (LF.parquet_data_block(LF.encode_parquet_content(table), schema, instant_time=instant, header=head),
            kind, head, recs)


_TYPES = {"avro": LF.BlockType.AVRO_DATA, "parquet": LF.BlockType.PARQUET_DATA, "delete": LF.BlockType.DELETE,
          "rollback": LF.BlockType.COMMAND}


def _same(a, b) -> bool:
    """Record equality where -0.0/0.0 and decimals compare by value (what the format keeps)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        return decimal.Decimal(a) == decimal.Decimal(b)
    return type(a) is type(b) and a == b


def _records(block: LF.LogBlock):
    """A decoded block's records as comparable Python values (Parquet: its rows as dicts)."""
    if block.block_type is LF.BlockType.PARQUET_DATA:
        return block.records.to_pylist()
    return block.records


def check_block(got: LF.LogBlock, kind: str, head: dict, recs) -> None:
    assert got.block_type is _TYPES[kind]
    assert list(got.header.items()) == list(head.items())  # same entries in the same order
    assert got.footer == {}
    if kind == "rollback":
        assert got.is_rollback and got.content == b""
    elif kind == "delete":
        assert len(got.records) == len(recs)
        for g, w in zip(got.records, recs):
            assert (g.record_key, g.partition_path, g.ordering_type) == (w.record_key, w.partition_path, w.ordering_type)
            assert (g.ordering_value is None) == (w.ordering_value is None)
            if w.ordering_value is not None:
                want = bytes(w.ordering_value) if w.ordering_type == "bytes" else w.ordering_value
                assert _same(g.ordering_value, want), (g, w)
    else:
        rows = _records(got)
        assert len(rows) == len(recs)
        for g, w in zip(rows, recs):
            assert g.keys() == w.keys() and all(_same(g[k], w[k]) or (g[k] is None and w[k] is None) for k in w), (g, w)


# --- properties --------------------------------------------------------------------------------------------


@pytest.mark.rule("HUDI-LOG-005", "HUDI-LOG-006", "HUDI-LOG-008", "HUDI-LOG-009", "HUDI-LOG-010", "HUDI-LOG-013")
@examples(1)
@given(blocks())
def test_block_round_trip(block):
    """One encoded block reads back as the same type, header (order included), footer and records."""
    raw, kind, head, recs = block
    (got,) = LF.read_log_file(raw)
    assert (got.offset, got.length) == (0, len(raw))
    check_block(got, kind, head, recs)
    assert LF.reencode_block(got) == raw  # the parts kept are the whole block


@pytest.mark.rule("HUDI-LOG-006", "HUDI-LOG-013")
@examples(0.5)
@given(st.lists(blocks(), min_size=1, max_size=5))
def test_concatenated_blocks_iterate_in_order(bs):
    """Blocks written back to back come back in order, at the offsets they were written at, tiling the file."""
    data = b"".join(b[0] for b in bs)
    got = LF.read_log_file(data)
    assert len(got) == len(bs)
    offset = 0
    for g, (raw, kind, head, recs) in zip(got, bs):
        assert (g.offset, g.length) == (offset, len(raw))
        check_block(g, kind, head, recs)
        offset += len(raw)


def _tiles(got: list[LF.LogBlock], n: int) -> None:
    pos = 0
    for b in got:
        assert b.offset == pos, f"block at {b.offset}, expected {pos}"
        pos += b.length
    assert n - pos < len(LF.MAGIC), "a readable tail was left unread"


@pytest.mark.rule("HUDI-LOG-007", "HUDI-LOG-001")
@examples(1)
@given(st.lists(blocks(), min_size=2, max_size=4), st.data())
def test_a_corrupt_byte_damages_only_its_block(bs, data):
    """One byte changed inside block i: the blocks outside the damaged range read as before (module docstring)."""
    raws = [b[0] for b in bs]
    starts = [sum(map(len, raws[:j])) for j in range(len(raws) + 1)]  # starts[-1]: the end of the file
    i = data.draw(st.integers(0, len(raws) - 1), label="block")
    p = data.draw(st.integers(starts[i], starts[i + 1] - 1), label="offset")
    new = data.draw(st.integers(0, 255).filter(lambda x, old=(b"".join(raws))[p]: x != old), label="byte")
    file = bytearray(b"".join(raws))
    file[p] = new
    rel = p - starts[i]
    in_magic = rel < len(LF.MAGIC)
    # the framing: magic + size (14 bytes) and the reverse pointer (last 8); the rest is the body
    in_body = len(LF.MAGIC) + 8 <= rel < len(raws[i]) - 8
    note(f"block {i} ({bs[i][1]}), byte {rel} of {len(raws[i])}")
    if in_magic and i == 0:
        with pytest.raises(InvalidTable) as exc:
            LF.read_log_file(bytes(file))
        assert exc.value.rule == "HUDI-LOG-001"
        return
    try:
        got = LF.read_log_file(bytes(file), decode=False)
    except (InvalidTable, Unsupported) as exc:
        # only a block whose framing still holds gets its inside parsed, and fails the whole file
        assert in_body, f"framing damage must give a corrupt range, not {exc!r}"
        # Unsupported without a rule: a header key ordinal past the known ones (read as a newer writer's key)
        assert exc.rule in ("HUDI-LOG-003", "HUDI-LOG-004", "HUDI-LOG-005", "HUDI-LOG-006", None), exc
        return
    _tiles(got, len(file))
    first = i - 1 if in_magic else i  # a broken magic leaves block i-1 without a magic after it
    by_offset = {b.offset: b for b in got}
    for j in [*range(first), *range(i + 1, len(raws))]:  # the undamaged blocks: as written
        b = by_offset.get(starts[j])
        assert b is not None and not b.is_corrupt, f"block {j} at {starts[j]} was lost"
        assert b.length == len(raws[j])
        check_block(LF.decode_block(b), *bs[j][1:])
    middle = [b for b in got if starts[first] <= b.offset < starts[i + 1]]
    if len(middle) == 1 and not middle[0].is_corrupt:
        # the byte hit the body and the framing held: same place, content unchecked (no checksum in the format)
        assert in_body and (middle[0].offset, middle[0].length) == (starts[i], len(raws[i]))
    else:
        assert middle and all(b.is_corrupt for b in middle), [(b.offset, b.block_type) for b in middle]
        assert middle[0].offset == starts[first]
        assert sum(b.length for b in middle) == starts[i + 1] - starts[first]


@pytest.mark.rule("HUDI-LOG-007")
def test_a_broken_magic_takes_the_previous_block_with_it():
    """The boundary case of the property, pinned: three rollback blocks, one byte of the second one's magic
    changed -> blocks 0 and 1 read as one CORRUPT range (block 0 no longer has a magic after it, as Java's
    isBlockCorrupted checks), block 2 reads intact at its offset."""
    raws = [LF.rollback_block(instant_time=f"2024010100000000{i}", target_instant_time="20240101000000000")
            for i in range(3)]
    file = bytearray(b"".join(raws))
    file[len(raws[0]) + 2] ^= 0xFF
    got = LF.read_log_file(bytes(file))
    assert [(b.offset, b.length, b.is_corrupt) for b in got] == [
        (0, len(raws[0]) + len(raws[1]), True), (len(raws[0]) + len(raws[1]), len(raws[2]), False)]
    assert "neither the end of the file nor a magic" in got[0].problem
