"""Appendix A (Avro) and the Manifests / Manifest Lists field tables, over the raw Avro header schema.

The strict readers give up at the first field without an id; these walks list every problem of
a manifest or manifest list schema: ids missing or not JSON ints, unions other than
``[null, T]``, optional fields without a null default, int-keyed maps not stored as arrays of
key/value records, and fields a version requires, forbids or has retired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from reference_impl.iceberg import avro as A
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import types as T


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding in an Avro schema: short rule id, message, schema path."""

    rule: str
    message: str
    path: str


def _is_id(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _branches(t: Any) -> tuple[list, bool]:
    """(non-null branches, optional) of a type (a union or a single type)."""
    if isinstance(t, list):
        return [b for b in t if b != "null"], "null" in t
    return [t], False


def walk_ids(schema: Any, missing_rule: str) -> list[Problem]:
    """Ids (field-id, element-id, key-id/value-id) missing or not ints; bad unions; optional fields without a null default."""
    out: list[Problem] = []
    named: dict[str, Any] = {}

    def need_id(obj: dict, key: str, path: str) -> None:
        if key not in obj:
            out.append(Problem(missing_rule, f"Avro schema has no {key} at {path}", path))
        elif not _is_id(obj[key]):
            out.append(Problem("FMT-006", f"{key} at {path} must be a JSON integer, got {obj[key]!r}", path))

    def typ(t: Any, path: str, depth: int = 0) -> None:
        if depth > 64:
            return
        if isinstance(t, list):
            rest, optional = _branches(t)
            if len(rest) != 1 or (len(t) != 2 and optional) or not optional:
                out.append(Problem("FMT-001", f"union {t!r} at {path} is not [null, type]", path))
            for b in rest:
                typ(b, path, depth + 1)
            return
        if isinstance(t, str):
            if t in named:
                return  # a reference to a named type checked where it was defined
            return
        if not isinstance(t, dict):
            return
        kind = t.get("type")
        if isinstance(t.get("name"), str):
            named[t["name"]] = t
        if kind == "record":
            for f in t.get("fields") or []:
                if not isinstance(f, dict):
                    continue
                fp = f"{path}.{f.get('name')}" if path else str(f.get("name"))
                if _is_variant(t):
                    continue
                need_id(f, A.FIELD_ID, fp)
                ft = f.get("type")
                rest, optional = _branches(ft)
                if optional and isinstance(ft, list) and len(ft) == 2 and "default" not in f:
                    out.append(Problem("FMT-002", f"optional field {fp} has no Avro default", fp))
                typ(ft, fp, depth + 1)
        elif kind == "array":
            items = t.get("items")
            if t.get(A.LOGICAL_TYPE) == A.LT_MAP:
                rec = items if isinstance(items, dict) else named.get(items) if isinstance(items, str) else None
                if not isinstance(rec, dict) or rec.get("type") != "record" or len(rec.get("fields") or []) != 2:
                    out.append(Problem("FMT-003", f"map stored as an array at {path} must hold 2-field key/value records", path))
                typ(items, f"{path}.entry", depth + 1)
            else:
                need_id(t, A.ELEMENT_ID, f"{path}.element")
                typ(items, f"{path}.element", depth + 1)
        elif kind == "map":
            need_id(t, A.KEY_ID, f"{path}.key")
            need_id(t, A.VALUE_ID, f"{path}.value")
            typ(t.get("values"), f"{path}.value", depth + 1)

    typ(schema, "")
    return out


def _is_variant(rec: dict) -> bool:
    names = [f.get("name") for f in rec.get("fields") or [] if isinstance(f, dict)]
    return sorted(names) == ["metadata", "value"] and not any(A.FIELD_ID in f for f in rec.get("fields") if isinstance(f, dict))


def fields_by_id(record: Any) -> dict[int, dict]:
    """A record schema's fields keyed by field-id (fields without an int id left out)."""
    out: dict[int, dict] = {}
    if isinstance(record, dict):
        for f in record.get("fields") or []:
            if isinstance(f, dict) and _is_id(f.get(A.FIELD_ID)):
                out[f[A.FIELD_ID]] = f
    return out


def record_of(field: dict | None) -> dict | None:
    """The record schema of a (possibly optional) record field."""
    if field is None:
        return None
    rest, _opt = _branches(field.get("type"))
    return rest[0] if len(rest) == 1 and isinstance(rest[0], dict) and rest[0].get("type") == "record" else None


def is_optional(field: dict) -> bool:
    return _branches(field.get("type"))[1]


# Which rule names each required field when it is missing (or optional where it must be required).
ENTRY_RULES = {MF.ID_STATUS: "MANIFEST-010", MF.ID_SNAPSHOT_ID: "MANIFEST-011", MF.ID_DATA_FILE: "MANIFEST-013"}
DATA_FILE_RULES = {MF.ID_CONTENT: "MANIFEST-017", MF.ID_FILE_PATH: "MANIFEST-018", MF.ID_FILE_FORMAT: "MANIFEST-019",
                   MF.ID_PARTITION: "MANIFEST-020", MF.ID_RECORD_COUNT: "MANIFEST-021", MF.ID_FILE_SIZE: "MANIFEST-022",
                   MF.ID_BLOCK_SIZE: "MANIFEST-023"}
LIST_RULES = {MF.ML_MANIFEST_PATH: "MLIST-003", MF.ML_MANIFEST_LENGTH: "MLIST-004", MF.ML_PARTITION_SPEC_ID: "MLIST-005",
              MF.ML_CONTENT: "MLIST-006", MF.ML_SEQUENCE_NUMBER: "MLIST-007", MF.ML_MIN_SEQUENCE_NUMBER: "MLIST-008",
              MF.ML_ADDED_SNAPSHOT_ID: "MLIST-009", MF.ML_ADDED_FILES: "MLIST-010", MF.ML_EXISTING_FILES: "MLIST-010",
              MF.ML_DELETED_FILES: "MLIST-010", MF.ML_ADDED_ROWS: "MLIST-011", MF.ML_EXISTING_ROWS: "MLIST-011",
              MF.ML_DELETED_ROWS: "MLIST-011"}
SUMMARY_RULES: dict[int, str] = {}  # contains_null missing or optional: GEN-001 (MLIST-014 is about its value)
# Fields a version's writers must not write, with the rule that says so.
RETIRED = {MF.ID_BLOCK_SIZE: "MANIFEST-023", 106: "MANIFEST-023", 107: "MANIFEST-023"}
INT_KEYED_MAPS = (MF.ID_COLUMN_SIZES, MF.ID_VALUE_COUNTS, MF.ID_NULL_VALUE_COUNTS, MF.ID_NAN_VALUE_COUNTS,
                  MF.ID_DISTINCT_COUNTS, MF.ID_LOWER_BOUNDS, MF.ID_UPPER_BOUNDS)


def _required(struct: T.StructType) -> dict[int, bool]:
    return {f.id: f.required for f in struct.fields}


def table_problems(have: dict[int, dict], want: T.StructType, rules: dict[int, str], what: str, record: Any = None) -> Iterator[Problem]:
    """Required fields of ``want`` missing from (or optional in) ``have`` (a field whose id is unreadable is walk_ids' finding)."""
    id_less = {f.get("name") for f in (record or {}).get("fields") or [] if isinstance(f, dict) and not _is_id(f.get(A.FIELD_ID))}
    for fid, required in _required(want).items():
        if not required:
            continue
        if want.field_by_id(fid) is not None and want.field_by_id(fid).name in id_less:
            continue
        f = have.get(fid)
        rule = rules.get(fid, "GEN-001")
        if f is None:
            yield Problem(rule, f"{what} lacks required field {fid}", f"{what}.{fid}")
        elif is_optional(f):
            yield Problem(rule, f"{what} field {fid} ({f.get('name')}) must be required, not optional", f"{what}.{fid}")


def manifest_problems(schema: dict, version: int) -> Iterator[Problem]:
    """Required, retired and version-gated fields of a manifest's manifest_entry / data_file schema."""
    entry = fields_by_id(schema)
    yield from table_problems(entry, MF.manifest_entry_type(T.StructType(), version), ENTRY_RULES, "manifest_entry", schema)
    if version == 1:
        for fid in (MF.ID_SEQUENCE_NUMBER, MF.ID_FILE_SEQUENCE_NUMBER):
            if fid in entry:
                yield Problem("COMPAT-001", f"a v1 manifest should not write field {fid} ({entry[fid].get('name')})", f"manifest_entry.{fid}")
    data_record = record_of(entry.get(MF.ID_DATA_FILE))
    data = fields_by_id(data_record)
    if not data:
        return
    yield from table_problems(data, MF.data_file_type(T.StructType(), version), DATA_FILE_RULES, "data_file", data_record)
    for fid, rule in RETIRED.items():
        if fid in data and not (version == 1 and fid == MF.ID_BLOCK_SIZE):
            yield Problem(rule, f"field {fid} ({data[fid].get('name')}) must not be written in v{version}", f"data_file.{fid}")
    if MF.ID_DISTINCT_COUNTS in data and version >= 3:
        yield Problem("MANIFEST-028", "distinct_counts (111) is dropped in v3", "data_file.111")
    for fid in MF.RESERVED_DATA_FILE_IDS:
        if fid in data:
            yield Problem("MANIFEST-041", f"field id {fid} is reserved on data_file ({data[fid].get('name')})", f"data_file.{fid}")
    gated = {MF.ID_FIRST_ROW_ID: 3, MF.ID_CONTENT_OFFSET: 3, MF.ID_CONTENT_SIZE: 3, MF.ID_EQUALITY_IDS: 2, MF.ID_REFERENCED_DATA_FILE: 2}
    for fid, since in gated.items():
        if fid in data and version < since:
            yield Problem("GEN-002", f"field {fid} ({data[fid].get('name')}) is a v{since} field, not written in v{version}", f"data_file.{fid}")
    for fid in INT_KEYED_MAPS:
        f = data.get(fid)
        if f is None:
            continue
        rest, _ = _branches(f.get("type"))
        t = rest[0] if rest else None
        if isinstance(t, dict) and t.get("type") == "map":
            yield Problem("FMT-003", f"{f.get('name')} has int keys, so it must be an array of key/value records with logicalType map", f"data_file.{fid}")


def manifest_list_problems(schema: dict, version: int) -> Iterator[Problem]:
    """Required and version-gated fields of a manifest list's manifest_file schema."""
    have = fields_by_id(schema)
    yield from table_problems(have, MF.manifest_file_type(version), LIST_RULES, "manifest_file", schema)
    if version == 1:
        for fid in (MF.ML_SEQUENCE_NUMBER, MF.ML_MIN_SEQUENCE_NUMBER):
            if fid in have:
                yield Problem("COMPAT-001", f"a v1 manifest list should not write field {fid} ({have[fid].get('name')})", f"manifest_file.{fid}")
    if version < 3 and MF.ML_FIRST_ROW_ID in have:
        yield Problem("GEN-002", "first_row_id (520) is a v3 field", f"manifest_file.{MF.ML_FIRST_ROW_ID}")
    parts = have.get(MF.ML_PARTITIONS)
    if parts is not None:
        rest, _ = _branches(parts.get("type"))
        arr = rest[0] if rest else None
        item = arr.get("items") if isinstance(arr, dict) else None
        rec = _branches(item)[0][0] if item is not None and _branches(item)[0] else None
        if isinstance(rec, dict) and rec.get("type") == "record":
            summary = fields_by_id(rec)
            yield from table_problems(summary, MF.FIELD_SUMMARY_TYPE, SUMMARY_RULES, "field_summary", rec)
