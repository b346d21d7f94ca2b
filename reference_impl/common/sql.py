"""SQL expressions a table carries (constraints, generated columns, predicates), evaluated safely.

Table formats store SQL written for Spark (CHECK constraints, invariants, generated columns), and
the kit's own DELETE/UPDATE steps carry predicates. Nothing here ever ``eval()``s
them or hands them to a connection that can touch files: an expression is parsed by DuckDB as ONE
SQL expression (``duckdb.SQLExpression`` refuses anything that is not a single expression) and
evaluated over an Arrow table on an in-memory connection with external access, extension
downloads and extension auto-loading disabled, so a hostile expression in a table's metadata can
only compute.

A small lexer translates the Spark spellings DuckDB does not share: ``<=>`` (null-safe equality;
in DuckDB it is cosine distance), `` `quoted identifiers` ``, ``"double-quoted strings"`` and
backslash escapes in string literals.

Every failure is ``InvalidTable`` carrying the rule id the caller names (``rule=``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import InvalidTable

# Internal column used to keep row positions through DuckDB; never a column name of a table.
POSITION_COLUMN = "__lakeconf_row_position__"


def translate_expression(expression: str, *, rule: str | None = None) -> str:
    """Rewrite the Spark-only spellings of a SQL expression into DuckDB's (see module docstring)."""
    out: list[str] = []
    i, n = 0, len(expression)
    while i < n:
        ch = expression[i]
        if ch in ("'", '"'):
            # Spark: both quote kinds delimit string literals, backslash escapes the next char.
            j = i + 1
            buf: list[str] = []
            while j < n and expression[j] != ch:
                if expression[j] == "\\" and j + 1 < n:
                    j += 1
                    buf.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(expression[j], expression[j]))
                else:
                    buf.append(expression[j])
                j += 1
            if j >= n:
                raise InvalidTable(f"unterminated string literal in SQL expression {expression!r}", rule=rule)
            out.append("'" + "".join(buf).replace("'", "''") + "'")
            i = j + 1
        elif ch == "`":
            j = expression.find("`", i + 1)
            # Spark doubles a backtick inside a quoted identifier.
            while j != -1 and j + 1 < n and expression[j + 1] == "`":
                j = expression.find("`", j + 2)
            if j == -1:
                raise InvalidTable(f"unterminated `identifier` in SQL expression {expression!r}", rule=rule)
            ident = expression[i + 1 : j].replace("``", "`")
            out.append('"' + ident.replace('"', '""') + '"')
            i = j + 1
        elif expression.startswith("<=>", i):
            out.append(" IS NOT DISTINCT FROM ")
            i += 3
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def quote_identifier(name: str) -> str:
    """A DuckDB-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def _connect():
    import duckdb

    # No file system, no extension downloads: an expression from a table can only compute.
    return duckdb.connect(
        config={
            "enable_external_access": False,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "threads": 1,
        }
    )


def _parse(expression: str, *, what: str, rule: str | None):
    import duckdb

    try:
        return duckdb.SQLExpression(translate_expression(expression, rule=rule))
    except InvalidTable:
        raise
    except Exception as exc:  # duckdb.ParserException and friends
        raise InvalidTable(f"{what}: cannot parse SQL expression {expression!r}: {exc}", rule=rule) from None


def _duckdb_safe(table: pa.Table) -> pa.Table:
    # DuckDB cannot scan Arrow null-typed columns in every position; give them a concrete type.
    cols, fields = [], []
    for field, col in zip(table.schema, table.columns):
        if pa.types.is_null(field.type):
            col = pa.chunked_array([pa.nulls(len(table), pa.int32())]) if len(table) else pa.chunked_array([], pa.int32())
            field = pa.field(field.name, pa.int32())
        cols.append(col)
        fields.append(pa.field(field.name, field.type))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def evaluate(table: pa.Table, expression: str, *, what: str = "expression", rule: str | None = None) -> pa.ChunkedArray:
    """Evaluate one SQL expression per row of ``table``; the result keeps the row order."""
    parsed = _parse(expression, what=what, rule=rule)
    positions = pa.array(np.arange(len(table), dtype=np.int64))
    data = _duckdb_safe(table).append_column(POSITION_COLUMN, positions)
    con = _connect()
    try:
        import duckdb

        rel = con.from_arrow(data)
        try:
            result = (
                rel.select(duckdb.ColumnExpression(POSITION_COLUMN), parsed.alias("__value__"))
                .order(POSITION_COLUMN)
                .to_arrow_table()
            )
        except Exception as exc:  # binder / conversion / runtime errors
            raise InvalidTable(f"{what}: cannot evaluate SQL expression {expression!r}: {exc}", rule=rule) from None
        return result.column("__value__")
    finally:
        con.close()


def evaluate_predicate(table: pa.Table, expression: str, *, what: str = "predicate", rule: str | None = None) -> np.ndarray:
    """Row mask where the boolean ``expression`` is TRUE (false and null are both False)."""
    values = evaluate(table, expression, what=what, rule=rule)
    if not pa.types.is_boolean(values.type) and not pa.types.is_null(values.type):
        raise InvalidTable(f"{what}: SQL expression {expression!r} is not boolean (it is {values.type})", rule=rule)
    if len(values) == 0:
        return np.zeros(0, dtype=bool)
    filled = pc.fill_null(values.cast(pa.bool_()), False)
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=bool)


def matching_positions(table: pa.Table, expression: str, positions: np.ndarray | None = None, *, rule: str | None = None) -> np.ndarray:
    """Row positions (``positions[i]`` or ``i``) whose row makes ``expression`` TRUE."""
    mask = evaluate_predicate(table, expression, what="predicate", rule=rule)
    idx = np.nonzero(mask)[0]
    if positions is None:
        return idx.astype(np.int64)
    return np.asarray(positions, dtype=np.int64)[idx]


def check_expression_binds(schema: pa.Schema, expression: str, *, what: str, rule: str | None = None) -> None:
    """Refuse an expression that does not parse or refers to columns missing from ``schema``."""
    empty = pa.Table.from_batches([], schema=schema) if len(schema) else pa.table({})
    evaluate(empty, expression, what=what, rule=rule)


def count_matching(table: pa.Table, expression: str, *, what: str = "predicate", rule: str | None = None) -> int:
    """How many rows of ``table`` make the boolean ``expression`` TRUE."""
    return int(evaluate_predicate(table, expression, what=what, rule=rule).sum())
