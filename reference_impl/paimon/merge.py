"""Primary-key reads: merging the records of one key (docs: primary-key-table/merge-engine, sequence-rowkind).

Every record of a primary-key table carries its key, a ``_SEQUENCE_NUMBER`` and a ``_VALUE_KIND``
(0 ``+I``, 1 ``-U``, 2 ``+U``, 3 ``-D``: PAIMON-DATA-003). The records of one key are taken in
merge order: by the ``sequence.field`` columns when the table has them (``sequence.field.sort-order``
ascending by default; a null sorts first, as Java's record comparator puts it), then by
``_SEQUENCE_NUMBER`` (the larger is the later one: PAIMON-DATA-004), then in input order. The
``merge-engine`` option says what one key becomes:

* ``deduplicate`` (default): the last record; a retraction (``-U``, ``-D``) last means no row;
* ``first-row``: the first record (retractions are refused unless ``ignore-delete``);
* ``partial-update``: each later record overwrites the columns it has non-null; retractions are
  refused unless ``ignore-delete`` or ``partial-update.remove-record-on-delete`` (a ``-D`` then
  removes the row); sequence groups are not implemented here yet (Unsupported);
* ``aggregation``: each value column folded with its ``fields.<f>.aggregate-function`` (default
  ``fields.default-aggregate-function``, else ``last_non_null_value``); retractions go to the
  functions that support them (sum, product, collect, merge_map, last_value, last_non_null_value),
  others need ``fields.<f>.ignore-retract``; ``aggregation.remove-record-on-delete`` makes a
  ``-D`` remove the row, and a table that sets it together with ``fields.<f>.ignore-retract`` on one
  of its columns is invalid (Paimon refuses it: ``conflicting_options``, PAIMON-SCHEMA-010).

A record after a ``-D`` that removed the row starts the row afresh ("remove the whole row"), as
the engines' docs say; Paimon 1.4.1+ keeps the ``-D`` record's values as the state it builds on
(finding paimon-java-remove-record-on-delete-keeps-deleted-values).

``rowkind.field`` takes the kind from a column (``+I``, ``-U``, ``+U``, ``-D``) instead of
``_VALUE_KIND``; ``ignore-delete`` (and its older per-engine spellings) drops every retraction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import InvalidTable, Unsupported

SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
_KIND_NAMES = {"+I": INSERT, "-U": UPDATE_BEFORE, "+U": UPDATE_AFTER, "-D": DELETE}
_RETRACT = (UPDATE_BEFORE, DELETE)
ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")


def _true(options: Mapping[str, str], *keys: str) -> bool:
    return any(str(options.get(k, "")).strip().lower() == "true" for k in keys)


@dataclass(frozen=True, slots=True)
class MergeSpec:
    """How the records of one key merge, from the table's options."""

    engine: str
    key: tuple[str, ...]
    columns: tuple[str, ...]  # every table column, in table order (keys included)
    sequence_fields: tuple[str, ...] = ()
    sequence_descending: bool = False
    rowkind_field: str | None = None
    ignore_delete: bool = False
    remove_record_on_delete: bool = False
    aggregates: Mapping[str, str] = field(default_factory=dict)  # column -> function (aggregation)
    ignore_retract: frozenset[str] = frozenset()
    list_delimiters: Mapping[str, str] = field(default_factory=dict)
    distinct: frozenset[str] = frozenset()

    @classmethod
    def from_options(cls, options: Mapping[str, str], columns: Sequence[str], key: Sequence[str]) -> "MergeSpec":
        engine = str(options.get("merge-engine", "deduplicate")).strip().lower()
        if engine not in ENGINES:
            raise Unsupported(f"merge-engine {engine!r} is not one of {', '.join(ENGINES)}", feature="merge-engine")
        known = set(columns)
        seq = tuple(s.strip() for s in str(options.get("sequence.field", "")).split(",") if s.strip())
        rowkind = str(options.get("rowkind.field", "")).strip() or None
        for name, what in [(s, "sequence.field") for s in seq] + ([(rowkind, "rowkind.field")] if rowkind else []):
            if name not in known:
                raise InvalidTable(f"{what} names {name!r}, which is not a column ({', '.join(columns)})")
        if engine == "first-row" and seq:
            raise InvalidTable("the first-row merge engine does not take a sequence.field")
        if engine == "partial-update" and any(k.endswith(".sequence-group") for k in options):
            raise Unsupported("partial-update sequence groups are not implemented by the reference yet",
                              feature="sequence-group")
        if engine == "partial-update" and any(k.startswith("fields.") and k.endswith(".aggregate-function")
                                              for k in options):
            raise Unsupported("aggregate functions in a partial-update table are not implemented by the reference yet",
                              feature="partial-update-aggregation")
        order = str(options.get("sequence.field.sort-order", "ascending")).strip().lower()
        aggregates: dict[str, str] = {}
        if engine == "aggregation":
            default = str(options.get("fields.default-aggregate-function", "last_non_null_value")).strip().lower()
            for c in columns:
                if c not in key:
                    aggregates[c] = str(options.get(f"fields.{c}.aggregate-function", default)).strip().lower()
            unknown = sorted({f for f in aggregates.values() if f not in AGGREGATORS})
            if unknown:
                raise Unsupported(f"aggregate function(s) {', '.join(unknown)} not implemented by the reference "
                                  f"(it has {', '.join(sorted(AGGREGATORS))})", feature="aggregate-function")
        ignore = _true(options, "ignore-delete", f"{engine}.ignore-delete")
        remove = _true(options, "partial-update.remove-record-on-delete") if engine == "partial-update" else \
            _true(options, "aggregation.remove-record-on-delete") if engine == "aggregation" else False
        if engine == "aggregation":
            conflicts = conflicting_options(options, columns)
            if conflicts:
                raise InvalidTable(f"{conflicts[0]}: Paimon refuses an aggregation table with both",
                                   rule="PAIMON-SCHEMA-010")
        return cls(
            engine=engine, key=tuple(key), columns=tuple(columns), sequence_fields=seq,
            sequence_descending=order == "descending", rowkind_field=rowkind, ignore_delete=ignore,
            remove_record_on_delete=remove, aggregates=aggregates,
            ignore_retract=frozenset(c for c in columns if _true(options, f"fields.{c}.ignore-retract")),
            list_delimiters={c: options[f"fields.{c}.list-agg-delimiter"] for c in columns
                             if f"fields.{c}.list-agg-delimiter" in options},
            distinct=frozenset(c for c in columns if _true(options, f"fields.{c}.distinct")),
        )


def conflicting_options(options: Mapping[str, str], columns: Sequence[str]) -> list[str]:
    """Why an aggregation table's options conflict, one message per column: ``aggregation.remove-record-on-delete``
    with ``fields.<f>.ignore-retract`` on a column ``f`` of the table. Paimon builds every column's aggregator
    through ``FieldAggregatorFactory.create``, which refuses the pair ("have conflicting behavior so should not be
    enabled at the same time", since the option was introduced, apache/paimon #5360), so no Paimon engine reads
    or writes such a table; a column the table does not have conflicts with nothing."""
    if not _true(options, "aggregation.remove-record-on-delete"):
        return []
    return [f"aggregation.remove-record-on-delete and fields.{c}.ignore-retract are both set"
            for c in columns if _true(options, f"fields.{c}.ignore-retract")]


# ----------------------------------------------------------------------------------------------
# Merge order
# ----------------------------------------------------------------------------------------------


def _kinds(records: pa.Table, spec: MergeSpec) -> pa.Array:
    """Each record's kind: ``_VALUE_KIND``, or the ``rowkind.field`` column's ``+I``/``-U``/``+U``/``-D``."""
    if spec.rowkind_field is None:
        kinds = records.column(VALUE_KIND).combine_chunks().cast(pa.int8())
        bad = pc.or_kleene(pc.is_null(kinds), pc.invert(pc.is_in(kinds, pa.array([0, 1, 2, 3], pa.int8()))))
        if pc.any(bad).as_py():
            raise InvalidTable("a _VALUE_KIND is not 0, 1, 2 or 3", rule="PAIMON-DATA-003")
        return kinds
    texts = records.column(spec.rowkind_field).to_pylist()
    try:
        return pa.array([_KIND_NAMES[t] for t in texts], pa.int8())
    except KeyError as exc:
        raise InvalidTable(f"rowkind.field {spec.rowkind_field!r} holds {exc.args[0]!r}, not +I, -U, +U or -D") from None


def ordered(records: pa.Table, spec: MergeSpec) -> pa.Table:
    """The records sorted by key, then merge order, with their kinds in ``_VALUE_KIND`` (int8)."""
    n = records.num_rows
    t = records.set_column(records.schema.get_field_index(VALUE_KIND), VALUE_KIND, _kinds(records, spec)) \
        if VALUE_KIND in records.column_names else records.append_column(VALUE_KIND, _kinds(records, spec))
    t = t.append_column("__input", pa.array(range(n), pa.int64()))
    seq_order = "descending" if spec.sequence_descending else "ascending"
    keys = [(k, "ascending") for k in spec.key] + [(s, seq_order) for s in spec.sequence_fields]
    keys += [(SEQUENCE_NUMBER, "ascending"), ("__input", "ascending")]
    return t.take(pc.sort_indices(t, sort_keys=keys, null_placement="at_start"))


def _group_ends(t: pa.Table, key: Sequence[str]) -> list[int]:
    """Indices one past the end of each run of equal keys in a key-sorted table."""
    n = t.num_rows
    if n == 0:
        return []
    differs = pa.array([False] * (n - 1)) if n > 1 else pa.array([], pa.bool_())
    for k in key:
        col = t.column(k).combine_chunks()
        a, b = col.slice(0, n - 1), col.slice(1)
        # a primary key is NOT NULL; a null still gets a group of its own rather than a crash
        ne = pc.fill_null(pc.not_equal(a, b), True)
        differs = pc.or_(differs, ne)
    ends = [i + 1 for i, d in enumerate(differs.to_pylist()) if d]
    return ends + [n]


# ----------------------------------------------------------------------------------------------
# Engines
# ----------------------------------------------------------------------------------------------


def merge(records: pa.Table, spec: MergeSpec, schema: pa.Schema) -> pa.Table:
    """The rows the records of a primary-key table (one bucket, or many) stand for, in key order.

    ``records`` holds every table column plus ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``; the result
    has ``schema`` (the table's columns).
    """
    if records.num_rows == 0:
        return schema.empty_table()
    t = ordered(records, spec)
    if spec.ignore_delete:
        t = t.filter(pc.invert(pc.is_in(t.column(VALUE_KIND), pa.array(_RETRACT, pa.int8()))))
    ends = _group_ends(t, spec.key)
    if spec.engine == "deduplicate":
        # the last record of each key, kept when it is not a retraction
        last = t.take(pa.array([e - 1 for e in ends], pa.int64()))
        keep = pc.invert(pc.is_in(last.column(VALUE_KIND), pa.array(_RETRACT, pa.int8())))
        return last.filter(keep).select(list(schema.names)).cast(schema)
    if spec.engine == "first-row":
        if pc.any(pc.is_in(t.column(VALUE_KIND), pa.array(_RETRACT, pa.int8()))).as_py():
            raise InvalidTable("a first-row table holds a retraction (-U/-D) and ignore-delete is not set: "
                               "the first-row merge engine does not accept them")
        starts = [0] + ends[:-1]
        return t.take(pa.array(starts, pa.int64())).select(list(schema.names)).cast(schema)
    rows = t.select([*spec.columns, VALUE_KIND]).to_pylist()
    out: list[dict[str, Any]] = []
    start = 0
    fold = _partial_update if spec.engine == "partial-update" else _aggregate
    for end in ends:
        merged = fold(rows[start:end], spec)
        if merged is not None:
            out.append(merged)
        start = end
    return pa.Table.from_pylist(out, schema=schema) if out else schema.empty_table()


def _partial_update(records: list[dict[str, Any]], spec: MergeSpec) -> dict[str, Any] | None:
    row: dict[str, Any] | None = None
    for r in records:
        kind = r[VALUE_KIND]
        if kind in _RETRACT:
            if kind == DELETE and spec.remove_record_on_delete:
                row = None
                continue
            raise InvalidTable("a partial-update table holds a retraction (-U/-D) and neither ignore-delete nor "
                               "partial-update.remove-record-on-delete is set: partial-update does not accept them")
        if row is None:
            row = {c: r[c] for c in spec.columns}
            continue
        for c in spec.columns:
            if c not in spec.key and r[c] is not None:
                row[c] = r[c]
    return row


_UNSET = object()  # no value folded yet (first_value must tell it from a null first value)


def _aggregate(records: list[dict[str, Any]], spec: MergeSpec) -> dict[str, Any] | None:
    state: dict[str, Any] | None = None
    for r in records:
        kind = r[VALUE_KIND]
        retract = kind in _RETRACT
        if retract and kind == DELETE and spec.remove_record_on_delete:
            state = None
            continue
        if state is None:
            state = {c: (r[c] if c in spec.key else _UNSET) for c in spec.columns}
        for c, fn in spec.aggregates.items():
            agg = AGGREGATORS[fn]
            if retract:
                if c in spec.ignore_retract:
                    continue
                if agg.retract is None:
                    raise InvalidTable(f"aggregate function {fn} of column {c!r} cannot take a retraction (-U/-D) "
                                       f"and fields.{c}.ignore-retract is not set")
                state[c] = agg.retract(state[c], r[c], spec, c)
            else:
                state[c] = agg.add(state[c], r[c], spec, c)
    if state is None:
        return None
    return {c: (None if v is _UNSET else v) for c, v in state.items()}


# ----------------------------------------------------------------------------------------------
# Aggregate functions (Java FieldAggregator subclasses): add(acc, value) and retract(acc, value)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Aggregator:
    add: Callable[[Any, Any, MergeSpec, str], Any]
    retract: Callable[[Any, Any, MergeSpec, str], Any] | None = None


def _nulls_ignored(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any, MergeSpec, str], Any]:
    """A fold in which a null input or an empty accumulator leaves the other side."""
    def add(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
        acc = None if acc is _UNSET else acc
        if acc is None or v is None:
            return v if acc is None else acc
        return op(acc, v)
    return add


def _sum_retract(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    acc = None if acc is _UNSET else acc
    if acc is None or v is None:
        return (-v if v is not None else None) if acc is None else acc
    return acc - v


def _int_div(a: Any, b: Any) -> Any:
    """Java's division: truncation toward zero for integers."""
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _product_retract(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    acc = None if acc is _UNSET else acc
    if acc is None:
        return None  # the docs: product returns null for a retraction when the accumulator is null
    if v is None:
        return acc
    if v == 0:
        raise InvalidTable(f"product of column {col!r} retracts a zero (division by zero)")
    return _int_div(acc, v)


def _last_value(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    return v


def _last_non_null(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    return acc if v is None else v


def _to_null(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    return None  # last_value "just sets the field to null" on a retraction


def _retract_non_null(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    # Java's FieldLastNonNullValueAgg.retract: a retracted null retracts nothing (the value stays)
    return acc if v is None else None


def _first_value(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    return v if acc is _UNSET else acc


def _first_non_null(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    return v if (acc is _UNSET or acc is None) else acc


def _listagg(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    acc = None if acc is _UNSET else acc
    if v is None or acc is None:
        return v if acc is None else acc
    delim = spec.list_delimiters.get(col, ",")
    if col in spec.distinct:
        seen = acc.split(delim)
        new = [p for p in v.split(delim) if p not in seen]
        return delim.join(seen + new) if new else acc
    return f"{acc}{delim}{v}"


def _collect(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    acc = None if acc is _UNSET else acc
    if v is None:
        return acc
    items = list(acc or []) + list(v)
    if col in spec.distinct:
        unique: list[Any] = []
        for x in items:
            if x not in unique:
                unique.append(x)
        items = unique
    return items


def _collect_retract(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    acc = None if acc is _UNSET else acc
    if acc is None or v is None:
        return acc
    gone = list(v)
    return [x for x in acc if x not in gone]


def _map_items(m: Any) -> list[tuple[Any, Any]]:
    return list(m.items()) if isinstance(m, dict) else list(m or [])


def _merge_map(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    acc = None if acc is _UNSET else acc
    if v is None:
        return acc
    merged = dict(_map_items(acc))
    merged.update(_map_items(v))
    return list(merged.items())


def _merge_map_retract(acc: Any, v: Any, spec: MergeSpec, col: str) -> Any:
    acc = None if acc is _UNSET else acc
    if acc is None or v is None:
        return acc
    gone = {k for k, _ in _map_items(v)}
    return [(k, x) for k, x in _map_items(acc) if k not in gone]


AGGREGATORS: dict[str, Aggregator] = {
    "sum": Aggregator(_nulls_ignored(lambda a, b: a + b), _sum_retract),
    "product": Aggregator(_nulls_ignored(lambda a, b: a * b), _product_retract),
    "max": Aggregator(_nulls_ignored(lambda a, b: b if b > a else a)),
    "min": Aggregator(_nulls_ignored(lambda a, b: b if b < a else a)),
    "last_value": Aggregator(_last_value, _to_null),
    "last_non_null_value": Aggregator(_last_non_null, _retract_non_null),
    "first_value": Aggregator(_first_value),
    "first_non_null_value": Aggregator(_first_non_null),
    "listagg": Aggregator(_listagg),
    "bool_and": Aggregator(_nulls_ignored(lambda a, b: a and b)),
    "bool_or": Aggregator(_nulls_ignored(lambda a, b: a or b)),
    "collect": Aggregator(_collect, _collect_retract),
    "merge_map": Aggregator(_merge_map, _merge_map_retract),
}


__all__ = ["MergeSpec", "conflicting_options", "merge", "ordered", "AGGREGATORS", "ENGINES", "SEQUENCE_NUMBER", "VALUE_KIND"]
