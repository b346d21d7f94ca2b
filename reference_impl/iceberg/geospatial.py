"""Appendix G: Geospatial Notes: ISO WKB (stored values) <-> WKT (JSON single values), XY/XYZ/XYM/XYZM.

Only what the spec needs from OGC Simple Features: the seven geometry kinds (Point, LineString,
Polygon, MultiPoint, MultiLineString, MultiPolygon, GeometryCollection) with their ISO WKB type
codes (+1000 Z, +2000 M, +3000 ZM), EMPTY geometries (an empty point is NaN coordinates), and
both WKB byte orders on read. Output WKB is little-endian. Anything else is InvalidTable.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Any

from reference_impl.errors import InvalidTable

KINDS = ("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION")
_CODE = {k: i + 1 for i, k in enumerate(KINDS)}
_DIM_OFFSET = {"": 0, "Z": 1000, "M": 2000, "ZM": 3000}
RULE = "ICEBERG-TYPE-018"


@dataclass(frozen=True, slots=True, kw_only=True)
class Geometry:
    """A parsed geometry: kind, dimension suffix ("", "Z", "M", "ZM") and nested coordinate lists (None when EMPTY)."""

    kind: str
    dims: str
    body: Any


def _ndims(dims: str) -> int:
    return 2 + len(dims)


# ---------------------------------------------------------------------------------------------
# WKB


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> tuple:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise InvalidTable("WKB value is truncated", rule=RULE)
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out


def _read_geom(r: _Reader, depth: int = 0) -> Geometry:
    if depth > 64:
        raise InvalidTable("WKB nests too deeply", rule=RULE)
    (order,) = r.take("B")
    if order not in (0, 1):
        raise InvalidTable(f"bad WKB byte order {order}", rule=RULE)
    e = "<" if order == 1 else ">"
    (code,) = r.take(e + "I")
    base, dim_code = code % 1000, code // 1000
    if not 1 <= base <= 7 or dim_code > 3:
        raise InvalidTable(f"unsupported WKB geometry type {code} (ISO codes only)", rule=RULE)
    kind, dims = KINDS[base - 1], ("", "Z", "M", "ZM")[dim_code]
    n = _ndims(dims)

    def point() -> list[float]:
        return list(r.take(e + "d" * n))

    def points() -> list[list[float]]:
        (count,) = r.take(e + "I")
        return [point() for _ in range(count)]

    if kind == "POINT":
        p = point()
        return Geometry(kind=kind, dims=dims, body=None if all(math.isnan(c) for c in p) else p)
    if kind == "LINESTRING":
        pts = points()
        return Geometry(kind=kind, dims=dims, body=pts or None)
    if kind == "POLYGON":
        (rings,) = r.take(e + "I")
        body = [points() for _ in range(rings)]
        return Geometry(kind=kind, dims=dims, body=body or None)
    (count,) = r.take(e + "I")
    parts = [_read_geom(r, depth + 1) for _ in range(count)]
    want = {"MULTIPOINT": "POINT", "MULTILINESTRING": "LINESTRING", "MULTIPOLYGON": "POLYGON"}.get(kind)
    if want and any(p.kind != want for p in parts):
        raise InvalidTable(f"{kind} holds a non-{want}", rule=RULE)
    return Geometry(kind=kind, dims=dims, body=parts or None)


def parse_wkb(data: bytes) -> Geometry:
    """Parse ISO WKB; InvalidTable on truncation, trailing bytes or non-ISO codes."""
    r = _Reader(bytes(data))
    g = _read_geom(r)
    if r.pos != len(r.data):
        raise InvalidTable(f"{len(r.data) - r.pos} trailing bytes after the WKB geometry", rule=RULE)
    return g


def to_wkb(g: Geometry) -> bytes:
    """Little-endian ISO WKB of a geometry."""
    n = _ndims(g.dims)
    out = bytearray(struct.pack("<BI", 1, _CODE[g.kind] + _DIM_OFFSET[g.dims]))

    def pts(ps: list) -> None:
        out.extend(struct.pack("<I", len(ps)))
        for p in ps:
            out.extend(struct.pack("<" + "d" * n, *p))

    if g.kind == "POINT":
        out.extend(struct.pack("<" + "d" * n, *(g.body if g.body is not None else [math.nan] * n)))
    elif g.kind == "LINESTRING":
        pts(g.body or [])
    elif g.kind == "POLYGON":
        rings = g.body or []
        out.extend(struct.pack("<I", len(rings)))
        for ring in rings:
            pts(ring)
    else:
        parts = g.body or []
        out.extend(struct.pack("<I", len(parts)))
        for p in parts:
            out.extend(to_wkb(p))
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# WKT

_TOKEN = re.compile(r"\s*([A-Za-z]+|\(|\)|,|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan))", re.I | re.ASCII)


def _num(x: float) -> str:
    if x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


def to_wkt(g: Geometry) -> str:
    """WKT text, e.g. "POINT (30 10)", "LINESTRING Z (1 2 3, 4 5 6)", "POLYGON EMPTY"."""
    head = g.kind + (f" {g.dims}" if g.dims else "")
    if g.body is None:
        return f"{head} EMPTY"
    return f"{head} {_body_wkt(g)}"


def _body_wkt(g: Geometry) -> str:
    coords = lambda p: " ".join(_num(c) for c in p)
    seq = lambda ps: "(" + ", ".join(coords(p) for p in ps) + ")"
    if g.body is None:
        return "EMPTY"
    if g.kind == "POINT":
        return f"({coords(g.body)})"
    if g.kind == "LINESTRING":
        return seq(g.body)
    if g.kind == "POLYGON":
        return "(" + ", ".join(seq(r) for r in g.body) + ")"
    if g.kind == "GEOMETRYCOLLECTION":
        return "(" + ", ".join(to_wkt(p) for p in g.body) + ")"
    return "(" + ", ".join(_body_wkt(p) for p in g.body) + ")"


class _Tokens:
    def __init__(self, text: str) -> None:
        self.items: list[str] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise InvalidTable(f"bad WKT near {text[pos:pos + 20]!r}", rule=RULE)
            self.items.append(m.group(1))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0

    def peek(self) -> str | None:
        return self.items[self.i] if self.i < len(self.items) else None

    def next(self) -> str:
        t = self.peek()
        if t is None:
            raise InvalidTable("WKT ends too early", rule=RULE)
        self.i += 1
        return t

    def expect(self, t: str) -> None:
        got = self.next()
        if got != t:
            raise InvalidTable(f"WKT expected {t!r}, got {got!r}", rule=RULE)


def _parse_wkt_geom(tk: _Tokens, depth: int = 0, inherit: str | None = None) -> Geometry:
    if depth > 64:
        raise InvalidTable("WKT nests too deeply", rule=RULE)
    kind = tk.next().upper()
    if kind not in _CODE:
        raise InvalidTable(f"unknown WKT geometry {kind!r}", rule=RULE)
    dims = ""
    if tk.peek() and tk.peek().upper() in ("Z", "M", "ZM"):
        dims = tk.next().upper()
    if tk.peek() and tk.peek().upper() == "EMPTY":
        tk.next()
        return Geometry(kind=kind, dims=dims, body=None)
    n = _ndims(dims)

    def coords() -> list[float]:
        out = []
        while tk.peek() not in (",", ")", None):
            try:
                out.append(float(tk.next()))
            except ValueError:
                raise InvalidTable("WKT coordinate is not a number", rule=RULE) from None
        if len(out) != n:
            raise InvalidTable(f"WKT point has {len(out)} coordinates, {kind} {dims or 'XY'} needs {n}", rule=RULE)
        return out

    def seq(inner) -> list:
        tk.expect("(")
        items = [inner()]
        while tk.peek() == ",":
            tk.next()
            items.append(inner())
        tk.expect(")")
        return items

    if kind == "POINT":
        return Geometry(kind=kind, dims=dims, body=seq(coords)[0])
    if kind == "LINESTRING":
        return Geometry(kind=kind, dims=dims, body=seq(coords))
    if kind == "POLYGON":
        return Geometry(kind=kind, dims=dims, body=seq(lambda: seq(coords)))
    if kind == "MULTIPOINT":
        # Both "MULTIPOINT ((1 2), (3 4))" and the older "MULTIPOINT (1 2, 3 4)" are seen in the wild.
        def one_point() -> Geometry:
            if tk.peek() == "(":
                return Geometry(kind="POINT", dims=dims, body=seq(coords)[0])
            if tk.peek() and tk.peek().upper() == "EMPTY":
                tk.next()
                return Geometry(kind="POINT", dims=dims, body=None)
            return Geometry(kind="POINT", dims=dims, body=coords())
        return Geometry(kind=kind, dims=dims, body=seq(one_point))
    if kind == "MULTILINESTRING":
        return Geometry(kind=kind, dims=dims, body=seq(lambda: Geometry(kind="LINESTRING", dims=dims, body=seq(coords))))
    if kind == "MULTIPOLYGON":
        return Geometry(kind=kind, dims=dims, body=seq(lambda: Geometry(kind="POLYGON", dims=dims, body=seq(lambda: seq(coords)))))
    return Geometry(kind=kind, dims=dims, body=seq(lambda: _parse_wkt_geom(tk, depth + 1)))


def parse_wkt(text: str) -> Geometry:
    """Parse WKT (case-insensitive keywords); InvalidTable on anything malformed."""
    if not isinstance(text, str):
        raise InvalidTable(f"WKT must be a string, got {type(text).__name__}", rule=RULE)
    tk = _Tokens(text)
    g = _parse_wkt_geom(tk)
    if tk.peek() is not None:
        raise InvalidTable(f"trailing text after WKT geometry: {tk.peek()!r}", rule=RULE)
    return g


def wkb_to_wkt(data: bytes) -> str:
    """WKB bytes -> WKT text."""
    return to_wkt(parse_wkb(data))


def wkt_to_wkb(text: str) -> bytes:
    """WKT text -> little-endian ISO WKB bytes."""
    return to_wkb(parse_wkt(text))
