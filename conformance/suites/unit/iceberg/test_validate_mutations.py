"""Iceberg validator mutation suite: one small mutation per rule, each breaking exactly that rule.

A valid table is built with the reference's own modules (``conformance.formats.iceberg.strategies.build_table``:
Parquet data with field ids, manifests, manifest lists, deletes, one metadata file per commit), checked
clean, then one thing in it is edited on disk; ``validate_table`` must report exactly the mutated
rule. This suite is the executable check behind every rule id in
``reference_impl.iceberg.validate.CHECKS``.
"""

from __future__ import annotations

import copy
import json
import struct

import pyarrow as pa
import pytest

from conformance.formats.iceberg.strategies import (
    BuiltTable, build_table, dv_blob, parquet_bytes, puffin_file,
)
from reference_impl.iceberg import types as T
from reference_impl.iceberg.validate import CHECKS, validate_table

FID = T.PARQUET_FIELD_ID
MUTATIONS: dict[str, object] = {}
EXTRA: dict[str, object] = {}  # more mutations of a claimed rule (id -> fn), by a short description


def mut(rule: str, version: int = 2):
    """Register the mutation of ``rule`` (short id ok), applied to a table of ``version``."""
    rid = rule if rule.startswith("ICEBERG-") else "ICEBERG-" + rule

    def deco(fn):
        fn.version = version
        MUTATIONS[rid] = fn
        return fn
    return deco


def extra(rule: str, what: str, version: int = 2):
    """Register a further mutation of ``rule`` (another way a writer breaks it)."""
    rid = rule if rule.startswith("ICEBERG-") else "ICEBERG-" + rule

    def deco(fn):
        fn.version, fn.rule = version, rid
        EXTRA[f"{rid} {what}"] = fn
        return fn
    return deco


# ================================================================== small edit helpers


def cur(t: BuiltTable, fn) -> None:
    """Edit the current metadata document."""
    t.edit_doc(fn)


def every_doc(t: BuiltTable, fn) -> None:
    """Edit every metadata document (so that no version-to-version rule sees a change)."""
    for rel in t.metadata_files:
        t.edit_doc(fn, rel)


def schema(d: dict, i: int = -1) -> dict:
    return d["schemas"][i]


def field(d_schema: dict, fid: int) -> dict:
    return next(f for f in d_schema["fields"] if f["id"] == fid)


def add_field(d: dict, f: dict, *, schemas=(-1,)) -> None:
    """Add a top-level field to some schemas of a document and raise last-column-id to cover it."""
    for i in schemas:
        d["schemas"][i]["fields"].append(copy.deepcopy(f))
    d["last-column-id"] = max(d["last-column-id"], f["id"])


def add_spec(d: dict, fields: list[dict], spec_id: int = 2) -> None:
    """Add a (non-default) partition spec and raise last-partition-id to cover it."""
    d["partition-specs"].append({"spec-id": spec_id, "fields": fields})
    d["last-partition-id"] = max([d["last-partition-id"]] + [f["field-id"] for f in fields])


def pf(source: int, fid: int, name: str, transform: str) -> dict:
    return {"source-id": source, "field-id": fid, "name": name, "transform": transform}


def promote(d: dict, old: str, new: str, fid: int = 11) -> None:
    """Add field ``fid`` of type ``old`` to the current schema and a newer schema 2 where it has type ``new``."""
    add_field(d, {"id": fid, "name": "dt", "required": False, "type": old})
    s2 = copy.deepcopy(d["schemas"][-1])
    s2["schema-id"] = 2
    field(s2, fid)["type"] = new
    d["schemas"].append(s2)


def snap(t: BuiltTable, d: dict, key: str) -> dict:
    return t.snapshot(d, key)


def entry(t: BuiltTable, manifest: str, file: str, fn, **kw) -> None:
    """Edit the record of ``file`` in ``manifest``."""
    t.edit_entries(manifest, lambda recs: fn(t.entry(recs, file)), **kw)


def data_file(t: BuiltTable, manifest: str, file: str, **values) -> None:
    """Set data_file fields of one entry."""
    entry(t, manifest, file, lambda r: r["data_file"].update(values))


def list_entry(t: BuiltTable, snapshot: str, manifest: str, **values) -> None:
    """Set fields of one manifest list entry."""
    t.edit_list(snapshot, lambda recs: t.list_entry(recs, manifest).update(values))


def schema_field(schema_: dict, *path: int) -> dict:
    """A record field by field-id path in an Avro schema (through records and optional unions)."""
    rec = schema_
    f = None
    for fid in path:
        if f is not None:
            t = f["type"]
            rec = next(b for b in t if b != "null") if isinstance(t, list) else t
        f = next(x for x in rec["fields"] if x.get("field-id") == fid)
    return f


def make_optional(t: BuiltTable, rel: str, *path: int) -> None:
    """Write a required Avro field as optional (values kept): the field table says required."""
    def fn(s, m, r):
        f = schema_field(s, *path)
        f["type"] = ["null", f["type"]]
        f["default"] = None
    t.edit_avro(rel, fn)


def manifest_field_optional(*path: int, manifest: str = "m2"):
    return lambda t: make_optional(t, t.manifests[manifest], *path)


def list_field_optional(fid: int, snapshot: str = "S2"):
    return lambda t: make_optional(t, t.manifest_lists[t.snapshot_ids[snapshot]], fid)


def kv(t: BuiltTable, manifest: str, fn) -> None:
    """Edit a manifest's key-value metadata."""
    t.edit_avro(t.manifests[manifest], lambda s, m, r: fn(m))


def rows_of(t: BuiltTable, name: str) -> pa.Table:
    return t.read_table(name)


def with_ids(cols: list[tuple[str, pa.Array, int | None, bool]]) -> pa.Table:
    """An Arrow table whose fields carry the given field ids (None: no id)."""
    fields = [pa.field(n, a.type, nullable=nullable, metadata={FID: str(i).encode()} if i is not None else None) for n, a, i, nullable in cols]
    return pa.Table.from_arrays([a for _n, a, _i, _nl in cols], schema=pa.schema(fields))


def no_metrics(t: BuiltTable, manifest: str, file: str) -> None:
    data_file(t, manifest, file, value_counts=None, null_value_counts=None, nan_value_counts=None, lower_bounds=None, upper_bounds=None)


def rewrite_puffin(t: BuiltTable, blobs: list[tuple[bytes, dict]]) -> list[int]:
    """Replace data/dv.puffin; the DV entry's file size follows; returns the blobs' offsets."""
    data, offsets = puffin_file(blobs)
    t.write_file("dv", data)
    return offsets


def dv_meta(t: BuiltTable, target: str = "a", **over) -> dict:
    meta = {"type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1, "sequence-number": -1,
            "properties": {"referenced-data-file": t.uri(t.files[target]), "cardinality": "1"}}
    meta.update(over)
    return meta


# ================================================================== metadata JSON: required fields and types

for _rule, _key, _v in (("META-005", "table-uuid", 2), ("META-008", "location", 2), ("META-010", "last-sequence-number", 2),
                        ("META-013", "last-updated-ms", 2), ("META-015", "last-column-id", 2), ("META-017", "schema", 1),
                        ("META-019", "schemas", 2), ("META-020", "current-schema-id", 2), ("META-022", "partition-spec", 1),
                        ("META-023", "partition-specs", 2), ("META-024", "default-spec-id", 2), ("META-026", "last-partition-id", 2),
                        ("META-037", "sort-orders", 2), ("META-038", "default-sort-order-id", 2), ("META-042", "next-row-id", 3)):
    mut(_rule, _v)(lambda t, key=_key: cur(t, lambda d: d.pop(key)))


@mut("META-001")
def _(t): open(t.path(t.current), "w").write("{not json")
@mut("META-003")
def _(t): cur(t, lambda d: d.pop("format-version"))
@mut("META-004")
def _(t): cur(t, lambda d: d.update({"format-version": 99}))
@mut("SERDE-025")
def _(t): cur(t, lambda d: d.update({"last-column-id": "10"}))
@mut("META-028")
def _(t): cur(t, lambda d: d["properties"].update({"commit.retry.num-retries": 4}))
@mut("META-018")
def _(t): cur(t, lambda d: d.update({"schema": d["schemas"][-1]}))
@mut("GEN-002")
def _(t): cur(t, lambda d: d.update({"next-row-id": 12}))
@mut("COMPAT-001", 1)
def _(t): cur(t, lambda d: d.update({"last-sequence-number": 0}))
@mut("META-045", 3)
def _(t):
    def f(d):
        d["current-snapshot-id"] = -1
        del d["refs"]["main"]
    cur(t, f)
@mut("GEN-010")
def _(t): cur(t, lambda d: snap(t, d, "S1").update({"manifest-list": t.manifest_lists[t.snapshot_ids["S1"]]}))


# ================================================================== schemas and their evolution

@mut("META-016")
def _(t): every_doc(t, lambda d: d.update({"last-column-id": d["last-column-id"] - 1}))
@mut("META-021")
def _(t): cur(t, lambda d: d["schemas"].append(copy.deepcopy(d["schemas"][-1])))
@mut("SCHEMA-001")
def _(t): cur(t, lambda d: field(schema(d), 5)["type"]["fields"].append({"id": 2, "name": "dup", "required": False, "type": "int"}))
@mut("SCHEMA-005")
def _(t): cur(t, lambda d: add_field(d, {"id": 11, "name": "v", "required": False, "type": "variant"}))
@mut("TYPE-001")
def _(t): cur(t, lambda d: add_field(d, {"id": 11, "name": "tn", "required": False, "type": "timestamp_ns"}))
@mut("TYPE-002", 3)
def _(t): every_doc(t, lambda d: [field(s, 5)["type"]["fields"][0].update({"type": "unknown", "required": True}) for s in d["schemas"]])
@mut("TYPE-004")
def _(t): cur(t, lambda d: add_field(d, {"id": 11, "name": "big", "required": False, "type": "decimal(39, 0)"}))
@mut("SCHEMA-006")
def _(t): cur(t, lambda d: schema(d).update({"identifier-field-ids": [99]}))
@mut("SCHEMA-007")
def _(t): cur(t, lambda d: schema(d).update({"identifier-field-ids": [2]}))
@mut("SCHEMA-008")
def _(t): cur(t, lambda d: add_field(d, {"id": 2147483500, "name": "r", "required": False, "type": "int"}))
@mut("SCHEMA-013")
def _(t): cur(t, lambda d: add_field(d, {"id": 11, "name": "dflt", "required": False, "type": "int", "initial-default": 1, "write-default": 1}))
@mut("SCHEMA-020", 3)
def _(t): cur(t, lambda d: add_field(d, {"id": 11, "name": "v", "required": False, "type": "variant", "initial-default": {"a": 1}}))
@mut("SCHEMA-021", 3)
def _(t): cur(t, lambda d: add_field(d, {"id": 11, "name": "s", "required": False, "initial-default": {"12": 1},
                                         "type": {"type": "struct", "fields": [{"id": 12, "name": "x", "required": False, "type": "int"}]}}))
@mut("SCHEMA-002")
def _(t): cur(t, lambda d: field(schema(d), 2).update({"required": True}))
@mut("SCHEMA-014", 3)
def _(t): cur(t, lambda d: field(schema(d, 0), 2).update({"initial-default": "q"}))
@mut("SCHEMA-022", 3)
def _(t): cur(t, lambda d: field(schema(d), 10).update({"required": True}))
@mut("EVOL-002")
def _(t): cur(t, lambda d: field(schema(d), 4).update({"type": "float"}))
@mut("EVOL-003")
def _(t): cur(t, lambda d: promote(d, "date", "timestamp"))
@mut("EVOL-004", 3)
def _(t): cur(t, lambda d: promote(d, "date", "timestamptz"))
@mut("EVOL-006")
def _(t): cur(t, lambda d: promote(d, "decimal(10, 2)", "decimal(12, 3)"))
@mut("EVOL-008", 3)
def _(t):
    def f(d):
        promote(d, "date", "timestamp")
        add_spec(d, [pf(11, 1004, "dt", "identity")])
    cur(t, f)
@mut("EVOL-009")
def _(t): cur(t, lambda d: add_field(d, {"id": 12, "name": "gone", "required": False, "type": "int"}, schemas=(0,)))
@mut("EVOL-013")
def _(t):
    def f(d):
        info = field(schema(d), 5)
        a = info["type"]["fields"].pop()
        schema(d)["fields"].append(a)
    cur(t, f)


# ================================================================== partition specs

@mut("META-027")
def _(t): every_doc(t, lambda d: d.update({"last-partition-id": d["last-partition-id"] - 1}))
@mut("PART-002")
def _(t): cur(t, lambda d: d["partition-specs"][1]["fields"][2].update({"name": "cat"}))
@mut("PART-003")
def _(t): cur(t, lambda d: add_spec(d, [pf(1, 1000, "id_b2", "bucket[2]")]))
@mut("PART-004")
def _(t): cur(t, lambda d: add_spec(d, [pf(8, 1004, "tag", "identity")]))
@mut("PART-010", 3)
def _(t):
    def f(d):
        add_field(d, {"id": 11, "name": "g", "required": False, "type": "geometry"})
        add_spec(d, [pf(11, 1004, "g", "identity")])
    cur(t, f)
@mut("PART-011")
def _(t): cur(t, lambda d: add_spec(d, [pf(4, 1004, "score_b", "bucket[4]")]))
@mut("PART-012")
def _(t): cur(t, lambda d: add_spec(d, [pf(3, 1004, "ts_t", "truncate[4]")]))
@mut("PART-013")
def _(t): cur(t, lambda d: add_spec(d, [pf(2, 1004, "name_day", "day")]))
@mut("PART-029")
def _(t): cur(t, lambda d: add_spec(d, [pf(1, 1004, "id_b2", "bucket[2]")], spec_id=1))
@mut("PART-035")
def _(t): cur(t, lambda d: d["partition-specs"][0]["fields"][0].pop("name"))
@mut("PART-008")
def _(t): cur(t, lambda d: add_spec(d, copy.deepcopy(d["partition-specs"][0]["fields"])))
@mut("PART-009")
def _(t): cur(t, lambda d: add_spec(d, [pf(9, 1004, "cat2", "identity")]))
@mut("PART-031")
def _(t): cur(t, lambda d: d["partition-specs"].append({"spec-id": 2, "fields": [pf(1, 999, "id_b2", "bucket[2]")]}))
@mut("PART-036", 3)
def _(t): cur(t, lambda d: d["partition-specs"][0]["fields"][0].update({"source-ids": [9]}))
@mut("PART-007")
def _(t):
    cur(t, lambda d: d["partition-specs"][1]["fields"][2].update({"transform": "zorder"}))
    def f(m):
        fields = json.loads(m["partition-spec"])
        fields[2]["transform"] = "zorder"
        m["partition-spec"] = json.dumps(fields)
    kv(t, "m3", f)
@mut("PART-016")
def _(t):
    cur(t, lambda d: d["partition-specs"][1]["fields"][2].update({"transform": "void"}))
    def f(m):
        fields = json.loads(m["partition-spec"])
        fields[2]["transform"] = "void"
        m["partition-spec"] = json.dumps(fields)
    kv(t, "m3", f)
@mut("PART-001")
def _(t):
    no_metrics(t, "m2", "c")
    tbl = rows_of(t, "c")
    i = tbl.schema.get_field_index("cat")
    t.write_table("c", tbl.set_column(i, tbl.schema.field(i), pa.array(["q"], pa.string())))
@extra("PART-011", "bucket value out of range")
def _(t):
    entry(t, "m3", "d", lambda r: r["data_file"]["partition"].update({"id_bucket": 7}))
    t.fix_lists()
@mut("PART-025")
def _(t):
    cur(t, lambda d: d["partition-specs"][1]["fields"][1].update({"transform": "truncate[4]"}))
    def f(m):
        fields = json.loads(m["partition-spec"])
        fields[1]["transform"] = "truncate[4]"
        m["partition-spec"] = json.dumps(fields)
    kv(t, "m3", f)
    t.fix_lists()
@mut("PART-027")
def _(t):
    entry(t, "m3", "d", lambda r: r["data_file"]["partition"].update({"name_trunc": "zzz"}))
    t.fix_lists()


# ================================================================== sort orders

@mut("SORT-001")
def _(t): cur(t, lambda d: d["sort-orders"].append({"order-id": 0, "fields": []}))
@mut("SORT-002")
def _(t): cur(t, lambda d: d["sort-orders"].append({"order-id": 1, "fields": [
    {"transform": "identity", "source-id": 5, "direction": "asc", "null-order": "nulls-first"}]}))
@mut("SORT-003")
def _(t): cur(t, lambda d: d["sort-orders"][0]["fields"].append(
    {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}))
@mut("SORT-005")
def _(t): data_file(t, "m2", "c", sort_order_id=3)


# ================================================================== snapshots, refs, logs, statistics

@mut("SNAP-001")
def _(t): cur(t, lambda d: snap(t, d, "S1").pop("snapshot-id"))
@mut("SNAP-002")
def _(t): cur(t, lambda d: snap(t, d, "S1").update({"parent-snapshot-id": t.snapshot_ids["S1"]}))
@mut("SNAP-004")
def _(t): cur(t, lambda d: snap(t, d, "S1").pop("manifest-list"))
@mut("SNAP-005")
def _(t): cur(t, lambda d: snap(t, d, "S1").update({"manifests": [t.uri(t.manifests["m1"])]}))
@mut("SNAP-006")
def _(t): cur(t, lambda d: snap(t, d, "S2").pop("summary"))
@mut("SNAP-007")
def _(t): cur(t, lambda d: snap(t, d, "S2")["summary"].update({"operation": "upsert"}))
@mut("SNAP-008")
def _(t): cur(t, lambda d: snap(t, d, "S4")["summary"].update({"operation": "append"}))
@mut("SNAP-009")
def _(t): cur(t, lambda d: snap(t, d, "S2").update({"schema-id": 7}))
@mut("SNAP-010", 3)
def _(t): cur(t, lambda d: snap(t, d, "S2").pop("added-rows"))
@mut("SEQ-001")
def _(t): cur(t, lambda d: snap(t, d, "S5").pop("sequence-number"))
@mut("SEQ-002")
def _(t): t.edit_doc(lambda d: d.update({"last-sequence-number": 5}), t.metadata_files[-2])
@mut("META-006")
def _(t): cur(t, lambda d: d.update({"table-uuid": "11111111-2222-4333-8444-555555555555"}))
@mut("META-011")
def _(t): cur(t, lambda d: d.update({"last-sequence-number": 3}))
@mut("META-014")
def _(t): cur(t, lambda d: d.update({"last-updated-ms": 1_600_000_000_000}))
@mut("META-029", 1)
def _(t):
    def f(d):
        d["current-snapshot-id"] = 999
        d["snapshot-log"][-1]["snapshot-id"] = 999
    cur(t, f)
@mut("META-030")
def _(t): cur(t, lambda d: d["refs"]["main"].update({"snapshot-id": t.snapshot_ids["S4"]}))
@mut("META-033")
def _(t): cur(t, lambda d: d["snapshot-log"].pop())
@mut("META-034")
def _(t): cur(t, lambda d: d["snapshot-log"].insert(0, {"snapshot-id": 999, "timestamp-ms": 1_699_999_999_000}))
@mut("META-035")
def _(t): cur(t, lambda d: d.update({"metadata-log": []}))
@mut("REF-002")
def _(t): cur(t, lambda d: d["refs"]["t1"].update({"min-snapshots-to-keep": 3}))
@mut("REF-003")
def _(t): cur(t, lambda d: d["refs"]["t1"].update({"max-snapshot-age-ms": 3}))
@mut("REF-004")
def _(t): cur(t, lambda d: d["refs"]["main"].update({"max-ref-age-ms": 3}))
@mut("REF-005")
def _(t): cur(t, lambda d: d["refs"]["main"].update({"type": "tag"}))
@mut("REF-006")
def _(t): cur(t, lambda d: d["refs"]["dev"].update({"snapshot-id": 999}))
@mut("STATS-002")
def _(t):
    st = _stats(t)
    cur(t, lambda d: d.update({"statistics": [st, dict(st)]}))
def _stats(t: BuiltTable, size_delta: int = 0, footer_delta: int = 0) -> dict:
    """A Puffin statistics file for S5 under metadata/, and its metadata entry (sizes off by the deltas)."""
    data, _ = puffin_file([(b"sketch", {"type": "apache-datasketches-theta-v1", "fields": [1], "snapshot-id": t.snapshot_ids["S5"],
                                       "sequence-number": 5})])
    with open(t.path("metadata/stats.puffin"), "wb") as fh:
        fh.write(data)
    footer = len(data) - data.rindex(b"PFA1", 0, len(data) - 16)
    return {"snapshot-id": t.snapshot_ids["S5"], "statistics-path": t.uri("metadata/stats.puffin"),
            "file-size-in-bytes": len(data) + size_delta, "file-footer-size-in-bytes": footer + footer_delta,
            "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": t.snapshot_ids["S5"], "sequence-number": 5,
                               "fields": [1]}]}
@extra("STATS-002", "statistics file size is wrong")
def _(t):
    st = _stats(t, size_delta=3)
    cur(t, lambda d: d.update({"statistics": [st]}))
@extra("STATS-002", "statistics footer size is wrong")
def _(t):
    st = _stats(t, footer_delta=-12)
    cur(t, lambda d: d.update({"statistics": [st]}))
@mut("STATS-004")
def _(t):
    with open(t.path("metadata/ps.parquet"), "wb") as fh:
        fh.write(b"PAR1" * 10)
    cur(t, lambda d: d.update({"partition-statistics": [{"snapshot-id": t.snapshot_ids["S5"], "statistics-path": t.uri("metadata/ps.parquet"),
                                                         "file-size-in-bytes": 41}]}))
@mut("STATS-005")
def _(t):
    with open(t.path("metadata/p.parquet"), "wb") as fh:
        fh.write(b"x" * 10)
    st = {"snapshot-id": t.snapshot_ids["S5"], "statistics-path": t.uri("metadata/p.parquet"), "file-size-in-bytes": 10}
    cur(t, lambda d: d.update({"partition-statistics": [st, dict(st)]}))
@mut("ENC-001", 3)
def _(t): cur(t, lambda d: d.update({"encryption-keys": [{"key-id": "k1", "encrypted-key-metadata": "not base64!"}]}))
@mut("ENC-002", 3)
def _(t): cur(t, lambda d: snap(t, d, "S2").update({"key-id": "k9"}))
@mut("LINEAGE-010", 3)
def _(t): cur(t, lambda d: snap(t, d, "S2").update({"first-row-id": 4, "added-rows": 2}))
@mut("LINEAGE-011", 3)
def _(t): cur(t, lambda d: snap(t, d, "S3").update({"added-rows": -1}))
@mut("LINEAGE-012", 3)
def _(t): every_doc(t, lambda d: d.update({"next-row-id": d["next-row-id"] - 1}))


# ================================================================== manifest lists

@mut("MLIST-001")
def _(t): cur(t, lambda d: snap(t, d, "S2").update({"manifest-list": snap(t, d, "S3")["manifest-list"]}))
@mut("MLIST-002")
def _(t):
    rel = t.manifest_lists[t.snapshot_ids["S2"]]
    t.edit_avro(rel, lambda s, m, r: schema_field(s, 507).pop("field-id"))
for _rule, _fid in (("MLIST-003", 500), ("MLIST-005", 502), ("MLIST-007", 515), ("MLIST-008", 516), ("MLIST-009", 503),
                    ("MLIST-010", 504), ("MLIST-011", 512)):
    mut(_rule)(list_field_optional(_fid))
@mut("MLIST-004")
def _(t): t.edit_list("S2", lambda recs: t.list_entry(recs, "m2").update({"manifest_length": 7}), fix_lengths=False)
@mut("MLIST-006")
def _(t): list_entry(t, "S2", "m2", content=1)
@mut("MLIST-013")
def _(t): t.edit_list("S2", lambda recs: t.list_entry(recs, "m2")["partitions"].pop())
@mut("MLIST-014")
def _(t): t.edit_list("S2", lambda recs: t.list_entry(recs, "m2")["partitions"][0].update({"contains_null": True}))
@mut("MLIST-015")
def _(t): t.edit_list("S2", lambda recs: t.list_entry(recs, "m2")["partitions"][0].update({"contains_nan": True}))
@mut("MLIST-016")
def _(t): t.edit_list("S2", lambda recs: t.list_entry(recs, "m2")["partitions"][0].update({"lower_bound": b"z"}))
@mut("GEN-001")
def _(t):
    def fn(s, m, r):
        summ = schema_field(s, 507)["type"][1]["items"]
        f = next(x for x in summ["fields"] if x["field-id"] == 509)
        f["type"], f["default"] = ["null", "boolean"], None
    t.edit_avro(t.manifest_lists[t.snapshot_ids["S2"]], fn)
@mut("SEQ-012")
def _(t): list_entry(t, "S5", "m5", sequence_number=4)
@mut("SEQ-013")
def _(t): list_entry(t, "S5", "m5", min_sequence_number=0)
@mut("MLIST-005")
def _(t): list_entry(t, "S3", "m2", partition_spec_id=7)
@mut("SNAP-013")
def _(t):
    t.edit_entries("m2", lambda recs: recs.append(copy.deepcopy(recs[0])))
    t.fix_lists()
@mut("LINEAGE-013", 3)
def _(t): list_entry(t, "S5", "dm4", first_row_id=100)
@mut("LINEAGE-020", 3)
def _(t): list_entry(t, "S5", "m5", first_row_id=None)


# ================================================================== manifests: structure and key-value metadata

@mut("MANIFEST-001")
def _(t):
    dm = t.entries("dm4")[2][0]
    t.edit_entries("m2", lambda recs: recs.append(copy.deepcopy(dm)))
@mut("MANIFEST-002")
def _(t): t.edit_avro(t.manifests["m2"], lambda s, m, r: schema_field(s, 2, 103).pop("field-id"))
@mut("FMT-006")
def _(t): t.edit_avro(t.manifests["m2"], lambda s, m, r: schema_field(s, 2, 103).update({"field-id": "103"}))
@mut("FMT-001")
def _(t): t.edit_avro(t.manifests["m2"], lambda s, m, r: schema_field(s, 2, 131).update({"type": ["null", "bytes", "string"]}))
@mut("FMT-002")
def _(t): t.edit_avro(t.manifests["m2"], lambda s, m, r: schema_field(s, 2, 131).pop("default"))
@mut("FMT-003")
def _(t): t.edit_avro(t.manifests["m2"], lambda s, m, r: schema_field(s, 2, 108).update(
    {"type": ["null", {"type": "map", "values": "long", "key-id": 117, "value-id": 118}]}))
for _rule, _path in (("MANIFEST-010", (0,)), ("MANIFEST-013", (2,)), ("MANIFEST-017", (2, 134)), ("MANIFEST-018", (2, 100)),
                     ("MANIFEST-019", (2, 101)), ("MANIFEST-020", (2, 102)), ("MANIFEST-021", (2, 103)), ("MANIFEST-022", (2, 104))):
    mut(_rule)(manifest_field_optional(*_path))
mut("MANIFEST-011", 1)(manifest_field_optional(1))
mut("MANIFEST-023", 1)(manifest_field_optional(2, 105))
@mut("MANIFEST-028", 3)
def _(t):
    def fn(s, m, r):
        data = schema_field(s, 2)["type"]
        data["fields"].append({"name": "distinct_counts", "type": ["null", {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "k123_v124", "fields": [{"name": "key", "type": "int", "field-id": 123},
                                                              {"name": "value", "type": "long", "field-id": 124}]}}],
                               "default": None, "field-id": 111})
    t.edit_avro(t.manifests["m2"], fn)
@mut("MANIFEST-041")
def _(t): t.edit_avro(t.manifests["m2"], lambda s, m, r: schema_field(s, 2)["type"]["fields"].append(
    {"name": "spec_id", "type": ["null", "int"], "default": None, "field-id": 141}))
@extra("COMPAT-001", "v1 manifest with sequence numbers", 1)
def _(t):
    def fn(s, m, r):
        s["fields"].insert(2, {"name": "sequence_number", "type": ["null", "long"], "default": None, "field-id": 3})
    t.edit_avro(t.manifests["m2"], fn)
@mut("MANIFEST-004")
def _(t): kv(t, "m2", lambda m: m.pop("schema"))
@mut("MANIFEST-005")
def _(t): kv(t, "m2", lambda m: m.pop("schema-id"))
@mut("MANIFEST-006")
def _(t): kv(t, "m2", lambda m: m.update({"partition-spec": json.dumps({"spec-id": 0, "fields": json.loads(m["partition-spec"])})}))
@mut("MANIFEST-007")
def _(t): kv(t, "m2", lambda m: m.pop("partition-spec-id"))
@mut("MANIFEST-008")
def _(t): kv(t, "m2", lambda m: m.pop("format-version"))
@mut("MANIFEST-009")
def _(t): kv(t, "m2", lambda m: m.update({"content": "data-files"}))
@mut("MANIFEST-003")
def _(t):
    def f(m):
        fields = json.loads(m["partition-spec"])
        fields[0]["transform"] = "truncate[5]"
        m["partition-spec"] = json.dumps(fields)
    kv(t, "m2", f)


# ================================================================== manifests: entries

@mut("SEQ-006")
def _(t): entry(t, "m5", "a", lambda r: r.update({"sequence_number": None}))
@mut("SEQ-007")
def _(t):
    entry(t, "m5", "a", lambda r: r.update({"sequence_number": 2}))
    list_entry(t, "S5", "m5", min_sequence_number=2)
@mut("SEQ-008")
def _(t): entry(t, "m5", "a", lambda r: r.update({"file_sequence_number": 3}))
@mut("SEQ-009")
def _(t): entry(t, "m2", "c", lambda r: r.update({"file_sequence_number": 7}))
@mut("MANIFEST-034")
def _(t): data_file(t, "m2", "c", split_offsets=[10**9])
@mut("MANIFEST-035")
def _(t): data_file(t, "dm4", "ed", equality_ids=[1, 2])
@mut("MANIFEST-037")
def _(t): data_file(t, "dm4", "pd", sort_order_id=0)
@mut("MANIFEST-039")
def _(t): data_file(t, "dm4", "pd", referenced_data_file=t.uri(t.files["b"]))
@mut("MANIFEST-040", 3)
def _(t): data_file(t, "dm4", "dv", content_size_in_bytes=None)
@mut("LINEAGE-014", 3)
def _(t): data_file(t, "m2", "c", first_row_id=5)
@mut("LINEAGE-016", 3)
def _(t): data_file(t, "m5", "a", first_row_id=None)
@mut("LINEAGE-017", 3)
def _(t): data_file(t, "dm4", "dv", first_row_id=3)
@mut("DELETE-001", 1)
def _(t):
    def fn(s, m, r):
        s["fields"].insert(3, {"name": "content", "type": "int", "field-id": 517})
        for x in r:
            x["content"] = 1 if x["manifest_path"] == t.uri(t.manifests["m2"]) else 0
    t.edit_avro(t.manifest_lists[t.snapshot_ids["S5"]], fn)
@mut("DELETE-002", 3)
def _(t):
    a = t.uri(t.files["a"])
    pos = with_ids([("file_path", pa.array([a]), 2147483546, False), ("pos", pa.array([1], pa.int64()), 2147483545, False)])
    data = parquet_bytes(pos)
    with open(t.path("data/pd.parquet"), "wb") as fh:
        fh.write(data)
    data_file(t, "dm4", "dv", file_path=t.uri("data/pd.parquet"), file_format="PARQUET", file_size_in_bytes=len(data),
              content_offset=None, content_size_in_bytes=None)
@mut("DV-009", 3)
def _(t):
    blob = dv_blob([1])
    offs = rewrite_puffin(t, [(blob, dv_meta(t)), (dv_blob([2]), dv_meta(t))])
    def f(recs):
        second = copy.deepcopy(recs[0])
        second["data_file"]["content_offset"] = offs[1]
        recs.append(second)
    t.edit_entries("dm4", f)
    t.fix_lists()
@mut("DV-011", 3)
def _(t):
    rewrite_puffin(t, [(dv_blob([1]), dv_meta(t, "b"))])
    data_file(t, "dm4", "dv", referenced_data_file=t.uri(t.files["b"]))


# ================================================================== data and delete files on disk

@mut("META-031")
def _(t): __import__("os").remove(t.path(t.files["c"]))
@mut("META-009")
def _(t): data_file(t, "m2", "c", file_path="file:///elsewhere/c.parquet")
@mut("MANIFEST-022")
def _(t): data_file(t, "m2", "c", file_size_in_bytes=5)
@mut("MANIFEST-019")
def _(t): t.write_file("c", b"PAR2" + t.read_file("c")[4:])
@extra("MANIFEST-021", "record_count differs from the file")
def _(t):
    data_file(t, "m2", "c", record_count=5)
    t.fix_lists()
@mut("FMT-009")
def _(t):
    tbl = rows_of(t, "c")
    i = tbl.schema.get_field_index("tags")
    f = tbl.schema.field(i)
    elem = f.type.value_field.remove_metadata()
    t.write_table("c", tbl.set_column(i, f.with_type(pa.list_(elem)), tbl.column(i).cast(pa.list_(elem))))
@mut("FMT-013")
def _(t):
    # a string column holding bytes that are not UTF-8 (a view skips Arrow's own check; Parquet stores them as is)
    tbl = rows_of(t, "c")
    i = tbl.schema.get_field_index("name")
    bad = pa.array([b"\xff\xfe"] * tbl.num_rows, pa.binary()).view(pa.string())
    t.write_table("c", tbl.set_column(i, tbl.schema.field(i), bad))
@mut("GEN-008")
def _(t):
    tbl = rows_of(t, "c")
    t.write_table("c", tbl.drop_columns(["name"]))
@mut("FMT-008", 3)
def _(t):
    def f(m):
        s = json.loads(m["schema"])
        next(x for x in s["fields"] if x["id"] == 2)["type"] = "unknown"
        m["schema"] = json.dumps(s)
    kv(t, "m2", f)
@mut("MANIFEST-025")
def _(t): data_file(t, "m2", "c", value_counts=[{"key": 1, "value": 9}])
@mut("MANIFEST-026")
def _(t): data_file(t, "m2", "c", null_value_counts=[{"key": 2, "value": 1}])
@mut("MANIFEST-027")
def _(t): data_file(t, "m1", "a", nan_value_counts=[{"key": 4, "value": 0}])
@mut("MANIFEST-029")
def _(t): data_file(t, "m2", "c", lower_bounds=[{"key": 1, "value": struct.pack("<q", 7)}])
@mut("MANIFEST-030")
def _(t): data_file(t, "m2", "c", upper_bounds=[{"key": 2, "value": b"a"}])
@mut("MANIFEST-031")
def _(t): data_file(t, "m2", "c", upper_bounds=[{"key": 4, "value": b"\x00\x00\x00"}])
@mut("MANIFEST-032")
def _(t): data_file(t, "m2", "c", lower_bounds=[{"key": 4, "value": struct.pack("<d", float("nan"))}])
@mut("MANIFEST-042")
def _(t): data_file(t, "dm4", "pd", value_counts=[{"key": 2147483545, "value": 5}])
@mut("DELETE-003")
def _(t):
    tbl = rows_of(t, "pd")
    t.write_table("pd", pa.Table.from_arrays(tbl.columns, names=tbl.column_names))
@mut("DELETE-005")
def _(t):
    tbl = rows_of(t, "pd")
    t.write_table("pd", with_ids([("file_path", tbl.column(0).combine_chunks(), 2147483546, False),
                                  ("pos", tbl.column(1).combine_chunks().cast(pa.int32()), 2147483545, False)]))
@mut("DELETE-006")
def _(t):
    no_metrics(t, "dm4", "pd")
    data_file(t, "dm4", "pd", referenced_data_file=None)
    t.write_table("pd", with_ids([("file_path", pa.array(["s3://other/a.parquet"]), 2147483546, False),
                                  ("pos", pa.array([1], pa.int64()), 2147483545, False)]))
@mut("DELETE-008")
def _(t):
    a = t.uri(t.files["a"])
    row_t = pa.struct([pa.field("name", pa.string(), metadata={FID: b"2"})])
    t.write_table("pd", with_ids([("file_path", pa.array([a]), 2147483546, False), ("pos", pa.array([1], pa.int64()), 2147483545, False),
                                  ("row", pa.array([None], row_t), 2147483544, True)]))
@mut("DELETE-009")
def _(t):
    a = t.uri(t.files["a"])
    no_metrics(t, "dm4", "pd")
    t.write_table("pd", with_ids([("file_path", pa.array([a, a]), 2147483546, False), ("pos", pa.array([2, 1], pa.int64()), 2147483545, False)]))
    data_file(t, "dm4", "pd", record_count=2)
    t.fix_lists()
@mut("DELETE-012")
def _(t):
    t.write_table("ed", with_ids([("id", pa.array([5], pa.int64()), 1, False), ("zz", pa.array([1], pa.int32()), 99, True)]))
@mut("DELETE-013")
def _(t):
    t.write_table("ed", with_ids([("id", pa.array([5], pa.int64()), 1, False), ("score", pa.array([1.0]), 4, True)]))
    data_file(t, "dm4", "ed", equality_ids=[1, 4])
@mut("DV-002", 3)
def _(t): rewrite_puffin(t, [(dv_blob([1]), dv_meta(t, type="apache-datasketches-theta-v1"))])
@mut("DV-004", 3)
def _(t):
    blob = bytearray(dv_blob([1]))
    blob[-1] ^= 0xFF
    rewrite_puffin(t, [(bytes(blob), dv_meta(t))])
@mut("DV-005", 3)
def _(t):
    import zlib
    body = bytes.fromhex("D1D33964") + struct.pack("<Q", 1) + struct.pack("<I", 0) + b"\x00\x00\x00\x00"
    blob = struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    offs = rewrite_puffin(t, [(blob, dv_meta(t))])
    data_file(t, "dm4", "dv", content_size_in_bytes=len(blob), content_offset=offs[0])
@mut("DV-006", 3)
def _(t): rewrite_puffin(t, [(dv_blob([1]), dv_meta(t, properties={"referenced-data-file": t.uri(t.files["a"]), "cardinality": "2"}))])
@mut("DV-007", 3)
def _(t): rewrite_puffin(t, [(dv_blob([1]), dv_meta(t, **{"snapshot-id": 1004}))])
@mut("DV-008", 3)
def _(t): data_file(t, "dm4", "dv", content_size_in_bytes=99)
@mut("DV-014", 3)
def _(t): t.write_file("dv", t.read_file("dv")[:-4] + b"PFA2")
@mut("DV-015", 3)
def _(t):
    meta = dv_meta(t)
    del meta["fields"]
    rewrite_puffin(t, [(dv_blob([1]), meta)])


# ------------------------------------------------------------------ the tests


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """One table per format version, built once; each test gets it restored to its pristine bytes.

    The table stays at one root (its metadata holds absolute URIs), saved aside and copied back
    before every test: building it anew each time would cost ten times more.
    """
    import shutil

    base = tmp_path_factory.mktemp("iceberg-tables")
    built: dict[int, BuiltTable] = {}

    def get(version: int) -> BuiltTable:
        if version not in built:
            built[version] = build_table(str(base / f"v{version}"), version)
            shutil.copytree(built[version].root, str(base / f"v{version}.pristine"))
        t = built[version]
        shutil.rmtree(t.root)
        shutil.copytree(str(base / f"v{version}.pristine"), t.root)
        return t

    return get


@pytest.mark.parametrize("version", [1, 2, 3])
def test_base_tables_are_valid(tmp_path, version):
    """The hand-built tables of every format version validate clean."""
    t = build_table(str(tmp_path / "t"), version)
    found = validate_table(t.root)
    assert found == [], "\n".join(f"{v.rule}: {v.message} @ {v.where}" for v in found)


@pytest.mark.parametrize("rule", [pytest.param(r, marks=pytest.mark.rule(r), id=r) for r in sorted(MUTATIONS)])
def test_mutation_is_flagged(tables, rule):
    """The mutation for ``rule`` makes the validator report exactly that rule, saying where."""
    fn = MUTATIONS[rule]
    t = tables(fn.version)
    fn(t)
    found = validate_table(t.root)
    assert {v.rule for v in found} == {rule}, "\n".join(f"{v.rule}: {v.message} @ {v.where}" for v in found)
    assert all(v.where for v in found)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.rule(EXTRA[n].rule), id=n) for n in sorted(EXTRA)])
def test_more_mutations_are_flagged(tables, name):
    """Further ways of breaking a claimed rule are named by that rule only."""
    fn = EXTRA[name]
    t = tables(fn.version)
    fn(t)
    found = validate_table(t.root)
    assert {v.rule for v in found} == {fn.rule}, "\n".join(f"{v.rule}: {v.message} @ {v.where}" for v in found)


def test_every_checked_rule_has_a_mutation():
    """Each rule the validator claims (CHECKS) is exercised by a mutation here, and no mutation claims an unchecked rule."""
    assert sorted(set(CHECKS) - set(MUTATIONS)) == []
    assert sorted(set(MUTATIONS) - set(CHECKS)) == []
