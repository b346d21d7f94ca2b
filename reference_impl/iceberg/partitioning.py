"""Partitioning and Sorting: partition specs and sort orders, their JSON (Appendix C), and their checks.

Version-specific wire rules live here only: v1 specs carry no partition field ids (the
reference implementation numbers them 1000, 1001, ... in spec order, and so do we); from v2
``field-id`` is required; v3 adds ``source-ids`` for multi-argument transforms, written
instead of ``source-id``. The model (``PartitionField.source_ids``) is version-agnostic.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterable

from reference_impl.errors import InvalidTable
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T

# Appendix C wire keys.
SPEC_ID = "spec-id"
FIELDS = "fields"
SOURCE_ID = "source-id"
SOURCE_IDS = "source-ids"
FIELD_ID = "field-id"
NAME = "name"
TRANSFORM = "transform"
ORDER_ID = "order-id"
DIRECTION = "direction"
NULL_ORDER = "null-order"
ASC = "asc"
DESC = "desc"
NULLS_FIRST = "nulls-first"
NULLS_LAST = "nulls-last"
DIRECTIONS = (ASC, DESC)
NULL_ORDERS = (NULLS_FIRST, NULLS_LAST)

# Partition Evolution: v1 ids were assigned from 1000 by the reference implementation.
PARTITION_DATA_ID_START = 1000
# Java writes last-partition-id 999 for an unpartitioned table (no field yet).
UNPARTITIONED_LAST_PARTITION_ID = PARTITION_DATA_ID_START - 1
UNSORTED_ORDER_ID = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionField:
    """One partition field: source column id(s), partition field id, transform and name."""

    source_ids: tuple[int, ...]
    field_id: int
    name: str
    transform: X.Transform

    @property
    def source_id(self) -> int:
        """The single source id (the first one for multi-argument transforms)."""
        return self.source_ids[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionSpec:
    """A partition spec: its id and ordered fields."""

    spec_id: int = 0
    fields: tuple[PartitionField, ...] = ()

    @property
    def is_unpartitioned(self) -> bool:
        """True when no field produces a value (no fields, or only void transforms)."""
        return all(isinstance(f.transform, X.VoidTransform) for f in self.fields)

    @property
    def last_assigned_field_id(self) -> int:
        """The highest partition field id, or 999 when there is none."""
        return max((f.field_id for f in self.fields), default=UNPARTITIONED_LAST_PARTITION_ID)

    @property
    def has_unknown_transform(self) -> bool:
        """Whether any field uses a transform this implementation does not know."""
        return any(not f.transform.is_known for f in self.fields)


UNPARTITIONED = PartitionSpec(spec_id=0, fields=())


@dataclass(frozen=True, slots=True, kw_only=True)
class SortField:
    """One sort key: source id(s), transform, direction (asc/desc) and null order."""

    source_ids: tuple[int, ...]
    transform: X.Transform
    direction: str = ASC
    null_order: str = NULLS_FIRST

    @property
    def source_id(self) -> int:
        """The single source id (the first one for multi-argument transforms)."""
        return self.source_ids[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class SortOrder:
    """A sort order: its id and ordered fields (order id 0 is the unsorted order)."""

    order_id: int = UNSORTED_ORDER_ID
    fields: tuple[SortField, ...] = ()

    @property
    def is_unsorted(self) -> bool:
        """Whether the order has no fields."""
        return not self.fields


UNSORTED = SortOrder(order_id=UNSORTED_ORDER_ID, fields=())


# ---------------------------------------------------------------------------------------------
# JSON <-> model


def _loads(obj: Any, what: str, rule: str) -> Any:
    if isinstance(obj, (str, bytes)):
        try:
            return json.loads(obj)
        except (ValueError, RecursionError) as exc:
            raise InvalidTable(f"{what} is not valid JSON: {exc}", rule=rule) from None
    return obj


def _int(v: Any, key: str, where: str, rule: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise InvalidTable(f"{key} must be a JSON int, got {v!r} at {where}", rule=rule)
    return v


def _source_ids(obj: dict, where: str, format_version: int, rule: str) -> tuple[int, ...]:
    has_one, has_many = SOURCE_ID in obj, SOURCE_IDS in obj
    if has_many and format_version < 3:
        raise InvalidTable(f"source-ids needs format version 3 (table is v{format_version}) at {where}", rule=rule)
    if has_many:
        raw = obj[SOURCE_IDS]
        if not isinstance(raw, list) or not raw:
            raise InvalidTable(f"source-ids must be a non-empty JSON list of ints at {where}", rule=rule)
        ids = tuple(_int(i, SOURCE_IDS, where, rule) for i in raw)
        if has_one and obj[SOURCE_ID] != ids[0]:
            raise InvalidTable(f"source-id and source-ids disagree at {where}", rule=rule)
        return ids
    if has_one:
        return (_int(obj[SOURCE_ID], SOURCE_ID, where, rule),)
    raise InvalidTable(f"{where} needs source-id (or source-ids in v3)", rule=rule)


def parse_partition_fields(raw: Any, *, format_version: int, spec_id: int = 0, next_v1_id: int = PARTITION_DATA_ID_START) -> PartitionSpec:
    """A spec from the bare fields list (v1 ``partition-spec``, manifest ``partition-spec`` key)."""
    raw = _loads(raw, "partition spec", "ICEBERG-SERDE-005")
    if not isinstance(raw, list):
        raise InvalidTable("partition fields must be a JSON list", rule="ICEBERG-SERDE-005")
    out = []
    for i, f in enumerate(raw):
        where = f"partition spec {spec_id} field [{i}]"
        if not isinstance(f, dict):
            raise InvalidTable(f"partition field must be an object at {where}", rule="ICEBERG-PART-035")
        for key in (NAME, TRANSFORM):
            if key not in f:
                raise InvalidTable(f"partition field lacks {key} at {where}", rule="ICEBERG-PART-035")
        if not isinstance(f[NAME], str):
            raise InvalidTable(f"partition field name must be a string at {where}", rule="ICEBERG-PART-035")
        if FIELD_ID in f:
            fid = _int(f[FIELD_ID], FIELD_ID, where, "ICEBERG-PART-035")
        elif format_version == 1:
            fid = next_v1_id + i
        else:
            raise InvalidTable(f"partition field lacks field-id (required from v2) at {where}", rule="ICEBERG-PART-035")
        out.append(
            PartitionField(
                source_ids=_source_ids(f, where, format_version, "ICEBERG-PART-035"),
                field_id=fid,
                name=f[NAME],
                transform=X.parse_transform(f[TRANSFORM]),
            )
        )
    return PartitionSpec(spec_id=spec_id, fields=tuple(out))


def parse_partition_spec(obj: Any, *, format_version: int) -> PartitionSpec:
    """A spec from its object form {"spec-id", "fields"}; InvalidTable on a bad shape."""
    obj = _loads(obj, "partition spec", "ICEBERG-SERDE-005")
    if not isinstance(obj, dict) or FIELDS not in obj:
        raise InvalidTable('partition spec must be an object with "spec-id" and "fields"', rule="ICEBERG-SERDE-005")
    sid = _int(obj.get(SPEC_ID, 0), SPEC_ID, "partition spec", "ICEBERG-SERDE-005")
    return parse_partition_fields(obj[FIELDS], format_version=format_version, spec_id=sid)


def partition_fields_to_list(spec: PartitionSpec, *, format_version: int) -> list[dict]:
    """The bare fields list; v1 omits field-id (a blank cell: "should be omitted") unless the ids differ from 1000, 1001, ..."""
    # Dropping ids that a reader could not re-derive would change the spec's meaning, so an
    # evolved v1 spec (as Java writes them) keeps its ids.
    derived = all(f.field_id == PARTITION_DATA_ID_START + i for i, f in enumerate(spec.fields))
    write_ids = format_version >= 2 or not derived
    out = []
    for f in spec.fields:
        d: dict[str, Any] = {}
        if len(f.source_ids) == 1:
            d[SOURCE_ID] = f.source_ids[0]
        else:
            if format_version < 3:
                raise InvalidTable(f"multi-argument partition field {f.name} needs format version 3", rule="ICEBERG-PART-036")
            d[SOURCE_IDS] = list(f.source_ids)
        if write_ids:
            d[FIELD_ID] = f.field_id
        d[NAME] = f.name
        d[TRANSFORM] = str(f.transform)
        out.append(d)
    return out


def partition_spec_to_dict(spec: PartitionSpec, *, format_version: int) -> dict:
    """The object form {"spec-id", "fields"}."""
    return {SPEC_ID: spec.spec_id, FIELDS: partition_fields_to_list(spec, format_version=format_version)}


def partition_spec_to_json(spec: PartitionSpec, *, format_version: int) -> str:
    """Compact JSON of the object form."""
    return json.dumps(partition_spec_to_dict(spec, format_version=format_version), separators=(",", ":"))


def parse_sort_order(obj: Any, *, format_version: int) -> SortOrder:
    """A sort order from {"order-id", "fields"}; InvalidTable on bad direction/null-order or shape."""
    obj = _loads(obj, "sort order", "ICEBERG-SERDE-006")
    if not isinstance(obj, dict) or ORDER_ID not in obj or FIELDS not in obj or not isinstance(obj[FIELDS], list):
        raise InvalidTable('sort order must be an object with "order-id" and a "fields" list', rule="ICEBERG-SERDE-006")
    oid = _int(obj[ORDER_ID], ORDER_ID, "sort order", "ICEBERG-SERDE-006")
    out = []
    for i, f in enumerate(obj[FIELDS]):
        where = f"sort order {oid} field [{i}]"
        if not isinstance(f, dict):
            raise InvalidTable(f"sort field must be an object at {where}", rule="ICEBERG-SORT-007")
        for key in (TRANSFORM, DIRECTION, NULL_ORDER):
            if key not in f:
                raise InvalidTable(f"sort field lacks {key} at {where}", rule="ICEBERG-SORT-007")
        if f[DIRECTION] not in DIRECTIONS:
            raise InvalidTable(f"sort direction must be asc or desc, got {f[DIRECTION]!r} at {where}", rule="ICEBERG-SORT-002")
        if f[NULL_ORDER] not in NULL_ORDERS:
            raise InvalidTable(f"null-order must be nulls-first or nulls-last, got {f[NULL_ORDER]!r} at {where}", rule="ICEBERG-SORT-002")
        out.append(
            SortField(
                source_ids=_source_ids(f, where, format_version, "ICEBERG-SORT-007"),
                transform=X.parse_transform(f[TRANSFORM]),
                direction=f[DIRECTION],
                null_order=f[NULL_ORDER],
            )
        )
    return SortOrder(order_id=oid, fields=tuple(out))


def sort_order_to_dict(order: SortOrder, *, format_version: int) -> dict:
    """The JSON-ready form {"order-id", "fields": [{transform, source-id(s), direction, null-order}]}."""
    fields = []
    for f in order.fields:
        d: dict[str, Any] = {TRANSFORM: str(f.transform)}
        if len(f.source_ids) == 1:
            d[SOURCE_ID] = f.source_ids[0]
        else:
            if format_version < 3:
                raise InvalidTable("multi-argument sort field needs format version 3", rule="ICEBERG-SORT-007")
            d[SOURCE_IDS] = list(f.source_ids)
        d[DIRECTION] = f.direction
        d[NULL_ORDER] = f.null_order
        fields.append(d)
    return {ORDER_ID: order.order_id, FIELDS: fields}


def sort_order_to_json(order: SortOrder, *, format_version: int) -> str:
    """Compact JSON of a sort order."""
    return json.dumps(sort_order_to_dict(order, format_version=format_version), separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# Derived types and checks


def partition_type(spec: PartitionSpec, schema: T.Schema) -> T.StructType:
    """The partition tuple struct: one optional field per partition field, id = partition field id."""
    fields = []
    for f in spec.fields:
        src = schema.find_type(f.source_id)
        if src is None:
            raise InvalidTable(f"partition field {f.name!r} refers to missing source id {f.source_id}", rule="ICEBERG-PART-002")
        # Unknown transforms still occupy a slot in the tuple; readers just never filter on them.
        if f.transform.is_known and not f.transform.can_transform(src):
            raise InvalidTable(f"partition field {f.name!r}: transform {f.transform} cannot apply to {src}", rule=_rule_for(f.transform))
        rtype = f.transform.result_type(src)
        fields.append(T.NestedField(id=f.field_id, name=f.name, type=rtype, required=False))
    return T.StructType(fields=tuple(fields))


def _rule_for(t: X.Transform) -> str:
    return X._SOURCE_RULE.get(type(t).__name__, "ICEBERG-PART-010")


def partition_values(spec: PartitionSpec, schema: T.Schema, row: dict[int, Any]) -> tuple[Any, ...]:
    """The partition tuple of one row given as {source field id: internal value} (nested ids allowed)."""
    out = []
    for f in spec.fields:
        src = schema.find_type(f.source_id)
        if src is None:
            raise InvalidTable(f"partition field {f.name!r} refers to missing source id {f.source_id}", rule="ICEBERG-PART-002")
        out.append(f.transform.apply(row.get(f.source_id), src))
    return tuple(out)


def validate_partition_spec(spec: PartitionSpec, schema: T.Schema, *, format_version: int) -> list[T.Violation]:
    """Every broken partition-spec rule against a schema (one pass, never raises)."""
    out: list[T.Violation] = []
    ctx = {f.id: (f, anc) for f, _p, anc in T.walk_with_context(schema)}
    seen_ids: dict[int, str] = {}
    seen_names: set[str] = set()
    for f in spec.fields:
        where = f"spec {spec.spec_id} field {f.name}"
        if f.field_id in seen_ids:
            out.append(T.Violation(rule="ICEBERG-PART-003", message=f"partition field id {f.field_id} used twice", where=where))
        seen_ids[f.field_id] = f.name
        if f.name in seen_names:
            out.append(T.Violation(rule="ICEBERG-PART-002", message=f"partition field name {f.name!r} used twice", where=where))
        seen_names.add(f.name)
        if len(f.source_ids) > 1 and format_version < 3:
            out.append(T.Violation(rule="ICEBERG-PART-035", message="source-ids (multi-argument transforms) needs format version 3", where=where))
        for sid in f.source_ids:
            if sid not in ctx:
                out.append(T.Violation(rule="ICEBERG-PART-002", message=f"source id {sid} is not in the schema", where=where))
                continue
            src, anc = ctx[sid]
            if not T.is_primitive(src.type):
                out.append(T.Violation(rule="ICEBERG-PART-004", message=f"source {src.name} is not primitive ({src.type})", where=where))
            if any(isinstance(a.type, (T.ListType, T.MapType)) for a in anc):
                out.append(T.Violation(rule="ICEBERG-PART-004", message=f"source {src.name} is inside a list or map", where=where))
            if f.transform.is_known and not f.transform.can_transform(src.type):
                out.append(T.Violation(rule=_rule_for(f.transform), message=f"transform {f.transform} does not accept {src.type}", where=where))
    return out


Violation = T.Violation


def check_writable(spec: PartitionSpec) -> None:
    """Raise InvalidTable when a writer would commit with an unknown transform (PART-007)."""
    for f in spec.fields:
        if not f.transform.is_known:
            raise InvalidTable(f"cannot write with partition field {f.name!r}: unknown transform {f.transform}", rule="ICEBERG-PART-007")


def validate_sort_order(order: SortOrder, schema: T.Schema | None = None) -> list[T.Violation]:
    """Broken sort-order rules: order 0 must be empty, a non-empty order needs id > 0, transforms fit sources."""
    out: list[T.Violation] = []
    where = f"sort order {order.order_id}"
    if order.order_id == UNSORTED_ORDER_ID and order.fields:
        out.append(T.Violation(rule="ICEBERG-SORT-003", message="order id 0 is reserved for the unsorted order", where=where))
    for f in order.fields:
        if f.direction not in DIRECTIONS or f.null_order not in NULL_ORDERS:
            out.append(T.Violation(rule="ICEBERG-SORT-002", message=f"bad direction/null-order {f.direction}/{f.null_order}", where=where))
        if schema is None:
            continue
        for sid in f.source_ids:
            src = schema.find_type(sid)
            if src is None:
                out.append(T.Violation(rule="ICEBERG-SORT-002", message=f"sort source id {sid} is not in the schema", where=where))
            elif f.transform.is_known and not f.transform.can_transform(src):
                out.append(T.Violation(rule="ICEBERG-SORT-002", message=f"transform {f.transform} does not accept {src}", where=where))
    return out


def specs_equivalent(a: PartitionSpec, b: PartitionSpec) -> bool:
    """Same number of fields and, pairwise, the same source ids, transform and name (ids and spec-id ignored)."""
    return len(a.fields) == len(b.fields) and all(
        x.source_ids == y.source_ids and str(x.transform) == str(y.transform) and x.name == y.name for x, y in zip(a.fields, b.fields)
    )


def find_equivalent_spec(spec: PartitionSpec, existing: Iterable[PartitionSpec]) -> PartitionSpec | None:
    """An existing spec a writer must reuse instead of adding ``spec`` (PART-008), or None."""
    return next((e for e in existing if specs_equivalent(spec, e)), None)


def assign_partition_field_ids(
    fields: Iterable[tuple[tuple[int, ...], str, X.Transform]],
    *,
    existing: Iterable[PartitionSpec],
    last_partition_id: int,
    spec_id: int,
) -> tuple[PartitionSpec, int]:
    """New spec from (source ids, name, transform): reuse ids of equivalent fields, else last-partition-id + 1, ..."""
    known: dict[tuple[tuple[int, ...], str], int] = {}
    for s in existing:
        for f in s.fields:
            known.setdefault((f.source_ids, str(f.transform)), f.field_id)
    out, last = [], last_partition_id
    for source_ids, name, transform in fields:
        key = (tuple(source_ids), str(transform))
        if key in known:
            fid = known[key]
        else:
            last += 1
            fid = last
            known[key] = fid
        out.append(PartitionField(source_ids=tuple(source_ids), field_id=fid, name=name, transform=transform))
    return PartitionSpec(spec_id=spec_id, fields=tuple(out)), max(last, last_partition_id)


def sort_order_satisfies(have: SortOrder, want: SortOrder, schema: T.Schema | None = None) -> bool:
    """Whether data sorted by ``have`` is also sorted by ``want`` (prefix-wise, with transform refinement)."""
    if want.is_unsorted:
        return True
    if len(want.fields) > len(have.fields):
        return False
    for h, w in zip(have.fields, want.fields):
        if h.source_ids != w.source_ids or h.direction != w.direction or h.null_order != w.null_order:
            return False
        src = schema.find_type(h.source_id) if schema is not None else None
        if not h.transform.satisfies_order_of(w.transform, src):
            return False
    return True


def partition_path(spec: PartitionSpec, schema: T.Schema, values: tuple[Any, ...]) -> str:
    """The conventional directory for a partition tuple: name=human-value pairs, URL-encoded, joined by "/" (as Java writes them)."""
    if len(values) != len(spec.fields):
        raise InvalidTable(f"partition tuple has {len(values)} values for {len(spec.fields)} fields")
    parts = []
    for f, v in zip(spec.fields, values):
        src = schema.find_type(f.source_id)
        if src is None:
            raise InvalidTable(f"partition field {f.name!r} refers to missing source id {f.source_id}", rule="ICEBERG-PART-002")
        text = X.human_string(v, f.transform, src)
        parts.append(f"{urllib.parse.quote_plus(f.name)}={urllib.parse.quote_plus(text)}")
    return "/".join(parts)
