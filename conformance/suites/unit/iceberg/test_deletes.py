"""Delete formats (reference_impl.iceberg.deletes): DV blobs, Puffin DV files, position and equality delete files."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.errors import InvalidTable
from reference_impl.iceberg import deletes as D
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import puffin as PF
from reference_impl.iceberg import types as T
from reference_impl.parquet_io import open_parquet
from reference_impl.storage import LocalStorage


@pytest.fixture
def st(tmp_path):
    return LocalStorage(str(tmp_path / "t"))


# ---------------------------------------------------------------------------------------------
# deletion-vector-v1 blobs


@pytest.mark.rule("ICEBERG-DV-002", "ICEBERG-DV-003", "ICEBERG-DV-004", "ICEBERG-DV-005")
def test_dv_blob_layout_and_round_trip():
    positions = [0, 3, 7, 1 << 32, (1 << 32) + 5, (5 << 32) + 1]
    blob = D.serialize_dv(positions)
    (length,) = struct.unpack(">I", blob[:4])
    assert length == len(blob) - 8 and blob[4:8] == bytes.fromhex("d1d33964")
    (crc,) = struct.unpack(">I", blob[-4:])
    assert crc == zlib.crc32(blob[4:-4])
    vector = blob[8:-4]
    (count,) = struct.unpack("<Q", vector[:8])
    assert count == 3  # keys 0, 1 and 5: one 32-bit bitmap each
    assert struct.unpack("<I", vector[8:12]) == (0,)
    assert D.deserialize_dv(blob).tolist() == positions
    assert D.deserialize_dv(D.serialize_dv([])).tolist() == []
    assert D.deserialize_dv(D.serialize_dv(np.array([5, 5, 1], dtype=np.uint64))).tolist() == [1, 5]


@pytest.mark.rule("ICEBERG-DV-004", "ICEBERG-DV-005")
@pytest.mark.parametrize("damage, fragment, rule", [
    (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "CRC", D.RULE_DV_FRAME),
    (lambda b: b[:4] + b"\x00" + b[5:], "magic", D.RULE_DV_FRAME),
    (lambda b: struct.pack(">I", len(b)) + b[4:], "says magic", D.RULE_DV_FRAME),
    (lambda b: b[:6], "too short", D.RULE_DV_FRAME),
])
def test_damaged_dv_blobs(damage, fragment, rule):
    with pytest.raises(InvalidTable, match=fragment) as exc:
        D.deserialize_dv(damage(D.serialize_dv([1, 2, 3])))
    assert exc.value.rule == rule


@pytest.mark.rule("ICEBERG-DV-005", "ICEBERG-DV-003")
def test_bad_vectors_are_refused():
    from pyroaring import BitMap

    def frame(vector: bytes) -> bytes:
        body = D.DV_MAGIC + vector
        return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))

    bm = BitMap([1]).serialize()
    descending = struct.pack("<Q", 2) + struct.pack("<I", 2) + bm + struct.pack("<I", 1) + bm
    with pytest.raises(InvalidTable, match="ascending") as exc:
        D.deserialize_dv(frame(descending))
    assert exc.value.rule == D.RULE_DV_BITMAP
    top_bit = struct.pack("<Q", 1) + struct.pack("<I", 0x80000000) + bm
    with pytest.raises(InvalidTable, match="top bit"):
        D.deserialize_dv(frame(top_bit))
    with pytest.raises(InvalidTable):
        D.deserialize_dv(frame(struct.pack("<Q", 1) + struct.pack("<I", 0) + bm[:-2]))
    with pytest.raises(InvalidTable, match="negative"):
        D.serialize_dv([-1])


def test_pyiceberg_decodes_our_dv():
    pytest.importorskip("pyiceberg")
    from pyiceberg.table.deletion_vector import DeletionVector, _extract_vector_payload

    positions = [2, 9, (1 << 32) + 4]
    blob = D.serialize_dv(positions)
    dv = DeletionVector(referenced_data_file="x", bitmaps=DeletionVector._deserialize_bitmap(_extract_vector_payload(blob)))
    assert dv.to_vector().to_pylist() == positions


# ---------------------------------------------------------------------------------------------
# Puffin DV files


@pytest.mark.rule("ICEBERG-DV-006", "ICEBERG-DV-007", "ICEBERG-DV-008", "ICEBERG-DV-013")
def test_dv_puffin_file_and_manifest_fields(st):
    a, b = st.uri("data/a.parquet"), st.uri("data/b.parquet")
    refs = D.write_dv_puffin(st, "data/dv1.puffin", {a: [1, 2], b: [0]})
    data = st.read("data/dv1.puffin")
    footer = PF.read_footer(data)
    assert [(x.offset, x.length) for x in footer.blobs] == [(r.offset, r.size) for r in refs]
    assert [r.cardinality for r in refs] == [2, 1]
    offset, size, card = refs[0]  # unpacks as (offset, size, cardinality)
    blob = footer.blobs[0]
    assert (blob.type, blob.snapshot_id, blob.sequence_number, blob.compression_codec) == ("deletion-vector-v1", -1, -1, None)
    assert dict(blob.properties) == {"referenced-data-file": a, "cardinality": "2"} and blob.fields == (D.ROW_POSITION_ID,)
    files = D.write_dvs(st, "data/dv2.puffin", {a: [4], b: [5, 6]}, partitions={b: {1000: "p"}})
    assert [f.referenced_data_file for f in files] == [a, b] and [f.record_count for f in files] == [1, 2]
    assert all(f.content == MF.POSITION_DELETES and f.file_format == "puffin" and D.is_dv(f) for f in files)
    assert files[1].partition == {1000: "p"} and files[0].partition == {}
    assert files[0].file_size_in_bytes == len(st.read("data/dv2.puffin"))
    raw = st.read("data/dv2.puffin")
    assert D.read_dv(raw, files[1]).tolist() == [5, 6] and D.read_dv(raw, files[0]).tolist() == [4]


@pytest.mark.rule("ICEBERG-DV-008", "ICEBERG-DV-006")
def test_dv_entries_must_match_the_footer(st):
    a = st.uri("data/a.parquet")
    (f,) = D.write_dvs(st, "data/dv.puffin", {a: [1]})
    raw = st.read("data/dv.puffin")
    import dataclasses

    for bad, fragment in ((dataclasses.replace(f, content_offset=f.content_offset + 1), "no Puffin blob"),
                          (dataclasses.replace(f, content_size_in_bytes=f.content_size_in_bytes - 1), "no Puffin blob"),
                          (dataclasses.replace(f, referenced_data_file=st.uri("data/other.parquet")), "references"),
                          (dataclasses.replace(f, content_offset=None), "needs referenced_data_file")):
        with pytest.raises(InvalidTable, match=fragment) as exc:
            D.read_dv(raw, bad)
        assert exc.value.rule == D.RULE_DV_ENTRY
    # A bare blob instead of a Puffin file (duckdb-iceberg#1093): not a Puffin container.
    with pytest.raises(InvalidTable) as exc:
        D.read_dv(D.serialize_dv([1]), dataclasses.replace(f, content_offset=0))
    assert exc.value.rule == PF.RULE_CONTAINER
    pytest.importorskip("zstandard")
    data, md = PF.write_puffin([PF.Blob(type=PF.DELETION_VECTOR_V1, payload=D.serialize_dv([1]), compression_codec="zstd")])
    compressed = dataclasses.replace(f, content_offset=md.blobs[0].offset, content_size_in_bytes=md.blobs[0].length)
    with pytest.raises(InvalidTable, match="never compressed") as exc:
        D.read_dv(data, compressed)
    assert exc.value.rule == "ICEBERG-DV-006"


# ---------------------------------------------------------------------------------------------
# Position delete files


@pytest.mark.rule("ICEBERG-DELETE-005", "ICEBERG-DELETE-006", "ICEBERG-DELETE-007", "ICEBERG-DELETE-009", "ICEBERG-SCHEMA-010")
def test_position_delete_file_round_trip(st):
    a, b = st.uri("data/b.parquet"), st.uri("data/a.parquet")
    f = D.write_position_deletes(st, "data/pos.parquet", {a: [9, 1, 1], b: [3]}, partition={1000: "x"})
    assert f.content == MF.POSITION_DELETES and f.record_count == 3 and f.referenced_data_file is None and f.sort_order_id is None
    assert f.partition == {1000: "x"} and f.lower_bounds[D.FILE_PATH_ID] == b.encode() and f.upper_bounds[D.FILE_PATH_ID] == a.encode()
    assert f.lower_bounds[D.POS_ID] == struct.pack("<q", 1) and f.upper_bounds[D.POS_ID] == struct.pack("<q", 9)
    pf = open_parquet(st.read("data/pos.parquet"))
    assert [fl.metadata[b"PARQUET:field_id"] for fl in pf.schema_arrow] == [b"2147483546", b"2147483545"]
    t = pf.read()
    assert list(zip(t.column(0).to_pylist(), t.column(1).to_pylist())) == [(b, 3), (a, 1), (a, 9)]  # sorted by path, then pos
    table = D.read_position_deletes(st.read("data/pos.parquet"))
    assert D.positions_for(table, a).tolist() == [1, 9] and D.positions_for(table, st.uri("data/zz.parquet")).tolist() == []
    single = D.write_position_deletes(st, "data/pos1.parquet", {a: [0]})
    assert single.referenced_data_file == a


def _parquet(table: pa.Table) -> bytes:
    import io

    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


@pytest.mark.rule("ICEBERG-DELETE-005", "ICEBERG-DELETE-007")
def test_position_delete_files_are_read_by_field_id():
    ids = lambda i: {b"PARQUET:field_id": str(i).encode()}  # noqa: E731
    renamed = pa.table([pa.array(["f"]), pa.array([4], pa.int64()), pa.array([1], pa.int32())],
                       schema=pa.schema([pa.field("p", pa.string(), metadata=ids(D.FILE_PATH_ID)), pa.field("q", pa.int64(), metadata=ids(D.POS_ID)),
                                         pa.field("extra", pa.int32(), metadata=ids(5))]))
    assert D.positions_for(D.read_position_deletes(_parquet(renamed)), "f").tolist() == [4]
    no_ids = pa.table({"file_path": ["f"], "pos": pa.array([2], pa.int64())})
    assert D.positions_for(D.read_position_deletes(_parquet(no_ids)), "f").tolist() == [2]
    missing = pa.table([pa.array(["f"])], schema=pa.schema([pa.field("file_path", pa.string(), metadata=ids(D.FILE_PATH_ID))]))
    with pytest.raises(InvalidTable, match="lacks") as exc:
        D.read_position_deletes(_parquet(missing))
    assert exc.value.rule == "ICEBERG-DELETE-005"
    negative = pa.table({"file_path": ["f"], "pos": pa.array([-1], pa.int64())})
    with pytest.raises(InvalidTable, match="negative") as exc:
        D.read_position_deletes(_parquet(negative))
    assert exc.value.rule == "ICEBERG-DELETE-007"
    nulls = pa.table({"file_path": ["f", None], "pos": pa.array([1, 2], pa.int64())})
    with pytest.raises(InvalidTable, match="null"):
        D.read_position_deletes(_parquet(nulls))


# ---------------------------------------------------------------------------------------------
# Equality delete files


SCHEMA = T.Schema(schema_id=0, fields=(
    T.NestedField(id=1, name="id", type=T.INT, required=True),
    T.NestedField(id=2, name="category", type=T.STRING),
    T.NestedField(id=3, name="name", type=T.STRING),
    T.NestedField(id=4, name="score", type=T.DOUBLE),
    T.NestedField(id=5, name="tags", type=T.ListType(element_id=6, element=T.STRING)),
    T.NestedField(id=7, name="loc", type=T.StructType(fields=(T.NestedField(id=8, name="zip", type=T.STRING),))),
))

SPEC_DATA = pa.table({"id": pa.array([1, 2, 3, 4], pa.int32()), "category": ["marsupial", "toy", None, None],
                      "name": ["Koala", "Teddy", "Grizzly", "Polar"]})


@pytest.mark.rule("ICEBERG-DELETE-014")
def test_equality_mask_is_null_safe_as_in_the_spec_example():
    # The spec's example: delete "id = 4 AND category IS NULL" written with equality_ids [1, 2].
    deletes = pa.table({"id": pa.array([4], pa.int32()), "category": pa.array([None], pa.string())})
    mask = D.equality_delete_mask(SPEC_DATA.select(["id", "category"]), deletes)
    assert mask.tolist() == [False, False, False, True]
    # "id = 3" with equality_ids [1]: the category of the delete row plays no part.
    assert D.equality_delete_mask(SPEC_DATA.select(["id"]), pa.table({"id": pa.array([3], pa.int32())})).tolist() == [False, False, True, False]
    # A null delete value matches only nulls (IS NULL), never a value.
    cat_null = D.equality_delete_mask(SPEC_DATA.select(["category"]), pa.table({"category": pa.array([None], pa.string())}))
    assert cat_null.tolist() == [False, False, True, True]
    assert D.equality_delete_mask(SPEC_DATA.select(["id"]), pa.table({"id": pa.array([], pa.int32())})).tolist() == [False] * 4


def test_equality_mask_many_columns_and_rows():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 2000)
    b = rng.integers(0, 7, 2000).astype(object)
    b[::11] = None
    data = pa.table({"a": pa.array(a), "b": pa.array(list(b), pa.int64())})
    dels = data.slice(0, 40)
    want = {(x, y) for x, y in zip(dels.column(0).to_pylist(), dels.column(1).to_pylist())}
    got = D.equality_delete_mask(data, dels)
    assert got.tolist() == [(x, y) in want for x, y in zip(data.column(0).to_pylist(), data.column(1).to_pylist())]


@pytest.mark.rule("ICEBERG-DELETE-012", "ICEBERG-DELETE-013", "ICEBERG-MANIFEST-035")
def test_equality_delete_file_writer(st):
    f = D.write_equality_deletes(st, "data/eq.parquet", SPEC_DATA.slice(3), [1, 2], SCHEMA, partition={})
    assert f.content == MF.EQUALITY_DELETES and f.equality_ids == (1, 2) and f.record_count == 1
    assert f.null_value_counts == {1: 0, 2: 1, 3: 0} and f.lower_bounds[1] == struct.pack("<i", 4)
    pf = open_parquet(st.read("data/eq.parquet"))
    assert [fl.metadata[b"PARQUET:field_id"] for fl in pf.schema_arrow] == [b"1", b"2", b"3"]
    for ids, fragment in (([4], "float or double"), ([6], "list or map"), ([5], "primitive"), ([99], "not a field"), ([], "needs equality_ids")):
        with pytest.raises(InvalidTable, match=fragment):
            D.write_equality_deletes(st, "data/bad.parquet", SPEC_DATA, ids, SCHEMA)
    with pytest.raises(InvalidTable, match="not columns") as exc:
        D.write_equality_deletes(st, "data/bad2.parquet", SPEC_DATA.select(["id"]), [1, 2], SCHEMA)
    assert exc.value.rule == "ICEBERG-MANIFEST-035"
    nested = D.write_equality_deletes(st, "data/eq2.parquet", pa.table({"loc": [{"zip": "1"}]}), [8], SCHEMA)
    assert nested.equality_ids == (8,)
    json.dumps(nested.value_counts)  # plain ints
