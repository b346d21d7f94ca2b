"""Golden files: each case's declared expectations as canonical JSON under ``golden/<format>/``.

``regenerate()`` is the only writer of ``golden/``. It renders every registered case from its
declarations alone (no reader, no writer, no clock), so its output is a pure function of the
corpus: canonical JSON with sorted keys, rows in a canonical order, the schema as text, the
declared metadata and the expected error kind. ``regenerate(check=True)`` writes nothing and
reports each file that differs, is missing or is stale (CI runs it).

The same canonical forms serve the comparisons: ``canonical_rows`` and ``schema_text`` turn a
reader's Arrow answer into what the golden file holds, so "equals golden" is one ``==``.

Run as ``python -m conformance.golden [--check]`` (the ``lakeconf golden regenerate`` command
calls ``regenerate`` too).
"""

from __future__ import annotations

import dataclasses

import argparse
import base64
import datetime as _dt
import decimal
import difflib
import json
import math
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable, Mapping

import pyarrow as pa

from conformance.model import Case, Expected, Raw

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
GOLDEN_VERSION = 1  # bump when the file layout changes


# --------------------------------------------------------------------------------------------
# Canonical values
# --------------------------------------------------------------------------------------------


def type_text(t: pa.DataType) -> str:
    """A type's text, independent of Arrow's physical variants and child field names.

    ``large_string`` and ``string`` read the same, so do list flavours; the inner field names
    Arrow gives list items and map entries are not part of the table's schema.
    """
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{t.field(i).name}: {type_text(t.field(i).type)}" for i in range(t.num_fields)) + ">"
    if pa.types.is_map(t):
        return f"map<{type_text(t.key_type)}, {type_text(t.item_type)}>"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or getattr(pa.types, "is_list_view", lambda _: False)(t):
        return f"array<{type_text(t.value_type)}>"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or getattr(pa.types, "is_binary_view", lambda _: False)(t):
        return "binary"
    if pa.types.is_dictionary(t):
        return type_text(t.value_type)
    if pa.types.is_timestamp(t):
        # Only the zone's presence matters: an instant vs a wall-clock value. Units are normalised.
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_date(t):
        return "date"
    return {
        "int8": "byte",
        "int16": "short",
        "int32": "integer",
        "int64": "long",
        "float": "float",
        "halffloat": "float",
        "double": "double",
        "bool": "boolean",
        "null": "void",
    }.get(str(t), str(t))


def schema_text(schema: pa.Schema) -> list[str]:
    """``["name: type", ...]`` in schema order (nullability and metadata left out)."""
    return [f"{f.name}: {type_text(f.type)}" for f in schema]


def canonical_value(value: Any, t: pa.DataType) -> Any:
    """A JSON-ready, deterministic form of one Arrow value of type ``t``."""
    if value is None:
        return None
    if pa.types.is_struct(t):
        return {t.field(i).name: canonical_value(value.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        pairs = [[canonical_value(k, t.key_type), canonical_value(v, t.item_type)] for k, v in value]
        return sorted(pairs, key=lambda kv: json.dumps(kv[0], sort_keys=True, ensure_ascii=False))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [canonical_value(v, t.value_type) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$binary": base64.b16encode(bytes(value)).decode("ascii").lower()}
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            return value.astimezone(_dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
        return value.isoformat(timespec="microseconds")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        # Scale comes from the type; the text keeps it (1.50 stays 1.50).
        if not pa.types.is_decimal(t):
            return format(value, "f")
        with decimal.localcontext() as ctx:
            ctx.prec = 100  # decimal(38, s) needs more than the default 28 digits
            return format(value.quantize(Decimal(1).scaleb(-t.scale)), "f")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        if pa.types.is_float32(t):
            # float32 through Python widens to float64: print the shortest float32 text instead.
            import numpy as np

            return float(str(np.float32(value)))
        return value
    if isinstance(value, bool) or isinstance(value, int) or isinstance(value, str):
        return value
    return str(value)


def _ns_text(ns: int | None, tz: bool) -> str | None:
    """An ISO text with all nine fractional digits (Python's datetime stops at microseconds)."""
    if ns is None:
        return None
    seconds, frac = divmod(ns, 1_000_000_000)
    text = (_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=seconds)).isoformat(timespec="seconds")
    return f"{text}.{frac:09d}" + ("Z" if tz else "")


def _column_values(table: pa.Table, f: pa.Field) -> list[Any]:
    col = table.column(f.name)
    if pa.types.is_timestamp(f.type) and f.type.unit == "ns":
        # Nanosecond columns keep their nanoseconds (v3 timestamp_ns); values go through int64
        # because to_pylist would round-trip them through datetime (microseconds) or pandas.
        return [_ns_text(v, f.type.tz is not None) for v in col.cast(pa.int64()).to_pylist()]
    return col.to_pylist()


def canonical_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as dicts of canonical values, sorted by their canonical JSON text."""
    table = table.combine_chunks() if table.num_rows else table
    columns = [(f.name, f.type, _column_values(table, f)) for f in table.schema]
    out = [{name: canonical_value(values[i], t) for name, t, values in columns} for i in range(table.num_rows)]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, ensure_ascii=False))


def dumps(obj: Any) -> str:
    """The canonical JSON text of a golden document."""
    return json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# --------------------------------------------------------------------------------------------
# Golden documents
# --------------------------------------------------------------------------------------------


def _step_summary(step: Any) -> dict[str, Any]:
    name = type(step).__name__
    out: dict[str, Any] = {"step": name}
    if isinstance(step, Raw):
        out["description"] = step.description
        return out
    defaults = {f.name: f.default for f in dataclasses.fields(step) if f.default is not dataclasses.MISSING}
    for key in getattr(type(step), "__slots__", ()):
        value = getattr(step, key)
        if key in defaults and value is None and defaults[key] is None:
            # An optional knob left unset says nothing; leaving it out keeps goldens stable when
            # the model grows a new optional field.
            continue
        if isinstance(value, pa.Table):
            out[key] = {"rows": value.num_rows, "schema": schema_text(value.schema)}
        elif isinstance(value, pa.Schema):
            out[key] = schema_text(value)
        elif isinstance(value, pa.Field):
            out[key] = f"{value.name}: {type_text(value.type)}"
        elif isinstance(value, pa.DataType):
            out[key] = type_text(value)
        elif isinstance(value, Mapping):
            out[key] = dict(value)
        elif isinstance(value, tuple):
            out[key] = list(value)
        else:
            out[key] = value
    return out


def expectation_document(e: Expected) -> dict[str, Any]:
    """One expectation as JSON: where it reads, and rows + schema or the error kind."""
    doc: dict[str, Any] = {"version": e.version, "timestamp": e.timestamp, "metadata": _jsonable(e.metadata)}
    if e.ref is not None:  # only where a case reads a ref, so goldens of other cases keep their bytes
        doc["ref"] = e.ref
    if e.error is not None:
        doc["error"] = e.error
    else:
        assert e.rows is not None
        doc["schema"] = schema_text(e.rows.schema)
        doc["rows"] = canonical_rows(e.rows)
        doc["row_count"] = e.rows.num_rows
        if e.error_allowed is not None:
            doc["error_allowed"] = e.error_allowed
    return doc


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = [_jsonable(v) for v in obj]
        return sorted(items, key=str) if isinstance(obj, (set, frozenset)) else items
    return obj


def golden_document(case: Case) -> dict[str, Any]:
    """The whole golden document of a case (deterministic: declarations only)."""
    return {
        "golden_version": GOLDEN_VERSION,
        "id": case.id,
        "format": case.format,
        "description": case.description,
        "rules": list(case.rules),
        "features": list(case.features),
        "writers": list(case.writers) if case.writers is not None else None,
        "notes": case.notes,
        "steps": [_step_summary(s) for s in case.steps],
        "expected": [expectation_document(e) for e in case.expected],
    }


def golden_path(case: Case | str, root: Path | None = None) -> Path:
    """``golden/<format>/<slug>.json`` for a case or a case id."""
    case_id = case if isinstance(case, str) else case.id
    fmt, slug = case_id.split("/", 1)
    return (root or GOLDEN_DIR) / fmt / f"{slug}.json"


def load_golden(case_id: str, root: Path | None = None) -> dict[str, Any]:
    """The stored golden document of ``case_id`` (``FileNotFoundError`` if not regenerated)."""
    return json.loads(golden_path(case_id, root).read_text(encoding="utf-8"))


def regenerate(check: bool = False, *, root: Path | None = None, cases: Iterable[Case] | None = None, out=None) -> int:
    """Write (or with ``check``, compare) every golden file; 0 when golden/ is up to date.

    In check mode nothing is written; each drifted, missing or stale file gets one message with
    a short unified diff, and the result is 1.
    """
    from conformance.cases.registry import all_cases

    out = out or sys.stdout
    root = root or GOLDEN_DIR
    selected = list(cases) if cases is not None else all_cases()
    wanted: dict[Path, str] = {golden_path(c, root): dumps(golden_document(c)) for c in selected}
    formats = {c.format for c in selected}
    existing = {p for fmt in formats for p in (root / fmt).glob("*.json")}
    drift = 0
    for path, text in sorted(wanted.items()):
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if check:
            drift += 1
            rel = path.relative_to(root)
            if current is None:
                print(f"golden drift: {rel} is missing (run `lakeconf golden regenerate`)", file=out)
            else:
                diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), f"{rel} (stored)", f"{rel} (declared)", lineterm="", n=1))
                shown = "\n".join(diff[:40]) + ("\n  ..." if len(diff) > 40 else "")
                print(f"golden drift: {rel} differs from the case declarations:\n{shown}", file=out)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in sorted(existing - set(wanted)):
        if check:
            drift += 1
            print(f"golden drift: {path.relative_to(root)} belongs to no registered case (stale)", file=out)
        else:
            path.unlink()
    if check:
        if drift:
            print(f"{drift} golden file(s) out of date; run `lakeconf golden regenerate` and review the diff", file=out)
        if not drift:
            print(f"golden: {len(wanted)} file(s) match the case declarations", file=out)
        return 1 if drift else 0
    print(f"golden: {len(wanted)} file(s) up to date under {root}", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m conformance.golden [--check]``."""
    parser = argparse.ArgumentParser(prog="lakeconf golden regenerate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if golden/ differs from the declarations")
    args = parser.parse_args(argv)
    return regenerate(check=args.check)


if __name__ == "__main__":
    raise SystemExit(main())
