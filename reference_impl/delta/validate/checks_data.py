"""Consistency Between Table Metadata and Data Files: statistics, footers, CDC files, constraints."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any, Iterator

from reference_impl.common import jsontext
from reference_impl.delta.validate.context import ADD, CDC, Action, Context, State
from reference_impl.delta.validate.meta import (
    D_CLUSTERING, M_GENERATION, M_ID, M_INVARIANTS, M_TYPE_CHANGES, P_CONSTRAINT_PREFIX, P_ICEBERG_V1, P_ICEBERG_V2,
    P_VARIANT_SHREDDING, Proto, config, field_by_path, iter_fields, mapping_mode,
    partition_columns, physical_name, schema_of, top_fields, truthy,
)
from reference_impl.delta.validate.registry import V, Violation, check

STATS_KEYS = {"numRecords", "tightBounds", "minValues", "maxValues", "nullCount"}


def _adds(ctx: Context, kinds=(ADD,)) -> Iterator[tuple[Action, State, str]]:
    """Each distinct (path) add with the state of its commit and its readable root-relative path."""
    seen = set()
    for v in ctx.versions:
        st = ctx.states.get(v)
        if st is None:
            continue
        for a in ctx.commits[v].actions:
            if a.key in kinds and isinstance(a.body, dict) and isinstance(a.body.get("path"), str):
                key = (a.key, a.body["path"], json.dumps(a.body.get("deletionVector"), sort_keys=True))
                if key in seen:
                    continue
                seen.add(key)
                rel = ctx.rel(a.body["path"])
                if rel is not None and ctx.footer(rel) is not None:
                    yield a, st, rel


def _stats(body: dict) -> tuple[dict | None, str | None]:
    s = body.get("stats")
    if s is None:
        return None, None
    if not isinstance(s, str):
        return None, "stats is not a JSON string"
    try:
        obj = jsontext.loads(s)
    except ValueError:
        return None, "stats is not valid JSON"
    if not isinstance(obj, dict):
        return None, "stats is not a JSON object"
    return obj, None


# ------------------------------------------------------------------ statistics
def _leaf_value(v: Any, t: Any) -> Any:
    """A stats JSON value as a comparable Python value for type t (None if not comparable)."""
    try:
        if t in ("byte", "short", "integer", "long"):
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        if t in ("float", "double"):
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        if isinstance(t, str) and t.startswith("decimal"):
            return decimal.Decimal(str(v)) if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None
        if t == "date":
            return dt.date.fromisoformat(v)
        if t in ("timestamp", "timestamp_ntz"):
            x = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
            return x.replace(tzinfo=None) if x.tzinfo is None else x.astimezone(dt.timezone.utc).replace(tzinfo=None)
        if t == "string":
            return v if isinstance(v, str) else None
        if t == "boolean":
            return v if isinstance(v, bool) else None
    except (ValueError, TypeError, AttributeError, OverflowError, decimal.InvalidOperation):
        return None
    return None


def _actual(col, t: Any) -> tuple[Any, Any, int] | None:
    """(min, max, null count) of an Arrow column, as Python values; None if not comparable."""
    import pyarrow as pa
    import pyarrow.compute as pc

    nulls = col.null_count
    if len(col) == nulls:
        return None, None, nulls
    if pa.types.is_floating(col.type):
        if pc.any(pc.is_nan(col)).as_py():
            return None
    try:
        mm = pc.min_max(col)
    except Exception:
        return None
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if isinstance(lo, dt.datetime):
        lo = lo.astimezone(dt.timezone.utc).replace(tzinfo=None) if lo.tzinfo else lo
        hi = hi.astimezone(dt.timezone.utc).replace(tzinfo=None) if hi.tzinfo else hi
    if t == "date" and isinstance(lo, dt.datetime):
        lo, hi = lo.date(), hi.date()
    return lo, hi, nulls


def _floor_ms(x):
    return x.replace(microsecond=x.microsecond - x.microsecond % 1000) if isinstance(x, dt.datetime) else x


def _column(table, path: tuple[str, ...]):
    import pyarrow.compute as pc

    names = table.column_names
    if path[0] not in names:
        return None
    col = table.column(path[0])
    for part in path[1:]:
        try:
            col = pc.struct_field(col, part)
        except Exception:
            return None
    return col


def _walk_stats(node: Any, schema_t: Any, mode: str, path: tuple, phys: tuple, logical_names: set, out: list):
    """Collect (logical path, physical path, leaf type, value) or problems from a stats subtree."""
    if not isinstance(node, dict):
        out.append(("bad", path, "stats for a struct column must be an object"))
        return
    for k, val in node.items():
        f = None
        for cand in top_fields(schema_t):
            if physical_name(cand, mode) == k:
                f = cand
                break
        if f is None:
            logical = next((c for c in top_fields(schema_t) if c.get("name") == k), None)
            if logical is not None and mode in ("id", "name"):
                out.append(("logical", path + (k,), "stats keyed by a logical name under column mapping"))
            else:
                out.append(("unknown", path + (k,), f"stats name {k!r} is not a column of the schema"))
            continue
        t = f.get("type")
        if isinstance(t, dict) and t.get("type") == "struct":
            _walk_stats(val, t, mode, path + (f.get("name"),), phys + (k,), logical_names, out)
        elif isinstance(val, dict) and t != "variant":
            out.append(("bad", path + (k,), "stats value for a leaf column is an object"))
        else:
            out.append(("leaf", path + (f.get("name"),), phys + (k,), t, val))


@check("STATS-002", "STATS-003", "STATS-004", "STATS-005", "STATS-006", "DV-016", "COLMAP-008", "VARIANT-010",
       "VARIANT-016", "ICEBERG-005", "CLUSTER-004")
def file_statistics(ctx: Context) -> Iterator[Violation]:
    """stats JSON: spelled keys, schema-shaped physical names, numRecords = rows, bounds hold."""
    for a, st, rel in _adds(ctx):
        body = a.body
        md = st.metadata
        schema, mode, cfg = schema_of(md), mapping_mode(md), config(md)
        p = Proto.of(st.protocol)
        w = f"{a.where} add.stats"
        stats, err = _stats(body)
        dv = body.get("deletionVector")
        has_dv = isinstance(dv, dict) and bool(dv)
        compat = truthy(cfg.get(P_ICEBERG_V1)) or truthy(cfg.get(P_ICEBERG_V2))
        if err:
            yield V("STATS-002", err, w)
            continue
        if stats is None or "numRecords" not in stats:
            if has_dv:
                yield V("DV-016", "file with a deletion vector lacks stats.numRecords", w)
            elif compat and body.get("dataChange") is not False:
                yield V("ICEBERG-005", "add lacks stats.numRecords under Iceberg compatibility", w)
        if stats is None:
            if "clustering" in (p.wf or ()) and st.domains.get(D_CLUSTERING) and body.get("dataChange") is not False:
                yield V("CLUSTER-004", "add in a clustered table without stats", w)
            continue
        bad_keys = sorted(set(stats) - STATS_KEYS)
        if bad_keys:
            yield V("STATS-002", f"unknown stats keys {bad_keys}", w)
        pf = ctx.footer(rel)
        rows = pf.metadata.num_rows
        n = stats.get("numRecords")
        if n is not None and n != rows:
            dv_card = dv.get("cardinality") if has_dv else None
            if has_dv and isinstance(dv_card, int) and n == rows - dv_card:
                yield V("DV-016", f"numRecords {n} counts surviving rows; the file has {rows}", w + ".numRecords")
            else:
                yield V("STATS-004", f"numRecords {n} but the data file has {rows} rows", w + ".numRecords")
        if not isinstance(schema, dict):
            continue
        leaves: dict[str, dict] = {}
        problems = False
        for part in ("minValues", "maxValues", "nullCount"):
            node = stats.get(part)
            if node is None:
                continue
            out: list = []
            _walk_stats(node, schema, mode, (), (), set(), out)
            for item in out:
                if item[0] == "logical":
                    yield V("COLMAP-008", item[2], f"{w}.{part}.{'.'.join(item[1])}")
                    problems = True
                elif item[0] in ("unknown", "bad"):
                    yield V("STATS-003", item[2], f"{w}.{part}.{'.'.join(item[1])}")
                    problems = True
                else:
                    _, lpath, ppath, t, val = item
                    leaves.setdefault(".".join(ppath), {"path": ppath, "type": t, "lpath": lpath})[part] = val
        shredding = truthy(cfg.get(P_VARIANT_SHREDDING))
        for leaf in leaves.values():
            if leaf["type"] != "variant":
                continue
            lw = f"{w} {'.'.join(leaf['lpath'])}"
            if ("minValues" in leaf or "maxValues" in leaf) and not shredding:
                yield V("VARIANT-010", "variant column has min/max stats without shredding", lw)
                continue
            nc = leaf.get("nullCount")
            bad_nc = nc is not None and not (isinstance(nc, int) and not isinstance(nc, bool))
            bad_mm = any(part in leaf and not _variant_bounds_ok(leaf[part]) for part in ("minValues", "maxValues"))
            if bad_nc or bad_mm:
                yield V("VARIANT-016", "variant stats: nullCount must be a long and min/max objects of "
                                       "JSON path -> Z85(metadata||value)", lw)
        if "clustering" in (p.wf or ()) and body.get("dataChange") is not False:
            dom = st.domains.get(D_CLUSTERING)
            from reference_impl.delta.validate.checks_schema import clustering_columns

            cols = (clustering_columns(dom) or []) if dom else []
            for c in cols or []:
                if not isinstance(c, list) or field_by_path(schema, c, mode, physical=True) is None:
                    continue  # unknown clustering columns are CLUSTER-003's business
                leaf = leaves.get(".".join(c))
                all_null = leaf is not None and leaf.get("nullCount") == n and n is not None
                if leaf is None or (not all_null and ("minValues" not in leaf or "maxValues" not in leaf)):
                    yield V("CLUSTER-004", f"add lacks min/max stats for clustering column {c}", w)
        if problems or has_dv:
            continue
        tight = stats.get("tightBounds", True) is not False
        table = ctx.table(rel)
        if table is None:
            continue
        for leaf in leaves.values():
            t = leaf["type"]
            col = _column(table, leaf["path"])
            if col is None or t in ("variant", "binary") or isinstance(t, dict):
                continue
            act = _actual(col, t)
            if act is None:
                continue
            lo, hi, nulls = act
            lw = f"{w} {'.'.join(leaf['lpath'])}"
            if "nullCount" in leaf and tight and leaf["nullCount"] != nulls:
                yield V("STATS-005", f"nullCount {leaf['nullCount']} but the column has {nulls} nulls", lw)
            if lo is None:
                continue
            smin = _leaf_value(leaf["minValues"], t) if "minValues" in leaf else None
            smax = _leaf_value(leaf["maxValues"], t) if "maxValues" in leaf else None
            try:
                if tight:
                    if smin is not None and not _tight_min_ok(smin, lo, t):
                        yield V("STATS-005", f"minValues {leaf['minValues']!r} is not the smallest value {lo!r}", lw)
                    if smax is not None and not _tight_max_ok(smax, hi, t):
                        yield V("STATS-005", f"maxValues {leaf['maxValues']!r} is not the largest value {hi!r}", lw)
                else:
                    if smin is not None and smin > lo and not _approx(t, smin, lo):
                        yield V("STATS-006", f"wide minValues {leaf['minValues']!r} above a value {lo!r}", lw)
                    if smax is not None and smax < _floor_ms(hi) and not _approx(t, smax, hi):
                        yield V("STATS-006", f"wide maxValues {leaf['maxValues']!r} below a value {hi!r}", lw)
            except TypeError:
                continue


def _variant_bounds_ok(v) -> bool:
    from reference_impl.delta.validate.checks_actions import z85_decode

    return isinstance(v, dict) and all(isinstance(k, str) and k.startswith("$") and isinstance(x, str)
                                       and z85_decode(x) is not None for k, x in v.items())


def _tight_min_ok(s, lo, t) -> bool:
    if t in ("timestamp", "timestamp_ntz"):
        return _floor_ms(lo) <= s <= lo
    if t == "string":
        return s == lo or (lo.startswith(s) and s <= lo)
    if t in ("float", "double") or (isinstance(t, str) and t.startswith("decimal")):
        return _close(s, lo)
    return s == lo


def _tight_max_ok(s, hi, t) -> bool:
    if t in ("timestamp", "timestamp_ntz"):
        return _floor_ms(hi) <= s <= hi
    if t == "string":
        return s == hi or s >= hi
    if t in ("float", "double") or (isinstance(t, str) and t.startswith("decimal")):
        return _close(s, hi)
    return s == hi


def _approx(t, a, b) -> bool:
    """For float and decimal columns, equality up to JSON double rounding."""
    return (t in ("float", "double") or (isinstance(t, str) and t.startswith("decimal"))) and _close(a, b)


def _close(a, b) -> bool:
    """Equal up to JSON double rounding (decimal stats are often written as doubles)."""
    a, b = float(a), float(b)
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


# ------------------------------------------------------------------ footers vs schema
def _arrow_ok(delta_t: Any, at) -> bool:
    import pyarrow as pa

    if isinstance(delta_t, str):
        if delta_t.startswith("decimal"):
            from reference_impl.delta.validate.meta import DECIMAL_RE
            m = DECIMAL_RE.match(delta_t)
            return pa.types.is_decimal(at) and m is not None and (at.precision, at.scale) == (int(m.group(1)), int(m.group(2)))
        checks = {"long": pa.types.is_int64, "integer": pa.types.is_int32, "short": pa.types.is_int16,
                  "byte": pa.types.is_int8, "float": pa.types.is_float32, "double": pa.types.is_float64,
                  "boolean": pa.types.is_boolean, "date": pa.types.is_date32,
                  "string": lambda x: pa.types.is_string(x) or pa.types.is_large_string(x) or pa.types.is_string_view(x),
                  "binary": lambda x: pa.types.is_binary(x) or pa.types.is_large_binary(x) or pa.types.is_fixed_size_binary(x),
                  "timestamp": pa.types.is_timestamp, "timestamp_ntz": pa.types.is_timestamp,
                  "void": pa.types.is_null, "variant": pa.types.is_struct}
        fn = checks.get(delta_t)
        return True if fn is None else fn(at)
    if isinstance(delta_t, dict):
        k = delta_t.get("type")
        if k == "struct":
            return pa.types.is_struct(at)
        if k == "array":
            return pa.types.is_list(at) or pa.types.is_large_list(at)
        if k == "map":
            return pa.types.is_map(at)
    return True


def _ts_adjusted(pf, name_path: tuple[str, ...]) -> str | None:
    """'utc' / 'local' / 'int96' for a parquet timestamp leaf, None when unknown."""
    sch = pf.schema
    dotted = ".".join(name_path)
    for i in range(len(sch)):
        c = sch.column(i)
        if c.path == dotted:
            if c.physical_type == "INT96":
                return "int96"
            try:
                lt = jsontext.loads(c.logical_type.to_json())
            except Exception:
                return None
            if lt.get("Type") == "Timestamp":
                return "utc" if lt.get("isAdjustedToUTC") else "local"
    return None


@check("WRITER-002", "SCHEMA-007", "SCHEMA-010", "COLMAP-006", "COLMAP-007", "ICEBERG-004", "ICEBERG-010",
       "VARIANT-003", "VARIANT-004", "VARIANT-012", "VARIANT-014")
def data_file_footers(ctx: Context) -> Iterator[Violation]:
    """Data-file columns: physical names and field ids, schema types, timestamp UTC flag, no void columns."""
    for a, st, rel in _adds(ctx):
        pf = ctx.footer(rel)
        arrow = pf.schema_arrow
        md = st.metadata
        schema, mode, cfg = schema_of(md), mapping_mode(md), config(md)
        if not isinstance(schema, dict):
            continue
        p = Proto.of(st.protocol)
        w = f"{a.where} data file {rel}"
        by_phys = {physical_name(f, mode): f for f in top_fields(schema)}
        logical = {f.get("name") for f in top_fields(schema)}
        widened = set()
        for ref in iter_fields(schema, mode):
            if ref.meta.get(M_TYPE_CHANGES) is not None:
                widened.add(ref.phys[0])
        pcols = partition_columns(md)
        on2 = truthy(cfg.get(P_ICEBERG_V2))
        if mode in ("id", "name"):
            wrong = [n for n in arrow.names if n in logical and n not in by_phys]
            if wrong:
                yield V("COLMAP-006", f"parquet columns {wrong} use logical instead of physical names", w)
        if truthy(cfg.get(P_ICEBERG_V1)) or on2:
            pphys = [physical_name(f, mode) for f in (field_by_path(schema, [c]) for c in pcols) if f is not None]
            missing = [c for c in pphys if c not in arrow.names]
            if missing:
                yield V("ICEBERG-004", f"partition columns {missing} are not written into the data file", w)
            elif truthy(cfg.get(P_ICEBERG_V1)) and pphys:
                pos = [arrow.names.index(c) for c in pphys]
                data_pos = [i for i, n in enumerate(arrow.names) if n in by_phys and n not in pphys]
                if data_pos and min(pos) < max(data_pos):
                    yield V("ICEBERG-004", "icebergCompatV1 partition columns must follow the data columns", w)
        for fa in arrow:
            f = by_phys.get(fa.name)
            if f is None or fa.name in pcols:
                continue
            t = f.get("type")
            fw = f"{w} column {fa.name}"
            if t == "void":
                yield V("SCHEMA-010", "void column written to a data file", fw)
                continue
            if mode in ("id", "name"):
                yield from _field_ids(f, fa, mode, fw)
            if t == "variant":
                yield from _variant_layout(fa, p, cfg, fw)
                continue
            if fa.name not in widened and not _arrow_ok(t, fa.type):
                yield V("WRITER-002", f"column type {fa.type} does not match the schema type {t}", fw)
            if t in ("timestamp", "timestamp_ntz"):
                adj = _ts_adjusted(pf, (fa.name,))
                if adj == "int96" and on2:
                    yield V("ICEBERG-010", "INT96 timestamp under icebergCompatV2", fw)
                elif (t == "timestamp" and adj == "local") or (t == "timestamp_ntz" and adj in ("utc", "int96")):
                    yield V("SCHEMA-007", f"{t} column stored with the wrong isAdjustedToUTC", fw)


def _field_ids(f: dict, fa, mode: str, w: str) -> Iterator[Violation]:
    """Parquet field_id equals delta.columnMapping.id, recursively through structs."""
    import pyarrow as pa

    md = f.get("metadata") if isinstance(f.get("metadata"), dict) else {}
    want = md.get(M_ID)
    got = (fa.metadata or {}).get(b"PARQUET:field_id")
    if want is not None and (got is None or int(got) != want):
        yield V("COLMAP-007", f"parquet field_id {got and int(got)} but columnMapping.id is {want}", w)
        return
    t = f.get("type")
    if isinstance(t, dict) and t.get("type") == "struct" and pa.types.is_struct(fa.type):
        kids = {physical_name(k, mode): k for k in top_fields(t)}
        for i in range(fa.type.num_fields):
            child = fa.type.field(i)
            if child.name in kids:
                yield from _field_ids(kids[child.name], child, mode, f"{w}.{child.name}")


def _variant_layout(fa, p: Proto, cfg: dict, w: str) -> Iterator[Violation]:
    import pyarrow as pa

    if not pa.types.is_struct(fa.type):
        yield V("VARIANT-003", "variant column is not a struct of value and metadata", w)
        return
    names = {fa.type.field(i).name: fa.type.field(i).type for i in range(fa.type.num_fields)}
    shredded = "typed_value" in names
    if shredded:
        if "metadata" not in names:
            yield V("VARIANT-014", "shredded variant lacks the metadata field", w)
        if not p.supports_rw("variantShredding", "variantShredding-preview"):
            yield V("VARIANT-004", "shredded variant written without variantShredding", w)
        elif not truthy(cfg.get(P_VARIANT_SHREDDING)):
            yield V("VARIANT-012", "shredded variant written while delta.enableVariantShredding is not true", w)
        return
    if not (pa.types.is_binary(names.get("metadata", pa.null())) or pa.types.is_large_binary(names.get("metadata", pa.null()))) \
            or not (pa.types.is_binary(names.get("value", pa.null())) or pa.types.is_large_binary(names.get("value", pa.null()))):
        yield V("VARIANT-003", "unshredded variant needs binary value and metadata fields", w)


# ------------------------------------------------------------------ change data files
CHANGE_TYPES = {"insert", "update_preimage", "update_postimage", "delete"}


@check("CDF-002", "CDF-003")
def change_data_files(ctx: Context) -> Iterator[Violation]:
    """cdc files have a string _change_type with the four legal values; shared add files set it on every row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for v in ctx.versions:
        c = ctx.commits[v]
        add_paths = {a.body["path"] for a in c.of(ADD) if isinstance(a.body, dict) and isinstance(a.body.get("path"), str)}
        for a in c.of(CDC):
            if not isinstance(a.body, dict) or not isinstance(a.body.get("path"), str):
                continue
            rel = ctx.rel(a.body["path"])
            tbl = ctx.table(rel) if rel else None
            if tbl is None:
                continue
            w = f"{a.where} cdc file {rel}"
            if "_change_type" not in tbl.column_names or not pa.types.is_string(tbl.schema.field("_change_type").type):
                yield V("CDF-002", "change data file lacks a string _change_type column", w)
                continue
            col = tbl.column("_change_type")
            vals = {x for x in pc.unique(col).to_pylist() if x is not None}
            bad = sorted(vals - CHANGE_TYPES)
            if bad:
                yield V("CDF-002", f"illegal _change_type values {bad}", w)
            if a.body["path"] in add_paths and col.null_count:
                yield V("CDF-003", "cdc file shared with an add has rows without _change_type", w)


# ------------------------------------------------------------------ invariants, constraints, generated columns
def _logical_table(ctx: Context, rel: str, body: dict, md: dict):
    """The data file with logical column names plus partition columns (as strings cast by DuckDB)."""
    import pyarrow as pa

    tbl = ctx.table(rel)
    if tbl is None:
        return None
    schema, mode = schema_of(md), mapping_mode(md)
    rename = {physical_name(f, mode): f.get("name") for f in top_fields(schema)}
    cols, names = [], []
    for n in tbl.column_names:
        if n in rename:
            cols.append(tbl.column(n))
            names.append(rename[n])
    pv = body.get("partitionValues") if isinstance(body.get("partitionValues"), dict) else {}
    for c in partition_columns(md):
        f = field_by_path(schema, [c])
        if f is None or c in names:
            continue
        val = pv.get(physical_name(f, mode))
        arr = pa.array([val] * tbl.num_rows, pa.string())
        try:
            at = _duck_type(f.get("type"))
            arr = arr.cast(at) if at is not None else arr
        except Exception:
            pass
        cols.append(arr)
        names.append(c)
    return pa.table(cols, names=names) if cols else pa.table({"__empty": pa.array([None] * tbl.num_rows)})


def _duck_type(t):
    """Arrow type for a primitive Delta type name (None for nested or unknown types)."""
    import pyarrow as pa

    if not isinstance(t, str):
        return None
    from reference_impl.delta.validate.meta import DECIMAL_RE

    m = DECIMAL_RE.match(t)
    if m:
        p, s = int(m.group(1)), int(m.group(2))
        return pa.decimal128(p, s) if 1 <= p <= 38 and s <= p else None
    return {"long": pa.int64(), "integer": pa.int32(), "short": pa.int16(), "byte": pa.int8(), "double": pa.float64(),
            "float": pa.float32(), "boolean": pa.bool_(), "date": pa.date32(), "string": pa.string(),
            "binary": pa.binary(), "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us")}.get(t)


def _count_bad(tbl, predicate: str) -> tuple[int | None, str | None]:
    """Rows for which the (Spark SQL) predicate holds, evaluated in the sandbox of
    ``reference_impl.common.sql``: an expression from the table can only compute, never touch a file."""
    from reference_impl.common import sql

    try:
        return sql.count_matching(tbl, predicate), None
    except Exception as e:  # SQL DuckDB cannot parse or bind is not a finding here
        return None, f"{type(e).__name__}: {e}"


def _constraints(md: dict) -> dict[str, str]:
    return {k[len(P_CONSTRAINT_PREFIX):]: v for k, v in config(md).items()
            if k.startswith(P_CONSTRAINT_PREFIX) and isinstance(v, str)}


def _invariant_expr(raw: Any) -> str | None:
    try:
        obj = jsontext.loads(raw) if isinstance(raw, str) else raw
        e = obj["expression"]["expression"]
        return e if isinstance(e, str) else None
    except (ValueError, KeyError, TypeError):
        return None


def _empty_table(md: dict):
    import pyarrow as pa

    cols = {}
    for f in top_fields(schema_of(md)):
        t = _duck_type(f.get("type"))
        cols[f.get("name")] = pa.array([], t or pa.string())
    return pa.table(cols) if cols else None


@check("WRITER-010", "WRITER-012", "WRITER-013", "WRITER-014", "WRITER-016")
def constraints_hold(ctx: Context) -> Iterator[Violation]:
    """Invariants, CHECK constraints and generated columns hold on the rows of the files added under them."""
    prev_cons: dict[str, str] = {}
    for v in ctx.versions:
        st, before = ctx.states.get(v), ctx.before.get(v)
        if st is None or st.metadata is None:
            continue
        md = st.metadata
        cons = _constraints(md)
        new = {n: e for n, e in cons.items() if prev_cons.get(n) != e}
        c = ctx.commits[v]
        if new:
            empty = _empty_table(md)
            for n, e in new.items():
                if empty is not None:
                    _, err = _count_bad(empty, f"NOT coalesce(({e}), true)")
                    if err and "Binder Error" in err and "column" in err.lower():
                        yield V("WRITER-012", f"constraint {n} = {e!r} references a missing column", c.info.path)
            for (path, _), body in (before.live.items() if before else ()):
                rel = ctx.rel(path)
                tbl = _logical_table(ctx, rel, body, md) if rel else None
                if tbl is None:
                    continue
                for n, e in new.items():
                    bad, _ = _count_bad(tbl, f"NOT coalesce(({e}), true)")
                    if bad:
                        yield V("WRITER-013", f"constraint {n} added while {bad} existing rows of {rel} violate it", c.info.path)
        prev_cons = cons
        schema = schema_of(md)
        invariants = {".".join(r.path): _invariant_expr(r.meta.get(M_INVARIANTS)) for r in iter_fields(schema)
                      if r.meta.get(M_INVARIANTS) is not None}
        generated = {r.path[0]: r.meta.get(M_GENERATION) for r in iter_fields(schema)
                     if len(r.path) == 1 and isinstance(r.meta.get(M_GENERATION), str)}
        if not (cons or invariants or generated):
            continue
        for a in c.of(ADD):
            if not isinstance(a.body, dict) or a.body.get("dataChange") is False:
                continue
            rel = ctx.rel(a.body.get("path", ""))
            if rel is None or (before and any(k[0] == a.body.get("path") for k in before.live)):
                continue
            tbl = _logical_table(ctx, rel, a.body, md)
            if tbl is None:
                continue
            for n, e in cons.items():
                bad, _ = _count_bad(tbl, f"NOT coalesce(({e}), true)")
                if bad:
                    yield V("WRITER-014", f"{bad} rows violate CHECK constraint {n} ({e})", a.where)
            for col, e in invariants.items():
                if e:
                    bad, _ = _count_bad(tbl, f"NOT coalesce(({e}), false)")
                    if bad:
                        yield V("WRITER-010", f"{bad} rows violate the invariant on {col} ({e})", a.where)
            for col, e in generated.items():
                quoted = "`" + col.replace("`", "``") + "`"
                bad, _ = _count_bad(tbl, f"NOT ({quoted} <=> ({e}))")
                if bad:
                    yield V("WRITER-016", f"{bad} rows where {col} differs from its generation expression {e}", a.where)


@check("WRITER-018")
def defaults_filled(ctx: Context) -> Iterator[Violation]:
    """New data files written while a column has a default contain that column (the writer filled it)."""
    from reference_impl.delta.validate.meta import M_DEFAULT

    for a, st, rel in _adds(ctx):
        if a.body.get("dataChange") is False:
            continue
        md = st.metadata
        p = Proto.of(st.protocol)
        if not p.writer_supports("allowColumnDefaults"):
            continue
        schema, mode = schema_of(md), mapping_mode(md)
        pcols = set(partition_columns(md))
        names = ctx.footer(rel).schema_arrow.names
        for f in top_fields(schema):
            meta = f.get("metadata") if isinstance(f.get("metadata"), dict) else {}
            if M_DEFAULT in meta and f.get("name") not in pcols and f.get("type") != "void" \
                    and physical_name(f, mode) not in names:
                yield V("WRITER-018", f"data file lacks column {f.get('name')} that has a default", f"{a.where} data file {rel}")
