"""Table Features: protocol shape and, for each feature in use, the protocol support it needs."""

from __future__ import annotations

from typing import Iterator

from reference_impl.delta.validate.context import COMMIT_INFO, METADATA, PROTOCOL, Context, State
from reference_impl.delta.validate.meta import (
    LEGACY_WRITER, M_DEFAULT, M_GENERATION, M_IDENTITY_PREFIX, M_INVARIANTS, M_TYPE_CHANGES,
    P_APPEND_ONLY, P_CDF, P_CONSTRAINT_PREFIX, P_ENABLE_DV, P_ICEBERG_V1, P_ICEBERG_V2, P_ICT, P_MAPPING_MODE,
    P_TYPE_WIDENING, P_VARIANT_SHREDDING, Proto, config, contains_type, iter_fields,
    mapping_mode, partition_columns, schema_of, truthy,
)
from reference_impl.delta.validate.registry import V, Violation, check


def _changed(ctx: Context) -> Iterator[tuple[int, str, State]]:
    """(version, where, state) for each commit that sets protocol or metadata."""
    for v in ctx.versions:
        c = ctx.commits[v]
        if c.of(PROTOCOL) or c.of(METADATA):
            st = ctx.states.get(v)
            if st is not None:
                yield v, c.info.path, st


@check("FEATURE-001", "FEATURE-002", "FEATURE-003", "FEATURE-009", "CKPT-040", "VACUUM-001", "CATALOG-001")
def protocol_feature_lists(ctx: Context) -> Iterator[Violation]:
    """Feature lists exist exactly at reader 3 / writer 7; reader 3 needs writer 7; no reader-only features."""
    for v in ctx.versions:
        for a in ctx.commits[v].of(PROTOCOL):
            p = a.body if isinstance(a.body, dict) else {}
            r, w = p.get("minReaderVersion"), p.get("minWriterVersion")
            if not isinstance(r, int) or not isinstance(w, int):
                continue
            rf, wf = p.get("readerFeatures"), p.get("writerFeatures")
            if (rf is not None and r != 3) or (wf is not None and w != 7):
                yield V("FEATURE-001", f"feature list present at protocol ({r},{w})", a.where)
            if (r == 3 and rf is None) or (w == 7 and wf is None):
                yield V("FEATURE-002", f"protocol ({r},{w}) lacks its feature list", a.where)
            if r == 3 and w != 7:
                yield V("FEATURE-003", f"reader version 3 requires writer version 7, got {w}", a.where)
            if isinstance(rf, list) and isinstance(wf, list):
                only_reader = [f for f in rf if f not in wf]
                if only_reader:
                    yield V("FEATURE-009", f"features {only_reader} only in readerFeatures", a.where + " protocol.readerFeatures")
                for f, rule in (("v2Checkpoint", "CKPT-040"), ("vacuumProtocolCheck", "VACUUM-001"), ("catalogManaged", "CATALOG-001")):
                    if f in wf and f not in rf:
                        yield V(rule, f"{f} must be in both readerFeatures and writerFeatures", a.where)


@check("FEATURE-007", "FEATURE-008")
def protocol_transitions(ctx: Context) -> Iterator[Violation]:
    """Upgrades to writer 7 keep the legacy features in use; features are not silently dropped."""
    prev: Proto | None = None
    for v in ctx.versions:
        c = ctx.commits[v]
        acts = c.of(PROTOCOL)
        st = ctx.states.get(v)
        if acts and st is not None and isinstance(acts[-1].body, dict):
            cur = Proto.of(acts[-1].body)
            if prev is not None:
                if prev.writer < 7 <= cur.writer:
                    used = _legacy_in_use(st)
                    implied = set().union(*(fs for lv, fs in LEGACY_WRITER.items() if lv <= prev.writer))
                    missing = sorted((used & implied) - set(cur.wf or ()))
                    if missing:
                        yield V("FEATURE-007", f"upgrade to writer 7 drops legacy features in use: {missing}", acts[-1].where)
                elif prev.writer >= 7 and cur.writer >= 7:
                    dropped = sorted(set(prev.wf or ()) - set(cur.wf or ()))
                    ops = [a.body.get("operation") for a in c.of(COMMIT_INFO) if isinstance(a.body, dict)]
                    if dropped and not any(isinstance(o, str) and "DROP" in o.upper() and "FEATURE" in o.upper() for o in ops):
                        yield V("FEATURE-008", f"features {dropped} removed outside a drop-feature operation", acts[-1].where)
            prev = cur
        elif st is not None and st.protocol is not None and prev is None:
            prev = Proto.of(st.protocol)


def _legacy_in_use(st: State) -> set[str]:
    md = st.metadata
    cfg = config(md)
    schema = schema_of(md)
    used = set()
    if truthy(cfg.get(P_APPEND_ONLY)):
        used.add("appendOnly")
    if any(k.startswith(P_CONSTRAINT_PREFIX) for k in cfg):
        used.add("checkConstraints")
    if truthy(cfg.get(P_CDF)):
        used.add("changeDataFeed")
    if mapping_mode(md) in ("id", "name"):
        used.add("columnMapping")
    for f in iter_fields(schema):
        if M_INVARIANTS in f.meta:
            used.add("invariants")
        if M_GENERATION in f.meta:
            used.add("generatedColumns")
        if any(k.startswith(M_IDENTITY_PREFIX) for k in f.meta):
            used.add("identityColumns")
    return used


def _meta_uses(schema, key_pred) -> bool:
    return any(any(key_pred(k) for k in f.meta) for f in iter_fields(schema))


@check("DV-001", "SCHEMA-008", "VARIANT-001", "VARIANT-011", "VARIANT-013", "TYPEWIDEN-001", "TYPEWIDEN-010",
       "ICT-001", "ROWTRACK-001", "CLUSTER-001", "CLUSTER-002", "WRITER-004", "WRITER-008", "WRITER-011",
       "WRITER-015", "WRITER-017", "WRITER-021", "COLMAP-005", "CATALOG-002")
def features_in_use_are_supported(ctx: Context) -> Iterator[Violation]:
    """Each feature the metadata or actions use is supported by the protocol in force."""
    dv_versions = set()
    for v in ctx.versions:
        for a in ctx.commits[v].actions:
            if a.key in ("add", "remove") and isinstance(a.body, dict) and isinstance(a.body.get("deletionVector"), dict) \
                    and a.body["deletionVector"].get("storageType") is not None:
                dv_versions.add(v)
    for v in ctx.versions:
        st = ctx.states.get(v)
        if st is None or st.protocol is None:
            continue
        c = ctx.commits[v]
        if not (c.of(PROTOCOL) or c.of(METADATA) or v in dv_versions):
            continue
        w = c.info.path
        p = Proto.of(st.protocol)
        md = st.metadata
        cfg = config(md)
        schema = schema_of(md)
        wf = set(p.wf or ()) if p.writer >= 7 else set()
        if v in dv_versions and not p.both("deletionVectors"):
            yield V("DV-001", "deletion vectors used without deletionVectors in both feature lists at (3,7)", w)
        if truthy(cfg.get(P_ENABLE_DV)) and p.writer >= 7 and "deletionVectors" not in wf:
            yield V("DV-001", "delta.enableDeletionVectors=true without the deletionVectors feature", w)
        if schema is not None:
            if contains_type(schema, lambda t: t == "timestamp_ntz") and not p.both("timestampNtz"):
                yield V("SCHEMA-008", "timestamp_ntz column without timestampNtz in both feature lists", w)
            if contains_type(schema, lambda t: t == "variant") and not p.supports_rw("variantType", "variantType-preview"):
                yield V("VARIANT-001", "variant column without variantType in both feature lists", w)
            if _meta_uses(schema, lambda k: k == M_TYPE_CHANGES) and not p.supports_rw("typeWidening", "typeWidening-preview"):
                yield V("TYPEWIDEN-001", "delta.typeChanges present without typeWidening in both feature lists", w)
            legacy = [(M_INVARIANTS, "invariants", 2, "WRITER-008"), (M_GENERATION, "generatedColumns", 4, "WRITER-015"),
                      (M_DEFAULT, "allowColumnDefaults", None, "WRITER-017"), (M_IDENTITY_PREFIX, "identityColumns", 6, "WRITER-021")]
            for key, feat, lv, rule in legacy:
                if _meta_uses(schema, lambda k, key=key: k == key or (key.endswith(".") and k.startswith(key))):
                    if not p.writer_supports(feat, lv):
                        yield V(rule, f"column metadata {key} used without {feat} support (writer {p.writer})", w)
        if p.any_list("variantShredding", "variantShredding-preview"):
            if not (p.supports_rw("variantShredding", "variantShredding-preview") and p.supports_rw("variantType", "variantType-preview")):
                yield V("VARIANT-011", "variantShredding needs itself and variantType in both feature lists", w)
        if truthy(cfg.get(P_VARIANT_SHREDDING)) and not p.supports_rw("variantShredding", "variantShredding-preview"):
            yield V("VARIANT-013", "delta.enableVariantShredding=true without variantShredding in both lists", w)
        if truthy(cfg.get(P_TYPE_WIDENING)) and not p.supports_rw("typeWidening", "typeWidening-preview"):
            yield V("TYPEWIDEN-010", "delta.enableTypeWidening=true without typeWidening in both feature lists", w)
        if truthy(cfg.get(P_ICT)) and "inCommitTimestamp" not in wf:
            yield V("ICT-001", "delta.enableInCommitTimestamps=true without the inCommitTimestamp writer feature", w)
        if "rowTracking" in wf and "domainMetadata" not in wf:
            yield V("ROWTRACK-001", "rowTracking listed without domainMetadata", w)
        if "clustering" in wf and "domainMetadata" not in wf:
            yield V("CLUSTER-001", "clustering listed without domainMetadata", w)
        if "clustering" in wf and partition_columns(md):
            yield V("CLUSTER-002", "clustered table also has partition columns", w)
        if truthy(cfg.get(P_APPEND_ONLY)) and p.writer >= 7 and "appendOnly" not in wf:
            yield V("WRITER-004", "delta.appendOnly=true on writer 7 without the appendOnly feature", w)
        if any(k.startswith(P_CONSTRAINT_PREFIX) for k in cfg) and not p.writer_supports("checkConstraints", 3):
            yield V("WRITER-011", "CHECK constraints without checkConstraints support", w)
        if mapping_mode(md) in ("id", "name") and not p.column_mapping():
            yield V("COLMAP-005", f"{P_MAPPING_MODE}={mapping_mode(md)} without column mapping in the protocol", w)
        if p.any_list("catalogManaged") and not ("inCommitTimestamp" in wf and truthy(cfg.get(P_ICT))):
            yield V("CATALOG-002", "catalog-managed table without in-commit timestamps enabled", w)


@check("ICEBERG-001", "ICEBERG-002", "ICEBERG-003", "ICEBERG-006", "ICEBERG-007", "ICEBERG-008", "ICEBERG-009",
       "ICEBERG-011")
def iceberg_compat(ctx: Context) -> Iterator[Violation]:
    """IcebergCompatV1/V2: feature listed, column mapping on, no DVs, allowed types, stable partitioning."""
    prev_parts = None
    for v, w, st in _changed(ctx):
        p, md = Proto.of(st.protocol), st.metadata
        cfg = config(md)
        schema = schema_of(md)
        on1, on2 = truthy(cfg.get(P_ICEBERG_V1)), truthy(cfg.get(P_ICEBERG_V2))
        for on, feat in ((on1, "icebergCompatV1"), (on2, "icebergCompatV2")):
            if on and not (p.writer >= 7 and feat in (p.wf or ()) and p.column_mapping()):
                yield V("ICEBERG-001", f"{feat} enabled without the feature (and column mapping) in the protocol", w)
        if (on1 or on2) and mapping_mode(md) not in ("id", "name"):
            yield V("ICEBERG-002", "Iceberg compatibility requires column mapping mode id or name", w)
        if on1 and p.any_list("deletionVectors"):
            yield V("ICEBERG-003", "icebergCompatV1 with the deletionVectors feature", w)
        if on2 and truthy(cfg.get(P_ENABLE_DV)) and p.any_list("deletionVectors"):
            yield V("ICEBERG-003", "icebergCompatV2 with deletion vectors enabled", w)
        if on1 and contains_type(schema, lambda t: t in ("array", "map", "void")):
            yield V("ICEBERG-006", "icebergCompatV1 forbids map, array and void columns", w)
        if on1 and on2:
            yield V("ICEBERG-009", "icebergCompatV1 and icebergCompatV2 both enabled", w)
        if on2 and contains_type(schema, lambda t: t in ("variant", "void")):
            yield V("ICEBERG-011", "icebergCompatV2 forbids variant and void columns", w)
        if on2 and schema is not None:
            yield from _nested_ids(schema, mapping_mode(md), w)
        parts = partition_columns(md)
        if (on1 or on2) and prev_parts and parts and sorted(parts) != sorted(prev_parts):
            yield V("ICEBERG-007", f"partition columns changed from {prev_parts} to {parts} under Iceberg compatibility", w)
        prev_parts = parts


NESTED_IDS = "delta.columnMapping.nested.ids"


def _nested_keys(t, prefix: str) -> list[str]:
    """Keys of delta.columnMapping.nested.ids a field of type t needs (arrays and maps, not through structs)."""
    out = []
    if isinstance(t, dict) and t.get("type") == "array":
        out.append(prefix + ".element")
        out += _nested_keys(t.get("elementType"), prefix + ".element")
    elif isinstance(t, dict) and t.get("type") == "map":
        out += [prefix + ".key", prefix + ".value"]
        out += _nested_keys(t.get("keyType"), prefix + ".key") + _nested_keys(t.get("valueType"), prefix + ".value")
    return out


def _nested_ids(schema, mode: str, w: str) -> Iterator[Violation]:
    """icebergCompatV2: array elements and map keys/values carry unique ids distinct from column ids."""
    from reference_impl.delta.validate.meta import M_ID

    column_ids = {r.meta.get(M_ID) for r in iter_fields(schema, mode)}
    seen: set = set()
    for ref in iter_fields(schema, mode):
        need = _nested_keys(ref.type, ref.phys[-1])
        if not need:
            continue
        ids = ref.meta.get(NESTED_IDS)
        fw = f"{w} schema field {'.'.join(ref.path)} {NESTED_IDS}"
        if not isinstance(ids, dict) or any(not isinstance(ids.get(k), int) for k in need):
            yield V("ICEBERG-008", f"nested ids missing for {[k for k in need if not isinstance(ids, dict) or k not in ids]}", fw)
            continue
        for k in need:
            if ids[k] in column_ids or ids[k] in seen:
                yield V("ICEBERG-008", f"nested id {ids[k]} of {k} is not unique", fw)
            seen.add(ids[k])
