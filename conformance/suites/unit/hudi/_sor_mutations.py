"""Mutations of the validator's schema-on-read checks (``checks_evolution``) for ``test_validate``: each gives a
valid built table (``_tables.valid_table``) an InternalSchema history whose last change is one the DDL refuses,
so that exactly the rule it names is broken.

The history is written as hudi-spark 1.2 writes it (``.hoodie/.schema/<instant>[_<completed>].schemacommit``, for
a completed commit): version 0 is the table's own columns (from its base files) plus the synthetic columns a
mutation needs, the next version the refused change. Synthetic columns are in no file, so file resolution
(HUDI-EVOLR-017) stays clean."""

from __future__ import annotations

import glob
import json
import os
from typing import Any, Callable

import pyarrow as pa

from reference_impl.hudi import internal_schema as IS

_CHG = {  # rule -> (source type, target type) of a change the matrix refuses
    "HUDI-CHG-006": (pa.int32(), pa.date32()), "HUDI-CHG-013": (pa.int64(), pa.date32()),
    "HUDI-CHG-014": (pa.int64(), pa.int32()), "HUDI-CHG-015": (pa.float32(), pa.int64()),
    "HUDI-CHG-020": (pa.float32(), pa.date32()), "HUDI-CHG-021": (pa.float32(), pa.int32()),
    "HUDI-CHG-022": (pa.float64(), pa.int64()), "HUDI-CHG-023": (pa.float64(), pa.float32()),
    "HUDI-CHG-027": (pa.float64(), pa.date32()), "HUDI-CHG-028": (pa.float64(), pa.int32()),
    "HUDI-CHG-029": (pa.decimal128(10, 2), pa.int64()), "HUDI-CHG-030": (pa.decimal128(10, 2), pa.float32()),
    "HUDI-CHG-031": (pa.decimal128(10, 2), pa.float64()), "HUDI-CHG-033": (pa.decimal128(10, 2), pa.decimal128(9, 2)),
    "HUDI-CHG-034": (pa.decimal128(10, 2), pa.date32()), "HUDI-CHG-035": (pa.decimal128(10, 2), pa.int32()),
    "HUDI-CHG-036": (pa.string(), pa.int64()), "HUDI-CHG-037": (pa.string(), pa.float32()),
    "HUDI-CHG-038": (pa.string(), pa.float64()), "HUDI-CHG-042": (pa.string(), pa.int32()),
    "HUDI-CHG-043": (pa.date32(), pa.int64()), "HUDI-CHG-044": (pa.date32(), pa.float32()),
    "HUDI-CHG-045": (pa.date32(), pa.float64()), "HUDI-CHG-047": (pa.date32(), pa.decimal128(10, 2)),
    "HUDI-CHG-049": (pa.date32(), pa.int32()), "HUDI-CHG-050": (pa.binary(), pa.int32()),
}


def _base_columns(root: str) -> pa.Schema:
    import pyarrow.parquet as pq

    base = sorted(glob.glob(os.path.join(root, "*", "*.parquet")))[0]
    return pq.read_schema(base)


def _completed(root: str, version: int, first: bool) -> str:
    """The file name stem of a history file for the latest (or first) completed commit."""
    tl = os.path.join(root, ".hoodie", "timeline") if version >= 8 else os.path.join(root, ".hoodie")
    names = sorted(n for n in os.listdir(tl) if n.split(".")[-1] in ("commit", "deltacommit")
                   and not n.endswith((".requested", ".inflight")))
    return (names[0] if first else names[-1]).split(".")[0]


def write_history(tb: Any, extra: pa.Schema, change: Callable[[dict], None], *, first: bool = False) -> None:
    """Give ``tb`` a history: version 0 = its columns + ``extra``, then ``change`` applied to a copy (JSON)."""
    cols = _base_columns(tb.root)
    v0 = IS.from_arrow(pa.schema(list(cols) + list(extra)), version_id=0)
    stem = _completed(tb.root, tb.version, first)
    node0 = json.loads(IS.to_json(v0))
    node1 = json.loads(IS.to_json(v0))
    node1["version_id"] = int(stem.split("_")[0])
    change(node1)
    text = '{"schemas":[' + json.dumps(node1, separators=(",", ":")) + "," + json.dumps(node0, separators=(",", ":")) \
        + "]}"
    os.makedirs(os.path.join(tb.root, IS.SCHEMA_DIR), exist_ok=True)
    with open(os.path.join(tb.root, IS.SCHEMA_DIR, f"{stem}.{IS.SCHEMA_COMMIT}"), "w") as fh:
        fh.write(text)


def _field(node: dict, name: str) -> dict:
    return next(f for f in node["fields"] if f["name"] == name)


def _retype(name: str, t: pa.DataType) -> Callable[[dict], None]:
    def fn(node: dict) -> None:
        _field(node, name)["type"] = json.loads(json.dumps(IS.type_from_arrow(t, 0)[0]))
    return fn


def _first_new(node: dict) -> None:
    node["max_column_id"] += 1
    node["fields"].insert(0, {"id": node["max_column_id"], "name": "zz", "optional": True, "type": "int"})


def _empty_struct(node: dict) -> None:
    _field(node, "st")["type"]["fields"] = []


def _dup_id(node: dict) -> None:
    _field(node, "x2")["id"] = _field(node, "x1")["id"]


def _retype_partition(node: dict) -> None:
    # string -> date is in the change matrix: only the partition rule is broken (a rename would also leave the
    # files' partition column without an id)
    _field(node, "part")["type"] = "date"


def _map_key(node: dict) -> None:
    _field(node, "mk")["type"]["key"] = "int"


def _nested_change(node: dict) -> None:
    f = _field(node, "n")
    node["max_column_id"] += 1
    f["type"] = {"type": "record", "fields": [{"id": node["max_column_id"], "name": "a", "optional": True,
                                               "type": "int"}]}


def _chg(rule: str):
    src, dst = _CHG[rule]
    return lambda tb: write_history(tb, pa.schema([("c", src)]), _retype("c", dst))


def _later_without_latest_schema(tb: Any) -> None:
    write_history(tb, pa.schema([]), lambda n: None, first=True)


SOR_MUTATIONS: dict[str, tuple[str, str, Callable[[Any], None]]] = {
    "HUDI-EVOLR-003/later-commit": ("HUDI-EVOLR-003", "cow9", _later_without_latest_schema),
    "HUDI-EVOLR-006/partition-retyped": ("HUDI-EVOLR-006", "cow9", lambda tb: write_history(
        tb, pa.schema([]), _retype_partition)),
    "HUDI-EVOLR-009/top-level-first": ("HUDI-EVOLR-009", "mor9", lambda tb: write_history(
        tb, pa.schema([]), _first_new)),
    "HUDI-EVOLR-011/map-key": ("HUDI-EVOLR-011", "cow9", lambda tb: write_history(
        tb, pa.schema([("mk", pa.map_(pa.string(), pa.int32()))]), _map_key)),
    "HUDI-EVOLR-013/nested-type": ("HUDI-EVOLR-013", "cow6", lambda tb: write_history(
        tb, pa.schema([("n", pa.int32())]), _nested_change)),
    "HUDI-EVOLR-015/empty-struct": ("HUDI-EVOLR-015", "mor6", lambda tb: write_history(
        tb, pa.schema([("st", pa.struct([("a", pa.int32())]))]), _empty_struct)),
    "HUDI-EVOLR-017/duplicate-id": ("HUDI-EVOLR-017", "cow9", lambda tb: write_history(
        tb, pa.schema([("x1", pa.int32()), ("x2", pa.int32())]), _dup_id)),
    **{f"{rule}/history": (rule, "cow9", _chg(rule)) for rule in _CHG},
}
