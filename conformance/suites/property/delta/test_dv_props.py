"""Property (6): deletion-vector bitmaps, descriptors and DV files round-trip.

The bitmap encoding is also decoded by an independent implementation (pyroaring's portable 64-bit
format, which the Delta RoaringBitmapArray layout follows after its 4-byte magic).
"""

from __future__ import annotations

import struct
import tempfile
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap64

from conformance.roundtrip import assert_roundtrip
from conformance.formats.delta import strategies as sd
from conformance.suites.property.delta._support import examples
from reference_impl.delta import deletion_vector as dv
from reference_impl.errors import InvalidTable
from reference_impl.storage import LocalStorage

MAGIC = 1681511377


def _rows(a) -> list[int]:
    return [int(x) for x in a]


@pytest.mark.rule("DELTA-DV-013", "DELTA-DV-015")
@given(sd.row_index_sets())
def test_bitmap_round_trip(rows):
    data = assert_roundtrip(rows, dv.serialize_bitmap, lambda b: _rows(dv.deserialize_bitmap(b)), label="dv bitmap")
    assert struct.unpack("<I", data[:4])[0] == MAGIC
    assert list(BitMap64.deserialize(data[4:])) == rows, "pyroaring decodes a different set"


@pytest.mark.rule("DELTA-DV-013")
@given(sd.row_index_sets())
def test_bitmap_reads_what_pyroaring_writes(rows):
    data = struct.pack("<I", MAGIC) + BitMap64(rows).serialize()
    assert _rows(dv.deserialize_bitmap(data)) == rows


@pytest.mark.rule("DELTA-DV-012")
@given(st.binary(max_size=64).map(lambda b: b + b"\x00" * (-len(b) % 4)))
def test_z85_round_trip(data):
    text = assert_roundtrip(data, dv.z85_encode, dv.z85_decode, label="z85")
    assert len(text) == len(data) // 4 * 5


@pytest.mark.rule("DELTA-DV-005", "DELTA-DV-007", "DELTA-DV-010", "DELTA-DV-011")
@given(sd.row_index_sets(max_runs=2, max_singles=20))
def test_inline_descriptor_round_trip(rows):
    d = dv.inline_deletion_vector(rows)
    assert d.cardinality == len(rows) and d.offset is None
    assert dv.z85_decode(d.path_or_inline_dv)[: d.size_in_bytes] == dv.serialize_bitmap(rows)
    assert_roundtrip(d, lambda x: x.to_wire(), dv.DeletionVectorDescriptor.from_wire, label="dv descriptor")
    with tempfile.TemporaryDirectory() as tmp:
        assert _rows(dv.load_deleted_rows(LocalStorage(tmp), d)) == rows


@pytest.mark.rule("DELTA-DV-006", "DELTA-DV-009", "DELTA-DV-011", "DELTA-DV-014")
@examples(0.5)
@given(st.lists(sd.row_index_sets(max_runs=2, max_singles=20), min_size=1, max_size=4), st.integers(0, 3))
def test_dv_file_round_trip(row_sets, prefix_len):
    with tempfile.TemporaryDirectory() as tmp:
        storage = LocalStorage(tmp)
        descriptors = dv.write_deletion_vectors(storage, row_sets, prefix_len=prefix_len)
        assert len({d.unique_id for d in descriptors}) == len(descriptors), "DVs in one file need distinct ids"
        path = dv.absolute_dv_path(descriptors[0])
        assert path.rsplit("/", 1)[-1].startswith("deletion_vector_") and path.endswith(".bin")
        data = storage.read(path)
        assert data[0] == 1  # file format version
        for d, rows in zip(descriptors, row_sets):
            assert_roundtrip(d, lambda x: x.to_wire(), dv.DeletionVectorDescriptor.from_wire, label="dv descriptor")
            assert _rows(dv.load_deleted_rows(storage, d)) == rows
            # independent framing check: big-endian size, bitmap, big-endian CRC-32 of the bitmap
            size = struct.unpack(">I", data[d.offset : d.offset + 4])[0]
            bitmap = data[d.offset + 4 : d.offset + 4 + size]
            assert size == d.size_in_bytes
            assert struct.unpack(">I", data[d.offset + 4 + size : d.offset + 8 + size])[0] == zlib.crc32(bitmap)


@pytest.mark.rule("DELTA-DV-014")
@examples(0.5)
@given(sd.row_index_sets(max_runs=1, max_singles=10).filter(bool), st.data())
def test_dv_file_corruption_is_detected(rows, data):
    with tempfile.TemporaryDirectory() as tmp:
        storage = LocalStorage(tmp)
        (d,) = dv.write_deletion_vectors(storage, [rows], prefix_len=0)
        path = dv.absolute_dv_path(d)
        raw = bytearray(storage.read(path))
        i = data.draw(st.integers(d.offset + 4, d.offset + 3 + d.size_in_bytes), label="flipped byte")
        raw[i] ^= data.draw(st.integers(1, 255), label="mask")
        storage.write_atomic(path, bytes(raw))
        with pytest.raises(InvalidTable):
            dv.load_deleted_rows(storage, d)
