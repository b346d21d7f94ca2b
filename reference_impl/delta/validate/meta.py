"""Protocol, metadata and schema views used by the checks (tolerant of malformed input)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

from reference_impl.common import jsontext

# Table property keys, spelled once.
P_APPEND_ONLY = "delta.appendOnly"
P_CDF = "delta.enableChangeDataFeed"
P_MAPPING_MODE = "delta.columnMapping.mode"
P_MAX_COLUMN_ID = "delta.columnMapping.maxColumnId"
P_ENABLE_DV = "delta.enableDeletionVectors"
P_ROW_TRACKING = "delta.enableRowTracking"
P_ROW_TRACKING_SUSPENDED = "delta.rowTrackingSuspended"
P_ROW_ID_COL = "delta.rowTracking.materializedRowIdColumnName"
P_ROW_VERSION_COL = "delta.rowTracking.materializedRowCommitVersionColumnName"
P_ICT = "delta.enableInCommitTimestamps"
P_ICT_VERSION = "delta.inCommitTimestampEnablementVersion"
P_ICT_TIMESTAMP = "delta.inCommitTimestampEnablementTimestamp"
P_TYPE_WIDENING = "delta.enableTypeWidening"
P_ICEBERG_V1 = "delta.enableIcebergCompatV1"
P_ICEBERG_V2 = "delta.enableIcebergCompatV2"
P_VARIANT_SHREDDING = "delta.enableVariantShredding"
P_STATS_JSON = "delta.checkpoint.writeStatsAsJson"
P_STATS_STRUCT = "delta.checkpoint.writeStatsAsStruct"
P_CONSTRAINT_PREFIX = "delta.constraints."

# Column metadata keys.
M_ID = "delta.columnMapping.id"
M_PHYSICAL = "delta.columnMapping.physicalName"
M_INVARIANTS = "delta.invariants"
M_GENERATION = "delta.generationExpression"
M_DEFAULT = "CURRENT_DEFAULT"
M_TYPE_CHANGES = "delta.typeChanges"
M_IDENTITY_START = "delta.identity.start"
M_IDENTITY_STEP = "delta.identity.step"
M_IDENTITY_EXPLICIT = "delta.identity.allowExplicitInsert"
M_IDENTITY_PREFIX = "delta.identity."

# Domains.
D_ROW_TRACKING = "delta.rowTracking"
D_CLUSTERING = "delta.clustering"

PRIMITIVES = {"string", "long", "integer", "short", "byte", "float", "double", "boolean", "binary", "date",
              "timestamp", "timestamp_ntz", "void", "variant"}
DECIMAL_RE = re.compile(r"^decimal\(\s*(\d{1,40})\s*,\s*(\d{1,40})\s*\)$", re.ASCII)

# Legacy writer versions implying features (cumulative).
LEGACY_WRITER = {2: {"appendOnly", "invariants"}, 3: {"checkConstraints"}, 4: {"changeDataFeed", "generatedColumns"},
                 5: {"columnMapping"}, 6: {"identityColumns"}}


def truthy(v: Any) -> bool:
    """Table property boolean."""
    return isinstance(v, str) and v.strip().lower() == "true"


@dataclass(frozen=True, slots=True)
class Proto:
    """Protocol view: versions and feature sets (None when a list is absent)."""

    reader: int
    writer: int
    rf: frozenset[str] | None
    wf: frozenset[str] | None

    @classmethod
    def of(cls, p: Any) -> "Proto":
        """Tolerant view of a protocol dict."""
        p = p if isinstance(p, dict) else {}
        r = p.get("minReaderVersion")
        w = p.get("minWriterVersion")
        rf = p.get("readerFeatures")
        wf = p.get("writerFeatures")
        return cls(reader=r if isinstance(r, int) else 1, writer=w if isinstance(w, int) else 2,
                   rf=frozenset(x for x in rf if isinstance(x, str)) if isinstance(rf, list) else None,
                   wf=frozenset(x for x in wf if isinstance(x, str)) if isinstance(wf, list) else None)

    def writer_supports(self, feature: str, legacy_min: int | None = None) -> bool:
        """Feature supported for writers: listed at v7, or implied by a legacy writer version."""
        if self.writer >= 7:
            return feature in (self.wf or ())
        return legacy_min is not None and self.writer >= legacy_min

    def both(self, feature: str) -> bool:
        """Listed in both lists at (3,7)."""
        return self.reader >= 3 and self.writer >= 7 and feature in (self.rf or ()) and feature in (self.wf or ())

    def any_list(self, *features: str) -> bool:
        """Any of the names in either list."""
        return any(f in (self.rf or ()) or f in (self.wf or ()) for f in features)

    def supports_rw(self, *names: str) -> bool:
        """Reader-writer feature (any of its names) in both lists."""
        return any(self.both(n) for n in names)

    def column_mapping(self) -> bool:
        """Column mapping supported by the protocol."""
        reader_ok = self.reader == 2 or (self.reader >= 3 and "columnMapping" in (self.rf or ()))
        writer_ok = self.writer in (5, 6) or (self.writer >= 7 and "columnMapping" in (self.wf or ()))
        return reader_ok and writer_ok


def config(md: Any) -> dict:
    """metaData.configuration as a dict (empty if malformed)."""
    c = md.get("configuration") if isinstance(md, dict) else None
    return c if isinstance(c, dict) else {}


def mapping_mode(md: Any) -> str:
    """Column mapping mode ('none' when absent)."""
    return str(config(md).get(P_MAPPING_MODE) or "none")


def schema_of(md: Any) -> dict | None:
    """Parsed schemaString (None when missing or not JSON)."""
    s = md.get("schemaString") if isinstance(md, dict) else None
    if not isinstance(s, str):
        return None
    try:
        v = jsontext.loads(s)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def partition_columns(md: Any) -> list[str]:
    """metaData.partitionColumns (strings only)."""
    p = md.get("partitionColumns") if isinstance(md, dict) else None
    return [x for x in p if isinstance(x, str)] if isinstance(p, list) else []


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A struct field somewhere in the schema."""

    path: tuple[str, ...]          # logical names from the root
    phys: tuple[str, ...]          # physical names from the root (logical when unmapped)
    field: dict
    in_collection: bool            # under an array or a map

    @property
    def type(self) -> Any:
        """The field's type (string or dict)."""
        return self.field.get("type")

    @property
    def meta(self) -> dict:
        """The field's metadata dict."""
        m = self.field.get("metadata")
        return m if isinstance(m, dict) else {}


def type_children(t: Any) -> Iterator[tuple[str, Any]]:
    """Nested types of an array or map type: (role, type)."""
    if isinstance(t, dict):
        if t.get("type") == "array":
            yield "element", t.get("elementType")
        elif t.get("type") == "map":
            yield "key", t.get("keyType")
            yield "value", t.get("valueType")


def iter_fields(schema: Any, mode: str = "none") -> Iterator[FieldRef]:
    """Every struct field at every nesting level (through arrays and maps), depth first."""

    def walk(t: Any, path: tuple, phys: tuple, coll: bool) -> Iterator[FieldRef]:
        if not isinstance(t, dict):
            return
        if t.get("type") == "struct" and isinstance(t.get("fields"), list):
            for f in t["fields"]:
                if not isinstance(f, dict):
                    continue
                name = f.get("name") if isinstance(f.get("name"), str) else "?"
                md = f.get("metadata") if isinstance(f.get("metadata"), dict) else {}
                pn = md.get(M_PHYSICAL) if mode in ("id", "name") and isinstance(md.get(M_PHYSICAL), str) else name
                ref = FieldRef(path=path + (name,), phys=phys + (pn,), field=f, in_collection=coll)
                yield ref
                yield from walk(f.get("type"), ref.path, ref.phys, coll)
        else:
            for role, child in type_children(t):
                yield from walk(child, path + (role,), phys + (role,), True)

    yield from walk(schema, (), (), False)


def top_fields(schema: Any) -> list[dict]:
    """Top-level field dicts."""
    if isinstance(schema, dict) and isinstance(schema.get("fields"), list):
        return [f for f in schema["fields"] if isinstance(f, dict)]
    return []


def type_name(t: Any) -> str:
    """Short name of a type: primitive string or the nested kind."""
    if isinstance(t, str):
        return t
    if isinstance(t, dict):
        return str(t.get("type"))
    return repr(t)


def contains_type(t: Any, pred) -> bool:
    """Whether the type or any nested type satisfies pred(name)."""
    if isinstance(t, str):
        return pred(t)
    if not isinstance(t, dict):
        return False
    if pred(t.get("type")):
        return True
    if t.get("type") == "struct":
        return any(contains_type(f.get("type"), pred) for f in t.get("fields", []) if isinstance(f, dict))
    return any(contains_type(c, pred) for _, c in type_children(t))


def field_by_path(schema: Any, path: list[str], mode: str = "none", physical: bool = False) -> dict | None:
    """Find a (top-level or nested struct) field by logical or physical name path."""
    cur = schema
    found = None
    for part in path:
        if not isinstance(cur, dict) or cur.get("type") != "struct":
            return None
        found = None
        for f in top_fields(cur):
            md = f.get("metadata") if isinstance(f.get("metadata"), dict) else {}
            name = md.get(M_PHYSICAL, f.get("name")) if physical and mode in ("id", "name") else f.get("name")
            if name == part:
                found = f
                break
        if found is None:
            return None
        cur = found.get("type")
    return found


def physical_name(f: dict, mode: str) -> str:
    """Physical name of a field dict."""
    md = f.get("metadata") if isinstance(f.get("metadata"), dict) else {}
    if mode in ("id", "name") and isinstance(md.get(M_PHYSICAL), str):
        return md[M_PHYSICAL]
    return f.get("name")
