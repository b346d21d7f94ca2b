"""Apache Iceberg hypothesis strategies and hand-built tables: types -> schemas -> specs -> metadata -> tables.

The ladder (DESIGN.md convention 7):

1. leaves: ``primitive_types(version)``, ``decimal_types``, ``fixed_types``, ``field_names``;
2. factories taking strategies: ``struct_types(types)``, ``list_types(types)``, ``map_types(keys, values)``,
   ``values_for_type(t)`` (internal values, Appendix D's domain);
3. bounded recursion: ``iceberg_types(version)``, ``schemas(version)``;
4. ``@composite`` where values depend on each other: ``partition_specs(schema, version)``,
   ``sort_orders(schema)``, ``table_metadata(version)`` (schemas with history, specs, sort orders,
   snapshots with parents, refs, logs, statistics, v3 row lineage and encryption keys, all
   consistent), ``mutated_metadata()`` (a valid metadata document plus one mutation from
   ``METADATA_MUTATIONS`` that breaks one named rule), and ``table_histories()`` (writer-neutral steps
   for cross-engine reads);
5. ``build_table``: a complete hand-built table on disk (Parquet with field ids, manifests, manifest
   lists, deletes, one metadata file per commit) and ``BuiltTable``, whose helpers edit exactly one
   thing in it, for the validator's mutation tests.

Generated metadata goes through the reference's model (``metadata.TableMetadata``) so that its
JSON writer and parser are exercised per version; the validator's mutations then work on the
wire dicts, so that what the parser refuses is tested against input it did not produce.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import struct
import zlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V
from reference_impl.storage import LocalStorage, Storage

# ============================================================================================
# 1. Leaf types and names
# ============================================================================================

PRIMITIVE_NAMES = ("boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz", "string", "uuid", "binary")
V3_PRIMITIVE_NAMES = ("timestamp_ns", "timestamptz_ns", "unknown", "variant")
# Types with a binary single value and an order (bounds, partition values): everything but these.
NO_SINGLE_VALUE = ("unknown", "variant")
GEO = (T.GeometryType, T.GeographyType)
MICROS_MIN, MICROS_MAX = -62_135_596_800_000_000, 253_402_300_799_999_999  # 0001-01-01 .. 9999-12-31T23:59:59.999999
DAYS_MIN, DAYS_MAX = -719_162, 2_932_896


def primitive_types(version: int = 2, *, names: tuple[str, ...] | None = None) -> st.SearchStrategy[T.IcebergType]:
    """Iceberg primitive types a table of ``version`` may hold (v3 adds the nanosecond, unknown, variant and geo types); only ``names`` when given."""
    pool = names or (PRIMITIVE_NAMES + (V3_PRIMITIVE_NAMES if version >= 3 else ()))
    simple = st.sampled_from(pool).map(lambda n: T.PrimitiveType(name=n))
    if names is not None:
        return simple
    out = [simple, decimal_types(), fixed_types()]
    if version >= 3 and names is None:
        out.append(st.sampled_from([T.GeometryType(), T.GeographyType(), T.GeographyType(algorithm="karney")]))
    return st.one_of(*out)


def decimal_types(max_precision: int = 38) -> st.SearchStrategy[T.DecimalType]:
    """decimal(P, S) with the limits weighted in (P = 1 and 38, S = 0 and P)."""
    p = st.one_of(st.sampled_from([1, max_precision]), st.integers(1, max_precision))
    return p.flatmap(lambda n: st.one_of(st.sampled_from(sorted({0, n})), st.integers(0, n)).map(lambda s: T.DecimalType(precision=n, scale=s)))


def fixed_types() -> st.SearchStrategy[T.FixedType]:
    """fixed[L] for small L."""
    return st.integers(1, 24).map(lambda n: T.FixedType(length=n))


def field_names() -> st.SearchStrategy[str]:
    """Column names: plain identifiers mostly, with the edges (dots, spaces, non-ASCII, leading digits) weighted in."""
    plain = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
    odd = st.sampled_from(["a.b", "with space", "ünï", "1st", "_", "x-y", "名前"])
    return st.one_of(plain, plain, plain, odd)


# ============================================================================================
# 2. Factories: nested types and values
# ============================================================================================

# Nested types are drawn with placeholder ids (0); ``schemas`` numbers them the way a writer does.


def _field(name: str, t: T.IcebergType, required: bool) -> T.NestedField:
    if t == T.UNKNOWN:
        required = False  # unknown must be optional (TYPE-002)
    return T.NestedField(id=0, name=name, type=t, required=required)


def struct_types(children: st.SearchStrategy[T.IcebergType], *, max_fields: int = 4) -> st.SearchStrategy[T.StructType]:
    """struct<...> of uniquely named fields of ``children`` types."""
    fields = st.lists(st.tuples(field_names(), children, st.booleans()), min_size=1, max_size=max_fields, unique_by=lambda x: x[0])
    return fields.map(lambda fs: T.StructType(fields=tuple(_field(n, t, r) for n, t, r in fs)))


def list_types(elements: st.SearchStrategy[T.IcebergType]) -> st.SearchStrategy[T.ListType]:
    """list<element>, element required or not."""
    return st.tuples(elements, st.booleans()).map(
        lambda x: T.ListType(element_id=0, element=x[0], element_required=x[1] and x[0] != T.UNKNOWN))


def map_types(keys: st.SearchStrategy[T.IcebergType], values: st.SearchStrategy[T.IcebergType]) -> st.SearchStrategy[T.MapType]:
    """map<key, value> (keys are always required)."""
    return st.tuples(keys, values, st.booleans()).map(
        lambda x: T.MapType(key_id=0, key=x[0], value_id=0, value=x[1], value_required=x[2] and x[1] != T.UNKNOWN))


def _decimal_values(t: T.DecimalType) -> st.SearchStrategy[Any]:
    from decimal import Decimal

    bound = 10**t.precision - 1
    ints = st.one_of(st.sampled_from([0, bound, -bound, 1, -1]), st.integers(-bound, bound))
    return ints.map(lambda n: Decimal(n).scaleb(-t.scale, context=V._DEC))


def values_for_type(t: T.IcebergType, *, nan: bool = True) -> st.SearchStrategy[Any]:
    """Internal values (values.py's domain) of a primitive type, edges weighted in; years 1..9999 for dates and timestamps."""
    name = t.name if isinstance(t, T.PrimitiveType) else None
    if name == "boolean":
        return st.booleans()
    if name == "int":
        return st.one_of(st.sampled_from([0, -1, 2**31 - 1, -(2**31)]), st.integers(-(2**31), 2**31 - 1))
    if name == "long":
        return st.one_of(st.sampled_from([0, -1, 2**63 - 1, -(2**63)]), st.integers(-(2**63), 2**63 - 1))
    if name in ("float", "double"):
        w = 32 if name == "float" else 64
        edge = [0.0, -0.0, float("inf"), float("-inf")] + ([float("nan")] if nan else [])
        return st.one_of(st.sampled_from(edge), st.floats(width=w, allow_nan=nan))
    if isinstance(t, T.DecimalType):
        return _decimal_values(t)
    if name == "date":
        return st.one_of(st.sampled_from([0, -1, DAYS_MIN, DAYS_MAX]), st.integers(DAYS_MIN, DAYS_MAX))
    if name == "time":
        return st.integers(0, V.MICROS_PER_DAY - 1)
    if name in ("timestamp", "timestamptz"):
        return st.one_of(st.sampled_from([0, -1, MICROS_MIN, MICROS_MAX]), st.integers(MICROS_MIN, MICROS_MAX))
    if name in ("timestamp_ns", "timestamptz_ns"):
        return st.integers(-(2**63), 2**63 - 1)
    if name == "string":
        return st.text(max_size=20)
    if name == "uuid":
        return st.uuids()
    if name == "binary":
        return st.binary(max_size=20)
    if isinstance(t, T.FixedType):
        return st.binary(min_size=t.length, max_size=t.length)
    if isinstance(t, GEO):
        # WKB points (little-endian, type 1); the geo types carry WKB as plain bytes
        return st.tuples(st.floats(-180, 180), st.floats(-90, 90)).map(lambda p: b"\x01" + struct.pack("<I", 1) + struct.pack("<2d", *p))
    raise ValueError(f"no values for {t}")


# ============================================================================================
# 3. Bounded recursion: types and schemas
# ============================================================================================


def iceberg_types(version: int = 2, *, max_leaves: int = 6) -> st.SearchStrategy[T.IcebergType]:
    """Any Iceberg type of a ``version`` table, nested a few levels deep."""
    leaves = primitive_types(version)
    keys = primitive_types(version, names=("int", "long", "string", "date", "uuid"))
    return st.recursive(
        leaves,
        lambda kids: st.one_of(struct_types(kids, max_fields=3), list_types(kids), map_types(keys, kids)),
        max_leaves=max_leaves,
    )


def _with_defaults(schema: T.Schema, draw: Callable) -> T.Schema:
    """v3: give some optional top-level primitive fields initial/write defaults (JSON single values)."""
    out = []
    for f in schema.fields:
        ok = T.is_primitive(f.type) and f.type not in (T.UNKNOWN, T.VARIANT) and not isinstance(f.type, GEO)
        if ok and not f.required and draw(st.booleans()):
            v = draw(values_for_type(f.type, nan=False).filter(lambda x: not (isinstance(x, float) and math.isinf(x))))
            f = dataclasses.replace(f, initial_default=v, write_default=v)
        out.append(f)
    return dataclasses.replace(schema, fields=tuple(out))


@st.composite
def schemas(draw: Callable, version: int = 2, *, max_fields: int = 6, schema_id: int = 0, defaults: bool = True) -> T.Schema:
    """A table schema of ``version`` with fresh ids (1, 2, ... in the writer's order), maybe identifier fields and v3 defaults."""
    top = draw(struct_types(iceberg_types(version), max_fields=max_fields))
    schema, _last = T.assign_fresh_ids(T.Schema(fields=top.fields, schema_id=schema_id))
    if version >= 3 and defaults:
        schema = _with_defaults(schema, draw)
    # identifier fields: required primitive top-level fields that are not floating point
    cands = [f.id for f in schema.fields if f.required and T.is_primitive(f.type) and f.type not in (T.FLOAT, T.DOUBLE, T.UNKNOWN, T.VARIANT)
             and not isinstance(f.type, GEO)]
    if cands and draw(st.booleans()):
        schema = dataclasses.replace(schema, identifier_field_ids=tuple(draw(st.lists(st.sampled_from(cands), min_size=1, max_size=2, unique=True))))
    return schema


def partition_sources(schema: T.Schema) -> list[T.NestedField]:
    """Fields a partition may use: primitive, not inside a list or map (structs are fine)."""
    return [f for f, _p, anc in T.walk_with_context(schema)
            if T.is_primitive(f.type) and not any(isinstance(a.type, (T.ListType, T.MapType)) for a in anc)]


def transforms_for(t: T.IcebergType) -> list[X.Transform]:
    """Every known transform that accepts source type ``t`` (with small parameters)."""
    out: list[X.Transform] = [X.VoidTransform()]
    cands = [X.IdentityTransform(), X.BucketTransform(num_buckets=4), X.BucketTransform(num_buckets=16), X.TruncateTransform(width=3),
             X.YearTransform(), X.MonthTransform(), X.DayTransform(), X.HourTransform()]
    out += [c for c in cands if c.can_transform(t)]
    return out


@st.composite
def partition_specs(draw: Callable, schema: T.Schema, version: int = 2, *, spec_id: int = 0, first_id: int = 1000, max_fields: int = 3) -> P.PartitionSpec:
    """A partition spec over ``schema``: distinct (source, transform) pairs, unique names, ids from ``first_id``."""
    sources = [f for f in partition_sources(schema) if f.type not in (T.UNKNOWN, T.VARIANT)]
    if not sources:
        return P.PartitionSpec(spec_id=spec_id)
    n = draw(st.integers(0, max_fields))
    fields, seen, names = [], set(), set()
    for i in range(n):
        src = draw(st.sampled_from(sources))
        tr = draw(st.sampled_from(transforms_for(src.type)))
        key = (src.id, str(tr))
        name = f"{src.name}_{str(tr).replace('[', '').replace(']', '')}"
        if key in seen or name in names:
            continue
        seen.add(key)
        names.add(name)
        fields.append(P.PartitionField(source_ids=(src.id,), field_id=first_id + len(fields), name=name, transform=tr))
    return P.PartitionSpec(spec_id=spec_id, fields=tuple(fields))


@st.composite
def sort_orders(draw: Callable, schema: T.Schema, *, order_id: int = 1) -> P.SortOrder:
    """A non-empty sort order over primitive, non-nested-collection sources."""
    sources = [f for f in partition_sources(schema) if len(transforms_for(f.type)) > 1]
    if not sources:
        return P.UNSORTED
    fields = []
    for src in draw(st.lists(st.sampled_from(sources), min_size=1, max_size=3, unique_by=lambda f: f.id)):
        tr = draw(st.sampled_from([t for t in transforms_for(src.type) if not isinstance(t, X.VoidTransform)]))
        fields.append(P.SortField(source_ids=(src.id,), transform=tr, direction=draw(st.sampled_from(P.DIRECTIONS)),
                                  null_order=draw(st.sampled_from(P.NULL_ORDERS))))
    return P.SortOrder(order_id=order_id, fields=tuple(fields))


# ============================================================================================
# 4. Composites: whole table metadata, mutated metadata
# ============================================================================================


def _evolve(draw: Callable, schema: T.Schema, last: int, version: int, protected: set[int] = frozenset()) -> tuple[T.Schema, int]:
    """A next schema: drop a top-level field (not a partition source), rename one, or add a fresh optional one (ids above ``last``)."""
    fields = list(schema.fields)
    choice = draw(st.sampled_from(["add", "drop", "rename"]))
    idents = schema.identifier_field_ids
    droppable = [f for f in fields if not ({f.id} | {c.id for c, _p, _a in T.walk_with_context(T.StructType(fields=(f,)))}) & protected]
    if choice == "drop" and len(fields) > 1 and droppable:
        gone = draw(st.sampled_from(droppable))
        fields.remove(gone)
        if idents and gone.id in idents:
            idents = tuple(i for i in idents if i != gone.id) or None
    elif choice == "rename":
        i = draw(st.integers(0, len(fields) - 1))
        fields[i] = dataclasses.replace(fields[i], name=fields[i].name + "_r")
        if len({f.name for f in fields}) != len(fields):
            fields[i] = dataclasses.replace(fields[i], name=fields[i].name + "2")
    else:
        t = draw(iceberg_types(version, max_leaves=2))
        fresh, new_last = T.assign_fresh_ids(T.StructType(fields=(T.NestedField(id=0, name="added", type=t, required=False),)), last_column_id=last)
        f = fresh.fields[0]
        name = "added"
        while any(x.name == name for x in fields):
            name += "_"
        fields.append(dataclasses.replace(f, name=name))
        last = new_last
    return T.Schema(fields=tuple(fields), schema_id=schema.schema_id + 1, identifier_field_ids=idents), last


OPERATIONS = ("append", "replace", "overwrite", "delete")


@st.composite
def table_metadata(draw: Callable, version: int | None = None, *, max_snapshots: int = 5, location: str = "s3://bucket/warehouse/t") -> M.TableMetadata:
    """A valid TableMetadata of ``version`` (drawn when None): schema history, specs, sort orders, snapshots with
    parents and sequence numbers, refs, logs, statistics, and v3 row lineage and encryption keys, all consistent."""
    v = version if version is not None else draw(st.sampled_from([1, 2, 3]))
    s0 = draw(schemas(v))
    spec0 = draw(partition_specs(s0, v))
    last_column_id = s0.highest_field_id
    schema_list = [s0]
    for _ in range(draw(st.integers(0, 2))):
        nxt, last_column_id = _evolve(draw, schema_list[-1], last_column_id, v, {f.source_id for f in spec0.fields})
        schema_list.append(nxt)
    current = schema_list[-1]
    specs = [spec0]
    if draw(st.booleans()):
        first = max(spec0.last_assigned_field_id, P.UNPARTITIONED_LAST_PARTITION_ID) + 1
        nxt = draw(partition_specs(current, v, spec_id=1, first_id=first))
        # A field equal to an existing one keeps its id (PART-009); new ones count on from last-partition-id.
        nxt, _ = P.assign_partition_field_ids(((f.source_ids, f.name, f.transform) for f in nxt.fields), existing=[spec0],
                                              last_partition_id=first - 1, spec_id=1)
        if v == 1:
            nxt = P.PartitionSpec(spec_id=1, fields=tuple(dataclasses.replace(f, field_id=1000 + i) for i, f in enumerate(nxt.fields)))
        if not any(P.specs_equivalent(nxt, s) for s in specs) and not (v == 1 and nxt.fields and spec0.fields):
            specs.append(nxt)
    orders = [P.UNSORTED]
    if draw(st.booleans()):
        o = draw(sort_orders(current))
        if o.fields:
            orders.append(o)
    keys: list[M.EncryptionKey] = []
    if v >= 3 and draw(st.booleans()):
        keys = [M.EncryptionKey(key_id=f"k{i}", encrypted_key_metadata="a2V5") for i in range(draw(st.integers(1, 2)))]

    # snapshots: ids, parents (mostly a chain, sometimes a side branch), sequence numbers and time increasing
    n = draw(st.integers(0, max_snapshots))
    ids = draw(st.lists(st.integers(1, 2**63 - 1), min_size=n, max_size=n, unique=True))
    snaps: list[M.Snapshot] = []
    t0 = draw(st.integers(1_500_000_000_000, 1_800_000_000_000))
    next_row = 0
    for i, sid in enumerate(ids):
        parent = None
        if snaps:
            parent = snaps[-1].snapshot_id if draw(st.integers(0, 4)) else draw(st.sampled_from(snaps)).snapshot_id
        seq = i + 1 if v >= 2 else 0
        summary = {"operation": draw(st.sampled_from(OPERATIONS))}
        if draw(st.booleans()):
            summary["added-data-files"] = str(draw(st.integers(0, 9)))
        added = draw(st.integers(0, 50)) if v >= 3 else None
        s = M.Snapshot(
            snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq, timestamp_ms=t0 + 1000 * (i + 1),
            manifest_list=f"{location}/metadata/snap-{sid}.avro", summary=MappingProxyType(summary),
            schema_id=draw(st.sampled_from([None] + [x.schema_id for x in schema_list])),
            first_row_id=next_row if v >= 3 else None, added_rows=added,
            key_id=draw(st.sampled_from([None] + [k.key_id for k in keys])) if keys else None,
        )
        next_row += added or 0
        snaps.append(s)
    cur = snaps[-1] if snaps else None
    refs: dict[str, M.SnapshotRef] = {}
    if v >= 2 and cur is not None:
        refs["main"] = M.SnapshotRef(snapshot_id=cur.snapshot_id, type=M.BRANCH)
        for j in range(draw(st.integers(0, 2))):
            target = draw(st.sampled_from(snaps)).snapshot_id
            if draw(st.booleans()):
                refs[f"tag{j}"] = M.SnapshotRef(snapshot_id=target, type=M.TAG, max_ref_age_ms=draw(st.sampled_from([None, 86_400_000])))
            else:
                refs[f"branch{j}"] = M.SnapshotRef(snapshot_id=target, type=M.BRANCH,
                                                   min_snapshots_to_keep=draw(st.sampled_from([None, 1, 5])),
                                                   max_snapshot_age_ms=draw(st.sampled_from([None, 3_600_000])),
                                                   max_ref_age_ms=draw(st.sampled_from([None, 86_400_000])))
    # snapshot-log: the main line as it became current (a suffix of the chain ending at the current snapshot)
    line = []
    node = cur
    while node is not None:
        line.append(node)
        node = next((x for x in snaps if x.snapshot_id == node.parent_snapshot_id), None)
    line.reverse()
    snapshot_log = tuple(M.SnapshotLogEntry(snapshot_id=x.snapshot_id, timestamp_ms=x.timestamp_ms) for x in line)
    last_updated = (cur.timestamp_ms if cur else t0) + draw(st.integers(0, 1000))
    mlog = tuple(M.MetadataLogEntry(metadata_file=f"{location}/metadata/v{i + 1}.metadata.json", timestamp_ms=t0 - 10 + i)
                 for i in range(draw(st.integers(0, 3))))
    stats: list[M.StatisticsFile] = []
    pstats: list[M.PartitionStatisticsFile] = []
    for s in draw(st.lists(st.sampled_from(snaps), max_size=2, unique_by=lambda x: x.snapshot_id)) if snaps else []:
        blob = M.BlobMetadata(type="apache-datasketches-theta-v1", snapshot_id=s.snapshot_id, sequence_number=s.sequence_number,
                              fields=(current.fields[0].id,), properties=MappingProxyType({"ndv": "3"}))
        stats.append(M.StatisticsFile(snapshot_id=s.snapshot_id, statistics_path=f"{location}/metadata/stats-{s.snapshot_id}.puffin",
                                      file_size_in_bytes=100, file_footer_size_in_bytes=60, blob_metadata=(blob,)))
        if draw(st.booleans()):
            pstats.append(M.PartitionStatisticsFile(snapshot_id=s.snapshot_id, statistics_path=f"{location}/metadata/ps-{s.snapshot_id}.parquet",
                                                    file_size_in_bytes=50))
    props = draw(st.dictionaries(st.sampled_from(["write.format.default", "commit.retry.num-retries", "owner", "comment"]),
                                 st.text(max_size=8), max_size=3))
    return M.TableMetadata(
        format_version=v, table_uuid=str(draw(st.uuids())) if v >= 2 or draw(st.booleans()) else None, location=location,
        last_sequence_number=len(snaps) if v >= 2 else 0, last_updated_ms=last_updated, last_column_id=last_column_id,
        schemas=tuple(schema_list), current_schema_id=current.schema_id, partition_specs=tuple(specs), default_spec_id=specs[-1].spec_id,
        last_partition_id=max(sp.last_assigned_field_id for sp in specs), properties=MappingProxyType(props),
        current_snapshot_id=cur.snapshot_id if cur else None, snapshots=tuple(snaps), snapshot_log=snapshot_log, metadata_log=mlog,
        sort_orders=tuple(orders), default_sort_order_id=orders[-1].order_id, refs=MappingProxyType(refs),
        statistics=tuple(stats), partition_statistics=tuple(pstats), next_row_id=next_row if v >= 3 else None,
        encryption_keys=tuple(keys),
    )


def write_metadata_table(root: str, md: M.TableMetadata, doc: dict | None = None) -> str:
    """Lay out a metadata-only table under ``root``: v1.metadata.json (``doc`` when given, else ``md``'s JSON),
    an empty manifest list of the table's version for each snapshot, and the statistics files the document
    registers (whose sizes in the document are set to what was written)."""
    st_ = LocalStorage(root)
    d = doc if doc is not None else M.metadata_to_dict(md)
    for key in (M.STATISTICS, M.PARTITION_STATISTICS):
        for e in d.get(key) or [] if isinstance(d.get(key), list) else []:
            path = e.get(M.STATISTICS_PATH) if isinstance(e, dict) else None
            if not isinstance(path, str) or not path.startswith(st_.root + "/"):
                continue
            rel = path[len(st_.root) + 1:]
            if key == M.STATISTICS:
                data, _ = puffin_file([(b"sketch!!", {"type": "apache-datasketches-theta-v1", "fields": [1], "snapshot-id": 1, "sequence-number": 1})])
                e[M.FILE_FOOTER_SIZE_IN_BYTES] = len(data) - data.rindex(b"PFA1", 0, len(data) - 16)
            else:
                data = b"PAR1" + b"\x00" * 8 + b"PAR1"
            if not st_.exists(rel):
                st_.put_if_absent(rel, data)
            e[M.FILE_SIZE_IN_BYTES] = len(data)
    for s in md.snapshots:
        rel = f"metadata/snap-{s.snapshot_id}.avro"
        if not st_.exists(rel):
            st_.put_if_absent(rel, MF.write_manifest_list([], format_version=md.format_version, snapshot_id=s.snapshot_id,
                                                          parent_snapshot_id=s.parent_snapshot_id,
                                                          sequence_number=s.sequence_number if md.format_version >= 2 else None))
    st_.write_atomic("metadata/v1.metadata.json", json.dumps(d).encode())
    return root


def relocate(md: M.TableMetadata, root_uri: str) -> M.TableMetadata:
    """The same metadata with its location, manifest-list and statistics paths under ``root_uri``."""
    snaps = tuple(dataclasses.replace(s, manifest_list=f"{root_uri}/metadata/snap-{s.snapshot_id}.avro") for s in md.snapshots)
    stats = tuple(dataclasses.replace(s, statistics_path=f"{root_uri}/metadata/stats-{s.snapshot_id}.puffin") for s in md.statistics)
    pstats = tuple(dataclasses.replace(s, statistics_path=f"{root_uri}/metadata/ps-{s.snapshot_id}.parquet") for s in md.partition_statistics)
    return dataclasses.replace(md, location=root_uri, snapshots=snaps, statistics=stats, partition_statistics=pstats)


def partition_tuples(spec: P.PartitionSpec, schema: T.Schema) -> st.SearchStrategy[dict[int, Any]]:
    """A partition tuple of ``spec``: each field a value of its transform's result type, or null (no NaN)."""
    ptype = P.partition_type(spec, schema)
    void = {f.field_id for f in spec.fields if isinstance(f.transform, X.VoidTransform)}
    parts = [st.none() if f.type == T.UNKNOWN or f.id in void else st.one_of(st.none(), values_for_type(f.type, nan=False))
             for f in ptype.fields]
    return st.tuples(*parts).map(lambda vals: {f.id: v for f, v in zip(ptype.fields, vals)})


def _metric_map(ids: list[int], values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[int, Any] | None]:
    if not ids:
        return st.none()
    return st.one_of(st.none(), st.dictionaries(st.sampled_from(ids), values, max_size=len(ids)))


@st.composite
def data_files(draw: Callable, spec: P.PartitionSpec, schema: T.Schema, version: int, content: int = MF.DATA, *,
               location: str = "s3://bucket/t") -> MF.DataFile:
    """A ``data_file`` of ``content`` as a writer of ``version`` may write it: partition tuple, metrics, offsets, ids."""
    ids = [f.id for f, _p, _a in T.walk_with_context(schema)]
    counts = st.integers(0, 10**6)
    fmt = "puffin" if content == MF.POSITION_DELETES and version >= 3 and draw(st.booleans()) else draw(st.sampled_from(["parquet", "avro", "orc"]))
    size = draw(st.integers(16, 10**9))
    offsets = draw(st.one_of(st.none(), st.lists(st.integers(4, size), min_size=1, max_size=3).map(sorted).map(tuple)))
    df = MF.DataFile(
        file_path=f"{location}/data/{draw(st.uuids())}.{fmt}", file_format=fmt, record_count=draw(counts), file_size_in_bytes=size,
        partition=draw(partition_tuples(spec, schema)), content=content,
        column_sizes=draw(_metric_map(ids, counts)), value_counts=draw(_metric_map(ids, counts)),
        null_value_counts=draw(_metric_map(ids, counts)), nan_value_counts=draw(_metric_map(ids, counts)),
        lower_bounds=draw(_metric_map(ids, st.binary(max_size=16))), upper_bounds=draw(_metric_map(ids, st.binary(max_size=16))),
        key_metadata=draw(st.one_of(st.none(), st.binary(max_size=8))), split_offsets=offsets if fmt != "puffin" else None,
        sort_order_id=draw(st.sampled_from([None, 0, 1])) if content != MF.POSITION_DELETES else None,
    )
    if content == MF.EQUALITY_DELETES:
        df = dataclasses.replace(df, equality_ids=tuple(draw(st.lists(st.sampled_from(ids or [1]), min_size=1, max_size=3, unique=True))))
    if content == MF.POSITION_DELETES and (fmt == "puffin" or draw(st.booleans())):
        df = dataclasses.replace(df, referenced_data_file=f"{location}/data/{draw(st.uuids())}.parquet")
    if fmt == "puffin":
        df = dataclasses.replace(df, content_offset=draw(st.integers(4, 1000)), content_size_in_bytes=draw(st.integers(12, 1000)))
    if version >= 3 and content == MF.DATA and draw(st.booleans()):
        df = dataclasses.replace(df, first_row_id=draw(st.integers(0, 2**40)))
    return df


@st.composite
def manifest_entries(draw: Callable, spec: P.PartitionSpec, schema: T.Schema, version: int, content: int = MF.MANIFEST_DATA, *,
                     max_entries: int = 4) -> list[MF.ManifestEntry]:
    """Entries of one manifest: ADDED (ids and sequence numbers inherited from v2), EXISTING/DELETED (explicit)."""
    kinds = [MF.DATA] if content == MF.MANIFEST_DATA else [MF.POSITION_DELETES, MF.EQUALITY_DELETES]
    out = []
    for _ in range(draw(st.integers(0, max_entries))):
        df = draw(data_files(spec, schema, version, draw(st.sampled_from(kinds))))
        status = draw(st.sampled_from(MF.STATUSES))
        sid = draw(st.integers(1, 2**62))
        if version == 1:
            out.append(MF.ManifestEntry(status=status, snapshot_id=sid, data_file=df))
        elif status == MF.ADDED and draw(st.booleans()):
            out.append(MF.ManifestEntry(status=status, data_file=df))  # inherited
        else:
            seq = draw(st.integers(0, 1000))
            out.append(MF.ManifestEntry(status=status, snapshot_id=sid, sequence_number=seq, file_sequence_number=seq + draw(st.integers(0, 5)),
                                        data_file=df))
    return out


@st.composite
def manifest_list_entries(draw: Callable, version: int, *, max_entries: int = 4, location: str = "s3://bucket/t") -> list[MF.ManifestFile]:
    """manifest_file entries as a writer of ``version`` writes them (counts required from v2, first_row_id in v3 data manifests)."""
    out = []
    for _ in range(draw(st.integers(0, max_entries))):
        content = draw(st.sampled_from([MF.MANIFEST_DATA, MF.MANIFEST_DELETES])) if version >= 2 else MF.MANIFEST_DATA
        counts = st.integers(0, 10**4) if version >= 2 else st.one_of(st.none(), st.integers(0, 10**4))
        seq = draw(st.integers(1, 10**6)) if version >= 2 else 0
        n_parts = draw(st.integers(0, 3))
        parts = draw(st.one_of(st.none(), st.lists(st.builds(
            MF.FieldSummary, contains_null=st.booleans(), contains_nan=st.one_of(st.none(), st.booleans()),
            lower_bound=st.one_of(st.none(), st.binary(max_size=8)), upper_bound=st.one_of(st.none(), st.binary(max_size=8))),
            min_size=n_parts, max_size=n_parts).map(tuple)))
        out.append(MF.ManifestFile(
            manifest_path=f"{location}/metadata/{draw(st.uuids())}-m0.avro", manifest_length=draw(st.integers(1, 10**7)),
            partition_spec_id=draw(st.integers(0, 5)), added_snapshot_id=draw(st.integers(1, 2**62)), content=content,
            sequence_number=seq, min_sequence_number=draw(st.integers(0, seq)),
            added_files_count=draw(counts), existing_files_count=draw(counts), deleted_files_count=draw(counts),
            added_rows_count=draw(counts), existing_rows_count=draw(counts), deleted_rows_count=draw(counts), partitions=parts,
            key_metadata=draw(st.one_of(st.none(), st.binary(max_size=8))),
            first_row_id=draw(st.one_of(st.none(), st.integers(0, 2**40))) if version >= 3 and content == MF.MANIFEST_DATA else None,
        ))
    return out


@dataclass(frozen=True)
class MetadataMutation:
    """One way to break one rule in a metadata document: ``applies(doc)``, then ``apply(doc, draw)`` edits it in place."""

    name: str
    rule: str
    applies: Callable[[dict], bool]
    apply: Callable[[dict, Callable], None]


def _all_ids(d: dict) -> list[int]:
    out: list[int] = []

    def walk(t: Any) -> None:
        if isinstance(t, dict):
            if t.get("type") == "struct":
                for f in t.get("fields", []):
                    out.append(f["id"])
                    walk(f["type"])
            elif t.get("type") == "list":
                out.append(t["element-id"])
                walk(t["element"])
            elif t.get("type") == "map":
                out.extend([t["key-id"], t["value-id"]])
                walk(t["key"])
                walk(t["value"])

    for s in d.get("schemas", []):
        walk(dict(s, type="struct"))
    return out


def _spec_fields(d: dict) -> list[dict]:
    return [f for s in d.get("partition-specs", []) for f in s["fields"]]


def _drop(key: str) -> Callable[[dict, Callable], None]:
    return lambda d, draw: d.pop(key)


def _primitive_fields(d: dict) -> list[dict]:
    cur = next(s for s in d["schemas"] if s["schema-id"] == d["current-schema-id"])
    return [f for f in cur["fields"] if isinstance(f["type"], str)]


_REQUIRED_BY_VERSION = {
    "table-uuid": ("META-005", (2, 3)), "location": ("META-008", (1, 2, 3)), "last-sequence-number": ("META-010", (2, 3)),
    "last-updated-ms": ("META-013", (1, 2, 3)), "last-column-id": ("META-015", (1, 2, 3)), "schemas": ("META-019", (2, 3)),
    "current-schema-id": ("META-020", (2, 3)), "partition-specs": ("META-023", (2, 3)), "default-spec-id": ("META-024", (2, 3)),
    "last-partition-id": ("META-026", (2, 3)), "sort-orders": ("META-037", (2, 3)), "default-sort-order-id": ("META-038", (2, 3)),
    "next-row-id": ("META-042", (3,)), "schema": ("META-017", (1,)), "partition-spec": ("META-022", (1,)),
    "format-version": ("META-003", (1, 2, 3)),
}

METADATA_MUTATIONS: list[MetadataMutation] = [
    MetadataMutation(f"drop {key}", f"ICEBERG-{rule}", (lambda d, vs=vs: d["format-version"] in vs), _drop(key))
    for key, (rule, vs) in _REQUIRED_BY_VERSION.items()
] + [
    MetadataMutation("int as string", "ICEBERG-SERDE-025", lambda d: True,
                     lambda d, draw: d.update({draw(st.sampled_from(["last-column-id", "last-updated-ms"])): "7"})),
    MetadataMutation("property not a string", "ICEBERG-META-028", lambda d: True,
                     lambda d, draw: d.setdefault("properties", {}).update({"n": draw(st.sampled_from([1, 2.5, True, None]))})),
    MetadataMutation("table-uuid not a UUID", "ICEBERG-META-005", lambda d: d["format-version"] >= 2,
                     lambda d, draw: d.update({"table-uuid": draw(st.sampled_from(["x", "1234", "g" * 36]))})),
    MetadataMutation("format-version from the future", "ICEBERG-META-004", lambda d: True, lambda d, draw: d.update({"format-version": 99})),
    MetadataMutation("last-column-id below a field id", "ICEBERG-META-016", lambda d: bool(_all_ids(d)),
                     lambda d, draw: d.update({"last-column-id": max(_all_ids(d)) - 1})),
    MetadataMutation("schema-id listed twice", "ICEBERG-META-021", lambda d: True,
                     lambda d, draw: d["schemas"].append(json.loads(json.dumps(d["schemas"][-1])))),
    MetadataMutation("current-schema-id unknown", "ICEBERG-META-020", lambda d: True,
                     lambda d, draw: d.update({"current-schema-id": 1000})),
    MetadataMutation("default-spec-id unknown", "ICEBERG-META-024", lambda d: True, lambda d, draw: d.update({"default-spec-id": 77})),
    MetadataMutation("last-partition-id below a field id", "ICEBERG-META-027", lambda d: d["format-version"] >= 2 and bool(_spec_fields(d)),
                     lambda d, draw: d.update({"last-partition-id": max(f["field-id"] for f in _spec_fields(d)) - 1})),
    MetadataMutation("default-sort-order-id unknown", "ICEBERG-META-038", lambda d: True,
                     lambda d, draw: d.update({"default-sort-order-id": 55})),
    MetadataMutation("unknown operation", "ICEBERG-SNAP-007", lambda d: bool(d.get("snapshots")),
                     lambda d, draw: draw(st.sampled_from(d["snapshots"])).update({"summary": {"operation": "merge"}})),
    MetadataMutation("snapshot schema-id unknown", "ICEBERG-SNAP-009", lambda d: bool(d.get("snapshots")),
                     lambda d, draw: draw(st.sampled_from(d["snapshots"])).update({"schema-id": 999})),
    MetadataMutation("snapshot is its own parent", "ICEBERG-SNAP-002", lambda d: bool(d.get("snapshots")),
                     lambda d, draw: (lambda s: s.update({"parent-snapshot-id": s["snapshot-id"]}))(draw(st.sampled_from(d["snapshots"])))),
    MetadataMutation("ref to a missing snapshot", "ICEBERG-REF-006", lambda d: any(n != "main" for n in d.get("refs") or {}),
                     lambda d, draw: d["refs"][draw(st.sampled_from(sorted(n for n in d["refs"] if n != "main")))].update({"snapshot-id": 7})),
    MetadataMutation("tag with min-snapshots-to-keep", "ICEBERG-REF-002",
                     lambda d: any(r["type"] == "tag" for r in (d.get("refs") or {}).values()),
                     lambda d, draw: next(r for r in d["refs"].values() if r["type"] == "tag").update({"min-snapshots-to-keep": 2})),
    MetadataMutation("main is a tag", "ICEBERG-REF-005", lambda d: "main" in (d.get("refs") or {}),
                     lambda d, draw: d["refs"]["main"].update({"type": "tag"})),
    MetadataMutation("main expires", "ICEBERG-REF-004", lambda d: "main" in (d.get("refs") or {}),
                     lambda d, draw: d["refs"]["main"].update({"max-ref-age-ms": 1})),
    MetadataMutation("main is not current", "ICEBERG-META-030", lambda d: "main" in (d.get("refs") or {}) and len(d.get("snapshots", [])) > 1,
                     lambda d, draw: d["refs"]["main"].update({"snapshot-id": next(s["snapshot-id"] for s in d["snapshots"]
                                                                                   if s["snapshot-id"] != d["current-snapshot-id"])})),
    MetadataMutation("snapshot-log keeps an expired snapshot", "ICEBERG-META-034", lambda d: bool(d.get("snapshot-log")),
                     lambda d, draw: d["snapshot-log"].insert(0, {"snapshot-id": 5, "timestamp-ms": d["snapshot-log"][0]["timestamp-ms"] - 1})),
    MetadataMutation("last-sequence-number below a snapshot's", "ICEBERG-META-011",
                     lambda d: d["format-version"] >= 2 and bool(d.get("snapshots")),
                     lambda d, draw: d.update({"last-sequence-number": max(s["sequence-number"] for s in d["snapshots"]) - 1})),
    MetadataMutation("next-row-id below assigned rows", "ICEBERG-LINEAGE-012",
                     lambda d: d["format-version"] >= 3 and any(s.get("added-rows", 0) > 0 for s in d.get("snapshots", [])),
                     lambda d, draw: d.update({"next-row-id": max(s["first-row-id"] + s["added-rows"] for s in d["snapshots"]) - 1})),
    MetadataMutation("next-row-id in v2", "ICEBERG-GEN-002", lambda d: d["format-version"] == 2, lambda d, draw: d.update({"next-row-id": 0})),
    MetadataMutation("v2+ writes the singular schema", "ICEBERG-META-018", lambda d: d["format-version"] >= 2,
                     lambda d, draw: d.update({"schema": d["schemas"][-1]})),
    MetadataMutation("order 0 has fields", "ICEBERG-SORT-003", lambda d: bool(_primitive_fields(d)),
                     lambda d, draw: next(o for o in d["sort-orders"] if o["order-id"] == 0)["fields"].append(
                         {"transform": "identity", "source-id": _primitive_fields(d)[0]["id"], "direction": "asc", "null-order": "nulls-first"})),
    MetadataMutation("two partition statistics for a snapshot", "ICEBERG-STATS-005", lambda d: bool(d.get("partition-statistics")),
                     lambda d, draw: d["partition-statistics"].append(dict(d["partition-statistics"][0], **{"statistics-path": "s3://b/other.parquet"}))),
    MetadataMutation("v3 current-snapshot-id -1", "ICEBERG-META-045", lambda d: d["format-version"] >= 3 and "current-snapshot-id" not in d,
                     lambda d, draw: d.update({"current-snapshot-id": -1})),
]


@st.composite
def mutated_metadata(draw: Callable, version: int | None = None) -> tuple[M.TableMetadata, dict, MetadataMutation]:
    """A valid metadata, its JSON document with one applicable mutation applied, and the mutation."""
    md = draw(table_metadata(version))
    doc = M.metadata_to_dict(md)
    options = [m for m in METADATA_MUTATIONS if m.applies(doc)]
    m = draw(st.sampled_from(options))
    m.apply(doc, draw)
    return md, doc, m


# ============================================================================================
# 4c. Writer-neutral histories for cross-engine reads
# ============================================================================================

# Column types every engine of the kit reads back from Iceberg Parquet without loss, with the
# partition expressions (conformance.model.parse_partition_expr syntax) each can be the source of.
ENGINE_TYPES: dict[str, tuple[pa.DataType, tuple[str, ...]]] = {
    "int": (pa.int32(), ("{c}", "bucket(4, {c})", "truncate(10, {c})")),
    "long": (pa.int64(), ("{c}", "bucket(8, {c})", "truncate(100, {c})")),
    "double": (pa.float64(), ()),
    "string": (pa.string(), ("{c}", "bucket(3, {c})", "truncate(2, {c})")),
    "boolean": (pa.bool_(), ("{c}",)),
    "date": (pa.date32(), ("{c}", "year({c})", "month({c})", "day({c})", "bucket(4, {c})")),
    "timestamp": (pa.timestamp("us"), ("year({c})", "month({c})", "day({c})", "hour({c})")),
    "timestamptz": (pa.timestamp("us", tz="UTC"), ("day({c})", "hour({c})")),
    "decimal": (pa.decimal128(9, 2), ("bucket(4, {c})",)),
}
DELETE_MECHANISMS = {1: (None, "copy-on-write"), 2: (None, "copy-on-write", "position-deletes", "equality-deletes"),
                     3: (None, "copy-on-write", "deletion-vectors")}


@dataclass
class IcebergHistory:
    """Steps for a writer, the rows (dicts) after the first append and at the end, and what a reader needs."""

    steps: list[Any]
    schema: pa.Schema
    partition_by: tuple[str, ...]
    version: int
    first: list[dict]
    final: list[dict]
    delete_mechanisms: tuple[str, ...]


def _column_values(name: str) -> st.SearchStrategy[Any]:
    from conformance.strategies import arrow as sa

    if name == "int":
        return sa.int_values(32)
    if name == "long":
        return sa.int_values(64)
    if name == "double":
        return sa.float_values(64, nan=False)
    if name == "string":
        return sa.text_values(max_size=6)
    if name == "boolean":
        return st.booleans()
    if name == "date":
        return sa.date_values("engines")
    if name == "timestamp":
        return sa.naive_datetime_values("engines")
    if name == "timestamptz":
        return sa.utc_datetime_values("engines")
    return sa.decimal_values(9, 2)


@st.composite
def table_histories(draw: Callable, version: int | None = None, *, max_ops: int = 4, max_rows: int = 6) -> IcebergHistory:
    """Create (schema, partitioning, format version), appends, deletes by id (each mechanism the version allows) and
    overwrites, with the rows every reader must return after the first append and at the end."""
    from conformance import model

    v = version if version is not None else draw(st.sampled_from([1, 2, 3]))
    kinds = draw(st.lists(st.sampled_from(sorted(ENGINE_TYPES)), min_size=1, max_size=4))
    cols = [(f"c{i}", k) for i, k in enumerate(kinds)]
    schema = pa.schema([pa.field("id", pa.int64())] + [pa.field(c, ENGINE_TYPES[k][0]) for c, k in cols])
    exprs = [e.format(c=c) for c, k in cols for e in ENGINE_TYPES[k][1]] + ["bucket(4, id)", "truncate(5, id)"]
    partition_by = tuple(draw(st.lists(st.sampled_from(exprs), max_size=2, unique=True)))
    steps: list[Any] = [model.Create(schema=schema, partition_by=partition_by, properties={"format-version": str(v)})]
    next_id = [0]

    # truncate[W] of a value within W of the type's minimum leaves the type (spec ambiguity: Java wraps around,
    # the reference refuses), so truncated integer columns stay clear of it.
    truncated = {e.split(",")[-1].strip(" )") for e in partition_by if e.startswith("truncate")}

    def values(c: str, k: str) -> st.SearchStrategy[Any]:
        if k in ("int", "long") and c in truncated:
            bits = 32 if k == "int" else 64
            return st.integers(-(2 ** (bits - 1)) + 1000, 2 ** (bits - 1) - 1)
        return _column_values(k)

    def rows() -> pa.Table:
        n = draw(st.integers(1, max_rows))
        data: dict[str, list] = {"id": list(range(next_id[0], next_id[0] + n))}
        next_id[0] += n
        for c, k in cols:
            data[c] = draw(st.lists(st.one_of(st.none(), values(c, k)), min_size=n, max_size=n))
        return pa.table(data, schema=schema)

    live: list[dict] = []
    first_rows = rows()
    steps.append(model.Append(rows=first_rows))
    live = first_rows.to_pylist()
    first = list(live)
    used: set[str] = set()
    for _ in range(draw(st.integers(0, max_ops))):
        op = draw(st.sampled_from(["append", "append", "delete", "delete", "overwrite"]))
        if op == "append":
            r = rows()
            steps.append(model.Append(rows=r, files=draw(st.integers(1, 2))))
            live += r.to_pylist()
        elif op == "delete" and live:
            how = draw(st.sampled_from(DELETE_MECHANISMS[v]))
            k = draw(st.sampled_from([2, 3]))
            target = draw(st.sampled_from([f"id % {k} = 0", f"id < {draw(st.integers(0, next_id[0]))}"]))
            steps.append(model.Delete(where=target, how=how))
            if how:
                used.add(how)
            if target.startswith("id %"):
                live = [x for x in live if x["id"] % k != 0]
            else:
                bound = int(target.split("<")[1])
                live = [x for x in live if x["id"] >= bound]
        elif op == "overwrite":
            r = rows()
            steps.append(model.Overwrite(rows=r))
            live = r.to_pylist()
    return IcebergHistory(steps=steps, schema=schema, partition_by=partition_by, version=v, first=first, final=live,
                          delete_mechanisms=tuple(sorted(used)))


# ============================================================================================
# 5. Hand-built tables (for the validator's mutation suites)
# ============================================================================================
#
# ``build_table`` writes a small but complete table with the reference's own modules (metadata,
# manifests, Parquet with field ids through Arrow): creation, appends under two partition specs,
# a schema change, row-level deletes (v2: position and equality delete files; v3: a deletion
# vector in a Puffin file; v1: none), a copy-on-write overwrite with EXISTING and DELETED
# entries, a tag and a branch, row lineage in v3, and one metadata file per commit chained by the
# metadata-log. Every count, size, bound and summary is computed from what was written, so the
# table validates clean; a mutation then edits exactly one thing on disk through ``BuiltTable``.

TABLE_SCHEMA_FIELDS = (
    T.NestedField(id=1, name="id", type=T.LONG, required=True),
    T.NestedField(id=2, name="name", type=T.STRING),
    T.NestedField(id=3, name="ts", type=T.TIMESTAMP),
    T.NestedField(id=4, name="score", type=T.DOUBLE),
    T.NestedField(id=5, name="info", type=T.StructType(fields=(T.NestedField(id=6, name="a", type=T.INT),))),
    T.NestedField(id=7, name="tags", type=T.ListType(element_id=8, element=T.STRING, element_required=False)),
    T.NestedField(id=9, name="cat", type=T.STRING),
)
ADDED_FIELD = T.NestedField(id=10, name="note", type=T.STRING)
T0_MS = 1_700_000_000_000
DAY_US = 86_400_000_000
BASE_DAY = 19_700  # 2023-12-08


def _spec0() -> P.PartitionSpec:
    return P.PartitionSpec(spec_id=0, fields=(
        P.PartitionField(source_ids=(9,), field_id=1000, name="cat", transform=X.IdentityTransform()),
        P.PartitionField(source_ids=(3,), field_id=1001, name="ts_day", transform=X.DayTransform()),
    ))


def _spec1() -> P.PartitionSpec:
    return P.PartitionSpec(spec_id=1, fields=(
        P.PartitionField(source_ids=(9,), field_id=1000, name="cat", transform=X.IdentityTransform()),
        P.PartitionField(source_ids=(1,), field_id=1002, name="id_bucket", transform=X.BucketTransform(num_buckets=4)),
        P.PartitionField(source_ids=(2,), field_id=1003, name="name_trunc", transform=X.TruncateTransform(width=2)),
    ))


def _rows(schema: T.Schema, ids: list[int], cat: str, day: int, names: list[str], *, nan: bool = False, note: bool = False) -> pa.Table:
    """Rows of one data file: every row in partition (cat, day); a NaN and a null score when asked."""
    n = len(ids)
    cols: dict[str, Any] = {
        "id": ids,
        "name": names,
        "ts": [day * DAY_US + i * 3_600_000_000 for i in range(n)],
        "score": [float("nan") if nan and i == 0 else (None if nan and i == 1 else 0.5 * i - 1) for i in range(n)],
        "info": [{"a": i} if i % 2 == 0 else None for i in range(n)],
        "tags": [["x", "y"][: i % 3] for i in range(n)],
        "cat": [cat] * n,
    }
    if note:
        cols["note"] = [f"n{i}" for i in range(n)]
    arrow = T.to_arrow_schema(schema)
    arrays = []
    for f in arrow:
        vals = cols[f.name]
        if f.name == "ts":
            arrays.append(pa.array(vals, pa.int64()).cast(f.type))
        else:
            arrays.append(pa.array(vals, f.type))
    return pa.Table.from_arrays(arrays, schema=arrow)


def parquet_bytes(table: pa.Table) -> bytes:
    """A Parquet file of ``table`` (its Arrow field metadata carries the Iceberg field ids)."""
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def column_metrics(table: pa.Table, schema: T.Schema | None) -> dict[str, dict[int, Any]]:
    """value/null/NaN counts and tight bounds of the top-level primitive columns, keyed by field id."""
    out: dict[str, dict[int, Any]] = {k: {} for k in ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds")}
    for i, f in enumerate(table.schema):
        raw = (f.metadata or {}).get(T.PARQUET_FIELD_ID)
        if raw is None:
            continue
        fid = int(raw)
        t = schema.find_type(fid) if schema is not None else None
        if t is None:
            t = {2147483546: T.STRING, 2147483545: T.LONG}.get(fid)
        if t is None or not T.is_primitive(t):
            continue
        col = table.column(i)
        out["value_counts"][fid] = len(col)
        out["null_value_counts"][fid] = col.null_count
        vals = X.arrow_to_internal(col, t)
        if t in (T.FLOAT, T.DOUBLE):
            out["nan_value_counts"][fid] = sum(1 for x in vals if isinstance(x, float) and math.isnan(x))
        real = [x for x in vals if x is not None and not (isinstance(x, float) and math.isnan(x))]
        if real and t not in (T.UUID,):
            key = (lambda x: (x, math.copysign(1.0, x))) if t in (T.FLOAT, T.DOUBLE) else ((lambda x: x.encode()) if t == T.STRING else None)
            out["lower_bounds"][fid] = V.to_bytes(min(real, key=key), t)
            out["upper_bounds"][fid] = V.to_bytes(max(real, key=key), t)
    return out


def dv_blob(positions: list[int]) -> bytes:
    """A deletion-vector-v1 blob: length, magic, portable 64-bit Roaring vector, CRC (Puffin spec)."""
    from pyroaring import BitMap

    by_key: dict[int, list[int]] = {}
    for p in positions:
        by_key.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
    vec = struct.pack("<Q", len(by_key))
    for k in sorted(by_key):
        vec += struct.pack("<I", k) + BitMap(by_key[k]).serialize()
    body = bytes.fromhex("D1D33964") + vec
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def puffin_file(blobs: list[tuple[bytes, dict]]) -> tuple[bytes, list[int]]:
    """A Puffin file of (bytes, blob metadata without offset/length) pairs; returns the file and each blob's offset."""
    out = bytearray(b"PFA1")
    metas, offsets = [], []
    for data, meta in blobs:
        offsets.append(len(out))
        metas.append({**meta, "offset": len(out), "length": len(data)})
        out += data
    payload = json.dumps({"blobs": metas, "properties": {"created-by": "lakeconf tests"}}).encode()
    out += b"PFA1" + payload + struct.pack("<i", len(payload)) + b"\x00\x00\x00\x00" + b"PFA1"
    return bytes(out), offsets


@dataclass
class BuiltTable:
    """A written table and the names of its parts, with helpers that edit exactly one thing on disk."""

    root: str
    version: int
    storage: Any
    metadata_files: list[str]                     # relative, oldest first; the last is current
    manifest_lists: dict[int, str]                # snapshot id -> relative path
    manifests: dict[str, str]                     # short name (m1, dm4...) -> relative path
    files: dict[str, str]                         # short name (a, b, pd...) -> relative path
    snapshot_ids: dict[str, int]                  # S1..S5 -> id

    # ---- paths
    def path(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def uri(self, rel: str) -> str:
        return self.storage.uri(rel)

    @property
    def current(self) -> str:
        return self.metadata_files[-1]

    # ---- metadata JSON
    def doc(self, rel: str | None = None) -> dict:
        with open(self.path(rel or self.current), "rb") as fh:
            return json.loads(fh.read())

    def edit_doc(self, fn: Callable[[dict], Any], rel: str | None = None) -> None:
        """Apply ``fn`` to a metadata document (default: the current one) and write it back in place."""
        d = self.doc(rel)
        fn(d)
        self.write_doc(d, rel)

    def write_doc(self, d: Any, rel: str | None = None) -> None:
        with open(self.path(rel or self.current), "w") as fh:
            json.dump(d, fh)

    def snapshot(self, d: dict, key: str) -> dict:
        """The snapshot dict of snapshot ``key`` (S1..S5) in document ``d``."""
        sid = self.snapshot_ids[key]
        return next(s for s in d["snapshots"] if s["snapshot-id"] == sid)

    # ---- Avro files
    def read_avro(self, rel: str) -> tuple[dict, dict[str, str], list[dict], str]:
        with open(self.path(rel), "rb") as fh:
            reader = fastavro.reader(fh)
            records = list(reader)
            meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in reader.metadata.items()}
        schema = json.loads(meta.pop("avro.schema"))
        codec = meta.pop("avro.codec", "null")
        return schema, meta, records, codec

    def write_avro(self, rel: str, schema: dict, meta: dict, records: list[dict], codec: str = "deflate") -> None:
        buf = io.BytesIO()
        fastavro.writer(buf, fastavro.parse_schema(schema), records, metadata=meta, codec=codec)
        with open(self.path(rel), "wb") as fh:
            fh.write(buf.getvalue())

    def edit_avro(self, rel: str, fn: Callable[[dict, dict, list[dict]], Any], *, fix_lengths: bool = True) -> None:
        """Apply ``fn(schema, meta, records)`` (in place) to a manifest or manifest list; then, by default,
        re-sync every manifest list's manifest_length so that only the intended edit shows."""
        schema, meta, records, codec = self.read_avro(rel)
        fn(schema, meta, records)
        self.write_avro(rel, schema, meta, records, codec)
        if fix_lengths:
            self.fix_manifest_lengths()

    def fix_manifest_lengths(self) -> None:
        """Set manifest_length in every manifest list to the manifest's actual size."""
        for rel in set(self.manifest_lists.values()):
            schema, meta, records, codec = self.read_avro(rel)
            changed = False
            for r in records:
                mrel = self.storage.resolve(r["manifest_path"])
                if os.path.exists(self.path(mrel)):
                    size = os.path.getsize(self.path(mrel))
                    if r["manifest_length"] != size:
                        r["manifest_length"] = size
                        changed = True
            if changed:
                self.write_avro(rel, schema, meta, records, codec)

    def fix_lists(self) -> None:
        """Recompute every manifest list entry's file/row counts, partition summaries and length from its manifest
        (for mutations that change entries and mean to break only something else)."""
        for rel in set(self.manifest_lists.values()):
            schema, meta, records, codec = self.read_avro(rel)
            for r in records:
                mrel = self.storage.resolve(r["manifest_path"])
                with open(self.path(mrel), "rb") as fh:
                    raw = fh.read()
                r["manifest_length"] = len(raw)
                try:
                    man = MF.read_manifest(raw, inherit=False)
                except Exception:  # noqa: BLE001 - a manifest the mutation broke keeps its old entry
                    continue
                es = man.entries
                for st_, name in ((MF.ADDED, "added"), (MF.EXISTING, "existing"), (MF.DELETED, "deleted")):
                    if f"{name}_files_count" in r:
                        r[f"{name}_files_count"] = sum(1 for e in es if e.status == st_)
                        r[f"{name}_rows_count"] = sum(e.data_file.record_count for e in es if e.status == st_)
                if r.get("partitions") is not None:
                    try:
                        parts = MF.summarize_partitions(man.metadata.spec, man.metadata.schema, [e.data_file.partition for e in es])
                    except Exception:  # noqa: BLE001
                        continue
                    r["partitions"] = [{"contains_null": p.contains_null, "contains_nan": p.contains_nan,
                                        "lower_bound": p.lower_bound, "upper_bound": p.upper_bound} for p in parts]
            self.write_avro(rel, schema, meta, records, codec)

    def entries(self, manifest: str) -> tuple[dict, dict, list[dict], str]:
        return self.read_avro(self.manifests[manifest])

    def edit_entries(self, manifest: str, fn: Callable[[list[dict]], Any], **kw: Any) -> None:
        """Edit the records of manifest ``manifest`` (short name)."""
        self.edit_avro(self.manifests[manifest], lambda s, m, r: fn(r), **kw)

    def entry(self, records: list[dict], file: str) -> dict:
        """The record of file ``file`` (short name) among manifest records."""
        uri = self.uri(self.files[file])
        return next(r for r in records if r["data_file"]["file_path"] == uri)

    def edit_list(self, snapshot: str, fn: Callable[[list[dict]], Any], **kw: Any) -> None:
        """Edit the records of the manifest list of snapshot ``snapshot`` (S1..S5)."""
        self.edit_avro(self.manifest_lists[self.snapshot_ids[snapshot]], lambda s, m, r: fn(r), **kw)

    def list_entry(self, records: list[dict], manifest: str) -> dict:
        uri = self.uri(self.manifests[manifest])
        return next(r for r in records if r["manifest_path"] == uri)

    def edit_all_lists(self, manifest: str, fn: Callable[[dict], Any]) -> None:
        """Edit the list entry of ``manifest`` in every manifest list that lists it."""
        uri = self.uri(self.manifests[manifest])
        for rel in set(self.manifest_lists.values()):
            def f(s, m, recs):
                for r in recs:
                    if r["manifest_path"] == uri:
                        fn(r)
            self.edit_avro(rel, f, fix_lengths=False)

    # ---- data files
    def read_file(self, name: str) -> bytes:
        with open(self.path(self.files[name]), "rb") as fh:
            return fh.read()

    def write_file(self, name: str, data: bytes, *, fix_size: bool = True) -> None:
        """Replace a data/delete file's bytes; by default the manifests' file_size_in_bytes follows."""
        with open(self.path(self.files[name]), "wb") as fh:
            fh.write(data)
        if fix_size:
            uri = self.uri(self.files[name])
            for m in self.manifests:
                schema, meta, records, codec = self.entries(m)
                hit = [r for r in records if r["data_file"]["file_path"] == uri]
                for r in hit:
                    r["data_file"]["file_size_in_bytes"] = len(data)
                if hit:
                    self.write_avro(self.manifests[m], schema, meta, records, codec)
            self.fix_manifest_lengths()

    def read_table(self, name: str) -> pa.Table:
        return pq.read_table(io.BytesIO(self.read_file(name)))

    def write_table(self, name: str, table: pa.Table) -> None:
        self.write_file(name, parquet_bytes(table))


def build_table(root: str | Storage, version: int = 2, *, deletes: bool = True) -> BuiltTable:
    """Write the reference test table of ``version`` under ``root`` (a directory or any Storage; see the section comment).

    The editing helpers of the result work on local tables only.
    """
    if isinstance(root, Storage):
        st = root
        root = st.root
    else:
        os.makedirs(root, exist_ok=True)
        st = LocalStorage(root)
    v = version
    s0 = T.Schema(schema_id=0, fields=TABLE_SCHEMA_FIELDS, identifier_field_ids=(1,))
    s1 = T.Schema(schema_id=1, fields=TABLE_SCHEMA_FIELDS + (ADDED_FIELD,), identifier_field_ids=(1,))
    spec0, spec1 = _spec0(), _spec1()
    files: dict[str, str] = {}
    dfs: dict[str, MF.DataFile] = {}
    table_uuid = "5b7d0d1c-8a4e-4d3f-9f0b-2c1e6a7b8c9d"

    def data_file(name: str, rows: pa.Table, spec: P.PartitionSpec, schema: T.Schema, partition: dict[int, Any]) -> MF.DataFile:
        rel = f"data/{name}.parquet"
        data = parquet_bytes(rows)
        st.put_if_absent(rel, data)
        files[name] = rel
        m = column_metrics(rows, schema)
        pf = pq.ParquetFile(io.BytesIO(data))
        offsets = tuple(sorted(pf.metadata.row_group(i).column(0).data_page_offset for i in range(pf.metadata.num_row_groups)))
        df = MF.DataFile(file_path=st.uri(rel), file_format="parquet", record_count=rows.num_rows, file_size_in_bytes=len(data),
                         partition=partition, split_offsets=offsets, sort_order_id=0 if v >= 2 else None, **m)
        dfs[name] = df
        return df

    # -- data
    a = data_file("a", _rows(s0, [1, 2, 3], "x", BASE_DAY, ["aa", "ab", "ac"], nan=True), spec0, s0, {1000: "x", 1001: BASE_DAY})
    b = data_file("b", _rows(s0, [4, 5], "y", BASE_DAY + 1, ["ba", "bb"]), spec0, s0, {1000: "y", 1001: BASE_DAY + 1})
    c = data_file("c", _rows(s0, [6], "x", BASE_DAY, ["ca"]), spec0, s0, {1000: "x", 1001: BASE_DAY})
    ids_d = [i for i in range(100, 200) if X.bucket(i, T.LONG, 4) == 1][:2]
    d = data_file("d", _rows(s1, ids_d, "z", BASE_DAY + 2, ["zza", "zzb"], note=True), spec1, s1, {1000: "z", 1002: 1, 1003: "zz"})
    b2 = data_file("b2", _rows(s1, [4], "y", BASE_DAY + 1, ["bz"], note=True), spec0, s1, {1000: "y", 1001: BASE_DAY + 1})

    # -- deletes
    delete_dfs: list[MF.DataFile] = []
    if deletes and v == 2:
        pos = pa.table({"file_path": pa.array([a.file_path], pa.string()), "pos": pa.array([1], pa.int64())},
                       schema=pa.schema([pa.field("file_path", pa.string(), nullable=False, metadata={T.PARQUET_FIELD_ID: b"2147483546"}),
                                         pa.field("pos", pa.int64(), nullable=False, metadata={T.PARQUET_FIELD_ID: b"2147483545"})]))
        pd = data_file("pd", pos, spec0, s0, dict(a.partition))
        pd = dataclasses.replace(pd, content=MF.POSITION_DELETES, referenced_data_file=a.file_path, sort_order_id=None, split_offsets=None)
        eq = pa.table({"id": pa.array([5], pa.int64())}, schema=pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={T.PARQUET_FIELD_ID: b"1"})]))
        ed = data_file("ed", eq, spec0, s0, dict(b.partition))
        ed = dataclasses.replace(ed, content=MF.EQUALITY_DELETES, equality_ids=(1,), split_offsets=None)
        dfs["pd"], dfs["ed"] = pd, ed
        delete_dfs = [pd, ed]
    elif deletes and v >= 3:
        blob = dv_blob([1])
        data, offsets = puffin_file([(blob, {"type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1, "sequence-number": -1,
                                             "properties": {"referenced-data-file": a.file_path, "cardinality": "1"}})])
        st.put_if_absent("data/dv.puffin", data)
        files["dv"] = "data/dv.puffin"
        dv = MF.DataFile(file_path=st.uri("data/dv.puffin"), file_format="puffin", content=MF.POSITION_DELETES, record_count=1,
                         file_size_in_bytes=len(data), partition=dict(a.partition), referenced_data_file=a.file_path,
                         content_offset=offsets[0], content_size_in_bytes=len(blob))
        dfs["dv"] = dv
        delete_dfs = [dv]

    # -- snapshots
    sids = {"S1": 1001, "S2": 1002, "S3": 1003, "S4": 1004, "S5": 1005}
    manifests: dict[str, str] = {}
    lists: dict[int, str] = {}
    mfs: dict[str, MF.ManifestFile] = {}
    next_row = [0]

    def manifest(name: str, entries: list[MF.ManifestEntry], spec: P.PartitionSpec, schema: T.Schema, snapshot: str, seq: int,
                 content: int = MF.MANIFEST_DATA) -> MF.ManifestFile:
        data = MF.write_manifest(entries, schema=schema, spec=spec, format_version=v, content=content)
        rel = f"metadata/{name}.avro"
        st.put_if_absent(rel, data)
        manifests[name] = rel
        frid = None
        if v >= 3 and content == MF.MANIFEST_DATA:
            frid = next_row[0]
            next_row[0] += sum(e.data_file.record_count for e in entries if e.status != MF.DELETED)
        mf = MF.manifest_file_for(entries, manifest_path=st.uri(rel), manifest_length=len(data), spec=spec, schema=schema,
                                  added_snapshot_id=sids[snapshot], sequence_number=seq if v >= 2 else 0, content=content,
                                  first_row_id=frid)
        if v == 1:
            mf = dataclasses.replace(mf, min_sequence_number=0)
        mfs[name] = mf
        return mf

    def mlist(snapshot: str, parent: str | None, seq: int, names: list[str]) -> str:
        sid = sids[snapshot]
        rel = f"metadata/snap-{sid}.avro"
        st.put_if_absent(rel, MF.write_manifest_list([mfs[n] for n in names], format_version=v, snapshot_id=sid,
                                                     parent_snapshot_id=sids[parent] if parent else None,
                                                     sequence_number=seq if v >= 2 else None))
        lists[sid] = rel
        return st.uri(rel)

    added = lambda df: MF.ManifestEntry(status=MF.ADDED, snapshot_id=None if v >= 2 else 0, data_file=df)  # noqa: E731
    snaps: list[M.Snapshot] = []

    def snapshot(key: str, parent: str | None, seq: int, op: str, names: list[str], schema_id: int, start_rows: int) -> M.Snapshot:
        s = M.Snapshot(snapshot_id=sids[key], parent_snapshot_id=sids[parent] if parent else None, sequence_number=seq if v >= 2 else 0,
                       timestamp_ms=T0_MS + seq * 1000, manifest_list=mlist(key, parent, seq, names),
                       summary=MappingProxyType({"operation": op}), schema_id=schema_id,
                       first_row_id=start_rows if v >= 3 else None, added_rows=(next_row[0] - start_rows) if v >= 3 else None)
        snaps.append(s)
        return s

    def v1_entry(e: MF.ManifestEntry, key: str) -> MF.ManifestEntry:
        return dataclasses.replace(e, snapshot_id=sids[key]) if v == 1 else e

    start = next_row[0]
    manifest("m1", [v1_entry(added(a), "S1"), v1_entry(added(b), "S1")], spec0, s0, "S1", 1)
    snapshot("S1", None, 1, "append", ["m1"], 0, start)
    start = next_row[0]
    manifest("m2", [v1_entry(added(c), "S2")], spec0, s0, "S2", 2)
    snapshot("S2", "S1", 2, "append", ["m2", "m1"], 0, start)
    start = next_row[0]
    manifest("m3", [v1_entry(added(d), "S3")], spec1, s1, "S3", 3)
    snapshot("S3", "S2", 3, "append", ["m3", "m2", "m1"], 1, start)
    start = next_row[0]
    if delete_dfs:
        manifest("dm4", [added(x) for x in delete_dfs], spec0, s1, "S4", 4, content=MF.MANIFEST_DELETES)
        snapshot("S4", "S3", 4, "delete", ["dm4", "m3", "m2", "m1"], 1, start)
    # S5: copy-on-write rewrite of b into b2 (a kept as EXISTING, b DELETED).
    first_ids = {"a": mfs["m1"].first_row_id, "b": (mfs["m1"].first_row_id or 0) + a.record_count} if v >= 3 else {}
    a_kept = dataclasses.replace(a, first_row_id=first_ids.get("a"))
    b_gone = dataclasses.replace(b, first_row_id=first_ids.get("b"))
    exist = MF.ManifestEntry(status=MF.EXISTING, snapshot_id=sids["S1"], sequence_number=1 if v >= 2 else None,
                             file_sequence_number=1 if v >= 2 else None, data_file=a_kept)
    gone = MF.ManifestEntry(status=MF.DELETED, snapshot_id=sids["S5"], sequence_number=1 if v >= 2 else None,
                            file_sequence_number=1 if v >= 2 else None, data_file=b_gone)
    start = next_row[0]
    seq5 = 5 if delete_dfs else 4
    manifest("m5", [exist, gone, v1_entry(added(b2), "S5")], spec0, s1, "S5", seq5)
    tail = (["dm4"] if delete_dfs else []) + ["m3", "m2"]
    snapshot("S5", "S4" if delete_dfs else "S3", seq5, "overwrite", ["m5"] + tail, 1, start)

    # -- metadata files, one per commit
    def md_at(step: int) -> M.TableMetadata:
        """The table after commit ``step``: 0 create; 1..3 snapshots S1..S3 (3 also evolves schema and spec); then S4, S5."""
        listed = snaps[:step]
        schemas = (s0,) if step < 3 else (s0, s1)
        specs = (spec0,) if step < 3 else (spec0, spec1)
        cur = listed[-1] if listed else None
        refs = {}
        if cur is not None and v >= 2:
            refs["main"] = M.SnapshotRef(snapshot_id=cur.snapshot_id, type=M.BRANCH)
        if step >= 2 and v >= 2:
            refs["t1"] = M.SnapshotRef(snapshot_id=sids["S2"], type=M.TAG, max_ref_age_ms=86_400_000)
        if step >= 3 and v >= 2:
            refs["dev"] = M.SnapshotRef(snapshot_id=sids["S3"], type=M.BRANCH, min_snapshots_to_keep=2)
        return M.TableMetadata(
            format_version=v, table_uuid=table_uuid, location=st.root,
            last_sequence_number=(cur.sequence_number if cur else 0) if v >= 2 else 0,
            last_updated_ms=cur.timestamp_ms if cur else T0_MS, last_column_id=max(s.highest_field_id for s in schemas),
            schemas=schemas, current_schema_id=schemas[-1].schema_id, partition_specs=specs,
            default_spec_id=specs[-1].spec_id if step < len(snaps) or step >= 3 else 0,
            last_partition_id=max(sp.last_assigned_field_id for sp in specs),
            properties=MappingProxyType({"write.format.default": "parquet"}),
            current_snapshot_id=cur.snapshot_id if cur else None, snapshots=tuple(listed),
            snapshot_log=tuple(M.SnapshotLogEntry(snapshot_id=s.snapshot_id, timestamp_ms=s.timestamp_ms) for s in listed),
            sort_orders=(P.UNSORTED,), default_sort_order_id=0, refs=MappingProxyType(refs),
            next_row_id=(sum((s.added_rows or 0) for s in listed)) if v >= 3 else None,
        )

    metadata_files: list[str] = []
    log: list[M.MetadataLogEntry] = []
    for step in range(len(snaps) + 1):
        md = md_at(step)
        md = dataclasses.replace(md, metadata_log=tuple(log))
        rel = f"metadata/v{step + 1}.metadata.json"
        st.put_if_absent(rel, M.metadata_to_json(md).encode())
        metadata_files.append(rel)
        log.append(M.MetadataLogEntry(metadata_file=st.uri(rel), timestamp_ms=md.last_updated_ms))
    st.write_atomic("metadata/version-hint.text", str(len(metadata_files)).encode())
    if not delete_dfs:
        sids.pop("S4")
    return BuiltTable(root=root, version=v, storage=st, metadata_files=metadata_files, manifest_lists=lists,
                      manifests=manifests, files=files, snapshot_ids=sids)
