"""Deletion Vectors (reference_impl.delta.deletion_vector): descriptors, bitmaps, files, Z85, paths."""

from __future__ import annotations

import glob
import json
import os
import site
import struct
import uuid
import zlib
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap

from reference_impl.delta import deletion_vector as D
from reference_impl.errors import InvalidTable
from reference_impl.storage import LocalStorage

# A DV file written by Delta Spark: delta-io/delta spark/src/test/resources/delta/table-with-dv-large,
# deletion_vector_afcbf9f8-7558-4a5a-b1e2-7432c30bf452.bin (stored there under a test-only name
# prefix). Six DVs; the (offset, sizeInBytes, cardinality) triples come from that table's log.
SPARK_DV_FILE = bytes.fromhex(
    "0100000022d1d339640100000000000000000000003a300000010000000000000010000000330003cdd18500000024d1d339640100000000000000000000003a30000001000000000001001000000046005100e67ac8fb00000024d1d339640100000000000000000000003a3000000100000000000100100000001a002800995cba5e00000022d1d339640100000000000000000000003a30000001000000000000001000000013009649f52700000022d1d339640100000000000000000000003a3000000100000000000000100000000000f7a6b4b500000024d1d339640100000000000000000000003a30000001000000000001001000000006002b00a8be01ba"
)
SPARK_DV_UUID = "UGM+pBY.mtVeP<X.WD9m"
SPARK_DVS = [  # offset, sizeInBytes, cardinality, rows
    (1, 34, 1, [51]), (43, 36, 2, [70, 81]), (87, 36, 2, [26, 40]),
    (131, 34, 1, [19]), (173, 34, 1, [0]), (215, 36, 2, [6, 43]),
]
SPEC_INLINE = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"


def spark_storage(tmp_path) -> LocalStorage:
    st = LocalStorage(str(tmp_path))
    desc = D.DeletionVectorDescriptor(storage_type="u", path_or_inline_dv=SPARK_DV_UUID, offset=1, size_in_bytes=34, cardinality=1)
    st.put_if_absent(D.absolute_dv_path(desc), SPARK_DV_FILE)
    return st


@pytest.mark.rule("DELTA-DV-012")
def test_z85_rfc_vector_and_padding():
    assert D.z85_encode(bytes.fromhex("864FD26FB559F75B")) == "HelloWorld"  # the Z85 RFC's test vector
    assert D.z85_decode("HelloWorld") == bytes.fromhex("864FD26FB559F75B")
    assert D.z85_encode(b"\x01") == D.z85_encode(b"\x01\x00\x00\x00")  # padded to 4 bytes
    for bad in ("Hell", "Hello~orld", 'Hell"'):
        with pytest.raises(InvalidTable) as e:
            D.z85_decode(bad)
        assert e.value.rule == "DELTA-DV-012"


@pytest.mark.rule("DELTA-DV-006", "DELTA-DV-011")
def test_spec_example_1_resolves_prefix_and_uuid():
    d = D.DeletionVectorDescriptor.from_wire({"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 4, "sizeInBytes": 40, "cardinality": 6})
    assert D.absolute_dv_path(d) == "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
    assert d.unique_id == "uab^-aqEH.-t@S}K{vb[*k^@4"
    assert D.encode_uuid(uuid.UUID("d2c639aa-8816-431a-aaf6-d3fe2512ff61")) == "^-aqEH.-t@S}K{vb[*k^"


@pytest.mark.rule("DELTA-DV-008", "DELTA-DV-011")
def test_spec_example_2_absolute_path():
    d = D.DeletionVectorDescriptor.from_wire({"storageType": "p", "pathOrInlineDv": "s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", "offset": 4, "sizeInBytes": 40, "cardinality": 6})
    assert D.absolute_dv_path(d) == "s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
    assert d.unique_id.endswith(".bin@4")


@pytest.mark.rule("DELTA-DV-008")
def test_p_path_resolves_inside_the_table_and_unescapes(tmp_path):
    st = LocalStorage(str(tmp_path))
    d = D.DeletionVectorDescriptor(storage_type="p", path_or_inline_dv=f"{st.root}/dir%20x/dv%25.bin", offset=1, size_in_bytes=1, cardinality=0)
    assert D.absolute_dv_path(d, st) == "dir x/dv%.bin"
    with pytest.raises(InvalidTable):
        D.DeletionVectorDescriptor.from_wire({"storageType": "p", "pathOrInlineDv": "relative/dv.bin", "offset": 1, "sizeInBytes": 1, "cardinality": 0})


# Delta Spark's table-with-dv-special-char: a 'p' DV in a folder whose name needs URI escaping.
SPARK_SPECIAL_DV_FILE = bytes.fromhex(
    "010000002ad1d339640100000000000000000000003a30000001000000000004001000000000000200040006000800fa68ce9f"
)


@pytest.mark.rule("DELTA-DV-008", "DELTA-DV-014")
def test_real_spark_p_vector_in_a_folder_with_special_characters(tmp_path):
    st = LocalStorage(str(tmp_path))
    folder = "folder&with%special char"
    st.put_if_absent(f"{folder}/test%dv%prefix-deletion_vector_67bc892e-2979-4760-a78c-856aba806564.bin", SPARK_SPECIAL_DV_FILE)
    uri = "file:" + quote(os.path.join(str(tmp_path), folder), safe="/&") + "/test%25dv%25prefix-deletion_vector_67bc892e-2979-4760-a78c-856aba806564.bin"
    d = D.DeletionVectorDescriptor.from_wire({"storageType": "p", "pathOrInlineDv": uri, "offset": 1, "sizeInBytes": 42, "cardinality": 5})
    assert D.absolute_dv_path(d, st) == f"{folder}/test%dv%prefix-deletion_vector_67bc892e-2979-4760-a78c-856aba806564.bin"
    assert D.load_deleted_rows(st, d).tolist() == [0, 2, 4, 6, 8]
    outside = D.DeletionVectorDescriptor(storage_type="p", path_or_inline_dv="file:/somewhere/else/dv.bin", offset=1, size_in_bytes=42, cardinality=5)
    with pytest.raises(InvalidTable, match="outside the table root"):
        D.load_deleted_rows(st, outside)


@pytest.mark.rule("DELTA-DV-005", "DELTA-DV-007")
@pytest.mark.parametrize(
    "wire,fragment,rule",
    [
        ({"storageType": "x", "pathOrInlineDv": "a" * 20, "sizeInBytes": 1, "cardinality": 1}, "storageType", "DELTA-DV-005"),
        ({"storageType": "i", "pathOrInlineDv": SPEC_INLINE, "offset": 1, "sizeInBytes": 40, "cardinality": 6}, "offset", "DELTA-DV-007"),
        ({"storageType": "u", "pathOrInlineDv": "short", "sizeInBytes": 1, "cardinality": 1}, "20 characters", "DELTA-DV-006"),
        ({"storageType": "u", "pathOrInlineDv": "a" * 20, "sizeInBytes": -1, "cardinality": 1}, "sizeInBytes", None),
        ({"storageType": "u", "pathOrInlineDv": "a" * 20, "cardinality": 1}, "sizeInBytes", None),
        ("nope", "object", None),
    ],
)
def test_bad_descriptors_are_invalid(wire, fragment, rule):
    with pytest.raises(InvalidTable) as e:
        D.DeletionVectorDescriptor.from_wire(wire)
    assert fragment in str(e.value) and e.value.rule == rule


def test_wire_round_trip_omits_absent_offset():
    d = D.inline_deletion_vector([1, 2])
    assert "offset" not in d.to_wire() and D.DeletionVectorDescriptor.from_wire(d.to_wire()) == d
    assert d.unique_id == "i" + d.path_or_inline_dv


@pytest.mark.rule("DELTA-DV-013")
def test_spec_example_3_is_not_in_the_portable_format():
    # The spec's inline example decodes to magic 1681511376 written big-endian followed by Delta's
    # *native* layout; Delta Spark's reader refuses it as well. Its inner 32-bit bitmap does hold
    # the rows the spec lists.
    raw = D.z85_decode(SPEC_INLINE)[:40]
    assert raw[:4] == struct.pack(">I", D.MAGIC_NATIVE)
    assert list(BitMap.deserialize(raw[12:])) == [3, 4, 7, 11, 18, 29]
    d = D.DeletionVectorDescriptor.from_wire({"storageType": "i", "pathOrInlineDv": SPEC_INLINE, "sizeInBytes": 40, "cardinality": 6})
    with pytest.raises(InvalidTable) as e:
        D.load_deleted_rows(None, d)
    assert e.value.rule == "DELTA-DV-013" and "big-endian" in str(e.value)


@pytest.mark.rule("DELTA-DV-004", "DELTA-DV-007", "DELTA-DV-010", "DELTA-DV-015")
def test_inline_round_trip_of_the_spec_rows():
    d = D.inline_deletion_vector([29, 3, 4, 7, 11, 18, 4])
    assert d.cardinality == 6 and d.offset is None
    assert D.load_deleted_rows(None, d).tolist() == [3, 4, 7, 11, 18, 29]
    raw = D.serialize_bitmap([3, 4, 7, 11, 18, 29])
    assert raw[:4] == struct.pack("<I", 1681511377) and struct.unpack_from("<Q", raw, 4)[0] == 1
    assert d.size_in_bytes == len(raw)


@pytest.mark.rule("DELTA-DV-013")
def test_64_bit_rows_use_one_bucket_per_high_key():
    rows = [0, 5, (1 << 32) + 7, (3 << 32), (1 << 62) + 1]
    raw = D.serialize_bitmap(rows)
    assert struct.unpack_from("<Q", raw, 4)[0] == 4
    # built by hand from the spec: magic, numBuckets, then key + portable 32-bit bitmap per bucket
    expected = struct.pack("<IQ", 1681511377, 4)
    for key, lows in ((0, [0, 5]), (1, [7]), (3, [0]), (1 << 30, [1])):
        expected += struct.pack("<I", key) + BitMap(lows).serialize()
    assert raw == expected
    assert D.deserialize_bitmap(raw).tolist() == rows


@pytest.mark.rule("DELTA-DV-013")
def test_bitmap_and_run_containers_and_empty_buckets_decode():
    rows = np.concatenate([np.arange(0, 140000, 2), np.arange(200000, 260000), [(5 << 32) + 1]]).astype(np.uint64)
    raw = D.serialize_bitmap(rows)
    assert np.array_equal(D.deserialize_bitmap(raw), rows)
    # Delta's Java writer may emit empty buckets for keys below the highest one
    with_empty = struct.pack("<IQ", 1681511377, 2) + struct.pack("<I", 0) + BitMap().serialize() + struct.pack("<I", 2) + BitMap([9]).serialize()
    assert D.deserialize_bitmap(with_empty).tolist() == [(2 << 32) + 9]
    assert D.deserialize_bitmap(D.serialize_bitmap([])).size == 0


@pytest.mark.rule("DELTA-DV-013")
@pytest.mark.parametrize(
    "mutate,fragment",
    [
        (lambda b: struct.pack("<I", 1681511376) + b[4:], "native layout"),
        (lambda b: struct.pack("<I", 12345) + b[4:], "magic"),
        (lambda b: b[:-3], "truncated"),
        (lambda b: b + b"\x00", "trailing"),
        (lambda b: b[:4] + struct.pack("<Q", 10**6) + b[12:], "buckets"),
        (lambda b: b[:12] + struct.pack("<I", 0x80000000) + b[16:], "top bit"),
        (lambda b: b[:4], "too short"),
        (lambda b: b[:16] + struct.pack("<II", 12346, 2**31) + b[24:], "containers"),  # must not allocate 2^31 headers
    ],
)
def test_corrupt_bitmaps_are_invalid_with_a_clear_message(mutate, fragment):
    good = D.serialize_bitmap([1, 2, 3, 100000])
    with pytest.raises(InvalidTable) as e:
        D.deserialize_bitmap(mutate(good))
    assert fragment in str(e.value)


@pytest.mark.rule("DELTA-DV-013")
def test_row_indexes_must_fit_and_be_non_negative():
    for rows in ([-1], [1 << 63], ["a"]):
        with pytest.raises(InvalidTable):
            D.serialize_bitmap(rows)


@pytest.mark.rule("DELTA-DV-004", "DELTA-DV-006", "DELTA-DV-014", "DELTA-DV-010")
def test_reads_every_dv_of_a_real_spark_file(tmp_path):
    st = spark_storage(tmp_path)
    for offset, size, cardinality, rows in SPARK_DVS:
        d = D.DeletionVectorDescriptor(storage_type="u", path_or_inline_dv=SPARK_DV_UUID, offset=offset, size_in_bytes=size, cardinality=cardinality)
        got = D.load_deleted_rows(st, d)
        assert got.dtype == np.uint64 and got.tolist() == rows


@pytest.mark.rule("DELTA-DV-014", "DELTA-DV-010")
def test_file_checks_version_size_crc_and_cardinality(tmp_path):
    st = spark_storage(tmp_path)

    def desc(**kw):
        base = dict(storage_type="u", path_or_inline_dv=SPARK_DV_UUID, offset=43, size_in_bytes=36, cardinality=2)
        base.update(kw)
        return D.DeletionVectorDescriptor(**base)

    with pytest.raises(InvalidTable, match="cardinality"):
        D.load_deleted_rows(st, desc(cardinality=3))
    with pytest.raises(InvalidTable, match="the log says 40"):
        D.load_deleted_rows(st, desc(size_in_bytes=40))
    with pytest.raises(InvalidTable, match="beyond the end"):
        D.load_deleted_rows(st, desc(offset=10_000))
    flipped = bytearray(SPARK_DV_FILE)
    flipped[43 + 4 + 20] ^= 0xFF
    with pytest.raises(InvalidTable, match="CRC-32 mismatch"):
        D.read_dv_from_file_bytes(bytes(flipped), 43, 36)
    with pytest.raises(InvalidTable, match="format version 2"):
        D.read_dv_from_file_bytes(b"\x02" + SPARK_DV_FILE[1:], 43, 36)
    with pytest.raises(InvalidTable, match="does not exist"):
        D.load_deleted_rows(st, desc(path_or_inline_dv="zz" + SPARK_DV_UUID))


@pytest.mark.rule("DELTA-DV-009")
def test_missing_offset_means_zero(tmp_path):
    # offset 0 points at the version byte, so the dataSize read there cannot match: the reader
    # follows the spec literally and reports the mismatch instead of guessing offset 1.
    st = spark_storage(tmp_path)
    d = D.DeletionVectorDescriptor(storage_type="u", path_or_inline_dv=SPARK_DV_UUID, offset=None, size_in_bytes=34, cardinality=1)
    with pytest.raises(InvalidTable, match="at offset 0"):
        D.load_deleted_rows(st, d)


@pytest.mark.rule("DELTA-DV-006", "DELTA-DV-011", "DELTA-DV-014")
def test_writer_puts_all_vectors_in_one_prefixed_file(tmp_path):
    st = LocalStorage(str(tmp_path))
    sets = [[0, 5, 99], [], [1 << 33], list(range(10000))]
    descs = D.write_deletion_vectors(st, sets, prefix_len=3)
    assert len({d.path_or_inline_dv for d in descs}) == 1 and len(descs[0].path_or_inline_dv) == 23
    assert [d.offset for d in descs][0] == 1 and len({d.unique_id for d in descs}) == 4
    path = D.absolute_dv_path(descs[0])
    assert path.startswith(descs[0].path_or_inline_dv[:3] + "/deletion_vector_") and path.endswith(".bin")
    data = st.read(path)
    assert data[0] == 1
    for d, rows in zip(descs, sets):
        assert d.cardinality == len(rows)
        assert D.load_deleted_rows(st, d).tolist() == sorted(rows)
        (size,) = struct.unpack_from(">I", data, d.offset)
        bitmap = data[d.offset + 4 : d.offset + 4 + size]
        assert struct.unpack_from(">I", data, d.offset + 4 + size)[0] == zlib.crc32(bitmap)
    assert D.write_deletion_vectors(st, []) == []
    no_prefix = D.write_deletion_vectors(st, [[1]], prefix_len=0)[0]
    assert "/" not in D.absolute_dv_path(no_prefix)


def _duckdb_delta():
    try:
        import duckdb

        ext = glob.glob(os.path.join(site.getsitepackages()[0], "duckdb_extension_delta", "extensions", "*", "delta.duckdb_extension"))
        if not ext:
            return None
        con = duckdb.connect(config={"autoinstall_known_extensions": False})
        con.sql(f"LOAD '{ext[0]}'")
        return con
    except Exception:  # any failure means the engine is not available here
        return None


@pytest.mark.rule("DELTA-DV-004", "DELTA-DV-007", "DELTA-DV-014", "DELTA-DV-015")
def test_delta_kernel_rs_reads_our_vectors(tmp_path):
    """Cross-check against an independent reader: delta-kernel-rs through DuckDB's delta extension."""
    con = _duckdb_delta()
    if con is None:
        pytest.skip("DuckDB delta extension not installed")
    root = str(tmp_path)
    st = LocalStorage(root)
    os.makedirs(os.path.join(root, "_delta_log"))
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64())}), os.path.join(root, "a.parquet"))
    pq.write_table(pa.table({"id": pa.array(range(100, 70100), pa.int64())}), os.path.join(root, "b.parquet"))
    big = sorted(set(range(0, 69000, 2)) | set(range(1000, 5000)))  # bitmap and run containers
    file_dvs = D.write_deletion_vectors(st, [[0, 5, 99], big])
    inline = D.inline_deletion_vector([7, 8])

    def add(path, dv):
        return {"add": {"path": path, "partitionValues": {}, "size": os.path.getsize(os.path.join(root, path)),
                        "modificationTime": 0, "dataChange": True, "deletionVector": dv.to_wire()}}

    schema = json.dumps({"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]})
    commit = [
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}},
        {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": schema, "partitionColumns": [],
                      "configuration": {"delta.enableDeletionVectors": "true"}, "createdTime": 0}},
        add("a.parquet", file_dvs[0]), add("b.parquet", file_dvs[1]),
    ]
    st.put_if_absent("_delta_log/00000000000000000000.json", "".join(json.dumps(a) + "\n" for a in commit).encode())
    got = sorted(r[0] for r in con.sql(f"select id from delta_scan('{root}')").fetchall())
    assert got == sorted(set(range(70100)) - {0, 5, 99} - {100 + r for r in big})
    swap = [{"remove": {"path": "a.parquet", "deletionTimestamp": 1, "dataChange": True, "deletionVector": file_dvs[0].to_wire()}}, add("a.parquet", inline)]
    st.put_if_absent("_delta_log/00000000000000000001.json", "".join(json.dumps(a) + "\n" for a in swap).encode())
    got = sorted(r[0] for r in con.sql(f"select id from delta_scan('{root}') where id < 100").fetchall())
    assert got == sorted(set(range(100)) - {7, 8})
