"""Delta Lake hypothesis strategies: types -> schemas -> tables -> partition values -> logs.

The ladder (DESIGN.md convention 7):

1. leaves: ``primitive_types``, ``decimal_types``, ``leaf_types``, ``field_names``;
2. factories taking strategies: ``array_types(elements)``, ``map_types(keys, values)``,
   ``struct_types(types)``, ``values_for_type(dtype)``;
3. bounded recursion: ``data_types()``, ``schemas()``;
4. ``@composite`` only where values depend on each other: ``tables`` (a schema and rows that
   match it), ``partition_values`` (a partition type and a value of it), ``row_index_sets``
   (deletion-vector members), ``action_logs`` (raw commits whose actions respect the writer
   rules, with an independent model of the state they reconcile to) and ``table_histories``
   (writer-neutral steps -- create, append, delete, overwrite, set properties, checkpoint --
   with the rows they must leave behind), and ``mutated_logs`` (a valid raw log plus one
   mutation from ``MUTATIONS`` that breaks one named rule, for the validator).

Raw logs are generated as wire dicts, not through the reference's action model, so that the
reference's parser, replay and checkpoint writer are exercised against an input they did not
produce. Wire keys appear only in the ``_wire_*`` builders below.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import pyarrow as pa
from hypothesis import strategies as st

from conformance.strategies import arrow as sa
from reference_impl.delta.schema import ArrayType, DecimalType, MapType, PrimitiveType, StructField, StructType

# --------------------------------------------------------------------------------------------
# 1. Leaf types and names
# --------------------------------------------------------------------------------------------

PRIMITIVE_NAMES = (
    "string", "long", "integer", "short", "byte", "float", "double",
    "boolean", "binary", "date", "timestamp", "timestamp_ntz",
)
# The Arrow type each Delta type reads as (the contract's to_arrow_type, restated independently
# so that a drift in the reference's mapping shows up as a failing property, not a silent pass).
ARROW_OF_PRIMITIVE = {
    "string": pa.string(), "long": pa.int64(), "integer": pa.int32(), "short": pa.int16(),
    "byte": pa.int8(), "float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_(),
    "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"), "void": pa.null(),
}
# Types every engine in the kit reads and writes through Parquet without loss.
ENGINE_PRIMITIVE_NAMES = (
    "string", "long", "integer", "short", "byte", "double", "float", "boolean", "binary", "date", "timestamp",
)
# Types a partition column may have (not nested, not void/variant).
PARTITION_PRIMITIVE_NAMES = (
    "string", "long", "integer", "short", "byte", "boolean", "date", "timestamp", "timestamp_ntz",
    "binary", "double", "float",
)


def primitive_types(names: Iterable[str] = PRIMITIVE_NAMES) -> st.SearchStrategy[PrimitiveType]:
    """Delta primitive types drawn from ``names``."""
    return st.sampled_from(tuple(names)).map(lambda n: PrimitiveType(name=n))


def decimal_types(max_precision: int = 38) -> st.SearchStrategy[DecimalType]:
    """decimal(p, s), precision and scale limits weighted in."""
    return sa.decimal_arrow_types(max_precision).map(lambda t: DecimalType(precision=t.precision, scale=t.scale))


def leaf_types(
    names: Iterable[str] = PRIMITIVE_NAMES, *, decimals: bool = True, void: bool = False
) -> st.SearchStrategy[Any]:
    """Primitive or decimal Delta types (``void`` only on request: data files never hold it)."""
    names = tuple(names) + (("void",) if void else ())
    return st.one_of(primitive_types(names), decimal_types()) if decimals else primitive_types(names)


PLAIN_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)


def field_names(kind: str = "any") -> st.SearchStrategy[str]:
    """Column names: ``any`` (any non-empty unicode, legal under column mapping) or ``plain`` (identifier-like)."""
    if kind == "plain":
        return PLAIN_NAME
    return st.one_of(
        PLAIN_NAME,
        st.sampled_from(["a b", "a.b", "ünï", "列", "😀", "x,y", "a=b", "(p)", "`q`", "\"quoted\""]),
        st.text(min_size=1, max_size=8),
    )


def field_metadata() -> st.SearchStrategy[dict[str, Any]]:
    """Small user field metadata (keys outside the reserved ``delta.`` namespace)."""
    keys = st.from_regex(r"[a-z]{1,6}", fullmatch=True).filter(lambda k: not k.startswith("delta"))
    vals = st.one_of(st.text(max_size=6), st.integers(-5, 5), st.booleans())
    return st.dictionaries(keys, vals, max_size=2)


# --------------------------------------------------------------------------------------------
# 2. Factories
# --------------------------------------------------------------------------------------------


def array_types(elements: st.SearchStrategy[Any], contains_null: st.SearchStrategy[bool] = st.booleans()):
    """ArrayType of ``elements``."""
    return st.builds(lambda e, n: ArrayType(element_type=e, contains_null=n or _is_void(e)), elements, contains_null)


def map_types(
    keys: st.SearchStrategy[Any], values: st.SearchStrategy[Any], value_contains_null: st.SearchStrategy[bool] = st.booleans()
):
    """MapType of ``keys`` -> ``values``."""
    return st.builds(
        lambda k, v, n: MapType(key_type=k, value_type=v, value_contains_null=n or _is_void(v)),
        keys.filter(lambda k: not _is_void(k)),  # map keys are never null, so never void
        values,
        value_contains_null,
    )


def struct_types(
    types: st.SearchStrategy[Any],
    *,
    names: st.SearchStrategy[str] | None = None,
    min_fields: int = 1,
    max_fields: int = 4,
    metadata: bool = False,
    nullable: st.SearchStrategy[bool] = st.booleans(),
) -> st.SearchStrategy[StructType]:
    """StructType whose field types come from ``types``; names unique ignoring case (DELTA-SCHEMA-005)."""
    names = names if names is not None else field_names()
    fld = st.tuples(names, types, nullable, field_metadata() if metadata else st.just({}))
    # a void field is all-null by definition, so it is always nullable
    return st.lists(fld, min_size=min_fields, max_size=max_fields, unique_by=lambda f: f[0].lower()).map(
        lambda fs: StructType(
            fields=tuple(StructField(name=n, type=t, nullable=nl or _is_void(t), metadata=md) for n, t, nl, md in fs)
        )
    )


def _is_void(t: Any) -> bool:
    return isinstance(t, PrimitiveType) and t.name == "void"


# --------------------------------------------------------------------------------------------
# 3. Bounded recursion
# --------------------------------------------------------------------------------------------


def data_types(
    leaves: st.SearchStrategy[Any] | None = None,
    *,
    names: st.SearchStrategy[str] | None = None,
    max_leaves: int = 6,
    map_keys: st.SearchStrategy[Any] | None = None,
) -> st.SearchStrategy[Any]:
    """Any Delta data type: leaves nested in arrays, maps and structs up to ``max_leaves`` leaves."""
    leaves = leaves if leaves is not None else leaf_types()
    keys = map_keys if map_keys is not None else leaves

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            array_types(children),
            map_types(keys, children),
            struct_types(children, names=names, max_fields=3),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def schemas(
    types: st.SearchStrategy[Any] | None = None,
    *,
    names: st.SearchStrategy[str] | None = None,
    min_fields: int = 1,
    max_fields: int = 5,
    metadata: bool = True,
) -> st.SearchStrategy[StructType]:
    """Table schemas: a top-level struct of possibly nested fields."""
    return struct_types(
        types if types is not None else data_types(names=names),
        names=names,
        min_fields=min_fields,
        max_fields=max_fields,
        metadata=metadata,
    )


def engine_schemas(max_fields: int = 4, nested: bool = True) -> st.SearchStrategy[StructType]:
    """Schemas every engine in the kit round-trips: plain names, engine-safe leaves, shallow nesting."""
    leaves = st.one_of(primitive_types(ENGINE_PRIMITIVE_NAMES), decimal_types())
    names = field_names("plain")
    types = data_types(leaves, names=names, max_leaves=3, map_keys=primitive_types(("string", "integer", "long"))) if nested else leaves
    return struct_types(types, names=names, min_fields=1, max_fields=max_fields).filter(
        lambda s: "id" not in [f.name.lower() for f in s.fields]
    )


def arrow_type_of(t: Any) -> pa.DataType:
    """The Arrow type a Delta type reads as (independent restatement of the contract's mapping)."""
    if isinstance(t, PrimitiveType):
        return ARROW_OF_PRIMITIVE[t.name]
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, ArrayType):
        return pa.list_(pa.field("element", arrow_type_of(t.element_type), nullable=t.contains_null))
    if isinstance(t, MapType):
        return pa.map_(
            pa.field("key", arrow_type_of(t.key_type), nullable=False),
            pa.field("value", arrow_type_of(t.value_type), nullable=t.value_contains_null),
        )
    if isinstance(t, StructType):
        return pa.struct([pa.field(f.name, arrow_type_of(f.type), nullable=f.nullable) for f in t.fields])
    raise TypeError(f"not a Delta type: {t!r}")


def arrow_schema_of(schema: StructType) -> pa.Schema:
    """The Arrow schema a Delta schema reads as (no field metadata)."""
    return pa.schema([pa.field(f.name, arrow_type_of(f.type), nullable=f.nullable) for f in schema.fields])


def values_for_type(t: Any, *, bounds: sa.Bounds = "spec", nan: bool = True) -> st.SearchStrategy[Any]:
    """Non-null Python values of Delta type ``t``."""
    return sa.values_for_arrow_type(arrow_type_of(t), bounds=bounds, nan=nan)


# --------------------------------------------------------------------------------------------
# 4. Composites
# --------------------------------------------------------------------------------------------


@st.composite
def tables(
    draw,
    schema: st.SearchStrategy[StructType] | None = None,
    *,
    min_rows: int = 0,
    max_rows: int = 8,
    bounds: sa.Bounds = "spec",
    nan: bool = True,
) -> tuple[StructType, pa.Table]:
    """A schema and rows matching it (nullable fields get nulls, non-nullable never do)."""
    s = draw(schema if schema is not None else schemas())
    arrow_schema = arrow_schema_of(s)
    n = draw(st.integers(min_rows, max_rows))
    columns = []
    for f, af in zip(s.fields, arrow_schema):
        vals = sa.nullable(values_for_type(f.type, bounds=bounds, nan=nan), f.nullable)
        columns.append(pa.array(draw(st.lists(vals, min_size=n, max_size=n)), type=af.type))
    return s, pa.Table.from_arrays(columns, schema=arrow_schema)


@st.composite
def partition_values(
    draw, names: Iterable[str] = PARTITION_PRIMITIVE_NAMES, *, decimals: bool = True, bounds: sa.Bounds = "spec"
) -> tuple[Any, Any]:
    """A partition column type and a value of it (None = null partition)."""
    t = draw(leaf_types(names, decimals=decimals))
    nan = isinstance(t, PrimitiveType) and t.name in ("float", "double")
    v = draw(sa.nullable(values_for_type(t, bounds=bounds, nan=nan)))
    return t, v


DV_MAX_ROW = 2**63 - 1  # high 32-bit keys must keep their top bit clear (DELTA-DV-013)


@st.composite
def row_index_sets(draw, *, max_runs: int = 6, max_singles: int = 40) -> list[int]:
    """Sorted unique row indexes for a deletion vector: singles and runs around container edges."""
    anchors = st.sampled_from([0, 65_535, 65_536, 2**31, 2**32 - 1, 2**32, 2**40, DV_MAX_ROW - 70_000])
    singles = st.lists(
        st.one_of(st.integers(0, 300), st.integers(0, 2**20), anchors, st.integers(0, DV_MAX_ROW)), max_size=max_singles
    )
    runs = st.lists(st.tuples(anchors, st.integers(1, 5000)), max_size=max_runs)
    out = set(draw(singles))
    for start, length in draw(runs):
        out.update(range(start, min(start + length, DV_MAX_ROW + 1)))
    return sorted(out)


# ---- raw action logs ------------------------------------------------------------------------

READER_WRITER_FEATURES = ("deletionVectors", "v2Checkpoint")
WRITER_ONLY_FEATURES = ("domainMetadata",)
RETENTION_KEY = "delta.deletedFileRetentionDuration"
DV_ENABLE_KEY = "delta.enableDeletionVectors"
HIVE_DEFAULT = "__HIVE_DEFAULT_PARTITION__"


@dataclass
class GeneratedLog:
    """Raw commits (wire dicts per version) plus the state an independent model reconciles them to."""

    commits: list[list[dict]]
    reader_features: frozenset[str] | None
    writer_features: frozenset[str] | None
    partition_columns: tuple[str, ...]
    partition_type: Any
    schema: StructType
    # model of the newest state
    live: dict[tuple[str, str | None], dict] = field(default_factory=dict)
    tombstones: dict[tuple[str, str | None], dict] = field(default_factory=dict)
    txns: dict[str, int] = field(default_factory=dict)
    domains: dict[str, str] = field(default_factory=dict)
    configuration: dict[str, str] = field(default_factory=dict)
    live_by_version: list[frozenset] = field(default_factory=list)

    @property
    def version(self) -> int:
        """The newest version."""
        return len(self.commits) - 1

    @property
    def features(self) -> frozenset[str]:
        """Every table feature listed in the protocol."""
        return (self.reader_features or frozenset()) | (self.writer_features or frozenset())

    def commit_bytes(self, version: int) -> bytes:
        """The NDJSON text of one commit."""
        return b"".join(json.dumps(a, separators=(",", ":")).encode() + b"\n" for a in self.commits[version])

    def write(self, directory: str, upto: int | None = None) -> None:
        """Write the commit files 0..upto into ``directory``/_delta_log."""
        import os

        log_dir = os.path.join(directory, "_delta_log")
        os.makedirs(log_dir, exist_ok=True)
        last = self.version if upto is None else upto
        for v in range(last + 1):
            with open(os.path.join(log_dir, f"{v:020d}.json"), "wb") as fh:
                fh.write(self.commit_bytes(v))


def dv_key(dv: Mapping[str, Any] | None) -> str | None:
    """uniqueId of a wire deletion-vector descriptor (DELTA-DV-011), computed independently."""
    if not dv:
        return None
    uid = dv["storageType"] + dv["pathOrInlineDv"]
    return uid + (f"@{dv['offset']}" if dv.get("offset") is not None else "")


def _wire_protocol(rf: frozenset[str] | None, wf: frozenset[str] | None) -> dict:
    if wf is None:
        return {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}
    body: dict[str, Any] = {"minReaderVersion": 3 if rf is not None else 1, "minWriterVersion": 7}
    if rf is not None:
        body["readerFeatures"] = sorted(rf)
    body["writerFeatures"] = sorted(wf)
    return {"protocol": body}


def _wire_metadata(table_id: str, schema_string: str, partition_columns: Iterable[str], configuration: Mapping[str, str], created: int) -> dict:
    return {
        "metaData": {
            "id": table_id,
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema_string,
            "partitionColumns": list(partition_columns),
            "configuration": dict(configuration),
            "createdTime": created,
        }
    }


def _wire_add(path: str, pv: Mapping[str, str | None], size: int, ts: int, stats: str | None, dv: dict | None, data_change: bool = True) -> dict:
    body: dict[str, Any] = {"path": path, "partitionValues": dict(pv), "size": size, "modificationTime": ts, "dataChange": data_change}
    if stats is not None:
        body["stats"] = stats
    if dv is not None:
        body["deletionVector"] = dv
    return {"add": body}


def _wire_remove(add_body: Mapping[str, Any], ts: int, data_change: bool = True) -> dict:
    body: dict[str, Any] = {
        "path": add_body["path"],
        "deletionTimestamp": ts,
        "dataChange": data_change,
        "extendedFileMetadata": True,
        "partitionValues": dict(add_body["partitionValues"]),
        "size": add_body["size"],
    }
    if add_body.get("deletionVector") is not None:
        body["deletionVector"] = add_body["deletionVector"]
    return {"remove": body}


def _wire_txn(app_id: str, version: int, ts: int) -> dict:
    return {"txn": {"appId": app_id, "version": version, "lastUpdated": ts}}


def _wire_domain(domain: str, configuration: str, removed: bool) -> dict:
    return {"domainMetadata": {"domain": domain, "configuration": configuration, "removed": removed}}


def _wire_commit_info(ts: int, operation: str, extra: Mapping[str, Any]) -> dict:
    return {"commitInfo": {"timestamp": ts, "operation": operation, "operationParameters": {}, **extra}}


def _stats_json(num_records: int, lo: int, hi: int, nulls: int) -> str:
    return json.dumps({"numRecords": num_records, "minValues": {"id": lo}, "maxValues": {"id": hi}, "nullCount": {"id": nulls}}, separators=(",", ":"))


OPS = ("append", "remove", "readd", "dv_update", "txn", "domain", "set_config", "mixed")


@st.composite
def action_logs(
    draw,
    *,
    min_commits: int = 1,
    max_commits: int = 10,
    features: st.SearchStrategy[frozenset[str] | None] | None = None,
    partitioned: st.SearchStrategy[bool] = st.booleans(),
    partition_types: Iterable[str] = ("string", "long", "integer", "date", "timestamp", "boolean"),
    ops: Iterable[str] = None,
    now_ms: int | None = None,
) -> GeneratedLog:
    """Raw Delta commits that respect the writer rules, with a model of their reconciled state.

    ``features``: the table features to list (None in the strategy's output = legacy (1,2)).
    Each commit is one operation: append, remove, re-add a removed file, replace a file's DV,
    set a txn, set/remove a domain, change the configuration, or a mix of append and remove.
    Timestamps sit just before ``now_ms`` so no tombstone expires during a test.
    """
    from reference_impl.delta import partition as dpart
    from reference_impl.delta import schema as dschema

    if features is None:
        features = st.one_of(
            st.none(),
            st.builds(
                lambda rw, w: frozenset(rw) | frozenset(w),
                st.sets(st.sampled_from(READER_WRITER_FEATURES)),
                st.sets(st.sampled_from(WRITER_ONLY_FEATURES)),
            ),
        )
    feats = draw(features)
    if feats is None:
        rf, wf = None, None
    else:
        rw = frozenset(f for f in feats if f in READER_WRITER_FEATURES)
        rf = rw if rw else None
        wf = frozenset(feats)
        if rf is not None:
            rf = frozenset(rw)
    has_dv = bool(wf and "deletionVectors" in wf)
    has_domains = bool(wf and "domainMetadata" in wf)

    is_part = draw(partitioned)
    ptype = draw(leaf_types(tuple(partition_types), decimals=False)) if is_part else None
    fields = [StructField(name="id", type=PrimitiveType(name="long"), nullable=True, metadata={})]
    if is_part:
        fields.append(StructField(name="p", type=ptype, nullable=True, metadata={}))
    schema = StructType(fields=tuple(fields))
    schema_string = dschema.schema_to_json(schema)
    pcols = ("p",) if is_part else ()

    now = now_ms if now_ms is not None else int(time.time() * 1000)
    base = now - 3_600_000
    table_id = str(draw(st.uuids()))
    log = GeneratedLog(
        commits=[], reader_features=rf, writer_features=wf, partition_columns=pcols, partition_type=ptype, schema=schema
    )
    log.configuration = {RETENTION_KEY: "interval 3650 days"}
    if has_dv:  # writers create DVs only while the property is on (DELTA-DV-002)
        log.configuration[DV_ENABLE_KEY] = "true"
    counter = [0]
    removed_pool: list[dict] = []  # add bodies whose key is tombstoned (candidates for re-add)

    def new_add(ts: int) -> dict:
        counter[0] += 1
        n = counter[0]
        pv: dict[str, str | None] = {}
        directory = ""
        if is_part:
            # the literal Hive default name is legal text, but validators read it as a mis-stored null
            value = draw(sa.nullable(values_for_type(ptype, bounds="engines", nan=False).filter(lambda x: x != HIVE_DEFAULT)))
            text = dpart.serialize_partition_value(value, ptype)
            pv["p"] = text
            directory = dpart.partition_directory([("p", text)]) + "/"
        rows = draw(st.integers(1, 1000))
        stats = _stats_json(rows, n * 1000, n * 1000 + rows - 1, 0)
        # add.path is a URI (DELTA-ACTION-017): the Hive-escaped directory name is percent-encoded again
        path = urllib.parse.quote(f"{directory}part-{n:05d}-{uuid.UUID(int=n)}.c000.snappy.parquet", safe="/=")
        return _wire_add(path, pv, 100 + n, ts, stats, None)["add"]

    def new_dv(add_body: dict) -> dict:
        from reference_impl.delta.deletion_vector import inline_deletion_vector

        rows = json.loads(add_body["stats"])["numRecords"] if add_body.get("stats") else 10
        deleted = draw(st.sets(st.integers(0, rows - 1), min_size=1, max_size=min(rows, 8)))
        return inline_deletion_vector(sorted(deleted)).to_wire()

    def key(add_body: Mapping[str, Any]) -> tuple[str, str | None]:
        return add_body["path"], dv_key(add_body.get("deletionVector"))

    n_commits = draw(st.integers(min_commits, max_commits))
    for v in range(n_commits):
        ts = base + v * 1000
        actions: list[dict] = [_wire_commit_info(ts, "WRITE" if v else "CREATE TABLE", {"engineInfo": "lakeconf-strategies"})]
        if v == 0:
            actions.append(_wire_protocol(rf, wf))
            actions.append(_wire_metadata(table_id, schema_string, pcols, log.configuration, base))
            for _ in range(draw(st.integers(0, 3))):
                body = new_add(ts)
                actions.append({"add": body})
                log.live[key(body)] = body
            log.commits.append(actions)
            log.live_by_version.append(frozenset(log.live))
            continue
        choices = [op for op in (ops or OPS) if (op != "dv_update" or has_dv) and (op != "domain" or has_domains)] or ["append"]
        op = draw(st.sampled_from(choices))
        touched: set[str] = set()  # one add and one remove per path per commit (DELTA-ACTION-008)
        if op in ("append", "mixed"):
            for _ in range(draw(st.integers(1, 4))):
                body = new_add(ts)
                actions.append({"add": body})
                log.live[key(body)] = body
                touched.add(body["path"])
        if op in ("remove", "mixed") and log.live:
            live_keys = sorted(k for k in log.live if k[0] not in touched)
            if live_keys:
                victims = draw(st.lists(st.sampled_from(live_keys), min_size=1, max_size=3, unique=True))
                for k in victims:
                    body = log.live.pop(k)
                    rm = _wire_remove(body, ts)
                    actions.append(rm)
                    log.tombstones[k] = rm["remove"]
                    removed_pool.append(body)
                    touched.add(k[0])
        if op == "readd":
            live_paths = {k[0] for k in log.live}
            candidates = [b for b in removed_pool if b["path"] not in live_paths]
            if candidates:
                body = dict(draw(st.sampled_from(candidates)))
                body["modificationTime"] = ts
                actions.append({"add": body})
                log.tombstones.pop(key(body), None)
                log.live[key(body)] = body
        if op == "dv_update" and log.live:
            k = draw(st.sampled_from(sorted(log.live)))
            old = log.live.pop(k)
            rm = _wire_remove(old, ts)
            actions.append(rm)
            log.tombstones[k] = rm["remove"]
            body = dict(old)
            body["deletionVector"] = new_dv(old)
            body["modificationTime"] = ts
            if key(body) == k:  # same DV drawn twice: not a replacement, keep the old one live
                actions.pop()
                log.tombstones.pop(k)
                log.live[k] = old
            else:
                actions.append({"add": body})
                log.tombstones.pop(key(body), None)
                log.live[key(body)] = body
        if op == "txn":
            app = draw(st.sampled_from(["app-a", "app-b", "streaming-💧"]))
            version = draw(st.integers(0, 2**40))
            actions.append(_wire_txn(app, version, ts))
            log.txns[app] = version
        if op == "domain":
            domain = draw(st.sampled_from(["com.example.a", "com.example.b"]))
            if domain in log.domains and draw(st.booleans()):
                actions.append(_wire_domain(domain, log.domains.pop(domain), True))
            else:
                conf = json.dumps({"n": draw(st.integers(0, 99))})
                actions.append(_wire_domain(domain, conf, False))
                log.domains[domain] = conf
        if op == "set_config":
            conf = dict(log.configuration)
            conf[f"user.k{draw(st.integers(0, 3))}"] = draw(st.text(max_size=5))
            if draw(st.booleans()):
                conf.pop(next(iter(sorted(k for k in conf if k.startswith("user."))), ""), None)
            log.configuration = conf
            actions.append(_wire_metadata(table_id, schema_string, pcols, conf, base))
        log.commits.append(actions)
        log.live_by_version.append(frozenset(log.live))
    return log


# ---- writer-neutral table histories --------------------------------------------------------


@dataclass
class TableHistory:
    """Steps for a writer plus the rows (as Python dicts) each version must hold."""

    steps: list[Any]
    schema: StructType
    partition_by: tuple[str, ...]
    expected: list[list[dict]]  # rows after each step that makes a commit (checkpoints make none)
    deletion_vectors: bool
    column_mapping: str | None = None


def _rows_of(table: pa.Table) -> list[dict]:
    return table.to_pylist()


@st.composite
def table_histories(
    draw,
    *,
    max_ops: int = 5,
    max_rows: int = 6,
    dv: st.SearchStrategy[bool] = st.booleans(),
    partitioned: st.SearchStrategy[bool] = st.booleans(),
    checkpoints: bool = True,
    overwrite: bool = True,
    partition_types: tuple[str, ...] = ("string", "long", "integer", "short", "byte", "date", "boolean", "timestamp", "binary", "double"),
    column_mapping: st.SearchStrategy[str | None] = st.just(None),
) -> TableHistory:
    """Create + a sequence of append / delete / overwrite / set-properties / checkpoint steps.

    Every table has a non-null ``id`` long column whose values are unique over the history, so a
    delete predicate (``id % k = r`` or ``id < n``) has an exact expected effect.
    """
    from conformance import model
    from conformance.formats.delta.steps import Checkpoint

    data_schema = draw(engine_schemas(max_fields=3))
    part_name = None
    if draw(partitioned):
        pt = draw(primitive_types(partition_types))
        part_name = "part"
        data_schema = StructType(fields=data_schema.fields + (StructField(name=part_name, type=pt, nullable=True, metadata={}),))
    schema = StructType(fields=(StructField(name="id", type=PrimitiveType(name="long"), nullable=False, metadata={}),) + data_schema.fields)
    use_dv = draw(dv)
    properties = {"delta.enableDeletionVectors": "true"} if use_dv else {}
    features: tuple[str, ...] = ("deletionVectors",) if use_dv else ()
    mode = draw(column_mapping)
    if mode is not None:
        properties["delta.columnMapping.mode"] = mode
        features += ("columnMapping",)
    arrow_schema = arrow_schema_of(schema)
    steps: list[Any] = [model.Create(schema=arrow_schema, partition_by=(part_name,) if part_name else (), properties=properties, features=features)]
    expected: list[list[dict]] = [[]]
    current: list[dict] = []
    next_id = [0]

    def as_stored(table: pa.Table) -> list[dict]:
        """Rows as a reader returns them: an empty partition value is null (DELTA-PART-001)."""
        out = _rows_of(table)
        if part_name is not None:
            for row in out:
                if row[part_name] in ("", b""):
                    row[part_name] = None
        return out

    def rows(min_rows: int = 1) -> pa.Table:
        n = draw(st.integers(min_rows, max_rows))
        ids = list(range(next_id[0], next_id[0] + n))
        next_id[0] += n
        cols = [pa.array(ids, type=pa.int64())]
        for f in schema.fields[1:]:
            vals = sa.nullable(values_for_type(f.type, bounds="engines", nan=False), f.nullable)
            cols.append(pa.array(draw(st.lists(vals, min_size=n, max_size=n)), type=arrow_type_of(f.type)))
        return pa.Table.from_arrays(cols, schema=arrow_schema)

    kinds = ["append", "append", "delete", "set_properties"] + (["overwrite"] if overwrite else []) + (["checkpoint"] if checkpoints else [])
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(kinds))
        if kind == "append":
            t = rows()
            files = draw(st.integers(1, 2))
            steps.append(model.Append(rows=t, files=min(files, t.num_rows)))
            current = current + as_stored(t)
        elif kind == "overwrite":
            t = rows()
            steps.append(model.Overwrite(rows=t))
            current = as_stored(t)
        elif kind == "delete":
            if draw(st.booleans()):
                k = draw(st.integers(2, 4))
                r = draw(st.integers(0, k - 1))
                where = f"id % {k} = {r}"
                current = [row for row in current if row["id"] % k != r]
            else:
                n = draw(st.integers(0, max(next_id[0], 1)))
                where = f"id < {n}"
                current = [row for row in current if row["id"] >= n]
            steps.append(model.Delete(where=where))
        elif kind == "set_properties":
            steps.append(model.SetProperties(properties={f"user.prop{draw(st.integers(0, 2))}": draw(st.from_regex(r"[a-z0-9]{0,5}", fullmatch=True))}))
        elif kind == "checkpoint":
            steps.append(Checkpoint(kind="classic"))
            continue
        expected.append(list(current))
    return TableHistory(steps=steps, schema=schema, partition_by=(part_name,) if part_name else (), expected=expected, deletion_vectors=use_dv,
                        column_mapping=mode)


def timestamp_partition_forms(value: dt.datetime) -> list[str]:
    """Every textual form the spec lets a timestamp partition value take for one UTC instant (DELTA-PART-004)."""
    naive = value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
    forms = [naive.strftime("%Y-%m-%d %H:%M:%S.%f"), naive.strftime("%Y-%m-%dT%H:%M:%S.%fZ")]
    if naive.microsecond == 0:
        forms.append(naive.strftime("%Y-%m-%d %H:%M:%S"))
    # strftime does not zero-pad years below 1000 on every platform
    return [f if f[:4].isdigit() and f[4] == "-" else f"{naive.year:04d}" + f[f.index("-"):] for f in forms]


# ---- mutations that break one named rule ----------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """A way to break one rule in a valid generated log: ``apply(files, log, draw)`` edits the files.

    ``files`` maps root-relative paths to bytes (None deletes the file); commits are rewritten
    through ``set_commit``. ``applies(log)`` says whether the log has what the mutation needs.
    """

    name: str
    rule: str
    applies: Any
    apply: Any
    log_kwargs: Mapping[str, Any] = field(default_factory=dict)  # how to draw logs it applies to

    def logs(self) -> st.SearchStrategy[GeneratedLog]:
        """Generated logs shaped so that this mutation (usually) applies."""
        kwargs = {"min_commits": 1, "max_commits": 6, **self.log_kwargs}
        return action_logs(**kwargs)


def log_files(log: GeneratedLog) -> dict[str, bytes | None]:
    """The generated log as root-relative path -> bytes."""
    return {f"_delta_log/{v:020d}.json": log.commit_bytes(v) for v in range(log.version + 1)}


def set_commit(files: dict, version: int, actions: list[dict]) -> None:
    """Replace one commit file with ``actions`` as NDJSON."""
    files[f"_delta_log/{version:020d}.json"] = b"".join(json.dumps(a, separators=(",", ":")).encode() + b"\n" for a in actions)


def _copy(actions: list[dict]) -> list[dict]:
    return json.loads(json.dumps(actions))


def _adds(log: GeneratedLog) -> list[tuple[int, int]]:
    return [(v, i) for v, c in enumerate(log.commits) for i, a in enumerate(c) if "add" in a]


def _first_with(log: GeneratedLog, kind: str) -> list[tuple[int, int]]:
    return [(v, i) for v, c in enumerate(log.commits) for i, a in enumerate(c) if kind in a]


def _edit_action(kind: str, edit):
    """A mutation body that picks one action of ``kind`` and edits its body in place."""

    def apply(files, log, draw):
        v, i = draw(st.sampled_from(_first_with(log, kind)))
        actions = _copy(log.commits[v])
        edit(actions[i][kind], draw)
        set_commit(files, v, actions)

    return apply


def _append_commit(make):
    """A mutation body that appends one new commit made by ``make(log, draw)``."""

    def apply(files, log, draw):
        set_commit(files, log.version + 1, make(log, draw))

    return apply


def _gap(files, log, draw):
    v = draw(st.integers(1, log.version - 1))
    files[f"_delta_log/{v:020d}.json"] = None


def _pretty(files, log, draw):
    v = draw(st.integers(0, log.version))
    actions = log.commits[v]
    i = draw(st.integers(0, len(actions) - 1))
    lines = [json.dumps(a, separators=(",", ":")) for a in actions]
    lines[i] = json.dumps(actions[i], indent=2)
    files[f"_delta_log/{v:020d}.json"] = ("\n".join(lines) + "\n").encode()


def _unpadded(files, log, draw):
    files[f"_delta_log/{log.version + 1}.json"] = b'{"commitInfo":{}}\n'


def _dup_in_v0(kind):
    def apply(files, log, draw):
        actions = _copy(log.commits[0])
        j = next(i for i, a in enumerate(actions) if kind in a)
        actions.insert(j + 1, _copy([actions[j]])[0])
        set_commit(files, 0, actions)

    return apply


def _drop_metadata(files, log, draw):
    set_commit(files, 0, [a for a in _copy(log.commits[0]) if "metaData" not in a])


def _live_add(log: GeneratedLog, draw) -> dict:
    return json.loads(json.dumps(draw(st.sampled_from(sorted(log.live.values(), key=lambda b: b["path"])))))


def _readd_and_remove(log, draw):
    body = _live_add(log, draw)
    return [{"remove": {"path": body["path"], "deletionTimestamp": 1, "dataChange": True,
                        **({"deletionVector": body["deletionVector"]} if body.get("deletionVector") else {})}},
            {"add": body}]


def _two_adds_same_path(log, draw):
    body = _live_add(log, draw)
    other = dict(body, size=body["size"] + 1)
    return [{"add": body}, {"add": other}]


def _dup_txn(log, draw):
    return [{"txn": {"appId": "dup", "version": 1}}, {"txn": {"appId": "dup", "version": 2}}]


def _identical_adds(log, draw):
    body = _live_add(log, draw)
    return [{"add": body}, {"add": body}]


def _sidecar_in_commit(log, draw):
    return [{"sidecar": {"path": "x.parquet", "sizeInBytes": 1, "modificationTime": 1}}]


def _tmp_path(log, draw):
    add = _live_add(log, draw)
    add["path"] = "_tmp/" + add["path"].rsplit("/", 1)[-1] + ".new.parquet"
    return [{"add": add}]


def _domain_without_feature(log, draw):
    return [{"domainMetadata": {"domain": "com.example.x", "configuration": "{}", "removed": False}}]


def _dv_without_feature(log, draw):
    from reference_impl.delta.deletion_vector import inline_deletion_vector

    add = _live_add(log, draw)
    rm = _wire_remove(add, 1)
    add["deletionVector"] = inline_deletion_vector([0]).to_wire()
    return [rm, {"add": add}]


def _protocol_edit(edit):
    def apply(files, log, draw):
        actions = _copy(log.commits[0])
        for a in actions:
            if "protocol" in a:
                edit(a["protocol"])
        set_commit(files, 0, actions)

    return apply


def _schema_edit(files, log, draw):
    actions = _copy(log.commits[0])
    for a in actions:
        if "metaData" in a:
            schema = json.loads(a["metaData"]["schemaString"])
            del schema["fields"][0]["nullable"]
            a["metaData"]["schemaString"] = json.dumps(schema)
    set_commit(files, 0, actions)


def _drop_partition_key(body, draw):
    body["partitionValues"] = {}


def _bool_partition_upper(body, draw):
    if body["partitionValues"].get("p") in ("true", "false"):
        body["partitionValues"]["p"] = body["partitionValues"]["p"].upper()
    else:
        body["partitionValues"]["p"] = "TRUE"


def _has_ptype(*names):
    return lambda log: bool(log.partition_columns) and getattr(log.partition_type, "name", None) in names and bool(_adds(log))


def _set(key, value):
    def edit(body, draw):
        body[key] = value

    return edit


def _drop(key):
    def edit(body, draw):
        body.pop(key, None)

    return edit


def _dv_edit(edit):
    def apply(files, log, draw):
        cands = [(v, i) for v, i in _first_with(log, "add") if log.commits[v][i]["add"].get("deletionVector")]
        v, i = draw(st.sampled_from(cands))
        actions = _copy(log.commits[v])
        edit(actions[i]["add"]["deletionVector"])
        set_commit(files, v, actions)

    return apply


def _has_dv_add(log):
    return any(a["add"].get("deletionVector") for c in log.commits for a in c if "add" in a)


def _legacy(log):
    return log.writer_features is None


_LEGACY = {"features": st.just(None)}
_REMOVES = {"min_commits": 3, "ops": ("append", "remove", "mixed")}
_DVS = {"min_commits": 3, "features": st.just(frozenset({"deletionVectors"})), "ops": ("append", "dv_update")}

MUTATIONS: tuple[Mutation, ...] = (
    Mutation("gap in versions", "DELTA-LOG-001", lambda log: log.version >= 2, _gap, {"min_commits": 3}),
    Mutation("data file under _tmp/", "DELTA-LOG-002", lambda log: bool(log.live), _append_commit(_tmp_path)),
    Mutation("unpadded commit name", "DELTA-LOG-004", lambda log: True, _unpadded),
    Mutation("pretty-printed action", "DELTA-LOG-005", lambda log: True, _pretty),
    Mutation("two protocol actions in one commit", "DELTA-LOG-007", lambda log: True, _dup_in_v0("protocol")),
    Mutation("two txn with one appId in a commit", "DELTA-LOG-008", lambda log: True, _append_commit(_dup_txn)),
    Mutation("add and remove of one file in a commit", "DELTA-LOG-009", lambda log: bool(log.live), _append_commit(_readd_and_remove)),
    Mutation("no metaData in version 0", "DELTA-ACTION-001", lambda log: True, _drop_metadata),
    Mutation("two metaData actions in one commit", "DELTA-ACTION-003", lambda log: True, _dup_in_v0("metaData")),
    Mutation("two adds of one path in a commit", "DELTA-ACTION-008", lambda log: bool(log.live), _append_commit(_two_adds_same_path)),
    Mutation("identical add repeated", "DELTA-ACTION-012", lambda log: bool(log.live), _append_commit(_identical_adds)),
    Mutation("add without size", "DELTA-ACTION-016", lambda log: bool(_adds(log)), _edit_action("add", _drop("size"))),
    Mutation("remove without dataChange", "DELTA-ACTION-020", lambda log: bool(_first_with(log, "remove")), _edit_action("remove", _drop("dataChange")), _REMOVES),
    Mutation("extendedFileMetadata remove without size", "DELTA-ACTION-021", lambda log: bool(_first_with(log, "remove")), _edit_action("remove", _drop("size")), _REMOVES),
    Mutation("empty deletionVector object", "DELTA-ACTION-022", lambda log: bool(_adds(log)), _edit_action("add", _set("deletionVector", {}))),
    Mutation("txn without version", "DELTA-ACTION-023", lambda log: bool(_first_with(log, "txn")), _edit_action("txn", _drop("version")), {"min_commits": 3, "ops": ("append", "txn")}),
    Mutation("protocol without minWriterVersion", "DELTA-ACTION-025", lambda log: True, _protocol_edit(lambda p: p.pop("minWriterVersion"))),
    Mutation("writerFeatures on a legacy protocol", "DELTA-FEATURE-001", _legacy, _protocol_edit(lambda p: p.update(writerFeatures=[])), _LEGACY),
    Mutation("reader version 3 with writer version 5", "DELTA-FEATURE-003", _legacy, _protocol_edit(lambda p: p.update(minReaderVersion=3, minWriterVersion=5, readerFeatures=[])), _LEGACY),
    Mutation("sidecar action in a commit", "DELTA-REPLAY-010", lambda log: True, _append_commit(_sidecar_in_commit)),
    Mutation("add without a partition value", "DELTA-WRITER-003", lambda log: bool(log.partition_columns) and bool(_adds(log)), _edit_action("add", _drop_partition_key), {"partitioned": st.just(True)}),
    Mutation("boolean partition value TRUE", "DELTA-PART-007", _has_ptype("boolean"), _edit_action("add", _bool_partition_upper), {"partitioned": st.just(True), "partition_types": ("boolean",)}),
    Mutation("integer partition value 1e3", "DELTA-PART-002", _has_ptype("long", "integer"), _edit_action("add", lambda b, d: b["partitionValues"].update(p="1e3")), {"partitioned": st.just(True), "partition_types": ("long", "integer")}),
    Mutation("domainMetadata without the feature", "DELTA-DOMAIN-001", lambda log: not (log.writer_features and "domainMetadata" in log.writer_features), _append_commit(_domain_without_feature), _LEGACY),
    Mutation("deletion vector on a legacy table", "DELTA-DV-001", lambda log: _legacy(log) and bool(log.live), _append_commit(_dv_without_feature), _LEGACY),
    Mutation("DV storageType x", "DELTA-DV-005", _has_dv_add, _dv_edit(lambda d: d.update(storageType="x")), _DVS),
    Mutation("inline DV with an offset", "DELTA-DV-007", _has_dv_add, _dv_edit(lambda d: d.update(offset=1)), _DVS),
    Mutation("DV cardinality off by one", "DELTA-DV-010", _has_dv_add, _dv_edit(lambda d: d.update(cardinality=d["cardinality"] + 1)), _DVS),
    Mutation("schema field without nullable", "DELTA-SCHEMA-002", lambda log: True, _schema_edit),
)


@st.composite
def mutated_logs(draw, logs: st.SearchStrategy[GeneratedLog] | None = None) -> tuple[GeneratedLog, Mutation, dict]:
    """A valid generated log, one applicable mutation, and the mutated files (path -> bytes | None)."""
    log = draw(logs if logs is not None else action_logs(min_commits=1, max_commits=6))
    mutation = draw(st.sampled_from([m for m in MUTATIONS if m.applies(log)]))
    files = log_files(log)
    mutation.apply(files, log, draw)
    return log, mutation, files
