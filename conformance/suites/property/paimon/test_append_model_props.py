"""Append tables against a pure-Python model (reference_impl.paimon.writer / table, pypaimon).

A generated append table (bucket-unaware, or 2 fixed buckets on ``bucket-key``; optionally
partitioned; optionally ``deletion-vectors.enabled``, 32- or 64-bit) gets a generated list of
operations: appends, deletes and updates by predicate (copy-on-write or deletion vectors), full
compactions, and schema changes between them (add, rename and drop a column, INT -> BIGINT). The model
keeps rows by field id, so renames and drops behave as the spec's id-based projection says
(PAIMON-SCHEMA-007): a dropped column never comes back, a new column of an old name is null in old rows.

After every commit the model's rows (in the schema of that commit) are the snapshot's: the reference
reads every snapshot id (time travel, the snapshot's ``schemaId``) and the latest state (the latest
schema, which a schema change moves before the next commit); pypaimon reads the latest state and one
earlier snapshot; the validator finds nothing.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from conformance.suites.property.delta._support import examples
from conformance.suites.property.paimon._support import canonical, java_read, pypaimon_read, violations

pytest.importorskip("pypaimon")

RULES = ("PAIMON-SCHEMA-007", "PAIMON-SCHEMA-014", "PAIMON-SCHEMA-015", "PAIMON-MANIFEST-021", "PAIMON-INDEX-008",
         "PAIMON-INDEX-005", "PAIMON-SNAP-001", "PAIMON-SNAP-009", "PAIMON-DATA-005", "PAIMON-BUCKET-006",
         "PAIMON-PART-005")
ARROW = {"int": pa.int32(), "bigint": pa.int64(), "string": pa.string()}


@dataclass(frozen=True)
class AppendTable:
    """A generated append table definition."""

    bucketed: bool = False
    partitioned: bool = False
    dv: bool = False
    bitmap64: bool = False

    def options(self) -> dict[str, str]:
        o = {"bucket": "2", "bucket-key": "id"} if self.bucketed else {"bucket": "-1"}
        if self.dv:
            o["deletion-vectors.enabled"] = "true"
            if self.bitmap64:
                o["deletion-vectors.bitmap64"] = "true"
        return o

    def fixed(self) -> set[str]:
        """Columns the schema changes leave alone (partition and bucket keys cannot change)."""
        return {"p", "id"}


@dataclass
class Col:
    id: int
    name: str
    kind: str  # int / bigint / string


@st.composite
def append_tables(draw) -> AppendTable:
    dv = draw(st.booleans())
    return AppendTable(bucketed=draw(st.booleans()), partitioned=draw(st.booleans()), dv=dv,
                       bitmap64=dv and draw(st.sampled_from([False, False, True])))


def _value(kind: str) -> st.SearchStrategy:
    if kind == "string":
        return st.none() | st.sampled_from(["a", "b", "", "zz"])
    return st.none() | st.integers(-20, 20)


@dataclass
class Model:
    """The table's columns (by field id) and rows (field id -> value), as the spec's projection keeps them."""

    table: AppendTable
    cols: list[Col] = field(default_factory=list)
    rows: list[dict[int, Any]] = field(default_factory=list)
    next_id: int = 0
    names: int = 0

    @classmethod
    def start(cls, table: AppendTable) -> "Model":
        m = cls(table)
        for name, kind in [("id", "int"), ("v", "int"), ("s", "string")] + ([("p", "int")] if table.partitioned else []):
            m.cols.append(Col(m.next_id, name, kind))
            m.next_id += 1
        return m

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, ARROW[c.kind]) for c in self.cols])

    def named(self) -> list[dict[str, Any]]:
        return [{c.name: r.get(c.id) for c in self.cols} for r in self.rows]

    def state(self) -> tuple[list[str], list[tuple]]:
        names = [c.name for c in self.cols]
        return names, canonical(self.named(), names)

    def matches(self, r: dict[int, Any], where: tuple) -> bool:
        name, op, x = where
        c = next(c for c in self.cols if c.name == name)
        v = r.get(c.id)
        if op == "IS NULL":
            return v is None
        if v is None:
            return False
        return v < x if op == "<" else v >= x if op == ">=" else v == x


def sql(where: tuple) -> str:
    name, op, x = where
    if op == "IS NULL":
        return f"{name} IS NULL"
    return f"{name} {op} {x!r}" if isinstance(x, str) else f"{name} {op} {x}"


@st.composite
def step(draw, m: Model) -> tuple:
    """One operation valid for the model's current state (drawn against it: values depend on the schema)."""
    t = m.table
    ints = [c for c in m.cols if c.kind in ("int", "bigint")]
    changeable = [c for c in m.cols if c.name not in t.fixed()]
    choices = ["append", "append", "delete", "update", "compact", "add"]
    if changeable:
        choices += ["rename", "drop"]
    if any(c.kind == "int" for c in changeable):
        choices.append("widen")
    what = draw(st.sampled_from(choices))
    if what == "append":
        rows = draw(st.lists(st.fixed_dictionaries(
            {c.name: (st.integers(0, 1) if c.name == "p" else st.integers(0, 9) if c.name == "id" else _value(c.kind))
             for c in m.cols}), min_size=1, max_size=5))
        return ("append", rows)
    if what in ("delete", "update"):
        c = draw(st.sampled_from(m.cols))
        if draw(st.integers(0, 4)) == 0:
            where = (c.name, "IS NULL", None)
        elif c.kind == "string":
            where = (c.name, "=", draw(st.sampled_from(["a", "b", ""])))
        else:
            where = (c.name, draw(st.sampled_from(["<", ">=", "="])), draw(st.integers(-5, 9)))
        how = draw(st.sampled_from([None, "copy-on-write"] + (["deletion-vectors"] if t.dv else [])))
        if what == "delete":
            return ("delete", where, how)
        targets = [c for c in ints if c.name not in t.fixed()]
        if not targets:
            return ("delete", where, how)
        return ("update", draw(st.sampled_from(targets)).name, draw(st.integers(-5, 5)), where, how)
    if what == "compact":
        return ("compact",)
    if what == "add":
        return ("add", draw(st.sampled_from(["bigint", "string"])))
    if what == "rename":
        return ("rename", draw(st.sampled_from(changeable)).name)
    if what == "drop":
        return ("drop", draw(st.sampled_from(changeable)).name)
    return ("widen", draw(st.sampled_from([c for c in changeable if c.kind == "int"])).name)


def apply(m: Model, op: tuple, storage) -> tuple[Any, bool | None]:
    """Run ``op`` on the table and the model: (the writer's snapshot or None, whether the model expects a commit;
    None when it cannot tell)."""
    from reference_impl.paimon import writer as W

    kind = op[0]
    if kind == "append":
        rows = pa.Table.from_pylist(op[1], schema=m.schema())
        m.rows += [{c.id: r[c.name] for c in m.cols} for r in op[1]]
        return W.write(storage, rows), True
    if kind == "delete":
        hit = [r for r in m.rows if m.matches(r, op[1])]
        m.rows = [r for r in m.rows if not m.matches(r, op[1])]
        return W.delete(storage, sql(op[1]), how=op[2]), bool(hit)
    if kind == "update":
        _, name, value, where, how = op
        cid = next(c.id for c in m.cols if c.name == name)
        hit = [r for r in m.rows if m.matches(r, where)]
        for r in hit:
            r[cid] = value
        return W.update(storage, {name: str(value)}, sql(where), how=how), bool(hit)
    if kind == "compact":
        return W.compact(storage), None
    m.names += 1
    if kind == "add":
        name = f"c{m.names}"
        W.add_column(storage, pa.field(name, ARROW[op[1]]))
        m.cols.append(Col(m.next_id, name, op[1]))
        m.next_id += 1
    elif kind == "rename":
        new = f"r{m.names}"
        W.rename_column(storage, op[1], new)
        next(c for c in m.cols if c.name == op[1]).name = new
    elif kind == "drop":
        W.drop_column(storage, op[1])
        m.cols = [c for c in m.cols if c.name != op[1]]
    else:
        W.change_column_type(storage, op[1], pa.int64())
        next(c for c in m.cols if c.name == op[1]).kind = "bigint"
    return None, False


@pytest.mark.rule(*RULES)
@examples(0.4)
@given(append_tables(), st.data())
def test_append_table_matches_model(table, data):
    """Reference reads at every snapshot and latest, pypaimon's latest and one earlier read == the model."""
    from reference_impl.errors import Unsupported
    from reference_impl.paimon import writer as W
    from reference_impl.paimon.table import read_table
    from reference_impl.storage import open_storage

    note(f"options={table.options()}")
    m = Model.start(table)
    states: dict[int, tuple[list[str], list[tuple]]] = {}
    ops: list[tuple] = []
    with tempfile.TemporaryDirectory() as d:
        storage = open_storage(d)
        W.create_table(storage, m.schema(), partition_keys=["p"] if table.partitioned else [], options=table.options())
        last = 0
        for _ in range(data.draw(st.integers(1, 8), label="number of ops")):
            op = data.draw(step(m), label="op")
            ops.append(op)
            snap, expect = apply(m, op, storage)
            if expect is not None:
                assert (snap is not None) == expect, f"{op}: committed={snap is not None}, model expected {expect}"
            if snap is not None:
                assert snap.id == last + 1
                last = snap.id
                states[snap.id] = m.state()
        note(f"ops={ops}")
        for sid, (names, want) in states.items():
            got = read_table(d, snapshot_id=sid)
            assert got.column_names == names, f"reference at snapshot {sid}: columns {got.column_names} != {names}"
            assert canonical(got.to_pylist(), names) == want, f"reference at snapshot {sid}"
        names, want = m.state()
        latest = read_table(d)
        assert latest.column_names == names and canonical(latest.to_pylist(), names) == want, "reference latest"
        if states:
            at = data.draw(st.sampled_from([None, *states]), label="pypaimon snapshot")
            names, want = (names, want) if at is None else states[at]
            try:
                got = pypaimon_read(d, at)
            except Unsupported as exc:
                # the declared gap only: pypaimon-rejects-bitmap64-deletion-vectors
                if not (table.bitmap64 and "Invalid magic number" in str(exc)):
                    raise
            else:
                assert got.column_names == names, f"pypaimon at {at}: columns {got.column_names} != {names}"
                assert canonical(got.to_pylist(), names) == want, f"pypaimon at snapshot {at}"
            java = java_read(d, at)
            if java is not None:  # Paimon's own implementation: no declared gap
                assert java.column_names == names, f"paimon-java at {at}: columns {java.column_names} != {names}"
                assert canonical(java.to_pylist(), names) == want, f"paimon-java at snapshot {at}"
        assert violations(d) == []


@given(append_tables())
def test_strategy_tables_are_creatable(table):
    """Self-test: every generated table definition is one the writer accepts."""
    from reference_impl.paimon import writer as W
    from reference_impl.storage import open_storage

    with tempfile.TemporaryDirectory() as d:
        W.create_table(open_storage(d), Model.start(table).schema(), partition_keys=["p"] if table.partitioned else [],
                       options=table.options())
