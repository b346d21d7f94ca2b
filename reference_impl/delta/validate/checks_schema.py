"""Schema Serialization Format, Column Mapping, Type Widening and other schema-level rules."""

from __future__ import annotations

from typing import Any, Iterator

from reference_impl.common import jsontext
from reference_impl.delta.validate.context import ADD, DOMAIN, METADATA, VERSION_KEY, Context
from reference_impl.delta.validate.meta import (
    D_CLUSTERING, DECIMAL_RE, M_GENERATION, M_ID, M_IDENTITY_EXPLICIT, M_IDENTITY_START, M_IDENTITY_STEP,
    M_PHYSICAL, M_TYPE_CHANGES, P_ICEBERG_V1, P_ICEBERG_V2, P_MAPPING_MODE, P_MAX_COLUMN_ID, P_ROW_ID_COL,
    P_ROW_VERSION_COL, P_TYPE_WIDENING, PRIMITIVES, Proto, config, iter_fields, mapping_mode, partition_columns,
    field_by_path, schema_of, top_fields, truthy, type_children,
)
from reference_impl.delta.validate.registry import V, Violation, check


def _metadata_actions(ctx: Context):
    for v in ctx.versions:
        for a in ctx.commits[v].of(METADATA):
            if isinstance(a.body, dict):
                yield v, a


def _type_problems(t: Any, where: str) -> Iterator[Violation]:
    if isinstance(t, str):
        m = DECIMAL_RE.match(t)
        if m:
            p, s = int(m.group(1)), int(m.group(2))
            if not (1 <= p <= 38 and s <= p):
                yield V("SCHEMA-006", f"decimal({p},{s}) out of range (precision 1..38, scale <= precision)", where)
        elif t not in PRIMITIVES:
            yield V("SCHEMA-006", f"unknown primitive type {t!r}", where)
        return
    if not isinstance(t, dict):
        yield V("SCHEMA-006", f"type must be a string or an object, got {t!r:.40}", where)
        return
    kind = t.get("type")
    if kind == "struct":
        yield from _struct_problems(t, where)
    elif kind == "array":
        if "elementType" not in t or not isinstance(t.get("containsNull"), bool):
            yield V("SCHEMA-003", "array type needs elementType and a boolean containsNull", where)
        if "elementType" in t:
            yield from _type_problems(t["elementType"], where + ".element")
    elif kind == "map":
        if "keyType" not in t or "valueType" not in t or not isinstance(t.get("valueContainsNull"), bool):
            yield V("SCHEMA-004", "map type needs keyType, valueType and a boolean valueContainsNull", where)
        for k, role in (("keyType", "key"), ("valueType", "value")):
            if k in t:
                yield from _type_problems(t[k], f"{where}.{role}")
    elif kind == "variant":
        return
    else:
        yield V("SCHEMA-006", f"unknown type object {kind!r}", where)


def _struct_problems(t: dict, where: str) -> Iterator[Violation]:
    fields = t.get("fields")
    if not isinstance(fields, list):
        yield V("SCHEMA-001", "struct type without a fields array", where)
        return
    names: dict[str, str] = {}
    for i, f in enumerate(fields):
        fw = f"{where}.{f.get('name', i) if isinstance(f, dict) else i}"
        if not isinstance(f, dict):
            yield V("SCHEMA-002", "struct field is not an object", fw)
            continue
        bad = [k for k, ok in (("name", isinstance(f.get("name"), str)), ("type", "type" in f),
                               ("nullable", isinstance(f.get("nullable"), bool)),
                               ("metadata", isinstance(f.get("metadata"), dict))) if not ok]
        if bad:
            yield V("SCHEMA-002", f"struct field lacks or mistypes {', '.join(bad)}", fw)
        if isinstance(f.get("name"), str):
            low = f["name"].lower()
            if low in names:
                yield V("SCHEMA-005", f"column names {names[low]!r} and {f['name']!r} differ only by case", fw)
            names[low] = f["name"]
        if "type" in f:
            yield from _type_problems(f["type"], fw)


@check("SCHEMA-001", "SCHEMA-002", "SCHEMA-003", "SCHEMA-004", "SCHEMA-005", "SCHEMA-006")
def schema_string(ctx: Context) -> Iterator[Violation]:
    """schemaString is a Spark-style struct JSON with valid fields and types."""
    for v, a in _metadata_actions(ctx):
        s = a.body.get("schemaString")
        w = a.where + " metaData.schemaString"
        if not isinstance(s, str):
            continue
        try:
            obj = jsontext.loads(s)
        except ValueError:
            yield V("SCHEMA-001", "schemaString is not JSON", w)
            continue
        if not isinstance(obj, dict) or obj.get("type") != "struct":
            yield V("SCHEMA-001", "schemaString is not a struct type", w)
            continue
        yield from _struct_problems(obj, w)


def _void_only(t: Any) -> bool:
    if t == "void":
        return True
    if isinstance(t, dict) and t.get("type") == "struct":
        fs = top_fields(t)
        return bool(fs) and all(_void_only(f.get("type")) for f in fs)
    return False


def _void_blocks_writes(schema: Any) -> str | None:
    fs = top_fields(schema)
    if fs and all(_void_only(f.get("type")) for f in fs):
        return "every column is void"
    for ref in iter_fields(schema):
        t = ref.type
        if isinstance(t, dict) and t.get("type") == "struct" and _void_only(t):
            return f"struct {'.'.join(ref.path)} has only void fields"
        if ref.in_collection and t == "void":
            return f"void inside an array or map at {'.'.join(ref.path)}"

    def coll(t):
        for _, c in type_children(t):
            if c == "void" or _void_only(c):
                return True
            if coll(c):
                return True
        return False

    for ref in iter_fields(schema):
        if coll(ref.type):
            return f"void inside an array or map at {'.'.join(ref.path)}"
    return None


@check("SCHEMA-011")
def void_blocks_data_writes(ctx: Context) -> Iterator[Violation]:
    """No new data files while the schema has void in a collection, an all-void struct or only void columns."""
    for v in ctx.versions:
        st = ctx.states.get(v)
        if st is None:
            continue
        reason = _void_blocks_writes(schema_of(st.metadata))
        if reason:
            for a in ctx.commits[v].of(ADD):
                if isinstance(a.body, dict) and a.body.get("dataChange") is True:
                    yield V("SCHEMA-011", f"data file written while {reason}", a.where)


@check("COLMAP-001", "COLMAP-003", "COLMAP-004", "COLMAP-009")
def column_mapping(ctx: Context) -> Iterator[Violation]:
    """Mode is valid; every field has a unique id and physical name; physical paths never reused; maxColumnId grows."""
    seen_paths: dict[tuple, int] = {}   # physical path -> last version present
    prev_max = None
    prev_paths: set = set()
    for v, a in _metadata_actions(ctx):
        cfg = config(a.body)
        w = a.where + " metaData.configuration"
        mode = cfg.get(P_MAPPING_MODE)
        if mode is not None and mode not in ("none", "id", "name"):
            yield V("COLMAP-001", f"{P_MAPPING_MODE}={mode!r} is not none, id or name", w)
            continue
        schema = schema_of(a.body)
        if mode not in ("id", "name") or schema is None:
            prev_paths = set()
            continue
        ids: dict[int, str] = {}
        max_id = -1
        paths = set()
        siblings: dict[tuple, set] = {}
        for ref in iter_fields(schema, mode):
            fid, pn = ref.meta.get(M_ID), ref.meta.get(M_PHYSICAL)
            fw = f"{a.where} schema field {'.'.join(ref.path)}"
            if not (isinstance(fid, int) and not isinstance(fid, bool) and -(2**31) <= fid < 2**31) or not isinstance(pn, str) or not pn:
                yield V("COLMAP-003", "field lacks a 32-bit columnMapping.id or a physicalName", fw)
                continue
            if fid in ids:
                yield V("COLMAP-003", f"columnMapping.id {fid} used by {ids[fid]} and {'.'.join(ref.path)}", fw)
            ids[fid] = ".".join(ref.path)
            max_id = max(max_id, fid)
            parent = ref.phys[:-1]
            if pn in siblings.setdefault(parent, set()):
                yield V("COLMAP-004", f"physical name {pn} used twice under one parent", fw)
            siblings[parent].add(pn)
            paths.add(ref.phys)
        for path in paths:
            if path in seen_paths and path not in prev_paths:
                yield V("COLMAP-004", f"physical field path {'.'.join(path)} was dropped and is reused", a.where)
        for path in paths:
            seen_paths[path] = v
        prev_paths = paths
        mx = cfg.get(P_MAX_COLUMN_ID)
        try:
            mxi = int(mx) if mx is not None else None
        except ValueError:
            mxi = None
        if mxi is None:
            yield V("COLMAP-009", f"{P_MAX_COLUMN_ID} missing or not an integer", w)
        else:
            if mxi < max_id:
                yield V("COLMAP-009", f"{P_MAX_COLUMN_ID}={mxi} below the highest column id {max_id}", w)
            if prev_max is not None and mxi < prev_max:
                yield V("COLMAP-009", f"{P_MAX_COLUMN_ID} decreased from {prev_max} to {mxi}", w)
            prev_max = mxi


# ------------------------------------------------------------------ type widening
_INTS = ["byte", "short", "integer", "long"]


def _dec(t: str):
    m = DECIMAL_RE.match(t) if isinstance(t, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def widening_ok(src: str, dst: str, iceberg: bool = False) -> bool:
    """Whether src -> dst is a widening the spec allows (Iceberg-compatible subset when iceberg)."""
    if src in _INTS and dst in _INTS:
        return _INTS.index(src) < _INTS.index(dst)
    if src == "float" and dst == "double":
        return True
    if src in ("byte", "short", "integer") and dst == "double":
        return not iceberg
    if src == "date" and dst == "timestamp_ntz":
        return not iceberg
    d_src, d_dst = _dec(src), _dec(dst)
    if d_src and d_dst:
        k1, k2 = d_dst[0] - d_src[0], d_dst[1] - d_src[1]
        return k1 >= k2 >= 0 and (k1 > 0 or k2 > 0) and (not iceberg or k2 == 0)
    if d_dst and src in _INTS:
        if iceberg:
            return False
        base = 20 if src == "long" else 10
        k2 = d_dst[1]
        k1 = d_dst[0] - base
        return k1 >= k2 >= 0
    return False


def _leaf_type(t: Any, path: list[str]) -> Any:
    for part in path:
        if not isinstance(t, dict):
            return None
        kids = dict(type_children(t))
        if part not in kids:
            return None
        t = kids[part]
    return t


@check("TYPEWIDEN-002", "TYPEWIDEN-003", "TYPEWIDEN-004", "TYPEWIDEN-005", "TYPEWIDEN-006")
def type_widening(ctx: Context) -> Iterator[Violation]:
    """Recorded type changes are allowed widenings, well-formed, and every type change is recorded."""
    prev_schema = None
    prev_mode = "none"
    for v, a in _metadata_actions(ctx):
        schema = schema_of(a.body)
        cfg = config(a.body)
        st = ctx.states.get(v)
        p = Proto.of(st.protocol if st else None)
        iceberg = p.any_list("icebergCompatV1", "icebergCompatV2") or truthy(cfg.get(P_ICEBERG_V1)) or truthy(cfg.get(P_ICEBERG_V2))
        for ref in iter_fields(schema):
            tc = ref.meta.get(M_TYPE_CHANGES)
            if tc is None:
                continue
            fw = f"{a.where} schema field {'.'.join(ref.path)} {M_TYPE_CHANGES}"
            if isinstance(tc, str):
                try:
                    tc = jsontext.loads(tc)
                except ValueError:
                    tc = None
            if not isinstance(tc, list) or not all(isinstance(e, dict) and isinstance(e.get("fromType"), str)
                                                   and isinstance(e.get("toType"), str) for e in tc):
                yield V("TYPEWIDEN-005", "typeChanges must be a list of {fromType, toType[, fieldPath]}", fw)
                continue
            for e in tc:
                fp = e.get("fieldPath")
                if fp is not None:
                    parts = fp.split(".") if isinstance(fp, str) else None
                    if not parts or any(x not in ("key", "value", "element") for x in parts) or _leaf_type(ref.type, parts) is None:
                        yield V("TYPEWIDEN-006", f"fieldPath {fp!r} does not name a key/value/element of the field", fw)
                        continue
                if e["fromType"] == "void":
                    continue
                if not widening_ok(e["fromType"], e["toType"]):
                    yield V("TYPEWIDEN-002", f"{e['fromType']} -> {e['toType']} is not a supported widening", fw)
                elif iceberg and not widening_ok(e["fromType"], e["toType"], iceberg=True):
                    yield V("TYPEWIDEN-004", f"{e['fromType']} -> {e['toType']} is not allowed with Iceberg compatibility", fw)
        if prev_schema is not None and schema is not None:
            mode = mapping_mode(a.body)
            for ref in iter_fields(schema):
                old = _match(prev_schema, ref, mode, prev_mode)
                if old is None:
                    continue
                ot, nt = old.get("type"), ref.type
                if isinstance(ot, str) and isinstance(nt, str) and ot != nt and ot != "void":
                    fw = f"{a.where} schema field {'.'.join(ref.path)}"
                    recorded = ref.meta.get(M_TYPE_CHANGES)
                    try:
                        recorded = jsontext.loads(recorded) if isinstance(recorded, str) else recorded
                    except ValueError:
                        recorded = None  # not JSON: no entry for the change either
                    if not (isinstance(recorded, list) and any(isinstance(e, dict) and e.get("fromType") == ot
                                                               and e.get("toType") == nt for e in recorded)):
                        yield V("TYPEWIDEN-005", f"type changed {ot} -> {nt} without a delta.typeChanges entry", fw)
                    elif not truthy(cfg.get(P_TYPE_WIDENING)):
                        yield V("TYPEWIDEN-003", f"type changed {ot} -> {nt} while delta.enableTypeWidening is not true", fw)
        prev_schema, prev_mode = schema, mapping_mode(a.body)


def _match(prev_schema, ref, mode, prev_mode):
    """The same field in an older schema: by column id under mapping, else by logical path."""
    fid = ref.meta.get(M_ID)
    if mode in ("id", "name") and prev_mode in ("id", "name") and fid is not None:
        for old in iter_fields(prev_schema, prev_mode):
            if old.meta.get(M_ID) == fid:
                return old.field
        return None
    for old in iter_fields(prev_schema):
        if old.path == ref.path:
            return old.field
    return None


@check("SCHEMA-009", "WRITER-022")
def reserved_column_metadata(ctx: Context) -> Iterator[Violation]:
    """Defined delta.* column metadata is kept across schema updates; identity start/step/explicit fixed, step != 0."""
    prev = None
    for v, a in _metadata_actions(ctx):
        schema = schema_of(a.body)
        for ref in iter_fields(schema):
            step = ref.meta.get(M_IDENTITY_STEP)
            if step is not None and (step == 0 or step == "0"):
                yield V("WRITER-022", "identity step is 0", f"{a.where} schema field {'.'.join(ref.path)}")
        if prev is not None and schema is not None:
            for ref in iter_fields(schema):
                old = next((o for o in iter_fields(prev) if o.path == ref.path), None)
                if old is None:
                    continue
                fw = f"{a.where} schema field {'.'.join(ref.path)}"
                if M_GENERATION in old.meta and M_GENERATION not in ref.meta:
                    yield V("SCHEMA-009", f"{M_GENERATION} dropped from a surviving column", fw)
                if M_ID in old.meta and M_ID in ref.meta and old.meta[M_ID] == ref.meta[M_ID] and \
                        M_PHYSICAL in old.meta and ref.meta.get(M_PHYSICAL) != old.meta[M_PHYSICAL]:
                    yield V("SCHEMA-009", "columnMapping.physicalName changed for a surviving column", fw)
                for k in (M_IDENTITY_START, M_IDENTITY_STEP, M_IDENTITY_EXPLICIT):
                    if k in old.meta and ref.meta.get(k) != old.meta[k]:
                        yield V("WRITER-022", f"{k} changed from {old.meta[k]!r} to {ref.meta.get(k)!r}", fw)
        prev = schema if schema is not None else prev


@check("ROWTRACK-010")
def materialized_row_columns(ctx: Context) -> Iterator[Violation]:
    """Materialized row-tracking column names differ from every (physical) schema column name."""
    for v, a in _metadata_actions(ctx):
        cfg = config(a.body)
        mode = mapping_mode(a.body)
        names = set()
        for ref in iter_fields(schema_of(a.body), mode):
            if len(ref.path) == 1:
                names.add(ref.path[0])
                names.add(ref.phys[0])
        for k in (P_ROW_ID_COL, P_ROW_VERSION_COL):
            if cfg.get(k) in names:
                yield V("ROWTRACK-010", f"{k}={cfg[k]!r} collides with a schema column", a.where + f" metaData.configuration.{k}")
        if cfg.get(P_ROW_ID_COL) is not None and cfg.get(P_ROW_ID_COL) == cfg.get(P_ROW_VERSION_COL):
            yield V("ROWTRACK-010", "materialized row id and row commit version columns share a name", a.where)


@check("VARIANT-007")
def variant_not_partition(ctx: Context) -> Iterator[Violation]:
    """Variant columns are never partition or clustering columns."""
    for v, a in _metadata_actions(ctx):
        schema = schema_of(a.body)
        for c in partition_columns(a.body):
            f = field_by_path(schema, [c])
            if f is not None and f.get("type") == "variant":
                yield V("VARIANT-007", f"variant column {c} is a partition column", a.where)
    for v in ctx.versions:
        st = ctx.states.get(v)
        for a in ctx.commits[v].of(DOMAIN):
            if isinstance(a.body, dict) and a.body.get("domain") == D_CLUSTERING and st is not None:
                for path in clustering_columns(a.body) or []:
                    f = field_by_path(schema_of(st.metadata), path, mapping_mode(st.metadata), physical=True)
                    if f is not None and f.get("type") == "variant":
                        yield V("VARIANT-007", f"variant column {'.'.join(path)} is a clustering column", a.where)


def clustering_columns(body: dict) -> list[list[str]] | None:
    """Clustering column name paths of a delta.clustering domain action (None if malformed)."""
    try:
        cfg = jsontext.loads(body.get("configuration") or "")
    except (ValueError, TypeError):
        return None
    cols = cfg.get("clusteringColumns") if isinstance(cfg, dict) else None
    if not isinstance(cols, list):
        return None
    # Delta Spark writes lists of name parts; the spec's example shows plain names: accept both
    cols = [[c] if isinstance(c, str) else c for c in cols]
    if not all(isinstance(c, list) and c and all(isinstance(x, str) for x in c) for c in cols):
        return None
    return cols


@check("CLUSTER-003")
def clustering_domain(ctx: Context) -> Iterator[Violation]:
    """A clustered table records its clustering columns (physical names) in the delta.clustering domain."""
    for v in ctx.versions:
        st = ctx.states.get(v)
        if st is None:
            continue
        p = Proto.of(st.protocol)
        if not (p.writer >= 7 and "clustering" in (p.wf or ()) and "domainMetadata" in (p.wf or ())):
            continue
        c = ctx.commits[v]
        dom = st.domains.get(D_CLUSTERING)
        if dom is None:
            if c.of("protocol") or c.of(DOMAIN):
                yield V("CLUSTER-003", "clustered table without a delta.clustering domain", c.info.path)
            continue
        if not any(isinstance(a.body, dict) and a.body.get("domain") == D_CLUSTERING for a in c.of(DOMAIN)) and not c.of(METADATA):
            continue
        cols = clustering_columns(dom)
        if cols is None:
            yield V("CLUSTER-003", 'delta.clustering configuration is not {"clusteringColumns": [[...]]}', c.info.path)
            continue
        schema, mode = schema_of(st.metadata), mapping_mode(st.metadata)
        for path in cols:
            if field_by_path(schema, path, mode, physical=True) is None:
                yield V("CLUSTER-003", f"clustering column {'.'.join(path)} is not a (physical) column name", c.info.path)


@check("VARIANT-008", "VARIANT-009", "WRITER-019")
def column_defaults_and_generation(ctx: Context) -> Iterator[Violation]:
    """No variant generated columns; variant defaults are null; a default is not set by the operation adding the column."""
    from reference_impl.delta.validate.meta import M_DEFAULT

    prev = None
    for v, a in _metadata_actions(ctx):
        schema = schema_of(a.body)
        old_paths = {r.path for r in iter_fields(prev)} if prev is not None else None
        for ref in iter_fields(schema):
            fw = f"{a.where} schema field {'.'.join(ref.path)}"
            if ref.type == "variant" and M_GENERATION in ref.meta:
                yield V("VARIANT-008", "a generated column cannot be of type variant", fw)
            default = ref.meta.get(M_DEFAULT)
            if ref.type == "variant" and default is not None and str(default).strip().upper() != "NULL":
                yield V("VARIANT-009", f"variant column default {default!r} is not null", fw)
            if default is not None and old_paths is not None and ref.path not in old_paths:
                yield V("WRITER-019", "column default set in the operation that adds the column", fw)
        prev = schema if schema is not None else prev


@check("TYPEWIDEN-007")
def type_changes_kept(ctx: Context) -> Iterator[Violation]:
    """delta.typeChanges is not dropped while files written before the change are still live."""
    since: dict[tuple, int] = {}
    prev: dict[tuple, Any] = {}
    for v, a in _metadata_actions(ctx):
        cur = {r.path: r.meta.get(M_TYPE_CHANGES) for r in iter_fields(schema_of(a.body))}
        for path, tc in cur.items():
            if tc is not None:
                since.setdefault(path, v)
        st = ctx.states.get(v)
        for path, old in prev.items():
            if old is not None and path in cur and cur[path] is None and st is not None:
                if any(b.get(VERSION_KEY, v) < since.get(path, v) for b in st.live.values()):
                    yield V("TYPEWIDEN-007", f"delta.typeChanges dropped from {'.'.join(path)} while older files are live",
                            a.where)
                since.pop(path, None)
        prev = cur
