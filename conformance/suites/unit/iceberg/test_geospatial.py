"""Appendix G: WKB <-> WKT for geometry/geography values (reference_impl.iceberg.geospatial)."""

from __future__ import annotations

import struct

import pytest

from conformance.roundtrip import assert_roundtrip
from reference_impl.errors import InvalidTable
from reference_impl.iceberg import geospatial as G


@pytest.mark.rule("ICEBERG-TYPE-018", "ICEBERG-SERDE-024")
@pytest.mark.parametrize(
    "wkt",
    [
        "POINT (30 10)",
        "POINT Z (1 2 3)",
        "POINT M (1 2 4)",
        "POINT ZM (1 2 3 4)",
        "POINT EMPTY",
        "LINESTRING (30 10, 10 30, 40 40)",
        "LINESTRING EMPTY",
        "POLYGON ((30 10, 40 40, 20 40, 10 20, 30 10), (20 30, 35 35, 30 20, 20 30))",
        "MULTIPOINT ((10 40), (40 30), (20 20), (30 10))",
        "MULTILINESTRING ((10 10, 20 20, 10 40), (40 40, 30 30, 40 20, 30 10))",
        "MULTIPOLYGON (((30 20, 45 40, 10 40, 30 20)), ((15 5, 40 10, 10 20, 5 10, 15 5)))",
        "GEOMETRYCOLLECTION (POINT (40 10), LINESTRING (10 10, 20 20, 10 40), POLYGON EMPTY)",
        "POINT (-179.5 0.125)",
    ],
)
def test_wkt_wkb_round_trip(wkt):
    assert_roundtrip(wkt, G.wkt_to_wkb, G.wkb_to_wkt, label=wkt)


@pytest.mark.rule("ICEBERG-TYPE-018")
def test_known_wkb_bytes_and_big_endian_input():
    little = G.wkt_to_wkb("POINT Z (1 2 3)")
    assert little == struct.pack("<BI3d", 1, 1001, 1.0, 2.0, 3.0)
    big = struct.pack(">BI2d", 0, 1, 30.0, 10.0)
    assert G.wkb_to_wkt(big) == "POINT (30 10)"
    assert G.wkb_to_wkt(G.wkt_to_wkb("multipoint (1 2, 3 4)")) == "MULTIPOINT ((1 2), (3 4))"


@pytest.mark.rule("ICEBERG-TYPE-018")
@pytest.mark.parametrize(
    "data,fragment",
    [
        (b"\x01\x01\x00\x00\x00" + b"\x00" * 8, "truncated"),
        (struct.pack("<BI2d", 1, 1, 1.0, 2.0) + b"\x00", "trailing"),
        (struct.pack("<BI", 1, 0x20000001) + b"\x00" * 16, "ISO"),
        (struct.pack("<BI", 2, 1), "byte order"),
        (struct.pack("<BII", 1, 4, 1) + struct.pack("<BI", 1, 2) + struct.pack("<I", 0), "non-POINT"),
    ],
)
def test_bad_wkb(data, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        G.parse_wkb(data)


@pytest.mark.rule("ICEBERG-TYPE-018")
@pytest.mark.parametrize("text,fragment", [("POINT (1)", "coordinates"), ("POINT Z (1 2)", "coordinates"), ("CIRCLE (1 2)", "unknown WKT"), ("POINT (1 2", "ends too early"), ("POINT (1 2) x", "trailing"), ("POINT (a b)", "expected|not a number|bad WKT")])
def test_bad_wkt(text, fragment):
    with pytest.raises(InvalidTable, match=fragment):
        G.parse_wkt(text)
