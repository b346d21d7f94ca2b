"""Deletion vector index files (reference_impl.paimon.deletion_vectors): Java's golden bytes, layouts,
damaged files, and the vectors pypaimon 2.1.0 writes (read back and applied like pypaimon reads them)."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap

from conformance.suites.unit.paimon import _pypaimon as PP
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import deletion_vectors as D
from reference_impl.storage import LocalStorage

# paimon-core/src/test/resources/compatibility/dvindex-{32,64} (apache/paimon @5dacde51), read by
# DeletionVectorsIndexFileTest.testReadOldDeletionVector{32,64}Bit: a vector of {2, 3}, then one of {1}.
JAVA_DVINDEX_32 = bytes.fromhex(
    "01000000185e43f2d03a30000001000000000001001000000002000300c898f63d"
    "000000165e43f2d03a300000010000000000000010000000010 0fa2b5192".replace(" ", ""))
JAVA_DVINDEX_64 = bytes.fromhex(
    "0100000024d1d339640100000000000000000000003a30000001000000000001001000000002000300"
    "7a81384700000022d1d339640100000000000000000000003a3000000100000000000000100000000100eebd85f4")


def reframe(body: bytes) -> bytes:
    """A framed vector around ``body`` with a correct size and CRC (to damage only what is inside)."""
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


# ---------------------------------------------------------------------------------------------
# Java's bytes


@pytest.mark.rule("PAIMON-INDEX-002", "PAIMON-INDEX-003", "PAIMON-INDEX-004", "PAIMON-INDEX-005", "PAIMON-INDEX-006")
@pytest.mark.parametrize("bitmap64, golden, lengths", [(False, JAVA_DVINDEX_32, (24, 22)),
                                                        (True, JAVA_DVINDEX_64, (44, 42))])
def test_writer_reproduces_java_index_files(bitmap64, golden, lengths):
    data, ranges = D.write_index_file({"file1.parquet": [3, 2], "file2.parquet": [1]}, bitmap64=bitmap64)
    assert data == golden
    assert [(r.offset, r.length, r.cardinality) for r in ranges] == [(1, lengths[0], 2), (1 + 4 + lengths[0] + 4
                                                                      if not bitmap64 else 1 + lengths[0], lengths[1], 1)]


@pytest.mark.rule("PAIMON-INDEX-004", "PAIMON-INDEX-005", "PAIMON-INDEX-006", "PAIMON-INDEX-008")
def test_reader_reads_java_index_files():
    # Java's test reads these with f2 = 24/22 (32-bit: magic + bitmap) and 44/42 (64-bit: the whole frame)
    assert D.read_vector(JAVA_DVINDEX_32, 1, 24, 2).tolist() == [2, 3]
    assert D.read_vector(JAVA_DVINDEX_32, 33, 22, 1).tolist() == [1]
    assert D.read_vector(JAVA_DVINDEX_64, 1, 44, 2).tolist() == [2, 3]
    assert D.read_vector(JAVA_DVINDEX_64, 45, 42, 1).tolist() == [1]
    got = D.read_index_file(JAVA_DVINDEX_64, [D.DvRange(data_file="a", offset=1, length=44, cardinality=2),
                                              D.DvRange(data_file="b", offset=45, length=42)])
    assert {k: v.tolist() for k, v in got.items()} == {"a": [2, 3], "b": [1]}


# ---------------------------------------------------------------------------------------------
# Layouts


@pytest.mark.rule("PAIMON-INDEX-002", "PAIMON-INDEX-003", "PAIMON-INDEX-004")
def test_32bit_layout_crc_covers_the_magic():
    framed = D.encode_vector([0, 5, 70000])
    (size,) = struct.unpack(">I", framed[:4])
    body = framed[4:4 + size]
    assert body[:4] == struct.pack(">I", 1581511376)  # big-endian magic
    assert BitMap.deserialize(body[4:]) == BitMap([0, 5, 70000])  # then a portable 32-bit bitmap
    assert framed[4 + size:] == struct.pack(">I", zlib.crc32(body))  # CRC of magic + bitmap
    data, ranges = D.write_index_file({"f": [0, 5, 70000]})
    assert data[0] == 1 and ranges[0].length == size


@pytest.mark.rule("PAIMON-INDEX-005", "PAIMON-INDEX-006")
def test_64bit_layout_is_dense_and_reads_as_an_iceberg_dv():
    from reference_impl.iceberg import deletes as iceberg

    positions = [1, (2 << 32) + 5]
    framed = D.encode_vector(positions, bitmap64=True)
    body = framed[4:-4]
    assert body[:4] == struct.pack("<I", 1681511377)  # little-endian magic
    (count,) = struct.unpack_from("<Q", body, 4)
    assert count == 3  # keys 0, 1 and 2: Java's bitmap array is dense, key 1 holds an empty bitmap
    assert struct.unpack_from("<I", body, 12 + 4 + len(BitMap([1]).serialize())) == (1,)
    assert BitMap([]).serialize() in body
    # The framed 64-bit vector is exactly Iceberg's deletion-vector-v1 blob (the spec: "compatible with Iceberg").
    assert iceberg.deserialize_dv(framed).tolist() == positions
    data, ranges = D.write_index_file({"f": positions}, bitmap64=True)
    assert ranges[0].length == len(framed)  # f2 counts the size prefix and the CRC for 64-bit vectors
    assert D.read_vector(data, 1, len(framed), 2).tolist() == positions


@pytest.mark.rule("PAIMON-INDEX-004", "PAIMON-INDEX-005")
@pytest.mark.parametrize("bitmap64", [False, True])
def test_vectors_are_run_optimized_like_java(bitmap64):
    body = D.serialize_bitmap(range(1000), bitmap64)
    cookie_at = 16 if bitmap64 else 4  # after magic (and count + key)
    (cookie,) = struct.unpack_from("<I", body, cookie_at)
    assert cookie & 0xFFFF == 12347  # a run container, as RoaringBitmap.runOptimize leaves it


@pytest.mark.rule("PAIMON-INDEX-004", "PAIMON-INDEX-005", "PAIMON-INDEX-008")
@given(st.sets(st.integers(0, (1 << 31) - 1), max_size=40), st.booleans(),
       st.sets(st.integers(0, (1 << 40)), max_size=10))
def test_round_trip(small, bitmap64, large):
    positions = sorted(small | (large if bitmap64 else set()))
    data, ranges = D.write_index_file({"f": positions}, bitmap64=bitmap64)
    (r,) = ranges
    assert D.read_vector(data, r.offset, r.length, r.cardinality).tolist() == positions


# ---------------------------------------------------------------------------------------------
# Damaged files


def _file(body_or_positions, bitmap64=False):
    """(index file bytes, offset, f2) of one vector: positions are encoded, bytes are framed as they are."""
    if isinstance(body_or_positions, bytes):
        framed = reframe(body_or_positions)
        f2 = len(framed) if body_or_positions[:4] == struct.pack("<I", D.MAGIC_64) else len(framed) - 8
    else:
        framed = D.encode_vector(body_or_positions, bitmap64)
        f2 = len(framed) if bitmap64 else len(framed) - 8
    return b"\x01" + framed, 1, f2


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


MAGIC64 = struct.pack("<I", D.MAGIC_64)
EMPTY32 = BitMap([]).serialize()

def _with(file, offset=None, length=None, data=None):
    """``file`` (data, offset, f2) with one part replaced."""
    d, o, f2 = file
    return (d if data is None else data, o if offset is None else offset, f2 if length is None else length)


ONE, TWO, ONE64 = _file([1]), _file([1, 2]), _file([7], True)
BIG32 = struct.pack(">I", D.MAGIC_32) + BitMap([1 << 31]).serialize()

DAMAGES = [
    # (what, (index file bytes, offset, f2), cardinality, data file rows, message fragment, rule)
    ("version byte 2", _with(ONE, data=b"\x02" + ONE[0][1:]), None, None, "version 2", "PAIMON-INDEX-002"),
    ("empty file", (b"", 1, 0), None, None, "empty", "PAIMON-INDEX-002"),
    ("CRC flipped", _with(TWO, data=_flip(TWO[0], len(TWO[0]) - 1)), None, None, "CRC-32", "PAIMON-INDEX-003"),
    ("bitmap byte flipped", _with(TWO, data=_flip(TWO[0], 12)), None, None, "CRC-32", "PAIMON-INDEX-003"),
    ("truncated", _with(TWO, data=TWO[0][:-3]), None, None, "file ends", "PAIMON-INDEX-003"),
    ("size prefix past the end", _with(TWO, data=b"\x01\x7f\xff\xff\xff" + TWO[0][5:]), None, None, "file ends",
     "PAIMON-INDEX-003"),
    ("wrong magic", _file(b"\x00\x00\x00\x01" + EMPTY32), None, None, "magic", "PAIMON-INDEX-004"),
    ("32-bit f2 counting the frame", _with(ONE, length=ONE[2] + 8), None, None, "f2 should be", "PAIMON-INDEX-007"),
    ("64-bit f2 not counting the frame", _with(ONE64, length=ONE64[2] - 8), None, None, "f2 should be",
     "PAIMON-INDEX-007"),
    ("offset beyond the file", _with(ONE, offset=10_000), None, None, "outside", "PAIMON-INDEX-006"),
    ("offset on the version byte", _with(ONE, offset=0), None, None, "outside", "PAIMON-INDEX-006"),
    ("negative f2", _with(ONE, length=-1), None, None, "non-negative", "PAIMON-IDXMAN-004"),
    ("cardinality disagrees", _file([1, 2, 3]), 2, None, "_CARDINALITY says 2", "PAIMON-IDXMAN-004"),
    ("more positions than the file's rows", _file([1, 2, 9]), 3, 2, "more than the 2", "PAIMON-INDEX-008"),
    ("position past the file's rows", _file([1, 9]), 2, 9, "deletes row 9 of a file of 9", "PAIMON-INDEX-008"),
    ("32-bit position 2^31", _file(BIG32), None, None, "2\\^31 - 1", "PAIMON-INDEX-004"),
    ("bytes after a 32-bit bitmap", _file(struct.pack(">I", D.MAGIC_32) + EMPTY32 + b"\x00"), None, None,
     "follow the bitmap", "PAIMON-INDEX-004"),
    ("64-bit key with its top bit", _file(MAGIC64 + struct.pack("<QI", 1, 1 << 31) + EMPTY32), None, None,
     "top bit", "PAIMON-INDEX-009"),
    ("64-bit keys out of order", _file(MAGIC64 + struct.pack("<QI", 2, 1) + EMPTY32 + struct.pack("<I", 0) + EMPTY32),
     None, None, "not ascending", "PAIMON-INDEX-005"),
    ("64-bit count larger than the bytes", _file(MAGIC64 + struct.pack("<Q", 1 << 40)), None, None, "claims",
     "PAIMON-INDEX-005"),
    ("64-bit trailing bytes", _file(MAGIC64 + struct.pack("<QI", 1, 0) + EMPTY32 + b"\x00"), None, None,
     "follow the last bitmap", "PAIMON-INDEX-005"),
    ("64-bit bitmap cut short", _file(MAGIC64 + struct.pack("<QI", 1, 0) + b"\x3a\x30\x00\x00\x05\x00\x00\x00"
                                      + b"\x00" * 8), None, None, "bitmap 0", "PAIMON-INDEX-005"),
]


@pytest.mark.rule("PAIMON-INDEX-002", "PAIMON-INDEX-003", "PAIMON-INDEX-004", "PAIMON-INDEX-005", "PAIMON-INDEX-006",
                  "PAIMON-INDEX-007", "PAIMON-INDEX-008", "PAIMON-INDEX-009", "PAIMON-IDXMAN-004")
@pytest.mark.parametrize("what, file, cardinality, rows, fragment, rule", DAMAGES, ids=[d[0] for d in DAMAGES])
def test_damaged_vectors_are_refused(what, file, cardinality, rows, fragment, rule):
    data, offset, length = file
    with pytest.raises(InvalidTable, match=fragment) as exc:
        D.read_vector(data, offset, length, cardinality, row_count=rows, path="index/index-x-0")
    assert exc.value.rule == rule
    assert exc.value.path == "index/index-x-0"


@pytest.mark.rule("PAIMON-INDEX-008")
def test_positions_are_bounded_before_they_are_materialised(monkeypatch):
    # 2^20 positions take a few bytes as a run container and 8 MiB as positions: refused first
    data, offset, f2 = _file(range(1 << 20))
    assert len(data) < 300
    monkeypatch.setattr(D, "MAX_POSITIONS", 1000)
    with pytest.raises(InvalidTable, match="more than the 1,000"):
        D.read_vector(data, offset, f2)


@pytest.mark.rule("PAIMON-INDEX-004", "PAIMON-INDEX-009")
@pytest.mark.parametrize("positions, bitmap64, rule", [([-1], True, "PAIMON-INDEX-009"),
                                                       ([1 << 31], False, "PAIMON-INDEX-004"),
                                                       ([D.MAX_POSITION_64 + 1], True, "PAIMON-INDEX-009")])
def test_encoder_refuses_positions_java_refuses(positions, bitmap64, rule):
    with pytest.raises(InvalidTable) as exc:
        D.encode_vector(positions, bitmap64)
    assert exc.value.rule == rule
    # the largest position Java allows reads back (written sparse: Java's dense layout would need 2^31 bitmaps)
    sparse = MAGIC64 + struct.pack("<QI", 1, D.MAX_KEY_64) + BitMap([0x80000000]).serialize()
    assert D.read_vector(*_file(sparse), 1).tolist() == [D.MAX_POSITION_64]
    with pytest.raises(Unsupported, match="dense"):
        D.encode_vector([1 << 50], True)


@pytest.mark.rule("PAIMON-IDXMAN-004")
def test_two_ranges_for_one_data_file_are_refused():
    data, ranges = D.write_index_file({"a": [1], "b": [2]})
    with pytest.raises(InvalidTable, match="two deletion vectors") as exc:
        D.read_index_file(data, [ranges[0], ranges[0]])
    assert exc.value.rule == "PAIMON-IDXMAN-004"


@pytest.mark.rule("PAIMON-LAYOUT-007")
def test_missing_index_file_is_an_invalid_table(tmp_path):
    storage = LocalStorage(str(tmp_path))
    with pytest.raises(InvalidTable, match="does not exist") as exc:
        D.load_vector(storage, "index/index-nope-0", 1, 10)
    assert exc.value.rule == "PAIMON-LAYOUT-007"
    data, ranges = D.write_index_file({"a": [4]})
    storage.put_if_absent("index/index-x-0", data)
    assert D.load_vector(storage, "index/index-x-0", ranges[0].offset, ranges[0].length, 1).tolist() == [4]


# ---------------------------------------------------------------------------------------------
# pypaimon 2.1.0: it writes deletion vectors for data-evolution append tables (delete by _ROW_ID);
# primary-key tables get no vectors from it (it writes level-0 files only and never compacts).


_write = PP.write


def _pypaimon_dv_table(root, options, deletes):
    """A data-evolution table of two 10-row files (ids 0..9, 100..109), rows deleted by _ROW_ID per commit."""
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema

    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("db", True)
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    opts = {"data-evolution.enabled": "true", "row-tracking.enabled": "true", "deletion-vectors.enabled": "true",
            **options}
    cat.create_table("db.t", Schema.from_pyarrow_schema(schema, options=opts), False)
    table = cat.get_table("db.t")
    for start in (0, 100):
        ids = list(range(start, start + 10))
        _write(table, pa.table({"id": ids, "name": [f"n{i}" for i in ids]}, schema=schema))
    for row_ids in deletes:
        wb = table.new_batch_write_builder()
        commit = wb.new_commit()
        commit.commit(wb.new_update().delete_by_row_id(row_ids))
        commit.close()
    return cat.get_table("db.t"), root / "db.db" / "t"


def _live_dv_entries(table_dir):
    """The DELETION_VECTORS entries of the latest snapshot's index manifest (Avro, read with fastavro)."""
    import fastavro

    latest = (table_dir / "snapshot" / "LATEST").read_text().strip()
    snapshot = json.loads((table_dir / "snapshot" / f"snapshot-{latest}").read_text())
    with open(table_dir / "manifest" / snapshot["indexManifest"], "rb") as fh:
        entries = [e for e in fastavro.reader(fh) if e["_INDEX_TYPE"] == D.INDEX_TYPE]
    return snapshot, entries


def _ranges(entry):
    return [D.DvRange(data_file=r["f0"], offset=r["f1"], length=r["f2"], cardinality=r["_CARDINALITY"])
            for r in entry["_DELETIONS_VECTORS_RANGES"]]


@pytest.fixture(scope="module")
def dv_table(tmp_path_factory):
    pytest.importorskip("pypaimon")
    return _pypaimon_dv_table(tmp_path_factory.mktemp("pp-dv"), {}, [[0, 3, 5, 12, 19], [1, 14]])


@pytest.mark.rule("PAIMON-INDEX-002", "PAIMON-INDEX-003", "PAIMON-INDEX-004", "PAIMON-INDEX-006", "PAIMON-INDEX-008",
                  "PAIMON-IDXMAN-003", "PAIMON-IDXMAN-004", "PAIMON-IDXMAN-005", "PAIMON-LAYOUT-007")
def test_pypaimon_vectors_read_like_pypaimon_reads_them(dv_table):
    from pypaimon.deletionvectors.deletion_vector import DeletionVector
    from pypaimon.table.source.deletion_file import DeletionFile

    table, table_dir = dv_table
    storage = LocalStorage(str(table_dir))
    _, entries = _live_dv_entries(table_dir)
    assert len(entries) == 1  # one bucket, one live deletion file (the second delete merged the first)
    (entry,) = entries
    path = f"index/{entry['_FILE_NAME']}"  # a bare name, resolved in index/ (PAIMON-LAYOUT-007)
    assert entry["_EXTERNAL_PATH"] is None and storage.exists(path)
    data = storage.read(path)
    assert entry["_FILE_SIZE"] == len(data) and entry["_ROW_COUNT"] == len(entry["_DELETIONS_VECTORS_RANGES"])
    ours = D.read_index_file(data, _ranges(entry), path=path, row_counts={r.data_file: 10 for r in _ranges(entry)})
    theirs = {}
    for r in _ranges(entry):
        dv = DeletionVector.read(table.file_io, DeletionFile(str(table_dir / path), r.offset, r.length, r.cardinality))
        theirs[r.data_file] = sorted(dv.bit_map())
    assert {k: v.tolist() for k, v in ours.items()} == theirs
    assert sorted(sum((v.tolist() for v in ours.values()), [])) == [0, 1, 2, 3, 4, 5, 9]  # row ids 0,1,3,5 | 12,14,19


@pytest.mark.rule("PAIMON-INDEX-008", "PAIMON-DATA-005")
def test_applying_pypaimon_vectors_gives_pypaimon_rows(dv_table):
    import pyarrow as pa

    from reference_impl.paimon import datafiles as DF
    from reference_impl.paimon.types import parse_field

    table, table_dir = dv_table
    storage = LocalStorage(str(table_dir))
    fields = [parse_field(f) for f in json.loads((table_dir / "schema" / "schema-0").read_text())["fields"]]
    (entry,) = _live_dv_entries(table_dir)[1]
    vectors = D.read_index_file(storage.read(f"index/{entry['_FILE_NAME']}"), _ranges(entry))
    rows = []
    for info in storage.list("bucket-0"):
        name = info.path.rsplit("/", 1)[-1]
        data = DF.read_data_file(storage, info.path, fields, fields, primary_key=False)
        rows.append(DF.apply_deletion_vector(data, vectors.get(name, np.empty(0, np.uint64))))
    ours = pa.concat_tables(rows).sort_by("id")
    rb = table.new_read_builder()
    theirs = rb.new_read().to_arrow(rb.new_scan().plan().splits()).sort_by("id")
    assert ours.to_pylist() == theirs.select(ours.column_names).to_pylist()
    assert ours.column("id").to_pylist() == [2, 4, 6, 7, 8, 9, 100, 101, 103, 105, 106, 107, 108]


@pytest.mark.rule("PAIMON-INDEX-005")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="finding: pypaimon 2.1.0 ignores deletion-vectors.bitmap64=true and writes "
                   "32-bit vectors (magic 1581511376); Java writes Bitmap64DeletionVector (magic 1681511377 LE). "
                   "Both read back (readers dispatch on the magic), but the table is not Iceberg-compatible as "
                   "the option promises.")
def test_pypaimon_honours_bitmap64(tmp_path):
    pytest.importorskip("pypaimon")
    _, table_dir = _pypaimon_dv_table(tmp_path, {"deletion-vectors.bitmap64": "true"}, [[0, 3]])
    (entry,) = _live_dv_entries(table_dir)[1]
    data = (table_dir / "index" / entry["_FILE_NAME"]).read_bytes()
    r = _ranges(entry)[0]
    assert D.read_vector(data, r.offset, r.length, r.cardinality).tolist() == [0, 3]  # either bitmap reads
    assert data[r.offset + 4:r.offset + 8] == struct.pack("<I", D.MAGIC_64)


@pytest.mark.rule("PAIMON-INDEX-005")
@pytest.mark.xfail(strict=True, raises=RuntimeError,
                   reason="finding: pypaimon 2.1.0 DeletionVector.read knows only the 32-bit magic; a table Java "
                   "wrote with deletion-vectors.bitmap64=true (Java's golden dvindex-64) cannot be read by it")
def test_pypaimon_reads_java_64bit_vectors(tmp_path):
    pytest.importorskip("pypaimon")
    from pypaimon.common.file_io import FileIO
    from pypaimon.deletionvectors.deletion_vector import DeletionVector
    from pypaimon.table.source.deletion_file import DeletionFile

    path = tmp_path / "index-java-64"
    path.write_bytes(JAVA_DVINDEX_64)
    dv = DeletionVector.read(FileIO.get(str(tmp_path)), DeletionFile(str(path), 1, 44, 2))
    assert sorted(dv.bit_map()) == [2, 3]


@pytest.mark.rule("PAIMON-INDEX-004")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="finding (bytes, not meaning): pypaimon 2.1.0 serializes 32-bit vectors "
                   "without runOptimize, so a contiguous delete is an array container (124 bytes for 50 rows) "
                   "where Java's RoaringBitmap32.serialize writes a run container (27 bytes); both decode alike")
def test_pypaimon_vector_bytes_equal_javas(tmp_path):
    pytest.importorskip("pypaimon")
    _, table_dir = _pypaimon_dv_table(tmp_path, {}, [list(range(0, 10)) + list(range(10, 20))])
    (entry,) = _live_dv_entries(table_dir)[1]
    data = (table_dir / "index" / entry["_FILE_NAME"]).read_bytes()
    for r in _ranges(entry):
        positions = D.read_vector(data, r.offset, r.length, r.cardinality)
        assert data[r.offset:r.offset + r.length + 8] == D.encode_vector(positions)


@pytest.mark.rule("PAIMON-LAYOUT-006")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="finding: pypaimon 2.1.0 names index manifests index-manifest-<uuid> "
                   "(manifest/index_manifest_file.py); Java's FileStorePathFactory.indexManifestFileFactory writes "
                   "index-manifest-<uuid>-<n>")
def test_pypaimon_index_manifest_name(dv_table):
    from reference_impl.paimon.layout import name_matches

    snapshot, _ = _live_dv_entries(dv_table[1])
    assert name_matches("index-manifest", snapshot["indexManifest"])
