"""Validator mutation suite: one small mutation per rule, each breaking exactly that rule.

A valid table is built by hand (NDJSON commits + parquet files written with pyarrow), checked
clean, then mutated; ``validate_table`` must report exactly the mutated rule. This suite is the
executable check behind every rule id in ``reference_impl.delta.validate.CHECKS``.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import struct
import time
import uuid
import zlib
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.delta.validate import CHECKS, validate_table


# ================================================================== hand-built tables
# A table is plain Python data: commits as lists of action dicts, data files as Arrow tables and extra
# files; a mutation edits that data, then ``write(dir)`` lays it out (sizes and stats marked ``AUTO`` are
# computed from the files written, so a mutation that changes data keeps the rest consistent).

AUTO = "\x00auto"
T0 = 1_700_000_000_000  # ms, a plausible commit time

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85(data: bytes) -> str:
    """Z85-encode bytes whose length is a multiple of 4."""
    out = []
    for i in range(0, len(data), 4):
        n = int.from_bytes(data[i:i + 4], "big")
        chunk = []
        for _ in range(5):
            n, r = divmod(n, 85)
            chunk.append(_Z85[r])
        out.append("".join(reversed(chunk)))
    return "".join(out)


def dv_bitmap(rows: list[int]) -> bytes:
    """Magic + portable 64-bit roaring bitmap of row indexes (all in bucket 0)."""
    from pyroaring import BitMap

    bm = BitMap(rows).serialize()
    return struct.pack("<I", 1681511377) + struct.pack("<Q", 1) + struct.pack("<I", 0) + bm


def dv_file(bitmap: bytes) -> bytes:
    """A DV file holding one DV at offset 1."""
    return b"\x01" + struct.pack(">I", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap) & 0xFFFFFFFF)


def field(name, type_, phys=None, fid=None, nullable=True, **meta) -> dict:
    """A schema field dict (with column-mapping metadata when phys/fid are given)."""
    md = dict(meta)
    if fid is not None:
        md["delta.columnMapping.id"] = fid
    if phys is not None:
        md["delta.columnMapping.physicalName"] = phys
    return {"name": name, "type": type_, "nullable": nullable, "metadata": md}


def _json_value(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat(timespec="milliseconds") + "Z"
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


def compute_stats(tbl: pa.Table) -> str:
    """Tight stats JSON of an Arrow table keyed by its (physical) column names."""
    import pyarrow.compute as pc

    mins, maxs, nulls = {}, {}, {}
    for name in tbl.column_names:
        col = tbl.column(name)
        nulls[name] = col.null_count
        if col.null_count < len(col) and not pa.types.is_nested(col.type) and not pa.types.is_binary(col.type):
            mm = pc.min_max(col)
            mins[name] = _json_value(mm["min"].as_py())
            maxs[name] = _json_value(mm["max"].as_py())
    return json.dumps({"numRecords": tbl.num_rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls})


def _smap():
    return pa.map_(pa.string(), pa.string())


def checkpoint_schema(extra_add: list[pa.Field] = ()) -> pa.Schema:
    """Arrow schema of a checkpoint with every action column used by these tests."""
    dv = pa.struct([("storageType", pa.string()), ("pathOrInlineDv", pa.string()), ("offset", pa.int32()),
                    ("sizeInBytes", pa.int32()), ("cardinality", pa.int64())])
    return pa.schema([
        ("protocol", pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32()),
                                ("readerFeatures", pa.list_(pa.string())), ("writerFeatures", pa.list_(pa.string()))])),
        ("metaData", pa.struct([("id", pa.string()), ("name", pa.string()), ("description", pa.string()),
                                ("format", pa.struct([("provider", pa.string()), ("options", _smap())])),
                                ("schemaString", pa.string()), ("partitionColumns", pa.list_(pa.string())),
                                ("createdTime", pa.int64()), ("configuration", _smap())])),
        ("txn", pa.struct([("appId", pa.string()), ("version", pa.int64()), ("lastUpdated", pa.int64())])),
        ("add", pa.struct([("path", pa.string()), ("partitionValues", _smap()), ("size", pa.int64()),
                           ("modificationTime", pa.int64()), ("dataChange", pa.bool_()), ("stats", pa.string()),
                           ("tags", _smap()), ("deletionVector", dv), ("baseRowId", pa.int64()),
                           ("defaultRowCommitVersion", pa.int64()), ("clusteringProvider", pa.string())] + list(extra_add))),
        ("remove", pa.struct([("path", pa.string()), ("deletionTimestamp", pa.int64()), ("dataChange", pa.bool_()),
                              ("extendedFileMetadata", pa.bool_()), ("partitionValues", _smap()), ("size", pa.int64()),
                              ("stats", pa.string()), ("tags", _smap()), ("deletionVector", dv), ("baseRowId", pa.int64()),
                              ("defaultRowCommitVersion", pa.int64())])),
        ("domainMetadata", pa.struct([("domain", pa.string()), ("configuration", pa.string()), ("removed", pa.bool_())])),
        ("checkpointMetadata", pa.struct([("version", pa.int64()), ("tags", _smap())])),
        ("sidecar", pa.struct([("path", pa.string()), ("sizeInBytes", pa.int64()), ("modificationTime", pa.int64()),
                               ("tags", _smap())])),
        ("commitInfo", pa.struct([("operation", pa.string())])),
        ("cdc", pa.struct([("path", pa.string()), ("partitionValues", _smap()), ("size", pa.int64()), ("dataChange", pa.bool_())])),
    ])


class Table:
    """A Delta table as data: commits, data files, extra files, checkpoints."""

    def __init__(self) -> None:
        self.commits: list[list[dict]] = []
        self.data: dict[str, pa.Table] = {}
        self.raw: dict[str, bytes] = {}
        self.checkpoints: list[tuple[str, list[dict], pa.Schema | None]] = []  # (relpath, rows, schema)
        self.post: list = []  # callables(dir) run after writing
        self.last_checkpoint: Any = None
        self.write_opts: dict[str, dict] = {}
        self.crcs: dict[int, dict] = {}  # version -> overrides (None value drops the key)

    # -------------------------------------------------------------- access helpers
    def find(self, v: int, key: str, i: int = 0) -> dict:
        """The i-th action body of kind key in commit v."""
        return [a[key] for a in self.commits[v] if key in a][i]

    def meta(self, v: int = 0) -> dict:
        """metaData body of commit v."""
        return self.find(v, "metaData")

    def proto(self, v: int = 0) -> dict:
        """protocol body of commit v."""
        return self.find(v, "protocol")

    def cfg(self, v: int = 0) -> dict:
        """metaData.configuration of commit v (mutable)."""
        return self.meta(v)["configuration"]

    def fields(self, v: int = 0) -> list[dict]:
        """Top-level schema fields of commit v's metaData (mutable)."""
        return self.meta(v)["schemaString"]["fields"]

    def new_meta(self, v: int) -> dict:
        """Copy the newest metaData into commit v (to change it there) and return it."""
        last = None
        for c in self.commits[:v + 1]:
            for a in c:
                if "metaData" in a:
                    last = a["metaData"]
        md = copy.deepcopy(last)
        self.commits[v].append({"metaData": md})
        return md

    def new_proto(self, v: int) -> dict:
        """Copy the newest protocol into commit v and return it."""
        last = None
        for c in self.commits[:v + 1]:
            for a in c:
                if "protocol" in a:
                    last = a["protocol"]
        p = copy.deepcopy(last)
        self.commits[v].append({"protocol": p})
        return p

    def commit(self, *actions: dict, ict: int | None = None, op: str = "WRITE") -> int:
        """Append a commit; returns its version."""
        info = {"commitInfo": {"timestamp": T0 + 1000 * len(self.commits), "operation": op}}
        if ict is not None:
            info["commitInfo"]["inCommitTimestamp"] = ict
        self.commits.append([info] + list(actions))
        return len(self.commits) - 1

    def add(self, path: str, tbl: pa.Table, pv: dict | None = None, **extra) -> dict:
        """Register a data file and return its add body."""
        self.data[path] = tbl
        body = {"path": path, "partitionValues": pv or {}, "size": AUTO, "modificationTime": T0, "dataChange": True,
                "stats": AUTO}
        body.update(extra)
        return body

    def state(self, v: int) -> dict:
        """Simple replay up to v: protocol, metaData, live adds, txns, domains."""
        st: dict = {"protocol": None, "metaData": None, "live": {}, "txn": {}, "domains": {}}
        for c in self.commits[:v + 1]:
            for a in c or ():
                if not isinstance(a, dict):
                    continue
                (k, b), = a.items()
                if not isinstance(b, dict) or (k in ("add", "remove") and not isinstance(b.get("path"), str)):
                    continue
                if k in ("protocol", "metaData"):
                    st[k] = b
                elif k == "add":
                    st["live"][(b["path"], json.dumps(b.get("deletionVector"), sort_keys=True))] = b
                elif k == "remove":
                    st["live"].pop((b["path"], json.dumps(b.get("deletionVector"), sort_keys=True)), None)
                elif k == "txn":
                    st["txn"][json.dumps(b.get("appId"))] = b
                elif k == "domainMetadata":
                    if b.get("removed") is True:
                        st["domains"].pop(json.dumps(b.get("domain")), None)
                    else:
                        st["domains"][json.dumps(b.get("domain"))] = b
        return st

    def checkpoint_rows(self, v: int) -> list[dict]:
        """Rows of a classic checkpoint of version v (resolved later)."""
        st = self.state(v)
        rows = [{"protocol": st["protocol"]}, {"metaData": st["metaData"]}]
        rows += [{"txn": t} for t in st["txn"].values()]
        rows += [{"domainMetadata": d} for d in st["domains"].values()]
        rows += [{"add": dict(a, dataChange=False)} for a in st["live"].values()]
        return rows

    def checkpoint(self, v: int, rows: list[dict] | None = None, name: str | None = None, last: bool = True,
                   schema: pa.Schema | None = None) -> list[dict]:
        """Add a classic checkpoint of version v (and _last_checkpoint); returns its mutable rows."""
        rows = rows if rows is not None else copy.deepcopy(self.checkpoint_rows(v))
        self.checkpoints.append((name or f"_delta_log/{v:020d}.checkpoint.parquet", rows, schema))
        if last:
            self.last_checkpoint = {"version": v, "size": AUTO}
        return rows

    # -------------------------------------------------------------- writing
    def _resolve(self, obj: Any, sizes: dict[str, int]) -> Any:
        if isinstance(obj, dict):
            out = {k: self._resolve(x, sizes) for k, x in obj.items()}
            path = out.get("path") if isinstance(out.get("path"), str) else None
            if out.get("size") == AUTO and "path" in out:
                out["size"] = sizes.get(path, 0)
            if out.get("stats") == AUTO:
                tbl = self.data.get(path)
                out["stats"] = compute_stats(tbl) if tbl is not None else None
                if out["stats"] is None:
                    del out["stats"]
            if "schemaString" in out and isinstance(out["schemaString"], dict):
                out["schemaString"] = json.dumps(out["schemaString"])
            return out
        if isinstance(obj, list):
            return [self._resolve(x, sizes) for x in obj]
        return obj

    def write(self, root: str) -> str:
        """Lay the table out under root; returns root."""
        os.makedirs(os.path.join(root, "_delta_log"), exist_ok=True)
        sizes: dict[str, int] = {}
        for rel, tbl in self.data.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            pq.write_table(tbl, path, **self.write_opts.get(rel, {}))
            sizes[rel] = os.path.getsize(path)
        for rel, data in self.raw.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            sizes.setdefault(rel, len(data))
        for v, actions in enumerate(self.commits):
            if actions is None:
                continue
            lines = [a if isinstance(a, str) else json.dumps(self._resolve(a, sizes)) for a in actions]
            with open(os.path.join(root, "_delta_log", f"{v:020d}.json"), "w") as fh:
                fh.write("\n".join(lines) + "\n")
        for rel, rows, schema in self.checkpoints:
            resolved = [self._resolve(r, sizes) for r in rows]
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            if rel.endswith(".json"):
                with open(os.path.join(root, rel), "w") as fh:
                    fh.write("\n".join(json.dumps(r) for r in resolved) + "\n")
            else:
                pq.write_table(pa.Table.from_pylist(resolved, schema=schema or checkpoint_schema()), os.path.join(root, rel))
            if isinstance(self.last_checkpoint, dict) and self.last_checkpoint.get("size") == AUTO:
                self.last_checkpoint["size"] = len(rows)
        if self.last_checkpoint is not None:
            text = self.last_checkpoint if isinstance(self.last_checkpoint, str) else json.dumps(self.last_checkpoint)
            with open(os.path.join(root, "_delta_log", "_last_checkpoint"), "w") as fh:
                fh.write(text)
        for v, overrides in self.crcs.items():
            crc = crc_of(root, v)
            for k, x in overrides.items():
                if x is None:
                    crc.pop(k, None)
                else:
                    crc[k] = x
            with open(os.path.join(root, "_delta_log", f"{v:020d}.crc"), "w") as fh:
                fh.write(json.dumps(crc))
        for fn in self.post:
            fn(root)
        return root


def crc_of(root: str, v: int) -> dict:
    """A correct version checksum for version v of the table written at root."""
    st: dict = {"protocol": None, "metaData": None, "live": {}, "ict": None}
    for i in range(v + 1):
        st["ict"] = None
        path = os.path.join(root, "_delta_log", f"{i:020d}.json")
        if not os.path.exists(path):
            continue
        for line in open(path):
            try:
                (k, b), = json.loads(line).items()
            except (ValueError, AttributeError):
                continue  # tolerate the broken lines robustness tests write
            if not isinstance(b, dict) or (k in ("add", "remove") and not isinstance(b.get("path"), str)):
                continue
            if k in ("protocol", "metaData"):
                st[k] = b
            elif k == "add":
                st["live"][(b["path"], json.dumps(b.get("deletionVector"), sort_keys=True))] = b
            elif k == "remove":
                st["live"].pop((b["path"], json.dumps(b.get("deletionVector"), sort_keys=True)), None)
            elif k == "commitInfo":
                st["ict"] = b.get("inCommitTimestamp")
    live = list(st["live"].values())
    return {"tableSizeBytes": sum(a["size"] for a in live if isinstance(a.get("size"), int)), "numFiles": len(live), "numMetadata": 1, "numProtocol": 1,
            "metadata": st["metaData"], "protocol": st["protocol"],
            **({"inCommitTimestampOpt": st["ict"]} if st["ict"] is not None else {})}


def with_ids(cols: dict[str, pa.Array], ids: dict[str, int] | None = None) -> pa.Table:
    """Arrow table whose fields carry parquet field ids (id=1, name=2, then in order)."""
    ids = ids or {}
    fields = []
    nxt = 1
    for name, arr in cols.items():
        fid = ids.get(name, {"id": 1, "name": 2}.get(name, 10 + nxt))
        nxt += 1
        fields.append(pa.field(name, arr.type, metadata={b"PARQUET:field_id": str(fid).encode()}))
    return pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))


# ------------------------------------------------------------------ the two base tables
def plain_table() -> Table:
    """(1,2) table partitioned by integer p: create + append, then a copy-on-write delete."""
    t = Table()
    schema = {"type": "struct", "fields": [field("id", "long"), field("name", "string"), field("p", "integer")]}
    f0 = t.add("p=1/f0.parquet", with_ids({"id": pa.array([1, 2], pa.int64()), "name": pa.array(["a", "b"])}), {"p": "1"})
    t.commit({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
             {"metaData": {"id": str(uuid.UUID(int=1)), "format": {"provider": "parquet", "options": {}},
                           "schemaString": schema, "partitionColumns": ["p"], "configuration": {}, "createdTime": T0}},
             {"add": f0})
    f1 = t.add("p=2/f1.parquet", with_ids({"id": pa.array([3, 4], pa.int64()), "name": pa.array(["c", None])}), {"p": "2"})
    t.commit({"add": f1})
    f2 = t.add("p=2/f2.parquet", with_ids({"id": pa.array([4], pa.int64()), "name": pa.array([None], pa.string())}), {"p": "2"})
    t.commit({"remove": {"path": "p=2/f1.parquet", "deletionTimestamp": T0 + 5000, "dataChange": True,
                         "extendedFileMetadata": True, "partitionValues": {"p": "2"}, "size": AUTO}},
             {"add": f2}, op="DELETE")
    return t


DV_UUID = uuid.UUID("d2c639aa-8816-431a-aaf6-d3fe2512ff61")
DV_PREFIX = "ab"


def mapped(tbl: dict[str, tuple[pa.Array, str, int]]) -> pa.Table:
    """Arrow table with physical column names and parquet field ids."""
    fields, cols = [], []
    for _, (arr, phys, fid) in tbl.items():
        fields.append(pa.field(phys, arr.type, metadata={b"PARQUET:field_id": str(fid).encode()}))
        cols.append(arr)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def feature_table() -> Table:
    """(3,7) table: name column mapping, deletion vectors, row tracking, in-commit timestamps."""
    t = Table()
    schema = {"type": "struct", "fields": [field("id", "long", "col-id", 1), field("name", "string", "col-name", 2),
                                           field("p", "string", "col-p", 3)]}
    cfg = {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "3",
           "delta.enableDeletionVectors": "true", "delta.enableRowTracking": "true",
           "delta.rowTracking.materializedRowIdColumnName": "_row-id-col",
           "delta.rowTracking.materializedRowCommitVersionColumnName": "_row-commit-version-col",
           "delta.enableInCommitTimestamps": "true"}
    f0 = t.add("f0.parquet", mapped({"id": (pa.array([1, 2, 3], pa.int64()), "col-id", 1),
                                      "name": (pa.array(["a", "b", "c"]), "col-name", 2)}),
               {"col-p": "x"}, baseRowId=0, defaultRowCommitVersion=0)
    t.commit({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                           "readerFeatures": ["columnMapping", "deletionVectors"],
                           "writerFeatures": ["columnMapping", "deletionVectors", "domainMetadata", "rowTracking",
                                              "inCommitTimestamp"]}},
             {"metaData": {"id": str(uuid.UUID(int=2)), "format": {"provider": "parquet", "options": {}},
                           "schemaString": schema, "partitionColumns": ["p"], "configuration": cfg, "createdTime": T0}},
             {"domainMetadata": {"domain": "delta.rowTracking", "configuration": '{"rowIdHighWaterMark":2}', "removed": False}},
             {"add": f0}, ict=T0)
    f1 = t.add("f1.parquet", mapped({"id": (pa.array([4, 5], pa.int64()), "col-id", 1),
                                      "name": (pa.array(["d", None]), "col-name", 2)}),
               {"col-p": "y"}, baseRowId=3, defaultRowCommitVersion=1)
    t.commit({"add": f1},
             {"domainMetadata": {"domain": "delta.rowTracking", "configuration": '{"rowIdHighWaterMark":4}', "removed": False}},
             ict=T0 + 1000)
    bitmap = dv_bitmap([0, 1])
    t.raw[f"{DV_PREFIX}/deletion_vector_{DV_UUID}.bin"] = dv_file(bitmap)
    dv = {"storageType": "u", "pathOrInlineDv": DV_PREFIX + z85(DV_UUID.bytes), "offset": 1,
          "sizeInBytes": len(bitmap), "cardinality": 2}
    f0_dv = dict(f0, deletionVector=dv, dataChange=True)
    t.commit({"remove": {"path": "f0.parquet", "deletionTimestamp": T0 + 2000, "dataChange": True,
                         "baseRowId": 0, "defaultRowCommitVersion": 0}},
             {"add": f0_dv}, ict=T0 + 2000, op="DELETE")
    return t


def inline_dv(rows: list[int]) -> dict:
    """Inline DV descriptor for rows (pads to a multiple of 4 bytes by choosing row counts)."""
    bm = dv_bitmap(rows)
    assert len(bm) % 4 == 0, "choose rows so the bitmap length is a multiple of 4"
    return {"storageType": "i", "pathOrInlineDv": z85(bm), "sizeInBytes": len(bm), "cardinality": len(rows)}


# ================================================================== mutations
NOW_MS = int(time.time() * 1000)


# ------------------------------------------------------------------ small editing helpers
def proto(t: Table, r: int, w: int, rf=None, wf=None, v: int = 0) -> dict:
    """Replace commit v's protocol."""
    p = t.proto(v)
    p.clear()
    p.update({"minReaderVersion": r, "minWriterVersion": w})
    if rf is not None:
        p["readerFeatures"] = list(rf)
    if wf is not None:
        p["writerFeatures"] = list(wf)
    return p


def fld(t: Table, name: str, v: int = 0) -> dict:
    """Schema field by name in commit v's metaData."""
    return next(f for f in t.fields(v) if f["name"] == name)


def add_of(t: Table, v: int, i: int = 0) -> dict:
    """i-th add body of commit v."""
    return t.find(v, "add", i)


def unpartition(t: Table) -> Table:
    """Drop the partition column p everywhere."""
    t.meta(0)["partitionColumns"] = []
    t.fields(0)[:] = [f for f in t.fields(0) if f["name"] != "p"]
    for c in t.commits:
        for a in c:
            for k in ("add", "remove", "cdc"):
                if k in a and "partitionValues" in a[k]:
                    a[k]["partitionValues"] = {}
    return t


def logical_mapping(t: Table) -> Table:
    """Name-mode column mapping whose physical names equal the logical ones (ids 1..n)."""
    for i, f in enumerate(t.fields(0), start=1):
        f["metadata"].update({"delta.columnMapping.id": i, "delta.columnMapping.physicalName": f["name"]})
    t.cfg().update({"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": str(len(t.fields(0)))})
    return t


def iceberg(t: Table, *versions: str, extra_wf=()) -> Table:
    """Unpartitioned, mapped (2,7) table with the given icebergCompat versions enabled."""
    logical_mapping(t)
    proto(t, 2, 7, wf=["columnMapping"] + [f"icebergCompat{v}" for v in versions] + list(extra_wf))
    for v in versions:
        t.cfg()[f"delta.enableIcebergCompat{v}"] = "true"
    return t


def dv_plain(t: Table, enable: bool = True) -> Table:
    """Plain table on (3,7) with deletion vectors supported (and enabled)."""
    proto(t, 3, 7, rf=["deletionVectors"], wf=["deletionVectors"])
    if enable:
        t.cfg()["delta.enableDeletionVectors"] = "true"
    return t


def ict_all(t: Table, txn_ids: bool = False) -> Table:
    """Give every commit an in-commit timestamp (and a txnId)."""
    for v, c in enumerate(t.commits):
        c[0]["commitInfo"]["inCommitTimestamp"] = T0 + 1000 * v
        if txn_ids:
            c[0]["commitInfo"]["txnId"] = str(uuid.UUID(int=100 + v))
    t.cfg()["delta.enableInCommitTimestamps"] = "true"
    return t


def clustered(t: Table, cols='[["id"]]') -> Table:
    """Unpartitioned (1,7) clustered table with a delta.clustering domain."""
    unpartition(t)
    proto(t, 1, 7, wf=["clustering", "domainMetadata"])
    t.commits[0].append({"domainMetadata": {"domain": "delta.clustering",
                                            "configuration": '{"clusteringColumns":%s}' % cols, "removed": False}})
    return t


def replace_dv(t: Table, bitmap: bytes | None = None, file_bytes: bytes | None = None, **desc) -> dict:
    """Change the feature table's v2 DV (file content and/or descriptor)."""
    rel = f"{DV_PREFIX}/deletion_vector_{DV_UUID}.bin"
    if bitmap is not None:
        t.raw[rel] = dv_file(bitmap)
    if file_bytes is not None:
        t.raw[rel] = file_bytes
    dv = add_of(t, 2)["deletionVector"] = dict(add_of(t, 2)["deletionVector"])
    dv.update(desc)
    for k, x in list(dv.items()):
        if x is None:
            del dv[k]
    return dv


def stats_without(tbl: pa.Table, *drop: str) -> str:
    """Stats JSON of tbl ignoring some columns."""
    return compute_stats(tbl.drop_columns(list(drop)))


def v2_table(t: Table) -> Table:
    """Plain table with the v2Checkpoint feature."""
    proto(t, 3, 7, rf=["v2Checkpoint"], wf=["v2Checkpoint"])
    return t


def v2_checkpoint(t: Table, v: int, *, inline: int = 0, sidecar_rows=None, sidecar_action=None, cm=None,
                  sidecar_name="sc1.parquet", write_sidecar=True) -> list[dict]:
    """A UUID-named parquet V2 checkpoint of v whose file actions (after the first `inline`) go to a sidecar."""
    rows = t.checkpoint_rows(v)
    non_file = [r for r in rows if "add" not in r]
    files = [r for r in rows if "add" in r]
    main = non_file + files[:inline]
    side = files[inline:] if sidecar_rows is None else sidecar_rows
    main.append({"checkpointMetadata": cm if cm is not None else {"version": v}})
    sc = sidecar_action if sidecar_action is not None else {"path": sidecar_name, "sizeInBytes": 100, "modificationTime": T0}
    main.append({"sidecar": sc})
    t.checkpoint(v, main, name=f"_delta_log/{v:020d}.checkpoint.{uuid.UUID(int=7)}.parquet")
    if write_sidecar:
        t.checkpoints.append((f"_delta_log/_sidecars/{sidecar_name}", side, None))
    t.last_checkpoint = {"version": v, "size": len(main) + len(side)}
    return main


# ------------------------------------------------------------------ the mutations, one per rule
P, F = plain_table, feature_table
MUTATIONS: dict[str, object] = {}


def mut(rule: str, base=P):
    """Register a mutation for rule (short id ok)."""
    rid = rule if rule.startswith("DELTA-") else "DELTA-" + rule

    def deco(fn):
        fn.base = base
        MUTATIONS[rid] = fn
        return fn
    return deco


# -- log layout
@mut("LOG-001")
def _(t): t.commits[1] = None
@mut("LOG-004")
def _(t): t.raw["_delta_log/1.json"] = b'{"commitInfo":{}}\n'
@mut("LOG-005")
def _(t): t.commits[1].append('{"txn": {"appId": "a",')
@mut("LOG-006")
def _(t): t.commits[2] = []  # a commit file created, never filled: what a torn write leaves
@mut("LOG-007")
def _(t): t.commits[1] += [{"protocol": dict(t.proto())}, {"protocol": dict(t.proto())}]
@mut("LOG-008")
def _(t): t.commits[1] += [{"txn": {"appId": "a", "version": 1}}, {"txn": {"appId": "a", "version": 2}}]
@mut("LOG-009")
def _(t): t.commits[2].append({"remove": {"path": "p=2/f2.parquet", "dataChange": True, "deletionTimestamp": T0}})
@mut("LOG-012")
def _(t): t.raw["_delta_log/00000000000000000002.00000000000000000001.compacted.json"] = b""
@mut("LOG-013")
def _(t): t.raw["_delta_log/00000000000000000000.00000000000000000001.compacted.json"] = b'{"commitInfo":{}}\n'
@mut("CKPT-042")
def _(t):
    t.checkpoint(1)
    t.commits[0] = t.commits[1] = None
@mut("REPLAY-002")
def _(t): t.commits[0] = [a for a in t.commits[0] if "protocol" not in a]
@mut("REPLAY-010")
def _(t): t.commits[1].append({"sidecar": {"path": "x.parquet", "sizeInBytes": 1, "modificationTime": T0}})
@mut("ACTION-001")
def _(t): t.commits[0] = [a for a in t.commits[0] if "metaData" not in a]
@mut("ACTION-003")
def _(t): t.commits[1] += [{"metaData": copy.deepcopy(t.meta())}, {"metaData": copy.deepcopy(t.meta())}]
@mut("ACTION-008")
def _(t): t.commits[1].append({"add": dict(add_of(t, 1), modificationTime=T0 + 1)})
@mut("ACTION-012")
def _(t): t.commits[1].append({"add": dict(add_of(t, 1))})
@mut("ACTION-011")
def _(t):
    dv_plain(t)
    t.commits[1].append({"add": dict(add_of(t, 0), deletionVector=inline_dv([0, 1]))})
@mut("ACTION-013")
def _(t):
    t.find(2, "remove")["dataChange"] = False
    add_of(t, 2)["dataChange"] = False
@mut("ACTION-014")
def _(t): add_of(t, 1)["dataChange"] = False
@mut("ACTION-015")
def _(t):
    t.find(2, "remove")["dataChange"] = False
    t.commits[2] = [a for a in t.commits[2] if "add" not in a]
# -- action fields
@mut("ACTION-004")
def _(t): del t.meta()["configuration"]
@mut("ACTION-016")
def _(t): del add_of(t, 1)["size"]
@mut("ACTION-017")
def _(t): add_of(t, 1)["path"] = "p=2/f1%2.parquet"
@mut("ACTION-018")
def _(t): add_of(t, 0)["size"] = 12345
@mut("ACTION-019")
def _(t): add_of(t, 0)["modificationTime"] = T0 // 1000
@mut("ACTION-020")
def _(t): del t.find(2, "remove")["dataChange"]
@mut("ACTION-021")
def _(t): del t.find(2, "remove")["size"]
@mut("ACTION-022")
def _(t): add_of(t, 1)["deletionVector"] = {}
@mut("ACTION-023")
def _(t): t.commits[1].append({"txn": {"appId": "a"}})
@mut("ACTION-025")
def _(t): del t.proto()["minWriterVersion"]
@mut("DOMAIN-001")
def _(t): t.commits[1].append({"domainMetadata": {"domain": "com.x", "configuration": "{}", "removed": False}})
@mut("DOMAIN-002", F)
def _(t): t.commits[1].append({"domainMetadata": {"domain": "com.acme", "configuration": "{}"}})
@mut("LOG-002")
def _(t):
    a = add_of(t, 1)
    t.data["_tmp/f1.parquet"] = t.data.pop(a["path"])
    a["path"] = "_tmp/f1.parquet"
@mut("WRITER-001")
def _(t):
    add_of(t, 0)["size"] = 1
    t.commits[2].append({"remove": {"path": "p=1/f0.parquet", "dataChange": True, "deletionTimestamp": T0}})
    t.data["p=1/f0.parquet"] = with_ids({"id": pa.array([7, 8, 9], pa.int64()), "name": pa.array(["x", "y", "z"])})
    t.commit({"add": t.add("p=1/f0.parquet", t.data["p=1/f0.parquet"], {"p": "1"})})
@mut("WRITER-005")
def _(t): t.cfg()["delta.appendOnly"] = "true"
# -- checksums
@mut("CRC-001")
def _(t): t.raw["_delta_log/00000000000000000001.crc"] = b'{"numFiles": 1}\n{"numFiles": 2}\n'
@mut("CRC-002")
def _(t): t.crcs[2] = {"numFiles": None}
@mut("CRC-003")
def _(t): t.crcs[2] = {"numFiles": 7}
@mut("CRC-004")
def _(t): t.crcs[2] = {"inCommitTimestampOpt": T0}
@mut("CRC-005")
def _(t): t.crcs[2] = {"fileSizeHistogram": {"sortedBinBoundaries": [1024, 0], "fileCounts": [0, 2], "totalBytes": [0, 9]}}
@mut("CRC-006")
def _(t): t.crcs[2] = {"deletedRecordCountsHistogramOpt": {"deletedRecordCounts": [2] + [0] * 8}}
@mut("CRC-008")
def _(t): t.raw["_delta_log/00000000000000000005.crc"] = b'{"numFiles": 1}'
# -- features
@mut("FEATURE-001")
def _(t): t.proto()["writerFeatures"] = []
@mut("FEATURE-002")
def _(t): proto(t, 1, 7)
@mut("FEATURE-003")
def _(t): proto(t, 3, 5, rf=[])
@mut("FEATURE-007")
def _(t):
    proto(t, 1, 4)
    t.cfg()["delta.enableChangeDataFeed"] = "true"
    t.new_proto(1).update({"minWriterVersion": 7, "writerFeatures": ["appendOnly", "invariants", "checkConstraints"]})
@mut("FEATURE-008")
def _(t):
    proto(t, 1, 7, wf=["appendOnly"])
    t.new_proto(1)["writerFeatures"] = []
@mut("FEATURE-009")
def _(t): proto(t, 3, 7, rf=["deletionVectors"], wf=[])
@mut("CKPT-040")
def _(t): proto(t, 3, 7, rf=[], wf=["v2Checkpoint"])
@mut("VACUUM-001")
def _(t): proto(t, 3, 7, rf=[], wf=["vacuumProtocolCheck"])
@mut("CATALOG-001")
def _(t):
    proto(t, 3, 7, rf=[], wf=["catalogManaged", "inCommitTimestamp"])
    ict_all(t, txn_ids=True)
@mut("CATALOG-002")
def _(t):
    proto(t, 3, 7, rf=["catalogManaged"], wf=["catalogManaged"])
    for v, c in enumerate(t.commits):
        c[0]["commitInfo"]["txnId"] = str(uuid.UUID(int=100 + v))
@mut("CATALOG-003")
def _(t):
    proto(t, 3, 7, rf=["catalogManaged"], wf=["catalogManaged", "inCommitTimestamp"])
    ict_all(t, txn_ids=True)
    t.commits[1][0]["commitInfo"]["txnId"] = t.commits[0][0]["commitInfo"]["txnId"]
@mut("CATALOG-010")
def _(t):
    proto(t, 3, 7, rf=["catalogManaged"], wf=["catalogManaged", "inCommitTimestamp"])
    ict_all(t, txn_ids=True)
    t.post.append(lambda root: os.utime(os.path.join(root, "_delta_log", f"{1:020d}.json"), (1e9, 1e9)))
@mut("CATALOG-004")
def _(t): t.raw["_delta_log/_staged_commits/1.json"] = b"{}"
@mut("DV-001")
def _(t):
    t.cfg()["delta.enableDeletionVectors"] = "true"
    add_of(t, 1)["deletionVector"] = inline_dv([0, 1])
@mut("DV-002")
def _(t):
    dv_plain(t, enable=False)
    add_of(t, 1)["deletionVector"] = inline_dv([0, 1])
@mut("SCHEMA-008")
def _(t): t.fields().append(field("ts", "timestamp_ntz"))
@mut("VARIANT-001")
def _(t): t.fields().append(field("v", "variant"))
@mut("VARIANT-011")
def _(t): proto(t, 3, 7, rf=["variantShredding"], wf=["variantShredding"])
@mut("VARIANT-013")
def _(t): t.cfg()["delta.enableVariantShredding"] = "true"
@mut("TYPEWIDEN-001")
def _(t): fld(t, "id")["metadata"]["delta.typeChanges"] = [{"fromType": "integer", "toType": "long"}]
@mut("TYPEWIDEN-010")
def _(t): t.cfg()["delta.enableTypeWidening"] = "true"
@mut("ICT-001")
def _(t): t.cfg()["delta.enableInCommitTimestamps"] = "true"
@mut("ROWTRACK-001")
def _(t):
    proto(t, 1, 7, wf=["rowTracking"])
    t.cfg()["delta.rowTrackingSuspended"] = "true"
@mut("CLUSTER-001")
def _(t):
    clustered(t)
    proto(t, 1, 7, wf=["clustering"])
    t.commits[0] = [a for a in t.commits[0] if "domainMetadata" not in a]
@mut("CLUSTER-002")
def _(t):
    proto(t, 1, 7, wf=["clustering", "domainMetadata"])
    t.commits[0].append({"domainMetadata": {"domain": "delta.clustering",
                                            "configuration": '{"clusteringColumns":[["id"]]}', "removed": False}})
@mut("CLUSTER-003")
def _(t): clustered(t, '[["nope"]]')
@mut("CLUSTER-004")
def _(t):
    clustered(t)
    add_of(t, 1)["stats"] = json.dumps({"numRecords": 2, "nullCount": {"id": 0, "name": 1}})
@mut("WRITER-004")
def _(t):
    proto(t, 1, 7, wf=[])
    t.cfg()["delta.appendOnly"] = "true"
@mut("WRITER-008")
def _(t):
    proto(t, 1, 7, wf=[])
    fld(t, "id")["metadata"]["delta.invariants"] = '{"expression":{"expression":"id > 0"}}'
@mut("WRITER-011")
def _(t): t.cfg()["delta.constraints.c1"] = "id > 0"
@mut("WRITER-015")
def _(t): fld(t, "id")["metadata"]["delta.generationExpression"] = "id"
@mut("WRITER-017")
def _(t): fld(t, "id")["metadata"]["CURRENT_DEFAULT"] = "1"
@mut("WRITER-021")
def _(t): fld(t, "id")["metadata"].update({"delta.identity.start": 1, "delta.identity.step": 1,
                                            "delta.identity.allowExplicitInsert": True})
@mut("WRITER-022")
def _(t):
    proto(t, 1, 6)
    fld(t, "id")["metadata"].update({"delta.identity.start": 1, "delta.identity.step": 0,
                                      "delta.identity.allowExplicitInsert": True})
@mut("COLMAP-005")
def _(t):
    md = t.new_meta(2)
    t.commits[2].remove({"metaData": md})
    t.commit({"metaData": md})
    for i, f in enumerate(md["schemaString"]["fields"], start=1):
        f["metadata"].update({"delta.columnMapping.id": i, "delta.columnMapping.physicalName": f["name"]})
    md["configuration"].update({"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "3"})
# -- iceberg compatibility
@mut("ICEBERG-001")
def _(t):
    unpartition(t)
    logical_mapping(t)
    proto(t, 2, 5)
    t.cfg()["delta.enableIcebergCompatV2"] = "true"
@mut("ICEBERG-002")
def _(t):
    unpartition(t)
    proto(t, 2, 7, wf=["columnMapping", "icebergCompatV1"])
    t.cfg()["delta.enableIcebergCompatV1"] = "true"
@mut("ICEBERG-003")
def _(t):
    iceberg(unpartition(t), "V1")
    proto(t, 3, 7, rf=["columnMapping", "deletionVectors"], wf=["columnMapping", "deletionVectors", "icebergCompatV1"])
@mut("ICEBERG-004")
def _(t): iceberg(t, "V1")
@mut("ICEBERG-005")
def _(t):
    iceberg(unpartition(t), "V2")
    del add_of(t, 1)["stats"]
@mut("ICEBERG-006")
def _(t):
    iceberg(unpartition(t), "V1")
    t.fields().append(field("arr", {"type": "array", "elementType": "long", "containsNull": True}, "arr", 3))
    t.cfg()["delta.columnMapping.maxColumnId"] = "3"
@mut("ICEBERG-007")
def _(t):
    iceberg(t, "V2")
    for path, tbl in list(t.data.items()):
        pv = "1" if path.startswith("p=1") else "2"
        t.data[path] = tbl.append_column(pa.field("p", pa.int32(), metadata={b"PARQUET:field_id": b"3"}),
                                         pa.array([int(pv)] * tbl.num_rows, pa.int32()))
        for c in t.commits:
            for a in c:
                if "add" in a and a["add"]["path"] == path:
                    a["add"]["stats"] = stats_without(t.data[path], "p")
    t.commit({"metaData": dict(copy.deepcopy(t.meta()), partitionColumns=["name"])})
@mut("ICEBERG-009")
def _(t): iceberg(unpartition(t), "V1", "V2")
@mut("ICEBERG-010")
def _(t):
    iceberg(unpartition(t), "V2")
    t.fields().append(field("ts", "timestamp", "ts", 3))
    t.cfg()["delta.columnMapping.maxColumnId"] = "3"
    a = add_of(t, 1)
    tbl = t.data[a["path"]]
    t.data[a["path"]] = tbl.append_column(pa.field("ts", pa.timestamp("us"), metadata={b"PARQUET:field_id": b"3"}),
                                          pa.array([1_600_000_000_000_000, None], pa.timestamp("us")))
    t.write_opts[a["path"]] = {"use_deprecated_int96_timestamps": True}
@mut("ICEBERG-011")
def _(t):
    iceberg(unpartition(t), "V2")
    t.fields().append(field("nothing", "void", "nothing", 3))
    t.cfg()["delta.columnMapping.maxColumnId"] = "3"
# -- schema
@mut("SCHEMA-001")
def _(t): t.meta()["schemaString"] = "{not json"
@mut("SCHEMA-002")
def _(t): del fld(t, "name")["nullable"]
@mut("SCHEMA-003")
def _(t): t.fields().append(field("arr", {"type": "array", "elementType": "long"}))
@mut("SCHEMA-004")
def _(t): t.fields().append(field("m", {"type": "map", "keyType": "string", "valueType": "long"}))
@mut("SCHEMA-005")
def _(t): t.fields().append(field("ID", "long"))
@mut("SCHEMA-006")
def _(t): t.fields().append(field("d", "decimal(39,0)"))
@mut("SCHEMA-007")
def _(t):
    t.fields().append(field("ts", "timestamp"))
    a = add_of(t, 1)
    t.data[a["path"]] = t.data[a["path"]].append_column("ts", pa.array([1_600_000_000_000_000, None], pa.timestamp("us")))
@mut("SCHEMA-009")
def _(t):
    proto(t, 1, 4)
    fld(t, "id")["metadata"]["delta.generationExpression"] = "id"
    md = t.new_meta(1)
    next(f for f in md["schemaString"]["fields"] if f["name"] == "id")["metadata"].clear()
@mut("SCHEMA-010")
def _(t):
    t.fields().append(field("v", "void"))
    a = add_of(t, 1)
    t.data[a["path"]] = t.data[a["path"]].append_column("v", pa.nulls(2))
@mut("SCHEMA-011")
def _(t): t.fields().append(field("a", {"type": "array", "elementType": "void", "containsNull": True}))
@mut("COLMAP-001")
def _(t): t.cfg()["delta.columnMapping.mode"] = "foo"
@mut("COLMAP-003", F)
def _(t):
    t.fields().append(field("s", {"type": "struct", "fields": [field("x", "long")]}, "col-s", 4))
    t.cfg()["delta.columnMapping.maxColumnId"] = "4"
@mut("COLMAP-004", F)
def _(t):
    md = copy.deepcopy(t.meta())
    name = next(f for f in md["schemaString"]["fields"] if f["name"] == "name")
    md["schemaString"]["fields"].remove(name)
    t.commit({"metaData": md}, ict=T0 + 3000)
    md2 = copy.deepcopy(md)
    md2["schemaString"]["fields"].append(dict(copy.deepcopy(name), name="name2"))
    t.commit({"metaData": md2}, ict=T0 + 4000)
@mut("COLMAP-006", F)
def _(t):
    a = add_of(t, 1)
    tbl = t.data[a["path"]]
    a["stats"] = compute_stats(tbl)
    t.data[a["path"]] = tbl.rename_columns(["id", "name"])
@mut("COLMAP-007", F)
def _(t):
    a = add_of(t, 1)
    t.data[a["path"]] = mapped({"id": (pa.array([4, 5], pa.int64()), "col-id", 1),
                                "name": (pa.array(["d", None]), "col-name", 9)})
@mut("COLMAP-008", F)
def _(t): add_of(t, 1)["partitionValues"] = {"p": "y"}
@mut("COLMAP-009", F)
def _(t): t.cfg()["delta.columnMapping.maxColumnId"] = "2"
# -- type widening
TW = dict(rf=["typeWidening"], wf=["typeWidening"])
@mut("TYPEWIDEN-002")
def _(t):
    proto(t, 3, 7, **TW)
    fld(t, "id")["metadata"]["delta.typeChanges"] = [{"fromType": "long", "toType": "integer"}]
@mut("TYPEWIDEN-003")
def _(t):
    proto(t, 3, 7, **TW)
    md = copy.deepcopy(t.meta())
    p = next(f for f in md["schemaString"]["fields"] if f["name"] == "p")
    p["type"] = "long"
    p["metadata"]["delta.typeChanges"] = [{"fromType": "integer", "toType": "long"}]
    t.commit({"metaData": md})
@mut("TYPEWIDEN-004")
def _(t):
    proto(t, 3, 7, rf=["typeWidening"], wf=["typeWidening", "icebergCompatV1"])
    fld(t, "p")["metadata"]["delta.typeChanges"] = [{"fromType": "integer", "toType": "double"}]
@mut("TYPEWIDEN-005")
def _(t):
    proto(t, 3, 7, **TW)
    fld(t, "id")["metadata"]["delta.typeChanges"] = "garbage"
@mut("TYPEWIDEN-006")
def _(t):
    proto(t, 3, 7, **TW)
    fld(t, "id")["metadata"]["delta.typeChanges"] = [{"fromType": "integer", "toType": "long", "fieldPath": "foo"}]
@mut("ROWTRACK-010", F)
def _(t): t.cfg()["delta.rowTracking.materializedRowIdColumnName"] = "name"
VT = dict(rf=["variantType"], wf=["variantType"])
@mut("VARIANT-007")
def _(t):
    proto(t, 3, 7, **VT)
    t.fields().append(field("v", "variant"))
    t.commit({"metaData": dict(copy.deepcopy(t.meta()), partitionColumns=["p", "v"])})
# -- partition values
def _part(t, name, type_, values, proto_args=None):
    t.fields().append(field(name, type_))
    t.meta()["partitionColumns"].append(name)
    for (v, i), val in zip(((0, 0), (1, 0), (2, 0)), values):
        add_of(t, v, i)["partitionValues"][name] = val
    t.find(2, "remove")["partitionValues"][name] = values[1]
@mut("PART-001")
def _(t): add_of(t, 1)["partitionValues"]["p"] = "__HIVE_DEFAULT_PARTITION__"
@mut("PART-002")
def _(t): add_of(t, 1)["partitionValues"]["p"] = "1e3"
@mut("PART-003")
def _(t): _part(t, "d", "date", ["2024-01-01", "2024-13-01", "2024-01-02"])
@mut("PART-004")
def _(t): _part(t, "ts", "timestamp", ["2024-01-01 00:00:00", "2024/01/01", "1970-01-01T00:00:00.123456Z"])
@mut("PART-006")
def _(t):
    proto(t, 3, 7, rf=["timestampNtz"], wf=["timestampNtz"])
    _part(t, "ts", "timestamp_ntz", ["2024-01-01 00:00:00", "2024-01-01T00:00:00Z", "2024-01-01 00:00:00.5"])
@mut("PART-007")
def _(t): _part(t, "b", "boolean", ["true", "TRUE", "false"])
@mut("WRITER-003")
def _(t): add_of(t, 1)["partitionValues"] = {}
# -- statistics
@mut("STATS-002")
def _(t): add_of(t, 1)["stats"] = '{"numRecords": 2, "nullCounts": {}}'
@mut("STATS-003")
def _(t): add_of(t, 1)["stats"] = json.dumps({"numRecords": 2, "minValues": {"zzz": 1}})
@mut("STATS-004")
def _(t): add_of(t, 1)["stats"] = json.dumps({"numRecords": 5})
@mut("STATS-005")
def _(t): add_of(t, 1)["stats"] = json.dumps({"numRecords": 2, "minValues": {"id": 0}, "maxValues": {"id": 4}})
@mut("STATS-006")
def _(t): add_of(t, 1)["stats"] = json.dumps({"numRecords": 2, "tightBounds": False, "minValues": {"id": 5}})
@mut("DV-016", F)
def _(t): add_of(t, 2)["stats"] = json.dumps({"numRecords": 1})
@mut("VARIANT-010")
def _(t):
    proto(t, 3, 7, **VT)
    t.fields().append(field("v", "variant"))
    add_of(t, 1)["stats"] = json.dumps({"numRecords": 2, "minValues": {"v": "abc"}})
# -- data files
@mut("WRITER-002")
def _(t):
    a = add_of(t, 1)
    t.data[a["path"]] = with_ids({"id": pa.array([3, 4], pa.int32()), "name": pa.array(["c", None])})
def _variant_file(t, arr, shredding=False, enable=False):
    if shredding:
        proto(t, 3, 7, rf=["variantType", "variantShredding"], wf=["variantType", "variantShredding"])
    else:
        proto(t, 3, 7, **VT)
    if enable:
        t.cfg()["delta.enableVariantShredding"] = "true"
    t.fields().append(field("v", "variant"))
    a = add_of(t, 1)
    tbl = t.data[a["path"]]
    a["stats"] = compute_stats(tbl)
    t.data[a["path"]] = tbl.append_column("v", arr)
_B = pa.binary()
@mut("VARIANT-003")
def _(t): _variant_file(t, pa.array(["x", "y"]))
@mut("VARIANT-004")
def _(t): _variant_file(t, pa.array([{"metadata": b"m", "value": b"v", "typed_value": 1}] * 2,
                                    pa.struct([("metadata", _B), ("value", _B), ("typed_value", pa.int64())])))
@mut("VARIANT-012")
def _(t): _variant_file(t, pa.array([{"metadata": b"m", "value": b"v", "typed_value": 1}] * 2,
                                    pa.struct([("metadata", _B), ("value", _B), ("typed_value", pa.int64())])), shredding=True)
@mut("VARIANT-014")
def _(t): _variant_file(t, pa.array([{"value": b"v", "typed_value": 1}] * 2,
                                    pa.struct([("value", _B), ("typed_value", pa.int64())])), shredding=True, enable=True)
# -- change data feed
def _cdc(t, path, tbl):
    t.data[path] = tbl
    t.commits[1].append({"cdc": {"path": path, "partitionValues": {"p": "2"}, "size": AUTO, "dataChange": False}})
@mut("CDF-002")
def _(t): _cdc(t, "_change_data/c1.parquet", pa.table({"id": [3], "_change_type": ["upsert"]}))
@mut("CDF-003")
def _(t):
    a = add_of(t, 1)
    tbl = t.data[a["path"]]
    a["stats"] = compute_stats(tbl)
    _cdc(t, a["path"], tbl.append_column("_change_type", pa.array(["insert", None])))
@mut("CDF-009")
def _(t):
    proto(t, 1, 4)
    t.cfg()["delta.enableChangeDataFeed"] = "true"
@mut("CDF-010")
def _(t):
    proto(t, 1, 7, wf=["changeDataFeed"])
    t.cfg()["delta.enableChangeDataFeed"] = "true"
# -- in-commit timestamps
@mut("ICT-002", F)
def _(t): t.commits[1].append(t.commits[1].pop(0))
@mut("ICT-003", F)
def _(t): t.commits[1][0]["commitInfo"]["inCommitTimestamp"] = T0 - 1
def _enable_ict(t, ict, props=True):
    t.new_proto(1).update({"minWriterVersion": 7, "writerFeatures": ["inCommitTimestamp"]})
    cfg = t.new_meta(1)["configuration"]
    cfg["delta.enableInCommitTimestamps"] = "true"
    if props:
        cfg.update({"delta.inCommitTimestampEnablementVersion": "1", "delta.inCommitTimestampEnablementTimestamp": str(ict)})
    t.commits[1][0]["commitInfo"]["inCommitTimestamp"] = ict
    t.commits[2][0]["commitInfo"]["inCommitTimestamp"] = ict + 1000
@mut("ICT-004")
def _(t): _enable_ict(t, NOW_MS + 10**8, props=False)
@mut("ICT-005")
def _(t): _enable_ict(t, T0 + 1000)
# -- row tracking
@mut("ROWTRACK-003", F)
def _(t): del add_of(t, 1)["baseRowId"]
@mut("ROWTRACK-004", F)
def _(t): t.find(0, "domainMetadata")["configuration"] = '{"rowIdHighWaterMark":10}'
@mut("ROWTRACK-005", F)
def _(t): t.find(1, "domainMetadata")["configuration"] = '{"rowIdHighWaterMark":3}'
@mut("ROWTRACK-006", F)
def _(t): add_of(t, 1)["defaultRowCommitVersion"] = 0
@mut("ROWTRACK-007", F)
def _(t): add_of(t, 2)["baseRowId"] = 7
@mut("ROWTRACK-009")
def _(t):
    t.commit()
    t.new_proto(3).update({"minWriterVersion": 7, "writerFeatures": ["domainMetadata", "rowTracking"]})
    t.new_meta(3)["configuration"].update({"delta.enableRowTracking": "true",
                                           "delta.rowTracking.materializedRowIdColumnName": "_rid",
                                           "delta.rowTracking.materializedRowCommitVersionColumnName": "_rcv"})
@mut("ROWTRACK-012", F)
def _(t):
    a = add_of(t, 0)
    tbl = t.data[a["path"]]
    a["stats"] = add_of(t, 2)["stats"] = compute_stats(tbl)
    t.data[a["path"]] = tbl.append_column("_row-id-col", pa.array([0, 1, 4], pa.int64()))
@mut("ROWTRACK-014", F)
def _(t):
    a = add_of(t, 1)
    tbl = t.data[a["path"]]
    a["stats"] = compute_stats(tbl)
    t.data[a["path"]] = tbl.append_column("_row-id-col", pa.array([9, None], pa.int64()))
# -- constraints
@mut("WRITER-010")
def _(t): fld(t, "id")["metadata"]["delta.invariants"] = '{"expression":{"expression":"id > 2"}}'
@mut("WRITER-012")
def _(t):
    proto(t, 1, 3)
    t.cfg()["delta.constraints.c1"] = "nosuchcol > 0"
@mut("WRITER-013")
def _(t):
    proto(t, 1, 3)
    t.commit()
    t.new_meta(3)["configuration"]["delta.constraints.c1"] = "id > 3"
@mut("WRITER-014")
def _(t):
    proto(t, 1, 3)
    t.cfg()["delta.constraints.c1"] = "id < 4"
@mut("WRITER-016")
def _(t):
    proto(t, 1, 4)
    fld(t, "name")["metadata"]["delta.generationExpression"] = "'a'"
# -- deletion vector content
@mut("DV-005", F)
def _(t): replace_dv(t, storageType="x")
@mut("DV-006", F)
def _(t): t.raw.pop(f"{DV_PREFIX}/deletion_vector_{DV_UUID}.bin")
@mut("DV-007", F)
def _(t):
    add_of(t, 2)["deletionVector"] = dict(inline_dv([0, 1]), offset=1)
@mut("DV-008", F)
def _(t): replace_dv(t, storageType="p", pathOrInlineDv=f"{DV_PREFIX}/deletion_vector_{DV_UUID}.bin")
@mut("DV-010", F)
def _(t): replace_dv(t, cardinality=3)
@mut("DV-012", F)
def _(t):
    dv = inline_dv([0, 1])
    dv["pathOrInlineDv"] = "~" + dv["pathOrInlineDv"][1:]
    add_of(t, 2)["deletionVector"] = dv
@mut("DV-013", F)
def _(t):
    bm = dv_bitmap([0, 1])
    replace_dv(t, bitmap=struct.pack("<I", 1234) + bm[4:])
@mut("DV-014", F)
def _(t):
    f = bytearray(dv_file(dv_bitmap([0, 1])))
    f[-6] ^= 0xFF
    replace_dv(t, file_bytes=bytes(f))
@mut("DV-015", F)
def _(t): replace_dv(t, bitmap=dv_bitmap([0, 7]))
# -- checkpoints
@mut("CKPT-006")
def _(t): t.checkpoint(5, t.checkpoint_rows(2))
@mut("CKPT-007")
def _(t): t.checkpoint(2).pop()
@mut("REPLAY-008")
def _(t):
    rows = t.checkpoint(2)
    rows.append(copy.deepcopy(rows[-1]))
@mut("DOMAIN-005", F)
def _(t):
    rows = t.checkpoint(2)
    rows[:] = [r for r in rows if "domainMetadata" not in r]
@mut("CKPT-008")
def _(t): t.checkpoint(2).append({"commitInfo": {"operation": "WRITE"}})
@mut("CKPT-009")
def _(t):
    rows = t.checkpoint(2)
    rows[-1]["remove"] = {"path": "gone.parquet", "dataChange": False, "deletionTimestamp": T0}
@mut("CKPT-011")
def _(t): t.raw["_delta_log/2.checkpoint.parquet"] = b"PAR1"
@mut("CKPT-012")
def _(t): t.raw["_delta_log/00000000000000000002.checkpoint.1.3.parquet"] = b"PAR1"
@mut("CKPT-013")
def _(t): t.raw["_delta_log/00000000000000000002.checkpoint.not-a-uuid.json"] = b"{}"
@mut("CKPT-017")
def _(t):
    v2_table(t)
    rows = t.checkpoint_rows(2)
    t.checkpoint(2, rows[:2], name="_delta_log/00000000000000000002.checkpoint.0000000001.0000000002.parquet")
    t.checkpoint(2, rows[2:], name="_delta_log/00000000000000000002.checkpoint.0000000002.0000000002.parquet")
    t.last_checkpoint = {"version": 2, "size": len(rows), "parts": 2}
@mut("CKPT-019")
def _(t): t.checkpoint(2).append({"checkpointMetadata": {"version": 2}})
@mut("CKPT-022")
def _(t):
    t.cfg()["delta.checkpoint.writeStatsAsStruct"] = "true"
    rows = t.checkpoint(2, schema=_ckpt_schema_with(("stats_parsed", pa.struct([("numRecords", pa.int64())]))))
    for r in rows:
        if "add" in r:
            r["add"]["stats_parsed"] = {"numRecords": 1}
@mut("CKPT-023")
def _(t): t.checkpoint(2)[-1]["add"]["stats"] = None
@mut("CKPT-024")
def _(t):
    t.cfg()["delta.checkpoint.writeStatsAsStruct"] = "true"
    rows = t.checkpoint(2, schema=_ckpt_schema_with(("partitionValues_parsed", pa.struct([("p", pa.int32())]))))
    for r in rows:
        if "add" in r:
            r["add"]["partitionValues_parsed"] = {"p": int(r["add"]["partitionValues"]["p"])}
@mut("CKPT-025")
def _(t): t.checkpoint(2).append({"remove": {"path": "p=2/f1.parquet", "deletionTimestamp": T0, "dataChange": False,
                                              "stats": '{"numRecords":2}'}})
@mut("CKPT-026")
def _(t): t.checkpoint(2)[0]["protocol"] = dict(t.proto(), writerFeatures=[])
@mut("CKPT-027")
def _(t):
    t.checkpoint(2)
    t.last_checkpoint = {"version": 2}
@mut("CKPT-030")
def _(t):
    rows = t.checkpoint(2)
    t.last_checkpoint = '{"version": 2, "version": 2, "size": %d}' % len(rows)
@mut("CKPT-031")
def _(t): v2_checkpoint(v2_table(t), 2, cm={"version": 1})
@mut("CKPT-037")
def _(t): v2_checkpoint(v2_table(t), 2, cm={"tags": {"a": "b"}})
@mut("CKPT-032")
def _(t):
    t.commits[1].append({"txn": {"appId": "app", "version": 1}})
    main = v2_checkpoint(v2_table(t), 2)
    txn = next(r for r in main if "txn" in r)
    main.remove(txn)
    sc = next(rows for name, rows, _ in t.checkpoints if "_sidecars" in name)
    sc.append(txn)
@mut("CKPT-033")
def _(t): v2_checkpoint(v2_table(t), 2, inline=1)
@mut("CKPT-035")
def _(t):
    v2_checkpoint(v2_table(t), 2, sidecar_action={"path": "other/sc1.parquet", "sizeInBytes": 1, "modificationTime": T0},
                  write_sidecar=False)
    rows = t.checkpoint_rows(2)
    t.checkpoints.append(("other/sc1.parquet", [r for r in rows if "add" in r], None))
@mut("CKPT-036")
def _(t): v2_checkpoint(v2_table(t), 2, sidecar_action={"path": "sc1.parquet", "sizeInBytes": 10})
@mut("CKPT-038")
def _(t): t.checkpoint(2).append({"sidecar": {"path": "sc9.parquet", "sizeInBytes": 1, "modificationTime": T0}})
@mut("CKPT-045")
def _(t):
    t.commit({"remove": {"path": "p=1/f0.parquet", "dataChange": True, "deletionTimestamp": T0}},
             {"remove": {"path": "p=2/f2.parquet", "dataChange": True, "deletionTimestamp": T0}}, op="DELETE")
    v2_checkpoint(v2_table(t), 3, write_sidecar=False)


@mut("ICEBERG-008")
def _(t):
    iceberg(unpartition(t), "V2")
    t.fields().append(field("arr", {"type": "array", "elementType": "long", "containsNull": True}, "arr", 3))
    t.cfg()["delta.columnMapping.maxColumnId"] = "3"
@mut("VARIANT-008")
def _(t):
    proto(t, 3, 7, rf=["variantType"], wf=["variantType", "generatedColumns"])
    t.fields().append(field("v", "variant", **{"delta.generationExpression": "id"}))
@mut("VARIANT-009")
def _(t):
    proto(t, 3, 7, rf=["variantType"], wf=["variantType", "allowColumnDefaults"])
    t.fields().append(field("v", "variant"))
    md = copy.deepcopy(t.meta())
    md["schemaString"]["fields"][-1]["metadata"]["CURRENT_DEFAULT"] = "parse_json('1')"
    t.commit({"metaData": md})
@mut("VARIANT-016")
def _(t):
    proto(t, 3, 7, rf=["variantType", "variantShredding"], wf=["variantType", "variantShredding"])
    t.cfg()["delta.enableVariantShredding"] = "true"
    t.fields().append(field("v", "variant"))
    add_of(t, 1)["stats"] = json.dumps({"numRecords": 2, "minValues": {"v": {"a": "xyz"}}})
@mut("WRITER-019")
def _(t):
    proto(t, 1, 7, wf=["allowColumnDefaults"])
    md = copy.deepcopy(t.meta())
    md["schemaString"]["fields"].append(field("c", "long", CURRENT_DEFAULT="42"))
    t.commit({"metaData": md})
@mut("TYPEWIDEN-007")
def _(t):
    proto(t, 3, 7, **TW)
    t.cfg()["delta.enableTypeWidening"] = "true"
    md = copy.deepcopy(t.meta())
    p = next(f for f in md["schemaString"]["fields"] if f["name"] == "p")
    p["type"] = "long"
    p["metadata"]["delta.typeChanges"] = [{"fromType": "integer", "toType": "long"}]
    t.commit({"metaData": md})
    md2 = copy.deepcopy(md)
    next(f for f in md2["schemaString"]["fields"] if f["name"] == "p")["metadata"].clear()
    t.commit({"metaData": md2})
@mut("CATALOG-012")
def _(t):
    proto(t, 3, 7, rf=["catalogManaged"], wf=["catalogManaged", "inCommitTimestamp"])
    ict_all(t, txn_ids=True)
    t.checkpoint(5, t.checkpoint_rows(2))


@mut("WRITER-018")
def _(t):
    proto(t, 1, 7, wf=["allowColumnDefaults"])
    t.fields().append(field("c", "long", CURRENT_DEFAULT="42"))
def _optimize(t, path, provider=None):
    old = next(a["add"] for c in t.commits for a in c if "add" in a and a["add"]["path"] == path)
    extra = {"clusteringProvider": provider} if provider else {}
    new = t.add("f3.parquet", t.data[path], {}, dataChange=False, **extra)
    t.commit({"remove": {"path": path, "dataChange": False, "deletionTimestamp": T0}}, {"add": new}, op="OPTIMIZE")
    return old
@mut("CLUSTER-005")
def _(t):
    clustered(t)
    _optimize(t, "p=1/f0.parquet")
@mut("CLUSTER-006")
def _(t):
    clustered(t)
    add_of(t, 2)["clusteringProvider"] = "other"
    _optimize(t, "p=2/f2.parquet", "liquid")


def _ckpt_schema_with(*extra):
    return checkpoint_schema([pa.field(n, ty) for n, ty in extra])


# ------------------------------------------------------------------ the tests
@pytest.mark.parametrize("base", [plain_table, feature_table], ids=["plain", "features"])
def test_base_tables_are_valid(tmp_path, base):
    """Both hand-built base tables (and their checkpointed forms) validate clean."""
    assert validate_table(base().write(str(tmp_path / "t"))) == []
    t = base()
    t.checkpoint(2)
    t.crcs[2] = {}
    assert validate_table(t.write(str(tmp_path / "c"))) == []


@pytest.mark.parametrize("rule", [pytest.param(r, marks=pytest.mark.rule(r), id=r) for r in sorted(MUTATIONS)])
def test_mutation_is_flagged(tmp_path, rule):
    """The mutation for ``rule`` makes the validator report exactly that rule."""
    fn = MUTATIONS[rule]
    t = fn.base()
    fn(t)
    found = validate_table(t.write(str(tmp_path / "t")))
    assert {v.rule for v in found} == {rule}, "\n".join(f"{v.rule}: {v.message} @ {v.where}" for v in found)
    assert all(v.where for v in found)


def test_every_checked_rule_has_a_mutation():
    """Each rule the validator claims (CHECKS) is exercised by a mutation here."""
    assert sorted(set(CHECKS) - set(MUTATIONS)) == []
    assert sorted(set(MUTATIONS) - set(CHECKS)) == []
