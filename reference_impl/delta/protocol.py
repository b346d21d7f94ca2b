"""Table Features and Protocol Evolution: what a table needs, and whether we provide it.

Legacy protocol versions imply fixed feature sets (writer 2..6, reader 2); at reader 3 /
writer 7 the feature lists govern instead. A feature is *supported* when the protocol lists or
implies it, and *active* when it is supported and its metadata condition (usually a table
property) holds (DELTA-FEATURE-011).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from reference_impl.common import jsontext
from reference_impl.delta.actions import Metadata, Protocol
from reference_impl.errors import InvalidTable, Unsupported

# Feature names, as the spec spells them.
APPEND_ONLY = "appendOnly"
INVARIANTS = "invariants"
CHECK_CONSTRAINTS = "checkConstraints"
GENERATED_COLUMNS = "generatedColumns"
ALLOW_COLUMN_DEFAULTS = "allowColumnDefaults"
CHANGE_DATA_FEED = "changeDataFeed"
COLUMN_MAPPING = "columnMapping"
IDENTITY_COLUMNS = "identityColumns"
DELETION_VECTORS = "deletionVectors"
ROW_TRACKING = "rowTracking"
TIMESTAMP_NTZ = "timestampNtz"
DOMAIN_METADATA = "domainMetadata"
V2_CHECKPOINT = "v2Checkpoint"
CATALOG_MANAGED = "catalogManaged"
ICEBERG_COMPAT_V1 = "icebergCompatV1"
ICEBERG_COMPAT_V2 = "icebergCompatV2"
CLUSTERING = "clustering"
VACUUM_PROTOCOL_CHECK = "vacuumProtocolCheck"
IN_COMMIT_TIMESTAMP = "inCommitTimestamp"
TYPE_WIDENING = "typeWidening"
TYPE_WIDENING_PREVIEW = "typeWidening-preview"
VARIANT_TYPE = "variantType"
VARIANT_TYPE_PREVIEW = "variantType-preview"
VARIANT_SHREDDING = "variantShredding"

# Reader-writer features (listed in both lists); everything else named by the spec is writer-only.
READER_WRITER_FEATURES = frozenset({
    COLUMN_MAPPING, DELETION_VECTORS, TIMESTAMP_NTZ, V2_CHECKPOINT, CATALOG_MANAGED, VACUUM_PROTOCOL_CHECK,
    TYPE_WIDENING, TYPE_WIDENING_PREVIEW, VARIANT_TYPE, VARIANT_TYPE_PREVIEW, VARIANT_SHREDDING,
})
WRITER_ONLY_FEATURES = frozenset({
    APPEND_ONLY, INVARIANTS, CHECK_CONSTRAINTS, GENERATED_COLUMNS, ALLOW_COLUMN_DEFAULTS, CHANGE_DATA_FEED,
    IDENTITY_COLUMNS, ROW_TRACKING, DOMAIN_METADATA, ICEBERG_COMPAT_V1, ICEBERG_COMPAT_V2, CLUSTERING,
    IN_COMMIT_TIMESTAMP,
    # The writer assigns fresh row ids and commit versions and keeps them on re-adds; it does not
    # carry row ids across rewrites (stability is a SHOULD), nor backfill when enabling later.
    ROW_TRACKING,
    IDENTITY_COLUMNS, ALLOW_COLUMN_DEFAULTS,
})
KNOWN_FEATURES = READER_WRITER_FEATURES | WRITER_ONLY_FEATURES

# What the reference reads. Variant is read as its physical struct of binaries (an allowed
# alternative); shredded variant is not. typeWidening: files of the narrower type are upcast on
# read and every recorded change is checked (see ``check_type_changes``). catalogManaged needs a
# catalog client, which a path-based reader is not.
READER_FEATURES_SUPPORTED: frozenset[str] = frozenset({
    COLUMN_MAPPING, DELETION_VECTORS, TIMESTAMP_NTZ, V2_CHECKPOINT, VACUUM_PROTOCOL_CHECK,
    TYPE_WIDENING, TYPE_WIDENING_PREVIEW, VARIANT_TYPE, VARIANT_TYPE_PREVIEW,
})

# What the reference writer honours (writer.py, constraints.py, cdf.py, checkpoint.py).
WRITER_FEATURES_SUPPORTED: frozenset[str] = frozenset({
    APPEND_ONLY, INVARIANTS, CHECK_CONSTRAINTS, GENERATED_COLUMNS, CHANGE_DATA_FEED, COLUMN_MAPPING,
    DELETION_VECTORS, TIMESTAMP_NTZ, DOMAIN_METADATA, V2_CHECKPOINT, VACUUM_PROTOCOL_CHECK,
    IN_COMMIT_TIMESTAMP,
    # The writer assigns fresh row ids and commit versions and keeps them on re-adds; it does not
    # carry row ids across rewrites (stability is a SHOULD), nor backfill when enabling later.
    ROW_TRACKING,
    IDENTITY_COLUMNS, ALLOW_COLUMN_DEFAULTS,
})

MAX_READER_VERSION = 3
MAX_WRITER_VERSION = 7

# Legacy writer versions are cumulative (DELTA-FEATURE-012); reader 2 means column mapping.
_WRITER_VERSION_FEATURES = {
    2: (APPEND_ONLY, INVARIANTS),
    3: (CHECK_CONSTRAINTS,),
    4: (CHANGE_DATA_FEED, GENERATED_COLUMNS),
    5: (COLUMN_MAPPING,),
    6: (IDENTITY_COLUMNS,),
}
_READER_VERSION_FEATURES = {2: (COLUMN_MAPPING,)}

# A feature that needs another one listed too.
FEATURE_DEPENDENCIES: Mapping[str, tuple[str, ...]] = {
    ROW_TRACKING: (DOMAIN_METADATA,),
    CLUSTERING: (DOMAIN_METADATA,),
    VARIANT_SHREDDING: (VARIANT_TYPE,),
    ICEBERG_COMPAT_V1: (COLUMN_MAPPING,),
    ICEBERG_COMPAT_V2: (COLUMN_MAPPING,),
}

# Table properties that switch features on.
PROP_APPEND_ONLY = "delta.appendOnly"
PROP_ENABLE_CDF = "delta.enableChangeDataFeed"
PROP_ENABLE_DV = "delta.enableDeletionVectors"
PROP_ENABLE_ROW_TRACKING = "delta.enableRowTracking"
PROP_ENABLE_ICT = "delta.enableInCommitTimestamps"
PROP_ICT_ENABLEMENT_VERSION = "delta.inCommitTimestampEnablementVersion"
PROP_ICT_ENABLEMENT_TIMESTAMP = "delta.inCommitTimestampEnablementTimestamp"
PROP_ENABLE_ICEBERG_V1 = "delta.enableIcebergCompatV1"
PROP_ENABLE_ICEBERG_V2 = "delta.enableIcebergCompatV2"
PROP_ENABLE_TYPE_WIDENING = "delta.enableTypeWidening"
PROP_ENABLE_VARIANT_SHREDDING = "delta.enableVariantShredding"
PROP_COLUMN_MAPPING_MODE = "delta.columnMapping.mode"
CONSTRAINT_PREFIX = "delta.constraints."
META_INVARIANTS = "delta.invariants"
META_GENERATION_EXPRESSION = "delta.generationExpression"
META_IDENTITY_START = "delta.identity.start"
META_CURRENT_DEFAULT = "CURRENT_DEFAULT"


def legacy_features(protocol: Protocol) -> frozenset[str]:
    """Features implied by legacy (pre-table-features) versions of ``protocol``."""
    out: set[str] = set()
    if protocol.min_writer_version < 7:
        for v, feats in _WRITER_VERSION_FEATURES.items():
            if protocol.min_writer_version >= v:
                out.update(feats)
    return frozenset(out)


def _validate_shape(protocol: Protocol) -> None:
    r, w = protocol.min_reader_version, protocol.min_writer_version
    if r < 1 or w < 1:
        raise InvalidTable(f"protocol versions must be >= 1, got ({r}, {w})", rule="DELTA-ACTION-025")
    if r == 3 and protocol.reader_features is None:
        raise InvalidTable("reader version 3 requires a readerFeatures list", rule="DELTA-FEATURE-002")
    if w == 7 and protocol.writer_features is None:
        raise InvalidTable("writer version 7 requires a writerFeatures list", rule="DELTA-FEATURE-002")
    if r == 3 and w < 7:
        raise InvalidTable(f"reader version 3 requires writer version 7, got writer version {w}",
                           rule="DELTA-FEATURE-003")


def check_readable(protocol: Protocol) -> None:
    """Raise Unsupported naming the feature (or version) we cannot read; InvalidTable if malformed."""
    _validate_shape(protocol)
    r = protocol.min_reader_version
    if r > MAX_READER_VERSION:
        raise Unsupported(f"table requires reader version {r}; the reference reads up to {MAX_READER_VERSION}",
                          feature=f"readerVersion{r}", rule="DELTA-ACTION-026",
                          hint="upgrade to a client that implements this protocol version")
    if r == 3:
        for name in sorted(protocol.reader_features or ()):
            if name not in READER_FEATURES_SUPPORTED:
                raise Unsupported(f"table requires reader feature {name!r}, which the reference does not read",
                                  feature=name, rule="DELTA-FEATURE-004")


def _is_true(configuration: Mapping[str, str], key: str) -> bool:
    value = configuration.get(key)
    return isinstance(value, str) and value.strip().lower() == "true"


def is_feature_supported(protocol: Protocol, feature: str) -> bool:
    """Whether ``protocol`` lists or implies ``feature`` (both sides for reader-writer features)."""
    w = protocol.min_writer_version
    if w >= 7:
        writer_ok = feature in (protocol.writer_features or ())
    else:
        writer_ok = feature in legacy_features(protocol)
    if feature not in READER_WRITER_FEATURES:
        return writer_ok
    r = protocol.min_reader_version
    if r >= 3:
        reader_ok = feature in (protocol.reader_features or ())
    else:
        reader_ok = feature in _READER_VERSION_FEATURES.get(r, ()) or (r >= 2 and feature == COLUMN_MAPPING)
    return reader_ok and writer_ok


def _walk_fields(schema: Any):
    """Every StructField at every nesting level."""
    from reference_impl.delta import schema as sch

    stack = [schema]
    while stack:
        t = stack.pop()
        if isinstance(t, sch.StructType):
            for f in t.fields:
                yield f
                stack.append(f.type)
        elif isinstance(t, sch.ArrayType):
            stack.append(t.element_type)
        elif isinstance(t, sch.MapType):
            stack.append(t.key_type)
            stack.append(t.value_type)


def _schema_has_meta(metadata: Metadata, key: str) -> bool:
    return any(key in (f.metadata or {}) for f in _walk_fields(metadata.schema))


def _schema_has_type(metadata: Metadata, name: str) -> bool:
    from reference_impl.delta import schema as sch

    for f in _walk_fields(metadata.schema):
        stack = [f.type]
        while stack:
            t = stack.pop()
            if isinstance(t, sch.PrimitiveType) and t.name == name:
                return True
            if isinstance(t, sch.ArrayType):
                stack.append(t.element_type)
            elif isinstance(t, sch.MapType):
                stack.extend((t.key_type, t.value_type))
    return False


def is_feature_active(protocol: Protocol, metadata: Metadata, feature: str) -> bool:
    """Supported and its metadata condition holds (DELTA-FEATURE-011)."""
    if not is_feature_supported(protocol, feature):
        return False
    conf = metadata.configuration
    if feature == APPEND_ONLY:
        return _is_true(conf, PROP_APPEND_ONLY)
    if feature == CHANGE_DATA_FEED:
        return _is_true(conf, PROP_ENABLE_CDF)
    if feature == DELETION_VECTORS:
        return _is_true(conf, PROP_ENABLE_DV)
    if feature == ROW_TRACKING:
        return _is_true(conf, PROP_ENABLE_ROW_TRACKING)
    if feature == IN_COMMIT_TIMESTAMP:
        return _is_true(conf, PROP_ENABLE_ICT)
    if feature == ICEBERG_COMPAT_V1:
        return _is_true(conf, PROP_ENABLE_ICEBERG_V1)
    if feature == ICEBERG_COMPAT_V2:
        return _is_true(conf, PROP_ENABLE_ICEBERG_V2)
    if feature in (TYPE_WIDENING, TYPE_WIDENING_PREVIEW):
        return _is_true(conf, PROP_ENABLE_TYPE_WIDENING)
    if feature == VARIANT_SHREDDING:
        return _is_true(conf, PROP_ENABLE_VARIANT_SHREDDING)
    if feature == COLUMN_MAPPING:
        return conf.get(PROP_COLUMN_MAPPING_MODE, "none").lower() not in ("", "none")
    if feature == CHECK_CONSTRAINTS:
        return any(k.startswith(CONSTRAINT_PREFIX) for k in conf)
    if feature == INVARIANTS:
        return _schema_has_meta(metadata, META_INVARIANTS)
    if feature == GENERATED_COLUMNS:
        return _schema_has_meta(metadata, META_GENERATION_EXPRESSION)
    if feature == IDENTITY_COLUMNS:
        return _schema_has_meta(metadata, META_IDENTITY_START)
    if feature == ALLOW_COLUMN_DEFAULTS:
        return _schema_has_meta(metadata, META_CURRENT_DEFAULT)
    if feature == TIMESTAMP_NTZ:
        return _schema_has_type(metadata, "timestamp_ntz")
    # domainMetadata, v2Checkpoint, clustering, vacuumProtocolCheck, variantType, catalogManaged:
    # being supported is all they need.
    return True


def check_writable(protocol: Protocol, metadata: Metadata) -> None:
    """Raise Unsupported unless the reference writer implements everything the table needs."""
    check_readable(protocol)
    w = protocol.min_writer_version
    if w > MAX_WRITER_VERSION:
        raise Unsupported(f"table requires writer version {w}; the reference writes up to {MAX_WRITER_VERSION}",
                          feature=f"writerVersion{w}", rule="DELTA-ACTION-026",
                          hint="upgrade to a client that implements this protocol version")
    if w == 7:
        for name in sorted(protocol.writer_features or ()):
            if name not in WRITER_FEATURES_SUPPORTED:
                raise Unsupported(f"table requires writer feature {name!r}, which the reference does not write",
                                  feature=name, rule="DELTA-FEATURE-005")
        for name in sorted(protocol.reader_features or ()):
            if name not in WRITER_FEATURES_SUPPORTED:
                raise Unsupported(f"table requires reader feature {name!r}, which the reference does not write",
                                  feature=name, rule="DELTA-FEATURE-005")
    else:
        # Legacy versions imply features wholesale; refuse only those actually in use.
        for name in sorted(legacy_features(protocol)):
            if name not in WRITER_FEATURES_SUPPORTED and is_feature_active(protocol, metadata, name):
                raise Unsupported(f"table uses {name!r} (implied by writer version {w}), which the reference "
                                  f"does not write", feature=name, rule="DELTA-FEATURE-012")


def _with_dependencies(features: Iterable[str]) -> set[str]:
    out = set(features)
    changed = True
    while changed:
        changed = False
        for f in list(out):
            for dep in FEATURE_DEPENDENCIES.get(f, ()):
                if dep not in out:
                    out.add(dep)
                    changed = True
    return out


def protocol_for_features(features: Iterable[str], legacy: tuple[int, int] | None = None) -> Protocol:
    """The protocol a writer commits to support ``features`` (plus dependencies).

    With ``legacy`` = (reader, writer) and only features those versions imply, the legacy
    protocol is returned as is; otherwise table features are used, keeping every feature the
    legacy versions implied (DELTA-FEATURE-007), readerFeatures only when a reader-writer
    feature needs reader version 3 (DELTA-FEATURE-006).
    """
    wanted = _with_dependencies(features)
    unknown = sorted(f for f in wanted if f not in KNOWN_FEATURES)
    if unknown:
        raise Unsupported(f"unknown table feature {unknown[0]!r}", feature=unknown[0])
    if legacy is not None:
        r, w = legacy
        if not (1 <= r <= MAX_READER_VERSION and 1 <= w <= MAX_WRITER_VERSION):
            raise InvalidTable(f"invalid protocol versions ({r}, {w})", rule="DELTA-ACTION-025")
        base = Protocol(min_reader_version=r, min_writer_version=w,
                        reader_features=frozenset() if r == 3 else None,
                        writer_features=frozenset() if w == 7 else None)
        implied = set(legacy_features(base)) if w < 7 else set()
        reader_implied = set(_READER_VERSION_FEATURES.get(r, ())) if r < 3 else set()
        if w < 7 and r < 3:
            needs_reader_list = {f for f in wanted if f in READER_WRITER_FEATURES} - reader_implied
            if wanted <= implied and not needs_reader_list:
                return base
        wanted |= implied
        if not wanted:
            return base
    elif not wanted:
        return Protocol(min_reader_version=1, min_writer_version=2)
    else:
        r, w = 1, 1
    rw = {f for f in wanted if f in READER_WRITER_FEATURES}
    if rw - {COLUMN_MAPPING} or r == 3:
        return Protocol(min_reader_version=3, min_writer_version=7, reader_features=frozenset(rw),
                        writer_features=frozenset(wanted))
    # Column mapping alone is readable at reader version 2 without a reader-feature list.
    reader = 2 if rw else max(r, 1)
    return Protocol(min_reader_version=reader, min_writer_version=7, reader_features=None,
                    writer_features=frozenset(wanted))


def check_type_changes(metadata: Metadata) -> None:
    """Raise Unsupported for a recorded type change the reader cannot upcast (DELTA-TYPEWIDEN-012)."""
    for f in _walk_fields(metadata.schema):
        raw = (f.metadata or {}).get("delta.typeChanges")
        if raw is None:
            continue
        try:
            changes = jsontext.loads(raw) if isinstance(raw, str) else raw
            pairs = [(c["fromType"], c["toType"]) for c in changes]
        except (ValueError, TypeError, KeyError):
            raise InvalidTable(f"column {f.name!r}: delta.typeChanges is not a list of "
                               f"{{fromType, toType}} objects", rule="DELTA-TYPEWIDEN-005") from None
        for src, dst in pairs:
            if not is_supported_widening(src, dst):
                raise Unsupported(f"column {f.name!r}: type change {src} -> {dst} is not a supported widening",
                                  feature=TYPE_WIDENING, rule="DELTA-TYPEWIDEN-012")


_INT_RANK = {"byte": 0, "short": 1, "integer": 2, "long": 3}


def _decimal(t: Any) -> tuple[int, int] | None:
    if isinstance(t, str) and t.startswith("decimal(") and t.endswith(")"):
        try:
            p, s = t[8:-1].split(",")
            return int(p), int(s)
        except ValueError:
            return None
    return None


def is_supported_widening(src: Any, dst: Any) -> bool:
    """Whether ``src -> dst`` (wire type names) is one of the spec's widenings (DELTA-TYPEWIDEN-002)."""
    if not isinstance(src, str) or not isinstance(dst, str):
        return False
    src, dst = src.replace(" ", ""), dst.replace(" ", "")
    if src in _INT_RANK and dst in _INT_RANK:
        return _INT_RANK[src] < _INT_RANK[dst]
    if src == "float" and dst == "double":
        return True
    if src in ("byte", "short", "integer") and dst == "double":
        return True
    if src == "date" and dst == "timestamp_ntz":
        return True
    d_dst = _decimal(dst)
    if d_dst is None:
        return False
    p2, s2 = d_dst
    d_src = _decimal(src)
    if d_src is not None:
        p1, s1 = d_src
        k1, k2 = p2 - p1, s2 - s1
        return k1 >= k2 >= 0
    if src in ("byte", "short", "integer"):
        return p2 - 10 >= s2 >= 0
    if src == "long":
        return p2 - 20 >= s2 >= 0
    return False
