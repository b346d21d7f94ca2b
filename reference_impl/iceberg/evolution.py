"""Schema Evolution: which changes between two schemas are allowed, checked by field id.

Allowed: add (fresh ids above ``last-column-id``), drop, rename, reorder, and the primitive
promotions of the spec's table, per format version (v1/v2: int->long, float->double,
decimal(P,S)->decimal(P',S) with P'>P; v3 adds unknown->any and date->timestamp/timestamp_ns).
Not allowed: moving a field to another parent, changing a primitive into a nested type or back,
changing the kind of a nested type, making an optional field required, changing an
``initial-default``, and promoting a partition source when its transform's output would change.
``check_schema_evolution`` returns violations with rule ids; it never raises for a bad change.
"""

from __future__ import annotations

from typing import Iterable

from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T

Violation = T.Violation


def is_promotion_allowed(old: T.IcebergType, new: T.IcebergType, format_version: int) -> bool:
    """Whether ``old`` may be promoted to ``new`` (identical types count as allowed)."""
    if old == new:
        return True
    if old == T.INT and new == T.LONG:
        return True
    if old == T.FLOAT and new == T.DOUBLE:
        return True
    if isinstance(old, T.DecimalType) and isinstance(new, T.DecimalType):
        return new.scale == old.scale and new.precision > old.precision
    if format_version >= 3:
        if old == T.UNKNOWN:
            return True
        if old == T.DATE and new in (T.TIMESTAMP, T.TIMESTAMP_NS):
            return True
    return False


def _promotion_rule(old: T.IcebergType, new: T.IcebergType, format_version: int) -> str:
    if isinstance(old, T.DecimalType) and isinstance(new, T.DecimalType):
        return "ICEBERG-EVOL-006"
    if old == T.DATE and new in (T.TIMESTAMPTZ, T.TIMESTAMPTZ_NS):
        return "ICEBERG-EVOL-004"
    if format_version < 3 and (old == T.UNKNOWN or (old == T.DATE and new in (T.TIMESTAMP, T.TIMESTAMP_NS))):
        return "ICEBERG-EVOL-003"
    return "ICEBERG-EVOL-002"


def _kind(t: T.IcebergType) -> str:
    if isinstance(t, T.StructType):
        return "struct"
    if isinstance(t, T.ListType):
        return "list"
    if isinstance(t, T.MapType):
        return "map"
    return "primitive"


def _transform_output_changes(transform: X.Transform, old: T.IcebergType, new: T.IcebergType) -> bool:
    """Whether promoting a source from ``old`` to ``new`` can change this transform's output."""
    if isinstance(transform, (X.VoidTransform, X.UnknownTransform)):
        return False
    if old == T.DATE and new in T.TIMESTAMP_TYPES:
        # year/month/day of a date equal those of its midnight timestamp; bucket hashes days vs
        # microseconds and identity changes the value's type, so those outputs change.
        return not isinstance(transform, (X.YearTransform, X.MonthTransform, X.DayTransform))
    # int->long, float->double and decimal widening keep every transform's output (Appendix B note 1).
    return False


def check_schema_evolution(
    old: T.Schema,
    new: T.Schema,
    *,
    format_version: int,
    last_column_id: int | None = None,
    partition_specs: Iterable[P.PartitionSpec] = (),
) -> list[T.Violation]:
    """Every rule the change ``old`` -> ``new`` breaks (empty when the evolution is allowed)."""
    out: list[T.Violation] = []
    old_ids, new_ids = T.index_by_id(old), T.index_by_id(new)
    old_par, new_par = T.index_parents(old), T.index_parents(new)
    new_paths = {f.id: ".".join(p) for f, p, _ in T.walk_with_context(new)}
    old_paths = {f.id: ".".join(p) for f, p, _ in T.walk_with_context(old)}
    last = last_column_id if last_column_id is not None else old.highest_field_id

    out.extend(T.validate_schema(new, format_version))

    for fid, nf in new_ids.items():
        where = new_paths.get(fid, str(fid))
        of = old_ids.get(fid)
        if of is None:
            if fid <= last:
                out.append(T.Violation(rule="ICEBERG-EVOL-009", message=f"new field id {fid} is not above last-column-id {last} (ids are never reused)", where=where))
            parent = new_par.get(fid)
            # A brand-new field whose parent existed before: a real add into an existing struct.
            if nf.required and (parent is None or parent in old_ids):
                if parent is None or isinstance(old_ids[parent].type, T.StructType):
                    if format_version < 3:
                        out.append(T.Violation(rule="ICEBERG-SCHEMA-022", message="a required field cannot be added before v3 (no defaults to fill old rows)", where=where))
                    elif nf.initial_default in (None, T.NO_DEFAULT) or nf.write_default in (None, T.NO_DEFAULT):
                        out.append(T.Violation(rule="ICEBERG-SCHEMA-022", message="an added required field needs non-null initial-default and write-default", where=where))
            continue
        if old_par.get(fid) != new_par.get(fid):
            out.append(T.Violation(rule="ICEBERG-EVOL-013", message=f"field {fid} moved from {old_paths.get(fid)} to {where} (fields cannot change parent)", where=where))
        ok, nk = _kind(of.type), _kind(nf.type)
        if of.type == T.UNKNOWN and format_version >= 3:
            pass  # v3: unknown may become any type, nested ones included
        elif ok != nk:
            out.append(T.Violation(rule="ICEBERG-EVOL-013", message=f"field {where} changed from {ok} to {nk}", where=where))
        elif ok == "primitive" and not is_promotion_allowed(of.type, nf.type, format_version):
            out.append(T.Violation(rule=_promotion_rule(of.type, nf.type, format_version), message=f"{of.type} cannot be promoted to {nf.type} in v{format_version}", where=where))
        if not of.required and nf.required:
            out.append(T.Violation(rule="ICEBERG-SCHEMA-002", message=f"field {where} changed from optional to required", where=where))
        if of.initial_default is not T.NO_DEFAULT and nf.initial_default != of.initial_default:
            out.append(T.Violation(rule="ICEBERG-SCHEMA-014", message=f"initial-default of {where} changed", where=where))
        if of.initial_default is T.NO_DEFAULT and nf.initial_default not in (T.NO_DEFAULT, None):
            out.append(T.Violation(rule="ICEBERG-SCHEMA-014", message=f"initial-default of existing field {where} may only be set when the field is added", where=where))

    for spec in partition_specs:
        for pf in spec.fields:
            for sid in pf.source_ids:
                of, nf = old_ids.get(sid), new_ids.get(sid)
                if of is None or nf is None or of.type == nf.type:
                    continue
                if _transform_output_changes(pf.transform, of.type, nf.type):
                    out.append(
                        T.Violation(
                            rule="ICEBERG-EVOL-008",
                            message=f"source {new_paths.get(sid)} of partition field {pf.name!r} ({pf.transform}) cannot be promoted from {of.type} to {nf.type}",
                            where=new_paths.get(sid, str(sid)),
                        )
                    )
    return out


def changes(old: T.Schema, new: T.Schema) -> dict[str, list[int]]:
    """What changed by id: added, dropped, renamed, promoted, moved ids (reorders are not changes)."""
    o, n = T.index_by_id(old), T.index_by_id(new)
    op, np_ = T.index_parents(old), T.index_parents(new)
    return {
        "added": sorted(set(n) - set(o)),
        "dropped": sorted(set(o) - set(n)),
        "renamed": sorted(i for i in set(o) & set(n) if o[i].name != n[i].name),
        "promoted": sorted(i for i in set(o) & set(n) if _kind(o[i].type) == "primitive" and o[i].type != n[i].type),
        "moved": sorted(i for i in set(o) & set(n) if op.get(i) != np_.get(i)),
    }
