"""Checks of how the table schema evolves from commit to commit (HUDI-EVOL): the writers' rules that do leave a
trace, in the Avro schemas successive commits record (``extraMetadata.schema``, HUDI-COMMIT-003).

Out of the box a writer only appends nullable columns and promotes types (the promotion table,
HUDI-PROMO); with schema-on-read, DDL may also change types along the change matrix (HUDI-CHG). A column
whose type moves to one neither allows is a demotion (HUDI-EVOL-011/012/013: top-level, inside a struct,
inside an array or map); a column appended without null and without a default breaks the reading of
older files (HUDI-EVOL-009/010). Columns that disappear are not judged: schema-on-read may drop them, and
a rename looks like a drop and an add.
"""

from __future__ import annotations

from typing import Any, Iterator

from reference_impl.common.validation import Violation
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi.validate.context import Context
from reference_impl.hudi.validate.registry import V, at, check
from reference_impl.common.jsontext import loads as json_loads  # deep nesting: a ValueError, not a RecursionError

# Type changes some Hudi path allows: the on-write promotions (HUDI-PROMO, the table column type becomes the
# incoming one), the schema-on-read change matrix (HUDI-CHG) and 1.x's binary <-> string (HUDI-CHG-050).
ALLOWED = {
    "int": {"long", "float", "double", "string", "decimal"},
    "long": {"float", "double", "string", "decimal"},
    "float": {"double", "string", "decimal"},
    "double": {"string", "decimal"},
    "decimal": {"string"},
    "string": {"decimal", "date", "bytes"},
    "date": {"string"},
    "bytes": {"string"},
}
RULES = {"top": "EVOL-011", "struct": "EVOL-012", "collection": "EVOL-013"}
ADD_RULES = {"top": "EVOL-009", "struct": "EVOL-010", "collection": "EVOL-010"}


def _strip_null(t: Any) -> tuple[Any, bool]:
    """(the type, nullable) of a field type: a union with null is its other branch, nullable."""
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        return (rest[0] if len(rest) == 1 else rest), len(rest) < len(t)
    return t, False


def _kind(t: Any) -> tuple[str, Any]:
    """A comparable kind of an Avro type: the logical type when one applies (decimal with its precision and
    scale), enums as strings, else the Avro type name."""
    if isinstance(t, list):
        return "union", None
    if isinstance(t, str):
        return ("string" if t == "enum" else t), None
    if isinstance(t, dict):
        logical = t.get("logicalType")
        if logical == "decimal":
            return "decimal", (t.get("precision"), t.get("scale", 0))
        if isinstance(logical, str) and logical in ("date", "uuid"):
            return ("date" if logical == "date" else "string"), None
        if isinstance(logical, str) and logical:
            return logical, None
        base = t.get("type")
        if base == "enum":
            return "string", None
        if isinstance(base, (dict, list)):
            return _kind(base)
        return (str(base) if base else "?"), None
    return "?", None


def _decimal_wider(old: tuple, new: tuple) -> bool:
    """``Types.DecimalType.isWiderThan`` as the change matrix applies it (HUDI-CHG-033)."""
    try:
        p1, s1 = int(old[0]), int(old[1] or 0)
        p2, s2 = int(new[0]), int(new[1] or 0)
    except (TypeError, ValueError):
        return True  # an unreadable decimal: COMMIT-003 territory, not a demotion
    return (p2 - s2 >= p1 - s1 and s2 > s1) or (s2 == s1 and p2 >= p1)


def _compare(old: Any, new: Any, path: str, level: str) -> Iterator[tuple[str, str]]:
    """(rule, message) of every incompatible change from ``old`` to ``new`` at ``path``."""
    old, _ = _strip_null(old)
    new, _ = _strip_null(new)
    ko, do = _kind(old)
    kn, dn = _kind(new)
    if ko == "union" or kn == "union":
        return  # unions of several types: no Hudi writer makes them
    if ko == kn:
        if ko == "decimal" and do != dn and not _decimal_wider(do, dn):
            yield RULES[level], f"{path} narrows decimal{do} to decimal{dn}"
        elif ko == "record":
            inner = "top" if level == "top" and path == "" else ("collection" if level == "collection" else "struct")
            yield from _fields(old, new, path, inner)
        elif ko == "array":
            yield from _compare(old.get("items"), new.get("items"), f"{path}.element", "collection")
        elif ko == "map":
            yield from _compare(old.get("values"), new.get("values"), f"{path}.value", "collection")
        return
    if kn not in ALLOWED.get(ko, ()):
        yield RULES[level], f"{path} changes from {ko} to {kn}, which neither type promotion nor the change matrix allows"


def _fields(old: dict, new: dict, path: str, level: str) -> Iterator[tuple[str, str]]:
    olds = {f.get("name"): f for f in old.get("fields") or () if isinstance(f, dict)}
    for f in new.get("fields") or ():
        if not isinstance(f, dict):
            continue
        name = f.get("name")
        sub = f"{path}.{name}" if path else str(name)
        if name in olds:
            yield from _compare(olds[name].get("type"), f.get("type"), sub, level)
            continue
        _, nullable = _strip_null(f.get("type"))
        if not nullable and "default" not in f and olds:
            yield ADD_RULES[level], f"{sub} is added without null and without a default: older files cannot supply it"


@check("EVOL-009", "EVOL-010", "EVOL-011", "EVOL-012", "EVOL-013")
def schema_evolution(ctx: Context) -> Iterator[Violation]:
    """Between successive schemas recorded by completed writes (in commit order), every column keeps its type or
    widens it, and every added column is nullable or has a default."""
    commits = []
    for f in ctx.completed():
        meta = ctx.metadata.get(f.name)
        if isinstance(meta, CM.CommitMetadata) and meta.schema and f.instant.requested_time not in ctx.rolled_back:
            commits.append(((f.instant.ordering_time, f.instant.requested_time), f, meta.schema))
    commits.sort(key=lambda c: c[0])
    prev = None
    for _, f, text in commits:
        try:
            node = json_loads(text)
        except ValueError:
            continue  # COMMIT-003 reports it
        if not isinstance(node, dict) or node.get("type") != "record":
            continue
        if prev is not None and prev != node:
            for rule, message in _compare(prev, node, "", "top"):
                yield V(rule, message, at(f.rel, "extraMetadata.schema"))
        prev = node
