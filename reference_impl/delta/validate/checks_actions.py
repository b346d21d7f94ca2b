"""Actions: required fields and types of every action, paths, timestamps, partition values, DVs."""

from __future__ import annotations

import datetime as dt
import re
import struct
import zlib
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urlparse

from reference_impl.common import roaring
from reference_impl.delta.validate.context import (
    ADD, CDC, DOMAIN, METADATA, PROTOCOL, REMOVE, TXN, WHERE_KEY, Action, Context, file_key,
)
from reference_impl.delta.validate.meta import (
    P_APPEND_ONLY, P_ENABLE_DV, Proto, config, field_by_path, mapping_mode, partition_columns, physical_name,
    schema_of, truthy,
)
from reference_impl.delta.validate.registry import V, Violation, check

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def is_long(v: Any) -> bool:
    """JSON integer within the signed 64-bit range (bools excluded)."""
    return isinstance(v, int) and not isinstance(v, bool) and LONG_MIN <= v <= LONG_MAX


def is_str_map(v: Any, null_values: bool = False) -> bool:
    """JSON object of strings (values may be null when allowed)."""
    return isinstance(v, dict) and all(
        isinstance(k, str) and (isinstance(x, str) or (null_values and x is None)) for k, x in v.items())


def _shape(body: Any, spec: dict[str, tuple], rule: str, kind: str) -> Iterator[Finding]:
    """spec: field -> (required, predicate, type description)."""
    if not isinstance(body, dict):
        yield rule, f"{kind} action is not a JSON object", ""
        return
    for name, (required, pred, desc) in spec.items():
        if name not in body or body[name] is None:
            if required:
                yield rule, f"{kind} lacks required field {name}", f" {kind}.{name}"
        elif not pred(body[name]):
            yield rule, f"{kind}.{name} must be {desc}, got {body[name]!r:.60}", f" {kind}.{name}"


_str = (lambda v: isinstance(v, str), "a string")
_long = (is_long, "a long")
_bool = (lambda v: isinstance(v, bool), "a boolean")
_smap = (is_str_map, "a map of strings")
_pmap = (lambda v: is_str_map(v, True), "a map of string to string-or-null")
_dvish = (lambda v: True, "")  # deletion vectors have their own rule


def _r(req: bool, t: tuple) -> tuple:
    return (req, t[0], t[1])


ADD_SPEC = {"path": _r(True, _str), "partitionValues": _r(True, _pmap), "size": _r(True, (lambda v: is_long(v) and v >= 0, "a non-negative long")),
            "modificationTime": _r(True, _long), "dataChange": _r(True, _bool), "stats": _r(False, _str),
            "tags": _r(False, (lambda v: is_str_map(v, True), "a map of strings")), "baseRowId": _r(False, _long),
            "defaultRowCommitVersion": _r(False, _long), "clusteringProvider": _r(False, _str)}
REMOVE_SPEC = {"path": _r(True, _str), "dataChange": _r(True, _bool), "deletionTimestamp": _r(False, _long),
               "extendedFileMetadata": _r(False, _bool), "partitionValues": _r(False, _pmap),
               "size": _r(False, _long), "stats": _r(False, _str), "tags": _r(False, (lambda v: is_str_map(v, True), "a map of strings")),
               "baseRowId": _r(False, _long), "defaultRowCommitVersion": _r(False, _long)}
META_SPEC = {"id": _r(True, _str), "name": _r(False, _str), "description": _r(False, _str),
             "format": _r(True, (lambda v: isinstance(v, dict) and isinstance(v.get("provider"), str)
                                 and is_str_map(v.get("options", {}) or {}), "an object with a provider string")),
             "schemaString": _r(True, _str),
             "partitionColumns": _r(True, (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "an array of strings")),
             "configuration": _r(True, _smap), "createdTime": _r(False, _long)}
TXN_SPEC = {"appId": _r(True, _str), "version": _r(True, _long), "lastUpdated": _r(False, _long)}
_flist = (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "an array of strings")
PROTOCOL_SPEC = {"minReaderVersion": _r(True, (lambda v: is_long(v) and v >= 1, "a positive integer")),
                 "minWriterVersion": _r(True, (lambda v: is_long(v) and v >= 1, "a positive integer")),
                 "readerFeatures": _r(False, _flist), "writerFeatures": _r(False, _flist)}
DOMAIN_SPEC = {"domain": _r(True, _str), "configuration": _r(True, _str), "removed": _r(True, _bool)}
CDC_SPEC = {"path": _r(True, _str), "partitionValues": _r(True, _pmap), "size": _r(True, _long),
            "dataChange": _r(True, _bool), "tags": _r(False, (lambda v: is_str_map(v, True), "a map of strings"))}

ACTION_SPECS = {ADD: ("ACTION-016", ADD_SPEC), REMOVE: ("ACTION-020", REMOVE_SPEC), METADATA: ("ACTION-004", META_SPEC),
                TXN: ("ACTION-023", TXN_SPEC), PROTOCOL: ("ACTION-025", PROTOCOL_SPEC), DOMAIN: ("DOMAIN-002", DOMAIN_SPEC)}


def all_actions(ctx: Context, checkpoints: bool = True) -> Iterator[Action]:
    """Actions of every commit and (optionally) of every readable checkpoint."""
    for _, a in ctx.iter_commit_actions():
        yield a
    if checkpoints:
        for c in ctx.checkpoints:
            yield from c.actions()


# (rule, message, suffix of the action's location) of one action judged on its own
Finding = tuple[str, str, str]


def judged(ctx: Context, judge: Callable[[str, Any], Iterable[Finding]]) -> Iterator[Violation]:
    """``judge(key, body)`` over every action. A body object seen before is not judged again: a
    checkpoint repeats most rows of the one before it, and the context reads them as shared objects."""
    memo: dict[tuple[str, int], list[Finding]] = {}
    for a in all_actions(ctx):
        ident = (a.key, id(a.body))  # every body stays alive in the context, so ids are not reused
        found = memo.get(ident)
        if found is None:
            found = memo[ident] = list(judge(a.key, a.body))
        for rule, message, suffix in found:
            yield V(rule, message, a.where + suffix)


@check("ACTION-004", "ACTION-016", "ACTION-020", "ACTION-023", "ACTION-025", "DOMAIN-002")
def action_shapes(ctx: Context) -> Iterator[Violation]:
    """Required fields and JSON types of metaData, add, remove, txn, protocol, domainMetadata."""
    def judge(key: str, body: Any) -> Iterator[Finding]:
        if key in ACTION_SPECS:
            rule, spec = ACTION_SPECS[key]
            yield from _shape(body, spec, rule, key)
    return judged(ctx, judge)


@check("ACTION-021")
def extended_file_metadata(ctx: Context) -> Iterator[Violation]:
    """remove with extendedFileMetadata=true carries partitionValues and size."""
    def judge(key: str, body: Any) -> Iterator[Finding]:
        if key == REMOVE and isinstance(body, dict) and body.get("extendedFileMetadata") is True:
            for k in ("partitionValues", "size"):
                if body.get(k) is None:
                    yield "ACTION-021", f"extendedFileMetadata=true but {k} is missing", f" remove.{k}"
    return judged(ctx, judge)


@check("ACTION-022", "DV-005")
def dv_descriptor_shape(ctx: Context) -> Iterator[Violation]:
    """deletionVector is null/absent or a complete descriptor with a legal storageType."""
    def judge(key: str, body: Any) -> Iterator[Finding]:
        if key not in (ADD, REMOVE) or not isinstance(body, dict):
            return
        dv = body.get("deletionVector")
        if dv is None:
            return
        w = f" {key}.deletionVector"
        if not isinstance(dv, dict) or not dv:
            yield "ACTION-022", "deletionVector must be null/absent or a descriptor object", w
            return
        bad = [k for k, pred in (("storageType", lambda x: isinstance(x, str)), ("pathOrInlineDv", lambda x: isinstance(x, str)),
                                 ("sizeInBytes", is_long), ("cardinality", is_long)) if not pred(dv.get(k))]
        if dv.get("offset") is not None and not is_long(dv.get("offset")):
            bad.append("offset")
        if bad:
            yield "ACTION-022", f"deletionVector descriptor has missing or mistyped {', '.join(bad)}", w
        elif dv["storageType"] not in ("u", "i", "p"):
            yield "DV-005", f"storageType {dv['storageType']!r} is not u, i or p", w + ".storageType"
    return judged(ctx, judge)


# ------------------------------------------------------------------ paths and files
_BAD_URI_CHARS = re.compile(r"[\s\"<>\\^`{|}\x00-\x1f]|%(?![0-9A-Fa-f]{2})")


@check("LOG-002", "ACTION-017", "ACTION-018")
def data_file_paths(ctx: Context) -> Iterator[Violation]:
    """add/remove/cdc paths are URIs inside the table; live data files exist with the logged size."""
    def judge(key: str, body: Any) -> Iterator[Finding]:
        if key not in (ADD, REMOVE, CDC) or not isinstance(body, dict) or not isinstance(body.get("path"), str):
            return
        p = body["path"]
        w = f" {key}.path"
        if _BAD_URI_CHARS.search(p) or not p:
            yield "ACTION-017", f"path {p!r} is not a valid (percent-encoded) URI", w
            return
        rel = ctx.rel(p)
        if rel is None:
            yield "LOG-002", f"path {p!r} lies outside the table root", w
        elif key == ADD and rel.split("/")[0].startswith("_"):
            yield "LOG-002", f"data file {p!r} is in a directory starting with '_'", w
    yield from judged(ctx, judge)
    latest = ctx.states.get(ctx.versions[-1]) if ctx.versions else None
    for (path, _), add in (latest.live.items() if latest else ()):
        rel = ctx.rel(path)
        if rel is None or _BAD_URI_CHARS.search(path):
            continue
        w = add.get(WHERE_KEY, "_delta_log")
        size = ctx.size(rel)
        if size is None:
            yield V("ACTION-017", f"live data file {rel!r} (percent-decoded from {path!r}) does not exist", w + " add.path")
        elif is_long(add.get("size")) and add["size"] != size:
            yield V("ACTION-018", f"add.size {add['size']} but the file has {size} bytes", w + " add.size")


MS_MIN, MS_MAX = 10**11, 10**14  # 1973 .. year 5138: outside this a value is seconds or micros


@check("ACTION-019")
def millisecond_timestamps(ctx: Context) -> Iterator[Violation]:
    """modificationTime, deletionTimestamp, createdTime and lastUpdated are plausible ms values."""
    fields = {ADD: ("modificationTime",), REMOVE: ("deletionTimestamp",), METADATA: ("createdTime",), TXN: ("lastUpdated",)}

    def judge(key: str, body: Any) -> Iterator[Finding]:
        for f in fields.get(key, ()):
            v = body.get(f) if isinstance(body, dict) else None
            if is_long(v) and v != 0 and not (MS_MIN <= v <= MS_MAX):
                yield "ACTION-019", f"{key}.{f}={v} is not milliseconds since the epoch", f" {key}.{f}"
    return judged(ctx, judge)


@check("DOMAIN-001")
def domain_metadata_feature(ctx: Context) -> Iterator[Violation]:
    """domainMetadata actions need writer 7 with domainMetadata listed."""
    for c, a in ctx.iter_commit_actions():
        if a.key == DOMAIN:
            st = ctx.states.get(c.version)
            p = Proto.of(st.protocol if st else None)
            if not (p.writer >= 7 and "domainMetadata" in (p.wf or ())):
                yield V("DOMAIN-001", "domainMetadata action without the domainMetadata writer feature", a.where)


@check("WRITER-001")
def data_files_never_overwritten(ctx: Context) -> Iterator[Violation]:
    """A data file path is never reused for different content (size differs between adds)."""
    sizes: dict[str, tuple[int, str]] = {}
    for _, a in ctx.iter_commit_actions():
        if a.key == ADD and isinstance(a.body, dict) and isinstance(a.body.get("path"), str) and is_long(a.body.get("size")):
            p, s = a.body["path"], a.body["size"]
            if p in sizes and sizes[p][0] != s:
                yield V("WRITER-001", f"{p} was added with size {sizes[p][0]} and later with size {s}: file overwritten", a.where)
            sizes.setdefault(p, (s, a.where))


@check("WRITER-005")
def append_only(ctx: Context) -> Iterator[Violation]:
    """While delta.appendOnly=true, no remove has dataChange=true."""
    for v in ctx.versions:
        st = ctx.states.get(v)
        if st is None or not truthy(config(st.metadata).get(P_APPEND_ONLY)):
            continue
        if not Proto.of(st.protocol).writer_supports("appendOnly", 2):
            continue
        for a in ctx.commits[v].of(REMOVE):
            if isinstance(a.body, dict) and a.body.get("dataChange") is True:
                yield V("WRITER-005", "remove with dataChange=true on an append-only table", a.where + " remove.dataChange")


# ------------------------------------------------------------------ partition values
_INT_RANGES = {"byte": 8, "short": 16, "integer": 32, "long": 64}
_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?$", re.ASCII)
_TS_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$", re.ASCII)
_DATE_RE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$", re.ASCII)
# A double's plain (exponent-free) form, as delta-rs writes it, runs to 309 integer digits (1e308) and
# 1,074 fraction digits (5e-324): a bound below that flags valid values.
_FLOAT_RE = re.compile(r"^[+-]?(\d{1,400}(\.\d{0,1100})?|\.\d{1,1100})([eE][+-]?\d{1,5})?$|^(NaN|[+-]?Infinity)$", re.ASCII)
_DEC_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def partition_value_rule(text: str, t: Any) -> str | None:
    """Rule id the string breaks for type t (None when fine or the type is not checkable)."""
    if text == "":
        return None
    if t in _INT_RANGES:
        bits = _INT_RANGES[t]
        if not re.fullmatch(r"-?\d+", text) or not (-(2 ** (bits - 1)) <= int(text) < 2 ** (bits - 1)):
            return "PART-002"
    elif t in ("float", "double"):
        return None if _FLOAT_RE.match(text) else "PART-002"
    elif isinstance(t, str) and t.startswith("decimal"):
        return None if _DEC_RE.match(text) else "PART-002"
    elif t == "date":
        m = _DATE_RE.match(text)
        try:
            if not m:
                return "PART-003"
            dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return "PART-003"
    elif t == "timestamp":
        if not (_TS_RE.match(text) or _TS_ISO_RE.match(text)):
            return "PART-004"
    elif t == "timestamp_ntz":
        if not _TS_RE.match(text):
            return "PART-006"
    elif t == "boolean":
        if text not in ("true", "false"):
            return "PART-007"
    return None


@check("WRITER-003", "COLMAP-008", "PART-001", "PART-002", "PART-003", "PART-004", "PART-006", "PART-007")
def partition_values(ctx: Context) -> Iterator[Violation]:
    """Every file has a value for each partition column (keyed by physical name), well serialized."""
    for v in ctx.versions:
        st = ctx.states.get(v)
        md = st.metadata if st else None
        if md is None:
            continue
        schema, mode, pcols = schema_of(md), mapping_mode(md), partition_columns(md)
        fields = {c: field_by_path(schema, [c]) for c in pcols}
        phys = {c: physical_name(f, mode) if f else c for c, f in fields.items()}
        for a in ctx.commits[v].actions:
            if a.key not in (ADD, CDC) or not isinstance(a.body, dict):
                continue
            pv = a.body.get("partitionValues")
            if not isinstance(pv, dict):
                continue
            w = f"{a.where} {a.key}.partitionValues"
            logical_keyed = mode in ("id", "name") and set(pv) == set(pcols) and set(pcols) != set(phys.values())
            if logical_keyed:
                yield V("COLMAP-008", "partitionValues keyed by logical names under column mapping", w)
                continue
            missing = [c for c in pcols if phys[c] not in pv]
            extra = [k for k in pv if k not in phys.values()]
            if missing or extra:
                yield V("WRITER-003", f"partitionValues missing {missing} / unexpected {extra}", w)
            for c in pcols:
                val = pv.get(phys[c])
                if val is None:
                    continue
                if not isinstance(val, str):
                    yield V("PART-001", f"partition value of {c} is not a string", f"{w}.{phys[c]}")
                    continue
                if val == "__HIVE_DEFAULT_PARTITION__":
                    yield V("PART-001", "null partition value stored as __HIVE_DEFAULT_PARTITION__", f"{w}.{phys[c]}")
                    continue
                t = fields[c].get("type") if fields[c] else None
                rule = partition_value_rule(val, t)
                if rule:
                    yield V(rule, f"partition value {val!r} is not a valid {t} serialization", f"{w}.{phys[c]}")


# ------------------------------------------------------------------ deletion vectors
Z85_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_INDEX = {c: i for i, c in enumerate(Z85_CHARS)}
DV_MAGIC = 1681511377


def z85_decode(s: str) -> bytes | None:
    """Z85 decode (None when the text is not Z85)."""
    if len(s) % 5 or any(c not in _Z85_INDEX for c in s):
        return None
    out = bytearray()
    for i in range(0, len(s), 5):
        n = 0
        for c in s[i:i + 5]:
            n = n * 85 + _Z85_INDEX[c]
        if n >= 2**32:
            return None
        out += n.to_bytes(4, "big")
    return bytes(out)


def z85_uuid(s: str) -> str | None:
    """Canonical UUID text of a 20-char Z85 string."""
    b = z85_decode(s)
    if b is None or len(b) != 16:
        return None
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def decode_bitmap(data: bytes) -> tuple[list[int] | None, str | None, str]:
    """Rows of a serialized DV (magic + portable 64-bit roaring): (rows, error, rule-of-error)."""
    if len(data) < 12:
        return None, "DV data is truncated", "DV-013"
    if struct.unpack("<I", data[:4])[0] != DV_MAGIC:
        return None, "DV magic number is not 1681511377", "DV-013"
    try:
        decoded = roaring.decode64(data[4:])
    except roaring.RoaringError as e:
        return None, f"DV bitmap is not a portable 64-bit roaring bitmap: {e}", "DV-013"
    if decoded.problems:
        return None, f"DV bitmap: {decoded.problems[0]}", "DV-013"
    return decoded.positions.tolist(), None, ""


def dv_bytes(ctx: Context, dv: dict) -> tuple[bytes | None, str | None, str]:
    """Raw serialized DV bytes for a descriptor: (data, error, rule)."""
    st, p = dv["storageType"], dv["pathOrInlineDv"]
    if st == "i":
        if dv.get("offset") is not None:
            return None, "inline DV has an offset", "DV-007"
        data = z85_decode(p)
        if data is None:
            return None, "inline DV is not Z85 text", "DV-012"
        return data, None, ""
    if st == "u":
        if len(p) < 20:
            return None, "u DV value shorter than a 20-char Z85 UUID", "DV-006"
        u = z85_uuid(p[-20:])
        if u is None:
            return None, "u DV UUID is not Z85 text", "DV-012"
        prefix = p[:-20]
        rel = f"{prefix}/deletion_vector_{u}.bin" if prefix else f"deletion_vector_{u}.bin"
    else:
        parsed = urlparse(p)
        if not (parsed.scheme and len(parsed.scheme) > 1) and not p.startswith("/"):
            return None, f"p DV path {p!r} is not absolute", "DV-008"
        rel = ctx.rel(p)
        if rel is None:
            return None, f"p DV path {p!r} lies outside the table", "DV-008"
    try:
        raw = ctx.storage.read(rel)
    except FileNotFoundError:
        return None, f"DV file {rel} does not exist", "DV-006" if st == "u" else "DV-008"
    if not raw or raw[0] != 1:
        return None, f"DV file {rel} does not start with version byte 1", "DV-014"
    off = dv.get("offset") or 0
    if not is_long(off) or off < 0:
        return None, f"DV offset {off!r} is not a non-negative integer", "DV-014"
    if off + 4 > len(raw):
        return None, f"DV offset {off} beyond the end of {rel}", "DV-014"
    size = struct.unpack(">I", raw[off:off + 4])[0]
    data = raw[off + 4:off + 4 + size]
    crc = raw[off + 4 + size:off + 8 + size]
    if len(data) != size or len(crc) != 4 or struct.unpack(">I", crc)[0] != (zlib.crc32(data) & 0xFFFFFFFF):
        return None, f"DV in {rel} at offset {off} fails its CRC-32 check", "DV-014"
    if dv.get("sizeInBytes") != size:
        return None, f"sizeInBytes {dv.get('sizeInBytes')} but the stored DV has {size} bytes", "DV-010"
    return data, None, ""


def _dv_ok(dv: Any) -> bool:
    return (isinstance(dv, dict) and dv.get("storageType") in ("u", "i", "p") and isinstance(dv.get("pathOrInlineDv"), str)
            and is_long(dv.get("sizeInBytes")) and is_long(dv.get("cardinality")))


@check("DV-006", "DV-007", "DV-008", "DV-010", "DV-012", "DV-013", "DV-014", "DV-015")
def deletion_vector_content(ctx: Context) -> Iterator[Violation]:
    """Every DV of a live file resolves, decodes, matches its size/cardinality and fits the data file."""
    latest = ctx.states.get(ctx.versions[-1]) if ctx.versions else None
    seen: set = set()
    adds = []
    for _, a in ctx.iter_commit_actions():
        if a.key == ADD and isinstance(a.body, dict) and _dv_ok(a.body.get("deletionVector")):
            adds.append(a)
    for a in adds:
        dv = a.body["deletionVector"]
        k = file_key(a.body)
        if k in seen:
            continue
        seen.add(k)
        w = f"{a.where} add.deletionVector"
        if dv["storageType"] == "i" and dv.get("offset") is not None:
            yield V("DV-007", "inline DV has an offset", w + ".offset")
            continue
        if latest is not None and k not in latest.live and dv["storageType"] != "i":
            continue  # DV files of dead files may be vacuumed
        data, err, rule = dv_bytes(ctx, dv)
        if err:
            yield V(rule, err, w)
            continue
        if dv["storageType"] == "i":
            # Z85 works on 4-byte groups, so the decoded text may carry up to 3 bytes of padding
            if not (0 <= len(data) - dv["sizeInBytes"] < 4):
                yield V("DV-010", f"sizeInBytes {dv['sizeInBytes']} but the inline DV has {len(data)} bytes", w + ".sizeInBytes")
                continue
            data = data[:dv["sizeInBytes"]]
        rows, err, rule = decode_bitmap(data)
        if err:
            yield V(rule, err, w)
            continue
        if len(rows) != dv["cardinality"]:
            yield V("DV-010", f"cardinality {dv['cardinality']} but the DV deletes {len(rows)} rows", w + ".cardinality")
        rel = ctx.rel(a.body["path"])
        pf = ctx.footer(rel) if rel else None
        if pf is not None and rows and max(rows) >= pf.metadata.num_rows:
            yield V("DV-015", f"DV deletes row {max(rows)} of a file with {pf.metadata.num_rows} rows", w)


@check("DV-002")
def dv_only_when_enabled(ctx: Context) -> Iterator[Violation]:
    """New DVs are written only while delta.enableDeletionVectors=true."""
    for v in ctx.versions:
        st, before = ctx.states.get(v), ctx.before.get(v)
        if st is None or truthy(config(st.metadata).get(P_ENABLE_DV)):
            continue
        old = set(before.live) if before else set()
        for a in ctx.commits[v].of(ADD):
            k = file_key(a.body)
            if k and k[1] is not None and k not in old:
                yield V("DV-002", "new deletion vector while delta.enableDeletionVectors is not true", a.where)
