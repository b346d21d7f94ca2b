"""Puffin files (reference_impl.iceberg.puffin): container, footer, codecs, damage; PyIceberg peer check."""

from __future__ import annotations

import json
import struct

import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import puffin as PF

pytestmark = pytest.mark.rule("ICEBERG-DV-014", "ICEBERG-DV-015")


def _file(*blobs: PF.Blob, **kw) -> bytes:
    return PF.write_puffin(blobs, **kw)[0]


def test_round_trip_layout():
    a = PF.Blob(type=PF.THETA_SKETCH_V1, payload=b"sketch", fields=(1, 2), snapshot_id=7, sequence_number=3, properties={"ndv": "12"})
    b = PF.Blob(type="custom", payload=b"")
    data, md = PF.write_puffin([a, b], properties={"created-by": "test"})
    assert data[:4] == b"PFA1" and data[-4:] == b"PFA1"
    (size,) = struct.unpack("<i", data[-12:-8])
    assert data[-8:-4] == b"\x00\x00\x00\x00"
    footer = json.loads(data[-12 - size : -12])
    assert footer["properties"] == {"created-by": "test"}
    assert footer["blobs"][0] == {"type": PF.THETA_SKETCH_V1, "fields": [1, 2], "snapshot-id": 7, "sequence-number": 3,
                                  "offset": 4, "length": 6, "properties": {"ndv": "12"}}
    assert "compression-codec" not in footer["blobs"][0] and "properties" not in footer["blobs"][1]
    got = PF.read_footer(data)
    assert got == md and got.blobs[1].offset == 10 and got.blobs[1].length == 0
    assert PF.read_blob(data, got.blobs[0]) == b"sketch"
    assert PF.footer_size(data) == 4 + size + 12


def test_zstd_blob_round_trip():
    pytest.importorskip("zstandard")
    payload = b"x" * 1000
    data, md = PF.write_puffin([PF.Blob(type="t", payload=payload, compression_codec=PF.CODEC_ZSTD)])
    blob = PF.read_footer(data).blobs[0]
    assert blob.compression_codec == "zstd" and blob.length < 100
    assert PF.read_blob(data, blob) == payload


def test_lz4_needs_the_lz4_package():
    try:
        import lz4.frame  # noqa: F401
    except ImportError:
        with pytest.raises(Unsupported, match="lz4"):
            PF.write_puffin([PF.Blob(type="t", payload=b"a", compression_codec="lz4")])
        data = bytearray(_file(PF.Blob(type="t", payload=b"a")))
        data[-8] = PF.FLAG_FOOTER_COMPRESSED  # claim an LZ4 footer
        with pytest.raises(Unsupported, match="LZ4"):
            PF.read_footer(bytes(data))
    else:  # pragma: no cover - where lz4 is installed the compressed footer must round-trip
        data = _file(PF.Blob(type="t", payload=b"a", compression_codec="lz4"), compress_footer=True)
        assert PF.read_blob(data, PF.read_footer(data).blobs[0]) == b"a"


@pytest.mark.parametrize("damage, fragment", [
    (lambda d: b"XXXX" + d[4:], "starts with"),
    (lambda d: d[:-4] + b"XXXX", "ends with"),
    (lambda d: d[:10], "at least"),
    (lambda d: d[:-12] + struct.pack("<i", len(d)) + d[-8:], "does not fit"),
    (lambda d: d[:-12] + struct.pack("<i", -1) + d[-8:], "does not fit"),
    (lambda d: d[:-12] + struct.pack("<i", struct.unpack("<i", d[-12:-8])[0] - 1) + d[-8:], "does not start with"),
])
def test_damaged_containers_are_invalid(damage, fragment):
    data = _file(PF.Blob(type="t", payload=b"abc"))
    with pytest.raises(InvalidTable, match=fragment) as exc:
        PF.read_footer(damage(data))
    assert exc.value.rule == PF.RULE_CONTAINER


def test_reserved_flags_are_unsupported():
    data = bytearray(_file(PF.Blob(type="t", payload=b"abc")))
    data[-7] = 1
    with pytest.raises(Unsupported, match="reserved"):
        PF.read_footer(bytes(data))


def _with_footer(obj) -> bytes:
    payload = json.dumps(obj).encode()
    return b"PFA1" + b"abc" + b"PFA1" + payload + struct.pack("<i", len(payload)) + b"\x00\x00\x00\x00" + b"PFA1"


GOOD = {"type": "t", "fields": [], "snapshot-id": -1, "sequence-number": -1, "offset": 4, "length": 3}


@pytest.mark.parametrize("footer, fragment, rule", [
    ({}, "'blobs'", PF.RULE_FOOTER_FIELDS),
    ({"blobs": [{k: v for k, v in GOOD.items() if k != "offset"}]}, "'offset'", PF.RULE_FOOTER_FIELDS),
    ({"blobs": [{k: v for k, v in GOOD.items() if k != "type"}]}, "'type'", PF.RULE_FOOTER_FIELDS),
    ({"blobs": [{**GOOD, "fields": ["a"]}]}, "'fields'", PF.RULE_FOOTER_FIELDS),
    ({"blobs": [{**GOOD, "snapshot-id": "1"}]}, "JSON integer", PF.RULE_FOOTER_FIELDS),
    ({"blobs": [{**GOOD, "compression-codec": "gzip"}]}, "gzip", PF.RULE_FOOTER_FIELDS),
    ({"blobs": [{**GOOD, "properties": {"a": 1}}]}, "string values", PF.RULE_FOOTER_FIELDS),
    ({"blobs": [{**GOOD, "length": 4}]}, "outside the blob area", PF.RULE_CONTAINER),
    ({"blobs": [{**GOOD, "offset": 0}]}, "outside the blob area", PF.RULE_CONTAINER),
    ([1], "FileMetadata", PF.RULE_FOOTER_FIELDS),
])
def test_bad_footers_name_the_field(footer, fragment, rule):
    with pytest.raises(InvalidTable, match=fragment) as exc:
        PF.read_footer(_with_footer(footer))
    assert exc.value.rule == rule


def test_minimal_footer_reads():
    md = PF.read_footer(_with_footer({"blobs": [GOOD]}))
    assert md.blobs[0].properties == {} and md.properties == {}
    assert PF.read_blob(_with_footer({"blobs": [GOOD]}), md.blobs[0]) == b"abc"


def test_pyiceberg_reads_our_puffin():
    pytest.importorskip("pyiceberg")
    from pyiceberg.table.puffin import PuffinFile

    data = _file(PF.Blob(type=PF.DELETION_VECTOR_V1, payload=b"12345", fields=(2147483545,), properties={"referenced-data-file": "s3://b/f"}))
    pf = PuffinFile(data)
    assert pf.footer.blobs[0].offset == 4 and pf.get_blob_payload(pf.footer.blobs[0]) == b"12345"
