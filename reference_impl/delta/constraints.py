"""Column Invariants, CHECK Constraints, Generated Columns (and Identity Columns) for writers.

Every expression a table carries (``delta.invariants``, ``delta.constraints.<name>``,
``delta.generationExpression``) is SQL written for Spark, evaluated only in the sandbox of
``reference_impl.common.sql`` (one expression, no file access), with Delta's rule ids on errors.

Violations raise ``ConstraintViolation``, a subclass of ``InvalidTable`` (kind ``invalid_table``)
that names the constraint in its message and in ``.constraint``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.common import jsontext
from reference_impl.common import sql as _sql
from reference_impl.errors import InvalidTable

# Wire keys, spelled as the spec spells them.
CONSTRAINT_PREFIX = "delta.constraints."
INVARIANTS_KEY = "delta.invariants"
GENERATION_EXPRESSION_KEY = "delta.generationExpression"
IDENTITY_START_KEY = "delta.identity.start"
IDENTITY_STEP_KEY = "delta.identity.step"
IDENTITY_HIGH_WATER_MARK_KEY = "delta.identity.highWaterMark"
IDENTITY_ALLOW_EXPLICIT_INSERT_KEY = "delta.identity.allowExplicitInsert"
DEFAULT_KEY = "CURRENT_DEFAULT"


KIND_CHECK = "check"
KIND_INVARIANT = "invariant"
KIND_GENERATED = "generated"
KIND_NOT_NULL = "not_null"

RULE_BY_KIND = {
    KIND_CHECK: "DELTA-WRITER-014",
    KIND_INVARIANT: "DELTA-WRITER-010",
    KIND_GENERATED: "DELTA-WRITER-016",
    KIND_NOT_NULL: "DELTA-SCHEMA-002",
}


class ConstraintViolation(InvalidTable):
    """Rows break a CHECK constraint, an invariant, a generated column or NOT NULL."""

    def __init__(self, message: str, *, constraint: str, kind: str, **kw: Any) -> None:
        kw.setdefault("rule", RULE_BY_KIND.get(kind))
        super().__init__(message, **kw)
        self.constraint = constraint
        self.constraint_kind = kind


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraint:
    """One boolean rule new rows must satisfy: a CHECK constraint or a column invariant."""

    name: str
    expression: str
    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GeneratedColumn:
    """A top-level column whose value is ``expression`` over the other columns."""

    column: str
    expression: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityColumn:
    """A top-level identity column and its ``delta.identity.*`` metadata."""

    column: str
    start: int
    step: int
    high_water_mark: int | None
    allow_explicit_insert: bool


# --------------------------------------------------------------------------------------------
# Spark SQL evaluated in the sandbox (reference_impl.common.sql), with Delta's rule id on errors

RULE_EXPRESSION = "DELTA-WRITER-012"
translate_expression = _sql.translate_expression
quote_identifier = _sql.quote_identifier
POSITION_COLUMN = _sql.POSITION_COLUMN


def evaluate(table: pa.Table, expression: str, *, what: str = "expression") -> pa.ChunkedArray:
    """Evaluate one SQL expression per row of ``table``; the result keeps the row order."""
    return _sql.evaluate(table, expression, what=what, rule=RULE_EXPRESSION)


def evaluate_predicate(table: pa.Table, expression: str, *, what: str = "predicate") -> np.ndarray:
    """Row mask where the boolean ``expression`` is TRUE (false and null are both False)."""
    return _sql.evaluate_predicate(table, expression, what=what, rule=RULE_EXPRESSION)


def matching_positions(table: pa.Table, expression: str, positions: np.ndarray | None = None) -> np.ndarray:
    """Row positions (``positions[i]`` or ``i``) whose row makes ``expression`` TRUE."""
    return _sql.matching_positions(table, expression, positions, rule=RULE_EXPRESSION)


def check_expression_binds(schema: pa.Schema, expression: str, *, what: str) -> None:
    """Refuse an expression that does not parse or refers to columns missing from ``schema``."""
    _sql.check_expression_binds(schema, expression, what=what, rule=RULE_EXPRESSION)


# --------------------------------------------------------------------------------------------
# Reading the rules off a table's metadata


def parse_invariant(value: str, *, column: str) -> str:
    """The SQL expression of a ``delta.invariants`` value (``{"expression":{"expression":...}}``)."""
    try:
        obj = jsontext.loads(value) if isinstance(value, str) else value
        expr = obj["expression"]["expression"]
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidTable(
            f"column {column!r}: delta.invariants is not {{\"expression\":{{\"expression\":...}}}}: {exc}",
            rule="DELTA-WRITER-009",
        ) from None
    if not isinstance(expr, str):
        raise InvalidTable(f"column {column!r}: invariant expression is not a string", rule="DELTA-WRITER-009")
    return expr


def _walk_fields(schema, prefix: str = ""):
    from reference_impl.delta.schema import StructType

    for field in schema.fields:
        path = f"{prefix}{field.name}"
        yield path, field
        if isinstance(field.type, StructType):
            yield from _walk_fields(field.type, path + ".")


def check_constraints(configuration: Mapping[str, str]) -> list[Constraint]:
    """CHECK constraints from ``delta.constraints.<name>`` entries, in name order."""
    out = []
    for key in sorted(configuration):
        if key.lower().startswith(CONSTRAINT_PREFIX):
            name = key[len(CONSTRAINT_PREFIX) :]
            out.append(Constraint(name=name, expression=configuration[key], kind=KIND_CHECK))
    return out


def invariants(schema) -> list[Constraint]:
    """Column invariants found in the metadata of any (nested) field."""
    out = []
    for path, field in _walk_fields(schema):
        value = (field.metadata or {}).get(INVARIANTS_KEY)
        if value is not None:
            out.append(Constraint(name=path, expression=parse_invariant(value, column=path), kind=KIND_INVARIANT))
    return out


def generated_columns(schema) -> list[GeneratedColumn]:
    """Top-level generated columns, in schema order."""
    out = []
    for field in schema.fields:
        expr = (field.metadata or {}).get(GENERATION_EXPRESSION_KEY)
        if expr is not None:
            out.append(GeneratedColumn(column=field.name, expression=str(expr)))
    return out


def identity_columns(schema) -> list[IdentityColumn]:
    """Top-level identity columns, in schema order; step 0 is invalid."""
    out = []
    for field in schema.fields:
        md = field.metadata or {}
        if IDENTITY_START_KEY not in md and IDENTITY_STEP_KEY not in md:
            continue
        try:
            start = int(md.get(IDENTITY_START_KEY, 1))
            step = int(md.get(IDENTITY_STEP_KEY, 1))
            hwm = md.get(IDENTITY_HIGH_WATER_MARK_KEY)
            hwm = int(hwm) if hwm is not None else None
        except (TypeError, ValueError) as exc:
            raise InvalidTable(f"identity column {field.name!r}: bad delta.identity.* value: {exc}", rule="DELTA-WRITER-022") from None
        if step == 0:
            raise InvalidTable(f"identity column {field.name!r}: delta.identity.step must not be 0", rule="DELTA-WRITER-022")
        allow = md.get(IDENTITY_ALLOW_EXPLICIT_INSERT_KEY, False)
        allow = allow if isinstance(allow, bool) else str(allow).lower() == "true"
        out.append(IdentityColumn(column=field.name, start=start, step=step, high_water_mark=hwm, allow_explicit_insert=allow))
    return out


def default_columns(schema) -> dict[str, str]:
    """Top-level columns with a ``CURRENT_DEFAULT`` expression."""
    return {f.name: str(f.metadata[DEFAULT_KEY]) for f in schema.fields if (f.metadata or {}).get(DEFAULT_KEY) is not None}


# --------------------------------------------------------------------------------------------
# Enforcement


def _violation(rule: Constraint | GeneratedColumn, rows: pa.Table, bad: np.ndarray, *, kind: str) -> ConstraintViolation:
    sample = rows.take(pa.array(bad[:3])).to_pylist()
    if isinstance(rule, GeneratedColumn):
        name, expr, label = rule.column, rule.expression, f"generated column {rule.column!r}"
    elif kind == KIND_INVARIANT:
        name, expr, label = rule.name, rule.expression, f"invariant on column {rule.name!r}"
    else:
        name, expr, label = rule.name, rule.expression, f"CHECK constraint {rule.name!r}"
    return ConstraintViolation(
        f"{label} ({expr}) violated by {len(bad)} row(s), e.g. {sample}",
        constraint=name,
        kind=kind,
    )


def enforce_constraints(rows: pa.Table, constraints: Iterable[Constraint]) -> None:
    """Raise ``ConstraintViolation`` unless every constraint is TRUE for every row."""
    for constraint in constraints:
        what = f"{'CHECK constraint' if constraint.kind == KIND_CHECK else 'invariant'} {constraint.name!r}"
        mask = evaluate_predicate(rows, constraint.expression, what=what)
        bad = np.nonzero(~mask)[0]
        if len(bad):
            raise _violation(constraint, rows, bad, kind=constraint.kind)


def enforce_not_null(rows: pa.Table, schema) -> None:
    """Refuse nulls in top-level columns declared ``nullable: false``."""
    for field in schema.fields:
        if not field.nullable and field.name in rows.column_names:
            nulls = rows.column(field.name).null_count
            if nulls:
                raise ConstraintViolation(
                    f"NOT NULL constraint violated: column {field.name!r} has {nulls} null value(s)",
                    constraint=field.name,
                    kind=KIND_NOT_NULL,
                )


def apply_generated_columns(rows: pa.Table, schema, supplied: Iterable[str], arrow_types: Mapping[str, pa.DataType]) -> pa.Table:
    """Compute generated columns the caller did not supply; check the ones it did (null-safe equality)."""
    supplied = set(supplied)
    for gen in generated_columns(schema):
        target = arrow_types[gen.column]
        what = f"generated column {gen.column!r}"
        if gen.column in supplied:
            # Spark spelling, translated once by evaluate(): (`col` <=> (expr)).
            check = f"(`{gen.column.replace('`', '``')}` <=> ({gen.expression}))"
            mask = evaluate_predicate(rows, check, what=what)
            bad = np.nonzero(~mask)[0]
            if len(bad):
                raise _violation(gen, rows, bad, kind=KIND_GENERATED)
            continue
        others = rows.drop_columns([gen.column]) if gen.column in rows.column_names else rows
        values = evaluate(others, gen.expression, what=what)
        try:
            values = values.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InvalidTable(f"{what}: expression result {values.type} cannot be stored as {target}: {exc}", rule="DELTA-WRITER-016") from None
        idx = rows.column_names.index(gen.column) if gen.column in rows.column_names else None
        if idx is None:
            rows = rows.append_column(pa.field(gen.column, target), values)
        else:
            rows = rows.set_column(idx, pa.field(gen.column, target), values)
    return rows


def apply_identity_columns(rows: pa.Table, schema, supplied: Iterable[str], arrow_types: Mapping[str, pa.DataType]) -> tuple[pa.Table, dict[str, int]]:
    """Fill identity columns the caller did not supply; returns the rows and new high-water marks."""
    supplied = set(supplied)
    marks: dict[str, int] = {}
    for ident in identity_columns(schema):
        if ident.column in supplied:
            if not ident.allow_explicit_insert:
                raise ConstraintViolation(
                    f"identity column {ident.column!r} does not allow explicit values (delta.identity.allowExplicitInsert=false)",
                    constraint=ident.column,
                    kind=KIND_GENERATED,
                    rule="DELTA-WRITER-023",
                )
            continue
        n = len(rows)
        if ident.high_water_mark is None:
            first = ident.start
        else:
            # Next value of the sequence start + k*step strictly beyond the high-water mark.
            k = (ident.high_water_mark - ident.start) // ident.step + 1
            first = ident.start + max(k, 0) * ident.step
        last = first + (n - 1) * ident.step if n else None
        if last is not None and not (-(2**63) <= last < 2**63):
            raise ConstraintViolation(f"identity column {ident.column!r} overflows", constraint=ident.column, kind=KIND_GENERATED, rule="DELTA-WRITER-023")
        values = pa.array([first + i * ident.step for i in range(n)], pa.int64()).cast(arrow_types[ident.column])
        idx = rows.column_names.index(ident.column) if ident.column in rows.column_names else None
        field = pa.field(ident.column, arrow_types[ident.column])
        rows = rows.append_column(field, values) if idx is None else rows.set_column(idx, field, values)
        if n:
            marks[ident.column] = last
    return rows, marks


def apply_defaults(rows: pa.Table, schema, supplied: Iterable[str], arrow_types: Mapping[str, pa.DataType]) -> pa.Table:
    """Fill ``CURRENT_DEFAULT`` expressions into columns the caller did not supply."""
    supplied = set(supplied)
    for column, expr in default_columns(schema).items():
        if column in supplied:
            continue
        scalar = evaluate(pa.table({"__one__": [1]}), expr, what=f"default of column {column!r}")
        try:
            value = scalar.cast(arrow_types[column])[0]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InvalidTable(f"default of column {column!r} cannot be stored as {arrow_types[column]}: {exc}", rule="DELTA-WRITER-018") from None
        values = pa.array([value.as_py()] * len(rows), arrow_types[column])
        field = pa.field(column, arrow_types[column])
        if column in rows.column_names:
            rows = rows.set_column(rows.column_names.index(column), field, values)
        else:
            rows = rows.append_column(field, values)
    return rows


def enforce_all(rows: pa.Table, schema, configuration: Mapping[str, str]) -> None:
    """NOT NULL, invariants and CHECK constraints over rows about to be written."""
    enforce_not_null(rows, schema)
    enforce_constraints(rows, invariants(schema))
    enforce_constraints(rows, check_constraints(configuration))


__all__ = [
    "CONSTRAINT_PREFIX",
    "INVARIANTS_KEY",
    "GENERATION_EXPRESSION_KEY",
    "ConstraintViolation",
    "Constraint",
    "GeneratedColumn",
    "IdentityColumn",
    "translate_expression",
    "evaluate",
    "evaluate_predicate",
    "matching_positions",
    "check_expression_binds",
    "parse_invariant",
    "check_constraints",
    "invariants",
    "generated_columns",
    "identity_columns",
    "enforce_constraints",
    "enforce_not_null",
    "apply_generated_columns",
    "apply_identity_columns",
    "apply_defaults",
    "enforce_all",
]
